#![cfg(not(target_arch = "wasm32"))]
//! The placer rules nodes out for a capacity request by comparing what each shareable
//! device has left (its "room") instead of running the allocator there. That must
//! never rule out a node the allocator would accept. Random sequences of share and
//! whole-device pods, and departures, on small clusters with several capacity
//! policies, against a brute-force oracle that knows nothing of the engine: a pod is
//! placed exactly when some node has enough devices with room for it (also when the
//! devices of a node declare different capacities), and afterwards
//! every device's consumed capacity is what the oracle's own accounting says.

use std::collections::BTreeMap;

use gangpack::{
    AllocationMode, CapacityRequestPolicy, CapacityRequestPolicyRange, Cluster, Device,
    DeviceCapacity, DeviceClass, DeviceRef, DeviceRequest, ExactDeviceRequest, GangOptions, Node,
    Pod, PodResourceClaim, Quantity, ResourceClaim, ResourceSlice, Scheduler, UnitResult,
};
use proptest::prelude::*;

const DRIVER: &str = "gpu.example.com";
const NODES: usize = 3;
const GPUS: usize = 2;

/// The capacity policy of every GPU's `milli` (value 1000).
#[derive(Clone, Copy, Debug)]
enum Policy {
    /// No policy: a request consumes what it asks; unrequested, the whole value.
    None,
    /// Range 100..=1000 in steps of 100, default 1000.
    Steps,
    /// Default 400 (an unrequested allocation takes 400), any amount up to 1000.
    Default400,
    /// No policy on `milli`, and each node's `gpu-1` also declares `slots` (3, one per
    /// allocation by default), so the devices of a node disagree on their keys.
    MixedKeys,
}

/// `gpu-1`'s slots under [`Policy::MixedKeys`].
const SLOTS: i64 = 3;

impl Policy {
    fn of(self) -> Option<CapacityRequestPolicy> {
        match self {
            Policy::None | Policy::MixedKeys => None,
            Policy::Steps => Some(CapacityRequestPolicy {
                default: Some(Quantity::from_int(1000)),
                valid_values: Vec::new(),
                valid_range: Some(CapacityRequestPolicyRange {
                    min: Quantity::from_int(100),
                    max: Some(Quantity::from_int(1000)),
                    step: Some(Quantity::from_int(100)),
                }),
            }),
            Policy::Default400 => Some(CapacityRequestPolicy {
                default: Some(Quantity::from_int(400)),
                valid_values: Vec::new(),
                valid_range: Some(CapacityRequestPolicyRange {
                    min: Quantity::from_int(1),
                    max: Some(Quantity::from_int(1000)),
                    step: None,
                }),
            }),
        }
    }

    /// What one allocation consumes, in the oracle's own words (`None`: refused).
    fn consumes(self, requested: Option<i64>) -> Option<i64> {
        match (self, requested) {
            (Policy::None | Policy::Steps | Policy::MixedKeys, None) => Some(1000),
            (Policy::Default400, None) => Some(400),
            (Policy::None | Policy::Default400 | Policy::MixedKeys, Some(r)) => {
                (r <= 1000).then_some(r)
            }
            (Policy::Steps, Some(r)) => {
                let rounded = (r.max(100) + 99) / 100 * 100;
                (rounded <= 1000).then_some(rounded)
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A pod with `count` devices, each `milli` of one (`None`: no capacity request).
    Add { count: u32, milli: Option<i64> },
    /// The `i`-th bound pod (modulo) leaves.
    Remove { i: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u32..=2, prop::option::weighted(0.7, 1i64..=1100))
            .prop_map(|(count, milli)| Op::Add { count, milli }),
        1 => any::<usize>().prop_map(|i| Op::Remove { i }),
    ]
}

fn cluster(policy: Policy) -> Cluster {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for n in 0..NODES {
        let name = format!("node-{n}");
        c.add_node(Node::new(&name).with_allocatable("cpu", Quantity::from_int(64)))
            .unwrap();
        let mut slice = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, &name, &name);
        for g in 0..GPUS {
            let mut d = Device::new(format!("gpu-{g}"));
            d.capacity.insert(
                "milli".into(),
                DeviceCapacity {
                    value: Quantity::from_int(1000),
                    request_policy: policy.of(),
                },
            );
            if matches!(policy, Policy::MixedKeys) && g == 1 {
                d.capacity.insert(
                    "slots".into(),
                    DeviceCapacity {
                        value: Quantity::from_int(SLOTS),
                        request_policy: Some(CapacityRequestPolicy {
                            default: Some(Quantity::from_int(1)),
                            valid_values: Vec::new(),
                            valid_range: Some(CapacityRequestPolicyRange {
                                min: Quantity::from_int(1),
                                max: Some(Quantity::from_int(SLOTS)),
                                step: None,
                            }),
                        }),
                    },
                );
            }
            d.allow_multiple_allocations = true;
            slice.devices.push(d);
        }
        c.add_slice(slice).unwrap();
    }
    c
}

fn pod_and_claim(name: &str, count: u32, milli: Option<i64>) -> (Pod, ResourceClaim) {
    let mut pod = Pod::new("ns", name);
    pod.requests.insert("cpu".into(), Quantity::from_int(1));
    pod.resource_claims.push(PodResourceClaim {
        name: "gpu".into(),
        source: gangpack::ClaimSource::ClaimName(format!("{name}-gpu")),
    });
    let mut request = ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(count));
    if let Some(m) = milli {
        request
            .capacity
            .insert("milli".into(), Quantity::from_int(m));
    }
    let mut claim = ResourceClaim::new("ns", format!("{name}-gpu"));
    claim
        .spec
        .requests
        .push(DeviceRequest::exactly("gpu", request));
    (pod, claim)
}

fn run(policy: Policy, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut s = Scheduler::new(cluster(policy), GangOptions::default());
    // The oracle: consumed milli per (node, gpu), and what each bound pod holds.
    let mut used = [[0i64; GPUS]; NODES];
    // Under MixedKeys, the slots taken on each `gpu-1`.
    let mixed = matches!(policy, Policy::MixedKeys);
    let mut slots = [0i64; NODES];
    let mut held: BTreeMap<String, Vec<(usize, usize, i64)>> = BTreeMap::new();
    for (k, op) in ops.iter().enumerate() {
        match *op {
            Op::Add { count, milli } => {
                let name = format!("p{k}");
                let amount = policy.consumes(milli);
                let fits = amount.is_some_and(|a| {
                    used.iter().enumerate().any(|(n, gpus)| {
                        let room = |g: usize| {
                            gpus[g] + a <= 1000 && !(mixed && g == 1 && slots[n] >= SLOTS)
                        };
                        (0..GPUS).filter(|&g| room(g)).count() >= count as usize
                    })
                });
                let (pod, claim) = pod_and_claim(&name, count, milli);
                s.add_claim(claim).unwrap();
                s.add_pod(pod).unwrap();
                let report = s.cycle();
                let key = format!("ns/{name}");
                let placed = report.units.iter().find_map(|(_, r)| match r {
                    UnitResult::Scheduled(d) => d.bindings.iter().find(|b| b.pod == key).cloned(),
                    _ => None,
                });
                prop_assert_eq!(
                    placed.is_some(),
                    fits,
                    "step {}: {} x {:?} milli (consumes {:?}) with {:?} used",
                    k,
                    count,
                    milli,
                    amount,
                    used
                );
                match placed {
                    Some(binding) => {
                        let n: usize = binding.node.trim_start_matches("node-").parse().unwrap();
                        let share = amount.unwrap();
                        let mut mine = Vec::new();
                        for r in &binding.claims[0].result.devices {
                            let g: usize = r.device.trim_start_matches("gpu-").parse().unwrap();
                            prop_assert_eq!(
                                r.consumed_capacity["milli"],
                                Quantity::from_int(share)
                            );
                            used[n][g] += share;
                            if mixed && g == 1 {
                                slots[n] += 1;
                            }
                            mine.push((n, g, share));
                        }
                        held.insert(key, mine);
                    }
                    None => {
                        s.remove_pod(&key).unwrap();
                    }
                }
            }
            Op::Remove { i } => {
                if held.is_empty() {
                    continue;
                }
                let key = held.keys().nth(i % held.len()).unwrap().clone();
                s.remove_pod(&key).unwrap();
                for (n, g, a) in held.remove(&key).unwrap() {
                    used[n][g] -= a;
                    if mixed && g == 1 {
                        slots[n] -= 1;
                    }
                }
            }
        }
        for (n, gpus) in used.iter().enumerate() {
            for (g, &u) in gpus.iter().enumerate() {
                let dev = DeviceRef::new(DRIVER, format!("node-{n}"), format!("gpu-{g}"));
                let got = s
                    .cluster()
                    .consumed_capacity(&dev)
                    .get("milli")
                    .copied()
                    .unwrap_or(Quantity::ZERO);
                prop_assert_eq!(got, Quantity::from_int(u), "node-{} gpu-{}", n, g);
                if mixed && g == 1 {
                    let taken = s.cluster().consumed_capacity(&dev).get("slots").copied();
                    let want = (slots[n] > 0).then(|| Quantity::from_int(slots[n]));
                    prop_assert_eq!(taken, want, "node-{} slots", n);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn shares_are_placed_exactly_when_some_node_has_room(
        policy in prop_oneof![
            Just(Policy::None),
            Just(Policy::Steps),
            Just(Policy::Default400),
            Just(Policy::MixedKeys),
        ],
        ops in prop::collection::vec(op(), 1..30),
    ) {
        run(policy, &ops)?;
    }
}

/// The placed node of pod `name` in a cycle's report.
fn node_of(report: &gangpack::CycleReport, name: &str) -> Option<String> {
    let key = format!("ns/{name}");
    report.units.iter().find_map(|(_, r)| match r {
        UnitResult::Scheduled(d) => d
            .bindings
            .iter()
            .find(|b| b.pod == key)
            .map(|b| b.node.clone()),
        _ => None,
    })
}

fn add(s: &mut Scheduler, name: &str, milli: i64) -> Option<String> {
    let (pod, claim) = pod_and_claim(name, 1, Some(milli));
    s.add_claim(claim).unwrap();
    s.add_pod(pod).unwrap();
    node_of(&s.cycle(), name)
}

/// Two 600 shares fill both GPUs of `node-0` to 600 (first fit in name order). A 500
/// share then has no room there and goes to `node-1`; a 400 share has room on `node-0`
/// and goes there again, its first node in order.
#[test]
fn a_node_without_room_is_passed_over_and_one_with_room_is_used() {
    let mut s = Scheduler::new(cluster(Policy::None), GangOptions::default());
    assert_eq!(add(&mut s, "a", 600).as_deref(), Some("node-0"));
    assert_eq!(add(&mut s, "b", 600).as_deref(), Some("node-0"));
    assert_eq!(add(&mut s, "c", 500).as_deref(), Some("node-1"));
    assert_eq!(add(&mut s, "d", 400).as_deref(), Some("node-0"));
    // A departure gives the room back: node-0 keeps 400 on gpu-0 and 600 on gpu-1, so
    // a whole GPU goes to node-1 (gpu-1 is untouched) and 600 fits on node-0 again.
    s.remove_pod("ns/a").unwrap();
    assert_eq!(add(&mut s, "e", 1000).as_deref(), Some("node-1"));
    assert_eq!(add(&mut s, "f", 600).as_deref(), Some("node-0"));
}

/// A `nodeSelector` on a label few nodes carry narrows the scan to them: the pod lands on
/// the one node with the label, stays pending when no node has the value, and follows
/// the label when a node is relabelled or removed.
#[test]
fn node_selectors_follow_node_labels() {
    let mut c = cluster(Policy::None);
    for n in 0..NODES {
        let name = format!("node-{n}");
        let node = c
            .node(&name)
            .unwrap()
            .clone()
            .with_label("kubernetes.io/hostname", &name);
        c.replace_node(node).unwrap();
    }
    let place = |c: &Cluster, host: &str| {
        let (mut pod, claim) = pod_and_claim("p", 1, Some(100));
        pod.node_selector
            .insert("kubernetes.io/hostname".into(), host.into());
        match c
            .place_gang(None, &[pod], &[claim], &GangOptions::default())
            .unwrap()
        {
            gangpack::GangOutcome::Placed(d) => Some(d.bindings[0].node.clone()),
            _ => None,
        }
    };
    assert_eq!(place(&c, "node-2").as_deref(), Some("node-2"));
    assert_eq!(place(&c, "node-9"), None);
    // node-1 takes node-2's hostname value; node-2 loses its label.
    let relabel = |c: &mut Cluster, name: &str, value: Option<&str>| {
        let mut node = c.node(name).unwrap().clone();
        match value {
            Some(v) => {
                node.labels
                    .insert("kubernetes.io/hostname".into(), v.into());
            }
            None => {
                node.labels.remove("kubernetes.io/hostname");
            }
        }
        c.replace_node(node).unwrap();
    };
    relabel(&mut c, "node-2", None);
    assert_eq!(place(&c, "node-2"), None);
    relabel(&mut c, "node-1", Some("node-2"));
    assert_eq!(place(&c, "node-2").as_deref(), Some("node-1"));
    assert_eq!(place(&c, "node-1"), None);
    c.remove_node("node-1").unwrap();
    assert_eq!(place(&c, "node-2"), None);
    assert_eq!(place(&c, "node-0").as_deref(), Some("node-0"));
}
