//! Stage 3 of gang placement (see `placer.rs`): the counts. Per shape and node, an
//! upper bound on how many of its pods the node can host (the node filter of
//! `filter.rs`, free scalars, devices by the index's counts), the topology domains
//! and their order of preference; tightened by the allocator for explanations.

use crate::Quantity;
use crate::alloc_prelude::*;
use crate::allocate::{AllocationError, AllocationOutcome, AllocatorOptions};
use crate::cluster::bits::{DeviceSet, SparseDeviceSet};
use crate::cluster::ids::NodeId;
use crate::cluster::ranking::{RankMemo, Ranker};
use crate::cluster::rooms::RoomRequest;
use crate::cluster::{Cluster, DeviceCounts};
use crate::gang::scoring::ScoringPolicy;
use crate::model::claim::{AllocationMode, ResourceClaim, ResourceClaimSpec};
use crate::model::workload::{Pod, PodGroup};

use super::count_memo::CountMemo;
use super::filter::{Rejection, ShapeFilter};
use super::intake::{Candidate, Gang, own_parts};
use super::options::{GangError, GangOptions};

impl Cluster {
    /// The intake ([`gang_intake`](Self::gang_intake)) with its counts: the candidates
    /// of every shape and the domains in the policy's order of preference.
    pub(crate) fn gang_counted<'a>(
        &self,
        group: Option<&'a PodGroup>,
        pods: &'a [Pod],
        claims: &'a [ResourceClaim],
        options: &GangOptions,
    ) -> Result<Gang<'a>, GangError> {
        self.gang_counted_with(group, pods, claims, options, RankMemo::default(), None)
            .0
    }

    /// [`Cluster::gang_counted`] with a memo of node measures for the ranking
    /// policies (see `cluster/ranking.rs`), given back for the next placement.
    pub(crate) fn gang_counted_with<'a>(
        &self,
        group: Option<&'a PodGroup>,
        pods: &'a [Pod],
        claims: &'a [ResourceClaim],
        options: &GangOptions,
        memo: RankMemo,
        counts: Option<&mut CountMemo>,
    ) -> (Result<Gang<'a>, GangError>, RankMemo) {
        self.gang_counted_to(group, pods, claims, options, memo, Caps::Pending(counts))
    }

    /// [`Cluster::gang_counted`] with each candidate's cap not bounded by its shape's
    /// pending pods: how many pods of the shape the node could take, for the node
    /// table. The candidates are the same; their order under the gang-aware policy's
    /// lower levels may not be (it weighs groups of nodes by their caps), so the
    /// table takes the order from [`Cluster::gang_counted`].
    pub(crate) fn gang_counted_uncapped<'a>(
        &self,
        group: Option<&'a PodGroup>,
        pods: &'a [Pod],
        claims: &'a [ResourceClaim],
        options: &GangOptions,
    ) -> Result<Gang<'a>, GangError> {
        self.gang_counted_to(
            group,
            pods,
            claims,
            options,
            RankMemo::default(),
            Caps::Uncapped,
        )
        .0
    }

    fn gang_counted_to<'a>(
        &self,
        group: Option<&'a PodGroup>,
        pods: &'a [Pod],
        claims: &'a [ResourceClaim],
        options: &GangOptions,
        memo: RankMemo,
        caps: Caps<'_>,
    ) -> (Result<Gang<'a>, GangError>, RankMemo) {
        let (uncapped, counts) = match caps {
            Caps::Pending(counts) => (false, counts),
            Caps::Uncapped => (true, None),
        };
        let mut gang = match self.gang_intake(group, pods, claims) {
            Ok(g) => g,
            Err(e) => return (Err(e), memo),
        };
        let mut ranker = self.policy_ranker(&options.policy, pods, claims, memo);
        self.count_candidates(&mut gang, options, ranker.as_mut(), uncapped, counts);
        gang.order_domains(self, options.policy.base(), ranker.as_ref());
        if let ScoringPolicy::GangAware(params) = &options.policy {
            gang.keep_whole(self, params);
        }
        let memo = ranker.map(Ranker::into_memo).unwrap_or_default();
        (Ok(gang), memo)
    }

    /// Tightens the caps of `gang`'s candidates, for explanations and what-ifs (the
    /// search finds the same on its own, node by node, so placing does not pay for it):
    /// a node on which one pod of a shape cannot get its own claims' devices now has cap
    /// 0. The allocator decides, so the request's own selectors, its constraints, its
    /// capacity demand and the shared counters count, which the index's counts do not.
    /// Still an upper bound for more pods, and exact when it says no (for the pod's own
    /// claims; shared claims are left to the search).
    pub(crate) fn refine_caps(&self, gang: &mut Gang<'_>) {
        for shape in &mut gang.shapes {
            if shape.prepared.claims().is_empty() {
                continue;
            }
            let parts = own_parts(&shape.prepared);
            let mut with_pods = shape.requests.clone();
            with_pods.insert("pods".into(), Quantity::from_int(1));
            for c in &mut shape.candidates {
                if c.cap == 0 {
                    continue;
                }
                let requests = match self.node_by_id(c.node) {
                    Some(n) if n.allocatable.contains_key("pods") => &with_pods,
                    Some(_) => &shape.requests,
                    None => continue,
                };
                let outcome = self.allocate_parts_on(
                    c.node,
                    &parts,
                    requests,
                    AllocatorOptions::default(),
                    None,
                );
                if let Ok(AllocationOutcome::Unsatisfiable(_)) = outcome {
                    c.cap = 0;
                }
            }
        }
    }

    /// The CEL error upstream's filtering would hit on some candidate node, if any.
    ///
    /// kube-scheduler runs its Filter plugins on every node (every node in clusters
    /// under 100 nodes; beyond that, until it has found enough feasible ones) before it
    /// chooses, and one DRA Filter that fails with an error (a selector reading an
    /// attribute a device lacks, say) fails the pod's whole scheduling attempt. The
    /// search stops at the first node that fits, so without this sweep a node it never
    /// tries would not abort it: a pod would be placed on `gpu-a` where upstream fails on
    /// `gpu-b`. Each shape's claims are tried on each of its candidate nodes, only when
    /// an error is possible at all: a request has selectors of its own, or a class
    /// selector failed on some device. (QUIRK-adjacent: on clusters of 100 nodes or
    /// more, upstream checks a rotating subset, so it may not reach the node; gangpack
    /// checks every candidate, deterministically.)
    pub(super) fn first_selector_error(
        &self,
        gang: &Gang<'_>,
        options: &GangOptions,
    ) -> Option<AllocationError> {
        let class_errors = self.class_cache.values().any(|c| !c.errors.is_empty());
        for shape in &gang.shapes {
            if shape.prepared.claims().is_empty()
                || !(class_errors || shape.prepared.has_request_selectors())
            {
                continue;
            }
            let parts = own_parts(&shape.prepared);
            for c in &shape.candidates {
                let outcome = self.allocate_parts_on(
                    c.node,
                    &parts,
                    &shape.requests,
                    AllocatorOptions {
                        step_budget: options.allocator_step_budget,
                    },
                    None,
                );
                if let Err(e @ AllocationError::Evaluation(_)) = outcome {
                    return Some(e);
                }
            }
        }
        None
    }

    /// Step 2: every shape's candidate nodes with their caps; step 3's grouping.
    fn count_candidates(
        &self,
        gang: &mut Gang<'_>,
        options: &GangOptions,
        mut ranker: Option<&mut Ranker<'_>>,
        uncapped: bool,
        mut memo: Option<&mut CountMemo>,
    ) {
        let key = gang.key;
        // Domains: with running members, only theirs.
        let fixed: BTreeSet<&str> = match key {
            Some(k) => gang
                .running
                .iter()
                .filter_map(|p| self.node(p.node_name.as_deref()?)?.labels.get(k))
                .map(String::as_str)
                .collect(),
            None => BTreeSet::new(),
        };
        // Running members in several domains (or on a node without the label) already
        // break the constraint: no placement can satisfy it.
        if let Some(k) = key {
            let unlabelled = gang.running.iter().any(|p| {
                p.node_name
                    .as_deref()
                    .and_then(|n| self.node(n))
                    .is_some_and(|n| !n.labels.contains_key(k))
            });
            if fixed.len() > 1 || unlabelled {
                gang.domains = Vec::new();
                return;
            }
        }
        let mut domain_of: BTreeMap<&str, u32> = BTreeMap::new();
        // The previous node's domain: nodes next to each other by name often share one.
        let mut last: Option<(&str, u32)> = None;
        let mut domains: Vec<String> = Vec::new();
        if key.is_none() {
            domains.push(String::new());
        }
        for si in 0..gang.shapes.len() {
            let shape = &gang.shapes[si];
            if gang.tainted.iter().any(|(c, _, _)| shape.uses.contains(c)) {
                gang.shapes[si].candidates = Vec::new();
                continue;
            }
            let pod = shape.rep;
            let take = ranker
                .as_deref_mut()
                .map(|r| r.pod_take(&pod.name, &shape.requests, &shape.own_specs));
            let bounds = self.device_bounds(&shape.own_specs);
            // Without a topology key only nodes with room for a pod's devices are
            // kept: a request none of whose alternatives has as many usable devices in
            // the whole cluster as one pod needs leaves every node without room (a
            // node gives at most the devices of the set it holds), so no node is
            // visited.
            if key.is_none()
                && bounds.iter().any(|alts| {
                    alts.iter()
                        .all(|b| b.share.is_none() && b.set.len() < b.need as usize)
                })
            {
                gang.shapes[si].candidates = Vec::new();
                continue;
            }
            // Counting keeps only admitted nodes: a short node's reason goes unread.
            let filter = ShapeFilter::new(self, pod, &shape.requests, &options.within, key)
                .without_reasons();
            // More devices than all of the shape's pods need do not raise a cap.
            let pods_cap = if uncapped {
                u32::MAX
            } else {
                u32::try_from(shape.pods).unwrap_or(u32::MAX)
            };
            // Without a topology key, a node with fewer free devices than one of the
            // pod's requests needs at least cannot host it: its counts say so without
            // loading it or its devices.
            let least_free = if key.is_none() {
                bounds
                    .iter()
                    .map(|alts| alts.iter().map(|b| b.need).min().unwrap_or(0))
                    .max()
                    .unwrap_or(0)
            } else {
                0
            };
            let share_only = bounds
                .iter()
                .all(|alts| alts.iter().any(|b| b.share.is_some()));
            let count = ShapeCount {
                bounds: &bounds,
                filter: &filter,
                pods_cap,
                least_free,
                keyed: key.is_some(),
                fixed: &fixed,
                share_only,
            };
            // A `nodeSelector` entry few nodes match (a hostname, say) narrows the scan to
            // those nodes, taken in the same (name) order.
            let narrowed = self.nodes_selected(&pod.node_selector);
            // Without a key, a ranker or a narrowed scan, the candidates are a function
            // of the shape and of each node's own state: the cycle's memo has them, up
            // to the nodes changed since (see `count_memo.rs`).
            if let Some(memo) = memo.as_deref_mut()
                && key.is_none()
                && take.is_none()
                && !uncapped
                && narrowed.is_none()
            {
                let shape = &gang.shapes[si];
                let out = memo.candidates(self, shape, &options.within, pods_cap, |id| {
                    self.unkeyed_candidate(id, &count)
                });
                #[cfg(debug_assertions)]
                {
                    let fresh: Vec<Candidate> = self
                        .node_order()
                        .iter()
                        .filter_map(|&id| self.unkeyed_candidate(id, &count))
                        .collect();
                    assert_eq!(
                        out, fresh,
                        "the cycle's count memo differs from a fresh count"
                    );
                }
                gang.shapes[si].candidates = out;
                continue;
            }
            let order: &[NodeId] = narrowed.as_deref().unwrap_or(self.node_order());
            let mut out = Vec::with_capacity(order.len());
            for &id in order {
                let (value, admitted) = match self.count_node(id, &count) {
                    NodeCount::Skip => continue,
                    NodeCount::Seen { domain, admitted } => (domain, admitted),
                };
                let domain = match value {
                    None => 0,
                    Some(v) => match last {
                        Some((value, d)) if value == v => d,
                        _ => {
                            let d = if let Some(&d) = domain_of.get(v) {
                                d
                            } else {
                                let d = domains.len() as u32;
                                domains.push(v.to_owned());
                                domain_of.insert(v, d);
                                d
                            };
                            last = Some((v, d));
                            d
                        }
                    },
                };
                let Some((cap, free)) = admitted else {
                    continue;
                };
                if cap > 0 {
                    let rank = match (ranker.as_deref_mut(), &take) {
                        (Some(r), Some(t)) => r.rank(id, t),
                        _ => 0,
                    };
                    out.push(Candidate {
                        node: id,
                        cap,
                        free,
                        domain,
                        rank,
                    });
                }
            }
            gang.shapes[si].candidates = out;
        }
        gang.domains = domains;
    }

    /// What counting reads of node `id` for one shape (the body of the count's scan).
    fn count_node<'n>(&'n self, id: NodeId, s: &ShapeCount<'_>) -> NodeCount<'n> {
        if s.least_free > 0 && self.node_free_devices(id) < s.least_free {
            return NodeCount::Skip;
        }
        let Some(node) = self.node_by_id(id) else {
            return NodeCount::Skip;
        };
        // Devices first: counting them does not load the node object, so without a
        // topology key (whose domains every node adds to) a node without room is
        // skipped at once.
        let devices = self.node_devices(id);
        let mut free = 0;
        let mut device_cap = u32::MAX;
        for alts in s.bounds {
            let mut best = 0;
            // Scoring counts the free devices of requests without shareable devices
            // only.
            let scored = alts.iter().all(|b| b.share.is_none());
            for b in alts {
                let enough = b.need.saturating_mul(s.pods_cap);
                let have = self.bound_on_node(id, devices, b, enough);
                if scored {
                    free = free.max(have);
                }
                best = best.max(have / b.need);
            }
            device_cap = device_cap.min(best);
        }
        if device_cap == 0 && !s.keyed {
            return NodeCount::Skip;
        }
        // The node filter (scope, cordon, selector and affinity, node taints, scalar
        // resources): the same function the explanation asks.
        let most = s.pods_cap.min(device_cap);
        let in_fixed = |v: &str| s.fixed.is_empty() || s.fixed.contains(v);
        let filtered = self.filter_node(id, node, s.filter, in_fixed, most);
        if matches!(
            filtered.verdict,
            Err(Rejection::OutOfScope | Rejection::Cordoned)
        ) {
            return NodeCount::Skip;
        }
        let admitted = filtered.verdict.ok().map(|cap| {
            if s.share_only {
                free = self.node_counts(id).map_or(0, |c| c.free_untainted);
            }
            (cap, free)
        });
        NodeCount::Seen {
            domain: filtered.domain,
            admitted,
        }
    }

    /// Node `id` as a candidate of a shape counted without a topology key or a
    /// ranker, if it is one.
    fn unkeyed_candidate(&self, id: NodeId, s: &ShapeCount<'_>) -> Option<Candidate> {
        match self.count_node(id, s) {
            NodeCount::Seen {
                admitted: Some((cap, free)),
                ..
            } if cap > 0 => Some(Candidate {
                node: id,
                cap,
                free,
                domain: 0,
                rank: 0,
            }),
            _ => None,
        }
    }

    /// The nodes a `nodeSelector` allows at most, by name, when one of its entries
    /// matches few nodes (under an eighth of them); `None` to scan every node. Only
    /// narrows: the scan still checks every entry and the affinity on each node.
    fn nodes_selected(&self, selector: &BTreeMap<String, String>) -> Option<Vec<NodeId>> {
        let mut fewest: Option<&BTreeSet<NodeId>> = None;
        for (k, v) in selector {
            let Some(ids) = self.nodes_labelled(k, v) else {
                return Some(Vec::new());
            };
            if fewest.is_none_or(|f| ids.len() < f.len()) {
                fewest = Some(ids);
            }
        }
        let ids = fewest?;
        if ids.len().saturating_mul(8) >= self.node_slots() {
            return None;
        }
        let mut out: Vec<NodeId> = ids.iter().copied().collect();
        out.sort_by(|a, b| self.node_name_of(*a).cmp(self.node_name_of(*b)));
        Some(out)
    }

    /// How many devices of one request alternative a node can give at most: the
    /// usable devices of `b.set` on it, a shareable one only where its room admits the
    /// request's capacity (see `cluster/rooms.rs`).
    /// Counting stops at `enough`: more do not raise the pod's cap.
    fn bound_on_node(
        &self,
        id: NodeId,
        devices: Option<&SparseDeviceSet>,
        b: &DeviceBound,
        enough: u32,
    ) -> u32 {
        let Some(share) = &b.share else {
            return devices.map_or(0, |d| d.count_in(&b.set)) as u32;
        };
        let exclusive =
            u32::try_from(devices.map_or(0, |d| d.count_in(&share.exclusive))).unwrap_or(u32::MAX);
        if exclusive >= enough {
            return exclusive;
        }
        let (rooms, summary) = self.node_rooms(id);
        if summary.is_some_and(|s| !s.may_admit(&share.capacity)) {
            return exclusive;
        }
        let mut have = exclusive;
        for r in rooms {
            if b.set.contains(r.dev) && Cluster::share_room_admits(r, &share.capacity) {
                have += 1;
                if have >= enough {
                    break;
                }
            }
        }
        have
    }

    /// Per device request of a shape's own claims, its alternatives as bounds on what
    /// a node can give; requests that cannot be bounded by counting (admin access,
    /// allocation mode `All` over shareable devices, network-attached devices) are left
    /// out.
    fn device_bounds(&self, specs: &[&ResourceClaimSpec]) -> Vec<Vec<DeviceBound>> {
        let mut out = Vec::new();
        for spec in specs {
            'request: for r in &spec.requests {
                let mut alts = Vec::new();
                for view in r.alternatives() {
                    if view.admin_access {
                        continue 'request;
                    }
                    let need = match view.allocation_mode {
                        AllocationMode::ExactCount(n) => n.max(1),
                        AllocationMode::All => 1,
                    };
                    // Devices the class's selectors fail on count: the allocator
                    // aborts on them (a CEL runtime error is not a mismatch).
                    let Some(class) = self.class_devices_or_failing(view.device_class_name) else {
                        continue 'request;
                    };
                    let mut set = class.into_owned();
                    self.restrict_usable(&mut set, view.tolerations);
                    if set.intersects(self.shared_devices()) {
                        continue 'request;
                    }
                    let share = if set.intersects(self.shareable_devices()) {
                        if view.allocation_mode == AllocationMode::All {
                            continue 'request;
                        }
                        let mut exclusive = set.clone();
                        exclusive.difference_with(self.shareable_devices());
                        Some(ShareBound {
                            exclusive,
                            capacity: view
                                .capacity
                                .iter()
                                .map(|(k, q)| (self.symbol(k), *q))
                                .collect(),
                        })
                    } else {
                        None
                    };
                    alts.push(DeviceBound { set, need, share });
                }
                if !alts.is_empty() {
                    out.push(alts);
                }
            }
        }
        out
    }
}

/// One alternative of a device request, as [`Cluster::device_bounds`] counts it on a
/// node.
struct DeviceBound {
    /// The usable candidate devices.
    set: DeviceSet,
    /// Devices one pod needs.
    need: u32,
    /// When `set` holds shareable devices: how to count those.
    share: Option<ShareBound>,
}

/// The shareable part of a [`DeviceBound`].
struct ShareBound {
    /// `set` without its shareable devices (counted as free devices).
    exclusive: DeviceSet,
    /// The request's capacity requests, for the shareable devices' rooms.
    capacity: Vec<RoomRequest>,
}

/// How [`Cluster::gang_counted_to`] caps candidates.
enum Caps<'m> {
    /// At the shape's pending pods, with the cycle's memo of counts if any.
    Pending(Option<&'m mut CountMemo>),
    /// Not at the shape's pending pods (the node table).
    Uncapped,
}

/// What counting reads of one shape, for each node ([`Cluster::count_node`]).
struct ShapeCount<'c> {
    bounds: &'c [Vec<DeviceBound>],
    filter: &'c ShapeFilter<'c>,
    /// The most pods of the shape a node need hold.
    pods_cap: u32,
    /// Without a key: fewer free devices than this and a node cannot host a pod.
    least_free: u32,
    /// Whether the gang has a topology key.
    keyed: bool,
    /// The domains running members fix (empty: any).
    fixed: &'c BTreeSet<&'c str>,
    /// Every request has a shareable alternative: a node's free devices are its
    /// untainted free devices.
    share_only: bool,
}

/// What [`Cluster::count_node`] says of one node.
enum NodeCount<'n> {
    /// Not the shape's node at all: no domain is recorded for it.
    Skip,
    /// In scope: its value of the topology key, and when admitted its cap (possibly
    /// 0) and free devices.
    Seen {
        domain: Option<&'n str>,
        admitted: Option<(u32, u32)>,
    },
}

/// Sorts candidates by domain, then by free devices (ascending, or descending when
/// `descending`), keeping node-name order among equals: a counting sort when the keys
/// are few (nodes hold a handful of devices), else a stable comparison sort.
fn sort_by_domain_and_free(candidates: &mut Vec<Candidate>, domains: usize, descending: bool) {
    if candidates.len() < 2 {
        return;
    }
    let max_free = u64::from(candidates.iter().map(|c| c.free).max().unwrap_or(0));
    // In u64: a domain index times the free count can pass u32::MAX, which `usize` is
    // on wasm32 (where the product overflowed and the order differed from native).
    let keys = (domains.max(1) as u64).saturating_mul(max_free + 1);
    // The free devices' part of the key: ascending, or descending when asked.
    let free_key = |c: &Candidate| {
        if descending {
            max_free - u64::from(c.free)
        } else {
            u64::from(c.free)
        }
    };
    let key = |c: &Candidate| u64::from(c.domain) * (max_free + 1) + free_key(c);
    let few = 4 * candidates.len() as u64 + 64;
    if keys <= few {
        // Few keys: one counting pass (each key fits a usize).
        *candidates = counting_sort(candidates, keys as usize, |c| key(c) as usize);
        return;
    }
    let frees = max_free + 1;
    let domains_max = u64::from(candidates.iter().map(|c| c.domain).max().unwrap_or(0)) + 1;
    if frees <= few && domains_max <= few {
        // Many domains (racks on a large fleet): by free devices, then stably by
        // domain, two linear passes where one comparison sort was O(n log n).
        let by_free = counting_sort(candidates, frees as usize, |c| free_key(c) as usize);
        *candidates = counting_sort(&by_free, domains_max as usize, |c| c.domain as usize);
        return;
    }
    candidates.sort_by_key(key);
}

/// `items` stably sorted by `slot`, every slot below `slots`.
fn counting_sort(
    items: &[Candidate],
    slots: usize,
    slot: impl Fn(&Candidate) -> usize,
) -> Vec<Candidate> {
    let mut start = vec![0usize; slots + 1];
    for c in items {
        start[slot(c) + 1] += 1;
    }
    for k in 0..slots {
        start[k + 1] += start[k];
    }
    let Some(&first) = items.first() else {
        return Vec::new();
    };
    let mut out = vec![first; items.len()];
    for c in items {
        let k = slot(c);
        out[start[k]] = *c;
        start[k] += 1;
    }
    out
}

impl Gang<'_> {
    /// Sorts each shape's candidates by domain then policy, and orders the domains
    /// that pass the count bound by the policy's domain score.
    fn order_domains(
        &mut self,
        cluster: &Cluster,
        policy: &ScoringPolicy,
        ranker: Option<&Ranker<'_>>,
    ) {
        let domains = self.domains.len();
        for shape in &mut self.shapes {
            // Stable: equal keys stay in node-name order.
            match (policy, ranker) {
                (ScoringPolicy::Spread, _) => {
                    sort_by_domain_and_free(&mut shape.candidates, domains, true);
                }
                (_, Some(_)) => shape.candidates.sort_by_key(|c| (c.domain, c.rank)),
                _ => sort_by_domain_and_free(&mut shape.candidates, domains, false),
            }
        }
        self.ranges = self
            .shapes
            .iter()
            .map(|s| {
                let mut r = vec![(0u32, 0u32); domains];
                let mut i = 0;
                while i < s.candidates.len() {
                    let d = s.candidates[i].domain;
                    let mut j = i;
                    while j < s.candidates.len() && s.candidates[j].domain == d {
                        j += 1;
                    }
                    r[d as usize] = (i as u32, j as u32);
                    i = j;
                }
                r
            })
            .collect();
        let want = self.wanted_by_shape(self.required);
        let mut scored: Vec<(i64, u32)> = Vec::new();
        // Free devices per domain, for the policies that score by them (computed once,
        // when a domain first passes the count bound).
        let mut free: Option<Vec<i64>> = None;
        // Devices per domain, for the device bound (when it holds).
        let mut devices: Option<Vec<i64>> = None;
        let device_bound = self.device_bound_holds(cluster);
        for d in 0..domains {
            let reach: usize = (0..self.shapes.len())
                .map(|s| {
                    let caps = self.caps_in(s, d as u32);
                    self.shapes[s]
                        .pods
                        .min(usize::try_from(caps).unwrap_or(usize::MAX))
                })
                .sum();
            // The pods the domain's free devices hold at most, the smallest first: each
            // pod's own claims take devices of its node, none twice.
            let reach = if device_bound && reach >= self.required && domains == 1 {
                let within = self.pods_within_enough(cluster);
                #[cfg(debug_assertions)]
                {
                    let have = self.domains_count(cluster, |c| c.free)[d];
                    let all = self.pods_within(u64::try_from(have).unwrap_or(0));
                    assert_eq!(
                        within.min(self.required),
                        all.min(self.required),
                        "pods within the free devices, summed until enough"
                    );
                }
                reach.min(within)
            } else if device_bound && reach >= self.required {
                let have =
                    devices.get_or_insert_with(|| self.domains_count(cluster, |c| c.free))[d];
                reach.min(self.pods_within(u64::try_from(have).unwrap_or(0)))
            } else {
                reach
            };
            self.most = self.most.max(reach.min(self.required));
            if reach < self.required {
                continue;
            }
            if domains == 1 {
                // One domain: nothing to order.
                scored.push((0, d as u32));
                continue;
            }
            let mut free_in = |d: usize| {
                free.get_or_insert_with(|| self.domains_count(cluster, |c| c.free_untainted))[d]
            };
            let score = match (policy, ranker) {
                (ScoringPolicy::Spread, _) => -free_in(d),
                (_, Some(r)) => self.domain_rank(r, d as u32, &want),
                _ => free_in(d),
            };
            scored.push((score, d as u32));
        }
        // Ties: the domain value (name order).
        let names = &self.domains;
        scored.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| names[a.1 as usize].cmp(&names[b.1 as usize]))
        });
        self.order = scored.into_iter().map(|(_, d)| d).collect();
    }

    /// Whether every pod's own claims take devices of its node, none shared with
    /// another pod, each counted in [`DeviceCounts::free`](crate::DeviceCounts::free)
    /// there: no network-attached or shareable device exists, and no request of the
    /// pods' own claims has admin access. Then a domain whose free devices are fewer
    /// than the required pods need cannot host them.
    fn device_bound_holds(&self, cluster: &Cluster) -> bool {
        !cluster.has_shared_devices()
            && cluster.shareable_devices().is_empty()
            && self.shapes.iter().all(|s| {
                s.own_specs.iter().all(|spec| {
                    spec.requests
                        .iter()
                        .all(|r| r.alternatives().iter().all(|v| !v.admin_access))
                })
            })
    }

    /// Per shape, the devices one pod takes at least and the pending pods, the
    /// cheapest first: the order [`Gang::pods_within`] and [`Gang::devices_for`] fill.
    fn pod_costs(&self) -> Vec<(u64, usize)> {
        let mut costs: Vec<(u64, usize)> = self
            .shapes
            .iter()
            .map(|s| (s.min_devices, s.pods))
            .collect();
        costs.sort_unstable();
        costs
    }

    /// How many pending pods `devices` devices hold at most: the pods needing the
    /// fewest devices first.
    fn pods_within(&self, devices: u64) -> usize {
        let mut left = devices;
        let mut pods = 0;
        for (each, n) in self.pod_costs() {
            if each == 0 {
                pods += n;
                continue;
            }
            let fit = usize::try_from(left / each).unwrap_or(usize::MAX).min(n);
            pods += fit;
            left -= each * fit as u64;
            if fit < n {
                break;
            }
        }
        pods
    }

    /// The devices the `pods` pending pods needing the fewest take (see
    /// [`Gang::pods_within`]): `pods_within(d) >= pods` exactly when `d` is at least
    /// this.
    fn devices_for(&self, pods: usize) -> u64 {
        let mut left = pods;
        let mut devices = 0u64;
        for (each, n) in self.pod_costs() {
            let take = n.min(left);
            devices = devices.saturating_add(each.saturating_mul(take as u64));
            left -= take;
        }
        devices
    }

    /// With one domain: [`Gang::pods_within`] the free devices of the candidate
    /// nodes, or some number of pods at least `required` when those devices are
    /// enough for the required pods. The nodes are summed only until they are (the
    /// caller reads the figure only up to `required`).
    fn pods_within_enough(&self, cluster: &Cluster) -> usize {
        let enough = self.devices_for(self.required);
        let mut have = 0u64;
        self.each_candidate_node(|c| {
            have += u64::from(cluster.node_counts(c.node).map_or(0, |n| n.free));
            have < enough
        });
        let within = self.pods_within(have);
        debug_assert!(have < enough || within >= self.required);
        within
    }

    /// Calls `f` on each candidate node once (the first candidate naming it, shape
    /// by shape) while it returns true.
    fn each_candidate_node(&self, mut f: impl FnMut(&Candidate) -> bool) {
        // Nodes seen, one bit per node id.
        let mut seen: Vec<u64> = Vec::new();
        for shape in &self.shapes {
            for c in &shape.candidates {
                let (word, bit) = (c.node.index() / 64, 1u64 << (c.node.index() % 64));
                if word >= seen.len() {
                    seen.resize(word + 1, 0);
                }
                if seen[word] & bit == 0 {
                    seen[word] |= bit;
                    if !f(c) {
                        return;
                    }
                }
            }
        }
    }

    /// Per domain, `count` of the device counts of its candidate nodes, summed (each
    /// node once; a node is in one domain).
    fn domains_count(&self, cluster: &Cluster, count: impl Fn(&DeviceCounts) -> u32) -> Vec<i64> {
        let mut total = vec![0i64; self.domains.len()];
        self.each_candidate_node(|c| {
            total[c.domain as usize] +=
                i64::from(cluster.node_counts(c.node).map_or(0, |n| count(&n)));
            true
        });
        total
    }

    /// Domain `d`'s score under a ranked policy: the values of the ranks of the
    /// candidates `want[s]` pods of each shape take, greedily in rank order (a
    /// candidate's rank counted once per pod it takes), summed and rounded to the
    /// nearest integer after scaling by 1000 (ranks are per pod; ties keep name order).
    fn domain_rank(&self, ranker: &Ranker<'_>, d: u32, want: &[usize]) -> i64 {
        let mut sum = 0.0;
        for (s, &n) in want.iter().enumerate() {
            let mut left = n;
            for c in self.candidates_in(s, d) {
                if left == 0 {
                    break;
                }
                let k = left.min(c.cap as usize);
                #[allow(clippy::cast_precision_loss)]
                let pods = k as f64;
                sum += pods * ranker.value(c.rank);
                left -= k;
            }
        }
        #[allow(clippy::cast_possible_truncation)]
        let scaled = (sum * 1000.0) as i64;
        scaled
    }
}

#[cfg(test)]
mod tests {
    use super::{Candidate, sort_by_domain_and_free};
    use crate::NodeId;
    use crate::alloc_prelude::*;

    fn candidate(node: u32, domain: u32, free: u32) -> Candidate {
        Candidate {
            node: NodeId(node),
            cap: 1,
            free,
            domain,
            rank: 0,
        }
    }

    /// Each of the three ways (one counting pass, two, a comparison sort) orders as
    /// the stable sort by (domain, free) does, ties in the given order.
    #[test]
    fn every_sort_path_orders_as_a_stable_sort() {
        let mut seed = 5u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            u32::try_from((seed >> 33) % n).unwrap()
        };
        // (candidates, domains, largest free): one pass, two passes, comparisons.
        for (n, domains, free) in [(50, 3, 8), (50, 200, 8), (600, 800, 8), (40, 400, 900)] {
            for descending in [false, true] {
                let mut c: Vec<Candidate> = (0..n)
                    .map(|i| candidate(i, next(domains), next(free + 1)))
                    .collect();
                let mut want = c.clone();
                if descending {
                    want.sort_by_key(|c| (c.domain, core::cmp::Reverse(c.free)));
                } else {
                    want.sort_by_key(|c| (c.domain, c.free));
                }
                sort_by_domain_and_free(&mut c, domains as usize, descending);
                assert_eq!(
                    c, want,
                    "{n} candidates, {domains} domains, descending {descending}"
                );
            }
        }
    }

    /// The sort key is a domain index times the largest free count: past `u32::MAX`
    /// here, which overflowed a 32-bit `usize` (wasm32) before the key was a `u64`.
    #[test]
    fn sort_keys_past_u32_keep_domain_then_free_order() {
        let mut c = vec![
            candidate(0, 70_000, 5),
            candidate(1, 3, 70_000),
            candidate(2, 70_000, 1),
            candidate(3, 3, 2),
        ];
        sort_by_domain_and_free(&mut c, 70_001, false);
        assert_eq!(c.iter().map(|c| c.node.0).collect::<Vec<_>>(), [3, 1, 2, 0]);
        sort_by_domain_and_free(&mut c, 70_001, true);
        assert_eq!(c.iter().map(|c| c.node.0).collect::<Vec<_>>(), [1, 3, 0, 2]);
    }
}
