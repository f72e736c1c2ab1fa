//! Who holds which device: exclusive and shared allocations recorded by device identity
//! (so they survive a slice being republished), shared capacity and counters, and the
//! placer's transient holds.

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
use crate::{Device, DeviceToleration};

use super::ids::{DeviceId, PoolId};
use super::index::{DeviceKey, DeviceSlot, FREE, HELD, SHAREABLE};
use super::{Cluster, ClusterError, DeviceRef};

/// One holder of an allocated device: the claim and the tolerations copied into its
/// allocation result (which decide NoExecute eviction).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceAllocation {
    /// Who holds the device, e.g. `namespace/claim-name`.
    pub consumer: String,
    /// The request's tolerations, as copied into the allocation result.
    #[cfg_attr(feature = "serde", serde(default))]
    pub tolerations: Vec<DeviceToleration>,
    /// Administrative access: never makes the device "in use" for others.
    #[cfg_attr(feature = "serde", serde(default))]
    pub admin_access: bool,
    /// For a device with `allowMultipleAllocations`: the share's id (one consumer may
    /// hold several shares of one device, one per request).
    #[cfg_attr(feature = "serde", serde(default))]
    pub share_id: Option<String>,
    /// For a device with `allowMultipleAllocations`: what this share consumes, by
    /// capacity name as the device declares it.
    #[cfg_attr(feature = "serde", serde(default))]
    pub consumed_capacity: BTreeMap<String, crate::Quantity>,
}

impl DeviceAllocation {
    /// An ordinary (exclusive, non-admin) allocation to `consumer` with these
    /// tolerations.
    pub fn new(
        consumer: impl Into<String>,
        tolerations: Vec<DeviceToleration>,
    ) -> DeviceAllocation {
        DeviceAllocation {
            consumer: consumer.into(),
            tolerations,
            admin_access: false,
            share_id: None,
            consumed_capacity: BTreeMap::new(),
        }
    }

    /// The same with administrative access.
    #[must_use]
    pub fn admin(mut self) -> DeviceAllocation {
        self.admin_access = true;
        self
    }
}

/// Where [`Cluster::locate`] found a device named in an allocation result: its
/// interned key and its current id, if any.
pub(crate) type Located = Option<(DeviceKey, Option<DeviceId>)>;

/// Too little of a capacity or shared counter for an allocation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Shortage {
    /// The device.
    pub device: DeviceRef,
    /// The capacity name, or `counterSet/counter`.
    pub name: String,
    /// What the allocation needs.
    pub requested: crate::Quantity,
    /// What is left.
    pub available: crate::Quantity,
}

impl Cluster {
    // ----------------------------------------------------------------- allocations

    /// Records that `allocation.consumer` holds a device. Exclusive devices take one
    /// holder; devices with `allowMultipleAllocations` take many (capacity accounting
    /// belongs to the allocator); admin access never blocks and is never blocked.
    pub fn allocate(
        &mut self,
        device: &DeviceRef,
        allocation: DeviceAllocation,
    ) -> Result<DeviceId, ClusterError> {
        let dev = self.device_id(device);
        self.allocate_at(dev, || device.clone(), allocation)
    }

    /// [`allocate`](Self::allocate) for a device already looked up: `dev` is what
    /// [`device_id`](Self::device_id) answers for it, `device` names it for the error
    /// when that is `None`. The record checks come first, as in `allocate`.
    pub(crate) fn allocate_at(
        &mut self,
        dev: Option<DeviceId>,
        device: impl FnOnce() -> DeviceRef,
        allocation: DeviceAllocation,
    ) -> Result<DeviceId, ClusterError> {
        validate_allocation(&allocation)?;
        let dev = dev.ok_or_else(|| ClusterError::DeviceNotFound(device()))?;
        self.allocate_on(dev, allocation)?;
        Ok(dev)
    }

    /// The interned key of the device `driver`/`pool`/`device`, under which its
    /// allocations are recorded, and its id when a slice publishes it at its pool's
    /// current generation (what [`device_id`](Self::device_id) answers). `None` when a
    /// name was never interned: then no allocation names the device either.
    pub(crate) fn locate(&self, driver: &str, pool: &str, device: &str) -> Located {
        let key = (
            self.strings.get(driver)?,
            self.strings.get(pool)?,
            self.strings.get(device)?,
        );
        Some((key, self.device_by_key(key)))
    }

    /// The holders recorded under a device key.
    pub(crate) fn holders(&self, key: DeviceKey) -> &[DeviceAllocation] {
        self.allocations.get(&key).map_or(&[], Vec::as_slice)
    }

    /// [`allocate`](Self::allocate) for a device at its pool's current generation, by
    /// id, and an allocation that passes [`allocate`](Self::allocate)'s record checks
    /// (one the allocator built from validated claims): no validation, no name lookups.
    pub(crate) fn allocate_on(
        &mut self,
        dev: DeviceId,
        allocation: DeviceAllocation,
    ) -> Result<(), ClusterError> {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let key = self.key_of(slot);
        let shareable = slot.flags & SHAREABLE != 0;
        let holders = self.allocations.get(&key).map_or(&[][..], Vec::as_slice);
        let in_use = |holder: &str| ClusterError::DeviceInUse {
            device: self.device_ref_of(slot),
            holder: holder.to_owned(),
        };
        if let Some(h) = holders
            .iter()
            .find(|h| h.consumer == allocation.consumer && h.share_id == allocation.share_id)
        {
            return Err(in_use(&h.consumer));
        }
        if !allocation.admin_access
            && !shareable
            && let Some(h) = holders.iter().find(|h| !h.admin_access)
        {
            return Err(in_use(&h.consumer));
        }
        if !allocation.admin_access {
            let d = &self.slice_entry(slot.slice).slice.devices[slot.pos as usize];
            if shareable {
                check_capacity(&self.device_ref_of(slot), d, holders, &allocation)?;
            }
            // A shareable device is charged against its counters once, for its first share.
            let first = !holders.iter().any(|h| !h.admin_access);
            if first {
                self.check_counters(slot, d)?;
            }
        }
        // The device's flags with the record in, known from the holders above rather
        // than looked up again: taken (not FREE) when exclusive and held or with a
        // non-admin holder.
        let taken = !shareable
            && (slot.flags & HELD != 0
                || !allocation.admin_access
                || holders.iter().any(|h| !h.admin_access));
        let flags = (slot.flags & !FREE) | if taken { 0 } else { FREE };
        let node = slot.node().filter(|_| shareable);
        self.allocations.entry(key).or_default().push(allocation);
        self.allocation_added(key, dev);
        #[cfg(debug_assertions)]
        {
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            let fresh = (slot.flags & !FREE) | self.free_flag(slot, slot.flags);
            debug_assert_eq!(flags, fresh, "allocate_on: the flags known differ");
        }
        self.apply_flags(dev, flags);
        if let Some(n) = node {
            self.refresh_rooms(n);
        }
        Ok(())
    }

    /// Every counter the device consumes must have room in its pool.
    fn check_counters(&self, slot: &DeviceSlot, d: &Device) -> Result<(), ClusterError> {
        if d.consumes_counters.is_empty() {
            return Ok(());
        }
        let device = &self.device_ref_of(slot);
        let available = self.counters_available_in(self.pool_of(slot));
        for c in &d.consumes_counters {
            for (counter, amount) in &c.counters {
                let left = available
                    .get(&(c.counter_set.clone(), counter.clone()))
                    .copied()
                    .unwrap_or(crate::Quantity::ZERO);
                if *amount > left {
                    return Err(ClusterError::CountersExhausted(Box::new(Shortage {
                        device: device.clone(),
                        name: format!("{}/{counter}", c.counter_set),
                        requested: *amount,
                        available: left,
                    })));
                }
            }
        }
        Ok(())
    }

    /// What is left of every shared counter of a pool: the counter sets of its current
    /// generation minus what its allocated devices consume (admin access excepted; a
    /// shareable device counts once). May be negative when a driver shrank a set.
    pub fn counters_available(
        &self,
        driver: &str,
        pool: &str,
    ) -> BTreeMap<(String, String), crate::Quantity> {
        let key = (|| Some((self.strings.get(driver)?, self.strings.get(pool)?)))();
        match key.and_then(|k| self.pool_by_key.get(&k)) {
            Some(p) => self.counters_available_in(*p),
            None => BTreeMap::new(),
        }
    }

    /// Every shared counter of a pool at its current generation, as its counter sets
    /// publish it (nothing subtracted).
    pub(crate) fn counters_total_in(
        &self,
        pool: PoolId,
    ) -> BTreeMap<(String, String), crate::Quantity> {
        let p = &self.pools[pool.index()];
        let generation = p.status.generation;
        let mut out = BTreeMap::new();
        for e in p.slices.values().map(|s| self.slice_entry(*s)) {
            if e.slice.pool.generation != generation {
                continue;
            }
            for set in &e.slice.shared_counters {
                for (name, q) in &set.counters {
                    out.insert((set.name.clone(), name.clone()), *q);
                }
            }
        }
        out
    }

    pub(crate) fn counters_available_in(
        &self,
        pool: PoolId,
    ) -> BTreeMap<(String, String), crate::Quantity> {
        let p = &self.pools[pool.index()];
        let generation = p.status.generation;
        let mut out: BTreeMap<(String, String), crate::Quantity> = BTreeMap::new();
        let current = p
            .slices
            .values()
            .map(|s| self.slice_entry(*s))
            .filter(|e| e.slice.pool.generation == generation);
        for e in current.clone() {
            for set in &e.slice.shared_counters {
                for (name, q) in &set.counters {
                    out.insert((set.name.clone(), name.clone()), *q);
                }
            }
        }
        for e in current {
            for (pos, &dev) in e.devices.iter().enumerate() {
                let d = &e.slice.devices[pos];
                if d.consumes_counters.is_empty() {
                    continue;
                }
                let slot = self.devices[dev.index()].as_ref().expect("live device id");
                let held = self
                    .allocations
                    .get(&self.key_of(slot))
                    .is_some_and(|hs| hs.iter().any(|h| !h.admin_access));
                if !held {
                    continue;
                }
                for c in &d.consumes_counters {
                    for (name, q) in &c.counters {
                        let entry = out
                            .entry((c.counter_set.clone(), name.clone()))
                            .or_insert(crate::Quantity::ZERO);
                        *entry = entry.saturating_sub(*q);
                    }
                }
            }
        }
        out
    }

    /// What the shares of a shareable device consume in total, by capacity name.
    pub fn consumed_capacity(&self, device: &DeviceRef) -> BTreeMap<String, crate::Quantity> {
        Self::sum_consumed(self.allocations(device))
    }

    /// [`consumed_capacity`](Self::consumed_capacity) of an indexed device, found by
    /// its interned key (no names built or hashed: the allocator asks this for every
    /// shareable candidate).
    pub(crate) fn consumed_on(&self, slot: &DeviceSlot) -> BTreeMap<String, crate::Quantity> {
        self.allocations
            .get(&self.key_of(slot))
            .map_or_else(BTreeMap::new, |hs| Self::sum_consumed(hs))
    }

    fn sum_consumed(holders: &[DeviceAllocation]) -> BTreeMap<String, crate::Quantity> {
        let mut out: BTreeMap<String, crate::Quantity> = BTreeMap::new();
        for h in holders.iter().filter(|h| !h.admin_access) {
            for (name, q) in &h.consumed_capacity {
                let e = out.entry(name.clone()).or_insert(crate::Quantity::ZERO);
                *e = e.saturating_add(*q);
            }
        }
        out
    }

    /// Releases a consumer's hold on a device.
    ///
    /// Every share the consumer holds on the device is released; they are returned.
    pub fn release(
        &mut self,
        device: &DeviceRef,
        consumer: &str,
    ) -> Result<Vec<DeviceAllocation>, ClusterError> {
        let not_allocated = || ClusterError::NotAllocated {
            device: device.clone(),
            consumer: consumer.to_owned(),
        };
        let key = (
            self.strings.get(&device.driver).ok_or_else(not_allocated)?,
            self.strings.get(&device.pool).ok_or_else(not_allocated)?,
            self.strings.get(&device.device).ok_or_else(not_allocated)?,
        );
        self.release_key(key, consumer).ok_or_else(not_allocated)
    }

    /// [`release`](Self::release) by device id (a device at its pool's current
    /// generation); a device the consumer does not hold is left alone.
    pub(crate) fn release_on(&mut self, dev: DeviceId, consumer: &str) {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let key = self.key_of(slot);
        let _ = self.release_key(key, consumer);
    }

    /// Removes every share `consumer` holds under a device key, keeping the other
    /// holders in order, and updates the device's flags. `None`, with nothing changed,
    /// when the consumer holds none.
    pub(crate) fn release_key(
        &mut self,
        key: DeviceKey,
        consumer: &str,
    ) -> Option<Vec<DeviceAllocation>> {
        let holders = self.allocations.get_mut(&key)?;
        if !holders.iter().any(|h| h.consumer == consumer) {
            return None;
        }
        let removed = if holders.iter().all(|h| h.consumer == consumer) {
            // The usual case (one exclusive holder): the record goes whole.
            self.allocations.remove(&key).unwrap_or_default()
        } else {
            holders.extract_if(.., |h| h.consumer == consumer).collect()
        };
        self.allocation_key_changed(key);
        if let Some(dev) = self.device_by_key(key) {
            let slot = self.devices[dev.index()].as_ref();
            let flags = slot.map_or(0, |s| s.flags);
            let node = slot
                .and_then(DeviceSlot::node)
                .filter(|_| flags & SHAREABLE != 0);
            self.set_flags(dev, flags);
            if let Some(n) = node {
                self.refresh_rooms(n);
            }
        }
        Some(removed)
    }

    /// The holders of a device.
    pub fn allocations(&self, device: &DeviceRef) -> &[DeviceAllocation] {
        let key = (|| {
            Some((
                self.strings.get(&device.driver)?,
                self.strings.get(&device.pool)?,
                self.strings.get(&device.device)?,
            ))
        })();
        key.and_then(|k| self.allocations.get(&k))
            .map_or(&[], Vec::as_slice)
    }

    /// FREE unless the device is exclusive and held: by a non-admin holder recorded
    /// under its key, or for a placement (`HELD` in `flags`, the device's new flags).
    pub(super) fn free_flag(&self, slot: &DeviceSlot, flags: u8) -> u8 {
        let held = flags & SHAREABLE == 0
            && (flags & HELD != 0
                || self
                    .allocations
                    .get(&self.key_of(slot))
                    .is_some_and(|hs| hs.iter().any(|h| !h.admin_access)));
        if held { 0 } else { FREE }
    }

    /// Holds an exclusive device for `consumer`'s allocation while the placer tries a
    /// placement: the device stops being free exactly as if [`allocate`](Self::allocate)
    /// had recorded `consumer` as a non-admin holder, but no record is built. For
    /// devices that are not shareable and consume no counters, for which a non-admin
    /// record matters only by making the device not free. Refused (`false`, nothing
    /// changed) where `allocate` would refuse the allocation: a non-admin holder or a
    /// hold exists, or `consumer` holds the device already (without a share id).
    pub(crate) fn hold(&mut self, dev: DeviceId, consumer: &str) -> bool {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        debug_assert!(
            slot.flags & SHAREABLE == 0,
            "only exclusive devices are held"
        );
        if slot.flags & HELD != 0 {
            return false;
        }
        let holders = self.allocations.get(&self.key_of(slot));
        if holders.is_some_and(|hs| {
            hs.iter()
                .any(|h| !h.admin_access || (h.consumer == consumer && h.share_id.is_none()))
        }) {
            return false;
        }
        self.set_held(dev, true);
        true
    }

    /// Ends a [`hold`](Self::hold).
    pub(crate) fn release_hold(&mut self, dev: DeviceId) {
        self.set_held(dev, false);
    }

    fn set_held(&mut self, dev: DeviceId, held: bool) {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let flags = if held {
            slot.flags | HELD
        } else {
            slot.flags & !HELD
        };
        let flags = (flags & !FREE) | self.free_flag(slot, flags);
        self.apply_flags(dev, flags);
    }
}

/// Capacity left on a shareable device must cover the new share.
fn check_capacity(
    device: &DeviceRef,
    d: &Device,
    holders: &[DeviceAllocation],
    allocation: &DeviceAllocation,
) -> Result<(), ClusterError> {
    for (name, amount) in &allocation.consumed_capacity {
        let Some(cap) = d.capacity.get(name) else {
            return Err(ClusterError::UnknownCapacity {
                device: device.clone(),
                capacity: name.clone(),
            });
        };
        let used = holders
            .iter()
            .filter(|h| !h.admin_access)
            .filter_map(|h| h.consumed_capacity.get(name))
            .fold(crate::Quantity::ZERO, |a, b| a.saturating_add(*b));
        let available = cap.value.saturating_sub(used);
        if *amount > available {
            return Err(capacity_shortage(device, name, *amount, available));
        }
    }
    Ok(())
}

/// The upstream limits and syntax an allocation result entry must meet: a consumer
/// (reported as the claim), at most 16 valid tolerations, non-negative consumption.
fn validate_allocation(a: &DeviceAllocation) -> Result<(), ClusterError> {
    // The usual record (a consumer, no tolerations, nothing negative) has nothing to
    // report: no object reference is built for it (this runs for every device a
    // placement commits).
    if !a.consumer.is_empty()
        && a.tolerations.is_empty()
        && a.consumed_capacity.values().all(|q| !q.is_negative())
    {
        return Ok(());
    }
    let obj = ObjectRef::cluster(ObjectKind::ResourceClaim, a.consumer.clone());
    let mut errs = Vec::new();
    if a.consumer.is_empty() {
        errs.push(ValidationError::new(
            obj.clone(),
            "metadata.name",
            Problem::Required,
        ));
    }
    let field = "status.allocation.devices.results.tolerations";
    crate::model::error::check_max(
        &obj,
        field,
        a.tolerations.len(),
        crate::model::claim::MAX_TOLERATIONS,
        &mut errs,
    );
    for (i, t) in a.tolerations.iter().enumerate() {
        let mut found = Vec::new();
        t.validate(&obj, &format!("{field}[{i}]"), &mut found);
        // Allocation results are stored objects: a toleration may carry an effect
        // from a newer Kubernetes (consumers treat it like `None`).
        found.retain(|e| {
            !(e.field.ends_with(".effect") && matches!(e.problem, Problem::NotSupported { .. }))
        });
        errs.extend(found);
    }
    for (name, q) in &a.consumed_capacity {
        if q.is_negative() {
            errs.push(ValidationError::new(
                obj.clone(),
                format!("status.allocation.devices.results.consumedCapacity[\"{name}\"]"),
                Problem::Invalid {
                    value: q.to_string(),
                    reason: "must not be negative",
                },
            ));
        }
    }
    crate::model::error::finish(errs).map_err(ClusterError::Invalid)
}

fn capacity_shortage(
    device: &DeviceRef,
    name: &str,
    requested: crate::Quantity,
    available: crate::Quantity,
) -> ClusterError {
    ClusterError::CapacityExceeded(Box::new(Shortage {
        device: device.clone(),
        name: name.to_owned(),
        requested,
        available,
    }))
}
