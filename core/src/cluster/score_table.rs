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
//! The mix is resolved again, and every node rescored, when a DeviceClass or a slice
//! changes (the shapes' devices may change with it): rare next to allocations.
//! [`Cluster::audit_scores`] compares every tracked value with a fresh computation.

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::{DeviceRef, ShapeMix, StrandingWeights};

use super::bits::DeviceSet;
use super::cow::CowVec;
use super::ids::{DeviceId, NodeId};
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
}

/// The tracked table (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct ScoreTable {
    pub(crate) mix: Arc<ResolvedMix>,
    pub(crate) values: CowVec<NodeScore>,
}

impl Cluster {
    /// Starts keeping every node's measure under `kernel` and `mix` (replacing what
    /// was tracked). The scoring policies call this; exposed for tests.
    #[doc(hidden)]
    pub fn track_scores(&mut self, kernel: ScoreKernel, mix: &ShapeMix) {
        let mix = self.resolve_mix(kernel, mix.clone());
        self.scores = Some(ScoreTable {
            mix: Arc::new(mix),
            values: CowVec::default(),
        });
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
        }
        self.rescore_all();
    }

    fn rescore_all(&mut self) {
        for i in 0..self.nodes.len() {
            self.rescore(NodeId(i as u32));
        }
    }

    /// Recomputes node `n`'s tracked state, if a table is tracked. Writes only a
    /// changed value (a write after a clone copies a chunk).
    pub(super) fn rescore(&mut self, n: NodeId) {
        let Some(t) = self.scores.as_ref() else {
            return;
        };
        let value = self.compute_score(&t.mix, n);
        let t = self.scores.as_mut().expect("tracked");
        while t.values.len() <= n.index() {
            t.values.push(NodeScore::default());
        }
        if t.values[n.index()] != value {
            t.values[n.index()] = value;
        }
    }

    fn resolve_mix(&self, kernel: ScoreKernel, source: ShapeMix) -> ResolvedMix {
        let share_key = source
            .shapes
            .iter()
            .find_map(|s| s.capacity.keys().next().cloned());
        let class_of = |s: &crate::TypicalShape| {
            self.class_cache
                .get(&s.device_class_name)
                .map(|c| c.matches.clone())
                .unwrap_or_default()
        };
        let mut set = DeviceSet::with_universe(self.devices.len());
        for s in &source.shapes {
            for d in class_of(s).iter() {
                set.insert(d);
            }
        }
        // A share is counted in milli-devices of the first device of the set that
        // declares the share capacity (devices whose values differ are approximated).
        let unit = share_key.as_deref().and_then(|k| {
            set.iter()
                .find_map(|d| self.device_of(d).capacity.get(k))
                .map(|cap| cap.value)
        });
        let mut shapes = Vec::with_capacity(source.shapes.len());
        for s in &source.shapes {
            let class = class_of(s);
            let selectors: Option<Vec<crate::Selector>> = s
                .selectors
                .iter()
                .map(|sel| crate::Selector::compile(&sel.cel).ok())
                .collect();
            let allowed: DeviceSet = match &selectors {
                None => DeviceSet::default(),
                Some(compiled) => class
                    .iter()
                    .filter(|&d| {
                        let slot = self.devices[d.index()].as_ref().expect("live device id");
                        let e = self.slice_entry(slot.slice);
                        let device = &e.slice.devices[slot.pos as usize];
                        compiled
                            .iter()
                            .all(|sel| matches!(sel.eval(&e.slice.driver, device), Ok(true)))
                    })
                    .collect(),
            };
            let amount = share_key.as_ref().and_then(|k| s.capacity.get(k));
            let share = match (amount, unit) {
                (Some(q), Some(value)) => share_taken(*q, value),
                _ => WHOLE,
            };
            shapes.push(ScoredShape {
                weight: s.weight,
                frequency: 0.0,
                cpu_milli: cpu_milli_needed(s.cpu),
                memory_mib: mib_needed(s.memory),
                count: s.count,
                share,
                allowed,
                restricted: !s.selectors.is_empty(),
            });
        }
        scores::set_frequencies(&mut shapes);
        let ratio = Ratio::of(&shapes);
        let fill = match kernel {
            ScoreKernel::Stranding(w) => scores::Weights::from(w).fill,
            ScoreKernel::Fgd => 0.0,
        };
        ResolvedMix {
            kernel,
            source,
            shapes,
            set,
            share_key,
            ratio,
            fill,
        }
    }

    /// The free share of device `dev` of node `n` (see [`NodeLoad::devices`]).
    fn device_free(&self, n: NodeId, dev: DeviceId, share_key: Option<&str>) -> u32 {
        let Some(slot) = self.devices[dev.index()].as_ref() else {
            return 0;
        };
        let f = slot.flags;
        if f & ELIGIBLE == 0 || f & TAINTED != 0 {
            return 0;
        }
        if f & SHAREABLE == 0 {
            return if f & FREE != 0 { WHOLE } else { 0 };
        }
        let (rooms, _) = self.node_rooms(n);
        let Some(room) = rooms.iter().find(|r| r.dev == dev) else {
            return WHOLE;
        };
        let caps = &self.device_of(dev).capacity;
        let of = |i: usize, cap: &crate::DeviceCapacity| {
            room.caps
                .get(i)
                .map_or(WHOLE, |c| free_share(c.left, cap.value))
        };
        if let Some(i) = share_key.and_then(|k| caps.keys().position(|c| c == k)) {
            return caps.values().nth(i).map_or(WHOLE, |cap| of(i, cap));
        }
        caps.values()
            .enumerate()
            .map(|(i, cap)| of(i, cap))
            .min()
            .unwrap_or(WHOLE)
    }

    fn free_cpu_mem(&self, n: NodeId) -> (u64, u64) {
        let cpu = self.node_free_by_symbol(n, self.symbol("cpu"));
        let mem = self.node_free_by_symbol(n, self.symbol("memory"));
        (free_cpu_milli(cpu), free_mib(mem))
    }

    fn compute_score(&self, mix: &ResolvedMix, n: NodeId) -> NodeScore {
        let devices: SmallVec<[DeviceFree; 8]> = self
            .nodes_ordered(n)
            .iter()
            .filter(|d| mix.set.contains(**d))
            .map(|&id| DeviceFree {
                id,
                milli: self.device_free(n, id, mix.share_key.as_deref()),
            })
            .collect();
        let (cpu_milli, memory_mib) = self.free_cpu_mem(n);
        let node = NodeFree {
            cpu_milli,
            memory_mib,
            devices: &devices,
        };
        let (measure, deficit) = match mix.kernel {
            ScoreKernel::Stranding(_) => (
                scores::stranding(&mix.shapes, mix.fill, &node),
                scores::deficit(mix.ratio, &node),
            ),
            ScoreKernel::Fgd => (scores::fgd(&mix.shapes, &node), 0.0),
        };
        NodeScore {
            measure,
            deficit,
            free_milli: node.free(),
            touched: devices.iter().any(|d| d.milli < WHOLE),
        }
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
            let want = self.compute_score(&fresh, NodeId(i as u32));
            let have = if i < t.values.len() {
                t.values[i]
            } else {
                NodeScore::default()
            };
            if have != want {
                out.push((e.name.clone(), have, want));
            }
        }
        out
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
