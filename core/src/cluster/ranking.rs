//! Ranking a pod's candidate nodes under the Stranding and FGD measures
//! ([`scores`](super::scores)): for each node, its measure before (the tracked
//! table's value, or computed) and after the pod's first fit, and the policy's score
//! of that change.
//!
//! A ranker serves one placement call. Node states repeat (idle nodes, nodes filled
//! alike), so the measure of a state is computed once per call: states are keyed by
//! free CPU, memory and each device's free share, share unit and *group* (the set of
//! shapes that may use it), which is all a measure reads.

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::model::claim::{AllocationMode, ResourceClaimSpec};
use crate::{Quantity, ShapeMix};

use super::Cluster;
use super::ids::{DeviceId, NodeId};
use super::intern::Symbol;
use super::score_table::{ResolvedMix, ScoreKernel, share_of};
use super::scores::{self, DeviceFree, Measured, NodeFree, ScoredShape, WHOLE, Weights};

/// What one pod takes, as the measures count it.
#[derive(Clone, Debug)]
pub(crate) struct PodTake {
    cpu_milli: u64,
    memory_mib: u64,
    /// Its scored device request as a shape (count, share per unit, the class's
    /// devices); `None` without a request of the mix's devices.
    device: Option<ScoredShape>,
    /// A hash of the pod's name, for FGD's seeded tie-break.
    name_hash: u64,
    /// Its number in the memo when what it takes decides alike on every device of a
    /// group (a shape of the mix's, a pod without selectors whose class holds every
    /// device of the mix, or a pod without a scored request): then its rank is a
    /// function of the node's state, computed once per state and kept while the mix
    /// is (see `Ranker::rank`). `None` otherwise (a pod whose own selectors cut
    /// across groups), or untracked.
    by_state: Option<u32>,
    /// Its first device request's milli-devices (count times the share of the
    /// class's first device declaring the capacity it names, else whole), for
    /// DotProduct.
    demand: u64,
}

/// A node state as the measures read it (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct StateKey {
    cpu_milli: u64,
    memory_mib: u64,
    devices: SmallVec<[(u32, u16, u32); 8]>,
}

impl StateKey {
    /// The state of a node with this much free CPU and memory and these devices.
    pub(crate) fn of(
        cpu_milli: u64,
        memory_mib: u64,
        devices: &[DeviceFree],
        mix: &ResolvedMix,
    ) -> StateKey {
        StateKey {
            cpu_milli,
            memory_mib,
            devices: devices
                .iter()
                .map(|d| (d.milli, d.unit, mix.group_of(d.id)))
                .collect(),
        }
    }
}

/// Dense numbers for keys (0, 1, … in the order first met), never reused for another
/// key while the table lives, at most `cap` of them. A cache: `Debug` shows nothing
/// of it, so numbering a key on the way (an operation refused and undone) never makes
/// two clusters differ.
#[derive(Clone)]
pub(crate) struct Numbers<K> {
    table: hashbrown::HashTable<(u64, K, u32)>,
}

impl<K> Default for Numbers<K> {
    fn default() -> Numbers<K> {
        Numbers {
            table: hashbrown::HashTable::new(),
        }
    }
}

impl<K> core::fmt::Debug for Numbers<K> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Numbers")
    }
}

impl<K: Eq> Numbers<K> {
    /// The number of `key`, whose hash is `h`, if it has one.
    pub(crate) fn find(&self, h: u64, key: &K) -> Option<u32> {
        self.table
            .find(h, |(kh, k, _)| *kh == h && k == key)
            .map(|(_, _, id)| *id)
    }

    /// The number of `key` (hash `h`), numbering it if new; `None` when `cap` keys
    /// are numbered (nothing is: numbers are never reused, so the caller decides
    /// whether to start over).
    pub(crate) fn number(&mut self, h: u64, key: K, cap: usize) -> Option<u32> {
        if let Some(id) = self.find(h, &key) {
            return Some(id);
        }
        if self.table.len() >= cap {
            return None;
        }
        let id = u32::try_from(self.table.len()).ok()?;
        self.table.insert_unique(h, (h, key, id), |(kh, _, _)| *kh);
        Some(id)
    }

    /// Forgets every number.
    pub(crate) fn clear(&mut self) {
        self.table.clear();
    }
}

/// Numbers for the node states a tracked table has met: nodes in the same state
/// have the same number, so a placement ranks each state once per pod (see
/// [`Ranker::rank`]). When full, the table starts over and numbers every node again;
/// the nodes' numbers are shown (in `Debug`) with the table's values.
pub(crate) type StateIds = Numbers<StateKey>;

/// The most states a [`StateIds`] numbers before starting over.
pub(crate) const STATE_CAP: usize = 1 << 20;

/// Measures of node states under one resolved mix (see the module docs). A tracked
/// table keeps one across placements; a copy of a cluster starts without (a clone is
/// empty), and `Debug` shows only its size, so a cache never makes two states differ.
#[derive(Default)]
pub(crate) struct RankMemo {
    table: hashbrown::HashTable<(u64, StateKey, Measured)>,
    /// Numbers for what pods take, as far as a rank by state reads it (see
    /// [`PodTake::by_state`]); at most [`MEMO_CAP`], never reused while the memo lives.
    takes: Numbers<TakeKey>,
    /// A pod's rank on a node state, by the pod's number above the state's (the
    /// tracked table's [`StateIds`]), without FGD's per-node tie-break.
    ranks: hashbrown::HashTable<(u64, i64)>,
}

/// What a rank by node state reads of a pod: its CPU and memory, and its scored
/// request's count, shares and devices (as the mix's group of devices it may take:
/// 0 every device of the mix, `i + 1` shape `i`'s).
#[derive(Clone, Debug, PartialEq, Eq)]
struct TakeKey {
    cpu_milli: u64,
    memory_mib: u64,
    device: Option<DeviceTake>,
}

/// A [`TakeKey`]'s request: count, share, shares per unit, group, restricted.
type DeviceTake = (u32, u32, SmallVec<[u32; 2]>, u32, bool);

impl TakeKey {
    fn hash(&self) -> u64 {
        let device = self
            .device
            .iter()
            .flat_map(|(count, share, shares, group, restricted)| {
                [
                    u64::from(*count) | (u64::from(*share) << 32),
                    u64::from(*group) | (u64::from(*restricted) << 32),
                ]
                .into_iter()
                .chain(shares.iter().map(|&x| u64::from(x)))
            });
        fnv([self.cpu_milli, self.memory_mib].into_iter().chain(device))
    }
}

/// The most states (and ranks) a memo keeps; it starts over when full.
const MEMO_CAP: usize = 1 << 16;

impl Clone for RankMemo {
    fn clone(&self) -> RankMemo {
        RankMemo::default()
    }
}

impl core::fmt::Debug for RankMemo {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RankMemo")
    }
}

/// What a ranker ranks by.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The mix's measure (Stranding or FGD, its kernel's).
    Measure,
    /// A uniform draw: a hash of this seed, the pod and the node.
    Random(u64),
    /// The free resources' alignment with the pod's requests, largest first.
    Dot,
}

/// Ranks candidate nodes for one placement (see the module docs).
pub(crate) struct Ranker<'c> {
    cluster: &'c Cluster,
    kind: Kind,
    mix: Arc<ResolvedMix>,
    /// The cluster's tracked table holds this mix's values.
    tracked: bool,
    weights: Weights,
    seed: Option<u64>,
    memo: RankMemo,
    symbols: (Option<Symbol>, Option<Symbol>),
}

/// FNV-1a over 64-bit words: fixed, so every table is the same everywhere.
fn fnv(words: impl IntoIterator<Item = u64>) -> u64 {
    words.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, x| {
        (h ^ x).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// [`fnv`] over a state key's numbers.
pub(crate) fn hash_key(k: &StateKey) -> u64 {
    let devices = k
        .devices
        .iter()
        .map(|&(m, u, g)| u64::from(m) | (u64::from(u) << 32) | (u64::from(g) << 48));
    fnv([k.cpu_milli, k.memory_mib].into_iter().chain(devices))
}

/// SplitMix64's finaliser.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a over the bytes: fixed, so draws are the same everywhere.
pub(crate) fn hash_str(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// An `i64` that orders as `x` does (total order; `-0.0 < 0.0`, NaN above all).
pub(crate) fn ordered(x: f64) -> i64 {
    let bits = x.to_bits().cast_signed();
    if bits < 0 { bits ^ i64::MAX } else { bits }
}

/// The `f64` of an [`ordered`] rank.
pub(crate) fn unordered(r: i64) -> f64 {
    let bits = if r < 0 { r ^ i64::MAX } else { r };
    f64::from_bits(bits.cast_unsigned())
}

/// FGD ranks: `99 − score` above 32 bits of tie-break.
const FGD_SHIFT: u32 = 32;

impl Cluster {
    /// A ranker for `kernel` over `mix`: the tracked table's when it tracks this
    /// kernel and this mix (or any, when `mix` is `None`); else `mix` resolved now.
    /// `None` when `mix` is `None` and nothing matching is tracked.
    pub(crate) fn ranker(
        &self,
        kernel: ScoreKernel,
        mix: Option<&ShapeMix>,
        seed: Option<u64>,
        memo: RankMemo,
    ) -> Option<Ranker<'_>> {
        let tracked = self
            .scores
            .as_ref()
            .filter(|t| t.mix.kernel == kernel && mix.is_none_or(|m| *m == t.mix.source));
        let (mix, tracked) = match (tracked, mix) {
            (Some(t), _) => (Arc::clone(&t.mix), true),
            (None, Some(m)) => (Arc::new(self.resolve_mix(kernel, m.clone())), false),
            (None, None) => return None,
        };
        let weights = match kernel {
            ScoreKernel::Stranding(w) => Weights::from(w),
            ScoreKernel::Fgd => Weights::from(crate::StrandingWeights::default()),
        };
        Some(Ranker {
            cluster: self,
            kind: Kind::Measure,
            mix,
            tracked,
            weights,
            seed,
            memo: if tracked { memo } else { RankMemo::default() },
            symbols: self.cpu_mem_symbols(),
        })
    }

    /// A ranker for a baseline: Random with `Some(seed)`, DotProduct with `None`.
    pub(crate) fn baseline_ranker(&self, seed: Option<u64>) -> Ranker<'_> {
        let empty = crate::ShapeMix::default();
        Ranker {
            cluster: self,
            kind: seed.map_or(Kind::Dot, Kind::Random),
            mix: Arc::new(self.resolve_empty(ScoreKernel::Fgd, empty)),
            tracked: false,
            weights: Weights::from(crate::StrandingWeights::default()),
            seed,
            memo: RankMemo::default(),
            symbols: self.cpu_mem_symbols(),
        }
    }

    /// Whether node `n` has a device allocated, even in part (a share, a hold): what
    /// breaks the wholeness of the domains it is in. Tainted or ineligible devices do
    /// not count: nothing holds them.
    pub(crate) fn node_touched(&self, n: NodeId) -> bool {
        let (rooms, _) = self.node_rooms(n);
        self.nodes_ordered(n).iter().any(|&d| {
            let Some(slot) = self.devices[d.index()].as_ref() else {
                return false;
            };
            if slot.flags & super::SHAREABLE == 0 {
                // FREE is clear exactly while an allocation or a hold takes it.
                return slot.flags & super::FREE == 0;
            }
            rooms.iter().find(|r| r.dev == d).is_some_and(|r| {
                r.caps
                    .iter()
                    .zip(self.device_of(d).capacity.values())
                    .any(|(c, cap)| c.left < cap.value)
            })
        })
    }

    /// The value of a device attribute on node `n`'s first device that has it:
    /// `name` as a qualified name (`domain/name`), or a name under the device's driver.
    pub(crate) fn node_device_attribute(&self, n: NodeId, name: &str) -> Option<String> {
        self.nodes_ordered(n).iter().find_map(|&d| {
            let slot = self.devices[d.index()].as_ref()?;
            let e = self.slice_entry(slot.slice);
            let device = &e.slice.devices[slot.pos as usize];
            let value = device.attributes.get(name).or_else(|| {
                let (domain, short) = name.split_once('/')?;
                (domain == e.slice.driver)
                    .then(|| device.attributes.get(short))
                    .flatten()
            })?;
            Some(format!("{value:?}"))
        })
    }

    /// [`hash_str`] of node `n`'s name.
    fn node_name_hash(&self, n: NodeId) -> u64 {
        self.nodes
            .get(n.index())
            .map_or_else(|| hash_str(""), |e| e.name_hash)
    }

    /// Whether a table tracks `kernel` (with any mix).
    pub(crate) fn tracks(&self, kernel: ScoreKernel) -> bool {
        self.scores.as_ref().is_some_and(|t| t.mix.kernel == kernel)
    }

    /// Takes the tracked table's memo, for a placement that ranks (see
    /// [`Ranker::into_memo`]); an empty one when nothing is tracked.
    pub(crate) fn take_rank_memo(&mut self) -> RankMemo {
        self.scores
            .as_mut()
            .map(|t| core::mem::take(&mut t.memo))
            .unwrap_or_default()
    }

    /// Gives a memo taken with [`Cluster::take_rank_memo`] back to the tracked table.
    pub(crate) fn restore_rank_memo(&mut self, memo: RankMemo) {
        if let Some(t) = self.scores.as_mut() {
            t.memo = memo;
        }
    }
}

impl Ranker<'_> {
    /// The memo, when it belongs to the tracked mix (else an empty one).
    pub(crate) fn into_memo(self) -> RankMemo {
        if self.tracked {
            self.memo
        } else {
            RankMemo::default()
        }
    }

    /// What a pod with scalar `requests` and own claims `specs` takes: its CPU and
    /// memory, and its first device request (first alternative) whose class has
    /// devices the mix measures.
    pub(crate) fn pod_take(
        &mut self,
        name: &str,
        requests: &BTreeMap<String, Quantity>,
        specs: &[&ResourceClaimSpec],
    ) -> PodTake {
        let amount = |k: &str| requests.get(k).copied().unwrap_or_default();
        let mix = &self.mix;
        let device = specs
            .iter()
            .flat_map(|spec| spec.requests.iter())
            .find_map(|r| {
                let view = r.alternatives().into_iter().next()?;
                if view.admin_access {
                    return None;
                }
                let set = self.cluster.class_devices(view.device_class_name)?;
                if !set.intersects(&mix.set) {
                    return None;
                }
                let count = match view.allocation_mode {
                    AllocationMode::ExactCount(n) => n.max(1),
                    AllocationMode::All => return None,
                };
                let amount = mix
                    .share_key
                    .as_deref()
                    .and_then(|k| view.capacity.get(k))
                    .copied();
                let mut shares: SmallVec<[u32; 2]> = SmallVec::from_slice(&[WHOLE]);
                shares.extend(mix.units.iter().map(|u| share_of(amount, Some(*u))));
                let share = shares.get(1).copied().unwrap_or(WHOLE);
                // The devices the pod may take: a shape's of the same class and
                // selectors (resolved with the mix), else its selectors evaluated on
                // the class's devices the mix measures.
                let same = mix.source.shapes.iter().position(|s| {
                    s.device_class_name == view.device_class_name && s.selectors == view.selectors
                });
                let allowed = match same {
                    Some(i) => mix.shapes[i].allowed.clone(),
                    None if view.selectors.is_empty() => set.clone(),
                    None => {
                        let mut within = set.clone();
                        within.intersect_with(&mix.set);
                        self.cluster.devices_matching(&within, view.selectors)
                    }
                };
                Some(ScoredShape {
                    weight: 1,
                    frequency: 0.0,
                    cpu_milli: 0,
                    memory_mib: 0,
                    count,
                    share,
                    shares,
                    allowed,
                    restricted: !view.selectors.is_empty(),
                })
            });
        let demand = match self.kind {
            Kind::Dot => self.dot_demand(specs),
            Kind::Measure | Kind::Random(_) => 0,
        };
        let cpu_milli = scores::cpu_milli_needed(amount("cpu"));
        let memory_mib = scores::mib_needed(amount("memory"));
        let group = match (&device, self.kind) {
            (_, Kind::Random(_) | Kind::Dot) => None,
            _ if !self.tracked => None,
            (None, Kind::Measure) => Some(None),
            (Some(d), Kind::Measure) => self.by_group(d).map(Some),
        };
        let by_state = group.and_then(|group| {
            let key = TakeKey {
                cpu_milli,
                memory_mib,
                device: device
                    .as_ref()
                    .zip(group)
                    .map(|(d, g)| (d.count, d.share, d.shares.clone(), g, d.restricted)),
            };
            self.memo.takes.number(key.hash(), key, MEMO_CAP)
        });
        PodTake {
            cpu_milli,
            memory_mib,
            device,
            name_hash: hash_str(name),
            by_state,
            demand,
        }
    }

    /// Whether `shape`'s devices are a union of the mix's groups (every device of a
    /// group in it, or none), and which: those of a shape of the mix (`i + 1`; groups
    /// are made of the shapes' sets), or every device of the mix (0).
    fn by_group(&self, shape: &ScoredShape) -> Option<u32> {
        let mix = &self.mix;
        if let Some(i) = mix.shapes.iter().position(|s| s.allowed == shape.allowed) {
            return u32::try_from(i + 1).ok();
        }
        mix.set.is_subset(&shape.allowed).then_some(0)
    }

    /// [`PodTake::demand`] of a pod whose own claims are `specs`.
    fn dot_demand(&self, specs: &[&ResourceClaimSpec]) -> u64 {
        let Some(view) = specs
            .iter()
            .flat_map(|spec| spec.requests.iter())
            .find_map(|r| r.alternatives().into_iter().next())
        else {
            return 0;
        };
        let count = match view.allocation_mode {
            AllocationMode::ExactCount(n) => u64::from(n.max(1)),
            AllocationMode::All => 1,
        };
        let share = view
            .capacity
            .iter()
            .next()
            .and_then(|(key, amount)| {
                let class = self.cluster.class_devices(view.device_class_name)?;
                let value = class
                    .iter()
                    .find_map(|d| self.cluster.device_of(d).capacity.get(key))?
                    .value;
                Some(scores::share_taken(*amount, value))
            })
            .unwrap_or(WHOLE);
        count * u64::from(share)
    }

    /// DotProduct's alignment of node `n` with the pod: `Σ (request / capacity) ·
    /// (free / capacity)` over CPU, memory and the node's devices' shares.
    #[allow(clippy::cast_precision_loss)] // milli-units of one node: exact in f64
    fn dot(&self, n: NodeId, pod: &PodTake) -> f64 {
        let Some(node) = self.cluster.node_by_id(n) else {
            return 0.0;
        };
        let cap = |k: &str| node.allocatable.get(k).copied().unwrap_or_default();
        let (cpu_cap, mem_cap) = (
            scores::free_cpu_milli(cap("cpu")),
            scores::free_mib(cap("memory")),
        );
        let (cpu, mem) = self.cluster.free_cpu_mem_of(n, self.symbols);
        let (gpu_cap, gpu_free) = self.cluster.node_shares(n);
        let part = |want: u64, free: u64, cap: u64| {
            if cap == 0 {
                0.0
            } else {
                (want as f64 / cap as f64) * (free as f64 / cap as f64)
            }
        };
        part(pod.cpu_milli, cpu, cpu_cap)
            + part(pod.memory_mib, mem, mem_cap)
            + part(pod.demand, gpu_free, gpu_cap)
    }

    /// Node `n`'s devices of the mix, as the measures read them.
    fn devices(&self, n: NodeId) -> SmallVec<[DeviceFree; 8]> {
        match self.cluster.scores.as_ref() {
            Some(t) if self.tracked && n.index() < t.devices.len() => t.devices[n.index()].clone(),
            _ => self.cluster.mix_devices(&self.mix, n),
        }
    }

    /// The measure and deficit of a state, computed once per call.
    fn measured(&mut self, cpu_milli: u64, memory_mib: u64, devices: &[DeviceFree]) -> Measured {
        let key = StateKey::of(cpu_milli, memory_mib, devices, &self.mix);
        let h = hash_key(&key);
        if let Some((_, _, m)) = self.memo.table.find(h, |(kh, k, _)| *kh == h && *k == key) {
            return *m;
        }
        if self.memo.table.len() >= MEMO_CAP {
            self.memo.table.clear();
        }
        let node = NodeFree {
            cpu_milli,
            memory_mib,
            devices,
        };
        let m = self.mix.measure(&node);
        self.memo
            .table
            .insert_unique(h, (h, key, m), |(kh, _, _)| *kh);
        m
    }

    /// The rank of node `n` for pod `pod` (lower is better; equal ranks keep name
    /// order). Stranding: the score as an ordered `i64`; FGD: `99 − score`, ties
    /// broken by a hash of the seed, the pod and the node when seeded.
    pub(crate) fn rank(&mut self, n: NodeId, pod: &PodTake) -> i64 {
        match self.kind {
            Kind::Measure => {}
            Kind::Random(seed) => return (self.draw(seed, n, pod) >> 1).cast_signed(),
            Kind::Dot => return ordered(-self.dot(n, pod)),
        }
        let rank = match self.state_rank(n, pod) {
            Some(r) => r,
            None => self.measure_rank(n, pod),
        };
        match self.mix.kernel {
            ScoreKernel::Stranding(_) => rank,
            ScoreKernel::Fgd => {
                let tie = self
                    .seed
                    .map_or(0, |seed| self.draw(seed, n, pod) >> FGD_SHIFT);
                rank | tie.cast_signed()
            }
        }
    }

    /// A uniform draw for `pod` on node `n`: a hash of `seed`, the pod's name and
    /// the node's (Random's rank, FGD's seeded tie-break).
    fn draw(&self, seed: u64, n: NodeId, pod: &PodTake) -> u64 {
        let node = self.cluster.node_name_hash(n);
        splitmix(seed ^ splitmix(pod.name_hash ^ splitmix(node)))
    }

    /// [`Ranker::measure_rank`] through the memo's ranks of node states, when the
    /// table is tracked and the pod's rank is a function of the state
    /// ([`PodTake::by_state`]); `None` otherwise.
    fn state_rank(&mut self, n: NodeId, pod: &PodTake) -> Option<i64> {
        let pod_id = pod.by_state?;
        let t = self.cluster.scores.as_ref().filter(|_| self.tracked)?;
        let state = *t.state.get(n.index()).filter(|&&s| s != u32::MAX)?;
        let key = (u64::from(pod_id) << 32) | u64::from(state);
        let h = splitmix(key);
        if let Some(&(_, rank)) = self.memo.ranks.find(h, |(k, _)| *k == key) {
            return Some(rank);
        }
        let rank = self.measure_rank(n, pod);
        if self.memo.ranks.len() >= MEMO_CAP {
            self.memo.ranks.clear();
        }
        self.memo
            .ranks
            .insert_unique(h, (key, rank), |(k, _)| splitmix(*k));
        Some(rank)
    }

    /// The rank of node `n` for `pod` under the mix's measure, without FGD's
    /// per-node tie-break.
    fn measure_rank(&mut self, n: NodeId, pod: &PodTake) -> i64 {
        let devices = self.devices(n);
        let (cpu, mem) = self.cluster.free_cpu_mem_of(n, self.symbols);
        let before = match self.cluster.scores.as_ref() {
            Some(t) if self.tracked && n.index() < t.values.len() => {
                let v = t.values[n.index()];
                Measured {
                    measure: v.measure,
                    deficit: v.deficit,
                }
            }
            _ => self.measured(cpu, mem, &devices),
        };
        let mut after = devices.clone();
        let taken: SmallVec<[DeviceId; 8]> = pod
            .device
            .as_ref()
            .and_then(|s| scores::first_fit(&mut after, s))
            .map(|at| at.iter().map(|&i| devices[i].id).collect())
            .unwrap_or_default();
        let (cpu_after, mem_after) = (
            cpu.saturating_sub(pod.cpu_milli),
            mem.saturating_sub(pod.memory_mib),
        );
        let measured_after = self.measured(cpu_after, mem_after, &after);
        match self.mix.kernel {
            ScoreKernel::Stranding(_) => {
                let free_after: u64 = after.iter().map(|d| u64::from(d.milli)).sum();
                let scarcity = pod.device.as_ref().map_or(0.0, |s| {
                    scores::scarcity(s.demand(), s.restricted, &taken, &self.mix.pressure)
                });
                ordered(scores::stranding_score(
                    &self.weights,
                    before,
                    measured_after,
                    free_after,
                    scarcity,
                ))
            }
            ScoreKernel::Fgd => {
                let s = scores::fgd_score(before.measure, measured_after.measure);
                i64::from(99 - s) << FGD_SHIFT
            }
        }
    }

    /// The value a rank stands for, additive across pods (a domain's score sums them):
    /// Stranding's score, FGD's `99 − score`.
    #[allow(clippy::cast_precision_loss)] // a domain's order only
    pub(crate) fn value(&self, rank: i64) -> f64 {
        match self.kind {
            Kind::Measure => {}
            Kind::Random(_) => return rank as f64,
            Kind::Dot => return unordered(rank),
        }
        match self.mix.kernel {
            ScoreKernel::Stranding(_) => unordered(rank),
            ScoreKernel::Fgd => f64::from((rank >> FGD_SHIFT) as i32),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ordered, unordered};

    #[test]
    fn ordered_ranks_sort_as_their_floats() {
        let xs = [
            f64::NEG_INFINITY,
            -1e300,
            -2.5,
            -0.0,
            0.0,
            1e-300,
            0.001,
            2.5,
            1e300,
            f64::INFINITY,
        ];
        for w in xs.windows(2) {
            assert!(ordered(w[0]) < ordered(w[1]), "{} < {}", w[0], w[1]);
        }
        for x in xs {
            assert_eq!(unordered(ordered(x)).to_bits(), x.to_bits());
        }
    }
}
