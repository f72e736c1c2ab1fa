#![cfg(feature = "testing")]
//! The test kit (`gangpack::testing`, feature `testing`): every generated object is
//! valid, every scenario builds a scheduler, the running part is a real placement
//! (bound pods with allocated claims, gangs at `minCount`), shrinking keeps scenarios
//! consistent, generation is deterministic, and the rendering names what it holds.

use gangpack::testing::{
    Scenario, ScenarioConfig, Size, claim, cluster, generate, pod_group, scenario,
};
use gangpack::{ClaimSource, GangOptions};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;

/// Every object passes its model validation; the scheduler builds; running pods have
/// their claims allocated, and running gangs are at least `minCount`.
fn check(s: &Scenario) -> Result<(), TestCaseError> {
    for n in &s.nodes {
        prop_assert!(n.validate().is_ok(), "{:?}", n.validate());
    }
    for x in &s.slices {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
    }
    for x in &s.device_classes {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
    }
    for x in &s.taint_rules {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
    }
    for x in &s.priority_classes {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
    }
    for x in &s.claims {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
    }
    for x in &s.groups {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
    }
    for x in &s.pods {
        prop_assert!(x.validate().is_ok(), "{:?}", x.validate());
        for c in &x.resource_claims {
            let ClaimSource::ClaimName(name) = &c.source else {
                panic!("templates are not generated");
            };
            let claim = s.claim(&x.namespace, name);
            prop_assert!(
                claim.is_some(),
                "{}/{} names a missing claim {name}",
                x.namespace,
                x.name
            );
            if x.node_name.is_some() {
                prop_assert!(
                    claim.unwrap().allocation.is_some(),
                    "running {} without its claim",
                    x.name
                );
            }
        }
        if let Some(g) = &x.scheduling_group {
            prop_assert!(
                s.group(&x.namespace, g).is_some(),
                "{} names a missing group",
                x.name
            );
        }
    }
    for g in &s.groups {
        let bound = s
            .bound_pods()
            .filter(|p| p.namespace == g.namespace && p.scheduling_group.as_ref() == Some(&g.name))
            .count();
        if let Some(min) = g.policy.min_count() {
            prop_assert!(
                bound == 0 || bound >= min as usize,
                "partial gang {}",
                g.name
            );
        }
    }
    let sched = s.scheduler(GangOptions::default());
    prop_assert!(sched.is_ok(), "{:?}\n{s}", sched.err());
    let sched = sched.unwrap();
    prop_assert_eq!(
        sched.pods().filter(|p| p.node_name.is_some()).count(),
        s.bound_pods().count()
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn generated_scenarios_are_valid(s in scenario(&ScenarioConfig::small())) {
        check(&s)?;
    }

    #[test]
    fn plain_scenarios_are_plain(s in scenario(&ScenarioConfig::small().plain())) {
        check(&s)?;
        prop_assert!(s.taint_rules.is_empty());
        prop_assert!(s.nodes.iter().all(|n| n.taints.is_empty()));
        prop_assert!(s.slices.iter().all(|x| x.shared_counters.is_empty()
            && x.devices.iter().all(|d| !d.allow_multiple_allocations && d.taints.is_empty())));
    }

    #[test]
    fn finer_strategies_are_valid(
        c in cluster(&ScenarioConfig::small()),
        job in pod_group(&ScenarioConfig::small()),
        one in claim(&ScenarioConfig::small()),
    ) {
        prop_assert!(c.pods.is_empty() && c.claims.is_empty());
        check(&c)?;
        prop_assert!(one.validate().is_ok(), "{:?}", one.validate());
        let mut s = c;
        s.add_job(job);
        check(&s)?;
    }
}

/// Shrinking a scenario step by step (as proptest does after a failure, accepting
/// every simplification) keeps it consistent, and ends smaller.
#[test]
fn shrinking_keeps_scenarios_consistent() {
    let mut runner = TestRunner::deterministic();
    let strategy = scenario(&ScenarioConfig::small());
    for _ in 0..8 {
        let mut tree = strategy.new_tree(&mut runner).unwrap();
        let first = tree.current();
        let mut steps = 0;
        while steps < 200 && tree.simplify() {
            check(&tree.current()).unwrap();
            steps += 1;
        }
        let last = tree.current();
        assert!(last.nodes.len() <= first.nodes.len());
        assert!(last.pods.len() <= first.pods.len());
    }
}

#[test]
fn generation_is_deterministic_and_sized() {
    // (Large takes tens of seconds in a debug build: its running part is a cycle over
    // a few hundred pods.)
    for size in [Size::Small, Size::Medium] {
        let config = ScenarioConfig::for_size(size);
        let a = generate(&config, 7);
        assert_eq!(a, generate(&config, 7), "{size}");
        let (lo, hi) = config.nodes;
        assert!(
            (lo..=hi).contains(&a.nodes.len()),
            "{size}: {} nodes",
            a.nodes.len()
        );
        check(&a).unwrap();
    }
    assert_eq!(ScenarioConfig::from(Size::Large), ScenarioConfig::large());
    assert_eq!("medium".parse::<Size>(), Ok(Size::Medium));
    assert!("huge".parse::<Size>().is_err());
}

#[test]
fn the_rendering_names_every_object() {
    let s = generate(&ScenarioConfig::small(), 3);
    let text = s.to_string();
    for n in &s.nodes {
        assert!(text.contains(&format!("  - {}: ", n.name)), "{text}");
    }
    for p in &s.pods {
        assert!(
            text.contains(&format!("{}/{}", p.namespace, p.name)),
            "{text}"
        );
    }
    for c in &s.claims {
        assert!(
            text.contains(&format!("{}/{}", c.namespace, c.name)),
            "{text}"
        );
    }
    assert!(text.starts_with("scenario: "));
}
