//! NoExecute eviction on the logical clock (see [`Scheduler::refresh_evictions`]).

use core::fmt;

use super::{
    EvictionReason, EvictionReport, PodEviction, Scheduler, SchedulerError, bound_members, key,
};
use crate::alloc_prelude::*;
use crate::cluster::EvictionNotice;
use crate::model::workload::{ClaimSource, DisruptionMode, Pod, PodResourceClaim};
use crate::{
    DeviceRef, DeviceTaint, DeviceTaintEffect, DeviceTaintRule, EvictionVerdict, ResourceSlice,
    Taint, TaintEffect, Time, device_eviction, generated_claim_name, generated_group_claim_name,
    node_eviction,
};

/// A PodGroup that evictions take below its `minCount`, or take whole
/// (`disruptionMode: All`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct BrokenGroup {
    /// The PodGroup, `namespace/name`.
    pub group: String,
    /// Its bound members that are evicted, sorted.
    pub evicted: Vec<String>,
    /// Its bound members that stay, sorted (fewer than `min_count`).
    pub left: Vec<String>,
    /// The group's `minCount`.
    pub min_count: u32,
    /// `disruptionMode: All`: the group loses every pod.
    pub whole: bool,
}

impl fmt::Display for BrokenGroup {
    /// `PodGroup ns/train (disruptionMode All): 4 of 4 bound pods evicted, 0 left, minCount 4`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = if self.whole { "All" } else { "Single" };
        write!(
            f,
            "PodGroup {} (disruptionMode {mode}): {} of {} bound pods evicted, {} left, \
             minCount {}",
            self.group,
            self.evicted.len(),
            self.evicted.len() + self.left.len(),
            self.left.len(),
            self.min_count
        )
    }
}

/// What a DeviceTaintRule would do if its effect were `NoExecute`
/// ([`Scheduler::dry_run_rule`]): upstream's `NoEffect` status numbers, plus the blast
/// radius on PodGroups.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DryRunReport {
    /// The rule, `metadata.name`.
    pub rule: String,
    /// Published devices the rule selects: devices in slices at their pool's current
    /// generation (a device listed twice counts twice, as upstream counts).
    pub published_devices: usize,
    /// Allocated devices the rule selects: one per allocation of a selected device
    /// (upstream counts the results of allocated claims), published or not.
    pub allocated_devices: usize,
    /// The bound pods that would be evicted because a claim they name holds a selected
    /// device whose allocation does not tolerate the taint forever (upstream's count;
    /// pods already due to go for another reason included), sorted.
    pub pods: Vec<String>,
    /// The namespaces of [`pods`](Self::pods).
    pub namespaces: usize,
    /// The evictions the rule would schedule, by time then pod: [`pods`](Self::pods) and
    /// the other bound members of their `disruptionMode: All` groups, with times as if
    /// the effect became `NoExecute` now (upstream stamps `timeAdded` when the effect
    /// changes).
    pub evictions: Vec<PodEviction>,
    /// The blast radius: PodGroups with a member in [`evictions`](Self::evictions)
    /// that would fall below `minCount` or lose every pod, counting the evictions
    /// already scheduled as well.
    pub broken_groups: Vec<BrokenGroup>,
}

impl DryRunReport {
    /// Upstream's status message for a rule with effect `None` (condition
    /// `EvictionInProgress=False`, reason `NoEffect`), word for word.
    ///
    /// ```
    /// use gangpack::DryRunReport;
    ///
    /// let report = DryRunReport {
    ///     published_devices: 3,
    ///     allocated_devices: 1,
    ///     pods: vec!["team-a/trainer-0".into()],
    ///     namespaces: 1,
    ///     ..DryRunReport::default()
    /// };
    /// assert_eq!(
    ///     report.message(),
    ///     "3 published devices selected. 1 allocated device selected. 1 pod would be \
    ///      evicted in 1 namespace if the effect was NoExecute. This information will not \
    ///      be updated again. Recreate the DeviceTaintRule to trigger an update."
    /// );
    /// ```
    pub fn message(&self) -> String {
        let plural = |n: usize, one: &str, many: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {many}")
            }
        };
        format!(
            "{} selected. {} selected. {} would be evicted in {} if the effect was NoExecute. \
             This information will not be updated again. Recreate the DeviceTaintRule to \
             trigger an update.",
            plural(
                self.published_devices,
                "published device",
                "published devices"
            ),
            plural(
                self.allocated_devices,
                "allocated device",
                "allocated devices"
            ),
            plural(self.pods.len(), "pod", "pods"),
            plural(self.namespaces, "namespace", "different namespaces"),
        )
    }
}

impl fmt::Display for DryRunReport {
    /// [`message`](DryRunReport::message), then the blast radius, one PodGroup a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())?;
        let extra = self.evictions.len().saturating_sub(self.pods.len());
        if extra > 0 {
            let s = if extra == 1 { "" } else { "s" };
            write!(
                f,
                "\n{extra} more pod{s} would go with their disruptionMode All PodGroups."
            )?;
        }
        match self.broken_groups.len() {
            0 => f.write_str("\nBlast radius: no PodGroup would break."),
            n => {
                let s = if n == 1 { "" } else { "s" };
                write!(f, "\nBlast radius: {n} PodGroup{s} would break:")?;
                for g in &self.broken_groups {
                    write!(f, "\n  {g}")?;
                }
                Ok(())
            }
        }
    }
}

/// Proposes an eviction: the earliest one per pod is kept (the first on ties).
fn propose(out: &mut BTreeMap<String, PodEviction>, pod: &str, at: Time, reason: EvictionReason) {
    if out.get(pod).is_some_and(|old| old.at <= at) {
        return;
    }
    out.insert(
        pod.to_owned(),
        PodEviction {
            at,
            pod: pod.to_owned(),
            reason,
        },
    );
}

/// Proposes a claim's eviction time: the earliest per claim (the first on ties).
fn propose_claim(
    out: &mut BTreeMap<String, (Time, String)>,
    claim: &str,
    at: Time,
    taint: &DeviceTaint,
) {
    if out.get(claim).is_some_and(|(old, _)| *old <= at) {
        return;
    }
    out.insert(claim.to_owned(), (at, taint.to_string()));
}

/// Each claim's device-taint eviction time (see [`claim_times`]) as of one value of
/// [`Cluster::eviction_epoch`](crate::Cluster::eviction_epoch): a pure function of the
/// cluster's state while the epoch holds, so its `Debug` shows nothing.
#[derive(Clone, Default)]
pub(super) struct DeviceEvictions {
    epoch: Option<u64>,
    claims: BTreeMap<String, (Time, String)>,
}

impl core::fmt::Debug for DeviceEvictions {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("DeviceEvictions")
    }
}

/// Each claim's eviction time, the earliest over its notices, with the taint causing it.
fn claim_times(notices: &[EvictionNotice]) -> BTreeMap<String, (Time, String)> {
    let mut out = BTreeMap::new();
    for n in notices {
        if let Some(at) = n.evict_at {
            propose_claim(&mut out, &n.consumer, at, &n.taint);
        }
    }
    out
}

impl Scheduler {
    // ------------------------------------------------------------------ eviction

    /// The claim a pod's `spec.resourceClaims` entry uses, `namespace/name`: the claim it
    /// names, or for a template entry the claim generated for it (upstream resolves it
    /// through `status.resourceClaimStatuses`): the PodGroup's claim when the entry
    /// resolves to one of the group's claims
    /// ([`PodGroup::group_claim_for`](crate::PodGroup::group_claim_for)), else the pod's
    /// own.
    pub(super) fn claim_used(&self, pod: &Pod, entry: &PodResourceClaim) -> String {
        match &entry.source {
            ClaimSource::ClaimName(name) => key(&pod.namespace, name),
            ClaimSource::Template(_) => {
                let group = pod
                    .scheduling_group
                    .as_ref()
                    .and_then(|g| self.groups.get(&key(&pod.namespace, g)))
                    .filter(|g| g.group_claim_for(entry).is_some());
                let name = match group {
                    Some(g) => generated_group_claim_name(&pod.namespace, &g.name, &entry.name),
                    None => generated_claim_name(&pod.namespace, &pod.name, &entry.name),
                };
                key(&pod.namespace, &name)
            }
        }
    }

    /// Bound pods that name an evicting claim, each at the earliest of its claims.
    fn claim_evictions(
        &self,
        claims: &BTreeMap<String, (Time, String)>,
        out: &mut BTreeMap<String, PodEviction>,
    ) {
        for (claim, (at, taint)) in claims {
            for pod in self
                .index
                .claim_users
                .get(claim.as_str())
                .into_iter()
                .flatten()
            {
                let reason = EvictionReason::DeviceTaint {
                    claim: claim.clone(),
                    taint: taint.clone(),
                };
                propose(out, pod, *at, reason);
            }
        }
    }

    /// Bound pods on nodes with `NoExecute` taints they do not tolerate forever. Returns
    /// when each such pod was first observed (the timer start), by pod.
    fn node_evictions(
        &self,
        now: Time,
        out: &mut BTreeMap<String, PodEviction>,
    ) -> BTreeMap<String, Time> {
        let mut seen = BTreeMap::new();
        for name in &self.index.no_execute_nodes {
            let Some(node) = self.cluster.node(name) else {
                continue;
            };
            for k in self.index.node_pods.get(name).into_iter().flatten() {
                let k: &str = k;
                let EvictionVerdict::Evict { delay_seconds } =
                    node_eviction(&node.taints, &self.pods[k].tolerations)
                else {
                    continue;
                };
                let start = self.node_taint_seen.get(k).copied().unwrap_or(now);
                seen.insert(k.to_owned(), start);
                // A toleration that has run out already (or a taint not tolerated at all)
                // evicts at the next `advance`, as upstream's taint manager evicts at once;
                // the time reported is when it fell due (it may be before now, as for
                // device taints, e.g. after `backdate_node_taint_timers`). DIVERGENCE: once a pod is
                // queued, upstream's `processPodOnNode` keeps its first trigger time when
                // the least `tolerationSeconds` later changes while the pod stays queued;
                // here the time follows the current least one, from the same start.
                let at = start.plus_seconds(delay_seconds);
                let reason = EvictionReason::NodeTaint {
                    node: node.name.clone(),
                };
                propose(out, k, at, reason);
            }
        }
        seen
    }

    /// The bound members of the (existing) PodGroups of `pods`, sorted, by group.
    fn members_of_groups<'a>(
        &self,
        pods: impl Iterator<Item = &'a String>,
    ) -> BTreeMap<String, Vec<String>> {
        let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for p in pods {
            let pod = &self.pods[p];
            let Some(g) = pod.scheduling_group.as_deref() else {
                continue;
            };
            let group = key(&pod.namespace, g);
            if out.contains_key(&group) || !self.groups.contains_key(&group) {
                continue;
            }
            let bound: Vec<String> = bound_members(&self.members, &self.bound, &group)
                .cloned()
                .collect();
            out.insert(group, bound);
        }
        out
    }

    /// `disruptionMode: All`: a member's eviction takes every bound member of its group
    /// at the earliest member time.
    fn spread_to_groups(
        &self,
        members: &BTreeMap<String, Vec<String>>,
        out: &mut BTreeMap<String, PodEviction>,
    ) {
        for (g, pods) in members {
            if self.groups[g].disruption_mode != DisruptionMode::All {
                continue;
            }
            let Some(at) = pods.iter().filter_map(|p| out.get(p)).map(|e| e.at).min() else {
                continue;
            };
            for p in pods {
                propose(out, p, at, EvictionReason::GroupMember { group: g.clone() });
            }
        }
    }

    /// Gangs with an evicted member (`going`) that fall below `minCount` (or lose every
    /// pod), among those with a member in `touched`.
    fn broken_groups(
        &self,
        members: &BTreeMap<String, Vec<String>>,
        going: impl Fn(&str) -> bool,
        touched: impl Fn(&str) -> bool,
    ) -> Vec<BrokenGroup> {
        let mut out = Vec::new();
        for (g, pods) in members {
            let group = &self.groups[g];
            let Some(min_count) = group.policy.min_count() else {
                continue;
            };
            let gone = pods.iter().filter(|p| going(p)).count();
            if gone == 0
                || pods.len() - gone >= min_count as usize
                || !pods.iter().any(|p| touched(p))
            {
                continue;
            }
            let (evicted, left): (Vec<String>, Vec<String>) =
                pods.iter().cloned().partition(|p| going(p));
            out.push(BrokenGroup {
                group: g.clone(),
                evicted,
                left,
                min_count,
                whole: group.disruption_mode == DisruptionMode::All,
            });
        }
        out
    }

    /// Recomputes the NoExecute eviction schedule from the cluster's taints and the bound
    /// pods and reports the difference from the previous one.
    ///
    /// Every taint, rule, slice and node-taint change made through the scheduler calls
    /// this, and so does [`advance`](Self::advance); call it after other changes (a
    /// cycle that bound pods to devices whose taints their claims tolerate only for a
    /// while, pods removed) to see their evictions in
    /// [`scheduled_evictions`](Self::scheduled_evictions) at once.
    ///
    /// NoExecute eviction on the logical clock (`shared/spec/dra.md` sections 2.4 to 2.6):
    /// device taints (slice taints and DeviceTaintRules), node taints, PodGroups with
    /// `disruptionMode: All` evicted whole, and the dry run of a DeviceTaintRule with its
    /// blast radius.
    ///
    /// The schedule is recomputed from the state after every change made through the
    /// scheduler that can affect it (device taints, rules, slices, node taints) and at every
    /// [`Scheduler::advance`]:
    ///
    /// * **Claims.** [`Cluster::pending_evictions`](crate::Cluster::pending_evictions) gives,
    ///   for every allocated claim, one notice per (allocated device, `NoExecute` taint) that
    ///   the tolerations copied into its allocation result do not tolerate forever, due at
    ///   `timeAdded` + the least `tolerationSeconds` of the matching tolerations whose effect
    ///   is explicitly `NoExecute`. QUIRK (upstream device-taint-eviction controller): a
    ///   toleration with an empty effect lets the device be allocated but is not consulted
    ///   for eviction, so such a claim goes at `timeAdded`. A claim's time is the earliest
    ///   over its devices and their taints.
    /// * **Pods.** A bound pod is evicted when it names an evicting claim in its own
    ///   `spec.resourceClaims` (by name, or through a template entry resolved to the claim
    ///   generated for it); its time is the earliest over its claims. A PodGroup member that
    ///   does not itself name the group's claim is not evicted by it (upstream test
    ///   `no-evict-pod-in-podgroup-without-claim`).
    /// * **Node taints** (core/v1, [`node_eviction`]): the timer starts when the scheduler
    ///   first observes the pod on a node whose `NoExecute` taints it does not tolerate
    ///   forever (not at the taint's `timeAdded`) and runs while that stays so; the pod goes
    ///   at that start + the least `tolerationSeconds` of the tolerations used, or at once
    ///   when a taint is not tolerated at all.
    /// * **`disruptionMode: All`.** One member's eviction takes every bound member of the
    ///   group, at the earliest member time.
    /// * An eviction that is no longer computed is **cancelled** (upstream "Cancelling
    ///   deletion"): the taint or rule went away, a toleration now covers it, the pod left.
    ///   Evictions are carried out (pods deleted, their claims released) only by
    ///   [`Scheduler::advance`], for every eviction whose time is at or before the new
    ///   clock: one already due when a taint arrives happens at the next `advance`.
    pub fn refresh_evictions(&mut self) -> EvictionReport {
        let now = self.now();
        let mut next = BTreeMap::new();
        // The device part changes only with the cluster's eviction epoch: a node
        // relabelled or cordoned, a pod added, a class changed do not recompute it.
        let epoch = self.cluster.eviction_epoch();
        if self.device_evictions.epoch != Some(epoch) {
            self.device_evictions = DeviceEvictions {
                epoch: Some(epoch),
                claims: claim_times(&self.cluster.pending_evictions()),
            };
        }
        let claims = core::mem::take(&mut self.device_evictions.claims);
        self.claim_evictions(&claims, &mut next);
        self.device_evictions.claims = claims;
        let seen = self.node_evictions(now, &mut next);
        let members = self.members_of_groups(next.keys());
        self.spread_to_groups(&members, &mut next);
        let mut report = EvictionReport::default();
        for (pod, e) in &next {
            if self.evictions.get(pod) != Some(e) {
                report.started.push(e.clone());
            }
        }
        for (pod, e) in &self.evictions {
            if !next.contains_key(pod) {
                report.cancelled.push(e.clone());
            }
        }
        report.started.sort();
        report.cancelled.sort();
        report.broken_groups = self.broken_groups(&members, |p| next.contains_key(p), |_| true);
        self.node_taint_seen = seen;
        self.evictions = next;
        report
    }

    /// What `rule` would do if its effect were `NoExecute`, without changing anything:
    /// upstream's dry-run numbers for a rule with effect `None` (see
    /// [`DryRunReport::message`]) and which PodGroups would break.
    ///
    /// The rule need not exist in the cluster; if it does, the argument is what counts
    /// (its selector and taint). Only the rule's own taint is considered: pods whose
    /// claims tolerate it forever are not counted, pods already due to go for another
    /// reason are. Its `timeAdded` is now unless the rule already has effect `NoExecute`
    /// with a time (an edit from `None` to `NoExecute` is stamped by the API server).
    pub fn dry_run_rule(&self, rule: &DeviceTaintRule) -> DryRunReport {
        let now = self.now();
        let mut taint = rule.taint.clone();
        if taint.effect != DeviceTaintEffect::NoExecute {
            taint.time_added = None;
        }
        taint.effect = DeviceTaintEffect::NoExecute;
        let added = *taint.time_added.get_or_insert(now);

        // Published devices: those in slices at their pool's current generation.
        let mut published = 0;
        let mut refs: BTreeSet<DeviceRef> = BTreeSet::new();
        for id in self.cluster.rule_devices(rule) {
            let Some(v) = self.cluster.device(id) else {
                continue;
            };
            let current = self
                .cluster
                .slice(v.slice)
                .zip(self.cluster.pool_status(v.driver, v.pool))
                .is_some_and(|(s, p)| s.pool.generation == p.generation);
            published += usize::from(current);
            refs.insert(v.device_ref());
        }
        // Allocated devices that are no longer published: from the claims' allocation
        // results (upstream matches rules against allocation results).
        let results = self
            .claims
            .values()
            .filter_map(|c| c.allocation.as_ref())
            .flat_map(|a| &a.devices);
        for r in results {
            if rule.selects(&r.driver, &r.pool, &r.device) {
                refs.insert(DeviceRef::new(&r.driver, &r.pool, &r.device));
            }
        }
        let mut allocated = 0;
        let mut claims: BTreeMap<String, (Time, String)> = BTreeMap::new();
        for r in &refs {
            for h in self.cluster.allocations(r) {
                allocated += 1;
                if let Some(at) = device_eviction(&taint, &h.tolerations).eviction_time(added) {
                    propose_claim(&mut claims, &h.consumer, at, &taint);
                }
            }
        }

        let mut evictions = BTreeMap::new();
        self.claim_evictions(&claims, &mut evictions);
        let pods: Vec<String> = evictions.keys().cloned().collect();
        let namespaces = pods
            .iter()
            .map(|p| p.split('/').next().unwrap_or_default())
            .collect::<BTreeSet<&str>>()
            .len();
        let members = self.members_of_groups(evictions.keys());
        self.spread_to_groups(&members, &mut evictions);
        let broken_groups = self.broken_groups(
            &members,
            |p| evictions.contains_key(p) || self.evictions.contains_key(p),
            |p| evictions.contains_key(p),
        );
        let mut evictions: Vec<PodEviction> = evictions.into_values().collect();
        evictions.sort();
        DryRunReport {
            rule: rule.name.clone(),
            published_devices: published,
            allocated_devices: allocated,
            pods,
            namespaces,
            evictions,
            broken_groups,
        }
    }

    /// Taints a device (see [`Cluster::taint_device`](crate::Cluster::taint_device)) and
    /// reschedules evictions.
    pub fn taint_device(
        &mut self,
        device: &DeviceRef,
        taint: DeviceTaint,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.taint_device(device, taint)?;
        Ok(self.refresh_evictions())
    }

    /// Removes a device's slice taints with this key (and effect, if given; see
    /// [`Cluster::untaint_device`](crate::Cluster::untaint_device)) and reschedules.
    pub fn untaint_device(
        &mut self,
        device: &DeviceRef,
        taint_key: &str,
        effect: Option<&DeviceTaintEffect>,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.untaint_device(device, taint_key, effect)?;
        Ok(self.refresh_evictions())
    }

    /// Adds a DeviceTaintRule and reschedules evictions.
    pub fn add_taint_rule(
        &mut self,
        rule: DeviceTaintRule,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.add_taint_rule(rule)?;
        Ok(self.refresh_evictions())
    }

    /// Replaces a DeviceTaintRule (see
    /// [`Cluster::replace_taint_rule`](crate::Cluster::replace_taint_rule): an effect
    /// change keeping the old `timeAdded` is stamped with the clock, so switching a
    /// dry-run rule from `None` to `NoExecute` starts its eviction clock now) and
    /// reschedules evictions.
    pub fn replace_taint_rule(
        &mut self,
        rule: DeviceTaintRule,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.replace_taint_rule(rule)?;
        Ok(self.refresh_evictions())
    }

    /// Removes a DeviceTaintRule and reschedules evictions (those it caused are
    /// cancelled). Returns the rule.
    pub fn remove_taint_rule(
        &mut self,
        name: &str,
    ) -> Result<(DeviceTaintRule, EvictionReport), SchedulerError> {
        let (rule, _) = self.cluster.remove_taint_rule(name)?;
        Ok((rule, self.refresh_evictions()))
    }

    /// Adds a ResourceSlice and reschedules evictions (its taints apply to devices of
    /// its pool that are already allocated).
    pub fn add_slice(&mut self, slice: ResourceSlice) -> Result<EvictionReport, SchedulerError> {
        self.cluster.add_slice(slice)?;
        Ok(self.refresh_evictions())
    }

    /// Replaces a ResourceSlice (a driver republishing it, with new taints say) and
    /// reschedules evictions.
    pub fn replace_slice(
        &mut self,
        slice: ResourceSlice,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.replace_slice(slice)?;
        Ok(self.refresh_evictions())
    }

    /// Removes a ResourceSlice and reschedules evictions (an allocated device that is
    /// no longer published keeps only the taints of the rules that select it). Returns
    /// the slice.
    pub fn remove_slice(
        &mut self,
        name: &str,
    ) -> Result<(ResourceSlice, EvictionReport), SchedulerError> {
        let (slice, _) = self.cluster.remove_slice(name)?;
        Ok((slice, self.refresh_evictions()))
    }

    /// Taints a node (a taint with the same key and effect is replaced) and reschedules
    /// evictions.
    pub fn taint_node(
        &mut self,
        node: &str,
        taint: Taint,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.taint_node(node, taint)?;
        self.reindex_node_taints(node);
        Ok(self.refresh_evictions())
    }

    /// Removes a node's taints with this key (and effect, if given) and reschedules
    /// evictions.
    pub fn untaint_node(
        &mut self,
        node: &str,
        taint_key: &str,
        effect: Option<TaintEffect>,
    ) -> Result<EvictionReport, SchedulerError> {
        self.cluster.untaint_node(node, taint_key, effect)?;
        self.reindex_node_taints(node);
        Ok(self.refresh_evictions())
    }

    /// Starts the node-taint eviction timers of bound pods as the taint manager would
    /// have started them had it watched the cluster all along, for state loaded from a
    /// dump (where nothing was observed before the load). `bound_at` gives, per bound
    /// pod, when it was bound (`None`: unknown, taken as before the taints).
    ///
    /// Upstream's taint manager queues a pod when it first sees it on a node with a
    /// `NoExecute` taint it does not tolerate forever, and keeps that start while the pod
    /// stays queued. So the start is the later of the pod's binding and the earliest
    /// `timeAdded` of those taints (the API server stamps `timeAdded` on `NoExecute`
    /// node taints; one without it counts as now), and never after now. A timer already
    /// running is kept. Pods on nodes without such taints are not touched.
    ///
    /// Returns the change to the eviction schedule, as
    /// [`refresh_evictions`](Self::refresh_evictions) reports it.
    pub fn backdate_node_taint_timers(
        &mut self,
        bound_at: impl Fn(&Pod) -> Option<Time>,
    ) -> EvictionReport {
        let now = self.now();
        let mut starts: Vec<(String, Time)> = Vec::new();
        for name in &self.index.no_execute_nodes {
            let Some(node) = self.cluster.node(name) else {
                continue;
            };
            for k in self.index.node_pods.get(name).into_iter().flatten() {
                let k: &str = k;
                if self.node_taint_seen.contains_key(k) {
                    continue;
                }
                let pod = &self.pods[k];
                // The taints that start the timer: each one not tolerated forever on its own.
                let tainted_since = node
                    .taints
                    .iter()
                    .filter(|t| {
                        matches!(
                            node_eviction(core::slice::from_ref(*t), &pod.tolerations),
                            EvictionVerdict::Evict { .. }
                        )
                    })
                    .map(|t| t.time_added.unwrap_or(now))
                    .min();
                let Some(since) = tainted_since else {
                    continue;
                };
                let start = bound_at(pod).map_or(since, |b| b.max(since)).min(now);
                starts.push((k.to_owned(), start));
            }
        }
        self.node_taint_seen.extend(starts);
        self.refresh_evictions()
    }

    /// Advances the logical clock to `now` (it never goes back) and evicts (deletes,
    /// releasing their claims) every pod whose eviction time is at or before it,
    /// already-due ones included. Returns the evictions carried out, by time then pod.
    ///
    /// The schedule is first brought up to date at the old clock, so pods bound since
    /// the last change are observed when they were bound.
    pub fn advance(&mut self, now: Time) -> Vec<PodEviction> {
        self.refresh_evictions();
        if now > self.now() {
            self.cluster.set_clock(now);
        }
        let now = self.now();
        let mut done = Vec::new();
        loop {
            let due: Vec<PodEviction> = self
                .evictions
                .values()
                .filter(|e| e.at <= now)
                .cloned()
                .collect();
            if due.is_empty() {
                break;
            }
            for e in &due {
                let _ = self.remove_pod_quietly(&e.pod);
                self.evictions.remove(&e.pod);
            }
            done.extend(due);
            self.refresh_evictions();
        }
        done.sort();
        done
    }
}
