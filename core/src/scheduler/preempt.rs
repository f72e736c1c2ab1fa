//! Workload-aware preemption (KEP-5710).

use super::{Preemption, Scheduler, SchedulerError, Unit, Victim};
use crate::alloc_prelude::*;
use crate::placer::GangOutcome;
use crate::workload::DisruptionMode;

impl Scheduler {
    // ------------------------------------------------------------------ preemption

    /// The running units a preemptor of priority `priority` may evict: whole PodGroups
    /// with `disruptionMode: All`, single pods otherwise (pods of a group above its
    /// `minCount` first), all of strictly lower priority. Sorted least important first.
    fn potential_victims(&self, priority: i32) -> Vec<Victim> {
        let mut out = Vec::new();
        let mut whole: BTreeMap<String, Victim> = BTreeMap::new();
        let mut elastic: BTreeMap<String, usize> = BTreeMap::new();
        for k in self.bound.keys() {
            let pod = &self.pods[k];
            let devices = self.devices_held(k);
            let Some(g) = self.group_of(pod) else {
                if pod.priority < priority {
                    out.push(Victim {
                        unit: Unit::Pod(k.clone()),
                        pods: vec![k.clone()],
                        priority: pod.priority,
                        devices,
                    });
                }
                continue;
            };
            let group = &self.groups[&g];
            let p = group.effective_priority();
            if p >= priority {
                continue;
            }
            if group.disruption_mode == DisruptionMode::All {
                let v = whole.entry(g.clone()).or_insert(Victim {
                    unit: Unit::Group(g.clone()),
                    pods: Vec::new(),
                    priority: p,
                    devices: 0,
                });
                v.pods.push(k.clone());
                v.devices += devices;
            } else {
                *elastic.entry(g.clone()).or_default() += 1;
                out.push(Victim {
                    unit: Unit::Pod(k.clone()),
                    pods: vec![k.clone()],
                    priority: p,
                    devices,
                });
            }
        }
        out.extend(whole.into_values());
        // Least important first: lower priority; pods above their group's minCount;
        // single pods before groups (KEP-5710 reprieves groups first); fewer devices.
        let above_min = |v: &Victim| -> bool {
            let Unit::Pod(p) = &v.unit else { return false };
            let Some(g) = self.group_of(&self.pods[p]) else {
                return false;
            };
            let bound = elastic.get(&g).copied().unwrap_or(0);
            let min = self.groups[&g].policy.min_count().unwrap_or(0) as usize;
            bound > min
        };
        out.sort_by(|a, b| {
            a.priority
                .cmp(&b.priority)
                .then_with(|| above_min(b).cmp(&above_min(a)))
                .then_with(|| {
                    matches!(a.unit, Unit::Group(_)).cmp(&matches!(b.unit, Unit::Group(_)))
                })
                .then(a.devices.cmp(&b.devices))
                .then_with(|| a.unit.cmp(&b.unit))
        });
        out
    }

    /// Devices a bound pod's binding allocated (its own and shared claims).
    fn devices_held(&self, pod: &str) -> usize {
        self.bound.get(pod).map_or(0, |b| {
            b.claims
                .iter()
                .map(|c| c.result.devices.iter().filter(|d| !d.admin_access).count())
                .sum()
        })
    }

    /// The eviction simulator for `victims`: what each bound pod holds, and which
    /// claims only their users keep allocated (see [`Sim`]). Borrows; copies nothing.
    fn simulator<'a>(&'a self, victims: &'a [Victim]) -> Sim<'a> {
        let mut sim = Sim {
            claims: Vec::new(),
            pod_claims: BTreeMap::new(),
            pods: BTreeMap::new(),
            victims,
        };
        let split = |k: &'a str| k.split_once('/').unwrap_or(("", k));
        // Every claim a bound pod's binding or a group holds, with its users: the bound
        // pods naming it (any bound member, for a group's claim), as `unbind` and
        // `release_group_claims_if_idle` decide.
        let allocations: BTreeMap<(&str, &str), &crate::validate::ClaimAllocation> = self
            .bound
            .values()
            .flat_map(|b| &b.claims)
            .map(|c| (split(&c.claim), c))
            .collect();
        let group_claims: BTreeMap<(&str, &str), &Vec<crate::validate::ClaimAllocation>> = self
            .group_claims
            .iter()
            .map(|(g, c)| (split(g), c))
            .collect();
        let mut index: BTreeMap<&str, usize> = BTreeMap::new();
        let mut add_user =
            |sim: &mut Sim<'a>, claim: &'a crate::validate::ClaimAllocation, pod: &'a str| {
                let at = *index.entry(&claim.claim).or_insert_with(|| {
                    sim.claims.push((claim, 0));
                    sim.claims.len() - 1
                });
                sim.claims[at].1 += 1;
                sim.pod_claims.entry(pod).or_default().push(at);
            };
        for (k, b) in &self.bound {
            let pod = &self.pods[k];
            for r in &pod.resource_claims {
                if let crate::workload::ClaimSource::ClaimName(n) = &r.source
                    && let Some(c) = allocations.get(&(pod.namespace.as_str(), n.as_str()))
                {
                    add_user(&mut sim, c, k);
                }
            }
            if let Some(g) = &pod.scheduling_group
                && let Some(claims) = group_claims.get(&(pod.namespace.as_str(), g.as_str()))
            {
                for c in *claims {
                    add_user(&mut sim, c, k);
                }
            }
            sim.pods.insert(k, (b.node.as_str(), pod));
        }
        sim
    }

    /// Workload-aware preemption for a unit that does not fit (KEP-5710): if evicting
    /// every lower-priority victim would let it fit, evicts the least important victims
    /// that suffice — removed least important first until the unit fits, then the
    /// most important of them reprieved while it still fits — and places the unit.
    /// Nothing is evicted when preemption cannot help. The search runs on a copy of
    /// the cluster where victims' allocations and reservations are released and
    /// restored; only the chosen victims are evicted for real.
    pub(super) fn preempt(&mut self, unit: &Unit) -> Result<Option<Preemption>, SchedulerError> {
        let (priority, _, _) = self.unit_priority(unit);
        let victims = self.potential_victims(priority);
        if victims.is_empty() {
            return Ok(None);
        }
        let mut sim = self.simulator(&victims);
        let (group, pods, claims) = self.inputs(unit);
        let options = self.options.clone();
        let mut trial = self.cluster.clone();
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
                        crate::workload::ClaimSource::ClaimName(n) => claims.iter().find(|c| {
                            c.namespace == p.namespace && c.name == *n && c.allocation.is_none()
                        }),
                        crate::workload::ClaimSource::Template(_) => None,
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
            sim.evict(i, &mut trial);
            chosen.push(i);
            freed += v.devices;
            let last = i + 1 == victims.len();
            // Placement is tried once the devices could suffice, and always with the
            // last victim gone (the count is only an estimate).
            if (free_now + freed >= need || last) && fits(&mut trial)? {
                enough = true;
                break;
            }
        }
        if !enough {
            return Ok(None);
        }
        // Reprieve: give back the most important victims that are not needed.
        let mut kept: Vec<bool> = vec![true; chosen.len()];
        for at in (0..chosen.len()).rev() {
            sim.restore(chosen[at], &mut trial);
            if fits(&mut trial)? {
                kept[at] = false;
            } else {
                sim.evict(chosen[at], &mut trial);
            }
        }
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

/// Evictions simulated on a copy of the cluster, exactly as `unbind` would do them: a
/// pod's node reservation goes with it; a claim's allocation goes when its last user
/// goes (and comes back with its first user). Evicting and restoring are inverses, so
/// victims can be tried and reprieved in any order.
struct Sim<'a> {
    /// Claims held, with how many of their users are still bound in the simulation.
    claims: Vec<(&'a crate::validate::ClaimAllocation, usize)>,
    /// The claims each bound pod uses (indices into `claims`).
    pod_claims: BTreeMap<&'a str, Vec<usize>>,
    /// Each bound pod's node and object.
    pods: BTreeMap<&'a str, (&'a str, &'a crate::Pod)>,
    victims: &'a [Victim],
}

impl Sim<'_> {
    fn evict(&mut self, v: usize, c: &mut crate::Cluster) {
        for pod in &self.victims[v].pods {
            if let Some((node, _)) = self.pods.get(pod.as_str()) {
                let _ = c.release_node_resources(node, pod);
            }
            for &at in self.pod_claims.get(pod.as_str()).into_iter().flatten() {
                let (claim, users) = &mut self.claims[at];
                *users -= 1;
                if *users == 0 {
                    c.release_allocation(&claim.claim, &claim.result);
                }
            }
        }
    }

    fn restore(&mut self, v: usize, c: &mut crate::Cluster) {
        for pod in &self.victims[v].pods {
            for &at in self.pod_claims.get(pod.as_str()).into_iter().flatten() {
                let (claim, users) = &mut self.claims[at];
                if *users == 0 {
                    let recorded = c.commit_allocation(&claim.claim, &claim.result);
                    debug_assert!(recorded.is_ok(), "a released allocation fits again");
                }
                *users += 1;
            }
            if let Some(&(node, p)) = self.pods.get(pod.as_str()) {
                let requests = c
                    .node(node)
                    .map(|n| crate::decision::pod_node_requests(p, n))
                    .unwrap_or_default();
                let recorded = c.reserve_node_resources(node, pod, requests);
                debug_assert!(recorded.is_ok(), "a released reservation fits again");
            }
        }
    }
}
