//! The Stranding and FGD node measures ([`scores`](super::scores)) kept up to date per
//! node while the cluster changes, so that scoring a candidate reads its node's
//! measure before a placement instead of computing it.
//!
//! A tracked table holds the resolved mix (each shape's devices: its class's, narrowed
//! by its selectors) behind an `Arc`, and one [`NodeScore`] per node slot in a
//! [`CowVec`], so cloning a cluster (a placement's scratch copy) costs a reference
//! count per 64 nodes and a write copies one chunk.
//!
//! A node is rescored wherever what the measures read of it changes: its free CPU
//! and memory (`refresh_free`), its shareable devices' rooms (`refresh_rooms`), a
//! device's flags (`apply_flags`: exclusive allocation and release, holds, taints,
//! pool validity), its device order (`reorder_node`) and a new slot (`node_slot`).
//! A share is counted per device: each device's free share and each shape's need
//! are milli-devices of that device's own capacity value (its share unit), so a
//! slice added or removed changes only its own devices' part of the mix: they join
//! or leave the shapes' devices and only their nodes are rescored (every node only
//! when the mix's CPU and memory ratio, counted against one reference device, moves).
//! The mix is resolved again, and every node rescored, when a DeviceClass changes.
//! [`Cluster::audit_scores`] compares every tracked value with a fresh computation.

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;

use crate::{DeviceRef, Quantity, ShapeMix, StrandingWeights};

use super::bits::DeviceSet;
use super::cow::CowVec;
use super::ids::{DeviceId, NodeId};
use super::intern::Symbol;
use super::ranking::{RankMemo, STATE_CAP, StateIds, StateKey, hash_key};
use super::scores::{
    self, DeviceFree, NodeFree, Ratio, ScoredShape, WHOLE, cpu_milli_needed, free_cpu_milli,
    free_mib, free_share, mib_needed, share_taken,
};
use super::{Cluster, ELIGIBLE, FREE, SHAREABLE, TAINTED};

/// Which node measure a tracked table keeps.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScoreKernel {
    /// Stranding, with these weights (the measure reads the filling weight).
    Stranding(StrandingWeights),
    /// FGD (no deficit).
    Fgd,
}

/// One node's tracked state.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeScore {
    /// The kernel's measure of the node.
    pub measure: f64,
    /// Stranding's CPU and memory deficit (0 under FGD).
    pub deficit: f64,
    /// Free milli-devices of the mix's devices on the node.
    pub free_milli: u64,
    /// Some device of the mix's devices on the node is not wholly free.
    pub touched: bool,
}

/// What a node has free, as the measures read it (see [`Cluster::node_load`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeLoad {
    /// Free CPU, milli-cores (rounded down).
    pub cpu_milli: u64,
    /// Free memory, MiB (rounded down).
    pub memory_mib: u64,
    /// The node's devices in allocation order, with their free share in
    /// milli-devices (`0..=1000`): an exclusive device 1000 when it is free, eligible
    /// and untainted; a shareable one what is left of its share capacity (the tracked
    /// mix's, else the scarcest capacity it declares); 0 when tainted or ineligible.
    pub devices: Vec<(DeviceRef, u32)>,
}

/// The mix resolved against the cluster's devices.
#[derive(Clone, Debug)]
pub(crate) struct ResolvedMix {
    pub(crate) kernel: ScoreKernel,
    /// The mix as given (resolved again when classes or slices change).
    pub(crate) source: ShapeMix,
    pub(crate) shapes: Vec<ScoredShape>,
    /// The devices of the shapes' classes: the devices a node is measured over.
    pub(crate) set: DeviceSet,
    /// The capacity a share consumes: the first capacity key of the first shape that
    /// requests one (one per mix; a shape naming another is measured as whole).
    pub(crate) share_key: Option<String>,
    pub(crate) ratio: Option<Ratio>,
    fill: f64,
    /// Each shape's amount of the share key, if it names it.
    amounts: Vec<Option<Quantity>>,
    /// Each shape's compiled selectors (`None`: one does not compile, no device).
    selectors: Vec<Option<Vec<crate::Selector>>>,
    /// The share key's capacity values met on the set's devices: unit `i + 1` (unit
    /// 0 is a device that declares none). Only grows; a unit no device has any
    /// more is harmless.
    pub(crate) units: Vec<Quantity>,
    /// Per device id, its group: which shapes may use it (an index into
    /// `group_ids`' values; 0 for a device no shape may use). Ranking keys node
    /// states by it.
    groups: Vec<u32>,
    group_ids: BTreeMap<Vec<u32>, u32>,
    /// Per device id of the set that declares the share key: the key's position among
    /// its capacities (its room's index) and its value, so reading its free share
    /// needs no string comparison.
    share_caps: Vec<Option<(u8, Quantity)>>,
    /// Per device id, what the shapes with selectors need of it (see
    /// [`scores::pressure`]); empty when no shape has selectors.
    pub(crate) pressure: Vec<f64>,
}

impl ResolvedMix {
    /// Device `d`'s group (see `groups`).
    pub(crate) fn group_of(&self, d: DeviceId) -> u32 {
        self.groups.get(d.index()).copied().unwrap_or(0)
    }

    /// The kernel's measure and deficit of a node state.
    pub(crate) fn measure(&self, node: &NodeFree<'_>) -> scores::Measured {
        match self.kernel {
            ScoreKernel::Stranding(_) => scores::Measured {
                measure: scores::stranding(&self.shapes, self.fill, node),
                deficit: scores::deficit(self.ratio, node),
            },
            ScoreKernel::Fgd => scores::Measured {
                measure: scores::fgd(&self.shapes, node),
                deficit: 0.0,
            },
        }
    }
}

/// The milli-devices a shape taking `amount` of the share key takes of a device whose
/// share capacity is `value`: `WHOLE` without either.
pub(super) fn share_of(amount: Option<Quantity>, value: Option<Quantity>) -> u32 {
    match (amount, value) {
        (Some(q), Some(v)) => share_taken(q, v),
        _ => WHOLE,
    }
}

/// Device `device`'s share unit in `mix` (0 when it declares no share capacity).
fn unit_of(mix: &ResolvedMix, device: &crate::Device) -> u16 {
    mix.share_key
        .as_deref()
        .and_then(|k| device.capacity.get(k))
        .map_or(0, |cap| unit_of_value(mix, cap.value))
}

/// The share unit of share capacity value `value` in `mix` (0 when it has none).
fn unit_of_value(mix: &ResolvedMix, value: Quantity) -> u16 {
    mix.units
        .iter()
        .position(|u| *u == value)
        .map_or(0, |i| u16::try_from(i + 1).unwrap_or(0))
}

/// A node's devices of the mix, in allocation order.
pub(crate) type NodeDevices = SmallVec<[DeviceFree; 8]>;

/// The tracked table (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct ScoreTable {
    pub(crate) mix: Arc<ResolvedMix>,
    pub(crate) values: CowVec<NodeScore>,
    /// Per node slot, its devices of the mix as the measures read them (what
    /// `values` was computed from), so ranking does not walk them again.
    pub(crate) devices: CowVec<NodeDevices>,
    /// Measures of node states under `mix`, kept across placements (emptied
    /// whenever `mix` changes).
    pub(crate) memo: RankMemo,
    /// Per node slot, the number of its state (its free CPU and memory and
    /// `devices` with their groups) in `ids`.
    pub(crate) state: CowVec<u32>,
    pub(crate) ids: Arc<StateIds>,
}

/// The tracked table while paused (see [`Cluster::pause_scores`]).
pub(crate) struct PausedScores(Option<Box<ScoreTable>>);

impl Cluster {
    /// Starts keeping every node's measure under `kernel` and `mix` (replacing what
    /// was tracked). The scoring policies call this; exposed for tests.
    #[doc(hidden)]
    pub fn track_scores(&mut self, kernel: ScoreKernel, mix: &ShapeMix) {
        let mix = self.resolve_mix(kernel, mix.clone());
        self.scores = Some(Box::new(ScoreTable {
            mix: Arc::new(mix),
            values: CowVec::default(),
            devices: CowVec::default(),
            memo: RankMemo::default(),
            state: CowVec::default(),
            ids: Arc::default(),
        }));
        self.rescore_all();
    }

    /// Stops keeping node measures.
    pub fn untrack_scores(&mut self) {
        self.scores = None;
    }

    /// Resolves the tracked mix again and rescores every node (after a DeviceClass or
    /// a slice changed).
    pub(super) fn resolve_scores(&mut self) {
        let Some(t) = self.scores.as_ref() else {
            return;
        };
        let (kernel, source) = (t.mix.kernel, t.mix.source.clone());
        let mix = self.resolve_mix(kernel, source);
        if let Some(t) = self.scores.as_mut() {
            t.mix = Arc::new(mix);
            t.memo = RankMemo::default();
        }
        self.rescore_all();
    }

    fn rescore_all(&mut self) {
        for i in 0..self.nodes.len() {
            self.rescore(NodeId(i as u32));
        }
    }

    /// Pauses the tracked measures while a node's devices change one by one (which
    /// would rescore the node once per device): until [`Cluster::resume_scores`], the
    /// changes rescore nothing.
    #[must_use = "resume_scores puts the table back"]
    pub(crate) fn pause_scores(&mut self) -> PausedScores {
        PausedScores(self.scores.take())
    }

    /// Ends [`Cluster::pause_scores`]: puts the table back and rescores, once each,
    /// the nodes of `devices`, which must hold every device changed while paused.
    pub(crate) fn resume_scores(
        &mut self,
        paused: PausedScores,
        devices: impl Iterator<Item = DeviceId>,
    ) {
        let Some(t) = paused.0 else {
            return;
        };
        self.scores = Some(t);
        let mut last = None;
        for d in devices {
            let node = self.devices.get(d.index()).and_then(|s| s.as_ref()?.node());
            if let Some(n) = node.filter(|&n| last != Some(n)) {
                self.rescore(n);
                last = Some(n);
            }
        }
    }

    /// Recomputes node `n`'s tracked state, if a table is tracked. Writes only a
    /// changed value (a write after a clone copies a chunk).
    pub(super) fn rescore(&mut self, n: NodeId) {
        let Some(t) = self.scores.as_ref() else {
            return;
        };
        let (value, devices, (cpu, mem)) = self.compute_score(&t.mix, n);
        let key = StateKey::of(cpu, mem, &devices, &t.mix);
        let t = self.scores.as_mut().expect("tracked");
        while t.values.len() <= n.index() {
            t.values.push(NodeScore::default());
            t.devices.push(NodeDevices::new());
            t.state.push(u32::MAX);
        }
        if t.values[n.index()] != value {
            t.values[n.index()] = value;
        }
        if t.devices[n.index()] != devices {
            t.devices[n.index()] = devices;
        }
        // A clone shares the numbers: it copies them only to number a new state.
        let h = hash_key(&key);
        let known = t.ids.find(h, &key);
        let Some(id) = known.or_else(|| Arc::make_mut(&mut t.ids).number(h, key, STATE_CAP)) else {
            self.renumber_states();
            return;
        };
        if t.state[n.index()] != id {
            t.state[n.index()] = id;
        }
    }

    /// Numbers every node's state afresh (when [`StateIds`] is full).
    fn renumber_states(&mut self) {
        let Some(mut t) = self.scores.take() else {
            return;
        };
        let ids = Arc::make_mut(&mut t.ids);
        ids.clear();
        // Ranks kept by state number are stale.
        t.memo = RankMemo::default();
        for i in 0..t.state.len() {
            let key = self.node_state_key(NodeId(i as u32), &t.devices[i], &t.mix);
            // More nodes than numbers: the rest are ranked one by one.
            t.state[i] = ids
                .number(hash_key(&key), key, STATE_CAP)
                .unwrap_or(u32::MAX);
        }
        self.scores = Some(t);
    }

    pub(super) fn resolve_mix(&self, kernel: ScoreKernel, source: ShapeMix) -> ResolvedMix {
        let mut mix = self.resolve_empty(kernel, source);
        let all: Vec<DeviceId> = self.live.iter().collect();
        self.add_to_mix(&mut mix, &all);
        self.refer_mix(&mut mix);
        mix
    }

    /// `source` resolved against no device yet.
    pub(super) fn resolve_empty(&self, kernel: ScoreKernel, source: ShapeMix) -> ResolvedMix {
        let share_key = source
            .shapes
            .iter()
            .find_map(|s| s.capacity.keys().next().cloned());
        let amounts: Vec<Option<Quantity>> = source
            .shapes
            .iter()
            .map(|s| share_key.as_ref().and_then(|k| s.capacity.get(k)).copied())
            .collect();
        let selectors: Vec<Option<Vec<crate::Selector>>> = source
            .shapes
            .iter()
            .map(|s| {
                s.selectors
                    .iter()
                    .map(|sel| crate::Selector::compile(&sel.cel).ok())
                    .collect()
            })
            .collect();
        let fill = match kernel {
            ScoreKernel::Stranding(w) => scores::Weights::from(w).fill,
            ScoreKernel::Fgd => 0.0,
        };
        let shapes = source
            .shapes
            .iter()
            .zip(&amounts)
            .map(|(s, amount)| ScoredShape {
                weight: s.weight,
                frequency: 0.0,
                cpu_milli: cpu_milli_needed(s.cpu),
                memory_mib: mib_needed(s.memory),
                count: s.count,
                share: share_of(*amount, None),
                shares: SmallVec::from_slice(&[WHOLE]),
                allowed: DeviceSet::default(),
                restricted: !s.selectors.is_empty(),
            })
            .collect();
        ResolvedMix {
            kernel,
            source,
            shapes,
            set: DeviceSet::with_universe(self.devices.len()),
            share_key,
            ratio: None,
            fill,
            amounts,
            selectors,
            units: Vec::new(),
            groups: Vec::new(),
            group_ids: BTreeMap::new(),
            share_caps: Vec::new(),
            pressure: Vec::new(),
        }
    }

    /// Adds devices `ids` (live, their classes evaluated) to the mix: to its set and
    /// each shape's allowed devices as their classes and selectors accept them, and
    /// their share capacity value to the units.
    fn add_to_mix(&self, mix: &mut ResolvedMix, ids: &[DeviceId]) {
        for (i, s) in mix.source.shapes.iter().enumerate() {
            let Some(class) = self.class_cache.get(&s.device_class_name) else {
                continue;
            };
            for &d in ids.iter().filter(|&&d| class.matches.contains(d)) {
                mix.set.insert(d);
                let Some(compiled) = &mix.selectors[i] else {
                    continue;
                };
                let slot = self.devices[d.index()].as_ref().expect("live device id");
                let e = self.slice_entry(slot.slice);
                let device = &e.slice.devices[slot.pos as usize];
                if compiled
                    .iter()
                    .all(|sel| matches!(sel.eval(&e.slice.driver, device), Ok(true)))
                {
                    mix.shapes[i].allowed.insert(d);
                }
            }
        }
        for &d in ids.iter().filter(|&&d| mix.set.contains(d)) {
            let sig: Vec<u32> = (0..mix.shapes.len() as u32)
                .filter(|&i| mix.shapes[i as usize].allowed.contains(d))
                .collect();
            let next = mix.group_ids.len() as u32 + 1;
            let g = *mix.group_ids.entry(sig).or_insert(next);
            if mix.groups.len() <= d.index() {
                mix.groups.resize(d.index() + 1, 0);
            }
            mix.groups[d.index()] = g;
        }
        let Some(key) = mix.share_key.clone() else {
            return;
        };
        for &d in ids.iter().filter(|&&d| mix.set.contains(d)) {
            let caps = &self.device_of(d).capacity;
            let at = caps
                .keys()
                .position(|k| *k == key)
                .and_then(|i| u8::try_from(i).ok());
            if mix.share_caps.len() <= d.index() {
                mix.share_caps.resize(d.index() + 1, None);
            }
            mix.share_caps[d.index()] = at.and_then(|i| Some((i, caps.get(&key)?.value)));
            let Some(cap) = caps.get(&key) else {
                continue;
            };
            if mix.units.contains(&cap.value) {
                continue;
            }
            mix.units.push(cap.value);
            for (s, amount) in mix.shapes.iter_mut().zip(&mix.amounts) {
                s.shares.push(share_of(*amount, Some(cap.value)));
            }
        }
    }

    /// The devices of `within` every one of `selectors` accepts (none when one does not
    /// compile or fails on a device).
    pub(super) fn devices_matching(
        &self,
        within: &DeviceSet,
        selectors: &[crate::DeviceSelector],
    ) -> DeviceSet {
        let mut out = DeviceSet::with_universe(self.devices.len());
        let Ok(compiled) = selectors
            .iter()
            .map(|s| crate::Selector::compile(&s.cel))
            .collect::<Result<Vec<_>, _>>()
        else {
            return out;
        };
        for d in within.iter() {
            let Some(slot) = self.devices[d.index()].as_ref() else {
                continue;
            };
            let e = self.slice_entry(slot.slice);
            let device = &e.slice.devices[slot.pos as usize];
            if compiled
                .iter()
                .all(|sel| matches!(sel.eval(&e.slice.driver, device), Ok(true)))
            {
                out.insert(d);
            }
        }
        out
    }

    /// Sets the shapes' reference share (against the capacity value of the first
    /// device of the set that declares the share key) and the mix's ratio from it.
    /// Returns whether the ratio changed.
    fn refer_mix(&self, mix: &mut ResolvedMix) -> bool {
        let value = mix.share_key.as_deref().and_then(|k| {
            mix.set
                .iter()
                .find_map(|d| self.device_of(d).capacity.get(k))
                .map(|cap| cap.value)
        });
        for (s, amount) in mix.shapes.iter_mut().zip(&mix.amounts) {
            s.share = share_of(*amount, value);
        }
        scores::set_frequencies(&mut mix.shapes);
        mix.pressure = if mix.shapes.iter().any(|s| s.restricted) {
            scores::pressure(&mix.shapes, self.devices.len())
        } else {
            Vec::new()
        };
        let ratio = Ratio::of(&mix.shapes);
        let changed = ratio != mix.ratio;
        mix.ratio = ratio;
        changed
    }

    /// Updates the tracked mix after a slice's devices `ids` were added: only those
    /// devices are evaluated and only their nodes rescored (every node when the
    /// mix's CPU and memory ratio moved).
    pub(super) fn scores_added(&mut self, ids: &[DeviceId]) {
        let Some(mut t) = self.scores.take() else {
            return;
        };
        let mix = Arc::make_mut(&mut t.mix);
        t.memo = RankMemo::default();
        self.add_to_mix(mix, ids);
        let all = self.refer_mix(mix);
        self.scores = Some(t);
        if all {
            self.rescore_all();
            return;
        }
        let nodes: BTreeSet<NodeId> = ids
            .iter()
            .filter_map(|d| {
                self.devices[d.index()]
                    .as_ref()
                    .and_then(super::index::DeviceSlot::node)
            })
            .collect();
        for n in nodes {
            self.rescore(n);
        }
    }

    /// Updates the tracked mix after devices `ids` were deleted (they are on no node
    /// any more): drops them from its sets; rescores every node only when the mix's
    /// ratio moved.
    pub(super) fn scores_removed(&mut self, ids: &[DeviceId]) {
        let Some(mut t) = self.scores.take() else {
            return;
        };
        let mix = Arc::make_mut(&mut t.mix);
        t.memo = RankMemo::default();
        for &d in ids {
            mix.set.remove(d);
            for s in &mut mix.shapes {
                s.allowed.remove(d);
            }
        }
        let all = self.refer_mix(mix);
        self.scores = Some(t);
        if all {
            self.rescore_all();
        }
    }

    /// A device's free share when its flags decide it: 0 for a dead, ineligible or
    /// tainted device, whole or nothing for an exclusive one; `None` for a shareable
    /// one (its room decides).
    fn unshared_free(&self, dev: DeviceId) -> Option<u32> {
        let Some(slot) = self.devices[dev.index()].as_ref() else {
            return Some(0);
        };
        let f = slot.flags;
        if f & ELIGIBLE == 0 || f & TAINTED != 0 {
            return Some(0);
        }
        if f & SHAREABLE == 0 {
            return Some(if f & FREE != 0 { WHOLE } else { 0 });
        }
        None
    }

    /// The free share of device `dev` of node `n` (see [`NodeLoad::devices`]).
    fn device_free(&self, n: NodeId, dev: DeviceId, share_key: Option<&str>) -> u32 {
        if let Some(milli) = self.unshared_free(dev) {
            return milli;
        }
        let (rooms, _) = self.node_rooms(n);
        let Some(room) = rooms.iter().find(|r| r.dev == dev) else {
            return WHOLE;
        };
        let of = |c: &super::rooms::RoomCap| free_share(c.left, c.value);
        let key = share_key.and_then(|k| self.symbol(k));
        if let Some(c) = key.and_then(|k| room.caps.iter().find(|c| c.key == k)) {
            return of(c);
        }
        room.caps.iter().map(of).min().unwrap_or(WHOLE)
    }

    fn free_cpu_mem(&self, n: NodeId) -> (u64, u64) {
        self.free_cpu_mem_of(n, self.cpu_mem_symbols())
    }

    /// The interned names of CPU and memory (`None` before any node or pod names them).
    pub(super) fn cpu_mem_symbols(&self) -> (Option<Symbol>, Option<Symbol>) {
        self.strings.cpu_mem()
    }

    /// Node `n`'s free CPU (milli) and memory (MiB), given [`Cluster::cpu_mem_symbols`].
    pub(super) fn free_cpu_mem_of(
        &self,
        n: NodeId,
        (cpu, mem): (Option<Symbol>, Option<Symbol>),
    ) -> (u64, u64) {
        (
            free_cpu_milli(self.node_free_by_symbol(n, cpu)),
            free_mib(self.node_free_by_symbol(n, mem)),
        )
    }

    /// Node `n`'s devices of the mix's set in allocation order, with their free share
    /// and unit.
    pub(super) fn mix_devices(&self, mix: &ResolvedMix, n: NodeId) -> SmallVec<[DeviceFree; 8]> {
        let (rooms, _) = self.node_rooms(n);
        // Rooms are mostly in the node's device order: look at the next one first.
        let mut next = 0;
        let mut out = SmallVec::new();
        for &id in self.nodes_ordered(n) {
            // A device being deleted is still listed while its pool is recomputed.
            if !mix.set.contains(id) || self.devices[id.index()].is_none() {
                continue;
            }
            let known = mix.share_caps.get(id.index()).copied().flatten();
            let (milli, unit) = match known {
                Some((at, value)) => {
                    let at_room = if rooms.get(next).is_some_and(|r| r.dev == id) {
                        Some(next)
                    } else {
                        rooms.iter().position(|r| r.dev == id)
                    };
                    if let Some(i) = at_room {
                        next = i + 1;
                    }
                    let room = at_room.map(|i| &rooms[i]);
                    (
                        self.shared_free(id, room, at, value),
                        unit_of_value(mix, value),
                    )
                }
                None => (
                    self.device_free(n, id, mix.share_key.as_deref()),
                    unit_of(mix, self.device_of(id)),
                ),
            };
            out.push(DeviceFree { id, milli, unit });
        }
        out
    }

    /// [`Cluster::device_free`] of a device that declares the share key, at position
    /// `at` of its capacities with value `value`, its node's rooms `rooms`.
    fn shared_free(
        &self,
        dev: DeviceId,
        room: Option<&super::rooms::DeviceRoom>,
        at: u8,
        value: Quantity,
    ) -> u32 {
        if let Some(milli) = self.unshared_free(dev) {
            return milli;
        }
        room.and_then(|r| r.caps.get(usize::from(at)))
            .map_or(WHOLE, |c| free_share(c.left, value))
    }

    /// Node `n`'s measures under `mix`, from its devices of the mix and its free CPU
    /// and memory (returned too).
    fn compute_score(&self, mix: &ResolvedMix, n: NodeId) -> (NodeScore, NodeDevices, (u64, u64)) {
        let devices = self.mix_devices(mix, n);
        let (cpu_milli, memory_mib) = self.free_cpu_mem(n);
        let node = NodeFree {
            cpu_milli,
            memory_mib,
            devices: &devices,
        };
        let m = mix.measure(&node);
        let score = NodeScore {
            measure: m.measure,
            deficit: m.deficit,
            free_milli: node.free(),
            touched: devices.iter().any(|d| d.milli < WHOLE),
        };
        (score, devices, (cpu_milli, memory_mib))
    }

    /// The state key of node `n` with its tracked `devices` under `mix`.
    fn node_state_key(&self, n: NodeId, devices: &[DeviceFree], mix: &ResolvedMix) -> StateKey {
        let (cpu, mem) = self.free_cpu_mem(n);
        StateKey::of(cpu, mem, devices, mix)
    }

    /// A node's tracked state, if a table is tracked and the node exists.
    #[doc(hidden)]
    pub fn node_score(&self, node: &str) -> Option<NodeScore> {
        let t = self.scores.as_ref()?;
        let id = *self.node_by_name.get(node)?;
        Some(t.values[id.index()])
    }

    /// Every node slot whose tracked state differs from a fresh computation: (node,
    /// tracked, recomputed). Empty when nothing is tracked. For tests and audits.
    #[doc(hidden)]
    pub fn audit_scores(&self) -> Vec<(String, NodeScore, NodeScore)> {
        let Some(t) = self.scores.as_ref() else {
            return Vec::new();
        };
        let fresh = self.resolve_mix(t.mix.kernel, t.mix.source.clone());
        let mut out = Vec::new();
        if t.values.len() != self.nodes.len() {
            out.push((
                format!(
                    "<{} values for {} node slots>",
                    t.values.len(),
                    self.nodes.len()
                ),
                NodeScore::default(),
                NodeScore::default(),
            ));
        }
        for (i, e) in self.nodes.iter().enumerate() {
            let (want, devices, _) = self.compute_score(&fresh, NodeId(i as u32));
            let have = if i < t.values.len() {
                t.values[i]
            } else {
                NodeScore::default()
            };
            if have != want {
                out.push((e.name.clone(), have, want));
            }
            // The kept devices (units and groups are the tracked mix's own numbering).
            let kept = (i < t.devices.len()).then(|| &t.devices[i]);
            let same = kept.is_some_and(|k| {
                k.len() == devices.len()
                    && k.iter()
                        .zip(&devices)
                        .all(|(a, b)| a.id == b.id && a.milli == b.milli)
            });
            if !same {
                out.push((format!("{} (devices)", e.name), have, want));
            }
            // The state's number is the number of the state it is in now (under the
            // tracked mix's groups), so nodes share a number exactly when they share
            // a state.
            if let Some(k) = kept {
                let key = self.node_state_key(NodeId(i as u32), k, &t.mix);
                let id = t.ids.find(hash_key(&key), &key);
                let numbered = t.state.get(i).copied();
                if id.is_none_or(|id| numbered != Some(id)) {
                    out.push((format!("{} (state number)", e.name), have, want));
                }
            }
        }
        out
    }

    /// Node `n`'s devices' capacity and free share, milli-devices (1000 each; free as
    /// [`NodeLoad::devices`] counts it).
    pub(super) fn node_shares(&self, n: NodeId) -> (u64, u64) {
        let devices = self.nodes_ordered(n);
        let free = devices
            .iter()
            .map(|&d| u64::from(self.device_free(n, d, None)))
            .sum();
        (devices.len() as u64 * u64::from(WHOLE), free)
    }

    /// What node `node` has free, as the measures read it: its free CPU and memory
    /// and each device's free share (see [`NodeLoad`]). `None` for an unknown node.
    pub fn node_load(&self, node: &str) -> Option<NodeLoad> {
        let n = *self.node_by_name.get(node)?;
        self.nodes[n.index()].node.as_ref()?;
        let key = self
            .scores
            .as_ref()
            .and_then(|t| t.mix.share_key.as_deref());
        let (cpu_milli, memory_mib) = self.free_cpu_mem(n);
        let devices = self
            .nodes_ordered(n)
            .iter()
            .filter_map(|&d| {
                let slot = self.devices[d.index()].as_ref()?;
                Some((self.device_ref_of(slot), self.device_free(n, d, key)))
            })
            .collect();
        Some(NodeLoad {
            cpu_milli,
            memory_mib,
            devices,
        })
    }
}
