#![cfg(not(target_arch = "wasm32"))]
//! Issue 32's reports of explanations that contradicted themselves or the cluster, each
//! replayed through the `Scheduler` as a user would meet it, with the explanation's
//! text pinned.

mod common;

use common::*;
use gangpack::{
    DeviceRef, DeviceTaintEffect, Fact, GangOptions, Help, PodGroup, Scheduler, SchedulingPolicy,
    Time, TopologyConstraint, Unit, UnitResult,
};

const NS: &str = "ns";

/// Adds pod `ns/<name>` of group `group` with its own claim for `gpus` GPUs, at the
/// group's priority.
fn add_member(s: &mut Scheduler, group: &str, name: &str, gpus: u32) {
    let priority = s
        .group(&format!("{NS}/{group}"))
        .map_or(0, PodGroup::effective_priority);
    let (mut p, claim) = gpu_pod(name, gpus);
    p.scheduling_group = Some(group.into());
    p.priority = priority;
    s.add_claim(claim).unwrap();
    s.add_pod(p).unwrap();
}

/// The devices allocated to a claim.
fn devices_of(s: &Scheduler, claim: &str) -> Vec<DeviceRef> {
    s.allocation(claim)
        .unwrap_or_else(|| panic!("{claim} is not allocated"))
        .devices
        .iter()
        .map(|r| DeviceRef::new(&r.driver, &r.pool, &r.device))
        .collect()
}

/// Report 2: a 4 × 8-GPU gang (minCount 4, one rack) runs; one of its GPUs is tainted
/// NoExecute, the clock advances, the member on it is evicted and re-created. The
/// three running members' 24 GPUs are the gang's own, not "allocated to other claims",
/// and the blocking set is the taint on the fourth node.
#[test]
fn a_gangs_own_running_members_are_not_other_claims() {
    let cluster = rack_cluster(
        &[
            ("n1", "r1", 8),
            ("n2", "r1", 8),
            ("n3", "r1", 8),
            ("n4", "r1", 8),
        ],
        64,
    );
    let mut s = Scheduler::new(cluster, GangOptions::default());
    let mut g = PodGroup::new(NS, "train", SchedulingPolicy::Gang { min_count: 4 });
    g.topology.push(TopologyConstraint::new("rack"));
    s.add_group(g).unwrap();
    for i in 0..4 {
        add_member(&mut s, "train", &format!("train-{i}"), 8);
    }
    s.cycle();
    assert!((0..4).all(|i| s.binding(&format!("ns/train-{i}")).is_some()));
    let on = s.binding("ns/train-3").unwrap().node.clone();
    let gpu = devices_of(&s, "ns/train-3-gpus")[0].clone();
    s.taint_device(
        &gpu,
        taint(
            "gpu.example.com/ecc",
            "uncorrectable",
            DeviceTaintEffect::NoExecute,
            0,
        ),
    )
    .unwrap();
    s.advance(Time(60));
    assert!(
        s.pod("ns/train-3").is_none(),
        "the member on the tainted GPU is evicted"
    );
    // Its controller re-creates it (a new claim: the old one was deleted with it, or is
    // released).
    let _ = s.remove_claim("ns/train-3-gpus");
    add_member(&mut s, "train", "train-3", 8);
    s.cycle();
    assert!(
        s.binding("ns/train-3").is_none(),
        "no room: 7 healthy GPUs on {on}"
    );

    let ex = s.explain(&Unit::Group("ns/train".into())).unwrap();
    let text = ex.to_string();
    println!("{text}");
    assert!(
        !ex.facts
            .iter()
            .any(|f| matches!(f, Fact::DevicesInUse { .. })),
        "the gang's own GPUs are not other claims:\n{text}"
    );
    let blocking: Vec<&Fact> = ex.blocking.iter().map(|&i| &ex.facts[i]).collect();
    assert!(
        matches!(blocking.as_slice(), [Fact::DeviceTaint { taint, nodes, .. }]
            if taint.key == "gpu.example.com/ecc" && nodes == std::slice::from_ref(&on)),
        "{text}"
    );
    assert!(ex.minimal, "{text}");
    let own: Vec<&Fact> = ex
        .facts
        .iter()
        .filter(|f| matches!(f, Fact::HeldByOwnMembers { .. }))
        .collect();
    assert!(
        matches!(own.as_slice(), [Fact::HeldByOwnMembers { devices: 24, nodes }] if nodes.len() == 3),
        "{text}"
    );
    assert!(
        text.contains("24 devices on 3 nodes (")
            && text.contains("are held by this unit's own running members"),
        "{text}"
    );
}

/// Report 3: a pending gang that fits alone now read "Scheduled (6 pods bound)" while
/// a gang ahead of it in the queue took the room, and it stayed pending after the
/// cycle. The verdict follows the next cycle: the first gang is placed by it; the
/// second waits for the first, before the cycle and after it.
#[test]
fn a_gang_that_fits_alone_but_not_after_the_gang_ahead_is_not_scheduled() {
    let nodes: Vec<(String, &str, usize)> = (1..=8).map(|i| (format!("n{i}"), "r1", 8)).collect();
    let refs: Vec<(&str, &str, usize)> =
        nodes.iter().map(|(n, r, g)| (n.as_str(), *r, *g)).collect();
    let mut s = Scheduler::new(rack_cluster(&refs, 64), GangOptions::default());
    for (name, priority) in [("llama", 10), ("mixtral", 5)] {
        let mut g = PodGroup::new(NS, name, SchedulingPolicy::Gang { min_count: 6 });
        g.priority = Some(priority);
        s.add_group(g).unwrap();
        for i in 0..6 {
            add_member(&mut s, name, &format!("{name}-{i}"), 8);
        }
    }
    // Before a cycle each fits alone; only the first is placed by the next cycle.
    let mixtral = Unit::Group("ns/mixtral".into());
    let llama = Unit::Group("ns/llama".into());
    let v = s.verdict(&llama).unwrap();
    assert_eq!(v.helps, [Help::NextCycle { pods: 6 }], "{v}");
    assert_eq!(
        v.to_string(),
        "PodGroup ns/llama: pending; the next cycle places it (6 pods)"
    );
    let v = s.verdict(&mixtral).unwrap();
    assert_eq!(
        v.helps,
        [Help::Waiting {
            holders: vec![llama.clone()],
            ahead: true,
            never_preempts: false
        }],
        "{v}"
    );
    assert_eq!(
        v.to_string(),
        "PodGroup ns/mixtral: pending; waiting helps: it fits now, but the next cycle places \
         PodGroup ns/llama first"
    );
    let report = s.cycle();
    assert!(matches!(report.units[1], (ref u, UnitResult::Pending(_)) if *u == mixtral));
    // After the cycle: llama holds six nodes, mixtral waits for it.
    let v = s.verdict(&mixtral).unwrap();
    assert_eq!(
        v.helps,
        [
            Help::Waiting {
                holders: vec![llama.clone()],
                ahead: false,
                never_preempts: false
            },
            Help::Capacity {
                domain: None,
                devices: 32
            }
        ],
        "{v}"
    );
    assert!(!s.verdict(&llama).unwrap().pending);
}
