#![cfg(feature = "testing")]
//! The test kit (`gangpack::testing`, feature `testing`): every generated object is
//! valid, every scenario builds a scheduler, the running part is a real placement
//! (bound pods with allocated claims, gangs at `minCount`), shrinking keeps scenarios
//! consistent, generation is deterministic, and the rendering names what it holds; a
//! feature switched off (`Features`) appears nowhere in a scenario.

use gangpack::testing::{
    ADMIN_ACCESS_LABEL, Feature, Features, PARTITION_CLASS, SHARED_CLASS, Scenario, ScenarioConfig,
    Size, claim, cluster, generate, pod_group, scenario,
};
use gangpack::{
    AllocationMode, ClaimSource, DeviceRequestKind, GangOptions, PreemptionPolicy, ResourceClaim,
};
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
        for f in Feature::ALL {
            prop_assert!(!has(f, &s), "plain() has {}", f);
        }
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

// ------------------------------------------------------------------- features

/// Seeds per feature in the properties below.
const FEATURE_SEEDS: u64 = 40;

/// The (sub)requests of a claim: class, selectors count, mode, admin access,
/// tolerations count, capacity count.
fn requests(c: &ResourceClaim) -> Vec<(&str, usize, AllocationMode, bool, usize, usize)> {
    c.spec
        .requests
        .iter()
        .flat_map(|r| match &r.kind {
            DeviceRequestKind::Exactly(e) => vec![(
                e.device_class_name.as_str(),
                e.selectors.len(),
                e.allocation_mode,
                e.admin_access,
                e.tolerations.len(),
                e.capacity.len(),
            )],
            DeviceRequestKind::FirstAvailable(subs) => subs
                .iter()
                .map(|e| {
                    (
                        e.device_class_name.as_str(),
                        e.selectors.len(),
                        e.allocation_mode,
                        false,
                        e.tolerations.len(),
                        e.capacity.len(),
                    )
                })
                .collect(),
        })
        .collect()
}

/// Whether the scenario has anything of `f`. With `f` off, each arm is a property
/// (`a_feature_switched_off_appears_nowhere`); the planted bug it catches is a
/// generator that draws or maps the feature without asking its switch:
///
/// - `sharing`: shareable devices (`allowMultipleAllocations`) drawn as a node's GPU
///   kind, a capacity request, or the `shared` class still defined;
/// - `partitioning`: partitionable GPUs drawn (`sharedCounters`, `consumesCounters`),
///   or the `partition` class still defined;
/// - `device-taints`: a driver's device taint or a DeviceTaintRule drawn, or a claim
///   tolerating device taints;
/// - `node-taints`: a node taint or a cordon drawn, or a pod tolerating node taints;
/// - `topology`: a PodGroup's topology constraint drawn and mapped (both ask the
///   switch: one of them ignoring it is not enough to fail);
/// - `composite-groups`: a leader + workers group (pods of one group with different
///   claims) drawn although only `WorkloadKinds` allows it;
/// - `priorities`: PriorityClasses defined, or a pod or group given a priority, a
///   class or a non-default preemption policy;
/// - `cel`: a request selector (the `numaNode` one, or `All`'s) or a class with a CEL
///   selector;
/// - `admin-access`: an admin-access request, or the namespace labelled for it;
/// - `first-available`, `allocation-mode-all`, `constraints`: that request form or
///   constraint drawn.
fn has(f: Feature, s: &Scenario) -> bool {
    let devices = || s.slices.iter().flat_map(|x| &x.devices);
    let reqs: Vec<_> = s.claims.iter().flat_map(requests).collect();
    let class = |name: &str| s.device_classes.iter().any(|c| c.name == name);
    match f {
        Feature::Sharing => {
            devices().any(|d| d.allow_multiple_allocations)
                || reqs.iter().any(|r| r.5 > 0)
                || class(SHARED_CLASS)
        }
        Feature::Partitioning => {
            s.slices.iter().any(|x| !x.shared_counters.is_empty())
                || devices().any(|d| !d.consumes_counters.is_empty())
                || class(PARTITION_CLASS)
        }
        Feature::DeviceTaints => {
            devices().any(|d| !d.taints.is_empty())
                || !s.taint_rules.is_empty()
                || reqs.iter().any(|r| r.4 > 0)
        }
        Feature::NodeTaints => {
            s.nodes
                .iter()
                .any(|n| !n.taints.is_empty() || n.unschedulable)
                || s.pods.iter().any(|p| !p.tolerations.is_empty())
        }
        Feature::Topology => {
            s.groups.iter().any(|g| !g.topology.is_empty())
                || s.workloads
                    .iter()
                    .flat_map(|w| &w.pod_group_templates)
                    .any(|t| !t.topology.is_empty())
        }
        Feature::CompositeGroups => s.groups.iter().any(|g| {
            let claims: std::collections::BTreeSet<usize> = s
                .pods
                .iter()
                .filter(|p| p.scheduling_group.as_ref() == Some(&g.name))
                .map(|p| p.resource_claims.len())
                .collect();
            claims.len() > 1
        }),
        Feature::Priorities => {
            !s.priority_classes.is_empty()
                || s.pods.iter().any(|p| {
                    p.priority != 0 || p.preemption_policy != PreemptionPolicy::PreemptLowerPriority
                })
                || s.groups.iter().any(|g| {
                    g.priority_class_name.is_some()
                        || g.priority.is_some_and(|p| p != 0)
                        || g.preemption_policy == Some(PreemptionPolicy::Never)
                })
        }
        Feature::Cel => {
            s.device_classes.iter().any(|c| !c.selectors.is_empty()) || reqs.iter().any(|r| r.1 > 0)
        }
        Feature::AdminAccess => {
            reqs.iter().any(|r| r.3)
                || s.namespaces
                    .iter()
                    .any(|n| n.labels.contains_key(ADMIN_ACCESS_LABEL))
        }
        Feature::FirstAvailable => s.claims.iter().any(|c| {
            c.spec
                .requests
                .iter()
                .any(|r| matches!(r.kind, DeviceRequestKind::FirstAvailable(_)))
        }),
        Feature::AllocationModeAll => reqs.iter().any(|r| r.2 == AllocationMode::All),
        Feature::Constraints => s.claims.iter().any(|c| !c.spec.constraints.is_empty()),
    }
}

/// With one feature off, no scenario has any of it (each arm of [`has`] names the
/// planted bug it catches), and every scenario is still valid and builds a scheduler.
#[test]
fn a_feature_switched_off_appears_nowhere() {
    for f in Feature::ALL {
        for (size, seeds) in [(Size::Small, FEATURE_SEEDS), (Size::Medium, 2)] {
            let config = ScenarioConfig {
                features: Features::ALL.without(f),
                ..ScenarioConfig::for_size(size)
            };
            for seed in 0..seeds {
                let s = generate(&config, seed);
                assert!(!has(f, &s), "{size}, seed {seed}, without {f}:\n{s}");
                check(&s).unwrap_or_else(|e| panic!("{size}, seed {seed}, without {f}: {e}"));
            }
        }
    }
}

/// With only one feature on, no other appears; and the one on does appear for some
/// seed, so that the property above is not vacuous (a `has` that never holds would
/// pass it).
#[test]
fn only_the_features_on_appear() {
    for f in Feature::ALL {
        let config = ScenarioConfig {
            features: Features::NONE.with(f),
            ..ScenarioConfig::small()
        };
        let mut seen = false;
        for seed in 0..FEATURE_SEEDS {
            let s = generate(&config, seed);
            for g in Feature::ALL.into_iter().filter(|g| *g != f) {
                assert!(!has(g, &s), "seed {seed}, only {f}, has {g}:\n{s}");
            }
            check(&s).unwrap_or_else(|e| panic!("seed {seed}, only {f}: {e}"));
            seen |= has(f, &s);
        }
        assert!(seen, "{f} on never appears in {FEATURE_SEEDS} seeds");
    }
}

/// Every feature on is the presets' default, and what the generators drew before
/// there were switches (the regression seeds of `verdict_props` depend on it; `gangpack
/// gen`'s bytes were compared seed by seed when the switches came in).
#[test]
fn every_preset_has_every_feature() {
    for size in Size::ALL {
        assert_eq!(ScenarioConfig::for_size(size).features, Features::ALL);
    }
    assert_eq!(ScenarioConfig::small().plain().features, Features::NONE);
    assert_eq!(Features::default(), Features::ALL);
}
