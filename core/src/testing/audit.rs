//! An independent audit of a [`Scheduler`]'s whole state (feature `testing`).
//!
//! [`audit`] recomputes what the scheduler and its cluster index hold from the stored
//! objects, with plain loops and none of the index's code, and judges the running
//! state with the independent validator ([`validate_placement`], [`validate_gang`]):
//!
//! 1. **The index** (a brute-force recount, [`Finding::Index`]). Slices are grouped
//!    into pools; a pool's current generation is its highest; it is complete when as
//!    many slices of that generation are present as the first of them (by name)
//!    expects, and valid without a duplicate device or counter set and without a
//!    device consuming a counter set or counter the pool lacks. Then: the pool
//!    statuses; the usable set (current devices of complete, valid pools); the free,
//!    tainted and shared sets among them (not held exclusively, with a `NoSchedule` /
//!    `NoExecute` taint, not published node-locally); each device's taints (its own
//!    merged with every DeviceTaintRule that selects it); each node's device set
//!    (every device its node-local slices publish) and counts; the counts of every
//!    tracked topology domain; the holders of every device against the claims'
//!    allocations; the pending `NoExecute` notices; and each DeviceClass's devices
//!    (its selectors compiled and evaluated again on every usable device).
//! 2. **The scheduler's own views** ([`Finding::State`]): a pod's `nodeName` and its
//!    binding agree, a bound pod's claims exist and are allocated, an allocated claim
//!    is used by a bound pod (or is the claim of a PodGroup with a bound member, or
//!    one the scope says someone else allocated), the node reservations equal what
//!    the bound pods request (less than nothing on a node they over-commit), and a
//!    tracked Stranding or FGD table equals the cluster's own recomputation
//!    (`Cluster::audit_scores`: engine code, the exception to the rule above).
//! 3. **Whole-state validity** ([`Finding::Violation`]), as `gangpack check` judges a
//!    dump: the cluster is rebuilt from its objects with nothing allocated, and every
//!    binding and allocation is handed to [`validate_placement`] as one decision
//!    against it — so no exclusive device is held twice, every bound pod's claims are
//!    allocated once and reach its node, nodes are not over-committed — and each
//!    PodGroup with a bound member to [`validate_gang`]: at or above `minCount` (or not
//!    bound at all) and within one topology domain. What holds only when a pod is
//!    placed is held only against the placements the [`AuditScope`] names: a node's
//!    `NoSchedule` taints, cordon and labels, a device's taints, the DeviceClass, and
//!    everything about devices that slices published then (a running claim keeps its
//!    devices when a driver withdraws them or its class changes). Gangs the scope
//!    lists as broken (a member completed or was evicted) may be below `minCount`;
//!    gangs it lists as split (a member's node relabelled, or bound by someone else)
//!    may span topology domains; nodes it lists as resized may be over-committed in
//!    `cpu`.
//! 4. **Evictions** ([`Finding::Eviction`]): every bound pod using a device whose
//!    `NoExecute` taint its claim's allocation does not tolerate forever, or on a node
//!    whose `NoExecute` taint it does not tolerate forever, is scheduled for eviction
//!    by the deadline; every scheduled eviction names a bound pod.
//!
//! The eviction schedule must be up to date: it is after every change made through
//! the scheduler except adding a bound pod, after which call
//! [`Scheduler::refresh_evictions`].
//!
//! ```
//! use gangpack::testing::{ClusterShape, Finding, audit};
//! use gangpack::{GangOptions, Pod};
//!
//! let shape = ClusterShape { nodes: 2, gpus_per_node: 1, nodes_per_rack: 1, shared_gpus: 0 };
//! let mut s = shape.build(GangOptions::default());
//! s.add_pod(Pod::new("team-a", "web"))?;
//! s.cycle();
//! assert_eq!(audit(&s), Vec::<Finding>::new());
//! # Ok::<(), gangpack::SchedulerError>(())
//! ```

use core::fmt;

use crate::alloc_prelude::*;
use crate::{
    ClaimAllocation, ClaimSource, Cluster, Device, DeviceRef, DeviceTaint, DeviceTaintEffect,
    EvictionVerdict, PlacementDecision, Pod, PodBinding, ResourceClaim, ResourceSlice, Scheduler,
    Selector, TaintEffect, Time, Violation, device_eviction, node_eviction, validate_gang,
    validate_placement,
};

/// What the audit holds to placement rules beyond the running state (see the module
/// docs): the pods and claims placed since the last change to taints, slices or rules,
/// and the gangs that lost a member since they were placed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditScope {
    /// Pods bound since the last taint, slice or rule change (`namespace/name`): held
    /// to every node rule (taints, cordon).
    pub placed_pods: BTreeSet<String>,
    /// Claims allocated by placements since the last taint, slice or rule change:
    /// held to every device rule (taints, published devices).
    pub placed_claims: BTreeSet<String>,
    /// PodGroups that lost a bound member since their last placement (or whose
    /// `minCount` changed, or that someone else bound a member of): they may be below
    /// `minCount`.
    pub broken_gangs: BTreeSet<String>,
    /// PodGroups that may span topology domains, or run on a node without the
    /// topology label: since their last placement a member's node was relabelled, or
    /// someone else bound a member (node labels are `IgnoredDuringExecution`).
    pub split_gangs: BTreeSet<String>,
    /// Nodes whose allocatable `cpu` changed while pods ran there: the pods stay, so
    /// they may be over-committed.
    pub resized_nodes: BTreeSet<String>,
    /// Claims someone else allocated (`status.allocation` written by another
    /// scheduler): held with no user until a pod that names them is bound.
    pub foreign_claims: BTreeSet<String>,
}

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The cluster index disagrees with a recount from the objects.
    Index {
        /// What was counted (`usable devices`, `node node-1 counts`, ...).
        what: String,
        /// The recount.
        expected: String,
        /// What the index holds.
        found: String,
    },
    /// The scheduler's views of its own state disagree.
    State {
        /// What is wrong.
        what: String,
    },
    /// The independent validator rejects the running state.
    Violation(Violation),
    /// The eviction schedule misses or misstates an eviction.
    Eviction {
        /// The pod.
        pod: String,
        /// What is wrong.
        what: String,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Index {
                what,
                expected,
                found,
            } => write!(
                f,
                "index: {what}: a recount gives {expected}, the index holds {found}"
            ),
            Finding::State { what } => write!(f, "state: {what}"),
            Finding::Violation(v) => write!(f, "validator ({}): {v}", v.rule()),
            Finding::Eviction { pod, what } => write!(f, "eviction: pod {pod}: {what}"),
        }
    }
}

/// Audits the whole state with nothing known about when things were placed: every
/// running pod and claim is judged as running (see the module docs).
pub fn audit(s: &Scheduler) -> Vec<Finding> {
    audit_scoped(s, &AuditScope::default())
}

/// Audits the whole state, holding the placements `scope` names to every placement
/// rule (see the module docs).
pub fn audit_scoped(s: &Scheduler, scope: &AuditScope) -> Vec<Finding> {
    let mut out = Vec::new();
    let recount = Recount::new(s.cluster());
    recount.check(s, &mut out);
    recount.check_classes(&mut out);
    recount.check_eviction_sources(&mut out);
    check_views(s, scope, &mut out);
    // The one check that reuses engine code: tracked against recomputed scores.
    for (node, tracked, fresh) in s.cluster().audit_scores() {
        out.push(Finding::State {
            what: format!("node {node}: tracked score {tracked:?}, recomputed {fresh:?}"),
        });
    }
    check_validity(s, scope, &mut out);
    check_evictions(s, &recount, &mut out);
    out
}

fn key(ns: &str, name: &str) -> String {
    format!("{ns}/{name}")
}

fn index_finding(
    what: impl Into<String>,
    expected: impl fmt::Debug,
    found: impl fmt::Debug,
) -> Finding {
    Finding::Index {
        what: what.into(),
        expected: format!("{expected:?}"),
        found: format!("{found:?}"),
    }
}

/// A set recount that differs: what the index lacks and what it has beyond.
fn set_finding<T: Ord + fmt::Display>(
    what: impl Into<String>,
    expected: &BTreeSet<T>,
    found: &BTreeSet<T>,
) -> Finding {
    let list = |v: Vec<&T>| {
        let items: Vec<String> = v.iter().map(ToString::to_string).collect();
        format!("[{}]", items.join(", "))
    };
    Finding::Index {
        what: what.into(),
        expected: format!(
            "{} (the index lacks {})",
            expected.len(),
            list(expected.difference(found).collect())
        ),
        found: format!(
            "{} (with {} beyond)",
            found.len(),
            list(found.difference(expected).collect())
        ),
    }
}

/// The claims a pod names by `resourceClaimName`, as `namespace/name`.
fn claims_of(p: &Pod) -> Vec<String> {
    let mut v: Vec<String> = p
        .resource_claims
        .iter()
        .filter_map(|c| match &c.source {
            ClaimSource::ClaimName(n) => Some(key(&p.namespace, n)),
            ClaimSource::Template(_) => None,
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

// ------------------------------------------------------------------- 1. the index

/// A device as the objects publish it.
struct Published<'a> {
    slice: &'a ResourceSlice,
    device: &'a Device,
    usable: bool,
}

/// The recount: every device of every slice, the current ones by reference.
struct Recount<'a> {
    cluster: &'a Cluster,
    /// Current-generation devices of each pool, by reference (the last one of a
    /// duplicated name wins; such a pool is not usable).
    current: BTreeMap<DeviceRef, Published<'a>>,
    /// Pool statuses: (driver, pool) → (generation, present, expected, problems).
    pools: BTreeMap<(String, String), (i64, usize, i64, usize)>,
}

impl<'a> Recount<'a> {
    fn new(c: &'a Cluster) -> Recount<'a> {
        let mut by_pool: BTreeMap<(String, String), Vec<&ResourceSlice>> = BTreeMap::new();
        for s in c.slices() {
            by_pool
                .entry((s.driver.clone(), s.pool.name.clone()))
                .or_default()
                .push(s);
        }
        let mut current = BTreeMap::new();
        let mut pools = BTreeMap::new();
        for ((driver, pool), mut slices) in by_pool {
            slices.sort_by(|a, b| a.name.cmp(&b.name));
            let generation = slices.iter().map(|s| s.pool.generation).max().unwrap_or(0);
            let cur: Vec<&ResourceSlice> = slices
                .iter()
                .copied()
                .filter(|s| s.pool.generation == generation)
                .collect();
            let expected = cur.first().map_or(0, |s| s.pool.resource_slice_count);
            let complete = i64::try_from(cur.len()).is_ok_and(|n| n == expected);
            let mut problems = 0;
            let mut names = BTreeSet::new();
            let mut sets: BTreeMap<&str, &BTreeMap<String, crate::Quantity>> = BTreeMap::new();
            for s in &cur {
                for cs in &s.shared_counters {
                    if sets.insert(cs.name.as_str(), &cs.counters).is_some() {
                        problems += 1;
                    }
                }
                for d in &s.devices {
                    if !names.insert(d.name.as_str()) {
                        problems += 1;
                    }
                }
            }
            for s in &cur {
                for d in &s.devices {
                    for u in &d.consumes_counters {
                        match sets.get(u.counter_set.as_str()) {
                            None => problems += 1,
                            Some(set) => {
                                problems +=
                                    u.counters.keys().filter(|k| !set.contains_key(*k)).count();
                            }
                        }
                    }
                }
            }
            let usable = complete && problems == 0;
            for s in &cur {
                for d in &s.devices {
                    current.insert(
                        DeviceRef::new(&driver, &pool, &d.name),
                        Published {
                            slice: s,
                            device: d,
                            usable,
                        },
                    );
                }
            }
            pools.insert((driver, pool), (generation, cur.len(), expected, problems));
        }
        Recount {
            cluster: c,
            current,
            pools,
        }
    }

    /// The taints on a device: its own (when published at its pool's current
    /// generation) and those of the rules selecting it.
    fn taints(&self, r: &DeviceRef) -> Vec<DeviceTaint> {
        let mut t = self
            .current
            .get(r)
            .map(|p| p.device.taints.clone())
            .unwrap_or_default();
        for rule in self.cluster.taint_rules() {
            if rule.selects(&r.driver, &r.pool, &r.device) {
                t.push(rule.taint.clone());
            }
        }
        t
    }

    /// The eviction sources the cluster keeps incrementally, recounted from the
    /// objects: the devices of every slice (any generation) with a `NoExecute` taint,
    /// their own or a rule's, by slice and device name; and the allocation records of
    /// devices no pool publishes at its current generation or published with such a
    /// taint.
    fn check_eviction_sources(&self, out: &mut Vec<Finding>) {
        let c = self.cluster;
        let mut expected: BTreeSet<String> = BTreeSet::new();
        for s in c.slices() {
            for d in &s.devices {
                let by_rule = c.taint_rules().any(|rule| {
                    rule.taint.effect == DeviceTaintEffect::NoExecute
                        && rule.selects(&s.driver, &s.pool.name, &d.name)
                });
                if by_rule
                    || d.taints
                        .iter()
                        .any(|t| t.effect == DeviceTaintEffect::NoExecute)
                {
                    expected.insert(format!("{}: {}", s.name, d.name));
                }
            }
        }
        let found: BTreeSet<String> = c
            .no_execute
            .iter()
            .filter_map(|dev| c.devices.get(dev.index())?.as_ref())
            .map(|slot| {
                let slice = &c.slice_entry(slot.slice).slice;
                format!("{}: {}", slice.name, c.strings.resolve(slot.name))
            })
            .collect();
        if expected != found {
            out.push(set_finding(
                "devices with a NoExecute taint",
                &expected,
                &found,
            ));
        }
        let device_ref = |&(d, p, n): &crate::cluster::DeviceKey| {
            DeviceRef::new(
                c.strings.resolve(d),
                c.strings.resolve(p),
                c.strings.resolve(n),
            )
        };
        let expected: BTreeSet<DeviceRef> = c
            .allocations
            .keys()
            .map(device_ref)
            .filter(|r| {
                !self.current.contains_key(r)
                    || self
                        .taints(r)
                        .iter()
                        .any(|t| t.effect == DeviceTaintEffect::NoExecute)
            })
            .collect();
        let found: BTreeSet<DeviceRef> = c.eviction_sources.iter().map(device_ref).collect();
        if expected != found {
            out.push(set_finding(
                "allocated devices an eviction may come from (NoExecute or withdrawn)",
                &expected,
                &found,
            ));
        }
    }

    fn usable(&self) -> BTreeSet<DeviceRef> {
        self.current
            .iter()
            .filter(|(_, p)| p.usable)
            .map(|(r, _)| r.clone())
            .collect()
    }

    fn check(&self, s: &Scheduler, out: &mut Vec<Finding>) {
        let c = self.cluster;
        // Pools.
        for ((driver, pool), &(generation, present, expected, problems)) in &self.pools {
            let found = c.pool_status(driver, pool).map(|p| {
                (
                    p.generation,
                    p.slices_present,
                    p.slices_expected,
                    p.problems.len(),
                )
            });
            if found != Some((generation, present, expected, problems)) {
                out.push(index_finding(
                    format!("pool {driver}/{pool} (generation, slices, expected, problems)"),
                    Some((generation, present, expected, problems)),
                    found,
                ));
            }
        }
        let known = c.pools().count();
        if known < self.pools.len() {
            out.push(index_finding("pools", self.pools.len(), known));
        }

        // Holders, from the claims' allocations.
        let mut holders: BTreeMap<DeviceRef, BTreeSet<(String, bool)>> = BTreeMap::new();
        for claim in s.claims() {
            let ck = key(&claim.namespace, &claim.name);
            for d in claim.allocation.iter().flat_map(|a| &a.devices) {
                holders
                    .entry(DeviceRef::new(&d.driver, &d.pool, &d.device))
                    .or_default()
                    .insert((ck.clone(), d.admin_access));
            }
        }
        let mut devices: BTreeSet<DeviceRef> = self.current.keys().cloned().collect();
        devices.extend(holders.keys().cloned());
        for r in &devices {
            let found: BTreeSet<(String, bool)> = c
                .allocations(r)
                .iter()
                .map(|h| (h.consumer.clone(), h.admin_access))
                .collect();
            let expected = holders.get(r).cloned().unwrap_or_default();
            if found != expected {
                out.push(index_finding(
                    format!("holders of {r} (by the claims' allocations)"),
                    expected,
                    found,
                ));
            }
        }
        let held = |r: &DeviceRef| {
            holders
                .get(r)
                .is_some_and(|hs| hs.iter().any(|(_, admin)| !admin))
        };

        // The device sets.
        let refs = |set: &crate::DeviceSet| -> BTreeSet<DeviceRef> {
            set.iter()
                .filter_map(|id| c.device(id).map(|v| v.device_ref()))
                .collect()
        };
        let usable = self.usable();
        let found_usable = refs(c.usable_devices());
        if found_usable != usable {
            out.push(set_finding("usable devices", &usable, &found_usable));
        }
        // By id: a device of an older generation shares its reference.
        let within = |set: &crate::DeviceSet| -> BTreeSet<DeviceRef> {
            set.iter()
                .filter(|id| c.usable_devices().contains(*id))
                .filter_map(|id| c.device(id).map(|v| v.device_ref()))
                .collect()
        };
        let free: BTreeSet<DeviceRef> = usable
            .iter()
            .filter(|r| self.current[*r].device.allow_multiple_allocations || !held(r))
            .cloned()
            .collect();
        let found_free = within(c.free_devices());
        if found_free != free {
            out.push(set_finding("free usable devices", &free, &found_free));
        }
        let blocking = |t: &DeviceTaint| {
            matches!(
                t.effect,
                DeviceTaintEffect::NoSchedule | DeviceTaintEffect::NoExecute
            )
        };
        let tainted: BTreeSet<DeviceRef> = usable
            .iter()
            .filter(|r| self.taints(r).iter().any(blocking))
            .cloned()
            .collect();
        let found_tainted = within(c.tainted_devices());
        if found_tainted != tainted {
            out.push(set_finding(
                "tainted usable devices",
                &tainted,
                &found_tainted,
            ));
        }
        let shared: BTreeSet<DeviceRef> = usable
            .iter()
            .filter(|r| {
                let p = &self.current[*r];
                p.slice.node_name().is_none() || p.device.node_access.is_some()
            })
            .cloned()
            .collect();
        let found_shared = within(c.shared_devices());
        if found_shared != shared {
            out.push(set_finding("shared usable devices", &shared, &found_shared));
        }
        for r in &usable {
            let Some(id) = c.device_id(r) else {
                out.push(index_finding(format!("device id of {r}"), "an id", "none"));
                continue;
            };
            let found = c.device_taints(id);
            let expected = self.taints(r);
            if found != expected {
                out.push(index_finding(format!("taints of {r}"), expected, found));
            }
        }

        // Per node: its device set (every device of its node-local slices) and counts.
        let mut domains: BTreeMap<(String, String), (u32, u32, u32, u32)> = BTreeMap::new();
        let mut label_keys: BTreeSet<&str> = BTreeSet::new();
        for n in c.nodes() {
            let Some(id) = c.node_id(&n.name) else {
                out.push(index_finding(
                    format!("node id of {}", n.name),
                    "an id",
                    "none",
                ));
                continue;
            };
            let mut expected: BTreeSet<(String, String)> = BTreeSet::new();
            for sl in c
                .slices()
                .filter(|sl| sl.node_name() == Some(n.name.as_str()))
            {
                for d in &sl.devices {
                    expected.insert((sl.name.clone(), d.name.clone()));
                }
            }
            let found: BTreeSet<(String, String)> = c
                .node_devices(id)
                .into_iter()
                .flat_map(crate::SparseDeviceSet::iter)
                .filter_map(|d| c.device(d))
                .map(|v| (v.slice.to_owned(), v.device.name.clone()))
                .collect();
            if found != expected {
                out.push(index_finding(
                    format!("node {} devices (slice, device)", n.name),
                    &expected,
                    &found,
                ));
            }
            let mut counts = (1u32, 0u32, 0u32, 0u32);
            for r in usable
                .iter()
                .filter(|r| self.current[*r].slice.node_name() == Some(n.name.as_str()))
            {
                counts.1 += 1;
                if free.contains(r) {
                    counts.2 += 1;
                    if !self.taints(r).iter().any(blocking) {
                        counts.3 += 1;
                    }
                }
            }
            let found = c
                .node_counts(id)
                .map(|k| (k.nodes, k.devices, k.free, k.free_untainted));
            if found != Some(counts) {
                out.push(index_finding(
                    format!(
                        "node {} counts (nodes, devices, free, free untainted)",
                        n.name
                    ),
                    Some(counts),
                    found,
                ));
            }
            for (k, v) in &n.labels {
                label_keys.insert(k);
                let d = domains.entry((k.clone(), v.clone())).or_default();
                d.0 += counts.0;
                d.1 += counts.1;
                d.2 += counts.2;
                d.3 += counts.3;
            }
        }
        for k in label_keys {
            if c.domain_counts(k, "").is_none() {
                continue; // not tracked
            }
            let expected: BTreeMap<String, (u32, u32, u32, u32)> = domains
                .iter()
                .filter(|((dk, _), _)| dk == k)
                .map(|((_, v), n)| (v.clone(), *n))
                .collect();
            let found: BTreeMap<String, (u32, u32, u32, u32)> = c
                .domains(k)
                .map(|(v, n)| (v.to_owned(), (n.nodes, n.devices, n.free, n.free_untainted)))
                .collect();
            if found != expected {
                out.push(index_finding(
                    format!("topology domains of {k}"),
                    expected,
                    found,
                ));
            }
        }

        // Pending NoExecute notices: one per (held device, taint not tolerated forever).
        let mut expected = BTreeSet::new();
        for r in holders.keys() {
            for t in self.taints(r) {
                for h in c.allocations(r) {
                    if let EvictionVerdict::Evict { delay_seconds } =
                        device_eviction(&t, &h.tolerations)
                    {
                        expected.insert((
                            r.clone(),
                            h.consumer.clone(),
                            t.to_string(),
                            delay_seconds,
                        ));
                    }
                }
            }
        }
        let found: BTreeSet<(DeviceRef, String, String, i64)> = c
            .pending_evictions()
            .into_iter()
            .map(|e| (e.device, e.consumer, e.taint.to_string(), e.delay_seconds))
            .collect();
        if found != expected {
            out.push(index_finding("pending NoExecute notices", expected, found));
        }
    }
}

impl Recount<'_> {
    /// Each DeviceClass's devices (the index's per-class cache) against its selectors
    /// compiled and evaluated anew on every usable device: a device matches when every
    /// selector is true (an evaluation error is no match).
    fn check_classes(&self, out: &mut Vec<Finding>) {
        let c = self.cluster;
        for class in c.classes() {
            let Some(cached) = c.class_devices(&class.name) else {
                out.push(index_finding(
                    format!("devices of class {}", class.name),
                    "a cache",
                    "none",
                ));
                continue;
            };
            let selectors: Result<Vec<Selector>, _> = class
                .selectors
                .iter()
                .map(|s| Selector::compile(&s.cel))
                .collect();
            let selectors = match selectors {
                Ok(v) => v,
                Err(e) => {
                    out.push(Finding::State {
                        what: format!("class {} is stored but does not compile: {e}", class.name),
                    });
                    continue;
                }
            };
            let mut expected = BTreeSet::new();
            let mut found = BTreeSet::new();
            for (r, p) in self.current.iter().filter(|(_, p)| p.usable) {
                let Some(id) = c.device_id(r) else { continue };
                if selectors
                    .iter()
                    .all(|s| matches!(s.eval(&p.slice.driver, p.device), Ok(true)))
                {
                    expected.insert(r.clone());
                }
                if cached.contains(id) {
                    found.insert(r.clone());
                }
            }
            if found != expected {
                out.push(set_finding(
                    format!("usable devices of class {}", class.name),
                    &expected,
                    &found,
                ));
            }
        }
    }
}

// ------------------------------------------------------------------- 2. own views

fn check_views(s: &Scheduler, scope: &AuditScope, out: &mut Vec<Finding>) {
    let c = s.cluster();
    let mut users: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for p in s.pods() {
        let k = key(&p.namespace, &p.name);
        let binding = s.binding(&k).map(|b| b.node.as_str());
        if p.node_name.as_deref() != binding {
            out.push(Finding::State {
                what: format!(
                    "pod {k}: nodeName {:?} but binding {binding:?}",
                    p.node_name
                ),
            });
        }
        if p.node_name.is_none() {
            continue;
        }
        for ck in claims_of(p) {
            if s.allocation(&ck).is_none() {
                out.push(Finding::State {
                    what: format!("bound pod {k} uses claim {ck}, which is not allocated"),
                });
            }
            users.entry(ck).or_default().push(k.clone());
        }
    }
    // Group claims stay allocated while a member is bound.
    let mut group_claims: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for g in s.groups() {
        let gk = key(&g.namespace, &g.name);
        for rc in &g.resource_claims {
            if let ClaimSource::ClaimName(n) = &rc.source {
                group_claims
                    .entry(key(&g.namespace, n))
                    .or_default()
                    .push(gk.clone());
            }
        }
    }
    let group_running = |gk: &str| {
        s.pods().any(|p| {
            p.node_name.is_some()
                && p.scheduling_group
                    .as_ref()
                    .is_some_and(|g| key(&p.namespace, g) == gk)
        })
    };
    for claim in s.claims() {
        let ck = key(&claim.namespace, &claim.name);
        if claim.allocation.is_none()
            || users.contains_key(&ck)
            || scope.foreign_claims.contains(&ck)
        {
            continue;
        }
        let of_running_group = group_claims
            .get(&ck)
            .is_some_and(|gs| gs.iter().any(|g| group_running(g)));
        if !of_running_group {
            out.push(Finding::State {
                what: format!(
                    "claim {ck} is allocated but no bound pod uses it (nor a PodGroup with a \
                     bound member)"
                ),
            });
        }
    }
    // Node reservations: allocatable minus what the bound pods request.
    let mut requested: BTreeMap<&str, BTreeMap<&str, i128>> = BTreeMap::new();
    let mut count: BTreeMap<&str, i128> = BTreeMap::new();
    for p in s.pods() {
        let Some(n) = p.node_name.as_deref() else {
            continue;
        };
        *count.entry(n).or_default() += 1;
        for (r, q) in &p.requests {
            *requested.entry(n).or_default().entry(r).or_default() += q.as_nano();
        }
    }
    for n in c.nodes() {
        let Some(free) = c.node_free_resources(&n.name) else {
            continue;
        };
        for (r, alloc) in &n.allocatable {
            let used = if r == "pods" {
                count.get(n.name.as_str()).copied().unwrap_or(0) * 1_000_000_000
            } else {
                requested
                    .get(n.name.as_str())
                    .and_then(|m| m.get(r.as_str()))
                    .copied()
                    .unwrap_or(0)
            };
            // Negative on a node whose allocatable shrank under its pods.
            let expected = alloc.as_nano() - used;
            let found = free.get(r).map(|q| q.as_nano());
            if found != Some(expected) {
                out.push(Finding::State {
                    what: format!(
                        "node {} has {found:?} nano-{r} free, the bound pods leave {expected}",
                        n.name
                    ),
                });
            }
        }
    }
}

// ------------------------------------------------------------------- 3. validity

/// Whether a violation concerns only placement time, for a running pod or claim the
/// scope does not name.
fn placement_only(v: &Violation, scope: &AuditScope, fresh_claims: &BTreeSet<String>) -> bool {
    match v {
        Violation::NodeUnschedulable { pod, .. } | Violation::NodeAffinityMismatch { pod, .. } => {
            !scope.placed_pods.contains(pod)
        }
        // NoExecute: the eviction check (4.) judges running pods.
        Violation::NodeTaintNotTolerated { pod, taint, .. } => {
            taint.effect == TaintEffect::NoExecute || !scope.placed_pods.contains(pod)
        }
        Violation::DeviceTaintNotTolerated { claim, taint, .. } => {
            taint.effect == DeviceTaintEffect::NoExecute || !fresh_claims.contains(claim)
        }
        Violation::ReservesTaintedClaim { .. } => true,
        // Its cpu resized under its running pods (the scope names it).
        Violation::NodeResourcesExceeded { node, resource, .. } => {
            resource == "cpu" && scope.resized_nodes.contains(node)
        }
        // Devices withdrawn, or a class changed or removed, after the claim was
        // allocated.
        Violation::ClassNotFound { claim, .. }
        | Violation::SelectorInvalid { claim, .. }
        | Violation::SelectorFailed { claim, .. }
        | Violation::ClassSelectorMismatch { claim, .. }
        | Violation::UnknownDevice { claim, .. }
        | Violation::DeviceNotUsable { claim, .. }
        | Violation::DeviceUnreachable { claim, .. }
        | Violation::AllModeDeviceMissing { claim, .. }
        | Violation::AllModeIncompletePool { claim, .. } => !fresh_claims.contains(claim),
        _ => false,
    }
}

fn check_validity(s: &Scheduler, scope: &AuditScope, out: &mut Vec<Finding>) {
    let c = s.cluster();
    // The infrastructure alone, nothing allocated or reserved.
    let mut fresh = Cluster::new();
    fresh.set_clock(c.clock());
    let mut rebuild = |r: Result<(), String>| {
        if let Err(e) = r {
            out.push(Finding::State {
                what: format!("the cluster does not rebuild from its objects: {e}"),
            });
        }
    };
    for n in c.nodes() {
        rebuild(
            fresh
                .add_node(n.clone())
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    }
    for cl in c.classes() {
        rebuild(fresh.put_class(cl.clone()).map_err(|e| e.to_string()));
    }
    for sl in c.slices() {
        rebuild(
            fresh
                .add_slice(sl.clone())
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    }
    for r in c.taint_rules() {
        rebuild(
            fresh
                .add_taint_rule(r.clone())
                .map(|_| ())
                .map_err(|e| e.to_string()),
        );
    }

    let fresh_claims = &scope.placed_claims;
    // One decision: every binding, each allocated claim in its first bound user's.
    let mut decision = PlacementDecision::default();
    let mut placed: BTreeSet<String> = BTreeSet::new();
    for p in s.pods() {
        let Some(node) = &p.node_name else { continue };
        let k = key(&p.namespace, &p.name);
        let mut binding = PodBinding {
            pod: k.clone(),
            node: node.clone(),
            claims: Vec::new(),
        };
        for ck in claims_of(p) {
            if let Some(a) = s.allocation(&ck)
                && placed.insert(ck.clone())
            {
                binding.claims.push(ClaimAllocation {
                    claim: ck,
                    result: a.clone(),
                });
            }
        }
        decision.bindings.push(binding);
    }
    // Allocated claims no bound pod names (a PodGroup's claim, a claim someone else
    // allocated): held in the cluster. One allocated before its devices were withdrawn
    // keeps them (held where they are still published).
    for claim in s.claims() {
        let ck = key(&claim.namespace, &claim.name);
        let Some(a) = &claim.allocation else { continue };
        if placed.contains(&ck) {
            continue;
        }
        let mut a = a.clone();
        if !fresh_claims.contains(&ck) {
            a.devices.retain(|d| {
                fresh
                    .device_id(&DeviceRef::new(&d.driver, &d.pool, &d.device))
                    .is_some()
            });
        }
        if let Err(e) = fresh.commit_allocation(&ck, &a) {
            out.push(Finding::State {
                what: format!("claim {ck}'s allocation cannot be held: {e}"),
            });
        }
    }
    let pods: Vec<Pod> = s
        .pods()
        .map(|p| Pod {
            node_name: None,
            ..p.clone()
        })
        .collect();
    let claims: Vec<ResourceClaim> = s
        .claims()
        .map(|c| ResourceClaim {
            allocation: None,
            ..c.clone()
        })
        .collect();
    for v in validate_placement(&fresh, None, &pods, &claims, &decision) {
        if !placement_only(&v, scope, fresh_claims) {
            out.push(Finding::Violation(v));
        }
    }
    let running: Vec<Pod> = s.pods().cloned().collect();
    for g in s.groups() {
        let gk = key(&g.namespace, &g.name);
        for v in validate_gang(&fresh, g, &running) {
            if matches!(v, Violation::BelowMinCount { .. }) && scope.broken_gangs.contains(&gk) {
                continue;
            }
            if matches!(
                v,
                Violation::TopologySplit { .. } | Violation::TopologyLabelMissing { .. }
            ) && scope.split_gangs.contains(&gk)
            {
                continue;
            }
            out.push(Finding::Violation(v));
        }
    }
}

// ------------------------------------------------------------------- 4. evictions

fn check_evictions(s: &Scheduler, recount: &Recount<'_>, out: &mut Vec<Finding>) {
    let scheduled: BTreeMap<String, Time> = s
        .scheduled_evictions()
        .into_iter()
        .map(|e| (e.pod, e.at))
        .collect();
    let now = s.now();
    // The pods with a reason of their own to go: a device taint, a node taint.
    let mut by_device: BTreeSet<String> = BTreeSet::new();
    let mut by_node: BTreeSet<String> = BTreeSet::new();
    for p in s.pods() {
        let Some(node) = &p.node_name else { continue };
        let k = key(&p.namespace, &p.name);
        let mut deadline: Option<(Time, String)> = None;
        let mut due = |at: Time, why: String| {
            if deadline.as_ref().is_none_or(|(d, _)| at < *d) {
                deadline = Some((at, why));
            }
        };
        for ck in claims_of(p) {
            let Some(a) = s.allocation(&ck) else { continue };
            for d in &a.devices {
                let r = DeviceRef::new(&d.driver, &d.pool, &d.device);
                for t in recount.taints(&r) {
                    if let EvictionVerdict::Evict { delay_seconds } =
                        device_eviction(&t, &d.tolerations)
                    {
                        by_device.insert(k.clone());
                        let added = t.time_added.unwrap_or(now);
                        due(
                            Time(added.0.saturating_add(delay_seconds)),
                            format!("claim {ck} holds {r} with taint {t}"),
                        );
                    }
                }
            }
        }
        if let Some(n) = s.cluster().node(node)
            && let EvictionVerdict::Evict { delay_seconds } =
                node_eviction(&n.taints, &p.tolerations)
        {
            by_node.insert(k.clone());
            due(
                Time(now.0.saturating_add(delay_seconds)),
                format!("node {node} has a NoExecute taint it does not tolerate forever"),
            );
        }
        if let Some((at, why)) = deadline {
            match scheduled.get(&k) {
                None => out.push(Finding::Eviction {
                    pod: k,
                    what: format!("not scheduled for eviction, but {why} (due at {})", at.0),
                }),
                Some(when) if *when > at => out.push(Finding::Eviction {
                    pod: k,
                    what: format!(
                        "scheduled for eviction at {}, after the deadline {}: {why}",
                        when.0, at.0
                    ),
                }),
                Some(_) => {}
            }
        }
    }
    for pod in scheduled.keys() {
        if s.pod(pod).is_none_or(|p| p.node_name.is_none()) {
            out.push(Finding::Eviction {
                pod: pod.clone(),
                what: "scheduled for eviction but not bound".into(),
            });
        }
    }
    // And no eviction without its reason (a schedule kept past the change that
    // cancelled it).
    for e in s.scheduled_evictions() {
        let (has, why) = match &e.reason {
            crate::EvictionReason::DeviceTaint { claim, .. } => (
                by_device.contains(&e.pod),
                format!("claim {claim}'s device taint"),
            ),
            crate::EvictionReason::NodeTaint { node } => {
                (by_node.contains(&e.pod), format!("node {node}'s taint"))
            }
            crate::EvictionReason::GroupMember { group } => (
                s.scheduled_evictions().iter().any(|o| {
                    o.pod != e.pod
                        && !matches!(&o.reason, crate::EvictionReason::GroupMember { .. })
                        && s.pod(&o.pod)
                            .and_then(|p| p.scheduling_group.as_ref().map(|g| key(&p.namespace, g)))
                            == Some(group.clone())
                }),
                format!("a member of {group} going"),
            ),
        };
        if !has {
            out.push(Finding::Eviction {
                pod: e.pod.clone(),
                what: format!("scheduled for eviction for {why}, which no longer holds"),
            });
        }
    }
}
