//! How a downstream scheduler proves its decisions right with gangpack's test kit,
//! through the public API only (`gangpack::testing`, `gangpack::validate_placement`,
//! the model types).
//!
//! 1. `the_naive_placer_is_caught`: a **deliberately wrong** greedy placer (below) is
//!    property-tested with a deterministic `TestRunner`; the property "its decisions
//!    pass `validate_placement`" must fail, and the shrunk counterexample must be small
//!    and show one of its two bugs: a gang split below `minCount`, or a GPU given twice.
//! 2. `gangpacks_own_decisions_validate`: the positive property, gangpack's scheduler
//!    on the same scenarios, every decision of a cycle validated against the state it
//!    was made against.

use gangpack::testing::{Scenario, ScenarioConfig, scenario};
use gangpack::{
    AllocationMode, AllocationResult, ClaimAllocation, ClaimSource, Cluster, DeviceRef,
    DeviceRequestAllocationResult, DeviceRequestKind, DeviceToleration, GangOptions,
    PlacementDecision, Pod, PodBinding, PodGroup, ResourceClaim, Selector, TaintEffect, Unit,
    UnitResult, Violation, device_taint_blocks, first_untolerated_taint, validate_placement,
};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestError, TestRng, TestRunner};

/// The fixed seed: the same counterexample on every run.
const SEED: [u8; 32] = *b"gangpack-downstream-example-seed";

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

// --------------------------------------------------------------------------------
// A DELIBERATELY NAIVE (WRONG) PLACER. Do not copy it: it exists to be caught.
//
// It places pods one by one, first fit, and has two bugs on purpose:
//
// * BUG 1 (all or nothing): a pod that fits nowhere is skipped and the others are
//   bound anyway, so a gang can be split below `minCount`;
// * BUG 2 (exclusivity): it picks the first matching GPUs of a node without looking at
//   what is allocated already, by running claims or by its own earlier picks, so a GPU
//   can be given twice.
//
// Everything else it does carefully (node taints, cordons, node selectors, CPU and
// memory, class selectors, device taints, one topology domain per group), and it
// gives up on what it does not support (request forms other than `ExactCount`,
// selectors, constraints, capacity, admin access, shareable or partitioned GPUs): a
// unit it gives up on gets no decision.
// --------------------------------------------------------------------------------

/// The simple claims the naive placer handles: one `exactly` request with `ExactCount`,
/// no selectors, capacity, admin access or constraints. `(request, class, count,
/// tolerations)`.
fn simple(claim: &ResourceClaim) -> Option<(&str, &str, u32, &[DeviceToleration])> {
    let [request] = claim.spec.requests.as_slice() else {
        return None;
    };
    let DeviceRequestKind::Exactly(x) = &request.kind else {
        return None;
    };
    let AllocationMode::ExactCount(n) = x.allocation_mode else {
        return None;
    };
    let plain = x.selectors.is_empty()
        && x.capacity.is_empty()
        && !x.admin_access
        && claim.spec.constraints.is_empty()
        && claim.allocation.is_none();
    plain.then_some((&request.name, &x.device_class_name, n, &x.tolerations))
}

/// The first `count` devices of `node` that the class admits and no untolerated taint
/// blocks. BUG 2: allocations are never consulted.
fn pick_devices(
    s: &Scenario,
    cluster: &Cluster,
    node: &str,
    class: &str,
    count: u32,
    tolerations: &[DeviceToleration],
) -> Option<Vec<DeviceRef>> {
    let class = s.device_classes.iter().find(|c| c.name == class)?;
    let selectors: Vec<Selector> = class
        .selectors
        .iter()
        .map(|x| Selector::compile(&x.cel).ok())
        .collect::<Option<_>>()?;
    let mut picked = Vec::new();
    for slice in s.slices.iter().filter(|x| x.node_name() == Some(node)) {
        for d in &slice.devices {
            if d.allow_multiple_allocations || !d.consumes_counters.is_empty() {
                continue;
            }
            if !selectors
                .iter()
                .all(|x| x.eval(&slice.driver, d) == Ok(true))
            {
                continue;
            }
            let r = DeviceRef::new(&slice.driver, &slice.pool.name, &d.name);
            let Some(id) = cluster.device_id(&r) else {
                continue;
            };
            let taints = cluster.device_taints(id);
            if taints.iter().any(|t| device_taint_blocks(t, tolerations)) {
                continue;
            }
            picked.push(r);
            if picked.len() == count as usize {
                return Some(picked);
            }
        }
    }
    None
}

/// The naive placer's decision for one unit, or `None` when it gives up.
fn naive_place(
    s: &Scenario,
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[&Pod],
) -> Option<PlacementDecision> {
    if group.is_some_and(|g| !g.resource_claims.is_empty()) {
        return None;
    }
    let topology = group
        .and_then(|g| g.topology.first())
        .map(|t| t.key.as_str());
    // What this placer itself put on each node, in nano units of each resource.
    let mut used: Vec<(String, String, i128)> = Vec::new();
    let mut domain: Option<String> = None;
    let mut decision = PlacementDecision::default();
    for pod in pods.iter().filter(|p| p.node_name.is_none()) {
        // The pod's claims, all simple, or the placer gives up on the unit.
        let mut claims = Vec::new();
        for c in &pod.resource_claims {
            let ClaimSource::ClaimName(name) = &c.source else {
                return None;
            };
            let claim = s.claim(&pod.namespace, name)?;
            claims.push((key(&pod.namespace, name), simple(claim)?));
        }
        let mut placed = None;
        for node in &s.nodes {
            if node.unschedulable
                || !pod.fits_node(node)
                || first_untolerated_taint(&node.taints, &pod.tolerations, |e| {
                    e != TaintEffect::PreferNoSchedule
                })
                .is_some()
            {
                continue;
            }
            if let (Some(k), Some(d)) = (topology, &domain)
                && node.labels.get(k) != Some(d)
            {
                continue;
            }
            if topology.is_some_and(|k| !node.labels.contains_key(k)) {
                continue;
            }
            let Some(free) = cluster.node_free_resources(&node.name) else {
                continue;
            };
            let mut wants: Vec<(String, i128)> = pod
                .requests
                .iter()
                .map(|(r, q)| (r.clone(), q.as_nano()))
                .collect();
            if node.allocatable.contains_key("pods") {
                wants.push(("pods".into(), 1_000_000_000));
            }
            let fits = wants.iter().all(|(r, want)| {
                let mine: i128 = used
                    .iter()
                    .filter(|(n, x, _)| *n == node.name && x == r)
                    .map(|u| u.2)
                    .sum();
                free.get(r).is_some_and(|f| f.as_nano() - mine >= *want)
            });
            if !fits {
                continue;
            }
            let mut allocations = Vec::new();
            for (claim, (request, class, count, tolerations)) in &claims {
                let Some(devices) =
                    pick_devices(s, cluster, &node.name, class, *count, tolerations)
                else {
                    break;
                };
                let results = devices
                    .into_iter()
                    .map(|d| DeviceRequestAllocationResult {
                        request: (*request).to_string(),
                        driver: d.driver,
                        pool: d.pool,
                        device: d.device,
                        tolerations: tolerations.to_vec(),
                        ..DeviceRequestAllocationResult::default()
                    })
                    .collect();
                allocations.push(ClaimAllocation {
                    claim: claim.clone(),
                    result: AllocationResult {
                        devices: results,
                        ..AllocationResult::default()
                    },
                });
            }
            if allocations.len() < claims.len() {
                continue;
            }
            for (r, want) in wants {
                used.push((node.name.clone(), r, want));
            }
            if let Some(k) = topology {
                domain = node.labels.get(k).cloned();
            }
            placed = Some((node.name.clone(), allocations));
            break;
        }
        // BUG 1: a pod that fits nowhere is skipped; the others are bound anyway.
        if let Some((node, claims)) = placed {
            decision.bindings.push(PodBinding {
                pod: key(&pod.namespace, &pod.name),
                node,
                claims,
            });
        }
    }
    (!decision.bindings.is_empty()).then_some(decision)
}

/// The units of a scenario, as a scheduler would take them: each PodGroup with pending
/// members (with all its members), and each pending pod without a group.
fn units(s: &Scenario) -> Vec<(Option<&PodGroup>, Vec<&Pod>)> {
    let mut out: Vec<(Option<&PodGroup>, Vec<&Pod>)> = Vec::new();
    for g in &s.groups {
        let members: Vec<&Pod> = s
            .pods
            .iter()
            .filter(|p| p.namespace == g.namespace && p.scheduling_group.as_ref() == Some(&g.name))
            .collect();
        if members.iter().any(|p| p.node_name.is_none()) {
            out.push((Some(g), members));
        }
    }
    for p in s.pending_pods().filter(|p| p.scheduling_group.is_none()) {
        out.push((None, vec![p]));
    }
    out
}

/// The claims `pods` name.
fn claims_of(s: &Scenario, pods: &[&Pod]) -> Vec<ResourceClaim> {
    let mut out: Vec<ResourceClaim> = Vec::new();
    for p in pods {
        for c in &p.resource_claims {
            if let ClaimSource::ClaimName(n) = &c.source
                && let Some(claim) = s.claim(&p.namespace, n)
                && !out.contains(claim)
            {
                out.push(claim.clone());
            }
        }
    }
    out
}

/// Every violation of the naive placer's decisions on `s`, each unit decided and
/// validated against the scenario's state (the cluster before any new decision).
fn naive_violations(s: &Scenario) -> Vec<(String, Violation)> {
    let sched = s
        .scheduler(GangOptions::default())
        .expect("generated scenarios build a scheduler");
    let cluster = sched.cluster();
    let mut out = Vec::new();
    for (group, pods) in units(s) {
        let Some(decision) = naive_place(s, cluster, group, &pods) else {
            continue;
        };
        let given: Vec<Pod> = pods.iter().map(|p| (*p).clone()).collect();
        let claims = claims_of(s, &pods);
        let unit = match group {
            Some(g) => format!("PodGroup {}/{}", g.namespace, g.name),
            None => format!("Pod {}/{}", pods[0].namespace, pods[0].name),
        };
        for v in validate_placement(cluster, group, &given, &claims, &decision) {
            out.push((unit.clone(), v));
        }
    }
    out
}

fn runner(cases: u32) -> TestRunner {
    let config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &SEED))
}

#[test]
fn the_naive_placer_is_caught() {
    let config = ScenarioConfig::small();
    let result = runner(256).run(&scenario(&config), |s| {
        let v = naive_violations(&s);
        prop_assert!(v.is_empty(), "{} violations", v.len());
        Ok(())
    });
    let shrunk = match result {
        Err(TestError::Fail(_, shrunk)) => shrunk,
        Err(e) => panic!("the run did not fail on a counterexample: {e}"),
        Ok(()) => panic!("the naive placer passed: no counterexample found"),
    };
    let violations = naive_violations(&shrunk);
    println!("shrunk counterexample:\n{shrunk}");
    println!("violations:");
    for (unit, v) in &violations {
        println!("  - {unit}: {v}");
    }
    assert!(
        shrunk.nodes.len() <= 2,
        "not small: {} nodes",
        shrunk.nodes.len()
    );
    assert!(
        shrunk.pods.len() <= 3,
        "not small: {} pods",
        shrunk.pods.len()
    );
    assert!(
        violations.iter().any(|(_, v)| matches!(
            v,
            Violation::BelowMinCount { .. }
                | Violation::DeviceAllocatedTwice { .. }
                | Violation::DeviceInUse { .. }
        )),
        "neither a partial gang nor a double-booked GPU: {violations:?}"
    );
}

/// Every decision of one cycle of gangpack's own scheduler validates against the state
/// it was made against: the cycle is replayed decision by decision on a copy of the
/// state before it (up to the first preemption, whose evictions the replay does not
/// model).
fn check_gangpack(s: &Scenario) -> Result<usize, TestCaseError> {
    let mut sched = s
        .scheduler(GangOptions::default())
        .map_err(|e| TestCaseError::fail(format!("{e}")))?;
    let before = sched.clone();
    let report = sched.cycle();
    let mut cluster = before.cluster().clone();
    let mut pods: Vec<Pod> = before.pods().cloned().collect();
    let mut claims: Vec<ResourceClaim> = before.claims().cloned().collect();
    let mut checked = 0;
    for (unit, result) in &report.units {
        let d = match result {
            UnitResult::Scheduled(d) => d,
            UnitResult::Preempted(_) => break,
            _ => continue,
        };
        let group = match unit {
            Unit::Group(g) => before.group(g),
            Unit::Pod(_) => None,
        };
        let v = validate_placement(&cluster, group, &pods, &claims, d);
        prop_assert!(v.is_empty(), "{unit} placed invalidly: {v:?}\n{s}");
        cluster
            .apply_decision(d, &pods)
            .map_err(|e| TestCaseError::fail(format!("{e}")))?;
        for b in &d.bindings {
            if let Some(p) = pods
                .iter_mut()
                .find(|p| key(&p.namespace, &p.name) == b.pod)
            {
                p.node_name = Some(b.node.clone());
            }
        }
        for a in d
            .bindings
            .iter()
            .flat_map(|b| &b.claims)
            .chain(&d.group_claims)
        {
            if let Some(c) = claims
                .iter_mut()
                .find(|c| key(&c.namespace, &c.name) == a.claim)
            {
                c.allocation = Some(a.result.clone());
            }
        }
        checked += 1;
    }
    Ok(checked)
}

#[test]
fn gangpacks_own_decisions_validate() {
    let mut placed = 0;
    let mut runner = runner(128);
    let result = runner.run(&scenario(&ScenarioConfig::small()), |s| {
        check_gangpack(&s)?;
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    // The property is not vacuous: the scenarios give the scheduler work it places.
    let mut tree_runner = self::runner(32);
    for _ in 0..32 {
        let s = proptest::strategy::ValueTree::current(
            &scenario(&ScenarioConfig::small())
                .new_tree(&mut tree_runner)
                .unwrap(),
        );
        placed += check_gangpack(&s).unwrap();
    }
    assert!(placed > 0, "no decision was checked");
}
