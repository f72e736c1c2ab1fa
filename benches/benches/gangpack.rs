//! Criterion benchmarks. Figures and the command that produced them live in
//! `benches/RESULTS.md`.
#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gangpack::{
    DeviceAttribute, DeviceId, DeviceTaint, DeviceTaintEffect, DeviceTaintRule,
    DeviceTaintSelector, Time, device_taint_blocks,
};
use gangpack_benches::{fleet, gpu_ref, h100_class, tolerate_corrected};
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

criterion_group!(benches, index);
criterion_main!(benches);
