#![cfg(not(target_arch = "wasm32"))]
//! Gang placement against a brute-force oracle on tiny clusters (≤ 4 nodes × 4 GPUs,
//! ≤ 3 network-attached devices, ≤ 4 pods, ≤ 2 shared claims): the engine places a gang
//! iff some assignment of at least `minCount` pods fits (GPUs, cpu, pods, untolerated
//! device taints, an optional rack constraint, and the claims' device choices: pods'
//! own claims for one or two network-attached devices of port `a` or of any port,
//! reachable from every node or from one rack, some held by another workload; shared
//! claims named by several pods or by the PodGroup, for one network device or one GPU);
//! every placement passes the independent validator; repeated runs are identical.
//!
//! The oracle knows nothing of the engine: it enumerates every pod-to-node assignment
//! and, for each, every assignment of distinct network devices to the claims that need
//! one, with the rules written out here (a claim's device must be reachable from the
//! node of every placed pod that uses it; a GPU claim shared by pods pins them to one
//! node and takes one of its GPUs).

mod common;

use common::*;
use gangpack::{
    AllocationMode, ClaimSource, Cluster, Device, DeviceAllocation, DeviceAttribute, DeviceClass,
    DeviceRequest, DeviceSelector, DeviceTaintEffect, ExactDeviceRequest, GangOptions, GangOutcome,
    GangStatus, Node, NodeAccess, NodeSelector, NodeSelectorOperator, NodeSelectorRequirement,
    NodeSelectorTerm, Pod, PodGroup, PodGroupResourceClaim, PodResourceClaim, Quantity,
    ResourceClaim, ResourcePool, ResourceSlice, SchedulingPolicy, ScoringPolicy,
    SliceNodeSelection, TopologyConstraint, validate_placement,
};
use proptest::prelude::*;

const NET_DRIVER: &str = "net.example.com";

#[derive(Clone, Debug)]
struct NodeSpec {
    rack: u8,
    gpus: usize,
    tainted: usize,
    /// Untainted GPUs allocated to another workload.
    in_use: usize,
    cpu: i64,
}

/// A network-attached device: attribute `port` (`a` or `b`), reachable from every
/// node or from the nodes of one rack.
#[derive(Clone, Debug)]
struct NetSpec {
    port_a: bool,
    /// `None`: every node; `Some(r)`: the nodes labelled `rack=r<r>`.
    rack: Option<u8>,
    /// Allocated to another workload.
    in_use: bool,
}

/// What a claim asks for beyond GPUs: one network device of port `a`, or of any port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    PortA,
    AnyPort,
    /// One GPU (node-local).
    Gpu,
}

#[derive(Clone, Debug)]
struct PodSpec {
    gpus: u32,
    cpu: i64,
    /// Its own claim for network devices: which, and how many (1 or 2).
    net: Option<(Want, u32)>,
    /// Which shared claims it names (bit `j`: claim `s<j>`).
    uses: u8,
}

#[derive(Clone, Debug)]
struct SharedSpec {
    want: Want,
    /// A PodGroup-level claim (every pod names it), else a claim the pods of `uses`
    /// name.
    group: bool,
}

#[derive(Clone, Debug)]
struct Instance {
    nodes: Vec<NodeSpec>,
    nets: Vec<NetSpec>,
    pods: Vec<PodSpec>,
    shared: Vec<SharedSpec>,
}

impl Instance {
    /// Whether pod `p` uses shared claim `j`.
    fn uses(&self, p: usize, j: usize) -> bool {
        self.shared[j].group || self.pods[p].uses & (1 << j) != 0
    }
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
    (0..=3u32, 0..=2i64).prop_map(|(gpus, cpu)| PodSpec {
        gpus,
        cpu,
        net: None,
        uses: 0,
    })
}

fn net_want() -> impl Strategy<Value = Want> {
    prop_oneof![Just(Want::PortA), Just(Want::AnyPort)]
}

fn net_spec() -> impl Strategy<Value = NetSpec> {
    (
        any::<bool>(),
        prop::option::of(0..2u8),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(port_a, rack, in_use)| NetSpec {
            port_a,
            rack,
            in_use,
        })
}

fn shared_spec() -> impl Strategy<Value = SharedSpec> {
    (
        prop_oneof![Just(Want::PortA), Just(Want::AnyPort), Just(Want::Gpu)],
        prop::bool::weighted(0.4),
    )
        .prop_map(|(want, group)| SharedSpec { want, group })
}

/// Node-local instances (no network devices, no shared claims).
fn local_instance() -> impl Strategy<Value = Instance> {
    (
        prop::collection::vec(node_spec(), 1..=4),
        prop::collection::vec(pod_spec(), 1..=4),
    )
        .prop_map(|(nodes, pods)| Instance {
            nodes,
            nets: Vec::new(),
            pods,
            shared: Vec::new(),
        })
}

/// Instances with network-attached devices and shared claims (and sometimes neither).
fn instance() -> impl Strategy<Value = Instance> {
    (
        prop::collection::vec(node_spec(), 1..=4),
        prop::collection::vec(net_spec(), 0..=3),
        prop::collection::vec(
            (
                pod_spec(),
                prop::option::weighted(0.4, (net_want(), prop::sample::select(vec![1u32, 1, 2]))),
                0..4u8,
            ),
            1..=4,
        ),
        prop::collection::vec(shared_spec(), 0..=2),
    )
        .prop_map(|(nodes, nets, pods, shared)| {
            let pods = pods
                .into_iter()
                .map(|(mut p, net, uses)| {
                    p.net = net;
                    p.uses = uses & ((1 << shared.len()) - 1);
                    p
                })
                .collect();
            Instance {
                nodes,
                nets,
                pods,
                shared,
            }
        })
}

/// A request for `count` devices.
fn request(want: Want, count: u32) -> DeviceRequest {
    match want {
        Want::Gpu => DeviceRequest::exactly(
            "gpus",
            ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(count)),
        ),
        Want::PortA | Want::AnyPort => {
            let mut r = ExactDeviceRequest::new("net").with_mode(AllocationMode::ExactCount(count));
            if want == Want::PortA {
                r.selectors.push(DeviceSelector {
                    cel: format!("device.attributes[\"{NET_DRIVER}\"].port == \"a\""),
                });
            }
            DeviceRequest::exactly("port", r)
        }
    }
}

fn names(p: &mut Pod, name: &str, claim: &str) {
    p.resource_claims.push(PodResourceClaim {
        name: name.into(),
        source: ClaimSource::ClaimName(claim.into()),
    });
}

fn rack_selector(rack: u8) -> NodeSelector {
    NodeSelector {
        terms: vec![NodeSelectorTerm {
            match_expressions: vec![NodeSelectorRequirement::new(
                "rack",
                NodeSelectorOperator::In,
                [format!("r{rack}")],
            )],
            match_fields: vec![],
        }],
    }
}

/// The cluster, the group (gang of `min`, optionally rack-constrained), the pods and
/// the claims of an instance.
fn build(
    x: &Instance,
    min: usize,
    rack: bool,
) -> (Cluster, PodGroup, Vec<Pod>, Vec<ResourceClaim>) {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.put_class(DeviceClass::with_cel(
        "net",
        format!("device.driver == \"{NET_DRIVER}\""),
    ))
    .unwrap();
    for (i, n) in x.nodes.iter().enumerate() {
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
    // Network devices: one slice (and pool) per reach.
    for reach in [None, Some(0), Some(1)] {
        let pool = match reach {
            None => "net-all".to_owned(),
            Some(r) => format!("net-r{r}"),
        };
        let devices: Vec<Device> = x
            .nets
            .iter()
            .enumerate()
            .filter(|(_, d)| d.rack == reach)
            .map(|(i, d)| {
                Device::new(format!("net-{i}")).with_attribute(
                    "port",
                    DeviceAttribute::String(if d.port_a { "a" } else { "b" }.into()),
                )
            })
            .collect();
        if devices.is_empty() {
            continue;
        }
        c.add_slice(ResourceSlice {
            name: pool.clone(),
            driver: NET_DRIVER.into(),
            pool: ResourcePool::single(&pool),
            node_selection: SliceNodeSelection::Slice(match reach {
                None => NodeAccess::AllNodes,
                Some(r) => NodeAccess::NodeSelector(rack_selector(r)),
            }),
            devices,
            shared_counters: vec![],
        })
        .unwrap();
        for (i, _) in x
            .nets
            .iter()
            .enumerate()
            .filter(|(_, d)| d.rack == reach && d.in_use)
        {
            c.allocate(
                &gangpack::DeviceRef::new(NET_DRIVER, &pool, format!("net-{i}")),
                DeviceAllocation::new("other/job", vec![]),
            )
            .unwrap();
        }
    }
    let mut g = PodGroup::new(
        "ns",
        "g",
        SchedulingPolicy::Gang {
            min_count: min as u32,
        },
    );
    if rack {
        g.topology.push(TopologyConstraint { key: "rack".into() });
    }
    let mut claims = Vec::new();
    for (j, s) in x.shared.iter().enumerate() {
        let mut claim = ResourceClaim::new("ns", format!("s{j}"));
        claim.spec.requests.push(request(s.want, 1));
        claims.push(claim);
        if s.group {
            g.resource_claims.push(PodGroupResourceClaim {
                name: format!("s{j}"),
                source: ClaimSource::ClaimName(format!("s{j}")),
            });
        }
    }
    let mut pods = Vec::new();
    for (i, p) in x.pods.iter().enumerate() {
        let mut pod = Pod::new("ns", format!("p{i}"));
        pod.scheduling_group = Some("g".into());
        pod.requests.insert("cpu".into(), Quantity::from_int(p.cpu));
        if p.gpus > 0 {
            let mut claim = ResourceClaim::new("ns", format!("p{i}-gpus"));
            claim.spec.requests.push(request(Want::Gpu, p.gpus));
            names(&mut pod, "gpus", &claim.name);
            claims.push(claim);
        }
        if let Some((want, count)) = p.net {
            let mut claim = ResourceClaim::new("ns", format!("p{i}-net"));
            claim.spec.requests.push(request(want, count));
            names(&mut pod, "net", &claim.name);
            claims.push(claim);
        }
        for j in 0..x.shared.len() {
            if x.uses(i, j) {
                // A group claim is used by naming it with the same name and source.
                names(&mut pod, &format!("s{j}"), &format!("s{j}"));
            }
        }
        pods.push(pod);
    }
    (c, g, pods, claims)
}

/// Whether some assignment places at least `min` pods (each pod on a node or unplaced);
/// with `freed`, as if the GPUs in use by others were free.
fn oracle(x: &Instance, min: usize, rack: bool, freed: bool) -> bool {
    let nodes = &x.nodes;
    let choices = nodes.len() + 1;
    let total = choices.pow(x.pods.len() as u32);
    (0..total).any(|mut code| {
        let mut at: Vec<Option<usize>> = Vec::with_capacity(x.pods.len());
        for _ in &x.pods {
            let choice = code % choices;
            code /= choices;
            at.push((choice < nodes.len()).then_some(choice));
        }
        let placed = at.iter().flatten().count();
        let racks: std::collections::BTreeSet<u8> =
            at.iter().flatten().map(|&n| nodes[n].rack).collect();
        if placed < min || (rack && racks.len() > 1) {
            return false;
        }
        let mut gpus = vec![0usize; nodes.len()];
        let mut cpu = vec![0i64; nodes.len()];
        for (p, n) in x.pods.iter().zip(&at) {
            if let Some(n) = *n {
                gpus[n] += p.gpus as usize;
                cpu[n] += p.cpu;
            }
        }
        // Each claim that needs a network device, with the nodes it must reach.
        let mut net_claims: Vec<(Want, Vec<usize>)> = Vec::new();
        for (p, n) in x.pods.iter().zip(&at) {
            if let (Some((want, count)), Some(n)) = (p.net, *n) {
                // One entry per device: each needs a distinct device.
                for _ in 0..count {
                    net_claims.push((want, vec![n]));
                }
            }
        }
        for (j, s) in x.shared.iter().enumerate() {
            let users: Vec<usize> = (0..x.pods.len())
                .filter(|&p| x.uses(p, j))
                .filter_map(|p| at[p])
                .collect();
            if users.is_empty() {
                // Not allocated.
                continue;
            }
            match s.want {
                Want::Gpu => {
                    // One GPU of the one node all its placed users are on.
                    if users.iter().any(|&n| n != users[0]) {
                        return false;
                    }
                    gpus[users[0]] += 1;
                }
                want => net_claims.push((want, users)),
            }
        }
        let fits = nodes.iter().enumerate().all(|(i, n)| {
            let busy = if freed { 0 } else { n.in_use };
            gpus[i] <= n.gpus - n.tainted - busy && cpu[i] <= n.cpu
        });
        fits && net_matching(x, &net_claims, &mut vec![false; x.nets.len()])
    })
}

/// Whether the network claims (what each wants, the nodes it must reach) get distinct
/// free devices.
fn net_matching(x: &Instance, claims: &[(Want, Vec<usize>)], taken: &mut Vec<bool>) -> bool {
    let Some(((want, users), rest)) = claims.split_first() else {
        return true;
    };
    for (d, net) in x.nets.iter().enumerate() {
        let port_ok = *want == Want::AnyPort || net.port_a;
        let reaches = users
            .iter()
            .all(|&n| net.rack.is_none_or(|r| x.nodes[n].rack == r));
        if taken[d] || net.in_use || !port_ok || !reaches {
            continue;
        }
        taken[d] = true;
        let ok = net_matching(x, rest, taken);
        taken[d] = false;
        if ok {
            return true;
        }
    }
    false
}

fn check_placement(
    instance: &Instance,
    min_seed: usize,
    rack: bool,
    policy: usize,
) -> Result<(), TestCaseError> {
    let min = 1 + min_seed % instance.pods.len();
    let (cluster, group, pods, claims) = build(instance, min, rack);
    let options = GangOptions {
        policy: match policy {
            0 => ScoringPolicy::BestFit,
            1 => ScoringPolicy::Spread,
            2 => ScoringPolicy::stranding(),
            _ => ScoringPolicy::fgd(),
        },
        ..GangOptions::default()
    };
    let out = cluster
        .place_gang(Some(&group), &pods, &claims, &options)
        .unwrap();
    // The in-place variant answers the same and leaves the cluster as it was.
    let mut scratch = cluster.clone();
    let again = scratch
        .place_gang_mut(Some(&group), &pods, &claims, &options)
        .unwrap();
    prop_assert_eq!(&out, &again, "not deterministic");
    prop_assert_eq!(
        observe(&scratch),
        observe(&cluster),
        "place_gang_mut changed the cluster"
    );
    for i in 0..instance.nodes.len() {
        let node = format!("n{i}");
        prop_assert_eq!(
            scratch.node_free_resources(&node),
            cluster.node_free_resources(&node)
        );
    }
    let want = oracle(instance, min, rack, false);
    match &out {
        GangOutcome::Placed(decision) => {
            prop_assert!(want, "engine placed what the oracle cannot: {:?}", decision);
            prop_assert!(decision.bindings.len() >= min);
            let violations = validate_placement(&cluster, Some(&group), &pods, &claims, decision);
            prop_assert!(violations.is_empty(), "invalid placement {:?}", violations);
        }
        GangOutcome::Unschedulable { .. } => {
            prop_assert!(!want, "the oracle finds a placement the engine missed");
        }
        GangOutcome::BudgetExhausted { .. } => {
            prop_assert!(false, "budget exhausted on a tiny instance");
        }
        GangOutcome::WaitingForPods { .. } => {
            prop_assert!(false, "minCount never exceeds the pods here");
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn engine_places_iff_the_oracle_finds_a_placement(
        x in local_instance(),
        min_seed in 0..4usize,
        rack in any::<bool>(),
        policy in 0..4usize,
    ) {
        check_placement(&x, min_seed, rack, policy)?;
    }

    /// The same with network-attached devices and shared claims, whose device choices
    /// the engine must revisit across nodes.
    #[test]
    fn engine_places_iff_the_oracle_finds_a_placement_with_shared_and_network_claims(
        x in instance(),
        min_seed in 0..4usize,
        rack in any::<bool>(),
        policy in 0..4usize,
    ) {
        check_placement(&x, min_seed, rack, policy)?;
    }

    /// The explanation's status agrees with the oracle: scheduled when a placement
    /// exists now; `Unschedulable` (waiting or preemption may help) when one exists once
    /// the GPUs held by others are free; otherwise unresolvable. The blocking set then
    /// holds exactly the facts the oracle says matter.
    #[test]
    fn explanation_status_agrees_with_the_oracle(
        x in local_instance(),
        min_seed in 0..4usize,
        rack in any::<bool>(),
    ) {
        let min = 1 + min_seed % x.pods.len();
        let (c, g, pod_objs, claims) = build(&x, min, rack);
        let ex = c.explain_gang(Some(&g), &pod_objs, &claims, &GangOptions::default()).unwrap();
        let again = c.explain_gang(Some(&g), &pod_objs, &claims, &GangOptions::default()).unwrap();
        prop_assert_eq!(&ex, &again, "not deterministic");
        let want = if oracle(&x, min, rack, false) {
            GangStatus::Scheduled
        } else if oracle(&x, min, rack, true) {
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
