//! The device index: one 20-byte slot per device, its flags, the one place flags change
//! (`apply_flags`, which keeps the dense sets and the per-node and per-domain counts in
//! step), device ids and identities, the attribute inverted index, and the index's memory
//! report.

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::{Device, DeviceAttribute};

use super::bits::SparseDeviceSet;
use super::ids::{DeviceId, NodeId, PoolId, SliceId};
use super::intern::{Interner, Symbol};
use super::slices::SliceEntry;
use super::taints::AppliedTaint;
use super::{Cluster, DeviceRef};

/// Device counts of one node or one topology domain, maintained incrementally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceCounts {
    /// Nodes (for a domain; 1 for a node).
    pub nodes: u32,
    /// Usable devices: in a complete, valid pool at its current generation.
    pub devices: u32,
    /// Usable devices not allocated exclusively.
    pub free: u32,
    /// Free devices without any `NoSchedule` / `NoExecute` taint.
    pub free_untainted: u32,
}

impl DeviceCounts {
    pub(super) fn add(&mut self, o: DeviceCounts) {
        self.nodes += o.nodes;
        self.devices += o.devices;
        self.free += o.free;
        self.free_untainted += o.free_untainted;
    }

    pub(super) fn sub(&mut self, o: DeviceCounts) {
        self.nodes -= o.nodes;
        self.devices -= o.devices;
        self.free -= o.free;
        self.free_untainted -= o.free_untainted;
    }

    fn of_flags(flags: u8) -> DeviceCounts {
        let eligible = flags & ELIGIBLE != 0;
        let free = eligible && flags & FREE != 0;
        DeviceCounts {
            nodes: 0,
            devices: u32::from(eligible),
            free: u32::from(free),
            free_untainted: u32::from(free && flags & TAINTED == 0),
        }
    }
}

/// Memory used by the device index, for the budget in `benches/RESULTS.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IndexMemory {
    /// Devices indexed.
    pub devices: usize,
    /// Bytes of the per-device slots and the dense and per-node/per-pool sets.
    pub structural_bytes: usize,
    /// Bytes of the attribute inverted index (grows with attribute values).
    pub attribute_bytes: usize,
}

impl IndexMemory {
    /// Structural bytes per device (the figure the budget is about).
    #[allow(clippy::cast_precision_loss)] // a report, not arithmetic
    pub fn structural_bytes_per_device(&self) -> f64 {
        if self.devices == 0 {
            0.0
        } else {
            self.structural_bytes as f64 / self.devices as f64
        }
    }
}

pub(crate) const ELIGIBLE: u8 = 1;

pub(crate) const FREE: u8 = 2;

pub(crate) const TAINTED: u8 = 4;

pub(crate) const SHAREABLE: u8 = 8;

/// The device consumes shared counters (`consumesCounters`): fixed, like SHAREABLE.
pub(crate) const COUNTERS: u8 = 32;

/// Held for an allocation the placer is trying ([`Cluster::hold`]): not free, as if a
/// holder were recorded. Never set outside a placement.
pub(crate) const HELD: u8 = 16;

/// The inverted-index key of one attribute value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum AttrKey {
    Int(i64),
    Bool(bool),
    Str(Symbol),
    Version(Symbol),
}

/// The per-device record of the index: 20 bytes (its pool is its slice's). The device's (driver, pool, name)
/// key, under which allocations are recorded so that they survive a slice being
/// republished, is `(pool.driver, pool.name, name)`. Applied taints live in a side
/// map because few devices carry any.
#[derive(Clone, Debug)]
pub(crate) struct DeviceSlot {
    pub(crate) slice: SliceId,
    pub(crate) name: Symbol,
    /// The node for node-local devices, `NO_NODE` for shared ones.
    pub(crate) node: NodeId,
    /// Devices of one pool with equal `equiv` have equal attributes, capacities,
    /// counter consumption and shareability: the allocator treats them as
    /// interchangeable.
    pub(crate) equiv: u32,
    /// Position in `slice.devices`.
    pub(crate) pos: u16,
    pub(crate) flags: u8,
}

/// `DeviceSlot::node` of a device that no single node owns.
pub(super) const NO_NODE: NodeId = NodeId(u32::MAX);

impl DeviceSlot {
    pub(crate) fn node(&self) -> Option<NodeId> {
        (self.node != NO_NODE).then_some(self.node)
    }
}

pub(crate) type DeviceKey = (Symbol, Symbol, Symbol);

impl Cluster {
    pub(crate) fn slice_entry(&self, id: SliceId) -> &SliceEntry {
        self.slices[id.index()].as_ref().expect("live slice id")
    }

    pub(super) fn alloc_device_id(&mut self) -> DeviceId {
        if let Some(i) = self.free_device_ids.pop_first() {
            DeviceId(i)
        } else {
            self.devices.push(None);
            DeviceId(self.devices.len() as u32 - 1)
        }
    }

    pub(super) fn grow_index(&mut self, dev: DeviceId) {
        let n = dev.index() + 1;
        for s in [
            &mut self.live,
            &mut self.eligible,
            &mut self.free,
            &mut self.tainted,
            &mut self.shared,
            &mut self.shareable,
        ] {
            s.grow(n);
        }
    }

    // ----------------------------------------------------------------- attribute index

    pub(super) fn index_attributes(&mut self, dev: DeviceId, driver: &str, d: &Device, add: bool) {
        // One buffer for the qualified names (`driver/name`), reused.
        let mut fq = String::new();
        for (name, value) in &d.attributes {
            let qualified = if name.contains('/') {
                name.as_str()
            } else {
                fq.clear();
                fq.push_str(driver);
                fq.push('/');
                fq.push_str(name);
                // Shadowed by the same attribute spelt out in full (CEL looks up the
                // qualified name first).
                if d.attributes.contains_key(fq.as_str()) {
                    continue;
                }
                fq.as_str()
            };
            let name_sym = Arc::make_mut(&mut self.strings).intern(qualified);
            let keys = attr_keys(Arc::make_mut(&mut self.strings), value);
            let present = Arc::make_mut(&mut self.attr_present)
                .entry(name_sym)
                .or_default();
            if add {
                present.insert(dev);
            } else {
                present.remove(dev);
            }
            for k in keys {
                let set = Arc::make_mut(&mut self.attr_values)
                    .entry((name_sym, k))
                    .or_default();
                if add {
                    set.insert(dev);
                } else {
                    set.remove(dev);
                    if set.is_empty() {
                        Arc::make_mut(&mut self.attr_values).remove(&(name_sym, k));
                    }
                }
            }
        }
    }

    /// The pool of a device (its slice's).
    pub(crate) fn pool_of(&self, slot: &DeviceSlot) -> PoolId {
        self.slice_entry(slot.slice).pool
    }

    pub(crate) fn key_of(&self, slot: &DeviceSlot) -> DeviceKey {
        let p = &self.pools[self.pool_of(slot).index()];
        (p.driver, p.name, slot.name)
    }

    pub(super) fn device_by_key(&self, key: DeviceKey) -> Option<DeviceId> {
        let pool = self.pool_by_key.get(&(key.0, key.1))?;
        let by_name = &self.pools[pool.index()].device_by_name;
        by_name
            .binary_search_by_key(&key.2, |e| e.0)
            .ok()
            .map(|i| by_name[i].1)
    }

    // ----------------------------------------------------------------- flags and counts

    /// Sets a device's ELIGIBLE and TAINTED bits (FREE is derived from the allocation
    /// records and holds, SHAREABLE and COUNTERS are fixed) and updates the index.
    pub(super) fn set_flags(&mut self, dev: DeviceId, flags: u8) {
        let Some(slot) = self.devices[dev.index()].as_ref() else {
            return;
        };
        let flags = (flags & (ELIGIBLE | TAINTED)) | (slot.flags & (SHAREABLE | COUNTERS | HELD));
        let flags = flags | self.free_flag(slot, flags);
        self.apply_flags(dev, flags);
    }

    /// The single place device state changes: updates the dense sets and the node and
    /// domain counts by the difference.
    pub(super) fn apply_flags(&mut self, dev: DeviceId, flags: u8) {
        let Some(slot) = self.devices[dev.index()].as_mut() else {
            return;
        };
        let old = slot.flags;
        if old == flags {
            return;
        }
        slot.flags = flags;
        let node = slot.node();
        let changed = old ^ flags;
        if changed & ELIGIBLE != 0 {
            self.eligible.set(dev, flags & ELIGIBLE != 0);
        }
        if changed & FREE != 0 {
            self.free.set(dev, flags & FREE != 0);
        }
        if changed & TAINTED != 0 {
            self.tainted.set(dev, flags & TAINTED != 0);
        }
        // The measures read FREE, ELIGIBLE and TAINTED, whatever the counts do.
        if let Some(n) = node {
            self.rescore(n);
        }
        let (before, after) = (DeviceCounts::of_flags(old), DeviceCounts::of_flags(flags));
        if before == after {
            return;
        }
        if let Some(n) = node {
            let counts = &mut self.node_state[n.index()].counts;
            counts.sub(before);
            counts.add(after);
            // The node's domains by slot: no label looked up for a device's change.
            for &slot in &self.node_state[n.index()].domains {
                let c = &mut self.domains[slot as usize].counts;
                c.sub(before);
                c.add(after);
            }
        }
    }

    pub(crate) fn device_ref_of(&self, slot: &DeviceSlot) -> DeviceRef {
        DeviceRef::new(
            self.strings
                .resolve(self.pools[self.pool_of(slot).index()].driver),
            self.strings
                .resolve(self.pools[self.pool_of(slot).index()].name),
            self.strings.resolve(slot.name),
        )
    }

    /// Returns spare capacity of the index's vectors to the allocator (after a bulk
    /// load, say); like `Vec::shrink_to_fit`, it changes nothing observable.
    pub fn shrink_to_fit(&mut self) {
        self.devices.shrink_to_fit();
        for s in [
            &mut self.live,
            &mut self.eligible,
            &mut self.free,
            &mut self.tainted,
            &mut self.shared,
            &mut self.shareable,
        ] {
            s.shrink_to_fit();
        }
        for n in Arc::make_mut(&mut self.nodes) {
            n.ordered.shrink_to_fit();
        }
    }

    /// Memory used by the device index (not the stored objects).
    pub fn index_memory(&self) -> IndexMemory {
        let dense = [
            &self.live,
            &self.eligible,
            &self.free,
            &self.tainted,
            &self.shared,
            &self.shareable,
        ]
        .iter()
        .map(|s| s.heap_bytes())
        .sum::<usize>()
            + self
                .groups
                .iter()
                .map(|g| g.members.heap_bytes() + 64)
                .sum::<usize>()
            + self
                .by_driver
                .values()
                .map(|s| s.heap_bytes() + 48)
                .sum::<usize>();
        // B-tree entries are counted at 1.5x their size for node overhead.
        let slots = self.devices.capacity() * core::mem::size_of::<Option<DeviceSlot>>()
            + self.applied.len()
                * (core::mem::size_of::<(DeviceId, SmallVec<[AppliedTaint; 2]>)>() * 3 / 2);
        let sparse = self
            .nodes
            .iter()
            .map(|n| {
                n.devices.heap_bytes()
                    + core::mem::size_of::<SparseDeviceSet>()
                    + core::mem::size_of::<DeviceCounts>()
                    + n.ordered.capacity() * core::mem::size_of::<DeviceId>()
            })
            .sum::<usize>()
            + self
                .pools
                .iter()
                .map(|p| p.devices.heap_bytes() + p.device_by_name.capacity() * 8)
                .sum::<usize>()
            + self
                .slices
                .iter()
                .flatten()
                .map(|s| s.devices.len() * 4)
                .sum::<usize>();
        let attribute_bytes = self
            .attr_values
            .values()
            .chain(self.attr_present.values())
            .map(|s| s.heap_bytes() + core::mem::size_of::<SparseDeviceSet>() + 24)
            .sum::<usize>()
            + self.strings.heap_bytes();
        IndexMemory {
            devices: self.device_count(),
            structural_bytes: dense + slots + sparse,
            attribute_bytes,
        }
    }
}

fn attr_keys(strings: &mut Interner, v: &DeviceAttribute) -> SmallVec<[AttrKey; 1]> {
    match v {
        DeviceAttribute::Int(i) => smallvec::smallvec![AttrKey::Int(*i)],
        DeviceAttribute::Bool(b) => smallvec::smallvec![AttrKey::Bool(*b)],
        DeviceAttribute::String(s) => smallvec::smallvec![AttrKey::Str(strings.intern(s))],
        DeviceAttribute::Version(s) => smallvec::smallvec![AttrKey::Version(strings.intern(s))],
        DeviceAttribute::Ints(v) => v.iter().map(|i| AttrKey::Int(*i)).collect(),
        DeviceAttribute::Bools(v) => v.iter().map(|b| AttrKey::Bool(*b)).collect(),
        DeviceAttribute::Strings(v) => v.iter().map(|s| AttrKey::Str(strings.intern(s))).collect(),
        DeviceAttribute::Versions(v) => v
            .iter()
            .map(|s| AttrKey::Version(strings.intern(s)))
            .collect(),
    }
}
