//! The mix a `Scheduler` scores Stranding and FGD placements against (issue 34): what it
//! observes of its pods, followed when it moves by more than 1/64 and not before; a
//! mix set with `set_workload_mix` (refused, with nothing changed, when invalid); and
//! a placement that takes what the policy prefers.

mod common;

use common::*;
use gangpack::{
    GangOptions, MixSource, Pod, Quantity, ResourceClaim, Scheduler, ScoringPolicy, ShapeMix,
    TypicalShape, UnitResult,
};

/// Pod `name` asking `gpus` GPUs and `cpu` CPUs, and its claim.
fn task(name: &str, gpus: u32, cpu: i64) -> (Pod, ResourceClaim) {
    let (mut pod, claim) = gpu_pod(name, gpus);
    pod.requests.insert("cpu".into(), Quantity::from_int(cpu));
    (pod, claim)
}

fn add(s: &mut Scheduler, name: &str, gpus: u32, cpu: i64) {
    let (pod, claim) = task(name, gpus, cpu);
    s.add_claim(claim).unwrap();
    s.add_pod(pod).unwrap();
}

fn weights(mix: &ShapeMix) -> Vec<(u32, u32)> {
    mix.shapes.iter().map(|s| (s.count, s.weight)).collect()
}

fn stranding_scheduler() -> Scheduler {
    let c = rack_cluster(&[("a", "r1", 8), ("b", "r1", 8), ("c", "r1", 8)], 1000);
    Scheduler::new(
        c,
        GangOptions {
            policy: ScoringPolicy::stranding(),
            ..GangOptions::default()
        },
    )
}

#[test]
fn the_observed_mix_follows_the_pods_when_it_moves() {
    let mut s = stranding_scheduler();
    assert_eq!(s.workload_mix().map(|m| m.shapes.len()), Some(0));
    for i in 0..64 {
        add(&mut s, &format!("one-{i}"), 1, 1);
    }
    s.cycle();
    assert_eq!(weights(s.workload_mix().unwrap()), [(1, 64)]);
    // One more pod of the same shape moves the frequencies by nothing: not followed.
    add(&mut s, "one-64", 1, 1);
    s.cycle();
    assert_eq!(weights(s.workload_mix().unwrap()), [(1, 64)]);
    // A new shape of frequency 1/66 (< 1/64), the distribution moving by 1/66: not
    // followed either; a second pod of it (2/67 > 1/64): followed.
    add(&mut s, "two-0", 2, 1);
    s.cycle();
    assert_eq!(weights(s.workload_mix().unwrap()), [(1, 64)]);
    add(&mut s, "two-1", 2, 1);
    s.cycle();
    let got = weights(s.workload_mix().unwrap());
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.contains(&(2, 2)), "{got:?}");
}

#[test]
fn a_given_mix_is_kept_and_an_invalid_one_refused() {
    let mut s = stranding_scheduler();
    let mut bad = TypicalShape::new("gpu");
    bad.weight = 0;
    let before = format!("{s:?}");
    let err = s
        .set_workload_mix(Some(ShapeMix { shapes: vec![bad] }))
        .unwrap_err();
    assert!(err.to_string().contains(": shapes[0].weight:"), "{err}");
    assert_eq!(format!("{s:?}"), before, "a refused mix changes nothing");

    let given = ShapeMix {
        shapes: vec![TypicalShape {
            weight: 3,
            count: 8,
            ..TypicalShape::new("gpu")
        }],
    };
    s.set_workload_mix(Some(given.clone())).unwrap();
    add(&mut s, "one-0", 1, 1);
    s.cycle();
    assert_eq!(
        s.workload_mix(),
        Some(&given),
        "a given mix is not replaced"
    );
    s.set_workload_mix(None).unwrap();
    assert_eq!(weights(s.workload_mix().unwrap()), [(1, 1)]);
}

/// Two nodes with 8 GPUs each, one with 3 taken. Against a mix of 8-GPU pods, a 1-GPU
/// pod goes to the node already broken into (the whole one stays whole for an 8-GPU
/// pod); BestFit agrees here, Spread does not.
#[test]
fn placements_keep_whole_nodes_for_the_mix() {
    let eight = ShapeMix {
        shapes: vec![TypicalShape {
            weight: 1,
            count: 8,
            ..TypicalShape::new("gpu")
        }],
    };
    for (policy, node) in [
        (ScoringPolicy::stranding(), "b"),
        (ScoringPolicy::fgd(), "b"),
        (ScoringPolicy::BestFit, "b"),
        (ScoringPolicy::Spread, "a"),
    ] {
        let c = rack_cluster(&[("a", "r1", 8), ("b", "r2", 8)], 1000);
        let mut s = Scheduler::new(
            c,
            GangOptions {
                policy: policy.clone().with_mix(MixSource::Given(eight.clone())),
                ..GangOptions::default()
            },
        );
        // Three GPUs of b taken by a pod pinned there.
        let (mut pinned, claim) = task("pinned", 3, 1);
        pinned.node_selector.insert("rack".into(), "r2".into());
        s.add_claim(claim).unwrap();
        s.add_pod(pinned).unwrap();
        let report = s.cycle();
        assert!(matches!(report.units[0].1, UnitResult::Scheduled(_)));
        add(&mut s, "small", 1, 1);
        let report = s.cycle();
        let UnitResult::Scheduled(d) = &report.units[0].1 else {
            panic!("{policy:?}: {report:?}");
        };
        assert_eq!(d.bindings[0].node, node, "{policy:?}");
    }
}
