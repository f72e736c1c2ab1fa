#![cfg(not(target_arch = "wasm32"))]
//! Gang placement against a brute-force oracle on tiny clusters (≤ 4 nodes × 4 GPUs,
//! ≤ 4 pods): the engine places a gang iff some assignment of at least `minCount` pods
//! fits (GPUs, cpu, pods, untolerated device taints, an optional rack constraint);
//! every placement passes the independent validator; repeated runs are identical.

mod common;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, DeviceAllocation, DeviceClass, DeviceRequest,
    DeviceTaintEffect, ExactDeviceRequest, GangOptions, GangOutcome, GangStatus, Node, Pod,
    PodGroup, PodResourceClaim, Quantity, ResourceClaim, SchedulingPolicy, ScoringPolicy,
    TopologyConstraint, WorkloadMix, validate_placement,
};
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct NodeSpec {
    rack: u8,
    gpus: usize,
    tainted: usize,
    /// Untainted GPUs allocated to another workload.
    in_use: usize,
    cpu: i64,
}

#[derive(Clone, Debug)]
struct PodSpec {
    gpus: u32,
    cpu: i64,
}

fn node_spec() -> impl Strategy<Value = NodeSpec> {
    (0..2u8, 0..=4usize, 0..=2usize, 0..=2usize, 1..=4i64).prop_map(
        |(rack, gpus, tainted, in_use, cpu)| NodeSpec {
            rack,
            gpus,
            tainted: tainted.min(gpus),
            in_use: in_use.min(gpus - tainted.min(gpus)),
            cpu,
        },
    )
}

fn pod_spec() -> impl Strategy<Value = PodSpec> {
    (0..=3u32, 0..=2i64).prop_map(|(gpus, cpu)| PodSpec { gpus, cpu })
}

fn build(nodes: &[NodeSpec], pods: &[PodSpec]) -> (Cluster, Vec<Pod>, Vec<ResourceClaim>) {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for (i, n) in nodes.iter().enumerate() {
        let name = format!("n{i}");
        c.add_node(
            Node::new(&name)
                .with_label("rack", format!("r{}", n.rack))
                .with_allocatable("cpu", Quantity::from_int(n.cpu))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        if n.gpus > 0 {
            let mut s = gpus(&name, n.gpus);
            for d in s.devices.iter_mut().take(n.tainted) {
                d.taints
                    .push(taint("ecc", "", DeviceTaintEffect::NoSchedule, 1));
            }
            c.add_slice(s).unwrap();
            for g in n.tainted..n.tainted + n.in_use {
                c.allocate(
                    &dref(&name, &format!("gpu-{g}")),
                    DeviceAllocation::new("other/job", vec![]),
                )
                .unwrap();
            }
        }
    }
    let mut out_pods = Vec::new();
    let mut claims = Vec::new();
    for (i, p) in pods.iter().enumerate() {
        let mut pod = Pod::new("ns", format!("p{i}"));
        pod.scheduling_group = Some("g".into());
        pod.requests.insert("cpu".into(), Quantity::from_int(p.cpu));
        if p.gpus > 0 {
            let mut claim = ResourceClaim::new("ns", format!("p{i}-gpus"));
            claim.spec.requests.push(DeviceRequest::exactly(
                "gpus",
                ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(p.gpus)),
            ));
            pod.resource_claims.push(PodResourceClaim {
                name: "gpus".into(),
                source: ClaimSource::ClaimName(format!("p{i}-gpus")),
            });
            claims.push(claim);
        }
        out_pods.push(pod);
    }
    (c, out_pods, claims)
}

/// Whether some assignment places at least `min` pods (each pod on a node or unplaced);
/// with `freed`, as if the GPUs in use by others were free.
fn oracle(nodes: &[NodeSpec], pods: &[PodSpec], min: usize, rack: bool, freed: bool) -> bool {
    let choices = nodes.len() + 1;
    let total = choices.pow(pods.len() as u32);
    (0..total).any(|mut code| {
        let mut gpus = vec![0usize; nodes.len()];
        let mut cpu = vec![0i64; nodes.len()];
        let mut placed = 0;
        let mut racks = std::collections::BTreeSet::new();
        for p in pods {
            let choice = code % choices;
            code /= choices;
            if choice == nodes.len() {
                continue;
            }
            placed += 1;
            gpus[choice] += p.gpus as usize;
            cpu[choice] += p.cpu;
            racks.insert(nodes[choice].rack);
        }
        placed >= min
            && (!rack || racks.len() <= 1)
            && nodes.iter().enumerate().all(|(i, n)| {
                let busy = if freed { 0 } else { n.in_use };
                gpus[i] <= n.gpus - n.tainted - busy && cpu[i] <= n.cpu
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn engine_places_iff_the_oracle_finds_a_placement(
        nodes in prop::collection::vec(node_spec(), 1..=4),
        pods in prop::collection::vec(pod_spec(), 1..=4),
        min_seed in 0..4usize,
        rack in any::<bool>(),
        policy in 0..3usize,
    ) {
        let min = 1 + min_seed % pods.len();
        let (c, pod_objs, claims) = build(&nodes, &pods);
        let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: min as u32 });
        if rack {
            g.topology.push(TopologyConstraint { key: "rack".into() });
        }
        let options = GangOptions {
            policy: match policy {
                0 => ScoringPolicy::BestFit,
                1 => ScoringPolicy::Spread,
                _ => ScoringPolicy::FragmentationAware(WorkloadMix::default()),
            },
            ..GangOptions::default()
        };
        let out = c.place_gang(Some(&g), &pod_objs, &claims, &options).unwrap();
        // The in-place variant answers the same and leaves the cluster as it was.
        let mut scratch = c.clone();
        let again = scratch.place_gang_mut(Some(&g), &pod_objs, &claims, &options).unwrap();
        prop_assert_eq!(&out, &again, "not deterministic");
        prop_assert_eq!(observe(&scratch), observe(&c), "place_gang_mut changed the cluster");
        for i in 0..nodes.len() {
            let n = format!("n{i}");
            prop_assert_eq!(scratch.node_free_resources(&n), c.node_free_resources(&n));
        }
        let want = oracle(&nodes, &pods, min, rack, false);
        match &out {
            GangOutcome::Placed(d) => {
                prop_assert!(want, "engine placed what the oracle cannot: {:?}", d);
                prop_assert!(d.bindings.len() >= min);
                let v = validate_placement(&c, Some(&g), &pod_objs, &claims, d);
                prop_assert!(v.is_empty(), "invalid placement {:?}", v);
            }
            GangOutcome::Unschedulable { .. } => prop_assert!(!want, "the oracle finds a placement the engine missed"),
            GangOutcome::BudgetExhausted { .. } => prop_assert!(false, "budget exhausted on a tiny instance"),
            GangOutcome::WaitingForPods { .. } => prop_assert!(false, "minCount never exceeds the pods here"),
        }
    }

    /// The explanation's status agrees with the oracle: scheduled when a placement
    /// exists now; `Unschedulable` (waiting or preemption may help) when one exists once
    /// the GPUs held by others are free; otherwise unresolvable. The blocking set then
    /// holds exactly the facts the oracle says matter.
    #[test]
    fn explanation_status_agrees_with_the_oracle(
        nodes in prop::collection::vec(node_spec(), 1..=4),
        pods in prop::collection::vec(pod_spec(), 1..=4),
        min_seed in 0..4usize,
        rack in any::<bool>(),
    ) {
        let min = 1 + min_seed % pods.len();
        let (c, pod_objs, claims) = build(&nodes, &pods);
        let mut g = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: min as u32 });
        if rack {
            g.topology.push(TopologyConstraint { key: "rack".into() });
        }
        let ex = c.explain_gang(Some(&g), &pod_objs, &claims, &GangOptions::default()).unwrap();
        let again = c.explain_gang(Some(&g), &pod_objs, &claims, &GangOptions::default()).unwrap();
        prop_assert_eq!(&ex, &again, "not deterministic");
        let want = if oracle(&nodes, &pods, min, rack, false) {
            GangStatus::Scheduled
        } else if oracle(&nodes, &pods, min, rack, true) {
            GangStatus::Unschedulable
        } else {
            GangStatus::UnschedulableAndUnresolvable
        };
        prop_assert_eq!(ex.status, want, "{}", ex);
        if want != GangStatus::Scheduled {
            prop_assert!(!ex.blocking.is_empty(), "no blocking set: {}", ex);
            prop_assert!(ex.blocking.iter().all(|&i| i < ex.facts.len()));
        }
    }
}
