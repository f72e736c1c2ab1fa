//! ResourceSlices and their pools: adding, replacing and removing slices, pool status
//! (only the newest generation of a complete, valid pool is eligible), the allocation order
//! of a node's devices, and the equivalence classes the allocator's symmetry breaking uses.

use core::fmt;

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::model::device::NodeAccess;
use crate::model::error::{ObjectKind, Problem, ValidationError};
use crate::{Device, ResourceSlice};

use super::bits::SparseDeviceSet;
use super::ids::{DeviceId, NodeId, PoolId, SliceId};
use super::index::{COUNTERS, DeviceSlot, ELIGIBLE, NO_NODE, SHAREABLE};
use super::intern::Symbol;
use super::taints::{TaintReport, slice_refs};
use super::{Cluster, ClusterError, not_found};

/// Why a pool is not usable although its slices are valid one by one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum PoolProblem {
    /// Two slices of the current generation publish a device of this name.
    DuplicateDevice(String),
    /// Two slices of the current generation publish a counter set of this name.
    DuplicateCounterSet(String),
    /// A device consumes from a counter set the pool does not have.
    MissingCounterSet {
        /// The device.
        device: String,
        /// The counter set it names.
        counter_set: String,
    },
    /// A device consumes a counter its counter set does not have.
    MissingCounter {
        /// The device.
        device: String,
        /// The counter set.
        counter_set: String,
        /// The counter it names.
        counter: String,
    },
}

/// The state of one resource pool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PoolStatus {
    /// The driver.
    pub driver: String,
    /// The pool name.
    pub name: String,
    /// The highest generation seen; only slices of this generation count.
    pub generation: i64,
    /// Slices present at that generation.
    pub slices_present: usize,
    /// `resourceSliceCount` of that generation.
    pub slices_expected: i64,
    /// Problems that make the pool invalid (its devices are never used).
    pub problems: Vec<PoolProblem>,
}

impl PoolStatus {
    /// Every slice of the current generation is present.
    pub fn is_complete(&self) -> bool {
        i64::try_from(self.slices_present).is_ok_and(|n| n == self.slices_expected)
    }

    /// Complete and without problems: its devices can be allocated.
    pub fn is_usable(&self) -> bool {
        self.is_complete() && self.problems.is_empty()
    }
}

#[derive(Clone, Debug)]
pub(crate) struct SliceEntry {
    /// Shared, so that cloning a cluster (a what-if snapshot, a placement's scratch
    /// copy) does not copy every device; edits copy on write.
    pub(crate) slice: Arc<ResourceSlice>,
    pub(crate) pool: PoolId,
    /// Shared too: a copy of the slice table (on the first edit after a clone) copies
    /// no device list.
    pub(crate) devices: Arc<[DeviceId]>,
}

#[derive(Clone, Debug)]
pub(crate) struct PoolEntry {
    pub(crate) driver: Symbol,
    pub(crate) name: Symbol,
    /// Every slice of the pool, any generation, by slice name.
    pub(crate) slices: BTreeMap<String, SliceId>,
    /// A current device has binding conditions: upstream tries such pools last.
    pub(crate) binding_conditions: bool,
    pub(crate) status: PoolStatus,
    /// Current-generation devices by name.
    /// Current-generation devices by name, sorted by symbol (8 bytes a device).
    pub(super) device_by_name: Vec<(Symbol, DeviceId)>,
    /// Current-generation devices.
    pub(super) devices: SparseDeviceSet,
}

impl Cluster {
    /// Stamps a slice's taints that have no `timeAdded`: with the time of the same
    /// taint (key, value, effect) on the same device in `old`, else with the clock.
    fn stamp_slice(&self, slice: &mut ResourceSlice, old: Option<&ResourceSlice>) {
        for d in &mut slice.devices {
            let old_device = old.and_then(|o| o.devices.iter().find(|x| x.name == d.name));
            for t in d.taints.iter_mut().filter(|t| t.time_added.is_none()) {
                let kept = old_device.and_then(|od| {
                    od.taints
                        .iter()
                        .find(|o| o.key == t.key && o.value == t.value && o.effect == t.effect)
                        .and_then(|o| o.time_added)
                });
                t.time_added = Some(kept.unwrap_or(self.clock));
            }
        }
    }

    // ----------------------------------------------------------------- slices

    /// Adds a ResourceSlice. Returns the evictions its taints start on devices that
    /// are already allocated (a republished pool, say).
    pub fn add_slice(&mut self, mut slice: ResourceSlice) -> Result<TaintReport, ClusterError> {
        slice.validate()?;
        self.stamp_slice(&mut slice, None);
        if self.slice_by_name.contains_key(&slice.name) {
            return Err(ClusterError::AlreadyExists(slice.object_ref()));
        }
        let mut refs = self.pool_refs(&slice.driver, &slice.pool.name);
        refs.extend(slice_refs(&slice));
        Ok(self.with_eviction_diff(&refs, |c| {
            c.insert_slice(slice);
        }))
    }

    /// Replaces a ResourceSlice of the same name (a driver republishing it).
    pub fn replace_slice(&mut self, mut slice: ResourceSlice) -> Result<TaintReport, ClusterError> {
        slice.validate()?;
        let Some(&old) = self.slice_by_name.get(&slice.name) else {
            return Err(ClusterError::NotFound(slice.object_ref()));
        };
        self.stamp_slice(&mut slice, Some(&self.slice_entry(old).slice));
        let old_entry = self.slice_entry(old);
        // Upstream: driver, pool name and node name are immutable.
        let immutable = [
            ("spec.driver", old_entry.slice.driver == slice.driver),
            (
                "spec.pool.name",
                old_entry.slice.pool.name == slice.pool.name,
            ),
            (
                "spec.nodeName",
                old_entry.slice.node_name() == slice.node_name(),
            ),
        ];
        let errs: Vec<ValidationError> = immutable
            .iter()
            .filter(|(_, same)| !same)
            .map(|(field, _)| {
                ValidationError::new(
                    slice.object_ref(),
                    *field,
                    Problem::Forbidden {
                        reason: "field is immutable",
                    },
                )
            })
            .collect();
        if !errs.is_empty() {
            return Err(ClusterError::Invalid(errs));
        }
        let refs = self.pool_refs(&slice.driver, &slice.pool.name);
        // A driver republishing its slice unchanged but for the pool's generation (or
        // slice count), the usual case after a restart: its devices keep their slots,
        // index entries, taints and class memberships; only the pool is recomputed.
        let unchanged = {
            let o = &old_entry.slice;
            let pool = (slice.pool.generation, slice.pool.resource_slice_count);
            slice.pool.generation = o.pool.generation;
            slice.pool.resource_slice_count = o.pool.resource_slice_count;
            let same = **o == slice;
            (slice.pool.generation, slice.pool.resource_slice_count) = pool;
            same
        };
        if unchanged {
            return Ok(self.with_eviction_diff(&refs, |c| {
                let entry = c.slices[old.index()].as_mut().expect("live slice id");
                entry.slice = Arc::new(slice);
                let pool = entry.pool;
                // The pool's only slice: its current devices, and so their
                // equivalence classes, are the same.
                let alone = c.pools[pool.index()].slices.len() == 1;
                c.recompute_pool_with(pool, !alone);
            }));
        }
        Ok(self.with_eviction_diff(&refs, |c| {
            c.delete_slice(old);
            c.insert_slice(slice);
        }))
    }

    /// Removes a ResourceSlice; returns it and the evictions this starts or cancels
    /// (a pool that falls back to an older generation, or an allocated device that
    /// disappears and keeps only the taints of rules that select it).
    pub fn remove_slice(
        &mut self,
        name: &str,
    ) -> Result<(ResourceSlice, TaintReport), ClusterError> {
        let id = *self
            .slice_by_name
            .get(name)
            .ok_or_else(|| not_found(ObjectKind::ResourceSlice, name))?;
        let e = self.slice_entry(id);
        let refs = self.pool_refs(&e.slice.driver, &e.slice.pool.name);
        let mut removed = None;
        let report = self.with_eviction_diff(&refs, |c| removed = Some(c.delete_slice(id)));
        Ok((removed.expect("slice removed"), report))
    }

    /// A ResourceSlice by name.
    pub fn slice(&self, name: &str) -> Option<&ResourceSlice> {
        self.slice_by_name
            .get(name)
            .map(|id| &*self.slice_entry(*id).slice)
    }

    /// Every ResourceSlice, by name.
    pub fn slices(&self) -> impl Iterator<Item = &ResourceSlice> + '_ {
        self.slice_by_name
            .values()
            .map(|id| &*self.slice_entry(*id).slice)
    }

    fn insert_slice(&mut self, slice: ResourceSlice) -> SliceId {
        let id = if let Some(i) = self.free_slice_ids.pop_first() {
            SliceId(i)
        } else {
            self.slices.push(None);
            SliceId(self.slices.len() as u32 - 1)
        };
        let driver = Arc::make_mut(&mut self.strings).intern(&slice.driver);
        let pool_sym = Arc::make_mut(&mut self.strings).intern(&slice.pool.name);
        let pool = self.pool_slot(driver, pool_sym, &slice.driver, &slice.pool.name);
        Arc::make_mut(&mut self.pools)[pool.index()]
            .slices
            .insert(slice.name.clone(), id);
        Arc::make_mut(&mut self.slice_by_name).insert(slice.name.clone(), id);
        let slice_node = slice.node_name().map(str::to_owned);
        let mut ids = Vec::with_capacity(slice.devices.len());
        for (pos, d) in slice.devices.iter().enumerate() {
            let node_name = match &d.node_access {
                Some(NodeAccess::NodeName(n)) => Some(n.clone()),
                _ => slice_node.clone(),
            };
            let node = node_name.map(|n| self.node_slot(&n));
            let dev = self.alloc_device_id();
            let name = Arc::make_mut(&mut self.strings).intern(&d.name);
            self.devices[dev.index()] = Some(DeviceSlot {
                slice: id,
                pos: pos as u16,
                node: node.unwrap_or(NO_NODE),
                equiv: dev.0,
                name,
                flags: if d.allow_multiple_allocations {
                    SHAREABLE
                } else {
                    0
                } | if d.consumes_counters.is_empty() {
                    0
                } else {
                    COUNTERS
                },
            });
            self.grow_index(dev);
            self.live.insert(dev);
            self.shareable.set(dev, d.allow_multiple_allocations);
            if let Some(n) = node {
                Arc::make_mut(&mut self.nodes)[n.index()]
                    .devices
                    .insert(dev);
            } else {
                self.shared.insert(dev);
                self.shared_len += 1;
            }
            self.by_driver.entry(driver).or_default().insert(dev);
            self.index_attributes(dev, &slice.driver, d, true);
            ids.push(dev);
        }
        self.slices[id.index()] = Some(SliceEntry {
            slice: Arc::new(slice),
            pool,
            devices: Arc::from(ids.as_slice()),
        });
        for &dev in &ids {
            self.rebuild_taints(dev);
        }
        self.evaluate_classes(id);
        self.recompute_pool(pool);
        self.reorder_nodes_of_pool(pool);
        // Only this slice's devices join the shapes' devices.
        self.scores_added(&ids);
        id
    }

    /// The allocation order of a device (see `NodeEntry::ordered`).
    pub(crate) fn order_key(&self, dev: DeviceId) -> (bool, &str, &str, &str, u16) {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let pool = &self.pools[self.pool_of(slot).index()];
        let slice = &self.slice_entry(slot.slice).slice.name;
        (
            pool.binding_conditions,
            &pool.status.driver,
            &pool.status.name,
            slice,
            slot.pos,
        )
    }

    /// Re-sorts the ordered device list of every node holding devices of the pool.
    fn reorder_nodes_of_pool(&mut self, pool: PoolId) {
        let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
        for s in self.pools[pool.index()].slices.values() {
            for &dev in self.slice_entry(*s).devices.iter() {
                if let Some(n) = self.devices[dev.index()]
                    .as_ref()
                    .and_then(DeviceSlot::node)
                {
                    nodes.insert(n);
                }
            }
        }
        for n in nodes {
            self.reorder_node(n);
        }
    }

    fn reorder_node(&mut self, n: NodeId) {
        let mut ordered: Vec<DeviceId> = self.nodes[n.index()].devices.iter().collect();
        ordered.sort_by(|a, b| self.order_key(*a).cmp(&self.order_key(*b)));
        Arc::make_mut(&mut self.nodes)[n.index()].ordered = ordered;
        self.refresh_rooms(n);
        self.rescore(n);
    }

    /// Evaluates every cached class on the devices of one slice.
    fn evaluate_classes(&mut self, id: SliceId) {
        let entry = self.slices[id.index()].as_ref().expect("live slice id");
        for cache in self.class_cache.values_mut() {
            for (&dev, d) in entry.devices.iter().zip(&entry.slice.devices) {
                cache.evaluate(dev, &entry.slice.driver, d);
            }
        }
    }

    fn delete_slice(&mut self, id: SliceId) -> ResourceSlice {
        // Clear the devices' state while the slice entry still resolves their pool.
        let devices = self.slice_entry(id).devices.clone();
        for &dev in devices.iter() {
            self.set_groups(dev, SmallVec::new());
            self.apply_flags(dev, 0);
        }
        let entry = self.slices[id.index()].take().expect("live slice id");
        let nodes: BTreeSet<NodeId> = entry
            .devices
            .iter()
            .filter_map(|d| self.devices[d.index()].as_ref().and_then(DeviceSlot::node))
            .collect();
        self.free_slice_ids.insert(id.0);
        Arc::make_mut(&mut self.slice_by_name).remove(&entry.slice.name);
        Arc::make_mut(&mut self.pools)[entry.pool.index()]
            .slices
            .remove(&entry.slice.name);
        for (pos, &dev) in entry.devices.iter().enumerate() {
            let slot = self.devices[dev.index()].take().expect("live device id");
            self.live.remove(dev);
            self.shareable.remove(dev);
            if let Some(n) = slot.node() {
                Arc::make_mut(&mut self.nodes)[n.index()]
                    .devices
                    .remove(dev);
            } else {
                self.shared.remove(dev);
                self.shared_len -= 1;
            }
            if let Some(s) = self
                .by_driver
                .get_mut(&self.pools[entry.pool.index()].driver)
            {
                s.remove(dev);
            }
            self.index_attributes(dev, &entry.slice.driver, &entry.slice.devices[pos], false);
            for cache in self.class_cache.values_mut() {
                cache.forget(dev);
            }
            self.free_device_ids.insert(dev.0);
        }
        self.recompute_pool(entry.pool);
        for n in nodes {
            self.reorder_node(n);
        }
        self.reorder_nodes_of_pool(entry.pool);
        self.scores_removed(&entry.devices);
        Arc::unwrap_or_clone(entry.slice)
    }

    fn pool_slot(&mut self, driver: Symbol, name: Symbol, driver_s: &str, name_s: &str) -> PoolId {
        if let Some(&p) = self.pool_by_key.get(&(driver, name)) {
            return p;
        }
        let id = PoolId(self.pools.len() as u32);
        Arc::make_mut(&mut self.pools).push(PoolEntry {
            driver,
            name,
            slices: BTreeMap::new(),
            status: PoolStatus {
                driver: driver_s.to_owned(),
                name: name_s.to_owned(),
                generation: 0,
                slices_present: 0,
                slices_expected: 0,
                problems: Vec::new(),
            },
            device_by_name: Vec::new(),
            devices: SparseDeviceSet::new(),
            binding_conditions: false,
        });
        Arc::make_mut(&mut self.pool_by_key).insert((driver, name), id);
        id
    }

    /// Recomputes a pool's generation, completeness and validity, and the usability of
    /// every device in it.
    fn recompute_pool(&mut self, pool: PoolId) {
        self.recompute_pool_with(pool, true);
    }

    /// [`recompute_pool`](Self::recompute_pool), assigning the current devices'
    /// equivalence classes again only with `equivalence`.
    fn recompute_pool_with(&mut self, pool: PoolId, equivalence: bool) {
        let slice_ids: Vec<SliceId> = self.pools[pool.index()].slices.values().copied().collect();
        let generation = slice_ids
            .iter()
            .map(|s| self.slice_entry(*s).slice.pool.generation)
            .max()
            .unwrap_or(0);
        let current: Vec<SliceId> = slice_ids
            .iter()
            .copied()
            .filter(|s| self.slice_entry(*s).slice.pool.generation == generation)
            .collect();
        // The slices of one generation should agree; the first by name decides.
        let expected = current
            .first()
            .map_or(0, |s| self.slice_entry(*s).slice.pool.resource_slice_count);
        let mut problems = Vec::new();
        let mut by_name: BTreeMap<Symbol, DeviceId> = BTreeMap::new();
        let mut counter_sets: BTreeMap<&str, &BTreeMap<String, crate::Quantity>> = BTreeMap::new();
        let mut devices = SparseDeviceSet::new();
        for &s in &current {
            let e = self.slice_entry(s);
            for cs in &e.slice.shared_counters {
                if counter_sets.insert(&cs.name, &cs.counters).is_some() {
                    problems.push(PoolProblem::DuplicateCounterSet(cs.name.clone()));
                }
            }
            for &dev in e.devices.iter() {
                let slot = self.devices[dev.index()].as_ref().expect("live device id");
                devices.insert(dev);
                if by_name.insert(slot.name, dev).is_some() {
                    problems.push(PoolProblem::DuplicateDevice(
                        self.strings.resolve(slot.name).to_owned(),
                    ));
                }
            }
        }
        for &s in &current {
            for d in &self.slice_entry(s).slice.devices {
                for c in &d.consumes_counters {
                    match counter_sets.get(c.counter_set.as_str()) {
                        None => problems.push(PoolProblem::MissingCounterSet {
                            device: d.name.clone(),
                            counter_set: c.counter_set.clone(),
                        }),
                        Some(set) => {
                            for counter in c.counters.keys().filter(|k| !set.contains_key(*k)) {
                                problems.push(PoolProblem::MissingCounter {
                                    device: d.name.clone(),
                                    counter_set: c.counter_set.clone(),
                                    counter: counter.clone(),
                                });
                            }
                        }
                    }
                }
            }
        }
        if equivalence {
            self.assign_equivalence(&current);
        }
        let binding = current.iter().any(|s| {
            self.slice_entry(*s)
                .slice
                .devices
                .iter()
                .any(|d| !d.binding_conditions.is_empty())
        });
        let p = &mut Arc::make_mut(&mut self.pools)[pool.index()];
        p.binding_conditions = binding;
        p.status.generation = generation;
        p.status.slices_present = current.len();
        p.status.slices_expected = expected;
        p.status.problems = problems;
        let mut by_name: Vec<(Symbol, DeviceId)> = by_name.into_iter().collect();
        by_name.shrink_to_fit();
        p.device_by_name = by_name;
        p.devices = devices;
        let usable = p.status.is_usable();
        let (driver, name) = (p.driver, p.name);
        self.pool_devices_changed(driver, name);
        for s in slice_ids {
            let is_current = self.slice_entry(s).slice.pool.generation == generation;
            for &dev in self.slice_entry(s).devices.clone().iter() {
                let flags = self.devices[dev.index()].as_ref().map_or(0, |d| d.flags);
                let eligible = if usable && is_current { ELIGIBLE } else { 0 };
                self.set_flags(dev, (flags & !ELIGIBLE) | eligible);
            }
        }
    }

    /// Groups a pool's current devices into classes of interchangeable devices: equal
    /// in everything the allocator's search looks at (attributes, capacities, counter
    /// consumption, shareability, binding conditions, node access). Names and taints do
    /// not count (taints are applied before the search). A device's `equiv` is the id
    /// of the first device of its class.
    fn assign_equivalence(&mut self, slices: &[SliceId]) {
        let mut reps: BTreeMap<u64, Vec<(DeviceId, SliceId, usize)>> = BTreeMap::new();
        let mut assign: Vec<(DeviceId, u32)> = Vec::new();
        for &s in slices {
            let e = self.slice_entry(s);
            for (pos, (&dev, d)) in e.devices.iter().zip(&e.slice.devices).enumerate() {
                let h = content_hash(d);
                let bucket = reps.entry(h).or_default();
                let rep = bucket.iter().find(|(_, rs, rpos)| {
                    same_content(d, &self.slice_entry(*rs).slice.devices[*rpos])
                });
                let equiv = if let Some(&(r, _, _)) = rep {
                    r.0
                } else {
                    bucket.push((dev, s, pos));
                    dev.0
                };
                assign.push((dev, equiv));
            }
        }
        for (dev, equiv) in assign {
            if let Some(slot) = self.devices[dev.index()].as_mut() {
                slot.equiv = equiv;
            }
        }
    }

    /// The state of a pool.
    pub fn pool_status(&self, driver: &str, pool: &str) -> Option<&PoolStatus> {
        let key = (self.strings.get(driver)?, self.strings.get(pool)?);
        self.pool_by_key
            .get(&key)
            .map(|p| &self.pools[p.index()])
            .filter(|p| !p.slices.is_empty())
            .map(|p| &p.status)
    }

    /// Every pool that has at least one slice, by (driver, name).
    pub fn pools(&self) -> impl Iterator<Item = &PoolStatus> + '_ {
        let mut v: Vec<&PoolEntry> = self.pools.iter().filter(|p| !p.slices.is_empty()).collect();
        v.sort_by(|a, b| {
            (&a.status.driver, &a.status.name).cmp(&(&b.status.driver, &b.status.name))
        });
        v.into_iter().map(|p| &p.status)
    }

    /// The current-generation devices of a pool.
    pub fn pool_devices(&self, driver: &str, pool: &str) -> Option<&SparseDeviceSet> {
        let key = (self.strings.get(driver)?, self.strings.get(pool)?);
        self.pool_by_key
            .get(&key)
            .map(|p| &self.pools[p.index()].devices)
    }
}

/// Whether two devices are equal in everything but name and taints.
fn same_content(a: &Device, b: &Device) -> bool {
    a.attributes == b.attributes
        && a.capacity == b.capacity
        && a.consumes_counters == b.consumes_counters
        && a.allow_multiple_allocations == b.allow_multiple_allocations
        && a.binds_to_node == b.binds_to_node
        && a.binding_conditions == b.binding_conditions
        && a.binding_failure_conditions == b.binding_failure_conditions
        && a.node_access == b.node_access
}

/// A 64-bit FNV-1a hash of what [`same_content`] compares, without allocating.
fn content_hash(d: &Device) -> u64 {
    struct Fnv(u64);
    impl fmt::Write for Fnv {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for b in s.bytes() {
                self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            Ok(())
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let _ = fmt::write(
        &mut h,
        format_args!(
            "{:?}|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}",
            d.attributes,
            d.capacity,
            d.consumes_counters,
            d.allow_multiple_allocations,
            d.binds_to_node,
            d.binding_conditions,
            d.binding_failure_conditions,
            d.node_access
        ),
    );
    h.0
}
