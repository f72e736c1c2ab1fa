//! Issue 19: the 100,000-GPU cluster. The fleet is `gangpack gen --fleet 12500`'s
//! scenario (`gangpack_cli::fleet_scenario`, seed 0), taken as model data rather than
//! read back from its 113 MB of YAML, so each benchmark times the engine and not the
//! loader (`gangpack plan --timings` times the loader; see `benches/RESULTS.md`).
//!
//! `cargo bench -p gangpack-benches --bench scale`. The setup checks each scenario's
//! outcome once and prints the index memory of the 100k-GPU cluster on stderr.
//!
//! The `live` group (issue 33) times a scheduler following the cluster on the same
//! fleet with its running pods: a node relabelled, moved to another rack, joining
//! with its 8-GPU slice, leaving with 8 running pods, and a slice republished.
#![allow(missing_docs)]

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use gangpack::testing::Scenario;
use gangpack::{
    AllocationOutcome, AllocatorOptions, ClaimSource, Cluster, DisruptionMode, GangOptions,
    GangOutcome, Node, NodeAccess, Pod, PodResourceClaim, ResourceSlice, Scheduler,
    SliceNodeSelection, Unit, UnitResult,
};
use gangpack_benches::{
    add_class_gang, add_scheduler_gang, allocation_fleet_with_racks, class_claim, mixed_gang_shapes,
};
use gangpack_cli::{FLEET_NODES, PENDING_GANG, fleet_scenario};
use std::cell::LazyCell;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

/// The fleet's DeviceClass (all its GPUs).
const FLEET_CLASS: &str = "gpu.nvidia.com";

/// Pending units of the `cycle_10000_units` benchmark.
const UNITS: usize = 10_000;

/// Pending units of the `cycle_2000_fitting_units` benchmark.
const FITTING_UNITS: usize = 2_000;

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
    let (sched, bound, placed) = units_cycle(s, &mixed_gang_shapes(UNITS, 19));
    assert!(
        placed > 7,
        "more than the fleet's own pending units fit: {placed}"
    );
    (sched, bound)
}

/// The fleet plus [`FITTING_UNITS`] pending units of small shapes ([`mixed_gang_shapes`]
/// with at most 4 pods of at most 2 GPUs: 5.25 GPUs a unit on average, ~10,500 in
/// all, of the ~14,000 free GPUs the fleet's own 2,048 x 8 gang leaves), of which
/// nearly all fit: the cycle's placement throughput rather than its rejections.
/// Checks once that 90 % of the units fit; returns the pods it binds.
fn fitting_units(s: &Scenario) -> (Scheduler, usize) {
    let shapes: Vec<(usize, u32)> = mixed_gang_shapes(FITTING_UNITS, 23)
        .into_iter()
        .map(|(pods, gpus)| (pods.min(4), gpus.min(2)))
        .collect();
    let (sched, bound, placed) = units_cycle(s, &shapes);
    assert!(
        placed * 10 >= FITTING_UNITS * 9,
        "90 % of the small units fit: {placed}"
    );
    (sched, bound)
}

/// The fleet's scheduler plus one pending gang of each of `shapes` (`unit-00000`, ...,
/// priority 0, `disruptionMode: Single`), with what one cycle over it binds: the
/// pods and the units placed.
fn units_cycle(s: &Scenario, shapes: &[(usize, u32)]) -> (Scheduler, usize, usize) {
    let mut sched = s.scheduler(GangOptions::default()).expect("valid fleet");
    for (i, &shape) in shapes.iter().enumerate() {
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
    eprintln!(
        "scale setup: cycle of {} units: {placed} placed, {bound} pods bound, in {took:.2?}",
        report.units.len()
    );
    (sched, bound, placed)
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

    // The same with 2,000 small units that nearly all fit: placements per second.
    let mut fitting: Option<(Scheduler, usize)> = None;
    let (_, bound) = fitting.get_or_insert_with(|| fitting_units(&scenario));
    group.throughput(Throughput::Elements(*bound as u64));
    group.bench_function("cycle_2000_fitting_units_on_100k", |b| {
        let (sched, _) = fitting.get_or_insert_with(|| fitting_units(&scenario));
        b.iter_batched_ref(|| sched.clone(), Scheduler::cycle, BatchSize::LargeInput);
    });
    drop(fitting);
    drop(scenario);

    group.finish();
}

// ------------------------------------------------------------------ issue 33

/// The fleet's scheduler with its running pods, and a node with running pods: the
/// first bound pod's (its name and its node-local slice's).
///
/// With `GANGPACK_LIVE_WITHOUT_RULES` set, the fleet's DeviceTaintRules are removed
/// first (a diagnosis: `Cluster::pending_evictions` walks every allocated device when
/// any rule exists, see `benches/RESULTS.md`).
fn live_fleet(s: &Scenario) -> (Scheduler, String, String) {
    let started = Instant::now();
    let mut sched = s.scheduler(GangOptions::default()).expect("valid fleet");
    if std::env::var_os("GANGPACK_LIVE_WITHOUT_RULES").is_some() {
        let rules: Vec<String> = sched
            .cluster()
            .taint_rules()
            .map(|r| r.name.clone())
            .collect();
        for r in &rules {
            sched.remove_taint_rule(r).expect("there");
        }
        eprintln!(
            "live setup: the fleet's {} DeviceTaintRules removed",
            rules.len()
        );
    }
    let node = s
        .bound_pods()
        .next()
        .and_then(|p| p.node_name.clone())
        .expect("the fleet runs pods");
    let slice = sched
        .cluster()
        .slices()
        .find(|sl| sl.node_name() == Some(node.as_str()))
        .map(|sl| sl.name.clone())
        .expect("every node publishes its GPUs");
    let running = sched
        .pods()
        .filter(|p| p.node_name.as_deref() == Some(node.as_str()))
        .count();
    eprintln!(
        "live setup: the fleet's scheduler in {:.2?}; node {node} runs {running} pods",
        started.elapsed()
    );
    (sched, node, slice)
}

/// A node joining the fleet as `name`: a copy of `template`'s Node and its 8-GPU
/// slice (same labels, devices and attributes), renamed.
fn joining_node(sched: &Scheduler, template: &str, name: &str) -> (Node, ResourceSlice) {
    let c = sched.cluster();
    let mut node = c.node(template).expect("template node").clone();
    node.name = name.into();
    node.labels
        .insert("kubernetes.io/hostname".into(), name.into());
    let mut slice = c
        .slices()
        .find(|sl| sl.node_name() == Some(template))
        .expect("template slice")
        .clone();
    slice.name = format!("{name}-gpu.nvidia.com");
    slice.pool.name = name.into();
    slice.pool.generation = 0;
    slice.node_selection = SliceNodeSelection::Slice(NodeAccess::NodeName(name.into()));
    (node, slice)
}

/// Adds `name` (a copy of `template`) with its slice and 8 running pods of 1 GPU
/// each (`ns/<name>-<i>`, claims allocated on it as another scheduler would).
fn node_with_8_pods(sched: &mut Scheduler, template: &str, name: &str) -> Vec<String> {
    let (node, slice) = joining_node(sched, template, name);
    sched.add_node(node).expect("valid node");
    sched.add_slice(slice).expect("valid slice");
    let mut claims = Vec::with_capacity(8);
    for i in 0..8 {
        let pod_name = format!("{name}-{i}");
        let mut claim = class_claim(FLEET_CLASS, &format!("{pod_name}-gpus"), 1, false);
        sched.add_claim(claim.clone()).expect("valid claim");
        let outcome = sched
            .cluster()
            .allocate_claims(
                name,
                std::slice::from_ref(&claim),
                &BTreeMap::new(),
                &AllocatorOptions::default(),
            )
            .expect("valid claim");
        let AllocationOutcome::Allocated(mut results) = outcome else {
            panic!("a GPU of {name} for {pod_name}: {outcome:?}")
        };
        claim.allocation = Some(results.remove(0));
        sched.update_claim(claim.clone()).expect("allocated");
        let mut pod = Pod::new("ns", &pod_name);
        pod.node_name = Some(name.into());
        pod.resource_claims.push(PodResourceClaim {
            name: "gpus".into(),
            source: ClaimSource::ClaimName(claim.name.clone()),
        });
        sched.add_pod(pod).expect("a running pod");
        claims.push(format!("ns/{}", claim.name));
    }
    claims
}

/// Issue 33: a scheduler following a live cluster, on the 100k-GPU fleet with its
/// running pods (`cargo bench -p gangpack-benches --bench scale -- live/`). Each
/// benchmark changes the one scheduler in place and times the operation alone (what
/// it sets up and undoes is outside the timing).
fn live(c: &mut Criterion) {
    let mut group = c.benchmark_group("live");
    let scenario = LazyCell::new(fleet);
    let mut fleet: Option<(Scheduler, String, String)> = None;

    // What every operation below ends with: the eviction schedule brought up to date.
    // Nothing changed in between, so the device part is the cached one (it is kept
    // under the cluster's eviction epoch) and the node part is the pods on NoExecute
    // nodes.
    group.bench_function("refresh_evictions_on_100k", |b| {
        let (sched, _, _) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        b.iter(|| sched.refresh_evictions());
    });

    // The device part in full, as after a change to taints, allocations or slices:
    // every eviction source (allocated devices with a NoExecute taint, or withdrawn)
    // visited.
    group.bench_function("pending_evictions_on_100k", |b| {
        let (sched, _, _) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        b.iter(|| sched.cluster().pending_evictions());
    });

    // A label that no selector or topology key reads, toggled: `update_node` with the
    // Node object (labels, taints, allocatable, cordon), then the eviction schedule.
    group.bench_function("relabel_node_on_100k", |b| {
        let (sched, node, _) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        let mut object = sched.cluster().node(node).expect("node").clone();
        let mut flip = false;
        b.iter_batched(
            || {
                flip = !flip;
                object.labels.insert(
                    "example.com/pool".into(),
                    if flip { "a" } else { "b" }.into(),
                );
                object.clone()
            },
            |n| sched.update_node(n).expect("valid node"),
            BatchSize::SmallInput,
        );
    });

    // The same through the rack label, a tracked topology key: the node's counts move
    // between two racks' domains.
    group.bench_function("move_node_to_another_rack_on_100k", |b| {
        let (sched, node, _) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        let mut object = sched.cluster().node(node).expect("node").clone();
        let home = object.labels[gangpack_cli::FLEET_RACK_LABEL].clone();
        let mut flip = false;
        b.iter_batched(
            || {
                flip = !flip;
                let rack = if flip {
                    "rack-elsewhere"
                } else {
                    home.as_str()
                };
                object
                    .labels
                    .insert(gangpack_cli::FLEET_RACK_LABEL.into(), rack.into());
                object.clone()
            },
            |n| sched.update_node(n).expect("valid node"),
            BatchSize::SmallInput,
        );
        object
            .labels
            .insert(gangpack_cli::FLEET_RACK_LABEL.into(), home);
        sched.update_node(object).expect("valid node");
    });

    // A node joins with its 8-GPU slice (then leaves again, untimed). The name is
    // reused: a name the cluster has never seen also takes a node slot (printed once).
    // (Criterion calls this closure once per sample: the fresh names are timed once.)
    let mut fresh_timed = false;
    group.bench_function("add_node_with_8_gpu_slice_on_100k", |b| {
        let (sched, template, _) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        let (node, slice) = joining_node(sched, template, "node-joining");
        if !fresh_timed {
            fresh_timed = true;
            let mut fresh = Duration::ZERO;
            for i in 0..1_000 {
                let name = format!("node-new-{i:04}");
                let (node, slice) = joining_node(sched, template, &name);
                let start = Instant::now();
                sched.add_node(node).expect("valid node");
                sched.add_slice(slice).expect("valid slice");
                fresh += start.elapsed();
                sched
                    .remove_slice(&format!("{name}-gpu.nvidia.com"))
                    .expect("there");
                sched.remove_node(&name).expect("there");
            }
            eprintln!(
                "live: 1,000 nodes never seen before joined with their slices in {fresh:.2?} \
                 ({:.2?} each)",
                fresh / 1_000
            );
        }
        b.iter_custom(|iters| {
            let mut took = Duration::ZERO;
            for _ in 0..iters {
                let (node, slice) = (node.clone(), slice.clone());
                let start = Instant::now();
                sched.add_node(black_box(node)).expect("valid node");
                sched.add_slice(black_box(slice)).expect("valid slice");
                took += start.elapsed();
                sched
                    .remove_slice("node-joining-gpu.nvidia.com")
                    .expect("there");
                sched.remove_node("node-joining").expect("there");
            }
            took
        });
    });

    // A node with 8 running pods of 1 GPU each leaves: the pods are deleted, their
    // claims released (set up again, untimed, for each iteration).
    group.bench_function("remove_node_with_8_running_pods_on_100k", |b| {
        let (sched, template, _) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        b.iter_custom(|iters| {
            let mut took = Duration::ZERO;
            for _ in 0..iters {
                let claims = node_with_8_pods(sched, template, "node-leaving");
                let start = Instant::now();
                let removal = sched.remove_node(black_box("node-leaving")).expect("there");
                took += start.elapsed();
                assert_eq!(removal.deleted_pods.len(), 8);
                for c in claims {
                    sched.remove_claim(&c).expect("released");
                }
                sched
                    .remove_slice("node-leaving-gpu.nvidia.com")
                    .expect("there");
            }
            took
        });
    });

    // The driver republishes a node's slice (a new generation, the same devices) while
    // pods use them: `replace_slice`, the eviction diff over the pool, the schedule.
    group.bench_function("replace_slice_on_100k", |b| {
        let (sched, _, slice) = fleet.get_or_insert_with(|| live_fleet(&scenario));
        let mut object = sched.cluster().slice(slice).expect("slice").clone();
        b.iter_batched(
            || {
                object.pool.generation += 1;
                object.clone()
            },
            |s| sched.replace_slice(s).expect("valid slice"),
            BatchSize::SmallInput,
        );
    });
    drop(fleet);
    drop(scenario);
    group.finish();
}

criterion_group!(benches, scale, live);
criterion_main!(benches);
