//! The workloads of the side-by-side benchmark against Kubernetes' own allocator
//! (`k8s.io/dynamic-resource-allocation/structured`, `scripts/peer-bench.sh`).
//!
//! Each workload is defined once, here, as a whole [`Scenario`]: the criterion side
//! (`benches/benches/peer.rs`) builds its cluster from it, and the `peer-fixtures`
//! binary writes the very same objects as Kubernetes 1.37 JSON (through the adapter's
//! [`scenario_manifests`](gangpack_k8s::output::scenario_manifests)) for
//! the Go benchmark (`go/upstream/peerbench`). Beside the objects each workload has an
//! [`Expect`]ation worked out from the fleet's parameters by plain arithmetic, not by
//! either allocator: both sides check their allocator against it before timing.

use std::collections::BTreeMap;

use gangpack::testing::{Namespace, Scenario};
use gangpack::{
    AllocationOutcome, AllocationResult, AllocatorOptions, ClaimSource, Cluster,
    DeviceRequestAllocationResult, Fit, Node, NodeSelector, Pod, PodResourceClaim, PreparedClaims,
    ResourceClaim, ResourceSlice,
};

use crate::{DRIVER, allocation_fleet_objects, gpu_claim, gpu_class, gpu_gang, node_name};

/// The namespace of every claim and pod of the workloads.
pub const NAMESPACE: &str = "ns";

/// The fleet a workload runs on: the parameters of [`allocation_fleet_objects`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FleetShape {
    /// Nodes (`node-00000`, ...), one node-local ResourceSlice each.
    pub nodes: usize,
    /// GPUs per node.
    pub gpus: usize,
    /// GPUs per NUMA node (attribute `numa` = `g / numa_size`).
    pub numa_size: usize,
    /// Every `taint_every`-th GPU of the fleet is tainted `NoSchedule` (0 = none).
    pub taint_every: usize,
    /// Nodes per rack (label `topology.example.com/rack`).
    pub rack_size: usize,
}

/// One workload: a fleet, GPUs already taken, and pending pods (each with its own claim
/// for `gpus_per_pod` GPUs of [`gpu_class`], optionally on one NUMA node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerWorkload {
    /// The name both benchmarks use (`peer/<name>/...`) and the fixture directory's.
    pub name: &'static str,
    /// The fleet.
    pub shape: FleetShape,
    /// GPUs allocated before the workload starts, as (node index, GPU index), each to
    /// its own claim `ns/taken-<node>-<gpu>`.
    pub taken: Vec<(usize, usize)>,
    /// Pending pods.
    pub pods: usize,
    /// GPUs each pod's claim asks for.
    pub gpus_per_pod: u32,
    /// Whether the claims carry a `matchAttribute` on `<driver>/numa`.
    pub same_numa: bool,
    /// Whether the pods form a gang (one PodGroup, `minCount` = every pod), as
    /// [`gpu_gang`] builds it.
    pub gang: bool,
}

/// [`PeerWorkload::setup`]'s result.
#[derive(Clone, Debug)]
pub struct PeerSetup {
    /// The workload's objects.
    pub scenario: Scenario,
    /// The cluster built from them.
    pub cluster: Cluster,
    /// Node names, sorted.
    pub names: Vec<String>,
    /// The pending pods' claims, in pod order.
    pub claims: Vec<ResourceClaim>,
}

/// What a workload must give, worked out from its definition by arithmetic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expect {
    /// Nodes in the fleet.
    pub nodes: usize,
    /// GPUs in the fleet.
    pub devices: usize,
    /// GPUs carrying a (`NoSchedule`) taint.
    pub tainted_devices: usize,
    /// GPUs allocated before the workload (the `taken` claims).
    pub allocated_devices: usize,
    /// Pending pods, each with one claim.
    pub pods: usize,
    /// On how many nodes the first pod's claim fits (the scheduler's filter over all
    /// nodes, nothing of the workload allocated yet).
    pub fitting_nodes: usize,
    /// Pod by pod in order, the node the first fit in node-name order picks when
    /// every earlier pod's GPUs are recorded as allocated (`None`: fits nowhere), with
    /// the NUMA node its GPUs are on when the claim asks for one.
    pub first_fit: Vec<Option<Placed>>,
}

/// Where [`Expect::first_fit`] puts a pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The node's name.
    pub node: String,
    /// The NUMA node of every allocated GPU, for a claim with the NUMA constraint.
    pub numa: Option<usize>,
}

/// The five workloads, in the order the table lists them.
pub fn peer_workloads() -> Vec<PeerWorkload> {
    let one = |gpus, numa_size| FleetShape {
        nodes: 1,
        gpus,
        numa_size,
        taint_every: 0,
        rack_size: crate::NODES_PER_RACK,
    };
    vec![
        PeerWorkload {
            name: "1_gpu",
            shape: one(8, 4),
            taken: vec![],
            pods: 1,
            gpus_per_pod: 1,
            same_numa: false,
            gang: false,
        },
        PeerWorkload {
            name: "8_gpus_match_numa",
            shape: one(16, 8),
            taken: vec![(0, 3)],
            pods: 1,
            gpus_per_pod: 8,
            same_numa: true,
            gang: false,
        },
        PeerWorkload {
            name: "8_of_7_rejected",
            shape: one(8, 4),
            taken: vec![(0, 7)],
            pods: 1,
            gpus_per_pod: 8,
            same_numa: false,
            gang: false,
        },
        PeerWorkload {
            name: "4096x8_1_gpu_every_node",
            shape: FleetShape {
                nodes: 4096,
                gpus: 8,
                numa_size: 4,
                taint_every: 33,
                rack_size: crate::NODES_PER_RACK,
            },
            taken: vec![],
            pods: 1,
            gpus_per_pod: 1,
            same_numa: false,
            gang: false,
        },
        PeerWorkload {
            name: "4096x8_gang_64x8",
            shape: FleetShape {
                nodes: 4096,
                gpus: 8,
                numa_size: 4,
                taint_every: 33,
                rack_size: 32,
            },
            taken: vec![],
            pods: 64,
            gpus_per_pod: 8,
            same_numa: false,
            gang: true,
        },
    ]
}

/// The workload called `name`, if there is one.
pub fn peer_workload(name: &str) -> Option<PeerWorkload> {
    peer_workloads().into_iter().find(|w| w.name == name)
}

/// The claim that holds GPU `gpu` of node `node` before a workload starts.
pub fn taken_claim(node: usize, gpu: usize) -> ResourceClaim {
    let mut claim = gpu_claim(&format!("taken-{node}-{gpu}"), 1, false);
    let pool = node_name(node);
    claim.allocation = Some(AllocationResult {
        devices: vec![DeviceRequestAllocationResult {
            request: "gpus".into(),
            driver: DRIVER.into(),
            pool: pool.clone(),
            device: format!("gpu-{gpu}"),
            ..DeviceRequestAllocationResult::default()
        }],
        config: vec![],
        node_selector: Some(NodeSelector::single_node(pool)),
    });
    claim
}

impl PeerWorkload {
    /// The fleet's nodes and slices.
    pub fn fleet_objects(&self) -> (Vec<Node>, Vec<ResourceSlice>) {
        let s = self.shape;
        allocation_fleet_objects(s.nodes, s.gpus, s.numa_size, s.taint_every, s.rack_size)
    }

    /// Every object of the workload: namespace `ns`, the fleet, [`gpu_class`], the
    /// taken GPUs' allocated claims, then the pending pods' claims, their PodGroup (for
    /// a gang) and the pending pods.
    pub fn scenario(&self) -> Scenario {
        let (nodes, slices) = self.fleet_objects();
        let mut claims: Vec<ResourceClaim> =
            self.taken.iter().map(|&(n, g)| taken_claim(n, g)).collect();
        let mut groups = Vec::new();
        let pods = if self.gang {
            let (group, pods, gang_claims) = gpu_gang(self.pods, self.gpus_per_pod, false);
            assert!(!self.same_numa, "gang claims carry no NUMA constraint");
            groups.push(group);
            claims.extend(gang_claims);
            pods
        } else {
            (0..self.pods)
                .map(|i| {
                    let name = format!("pod-{i:04}");
                    let claim =
                        gpu_claim(&format!("{name}-gpus"), self.gpus_per_pod, self.same_numa);
                    let mut pod = Pod::new(NAMESPACE, &name);
                    pod.resource_claims.push(PodResourceClaim {
                        name: "gpus".into(),
                        source: ClaimSource::ClaimName(claim.name.clone()),
                    });
                    claims.push(claim);
                    pod
                })
                .collect()
        };
        Scenario {
            namespaces: vec![Namespace {
                name: NAMESPACE.into(),
                ..Namespace::default()
            }],
            nodes,
            device_classes: vec![gpu_class()],
            slices,
            claims,
            groups,
            pods,
            ..Scenario::default()
        }
    }

    /// The workload ready to run on gangpack: its scenario, the cluster built from it
    /// (as [`Scenario::scheduler`] assembles one: the taken claims' devices recorded as
    /// allocated), the node names in name order, and the pending pods' claims.
    pub fn setup(&self) -> PeerSetup {
        let scenario = self.scenario();
        let cluster = scenario
            .scheduler(gangpack::GangOptions::default())
            .expect("valid scenario")
            .cluster()
            .clone();
        let mut names: Vec<String> = scenario.nodes.iter().map(|n| n.name.clone()).collect();
        names.sort();
        let claims = pending_claims(&scenario);
        PeerSetup {
            scenario,
            cluster,
            names,
            claims,
        }
    }

    /// The expectation, from the definition alone: a GPU is usable when it is neither
    /// tainted nor taken; a claim for `k` GPUs fits a node with `k` usable GPUs (on one
    /// NUMA node when it asks for one: the first NUMA node, in index order, with
    /// enough), and a pod placed takes the lowest-numbered of them.
    pub fn expect(&self) -> Expect {
        let s = self.shape;
        let tainted = |n: usize, g: usize| {
            s.taint_every > 0 && (n * s.gpus + g).is_multiple_of(s.taint_every)
        };
        let mut usable: Vec<Vec<bool>> = (0..s.nodes)
            .map(|n| (0..s.gpus).map(|g| !tainted(n, g)).collect())
            .collect();
        for &(n, g) in &self.taken {
            usable[n][g] = false;
        }
        let k = self.gpus_per_pod as usize;
        // The GPUs a claim would take on a node: the first `k` usable ones of the
        // first group (the whole node, or one NUMA node) that has `k`.
        let pick = |node: &[bool]| -> Option<(Vec<usize>, Option<usize>)> {
            let groups: Vec<(Vec<usize>, Option<usize>)> = if self.same_numa {
                (0..s.gpus.div_ceil(s.numa_size))
                    .map(|numa| {
                        let gpus =
                            (numa * s.numa_size..((numa + 1) * s.numa_size).min(s.gpus)).collect();
                        (gpus, Some(numa))
                    })
                    .collect()
            } else {
                vec![((0..s.gpus).collect(), None)]
            };
            groups.into_iter().find_map(|(gpus, numa)| {
                let free: Vec<usize> = gpus.into_iter().filter(|&g| node[g]).take(k).collect();
                (free.len() == k).then_some((free, numa))
            })
        };
        let fitting_nodes = usable.iter().filter(|node| pick(node).is_some()).count();
        let mut first_fit = Vec::with_capacity(self.pods);
        for _ in 0..self.pods {
            let found = (0..s.nodes).find_map(|n| pick(&usable[n]).map(|p| (n, p)));
            first_fit.push(found.map(|(n, (gpus, numa))| {
                for g in gpus {
                    usable[n][g] = false;
                }
                Placed {
                    node: node_name(n),
                    numa,
                }
            }));
        }
        Expect {
            nodes: s.nodes,
            devices: s.nodes * s.gpus,
            tainted_devices: (0..s.nodes * s.gpus)
                .filter(|i| s.taint_every > 0 && i.is_multiple_of(s.taint_every))
                .count(),
            allocated_devices: self.taken.len(),
            pods: self.pods,
            fitting_nodes,
            first_fit,
        }
    }
}

/// A workload scenario's pending pods' claims, in pod order (each pod names exactly
/// one).
pub fn pending_claims(scenario: &Scenario) -> Vec<ResourceClaim> {
    scenario
        .pending_pods()
        .map(|p| {
            let [
                PodResourceClaim {
                    source: ClaimSource::ClaimName(name),
                    ..
                },
            ] = p.resource_claims.as_slice()
            else {
                panic!("pod {} names one claim", p.name)
            };
            scenario
                .claim(&p.namespace, name)
                .expect("the pod's claim is in the scenario")
                .clone()
        })
        .collect()
}

impl Expect {
    /// The expectation as the JSON object the Go benchmark's fixture test reads
    /// (`expect.json` beside the objects).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "nodes": self.nodes,
            "devices": self.devices,
            "taintedDevices": self.tainted_devices,
            "allocatedDevices": self.allocated_devices,
            "pods": self.pods,
            "fittingNodes": self.fitting_nodes,
            "firstFit": self.first_fit.iter().map(|p| match p {
                None => serde_json::Value::Null,
                Some(p) => serde_json::json!({"node": p.node, "numa": p.numa}),
            }).collect::<Vec<_>>(),
        })
    }
}

/// The first node, in `names` order, where `prepared` fits, found with
/// `allocate_prepared` (or `fits_prepared`, then `allocate_prepared` there), and its
/// results.
pub fn first_fit(
    cluster: &Cluster,
    names: &[String],
    prepared: &PreparedClaims,
    fits: bool,
) -> Option<(usize, Vec<AllocationResult>)> {
    let none = BTreeMap::new();
    let opts = AllocatorOptions::default();
    for (i, n) in names.iter().enumerate() {
        if fits
            && !matches!(
                cluster.fits_prepared(n, prepared, &none, &opts),
                Ok(Fit::Fits)
            )
        {
            continue;
        }
        if let AllocationOutcome::Allocated(r) = cluster
            .allocate_prepared(n, prepared, &none, &opts)
            .expect("valid claims")
        {
            return Some((i, r));
        }
    }
    None
}

/// Places `claims` pod by pod: each pod's claim prepared, the first fit in name order,
/// its result recorded in `cluster`. Returns each pod's node index and result.
pub fn pod_by_pod(
    cluster: &mut Cluster,
    names: &[String],
    claims: &[ResourceClaim],
    fits: bool,
) -> Vec<Option<(usize, AllocationResult)>> {
    let mut out = Vec::with_capacity(claims.len());
    for claim in claims {
        let prepared = cluster
            .prepare_claims(std::slice::from_ref(claim))
            .expect("valid claim");
        let found = first_fit(cluster, names, &prepared, fits);
        let placed = found.map(|(i, mut results)| {
            let result = results.pop().expect("one result per claim");
            cluster
                .commit_allocation(&format!("{}/{}", claim.namespace, claim.name), &result)
                .expect("free devices");
            (i, result)
        });
        out.push(placed);
    }
    out
}

/// What the checks compare: the node and, for a NUMA claim, the one NUMA node of its
/// devices (`gpu-<g>` is on NUMA node `g / numa_size`), and the device count.
pub fn placed(
    w: &PeerWorkload,
    names: &[String],
    got: Option<&(usize, AllocationResult)>,
) -> Option<Placed> {
    got.map(|(i, result)| {
        assert_eq!(
            result.devices.len(),
            w.gpus_per_pod as usize,
            "{}: devices allocated",
            w.name
        );
        let numas: Vec<usize> = result
            .devices
            .iter()
            .map(|d| {
                let g: usize = d.device["gpu-".len()..].parse().expect("gpu-<n>");
                g / w.shape.numa_size
            })
            .collect();
        Placed {
            node: names[*i].clone(),
            numa: w.same_numa.then(|| {
                assert!(
                    numas.windows(2).all(|p| p[0] == p[1]),
                    "{}: one NUMA node",
                    w.name
                );
                numas[0]
            }),
        }
    })
}

/// Checks gangpack against the workload's expectation (the filter over every node,
/// and pod by pod with both node walks); panics naming the workload and what differs.
pub fn check_gangpack(w: &PeerWorkload, setup: &PeerSetup) {
    let PeerSetup {
        cluster,
        names,
        claims,
        ..
    } = setup;
    let expect: Expect = w.expect();
    assert_eq!(cluster.nodes().count(), expect.nodes, "{}: nodes", w.name);
    assert_eq!(
        cluster.device_count(),
        expect.devices,
        "{}: devices",
        w.name
    );
    assert_eq!(claims.len(), expect.pods, "{}: pods", w.name);
    let prepared = cluster.prepare_claims(&claims[..1]).expect("valid claim");
    let none = BTreeMap::new();
    let opts = AllocatorOptions::default();
    let fitting = names
        .iter()
        .filter(|n| {
            matches!(
                cluster.allocate_prepared(n, &prepared, &none, &opts),
                Ok(AllocationOutcome::Allocated(_))
            )
        })
        .count();
    assert_eq!(fitting, expect.fitting_nodes, "{}: nodes that fit", w.name);
    for fits in [false, true] {
        let mut c = cluster.clone();
        let got = pod_by_pod(&mut c, names, claims, fits);
        let got: Vec<Option<Placed>> = got.iter().map(|g| placed(w, names, g.as_ref())).collect();
        assert_eq!(got, expect.first_fit, "{}: first fit, pod by pod", w.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gangpack's allocator gives every workload its expected outcome (the bench
    /// checks the same before timing; the Go side's TestFixtures checks upstream's).
    #[test]
    fn gangpack_gives_every_expected_outcome() {
        for w in peer_workloads() {
            check_gangpack(&w, &w.setup());
        }
    }

    /// The arithmetic expectation, spot-checked by hand: every 33rd GPU of 8-GPU
    /// nodes is tainted, so 993 GPUs on 993 different nodes (nodes 0, 4, 8, ...: GPU
    /// 33 k is on node 33 k / 8), and an 8-GPU claim fits the other 3,103 nodes.
    #[test]
    fn expectations_match_a_hand_count() {
        let e = |name| peer_workload(name).expect("a workload").expect();
        let numa = e("8_gpus_match_numa");
        assert_eq!((numa.devices, numa.allocated_devices), (16, 1));
        assert_eq!(
            numa.first_fit,
            vec![Some(Placed {
                node: "node-00000".into(),
                numa: Some(1)
            })]
        );
        assert_eq!(e("8_of_7_rejected").first_fit, vec![None]);
        assert_eq!(e("8_of_7_rejected").fitting_nodes, 0);
        let every = e("4096x8_1_gpu_every_node");
        assert_eq!((every.tainted_devices, every.fitting_nodes), (993, 4096));
        let gang = e("4096x8_gang_64x8");
        assert_eq!((gang.tainted_devices, gang.fitting_nodes), (993, 3103));
        let nodes: Vec<&str> = gang.first_fit[..5]
            .iter()
            .map(|p| p.as_ref().expect("placed").node.as_str())
            .collect();
        assert_eq!(
            nodes,
            [
                "node-00001",
                "node-00002",
                "node-00003",
                "node-00005",
                "node-00006"
            ]
        );
        assert_eq!(gang.first_fit.len(), 64);
    }
}
