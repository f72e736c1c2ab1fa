//! Symmetry classes of devices for the search: devices that no constraint, selector or
//! node tells apart are tried once per class.

use crate::alloc_prelude::*;
use crate::cel::Selector;
use crate::cluster::ids::{DeviceId, NodeId};
use crate::cluster::{Cluster, SHAREABLE, TAINTED};

use crate::gang::intake::Gang;

use super::Class;

/// The classes of devices the gang cannot tell apart, found as the search needs them.
/// Two devices are in one class when they belong to the same node (or both to none),
/// are reached from the same nodes, and everything a request of the gang looks at is
/// the same for both: driver, the gang's DeviceClasses and request selectors,
/// capacities, counters, the attributes its constraints compare, binding conditions.
/// Exchanging two such devices maps every allocation of the gang's claims to one just
/// as good, so a choice needs trying once per class, not per device (UUIDs and names
/// do not split classes, unless a selector reads them). Tainted devices are classes of
/// their own (requests tolerate different taints).
pub(super) struct Classes {
    /// The DeviceClasses the gang's requests name.
    class_names: Vec<String>,
    /// The gang's request selectors: expression and compiled form (`None` when it
    /// does not compile).
    selectors: Vec<(String, Option<Selector>)>,
    /// Per (sub)request of the gang: its class (index into `class_names`) and its
    /// selectors in order (indices into `selectors`), to tell which selector errors an
    /// allocation would meet (class first, then the request's selectors until one is
    /// false, as upstream evaluates them).
    requests: Vec<(usize, Vec<usize>)>,
    /// The attributes the gang's constraints compare.
    attributes: Vec<String>,
    /// Class by what the gang sees of a device.
    by_profile: BTreeMap<String, Class>,
    /// Per class, its node (`None`: reached through a slice of no single node).
    nodes: Vec<Option<NodeId>>,
    /// Per class, whether a selector of the gang fails on its devices (a CEL runtime
    /// error, not a mismatch: it aborts any allocation that evaluates it).
    pub(super) erring: Vec<bool>,
    /// Per class, its members, once its node (or the shared devices) is listed.
    members: Vec<Vec<DeviceId>>,
    /// Class per device, once seen.
    of: BTreeMap<DeviceId, Class>,
    /// The nodes (and `None` for the shared devices) whose devices are listed.
    listed: BTreeSet<Option<NodeId>>,
}

impl Classes {
    pub(super) fn new(gang: &Gang<'_>) -> Classes {
        let mut classes = Classes {
            class_names: Vec::new(),
            selectors: Vec::new(),
            requests: Vec::new(),
            attributes: Vec::new(),
            by_profile: BTreeMap::new(),
            nodes: Vec::new(),
            erring: Vec::new(),
            members: Vec::new(),
            of: BTreeMap::new(),
            listed: BTreeSet::new(),
        };
        let specs = gang
            .shapes
            .iter()
            .flat_map(|s| s.own_specs.iter().copied())
            .chain(gang.shared.iter().filter(|s| s.used).map(|s| &s.claim.spec));
        for spec in specs {
            for r in &spec.requests {
                for view in r.alternatives() {
                    let class = if let Some(at) = classes
                        .class_names
                        .iter()
                        .position(|c| c == view.device_class_name)
                    {
                        at
                    } else {
                        classes.class_names.push(view.device_class_name.to_owned());
                        classes.class_names.len() - 1
                    };
                    let mut order = Vec::with_capacity(view.selectors.len());
                    for sel in view.selectors {
                        let known = classes.selectors.iter().position(|(e, _)| *e == sel.cel);
                        let at = if let Some(at) = known {
                            at
                        } else {
                            classes
                                .selectors
                                .push((sel.cel.clone(), Selector::compile(&sel.cel).ok()));
                            classes.selectors.len() - 1
                        };
                        order.push(at);
                    }
                    classes.requests.push((class, order));
                }
            }
            for c in &spec.constraints {
                if !classes.attributes.iter().any(|a| a == c.attribute()) {
                    classes.attributes.push(c.attribute().to_owned());
                }
            }
        }
        classes
    }

    /// The class of device `d`.
    pub(super) fn class_of(&mut self, cluster: &Cluster, d: DeviceId) -> Class {
        if let Some(&c) = self.of.get(&d) {
            return c;
        }
        let (node, profile, erring) = self.profile(cluster, d);
        let c = if let Some(&c) = self.by_profile.get(&profile) {
            c
        } else {
            let c = Class::try_from(self.nodes.len()).expect("fewer than 2^32 classes");
            self.nodes.push(node);
            self.erring.push(erring);
            self.members.push(Vec::new());
            self.by_profile.insert(profile, c);
            c
        };
        self.of.insert(d, c);
        c
    }

    /// Every device of class `c`.
    pub(super) fn members(&mut self, cluster: &Cluster, c: Class) -> &[DeviceId] {
        let node = self.nodes[c as usize];
        if self.listed.insert(node) {
            let devices: Vec<DeviceId> = match node {
                None => cluster.shared_devices().iter().collect(),
                Some(n) => cluster
                    .node_devices(n)
                    .map(|set| set.iter().collect())
                    .unwrap_or_default(),
            };
            for d in devices {
                let k = self.class_of(cluster, d);
                if self.nodes[k as usize] == node {
                    self.members[k as usize].push(d);
                }
            }
        }
        &self.members[c as usize]
    }

    /// Device `d`'s node, what the gang sees of it, as text, and whether one of the
    /// gang's class or request selectors fails on it.
    pub(super) fn profile(&self, cluster: &Cluster, d: DeviceId) -> (Option<NodeId>, String, bool) {
        use core::fmt::Write as _;
        let slot = cluster.devices[d.index()].as_ref().expect("live device id");
        let entry = cluster.slice_entry(slot.slice);
        let slice = &entry.slice;
        let device = &slice.devices[slot.pos as usize];
        let node = slot.node();
        let mut key = String::new();
        let _ = write!(key, "{node:?}|");
        if slot.flags & (TAINTED | SHAREABLE) != 0 {
            // Never merged.
            let _ = write!(key, "device {}|", d.0);
        }
        if !device.consumes_counters.is_empty() {
            let _ = write!(key, "pool {}|", entry.pool.0);
        }
        let _ = write!(
            key,
            "{}|{:?}|{:?}|{}|{:?}|{:?}|{:?}|{:?}|",
            slice.driver,
            slice.node_selection,
            device.node_access,
            device.binds_to_node,
            device.binding_conditions,
            device.binding_failure_conditions,
            device.capacity,
            device.consumes_counters,
        );
        let start = key.len();
        for c in &self.class_names {
            let member = cluster.class_devices(c).is_some_and(|set| set.contains(d));
            let failed = cluster
                .class_cache
                .get(c)
                .is_some_and(|cache| cache.errors.contains_key(&d));
            key.push(match (member, failed) {
                (true, _) => '1',
                (false, false) => '0',
                (false, true) => 'e',
            });
        }
        key.push('|');
        for (_, s) in &self.selectors {
            // An error is its own answer, never a mismatch ('0').
            key.push(match s.as_ref().map(|s| s.eval(&slice.driver, device)) {
                Some(Ok(true)) => '1',
                Some(Ok(false)) => '0',
                _ => 'e',
            });
        }
        // The answers, ASCII: classes, '|', selectors.
        let answers = &key.as_bytes()[start..];
        let (class_answers, selector_answers) = answers.split_at(self.class_names.len());
        let selector_answers = &selector_answers[1..];
        let erring = self
            .requests
            .iter()
            .any(|(class, order)| match class_answers[*class] {
                b'e' => true,
                b'1' => {
                    order
                        .iter()
                        .map(|&s| selector_answers[s])
                        .find(|&a| a != b'1')
                        == Some(b'e')
                }
                _ => false,
            });
        key.push('|');
        for a in &self.attributes {
            let bare = a
                .split_once('/')
                .filter(|(domain, _)| *domain == slice.driver)
                .and_then(|(_, id)| device.attributes.get(id));
            let _ = write!(key, "{:?}/{:?};", device.attributes.get(a), bare);
        }
        (node, key, erring)
    }
}
