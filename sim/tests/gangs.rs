//! The time-based replay with gangs: hand-built timelines whose waits and partial
//! GPU-hours follow from the rules, and the generated mix.

#![allow(clippy::cast_precision_loss, clippy::float_cmp)]

use std::path::Path;

use gangpack_sim::gangs::{self, Gang, GangMix, Mode, PREEMPTOR_PRIORITY, Reservation};
use gangpack_sim::run;
use gangpack_sim::trace::NodeRow;

fn nodes(n: usize) -> Vec<NodeRow> {
    (0..n)
        .map(|i| NodeRow {
            name: format!("node-{i}"),
            cpu_milli: 96_000,
            memory_mib: 384 * 1024,
            gpus: 8,
            model: "G2".into(),
        })
        .collect()
}

fn gang(arrival: u64, pods: u32, run: u64) -> Gang {
    Gang {
        arrival,
        pods,
        cpu_milli: 64_000,
        memory_mib: 256 * 1024,
        run,
        rack: false,
        priority: 0,
    }
}

/// Three nodes, two gangs of two pods at once. As PodGroups the second waits for the
/// first to end with nothing held; pod by pod it grabs the third node at once and holds
/// its 8 GPUs idle for the hour it waits for a second one.
#[test]
fn pod_by_pod_holds_gpus_that_gangs_never_hold() {
    let nodes = nodes(3);
    let gangs = [gang(0, 2, 3600), gang(0, 2, 3600)];
    let g = gangs::replay(&nodes, &[], &gangs, 4, Mode::Gang, None).expect("replays");
    assert_eq!(g.waits, [(16, 0, true), (16, 3600, true)]);
    assert_eq!(g.partial_gpu_hours, 0.0);
    let p = gangs::replay(&nodes, &[], &gangs, 4, Mode::PodByPod, None).expect("replays");
    assert_eq!(p.waits, [(16, 0, true), (16, 3600, true)]);
    assert!(
        (p.partial_gpu_hours - 8.0).abs() < 1e-9,
        "{}",
        p.partial_gpu_hours
    );
    // Hourly allocation: 16 of 24 GPUs as gangs in the first hour, 24 pod by pod.
    assert!((g.hourly_allocated_pct[0] - 100.0 * 16.0 / 24.0).abs() < 1e-9);
    assert!((p.hourly_allocated_pct[0] - 100.0).abs() < 1e-9);
}

/// A gang bigger than the cluster never starts: as a PodGroup it never holds anything;
/// pod by pod its first pods sit on every node for the whole window.
#[test]
fn a_gang_that_cannot_fit_waits_to_the_end_holding_nothing() {
    let nodes = nodes(3);
    let gangs = [gang(0, 4, 3600)];
    let g = gangs::replay(&nodes, &[], &gangs, 2, Mode::Gang, None).expect("replays");
    assert_eq!(g.waits, [(32, 7200, false)]);
    assert_eq!(g.partial_gpu_hours, 0.0);
    let p = gangs::replay(&nodes, &[], &gangs, 2, Mode::PodByPod, None).expect("replays");
    assert_eq!(p.waits, [(32, 7200, false)]);
    // Three pods bound for the whole two hours: 3 × 8 GPUs × 2 h.
    assert!(
        (p.partial_gpu_hours - 48.0).abs() < 1e-9,
        "{}",
        p.partial_gpu_hours
    );
}

/// Starvation and the reservation: four nodes; a small gang runs, a 4-pod gang arrives
/// and waits; another small gang arrives later. Greedy, the second small gang takes a
/// node and the big one waits until both small ones end. With a reservation after an
/// hour, the big gang reserves when the second small one arrives (shadow time: the
/// first one's end), the small one cannot backfill (it would run past the shadow time)
/// and the big gang starts as soon as the first small one ends.
#[test]
fn a_reservation_lets_a_big_gang_start_before_later_small_ones() {
    let nodes = nodes(4);
    let gangs = [gang(0, 1, 7200), gang(10, 4, 3600), gang(5000, 1, 7200)];
    let greedy = gangs::replay(&nodes, &[], &gangs, 6, Mode::Gang, None).expect("replays");
    assert_eq!(
        greedy.waits,
        [(8, 0, true), (32, 12_200 - 10, true), (8, 0, true)]
    );
    let reserving = gangs::replay(
        &nodes,
        &[],
        &gangs,
        6,
        Mode::Gang,
        Some(Reservation { after: 3600 }),
    )
    .expect("replays");
    assert_eq!(
        reserving.waits,
        [
            (8, 0, true),
            (32, 7200 - 10, true),
            (8, 10_800 - 5000, true)
        ]
    );
    // A small gang that ends by the shadow time may backfill.
    let short = [gang(0, 1, 7200), gang(10, 4, 3600), gang(5000, 1, 1000)];
    let r = gangs::replay(
        &nodes,
        &[],
        &short,
        6,
        Mode::Gang,
        Some(Reservation { after: 3600 }),
    )
    .expect("replays");
    assert_eq!(r.waits, [(8, 0, true), (32, 7200 - 10, true), (8, 0, true)]);
}

/// A rack-constrained gang lands in one rack (8 nodes of one model). Two racks; a
/// 4-pod rack gang leaves 4 nodes free in the first, a 6-pod one 2 in the second: a
/// 5-pod rack gang waits although 6 nodes are free in all, and starts when the first
/// gang ends; without the constraint it starts at once.
#[test]
fn a_rack_gang_needs_one_rack() {
    let nodes = nodes(16);
    let racked = |mut g: Gang| {
        g.rack = true;
        g
    };
    let gangs = [
        racked(gang(0, 4, 3600)),
        racked(gang(0, 6, 7200)),
        racked(gang(10, 5, 3600)),
    ];
    let g = gangs::replay(&nodes, &[], &gangs, 4, Mode::Gang, None).expect("replays");
    assert_eq!(g.waits[2], (40, 3600 - 10, true));
    let mut free = gangs;
    free[2].rack = false;
    let g = gangs::replay(&nodes, &[], &free, 4, Mode::Gang, None).expect("replays");
    assert_eq!(g.waits[2], (40, 0, true));
}

#[test]
fn the_generated_mix_is_seeded_and_offers_its_load() {
    let w = run::load(
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/openb_pod_list_small.csv")],
        None,
    )
    .expect("loads")
    .remove(0);
    let mix = GangMix {
        hours: 24 * 60,
        load: 0.5,
        ..GangMix::default()
    };
    let a = gangs::generate(&mix, &w.nodes, 1);
    assert_eq!(a, gangs::generate(&mix, &w.nodes, 1));
    assert_ne!(a, gangs::generate(&mix, &w.nodes, 2));
    let sizes: Vec<u32> = mix.sizes.iter().map(|s| s.0).collect();
    assert!(a.iter().all(|g| sizes.contains(&g.gpus())));
    assert!(a.iter().all(|g| (3600..=24 * 3600).contains(&g.run)));
    assert!(a.iter().all(|g| !g.rack || g.gpus() <= 64));
    // A tenth are preemptors, drawn apart: without them the gangs are the same.
    let preemptors = a
        .iter()
        .filter(|g| g.priority == PREEMPTOR_PRIORITY)
        .count();
    let share = preemptors as f64 / a.len() as f64;
    assert!((share - 0.1).abs() < 0.03, "preemptor share {share}");
    let none = gangs::generate(
        &GangMix {
            preemptor_share: 0.0,
            ..mix.clone()
        },
        &w.nodes,
        1,
    );
    let lowered: Vec<Gang> = a
        .iter()
        .map(|g| Gang {
            priority: 0,
            ..g.clone()
        })
        .collect();
    assert_eq!(lowered, none);
    let big_gpus: u64 = w
        .nodes
        .iter()
        .filter(|n| n.gpus == 8)
        .map(|n| u64::from(n.gpus))
        .sum();
    let offered: f64 = a
        .iter()
        .map(|g| f64::from(g.gpus()) * g.run as f64)
        .sum::<f64>()
        / (mix.hours as f64 * 3600.0 * big_gpus as f64);
    assert!((offered - 0.5).abs() < 0.1, "offered load {offered}");
}

/// Three nodes run two low-priority gangs, of two pods (ten hours) and of one pod. A
/// two-pod preemptor arrives after an hour. As PodGroups, workload-aware preemption
/// evicts the two-pod gang whole (the one victim that makes the preemptor fit): it
/// loses its 16 GPU-hours of work and starts over when the preemptor's hour is up,
/// having waited that hour. Pod by pod the first preemptor pod evicts one pod of
/// that gang, which fails it as a job, and the second preemptor pod takes the node it
/// leaves: the same outcome here.
#[test]
fn a_preemptor_evicts_a_whole_gang_which_starts_over() {
    let nodes = nodes(3);
    let mut vip = gang(3600, 2, 3600);
    vip.priority = PREEMPTOR_PRIORITY;
    let gangs = [gang(0, 2, 36_000), gang(0, 1, 36_000), vip];
    for mode in [Mode::Gang, Mode::PodByPod] {
        let t = gangs::replay(&nodes, &[], &gangs, 4, mode, None).expect("replays");
        assert_eq!(t.preemption.preemptor_waits, [(16, 0, true)], "{mode:?}");
        assert_eq!(t.preemption.preemptions, 1, "{mode:?}");
        assert_eq!(t.preemption.gangs_evicted, 1, "{mode:?}");
        assert!(
            (t.preemption.lost_gpu_hours - 16.0).abs() < 1e-9,
            "{mode:?}"
        );
        assert_eq!(
            t.waits,
            [(16, 3600, true), (8, 0, true), (16, 0, true)],
            "{mode:?}"
        );
    }
}

/// A preemptor finds no victim among gangs of its own priority: it waits like any gang.
#[test]
fn preemptors_do_not_preempt_each_other() {
    let nodes = nodes(2);
    let vip = |arrival| {
        let mut g = gang(arrival, 2, 3600);
        g.priority = PREEMPTOR_PRIORITY;
        g
    };
    let gangs = [vip(0), vip(600)];
    let t = gangs::replay(&nodes, &[], &gangs, 3, Mode::Gang, None).expect("replays");
    assert_eq!(t.preemption.preemptions, 0);
    assert_eq!(t.waits, [(16, 0, true), (16, 3000, true)]);
}
