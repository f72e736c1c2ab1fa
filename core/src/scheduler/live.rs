//! Following a live cluster: every object kind the scheduler holds can be added,
//! changed and removed after it was built, as a controller's informers report them.
//!
//! Each operation checks everything first and changes nothing when it refuses (an
//! error naming the object and field); it costs what it touches, not a rebuild.
//! What Kubernetes' own controllers would do follows the change, and nothing else:
//!
//! * a Node removed: the pods bound to it are deleted (the pod garbage collector's
//!   `PodGC` deletes pods bound to a node that no longer exists) and their claims are
//!   released when no user is left; its node-local ResourceSlices stay until the driver
//!   or the garbage collector removes them ([`remove_slice`](Scheduler::remove_slice)),
//!   unreachable;
//! * a Node changed: labels, taints, allocatable and `spec.unschedulable` replaced;
//!   running pods stay (node affinity is `IgnoredDuringExecution`); a new `NoExecute`
//!   taint starts the eviction of the pods that do not tolerate it. Node conditions and
//!   the taints the node lifecycle controller derives from them are input: the
//!   scheduler never invents them;
//! * a DeviceClass added or changed: its selectors are compiled again; allocated
//!   claims keep their allocation (upstream checks a class only when allocating); one
//!   removed: pending claims naming it wait for it;
//! * a pod bound by another scheduler ([`update_pod`](Scheduler::update_pod) with
//!   `nodeName` set): its requests are reserved and it adopts its allocated claims, as
//!   if it had been bound here; a pod that `Succeeded` or `Failed` holds nothing any
//!   more: [`remove_pod`](Scheduler::remove_pod) it (its claims are released when no
//!   user is left, as the resourceclaim controller clears `reservedFor`);
//! * a ResourceClaim allocated by someone else ([`update_claim`](Scheduler::update_claim)
//!   with `status.allocation`): its devices are held from then on;
//! * a PodGroup changed ([`update_group`](Scheduler::update_group)): `minCount`
//!   (mutable in 1.37) and the rest of its spec apply from the next cycle; running
//!   members stay.
//!
//! ResourceSlices ([`add_slice`](Scheduler::add_slice),
//! [`replace_slice`](Scheduler::replace_slice), [`remove_slice`](Scheduler::remove_slice):
//! the newest generation of a pool wins, an incomplete pool is not allocated from),
//! DeviceTaintRules, node and device taints have their operations beside eviction.

use super::{EvictionReport, Scheduler, SchedulerError, key};
use crate::alloc_prelude::*;
use crate::cluster::ClusterError;
use crate::model::claim::ResourceClaim;
use crate::model::class::DeviceClass;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
use crate::model::node::Node;
use crate::model::workload::{Pod, PodGroup, PriorityClass};

/// What removing a Node did ([`Scheduler::remove_node`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRemoval {
    /// The node as it was.
    pub node: Node,
    /// The pods that were bound to it, deleted with it (`namespace/name`, sorted).
    pub deleted_pods: Vec<String>,
    /// How the eviction schedule changed.
    pub evictions: EvictionReport,
}

fn not_found(kind: ObjectKind, name: &str) -> SchedulerError {
    SchedulerError::Cluster(ClusterError::NotFound(ObjectRef::cluster(kind, name)))
}

fn invalid(object: ObjectRef, field: &str, reason: &'static str, value: String) -> SchedulerError {
    SchedulerError::Invalid(vec![ValidationError::new(
        object,
        field,
        Problem::Invalid { value, reason },
    )])
}

impl Scheduler {
    // ------------------------------------------------------------------ nodes

    /// Adds a Node (a new machine joining). Fails, changing nothing, if it is invalid
    /// or a node of that name exists.
    pub fn add_node(&mut self, node: Node) -> Result<EvictionReport, SchedulerError> {
        let name = node.name.clone();
        self.cluster.add_node(node)?;
        self.reindex_node_taints(&name);
        Ok(self.refresh_evictions())
    }

    /// Replaces a Node: its labels, taints, allocatable resources and
    /// `spec.unschedulable` (cordon), keeping its devices and the pods bound to it.
    /// Pods no longer tolerating a `NoExecute` taint are scheduled for eviction (the
    /// report says when). Fails, changing nothing, if it is invalid or not there.
    pub fn update_node(&mut self, node: Node) -> Result<EvictionReport, SchedulerError> {
        let name = node.name.clone();
        self.cluster.replace_node(node)?;
        self.reindex_node_taints(&name);
        Ok(self.refresh_evictions())
    }

    /// Cordons (`true`) or uncordons a node, as `kubectl cordon` / `uncordon` do.
    pub fn cordon_node(&mut self, name: &str, cordoned: bool) -> Result<(), SchedulerError> {
        let mut node = self
            .cluster
            .node(name)
            .cloned()
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        node.unschedulable = cordoned;
        self.cluster.replace_node(node)?;
        Ok(())
    }

    /// Removes a Node. The pods bound to it are deleted with it (upstream's pod
    /// garbage collection), releasing their claims when no user is left; pending pods
    /// are untouched. Fails, changing nothing, if there is no such node.
    pub fn remove_node(&mut self, name: &str) -> Result<NodeRemoval, SchedulerError> {
        if self.cluster.node(name).is_none() {
            return Err(not_found(ObjectKind::Node, name));
        }
        let pods: Vec<String> = self
            .index
            .node_pods
            .get(name)
            .into_iter()
            .flatten()
            .map(|p| String::from(&**p))
            .collect();
        for p in &pods {
            self.remove_pod_quietly(p)?;
        }
        let node = self.cluster.remove_node(name)?;
        self.index.no_execute_nodes.remove(name);
        Ok(NodeRemoval {
            node,
            deleted_pods: pods,
            evictions: self.refresh_evictions(),
        })
    }

    // ---------------------------------------------------------------- classes

    /// Adds or replaces a DeviceClass: its selectors are compiled (an expression that
    /// does not compile is an error naming it, and nothing changes). Claims allocated
    /// already keep their allocation; pending ones are allocated with the new class.
    pub fn put_device_class(&mut self, class: DeviceClass) -> Result<(), SchedulerError> {
        self.cluster.put_class(class)?;
        Ok(())
    }

    /// Removes a DeviceClass. Allocated claims keep their devices; pending claims
    /// naming it cannot be allocated until it is back (their units stay pending, and
    /// the explanation says the class is missing).
    pub fn remove_device_class(&mut self, name: &str) -> Result<DeviceClass, SchedulerError> {
        Ok(self.cluster.remove_class(name)?)
    }

    /// Removes a PriorityClass. As upstream, the priorities already resolved (set by
    /// admission on pods and PodGroups) do not change; later PodGroups naming it are
    /// refused until it is back.
    pub fn remove_priority_class(&mut self, name: &str) -> Result<PriorityClass, SchedulerError> {
        let Some(at) = self.classes.iter().position(|c| c.name == name) else {
            return Err(not_found(ObjectKind::PriorityClass, name));
        };
        Ok(self.classes.remove(at))
    }

    // ------------------------------------------------------------------- pods

    /// Replaces a pod with a newer version of it. What can change, as upstream allows:
    ///
    /// * a pending pod gets `nodeName` (another scheduler bound it): its requests are
    ///   reserved on the node and it adopts its allocated claims (which must be
    ///   allocated, as for [`add_pod`](Self::add_pod));
    /// * a pending pod's other fields (tolerations, priority, ...) are replaced;
    /// * a bound pod's fields other than `nodeName` (added tolerations, ...) are
    ///   replaced; its reservation and claims stay.
    ///
    /// Refused, changing nothing: a pod that is not there, a bound pod whose
    /// `nodeName` changes or is cleared (`spec.nodeName` is immutable once set), a
    /// changed `spec.schedulingGroup` (immutable), an invalid pod.
    pub fn update_pod(&mut self, pod: Pod) -> Result<EvictionReport, SchedulerError> {
        pod.validate().map_err(SchedulerError::Invalid)?;
        let k = key(&pod.namespace, &pod.name);
        let Some(old) = self.pods.get(&k) else {
            return Err(not_found(ObjectKind::Pod, &k));
        };
        if old.scheduling_group != pod.scheduling_group {
            return Err(invalid(
                pod.object_ref(),
                "spec.schedulingGroup",
                "field is immutable",
                pod.scheduling_group.clone().unwrap_or_default(),
            ));
        }
        match (&old.node_name, &pod.node_name) {
            (Some(a), b) if b.as_ref() != Some(a) => {
                return Err(invalid(
                    pod.object_ref(),
                    "spec.nodeName",
                    "field is immutable once set",
                    b.clone().unwrap_or_default(),
                ));
            }
            (Some(_), _) => {
                // Bound, same node: the object only. The priority counts follow.
                let before = old.priority;
                super::count_out(&mut self.pod_priorities, before);
                super::count_in(&mut self.pod_priorities, pod.priority);
                self.pods.insert(k, pod);
            }
            (None, _) => {
                // Pending: out and in again, put back as it was if the new one is
                // refused (a pending pod holds nothing, so this is exact).
                let old = self.pods.get(&k).cloned().expect("checked above");
                self.remove_pod_quietly(&k)?;
                if let Err(e) = self.add_pod(pod) {
                    self.add_pod(old)
                        .expect("a pending pod that was there goes back");
                    return Err(e);
                }
            }
        }
        Ok(self.refresh_evictions())
    }

    // ----------------------------------------------------------------- claims

    /// Replaces a ResourceClaim with a newer version of it. Its spec is immutable (a
    /// changed spec is refused); its `status.allocation` may be:
    ///
    /// * set where it was not (another scheduler allocated it): the devices are held
    ///   for it from now on (refused, changing nothing, if one is not published or
    ///   cannot be held);
    /// * cleared, when no bound pod and no PodGroup holds it (a claim in use keeps its
    ///   allocation until its users are gone, as upstream's `reservedFor` does);
    /// * left as it was.
    ///
    /// A different allocation replacing an existing one is refused (upstream's
    /// allocation is immutable once set; deallocate first).
    pub fn update_claim(&mut self, claim: ResourceClaim) -> Result<(), SchedulerError> {
        claim.validate().map_err(SchedulerError::Invalid)?;
        let k = key(&claim.namespace, &claim.name);
        let Some(old) = self.claims.get(&k) else {
            return Err(not_found(ObjectKind::ResourceClaim, &k));
        };
        if old.spec != claim.spec {
            return Err(invalid(
                claim.object_ref(),
                "spec",
                "field is immutable",
                String::new(),
            ));
        }
        match (&old.allocation, &claim.allocation) {
            (None, None) => {}
            (Some(a), Some(b)) if a == b => {}
            (None, Some(b)) => {
                self.cluster.commit_allocation(&k, b)?;
            }
            (Some(a), None) => {
                let in_use = self.index.claim_users.contains_key(k.as_str())
                    || self.group_claims.values().flatten().any(|c| c.claim == k)
                    || self
                        .bound
                        .values()
                        .any(|b| b.claims.iter().any(|c| c.claim == k));
                if in_use {
                    return Err(invalid(
                        claim.object_ref(),
                        "status.allocation",
                        "the claim is in use by a bound pod or its PodGroup; release its users first",
                        String::new(),
                    ));
                }
                let a = a.clone();
                self.cluster.release_allocation(&k, &a);
            }
            (Some(_), Some(_)) => {
                return Err(invalid(
                    claim.object_ref(),
                    "status.allocation",
                    "an allocation is immutable once set; deallocate first",
                    String::new(),
                ));
            }
        }
        self.claims.insert(k, claim);
        Ok(())
    }

    // ----------------------------------------------------------------- groups

    /// Replaces a PodGroup with a newer version of it: `minCount` (mutable in 1.37) and
    /// the rest of its spec apply from the next cycle; its members and what they hold
    /// stay. Its priority, when unset, stays the one resolved when it was added (as
    /// admission resolved it once). Refused, changing nothing: a group that is not
    /// there, an invalid one.
    pub fn update_group(&mut self, mut group: PodGroup) -> Result<(), SchedulerError> {
        group.validate().map_err(SchedulerError::Invalid)?;
        let k = key(&group.namespace, &group.name);
        let Some(old) = self.groups.get(&k) else {
            return Err(not_found(ObjectKind::PodGroup, &k));
        };
        if group.priority.is_none() {
            group.priority = old.priority;
            if group.preemption_policy.is_none() {
                group.preemption_policy = old.preemption_policy;
            }
        }
        super::count_out(&mut self.group_priorities, old.effective_priority());
        super::count_in(&mut self.group_priorities, group.effective_priority());
        self.groups.insert(k, group);
        Ok(())
    }
}
