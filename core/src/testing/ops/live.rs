//! The operations of a scheduler following a live cluster (issue 33): nodes joining,
//! changing and leaving, DeviceClasses put and removed, and pods, claims and PodGroups
//! whose newer versions someone else wrote (another scheduler binding a pod or
//! allocating a claim, a user changing a gang's `minCount`) — their data, their draw
//! and their application, with what each tells the audit's scope:
//!
//! * a node relabelled, cordoned or retainted: the pods running there were placed
//!   under the old object, so they are judged as running ones (node affinity and
//!   taints are checked at placement); a gang with a member there may now span racks;
//! * a node's allocatable changed: running pods stay, and a node shrunk under them is
//!   over-committed (it may show less than nothing free);
//! * a node removed: its pods are deleted, their gangs may be below `minCount`; its
//!   slices withdrawn, claims placed before are judged as running ones;
//! * a DeviceClass changed or removed: claims allocated before keep their devices;
//! * a pod bound by someone else: its gang may be below `minCount` or span racks;
//! * a claim allocated by someone else: it may be held with no user yet;
//! * a gang's `minCount` raised: it may be below it.

use super::{
    Driver, MISSING_CLASS, NODE_KEYS, Op, Outcome, POOL_VALUES, PRIORITIES, Pick, SliceSpec,
    Source, draw_pick, node, node_effect, node_slice, node_tolerations,
};
use crate::alloc_prelude::*;
use crate::testing::generate::{DRIVER, GPU_CLASS, NAMESPACE, RACK_LABEL};
use crate::{
    AllocationOutcome, AllocationResult, AllocatorOptions, ClaimSource, DeviceClass, DeviceRequest,
    DeviceRequestAllocationResult, EvictionReport, ExactDeviceRequest, Node, Pod, PodGroup,
    Quantity, ResourceClaim, SchedulerError, SchedulingPolicy, Taint,
};

/// The label some pods select ([`PodSpec::pool`](super::PodSpec::pool)) and
/// [`NodeChange::Relabel`] sets.
pub(super) const POOL_LABEL: &str = "gangpack.dev/pool";

/// How many nodes an [`ClaimChange::Allocate`] tries, from the one it names.
const ALLOCATE_TRIES: u16 = 4;

/// Which node an [`Op::AddNode`] adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeJoin {
    /// A node removed earlier (index modulo them) coming back, with the starting
    /// node's object; a known node (a duplicate) when none was removed.
    Back(u16),
    /// A node never seen (`node-{k}`, the next `k`; its own rack label), up to
    /// [`Limits::max_extra_nodes`](super::Limits::max_extra_nodes) of them (past it,
    /// [`Driver::draw`] makes it `Back(0)`).
    Fresh,
    /// A known node by index (modulo them): a duplicate unless it was removed.
    Again(u16),
}

/// What an [`Op::UpdateNode`] changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeChange {
    /// The rack label set to `rack-{r}` (`r` modulo one more than the starting
    /// racks: sometimes a rack of its own) or removed (`None`); the pool label
    /// (`gangpack.dev/pool`, which some pods select) set to `a` / `b` (0 / 1) or
    /// removed.
    Relabel {
        /// The rack.
        rack: Option<u8>,
        /// The pool label's value.
        pool: Option<u8>,
    },
    /// Cordoned (`true`) or uncordoned, through [`Scheduler::cordon_node`](crate::Scheduler::cordon_node).
    Cordon(bool),
    /// Allocatable `cpu` set to `8 << (k % 5)` (8 to 128; the starting nodes have 64),
    /// but not under what the pods running there request (for now: see
    /// `core/tests/ops_regressions.rs`, `preemption_restores_reservations_on_an_over_committed_node`).
    Allocatable(u8),
    /// The node's taints of one key (as [`Op::TaintNode`]'s) replaced through the
    /// object: by one of this effect (as [`Op::TaintNode`]'s), or none.
    Taints {
        /// Key index.
        key: u8,
        /// The effect, or no taint of the key.
        effect: Option<u8>,
    },
    /// A pool label value Kubernetes refuses: refused.
    Invalid,
}

impl NodeChange {
    fn draw(src: &mut impl Source) -> NodeChange {
        match src.byte() % 16 {
            0..=4 => NodeChange::Relabel {
                rack: if src.chance(24) {
                    None
                } else {
                    Some(src.byte())
                },
                pool: if src.chance(160) {
                    Some(src.byte() % 2)
                } else {
                    None
                },
            },
            // Uncordons more often than it cordons: a quarter of the nodes touched stay
            // cordoned, not half.
            5..=7 => NodeChange::Cordon(src.chance(64)),
            8 | 9 => NodeChange::Allocatable(src.byte()),
            10..=13 => NodeChange::Taints {
                key: src.byte() % 2,
                effect: if src.chance(160) {
                    Some(src.byte() % 3)
                } else {
                    None
                },
            },
            _ => NodeChange::Invalid,
        }
    }
}

/// A DeviceClass as an [`Op::PutClass`] writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassSpec {
    /// [`GPU_CLASS`] (even) or the class `bad_class` claims name (odd).
    pub class: u8,
    /// Its selector, by `selector % 16`: 0–9 the driver's devices (as the starting
    /// class), 10–11 GPUs `gpu-0` and `gpu-1` only (`index < 2`), 12 no device, 13 one
    /// that fails on every device at run time (a missing attribute: the units using it
    /// fail), 14–15 one that does not compile (refused).
    pub selector: u8,
}

impl ClassSpec {
    fn name(self) -> &'static str {
        if self.class.is_multiple_of(2) {
            GPU_CLASS
        } else {
            MISSING_CLASS
        }
    }

    fn cel(self) -> String {
        let driver = format!("device.driver == \"{DRIVER}\"");
        match self.selector % 16 {
            0..=9 => driver,
            10 | 11 => format!("{driver} && device.attributes[\"{DRIVER}\"].index < 2"),
            12 => "device.driver == \"other.example.com\"".into(),
            13 => format!("device.attributes[\"{DRIVER}\"].missing == 1"),
            _ => "device.driver ==".into(),
        }
    }
}

/// What an [`Op::UpdatePod`] changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PodChange {
    /// Another scheduler bound the pod (`nodeName` set): on the node its allocated
    /// claims are for (`None`; the first node when nothing says), or on a node by
    /// index. A [`Pick::Idle`] picks among the pending pods whose claims are all
    /// allocated when there are any. Refused for a claim not allocated or allocated
    /// for another node, a node that is not there or too full, a bound pod moved.
    Bind(Option<u16>),
    /// Tolerations (as [`PodSpec::tolerations`](super::PodSpec::tolerations)) and
    /// priority (0, 10, 100) replaced, pending or bound.
    Retolerate {
        /// The tolerations.
        tolerations: u8,
        /// The priority.
        priority: u8,
    },
    /// `spec.schedulingGroup` set or cleared: refused (immutable).
    Regroup,
    /// `nodeName` set to a node by index, or cleared: refused for a bound pod (unless
    /// it names its node), a binding (or nothing) for a pending one.
    Move(Option<u16>),
}

/// What an [`Op::UpdateClaim`] changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimChange {
    /// Another scheduler allocated it: the allocator's answer on the first of a few
    /// nodes from this index that has one (the claim unchanged when none does: an
    /// update that changes nothing). A different allocation of an allocated claim is
    /// refused (immutable).
    Allocate(u16),
    /// `status.allocation` cleared: refused while a bound pod or its PodGroup uses it.
    Deallocate,
    /// An allocation that includes a device another claim holds (or one nobody
    /// publishes), after the allocator's answer on a node: refused, all or nothing.
    Steal(u16),
    /// The spec changed (a request added): refused (immutable).
    Respec,
}

/// Draws one of the live cluster's operations: `kind` is its index in
/// [`Limits::weights`](super::Limits::weights) (19 on).
pub(super) fn draw(kind: usize, src: &mut impl Source) -> Op {
    match kind {
        19 => Op::AddNode {
            join: match src.byte() {
                0..=179 => NodeJoin::Back(src.index()),
                180..=219 => NodeJoin::Fresh,
                _ => NodeJoin::Again(src.index()),
            },
            slice: src.chance(200),
        },
        20 => Op::UpdateNode {
            node: draw_pick(src),
            change: NodeChange::draw(src),
        },
        21 => Op::RemoveNode {
            node: draw_pick(src),
            slices: src.chance(64),
        },
        22 => Op::PutClass(ClassSpec {
            class: u8::from(src.chance(51)),
            selector: src.byte() % 16,
        }),
        23 => Op::RemoveClass(src.byte()),
        24 => match src.byte() % 8 {
            0..=3 => Op::UpdatePod {
                pod: draw_idle_pick(src),
                change: PodChange::Bind(if src.chance(200) {
                    None
                } else {
                    Some(src.index())
                }),
            },
            4 | 5 => Op::UpdatePod {
                pod: draw_pick(src),
                change: PodChange::Retolerate {
                    tolerations: src.byte() % 5,
                    priority: src.byte() % 3,
                },
            },
            6 => Op::UpdatePod {
                pod: draw_pick(src),
                change: PodChange::Regroup,
            },
            _ => Op::UpdatePod {
                pod: draw_pick(src),
                change: PodChange::Move(if src.chance(128) {
                    Some(src.index())
                } else {
                    None
                }),
            },
        },
        25 => match src.byte() % 8 {
            0..=3 => Op::UpdateClaim {
                claim: draw_idle_pick(src),
                change: ClaimChange::Allocate(src.index()),
            },
            4 | 5 => Op::UpdateClaim {
                claim: draw_pick(src),
                change: ClaimChange::Deallocate,
            },
            6 => Op::UpdateClaim {
                claim: draw_pick(src),
                change: ClaimChange::Steal(src.index()),
            },
            _ => Op::UpdateClaim {
                claim: draw_pick(src),
                change: ClaimChange::Respec,
            },
        },
        _ => Op::UpdateGroup {
            group: draw_pick(src),
            min_count: src.byte() % 4,
            priority: if src.chance(128) {
                Some(src.byte() % 3)
            } else {
                None
            },
        },
    }
}

/// Mostly one of the objects nothing uses yet (a pending pod, an unallocated claim:
/// what another scheduler binds or allocates), else any pick.
fn draw_idle_pick(src: &mut impl Source) -> Pick {
    if src.chance(230) {
        Pick::Idle(src.index())
    } else {
        draw_pick(src)
    }
}

fn evictions(r: Result<EvictionReport, SchedulerError>) -> Outcome {
    match r {
        Ok(r) => Outcome::Evictions(r),
        Err(e) => Outcome::Refused(e),
    }
}

/// The name part of `namespace/name`.
fn name_of(k: &str) -> &str {
    k.rsplit('/').next().unwrap_or(k)
}

impl Driver {
    /// Applies one of the live cluster's operations (see [`apply`](Self::apply)).
    pub(super) fn apply_live(&mut self, op: &Op) -> Outcome {
        match op {
            Op::AddNode { join, slice } => self.add_node(*join, *slice),
            Op::UpdateNode { node, change } => self.update_node(*node, *change),
            Op::RemoveNode { node, slices } => self.remove_node(*node, *slices),
            Op::PutClass(spec) => {
                let class = DeviceClass::with_cel(spec.name(), spec.cel());
                match self.sched.put_device_class(class) {
                    Ok(()) => {
                        // Allocated claims keep their devices, matched or not.
                        self.scope.placed_claims.clear();
                        Outcome::Applied
                    }
                    Err(e) => Outcome::Refused(e),
                }
            }
            Op::RemoveClass(c) => {
                let name = if c.is_multiple_of(4) {
                    GPU_CLASS
                } else {
                    MISSING_CLASS
                };
                match self.sched.remove_device_class(name) {
                    Ok(_) => {
                        self.scope.placed_claims.clear();
                        Outcome::Applied
                    }
                    Err(e) => Outcome::Refused(e),
                }
            }
            Op::UpdatePod { pod, change } => self.update_pod(*pod, *change),
            Op::UpdateClaim { claim, change } => self.update_claim(*claim, *change),
            Op::UpdateGroup {
                group,
                min_count,
                priority,
            } => {
                let k = self.pick_group(*group);
                let mut g = self.sched.group(&k).cloned().unwrap_or_else(|| {
                    PodGroup::new(NAMESPACE, name_of(&k), SchedulingPolicy::Basic)
                });
                g.policy = if *min_count == 0 {
                    SchedulingPolicy::Basic
                } else {
                    SchedulingPolicy::Gang {
                        min_count: u32::from(*min_count),
                    }
                };
                g.priority = priority.map(|p| PRIORITIES[usize::from(p) % 3]);
                match self.sched.update_group(g) {
                    Ok(()) => {
                        // A larger minCount than the running members: below it.
                        self.scope.broken_gangs.insert(k);
                        Outcome::Applied
                    }
                    Err(e) => Outcome::Refused(e),
                }
            }
            _ => unreachable!("not a live-cluster operation: {op:?}"),
        }
    }

    /// The pods bound to `node` now (`namespace/name`) and their PodGroups.
    fn running_on(&self, node: &str) -> (Vec<String>, BTreeSet<String>) {
        let mut pods = Vec::new();
        let mut groups = BTreeSet::new();
        for p in self.sched.pods() {
            if p.node_name.as_deref() != Some(node) {
                continue;
            }
            pods.push(format!("{}/{}", p.namespace, p.name));
            if let Some(g) = &p.scheduling_group {
                groups.insert(format!("{}/{g}", p.namespace));
            }
        }
        (pods, groups)
    }

    fn add_node(&mut self, join: NodeJoin, slice: bool) -> Outcome {
        let name = match join {
            NodeJoin::Back(i) => {
                let removed: Vec<&String> = self
                    .node_names
                    .iter()
                    .filter(|n| self.sched.cluster().node(n).is_none())
                    .collect();
                if removed.is_empty() {
                    self.node_name(i)
                } else {
                    removed[usize::from(i) % removed.len()].clone()
                }
            }
            NodeJoin::Fresh => format!("node-{}", self.node_names.len()),
            NodeJoin::Again(i) => self.node_name(i),
        };
        let k: u16 = name
            .strip_prefix("node-")
            .and_then(|k| k.parse().ok())
            .unwrap_or(0);
        let mut report = match self.sched.add_node(node(k, self.shape.nodes_per_rack)) {
            Ok(r) => r,
            Err(e) => return Outcome::Refused(e),
        };
        if !self.node_names.contains(&name) {
            self.node_names.push(name.clone());
        }
        let has_slice = self
            .sched
            .cluster()
            .slices()
            .any(|s| s.driver == DRIVER && s.pool.name == name);
        if slice && !has_slice && self.shape.gpus_per_node > 0 {
            let spec = SliceSpec {
                generation: 0,
                count: 1,
                gpus: self.shape.gpus_per_node,
                first: 0,
                taint: None,
            };
            let gpus = node_slice(&format!("{name}-gpus"), &name, &spec);
            // A valid slice of a pool with no slice left: nothing can refuse it.
            report = self
                .sched
                .add_slice(gpus)
                .unwrap_or_else(|e| panic!("a joining node's own slice was refused: {e}"));
        }
        Outcome::Evictions(report)
    }

    fn update_node(&mut self, pick: Pick, change: NodeChange) -> Outcome {
        let name = self.pick_node(pick);
        if let NodeChange::Cordon(cordoned) = change {
            return match self.sched.cordon_node(&name, cordoned) {
                Ok(()) => {
                    self.forget_pods_on(&name);
                    Outcome::Applied
                }
                Err(e) => Outcome::Refused(e),
            };
        }
        let mut node = self
            .sched
            .cluster()
            .node(&name)
            .cloned()
            .unwrap_or_else(|| Node::new(&name));
        match change {
            NodeChange::Relabel { rack, pool } => {
                let racks = self
                    .shape
                    .nodes
                    .max(1)
                    .div_ceil(self.shape.nodes_per_rack.max(1));
                match rack {
                    Some(r) => node.labels.insert(
                        RACK_LABEL.into(),
                        format!("rack-{}", u16::from(r) % (racks + 1)),
                    ),
                    None => node.labels.remove(RACK_LABEL),
                };
                match pool {
                    Some(v) => node
                        .labels
                        .insert(POOL_LABEL.into(), POOL_VALUES[usize::from(v) % 2].into()),
                    None => node.labels.remove(POOL_LABEL),
                };
            }
            NodeChange::Allocatable(k) => {
                // Possibly under what the pods running there request: they stay
                // (`preemption_restores_reservations_on_an_over_committed_node` in
                // core/tests/ops_regressions.rs is what this found).
                node.allocatable
                    .insert("cpu".into(), Quantity::from_int(8 << (k % 5)));
            }
            NodeChange::Taints { key, effect } => {
                let key = NODE_KEYS[usize::from(key) % 2];
                node.taints.retain(|t| t.key != key);
                if let Some(e) = effect {
                    node.taints.push(Taint::new(key, "true", node_effect(e)));
                }
            }
            NodeChange::Invalid => {
                node.labels
                    .insert(POOL_LABEL.into(), "not a label value!".into());
            }
            NodeChange::Cordon(_) => unreachable!("handled above"),
        }
        let r = self.sched.update_node(node);
        if r.is_ok() {
            match change {
                NodeChange::Relabel { .. } => {
                    let (_, groups) = self.running_on(&name);
                    self.scope.split_gangs.extend(groups);
                    self.forget_pods_on(&name);
                }
                // Perhaps over-committed now: the audit accepts less than nothing
                // free there (`AuditScope::resized_nodes`).
                NodeChange::Allocatable(_) => {
                    self.scope.resized_nodes.insert(name.clone());
                }
                _ => self.forget_pods_on(&name),
            }
        }
        evictions(r)
    }

    /// The node's object changed: the pods running there are judged as running ones.
    fn forget_pods_on(&mut self, node: &str) {
        let (pods, _) = self.running_on(node);
        for p in pods {
            self.scope.placed_pods.remove(&p);
        }
    }

    fn remove_node(&mut self, pick: Pick, slices: bool) -> Outcome {
        let name = self.pick_node(pick);
        let (_, groups) = self.running_on(&name);
        let removal = match self.sched.remove_node(&name) {
            Ok(r) => r,
            Err(e) => return Outcome::Refused(e),
        };
        for p in &removal.deleted_pods {
            self.scope.placed_pods.remove(p);
        }
        for g in groups {
            if self.sched.group(&g).is_some() {
                self.scope.broken_gangs.insert(g);
            }
        }
        if slices {
            let own: Vec<String> = self
                .sched
                .cluster()
                .slices()
                .filter(|s| s.node_name() == Some(name.as_str()))
                .map(|s| s.name.clone())
                .collect();
            for s in own {
                // A slice that is there can always be withdrawn.
                self.sched
                    .remove_slice(&s)
                    .unwrap_or_else(|e| panic!("removing slice {s} was refused: {e}"));
                self.extra_slices.remove(&s);
            }
            self.forget_placements();
        }
        Outcome::Evictions(removal.evictions)
    }

    /// A pending pod whose claims are all allocated (it names at least one), the
    /// `i % n`-th of them; else the `i % n`-th pending pod; else none.
    fn ready_pod(&self, i: u16) -> Option<String> {
        let pending: Vec<&Pod> = self
            .sched
            .pods()
            .filter(|p| p.node_name.is_none())
            .collect();
        let ready: Vec<&Pod> = pending
            .iter()
            .copied()
            .filter(|p| {
                let mut named = p.resource_claims.iter().filter_map(|e| match &e.source {
                    ClaimSource::ClaimName(n) => Some(format!("{}/{n}", p.namespace)),
                    ClaimSource::Template(_) => None,
                });
                let mut any = false;
                let all = named.all(|c| {
                    any = true;
                    self.sched.allocation(&c).is_some()
                });
                any && all
            })
            .collect();
        let from = if ready.is_empty() { pending } else { ready };
        (!from.is_empty()).then(|| {
            let p = from[usize::from(i) % from.len()];
            format!("{}/{}", p.namespace, p.name)
        })
    }

    /// The first node (by name) where every allocated claim `pod` names may be used.
    fn claims_node(&self, pod: &Pod) -> Option<String> {
        let selectors: Vec<&crate::NodeSelector> = pod
            .resource_claims
            .iter()
            .filter_map(|e| match &e.source {
                ClaimSource::ClaimName(n) => self
                    .sched
                    .allocation(&format!("{}/{n}", pod.namespace))?
                    .node_selector
                    .as_ref(),
                ClaimSource::Template(_) => None,
            })
            .collect();
        self.sched
            .cluster()
            .nodes()
            .find(|n| selectors.iter().all(|s| s.matches(&n.name, &n.labels)))
            .map(|n| n.name.clone())
    }

    fn update_pod(&mut self, pick: Pick, change: PodChange) -> Outcome {
        let k = match (pick, change) {
            (Pick::Idle(i), PodChange::Bind(_)) => self
                .ready_pod(i)
                .unwrap_or_else(|| format!("{NAMESPACE}/no-such-pod-{i}")),
            _ => self.pick_pod(pick),
        };
        let Some(old) = self.sched.pod(&k).cloned() else {
            let mut pod = Pod::new(NAMESPACE, name_of(&k));
            pod.node_name = Some(self.node_name(0));
            return evictions(self.sched.update_pod(pod));
        };
        let mut pod = old.clone();
        match change {
            PodChange::Bind(node) => {
                let node = match node {
                    Some(i) => self.node_name(i),
                    None => self.claims_node(&pod).unwrap_or_else(|| self.node_name(0)),
                };
                pod.node_name = Some(node);
            }
            PodChange::Retolerate {
                tolerations,
                priority,
            } => {
                pod.tolerations = node_tolerations(tolerations);
                pod.priority = PRIORITIES[usize::from(priority) % 3];
            }
            PodChange::Regroup => {
                pod.scheduling_group = match pod.scheduling_group {
                    Some(_) => None,
                    None => Some("no-such-group".into()),
                };
            }
            PodChange::Move(node) => pod.node_name = node.map(|i| self.node_name(i)),
        }
        let bound_now = old.node_name.is_none() && pod.node_name.is_some();
        let group = pod
            .scheduling_group
            .as_ref()
            .map(|g| format!("{}/{g}", pod.namespace));
        let r = self.sched.update_pod(pod);
        if r.is_ok() {
            // Placed under other tolerations, or by someone else: a running pod now.
            self.scope.placed_pods.remove(&k);
            if bound_now && let Some(g) = group.filter(|g| self.sched.group(g).is_some()) {
                self.scope.broken_gangs.insert(g.clone());
                self.scope.split_gangs.insert(g);
            }
        }
        evictions(r)
    }

    fn update_claim(&mut self, pick: Pick, change: ClaimChange) -> Outcome {
        let k = self.pick_claim(pick);
        let Some(old) = self
            .sched
            .claims()
            .find(|c| format!("{}/{}", c.namespace, c.name) == k)
            .cloned()
        else {
            let claim = ResourceClaim::new(NAMESPACE, name_of(&k));
            return match self.sched.update_claim(claim) {
                Ok(()) => Outcome::Applied,
                Err(e) => Outcome::Refused(e),
            };
        };
        let mut claim = old.clone();
        match change {
            ClaimChange::Allocate(i) => {
                if let Some(a) = self.allocate_from(&old, i) {
                    claim.allocation = Some(a);
                }
            }
            ClaimChange::Deallocate => claim.allocation = None,
            ClaimChange::Steal(i) => {
                let mut a = self.allocate_from(&old, i).unwrap_or(AllocationResult {
                    devices: Vec::new(),
                    config: Vec::new(),
                    node_selector: None,
                });
                let held = self
                    .sched
                    .claims()
                    .filter(|c| c.name != old.name || c.namespace != old.namespace)
                    .find_map(|c| c.allocation.as_ref()?.devices.first().cloned());
                let request = old
                    .spec
                    .requests
                    .first()
                    .map_or_else(|| "gpu".into(), |r| r.name.clone());
                a.devices.push(DeviceRequestAllocationResult {
                    request,
                    ..held.unwrap_or_else(|| DeviceRequestAllocationResult {
                        driver: DRIVER.into(),
                        pool: "no-such-pool".into(),
                        device: "gpu-0".into(),
                        ..DeviceRequestAllocationResult::default()
                    })
                });
                claim.allocation = Some(a);
            }
            ClaimChange::Respec => {
                claim.spec.requests.push(DeviceRequest::exactly(
                    "extra",
                    ExactDeviceRequest::new(GPU_CLASS),
                ));
            }
        }
        let allocated_now = old.allocation.is_none() && claim.allocation.is_some();
        match self.sched.update_claim(claim) {
            Ok(()) => {
                if allocated_now {
                    self.scope.foreign_claims.insert(k);
                }
                Outcome::Applied
            }
            Err(e) => Outcome::Refused(e),
        }
    }

    /// What another scheduler would allocate `claim` on: the allocator's first answer
    /// on the nodes from `i` on (a few of them).
    fn allocate_from(&self, claim: &ResourceClaim, i: u16) -> Option<AllocationResult> {
        let c = self.sched.cluster();
        let claims = [ResourceClaim {
            allocation: None,
            ..claim.clone()
        }];
        let tries = ALLOCATE_TRIES.min(u16::try_from(self.node_names.len()).unwrap_or(1));
        (0..tries).find_map(|t| {
            let node = self.node_name(i.wrapping_add(t));
            match c.allocate_claims(
                &node,
                &claims,
                &BTreeMap::new(),
                &AllocatorOptions::default(),
            ) {
                Ok(AllocationOutcome::Allocated(mut v)) if !v.is_empty() => Some(v.remove(0)),
                _ => None,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_selectors_compile_as_documented() {
        for selector in 0..16 {
            let spec = ClassSpec { class: 0, selector };
            let compiles = crate::Selector::compile(&spec.cel()).is_ok();
            assert_eq!(compiles, selector < 14, "{selector}: {}", spec.cel());
        }
    }
}
