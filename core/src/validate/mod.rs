//! An independent validator for placement decisions: given the cluster *before* a
//! decision, the gang, its pods and their claims, [`validate_placement`] re-checks every
//! invariant a placement must keep and lists what is broken.
//!
//! The validator shares no code with the allocator: it never calls
//! [`Cluster::allocate_claims`] or its helpers, and recomputes every rule from the
//! objects with plain loops (selectors are evaluated with [`Selector`](crate::Selector), taints with the
//! public toleration matchers, and a share's consumption with
//! [`consumed_capacity`](crate::consumed_capacity()), the capacity policy arithmetic). It
//! is meant for tests and fuzzing of the gang placer, and as a safety net before a
//! decision is committed.
//!
//! Layer: the independent judge. It reads the model, the CEL evaluator and the cluster
//! (its queries over the index) and nothing else: not the allocator, not the placer, not
//! the scheduler (`core/tests/layering.rs` enforces it). One file per rule family:
//!
//! | file | rules |
//! | --- | --- |
//! | `mod.rs` | [`validate_placement`]; bindings name known pods and nodes, once each, members of the group |
//! | `gang.rs` | all or nothing, `minCount`, the topology constraint |
//! | `nodes.rs` | node selector, affinity, taints and cordon; scalar resources per node |
//! | `claims.rs` | each claim allocated exactly once and usable from its users' nodes; results against requests |
//! | `devices.rs` | device existence, reach, selectors, capacity, taints, `All`, constraints; exclusivity, shared capacity and counters |
//! | `violation.rs` | [`Violation`] and [`Holder`]: the findings and their wording |

mod claims;
mod devices;
mod gang;
mod nodes;
mod violation;

pub use violation::{Holder, Subject, Violation};

use crate::Node;
use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::model::claim::ResourceClaim;
use crate::model::decision::PlacementDecision;
use crate::model::workload::{Pod, PodGroup};

use claims::{Env, check_claims};
use gang::{check_gang, check_topology};
use nodes::{check_node_fit, check_node_resources};

/// Checks a placement decision against the cluster as it is **before** the decision
/// (committed allocations and node reservations included) and returns every broken
/// invariant; empty means valid.
///
/// `group` is the PodGroup being placed (`None` for pods without a group), `pods` the
/// pods the placer was given (members already running included, with `node_name` set),
/// `claims` every ResourceClaim they or the group reference by name. Findings come in a
/// deterministic order: bindings, gang, node resources, topology, claims, devices,
/// sharing.
///
/// The rules:
///
/// 1. **Gang.** Every bound pod is one of `pods`, bound once, a member of `group`; a pod
///    with `node_name` set is not bound elsewhere (binding it again to its own node is
///    a no-op: no node checks, no resources charged). With a gang policy, if any pod
///    is newly bound, the members bound afterwards (running ones included) number at
///    least `minCount`.
/// 2. **Nodes.** The node exists and is schedulable; the pod's `nodeSelector` and
///    required affinity match ([`Pod::fits_node`]); every `NoSchedule` / `NoExecute`
///    taint is tolerated; per node, the requests of the pods newly bound there (plus
///    `pods: 1` each when the node advertises `pods`) fit in
///    [`Cluster::node_free_resources`] (a resource the node lacks has nothing free).
/// 3. **Topology.** For each topology key of the group, every bound pod's node has the
///    label, and the bound and running members share one value.
/// 4. **Claims.** A claim a bound pod references by `resourceClaimName` (and that is
///    not the group's, see [`PodGroup::group_claim_for`]) has exactly one allocation,
///    in the binding of a pod that references it, unless it is allocated already — in
///    the cluster, or by its `status.allocation` — (then none); the group's claims, once any pod is bound, likewise
///    in `group_claims`. A group claim binds only the members that name it with the
///    group's entry (KEP-5729): it is required when a bound member names it; a group
///    claim that only pending members left unbound name may stay unallocated (the
///    first of them to be scheduled allocates it, as upstream allocates a claim with
///    the first pod that references it), and an allocation of it in `group_claims` is
///    checked all the same. A group claim no member names with the group's entry is
///    not the group's: pods naming the same ResourceClaim under another entry use it
///    as their own claim, allocated in one of their bindings. Every allocation is checked against the node of every pod
///    using the claim (for a group claim, the bound members that name it): devices reachable
///    ([`Cluster::devices_reachable_from`]), `nodeSelector` matching. Its results name
///    requests of the claim (one subrequest per `firstAvailable` request, every request
///    served); `ExactCount` counts match; `All` results include every usable device the
///    node reaches that the class, the request selectors and the capacity admit (and no
///    reachable pool is incomplete); each device exists, is usable, matches the class
///    and request selectors, has no untolerated `NoSchedule` / `NoExecute` taint
///    ([`Cluster::device_taints`]), and serves the capacity requests; the result copies
///    the request's tolerations and admin access. Claims allocated in the cluster
///    already must have their devices reachable from their users' nodes, and a claim
///    allocated already that a bound pod names (a group claim: that a bound member
///    names; other members are not bound by it) may not hold a device with a
///    `NoExecute` taint its allocation does not tolerate.
/// 5. **Sharing.** A device without `allowMultipleAllocations` is allocated at most once
///    (not for admin access) across the decision and the cluster's holders; admin
///    results do not repeat a device within a claim. Each share of a shareable device
///    has a unique share id and lists every capacity at the amount its request policy
///    gives; committed plus new shares fit every capacity. Per pool, the shared
///    counters left ([`Cluster::counters_available`]) minus what the newly allocated
///    counter-consuming devices use (a device once, however many shares) stay
///    non-negative for **every** counter of the pool (upstream's rule).
/// 6. **Constraints.** `matchAttribute`: the devices in scope
///    ([`DeviceConstraint::applies_to`](crate::DeviceConstraint::applies_to)) have the
///    attribute and a common value (list attributes intersect); `distinctAttribute`:
///    pairwise disjoint values. Attributes are looked up by qualified name, then by the
///    bare name when the domain is the device's driver.
///
/// Not checked: claims from `resourceClaimTemplateName` (their generated names are not
/// known here; allocations in the binding of a pod, or in the group claims of a group,
/// that has template claims are accepted and checked on their own), the result's
/// `config` and binding conditions, and claims allocated in the cluster that hold no
/// device.
///
/// ```
/// use gangpack::{Cluster, Node, PlacementDecision, Pod, PodBinding, Quantity, Violation};
/// use gangpack::validate_placement;
///
/// let mut cluster = Cluster::new();
/// cluster.add_node(Node::new("n1").with_allocatable("cpu", Quantity::from_int(4)))?;
/// let mut pod = Pod::new("team-a", "worker-0");
/// pod.requests.insert("cpu".into(), Quantity::from_int(2));
///
/// let bind = |node: &str| PlacementDecision {
///     bindings: vec![PodBinding {
///         pod: "team-a/worker-0".into(),
///         node: node.into(),
///         claims: vec![],
///     }],
///     group_claims: vec![],
/// };
/// assert!(validate_placement(&cluster, None, &[pod.clone()], &[], &bind("n1")).is_empty());
///
/// let found = validate_placement(&cluster, None, &[pod], &[], &bind("n2"));
/// assert_eq!(
///     found,
///     [Violation::UnknownNode { pod: "team-a/worker-0".into(), node: "n2".into() }]
/// );
/// assert_eq!(found[0].to_string(), "pod team-a/worker-0: node n2 does not exist");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn validate_placement(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
    decision: &PlacementDecision,
) -> Vec<Violation> {
    let mut out = Vec::new();
    let pod_index: BTreeMap<String, &Pod> = pods
        .iter()
        .map(|p| (key(&p.namespace, &p.name), p))
        .collect();
    let claim_index: BTreeMap<String, &ResourceClaim> = claims
        .iter()
        .map(|c| (key(&c.namespace, &c.name), c))
        .collect();
    let bound = check_bindings(cluster, group, &pod_index, decision, &mut out);
    check_gang(group, pods, &bound, &mut out);
    check_node_resources(cluster, &bound, &mut out);
    check_topology(cluster, group, pods, &bound, &mut out);
    let env = Env::new(cluster, decision, &claim_index);
    check_claims(&env, group, pods, &claim_index, &bound, decision, &mut out);
    out
}

/// The gang rules alone — `minCount` (rule 1) and the topology constraint (rule 3) —
/// for a group's members as they are bound **now** (`node_name` set), as a checker of
/// a running cluster needs them: [`validate_placement`] judges one decision against
/// the state before it, where these rules are judged on the state as it is.
///
/// With a gang policy, if any member is bound, the bound members number at least
/// `minCount` ([`Violation::BelowMinCount`]); for each topology key, every bound
/// member's node has the label ([`Violation::TopologyLabelMissing`]) and they share
/// one value ([`Violation::TopologySplit`]). Pods that are not members of `group`
/// are ignored; a member bound to a node that does not exist counts as bound and is
/// left out of the topology check.
///
/// ```
/// use gangpack::{Cluster, Node, Pod, PodGroup, SchedulingPolicy, Violation, validate_gang};
///
/// let mut cluster = Cluster::new();
/// cluster.add_node(Node::new("n1"))?;
/// let group = PodGroup::new("ml", "train", SchedulingPolicy::Gang { min_count: 2 });
/// let mut pod = Pod::new("ml", "train-0");
/// pod.scheduling_group = Some("train".into());
/// pod.node_name = Some("n1".into());
/// let pending = Pod { name: "train-1".into(), node_name: None, ..pod.clone() };
/// assert_eq!(
///     validate_gang(&cluster, &group, &[pod, pending]),
///     [Violation::BelowMinCount { group: "ml/train".into(), bound: 1, min_count: 2 }]
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn validate_gang(cluster: &Cluster, group: &PodGroup, pods: &[Pod]) -> Vec<Violation> {
    let keys: Vec<String> = pods.iter().map(|p| key(&p.namespace, &p.name)).collect();
    let bound: Vec<Bound<'_>> = pods
        .iter()
        .zip(&keys)
        .filter(|(p, _)| is_member(p, group))
        .filter_map(|(p, k)| {
            let node_name = p.node_name.as_deref()?;
            Some(Bound {
                pod: p,
                key: k,
                node_name,
                node: cluster.node(node_name),
                new: true,
                member: true,
            })
        })
        .collect();
    let mut out = Vec::new();
    check_gang(Some(group), pods, &bound, &mut out);
    check_topology(cluster, Some(group), pods, &bound, &mut out);
    out
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn is_member(pod: &Pod, group: &PodGroup) -> bool {
    pod.namespace == group.namespace && pod.scheduling_group.as_deref() == Some(&group.name)
}

/// One accepted binding (known pod, first binding of it).
struct Bound<'a> {
    pod: &'a Pod,
    key: &'a str,
    node_name: &'a str,
    node: Option<&'a Node>,
    /// Not a repeat of the pod's existing binding.
    new: bool,
    member: bool,
}

fn check_bindings<'a>(
    cluster: &'a Cluster,
    group: Option<&PodGroup>,
    pods: &BTreeMap<String, &'a Pod>,
    decision: &'a PlacementDecision,
    out: &mut Vec<Violation>,
) -> Vec<Bound<'a>> {
    let mut seen = BTreeSet::new();
    let mut bound = Vec::new();
    for b in &decision.bindings {
        if !seen.insert(b.pod.as_str()) {
            out.push(Violation::PodBoundTwice { pod: b.pod.clone() });
            continue;
        }
        let Some(&pod) = pods.get(&b.pod) else {
            out.push(Violation::UnknownPod { pod: b.pod.clone() });
            continue;
        };
        let member = group.is_none_or(|g| is_member(pod, g));
        if let Some(g) = group
            && !member
        {
            out.push(Violation::NotInGroup {
                pod: b.pod.clone(),
                group: key(&g.namespace, &g.name),
            });
        }
        let mut new = true;
        if let Some(at) = &pod.node_name {
            if *at == b.node {
                new = false;
            } else {
                out.push(Violation::AlreadyBound {
                    pod: b.pod.clone(),
                    bound_to: at.clone(),
                    node: b.node.clone(),
                });
            }
        }
        let node = cluster.node(&b.node);
        match node {
            None => out.push(Violation::UnknownNode {
                pod: b.pod.clone(),
                node: b.node.clone(),
            }),
            Some(n) if new => check_node_fit(pod, &b.pod, n, out),
            Some(_) => {}
        }
        bound.push(Bound {
            pod,
            key: &b.pod,
            node_name: &b.node,
            node,
            new,
            member,
        });
    }
    bound
}
