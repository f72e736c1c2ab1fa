#![cfg(not(target_arch = "wasm32"))]
//! Random mutation sequences against a brute-force oracle: after every step the
//! incrementally maintained index (usable / free / tainted sets, per-node and
//! per-rack counts, taints, evictions) must equal a recomputation from the objects,
//! and every refused mutation must leave the cluster unchanged.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use gangpack::{
    Cluster, Device, DeviceAllocation, DeviceRef, DeviceTaint, DeviceTaintEffect, DeviceTaintRule,
    DeviceTaintSelector, DeviceToleration, DeviceTolerationOperator, EvictionVerdict, ResourcePool,
    ResourceSlice, device_eviction, device_taint_blocks,
};
use proptest::prelude::*;

/// (name index, optional taint (key, value, effect), shareable).
type DeviceSpec = (u8, Option<(u8, u8, u8)>, bool);

#[derive(Clone, Debug)]
enum Op {
    PutNode {
        n: u8,
        rack: u8,
    },
    RemoveNode {
        n: u8,
    },
    PutSlice {
        n: u8,
        idx: u8,
        generation: i64,
        count: i64,
        devices: Vec<DeviceSpec>,
    },
    RemoveSlice {
        n: u8,
        idx: u8,
    },
    PutRule {
        name: u8,
        selector: Option<(Option<bool>, Option<u8>, Option<u8>)>,
        taint: (u8, u8, u8),
    },
    RemoveRule {
        name: u8,
    },
    TaintDevice {
        n: u8,
        dev: u8,
        taint: (u8, u8, u8),
    },
    UntaintDevice {
        n: u8,
        dev: u8,
        key: u8,
    },
    Allocate {
        n: u8,
        dev: u8,
        consumer: u8,
        admin: bool,
        tolerations: u8,
    },
    Release {
        n: u8,
        dev: u8,
        consumer: u8,
    },
}

fn mk_taint((k, v, e): (u8, u8, u8)) -> DeviceTaint {
    let effect = match e % 4 {
        0 => DeviceTaintEffect::NoSchedule,
        1 => DeviceTaintEffect::NoExecute,
        2 => DeviceTaintEffect::None,
        _ => DeviceTaintEffect::Unknown("FutureEffect".into()),
    };
    taint(
        ["ecc", "thermal"][k as usize % 2],
        ["", "fatal"][v as usize % 2],
        effect,
        100 + i64::from(k),
    )
}

fn toleration_set(i: u8) -> Vec<DeviceToleration> {
    let t = |key: &str, op, value: &str, effect, secs| DeviceToleration {
        key: key.into(),
        operator: op,
        value: value.into(),
        effect,
        toleration_seconds: secs,
    };
    match i % 4 {
        0 => vec![],
        1 => vec![t("ecc", DeviceTolerationOperator::Exists, "", None, None)],
        2 => vec![t(
            "ecc",
            DeviceTolerationOperator::Equal,
            "fatal",
            Some(DeviceTaintEffect::NoExecute),
            Some(60),
        )],
        _ => vec![t(
            "",
            DeviceTolerationOperator::Exists,
            "",
            Some(DeviceTaintEffect::NoExecute),
            None,
        )],
    }
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..3u8, 0..2u8).prop_map(|(n, rack)| Op::PutNode { n, rack }),
        (0..3u8).prop_map(|n| Op::RemoveNode { n }),
        (
            0..3u8,
            0..2u8,
            0..3i64,
            0..3i64,
            prop::collection::vec(
                (
                    0..4u8,
                    prop::option::weighted(0.4, (0..2u8, 0..2u8, 0..4u8)),
                    prop::bool::weighted(0.2)
                ),
                0..4
            )
        )
            .prop_map(|(n, idx, generation, count, devices)| Op::PutSlice {
                n,
                idx,
                generation,
                count,
                devices
            }),
        (0..3u8, 0..2u8).prop_map(|(n, idx)| Op::RemoveSlice { n, idx }),
        (
            0..3u8,
            prop::option::weighted(
                0.85,
                (
                    prop::option::of(any::<bool>()),
                    prop::option::of(0..3u8),
                    prop::option::of(0..4u8)
                )
            ),
            (0..2u8, 0..2u8, 0..4u8)
        )
            .prop_map(|(name, selector, taint)| Op::PutRule {
                name,
                selector,
                taint
            }),
        (0..3u8).prop_map(|name| Op::RemoveRule { name }),
        (0..3u8, 0..4u8, (0..2u8, 0..2u8, 0..3u8)).prop_map(|(n, dev, taint)| Op::TaintDevice {
            n,
            dev,
            taint
        }),
        (0..3u8, 0..4u8, 0..2u8).prop_map(|(n, dev, key)| Op::UntaintDevice { n, dev, key }),
        (0..3u8, 0..4u8, 0..3u8, prop::bool::weighted(0.2), 0..4u8).prop_map(
            |(n, dev, consumer, admin, tolerations)| Op::Allocate {
                n,
                dev,
                consumer,
                admin,
                tolerations
            }
        ),
        (0..3u8, 0..4u8, 0..3u8).prop_map(|(n, dev, consumer)| Op::Release { n, dev, consumer }),
    ]
}

fn allocation(consumer: u8, tolerations: u8, admin: bool) -> DeviceAllocation {
    let a = DeviceAllocation::new(format!("ns/c{consumer}"), toleration_set(tolerations));
    if admin { a.admin() } else { a }
}

fn node_name(n: u8) -> String {
    format!("n{n}")
}

fn apply(c: &mut Cluster, op: &Op) -> bool {
    match op {
        Op::PutNode { n, rack } => {
            let nd = node(&node_name(*n), &format!("r{rack}"));
            if c.node(&nd.name).is_some() {
                c.replace_node(nd).is_ok()
            } else {
                c.add_node(nd).is_ok()
            }
        }
        Op::RemoveNode { n } => c.remove_node(&node_name(*n)).is_ok(),
        Op::PutSlice {
            n,
            idx,
            generation,
            count,
            devices,
        } => {
            let node = node_name(*n);
            let mut s = ResourceSlice::node_local(format!("{node}-s{idx}"), DRIVER, &node, &node);
            s.pool = ResourcePool {
                name: node.clone(),
                generation: *generation,
                resource_slice_count: *count,
            };
            for (name, t, shareable) in devices {
                let mut d = Device::new(format!("gpu-{name}"));
                d.allow_multiple_allocations = *shareable;
                if let Some(t) = t {
                    d.taints.push(mk_taint(*t));
                }
                s.devices.push(d);
            }
            if c.slice(&s.name).is_some() {
                c.replace_slice(s).is_ok()
            } else {
                c.add_slice(s).is_ok()
            }
        }
        Op::RemoveSlice { n, idx } => c.remove_slice(&format!("{}-s{idx}", node_name(*n))).is_ok(),
        Op::PutRule {
            name,
            selector,
            taint,
        } => {
            let rule = DeviceTaintRule {
                name: format!("rule-{name}"),
                selector: selector.map(|(driver, pool, device)| DeviceTaintSelector {
                    driver: driver.map(|ours| {
                        if ours {
                            DRIVER.to_string()
                        } else {
                            "other.example.com".into()
                        }
                    }),
                    pool: pool.map(node_name),
                    device: device.map(|d| format!("gpu-{d}")),
                }),
                taint: mk_taint(*taint),
            };
            if c.taint_rule(&rule.name).is_some() {
                c.replace_taint_rule(rule).is_ok()
            } else {
                c.add_taint_rule(rule).is_ok()
            }
        }
        Op::RemoveRule { name } => c.remove_taint_rule(&format!("rule-{name}")).is_ok(),
        Op::TaintDevice { n, dev, taint } => c
            .taint_device(
                &DeviceRef::new(DRIVER, node_name(*n), format!("gpu-{dev}")),
                mk_taint(*taint),
            )
            .is_ok(),
        Op::UntaintDevice { n, dev, key } => c
            .untaint_device(
                &DeviceRef::new(DRIVER, node_name(*n), format!("gpu-{dev}")),
                ["ecc", "thermal"][*key as usize],
                None,
            )
            .is_ok(),
        Op::Allocate {
            n,
            dev,
            consumer,
            admin,
            tolerations,
        } => c
            .allocate(
                &DeviceRef::new(DRIVER, node_name(*n), format!("gpu-{dev}")),
                allocation(*consumer, *tolerations, *admin),
            )
            .is_ok(),
        Op::Release { n, dev, consumer } => c
            .release(
                &DeviceRef::new(DRIVER, node_name(*n), format!("gpu-{dev}")),
                &format!("ns/c{consumer}"),
            )
            .is_ok(),
    }
}

/// Recomputes everything from the stored objects, with none of the index's code.
fn check_against_oracle(
    c: &Cluster,
    allocs: &BTreeMap<DeviceRef, Vec<DeviceAllocation>>,
) -> Result<(), TestCaseError> {
    // Pools.
    let mut pools: BTreeMap<(String, String), Vec<&ResourceSlice>> = BTreeMap::new();
    for s in c.slices() {
        pools
            .entry((s.driver.clone(), s.pool.name.clone()))
            .or_default()
            .push(s);
    }
    let mut current: BTreeMap<DeviceRef, (&ResourceSlice, &Device, bool)> = BTreeMap::new();
    for ((driver, pool), slices) in &pools {
        let generation = slices.iter().map(|s| s.pool.generation).max().unwrap();
        let cur: Vec<&&ResourceSlice> = slices
            .iter()
            .filter(|s| s.pool.generation == generation)
            .collect();
        let complete = i64::try_from(cur.len()).unwrap() == cur[0].pool.resource_slice_count;
        let mut names = BTreeSet::new();
        let dup = cur
            .iter()
            .flat_map(|s| &s.devices)
            .any(|d| !names.insert(d.name.clone()));
        for s in &cur {
            for d in &s.devices {
                current.insert(
                    DeviceRef::new(driver, pool, &d.name),
                    (s, d, complete && !dup),
                );
            }
        }
    }
    let merged_taints = |r: &DeviceRef, d: &Device| -> Vec<DeviceTaint> {
        let mut t = d.taints.clone();
        for rule in c.taint_rules() {
            if rule.selects(&r.driver, &r.pool, &r.device) {
                t.push(rule.taint.clone());
            }
        }
        t
    };
    let refs = |set: &gangpack::DeviceSet| -> BTreeSet<DeviceRef> {
        set.iter()
            .map(|id| c.device(id).unwrap().device_ref())
            .collect()
    };
    let usable: BTreeSet<DeviceRef> = current
        .iter()
        .filter(|(_, v)| v.2)
        .map(|(r, _)| r.clone())
        .collect();
    prop_assert_eq!(&refs(c.usable_devices()), &usable);
    let is_free = |r: &DeviceRef, d: &Device| {
        d.allow_multiple_allocations
            || !allocs
                .get(r)
                .is_some_and(|hs| hs.iter().any(|h| !h.admin_access))
    };
    for tol in 0..4 {
        let tolerations = toleration_set(tol);
        let expect: BTreeSet<DeviceRef> = usable
            .iter()
            .filter(|r| {
                let d = current[*r].1;
                is_free(r, d)
                    && merged_taints(r, d)
                        .iter()
                        .all(|t| !device_taint_blocks(t, &tolerations))
            })
            .cloned()
            .collect();
        prop_assert_eq!(
            refs(&c.usable(c.usable_devices(), &tolerations)),
            expect,
            "tolerations {}",
            tol
        );
    }
    for r in &usable {
        let id = c.device_id(r).unwrap();
        prop_assert_eq!(c.device_taints(id), merged_taints(r, current[r].1));
    }
    // Counts per node and per rack.
    let mut racks: BTreeMap<String, (u32, u32, u32, u32)> = BTreeMap::new();
    for n in c.nodes() {
        let mut counts = (1u32, 0u32, 0u32, 0u32);
        for r in usable
            .iter()
            .filter(|r| current[*r].0.node_name() == Some(n.name.as_str()))
        {
            let d = current[r].1;
            counts.1 += 1;
            if is_free(r, d) {
                counts.2 += 1;
                if merged_taints(r, d)
                    .iter()
                    .all(|t| !t.effect.blocks_allocation())
                {
                    counts.3 += 1;
                }
            }
        }
        let got = c.node_counts(c.node_id(&n.name).unwrap()).unwrap();
        prop_assert_eq!(
            (got.nodes, got.devices, got.free, got.free_untainted),
            counts,
            "node {}",
            n.name
        );
        let rack = racks.entry(n.labels["rack"].clone()).or_default();
        rack.0 += counts.0;
        rack.1 += counts.1;
        rack.2 += counts.2;
        rack.3 += counts.3;
    }
    let got_racks: BTreeMap<String, (u32, u32, u32, u32)> = c
        .domains("rack")
        .map(|(r, k)| {
            (
                r.to_string(),
                (k.nodes, k.devices, k.free, k.free_untainted),
            )
        })
        .collect();
    prop_assert_eq!(got_racks, racks);
    // Pending evictions.
    let mut expect = BTreeSet::new();
    for (r, holders) in allocs {
        // A device no longer published keeps only the taints of rules selecting it.
        let taints = match current.get(r) {
            Some((_, d, _)) => merged_taints(r, d),
            None => c
                .taint_rules()
                .filter(|rule| rule.selects(&r.driver, &r.pool, &r.device))
                .map(|rule| rule.taint.clone())
                .collect(),
        };
        for t in taints {
            for h in holders {
                if let EvictionVerdict::Evict { delay_seconds } =
                    device_eviction(&t, &h.tolerations)
                {
                    expect.insert((r.clone(), h.consumer.clone(), t.to_string(), delay_seconds));
                }
            }
        }
    }
    let got: BTreeSet<_> = c
        .pending_evictions()
        .into_iter()
        .map(|e| (e.device, e.consumer, e.taint.to_string(), e.delay_seconds))
        .collect();
    prop_assert_eq!(got, expect);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn index_matches_a_recount_after_every_mutation(ops in prop::collection::vec(op(), 1..40)) {
        let mut c = Cluster::new();
        c.track_topology_key("rack");
        let mut allocs: BTreeMap<DeviceRef, Vec<DeviceAllocation>> = BTreeMap::new();
        for op in &ops {
            let before = observe(&c);
            let ok = apply(&mut c, op);
            if ok {
                match op {
                    Op::Allocate { n, dev, consumer, admin, tolerations } => {
                        allocs.entry(DeviceRef::new(DRIVER, node_name(*n), format!("gpu-{dev}"))).or_default().push(
                            allocation(*consumer, *tolerations, *admin));
                    }
                    Op::Release { n, dev, consumer } => {
                        let r = DeviceRef::new(DRIVER, node_name(*n), format!("gpu-{dev}"));
                        let hs = allocs.get_mut(&r).unwrap();
                        hs.retain(|h| h.consumer != format!("ns/c{consumer}"));
                        if hs.is_empty() { allocs.remove(&r); }
                    }
                    _ => {}
                }
            } else {
                prop_assert_eq!(observe(&c), before, "refused {:?} changed the cluster", op);
            }
            check_against_oracle(&c, &allocs)?;
        }
    }
}
