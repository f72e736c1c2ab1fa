//! The cycle's equivalence cache: a pending unit whose placement problem equals one
//! that stayed pending earlier in the same cycle gets the same outcome without a
//! second search, while nothing it could depend on has changed since.
//!
//! Two units are *equivalent* when their inputs are equal but for names: the group,
//! the pods (in member order) and the claims they name (in key order) compare equal
//! field by field leaving out `metadata.name` and `creationTimestamp`, and every
//! claim reference points at the same position. Under BestFit and Spread nothing in
//! a placement reads a unit's names but equality and order among its own objects
//! (which equivalence keeps), so equivalent units get equal outcomes on an equal
//! cluster. The ranked policies hand the pod's name to their ranker, and GangAware
//! reads the whole cluster's domains: no cache under those.
//!
//! An entry lives until the cluster changes under it. A placement committed only on
//! nodes that had fewer free devices than the entry's pods need at least (its
//! `least_free`) leaves it: such a node was no candidate for the unit (counting gave
//! it cap 0, so neither the search nor the selector sweep visited it) and, with fewer
//! free devices still, is none after; the nodes the unit's outcome depends on are
//! untouched. That holds when every device is node-local and exclusive (no
//! network-attached or shareable device), every request of the pods' own claims is
//! bounded by counting (an exact count, no admin access, no selectors of its own, no
//! capacity, an existing class, no class selector failing), the placed unit allocated no group claims,
//! and preemption was ruled out by priorities alone (a preemption search reads every
//! bound pod). Any other change — a preemption, an error, a group claim — empties the
//! cache. Debug builds recompute every answer the cache gives and assert it equal.

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::cluster::ids::NodeId;
use crate::gang::count_memo::CountMemo;
use crate::gang::options::GangOutcome;
use crate::gang::scoring::ScoringPolicy;
use crate::model::claim::{AllocationMode, ResourceClaim};
use crate::model::workload::{ClaimSource, Pod, PodGroup};

/// A unit's inputs, borrowed: the group, the members (or the pod), the claims they
/// name, and whether the unit is a PodGroup.
pub(super) struct UnitInputs<'a> {
    pub(super) is_group: bool,
    pub(super) group: Option<&'a PodGroup>,
    pub(super) pods: Vec<&'a Pod>,
    pub(super) claims: Vec<&'a ResourceClaim>,
}

impl UnitInputs<'_> {
    /// Owned copies of the inputs: the group, the pods, the claims.
    pub(super) fn to_owned(&self) -> (Option<PodGroup>, Vec<Pod>, Vec<ResourceClaim>) {
        (
            self.group.cloned(),
            self.pods.iter().map(|&p| p.clone()).collect(),
            self.claims.iter().map(|&c| c.clone()).collect(),
        )
    }
}

/// Pending outcomes of the cycle so far, by placement problem (see the module docs).
#[derive(Default)]
pub(super) struct Equivalence {
    /// Off for the policies whose placements read names or the whole cluster.
    on: bool,
    entries: Vec<Entry>,
    /// Entries by [`fingerprint`], to compare only likely equals.
    by_print: BTreeMap<u64, Vec<usize>>,
    /// The cycle's counted candidates, kept between placements (under every policy;
    /// the count uses it only where no ranker reads names, see `count_memo.rs`).
    pub(super) counts: CountMemo,
}

/// One problem that stayed pending, owned (a copy of the first unit that posed it).
struct Entry {
    is_group: bool,
    group: Option<PodGroup>,
    pods: Vec<Pod>,
    claims: Vec<ResourceClaim>,
    outcome: GangOutcome,
    /// Nodes with fewer free devices than this host no pod of the unit; 0 when that
    /// cannot be said, and any placement ends the entry.
    least_free: u32,
    /// False once a change may have touched what the outcome depends on.
    live: bool,
}

impl Equivalence {
    /// An empty cache, on when `policy` reads neither names nor the whole cluster.
    pub(super) fn new(policy: &ScoringPolicy) -> Equivalence {
        Equivalence {
            on: matches!(policy, ScoringPolicy::BestFit | ScoringPolicy::Spread),
            ..Equivalence::default()
        }
    }

    /// The outcome an equivalent unit got, if one did and it still holds.
    pub(super) fn get(&self, unit: &UnitInputs<'_>) -> Option<&GangOutcome> {
        if !self.on {
            return None;
        }
        let ids = self.by_print.get(&fingerprint(unit))?;
        ids.iter()
            .map(|&i| &self.entries[i])
            .find(|e| e.live && e.matches(unit))
            .map(|e| &e.outcome)
    }

    /// Records that `unit` (owned copies of its inputs) stayed pending with
    /// `outcome`. `preemption_searched`: a preemption search ran (and found nothing),
    /// which any later placement may change.
    pub(super) fn insert(
        &mut self,
        cluster: &Cluster,
        is_group: bool,
        (group, pods, claims): (Option<PodGroup>, Vec<Pod>, Vec<ResourceClaim>),
        outcome: GangOutcome,
        preemption_searched: bool,
    ) {
        // A preemption search evicts and reprieves in the live cluster: the counts
        // kept may not hold.
        if preemption_searched {
            self.counts.clear();
        }
        if !self.on {
            return;
        }
        let print = {
            let view = UnitInputs {
                is_group,
                group: group.as_ref(),
                pods: pods.iter().collect(),
                claims: claims.iter().collect(),
            };
            fingerprint(&view)
        };
        let least_free = if preemption_searched {
            0
        } else {
            least_free(cluster, group.as_ref(), &pods, &claims)
        };
        let ids = self.by_print.entry(print).or_default();
        ids.retain(|&i| self.entries[i].live);
        ids.push(self.entries.len());
        self.entries.push(Entry {
            is_group,
            group,
            pods,
            claims,
            outcome,
            least_free,
            live: true,
        });
    }

    /// A placement was committed on nodes whose free devices before it were at most
    /// `most_free`; `None` when more than those nodes may have changed. Ends the
    /// entries that may depend on what changed.
    ///
    /// `nodes`: the placement's nodes, the only ones it changed when `most_free` is
    /// known; the count memo counts them again.
    pub(super) fn placed(
        &mut self,
        most_free: Option<u32>,
        nodes: impl IntoIterator<Item = NodeId>,
    ) {
        match most_free {
            Some(f) => {
                for e in &mut self.entries {
                    e.live &= f < e.least_free;
                }
                self.counts.changed(nodes);
            }
            None => self.clear(),
        }
    }

    /// Anything may have changed: every entry ends.
    pub(super) fn clear(&mut self) {
        self.entries.clear();
        self.by_print.clear();
        self.counts.clear();
    }
}

impl Entry {
    /// Whether `unit` poses the same problem (see the module docs).
    fn matches(&self, unit: &UnitInputs<'_>) -> bool {
        let own = UnitInputs {
            is_group: self.is_group,
            group: self.group.as_ref(),
            pods: self.pods.iter().collect(),
            claims: self.claims.iter().collect(),
        };
        own.is_group == unit.is_group
            && own.pods.len() == unit.pods.len()
            && own.claims.len() == unit.claims.len()
            && own
                .claims
                .iter()
                .zip(&unit.claims)
                .all(|(a, b)| same_claim(a, b))
            && match (own.group, unit.group) {
                (None, None) => true,
                (Some(a), Some(b)) => same_group(&own, a, unit, b),
                _ => false,
            }
            && own
                .pods
                .iter()
                .zip(&unit.pods)
                .all(|(a, b)| same_pod(&own, a, unit, b))
    }
}

/// The position among `unit.claims` of the claim `source` names in `namespace`
/// (`None` for a template or a claim not given).
fn claim_at(unit: &UnitInputs<'_>, namespace: &str, source: &ClaimSource) -> Option<usize> {
    let ClaimSource::ClaimName(name) = source else {
        return None;
    };
    // The claims come in key (`namespace/name`) order; within one namespace, that is
    // name order.
    unit.claims
        .binary_search_by(|c| {
            if c.namespace == namespace {
                c.name.as_str().cmp(name)
            } else {
                key_bytes(&c.namespace, &c.name).cmp(key_bytes(namespace, name))
            }
        })
        .ok()
}

/// The bytes of the key `namespace/name`, without allocating it.
fn key_bytes<'a>(namespace: &'a str, name: &'a str) -> impl Iterator<Item = u8> + 'a {
    namespace.bytes().chain(*b"/").chain(name.bytes())
}

/// Whether two claim references of two units are the same: the same claim position,
/// or, for references to no given claim, the same source.
fn same_source(
    a_unit: &UnitInputs<'_>,
    a_ns: &str,
    a: &ClaimSource,
    b_unit: &UnitInputs<'_>,
    b_ns: &str,
    b: &ClaimSource,
) -> bool {
    match (claim_at(a_unit, a_ns, a), claim_at(b_unit, b_ns, b)) {
        (Some(i), Some(j)) => i == j,
        (None, None) => a == b,
        _ => false,
    }
}

/// Two claims equal but for their names.
fn same_claim(a: &ResourceClaim, b: &ResourceClaim) -> bool {
    let ResourceClaim {
        namespace,
        name: _,
        spec,
        allocation,
    } = a;
    *namespace == b.namespace && *spec == b.spec && *allocation == b.allocation
}

/// Two PodGroups equal but for their names and creation, their claim references
/// resolved to positions.
fn same_group(
    a_unit: &UnitInputs<'_>,
    a: &PodGroup,
    b_unit: &UnitInputs<'_>,
    b: &PodGroup,
) -> bool {
    let PodGroup {
        namespace,
        name: _,
        workload_ref,
        parent,
        policy,
        priority_class_name,
        priority,
        preemption_policy,
        disruption_mode,
        topology,
        resource_claims,
        creation: _,
    } = a;
    *namespace == b.namespace
        && *workload_ref == b.workload_ref
        && *parent == b.parent
        && *policy == b.policy
        && *priority_class_name == b.priority_class_name
        && *priority == b.priority
        && *preemption_policy == b.preemption_policy
        && *disruption_mode == b.disruption_mode
        && *topology == b.topology
        && same_claim_refs(
            (
                a_unit,
                namespace,
                resource_claims.iter().map(|c| (&c.name, &c.source)),
            ),
            (
                b_unit,
                &b.namespace,
                b.resource_claims.iter().map(|c| (&c.name, &c.source)),
            ),
        )
}

/// Two lists of claim references (a group's or a pod's, as `(name, source)` in its
/// namespace) the same: equal names, each source at the same claim position (see
/// [`same_source`]).
fn same_claim_refs<'x>(
    (a_unit, a_ns, a): (
        &UnitInputs<'_>,
        &str,
        impl ExactSizeIterator<Item = (&'x String, &'x ClaimSource)>,
    ),
    (b_unit, b_ns, b): (
        &UnitInputs<'_>,
        &str,
        impl ExactSizeIterator<Item = (&'x String, &'x ClaimSource)>,
    ),
) -> bool {
    a.len() == b.len()
        && a.zip(b).all(|((a_name, a_src), (b_name, b_src))| {
            a_name == b_name && same_source(a_unit, a_ns, a_src, b_unit, b_ns, b_src)
        })
}

/// Two pods equal but for their names, creation and group name (a unit's members
/// all name its group), their claim references resolved to positions.
fn same_pod(a_unit: &UnitInputs<'_>, a: &Pod, b_unit: &UnitInputs<'_>, b: &Pod) -> bool {
    let Pod {
        namespace,
        name: _,
        priority,
        preemption_policy,
        scheduler_name,
        requests,
        tolerations,
        node_selector,
        required_node_affinity,
        resource_claims,
        scheduling_group,
        node_name,
        creation: _,
    } = a;
    *namespace == b.namespace
        && *priority == b.priority
        && *preemption_policy == b.preemption_policy
        && *scheduler_name == b.scheduler_name
        && *requests == b.requests
        && *tolerations == b.tolerations
        && *node_selector == b.node_selector
        && *required_node_affinity == b.required_node_affinity
        && scheduling_group.is_some() == b.scheduling_group.is_some()
        && *node_name == b.node_name
        && same_claim_refs(
            (
                a_unit,
                namespace,
                resource_claims.iter().map(|c| (&c.name, &c.source)),
            ),
            (
                b_unit,
                &b.namespace,
                b.resource_claims.iter().map(|c| (&c.name, &c.source)),
            ),
        )
}

/// A hash of what cheaply tells problems apart (FNV-1a): equal problems have equal
/// fingerprints.
fn fingerprint(unit: &UnitInputs<'_>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |x: u64| {
        for b in x.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    mix(u64::from(unit.is_group));
    mix(unit.pods.len() as u64);
    mix(unit.claims.len() as u64);
    for c in &unit.claims {
        mix(c.spec.requests.len() as u64);
        for r in &c.spec.requests {
            mix(r.min_device_count());
        }
    }
    for p in &unit.pods {
        mix(p.resource_claims.len() as u64);
        mix(p.requests.len() as u64);
        mix(u64::from(p.node_name.is_some()));
    }
    h
}

/// The free devices (of any class) a node needs at least to host any pending pod of
/// the unit, when counting bounds every request of the pods' own claims (see the
/// module docs); else 0.
fn least_free(
    cluster: &Cluster,
    group: Option<&PodGroup>,
    pods: &[Pod],
    claims: &[ResourceClaim],
) -> u32 {
    if cluster.has_shared_devices()
        || !cluster.shareable_devices().is_empty()
        || cluster.class_cache.values().any(|c| !c.errors.is_empty())
        || group.is_some_and(|g| !g.resource_claims.is_empty())
    {
        return 0;
    }
    // Each claim's users among the pending pods: a claim two pods share is not
    // counted on each pod's node.
    let mut users = vec![0u32; claims.len()];
    let pending: Vec<&Pod> = pods.iter().filter(|p| p.node_name.is_none()).collect();
    for p in &pending {
        for rc in &p.resource_claims {
            let ClaimSource::ClaimName(n) = &rc.source else {
                return 0;
            };
            match claims
                .iter()
                .position(|c| c.name == *n && c.namespace == p.namespace)
            {
                Some(i) => users[i] += 1,
                None => return 0,
            }
        }
    }
    let mut least = u32::MAX;
    for p in &pending {
        let mut need = 0u32;
        for rc in &p.resource_claims {
            let ClaimSource::ClaimName(n) = &rc.source else {
                return 0;
            };
            let Some(i) = claims
                .iter()
                .position(|c| c.name == *n && c.namespace == p.namespace)
            else {
                return 0;
            };
            let claim = &claims[i];
            if users[i] != 1 || claim.allocation.is_some() {
                return 0;
            }
            for r in &claim.spec.requests {
                let mut fewest = u32::MAX;
                for v in r.alternatives() {
                    let AllocationMode::ExactCount(n) = v.allocation_mode else {
                        return 0;
                    };
                    if v.admin_access
                        || !v.selectors.is_empty()
                        || !v.capacity.is_empty()
                        || cluster.class_devices(v.device_class_name).is_none()
                    {
                        return 0;
                    }
                    fewest = fewest.min(n);
                }
                if fewest != u32::MAX {
                    need = need.max(fewest);
                }
            }
        }
        least = least.min(need);
    }
    if least == u32::MAX { 0 } else { least }
}
