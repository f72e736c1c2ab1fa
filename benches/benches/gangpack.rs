//! Criterion benchmarks. Figures and the command that produced them live in
//! `benches/RESULTS.md`.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gangpack::{AllocationOutcome, AllocatorOptions, DeviceAllocation};
use gangpack::{
    DeviceAttribute, DeviceId, DeviceTaint, DeviceTaintEffect, DeviceTaintRule,
    DeviceTaintSelector, Time, device_taint_blocks,
};
use gangpack_benches::{
    DRIVER, allocation_fleet, fleet, gpu_claim, gpu_ref, h100_class, tolerate_corrected,
};
use std::collections::BTreeMap;
use std::hint::black_box;

const SIZES: [usize; 3] = [1_000, 10_000, 100_000];

fn index(c: &mut Criterion) {
    let mut group = c.benchmark_group("index");
    for &n in &SIZES {
        let mut cluster = fleet(n);
        let class = h100_class(&cluster);
        let tolerations = tolerate_corrected();
        group.bench_with_input(
            BenchmarkId::new("usable_set/no_tolerations", n),
            &n,
            |b, _| {
                b.iter(|| black_box(cluster.usable(black_box(&class), &[]).len()));
            },
        );
        group.bench_with_input(
            BenchmarkId::new("usable_set/with_toleration", n),
            &n,
            |b, _| {
                b.iter(|| {
                    black_box(
                        cluster
                            .usable(black_box(&class), black_box(&tolerations))
                            .len(),
                    )
                });
            },
        );
        // The baseline the index replaces: a scan over the device structs that checks
        // the class attribute, state and every taint against the tolerations.
        group.bench_with_input(BenchmarkId::new("usable_set/naive_scan", n), &n, |b, _| {
            let h100 = DeviceAttribute::String("H100".into());
            b.iter(|| {
                let mut count = 0usize;
                for i in 0..cluster.device_count() {
                    let id = DeviceId(u32::try_from(i).expect("fewer than 2^32 devices"));
                    let Some(d) = cluster.device(id) else {
                        continue;
                    };
                    if d.usable
                        && d.free
                        && d.device.attributes.get("productName") == Some(&h100)
                        && cluster
                            .device_taints(id)
                            .iter()
                            .all(|t| !device_taint_blocks(t, &tolerations))
                    {
                        count += 1;
                    }
                }
                black_box(count)
            });
        });
        // One device in the middle of the fleet; taint then untaint keeps the state
        // stable across iterations, so the figure is for the pair.
        let target = gpu_ref(n / GPUS_PER_NODE_HALF, 1);
        let taint = DeviceTaint {
            key: "gpu.example.com/thermal".into(),
            value: "throttling".into(),
            effect: DeviceTaintEffect::NoExecute,
            time_added: Some(Time(2_000)),
        };
        group.bench_with_input(
            BenchmarkId::new("taint_untaint_one_device", n),
            &n,
            |b, _| {
                b.iter(|| {
                    let r = cluster.taint_device(&target, taint.clone()).expect("taint");
                    black_box(r.devices_affected);
                    cluster
                        .untaint_device(&target, &taint.key, None)
                        .expect("untaint");
                });
            },
        );
        // The same through a DeviceTaintRule naming driver, pool and device.
        let rule = DeviceTaintRule {
            name: "thermal-one-gpu".into(),
            selector: Some(DeviceTaintSelector {
                driver: Some(target.driver.clone()),
                pool: Some(target.pool.clone()),
                device: Some(target.device.clone()),
            }),
            taint: taint.clone(),
        };
        group.bench_with_input(
            BenchmarkId::new("add_remove_taint_rule_one_device", n),
            &n,
            |b, _| {
                b.iter(|| {
                    let r = cluster.add_taint_rule(rule.clone()).expect("add rule");
                    black_box(r.devices_affected);
                    cluster.remove_taint_rule(&rule.name).expect("remove rule");
                });
            },
        );
    }
    group.finish();
}

/// Divisor that picks a node in the middle of the fleet.
const GPUS_PER_NODE_HALF: usize = 2 * gangpack_benches::GPUS_PER_NODE;

fn allocate(c: &mut Criterion) {
    let mut group = c.benchmark_group("allocate");
    let none = BTreeMap::new();
    let opts = AllocatorOptions::default();
    let outcome_len = |o: AllocationOutcome| match o {
        AllocationOutcome::Allocated(r) => r[0].devices.len(),
        _ => 0,
    };

    // One node, 8 GPUs: one GPU.
    let one = allocation_fleet(1, 8, 4, 0);
    let node0 = gangpack_benches::node_name(0);
    let claim1 = one
        .prepare_claims(&[gpu_claim("one", 1, false)])
        .expect("valid");
    group.bench_function("one_node/1_gpu", |b| {
        b.iter(|| {
            outcome_len(
                one.allocate_prepared(&node0, black_box(&claim1), &none, &opts)
                    .expect("valid"),
            )
        });
    });
    let raw1 = [gpu_claim("one", 1, false)];
    group.bench_function("one_node/1_gpu_with_prepare", |b| {
        b.iter(|| {
            outcome_len(
                one.allocate_claims(&node0, black_box(&raw1), &none, &opts)
                    .expect("valid"),
            )
        });
    });

    // One node, 16 GPUs on two NUMA nodes of 8, one GPU of NUMA 0 taken: 8 GPUs
    // with a NUMA matchAttribute must land on NUMA 1.
    let mut numa = allocation_fleet(1, 16, 8, 0);
    numa.allocate(
        &gangpack::DeviceRef::new(DRIVER, &node0, "gpu-3"),
        DeviceAllocation::new("ns/x", vec![]),
    )
    .expect("free");
    let claim8 = numa
        .prepare_claims(&[gpu_claim("eight", 8, true)])
        .expect("valid");
    assert_eq!(
        outcome_len(
            numa.allocate_prepared(&node0, &claim8, &none, &opts)
                .expect("valid")
        ),
        8
    );
    group.bench_function("one_node/8_gpus_match_numa", |b| {
        b.iter(|| {
            outcome_len(
                numa.allocate_prepared(&node0, black_box(&claim8), &none, &opts)
                    .expect("valid"),
            )
        });
    });

    // One node, 8 GPUs, one taken: 8 GPUs are infeasible.
    let mut seven = allocation_fleet(1, 8, 4, 0);
    seven
        .allocate(
            &gangpack::DeviceRef::new(DRIVER, &node0, "gpu-7"),
            DeviceAllocation::new("ns/x", vec![]),
        )
        .expect("free");
    let claim8of7 = seven
        .prepare_claims(&[gpu_claim("eight", 8, false)])
        .expect("valid");
    group.bench_function("one_node/8_of_7_rejected", |b| {
        b.iter(|| {
            outcome_len(
                seven
                    .allocate_prepared(&node0, black_box(&claim8of7), &none, &opts)
                    .expect("valid"),
            )
        });
    });

    // 4096 nodes x 8 GPUs, 3 % tainted: the scheduler's filter step, trying one pod's
    // 1-GPU claim on every node.
    let fleet = allocation_fleet(4096, 8, 4, 33);
    let names: Vec<String> = (0..4096).map(gangpack_benches::node_name).collect();
    let claim_f = fleet
        .prepare_claims(&[gpu_claim("one", 1, false)])
        .expect("valid");
    group.sample_size(20);
    group.bench_function("fleet_4096x8/1_gpu_every_node", |b| {
        b.iter(|| {
            names
                .iter()
                .filter(|n| {
                    matches!(
                        fleet.allocate_prepared(n, black_box(&claim_f), &none, &opts),
                        Ok(AllocationOutcome::Allocated(_))
                    )
                })
                .count()
        });
    });
    group.finish();
}

fn gang(c: &mut Criterion) {
    let mut group = c.benchmark_group("gang");
    group.sample_size(10);
    let opts = gangpack::GangOptions::default();
    let mut fleet = gangpack_benches::allocation_fleet_with_racks(4096, 8, 4, 33, 32);
    // `place_gang_mut` works in the cluster itself (restored before it returns);
    // `place_gang` adds the copy of the cluster's mutable state.
    for (pods_n, rack, name) in [
        (64, false, "64x8_on_4096x8/anywhere"),
        (64, true, "64x8_on_4096x8/rack_of_32"),
        (16, true, "16x8_on_4096x8/rack_of_32"),
    ] {
        let (g, pods, claims) = gangpack_benches::gpu_gang(pods_n, 8, rack);
        group.bench_function(name, |b| {
            b.iter(|| {
                fleet
                    .place_gang_mut(Some(&g), black_box(&pods), &claims, &opts)
                    .expect("valid")
            });
        });
        group.bench_function(format!("{name}/with_copy"), |b| {
            b.iter(|| {
                fleet
                    .place_gang(Some(&g), black_box(&pods), &claims, &opts)
                    .expect("valid")
            });
        });
    }
    let mut big = gangpack_benches::allocation_fleet_with_racks(10_000, 8, 4, 33, 32);
    let (g, pods, claims) = gangpack_benches::gpu_gang(512, 8, false);
    group.bench_function("512x8_on_10000x8/anywhere", |b| {
        b.iter(|| {
            big.place_gang_mut(Some(&g), black_box(&pods), &claims, &opts)
                .expect("valid")
        });
    });
    group.bench_function("512x8_on_10000x8/anywhere/with_copy", |b| {
        b.iter(|| {
            big.place_gang(Some(&g), black_box(&pods), &claims, &opts)
                .expect("valid")
        });
    });
    group.finish();
}

criterion_group!(benches, index, allocate, gang);
criterion_main!(benches);
