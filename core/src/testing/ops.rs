//! An operation-sequence driver for a [`Scheduler`] (feature `testing`): what a
//! controller does to one — add and remove pods, PodGroups and claims, publish and
//! withdraw ResourceSlices, taint devices and nodes, write DeviceTaintRules, run
//! cycles, move the clock, and follow a live cluster: nodes joining, relabelled,
//! cordoned, resized and leaving with their pods, DeviceClasses changed, pods bound
//! and claims allocated by another scheduler, a gang's `minCount` changed — as plain
//! data ([`Op`]), drawn from raw bytes (for fuzzing) or from a seeded generator (for
//! soaks), and applied by a [`Driver`] that checks that a refused operation leaves the
//! scheduler exactly as it was.
//!
//! Every byte string decodes to some operation sequence ([`ByteSource`] reads zeros
//! past its end and [`Driver::draw`] accepts any value), and many of them are
//! deliberately wrong: dangling references, duplicate names, removals of objects that
//! do not exist, pods too big for any node, claims of a class that does not exist,
//! immutable fields changed. Operations name existing objects by index modulo the
//! live set, so most of them hit something; nodes by index modulo the nodes the driver
//! has known (the starting ones, then those added fresh; removed ones included).
//!
//! ```
//! use gangpack::testing::{ClusterShape, Driver, Limits, SplitMix64, audit_scoped};
//!
//! let shape = ClusterShape { nodes: 4, gpus_per_node: 2, nodes_per_rack: 2, shared_gpus: 1 };
//! let mut driver = Driver::new(&shape, Limits::default());
//! let mut rng = SplitMix64::new(7);
//! for _ in 0..200 {
//!     let op = driver.draw(&mut rng);
//!     // Err: the op was refused and changed something, or broke an invariant.
//!     driver.step(&op).unwrap();
//! }
//! assert!(driver.stats().applied > 0 && driver.stats().refused > 0);
//! // What the driver knows (claims someone else allocated, nodes resized under their
//! // pods, ...) is part of the audit.
//! assert!(audit_scoped(driver.scheduler(), driver.scope()).is_empty());
//! ```

use core::fmt;

mod live;

pub use live::{ClaimChange, ClassSpec, NodeChange, NodeJoin, PodChange};

use super::audit::{AuditScope, Finding, audit_scoped};
use super::generate::{DEVICE_TAINT_KEY, DRIVER, GPU_CLASS, NAMESPACE, NODE_TAINT_KEY, RACK_LABEL};
use crate::alloc_prelude::*;
use crate::{
    AllocationMode, ClaimSource, Cluster, CycleReport, Device, DeviceAttribute, DeviceClass,
    DeviceRef, DeviceRequest, DeviceTaint, DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector,
    DeviceToleration, DeviceTolerationOperator, DisruptionMode, EvictionReport, ExactDeviceRequest,
    GangOptions, Node, NodeAccess, Pod, PodEviction, PodGroup, PodGroupResourceClaim,
    PodResourceClaim, PreemptionPolicy, Quantity, ResourceClaim, ResourceSlice, Scheduler,
    SchedulerError, SchedulingPolicy, SliceNodeSelection, Taint, TaintEffect, Time, Toleration,
    TolerationOperator, TopologyConstraint, Unit, UnitResult,
};

// ------------------------------------------------------------------- sources

/// Where operations come from: a stream of numbers.
pub trait Source {
    /// The next byte.
    fn byte(&mut self) -> u8;

    /// Whether the source has run dry (a byte source at its end). Generators never do.
    fn is_exhausted(&self) -> bool {
        false
    }

    /// A number below `n` (`n` at least 1), from one byte (or two for `n > 256`).
    fn below(&mut self, n: usize) -> usize {
        let n = n.max(1);
        let raw = if n > 256 {
            usize::from(u16::from_le_bytes([self.byte(), self.byte()]))
        } else {
            usize::from(self.byte())
        };
        raw % n
    }

    /// An index into a live set (taken modulo its size when it is resolved).
    fn index(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// True with probability about `num / 256`.
    fn chance(&mut self, num: u8) -> bool {
        self.byte() < num
    }
}

/// A byte cursor over a fuzzer's input: each call takes the next byte, zeros once the
/// input is used up ([`is_exhausted`](Source::is_exhausted) then says so).
#[derive(Clone, Debug)]
pub struct ByteSource<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> ByteSource<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> ByteSource<'a> {
        ByteSource { data, at: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.at)
    }
}

impl Source for ByteSource<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at = self.at.saturating_add(1);
        b
    }

    fn is_exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
}

/// A small seeded generator (SplitMix64): the same seed gives the same numbers on
/// every platform.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl Source for SplitMix64 {
    fn byte(&mut self) -> u8 {
        self.next_u64().to_le_bytes()[0]
    }

    fn below(&mut self, n: usize) -> usize {
        let n = u64::try_from(n.max(1)).unwrap_or(u64::MAX);
        usize::try_from(self.next_u64() % n).unwrap_or(0)
    }
}

// ------------------------------------------------------------------- the cluster

/// The starting cluster: `nodes` nodes (`node-0`, ...; 64 cpu, 256Gi, 110 pods; rack
/// label `rack-{i / nodes_per_rack}`), each publishing `gpus_per_node` GPUs in its
/// own pool (`node-{i}`, slice `node-{i}-gpus`), and `shared_gpus` network-attached
/// GPUs every node reaches (pool `fabric`, slice `fabric`). One DeviceClass,
/// [`GPU_CLASS`], selects the driver's devices; the rack label is a tracked
/// topology key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterShape {
    /// Nodes (at least 1).
    pub nodes: u16,
    /// GPUs per node.
    pub gpus_per_node: u8,
    /// Nodes per rack (at least 1).
    pub nodes_per_rack: u16,
    /// Network-attached GPUs (0: no `fabric` slice).
    pub shared_gpus: u8,
}

impl ClusterShape {
    /// A small shape from the first three bytes of `src` (1–8 nodes, 0–3 GPUs each,
    /// 1–2 nodes per rack, 0–1 shared GPUs), as the fuzz target derives its cluster.
    pub fn draw(src: &mut impl Source) -> ClusterShape {
        let a = src.byte();
        let b = src.byte();
        ClusterShape {
            nodes: 1 + u16::from(a % 8),
            gpus_per_node: (a >> 3) % 4,
            nodes_per_rack: 1 + u16::from(b % 2),
            shared_gpus: (b >> 1) % 2,
        }
    }

    /// The scheduler over the starting cluster, with `options`.
    ///
    /// # Panics
    ///
    /// Never for a shape (the objects are valid by construction).
    pub fn build(&self, options: GangOptions) -> Scheduler {
        let mut c = Cluster::new();
        c.put_class(DeviceClass::with_cel(
            GPU_CLASS,
            format!("device.driver == \"{DRIVER}\""),
        ))
        .expect("a valid class");
        for i in 0..self.nodes.max(1) {
            c.add_node(node(i, self.nodes_per_rack))
                .expect("a valid node");
            if self.gpus_per_node > 0 {
                c.add_slice(node_slice(
                    &format!("node-{i}-gpus"),
                    &format!("node-{i}"),
                    &SliceSpec {
                        generation: 0,
                        count: 1,
                        gpus: self.gpus_per_node,
                        first: 0,
                        taint: None,
                    },
                ))
                .expect("a valid slice");
            }
        }
        if self.shared_gpus > 0 {
            let mut s = ResourceSlice::node_local("fabric", DRIVER, "node-0", "fabric");
            s.node_selection = SliceNodeSelection::Slice(NodeAccess::AllNodes);
            s.devices = (0..self.shared_gpus).map(gpu).collect();
            c.add_slice(s).expect("a valid slice");
        }
        c.track_topology_key(RACK_LABEL);
        Scheduler::new(c, options)
    }
}

fn node(i: u16, per_rack: u16) -> Node {
    let name = format!("node-{i}");
    Node::new(&name)
        .with_label("kubernetes.io/hostname", &name)
        .with_label(RACK_LABEL, format!("rack-{}", i / per_rack.max(1)))
        .with_allocatable("cpu", Quantity::from_int(64))
        .with_allocatable("memory", Quantity::parse("256Gi").expect("a quantity"))
        .with_allocatable("pods", Quantity::from_int(110))
}

fn gpu(k: u8) -> Device {
    Device::new(format!("gpu-{k}")).with_attribute("index", DeviceAttribute::Int(i64::from(k)))
}

fn node_slice(name: &str, node: &str, spec: &SliceSpec) -> ResourceSlice {
    let mut s = ResourceSlice::node_local(name, DRIVER, node, node);
    s.pool.generation = i64::from(spec.generation);
    s.pool.resource_slice_count = i64::from(spec.count.max(1));
    s.devices = (0..spec.gpus)
        .map(|k| gpu(spec.first.saturating_add(k)))
        .collect();
    if let (Some(t), Some(d)) = (&spec.taint, s.devices.first_mut()) {
        d.taints.push(t.device_taint());
    }
    s
}

// ------------------------------------------------------------------- operations

/// An object named by an operation: one that exists (index modulo the live set), or a
/// name that does not (a dangling reference).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// The `i % n`-th of the `n` live objects (by key); a missing name when there are
    /// none.
    Live(u16),
    /// Like `Live`, among the idle ones only: pending pods, unallocated claims.
    Idle(u16),
    /// A name no object has.
    Absent(u16),
}

/// The name of a new object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NewName {
    /// A fresh name.
    Fresh,
    /// The name of the `i % n`-th live object of the kind: a duplicate.
    Taken(u16),
}

/// What a new pod, group or claim refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refer {
    /// Nothing.
    None,
    /// The object of that kind the driver added last (a pod's own claim, a gang's
    /// next member).
    Newest,
    /// An object picked as [`Pick`] says.
    Pick(Pick),
}

/// A device taint as an operation writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaintSpec {
    /// Key: [`DEVICE_TAINT_KEY`], the rule key `gangpack.dev/drain`, or `example.com/other`.
    pub key: u8,
    /// Value `a` or `b`.
    pub value: u8,
    /// `None`, `NoSchedule`, `NoExecute`.
    pub effect: u8,
    /// `timeAdded` this many seconds before now (saturating at zero), or unset.
    pub ago: Option<u8>,
}

const DEVICE_KEYS: [&str; 3] = [DEVICE_TAINT_KEY, "gangpack.dev/drain", "example.com/other"];

impl TaintSpec {
    fn draw(src: &mut impl Source) -> TaintSpec {
        TaintSpec {
            key: src.byte() % 3,
            value: src.byte() % 2,
            effect: src.byte() % 3,
            ago: if src.chance(64) {
                Some(src.byte() % 120)
            } else {
                None
            },
        }
    }

    fn device_taint(self) -> DeviceTaint {
        DeviceTaint {
            key: DEVICE_KEYS[usize::from(self.key) % 3].into(),
            value: ["a", "b"][usize::from(self.value) % 2].into(),
            effect: device_effect(self.effect),
            time_added: None,
        }
    }

    fn stamped(self, now: Time) -> DeviceTaint {
        let mut t = self.device_taint();
        t.time_added = self.ago.map(|a| Time((now.0 - i64::from(a)).max(0)));
        t
    }
}

fn device_effect(e: u8) -> DeviceTaintEffect {
    match e % 3 {
        0 => DeviceTaintEffect::None,
        1 => DeviceTaintEffect::NoSchedule,
        _ => DeviceTaintEffect::NoExecute,
    }
}

fn node_effect(e: u8) -> TaintEffect {
    match e % 3 {
        0 => TaintEffect::PreferNoSchedule,
        1 => TaintEffect::NoSchedule,
        _ => TaintEffect::NoExecute,
    }
}

/// A ResourceSlice of a node's pool as an operation publishes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceSpec {
    /// `pool.generation`.
    pub generation: u8,
    /// `pool.resourceSliceCount` (0 is read as 1).
    pub count: u8,
    /// GPUs, `gpu-{first}` on.
    pub gpus: u8,
    /// The first GPU's index (overlapping another slice's makes a duplicate).
    pub first: u8,
    /// A taint on the first GPU.
    pub taint: Option<TaintSpec>,
}

impl SliceSpec {
    fn draw(src: &mut impl Source) -> SliceSpec {
        SliceSpec {
            generation: src.byte() % 4,
            count: 1 + src.byte() % 2,
            gpus: src.byte() % 4,
            first: src.byte() % 4,
            taint: if src.chance(96) {
                Some(TaintSpec::draw(src))
            } else {
                None
            },
        }
    }
}

/// A new pod.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PodSpec {
    /// Its name.
    pub name: NewName,
    /// CPU request, 1–16 (0: none).
    pub cpu: u8,
    /// Priority: 0, 10 or 100.
    pub priority: u8,
    /// `preemptionPolicy: Never`.
    pub never: bool,
    /// Node tolerations: none, `NoSchedule`, `NoExecute` forever, `NoExecute` for 30s,
    /// any effect (of [`NODE_TAINT_KEY`]).
    pub tolerations: u8,
    /// The claim it names (`resourceClaimName`).
    pub claim: Refer,
    /// The PodGroup it belongs to (`schedulingGroup`).
    pub group: Refer,
    /// Also names its group's claim (when the group has one).
    pub group_claim: bool,
    /// Added running on this node (`nodeName`, index modulo the known nodes; claims must
    /// be allocated already), instead of pending.
    pub running_on: Option<u16>,
    /// A `nodeSelector` on the pool label `gangpack.dev/pool`: value `a` (0) or `b`
    /// (1). No starting node has the label: such a pod waits for an
    /// [`Op::UpdateNode`] to give a node its value.
    pub pool: Option<u8>,
}

/// A new PodGroup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupSpec {
    /// Its name.
    pub name: NewName,
    /// `gang: {minCount}` (0: the `basic` policy).
    pub min_count: u8,
    /// `disruptionMode: All`.
    pub all: bool,
    /// A rack topology constraint.
    pub rack: bool,
    /// Priority: 0, 10 or 100.
    pub priority: u8,
    /// A group claim (`resourceClaims`, named `shared`).
    pub claim: Refer,
}

/// A new ResourceClaim asking for GPUs of [`GPU_CLASS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimSpec {
    /// Its name.
    pub name: NewName,
    /// GPUs (`ExactCount`, 0 is read as 1), or every GPU a node reaches (`All`) when 4.
    pub gpus: u8,
    /// Device tolerations: none, `NoSchedule`, `NoExecute` forever, `NoExecute` for 20s,
    /// any effect (the eviction quirk), of the taint key picked by `tolerations / 5`.
    pub tolerations: u8,
    /// A class that does not exist (the unit fails).
    pub bad_class: bool,
}

/// A DeviceTaintRule's selector: the driver, a node's pool, a GPU (each optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleSpec {
    /// Select by the driver.
    pub driver: bool,
    /// Select a node's pool (index modulo the known nodes).
    pub pool: Option<u16>,
    /// Select `gpu-{k}`.
    pub device: Option<u8>,
    /// The taint.
    pub taint: TaintSpec,
}

impl RuleSpec {
    fn draw(src: &mut impl Source) -> RuleSpec {
        RuleSpec {
            driver: src.chance(200),
            pool: if src.chance(200) {
                Some(src.index())
            } else {
                None
            },
            device: if src.chance(128) {
                Some(src.byte() % 4)
            } else {
                None
            },
            taint: TaintSpec::draw(src),
        }
    }
}

/// One thing a controller does to a [`Scheduler`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// [`Scheduler::add_pod`].
    AddPod(PodSpec),
    /// [`Scheduler::remove_pod`] of any pod.
    RemovePod(Pick),
    /// A bound pod completes: [`Scheduler::remove_pod`] of the `i % n`-th bound pod.
    CompletePod(u16),
    /// [`Scheduler::add_group`].
    AddGroup(GroupSpec),
    /// [`Scheduler::remove_group`].
    RemoveGroup(Pick),
    /// [`Scheduler::add_claim`].
    AddClaim(ClaimSpec),
    /// [`Scheduler::remove_claim`].
    RemoveClaim(Pick),
    /// [`Scheduler::add_slice`] of a slice of a node's pool (index modulo the known
    /// nodes).
    AddSlice {
        /// Its name (fresh: `node-{i}-extra-{k}`).
        name: NewName,
        /// The node.
        node: u16,
        /// The slice.
        spec: SliceSpec,
    },
    /// [`Scheduler::replace_slice`]: the picked slice republished with `spec` (a node
    /// slice keeps its pool; the `fabric` slice keeps its devices and takes the taint).
    ReplaceSlice {
        /// The slice.
        slice: Pick,
        /// What it publishes now.
        spec: SliceSpec,
    },
    /// [`Scheduler::remove_slice`].
    RemoveSlice(Pick),
    /// [`Scheduler::taint_device`] of `gpu-{gpu}` of a node's pool (`node` index modulo
    /// the known nodes; the `fabric` pool when `node` is `u16::MAX`).
    TaintDevice {
        /// The node.
        node: u16,
        /// The GPU index (it may not exist).
        gpu: u8,
        /// The taint.
        taint: TaintSpec,
    },
    /// [`Scheduler::untaint_device`] (the effect too when set).
    UntaintDevice {
        /// The node.
        node: u16,
        /// The GPU index.
        gpu: u8,
        /// The key, as [`TaintSpec::key`].
        key: u8,
        /// The effect, as [`TaintSpec::effect`].
        effect: Option<u8>,
    },
    /// [`Scheduler::taint_node`] with a taint of [`NODE_TAINT_KEY`] or `example.com/node`.
    TaintNode {
        /// The node (a missing one when [`Pick::Absent`]).
        node: Pick,
        /// Key index.
        key: u8,
        /// `PreferNoSchedule`, `NoSchedule`, `NoExecute`.
        effect: u8,
    },
    /// [`Scheduler::untaint_node`].
    UntaintNode {
        /// The node.
        node: Pick,
        /// Key index.
        key: u8,
        /// The effect, when set.
        effect: Option<u8>,
    },
    /// [`Scheduler::add_taint_rule`].
    AddRule {
        /// Its name.
        name: NewName,
        /// The rule.
        spec: RuleSpec,
    },
    /// [`Scheduler::replace_taint_rule`] of a rule by name (a missing name fails).
    ReplaceRule {
        /// The rule.
        rule: Pick,
        /// What it is now.
        spec: RuleSpec,
    },
    /// [`Scheduler::remove_taint_rule`].
    RemoveRule(Pick),
    /// [`Scheduler::cycle`].
    Cycle,
    /// [`Scheduler::refresh_evictions`].
    RefreshEvictions,
    /// [`Scheduler::advance`] the clock by this many seconds.
    Advance(u16),
    /// [`Scheduler::add_node`]: a node joins — one removed earlier coming back, a
    /// fresh one, or a duplicate — and, with `slice`, publishes its GPUs
    /// ([`Scheduler::add_slice`] of `{node}-gpus`) unless its pool still has a slice.
    AddNode {
        /// Which node.
        join: NodeJoin,
        /// Publish its slice too.
        slice: bool,
    },
    /// [`Scheduler::update_node`] (a new Node object), or [`Scheduler::cordon_node`].
    UpdateNode {
        /// The node (a missing one when [`Pick::Absent`], or a removed one).
        node: Pick,
        /// What changes.
        change: NodeChange,
    },
    /// [`Scheduler::remove_node`]: the pods bound to it are deleted with it; with
    /// `slices`, its node-local slices are withdrawn after it
    /// ([`Scheduler::remove_slice`], as the driver or the garbage collector does),
    /// otherwise they stay, unreachable until it comes back.
    RemoveNode {
        /// The node.
        node: Pick,
        /// Withdraw its slices too.
        slices: bool,
    },
    /// [`Scheduler::put_device_class`].
    PutClass(ClassSpec),
    /// [`Scheduler::remove_device_class`] of [`GPU_CLASS`] (`class % 4 == 0`) or of
    /// the class `bad_class` claims name.
    RemoveClass(u8),
    /// [`Scheduler::update_pod`]: a newer version of a pod, as another scheduler or
    /// the user writes it.
    UpdatePod {
        /// The pod.
        pod: Pick,
        /// What changes.
        change: PodChange,
    },
    /// [`Scheduler::update_claim`]: a newer version of a claim, its
    /// `status.allocation` written by someone else.
    UpdateClaim {
        /// The claim.
        claim: Pick,
        /// What changes.
        change: ClaimChange,
    },
    /// [`Scheduler::update_group`]: a PodGroup's `minCount` changed (0: the `basic`
    /// policy; with `disruptionMode: All` that is invalid and refused).
    UpdateGroup {
        /// The group.
        group: Pick,
        /// The new `minCount`.
        min_count: u8,
        /// The new priority (as [`GroupSpec::priority`]), or unset: the one resolved
        /// when it was added stays.
        priority: Option<u8>,
    },
}

/// The kinds of [`Op`], for weights.
const KINDS: usize = 27;

/// How often each kind of operation is drawn (relative weights, in the order of the
/// [`Op`] variants), and populations the driver keeps under.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Weights: AddPod, RemovePod, CompletePod, AddGroup, RemoveGroup, AddClaim,
    /// RemoveClaim, AddSlice, ReplaceSlice, RemoveSlice, TaintDevice, UntaintDevice,
    /// TaintNode, UntaintNode, AddRule, ReplaceRule, RemoveRule, Cycle,
    /// RefreshEvictions + Advance (shared), then the live cluster's operations:
    /// AddNode, UpdateNode, RemoveNode, PutClass, RemoveClass, UpdatePod,
    /// UpdateClaim, UpdateGroup.
    pub weights: [u16; KINDS],
    /// Above this many pods, an AddPod drawn becomes a removal (a pending pod's or a
    /// bound pod's completion).
    pub max_pods: usize,
    /// Above this many claims, an AddClaim becomes a RemoveClaim of an idle claim.
    pub max_claims: usize,
    /// Above this many PodGroups, an AddGroup becomes a RemoveGroup.
    pub max_groups: usize,
    /// Above this many DeviceTaintRules, an AddRule becomes a RemoveRule.
    pub max_rules: usize,
    /// Above this many slices beyond the starting ones, an AddSlice becomes a
    /// RemoveSlice.
    pub max_extra_slices: usize,
    /// At most this many nodes beyond the starting ones: past it, an AddNode of a
    /// fresh node brings a removed one back instead.
    pub max_extra_nodes: usize,
    /// Check a refused operation's "unchanged" promise every this many refusals (1:
    /// every one). The check renders the whole state twice.
    pub check_refusals_every: u64,
}

impl Default for Limits {
    /// Every kind of operation, cycles about one in thirteen; small populations (64
    /// pods, 64 claims, 16 groups, 6 rules, 4 extra slices, 2 extra nodes); every
    /// refusal checked.
    fn default() -> Limits {
        Limits {
            weights: [
                14, 3, 5, 4, 2, 12, 3, 2, 2, 1, 3, 2, 2, 2, 2, 1, 2, 7, 4, // the first 19
                2, 3, 1, 2, 1, 3, 3, 1, // the live cluster's
            ],
            max_pods: 64,
            max_claims: 64,
            max_groups: 16,
            max_rules: 6,
            max_extra_slices: 4,
            max_extra_nodes: 2,
            check_refusals_every: 1,
        }
    }
}

impl Limits {
    /// Limits for a cluster of `nodes` nodes: populations in proportion (3 pods and
    /// claims, 1/4 group per node), the default mix.
    pub fn for_nodes(nodes: usize) -> Limits {
        Limits {
            max_pods: 3 * nodes.max(8),
            max_claims: 3 * nodes.max(8),
            max_groups: nodes.max(8) / 4 + 2,
            max_rules: 8,
            max_extra_slices: nodes.max(8) / 4,
            max_extra_nodes: nodes.max(8) / 8,
            ..Limits::default()
        }
    }
}

fn draw_name(src: &mut impl Source) -> NewName {
    if src.chance(12) {
        NewName::Taken(src.index())
    } else {
        NewName::Fresh
    }
}

fn draw_pick(src: &mut impl Source) -> Pick {
    match src.byte() {
        0..=9 => Pick::Absent(src.index()),
        10..=99 => Pick::Idle(src.index()),
        _ => Pick::Live(src.index()),
    }
}

fn draw_refer(src: &mut impl Source, none: u8, newest: u8) -> Refer {
    let b = src.byte();
    if b < none {
        Refer::None
    } else if b < none.saturating_add(newest) {
        Refer::Newest
    } else {
        Refer::Pick(draw_pick(src))
    }
}

impl Op {
    /// An operation drawn from `src` with `limits`' weights (no population limits: see
    /// [`Driver::draw`]).
    pub fn draw(src: &mut impl Source, limits: &Limits) -> Op {
        let total: usize = limits.weights.iter().map(|w| usize::from(*w)).sum();
        let mut r = src.below(total.max(1));
        let mut kind = 0;
        for (k, w) in limits.weights.iter().enumerate() {
            let w = usize::from(*w);
            if r < w {
                kind = k;
                break;
            }
            r -= w;
        }
        match kind {
            0 => Op::AddPod(PodSpec {
                name: draw_name(src),
                cpu: src.byte() % 17,
                priority: src.byte() % 3,
                never: src.chance(40),
                tolerations: src.byte() % 5,
                claim: draw_refer(src, 60, 170),
                group: draw_refer(src, 120, 100),
                group_claim: src.chance(128),
                running_on: if src.chance(16) {
                    Some(src.index())
                } else {
                    None
                },
                pool: if src.chance(20) {
                    Some(src.byte() % 2)
                } else {
                    None
                },
            }),
            1 => Op::RemovePod(draw_pick(src)),
            2 => Op::CompletePod(src.index()),
            3 => Op::AddGroup(GroupSpec {
                name: draw_name(src),
                min_count: src.byte() % 4,
                all: src.chance(80),
                rack: src.chance(60),
                priority: src.byte() % 3,
                claim: draw_refer(src, 200, 30),
            }),
            4 => Op::RemoveGroup(draw_pick(src)),
            5 => Op::AddClaim(ClaimSpec {
                name: draw_name(src),
                gpus: src.byte() % 5,
                tolerations: src.byte() % 15,
                bad_class: src.chance(6),
            }),
            6 => Op::RemoveClaim(draw_pick(src)),
            7 => Op::AddSlice {
                name: draw_name(src),
                node: src.index(),
                spec: SliceSpec::draw(src),
            },
            8 => Op::ReplaceSlice {
                slice: draw_pick(src),
                spec: SliceSpec::draw(src),
            },
            9 => Op::RemoveSlice(draw_pick(src)),
            10 => Op::TaintDevice {
                node: if src.chance(24) {
                    u16::MAX
                } else {
                    src.index()
                },
                gpu: src.byte() % 5,
                taint: TaintSpec::draw(src),
            },
            11 => Op::UntaintDevice {
                node: if src.chance(24) {
                    u16::MAX
                } else {
                    src.index()
                },
                gpu: src.byte() % 5,
                key: src.byte() % 3,
                effect: if src.chance(128) {
                    Some(src.byte() % 3)
                } else {
                    None
                },
            },
            12 => Op::TaintNode {
                node: draw_pick(src),
                key: src.byte() % 2,
                effect: src.byte() % 3,
            },
            13 => Op::UntaintNode {
                node: draw_pick(src),
                key: src.byte() % 2,
                effect: if src.chance(128) {
                    Some(src.byte() % 3)
                } else {
                    None
                },
            },
            14 => Op::AddRule {
                name: draw_name(src),
                spec: RuleSpec::draw(src),
            },
            15 => Op::ReplaceRule {
                rule: draw_pick(src),
                spec: RuleSpec::draw(src),
            },
            16 => Op::RemoveRule(draw_pick(src)),
            17 => Op::Cycle,
            18 => {
                if src.chance(100) {
                    Op::RefreshEvictions
                } else {
                    Op::Advance([0u16, 1, 5, 10, 20, 31, 60, 300][usize::from(src.byte() % 8)])
                }
            }
            k => live::draw(k, src),
        }
    }
}

const NODE_KEYS: [&str; 2] = [NODE_TAINT_KEY, "example.com/node"];
const PRIORITIES: [i32; 3] = [0, 10, 100];
/// The values of the pool label ([`PodSpec::pool`], [`NodeChange::Relabel`]).
const POOL_VALUES: [&str; 2] = ["a", "b"];
/// The DeviceClass `bad_class` claims name: missing until an [`Op::PutClass`] adds it.
const MISSING_CLASS: &str = "missing.gangpack.dev";

/// A pod's node tolerations as [`PodSpec::tolerations`] says.
fn node_tolerations(t: u8) -> Vec<Toleration> {
    let tol = |effect, seconds| Toleration {
        key: NODE_TAINT_KEY.into(),
        operator: TolerationOperator::Exists,
        value: String::new(),
        effect,
        toleration_seconds: seconds,
    };
    match t % 5 {
        1 => vec![tol(Some(TaintEffect::NoSchedule), None)],
        2 => vec![tol(Some(TaintEffect::NoExecute), None)],
        3 => vec![tol(Some(TaintEffect::NoExecute), Some(30))],
        4 => vec![tol(None, None)],
        _ => Vec::new(),
    }
}

// ------------------------------------------------------------------- outcomes

/// What applying an operation did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Applied; nothing to report.
    Applied,
    /// Applied; the eviction schedule changed like this.
    Evictions(EvictionReport),
    /// A cycle ran.
    Cycled(CycleReport),
    /// The clock moved; these pods were evicted.
    Evicted(Vec<PodEviction>),
    /// Refused (the scheduler must be unchanged).
    Refused(SchedulerError),
}

impl Outcome {
    /// Whether the operation was refused.
    pub fn is_refused(&self) -> bool {
        matches!(self, Outcome::Refused(_))
    }
}

/// What went wrong at a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// A refused operation changed the scheduler.
    ChangedOnRefusal {
        /// The step (0-based).
        step: u64,
        /// The operation.
        op: Op,
        /// The refusal.
        error: String,
        /// The first line of the state's rendering that differs, before and after.
        before: String,
        /// The same line after.
        after: String,
    },
    /// The audit found broken invariants.
    Audit {
        /// The step after which the audit ran.
        step: u64,
        /// The operation of that step.
        op: Op,
        /// What it found.
        findings: Vec<Finding>,
    },
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::ChangedOnRefusal {
                step,
                op,
                error,
                before,
                after,
            } => write!(
                f,
                "step {step}: {op:?} was refused ({error}) but changed the scheduler:\n  \
                 before: {before}\n  after:  {after}"
            ),
            Failure::Audit { step, op, findings } => {
                write!(f, "step {step}: after {op:?}, the audit found:")?;
                for x in findings {
                    write!(f, "\n  - {x}")?;
                }
                Ok(())
            }
        }
    }
}

/// Counters over a driver's run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Operations stepped.
    pub ops: u64,
    /// Applied.
    pub applied: u64,
    /// Refused.
    pub refused: u64,
    /// Refusals whose "unchanged" promise was checked.
    pub refusals_checked: u64,
    /// Cycles run.
    pub cycles: u64,
    /// Pods bound by cycles.
    pub pods_bound: u64,
    /// Pods evicted by [`Scheduler::advance`].
    pub evicted: u64,
    /// Audits run (each clean, or the run stopped).
    pub audits: u64,
}

// ------------------------------------------------------------------- the driver

/// Applies [`Op`]s to a [`Scheduler`], resolving their references against its live
/// objects, checks that every refused operation changed nothing, and audits on request.
///
/// It remembers, for the audit, which pods and claims cycles placed since the last
/// change to taints, slices or rules (those are held to every placement rule, see
/// [`AuditScope`]) and which gangs lost a member since they were placed (those may be
/// below `minCount`).
#[derive(Clone, Debug)]
pub struct Driver {
    sched: Scheduler,
    shape: ClusterShape,
    limits: Limits,
    next_id: u64,
    newest_claim: Option<String>,
    newest_group: Option<String>,
    extra_slices: BTreeSet<String>,
    /// Every node name the driver has used, in order: the starting nodes, then fresh
    /// ones (a removed node keeps its place).
    node_names: Vec<String>,
    scope: AuditScope,
    stats: Stats,
}

impl Driver {
    /// A driver over the starting cluster of `shape` (default [`GangOptions`]).
    pub fn new(shape: &ClusterShape, limits: Limits) -> Driver {
        Driver::with_options(shape, limits, GangOptions::default())
    }

    /// A driver over the starting cluster of `shape`, placing with `options`.
    pub fn with_options(shape: &ClusterShape, limits: Limits, options: GangOptions) -> Driver {
        Driver {
            sched: shape.build(options),
            shape: *shape,
            limits,
            next_id: 0,
            newest_claim: None,
            newest_group: None,
            extra_slices: BTreeSet::new(),
            node_names: (0..shape.nodes.max(1))
                .map(|i| format!("node-{i}"))
                .collect(),
            scope: AuditScope::default(),
            stats: Stats::default(),
        }
    }

    /// The scheduler.
    pub fn scheduler(&self) -> &Scheduler {
        &self.sched
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// What the next audit holds to placement rules (see [`AuditScope`]).
    pub fn scope(&self) -> &AuditScope {
        &self.scope
    }

    /// The next operation from `src` ([`Op::draw`]), with the population limits
    /// applied: an addition over its limit becomes a removal of the same kind.
    pub fn draw(&self, src: &mut impl Source) -> Op {
        let op = Op::draw(src, &self.limits);
        let l = &self.limits;
        match op {
            Op::AddPod(p) if self.sched.pods().nth(l.max_pods).is_some() => {
                if p.cpu % 2 == 0 {
                    Op::CompletePod(u16::from(p.cpu))
                } else {
                    Op::RemovePod(Pick::Idle(u16::from(p.cpu)))
                }
            }
            Op::AddClaim(c) if self.sched.claims().nth(l.max_claims).is_some() => {
                Op::RemoveClaim(Pick::Idle(u16::from(c.tolerations)))
            }
            Op::AddGroup(g) if self.sched.groups().nth(l.max_groups).is_some() => {
                Op::RemoveGroup(Pick::Live(u16::from(g.priority)))
            }
            Op::AddRule { spec, .. }
                if self
                    .sched
                    .cluster()
                    .taint_rules()
                    .nth(l.max_rules)
                    .is_some() =>
            {
                Op::RemoveRule(Pick::Live(u16::from(spec.taint.value)))
            }
            Op::AddSlice { node, .. } if self.extra_slices.len() > l.max_extra_slices => {
                Op::RemoveSlice(Pick::Idle(node))
            }
            Op::AddNode {
                join: NodeJoin::Fresh,
                slice,
            } if self.node_names.len()
                >= usize::from(self.shape.nodes.max(1)) + l.max_extra_nodes =>
            {
                Op::AddNode {
                    join: NodeJoin::Back(0),
                    slice,
                }
            }
            op => op,
        }
    }

    fn fresh(&mut self, kind: &str) -> String {
        self.next_id += 1;
        format!("{kind}-{}", self.next_id)
    }

    /// The `i % n`-th of the `n` nodes the driver knows: the starting ones, then
    /// those [`Op::AddNode`] added fresh (removed ones included).
    fn node_name(&self, i: u16) -> String {
        self.node_names[usize::from(i) % self.node_names.len()].clone()
    }

    fn pick_pod(&self, p: Pick) -> String {
        let live = |idle: bool| -> Vec<String> {
            self.sched
                .pods()
                .filter(|x| !idle || x.node_name.is_none())
                .map(|x| format!("{}/{}", x.namespace, x.name))
                .collect()
        };
        resolve(p, live, "pod")
    }

    fn pick_claim(&self, p: Pick) -> String {
        let live = |idle: bool| -> Vec<String> {
            self.sched
                .claims()
                .filter(|x| !idle || x.allocation.is_none())
                .map(|x| format!("{}/{}", x.namespace, x.name))
                .collect()
        };
        resolve(p, live, "claim")
    }

    fn pick_group(&self, p: Pick) -> String {
        let live = |_: bool| -> Vec<String> {
            self.sched
                .groups()
                .map(|x| format!("{}/{}", x.namespace, x.name))
                .collect()
        };
        resolve(p, live, "group")
    }

    fn pick_slice(&self, p: Pick) -> String {
        let live = |idle: bool| -> Vec<String> {
            if idle {
                return self.extra_slices.iter().cloned().collect();
            }
            self.sched
                .cluster()
                .slices()
                .map(|s| s.name.clone())
                .collect()
        };
        resolve(p, live, "slice")
    }

    fn pick_rule(&self, p: Pick) -> String {
        let live = |_: bool| -> Vec<String> {
            self.sched
                .cluster()
                .taint_rules()
                .map(|r| r.name.clone())
                .collect()
        };
        resolve(p, live, "rule")
    }

    fn pick_node(&self, p: Pick) -> String {
        match p {
            Pick::Live(i) | Pick::Idle(i) => self.node_name(i),
            Pick::Absent(i) => format!("no-such-node-{i}"),
        }
    }

    /// The name part of a new object's key: fresh, or an existing object's.
    fn new_name(&mut self, name: NewName, kind: &str, existing: &[String]) -> String {
        match name {
            NewName::Taken(i) if !existing.is_empty() => {
                let k = &existing[usize::from(i) % existing.len()];
                k.rsplit('/').next().unwrap_or(k).to_owned()
            }
            _ => self.fresh(kind),
        }
    }

    fn refer_claim(&self, r: Refer) -> Option<String> {
        match r {
            Refer::None => None,
            Refer::Newest => self.newest_claim.clone(),
            Refer::Pick(p) => Some(self.pick_claim(p)),
        }
    }

    fn build_pod(&mut self, p: &PodSpec) -> Pod {
        let spec_name = p.name;
        let existing: Vec<String> = match spec_name {
            NewName::Taken(_) => self
                .sched
                .pods()
                .map(|x| format!("{}/{}", x.namespace, x.name))
                .collect(),
            NewName::Fresh => Vec::new(),
        };
        let name = self.new_name(p.name, "pod", &existing);
        let mut pod = Pod::new(NAMESPACE, name);
        if p.cpu > 0 {
            pod.requests
                .insert("cpu".into(), Quantity::from_int(i64::from(p.cpu)));
        }
        pod.priority = PRIORITIES[usize::from(p.priority) % 3];
        if p.never {
            pod.preemption_policy = PreemptionPolicy::Never;
        }
        pod.tolerations = node_tolerations(p.tolerations);
        if let Some(c) = self.refer_claim(p.claim) {
            let name = c.rsplit('/').next().unwrap_or(&c).to_owned();
            pod.resource_claims.push(PodResourceClaim {
                name: "gpu".into(),
                source: ClaimSource::ClaimName(name),
            });
        }
        let group = match p.group {
            Refer::None => None,
            Refer::Newest => self.newest_group.clone(),
            Refer::Pick(x) => Some(self.pick_group(x)),
        };
        if let Some(g) = group {
            if p.group_claim
                && let Some(entry) = self.sched.group(&g).and_then(|g| g.resource_claims.first())
            {
                pod.resource_claims.push(PodResourceClaim {
                    name: entry.name.clone(),
                    source: entry.source.clone(),
                });
            }
            pod.scheduling_group = Some(g.rsplit('/').next().unwrap_or(&g).to_owned());
        }
        if let Some(n) = p.running_on {
            pod.node_name = Some(self.node_name(n));
        }
        if let Some(v) = p.pool {
            pod.node_selector.insert(
                live::POOL_LABEL.into(),
                POOL_VALUES[usize::from(v) % 2].into(),
            );
        }
        pod.creation = self.sched.now();
        pod
    }

    fn build_group(&mut self, g: &GroupSpec) -> PodGroup {
        let spec_name = g.name;
        let existing: Vec<String> = match spec_name {
            NewName::Taken(_) => self
                .sched
                .groups()
                .map(|x| format!("{}/{}", x.namespace, x.name))
                .collect(),
            NewName::Fresh => Vec::new(),
        };
        let name = self.new_name(g.name, "group", &existing);
        let policy = if g.min_count == 0 {
            SchedulingPolicy::Basic
        } else {
            SchedulingPolicy::Gang {
                min_count: u32::from(g.min_count),
            }
        };
        let mut group = PodGroup::new(NAMESPACE, name, policy);
        group.priority = Some(PRIORITIES[usize::from(g.priority) % 3]);
        // `disruptionMode: All` with the basic policy is invalid: a refusal to test.
        if g.all {
            group.disruption_mode = DisruptionMode::All;
        }
        if g.rack {
            group.topology.push(TopologyConstraint::new(RACK_LABEL));
        }
        if let Some(c) = self.refer_claim(g.claim) {
            group.resource_claims.push(PodGroupResourceClaim {
                name: "shared".into(),
                source: ClaimSource::ClaimName(c.rsplit('/').next().unwrap_or(&c).to_owned()),
            });
        }
        group.creation = self.sched.now();
        group
    }

    fn build_claim(&mut self, c: ClaimSpec) -> ResourceClaim {
        let spec_name = c.name;
        let existing: Vec<String> = match spec_name {
            NewName::Taken(_) => self
                .sched
                .claims()
                .map(|x| format!("{}/{}", x.namespace, x.name))
                .collect(),
            NewName::Fresh => Vec::new(),
        };
        let name = self.new_name(c.name, "claim", &existing);
        let mut claim = ResourceClaim::new(NAMESPACE, name);
        let class = if c.bad_class {
            MISSING_CLASS
        } else {
            GPU_CLASS
        };
        let mode = if c.gpus >= 4 {
            AllocationMode::All
        } else {
            AllocationMode::ExactCount(u32::from(c.gpus.max(1)))
        };
        let key = DEVICE_KEYS[usize::from(c.tolerations / 5) % 3];
        let tol = |effect, seconds| DeviceToleration {
            key: key.into(),
            operator: DeviceTolerationOperator::Exists,
            value: String::new(),
            effect,
            toleration_seconds: seconds,
        };
        let tolerations = match c.tolerations % 5 {
            1 => vec![tol(Some(DeviceTaintEffect::NoSchedule), None)],
            2 => vec![tol(Some(DeviceTaintEffect::NoExecute), None)],
            3 => vec![tol(Some(DeviceTaintEffect::NoExecute), Some(20))],
            4 => vec![tol(None, None)],
            _ => Vec::new(),
        };
        claim.spec.requests.push(DeviceRequest::exactly(
            "gpu",
            ExactDeviceRequest {
                tolerations,
                ..ExactDeviceRequest::new(class).with_mode(mode)
            },
        ));
        claim
    }

    fn device_ref(&self, node: u16, gpu: u8) -> DeviceRef {
        let pool = if node == u16::MAX {
            "fabric".to_owned()
        } else {
            self.node_name(node)
        };
        DeviceRef::new(DRIVER, pool, format!("gpu-{gpu}"))
    }

    fn rule(&self, name: String, spec: &RuleSpec) -> DeviceTaintRule {
        let selector = if spec.driver || spec.pool.is_some() || spec.device.is_some() {
            Some(DeviceTaintSelector {
                driver: spec.driver.then(|| DRIVER.to_owned()),
                pool: spec.pool.map(|p| self.node_name(p)),
                device: spec.device.map(|d| format!("gpu-{d}")),
            })
        } else {
            None
        };
        DeviceTaintRule {
            name,
            selector,
            taint: spec.taint.stamped(self.sched.now()),
        }
    }

    fn slice_for(&self, name: &str, spec: &SliceSpec) -> Option<ResourceSlice> {
        let old = self.sched.cluster().slice(name)?;
        if old.node_name().is_none() {
            // A shared slice keeps its devices; the spec's taint goes on the first.
            let mut s = old.clone();
            s.pool.generation = old.pool.generation.max(i64::from(spec.generation));
            if let (Some(t), Some(d)) = (&spec.taint, s.devices.first_mut()) {
                d.taints.push(t.device_taint());
            }
            return Some(s);
        }
        Some(node_slice(name, old.node_name().unwrap_or_default(), spec))
    }

    /// Applies one operation and says what it did. Does not check or audit anything
    /// (see [`step`](Self::step)).
    ///
    /// # Panics
    ///
    /// When the scheduler refuses the second call of an operation that makes two,
    /// which nothing should refuse: a joining node's own slice ([`Op::AddNode`]), or
    /// withdrawing a removed node's slices ([`Op::RemoveNode`]).
    pub fn apply(&mut self, op: &Op) -> Outcome {
        let refused = Outcome::Refused;
        let evictions = |r: Result<EvictionReport, SchedulerError>| match r {
            Ok(r) => Outcome::Evictions(r),
            Err(e) => Outcome::Refused(e),
        };
        match op {
            Op::AddPod(p) => {
                let pod = self.build_pod(p);
                let running = pod.node_name.is_some();
                let group = pod
                    .scheduling_group
                    .as_ref()
                    .map(|g| format!("{}/{g}", pod.namespace));
                match self.sched.add_pod(pod) {
                    // A controller loading a running pod brings the schedule up to date;
                    // its gang was not placed by a cycle and may be below `minCount`,
                    // or span topology domains.
                    Ok(()) if running => {
                        if let Some(g) = group.filter(|g| self.sched.group(g).is_some()) {
                            self.scope.broken_gangs.insert(g.clone());
                            self.scope.split_gangs.insert(g);
                        }
                        Outcome::Evictions(self.sched.refresh_evictions())
                    }
                    Ok(()) => Outcome::Applied,
                    Err(e) => refused(e),
                }
            }
            Op::RemovePod(p) => {
                let k = self.pick_pod(*p);
                self.remove_pod(&k)
            }
            Op::CompletePod(i) => {
                let bound: Vec<String> = self
                    .sched
                    .pods()
                    .filter(|x| x.node_name.is_some())
                    .map(|x| format!("{}/{}", x.namespace, x.name))
                    .collect();
                let k = if bound.is_empty() {
                    format!("{NAMESPACE}/no-such-pod-{i}")
                } else {
                    bound[usize::from(*i) % bound.len()].clone()
                };
                self.remove_pod(&k)
            }
            Op::AddGroup(g) => {
                let group = self.build_group(g);
                let k = format!("{}/{}", group.namespace, group.name);
                match self.sched.add_group(group) {
                    Ok(()) => {
                        self.newest_group = Some(k);
                        Outcome::Applied
                    }
                    Err(e) => refused(e),
                }
            }
            Op::RemoveGroup(p) => {
                let k = self.pick_group(*p);
                match self.sched.remove_group(&k) {
                    Ok(_) => {
                        self.scope.broken_gangs.remove(&k);
                        let gone: Vec<String> = self
                            .scope
                            .placed_pods
                            .iter()
                            .filter(|p| self.sched.pod(p).is_none())
                            .cloned()
                            .collect();
                        for p in gone {
                            self.scope.placed_pods.remove(&p);
                        }
                        Outcome::Applied
                    }
                    Err(e) => refused(e),
                }
            }
            Op::AddClaim(c) => {
                let claim = self.build_claim(*c);
                let k = format!("{}/{}", claim.namespace, claim.name);
                match self.sched.add_claim(claim) {
                    Ok(()) => {
                        self.newest_claim = Some(k);
                        Outcome::Applied
                    }
                    Err(e) => refused(e),
                }
            }
            Op::RemoveClaim(p) => {
                let k = self.pick_claim(*p);
                match self.sched.remove_claim(&k) {
                    Ok(_) => Outcome::Applied,
                    Err(e) => refused(e),
                }
            }
            Op::AddSlice { name, node, spec } => {
                let existing: Vec<String> = self
                    .sched
                    .cluster()
                    .slices()
                    .map(|s| s.name.clone())
                    .collect();
                let n = self.node_name(*node);
                let name = match name {
                    NewName::Taken(i) if !existing.is_empty() => {
                        existing[usize::from(*i) % existing.len()].clone()
                    }
                    _ => {
                        let id = self.fresh("extra");
                        format!("{n}-{id}")
                    }
                };
                let slice = node_slice(&name, &n, spec);
                let r = self.sched.add_slice(slice);
                if r.is_ok() {
                    self.extra_slices.insert(name);
                    self.forget_placements();
                }
                evictions(r)
            }
            Op::ReplaceSlice { slice, spec } => {
                let name = self.pick_slice(*slice);
                let new = self.slice_for(&name, spec).unwrap_or_else(|| {
                    node_slice(&name, "node-0", spec) // a slice that does not exist: refused
                });
                let r = self.sched.replace_slice(new);
                if r.is_ok() {
                    self.forget_placements();
                }
                evictions(r)
            }
            Op::RemoveSlice(p) => {
                let name = self.pick_slice(*p);
                match self.sched.remove_slice(&name) {
                    Ok((_, r)) => {
                        self.extra_slices.remove(&name);
                        self.forget_placements();
                        Outcome::Evictions(r)
                    }
                    Err(e) => refused(e),
                }
            }
            Op::TaintDevice { node, gpu, taint } => {
                let d = self.device_ref(*node, *gpu);
                let t = taint.stamped(self.sched.now());
                let r = self.sched.taint_device(&d, t);
                if r.is_ok() {
                    self.forget_placements();
                }
                evictions(r)
            }
            Op::UntaintDevice {
                node,
                gpu,
                key,
                effect,
            } => {
                let d = self.device_ref(*node, *gpu);
                let e = effect.map(device_effect);
                evictions(self.sched.untaint_device(
                    &d,
                    DEVICE_KEYS[usize::from(*key) % 3],
                    e.as_ref(),
                ))
            }
            Op::TaintNode { node, key, effect } => {
                let n = self.pick_node(*node);
                let t = Taint::new(
                    NODE_KEYS[usize::from(*key) % 2],
                    "true",
                    node_effect(*effect),
                );
                let r = self.sched.taint_node(&n, t);
                if r.is_ok() {
                    self.forget_placements();
                }
                evictions(r)
            }
            Op::UntaintNode { node, key, effect } => {
                let n = self.pick_node(*node);
                evictions(self.sched.untaint_node(
                    &n,
                    NODE_KEYS[usize::from(*key) % 2],
                    effect.map(node_effect),
                ))
            }
            Op::AddRule { name, spec } => {
                let existing: Vec<String> = self
                    .sched
                    .cluster()
                    .taint_rules()
                    .map(|r| r.name.clone())
                    .collect();
                let name = match name {
                    NewName::Taken(i) if !existing.is_empty() => {
                        existing[usize::from(*i) % existing.len()].clone()
                    }
                    _ => self.fresh("rule"),
                };
                let rule = self.rule(name, spec);
                let r = self.sched.add_taint_rule(rule);
                if r.is_ok() {
                    self.forget_placements();
                }
                evictions(r)
            }
            Op::ReplaceRule { rule, spec } => {
                let name = self.pick_rule(*rule);
                let rule = self.rule(name, spec);
                let r = self.sched.replace_taint_rule(rule);
                if r.is_ok() {
                    self.forget_placements();
                }
                evictions(r)
            }
            Op::RemoveRule(p) => {
                let name = self.pick_rule(*p);
                match self.sched.remove_taint_rule(&name) {
                    Ok((_, r)) => Outcome::Evictions(r),
                    Err(e) => refused(e),
                }
            }
            Op::Cycle => {
                let report = self.sched.cycle();
                self.after_cycle(&report);
                Outcome::Cycled(report)
            }
            Op::RefreshEvictions => Outcome::Evictions(self.sched.refresh_evictions()),
            Op::Advance(secs) => {
                let to = Time(self.sched.now().0.saturating_add(i64::from(*secs)));
                let done = self.sched.advance(to);
                for e in &done {
                    self.departed(&e.pod);
                }
                self.stats.evicted += done.len() as u64;
                Outcome::Evicted(done)
            }
            Op::AddNode { .. }
            | Op::UpdateNode { .. }
            | Op::RemoveNode { .. }
            | Op::PutClass(_)
            | Op::RemoveClass(_)
            | Op::UpdatePod { .. }
            | Op::UpdateClaim { .. }
            | Op::UpdateGroup { .. } => self.apply_live(op),
        }
    }

    /// Taints, slices or rules changed: earlier placements are judged as running ones.
    fn forget_placements(&mut self) {
        self.scope.placed_pods.clear();
        self.scope.placed_claims.clear();
    }

    /// Drops what the scope remembers of objects that are gone or idle now.
    fn prune_scope(&mut self) {
        let s = &self.sched;
        self.scope
            .placed_pods
            .retain(|p| s.pod(p).is_some_and(|p| p.node_name.is_some()));
        self.scope
            .placed_claims
            .retain(|c| s.allocation(c).is_some());
        self.scope.broken_gangs.retain(|g| s.group(g).is_some());
        self.scope.split_gangs.retain(|g| s.group(g).is_some());
        self.scope
            .foreign_claims
            .retain(|c| s.allocation(c).is_some());
        let busy: BTreeSet<&str> = s.pods().filter_map(|p| p.node_name.as_deref()).collect();
        self.scope
            .resized_nodes
            .retain(|n| busy.contains(n.as_str()) && s.cluster().node(n).is_some());
    }

    fn remove_pod(&mut self, k: &str) -> Outcome {
        let group = self.sched.pod(k).and_then(|p| {
            p.scheduling_group
                .as_ref()
                .map(|g| format!("{}/{g}", p.namespace))
        });
        let was_bound = self.sched.pod(k).is_some_and(|p| p.node_name.is_some());
        match self.sched.remove_pod(k) {
            Ok(_) => {
                self.scope.placed_pods.remove(k);
                if let Some(g) = group.filter(|g| was_bound && self.sched.group(g).is_some()) {
                    self.scope.broken_gangs.insert(g);
                }
                Outcome::Applied
            }
            Err(e) => Outcome::Refused(e),
        }
    }

    /// A bound pod left (evicted, preempted): its gang may be below `minCount` now.
    fn departed(&mut self, pod: &str) {
        self.scope.placed_pods.remove(pod);
        let (ns, _) = pod.split_once('/').unwrap_or(("", pod));
        let group = self
            .sched
            .pod(pod)
            .and_then(|p| p.scheduling_group.clone())
            .map(|g| format!("{ns}/{g}"));
        if let Some(g) = group {
            if self.sched.group(&g).is_some() {
                self.scope.broken_gangs.insert(g);
            }
        } else {
            // The pod is gone: any gang may have held it.
            let all: Vec<String> = self
                .sched
                .groups()
                .map(|g| format!("{}/{}", g.namespace, g.name))
                .collect();
            self.scope.broken_gangs.extend(all);
        }
    }

    fn after_cycle(&mut self, report: &CycleReport) {
        self.stats.cycles += 1;
        for (unit, result) in &report.units {
            let decision = match result {
                UnitResult::Scheduled(d) => d,
                UnitResult::Preempted(p) => {
                    for v in &p.victims {
                        for pod in &v.pods {
                            self.departed(pod);
                        }
                    }
                    &p.decision
                }
                _ => continue,
            };
            self.stats.pods_bound += decision.bindings.len() as u64;
            for b in &decision.bindings {
                self.scope.placed_pods.insert(b.pod.clone());
                for c in &b.claims {
                    self.scope.placed_claims.insert(c.claim.clone());
                }
            }
            for c in &decision.group_claims {
                self.scope.placed_claims.insert(c.claim.clone());
            }
            if let Unit::Group(g) = unit {
                self.scope.broken_gangs.remove(g);
                self.scope.split_gangs.remove(g);
            }
        }
    }

    /// Applies `op`; when it is refused, checks (every
    /// [`check_refusals_every`](Limits::check_refusals_every) refusals) that the
    /// scheduler is exactly as before: its whole `Debug` rendering, every index and
    /// cache included, is the same.
    pub fn step(&mut self, op: &Op) -> Result<Outcome, Failure> {
        let step = self.stats.ops;
        self.stats.ops += 1;
        let check = self.limits.check_refusals_every.max(1);
        let snapshot = self
            .stats
            .refused
            .is_multiple_of(check)
            .then(|| self.sched.clone());
        let outcome = self.apply(op);
        if let Outcome::Refused(e) = &outcome {
            if let Some(before) = snapshot {
                self.stats.refusals_checked += 1;
                let a = format!("{before:?}");
                let b = format!("{:?}", self.sched);
                if a != b {
                    let (before, after) = first_difference(&a, &b);
                    return Err(Failure::ChangedOnRefusal {
                        step,
                        op: op.clone(),
                        error: e.to_string(),
                        before,
                        after,
                    });
                }
            }
            self.stats.refused += 1;
        } else {
            self.stats.applied += 1;
        }
        Ok(outcome)
    }

    /// Audits the scheduler now ([`audit_scoped`] with what the driver remembers).
    pub fn audit(&mut self, step_op: &Op) -> Result<(), Failure> {
        self.prune_scope();
        let findings = audit_scoped(&self.sched, &self.scope);
        self.stats.audits += 1;
        if findings.is_empty() {
            Ok(())
        } else {
            Err(Failure::Audit {
                step: self.stats.ops.saturating_sub(1),
                op: step_op.clone(),
                findings,
            })
        }
    }

    /// Draws and steps `ops` operations from `src`, auditing every `audit_every`
    /// operations (0: never) and at the end. Stops at the first failure.
    pub fn run(
        &mut self,
        src: &mut impl Source,
        ops: u64,
        audit_every: u64,
    ) -> Result<(), Failure> {
        let mut last = Op::Cycle;
        for i in 1..=ops {
            let op = self.draw(src);
            self.step(&op)?;
            if audit_every > 0 && i % audit_every == 0 {
                self.audit(&op)?;
            }
            last = op;
        }
        self.audit(&last)
    }
}

fn resolve(p: Pick, live: impl Fn(bool) -> Vec<String>, kind: &str) -> String {
    let absent = |i: u16| {
        if matches!(kind, "slice" | "rule") {
            format!("no-such-{kind}-{i}")
        } else {
            format!("{NAMESPACE}/no-such-{kind}-{i}")
        }
    };
    match p {
        Pick::Live(i) | Pick::Idle(i) => {
            let v = live(matches!(p, Pick::Idle(_)));
            if v.is_empty() {
                absent(i)
            } else {
                v[usize::from(i) % v.len()].clone()
            }
        }
        Pick::Absent(i) => absent(i),
    }
}

/// The first differing line of two renderings (the `Debug` of a whole scheduler is
/// one line: cut around the first differing byte).
fn first_difference(a: &str, b: &str) -> (String, String) {
    let at = a
        .bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let cut = |s: &str| {
        let mut lo = at.saturating_sub(120);
        while !s.is_char_boundary(lo) {
            lo -= 1;
        }
        let mut hi = (at + 120).min(s.len());
        while !s.is_char_boundary(hi) {
            hi += 1;
        }
        s[lo..hi].to_owned()
    };
    (cut(a), cut(b))
}
