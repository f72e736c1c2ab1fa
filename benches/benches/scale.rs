//! Issue 19: the 100,000-GPU cluster. The fleet is `gangpack gen --fleet 12500`'s
//! scenario (`gangpack_cli::fleet_scenario`, seed 0), taken as model data rather than
//! read back from its 113 MB of YAML, so each benchmark times the engine and not the
//! loader (`gangpack plan --timings` times the loader; see `benches/RESULTS.md`).
//!
//! `cargo bench -p gangpack-benches --bench scale`. The setup checks each scenario's
//! outcome once and prints the index memory of the 100k-GPU cluster on stderr.
#![allow(missing_docs)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use gangpack::testing::Scenario;
use gangpack::{Cluster, DisruptionMode, GangOptions, GangOutcome, Scheduler, Unit, UnitResult};
use gangpack_benches::{
    add_class_gang, add_scheduler_gang, allocation_fleet_with_racks, mixed_gang_shapes,
};
use gangpack_cli::{FLEET_NODES, PENDING_GANG, fleet_scenario};
use std::cell::LazyCell;
use std::hint::black_box;
use std::time::Instant;

/// The fleet's DeviceClass (all its GPUs).
const FLEET_CLASS: &str = "gpu.nvidia.com";

/// Pending units of the `cycle_10000_units` benchmark.
const UNITS: usize = 10_000;

/// The generated fleet (12,500 nodes x 8 GPUs, 70 % allocated) as a scenario.
fn fleet() -> Scenario {
    let started = Instant::now();
    let (scenario, summary) = fleet_scenario(FLEET_NODES, 0);
    eprintln!("scale setup: fleet {summary} in {:.2?}", started.elapsed());
    scenario
}

/// The pending `training/pretrain-frontier` gang of the fleet: its PodGroup, pods and
/// the claims they name.
fn pending_gang(
    s: &Scenario,
) -> (
    gangpack::PodGroup,
    Vec<gangpack::Pod>,
    Vec<gangpack::ResourceClaim>,
) {
    let (ns, name) = PENDING_GANG.split_once('/').expect("namespace/name");
    let group = s.group(ns, name).expect("the pending gang").clone();
    let pods: Vec<_> = s
        .pending_pods()
        .filter(|p| p.namespace == ns && p.scheduling_group.as_deref() == Some(name))
        .cloned()
        .collect();
    let claims = pods
        .iter()
        .flat_map(|p| &p.resource_claims)
        .map(|rc| match &rc.source {
            gangpack::ClaimSource::ClaimName(c) => s.claim(ns, c).expect("named claim").clone(),
            other @ gangpack::ClaimSource::Template(_) => {
                panic!("the fleet names its claims: {other:?}")
            }
        })
        .collect();
    (group, pods, claims)
}

/// The fleet's running state: its cluster with every allocation recorded, checked
/// once to place the 2,048 x 8 gang inside one block.
fn fleet_cluster(s: &Scenario) -> Cluster {
    let started = Instant::now();
    let sched = s.scheduler(GangOptions::default()).expect("valid fleet");
    let mut cluster = sched.cluster().clone();
    drop(sched);
    eprintln!("scale setup: scheduler built in {:.2?}", started.elapsed());
    cluster.shrink_to_fit();
    let m = cluster.index_memory();
    eprintln!(
        "scale setup: index memory of the 100k-GPU fleet: {} devices, structural {} B \
         ({:.1} B a device), attribute index {} B",
        m.devices,
        m.structural_bytes,
        m.structural_bytes_per_device(),
        m.attribute_bytes
    );
    let (group, pods, claims) = pending_gang(s);
    let started = Instant::now();
    let outcome = cluster
        .place_gang_mut(Some(&group), &pods, &claims, &GangOptions::default())
        .expect("valid gang");
    let GangOutcome::Placed(placement) = outcome else {
        panic!("the 2,048-pod gang does not fit the fleet: {outcome:?}")
    };
    assert_eq!(placement.bindings.len(), 2_048);
    let blocks: std::collections::BTreeSet<_> = placement
        .bindings
        .iter()
        .map(|b| {
            cluster
                .node(&b.node)
                .and_then(|n| n.labels.get(gangpack_cli::FLEET_BLOCK_LABEL))
                .cloned()
        })
        .collect();
    assert_eq!(blocks.len(), 1, "one block: {blocks:?}");
    eprintln!(
        "scale setup: 2,048 x 8 gang placed in {blocks:?} in {:.2?}",
        started.elapsed()
    );
    cluster
}

/// The fleet plus [`UNITS`] pending units of mixed shapes (1-16 pods of 1-8 GPUs, a
/// gang each; priority 0 so that no unit preempts) beside the fleet's own pending
/// gang and pods (which go first: they have priority). Checks once what one cycle
/// binds; returns the pods it binds.
fn mixed_units(s: &Scenario) -> (Scheduler, usize) {
    let mut sched = s.scheduler(GangOptions::default()).expect("valid fleet");
    for (i, &shape) in mixed_gang_shapes(UNITS, 19).iter().enumerate() {
        add_class_gang(
            &mut sched,
            FLEET_CLASS,
            &format!("unit-{i:05}"),
            shape,
            0,
            DisruptionMode::Single,
        );
    }
    let mut once = sched.clone();
    let started = Instant::now();
    let report = once.cycle();
    let took = started.elapsed();
    let bound = report.pods_bound();
    let placed = report
        .units
        .iter()
        .filter(|(_, r)| matches!(r, UnitResult::Scheduled(_)))
        .count();
    assert!(
        placed > 7,
        "more than the fleet's own pending units fit: {placed}"
    );
    eprintln!(
        "scale setup: cycle of {} units: {placed} placed, {bound} pods bound, in {took:.2?}",
        report.units.len()
    );
    (sched, bound)
}

/// 12,500 nodes x 8 GPUs, no taints, full: 6,250 gangs of 2 pods x 8 GPUs at priority
/// 0 (`disruptionMode: All`), then a pending 256 x 8 gang (2,048 GPUs) at priority 100.
/// Checks once that its cycle evicts exactly 128 whole gangs and binds all 256 pods.
fn full_with_preemptor() -> Scheduler {
    let started = Instant::now();
    let nodes = FLEET_NODES as usize;
    let cluster = allocation_fleet_with_racks(nodes, 8, 4, 0, 16);
    let mut full = Scheduler::new(cluster, GangOptions::default());
    for i in 0..nodes / 2 {
        add_scheduler_gang(
            &mut full,
            &format!("low-{i:05}"),
            2,
            8,
            0,
            DisruptionMode::All,
        );
    }
    let filled = full.cycle();
    assert_eq!(filled.pods_bound(), nodes);
    assert!(
        full.cluster().free_devices().is_empty(),
        "the cluster is full"
    );
    add_scheduler_gang(&mut full, "high", 256, 8, 100, DisruptionMode::All);
    eprintln!(
        "scale setup: full 12500 x 8 cluster with a pending 256 x 8 gang in {:.2?}",
        started.elapsed()
    );
    let mut once = full.clone();
    let started = Instant::now();
    let report = once.cycle();
    let took = started.elapsed();
    assert_eq!(report.units.len(), 1, "{:?}", report.units);
    let (Unit::Group(name), UnitResult::Preempted(p)) = &report.units[0] else {
        panic!("the high gang does not preempt: {:?}", report.units[0].1)
    };
    assert_eq!(name, "ns/high");
    assert_eq!(p.decision.bindings.len(), 256);
    assert_eq!(p.victims.len(), 128);
    assert!(
        p.victims
            .iter()
            .all(|v| v.pods.len() == 2 && v.devices == 16)
    );
    eprintln!("scale setup: preemption checked (128 whole gangs evicted) in {took:.2?}");
    full
}

fn scale(c: &mut Criterion) {
    let mut group = c.benchmark_group("scale");
    group.sample_size(10);
    // Preemption for a 2,048-GPU gang on the full 100k-GPU cluster.
    let mut full: Option<Scheduler> = None;
    group.bench_function("preempt_2048_gpu_gang_on_full_100k", |b| {
        let full = full.get_or_insert_with(full_with_preemptor);
        b.iter_batched_ref(|| full.clone(), Scheduler::cycle, BatchSize::LargeInput);
    });
    drop(full);

    let scenario = LazyCell::new(fleet);
    let opts = GangOptions::default();

    // The 2,048 x 8-GPU gang with its block constraint, placed in the fleet's cluster
    // (`place_gang_mut` restores the cluster before it returns).
    let mut cluster: Option<(Cluster, _)> = None;
    group.bench_function("2048x8_block_gang_on_100k", |b| {
        let (cluster, (g, pods, claims)) =
            cluster.get_or_insert_with(|| (fleet_cluster(&scenario), pending_gang(&scenario)));
        b.iter(|| {
            cluster
                .place_gang_mut(Some(g), black_box(pods), claims, &opts)
                .expect("valid")
        });
    });
    drop(cluster);

    // One cycle of the fleet's scheduler plus 10,000 mixed pending units; throughput in
    // pods bound.
    let mut mixed: Option<(Scheduler, usize)> = None;
    let (_, bound) = mixed.get_or_insert_with(|| mixed_units(&scenario));
    group.throughput(Throughput::Elements(*bound as u64));
    group.bench_function("cycle_10000_units_on_100k", |b| {
        let (sched, _) = mixed.get_or_insert_with(|| mixed_units(&scenario));
        b.iter_batched_ref(|| sched.clone(), Scheduler::cycle, BatchSize::LargeInput);
    });
    drop(mixed);
    drop(scenario);

    group.finish();
}

criterion_group!(benches, scale);
criterion_main!(benches);
