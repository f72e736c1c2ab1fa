//! The cluster: the model objects plus the bitset index over their devices, kept in
//! step by transactional mutations.
//!
//! Layer: above the model and the CEL evaluator (a DeviceClass's selectors are compiled
//! and evaluated here, once per device); below everything that allocates or places. One
//! [`Cluster`] type, its `impl` split by concern:
//!
//! | file | what it holds |
//! | --- | --- |
//! | `mod.rs` | [`Cluster`] itself, [`ClusterError`], [`DeviceRef`], the logical clock |
//! | `index.rs` | device slots and flags, the one `apply_flags` choke point that keeps the dense sets and the node and domain counts in step, device identities, the attribute inverted index, memory |
//! | `nodes.rs` | nodes, node taints and cordons, scalar reservations, topology domains |
//! | `classes.rs` | DeviceClasses and their per-device selector cache |
//! | `slices.rs` | ResourceSlices, pools and generations, allocation order, equivalence classes |
//! | `taints.rs` | device taints, DeviceTaintRules, taint groups, `NoExecute` eviction notices |
//! | `allocations.rs` | recorded holders, shared capacity and counters, the placer's holds |
//! | `rooms.rs` | per node, what each shareable device has left of its capacities (a necessary condition for a share, checked without the allocator) |
//! | `queries.rs` | read-only questions: `select`, blocked and usable sets, reach |
//! | `scores.rs` | the Stranding and FGD node measures over one node's free CPU, memory and device shares |
//! | `score_table.rs` | those measures kept per node as the cluster changes, for a tracked mix; `node_load`, `audit_scores` |
//! | `ranking.rs` | a pod's candidate nodes ranked by those measures, before and after its first fit |
//! | `bits.rs`, `ids.rs`, `intern.rs`, `cow.rs` | the dense and sparse device sets, ids, interned strings, the chunked copy-on-write table |

use core::fmt;

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, ValidationError};
use crate::{DeviceClass, Time};

mod allocations;
pub(crate) mod bits;
mod classes;
pub(crate) use classes::ClassCache;
pub(crate) mod cow;
pub(crate) mod ids;
mod index;
pub(crate) mod intern;
mod nodes;
mod queries;
pub(crate) mod ranking;
pub(crate) mod rooms;
pub(crate) mod score_table;
pub(crate) mod scores;
mod slices;
mod taints;

pub use allocations::{DeviceAllocation, Shortage};
pub use index::{DeviceCounts, IndexMemory};
pub use nodes::Shortfall;
pub use queries::{DeviceFilter, DeviceView};
pub use score_table::{NodeLoad, NodeScore, ScoreKernel};
pub use slices::{PoolProblem, PoolStatus};
pub use taints::{EvictionNotice, TaintReport};

pub(crate) use index::{COUNTERS, ELIGIBLE, FREE, SHAREABLE, TAINTED};

pub(crate) use allocations::Located;
use bits::{DeviceSet, SparseDeviceSet};
use ids::{DeviceId, NodeId, PoolId, SliceId};
pub(crate) use index::DeviceKey;
use index::{AttrKey, DeviceSlot};
use intern::{Interner, Symbol};
use nodes::{NodeEntry, NodeState};
use slices::{PoolEntry, SliceEntry};
use taints::{AppliedTaint, RuleEntry, TaintGroup};

/// A device's global identity: `<driver>/<pool>/<device>`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeviceRef {
    /// The DRA driver.
    pub driver: String,
    /// The pool name.
    pub pool: String,
    /// The device name.
    pub device: String,
}

impl DeviceRef {
    /// Builds a reference.
    pub fn new(
        driver: impl Into<String>,
        pool: impl Into<String>,
        device: impl Into<String>,
    ) -> DeviceRef {
        DeviceRef {
            driver: driver.into(),
            pool: pool.into(),
            device: device.into(),
        }
    }

    /// Parses `driver/pool/device`. The pool name may itself contain `/`, so the driver
    /// is everything before the first `/` and the device everything after the last.
    pub fn parse(s: &str) -> Option<DeviceRef> {
        let (driver, rest) = s.split_once('/')?;
        let (pool, device) = rest.rsplit_once('/')?;
        (!driver.is_empty() && !pool.is_empty() && !device.is_empty())
            .then(|| DeviceRef::new(driver, pool, device))
    }
}

impl fmt::Display for DeviceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.driver, self.pool, self.device)
    }
}

/// Why a mutation was refused. A refused mutation leaves the cluster unchanged.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClusterError {
    /// The object is invalid; every problem found is listed.
    Invalid(Vec<ValidationError>),
    /// An object of this kind and name already exists (use the `replace_*` method).
    AlreadyExists(ObjectRef),
    /// No object of this kind and name exists.
    NotFound(ObjectRef),
    /// No device with this identity is published (at its pool's current generation).
    DeviceNotFound(DeviceRef),
    /// The device is already allocated exclusively (or to this consumer).
    DeviceInUse {
        /// The device.
        device: DeviceRef,
        /// The consumer that holds it.
        holder: String,
    },
    /// A share would consume more of a capacity than the device has left.
    CapacityExceeded(Box<Shortage>),
    /// The device consumes a shared counter (`set/counter`) that has too little left.
    CountersExhausted(Box<Shortage>),
    /// A share consumes a capacity the device does not declare.
    UnknownCapacity {
        /// The device.
        device: DeviceRef,
        /// The capacity name.
        capacity: String,
    },
    /// A node cannot hold the scalar resources asked for.
    Insufficient {
        /// The node.
        node: String,
        /// Every resource that does not fit.
        shortfalls: Vec<Shortfall>,
    },
    /// The consumer already holds a reservation on the node.
    AlreadyReserved {
        /// The node.
        node: String,
        /// The consumer.
        consumer: String,
    },
    /// The consumer holds no reservation on the node.
    NotReserved {
        /// The node.
        node: String,
        /// The consumer.
        consumer: String,
    },
    /// The device is not allocated to this consumer.
    NotAllocated {
        /// The device.
        device: DeviceRef,
        /// The consumer named in the request.
        consumer: String,
    },
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterError::Invalid(errs) => {
                for (i, e) in errs.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            ClusterError::AlreadyExists(o) => write!(f, "{o} already exists"),
            ClusterError::NotFound(o) => write!(f, "{o} not found"),
            ClusterError::DeviceNotFound(d) => write!(f, "device {d} not found"),
            ClusterError::DeviceInUse { device, holder } => {
                write!(f, "device {device} is already allocated to {holder}")
            }
            ClusterError::CapacityExceeded(x) => write!(
                f,
                "device {}: capacity {}: {} requested, {} available",
                x.device, x.name, x.requested, x.available
            ),
            ClusterError::CountersExhausted(x) => write!(
                f,
                "device {}: counter {}: {} needed, {} available",
                x.device, x.name, x.requested, x.available
            ),
            ClusterError::UnknownCapacity { device, capacity } => {
                write!(f, "device {device} has no capacity {capacity}")
            }
            ClusterError::Insufficient { node, shortfalls } => {
                write!(f, "node {node}: insufficient")?;
                for (i, s) in shortfalls.iter().enumerate() {
                    let sep = if i == 0 { " " } else { ", " };
                    write!(
                        f,
                        "{sep}{}: {} requested, {} free",
                        s.resource, s.requested, s.available
                    )?;
                }
                Ok(())
            }
            ClusterError::AlreadyReserved { node, consumer } => {
                write!(f, "node {node}: {consumer} already holds a reservation")
            }
            ClusterError::NotReserved { node, consumer } => {
                write!(f, "node {node}: {consumer} holds no reservation")
            }
            ClusterError::NotAllocated { device, consumer } => {
                write!(f, "device {device} is not allocated to {consumer}")
            }
        }
    }
}

impl core::error::Error for ClusterError {}

impl From<Vec<ValidationError>> for ClusterError {
    fn from(errs: Vec<ValidationError>) -> ClusterError {
        ClusterError::Invalid(errs)
    }
}

/// The cluster model plus its device index.
///
/// Every mutation validates first and applies second: a mutation that returns an error
/// has changed nothing. See `docs/ARCHITECTURE.md` for the index layout.
///
/// ```
/// use gangpack::{Cluster, Device, DeviceAttribute, DeviceFilter, Node, Quantity, ResourceSlice};
///
/// let mut cluster = Cluster::new();
/// cluster.add_node(Node::new("node-1").with_label("rack", "r1")).unwrap();
/// let mut slice = ResourceSlice::node_local("node-1-gpus", "gpu.example.com", "node-1", "node-1");
/// for i in 0..8 {
///     slice.devices.push(
///         Device::new(format!("gpu-{i}"))
///             .with_attribute("productName", DeviceAttribute::String("H100".into()))
///             .with_capacity("memory", Quantity::parse("80Gi").unwrap()),
///     );
/// }
/// cluster.add_slice(slice).unwrap();
/// let h100 = cluster.select(&DeviceFilter::all().attribute(
///     "gpu.example.com/productName",
///     DeviceAttribute::String("H100".into()),
/// ));
/// assert_eq!(cluster.usable(&h100, &[]).len(), 8);
/// ```
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    /// Shared with clones until one of them interns a new string.
    pub(crate) strings: Arc<Interner>,
    /// Shared with clones until a node or its devices change (like the node names,
    /// the slices, their names and the pools below: a placement's scratch copy does
    /// not copy them).
    nodes: Arc<Vec<NodeEntry>>,
    /// Per node slot, in `nodes` order.
    node_state: Vec<NodeState>,
    node_by_name: Arc<BTreeMap<String, NodeId>>,
    /// Node slot ids by name (the order of `node_by_name`, in a flat array for scans).
    node_order: Arc<Vec<NodeId>>,
    slices: cow::CowVec<Option<SliceEntry>>,
    free_slice_ids: BTreeSet<u32>,
    slice_by_name: Arc<BTreeMap<String, SliceId>>,
    pub(crate) pools: Arc<Vec<PoolEntry>>,
    pool_by_key: Arc<BTreeMap<(Symbol, Symbol), PoolId>>,
    pub(crate) devices: Vec<Option<DeviceSlot>>,
    free_device_ids: BTreeSet<u32>,
    classes: BTreeMap<String, DeviceClass>,
    /// Per class: its compiled selectors and the devices they select, maintained as
    /// slices come and go, so allocation never evaluates a class selector.
    pub(crate) class_cache: BTreeMap<String, ClassCache>,
    rules: BTreeMap<String, RuleEntry>,
    /// The names of the rules whose selector names a pool, by that pool, and of those
    /// with a selector naming none: a device's rules are found among its pool's and
    /// the latter, not among every rule.
    rules_by_pool: BTreeMap<String, BTreeSet<String>>,
    rules_any_pool: BTreeSet<String>,
    rule_slots: Vec<Option<String>>,
    pub(crate) allocations: BTreeMap<DeviceKey, Vec<DeviceAllocation>>,
    /// Shared with clones until a device's taints change.
    pub(crate) applied: Arc<BTreeMap<DeviceId, SmallVec<[AppliedTaint; 2]>>>,
    /// The devices with a `NoExecute` taint applied (some of `applied`'s). Shared
    /// with clones until one changes.
    pub(crate) no_execute: Arc<BTreeSet<DeviceId>>,
    /// The allocation keys an eviction can come from: those whose device (at its
    /// pool's current generation) is in `no_execute`, and those no device publishes
    /// now (a driver withdrew the device while a claim held it; only DeviceTaintRules
    /// can taint them). So the eviction schedule costs what is tainted and allocated,
    /// not the cluster.
    pub(crate) eviction_sources: BTreeSet<DeviceKey>,
    /// Bumped by every change that may change [`pending_evictions`](Self::pending_evictions)
    /// (applied taints, allocation records, published devices, rules), so a caller
    /// can keep its answer until it moves.
    eviction_epoch: Epoch,
    // The index.
    live: DeviceSet,
    eligible: DeviceSet,
    free: DeviceSet,
    tainted: DeviceSet,
    shared: DeviceSet,
    /// How many devices `shared` holds, so that the allocator knows in O(1) whether a
    /// node reaches any device beyond its own.
    shared_len: usize,
    /// Devices with `allowMultipleAllocations` (several consumers may share one).
    shareable: DeviceSet,
    pub(crate) groups: Vec<TaintGroup>,
    free_groups: Vec<u32>,
    group_by_key: BTreeMap<(String, String, bool), u32>,
    by_driver: BTreeMap<Symbol, DeviceSet>,
    /// The attribute inverted index, shared with clones until a slice changes.
    attr_values: Arc<BTreeMap<(Symbol, AttrKey), SparseDeviceSet>>,
    attr_present: Arc<BTreeMap<Symbol, SparseDeviceSet>>,
    /// Per tracked topology key: its name interned and its domains (label values),
    /// each a slot in `domains`. Domains stay once seen (their node count may fall
    /// to 0).
    topology_keys: BTreeMap<String, nodes::TrackedKey>,
    /// Every topology domain, by slot: a node keeps the slots of its domains (in its
    /// `NodeState`), so its device changes and its value of a tracked key need no
    /// label lookup.
    domains: Vec<nodes::Domain>,
    /// Live nodes by label: key → value → node ids, so that a pod's `nodeSelector`
    /// (say, a hostname) narrows its candidate nodes without reading every node's
    /// labels. Shared with clones until a node changes.
    node_labels: Arc<BTreeMap<String, BTreeMap<String, BTreeSet<NodeId>>>>,
    /// The logical clock: what "now" is for taints that arrive without `timeAdded`.
    clock: Time,
    /// The tracked node measures of a scoring mix (see `score_table.rs`), if any.
    scores: Option<Box<score_table::ScoreTable>>,
    /// A placement search's per-node table, lent to each search (see [`NodeScratch`]).
    pub(crate) node_scratch: NodeScratch,
}

/// A placement search's per-node table (`Search::last_on_node`), every entry `None`
/// between searches: lent to each search and given back, so that placing a unit does
/// not allocate and fill an entry per node (on a 12,500-node fleet, an eighth of the
/// instructions of a cycle of small units). A clone starts empty, and `Debug` shows
/// nothing of it: it is scratch, not state.
#[derive(Default)]
pub(crate) struct NodeScratch(pub(crate) Vec<Option<u32>>);

impl Clone for NodeScratch {
    fn clone(&self) -> Self {
        NodeScratch::default()
    }
}

impl fmt::Debug for NodeScratch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NodeScratch")
    }
}

/// A change counter (see [`Cluster::eviction_epoch`]). Its `Debug` leaves the number
/// out: it is bookkeeping, and two clusters that differ only in how many changes led
/// to them are in the same state.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Epoch(pub(crate) u64);

impl core::fmt::Debug for Epoch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("Epoch")
    }
}

impl Epoch {
    pub(crate) fn bump(&mut self) {
        self.0 = self.0.wrapping_add(1);
    }
}

fn not_found(kind: ObjectKind, name: &str) -> ClusterError {
    ClusterError::NotFound(ObjectRef::cluster(kind, name))
}

impl Cluster {
    /// An empty cluster.
    #[must_use]
    pub fn new() -> Cluster {
        Cluster::default()
    }

    // ----------------------------------------------------------------- clock

    /// Sets the logical clock. gangpack never reads a system clock: "now" is what the
    /// caller says. It stamps taints that arrive without `timeAdded` (as the API server
    /// does on create and update) and, as upstream does, a DeviceTaintRule whose effect
    /// changes while its `timeAdded` stays the same.
    pub fn set_clock(&mut self, now: Time) {
        self.clock = now;
    }

    /// The logical clock (see [`set_clock`](Self::set_clock)); starts at `Time(0)`.
    pub fn clock(&self) -> Time {
        self.clock
    }
}
