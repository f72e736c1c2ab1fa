//! Read-only questions the index answers word-wise: device views, `select` by filter,
//! the devices blocked by untolerated taints, the usable set, and what a node reaches.

use crate::alloc_prelude::*;
use crate::model::device::NodeAccess;
use crate::model::slice::SliceNodeSelection;
use crate::{Device, DeviceAttribute, DeviceTaint, DeviceToleration};

use super::bits::DeviceSet;
use super::ids::{DeviceId, NodeId};
use super::index::{AttrKey, ELIGIBLE, FREE};
use super::taints::TaintGroup;
use super::{Cluster, DeviceRef};

/// Selects devices through the inverted index: every criterion that is set must match.
///
/// Attribute names are qualified as in CEL: a name without a domain is looked up in
/// the device's driver domain.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct DeviceFilter {
    /// Only this driver.
    pub driver: Option<String>,
    /// Only pools of this name.
    pub pool: Option<String>,
    /// Attribute equalities (`name`, value); a list attribute matches when it contains
    /// the value.
    pub attributes: Vec<(String, DeviceAttribute)>,
}

impl DeviceFilter {
    /// Matches every device.
    pub fn all() -> DeviceFilter {
        DeviceFilter::default()
    }

    /// Only devices of `driver` (builder style).
    #[must_use]
    pub fn driver(mut self, driver: impl Into<String>) -> DeviceFilter {
        self.driver = Some(driver.into());
        self
    }

    /// Adds an attribute equality (builder style).
    #[must_use]
    pub fn attribute(mut self, name: impl Into<String>, value: DeviceAttribute) -> DeviceFilter {
        self.attributes.push((name.into(), value));
        self
    }
}

/// A read-only view of one device.
#[derive(Clone, Debug)]
pub struct DeviceView<'a> {
    /// Its id.
    pub id: DeviceId,
    /// The driver.
    pub driver: &'a str,
    /// The pool name.
    pub pool: &'a str,
    /// The slice that publishes it.
    pub slice: &'a str,
    /// The device as published.
    pub device: &'a Device,
    /// The node, for node-local devices.
    pub node: Option<&'a str>,
    /// Whether it can be allocated at all (complete, valid pool; current generation).
    pub usable: bool,
    /// Whether it is free (not allocated exclusively).
    pub free: bool,
}

impl DeviceView<'_> {
    /// The device's identity.
    pub fn device_ref(&self) -> DeviceRef {
        DeviceRef::new(self.driver, self.pool, &self.device.name)
    }
}

impl Cluster {
    // ----------------------------------------------------------------- queries

    /// Number of devices published (all generations, usable or not).
    pub fn device_count(&self) -> usize {
        self.devices.len() - self.free_device_ids.len()
    }

    /// The id of a device at its pool's current generation.
    pub fn device_id(&self, device: &DeviceRef) -> Option<DeviceId> {
        let key = (
            self.strings.get(&device.driver)?,
            self.strings.get(&device.pool)?,
            self.strings.get(&device.device)?,
        );
        self.device_by_key(key)
    }

    /// A view of a device.
    pub fn device(&self, id: DeviceId) -> Option<DeviceView<'_>> {
        let slot = self.devices.get(id.index())?.as_ref()?;
        let entry = self.slice_entry(slot.slice);
        Some(DeviceView {
            id,
            driver: &entry.slice.driver,
            pool: &entry.slice.pool.name,
            slice: &entry.slice.name,
            device: &entry.slice.devices[slot.pos as usize],
            node: slot.node().map(|n| self.nodes[n.index()].name.as_str()),
            usable: slot.flags & ELIGIBLE != 0,
            free: slot.flags & FREE != 0,
        })
    }

    /// Devices that can be allocated at all: in a complete, valid pool, at its current
    /// generation.
    pub fn usable_devices(&self) -> &DeviceSet {
        &self.eligible
    }

    /// Devices not allocated exclusively.
    pub fn free_devices(&self) -> &DeviceSet {
        &self.free
    }

    /// Devices with at least one `NoSchedule` / `NoExecute` taint.
    pub fn tainted_devices(&self) -> &DeviceSet {
        &self.tainted
    }

    /// Devices not reached through a node-local slice (shared or network-attached).
    pub fn shared_devices(&self) -> &DeviceSet {
        &self.shared
    }

    /// Whether any device is shared or network-attached (O(1)).
    pub(crate) fn has_shared_devices(&self) -> bool {
        self.shared_len > 0
    }

    /// Devices with `allowMultipleAllocations`, which several claims may share.
    pub fn shareable_devices(&self) -> &DeviceSet {
        &self.shareable
    }

    /// The devices matching a filter, from the inverted index (any state).
    pub fn select(&self, filter: &DeviceFilter) -> DeviceSet {
        let mut out = match &filter.driver {
            Some(d) => match self.strings.get(d).and_then(|s| self.by_driver.get(&s)) {
                Some(s) => s.clone(),
                None => return DeviceSet::new(),
            },
            None => self.live.clone(),
        };
        if let Some(p) = &filter.pool {
            let mut in_pool = DeviceSet::with_universe(self.devices.len());
            if let Some(sym) = self.strings.get(p) {
                for pe in self.pools.iter().filter(|pe| pe.name == sym) {
                    pe.devices.add_to(&mut in_pool);
                }
            }
            out.intersect_with(&in_pool);
        }
        for (name, value) in &filter.attributes {
            let mut matching = DeviceSet::with_universe(self.devices.len());
            self.attribute_matches(name, value, &mut matching);
            out.intersect_with(&matching);
        }
        out
    }

    /// Adds the devices whose attribute `name` equals (or contains) `value`.
    fn attribute_matches(&self, name: &str, value: &DeviceAttribute, out: &mut DeviceSet) {
        if !name.contains('/') {
            // A name without a domain is in each device's driver domain, as in CEL.
            for &driver in self.by_driver.keys() {
                let fq = format!("{}/{name}", self.strings.resolve(driver));
                let mut found = DeviceSet::with_universe(self.devices.len());
                self.attribute_matches(&fq, value, &mut found);
                if let Some(of_driver) = self.by_driver.get(&driver) {
                    found.intersect_with(of_driver);
                }
                out.union_with(&found);
            }
            return;
        }
        let Some(sym) = self.strings.get(name) else {
            return;
        };
        let keys: Vec<AttrKey> = match value {
            DeviceAttribute::Int(i) => vec![AttrKey::Int(*i)],
            DeviceAttribute::Bool(b) => vec![AttrKey::Bool(*b)],
            DeviceAttribute::String(s) => {
                self.strings.get(s).map(AttrKey::Str).into_iter().collect()
            }
            DeviceAttribute::Version(s) => self
                .strings
                .get(s)
                .map(AttrKey::Version)
                .into_iter()
                .collect(),
            // A list filter matches devices holding any of its values.
            DeviceAttribute::Ints(v) => v.iter().map(|i| AttrKey::Int(*i)).collect(),
            DeviceAttribute::Bools(v) => v.iter().map(|b| AttrKey::Bool(*b)).collect(),
            DeviceAttribute::Strings(v) => v
                .iter()
                .filter_map(|s| self.strings.get(s))
                .map(AttrKey::Str)
                .collect(),
            DeviceAttribute::Versions(v) => v
                .iter()
                .filter_map(|s| self.strings.get(s))
                .map(AttrKey::Version)
                .collect(),
        };
        for k in keys {
            if let Some(set) = self.attr_values.get(&(sym, k)) {
                set.add_to(out);
            }
        }
    }

    /// Devices that carry attribute `name` (fully qualified), any value.
    pub fn devices_with_attribute(&self, name: &str) -> DeviceSet {
        let mut out = DeviceSet::with_universe(self.devices.len());
        if let Some(set) = self
            .strings
            .get(name)
            .and_then(|s| self.attr_present.get(&s))
        {
            set.add_to(&mut out);
        }
        out
    }

    /// The devices that a claim with these tolerations may **not** get because of
    /// taints: the union of every `NoSchedule` / `NoExecute` taint group none of the
    /// tolerations tolerates. Taints are grouped by (key, value, effect), so this is a
    /// handful of word-wise ORs, however many devices are tainted.
    pub fn blocked_by_taints(&self, tolerations: &[DeviceToleration]) -> DeviceSet {
        if tolerations.is_empty() {
            return self.tainted.clone();
        }
        let mut out = DeviceSet::with_universe(self.devices.len());
        for g in self.untolerated_groups(tolerations) {
            out.union_with(&g.members);
        }
        out
    }

    /// Each `NoSchedule` / `NoExecute` taint (key, value, effect) none of the
    /// tolerations tolerates, with the devices carrying it (for explanations).
    pub(crate) fn untolerated_taints<'a>(
        &'a self,
        tolerations: &'a [DeviceToleration],
    ) -> impl Iterator<Item = (&'a DeviceTaint, &'a DeviceSet)> + 'a {
        self.untolerated_groups(tolerations)
            .map(|g| (&g.probe, &g.members))
    }

    fn untolerated_groups<'a>(
        &'a self,
        tolerations: &'a [DeviceToleration],
    ) -> impl Iterator<Item = &'a TaintGroup> + 'a {
        self.groups
            .iter()
            .filter(move |g| g.len > 0 && !tolerations.iter().any(|t| t.tolerates(&g.probe)))
    }

    /// The devices of `candidates` a claim with these tolerations can be given now:
    /// `candidates ∧ usable ∧ free ∧ ¬blocked(tolerations)`, computed word by word.
    pub fn usable(&self, candidates: &DeviceSet, tolerations: &[DeviceToleration]) -> DeviceSet {
        let mut out = candidates.clone();
        self.restrict_usable(&mut out, tolerations);
        out
    }

    /// Like [`usable`](Self::usable), in place.
    // Measured: `usable` is 3-4 % slower on small clusters when this is a call
    // (benches/RESULTS.md, "Layered core").
    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub fn restrict_usable(&self, set: &mut DeviceSet, tolerations: &[DeviceToleration]) {
        if tolerations.is_empty() {
            // One pass: counting runs this on a class's set for every unit it places.
            set.intersect_both_without(&self.eligible, &self.free, &self.tainted);
        } else {
            set.intersect_with(&self.eligible);
            set.intersect_with(&self.free);
            for g in self.untolerated_groups(tolerations) {
                set.difference_with(&g.members);
            }
        }
    }

    /// How many devices of `candidates` a claim with these tolerations can get on one
    /// node (node-local devices only).
    pub fn usable_on_node(
        &self,
        node: NodeId,
        candidates: &DeviceSet,
        tolerations: &[DeviceToleration],
    ) -> usize {
        let Some(e) = self.nodes.get(node.index()) else {
            return 0;
        };
        let mut s = DeviceSet::new();
        e.devices.add_to(&mut s);
        s.intersect_with(candidates);
        self.restrict_usable(&mut s, tolerations);
        s.len()
    }

    /// Every device a pod on `node` could reach: the node's own devices plus the shared
    /// ones (slice or per-device `nodeSelector` / `allNodes`) whose selector matches the
    /// node's name and labels. Any state; combine with [`usable`](Self::usable).
    pub fn devices_reachable_from(&self, node: NodeId) -> DeviceSet {
        let mut out = DeviceSet::with_universe(self.devices.len());
        let Some(entry) = self.nodes.get(node.index()) else {
            return out;
        };
        entry.devices.add_to(&mut out);
        let empty = BTreeMap::new();
        let labels = entry.node.as_ref().map_or(&empty, |n| &n.labels);
        for dev in self.shared.iter() {
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            let slice = &self.slice_entry(slot.slice).slice;
            let access = match &slice.node_selection {
                SliceNodeSelection::Slice(a) => Some(a),
                SliceNodeSelection::PerDevice => {
                    slice.devices[slot.pos as usize].node_access.as_ref()
                }
            };
            let reaches = match access {
                Some(NodeAccess::AllNodes) => true,
                Some(NodeAccess::NodeSelector(sel)) => sel.matches(&entry.name, labels),
                Some(NodeAccess::NodeName(n)) => *n == entry.name,
                None => false,
            };
            if reaches {
                out.insert(dev);
            }
        }
        out
    }
}
