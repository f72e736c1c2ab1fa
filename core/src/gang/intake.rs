//! Stage 1 of gang placement (see `placer.rs`): the intake. A gang's pending pods are
//! resolved (their claims looked up), grouped into shapes of interchangeable pods, and
//! the claims several of them (or the PodGroup) use are collected as shared claims;
//! what the pods need at least is known before any node is looked at.

use crate::alloc_prelude::*;
use crate::allocate::{AllocationError, ClaimPart, PreparedClaims, claim_limit_error};
use crate::cluster::Cluster;
use crate::cluster::bits::DeviceSet;
use crate::cluster::ids::NodeId;
use crate::model::claim::{ResourceClaim, ResourceClaimSpec};
use crate::model::workload::{ClaimSource, Pod, PodGroup};
use crate::{DeviceRef, DeviceTaint, Quantity};

use super::options::{GangError, GangOutcome};

/// A claim allocated once for several pods: a PodGroup-level claim (every member uses
/// it) or a claim several pending pods name.
pub(crate) struct SharedClaim<'a> {
    /// `namespace/name`.
    pub(crate) name: String,
    pub(crate) claim: &'a ResourceClaim,
    /// Reserved for the PodGroup (its allocation goes to `decision.group_claims`): a
    /// claim of the group's `spec.resourceClaims` that some member names with the
    /// group's entry itself, the same name and source (KEP-5729). The group's claim
    /// named only under other entry names is the pods' own use of a shared claim,
    /// reserved for those pods and released with the last of them.
    pub(crate) group: bool,
    /// Its `status.allocation`, when it is allocated already: nothing to allocate,
    /// only where it is usable matters.
    pub(crate) allocated: Option<&'a crate::model::claim::AllocationResult>,
    /// Some pending pod uses it. A claim is allocated with the first pod bound that
    /// uses it, so it stays unallocated when none of them is placed; a group claim no
    /// pending pod names is not allocated at all (upstream allocates the claims pods
    /// use, KEP-5729).
    pub(crate) used: bool,
}

/// One pending pod, ready for the search.
pub(crate) struct PendingPod<'a> {
    pub(crate) pod: &'a Pod,
    pub(crate) key: String,
    /// Its own claims (`namespace/name`, claim), in pod order.
    pub(crate) own: Vec<(String, &'a ResourceClaim)>,
    /// The non-group shared claims it names (indices into `Gang::shared`), sorted.
    pub(super) uses: Vec<usize>,
    pub(crate) shape: usize,
}

/// Pods that are interchangeable for placement.
pub(crate) struct Shape<'a> {
    /// The first pod of the shape (by name).
    pub(crate) rep: &'a Pod,
    /// Pending pods of this shape.
    pub(crate) pods: usize,
    pub(crate) own_specs: Vec<&'a ResourceClaimSpec>,
    /// The shared claims its pods use (indices into `Gang::shared`), sorted.
    pub(crate) uses: Vec<usize>,
    /// The representative's own claims, prepared.
    pub(super) prepared: PreparedClaims,
    /// The pod's scalar requests; `pods: 1` is added on nodes that advertise `pods`.
    pub(super) requests: BTreeMap<String, Quantity>,
    /// The least number of devices one pod's own claims take.
    pub(crate) min_devices: u64,
    /// Nodes that may host pods of this shape, grouped by domain, in policy order.
    pub(crate) candidates: Vec<Candidate>,
}

/// A shape's own claims (its `prepared`), as the allocator takes them.
pub(super) fn own_parts(prepared: &PreparedClaims) -> Vec<ClaimPart<'_>> {
    (0..prepared.claims().len())
        .map(|index| ClaimPart {
            claim: &prepared.claims()[index],
            prepared,
            index,
        })
        .collect()
}

/// A node that may host pods of one shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) node: NodeId,
    /// At most this many pods of the shape fit on it (an upper bound).
    pub(crate) cap: u32,
    /// Free usable devices of the kinds the shape asks for (for scoring).
    pub(crate) free: u32,
    /// Index into `Gang::domains` (0 without a topology key).
    pub(crate) domain: u32,
    /// The policy's rank of the node for the shape's first pod, lower is better
    /// (Stranding and FGD; 0 under the others).
    pub(crate) rank: i64,
}

/// A gang ready to be placed: intake, counts and domains.
pub(crate) struct Gang<'a> {
    pub(crate) group: Option<&'a PodGroup>,
    pub(crate) running: Vec<&'a Pod>,
    /// Pending members, by shape then name.
    pub(crate) pods: Vec<PendingPod<'a>>,
    pub(crate) shapes: Vec<Shape<'a>>,
    pub(crate) shared: Vec<SharedClaim<'a>>,
    /// The shared claims prepared, in `shared` order.
    pub(super) shared_prepared: Option<PreparedClaims>,
    /// Allocated shared claims that new pods may not reserve, because a device of
    /// theirs carries a `NoExecute` taint the allocation does not tolerate: (index into
    /// `shared`, the device, the taint). Pods using one have no candidate node.
    pub(crate) tainted: Vec<(usize, DeviceRef, DeviceTaint)>,
    /// Pending pods that must be placed together.
    pub(crate) required: usize,
    /// The topology key, if any.
    pub(crate) key: Option<&'a str>,
    /// Domain values (`[""]` without a key), in the policy's order of preference after
    /// [`Gang::order_domains`].
    pub(crate) domains: Vec<String>,
    /// Domains the search may use (indices into `domains`), best first.
    pub(crate) order: Vec<u32>,
    /// The most pending pods any domain's caps allow (capped at `required`).
    pub(crate) most: usize,
    /// Per shape, per domain: the range of `candidates` in that domain.
    pub(super) ranges: Vec<Vec<(u32, u32)>>,
    /// Devices the unit itself holds: those of the allocated claims its running members
    /// name and of its allocated shared claims. Not free, but not other workloads'
    /// either: the explanation never reports them as "allocated to other claims". Filled
    /// by the explanation only (placing does not need it).
    pub(crate) own: DeviceSet,
}

impl Cluster {
    /// Resolves, groups and counts a gang's pods (steps 1–3 of the module docs).
    pub(crate) fn gang_intake<'a>(
        &self,
        group: Option<&'a PodGroup>,
        pods: &'a [Pod],
        claims: &'a [ResourceClaim],
    ) -> Result<Gang<'a>, GangError> {
        // The claims by (name, namespace), in a sorted list (cheaper than a map to
        // build and search); of claims with the same name, the last one given counts.
        let mut by_name: Vec<(&str, &str, &ResourceClaim)> = claims
            .iter()
            .map(|c| (c.name.as_str(), c.namespace.as_str(), c))
            .collect();
        by_name.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let lookup = |ns: &str, name: &str| {
            let end = by_name.partition_point(|e| (e.0, e.1) <= (name, ns));
            let (n, s, c) = *by_name.get(end.checked_sub(1)?)?;
            (n == name && s == ns).then_some(c)
        };
        let find = |owner: &str,
                    ns: &str,
                    source: &ClaimSource|
         -> Result<(String, &'a ResourceClaim), GangError> {
            match source {
                ClaimSource::ClaimName(name) => lookup(ns, name)
                    .map(|c| (qualified(ns, name), c))
                    .ok_or_else(|| GangError::MissingClaim {
                        owner: owner.to_owned(),
                        claim: qualified(ns, name),
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
        let mut shared: Vec<SharedClaim<'a>> = Vec::new();
        let group_claims = group.map_or(0, |g| g.resource_claims.len());
        if let Some(g) = group {
            let owner = format!("PodGroup {}/{}", g.namespace, g.name);
            for c in &g.resource_claims {
                let (name, claim) = find(&owner, &g.namespace, &c.source)?;
                // Whether it is reserved for the group is known once the members'
                // entries are read, below.
                shared.push(SharedClaim {
                    name,
                    claim,
                    group: false,
                    allocated: claim.allocation.as_ref(),
                    used: false,
                });
            }
        }
        // Pending members with their claims; a claim several of them name is shared.
        let mut pending: Vec<PendingPod<'a>> = Vec::new();
        for pod in pods.iter().filter(|p| member(p) && p.node_name.is_none()) {
            let key = qualified(&pod.namespace, &pod.name);
            let mut own = Vec::new();
            let mut uses = Vec::new();
            for c in &pod.resource_claims {
                // A pod uses a group claim by naming it with the same name and source.
                if let Some(gc) = group.and_then(|g| g.group_claim_for(c)) {
                    if let Some(at) =
                        group.and_then(|g| g.resource_claims.iter().position(|x| x == gc))
                    {
                        shared[at].used = true;
                        shared[at].group = true;
                        uses.push(at);
                    }
                    continue;
                }
                let (name, claim) = find(&key, &pod.namespace, &c.source)?;
                // QUIRK (KEP-5729): the group's ResourceClaim named under another entry
                // name is not the group's claim for the pod (upstream matches every
                // field): the pod reserves it for itself. It is still the same object,
                // allocated once.
                if let Some(at) = shared
                    .iter()
                    .take(group_claims)
                    .position(|s| s.name == name)
                {
                    shared[at].used = true;
                    uses.push(at);
                    continue;
                }
                if let Some(result) = &claim.allocation {
                    // Allocated already (status.allocation): shared, nothing to allocate.
                    let at = if let Some(at) = shared.iter().position(|s| s.name == name) {
                        at
                    } else {
                        shared.push(SharedClaim {
                            name,
                            claim,
                            group: false,
                            allocated: Some(result),
                            used: true,
                        });
                        shared.len() - 1
                    };
                    uses.push(at);
                    continue;
                }
                own.push((name, claim));
            }
            uses.sort_unstable();
            uses.dedup();
            pending.push(PendingPod {
                pod,
                key,
                own,
                uses,
                shape: 0,
            });
        }
        // A group claim that running members name with the group's entry is reserved
        // for the group already.
        if let Some(g) = group {
            for (at, gc) in g.resource_claims.iter().enumerate() {
                if !shared[at].group
                    && running.iter().any(|p| {
                        p.resource_claims
                            .iter()
                            .any(|c| g.group_claim_for(c) == Some(gc))
                    })
                {
                    shared[at].group = true;
                }
            }
        }
        // Which of the pods' claims (in pod, then claim order) more than one names.
        let mut names: Vec<(&str, usize)> = pending
            .iter()
            .flat_map(|p| &p.own)
            .enumerate()
            .map(|(at, (name, _))| (name.as_str(), at))
            .collect();
        names.sort_unstable();
        let mut named_again = vec![false; names.len()];
        for run in names
            .chunk_by(|a, b| a.0 == b.0)
            .filter(|run| run.len() > 1)
        {
            for &(_, at) in run {
                named_again[at] = true;
            }
        }
        drop(names);
        let mut first = 0;
        for p in &mut pending {
            let flags = &named_again[first..first + p.own.len()];
            first += p.own.len();
            if !flags.contains(&true) {
                continue;
            }
            let mut kept = Vec::with_capacity(p.own.len());
            for ((name, claim), &again) in core::mem::take(&mut p.own).into_iter().zip(flags) {
                if again {
                    let at = if let Some(at) = shared.iter().position(|s| s.name == name) {
                        at
                    } else {
                        shared.push(SharedClaim {
                            name,
                            claim,
                            group: false,
                            allocated: None,
                            used: true,
                        });
                        shared.len() - 1
                    };
                    p.uses.push(at);
                } else {
                    kept.push((name, claim));
                }
            }
            p.uses.sort_unstable();
            p.uses.dedup();
            p.own = kept;
        }
        // Shapes, by first appearance in name order.
        pending.sort_by(|a, b| a.key.cmp(&b.key));
        let mut shapes: Vec<Shape<'a>> = Vec::new();
        for p in &mut pending {
            let same = |s: &Shape<'_>| {
                s.rep.requests == p.pod.requests
                    && s.rep.tolerations == p.pod.tolerations
                    && s.rep.node_selector == p.pod.node_selector
                    && s.rep.required_node_affinity == p.pod.required_node_affinity
                    && s.own_specs.len() == p.own.len()
                    && s.own_specs
                        .iter()
                        .zip(&p.own)
                        .all(|(a, (_, c))| **a == c.spec)
                    && s.uses == p.uses
            };
            if let Some(at) = shapes.iter().position(same) {
                // Same specs as the prepared representative: check the names only.
                for (_, c) in &p.own {
                    c.validate_metadata()
                        .map_err(AllocationError::InvalidClaim)?;
                }
                shapes[at].pods += 1;
                p.shape = at;
                continue;
            }
            let specs: Vec<&ResourceClaimSpec> = p.own.iter().map(|(_, c)| &c.spec).collect();
            let own: Vec<ResourceClaim> = p.own.iter().map(|(_, c)| (*c).clone()).collect();
            let prepared = self.prepare_claims(&own)?;
            shapes.push(Shape {
                rep: p.pod,
                pods: 1,
                min_devices: specs.iter().map(|s| s.min_device_count()).sum(),
                own_specs: specs,
                uses: p.uses.clone(),
                prepared,
                requests: p.pod.requests.clone(),
                candidates: Vec::new(),
            });
            p.shape = shapes.len() - 1;
        }
        // An allocated claim whose devices carry an untolerated NoExecute taint cannot
        // be reserved by new pods (its current users are being evicted).
        let tainted: Vec<(usize, DeviceRef, DeviceTaint)> = shared
            .iter()
            .enumerate()
            .filter(|(_, s)| s.used)
            .filter_map(|(i, s)| {
                let (device, taint) = self.untolerated_no_execute(s.allocated?)?;
                Some((i, device, taint))
            })
            .collect();
        // Shared claims are prepared here too, so input errors come before any search.
        let shared_prepared = if shared.is_empty() {
            None
        } else {
            let all: Vec<ResourceClaim> = shared
                .iter()
                .map(|s| {
                    let mut c = s.claim.clone();
                    c.allocation = None;
                    c
                })
                .collect();
            Some(self.prepare_claims(&all)?)
        };
        // Upstream's per-claim device limit, once the claims are known to be valid.
        check_claim_limits(
            shapes.iter().flat_map(|s| s.prepared.claims()).chain(
                shared
                    .iter()
                    .filter(|s| s.allocated.is_none())
                    .map(|s| s.claim),
            ),
        )?;
        // Bigger pods first (most constrained), then by first pod name.
        let mut order: Vec<usize> = (0..shapes.len()).collect();
        order.sort_by_key(|&s| core::cmp::Reverse(shapes[s].min_devices));
        let mut rank = vec![0; shapes.len()];
        for (r, &s) in order.iter().enumerate() {
            rank[s] = r;
        }
        let mut sorted: Vec<Option<Shape<'a>>> = shapes.into_iter().map(Some).collect();
        let shapes: Vec<Shape<'a>> = order
            .iter()
            .map(|&s| sorted[s].take().expect("each shape once"))
            .collect();
        for p in &mut pending {
            p.shape = rank[p.shape];
        }
        pending.sort_by(|a, b| a.shape.cmp(&b.shape).then_with(|| a.key.cmp(&b.key)));

        let gang_min = group.and_then(|g| g.policy.min_count()).map(|m| m as usize);
        let required = match gang_min {
            Some(m) => m.saturating_sub(running.len()).min(pending.len()),
            None => 0,
        };
        let key = group
            .and_then(|g| g.topology.first())
            .map(|t| t.key.as_str());
        let gang = Gang {
            group,
            running,
            pods: pending,
            shapes,
            shared,
            shared_prepared,
            tainted,
            required,
            key,
            domains: Vec::new(),
            order: Vec::new(),
            most: 0,
            ranges: Vec::new(),
            own: DeviceSet::new(),
        };
        Ok(gang)
    }
}

/// Upstream's per-claim device limit on the claims to allocate, for what does not
/// depend on the node: counts, and for `firstAvailable` the least over the subrequests
/// (allocation mode `All` counts one here; the allocator checks its matching devices
/// on each node). The first claim over the limit is the error.
#[inline(never)]
fn check_claim_limits<'c>(
    claims: impl Iterator<Item = &'c ResourceClaim>,
) -> Result<(), AllocationError> {
    for claim in claims {
        let counts = claim
            .spec
            .requests
            .iter()
            .map(|r| usize::try_from(r.min_device_count()).unwrap_or(usize::MAX));
        if let Some(e) = claim_limit_error(claim, counts) {
            return Err(e);
        }
    }
    Ok(())
}

/// `namespace/name`.
fn qualified(namespace: &str, name: &str) -> String {
    let mut s = String::with_capacity(namespace.len() + 1 + name.len());
    s.push_str(namespace);
    s.push('/');
    s.push_str(name);
    s
}

impl Gang<'_> {
    /// `WaitingForPods` when fewer members exist than `minCount`.
    pub(super) fn waiting(&self) -> Option<GangOutcome> {
        let min = self.group?.policy.min_count()?;
        let present = self.running.len() + self.pods.len();
        (present < min as usize).then_some(GangOutcome::WaitingForPods {
            present,
            min_count: min,
        })
    }

    /// The candidates of shape `s` in domain `d`, in policy order.
    pub(crate) fn candidates_in(&self, s: usize, d: u32) -> &[Candidate] {
        let (a, b) = self.ranges[s].get(d as usize).copied().unwrap_or((0, 0));
        &self.shapes[s].candidates[a as usize..b as usize]
    }

    /// How many pods of shape `s` the caps of its candidates in domain `d` allow
    /// (an upper bound: the sum of the caps).
    pub(crate) fn caps_in(&self, s: usize, d: u32) -> u64 {
        self.candidates_in(s, d)
            .iter()
            .map(|c| u64::from(c.cap))
            .sum()
    }

    /// How many pods of each shape the first `required` pending pods hold.
    pub(crate) fn wanted_by_shape(&self, required: usize) -> Vec<usize> {
        let mut want = vec![0usize; self.shapes.len()];
        for p in self.pods.iter().take(required) {
            want[p.shape] += 1;
        }
        want
    }
}
