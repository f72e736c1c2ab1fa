//! Device taints from slices and DeviceTaintRules: the taint groups the usable-set
//! computation blocks by, rule selection, and the `NoExecute` eviction notices a
//! taint-changing mutation reports (computed only over the devices it touches).

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::model::error::ObjectKind;
use crate::model::toleration::{EvictionVerdict, device_eviction};
use crate::{DeviceTaint, DeviceTaintEffect, DeviceTaintRule, ResourceSlice, Time};

use super::bits::DeviceSet;
use super::ids::DeviceId;
use super::index::{DeviceKey, DeviceSlot, TAINTED};
use super::intern::Symbol;
use super::slices::PoolEntry;
use super::{Cluster, ClusterError, DeviceRef, not_found};

/// A NoExecute eviction that a mutation started or cancelled: an allocated device now
/// carries (or no longer carries) a `NoExecute` taint its holder does not tolerate
/// forever.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct EvictionNotice {
    /// The allocated device.
    pub device: DeviceRef,
    /// The claim holding it.
    pub consumer: String,
    /// The taint.
    pub taint: DeviceTaint,
    /// Seconds after `taint.time_added` at which pods using the claim are evicted
    /// (the least matching `tolerationSeconds`, 0 when nothing tolerates it).
    pub delay_seconds: i64,
    /// `taint.time_added + delay_seconds`, when the taint has a time.
    pub evict_at: Option<Time>,
}

/// What a taint-changing mutation affects.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct TaintReport {
    /// Devices whose set of taints changed.
    pub devices_affected: usize,
    /// Evictions that start because of the mutation.
    pub evictions: Vec<EvictionNotice>,
    /// Evictions that no longer apply (the taint was removed or is now tolerated).
    pub cancelled: Vec<EvictionNotice>,
}

/// Where one of a device's taints comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaintSource {
    /// `taints[i]` of the device in its slice.
    Slice(u8),
    /// The rule in this rule slot.
    Rule(u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AppliedTaint {
    source: TaintSource,
    /// The blocking group (NoSchedule / NoExecute taints only).
    pub(crate) group: Option<u32>,
}

#[derive(Clone, Debug)]
pub(crate) struct TaintGroup {
    /// A representative taint of the group (its `time_added` is irrelevant).
    pub(crate) probe: DeviceTaint,
    pub(super) members: DeviceSet,
    pub(super) len: usize,
    /// Rules whose taint is of this group (a rule may select no device yet).
    rule_refs: u32,
}

#[derive(Clone, Debug)]
pub(super) struct RuleEntry {
    rule: DeviceTaintRule,
    slot: u32,
    group: Option<u32>,
}

impl Cluster {
    // ----------------------------------------------------------------- taints

    /// Adds a taint to a device in its slice, as its driver would by republishing the
    /// slice. The slice's validation limits apply (16 taints per device; 64 devices per
    /// slice once any device has a taint).
    ///
    /// The new taint must have a known effect (`None`, `NoSchedule`, `NoExecute`).
    pub fn taint_device(
        &mut self,
        device: &DeviceRef,
        mut taint: DeviceTaint,
    ) -> Result<TaintReport, ClusterError> {
        taint.time_added.get_or_insert(self.clock);
        let (dev, slot) = self.live_slot(device)?;
        let entry = self.slice_entry(slot.slice);
        let index = entry.slice.devices[slot.pos as usize].taints.len();
        let path = format!("spec.devices[{}].taints[{index}]", slot.pos);
        let mut errs = Vec::new();
        taint.validate(&entry.slice.object_ref(), &path, &mut errs);
        if !errs.is_empty() {
            return Err(ClusterError::Invalid(errs));
        }
        self.edit_device_taints(device, dev, |taints| taints.push(taint))
    }

    /// Removes a device's slice taints with this key (and effect, if given).
    pub fn untaint_device(
        &mut self,
        device: &DeviceRef,
        key: &str,
        effect: Option<&DeviceTaintEffect>,
    ) -> Result<TaintReport, ClusterError> {
        let (dev, _) = self.live_slot(device)?;
        self.edit_device_taints(device, dev, |taints| {
            taints.retain(|t| !(t.key == key && effect.is_none_or(|e| *e == t.effect)));
        })
    }

    fn live_slot(&self, device: &DeviceRef) -> Result<(DeviceId, DeviceSlot), ClusterError> {
        let dev = self
            .device_id(device)
            .ok_or_else(|| ClusterError::DeviceNotFound(device.clone()))?;
        Ok((
            dev,
            self.devices[dev.index()].clone().expect("live device id"),
        ))
    }

    /// Changes one device's slice taints in place. Only the limits that a taint edit can
    /// break are re-checked (the rest of the slice was valid and is unchanged): taints
    /// per device, and the slice's device limit, which drops to 64 once a device has a
    /// taint.
    fn edit_device_taints(
        &mut self,
        device: &DeviceRef,
        dev: DeviceId,
        edit: impl FnOnce(&mut Vec<DeviceTaint>),
    ) -> Result<TaintReport, ClusterError> {
        let slot = self.devices[dev.index()].clone().expect("live device id");
        let entry = self.slice_entry(slot.slice);
        let pos = slot.pos as usize;
        let mut taints = entry.slice.devices[pos].taints.clone();
        edit(&mut taints);
        let obj = entry.slice.object_ref();
        let mut errs = Vec::new();
        crate::model::error::check_max(
            &obj,
            &format!("spec.devices[{pos}].taints"),
            taints.len(),
            crate::model::device::MAX_DEVICE_TAINTS,
            &mut errs,
        );
        if !taints.is_empty() {
            crate::model::error::check_max(
                &obj,
                "spec.devices",
                entry.slice.devices.len(),
                crate::model::slice::MAX_DEVICES_PER_SLICE_SMALL,
                &mut errs,
            );
        }
        if !errs.is_empty() {
            return Err(ClusterError::Invalid(errs));
        }
        let refs = BTreeSet::from([device.clone()]);
        Ok(self.with_eviction_diff(&refs, |c| {
            let entry = c.slices[slot.slice.index()]
                .as_mut()
                .expect("live slice id");
            Arc::make_mut(&mut entry.slice).devices[pos].taints = taints;
            c.rebuild_taints(dev);
        }))
    }

    /// Adds a DeviceTaintRule; its taint joins the taints of every selected device.
    pub fn add_taint_rule(
        &mut self,
        mut rule: DeviceTaintRule,
    ) -> Result<TaintReport, ClusterError> {
        rule.validate()?;
        rule.taint.time_added.get_or_insert(self.clock);
        if self.rules.contains_key(&rule.name) {
            return Err(ClusterError::AlreadyExists(rule.object_ref()));
        }
        let refs = self.rule_refs(&rule);
        Ok(self.with_eviction_diff(&refs, |c| c.insert_rule(rule)))
    }

    /// Replaces a DeviceTaintRule of the same name.
    ///
    /// As upstream: a taint without `timeAdded` is stamped with the clock, and so is one
    /// whose effect changed while its `timeAdded` stayed the old one (the dry-run
    /// workflow: create with effect `None`, read the report, switch to `NoExecute`; the
    /// eviction clock starts at the switch, not at the dry run).
    pub fn replace_taint_rule(
        &mut self,
        mut rule: DeviceTaintRule,
    ) -> Result<TaintReport, ClusterError> {
        rule.validate()?;
        let Some(old) = self.rules.get(&rule.name) else {
            return Err(ClusterError::NotFound(rule.object_ref()));
        };
        let old = &old.rule.taint;
        if rule.taint.time_added.is_none()
            || (rule.taint.effect != old.effect && rule.taint.time_added == old.time_added)
        {
            rule.taint.time_added = Some(self.clock);
        }
        let mut refs = self.rule_refs(&rule);
        refs.extend(self.rule_refs(&self.rules[&rule.name].rule));
        Ok(self.with_eviction_diff(&refs, |c| {
            c.delete_rule(&rule.name);
            c.insert_rule(rule);
        }))
    }

    /// Removes a DeviceTaintRule; pending evictions it caused are cancelled.
    pub fn remove_taint_rule(
        &mut self,
        name: &str,
    ) -> Result<(DeviceTaintRule, TaintReport), ClusterError> {
        if !self.rules.contains_key(name) {
            return Err(not_found(ObjectKind::DeviceTaintRule, name));
        }
        let refs = self.rule_refs(&self.rules[name].rule);
        let mut removed = None;
        let report = self.with_eviction_diff(&refs, |c| removed = Some(c.delete_rule(name)));
        Ok((removed.expect("rule removed"), report))
    }

    /// A DeviceTaintRule by name.
    pub fn taint_rule(&self, name: &str) -> Option<&DeviceTaintRule> {
        self.rules.get(name).map(|r| &r.rule)
    }

    /// Every DeviceTaintRule, by name.
    pub fn taint_rules(&self) -> impl Iterator<Item = &DeviceTaintRule> + '_ {
        self.rules.values().map(|r| &r.rule)
    }

    /// A rule's selector criteria as symbols (`None` = any), or `None` when the rule
    /// can select nothing: no selector, or a name that was never interned.
    fn selector_symbols(
        &self,
        rule: &DeviceTaintRule,
    ) -> Option<(Option<Symbol>, Option<Symbol>, Option<Symbol>)> {
        let sel = rule.selector.as_ref()?;
        let lookup = |v: &Option<String>| match v {
            None => Some(None),
            Some(s) => self.strings.get(s).map(Some),
        };
        Some((
            lookup(&sel.driver)?,
            lookup(&sel.pool)?,
            lookup(&sel.device)?,
        ))
    }

    /// The devices a rule's selector picks (any generation).
    pub fn rule_devices(&self, rule: &DeviceTaintRule) -> Vec<DeviceId> {
        let Some((driver, pool, device)) = self.selector_symbols(rule) else {
            return Vec::new();
        };
        let pools: Vec<&PoolEntry> = match (driver, pool) {
            (Some(d), Some(p)) => self
                .pool_by_key
                .get(&(d, p))
                .map(|id| &self.pools[id.index()])
                .into_iter()
                .collect(),
            _ => self
                .pools
                .iter()
                .filter(|p| {
                    driver.is_none_or(|d| d == p.driver) && pool.is_none_or(|x| x == p.name)
                })
                .collect(),
        };
        let mut out = Vec::new();
        for p in pools {
            for s in p.slices.values() {
                for &dev in self.slice_entry(*s).devices.iter() {
                    let slot = self.devices[dev.index()].as_ref().expect("live device id");
                    if device.is_none_or(|n| n == slot.name) {
                        out.push(dev);
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn insert_rule(&mut self, rule: DeviceTaintRule) {
        let slot = if let Some(i) = self.rule_slots.iter().position(Option::is_none) {
            i as u32
        } else {
            self.rule_slots.push(None);
            self.rule_slots.len() as u32 - 1
        };
        self.rule_slots[slot as usize] = Some(rule.name.clone());
        let group = self.group_for(&rule.taint);
        if let Some(g) = group {
            self.groups[g as usize].rule_refs += 1;
        }
        let devices = self.rule_devices(&rule);
        self.eviction_epoch.bump();
        if let Some(sel) = &rule.selector {
            match &sel.pool {
                Some(p) => self
                    .rules_by_pool
                    .entry(p.clone())
                    .or_default()
                    .insert(rule.name.clone()),
                None => self.rules_any_pool.insert(rule.name.clone()),
            };
        }
        self.rules
            .insert(rule.name.clone(), RuleEntry { rule, slot, group });
        for &d in &devices {
            self.rebuild_taints(d);
        }
    }

    fn delete_rule(&mut self, name: &str) -> DeviceTaintRule {
        let entry = self.rules.remove(name).expect("rule exists");
        self.eviction_epoch.bump();
        if let Some(sel) = &entry.rule.selector {
            match &sel.pool {
                Some(p) => {
                    if let Some(names) = self.rules_by_pool.get_mut(p.as_str()) {
                        names.remove(name);
                        if names.is_empty() {
                            self.rules_by_pool.remove(p.as_str());
                        }
                    }
                }
                None => {
                    self.rules_any_pool.remove(name);
                }
            }
        }
        self.rule_slots[entry.slot as usize] = None;
        let devices = self.rule_devices(&entry.rule);
        for &d in &devices {
            self.rebuild_taints(d);
        }
        if let Some(g) = entry.group {
            self.groups[g as usize].rule_refs -= 1;
            self.release_group(g);
        }
        entry.rule
    }

    /// The blocking group of a taint (None for `None` and unknown effects).
    fn group_for(&mut self, t: &DeviceTaint) -> Option<u32> {
        if !t.effect.blocks_allocation() {
            return None;
        }
        let key = (t.key.clone(), t.value.clone(), t.effect.is_no_execute());
        if let Some(&g) = self.group_by_key.get(&key) {
            return Some(g);
        }
        let group = TaintGroup {
            probe: DeviceTaint {
                time_added: None,
                ..t.clone()
            },
            members: DeviceSet::new(),
            len: 0,
            rule_refs: 0,
        };
        let g = if let Some(g) = self.free_groups.pop() {
            self.groups[g as usize] = group;
            g
        } else {
            self.groups.push(group);
            self.groups.len() as u32 - 1
        };
        self.group_by_key.insert(key, g);
        Some(g)
    }

    /// Frees a group no device and no rule uses any more, for reuse.
    fn release_group(&mut self, g: u32) {
        let grp = &mut self.groups[g as usize];
        if grp.len == 0 && grp.rule_refs == 0 && !self.free_groups.contains(&g) {
            let p = &grp.probe;
            self.group_by_key
                .remove(&(p.key.clone(), p.value.clone(), p.effect.is_no_execute()));
            grp.members = DeviceSet::new();
            self.free_groups.push(g);
        }
    }

    /// Recomputes a device's applied taints: its slice taints plus one per selecting rule.
    pub(super) fn rebuild_taints(&mut self, dev: DeviceId) {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let entry = self.slice_entry(slot.slice);
        let d = &entry.slice.devices[slot.pos as usize];
        let (driver, pool) = (&entry.slice.driver, &entry.slice.pool.name);
        // The rules that may select it: its pool's and those naming no pool, in name
        // order (the order of `device_taints`).
        let mut rules: SmallVec<[&RuleEntry; 2]> = self
            .rules_by_pool
            .get(pool.as_str())
            .into_iter()
            .flatten()
            .chain(&self.rules_any_pool)
            .map(|name| &self.rules[name])
            .filter(|r| r.rule.selects(driver, pool, &d.name))
            .collect();
        rules.sort_unstable_by(|a, b| a.rule.name.cmp(&b.rule.name));
        let by_rule: SmallVec<[AppliedTaint; 2]> = rules
            .iter()
            .map(|r| AppliedTaint {
                source: TaintSource::Rule(r.slot),
                group: r.group,
            })
            .collect();
        let own: Vec<DeviceTaint> = d.taints.clone();
        drop(rules);
        let mut applied: SmallVec<[AppliedTaint; 2]> = SmallVec::new();
        for (i, t) in own.iter().enumerate() {
            let group = self.group_for(t);
            applied.push(AppliedTaint {
                source: TaintSource::Slice(i as u8),
                group,
            });
        }
        applied.extend(by_rule);
        self.set_groups(dev, applied);
    }

    pub(super) fn set_groups(&mut self, dev: DeviceId, applied: SmallVec<[AppliedTaint; 2]>) {
        let Some(slot) = self.devices[dev.index()].as_ref() else {
            return;
        };
        self.eviction_epoch.bump();
        let no_execute = applied
            .iter()
            .any(|t| self.resolve_taint(slot, t.source).effect == DeviceTaintEffect::NoExecute);
        let key = self.key_of(slot);
        let flags = slot.flags;
        if no_execute != self.no_execute.contains(&dev) {
            let set = Arc::make_mut(&mut self.no_execute);
            if no_execute {
                set.insert(dev);
            } else {
                set.remove(&dev);
            }
            self.recheck_eviction_source(key);
        }
        let new: BTreeSet<u32> = applied.iter().filter_map(|t| t.group).collect();
        let flags = (flags & !TAINTED) | if new.is_empty() { 0 } else { TAINTED };
        let old_applied = if applied.is_empty() {
            // Only touch (and so unshare) the map when there is something to remove.
            if self.applied.contains_key(&dev) {
                Arc::make_mut(&mut self.applied).remove(&dev)
            } else {
                None
            }
        } else {
            Arc::make_mut(&mut self.applied).insert(dev, applied)
        };
        let old: BTreeSet<u32> = old_applied
            .iter()
            .flatten()
            .filter_map(|t| t.group)
            .collect();
        for g in new.difference(&old) {
            let grp = &mut self.groups[*g as usize];
            grp.members.insert(dev);
            grp.len += 1;
        }
        for g in old.difference(&new) {
            let grp = &mut self.groups[*g as usize];
            grp.members.remove(dev);
            grp.len -= 1;
            self.release_group(*g);
        }
        self.set_flags(dev, flags);
    }

    /// Every taint a device carries: its slice taints, then one per selecting rule.
    pub fn device_taints(&self, dev: DeviceId) -> Vec<DeviceTaint> {
        let Some(slot) = self.devices.get(dev.index()).and_then(Option::as_ref) else {
            return Vec::new();
        };
        self.applied
            .get(&dev)
            .into_iter()
            .flatten()
            .map(|t| self.resolve_taint(slot, t.source).clone())
            .collect()
    }

    /// The taints a device identity carries now: a published device's (its slice
    /// taints, then one per selecting rule); for a device no slice publishes any more
    /// (it may still be allocated), the taints of the rules that select it.
    fn taints_of_ref(&self, r: &DeviceRef) -> Vec<DeviceTaint> {
        match self.device_id(r) {
            Some(dev) => self.device_taints(dev),
            None => self
                .rules
                .values()
                .filter(|e| e.rule.selects(&r.driver, &r.pool, &r.device))
                .map(|e| e.rule.taint.clone())
                .collect(),
        }
    }

    /// The first (device, taint) of an allocation result whose `NoExecute` taint the
    /// tolerations copied into that device's result do not tolerate at all, in result
    /// order. New pods may not reserve a claim allocated so ("the scheduler will not let
    /// new pods reserve the claim while it has these tainted devices", the
    /// `tolerations` field of a device request); a toleration with `tolerationSeconds`
    /// tolerates the taint (for a while) and does not block.
    pub fn untolerated_no_execute(
        &self,
        result: &crate::model::claim::AllocationResult,
    ) -> Option<(DeviceRef, DeviceTaint)> {
        result.devices.iter().find_map(|d| {
            let r = DeviceRef::new(&d.driver, &d.pool, &d.device);
            let taint = self.taints_of_ref(&r).into_iter().find(|t| {
                t.effect == DeviceTaintEffect::NoExecute
                    && !d.tolerations.iter().any(|tol| tol.tolerates(t))
            })?;
            Some((r, taint))
        })
    }

    fn resolve_taint(&self, slot: &DeviceSlot, source: TaintSource) -> &DeviceTaint {
        match source {
            TaintSource::Slice(i) => {
                &self.slice_entry(slot.slice).slice.devices[slot.pos as usize].taints[i as usize]
            }
            TaintSource::Rule(r) => {
                let name = self.rule_slots[r as usize]
                    .as_ref()
                    .expect("live rule slot");
                &self.rules[name].rule.taint
            }
        }
    }

    /// The eviction notices in force for one device identity: (consumer, taint)
    /// pairs whose NoExecute taint is not tolerated forever. A device that is no longer
    /// published but still allocated carries only the taints of the rules that select
    /// it (upstream's eviction controller matches rules itself for exactly this case).
    fn evictions_of_ref(&self, r: &DeviceRef, out: &mut Vec<EvictionNotice>) {
        let Some(key) = self.key_of_ref(r) else {
            return;
        };
        let Some(holders) = self.allocations.get(&key) else {
            return;
        };
        let taints: Vec<&DeviceTaint> = match self.device_by_key(key) {
            Some(dev) => {
                let slot = self.devices[dev.index()].as_ref().expect("live device id");
                self.applied
                    .get(&dev)
                    .into_iter()
                    .flatten()
                    .map(|t| self.resolve_taint(slot, t.source))
                    .collect()
            }
            None => self
                .rules
                .values()
                .filter(|e| e.rule.selects(&r.driver, &r.pool, &r.device))
                .map(|e| &e.rule.taint)
                .collect(),
        };
        for taint in taints {
            for h in holders {
                if let EvictionVerdict::Evict { delay_seconds } =
                    device_eviction(taint, &h.tolerations)
                {
                    out.push(EvictionNotice {
                        device: r.clone(),
                        consumer: h.consumer.clone(),
                        taint: taint.clone(),
                        delay_seconds,
                        evict_at: taint.time_added.map(|t| t.plus_seconds(delay_seconds)),
                    });
                }
            }
        }
    }

    fn key_of_ref(&self, r: &DeviceRef) -> Option<DeviceKey> {
        Some((
            self.strings.get(&r.driver)?,
            self.strings.get(&r.pool)?,
            self.strings.get(&r.device)?,
        ))
    }

    fn ref_of_key(&self, key: DeviceKey) -> DeviceRef {
        DeviceRef::new(
            self.strings.resolve(key.0),
            self.strings.resolve(key.1),
            self.strings.resolve(key.2),
        )
    }

    /// Every device identity of a pool that a slice change can affect: the devices of
    /// all its slices (any generation) and every allocation recorded in it.
    pub(super) fn pool_refs(&self, driver: &str, pool: &str) -> BTreeSet<DeviceRef> {
        let mut out = BTreeSet::new();
        let (Some(d), Some(p)) = (self.strings.get(driver), self.strings.get(pool)) else {
            return out;
        };
        if let Some(id) = self.pool_by_key.get(&(d, p)) {
            for s in self.pools[id.index()].slices.values() {
                for &dev in self.slice_entry(*s).devices.iter() {
                    let slot = self.devices[dev.index()].as_ref().expect("live device id");
                    out.insert(self.device_ref_of(slot));
                }
            }
        }
        for key in self.allocations_in_pool(d, p) {
            out.insert(self.ref_of_key(key));
        }
        out
    }

    /// The allocation keys of one pool (a range of the sorted map).
    fn allocations_in_pool(
        &self,
        driver: Symbol,
        pool: Symbol,
    ) -> impl Iterator<Item = DeviceKey> + '_ {
        self.allocations
            .range((driver, pool, Symbol(0))..=(driver, pool, Symbol(u32::MAX)))
            .map(|(k, _)| *k)
    }

    /// The identities a rule can affect: the devices it selects and every allocation
    /// it selects by identity.
    fn rule_refs(&self, rule: &DeviceTaintRule) -> BTreeSet<DeviceRef> {
        let mut out = self.refs_of(&self.rule_devices(rule));
        // Allocations of devices no longer published (the others are in `out`
        // already), compared by symbol.
        let Some((driver, pool, device)) = self.selector_symbols(rule) else {
            return out;
        };
        let matches = |k: &DeviceKey| {
            driver.is_none_or(|d| d == k.0)
                && pool.is_none_or(|p| p == k.1)
                && device.is_none_or(|n| n == k.2)
        };
        let keys: Vec<DeviceKey> = match (driver, pool) {
            (Some(d), Some(p)) => self
                .allocations_in_pool(d, p)
                .filter(|k| matches(k))
                .collect(),
            _ => self
                .allocations
                .keys()
                .filter(|k| matches(k))
                .copied()
                .collect(),
        };
        for key in keys {
            if self.device_by_key(key).is_none() {
                out.insert(self.ref_of_key(key));
            }
        }
        out
    }

    /// Runs a mutation that may change the taints or presence of the devices named in
    /// `refs`, and reports which evictions it started and cancelled on them. Devices are
    /// compared by identity (driver/pool/device), so a republished slice diffs
    /// correctly; work is proportional to `refs`, not to the cluster.
    pub(super) fn with_eviction_diff(
        &mut self,
        refs: &BTreeSet<DeviceRef>,
        f: impl FnOnce(&mut Cluster),
    ) -> TaintReport {
        let before_taints: Vec<Vec<DeviceTaint>> =
            refs.iter().map(|r| self.current_taints(r)).collect();
        let before = self.evictions_for(refs);
        f(self);
        let after = self.evictions_for(refs);
        let devices_affected = refs
            .iter()
            .zip(&before_taints)
            .filter(|(r, old)| self.current_taints(r) != **old)
            .count();
        TaintReport {
            devices_affected,
            evictions: after
                .iter()
                .filter(|e| !before.contains(e))
                .cloned()
                .collect(),
            cancelled: before
                .iter()
                .filter(|e| !after.contains(e))
                .cloned()
                .collect(),
        }
    }

    fn current_taints(&self, r: &DeviceRef) -> Vec<DeviceTaint> {
        self.device_id(r)
            .map(|d| self.device_taints(d))
            .unwrap_or_default()
    }

    fn evictions_for(&self, refs: &BTreeSet<DeviceRef>) -> Vec<EvictionNotice> {
        let mut out = Vec::new();
        for r in refs {
            self.evictions_of_ref(r, &mut out);
        }
        sort_notices(&mut out);
        out
    }

    fn refs_of(&self, devices: &[DeviceId]) -> BTreeSet<DeviceRef> {
        devices
            .iter()
            .filter_map(|d| self.devices[d.index()].as_ref())
            .map(|slot| self.device_ref_of(slot))
            .collect()
    }

    fn all_evictions(&self) -> Vec<EvictionNotice> {
        let mut out = Vec::new();
        // Only an allocated device with a NoExecute taint applied can be evicted from
        // — or an allocated device no slice publishes any more, which only rules can
        // taint.
        for &key in &self.eviction_sources {
            self.evictions_of_ref(&self.ref_of_key(key), &mut out);
        }
        sort_notices(&mut out);
        out
    }

    /// Every eviction currently in force: allocated devices with a `NoExecute` taint
    /// their holder does not tolerate forever, sorted. Costs what is tainted
    /// `NoExecute` (and allocated devices no slice publishes, when rules exist), not
    /// the cluster.
    pub fn pending_evictions(&self) -> Vec<EvictionNotice> {
        self.all_evictions()
    }

    /// A number that changes whenever [`pending_evictions`](Self::pending_evictions)
    /// may: taints applied, allocations recorded or released, devices published or
    /// withdrawn, rules added or removed. Equal numbers on one cluster (not across
    /// clusters or clones) mean the same answer.
    pub fn eviction_epoch(&self) -> u64 {
        self.eviction_epoch.0
    }

    /// Keeps `eviction_sources` and the epoch in step after the allocation records
    /// or the published devices under `key` changed.
    pub(crate) fn allocation_key_changed(&mut self, key: DeviceKey) {
        self.eviction_epoch.bump();
        self.recheck_eviction_source(key);
    }

    /// [`allocation_key_changed`](Self::allocation_key_changed) after a record was
    /// added under `key`, the key of device `dev` (at its pool's current generation):
    /// the key holds a record and its device is known, so neither is looked up.
    pub(crate) fn allocation_added(&mut self, key: DeviceKey, dev: DeviceId) {
        debug_assert!(self.allocations.contains_key(&key));
        debug_assert_eq!(self.device_by_key(key), Some(dev));
        self.eviction_epoch.bump();
        if self.no_execute.contains(&dev) {
            self.eviction_sources.insert(key);
        } else {
            self.eviction_sources.remove(&key);
        }
    }

    /// Whether allocation key `key` is an eviction source now, recorded.
    fn recheck_eviction_source(&mut self, key: DeviceKey) {
        let source = self.allocations.contains_key(&key)
            && self
                .device_by_key(key)
                .is_none_or(|d| self.no_execute.contains(&d));
        if source {
            self.eviction_sources.insert(key);
        } else {
            self.eviction_sources.remove(&key);
        }
    }

    /// Keeps the epoch and `eviction_sources` in step for every allocation record of
    /// a pool whose published devices changed (one bump for the pool).
    pub(super) fn pool_devices_changed(&mut self, driver: Symbol, pool: Symbol) {
        self.eviction_epoch.bump();
        let lo = (driver, pool, Symbol(0));
        let hi = (driver, pool, Symbol(u32::MAX));
        let keys: Vec<DeviceKey> = self.allocations.range(lo..=hi).map(|(k, _)| *k).collect();
        for k in keys {
            self.recheck_eviction_source(k);
        }
    }
}

/// The identities of a slice's devices.
pub(super) fn slice_refs(slice: &ResourceSlice) -> BTreeSet<DeviceRef> {
    slice
        .devices
        .iter()
        .map(|d| DeviceRef::new(&slice.driver, &slice.pool.name, &d.name))
        .collect()
}

/// Deterministic order of eviction notices: by time, device, consumer, then taint.
/// Duplicates (the same taint twice on one device) are kept once.
fn sort_notices(v: &mut Vec<EvictionNotice>) {
    let key = |n: &EvictionNotice| {
        (
            n.evict_at,
            n.device.clone(),
            n.consumer.clone(),
            n.taint.key.clone(),
            n.taint.value.clone(),
            n.taint.effect.as_str().to_owned(),
            n.taint.time_added,
            n.delay_seconds,
        )
    };
    v.sort_by_cached_key(key);
    v.dedup();
}
