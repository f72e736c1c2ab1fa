#![cfg(all(feature = "testing", not(target_arch = "wasm32")))]
//! The verdict on a pending unit ([`Scheduler::verdict`], issue 32) checked against
//! what happens, over the test kit's generated scenarios (every feature on). Each claim
//! is checked by a route of its own, not by the code that made it:
//!
//! * "the next cycle places it" ⇒ the real cycle (on the scheduler itself, not a copy)
//!   places it;
//! * "the next cycle preempts V" ⇒ the real cycle preempts exactly V for it, and with
//!   V's pods removed by hand (`remove_pod`) it fits;
//! * "waiting helps: held by H" ⇒ with H's bound pods removed by hand, a cycle places
//!   or nominates it; "the next cycle places H first" ⇒ H are placed before it in the
//!   real cycle, and it is not placed there;
//! * "waiting for more pods" ⇒ fewer members exist than `minCount`;
//! * the verdict never says the next cycle places a unit and anything else at once.
//!
//! Planted bugs it caught while written: a verdict that answered "the next cycle places
//! it" whenever the unit fits alone now (ignoring the units ahead of it in the queue),
//! and one that reported [`Scheduler::what_it_takes`]'s preemption (computed as if
//! the unit went first) instead of the cycle's.

use gangpack::testing::{ScenarioConfig, scenario};
use gangpack::{GangOptions, Help, Scheduler, Unit, UnitResult};
use proptest::prelude::*;

/// Removes every bound pod of `units` from `s`.
fn remove_bound(s: &mut Scheduler, units: &[Unit]) {
    for u in units {
        let pods: Vec<String> = match u {
            Unit::Pod(p) => vec![p.clone()],
            Unit::Group(g) => {
                let (ns, name) = g.split_once('/').unwrap();
                s.pods()
                    .filter(|p| p.namespace == ns && p.scheduling_group.as_deref() == Some(name))
                    .map(|p| format!("{}/{}", p.namespace, p.name))
                    .collect()
            }
        };
        for p in pods {
            if s.pod(&p).is_some_and(|p| p.node_name.is_some()) {
                s.remove_pod(&p).unwrap();
            }
        }
    }
}

/// Members of a PodGroup unit that exist.
fn members(s: &Scheduler, g: &str) -> usize {
    let (ns, name) = g.split_once('/').unwrap();
    s.pods()
        .filter(|p| p.namespace == ns && p.scheduling_group.as_deref() == Some(name))
        .count()
}

fn placed_or_nominated(r: Option<&UnitResult>) -> bool {
    matches!(r, Some(UnitResult::Scheduled(_) | UnitResult::Preempted(_)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_verdict_reads_true(sc in scenario(&ScenarioConfig::small())) {
        let Ok(s) = sc.scheduler(GangOptions::default()) else {
            return Ok(());
        };
        let units = s.pending_units();
        let verdicts: Vec<_> = units.iter().map(|u| s.verdict(u).unwrap()).collect();
        // The real cycle, on the scheduler itself.
        let mut real = s.clone();
        let report = real.cycle();
        let result = |u: &Unit| report.units.iter().find(|(x, _)| x == u).map(|(_, r)| r);
        let position = |u: &Unit| report.units.iter().position(|(x, _)| x == u);
        for v in &verdicts {
            prop_assert!(v.pending);
            let unit = &v.unit;
            if v.helps.iter().any(|h| matches!(h, Help::NextCycle { .. } | Help::Preemption { .. })) {
                prop_assert_eq!(v.helps.len(), 1, "{}", v);
            }
            for h in &v.helps {
                match h {
                    Help::NextCycle { pods } => {
                        let Some(UnitResult::Scheduled(d)) = result(unit) else {
                            prop_assert!(false, "{v}: the cycle gave {:?}", result(unit));
                            unreachable!()
                        };
                        prop_assert_eq!(d.bindings.len(), *pods);
                    }
                    Help::Preemption { victims } => {
                        let Some(UnitResult::Preempted(p)) = result(unit) else {
                            prop_assert!(false, "{v}: the cycle gave {:?}", result(unit));
                            unreachable!()
                        };
                        prop_assert_eq!(&p.victims, victims, "{}", v);
                        // Freeing the victims by hand makes room for it.
                        let mut copy = s.clone();
                        let gone: Vec<Unit> = victims.iter().map(|x| x.unit.clone()).collect();
                        remove_bound(&mut copy, &gone);
                        let ex = copy.explain(unit).unwrap();
                        prop_assert_eq!(ex.status, gangpack::GangStatus::Scheduled, "{}\n{}", v, ex);
                    }
                    Help::Waiting { holders, ahead: true, .. } => {
                        prop_assert!(!placed_or_nominated(result(unit)), "{}", v);
                        let at = position(unit).unwrap_or(usize::MAX);
                        for holder in holders {
                            let before = position(holder).is_some_and(|p| p < at);
                            prop_assert!(before && placed_or_nominated(result(holder)), "{}", v);
                        }
                    }
                    Help::Waiting { holders, ahead: false, .. } => {
                        prop_assert!(!placed_or_nominated(result(unit)), "{}", v);
                        prop_assert!(!holders.contains(unit));
                        let mut copy = s.clone();
                        remove_bound(&mut copy, holders);
                        let fits = copy.explain(unit).unwrap().status == gangpack::GangStatus::Scheduled;
                        prop_assert!(fits, "{}: still no room without {:?}", v, holders);
                    }
                    Help::MorePods { present, min_count } => {
                        let Unit::Group(g) = unit else {
                            prop_assert!(false, "{v}: a pod has no minCount");
                            unreachable!()
                        };
                        prop_assert_eq!(members(&s, g), *present);
                        prop_assert!((*present as u64) < u64::from(*min_count));
                    }
                    Help::Capacity { devices, .. } => prop_assert!(*devices > 0),
                    Help::Change { facts } => {
                        prop_assert!(!facts.is_empty());
                        prop_assert!(!placed_or_nominated(result(unit)), "{}", v);
                    }
                    Help::Invalid { .. } => {
                        prop_assert!(
                            matches!(result(unit), Some(UnitResult::Invalid(_) | UnitResult::Failed(_))),
                            "{}", v
                        );
                    }
                    Help::Undecided { .. } => {}
                }
            }
        }
    }
}
