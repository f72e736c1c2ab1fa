//! The cluster: the model objects plus the bitset index over their devices, kept in
//! step by transactional mutations.

use core::fmt;

pub(crate) mod bits;
pub(crate) mod cow;
pub(crate) mod ids;
pub(crate) mod intern;

use alloc::sync::Arc;
use smallvec::SmallVec;

use crate::alloc_prelude::*;
use crate::cluster::bits::{DeviceSet, SparseDeviceSet};
use crate::cluster::ids::{DeviceId, NodeId, PoolId, SliceId};
use crate::cluster::intern::{Interner, Symbol};
use crate::model::device::NodeAccess;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError};
use crate::model::slice::SliceNodeSelection;
use crate::model::toleration::{EvictionVerdict, device_eviction};
use crate::{
    Device, DeviceAttribute, DeviceClass, DeviceTaint, DeviceTaintEffect, DeviceTaintRule,
    DeviceToleration, Node, Quantity, ResourceSlice, Taint, TaintEffect, Time,
};

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

/// One node resource that does not fit.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Shortfall {
    /// The resource name (`cpu`, `memory`, `nvidia.com/gpu`, ...).
    pub resource: String,
    /// What is asked for.
    pub requested: Quantity,
    /// What the node has free.
    pub available: Quantity,
}

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

/// Why a pool is not usable although its slices are valid one by one.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum PoolProblem {
    /// Two slices of the current generation publish a device of this name.
    DuplicateDevice(String),
    /// Two slices of the current generation publish a counter set of this name.
    DuplicateCounterSet(String),
    /// A device consumes from a counter set the pool does not have.
    MissingCounterSet {
        /// The device.
        device: String,
        /// The counter set it names.
        counter_set: String,
    },
    /// A device consumes a counter its counter set does not have.
    MissingCounter {
        /// The device.
        device: String,
        /// The counter set.
        counter_set: String,
        /// The counter it names.
        counter: String,
    },
}

/// The state of one resource pool.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct PoolStatus {
    /// The driver.
    pub driver: String,
    /// The pool name.
    pub name: String,
    /// The highest generation seen; only slices of this generation count.
    pub generation: i64,
    /// Slices present at that generation.
    pub slices_present: usize,
    /// `resourceSliceCount` of that generation.
    pub slices_expected: i64,
    /// Problems that make the pool invalid (its devices are never used).
    pub problems: Vec<PoolProblem>,
}

impl PoolStatus {
    /// Every slice of the current generation is present.
    pub fn is_complete(&self) -> bool {
        i64::try_from(self.slices_present).is_ok_and(|n| n == self.slices_expected)
    }

    /// Complete and without problems: its devices can be allocated.
    pub fn is_usable(&self) -> bool {
        self.is_complete() && self.problems.is_empty()
    }
}

/// Device counts of one node or one topology domain, maintained incrementally.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct DeviceCounts {
    /// Nodes (for a domain; 1 for a node).
    pub nodes: u32,
    /// Usable devices: in a complete, valid pool at its current generation.
    pub devices: u32,
    /// Usable devices not allocated exclusively.
    pub free: u32,
    /// Free devices without any `NoSchedule` / `NoExecute` taint.
    pub free_untainted: u32,
}

impl DeviceCounts {
    fn add(&mut self, o: DeviceCounts) {
        self.nodes += o.nodes;
        self.devices += o.devices;
        self.free += o.free;
        self.free_untainted += o.free_untainted;
    }

    fn sub(&mut self, o: DeviceCounts) {
        self.nodes -= o.nodes;
        self.devices -= o.devices;
        self.free -= o.free;
        self.free_untainted -= o.free_untainted;
    }

    fn of_flags(flags: u8) -> DeviceCounts {
        let eligible = flags & ELIGIBLE != 0;
        let free = eligible && flags & FREE != 0;
        DeviceCounts {
            nodes: 0,
            devices: u32::from(eligible),
            free: u32::from(free),
            free_untainted: u32::from(free && flags & TAINTED == 0),
        }
    }
}

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

/// Memory used by the device index, for the budget in `benches/RESULTS.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct IndexMemory {
    /// Devices indexed.
    pub devices: usize,
    /// Bytes of the per-device slots and the dense and per-node/per-pool sets.
    pub structural_bytes: usize,
    /// Bytes of the attribute inverted index (grows with attribute values).
    pub attribute_bytes: usize,
}

impl IndexMemory {
    /// Structural bytes per device (the figure the budget is about).
    #[allow(clippy::cast_precision_loss)] // a report, not arithmetic
    pub fn structural_bytes_per_device(&self) -> f64 {
        if self.devices == 0 {
            0.0
        } else {
            self.structural_bytes as f64 / self.devices as f64
        }
    }
}

pub(crate) const ELIGIBLE: u8 = 1;
pub(crate) const FREE: u8 = 2;
pub(crate) const TAINTED: u8 = 4;
pub(crate) const SHAREABLE: u8 = 8;
/// Held for an allocation the placer is trying ([`Cluster::hold`]): not free, as if a
/// holder were recorded. Never set outside a placement.
pub(crate) const HELD: u8 = 16;

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

/// The inverted-index key of one attribute value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum AttrKey {
    Int(i64),
    Bool(bool),
    Str(Symbol),
    Version(Symbol),
}

/// The per-device record of the index: 20 bytes (its pool is its slice's). The device's (driver, pool, name)
/// key, under which allocations are recorded so that they survive a slice being
/// republished, is `(pool.driver, pool.name, name)`. Applied taints live in a side
/// map because few devices carry any.
#[derive(Clone, Debug)]
pub(crate) struct DeviceSlot {
    pub(crate) slice: SliceId,
    pub(crate) name: Symbol,
    /// The node for node-local devices, `NO_NODE` for shared ones.
    pub(crate) node: NodeId,
    /// Devices of one pool with equal `equiv` have equal attributes, capacities,
    /// counter consumption and shareability: the allocator treats them as
    /// interchangeable.
    pub(crate) equiv: u32,
    /// Position in `slice.devices`.
    pub(crate) pos: u16,
    pub(crate) flags: u8,
}

/// `DeviceSlot::node` of a device that no single node owns.
const NO_NODE: NodeId = NodeId(u32::MAX);

impl DeviceSlot {
    pub(crate) fn node(&self) -> Option<NodeId> {
        (self.node != NO_NODE).then_some(self.node)
    }
}

pub(crate) type DeviceKey = (Symbol, Symbol, Symbol);

#[derive(Clone, Debug)]
pub(crate) struct SliceEntry {
    /// Shared, so that cloning a cluster (a what-if snapshot, a placement's scratch
    /// copy) does not copy every device; edits copy on write.
    pub(crate) slice: Arc<ResourceSlice>,
    pub(crate) pool: PoolId,
    /// Shared too: a copy of the slice table (on the first edit after a clone) copies
    /// no device list.
    pub(crate) devices: Arc<[DeviceId]>,
}

#[derive(Clone, Debug)]
pub(crate) struct PoolEntry {
    pub(crate) driver: Symbol,
    pub(crate) name: Symbol,
    /// Every slice of the pool, any generation, by slice name.
    pub(crate) slices: BTreeMap<String, SliceId>,
    /// A current device has binding conditions: upstream tries such pools last.
    pub(crate) binding_conditions: bool,
    pub(crate) status: PoolStatus,
    /// Current-generation devices by name.
    /// Current-generation devices by name, sorted by symbol (8 bytes a device).
    device_by_name: Vec<(Symbol, DeviceId)>,
    /// Current-generation devices.
    devices: SparseDeviceSet,
}

/// A node slot: the node (if it exists) and its devices.
#[derive(Clone, Debug, Default)]
struct NodeEntry {
    name: String,
    node: Option<Arc<Node>>,
    devices: SparseDeviceSet,
    /// The node-local devices in upstream's allocation order (pools by driver then
    /// name, binding-condition pools last, slices by name, devices in slice order).
    pub(crate) ordered: Vec<DeviceId>,
    /// The node advertises a `pods` allocatable. This and the two flags below are
    /// cached next to the device set, so the placer's per-node scan does not load the
    /// node object for nodes that pass them.
    pod_limit: bool,
    /// `spec.unschedulable` (cordoned).
    cordoned: bool,
    /// The node has a `NoSchedule` or `NoExecute` taint.
    hard_taints: bool,
}

/// What changes on a node as devices are allocated and pods reserve resources (kept
/// apart from [`NodeEntry`], which clones share).
#[derive(Clone, Debug, Default)]
struct NodeState {
    counts: DeviceCounts,
    /// Scalar resources reserved by consumers (pods), by consumer.
    reserved: BTreeMap<String, BTreeMap<String, Quantity>>,
    /// Their sum by resource name.
    requested: BTreeMap<String, Quantity>,
}

/// A DeviceClass compiled: its selectors, the devices they all accept, and the devices
/// on which evaluating them failed (a runtime error aborts an allocation upstream).
#[derive(Clone, Debug)]
pub(crate) struct ClassCache {
    selectors: Vec<crate::Selector>,
    pub(crate) matches: DeviceSet,
    pub(crate) errors: BTreeMap<DeviceId, crate::EvalError>,
}

impl ClassCache {
    fn evaluate(&mut self, dev: DeviceId, driver: &str, device: &Device) {
        let mut ok = true;
        for s in &self.selectors {
            match s.eval(driver, device) {
                Ok(true) => {}
                Ok(false) => {
                    ok = false;
                    break;
                }
                Err(e) => {
                    self.errors.insert(dev, e);
                    ok = false;
                    break;
                }
            }
        }
        self.matches.set(dev, ok);
    }

    fn forget(&mut self, dev: DeviceId) {
        self.matches.remove(dev);
        self.errors.remove(&dev);
    }
}

#[derive(Clone, Debug)]
pub(crate) struct TaintGroup {
    /// A representative taint of the group (its `time_added` is irrelevant).
    pub(crate) probe: DeviceTaint,
    members: DeviceSet,
    len: usize,
    /// Rules whose taint is of this group (a rule may select no device yet).
    rule_refs: u32,
}

#[derive(Clone, Debug)]
struct RuleEntry {
    rule: DeviceTaintRule,
    slot: u32,
    group: Option<u32>,
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
    slices: crate::cluster::cow::CowVec<Option<SliceEntry>>,
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
    rule_slots: Vec<Option<String>>,
    pub(crate) allocations: BTreeMap<DeviceKey, Vec<DeviceAllocation>>,
    /// Shared with clones until a device's taints change.
    pub(crate) applied: Arc<BTreeMap<DeviceId, SmallVec<[AppliedTaint; 2]>>>,
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
    topology_keys: BTreeMap<String, BTreeMap<String, DeviceCounts>>,
    /// The logical clock: what "now" is for taints that arrive without `timeAdded`.
    clock: Time,
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

    /// Stamps a slice's taints that have no `timeAdded`: with the time of the same
    /// taint (key, value, effect) on the same device in `old`, else with the clock.
    fn stamp_slice(&self, slice: &mut ResourceSlice, old: Option<&ResourceSlice>) {
        for d in &mut slice.devices {
            let old_device = old.and_then(|o| o.devices.iter().find(|x| x.name == d.name));
            for t in d.taints.iter_mut().filter(|t| t.time_added.is_none()) {
                let kept = old_device.and_then(|od| {
                    od.taints
                        .iter()
                        .find(|o| o.key == t.key && o.value == t.value && o.effect == t.effect)
                        .and_then(|o| o.time_added)
                });
                t.time_added = Some(kept.unwrap_or(self.clock));
            }
        }
    }

    // ----------------------------------------------------------------- nodes

    /// Adds a node.
    pub fn add_node(&mut self, node: Node) -> Result<NodeId, ClusterError> {
        node.validate()?;
        if self.node(&node.name).is_some() {
            return Err(ClusterError::AlreadyExists(node.object_ref()));
        }
        Ok(self.put_node(node))
    }

    /// Replaces a node (labels, allocatable, taints), keeping its devices.
    pub fn replace_node(&mut self, node: Node) -> Result<NodeId, ClusterError> {
        node.validate()?;
        if self.node(&node.name).is_none() {
            return Err(ClusterError::NotFound(node.object_ref()));
        }
        Ok(self.put_node(node))
    }

    /// Removes a node. Its node-local slices stay (as in Kubernetes, where the driver
    /// or the garbage collector removes them), but no pod can reach them.
    pub fn remove_node(&mut self, name: &str) -> Result<Node, ClusterError> {
        let id = *self
            .node_by_name
            .get(name)
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        let Some(old) = self.nodes[id.index()].node.as_deref().cloned() else {
            return Err(not_found(ObjectKind::Node, name));
        };
        self.set_node_domains(id, None);
        let entry = &mut Arc::make_mut(&mut self.nodes)[id.index()];
        entry.node = None;
        entry.pod_limit = false;
        entry.cordoned = false;
        entry.hard_taints = false;
        Ok(old)
    }

    /// Adds a taint to a node (like `kubectl taint`); a taint with the same key and
    /// effect is replaced.
    pub fn taint_node(&mut self, name: &str, taint: Taint) -> Result<(), ClusterError> {
        let mut node = self
            .node(name)
            .cloned()
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        node.taints
            .retain(|t| !(t.key == taint.key && t.effect == taint.effect));
        node.taints.push(taint);
        self.replace_node(node).map(|_| ())
    }

    /// Removes a node's taints with this key (and effect, if given); returns how many.
    pub fn untaint_node(
        &mut self,
        name: &str,
        key: &str,
        effect: Option<TaintEffect>,
    ) -> Result<usize, ClusterError> {
        let mut node = self
            .node(name)
            .cloned()
            .ok_or_else(|| not_found(ObjectKind::Node, name))?;
        let before = node.taints.len();
        node.taints
            .retain(|t| !(t.key == key && effect.is_none_or(|e| e == t.effect)));
        let removed = before - node.taints.len();
        self.replace_node(node)?;
        Ok(removed)
    }

    fn put_node(&mut self, node: Node) -> NodeId {
        let id = self.node_slot(&node.name);
        let labels = node.labels.clone();
        self.set_node_domains(id, Some(&labels));
        let entry = &mut Arc::make_mut(&mut self.nodes)[id.index()];
        entry.pod_limit = node.allocatable.contains_key("pods");
        entry.cordoned = node.unschedulable;
        entry.hard_taints = node
            .taints
            .iter()
            .any(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute));
        entry.node = Some(Arc::new(node));
        id
    }

    /// The node slot for a name, created on first use (slices may name a node before
    /// the Node object arrives).
    fn node_slot(&mut self, name: &str) -> NodeId {
        if let Some(&id) = self.node_by_name.get(name) {
            return id;
        }
        let id = NodeId(self.nodes.len() as u32);
        Arc::make_mut(&mut self.nodes).push(NodeEntry {
            name: name.to_owned(),
            ..NodeEntry::default()
        });
        self.node_state.push(NodeState {
            counts: DeviceCounts {
                nodes: 1,
                ..DeviceCounts::default()
            },
            ..NodeState::default()
        });
        Arc::make_mut(&mut self.node_by_name).insert(name.to_owned(), id);
        let at = self
            .node_order
            .partition_point(|o| self.nodes[o.index()].name.as_str() < name);
        Arc::make_mut(&mut self.node_order).insert(at, id);
        id
    }

    /// Moves a node's counts from the domains of its old labels to those of `labels`.
    fn set_node_domains(&mut self, id: NodeId, labels: Option<&BTreeMap<String, String>>) {
        let entry = &self.nodes[id.index()];
        let counts = self.node_state[id.index()].counts;
        let old = entry.node.as_ref().map(|n| n.labels.clone());
        for (key, domains) in &mut self.topology_keys {
            if let Some(v) = old.as_ref().and_then(|l| l.get(key))
                && let Some(c) = domains.get_mut(v)
            {
                c.sub(counts);
            }
            if let Some(v) = labels.and_then(|l| l.get(key)) {
                domains.entry(v.clone()).or_default().add(counts);
            }
        }
    }

    /// The node of this name.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.node_by_name
            .get(name)
            .and_then(|id| self.nodes[id.index()].node.as_deref())
    }

    /// The id of a node (or of a node name a slice refers to).
    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.node_by_name.get(name).copied()
    }

    /// The node with this id.
    pub fn node_by_id(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index()).and_then(|e| e.node.as_deref())
    }

    /// Every node, by name.
    pub fn nodes(&self) -> impl Iterator<Item = &Node> + '_ {
        self.node_by_name
            .values()
            .filter_map(|id| self.nodes[id.index()].node.as_deref())
    }

    /// The node-local devices of a node (any state).
    pub fn node_devices(&self, node: NodeId) -> Option<&SparseDeviceSet> {
        self.nodes.get(node.index()).map(|e| &e.devices)
    }

    /// A node's node-local devices in upstream's allocation order.
    pub(crate) fn nodes_ordered(&self, node: NodeId) -> &[DeviceId] {
        self.nodes
            .get(node.index())
            .map_or(&[], |e| e.ordered.as_slice())
    }

    /// How many node names are known: at least as many as
    /// [`nodes_with_ids`](Self::nodes_with_ids) yields, and every node id is below it.
    pub(crate) fn node_slots(&self) -> usize {
        debug_assert_eq!(self.nodes.len(), self.node_by_name.len());
        self.nodes.len()
    }

    /// Live nodes as `(id, node)`, by name.
    pub(crate) fn nodes_with_ids(&self) -> impl Iterator<Item = (NodeId, &Node)> + '_ {
        self.node_order
            .iter()
            .filter_map(|id| Some((*id, self.nodes[id.index()].node.as_deref()?)))
    }

    /// Node slot ids by name (live nodes and names only slices refer to).
    pub(crate) fn node_order(&self) -> &[NodeId] {
        &self.node_order
    }

    /// Whether the node advertises a `pods` allocatable (the pods it may run).
    pub(crate) fn node_has_pod_limit(&self, node: NodeId) -> bool {
        self.nodes.get(node.index()).is_some_and(|e| e.pod_limit)
    }

    /// Whether the node is cordoned, and whether it has a `NoSchedule` or `NoExecute`
    /// taint (without loading the node object).
    pub(crate) fn node_flags(&self, node: NodeId) -> (bool, bool) {
        self.nodes
            .get(node.index())
            .map_or((false, false), |e| (e.cordoned, e.hard_taints))
    }

    /// A node slot's free usable devices, of any class (from its counts; no node object
    /// or device set is loaded).
    pub(crate) fn node_free_devices(&self, node: NodeId) -> u32 {
        self.node_state
            .get(node.index())
            .map_or(0, |s| s.counts.free)
    }

    /// What is left of one allocatable resource of a node (zero if it lacks it).
    pub(crate) fn node_free_of(&self, node: NodeId, resource: &str) -> Quantity {
        let Some(e) = self.nodes.get(node.index()) else {
            return Quantity::ZERO;
        };
        let Some(total) = e.node.as_ref().and_then(|n| n.allocatable.get(resource)) else {
            return Quantity::ZERO;
        };
        let requested = &self.node_state[node.index()].requested;
        total.saturating_sub(requested.get(resource).copied().unwrap_or(Quantity::ZERO))
    }

    /// The devices a DeviceClass's selectors accept (any state), if the class exists.
    pub(crate) fn class_devices(&self, class: &str) -> Option<&DeviceSet> {
        self.class_cache.get(class).map(|c| &c.matches)
    }

    /// A node's device counts, maintained incrementally (O(1)).
    pub fn node_counts(&self, node: NodeId) -> Option<DeviceCounts> {
        self.node_state.get(node.index()).map(|e| e.counts)
    }

    // ----------------------------------------------------------------- node scalars

    /// What is left of a node's allocatable scalar resources (cpu, memory, pods,
    /// extended resources) after the reservations recorded on it.
    pub fn node_free_resources(&self, node: &str) -> Option<BTreeMap<String, Quantity>> {
        let id = self.node_id(node)?;
        let n = self.nodes[id.index()].node.as_ref()?;
        let requested = &self.node_state[id.index()].requested;
        Some(
            n.allocatable
                .iter()
                .map(|(k, v)| {
                    let used = requested.get(k).copied().unwrap_or(Quantity::ZERO);
                    (k.clone(), v.saturating_sub(used))
                })
                .collect(),
        )
    }

    /// Which of `requests` a node cannot hold now (empty when they all fit). A
    /// resource the node does not advertise has nothing free; zero requests always fit.
    pub fn node_shortfalls(
        &self,
        node: &str,
        requests: &BTreeMap<String, Quantity>,
    ) -> Vec<Shortfall> {
        self.shortfalls_on(self.node_id(node), requests)
    }

    /// [`node_shortfalls`](Self::node_shortfalls) by node id (`None`: an unknown node,
    /// which has nothing free), without building the node's free-resource map.
    pub(crate) fn shortfalls_on(
        &self,
        node: Option<NodeId>,
        requests: &BTreeMap<String, Quantity>,
    ) -> Vec<Shortfall> {
        requests
            .iter()
            .filter(|(_, q)| **q > Quantity::ZERO)
            .filter_map(|(name, q)| {
                let available = node.map_or(Quantity::ZERO, |id| self.node_free_of(id, name));
                (*q > available).then(|| Shortfall {
                    resource: name.clone(),
                    requested: *q,
                    available,
                })
            })
            .collect()
    }

    /// Reserves scalar resources on a node for `consumer` (a pod: include `pods: 1`).
    /// Refused, with nothing changed, if the node is unknown, the consumer already holds
    /// a reservation there, or any resource does not fit.
    pub fn reserve_node_resources(
        &mut self,
        node: &str,
        consumer: &str,
        requests: BTreeMap<String, Quantity>,
    ) -> Result<(), ClusterError> {
        // The consumer is a pod; its requests are `resources.requests`.
        let obj = ObjectRef::cluster(ObjectKind::Pod, consumer);
        let mut errs = Vec::new();
        if consumer.is_empty() {
            errs.push(ValidationError::new(
                obj.clone(),
                "metadata.name",
                Problem::Required,
            ));
        }
        crate::model::node::validate_resource_list(
            &obj,
            "spec.resources.requests",
            &requests,
            &mut errs,
        );
        crate::model::error::finish(errs).map_err(ClusterError::Invalid)?;
        let Some(id) = self
            .node_id(node)
            .filter(|id| self.nodes[id.index()].node.is_some())
        else {
            return Err(not_found(ObjectKind::Node, node));
        };
        self.reserve_node_resources_on(id, consumer, requests)
    }

    /// [`reserve_node_resources`](Self::reserve_node_resources) on a live node, by id,
    /// for a non-empty consumer name and requests that pass the resource-list checks
    /// (the placer checks each pod shape's once): no validation, no name lookup.
    pub(crate) fn reserve_node_resources_on(
        &mut self,
        id: NodeId,
        consumer: &str,
        requests: BTreeMap<String, Quantity>,
    ) -> Result<(), ClusterError> {
        if self.node_state[id.index()].reserved.contains_key(consumer) {
            return Err(ClusterError::AlreadyReserved {
                node: self.nodes[id.index()].name.clone(),
                consumer: consumer.to_owned(),
            });
        }
        let short = self.shortfalls_on(Some(id), &requests);
        if !short.is_empty() {
            return Err(ClusterError::Insufficient {
                node: self.nodes[id.index()].name.clone(),
                shortfalls: short,
            });
        }
        let e = &mut self.node_state[id.index()];
        for (k, q) in &requests {
            let t = e.requested.entry(k.clone()).or_insert(Quantity::ZERO);
            *t = t.saturating_add(*q);
        }
        e.reserved.insert(consumer.to_owned(), requests);
        Ok(())
    }

    /// Releases a consumer's reservation on a node; returns it.
    pub fn release_node_resources(
        &mut self,
        node: &str,
        consumer: &str,
    ) -> Result<BTreeMap<String, Quantity>, ClusterError> {
        let id = self
            .node_id(node)
            .ok_or_else(|| not_found(ObjectKind::Node, node))?;
        self.release_node_resources_on(id, consumer)
            .ok_or_else(|| ClusterError::NotReserved {
                node: node.to_owned(),
                consumer: consumer.to_owned(),
            })
    }

    /// [`release_node_resources`](Self::release_node_resources) by node id; `None` when
    /// the consumer holds no reservation there.
    pub(crate) fn release_node_resources_on(
        &mut self,
        id: NodeId,
        consumer: &str,
    ) -> Option<BTreeMap<String, Quantity>> {
        let e = &mut self.node_state[id.index()];
        let requests = e.reserved.remove(consumer)?;
        for (k, q) in &requests {
            if let Some(t) = e.requested.get_mut(k) {
                *t = t.saturating_sub(*q);
                if t.is_zero() {
                    e.requested.remove(k);
                }
            }
        }
        Some(requests)
    }

    // ----------------------------------------------------------------- topology

    /// Starts maintaining per-domain counts for a node-label key (e.g. a rack label).
    pub fn track_topology_key(&mut self, key: &str) {
        if self.topology_keys.contains_key(key) {
            return;
        }
        let mut domains: BTreeMap<String, DeviceCounts> = BTreeMap::new();
        for (e, state) in self.nodes.iter().zip(&self.node_state) {
            if let Some(v) = e.node.as_ref().and_then(|n| n.labels.get(key)) {
                domains.entry(v.clone()).or_default().add(state.counts);
            }
        }
        self.topology_keys.insert(key.to_owned(), domains);
    }

    /// Counts of one topology domain (`key` = `value`), if `key` is tracked.
    pub fn domain_counts(&self, key: &str, value: &str) -> Option<DeviceCounts> {
        self.topology_keys
            .get(key)
            .map(|d| d.get(value).copied().unwrap_or_default())
    }

    /// Every domain of a tracked key with its counts, by value.
    pub fn domains(&self, key: &str) -> impl Iterator<Item = (&str, DeviceCounts)> + '_ {
        self.topology_keys.get(key).into_iter().flat_map(|d| {
            d.iter()
                .filter(|(_, c)| c.nodes > 0)
                .map(|(v, c)| (v.as_str(), *c))
        })
    }

    // ----------------------------------------------------------------- classes

    /// Adds or replaces a DeviceClass.
    ///
    /// Its CEL selectors are compiled now (an expression outside the supported subset
    /// is refused, with its position) and evaluated once on every device; the result is
    /// kept up to date as slices change.
    pub fn put_class(&mut self, class: DeviceClass) -> Result<(), ClusterError> {
        class.validate()?;
        let mut selectors = Vec::with_capacity(class.selectors.len());
        let mut errs = Vec::new();
        for (i, s) in class.selectors.iter().enumerate() {
            match crate::Selector::compile(&s.cel) {
                Ok(sel) => selectors.push(sel),
                Err(error) => errs.push(ValidationError::new(
                    class.object_ref(),
                    format!("spec.selectors[{i}].cel.expression"),
                    Problem::InvalidExpression {
                        message: error.to_string(),
                    },
                )),
            }
        }
        crate::model::error::finish(errs)?;
        let mut cache = ClassCache {
            selectors,
            matches: DeviceSet::with_universe(self.devices.len()),
            errors: BTreeMap::new(),
        };
        for dev in self.live.iter() {
            let slot = self.devices[dev.index()].as_ref().expect("live device id");
            let e = self.slice_entry(slot.slice);
            cache.evaluate(dev, &e.slice.driver, &e.slice.devices[slot.pos as usize]);
        }
        self.class_cache.insert(class.name.clone(), cache);
        self.classes.insert(class.name.clone(), class);
        Ok(())
    }

    /// Removes a DeviceClass.
    pub fn remove_class(&mut self, name: &str) -> Result<DeviceClass, ClusterError> {
        self.class_cache.remove(name);
        self.classes
            .remove(name)
            .ok_or_else(|| not_found(ObjectKind::DeviceClass, name))
    }

    /// A DeviceClass by name.
    pub fn class(&self, name: &str) -> Option<&DeviceClass> {
        self.classes.get(name)
    }

    /// Every DeviceClass, by name.
    pub fn classes(&self) -> impl Iterator<Item = &DeviceClass> + '_ {
        self.classes.values()
    }

    // ----------------------------------------------------------------- slices

    /// Adds a ResourceSlice. Returns the evictions its taints start on devices that
    /// are already allocated (a republished pool, say).
    pub fn add_slice(&mut self, mut slice: ResourceSlice) -> Result<TaintReport, ClusterError> {
        slice.validate()?;
        self.stamp_slice(&mut slice, None);
        if self.slice_by_name.contains_key(&slice.name) {
            return Err(ClusterError::AlreadyExists(slice.object_ref()));
        }
        let mut refs = self.pool_refs(&slice.driver, &slice.pool.name);
        refs.extend(slice_refs(&slice));
        Ok(self.with_eviction_diff(&refs, |c| {
            c.insert_slice(slice);
        }))
    }

    /// Replaces a ResourceSlice of the same name (a driver republishing it).
    pub fn replace_slice(&mut self, mut slice: ResourceSlice) -> Result<TaintReport, ClusterError> {
        slice.validate()?;
        let Some(&old) = self.slice_by_name.get(&slice.name) else {
            return Err(ClusterError::NotFound(slice.object_ref()));
        };
        self.stamp_slice(&mut slice, Some(&self.slice_entry(old).slice));
        let old_entry = self.slice_entry(old);
        // Upstream: driver, pool name and node name are immutable.
        let immutable = [
            ("spec.driver", old_entry.slice.driver == slice.driver),
            (
                "spec.pool.name",
                old_entry.slice.pool.name == slice.pool.name,
            ),
            (
                "spec.nodeName",
                old_entry.slice.node_name() == slice.node_name(),
            ),
        ];
        let errs: Vec<ValidationError> = immutable
            .iter()
            .filter(|(_, same)| !same)
            .map(|(field, _)| {
                ValidationError::new(
                    slice.object_ref(),
                    *field,
                    Problem::Forbidden {
                        reason: "field is immutable",
                    },
                )
            })
            .collect();
        if !errs.is_empty() {
            return Err(ClusterError::Invalid(errs));
        }
        let refs = self.pool_refs(&slice.driver, &slice.pool.name);
        Ok(self.with_eviction_diff(&refs, |c| {
            c.delete_slice(old);
            c.insert_slice(slice);
        }))
    }

    /// Removes a ResourceSlice; returns it and the evictions this starts or cancels
    /// (a pool that falls back to an older generation, or an allocated device that
    /// disappears and keeps only the taints of rules that select it).
    pub fn remove_slice(
        &mut self,
        name: &str,
    ) -> Result<(ResourceSlice, TaintReport), ClusterError> {
        let id = *self
            .slice_by_name
            .get(name)
            .ok_or_else(|| not_found(ObjectKind::ResourceSlice, name))?;
        let e = self.slice_entry(id);
        let refs = self.pool_refs(&e.slice.driver, &e.slice.pool.name);
        let mut removed = None;
        let report = self.with_eviction_diff(&refs, |c| removed = Some(c.delete_slice(id)));
        Ok((removed.expect("slice removed"), report))
    }

    /// A ResourceSlice by name.
    pub fn slice(&self, name: &str) -> Option<&ResourceSlice> {
        self.slice_by_name
            .get(name)
            .map(|id| &*self.slice_entry(*id).slice)
    }

    /// Every ResourceSlice, by name.
    pub fn slices(&self) -> impl Iterator<Item = &ResourceSlice> + '_ {
        self.slice_by_name
            .values()
            .map(|id| &*self.slice_entry(*id).slice)
    }

    pub(crate) fn slice_entry(&self, id: SliceId) -> &SliceEntry {
        self.slices[id.index()].as_ref().expect("live slice id")
    }

    fn insert_slice(&mut self, slice: ResourceSlice) -> SliceId {
        let id = if let Some(i) = self.free_slice_ids.pop_first() {
            SliceId(i)
        } else {
            self.slices.push(None);
            SliceId(self.slices.len() as u32 - 1)
        };
        let driver = Arc::make_mut(&mut self.strings).intern(&slice.driver);
        let pool_sym = Arc::make_mut(&mut self.strings).intern(&slice.pool.name);
        let pool = self.pool_slot(driver, pool_sym, &slice.driver, &slice.pool.name);
        Arc::make_mut(&mut self.pools)[pool.index()]
            .slices
            .insert(slice.name.clone(), id);
        Arc::make_mut(&mut self.slice_by_name).insert(slice.name.clone(), id);
        let slice_node = slice.node_name().map(str::to_owned);
        let mut ids = Vec::with_capacity(slice.devices.len());
        for (pos, d) in slice.devices.iter().enumerate() {
            let node_name = match &d.node_access {
                Some(NodeAccess::NodeName(n)) => Some(n.clone()),
                _ => slice_node.clone(),
            };
            let node = node_name.map(|n| self.node_slot(&n));
            let dev = self.alloc_device_id();
            let name = Arc::make_mut(&mut self.strings).intern(&d.name);
            self.devices[dev.index()] = Some(DeviceSlot {
                slice: id,
                pos: pos as u16,
                node: node.unwrap_or(NO_NODE),
                equiv: dev.0,
                name,
                flags: if d.allow_multiple_allocations {
                    SHAREABLE
                } else {
                    0
                },
            });
            self.grow_index(dev);
            self.live.insert(dev);
            self.shareable.set(dev, d.allow_multiple_allocations);
            if let Some(n) = node {
                Arc::make_mut(&mut self.nodes)[n.index()]
                    .devices
                    .insert(dev);
            } else {
                self.shared.insert(dev);
                self.shared_len += 1;
            }
            self.by_driver.entry(driver).or_default().insert(dev);
            self.index_attributes(dev, &slice.driver, d, true);
            ids.push(dev);
        }
        self.slices[id.index()] = Some(SliceEntry {
            slice: Arc::new(slice),
            pool,
            devices: Arc::from(ids.as_slice()),
        });
        for &dev in &ids {
            self.rebuild_taints(dev);
        }
        self.evaluate_classes(id);
        self.recompute_pool(pool);
        self.reorder_nodes_of_pool(pool);
        id
    }

    /// The allocation order of a device (see `NodeEntry::ordered`).
    pub(crate) fn order_key(&self, dev: DeviceId) -> (bool, &str, &str, &str, u16) {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let pool = &self.pools[self.pool_of(slot).index()];
        let slice = &self.slice_entry(slot.slice).slice.name;
        (
            pool.binding_conditions,
            &pool.status.driver,
            &pool.status.name,
            slice,
            slot.pos,
        )
    }

    /// Re-sorts the ordered device list of every node holding devices of the pool.
    fn reorder_nodes_of_pool(&mut self, pool: PoolId) {
        let mut nodes: BTreeSet<NodeId> = BTreeSet::new();
        for s in self.pools[pool.index()].slices.values() {
            for &dev in self.slice_entry(*s).devices.iter() {
                if let Some(n) = self.devices[dev.index()]
                    .as_ref()
                    .and_then(DeviceSlot::node)
                {
                    nodes.insert(n);
                }
            }
        }
        for n in nodes {
            self.reorder_node(n);
        }
    }

    fn reorder_node(&mut self, n: NodeId) {
        let mut ordered: Vec<DeviceId> = self.nodes[n.index()].devices.iter().collect();
        ordered.sort_by(|a, b| self.order_key(*a).cmp(&self.order_key(*b)));
        Arc::make_mut(&mut self.nodes)[n.index()].ordered = ordered;
    }

    /// Evaluates every cached class on the devices of one slice.
    fn evaluate_classes(&mut self, id: SliceId) {
        let entry = self.slices[id.index()].as_ref().expect("live slice id");
        for cache in self.class_cache.values_mut() {
            for (&dev, d) in entry.devices.iter().zip(&entry.slice.devices) {
                cache.evaluate(dev, &entry.slice.driver, d);
            }
        }
    }

    fn delete_slice(&mut self, id: SliceId) -> ResourceSlice {
        // Clear the devices' state while the slice entry still resolves their pool.
        let devices = self.slice_entry(id).devices.clone();
        for &dev in devices.iter() {
            self.set_groups(dev, SmallVec::new());
            self.apply_flags(dev, 0);
        }
        let entry = self.slices[id.index()].take().expect("live slice id");
        let nodes: BTreeSet<NodeId> = entry
            .devices
            .iter()
            .filter_map(|d| self.devices[d.index()].as_ref().and_then(DeviceSlot::node))
            .collect();
        self.free_slice_ids.insert(id.0);
        Arc::make_mut(&mut self.slice_by_name).remove(&entry.slice.name);
        Arc::make_mut(&mut self.pools)[entry.pool.index()]
            .slices
            .remove(&entry.slice.name);
        for (pos, &dev) in entry.devices.iter().enumerate() {
            let slot = self.devices[dev.index()].take().expect("live device id");
            self.live.remove(dev);
            self.shareable.remove(dev);
            if let Some(n) = slot.node() {
                Arc::make_mut(&mut self.nodes)[n.index()]
                    .devices
                    .remove(dev);
            } else {
                self.shared.remove(dev);
                self.shared_len -= 1;
            }
            if let Some(s) = self
                .by_driver
                .get_mut(&self.pools[entry.pool.index()].driver)
            {
                s.remove(dev);
            }
            self.index_attributes(dev, &entry.slice.driver, &entry.slice.devices[pos], false);
            for cache in self.class_cache.values_mut() {
                cache.forget(dev);
            }
            self.free_device_ids.insert(dev.0);
        }
        self.recompute_pool(entry.pool);
        for n in nodes {
            self.reorder_node(n);
        }
        self.reorder_nodes_of_pool(entry.pool);
        Arc::unwrap_or_clone(entry.slice)
    }

    fn alloc_device_id(&mut self) -> DeviceId {
        if let Some(i) = self.free_device_ids.pop_first() {
            DeviceId(i)
        } else {
            self.devices.push(None);
            DeviceId(self.devices.len() as u32 - 1)
        }
    }

    fn grow_index(&mut self, dev: DeviceId) {
        let n = dev.index() + 1;
        for s in [
            &mut self.live,
            &mut self.eligible,
            &mut self.free,
            &mut self.tainted,
            &mut self.shared,
            &mut self.shareable,
        ] {
            s.grow(n);
        }
    }

    fn pool_slot(&mut self, driver: Symbol, name: Symbol, driver_s: &str, name_s: &str) -> PoolId {
        if let Some(&p) = self.pool_by_key.get(&(driver, name)) {
            return p;
        }
        let id = PoolId(self.pools.len() as u32);
        Arc::make_mut(&mut self.pools).push(PoolEntry {
            driver,
            name,
            slices: BTreeMap::new(),
            status: PoolStatus {
                driver: driver_s.to_owned(),
                name: name_s.to_owned(),
                generation: 0,
                slices_present: 0,
                slices_expected: 0,
                problems: Vec::new(),
            },
            device_by_name: Vec::new(),
            devices: SparseDeviceSet::new(),
            binding_conditions: false,
        });
        Arc::make_mut(&mut self.pool_by_key).insert((driver, name), id);
        id
    }

    /// Recomputes a pool's generation, completeness and validity, and the usability of
    /// every device in it.
    fn recompute_pool(&mut self, pool: PoolId) {
        let slice_ids: Vec<SliceId> = self.pools[pool.index()].slices.values().copied().collect();
        let generation = slice_ids
            .iter()
            .map(|s| self.slice_entry(*s).slice.pool.generation)
            .max()
            .unwrap_or(0);
        let current: Vec<SliceId> = slice_ids
            .iter()
            .copied()
            .filter(|s| self.slice_entry(*s).slice.pool.generation == generation)
            .collect();
        // The slices of one generation should agree; the first by name decides.
        let expected = current
            .first()
            .map_or(0, |s| self.slice_entry(*s).slice.pool.resource_slice_count);
        let mut problems = Vec::new();
        let mut by_name: BTreeMap<Symbol, DeviceId> = BTreeMap::new();
        let mut counter_sets: BTreeMap<&str, &BTreeMap<String, crate::Quantity>> = BTreeMap::new();
        let mut devices = SparseDeviceSet::new();
        for &s in &current {
            let e = self.slice_entry(s);
            for cs in &e.slice.shared_counters {
                if counter_sets.insert(&cs.name, &cs.counters).is_some() {
                    problems.push(PoolProblem::DuplicateCounterSet(cs.name.clone()));
                }
            }
            for &dev in e.devices.iter() {
                let slot = self.devices[dev.index()].as_ref().expect("live device id");
                devices.insert(dev);
                if by_name.insert(slot.name, dev).is_some() {
                    problems.push(PoolProblem::DuplicateDevice(
                        self.strings.resolve(slot.name).to_owned(),
                    ));
                }
            }
        }
        for &s in &current {
            for d in &self.slice_entry(s).slice.devices {
                for c in &d.consumes_counters {
                    match counter_sets.get(c.counter_set.as_str()) {
                        None => problems.push(PoolProblem::MissingCounterSet {
                            device: d.name.clone(),
                            counter_set: c.counter_set.clone(),
                        }),
                        Some(set) => {
                            for counter in c.counters.keys().filter(|k| !set.contains_key(*k)) {
                                problems.push(PoolProblem::MissingCounter {
                                    device: d.name.clone(),
                                    counter_set: c.counter_set.clone(),
                                    counter: counter.clone(),
                                });
                            }
                        }
                    }
                }
            }
        }
        self.assign_equivalence(&current);
        let binding = current.iter().any(|s| {
            self.slice_entry(*s)
                .slice
                .devices
                .iter()
                .any(|d| !d.binding_conditions.is_empty())
        });
        let p = &mut Arc::make_mut(&mut self.pools)[pool.index()];
        p.binding_conditions = binding;
        p.status.generation = generation;
        p.status.slices_present = current.len();
        p.status.slices_expected = expected;
        p.status.problems = problems;
        let mut by_name: Vec<(Symbol, DeviceId)> = by_name.into_iter().collect();
        by_name.shrink_to_fit();
        p.device_by_name = by_name;
        p.devices = devices;
        let usable = p.status.is_usable();
        for s in slice_ids {
            let is_current = self.slice_entry(s).slice.pool.generation == generation;
            for &dev in self.slice_entry(s).devices.clone().iter() {
                let flags = self.devices[dev.index()].as_ref().map_or(0, |d| d.flags);
                let eligible = if usable && is_current { ELIGIBLE } else { 0 };
                self.set_flags(dev, (flags & !ELIGIBLE) | eligible);
            }
        }
    }

    /// Groups a pool's current devices into classes of interchangeable devices: equal
    /// in everything the allocator's search looks at (attributes, capacities, counter
    /// consumption, shareability, binding conditions, node access). Names and taints do
    /// not count (taints are applied before the search). A device's `equiv` is the id
    /// of the first device of its class.
    fn assign_equivalence(&mut self, slices: &[SliceId]) {
        let mut reps: BTreeMap<u64, Vec<(DeviceId, SliceId, usize)>> = BTreeMap::new();
        let mut assign: Vec<(DeviceId, u32)> = Vec::new();
        for &s in slices {
            let e = self.slice_entry(s);
            for (pos, (&dev, d)) in e.devices.iter().zip(&e.slice.devices).enumerate() {
                let h = content_hash(d);
                let bucket = reps.entry(h).or_default();
                let rep = bucket.iter().find(|(_, rs, rpos)| {
                    same_content(d, &self.slice_entry(*rs).slice.devices[*rpos])
                });
                let equiv = if let Some(&(r, _, _)) = rep {
                    r.0
                } else {
                    bucket.push((dev, s, pos));
                    dev.0
                };
                assign.push((dev, equiv));
            }
        }
        for (dev, equiv) in assign {
            if let Some(slot) = self.devices[dev.index()].as_mut() {
                slot.equiv = equiv;
            }
        }
    }

    /// The state of a pool.
    pub fn pool_status(&self, driver: &str, pool: &str) -> Option<&PoolStatus> {
        let key = (self.strings.get(driver)?, self.strings.get(pool)?);
        self.pool_by_key
            .get(&key)
            .map(|p| &self.pools[p.index()])
            .filter(|p| !p.slices.is_empty())
            .map(|p| &p.status)
    }

    /// Every pool that has at least one slice, by (driver, name).
    pub fn pools(&self) -> impl Iterator<Item = &PoolStatus> + '_ {
        let mut v: Vec<&PoolEntry> = self.pools.iter().filter(|p| !p.slices.is_empty()).collect();
        v.sort_by(|a, b| {
            (&a.status.driver, &a.status.name).cmp(&(&b.status.driver, &b.status.name))
        });
        v.into_iter().map(|p| &p.status)
    }

    /// The current-generation devices of a pool.
    pub fn pool_devices(&self, driver: &str, pool: &str) -> Option<&SparseDeviceSet> {
        let key = (self.strings.get(driver)?, self.strings.get(pool)?);
        self.pool_by_key
            .get(&key)
            .map(|p| &self.pools[p.index()].devices)
    }

    // ----------------------------------------------------------------- attribute index

    fn index_attributes(&mut self, dev: DeviceId, driver: &str, d: &Device, add: bool) {
        for (name, value) in &d.attributes {
            let (fq, shadowed) = qualified(driver, name, d);
            if shadowed {
                continue;
            }
            let name_sym = Arc::make_mut(&mut self.strings).intern(&fq);
            let keys = attr_keys(Arc::make_mut(&mut self.strings), value);
            let present = Arc::make_mut(&mut self.attr_present)
                .entry(name_sym)
                .or_default();
            if add {
                present.insert(dev);
            } else {
                present.remove(dev);
            }
            for k in keys {
                let set = Arc::make_mut(&mut self.attr_values)
                    .entry((name_sym, k))
                    .or_default();
                if add {
                    set.insert(dev);
                } else {
                    set.remove(dev);
                    if set.is_empty() {
                        Arc::make_mut(&mut self.attr_values).remove(&(name_sym, k));
                    }
                }
            }
        }
    }

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
        self.rules
            .insert(rule.name.clone(), RuleEntry { rule, slot, group });
        for &d in &devices {
            self.rebuild_taints(d);
        }
    }

    fn delete_rule(&mut self, name: &str) -> DeviceTaintRule {
        let entry = self.rules.remove(name).expect("rule exists");
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
    fn rebuild_taints(&mut self, dev: DeviceId) {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let entry = self.slice_entry(slot.slice);
        let d = &entry.slice.devices[slot.pos as usize];
        let driver = entry.slice.driver.clone();
        let pool = entry.slice.pool.name.clone();
        let name = d.name.clone();
        let own: Vec<DeviceTaint> = d.taints.clone();
        let mut applied: SmallVec<[AppliedTaint; 2]> = SmallVec::new();
        for (i, t) in own.iter().enumerate() {
            let group = self.group_for(t);
            applied.push(AppliedTaint {
                source: TaintSource::Slice(i as u8),
                group,
            });
        }
        for r in self.rules.values() {
            if r.rule.selects(&driver, &pool, &name) {
                applied.push(AppliedTaint {
                    source: TaintSource::Rule(r.slot),
                    group: r.group,
                });
            }
        }
        self.set_groups(dev, applied);
    }

    fn set_groups(&mut self, dev: DeviceId, applied: SmallVec<[AppliedTaint; 2]>) {
        let Some(slot) = self.devices[dev.index()].as_ref() else {
            return;
        };
        let new: BTreeSet<u32> = applied.iter().filter_map(|t| t.group).collect();
        let flags = (slot.flags & !TAINTED) | if new.is_empty() { 0 } else { TAINTED };
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
    fn pool_refs(&self, driver: &str, pool: &str) -> BTreeSet<DeviceRef> {
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
    fn with_eviction_diff(
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
        // Only an allocated device with a taint applied can be evicted from — or an
        // allocated device no slice publishes any more, which only rules can taint.
        for &dev in self.applied.keys() {
            let Some(slot) = self.devices[dev.index()].as_ref() else {
                continue;
            };
            let key = self.key_of(slot);
            // The device the key names now (a slice of an older generation may still
            // hold a device of the same name).
            if self.allocations.contains_key(&key) && self.device_by_key(key) == Some(dev) {
                self.evictions_of_ref(&self.ref_of_key(key), &mut out);
            }
        }
        if !self.rules.is_empty() {
            for &key in self.allocations.keys() {
                if self.device_by_key(key).is_none() {
                    self.evictions_of_ref(&self.ref_of_key(key), &mut out);
                }
            }
        }
        sort_notices(&mut out);
        out
    }

    /// The pool of a device (its slice's).
    pub(crate) fn pool_of(&self, slot: &DeviceSlot) -> PoolId {
        self.slice_entry(slot.slice).pool
    }

    pub(crate) fn key_of(&self, slot: &DeviceSlot) -> DeviceKey {
        let p = &self.pools[self.pool_of(slot).index()];
        (p.driver, p.name, slot.name)
    }

    fn device_by_key(&self, key: DeviceKey) -> Option<DeviceId> {
        let pool = self.pool_by_key.get(&(key.0, key.1))?;
        let by_name = &self.pools[pool.index()].device_by_name;
        by_name
            .binary_search_by_key(&key.2, |e| e.0)
            .ok()
            .map(|i| by_name[i].1)
    }

    /// Every eviction currently in force: allocated devices with a `NoExecute` taint
    /// their holder does not tolerate forever, sorted.
    pub fn pending_evictions(&self) -> Vec<EvictionNotice> {
        self.all_evictions()
    }

    // ----------------------------------------------------------------- allocations

    /// Records that `allocation.consumer` holds a device. Exclusive devices take one
    /// holder; devices with `allowMultipleAllocations` take many (capacity accounting
    /// belongs to the allocator); admin access never blocks and is never blocked.
    pub fn allocate(
        &mut self,
        device: &DeviceRef,
        allocation: DeviceAllocation,
    ) -> Result<DeviceId, ClusterError> {
        validate_allocation(&allocation)?;
        let dev = self
            .device_id(device)
            .ok_or_else(|| ClusterError::DeviceNotFound(device.clone()))?;
        self.allocate_on(dev, allocation)?;
        Ok(dev)
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
        let flags = slot.flags;
        self.allocations.entry(key).or_default().push(allocation);
        self.set_flags(dev, flags);
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
        let mut out: BTreeMap<String, crate::Quantity> = BTreeMap::new();
        for h in self.allocations(device).iter().filter(|h| !h.admin_access) {
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
    fn release_key(&mut self, key: DeviceKey, consumer: &str) -> Option<Vec<DeviceAllocation>> {
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
        if let Some(dev) = self.device_by_key(key) {
            let flags = self.devices[dev.index()].as_ref().map_or(0, |s| s.flags);
            self.set_flags(dev, flags);
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
    fn free_flag(&self, slot: &DeviceSlot, flags: u8) -> u8 {
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

    // ----------------------------------------------------------------- flags and counts

    /// Sets a device's ELIGIBLE and TAINTED bits (FREE is derived from the allocation
    /// records and holds, SHAREABLE is fixed) and updates the index.
    fn set_flags(&mut self, dev: DeviceId, flags: u8) {
        let Some(slot) = self.devices[dev.index()].as_ref() else {
            return;
        };
        let flags = (flags & (ELIGIBLE | TAINTED)) | (slot.flags & (SHAREABLE | HELD));
        let flags = flags | self.free_flag(slot, flags);
        self.apply_flags(dev, flags);
    }

    /// The single place device state changes: updates the dense sets and the node and
    /// domain counts by the difference.
    fn apply_flags(&mut self, dev: DeviceId, flags: u8) {
        let Some(slot) = self.devices[dev.index()].as_mut() else {
            return;
        };
        let old = slot.flags;
        if old == flags {
            return;
        }
        slot.flags = flags;
        let node = slot.node();
        let changed = old ^ flags;
        if changed & ELIGIBLE != 0 {
            self.eligible.set(dev, flags & ELIGIBLE != 0);
        }
        if changed & FREE != 0 {
            self.free.set(dev, flags & FREE != 0);
        }
        if changed & TAINTED != 0 {
            self.tainted.set(dev, flags & TAINTED != 0);
        }
        let (before, after) = (DeviceCounts::of_flags(old), DeviceCounts::of_flags(flags));
        if before == after {
            return;
        }
        if let Some(n) = node {
            let counts = &mut self.node_state[n.index()].counts;
            counts.sub(before);
            counts.add(after);
            if self.topology_keys.is_empty() {
                return;
            }
            if let Some(labels) = self.nodes[n.index()].node.as_ref().map(|n| &n.labels) {
                for (key, domains) in &mut self.topology_keys {
                    if let Some(c) = labels.get(key).and_then(|v| domains.get_mut(v)) {
                        c.sub(before);
                        c.add(after);
                    }
                }
            }
        }
    }

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

    pub(crate) fn device_ref_of(&self, slot: &DeviceSlot) -> DeviceRef {
        DeviceRef::new(
            self.strings
                .resolve(self.pools[self.pool_of(slot).index()].driver),
            self.strings
                .resolve(self.pools[self.pool_of(slot).index()].name),
            self.strings.resolve(slot.name),
        )
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
    pub fn restrict_usable(&self, set: &mut DeviceSet, tolerations: &[DeviceToleration]) {
        set.intersect_with(&self.eligible);
        set.intersect_with(&self.free);
        if tolerations.is_empty() {
            set.difference_with(&self.tainted);
        } else {
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

    /// Returns spare capacity of the index's vectors to the allocator (after a bulk
    /// load, say); like `Vec::shrink_to_fit`, it changes nothing observable.
    pub fn shrink_to_fit(&mut self) {
        self.devices.shrink_to_fit();
        for s in [
            &mut self.live,
            &mut self.eligible,
            &mut self.free,
            &mut self.tainted,
            &mut self.shared,
            &mut self.shareable,
        ] {
            s.shrink_to_fit();
        }
        for n in Arc::make_mut(&mut self.nodes) {
            n.ordered.shrink_to_fit();
        }
    }

    /// Memory used by the device index (not the stored objects).
    pub fn index_memory(&self) -> IndexMemory {
        let dense = [
            &self.live,
            &self.eligible,
            &self.free,
            &self.tainted,
            &self.shared,
            &self.shareable,
        ]
        .iter()
        .map(|s| s.heap_bytes())
        .sum::<usize>()
            + self
                .groups
                .iter()
                .map(|g| g.members.heap_bytes() + 64)
                .sum::<usize>()
            + self
                .by_driver
                .values()
                .map(|s| s.heap_bytes() + 48)
                .sum::<usize>();
        // B-tree entries are counted at 1.5x their size for node overhead.
        let slots = self.devices.capacity() * core::mem::size_of::<Option<DeviceSlot>>()
            + self.applied.len()
                * (core::mem::size_of::<(DeviceId, SmallVec<[AppliedTaint; 2]>)>() * 3 / 2);
        let sparse = self
            .nodes
            .iter()
            .map(|n| {
                n.devices.heap_bytes()
                    + core::mem::size_of::<SparseDeviceSet>()
                    + core::mem::size_of::<DeviceCounts>()
                    + n.ordered.capacity() * core::mem::size_of::<DeviceId>()
            })
            .sum::<usize>()
            + self
                .pools
                .iter()
                .map(|p| p.devices.heap_bytes() + p.device_by_name.capacity() * 8)
                .sum::<usize>()
            + self
                .slices
                .iter()
                .flatten()
                .map(|s| s.devices.len() * 4)
                .sum::<usize>();
        let attribute_bytes = self
            .attr_values
            .values()
            .chain(self.attr_present.values())
            .map(|s| s.heap_bytes() + core::mem::size_of::<SparseDeviceSet>() + 24)
            .sum::<usize>()
            + self.strings.heap_bytes();
        IndexMemory {
            devices: self.device_count(),
            structural_bytes: dense + slots + sparse,
            attribute_bytes,
        }
    }
}

/// The fully qualified name of an attribute and whether an explicitly qualified entry
/// of the same name shadows it (CEL looks up the qualified name first).
fn qualified(driver: &str, name: &str, d: &Device) -> (String, bool) {
    if name.contains('/') {
        (name.to_owned(), false)
    } else {
        let fq = format!("{driver}/{name}");
        let shadowed = d.attributes.contains_key(&fq);
        (fq, shadowed)
    }
}

fn attr_keys(strings: &mut Interner, v: &DeviceAttribute) -> SmallVec<[AttrKey; 1]> {
    match v {
        DeviceAttribute::Int(i) => smallvec::smallvec![AttrKey::Int(*i)],
        DeviceAttribute::Bool(b) => smallvec::smallvec![AttrKey::Bool(*b)],
        DeviceAttribute::String(s) => smallvec::smallvec![AttrKey::Str(strings.intern(s))],
        DeviceAttribute::Version(s) => smallvec::smallvec![AttrKey::Version(strings.intern(s))],
        DeviceAttribute::Ints(v) => v.iter().map(|i| AttrKey::Int(*i)).collect(),
        DeviceAttribute::Bools(v) => v.iter().map(|b| AttrKey::Bool(*b)).collect(),
        DeviceAttribute::Strings(v) => v.iter().map(|s| AttrKey::Str(strings.intern(s))).collect(),
        DeviceAttribute::Versions(v) => v
            .iter()
            .map(|s| AttrKey::Version(strings.intern(s)))
            .collect(),
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

/// Whether two devices are equal in everything but name and taints.
fn same_content(a: &Device, b: &Device) -> bool {
    a.attributes == b.attributes
        && a.capacity == b.capacity
        && a.consumes_counters == b.consumes_counters
        && a.allow_multiple_allocations == b.allow_multiple_allocations
        && a.binds_to_node == b.binds_to_node
        && a.binding_conditions == b.binding_conditions
        && a.binding_failure_conditions == b.binding_failure_conditions
        && a.node_access == b.node_access
}

/// A 64-bit FNV-1a hash of what [`same_content`] compares, without allocating.
fn content_hash(d: &Device) -> u64 {
    struct Fnv(u64);
    impl fmt::Write for Fnv {
        fn write_str(&mut self, s: &str) -> fmt::Result {
            for b in s.bytes() {
                self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
            }
            Ok(())
        }
    }
    let mut h = Fnv(0xcbf2_9ce4_8422_2325);
    let _ = fmt::write(
        &mut h,
        format_args!(
            "{:?}|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}",
            d.attributes,
            d.capacity,
            d.consumes_counters,
            d.allow_multiple_allocations,
            d.binds_to_node,
            d.binding_conditions,
            d.binding_failure_conditions,
            d.node_access
        ),
    );
    h.0
}

/// The identities of a slice's devices.
fn slice_refs(slice: &ResourceSlice) -> BTreeSet<DeviceRef> {
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
