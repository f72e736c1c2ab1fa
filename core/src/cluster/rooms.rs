//! Share rooms: per node, what each shareable device has left of every capacity it
//! declares, kept in step with its allocations, so that the placer can rule out a node
//! for a capacity request by comparing numbers instead of running the allocator on it.
//!
//! A shareable device (`allowMultipleAllocations`) stays free in the index however
//! much of it is taken, so device counts cannot tell a node whose GPUs are all half
//! used from an empty one. The room of a device is, per declared capacity, the value
//! minus what its non-admin holders consume, and what one allocation that does not
//! request the capacity would consume (the policy default, else the whole value).
//!
//! [`Cluster::share_room_admits`] is a necessary condition for the allocator to give
//! the device a share: an allocation consumes at least what it requests (request
//! policies round up) and exactly the default of what it does not request. So a node
//! is ruled out only where the allocator would fail, and decisions do not change.
//!
//! Rooms are rebuilt for a node whenever the allocations of one of its shareable
//! devices change ([`Cluster::allocate_on`], a release) or its devices do (slices
//! published or removed); clones share them until then.

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::Quantity;
use crate::alloc_prelude::*;
use crate::model::capacity::consumed_amount;

use super::ids::{DeviceId, NodeId};
use super::intern::Symbol;
use super::{Cluster, SHAREABLE};

/// One shareable device's room.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DeviceRoom {
    pub(crate) dev: DeviceId,
    /// Per declared capacity (in key order): what is left, and what an allocation
    /// that does not request it consumes.
    pub(crate) caps: SmallVec<[RoomCap; 1]>,
}

/// One capacity of a [`DeviceRoom`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RoomCap {
    /// The key as the device declares it, interned (the placer compares it for every
    /// shareable device of every node it counts).
    pub(crate) key: Symbol,
    pub(crate) left: Quantity,
    pub(crate) default: Quantity,
    /// The capacity's value (kept here so reading a free share does not walk the
    /// device's capacity map, a cache miss per device).
    pub(crate) value: Quantity,
}

/// A capacity request for [`Cluster::share_room_admits`]: the name as
/// [`Cluster::symbol`] finds it (`None`: no device declares a capacity of exactly
/// that key), and the amount.
pub(crate) type RoomRequest = (Option<Symbol>, Quantity);

/// The rooms of a node's shareable devices, in device order (none for most nodes).
pub(crate) type NodeRooms = Arc<[DeviceRoom]>;

/// What a node's rooms hold at best, per capacity, when all its shareable devices
/// declare the same capacity keys: the most any device has left, and whether any has
/// its default left. Read before the rooms themselves (which sit behind a pointer per
/// node): most full nodes are ruled out here.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RoomSummary {
    caps: SmallVec<[(Symbol, Quantity, bool); 1]>,
}

impl RoomSummary {
    /// The summary of `rooms`; `None` when they differ in their keys (or are none).
    fn of(rooms: &[DeviceRoom]) -> Option<RoomSummary> {
        let first = rooms.first()?;
        let keys = |r: &DeviceRoom| r.caps.iter().map(|c| c.key).collect::<SmallVec<[_; 2]>>();
        let want = keys(first);
        if rooms.iter().any(|r| keys(r) != want) {
            return None;
        }
        let caps = want
            .iter()
            .enumerate()
            .map(|(i, &key)| {
                let max = rooms
                    .iter()
                    .map(|r| r.caps[i].left)
                    .max()
                    .unwrap_or(Quantity::ZERO);
                let default = rooms.iter().any(|r| r.caps[i].default <= r.caps[i].left);
                (key, max, default)
            })
            .collect();
        Some(RoomSummary { caps })
    }

    /// `false` only when no device of the rooms summarised admits `requests` (see
    /// [`Cluster::share_room_admits`]): a requested capacity exceeds what every device
    /// has left, or an unrequested one's default does.
    pub(crate) fn may_admit(&self, requests: &[RoomRequest]) -> bool {
        if requests
            .iter()
            .any(|(name, _)| !self.caps.iter().any(|c| Some(c.0) == *name))
        {
            return true;
        }
        self.caps.iter().all(|&(key, max, default)| {
            match requests.iter().find(|(name, _)| *name == Some(key)) {
                Some((_, q)) => *q <= max,
                None => default,
            }
        })
    }
}

impl Cluster {
    /// Rebuilds the rooms of node `n` from its devices and their holders.
    pub(super) fn refresh_rooms(&mut self, n: NodeId) {
        let Some(entry) = self.nodes.get(n.index()) else {
            return;
        };
        let shareable: SmallVec<[DeviceId; 8]> = entry
            .devices
            .iter()
            .filter(|d| {
                self.devices[d.index()]
                    .as_ref()
                    .is_some_and(|s| s.flags & SHAREABLE != 0)
            })
            .collect();
        // Keys are interned once, when a device first declares them (so a clone's
        // interner is copied only then, and rebuilding allocates no names).
        let missing: Vec<String> = shareable
            .iter()
            .flat_map(|&d| self.device_of(d).capacity.keys())
            .filter(|k| self.strings.get(k).is_none())
            .cloned()
            .collect();
        if !missing.is_empty() {
            let strings = Arc::make_mut(&mut self.strings);
            for k in &missing {
                strings.intern(k);
            }
        }
        let rooms: Vec<DeviceRoom> = shareable
            .iter()
            .map(|&dev| {
                let slot = self.devices[dev.index()].as_ref().expect("live device id");
                let holders = self.allocations.get(&self.key_of(slot));
                let caps = self
                    .device_of(dev)
                    .capacity
                    .iter()
                    .map(|(key, cap)| {
                        let used = holders
                            .into_iter()
                            .flatten()
                            .filter(|h| !h.admin_access)
                            .filter_map(|h| h.consumed_capacity.get(key))
                            .fold(Quantity::ZERO, |a, q| a.saturating_add(*q));
                        RoomCap {
                            key: self.strings.get(key).expect("interned above"),
                            left: cap.value.saturating_sub(used),
                            // A default the policy refuses cannot be allocated
                            // unrequested; zero only admits more.
                            default: consumed_amount(cap, None).unwrap_or(Quantity::ZERO),
                            value: cap.value,
                        }
                    })
                    .collect();
                DeviceRoom { dev, caps }
            })
            .collect();
        let state = &mut self.node_state[n.index()];
        if state.rooms.as_ref() != rooms.as_slice() {
            state.room_summary = RoomSummary::of(&rooms);
            state.rooms = Arc::from(rooms);
            self.rescore(n);
        }
    }

    /// Whether the shareable device of `room` may still take one allocation that
    /// requests `requests` (capacity name → amount): every requested capacity has at
    /// least that much left, every other one at least its default. A requested name the
    /// device does not declare under exactly that key is left to the allocator (it may
    /// name the capacity in another spelling): `true`.
    pub(crate) fn share_room_admits(room: &DeviceRoom, requests: &[RoomRequest]) -> bool {
        if requests
            .iter()
            .any(|(name, _)| !room.caps.iter().any(|c| Some(c.key) == *name))
        {
            return true;
        }
        room.caps.iter().all(|c| {
            let need = requests
                .iter()
                .find(|(name, _)| *name == Some(c.key))
                .map_or(c.default, |r| r.1);
            need <= c.left
        })
    }

    /// The interned symbol of a capacity or resource name, if it is interned (every
    /// capacity key of a shareable device and every allocatable resource is).
    pub(crate) fn symbol(&self, name: &str) -> Option<Symbol> {
        self.strings.get(name)
    }

    /// The rooms of node `n`'s shareable devices, and their summary (if they agree on
    /// their keys).
    pub(crate) fn node_rooms(&self, n: NodeId) -> (&[DeviceRoom], Option<&RoomSummary>) {
        self.node_state
            .get(n.index())
            .map_or((&[], None), |s| (&s.rooms, s.room_summary.as_ref()))
    }
}
