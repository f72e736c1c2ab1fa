//! The census of one (sub)request on one node, for explanations: how the devices the
//! node reaches narrow down through the request's class, each of its own selectors, its
//! capacity demand and the shared counters its devices draw on — counted on the
//! hardware, whatever other claims hold — and which of the survivors other claims'
//! allocations (devices, or the counters they consume) keep from it now.
//!
//! Nothing here runs while placing: the placer's per-node bound counts the class bits
//! from the index, and the allocator (`prepare.rs`) evaluates a request's selectors
//! lazily, skipping allocated devices first, as upstream does. The census evaluates
//! every selector on every device of the class the node reaches, allocated or not, so
//! an evaluation error is counted as a rejection here and never aborts anything (a free
//! device's error has already failed the placement before anything is explained).

use crate::alloc_prelude::*;
use crate::cel::Selector;
use crate::cluster::bits::DeviceSet;
use crate::cluster::ids::{DeviceId, NodeId, PoolId};
use crate::cluster::{Cluster, ELIGIBLE, FREE, SHAREABLE};
use crate::model::capacity::{consumed_capacity, fits};
use crate::model::claim::RequestView;
use crate::{Device, Quantity};

use super::prepare::capacity_covers;

/// A (sub)request's devices on one node, stage by stage (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Census {
    /// Usable devices (complete, valid pools) the node reaches.
    pub(crate) reachable: u32,
    /// Of those, the devices the class's selectors accept.
    pub(crate) class: u32,
    /// Per request selector, in order: its expression and the devices of the class
    /// that it and every selector before it accept (an error counts as a rejection).
    pub(crate) selectors: Vec<(String, u32)>,
    /// Of the selected devices, those whose capacity can serve the request's demand
    /// when nothing else is allocated on them.
    pub(crate) capacity: u32,
    /// Of those, how many the pools' shared counters admit together when nothing is
    /// allocated (an upper bound; the devices whose demand alone exceeds a counter
    /// set's total are left out of `fit`).
    pub(crate) counters: u32,
    /// The devices that survive every stage, any state.
    pub(crate) fit: DeviceSet,
    /// Of `fit`, the devices other claims hold now: allocated exclusively, or (for
    /// shareable devices) without the capacity left.
    pub(crate) held: DeviceSet,
    /// Of `fit`, the free devices that the counters other claims' devices consume
    /// leave without enough.
    pub(crate) counters_held: DeviceSet,
    /// How many of the free `fit` devices the counters left now admit together (an
    /// upper bound).
    pub(crate) counters_now: u32,
}

impl Census {
    /// The devices every request selector accepts (before capacity and counters).
    pub(crate) fn selected(&self) -> u32 {
        self.selectors.last().map_or(self.class, |(_, n)| *n)
    }
}

/// Stages of a census to pass over (as if relaxed), to find what else blocks once the
/// first blocker is gone.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Skip {
    /// The request's own selectors.
    pub(crate) selectors: bool,
    /// Its capacity demand.
    pub(crate) capacity: bool,
    /// The shared counters (when nothing is allocated; what others consume still
    /// counts).
    pub(crate) counters: bool,
}

/// A shared counter: (pool, counter set, counter).
type CounterKey = (PoolId, String, String);

/// Counter amounts by counter.
type CounterMap = BTreeMap<CounterKey, Quantity>;

/// What a device consumes, by counter.
type Demand = Vec<(CounterKey, Quantity)>;

impl Cluster {
    /// The census of request `view` on `node` (see the module docs); `selectors` are its
    /// own selectors compiled. The stages of `skip` let every device through (their
    /// counts are then every device's). `None` when its class does not exist.
    pub(crate) fn census(
        &self,
        node: NodeId,
        view: &RequestView<'_>,
        selectors: &[Selector],
        skip: Skip,
    ) -> Option<Census> {
        let class = self.class_cache.get(view.device_class_name)?;
        let reach = self.devices_reachable_from(node);
        let mut census = Census {
            reachable: 0,
            class: 0,
            selectors: selectors
                .iter()
                .map(|s| (s.source().to_owned(), 0))
                .collect(),
            capacity: 0,
            counters: 0,
            fit: DeviceSet::with_universe(self.devices.len()),
            held: DeviceSet::with_universe(self.devices.len()),
            counters_held: DeviceSet::with_universe(self.devices.len()),
            counters_now: 0,
        };
        let mut capable: Vec<DeviceId> = Vec::new();
        for dev in reach.iter() {
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            if slot.flags & ELIGIBLE == 0 {
                continue;
            }
            census.reachable += 1;
            if !class.matches.contains(dev) {
                continue;
            }
            census.class += 1;
            let entry = self.slice_entry(slot.slice);
            let driver = entry.slice.driver.as_str();
            let device = &entry.slice.devices[slot.pos as usize];
            let mut selected = true;
            for (s, (_, n)) in selectors.iter().zip(&mut census.selectors) {
                if !skip.selectors && s.eval(driver, device) != Ok(true) {
                    selected = false;
                    break;
                }
                *n += 1;
            }
            if !selected {
                continue;
            }
            let shareable = slot.flags & SHAREABLE != 0;
            let capacity_ok = if skip.capacity {
                true
            } else if shareable && !view.admin_access {
                consumed_capacity(device, view.capacity, driver)
                    .is_ok_and(|amount| fits(device, &BTreeMap::new(), &amount))
            } else {
                view.capacity.is_empty() || capacity_covers(device, view.capacity, driver)
            };
            if !capacity_ok {
                continue;
            }
            census.capacity += 1;
            capable.push(dev);
        }
        // Counters: the totals of the pools' counter sets, then what is left of them.
        let mut totals: CounterMap = BTreeMap::new();
        let mut left: CounterMap = BTreeMap::new();
        for &dev in &capable {
            let pool = self.pool_of(self.devices[dev.index()].as_ref().expect("live"));
            if !self.device_of(dev).consumes_counters.is_empty()
                && !totals.keys().any(|(p, _, _)| *p == pool)
            {
                for ((set, name), q) in self.counters_total_in(pool) {
                    totals.insert((pool, set, name), q);
                }
                for ((set, name), q) in self.counters_available_in(pool) {
                    left.insert((pool, set, name), q);
                }
            }
        }
        let demand = |dev: DeviceId| -> Demand {
            let pool = self.pool_of(self.devices[dev.index()].as_ref().expect("live"));
            self.device_of(dev)
                .consumes_counters
                .iter()
                .flat_map(|c| {
                    c.counters
                        .iter()
                        .map(move |(n, q)| ((pool, c.counter_set.clone(), n.clone()), *q))
                })
                .collect()
        };
        let admits = |have: &CounterMap, dev: DeviceId| {
            demand(dev)
                .iter()
                .all(|(k, q)| have.get(k).is_some_and(|h| *q <= *h))
        };
        let fit: Vec<DeviceId> = capable
            .iter()
            .copied()
            .filter(|&d| skip.counters || admits(&totals, d))
            .collect();
        census.counters = if skip.counters {
            u32::try_from(fit.len()).unwrap_or(u32::MAX)
        } else {
            counter_bound(&fit, &totals, &demand)
        };
        let mut free_fit = Vec::new();
        for &dev in &fit {
            census.fit.insert(dev);
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            let held = if slot.flags & SHAREABLE != 0 && !view.admin_access {
                let device = self.device_of(dev);
                let driver = self.slice_entry(slot.slice).slice.driver.as_str();
                let committed = self.consumed_on(slot);
                !consumed_capacity(device, view.capacity, driver)
                    .is_ok_and(|amount| fits(device, &committed, &amount))
            } else {
                slot.flags & FREE == 0 && !view.admin_access
            };
            if held {
                census.held.insert(dev);
            } else if !admits(&left, dev) {
                census.counters_held.insert(dev);
            } else {
                free_fit.push(dev);
            }
        }
        census.counters_now = if skip.counters {
            // Lifted: only the devices the consumed counters block one by one count.
            u32::try_from(free_fit.len()).unwrap_or(u32::MAX)
        } else {
            counter_bound(&free_fit, &left, &demand)
        };
        Some(census)
    }

    /// The device a live id names.
    pub(crate) fn device_of(&self, dev: DeviceId) -> &Device {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        &self.slice_entry(slot.slice).slice.devices[slot.pos as usize]
    }
}

/// An upper bound on how many of `devices` the counters `have` admit together: per
/// counter, the devices that do not draw on it plus as many of those that do as their
/// smallest demands allow; the least over the counters.
fn counter_bound(
    devices: &[DeviceId],
    have: &CounterMap,
    demand: &dyn Fn(DeviceId) -> Demand,
) -> u32 {
    let mut by_counter: BTreeMap<CounterKey, Vec<Quantity>> = BTreeMap::new();
    for &d in devices {
        for (k, q) in demand(d) {
            if q.is_positive() {
                by_counter.entry(k).or_default().push(q);
            }
        }
    }
    let all = u32::try_from(devices.len()).unwrap_or(u32::MAX);
    let mut bound = all;
    for (k, mut qs) in by_counter {
        qs.sort_unstable();
        let cap = have.get(&k).copied().unwrap_or(Quantity::ZERO);
        let mut sum = Quantity::ZERO;
        let mut taken = 0u32;
        for q in &qs {
            sum = sum.saturating_add(*q);
            if sum > cap {
                break;
            }
            taken += 1;
        }
        let others = all - u32::try_from(qs.len()).unwrap_or(u32::MAX);
        bound = bound.min(others + taken);
    }
    bound
}

/// A constraint's scope on one node, for [`Cluster::constraint_bound`]: per request it
/// covers, its alternatives as (devices it may use, devices it needs).
pub(crate) type Scope<'s> = Vec<Vec<(&'s DeviceSet, u32)>>;

impl Cluster {
    /// Whether a `matchAttribute` (`distinct` false) or `distinctAttribute` constraint
    /// on `attribute` can hold for the requests of `scope` (an optimistic test: exact
    /// when it says no), and the most devices it admits: for `matchAttribute`, the most
    /// of the requests' devices that share one value; for `distinctAttribute`, how many
    /// distinct values they have.
    pub(crate) fn constraint_bound(
        &self,
        attribute: &str,
        distinct: bool,
        scope: &Scope<'_>,
    ) -> (bool, u32) {
        let mut union = DeviceSet::new();
        for alts in scope {
            for (set, _) in alts {
                union.grow(set.universe());
                union.union_with(set);
            }
        }
        // Per value, the devices holding it.
        let mut by_value: BTreeMap<super::search::ValueKey, Vec<DeviceId>> = BTreeMap::new();
        for d in union.iter() {
            for v in self.values_of(d, attribute).into_iter().flatten() {
                by_value.entry(v).or_default().push(d);
            }
        }
        if distinct {
            let needed: u32 = scope
                .iter()
                .map(|alts| alts.iter().map(|(_, n)| *n).min().unwrap_or(0))
                .sum();
            let values = u32::try_from(by_value.len()).unwrap_or(u32::MAX);
            return (values >= needed, values);
        }
        let mut ok = false;
        let mut best = 0u32;
        for devices in by_value.values() {
            let n = u32::try_from(devices.len()).unwrap_or(u32::MAX);
            best = best.max(n);
            ok |= scope.iter().all(|alts| {
                alts.iter().any(|(set, need)| {
                    devices.iter().filter(|d| set.contains(**d)).count() >= *need as usize
                })
            });
        }
        (ok, best)
    }
}
