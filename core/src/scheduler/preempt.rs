//! Workload-aware preemption (KEP-5710).

use super::{Preemption, Scheduler, SchedulerError, Unit, Victim};
use crate::alloc_prelude::*;
use crate::gang::placer::GangOutcome;
use crate::model::workload::DisruptionMode;

impl Scheduler {
    // ------------------------------------------------------------------ preemption

    /// The running units a preemptor of priority `priority` may evict: whole PodGroups
    /// with `disruptionMode: All`, single pods otherwise (pods of a group above its
    /// `minCount` first), all of strictly lower priority. Sorted least important first.
    fn potential_victims(&self, priority: i32) -> Vec<Victim> {
        let mut out: Vec<(bool, Victim)> = Vec::new();
        let mut whole: BTreeMap<&str, Victim> = BTreeMap::new();
        // Members of `Single` groups that are victims: (group, bound victims, pods of
        // theirs in `out`).
        let mut elastic: BTreeMap<&str, (usize, Vec<usize>)> = BTreeMap::new();
        // Group keys are built in one buffer (no allocation per pod).
        let mut buf = String::new();
        for (k, b) in &self.bound {
            let pod = &self.pods[k];
            let devices = held_devices(b);
            let group = pod.scheduling_group.as_deref().and_then(|g| {
                buf.clear();
                buf.push_str(&pod.namespace);
                buf.push('/');
                buf.push_str(g);
                self.groups.get_key_value(buf.as_str())
            });
            let Some((g, group)) = group else {
                if pod.priority < priority {
                    out.push((
                        false,
                        Victim {
                            unit: Unit::Pod(k.clone()),
                            pods: vec![k.clone()],
                            priority: pod.priority,
                            devices,
                        },
                    ));
                }
                continue;
            };
            let p = group.effective_priority();
            if p >= priority {
                continue;
            }
            if group.disruption_mode == DisruptionMode::All {
                let v = whole.entry(g.as_str()).or_insert_with(|| Victim {
                    unit: Unit::Group(g.clone()),
                    pods: Vec::new(),
                    priority: p,
                    devices: 0,
                });
                v.pods.push(k.clone());
                v.devices += devices;
            } else {
                let e = elastic.entry(g.as_str()).or_default();
                e.0 += 1;
                e.1.push(out.len());
                out.push((
                    false,
                    Victim {
                        unit: Unit::Pod(k.clone()),
                        pods: vec![k.clone()],
                        priority: p,
                        devices,
                    },
                ));
            }
        }
        // Pods of a group with more bound members than its minCount are its elastic
        // extras: they go first.
        for (g, (bound, at)) in elastic {
            let min = self.groups[g].policy.min_count().unwrap_or(0) as usize;
            if bound > min {
                for i in at {
                    out[i].0 = true;
                }
            }
        }
        out.extend(whole.into_values().map(|v| (false, v)));
        // Least important first: lower priority; pods above their group's minCount;
        // single pods before groups (KEP-5710 reprieves groups first); fewer devices.
        out.sort_by(|(a_above, a), (b_above, b)| {
            a.priority
                .cmp(&b.priority)
                .then_with(|| b_above.cmp(a_above))
                .then_with(|| {
                    matches!(a.unit, Unit::Group(_)).cmp(&matches!(b.unit, Unit::Group(_)))
                })
                .then(a.devices.cmp(&b.devices))
                .then_with(|| a.unit.cmp(&b.unit))
        });
        out.into_iter().map(|(_, v)| v).collect()
    }
}

/// Devices a bound pod's binding allocated (its own and shared claims; admin access
/// does not count).
fn held_devices(b: &crate::PodBinding) -> usize {
    b.claims
        .iter()
        .map(|c| c.result.devices.iter().filter(|d| !d.admin_access).count())
        .sum()
}

/// The eviction simulator for `victims` (see [`Sim`]). Borrows the scheduler's bound
/// pods, pods, memberships, group claims and indexes (not the cluster, which the search
/// changes); copies nothing up front.
fn simulator<'a>(s: SimView<'a>, victims: &'a [Victim]) -> Sim<'a> {
    Sim {
        s,
        victims,
        claims: BTreeMap::new(),
        groups: BTreeMap::new(),
    }
}

impl Scheduler {
    /// Workload-aware preemption for a unit that does not fit (KEP-5710): if evicting
    /// every lower-priority victim would let it fit, evicts the least important victims
    /// that suffice — removed least important first until the unit fits, then the
    /// most important of them reprieved while it still fits — and places the unit.
    /// Nothing is evicted when preemption cannot help. The search runs on the cluster
    /// itself: victims' allocations and reservations are released and restored by the
    /// simulator (exact inverses), and every trial placement restores what it tried, so
    /// the search leaves the cluster as it found it; only then are the chosen victims
    /// evicted for real.
    pub(super) fn preempt(&mut self, unit: &Unit) -> Result<Option<Preemption>, SchedulerError> {
        let (priority, _, _) = self.unit_priority(unit);
        let victims = self.potential_victims(priority);
        if victims.is_empty() {
            return Ok(None);
        }
        let (group, pods, claims) = self.inputs(unit);
        let options = self.options.clone();
        // Disjoint borrows: the simulator reads the bound pods while the search changes
        // the cluster in place.
        let view = SimView {
            bound: &self.bound,
            pods: &self.pods,
            members: &self.members,
            group_claims: &self.group_claims,
            index: &self.index,
        };
        let mut sim = simulator(view, &victims);
        let trial = &mut self.cluster;
        let fits = |c: &mut crate::Cluster| -> Result<bool, SchedulerError> {
            Ok(matches!(
                c.place_gang_mut(group.as_ref(), &pods, &claims, &options)?,
                GangOutcome::Placed(_)
            ))
        };
        // Remove victims, least important first, until it fits (if even evicting all
        // of them does not help, nothing is evicted). Placement is only
        // tried once the devices freed could cover what the unit needs at least: the
        // devices of its `required` smallest pending pods (claims not yet allocated).
        let mut per_pod: Vec<usize> = pods
            .iter()
            .filter(|p| p.node_name.is_none())
            .map(|p| {
                p.resource_claims
                    .iter()
                    .filter_map(|r| match &r.source {
                        crate::model::workload::ClaimSource::ClaimName(n) => {
                            claims.iter().find(|c| {
                                c.namespace == p.namespace && c.name == *n && c.allocation.is_none()
                            })
                        }
                        crate::model::workload::ClaimSource::Template(_) => None,
                    })
                    .map(|c| usize::try_from(c.spec.min_device_count()).unwrap_or(usize::MAX))
                    .fold(0usize, usize::saturating_add)
            })
            .collect();
        per_pod.sort_unstable();
        let running = pods.len() - per_pod.len();
        let required = group
            .as_ref()
            .and_then(|g| g.policy.min_count())
            .map_or(1, |m| (m as usize).saturating_sub(running).max(1));
        let need: usize = per_pod
            .iter()
            .take(required)
            .fold(0usize, |a, b| a.saturating_add(*b));
        let free_now = {
            let mut f = trial.free_devices().clone();
            f.intersect_with(trial.usable_devices());
            f.len()
        };
        let mut freed = 0usize;
        let mut chosen: Vec<usize> = Vec::new();
        let mut enough = false;
        for (i, v) in victims.iter().enumerate() {
            sim.evict(i, trial);
            chosen.push(i);
            freed += v.devices;
            let last = i + 1 == victims.len();
            // Placement is tried once the devices could suffice, and always with the
            // last victim gone (the count is only an estimate).
            if (free_now + freed >= need || last) && fits(trial)? {
                enough = true;
                break;
            }
        }
        if !enough {
            // Put every victim back: the cluster is as it was.
            for &i in chosen.iter().rev() {
                sim.restore(i, trial);
            }
            return Ok(None);
        }
        // Reprieve: give back the most important victims that are not needed. A victim
        // whose devices the unit needs by count alone is kept without a trial.
        let mut kept: Vec<bool> = vec![true; chosen.len()];
        for at in (0..chosen.len()).rev() {
            let devices = victims[chosen[at]].devices;
            if free_now + freed - devices < need {
                continue;
            }
            sim.restore(chosen[at], trial);
            if fits(trial)? {
                kept[at] = false;
                freed -= devices;
            } else {
                sim.evict(chosen[at], trial);
            }
        }
        // Put the chosen victims back too, so the cluster is as it was and the real
        // evictions below go through `unbind`.
        for (at, &i) in chosen.iter().enumerate().rev() {
            if kept[at] {
                sim.restore(i, trial);
            }
        }
        drop(sim);
        let chosen: Vec<usize> = chosen
            .into_iter()
            .zip(kept)
            .filter_map(|(i, k)| k.then_some(i))
            .collect();
        // Commit: evict the chosen victims, place the preemptor.
        let mut evicted = Vec::new();
        for &i in &chosen {
            self.evict_victim(&victims[i]);
            evicted.push(victims[i].clone());
        }
        let (group, pods, claims) = self.inputs(unit);
        let GangOutcome::Placed(d) =
            self.cluster
                .place_gang_mut(group.as_ref(), &pods, &claims, &self.options)?
        else {
            // Cannot happen: the same state was checked on the copy.
            debug_assert!(false, "the preemptor does not fit after its victims left");
            return Ok(None);
        };
        self.commit(group.as_ref(), &pods, &d)?;
        Ok(Some(Preemption {
            victims: evicted,
            decision: d,
        }))
    }

    /// Evicts a victim in this state (its pods become pending).
    fn evict_victim(&mut self, v: &Victim) {
        for p in &v.pods {
            self.unbind(p);
        }
        if let Unit::Group(g) = &v.unit {
            self.release_group_claims_if_idle(g);
        } else if let Some(g) = v.pods.first().and_then(|p| self.group_of(&self.pods[p])) {
            self.release_group_claims_if_idle(&g);
        }
    }
}

/// What the simulator reads of the scheduler.
struct SimView<'a> {
    bound: &'a BTreeMap<String, crate::PodBinding>,
    pods: &'a BTreeMap<String, crate::Pod>,
    members: &'a BTreeMap<String, BTreeSet<String>>,
    group_claims: &'a BTreeMap<String, Vec<crate::model::decision::ClaimAllocation>>,
    index: &'a super::BoundIndex,
}

/// Evictions simulated on the cluster, exactly as `unbind` and
/// `release_group_claims_if_idle` would do them: a pod's node reservation goes with it;
/// a claim a binding holds goes when its last bound user goes, a PodGroup's claims when
/// its last bound member goes (and they come back with their first). Evicting and
/// restoring are inverses, so victims can be tried and reprieved in any order. Claims
/// and groups are looked up the first time a victim touches them.
struct Sim<'a> {
    s: SimView<'a>,
    victims: &'a [Victim],
    /// Claims touched: the allocation a binding holds and how many of its users are
    /// still bound in the simulation.
    claims: BTreeMap<&'a str, (&'a crate::model::decision::ClaimAllocation, usize)>,
    /// PodGroups with claims touched: how many members are still bound.
    groups: BTreeMap<String, usize>,
}

impl<'a> Sim<'a> {
    /// The claims a bound pod holds through bindings, each with its entry in `claims`
    /// (created on first use). Claims no binding holds (a PodGroup's, or allocated
    /// outside the scheduler) are not `unbind`'s to release and are skipped.
    fn touch_claims(&mut self, pod: &str) -> Vec<&'a str> {
        let s = &self.s;
        let mut out = Vec::new();
        for c in s.index.pod_claims.get(pod).into_iter().flatten() {
            let users = s.index.claim_users.get(c);
            let c: &'a str = c;
            if !self.claims.contains_key(c) {
                let held = users
                    .into_iter()
                    .flatten()
                    .find_map(|u| s.bound.get(&**u)?.claims.iter().find(|a| a.claim == c));
                let Some(held) = held else { continue };
                let n = users.map_or(0, BTreeSet::len);
                self.claims.insert(c, (held, n));
            }
            out.push(c);
        }
        out
    }

    /// The pod's PodGroup, if it holds claims, with its entry in `groups` (created on
    /// first use).
    fn touch_group(&mut self, pod: &str) -> Option<String> {
        let p = self.s.pods.get(pod)?;
        let g = super::key(&p.namespace, p.scheduling_group.as_deref()?);
        if !self.s.group_claims.contains_key(&g) {
            return None;
        }
        if !self.groups.contains_key(&g) {
            let n = super::bound_members(self.s.members, self.s.bound, &g).count();
            self.groups.insert(g.clone(), n);
        }
        Some(g)
    }

    fn evict(&mut self, v: usize, c: &mut crate::Cluster) {
        for pod in &self.victims[v].pods {
            let Some(b) = self.s.bound.get(pod) else {
                continue;
            };
            let _ = c.release_node_resources(&b.node, pod);
            for claim in self.touch_claims(pod) {
                let (held, users) = self.claims.get_mut(claim).expect("touched");
                *users -= 1;
                if *users == 0 {
                    c.release_allocation(&held.claim, &held.result);
                }
            }
            if let Some(g) = self.touch_group(pod) {
                let left = self.groups.get_mut(&g).expect("touched");
                *left -= 1;
                if *left == 0 {
                    for a in &self.s.group_claims[&g] {
                        c.release_allocation(&a.claim, &a.result);
                    }
                }
            }
        }
    }

    fn restore(&mut self, v: usize, c: &mut crate::Cluster) {
        for pod in self.victims[v].pods.iter().rev() {
            let Some(b) = self.s.bound.get(pod) else {
                continue;
            };
            if let Some(g) = self.touch_group(pod) {
                let left = self.groups.get_mut(&g).expect("touched");
                if *left == 0 {
                    for a in &self.s.group_claims[&g] {
                        let recorded = c.commit_allocation(&a.claim, &a.result);
                        debug_assert!(recorded.is_ok(), "a released allocation fits again");
                    }
                }
                *left += 1;
            }
            for claim in self.touch_claims(pod) {
                let (held, users) = self.claims.get_mut(claim).expect("touched");
                if *users == 0 {
                    let recorded = c.commit_allocation(&held.claim, &held.result);
                    debug_assert!(recorded.is_ok(), "a released allocation fits again");
                }
                *users += 1;
            }
            if let Some(p) = self.s.pods.get(pod) {
                let requests = c
                    .node(&b.node)
                    .map(|n| crate::gang::apply::pod_node_requests(p, n))
                    .unwrap_or_default();
                let recorded = c.reserve_node_resources(&b.node, pod, requests);
                debug_assert!(recorded.is_ok(), "a released reservation fits again");
            }
        }
    }
}
