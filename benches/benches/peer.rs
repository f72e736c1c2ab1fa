//! The gangpack side of the side-by-side benchmark against Kubernetes' allocator
//! (`scripts/peer-bench.sh`; the Go side is `go/upstream/peerbench`). The workloads
//! are `gangpack_benches::peer`: each cluster is built from the workload's scenario,
//! the same objects the Go side reads. Before timing, each workload's outcome is
//! checked against its `Expect`ation (worked out by arithmetic from the definition).
//!
//! What each timed loop holds (the Go benchmark of the same name holds the upstream
//! counterpart; `benches/RESULTS.md` has the table):
//!
//! - `<one node>/filter`: `allocate_prepared` on the node, the claim prepared once
//!   (upstream: `Allocate` on an allocator built once).
//! - `<one node>/per_pod`: `prepare_claims` (validate, compile) + `allocate_prepared`
//!   (upstream: the allocated state gathered, `NewAllocator`, `Allocate`: what
//!   PreFilter and one Filter cost a pod).
//! - `4096x8_1_gpu_every_node/per_pod`: `prepare_claims` + `allocate_prepared` on each
//!   of the 4,096 nodes in name order, counting the fits (upstream: PreFilter, then
//!   Filter on every node). `/per_pod_fits`: the same with `fits_prepared` on each node
//!   and `allocate_prepared` on the first that fits (gangpack's filter step).
//!   `/filter_every_node`: `allocate_prepared` on every node, the claim prepared once
//!   (upstream: Filter on every node after one PreFilter).
//! - `4096x8_gang_64x8/pod_by_pod`: for each of the 64 pods in order, `prepare_claims`,
//!   `allocate_prepared` on nodes in name order until one fits, and
//!   `commit_allocation` of its result (upstream: PreFilter, Filter in name order to
//!   the first fit, the devices recorded as allocated). `/pod_by_pod_fits`: the same
//!   with `fits_prepared` in the node walk. `/gang`: `place_gang_mut` of the whole
//!   gang (all or nothing, BestFit scoring): not the same work as the two above.
#![allow(missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use gangpack::{AllocationOutcome, AllocatorOptions, Fit, GangOptions, GangOutcome, Quantity};
use gangpack_benches::peer::{PeerSetup, check_gangpack, peer_workloads, pod_by_pod};

type Resources = BTreeMap<String, Quantity>;

fn peer(c: &mut Criterion) {
    let mut group = c.benchmark_group("peer");
    let no_resources = Resources::new();
    let opts = AllocatorOptions::default();
    for w in peer_workloads() {
        let setup = w.setup();
        check_gangpack(&w, &setup);
        let PeerSetup {
            scenario,
            cluster,
            names,
            claims,
        } = setup;
        let id = |row: &str| format!("{}/{row}", w.name);
        match w.name {
            "1_gpu" | "8_gpus_match_numa" | "8_of_7_rejected" => {
                let node = &names[0];
                let prepared = cluster.prepare_claims(&claims).expect("valid claims");
                group.bench_function(id("filter"), |b| {
                    b.iter(|| {
                        cluster
                            .allocate_prepared(node, black_box(&prepared), &no_resources, &opts)
                            .expect("valid")
                    });
                });
                group.bench_function(id("per_pod"), |b| {
                    b.iter(|| {
                        let prepared = cluster
                            .prepare_claims(black_box(&claims))
                            .expect("valid claims");
                        cluster
                            .allocate_prepared(node, &prepared, &no_resources, &opts)
                            .expect("valid")
                    });
                });
            }
            "4096x8_1_gpu_every_node" => {
                group.sample_size(20);
                let prepared = cluster.prepare_claims(&claims).expect("valid claims");
                group.bench_function(id("filter_every_node"), |b| {
                    b.iter(|| {
                        names
                            .iter()
                            .filter(|n| {
                                matches!(
                                    cluster.allocate_prepared(
                                        n,
                                        black_box(&prepared),
                                        &no_resources,
                                        &opts
                                    ),
                                    Ok(AllocationOutcome::Allocated(_))
                                )
                            })
                            .count()
                    });
                });
                group.bench_function(id("per_pod"), |b| {
                    b.iter(|| {
                        let prepared = cluster
                            .prepare_claims(black_box(&claims))
                            .expect("valid claims");
                        names
                            .iter()
                            .filter(|n| {
                                matches!(
                                    cluster.allocate_prepared(n, &prepared, &no_resources, &opts),
                                    Ok(AllocationOutcome::Allocated(_))
                                )
                            })
                            .count()
                    });
                });
                group.bench_function(id("per_pod_fits"), |b| {
                    b.iter(|| {
                        let prepared = cluster
                            .prepare_claims(black_box(&claims))
                            .expect("valid claims");
                        let mut fitting = 0;
                        let mut chosen = None;
                        for n in &names {
                            if matches!(
                                cluster.fits_prepared(n, &prepared, &no_resources, &opts),
                                Ok(Fit::Fits)
                            ) {
                                fitting += 1;
                                chosen.get_or_insert(n);
                            }
                        }
                        let chosen = chosen.expect("a node fits");
                        (
                            fitting,
                            cluster
                                .allocate_prepared(chosen, &prepared, &no_resources, &opts)
                                .expect("valid"),
                        )
                    });
                });
            }
            "4096x8_gang_64x8" => {
                group.sample_size(10);
                for (row, fits) in [("pod_by_pod", false), ("pod_by_pod_fits", true)] {
                    group.bench_function(id(row), |b| {
                        b.iter_batched_ref(
                            || cluster.clone(),
                            |c| pod_by_pod(c, &names, black_box(&claims), fits),
                            BatchSize::LargeInput,
                        );
                    });
                }
                let gang = scenario.groups.first().expect("the gang's PodGroup");
                let mut fleet = cluster.clone();
                let gopts = GangOptions::default();
                match fleet
                    .place_gang_mut(Some(gang), &scenario.pods, &claims, &gopts)
                    .expect("valid")
                {
                    GangOutcome::Placed(d) => assert_eq!(d.bindings.len(), w.pods),
                    other => panic!("{}: the gang is placed, got {other:?}", w.name),
                }
                group.bench_function(id("gang"), |b| {
                    b.iter(|| {
                        fleet
                            .place_gang_mut(Some(gang), black_box(&scenario.pods), &claims, &gopts)
                            .expect("valid")
                    });
                });
            }
            other => panic!("no benchmark rows for workload {other}"),
        }
    }
    group.finish();
}

criterion_group!(benches, peer);
criterion_main!(benches);
