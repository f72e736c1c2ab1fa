//! Gang placement, first version: all-or-nothing placement of a PodGroup's pods with
//! backtracking across pods, nodes and device choices.
//!
//! [`Cluster::place_gang`] places the pending pods of one PodGroup (or standalone
//! pods) against one snapshot and returns a [`PlacementDecision`] — every binding and
//! claim allocation — or why not, without changing the cluster. The search works on a
//! scratch copy of the cluster: each step allocates one pod's claims on one node with
//! the claim allocator (which is all-or-nothing per pod and node), records the result,
//! and undoes it on backtrack.
//!
//! What this version does: a gang's first `minCount` pending pods (minus pods already
//! running) are placed jointly with backtracking, the rest opportunistically; pods of
//! one shape are placed in non-decreasing node order (no permutations of identical
//! pods); a topology constraint tries each domain (node-label value) in turn, only the
//! one of already running pods if any; PodGroup-level claims are allocated with the
//! first pod and must be usable from every later pod's node; a step budget bounds the
//! search. Scoring policies, count-based pruning and structured explanations come next
//! (see `docs/ARCHITECTURE.md`).

use core::fmt;

use crate::alloc_prelude::*;
use crate::allocator::{AllocationError, AllocationOutcome, AllocatorOptions, PreparedClaims};
use crate::claim::ResourceClaim;
use crate::cluster::Cluster;
use crate::scoring::ScoringPolicy;
use crate::toleration::first_untolerated_taint;
use crate::validate::{ClaimAllocation, PlacementDecision, PodBinding};
use crate::workload::{ClaimSource, Pod, PodGroup};
use crate::{Node, Quantity, TaintEffect};

/// Options of one gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct GangOptions {
    /// Pod-on-node allocation attempts before giving up.
    pub step_budget: u64,
    /// How to choose among feasible nodes and domains.
    pub policy: ScoringPolicy,
    /// Place only on nodes whose label `key` has value `value`, for every `(key, value)`
    /// given, as the topology constraints of enclosing CompositePodGroups ask of their
    /// children.
    pub within: Vec<(String, String)>,
}

impl Default for GangOptions {
    fn default() -> GangOptions {
        GangOptions {
            step_budget: 100_000,
            policy: ScoringPolicy::BestFit,
            within: Vec::new(),
        }
    }
}

/// The outcome of a gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum GangOutcome {
    /// Where the pods go and what their claims get.
    Placed(PlacementDecision),
    /// No placement of the required pods exists.
    Unschedulable {
        /// Pending pods that must be placed together.
        required: usize,
        /// The most of them any attempt placed.
        best: usize,
    },
    /// The step budget ran out first.
    BudgetExhausted {
        /// Steps taken.
        steps: u64,
    },
}

/// Invalid input for a gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GangError {
    /// A pod or the group names a claim that is not among the claims given.
    MissingClaim {
        /// The pod (`namespace/name`) or group.
        owner: String,
        /// The claim (`namespace/name`).
        claim: String,
    },
    /// A claim comes from a ResourceClaimTemplate; instantiate it first.
    TemplateClaim {
        /// The pod or group.
        owner: String,
        /// The template name.
        template: String,
    },
    /// The claims of a pod cannot be prepared (invalid claim, missing class, CEL).
    Allocation(AllocationError),
}

impl fmt::Display for GangError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GangError::MissingClaim { owner, claim } => {
                write!(f, "{owner}: ResourceClaim \"{claim}\" not found")
            }
            GangError::TemplateClaim { owner, template } => write!(
                f,
                "{owner}: claim template \"{template}\" must be instantiated before placement"
            ),
            GangError::Allocation(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for GangError {}

impl From<AllocationError> for GangError {
    fn from(e: AllocationError) -> GangError {
        GangError::Allocation(e)
    }
}

/// One pending pod, ready for the search.
struct PendingPod<'a> {
    pod: &'a Pod,
    key: String,
    /// Its own claims (`namespace/name`, claim), in pod order.
    claims: Vec<(String, &'a ResourceClaim)>,
    /// Claims prepared for allocation: its own, plus the group's for the first pod.
    prepared: PreparedClaims,
    /// Its claims plus the group's, when the group has claims (for the first pod).
    with_group: Option<PreparedClaims>,
    /// Pods of equal shape share a class id (placed in non-decreasing node order).
    shape: usize,
    /// The least number of devices its own claims need.
    min_devices: u64,
}

struct Search<'a> {
    scratch: Cluster,
    pods: Vec<PendingPod<'a>>,
    shape_nodes: &'a [Vec<&'a Node>],
    group_claims: Vec<(String, &'a ResourceClaim)>,
    topology: Option<(&'a str, String)>,
    bindings: Vec<PodBinding>,
    group_results: Vec<ClaimAllocation>,
    /// For each pending pod, the index of its node once placed.
    node_of: Vec<Option<usize>>,
    steps: u64,
    budget: u64,
    best: usize,
    exhausted: bool,
}

impl Cluster {
    /// Places the pending pods of `group` (or, without a group, each of `pods` on its
    /// own) against this cluster, without changing it. `claims` are the
    /// ResourceClaims the pods and the group name (by `resourceClaimName`).
    ///
    /// With a gang policy, at least `minCount` pods — counting those already running —
    /// are placed together or none is; further pending pods are placed where they still
    /// fit. With the basic policy or no group, every pod that fits is placed.
    pub fn place_gang(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<GangOutcome, GangError> {
        let find = |owner: &str,
                    ns: &str,
                    source: &ClaimSource|
         -> Result<(String, &ResourceClaim), GangError> {
            match source {
                ClaimSource::ClaimName(name) => claims
                    .iter()
                    .find(|c| c.namespace == ns && c.name == *name)
                    .map(|c| (format!("{ns}/{name}"), c))
                    .ok_or_else(|| GangError::MissingClaim {
                        owner: owner.to_owned(),
                        claim: format!("{ns}/{name}"),
                    }),
                ClaimSource::Template(t) => Err(GangError::TemplateClaim {
                    owner: owner.to_owned(),
                    template: t.clone(),
                }),
            }
        };
        let member = |p: &Pod| {
            group.is_none_or(|g| {
                p.namespace == g.namespace && p.scheduling_group.as_deref() == Some(g.name.as_str())
            })
        };
        let running: Vec<&Pod> = pods
            .iter()
            .filter(|p| member(p) && p.node_name.is_some())
            .collect();
        let mut group_claims = Vec::new();
        if let Some(g) = group {
            for c in &g.resource_claims {
                group_claims.push(find(
                    &format!("PodGroup {}/{}", g.namespace, g.name),
                    &g.namespace,
                    &c.source,
                )?);
            }
        }
        let group_claim_objects: Vec<ResourceClaim> =
            group_claims.iter().map(|(_, c)| (*c).clone()).collect();
        // Pending pods, grouped by shape (stable within a shape: by name).
        let mut pending = Vec::new();
        let mut shapes: Vec<String> = Vec::new();
        // Per shape: the nodes its pods may go to (labels, affinity, taints, cordon,
        // enough free devices), by name.
        let mut shape_nodes: Vec<Vec<&Node>> = Vec::new();
        for pod in pods.iter().filter(|p| member(p) && p.node_name.is_none()) {
            let key = format!("{}/{}", pod.namespace, pod.name);
            let mut own = Vec::new();
            for c in &pod.resource_claims {
                own.push(find(&key, &pod.namespace, &c.source)?);
            }
            let own_objects: Vec<ResourceClaim> = own.iter().map(|(_, c)| (*c).clone()).collect();
            let prepared = self.prepare_claims(&own_objects)?;
            let mut both = own_objects.clone();
            both.extend(group_claim_objects.iter().cloned());
            let with_group = if group_claim_objects.is_empty() {
                None
            } else {
                Some(self.prepare_claims(&both)?)
            };
            let signature = format!(
                "{:?}|{:?}|{:?}|{:?}|{:?}",
                pod.requests,
                pod.tolerations,
                pod.node_selector,
                pod.required_node_affinity,
                own.iter().map(|(_, c)| &c.spec).collect::<Vec<_>>()
            );
            let shape = shapes
                .iter()
                .position(|s| *s == signature)
                .unwrap_or_else(|| {
                    shapes.push(signature);
                    shapes.len() - 1
                });
            // Devices the pod needs at least (node-local ones; a shared device may serve
            // instead, so this prunes only when the pod's claims are node-local).
            let min_devices: u64 = own.iter().map(|(_, c)| c.spec.min_device_count()).sum();
            // Pods of one shape have the same candidate nodes: compute them once.
            if shape == shape_nodes.len() {
                let nodes = self
                    .nodes()
                    .filter(|n| !n.unschedulable && pod.fits_node(n))
                    .filter(|n| {
                        options
                            .within
                            .iter()
                            .all(|(k, v)| n.labels.get(k) == Some(v))
                    })
                    .filter(|n| {
                        // Count pruning: a node without enough free devices cannot host it.
                        !self.shared_devices().is_empty()
                            || self
                                .node_id(&n.name)
                                .and_then(|id| self.node_counts(id))
                                .is_some_and(|c| u64::from(c.free) >= min_devices)
                    })
                    .filter(|n| {
                        first_untolerated_taint(&n.taints, &pod.tolerations, |e| {
                            matches!(e, TaintEffect::NoSchedule | TaintEffect::NoExecute)
                        })
                        .is_none()
                    })
                    .collect();
                shape_nodes.push(nodes);
            }
            pending.push(PendingPod {
                pod,
                key,
                min_devices,
                claims: own,
                prepared,
                with_group,
                shape,
            });
        }
        pending.sort_by(|a, b| a.shape.cmp(&b.shape).then_with(|| a.key.cmp(&b.key)));
        let gang_min = group.and_then(|g| g.policy.min_count()).map(|m| m as usize);
        let required = match gang_min {
            Some(m) => m.saturating_sub(running.len()).min(pending.len()),
            None => 0,
        };
        // Topology: the domain of running pods, else every domain in turn.
        let key = group
            .and_then(|g| g.topology.first())
            .map(|t| t.key.as_str());
        let domains: Vec<Option<String>> = match key {
            None => vec![None],
            Some(k) => {
                let fixed: BTreeSet<String> = running
                    .iter()
                    .filter_map(|p| self.node(p.node_name.as_deref()?)?.labels.get(k).cloned())
                    .collect();
                if fixed.is_empty() {
                    let all: BTreeSet<String> = self
                        .nodes()
                        .filter_map(|n| n.labels.get(k).cloned())
                        .collect();
                    all.into_iter().map(Some).collect()
                } else {
                    fixed.into_iter().map(Some).collect()
                }
            }
        };
        let mut best = 0;
        let mut steps = 0;
        // Count pruning per domain: the free devices of its nodes must cover the
        // `required` smallest pods' needs (only when no shared device could help).
        let mut needs: Vec<u64> = pending.iter().map(|p| p.min_devices).collect();
        needs.sort_unstable();
        let need: u64 = needs.iter().take(required).sum();
        // Free devices per domain (`None`: the whole cluster), in one pass over nodes.
        let mut free_by_domain: BTreeMap<Option<&str>, u64> = BTreeMap::new();
        for n in self.nodes() {
            let free = self
                .node_id(&n.name)
                .and_then(|id| self.node_counts(id))
                .map_or(0, |c| u64::from(c.free));
            *free_by_domain.entry(None).or_default() += free;
            if let Some(v) = key.and_then(|k| n.labels.get(k)) {
                *free_by_domain.entry(Some(v.as_str())).or_default() += free;
            }
        }
        let free_in = |domain: &Option<String>| -> u64 {
            free_by_domain.get(&domain.as_deref()).copied().unwrap_or(0)
        };
        let shared = !self.shared_devices().is_empty();
        for domain in domains {
            if !shared && free_in(&domain) < need {
                continue;
            }
            let mut s = Search {
                scratch: self.clone(),
                pods: Vec::new(),
                shape_nodes: &shape_nodes,
                group_claims: group_claims.clone(),
                topology: key.zip(domain),
                bindings: Vec::new(),
                group_results: Vec::new(),
                node_of: vec![None; pending.len()],
                steps,
                budget: options.step_budget,
                best: 0,
                exhausted: false,
            };
            s.pods = core::mem::take(&mut pending);
            let placed = s.place(0, 0, required);
            steps = s.steps;
            best = best.max(s.best);
            if placed {
                s.place_rest();
                return Ok(GangOutcome::Placed(PlacementDecision {
                    bindings: s.bindings,
                    group_claims: s.group_results,
                }));
            }
            pending = s.pods;
            if s.exhausted {
                return Ok(GangOutcome::BudgetExhausted { steps });
            }
        }
        Ok(GangOutcome::Unschedulable { required, best })
    }
}

impl Search<'_> {
    /// Chooses and places `required - placed` more pods among pods `k..` jointly
    /// (backtracking over which pods, which nodes, and — through the allocator — which
    /// devices); true when enough are placed. Any pods of the group count toward
    /// `minCount`, so a pod may be skipped; of pods of one shape only a prefix is ever
    /// placed, and in non-decreasing node order, so identical pods are never permuted.
    fn place(&mut self, k: usize, placed: usize, required: usize) -> bool {
        if placed == required {
            return true;
        }
        if self.pods.len() - k < required - placed {
            return false;
        }
        let from = match k.checked_sub(1) {
            Some(prev) if self.pods[prev].shape == self.pods[k].shape => {
                self.node_of[prev].expect("an earlier pod of a shape is placed")
            }
            _ => 0,
        };
        for i in from..self.shape_nodes[self.pods[k].shape].len() {
            if self.steps >= self.budget {
                self.exhausted = true;
                return false;
            }
            self.steps += 1;
            if self.try_bind(k, i) {
                self.best = self.best.max(placed + 1);
                self.node_of[k] = Some(i);
                if self.place(k + 1, placed + 1, required) {
                    return true;
                }
                self.node_of[k] = None;
                self.unbind(k);
                if self.exhausted {
                    return false;
                }
            }
        }
        // Skip this pod and every later pod of its shape.
        let next = (k..self.pods.len())
            .find(|&j| self.pods[j].shape != self.pods[k].shape)
            .unwrap_or(self.pods.len());
        self.place(next, placed, required)
    }

    /// Places the pods not placed yet where they fit, without backtracking.
    fn place_rest(&mut self) {
        for k in 0..self.pods.len() {
            if self.node_of[k].is_some() {
                continue;
            }
            for i in 0..self.shape_nodes[self.pods[k].shape].len() {
                if self.try_bind(k, i) {
                    self.node_of[k] = Some(i);
                    break;
                }
            }
        }
    }

    /// Allocates pod `k`'s claims (and the group's, for the first pod) on its `i`-th
    /// candidate node in the scratch cluster, and records the binding.
    fn try_bind(&mut self, k: usize, i: usize) -> bool {
        let p = &self.pods[k];
        let node = self.shape_nodes[p.shape][i];
        if let Some((key, value)) = &self.topology
            && node.labels.get(*key) != Some(value)
        {
            return false;
        }
        // Group claims already allocated must be usable from this node.
        let first = self.bindings.is_empty() && !self.group_claims.is_empty();
        if !first
            && self.group_results.iter().any(|g| {
                g.result
                    .node_selector
                    .as_ref()
                    .is_some_and(|sel| !sel.matches(&node.name, &node.labels))
            })
        {
            return false;
        }
        let mut requests = p.pod.requests.clone();
        if node.allocatable.contains_key("pods") {
            requests.insert("pods".into(), Quantity::from_int(1));
        }
        let prepared = match (&p.with_group, first) {
            (Some(w), true) => w,
            _ => &p.prepared,
        };
        let Ok(AllocationOutcome::Allocated(results)) = self.scratch.allocate_prepared(
            &node.name,
            prepared,
            &requests,
            &AllocatorOptions::default(),
        ) else {
            return false;
        };
        let names: Vec<String> = p
            .claims
            .iter()
            .map(|(n, _)| n.clone())
            .chain(self.group_claims.iter().map(|(n, _)| n.clone()))
            .collect();
        let mut own: Vec<ClaimAllocation> = Vec::new();
        let mut group = Vec::new();
        for (idx, result) in results.into_iter().enumerate() {
            if self
                .scratch
                .commit_allocation(&names[idx], &result)
                .is_err()
            {
                // Cannot happen after a successful allocation; undo and refuse.
                for c in own.iter().chain(group.iter()) {
                    self.scratch.release_allocation(&c.claim, &c.result);
                }
                return false;
            }
            let alloc = ClaimAllocation {
                claim: names[idx].clone(),
                result,
            };
            if idx < p.claims.len() {
                own.push(alloc);
            } else {
                group.push(alloc);
            }
        }
        if self
            .scratch
            .reserve_node_resources(&node.name, &p.key, requests)
            .is_err()
        {
            for c in own.iter().chain(group.iter()) {
                self.scratch.release_allocation(&c.claim, &c.result);
            }
            return false;
        }
        self.bindings.push(PodBinding {
            pod: p.key.clone(),
            node: node.name.clone(),
            claims: own,
        });
        self.group_results.extend(group);
        true
    }

    /// Undoes pod `k`'s binding (the last one recorded).
    fn unbind(&mut self, k: usize) {
        let binding = self.bindings.pop().expect("a binding to undo");
        debug_assert_eq!(binding.pod, self.pods[k].key);
        for c in &binding.claims {
            self.scratch.release_allocation(&c.claim, &c.result);
        }
        if self.bindings.is_empty() {
            for c in core::mem::take(&mut self.group_results) {
                self.scratch.release_allocation(&c.claim, &c.result);
            }
        }
        let _ = self
            .scratch
            .release_node_resources(&binding.node, &self.pods[k].key);
    }
}
