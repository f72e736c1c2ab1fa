#![cfg(not(target_arch = "wasm32"))]
//! Property tests: `Cluster::allocate_claims` against an exhaustive reference search
//! written here from the spec (dra.md 3.3–3.11), over small generated clusters and
//! claims.
//!
//! The reference is a plain depth-first search without any pruning: claims in order,
//! requests in order, subrequests in order (a later one only when the earlier has no
//! complete solution given the earlier choices), each (sub)request's slots filled with
//! combinations of the node's devices in upstream's order (pools by driver then name,
//! slices by name, devices in slice order). Every device is checked as upstream's
//! `allocateDevice` does: in use (a non-admin request skips devices held by a committed
//! non-admin allocation or picked earlier in this call by any request, admin or not; an
//! admin request only skips devices its own claim already picked), class and request
//! selectors, taints against the request's tolerations, then the claim's constraints
//! (`distinctAttribute` with set semantics, as gangpack documents). `All` takes every
//! selectable device of the node, in order, and fails if one of them cannot be added.
//! (One deliberate difference from upstream, shared with the engine: a constraint that
//! rejects a device of an `All` request is a fatal error upstream, "cannot add device
//! ... because a claim constraint would not be satisfied"; here it only fails that
//! alternative and the search backtracks. Where upstream meets that error depends on
//! its unpruned search order; gangpack keeps outcomes independent of pruning.)
//!
//! Properties: the engine allocates iff the reference finds a solution; both return the
//! same first solution; and the engine's results pass an independent validity check.
//!
//! Not generated: devices with `allowMultipleAllocations` (shared devices and
//! capacities would need a capacity model in the reference; `capacity_policy.rs` covers
//! them), shared counters, binding conditions and selector errors.

mod common;

use std::collections::BTreeMap;

use common::{DRIVER, dref, holder, taint};
use gangpack::{
    AllocationMode, AllocationOutcome, AllocationResult, AllocatorOptions, Cluster, ConstraintKind,
    Device, DeviceAttribute, DeviceClass, DeviceConstraint, DeviceRequest, DeviceSelector,
    DeviceSubRequest, DeviceTaintEffect, DeviceToleration, DeviceTolerationOperator,
    ExactDeviceRequest, Fit, Node, NodeSelector, ResourceClaim, ResourceSlice,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config as ProptestConfig, TestCaseError, TestRunner};

/// The reference gives up (and the case is discarded) after this many candidate checks.
const REFERENCE_STEP_CAP: u64 = 200_000;

const NODE: &str = "n1";
const OTHER_NODE: &str = "n2";
const CLASS_ANY: &str = "gpu";
const CLASS_A: &str = "gpu-model-a";
const TAINT_KEYS: [&str; 2] = ["example.com/ecc", "example.com/maint"];

// ------------------------------------------------------------------------------------------
// Generated input
// ------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Eff {
    None,
    NoSchedule,
    NoExecute,
}

impl Eff {
    fn api(self) -> DeviceTaintEffect {
        match self {
            Eff::None => DeviceTaintEffect::None,
            Eff::NoSchedule => DeviceTaintEffect::NoSchedule,
            Eff::NoExecute => DeviceTaintEffect::NoExecute,
        }
    }
}

/// A committed allocation of a device before the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Held {
    Free,
    /// An ordinary allocation: blocks non-admin requests.
    Exclusive,
    /// An admin-access allocation: blocks nothing.
    Admin,
}

/// A device's taints: (index into `TAINT_KEYS`, effect).
type Taints = Vec<(usize, Eff)>;

#[derive(Clone, Debug)]
struct DevSpec {
    /// `numa` (absent sometimes: constraints on it then reject the device).
    numa: Option<i64>,
    model_a: bool,
    taints: Taints,
    held: Held,
}

/// How the node's devices are split into slices and pools.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// One pool `pool-a`, one slice.
    OneSlice,
    /// Two pools of one slice each; `flip` names the first-inserted one `pool-b`.
    TwoPools { flip: bool, split: usize },
    /// One pool of two slices; `flip` names the first-inserted slice `s-b`.
    TwoSlices { flip: bool, split: usize },
}

#[derive(Clone, Debug)]
struct LeafSpec {
    class_a: bool,
    /// `None` = `All`.
    count: Option<u32>,
    /// Request selector `model == "a"` (true) or `"b"` (false).
    selector: Option<bool>,
    /// `Exists` tolerations: (index into `TAINT_KEYS`, effect or any).
    tolerations: Vec<(usize, Option<Eff>)>,
}

#[derive(Clone, Debug)]
enum ReqSpec {
    Exact { leaf: LeafSpec, admin: bool },
    FirstAvailable(Vec<LeafSpec>),
}

#[derive(Clone, Debug)]
struct ConSpec {
    distinct: bool,
    numa: bool,
    /// Bit `i` selects the claim's `i`-th request name (`request_names()` order);
    /// no bit = every request.
    mask: u16,
}

#[derive(Clone, Debug)]
struct ClaimSpec {
    requests: Vec<ReqSpec>,
    constraints: Vec<ConSpec>,
}

#[derive(Clone, Debug)]
struct Scenario {
    layout: Layout,
    devices: Vec<DevSpec>,
    /// Device `i` is named `dev-{names[i]}` (names do not follow the order).
    names: Vec<usize>,
    /// Devices of the other node (never to be picked).
    other: Vec<DevSpec>,
    claims: Vec<ClaimSpec>,
}

// ------------------------------------------------------------------------------------------
// Strategies
// ------------------------------------------------------------------------------------------

fn eff() -> impl Strategy<Value = Eff> {
    prop_oneof![Just(Eff::None), Just(Eff::NoSchedule), Just(Eff::NoExecute)]
}

fn dev_spec() -> impl Strategy<Value = DevSpec> {
    (
        prop::option::weighted(0.9, 0..=2i64),
        any::<bool>(),
        prop_oneof![
            4 => Just(Vec::new()),
            1 => prop::collection::vec((0..2usize, eff()), 1..=2),
        ],
        prop_oneof![8 => Just(Held::Free), 1 => Just(Held::Exclusive), 1 => Just(Held::Admin)],
    )
        .prop_map(|(numa, model_a, taints, held)| DevSpec {
            numa,
            model_a,
            taints,
            held,
        })
}

fn leaf_spec() -> impl Strategy<Value = LeafSpec> {
    (
        prop::bool::weighted(0.2),
        prop_oneof![
            6 => Just(Some(1)),
            3 => Just(Some(2)),
            2 => (3..=4u32).prop_map(Some),
            1 => Just(None),
        ],
        prop_oneof![3 => Just(None), 1 => any::<bool>().prop_map(Some)],
        prop_oneof![
            1 => Just(Vec::new()),
            1 => prop::collection::vec(
                (0..2usize, prop_oneof![
                    2 => Just(None),
                    1 => Just(Some(Eff::NoSchedule)),
                    1 => Just(Some(Eff::NoExecute)),
                ]),
                1..=2,
            ),
        ],
    )
        .prop_map(|(class_a, count, selector, tolerations)| LeafSpec {
            class_a,
            count,
            selector,
            tolerations,
        })
}

fn req_spec() -> impl Strategy<Value = ReqSpec> {
    prop_oneof![
        3 => (leaf_spec(), prop::bool::weighted(0.2))
            .prop_map(|(leaf, admin)| ReqSpec::Exact { leaf, admin }),
        1 => prop::collection::vec(leaf_spec(), 2).prop_map(ReqSpec::FirstAvailable),
    ]
}

fn con_spec() -> impl Strategy<Value = ConSpec> {
    (
        any::<bool>(),
        any::<bool>(),
        prop_oneof![1 => Just(0u16), 2 => 1..512u16],
    )
        .prop_map(|(distinct, numa, mask)| ConSpec {
            distinct,
            numa,
            mask,
        })
}

fn claim_spec() -> impl Strategy<Value = ClaimSpec> {
    (
        prop::collection::vec(req_spec(), 1..=3),
        prop_oneof![
            3 => Just(Vec::new()),
            2 => prop::collection::vec(con_spec(), 1..=2),
        ],
    )
        .prop_map(|(requests, constraints)| ClaimSpec {
            requests,
            constraints,
        })
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (
        prop_oneof![
            1 => prop::collection::vec(dev_spec(), 1..=5),
            3 => prop::collection::vec(dev_spec(), 6..=12),
        ],
        Just((0..12).collect::<Vec<usize>>()).prop_shuffle(),
        (0..3u8, any::<bool>(), 0..12usize),
        prop::collection::vec(dev_spec(), 0..=3),
        prop::collection::vec(claim_spec(), 1..=2),
    )
        .prop_map(|(devices, names, (kind, flip, split), other, claims)| {
            let n = devices.len();
            let layout = match kind {
                _ if n < 2 => Layout::OneSlice,
                0 => Layout::OneSlice,
                1 => Layout::TwoPools {
                    flip,
                    split: 1 + split % (n - 1),
                },
                _ => Layout::TwoSlices {
                    flip,
                    split: 1 + split % (n - 1),
                },
            };
            Scenario {
                layout,
                devices,
                names,
                other,
                claims,
            }
        })
}

// ------------------------------------------------------------------------------------------
// The reference model
// ------------------------------------------------------------------------------------------

/// One device of node `n1`, in allocation order.
#[derive(Clone, Debug)]
struct RDev {
    pool: String,
    name: String,
    numa: Option<i64>,
    model: &'static str,
    taints: Taints,
    held: Held,
}

#[derive(Clone, Debug)]
struct RAlt {
    request: String,
    sub: Option<String>,
    class_a: bool,
    selector: Option<&'static str>,
    /// `None` = `All`.
    count: Option<usize>,
    admin: bool,
    tolerations: Vec<(usize, Option<Eff>)>,
}

impl RAlt {
    fn reference(&self) -> String {
        match &self.sub {
            Some(s) => format!("{}/{s}", self.request),
            None => self.request.clone(),
        }
    }

    /// Class (`driver == DRIVER`, optionally `model == "a"`) and request selector.
    fn selectable(&self, d: &RDev) -> bool {
        (!self.class_a || d.model == "a") && self.selector.is_none_or(|m| d.model == m)
    }

    /// Spec 2.3 / 2.4: every NoSchedule or NoExecute taint needs a matching toleration
    /// (`Exists`: same key, and the same effect unless the toleration's is empty).
    fn tolerates(&self, d: &RDev) -> bool {
        d.taints
            .iter()
            .filter(|(_, e)| *e != Eff::None)
            .all(|(k, e)| {
                self.tolerations
                    .iter()
                    .any(|(tk, te)| tk == k && te.is_none_or(|te| te == *e))
            })
    }

    fn api_tolerations(&self) -> Vec<DeviceToleration> {
        self.tolerations
            .iter()
            .map(|(k, e)| DeviceToleration {
                key: TAINT_KEYS[*k].into(),
                operator: DeviceTolerationOperator::Exists,
                value: String::new(),
                effect: e.map(Eff::api),
                toleration_seconds: None,
            })
            .collect()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Val {
    Int(i64),
    Str(&'static str),
}

#[derive(Clone, Debug)]
struct RCon {
    distinct: bool,
    numa: bool,
    refs: Vec<String>,
}

impl RCon {
    /// Spec 1.8 / 3.7: empty = every request; a request name covers the request and all
    /// its subrequests; `req/sub` covers that subrequest.
    fn covers(&self, alt: &RAlt) -> bool {
        self.refs.is_empty()
            || self
                .refs
                .iter()
                .any(|r| *r == alt.request || alt.sub.is_some() && *r == alt.reference())
    }

    fn value(&self, d: &RDev) -> Option<Val> {
        if self.numa {
            d.numa.map(Val::Int)
        } else {
            Some(Val::Str(d.model))
        }
    }

    fn attribute(&self) -> String {
        format!("{DRIVER}/{}", if self.numa { "numa" } else { "model" })
    }
}

#[derive(Clone, Debug)]
struct RClaim {
    /// Request → alternatives (one for `exactly`).
    requests: Vec<Vec<RAlt>>,
    constraints: Vec<RCon>,
}

/// The whole problem, as the reference sees it.
#[derive(Clone, Debug)]
struct Model {
    devices: Vec<RDev>,
    claims: Vec<RClaim>,
}

/// One chosen device: (claim, request reference, pool, device).
type Pick = (usize, String, String, String);

fn model_of(s: &Scenario) -> Model {
    let mut devices: Vec<(String, String, usize, RDev)> = Vec::new();
    for (slice, pool, range) in slices_of(s) {
        for (pos, i) in range.enumerate() {
            let d = &s.devices[i];
            devices.push((
                pool.clone(),
                slice.clone(),
                pos,
                RDev {
                    pool: pool.clone(),
                    name: format!("dev-{}", s.names[i]),
                    numa: d.numa,
                    model: if d.model_a { "a" } else { "b" },
                    taints: d.taints.clone(),
                    held: d.held,
                },
            ));
        }
    }
    // Spec 3.3 step 7: pools by driver (one driver here) then name, slices by name,
    // devices in slice order.
    devices.sort_by(|a, b| (&a.0, &a.1, a.2).cmp(&(&b.0, &b.1, b.2)));
    let claims = s
        .claims
        .iter()
        .map(|c| {
            let requests: Vec<Vec<RAlt>> = c
                .requests
                .iter()
                .enumerate()
                .map(|(ri, r)| {
                    let leaf = |l: &LeafSpec, sub: Option<String>, admin: bool| RAlt {
                        request: format!("r{ri}"),
                        sub,
                        class_a: l.class_a,
                        selector: l.selector.map(|a| if a { "a" } else { "b" }),
                        count: l.count.map(|n| n as usize),
                        admin,
                        tolerations: l.tolerations.clone(),
                    };
                    match r {
                        ReqSpec::Exact { leaf: l, admin } => vec![leaf(l, None, *admin)],
                        ReqSpec::FirstAvailable(subs) => subs
                            .iter()
                            .enumerate()
                            .map(|(si, l)| leaf(l, Some(format!("s{si}")), false))
                            .collect(),
                    }
                })
                .collect();
            let names = request_names(&requests);
            let constraints = c
                .constraints
                .iter()
                .map(|k| {
                    let mask = u32::from(k.mask) % (1u32 << names.len());
                    RCon {
                        distinct: k.distinct,
                        numa: k.numa,
                        refs: names
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| mask & (1 << i) != 0)
                            .map(|(_, n)| n.clone())
                            .collect(),
                    }
                })
                .collect();
            RClaim {
                requests,
                constraints,
            }
        })
        .collect();
    Model {
        devices: devices.into_iter().map(|d| d.3).collect(),
        claims,
    }
}

/// Every name a constraint may use: each request, then its `request/subrequest`s.
fn request_names(requests: &[Vec<RAlt>]) -> Vec<String> {
    let mut out = Vec::new();
    for alts in requests {
        out.push(alts[0].request.clone());
        for a in alts.iter().filter(|a| a.sub.is_some()) {
            out.push(a.reference());
        }
    }
    out
}

/// (slice name, pool name, device indices) of node n1, in insertion order.
fn slices_of(s: &Scenario) -> Vec<(String, String, core::ops::Range<usize>)> {
    let n = s.devices.len();
    let names = |flip: bool| if flip { ("b", "a") } else { ("a", "b") };
    match s.layout {
        Layout::OneSlice => vec![("n1-gpus".into(), "pool-a".into(), 0..n)],
        Layout::TwoPools { flip, split } => {
            let (x, y) = names(flip);
            vec![
                (format!("n1-{x}"), format!("pool-{x}"), 0..split),
                (format!("n1-{y}"), format!("pool-{y}"), split..n),
            ]
        }
        Layout::TwoSlices { flip, split } => {
            let (x, y) = names(flip);
            vec![
                (format!("s-{x}"), "pool-a".into(), 0..split),
                (format!("s-{y}"), "pool-a".into(), split..n),
            ]
        }
    }
}

struct Reference<'m> {
    m: &'m Model,
    /// (claim, request, alternative, device index).
    picks: Vec<(usize, usize, usize, usize)>,
    steps: u64,
    gave_up: bool,
}

/// Why the reference stopped without an answer.
#[derive(Debug, PartialEq, Eq)]
enum RefStop {
    /// The step cap was hit (the case is discarded).
    GaveUp,
}

// `c`, `r`, `a`, `d` index claims, requests, alternatives and devices throughout.
#[allow(clippy::many_single_char_names)]
impl Reference<'_> {
    fn alt(&self, c: usize, r: usize, a: usize) -> &RAlt {
        &self.m.claims[c].requests[r][a]
    }

    /// Spec 3.6: whether device `d` can be added for alternative (c, r, a) now.
    fn admissible(&mut self, c: usize, r: usize, a: usize, d: usize) -> bool {
        self.steps += 1;
        if self.steps > REFERENCE_STEP_CAP {
            self.gave_up = true;
            return false;
        }
        let alt = self.alt(c, r, a);
        let dev = &self.m.devices[d];
        // 1. In use.
        if alt.admin {
            if self.picks.iter().any(|p| p.0 == c && p.3 == d) {
                return false;
            }
        } else if dev.held == Held::Exclusive || self.picks.iter().any(|p| p.3 == d) {
            return false;
        }
        // 2. Selectable. 5. Taints.
        if !alt.selectable(dev) || !alt.tolerates(dev) {
            return false;
        }
        // 6. Constraints of the claim, against every device in scope chosen so far.
        for con in self.m.claims[c]
            .constraints
            .iter()
            .filter(|k| k.covers(alt))
        {
            let violated = match con.value(dev) {
                None => true,
                Some(v) => self.picks.iter().filter(|p| p.0 == c).any(|p| {
                    con.covers(self.alt(p.0, p.1, p.2)) && {
                        let w = con.value(&self.m.devices[p.3]).expect("checked when added");
                        con.distinct == (v == w)
                    }
                }),
            };
            if violated {
                return false;
            }
        }
        true
    }

    fn claim(&mut self, c: usize) -> bool {
        c == self.m.claims.len() || self.request(c, 0)
    }

    fn request(&mut self, c: usize, r: usize) -> bool {
        if r == self.m.claims[c].requests.len() {
            return self.claim(c + 1);
        }
        for a in 0..self.m.claims[c].requests[r].len() {
            let found = match self.alt(c, r, a).count {
                Some(n) => self.slots(c, r, a, n, 0),
                None => self.all(c, r, a),
            };
            if found {
                return true;
            }
            if self.gave_up {
                return false;
            }
        }
        false
    }

    /// Fills `left` slots with devices from position `from` on (combinations).
    fn slots(&mut self, c: usize, r: usize, a: usize, left: usize, from: usize) -> bool {
        if left == 0 {
            return self.request(c, r + 1);
        }
        for d in from..self.m.devices.len() {
            if self.admissible(c, r, a, d) {
                self.picks.push((c, r, a, d));
                if self.slots(c, r, a, left - 1, d + 1) {
                    return true;
                }
                self.picks.pop();
            }
            if self.gave_up {
                return false;
            }
        }
        false
    }

    /// `All`: every selectable device of the node, each of which must be admissible.
    fn all(&mut self, c: usize, r: usize, a: usize) -> bool {
        let set: Vec<usize> = (0..self.m.devices.len())
            .filter(|&d| self.alt(c, r, a).selectable(&self.m.devices[d]))
            .collect();
        if set.is_empty() {
            return false;
        }
        let before = self.picks.len();
        for d in set {
            if !self.admissible(c, r, a, d) {
                self.picks.truncate(before);
                return false;
            }
            self.picks.push((c, r, a, d));
        }
        if self.request(c, r + 1) {
            return true;
        }
        self.picks.truncate(before);
        false
    }
}

/// The first solution in upstream's order, or why there is no answer.
fn reference_solve(m: &Model) -> Result<Option<Vec<Pick>>, RefStop> {
    let mut s = Reference {
        m,
        picks: Vec::new(),
        steps: 0,
        gave_up: false,
    };
    let found = s.claim(0);
    if s.gave_up {
        return Err(RefStop::GaveUp);
    }
    Ok(found.then(|| {
        s.picks
            .iter()
            .map(|&(c, r, a, d)| {
                let dev = &m.devices[d];
                (
                    c,
                    m.claims[c].requests[r][a].reference(),
                    dev.pool.clone(),
                    dev.name.clone(),
                )
            })
            .collect()
    }))
}

// ------------------------------------------------------------------------------------------
// The engine's input
// ------------------------------------------------------------------------------------------

fn api_device(name: String, d: &DevSpec) -> Device {
    let mut dev = Device::new(name).with_attribute(
        "model",
        DeviceAttribute::String(if d.model_a { "a" } else { "b" }.into()),
    );
    if let Some(n) = d.numa {
        dev = dev.with_attribute("numa", DeviceAttribute::Int(n));
    }
    for (k, e) in &d.taints {
        dev = dev.with_taint(taint(TAINT_KEYS[*k], "", e.api(), 1));
    }
    dev
}

fn build_cluster(s: &Scenario) -> Cluster {
    let mut c = Cluster::new();
    c.add_node(Node::new(NODE)).unwrap();
    c.add_node(Node::new(OTHER_NODE)).unwrap();
    c.put_class(DeviceClass::with_cel(
        CLASS_ANY,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.put_class(DeviceClass::with_cel(
        CLASS_A,
        format!("device.driver == \"{DRIVER}\" && device.attributes[\"{DRIVER}\"].model == \"a\""),
    ))
    .unwrap();
    let layout = slices_of(s);
    let slice_count = layout.iter().filter(|(_, p, _)| p == "pool-a").count();
    for (slice, pool, range) in &layout {
        let mut sl = ResourceSlice::node_local(slice.clone(), DRIVER, NODE, pool.clone());
        if pool == "pool-a" {
            sl.pool.resource_slice_count = i64::try_from(slice_count).unwrap();
        }
        for i in range.clone() {
            sl.devices
                .push(api_device(format!("dev-{}", s.names[i]), &s.devices[i]));
        }
        c.add_slice(sl).unwrap();
    }
    if !s.other.is_empty() {
        let mut sl = ResourceSlice::node_local("n2-gpus", DRIVER, OTHER_NODE, "pool-n2");
        for (i, d) in s.other.iter().enumerate() {
            sl.devices.push(api_device(format!("other-{i}"), d));
        }
        c.add_slice(sl).unwrap();
    }
    for (_, pool, range) in &layout {
        for i in range.clone() {
            let r = dref(pool, &format!("dev-{}", s.names[i]));
            match s.devices[i].held {
                Held::Free => {}
                Held::Exclusive => {
                    c.allocate(&r, holder("ns/other", vec![])).unwrap();
                }
                Held::Admin => {
                    c.allocate(&r, holder("ns/monitor", vec![]).admin())
                        .unwrap();
                }
            }
        }
    }
    // Devices of the other node are allocated sometimes too (irrelevant for n1).
    for (i, d) in s.other.iter().enumerate() {
        if d.held == Held::Exclusive {
            c.allocate(
                &dref("pool-n2", &format!("other-{i}")),
                holder("ns/other", vec![]),
            )
            .unwrap();
        }
    }
    c
}

fn model_cel(a: bool) -> String {
    format!(
        "device.attributes[\"{DRIVER}\"].model == \"{}\"",
        if a { "a" } else { "b" }
    )
}

fn build_claims(m: &Model) -> Vec<ResourceClaim> {
    m.claims
        .iter()
        .enumerate()
        .map(|(ci, c)| {
            let mut claim = ResourceClaim::new("ns", format!("c{ci}"));
            for alts in &c.requests {
                let mode = |a: &RAlt| match a.count {
                    Some(n) => AllocationMode::ExactCount(n as u32),
                    None => AllocationMode::All,
                };
                let class = |a: &RAlt| if a.class_a { CLASS_A } else { CLASS_ANY };
                let selectors = |a: &RAlt| {
                    a.selector
                        .map(|m| DeviceSelector {
                            cel: model_cel(m == "a"),
                        })
                        .into_iter()
                        .collect::<Vec<_>>()
                };
                let request = if alts[0].sub.is_none() {
                    let a = &alts[0];
                    let mut e = ExactDeviceRequest::new(class(a)).with_mode(mode(a));
                    e.selectors = selectors(a);
                    e.admin_access = a.admin;
                    e.tolerations = a.api_tolerations();
                    DeviceRequest::exactly(a.request.clone(), e)
                } else {
                    let subs = alts
                        .iter()
                        .map(|a| {
                            let mut s = DeviceSubRequest::new(a.sub.clone().unwrap(), class(a))
                                .with_mode(mode(a));
                            s.selectors = selectors(a);
                            s.tolerations = a.api_tolerations();
                            s
                        })
                        .collect();
                    DeviceRequest::first_available(alts[0].request.clone(), subs)
                };
                claim.spec.requests.push(request);
            }
            for k in &c.constraints {
                claim.spec.constraints.push(DeviceConstraint {
                    requests: k.refs.clone(),
                    kind: if k.distinct {
                        ConstraintKind::DistinctAttribute(k.attribute())
                    } else {
                        ConstraintKind::MatchAttribute(k.attribute())
                    },
                });
            }
            claim
        })
        .collect()
}

fn engine_picks(results: &[AllocationResult]) -> Vec<Pick> {
    results
        .iter()
        .enumerate()
        .flat_map(|(ci, r)| {
            r.devices
                .iter()
                .map(move |d| (ci, d.request.clone(), d.pool.clone(), d.device.clone()))
        })
        .collect()
}

// ------------------------------------------------------------------------------------------
// Independent validity check of the engine's results
// ------------------------------------------------------------------------------------------

fn check_results(m: &Model, results: &[AllocationResult]) -> Result<(), String> {
    if results.len() != m.claims.len() {
        return Err(format!(
            "{} results for {} claims",
            results.len(),
            m.claims.len()
        ));
    }
    // Devices taken by earlier claims (with admin access or not).
    let mut taken: Vec<usize> = Vec::new();
    for (ci, (claim, result)) in m.claims.iter().zip(results).enumerate() {
        if result.devices.len() > 32 {
            return Err(format!("claim {ci}: more than 32 devices"));
        }
        // Spec 3.11: node-local devices pin the allocation to the node.
        if result.node_selector != Some(NodeSelector::single_node(NODE)) {
            return Err(format!(
                "claim {ci}: node selector {:?}",
                result.node_selector
            ));
        }
        // (alternative, device index) per result entry.
        let mut entries: Vec<(&RAlt, usize)> = Vec::new();
        for d in &result.devices {
            if d.driver != DRIVER {
                return Err(format!("claim {ci}: driver {}", d.driver));
            }
            let Some(di) = m
                .devices
                .iter()
                .position(|x| x.pool == d.pool && x.name == d.device)
            else {
                return Err(format!("claim {ci}: {}/{} is not on n1", d.pool, d.device));
            };
            let (req, sub) = match d.request.split_once('/') {
                Some((r, s)) => (r, Some(s)),
                None => (d.request.as_str(), None),
            };
            let Some(alt) = claim
                .requests
                .iter()
                .flatten()
                .find(|a| a.request == req && a.sub.as_deref() == sub)
            else {
                return Err(format!("claim {ci}: bad request reference {}", d.request));
            };
            let dev = &m.devices[di];
            let what = format!("claim {ci}: {} on {}", d.request, d.device);
            if d.admin_access != alt.admin {
                return Err(format!("{what}: adminAccess {}", d.admin_access));
            }
            if d.tolerations != alt.api_tolerations() {
                return Err(format!("{what}: tolerations {:?}", d.tolerations));
            }
            if !alt.selectable(dev) {
                return Err(format!("{what}: not selected by class and selectors"));
            }
            if !alt.tolerates(dev) {
                return Err(format!("{what}: taint not tolerated"));
            }
            if !alt.admin && dev.held == Held::Exclusive {
                return Err(format!("{what}: allocated already"));
            }
            if entries.iter().any(|(_, x)| *x == di) {
                return Err(format!("{what}: twice in one claim"));
            }
            if d.share_id.is_some() || !d.consumed_capacity.is_empty() {
                return Err(format!("{what}: share of an exclusive device"));
            }
            entries.push((alt, di));
        }
        // Spec 3.6 step 1 / 3.10: a non-admin request avoids every device picked
        // earlier in the call, with admin access or not.
        for (alt, di) in &entries {
            if !alt.admin && taken.contains(di) {
                return Err(format!(
                    "claim {ci}: {} also given to an earlier claim",
                    m.devices[*di].name
                ));
            }
        }
        taken.extend(entries.iter().map(|(_, di)| *di));
        // Every request: exactly one alternative, with the right number of devices.
        for alts in &claim.requests {
            let used: Vec<&RAlt> = alts
                .iter()
                .filter(|a| entries.iter().any(|(e, _)| e.reference() == a.reference()))
                .collect();
            let [alt] = used.as_slice() else {
                return Err(format!(
                    "claim {ci}: request {} uses {} alternatives",
                    alts[0].request,
                    used.len()
                ));
            };
            let got: Vec<usize> = entries
                .iter()
                .filter(|(e, _)| e.reference() == alt.reference())
                .map(|(_, d)| *d)
                .collect();
            match alt.count {
                Some(n) if got.len() != n => {
                    return Err(format!(
                        "claim {ci}: {} got {} devices, wants {n}",
                        alt.reference(),
                        got.len()
                    ));
                }
                Some(_) => {}
                None => {
                    let mut want: Vec<usize> = (0..m.devices.len())
                        .filter(|&d| alt.selectable(&m.devices[d]))
                        .collect();
                    let mut got = got;
                    got.sort_unstable();
                    want.sort_unstable();
                    if got != want || got.is_empty() {
                        return Err(format!(
                            "claim {ci}: {} (All) got {got:?}, wants {want:?}",
                            alt.reference()
                        ));
                    }
                }
            }
        }
        for (k, con) in claim.constraints.iter().enumerate() {
            let mut values = Vec::new();
            for (alt, di) in entries.iter().filter(|(a, _)| con.covers(a)) {
                let Some(v) = con.value(&m.devices[*di]) else {
                    return Err(format!(
                        "claim {ci}: constraint {k}: {} lacks the attribute",
                        alt.reference()
                    ));
                };
                values.push(v);
            }
            let ok = if con.distinct {
                values
                    .iter()
                    .enumerate()
                    .all(|(i, v)| !values[i + 1..].contains(v))
            } else {
                values.windows(2).all(|w| w[0] == w[1])
            };
            if !ok {
                return Err(format!("claim {ci}: constraint {k} violated by {values:?}"));
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------
// The comparison
// ------------------------------------------------------------------------------------------

/// What one scenario gives: `Err` for a disagreement, `Ok(None)` when the reference gave
/// up, else whether a solution exists.
fn compare(s: &Scenario) -> Result<Option<bool>, String> {
    let m = model_of(s);
    let cluster = build_cluster(s);
    let claims = build_claims(&m);
    let result = cluster.allocate_claims(
        NODE,
        &claims,
        &BTreeMap::new(),
        &AllocatorOptions::default(),
    );
    fits_agrees(&cluster, &claims)?;
    let expected = match reference_solve(&m) {
        Ok(expected) => expected,
        Err(RefStop::GaveUp) => return Ok(None),
    };
    let out = result.map_err(|e| format!("unexpected error: {e}"))?;
    match (&out, &expected) {
        (AllocationOutcome::Allocated(results), Some(want)) => {
            check_results(&m, results).map_err(|e| format!("invalid result: {e}"))?;
            let got = engine_picks(results);
            if &got != want {
                return Err(format!(
                    "different first solution:\n engine    {got:?}\n reference {want:?}"
                ));
            }
            Ok(Some(true))
        }
        (AllocationOutcome::Unsatisfiable(_), None) => Ok(Some(false)),
        (AllocationOutcome::Allocated(results), None) => {
            let validity = check_results(&m, results).err();
            Err(format!(
                "engine allocated {:?} (validity: {validity:?}), reference finds nothing",
                engine_picks(results)
            ))
        }
        (other, _) => Err(format!("engine: {other:?}, reference: {expected:?}")),
    }
}

/// `fits_prepared` answers as `allocate_prepared` does (its error, or the kind of its
/// outcome), under the default step budget and under budgets small enough to run out.
fn fits_agrees(cluster: &Cluster, claims: &[ResourceClaim]) -> Result<(), String> {
    let prepared = match cluster.prepare_claims(claims) {
        Ok(p) => p,
        Err(e) => return Err(format!("unexpected error: {e}")),
    };
    for budget in [AllocatorOptions::default().step_budget, 0, 1, 2, 3, 5] {
        let options = AllocatorOptions {
            step_budget: budget,
        };
        let none = BTreeMap::new();
        let want = cluster
            .allocate_prepared(NODE, &prepared, &none, &options)
            .map(|o| match o {
                AllocationOutcome::Allocated(_) => Fit::Fits,
                AllocationOutcome::Unsatisfiable(_) => Fit::DoesNotFit,
                AllocationOutcome::BudgetExhausted { steps } => Fit::Undecided { steps },
            });
        let got = cluster.fits_prepared(NODE, &prepared, &none, &options);
        if got != want {
            return Err(format!(
                "fits_prepared with budget {budget}: {got:?}, allocate_prepared: {want:?}"
            ));
        }
    }
    Ok(())
}

/// [`compare`] as a property: cases where the reference gives up are discarded.
fn agrees(s: &Scenario) -> Result<(), TestCaseError> {
    let verdict = compare(s);
    prop_assume!(!matches!(verdict, Ok(None)), "reference gave up");
    if let Err(e) = verdict {
        let claims = build_claims(&model_of(s));
        prop_assert!(false, "{e}\nclaims: {claims:#?}");
    }
    Ok(())
}

/// Scenarios of one claim with one plain request (counts only: no admin access,
/// request selector or constraint; an exact request or `firstAvailable`), the shape
/// `fits_prepared` answers by counting.
fn plain_scenario() -> impl Strategy<Value = Scenario> {
    scenario().prop_map(|mut s| {
        let plain = |leaf: &mut LeafSpec| {
            leaf.selector = None;
            leaf.count = Some(leaf.count.unwrap_or(2));
        };
        let mut claim = s.claims.swap_remove(0);
        let mut request = claim.requests.swap_remove(0);
        match &mut request {
            ReqSpec::Exact { leaf, admin } => {
                *admin = false;
                plain(leaf);
            }
            ReqSpec::FirstAvailable(leaves) => leaves.iter_mut().for_each(plain),
        }
        s.claims = vec![ClaimSpec {
            requests: vec![request],
            constraints: Vec::new(),
        }];
        s
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn engine_agrees_with_the_exhaustive_reference(s in scenario()) {
        agrees(&s)?;
    }

    /// The counting answers (`fits_prepared`, and allocation of a plain request), with
    /// the search and the reference.
    #[test]
    fn counting_agrees_with_the_allocator(s in plain_scenario()) {
        agrees(&s)?;
    }
}

/// The generator is worth something only if both outcomes and every feature show up.
#[test]
fn generator_covers_both_outcomes_and_every_feature() {
    let mut runner = TestRunner::deterministic();
    let strategy = scenario();
    let (mut found, mut none, mut gave_up) = (0, 0, 0);
    let (mut all, mut admin, mut first, mut cons, mut tainted) = (0, 0, 0, 0, 0);
    for _ in 0..256 {
        let s = strategy.new_tree(&mut runner).unwrap().current();
        let m = model_of(&s);
        match reference_solve(&m) {
            Ok(Some(_)) => found += 1,
            Ok(None) => none += 1,
            Err(RefStop::GaveUp) => gave_up += 1,
        }
        let alts = || m.claims.iter().flat_map(|c| c.requests.iter().flatten());
        all += usize::from(alts().any(|a| a.count.is_none()));
        admin += usize::from(alts().any(|a| a.admin));
        first += usize::from(alts().any(|a| a.sub.is_some()));
        cons += usize::from(m.claims.iter().any(|c| !c.constraints.is_empty()));
        tainted += usize::from(m.devices.iter().any(|d| !d.taints.is_empty()));
    }
    eprintln!(
        "found {found} none {none} gave_up {gave_up} all {all} admin {admin} first {first} cons {cons} tainted {tainted}"
    );
    assert!(found >= 64 && none >= 64, "found {found}, none {none}");
    assert!(gave_up <= 8, "reference gave up {gave_up} times");
    for (what, n) in [
        ("All", all),
        ("admin", admin),
        ("firstAvailable", first),
        ("constraints", cons),
        ("taints", tainted),
    ] {
        assert!(n >= 20, "{what}: {n}");
    }
}

// ------------------------------------------------------------------------------------------
// Regressions: engine bugs found by the proptest (minimized by hand)
// ------------------------------------------------------------------------------------------

fn dev(numa: i64, taints: Taints) -> DevSpec {
    DevSpec {
        numa: Some(numa),
        model_a: true,
        taints,
        held: Held::Free,
    }
}

fn one_of(count: u32, tolerations: Vec<(usize, Option<Eff>)>, admin: bool) -> ReqSpec {
    ReqSpec::Exact {
        leaf: LeafSpec {
            class_a: false,
            count: Some(count),
            selector: None,
            tolerations,
        },
        admin,
    }
}

fn claim_of(requests: Vec<ReqSpec>) -> ClaimSpec {
    ClaimSpec {
        requests,
        constraints: Vec::new(),
    }
}

fn pick(claim: usize, request: &str, device: &str) -> Pick {
    (claim, request.into(), "pool-a".into(), device.into())
}

/// The reference's answer and the engine's, as picks (`None`: no allocation).
fn both(s: &Scenario) -> (Option<Vec<Pick>>, Option<Vec<Pick>>) {
    let m = model_of(s);
    let want = reference_solve(&m).expect("small");
    let out = build_cluster(s)
        .allocate_claims(
            NODE,
            &build_claims(&m),
            &BTreeMap::new(),
            &AllocatorOptions::default(),
        )
        .unwrap();
    let got = match &out {
        AllocationOutcome::Allocated(r) => Some(engine_picks(r)),
        AllocationOutcome::Unsatisfiable(_) => None,
        AllocationOutcome::BudgetExhausted { .. } => panic!("{out:?}"),
    };
    (want, got)
}

/// Two devices equal but for a taint: `dev-0` clean, `dev-1` NoSchedule-tainted. `r0`
/// tolerates the taint, `r1` does not. Upstream order: `r0` = dev-0 leaves nothing for
/// `r1`; `r0` = dev-1 works. Regression: symmetry breaking once treated dev-1 as
/// identical to the failed dev-0 (equivalence classes ignore taints) and reported
/// `NoCombination`; tainted devices are now never skipped as interchangeable.
#[test]
fn symmetry_breaking_must_not_merge_devices_with_different_taints() {
    let s = Scenario {
        layout: Layout::OneSlice,
        devices: vec![dev(0, vec![]), dev(0, vec![(0, Eff::NoSchedule)])],
        names: (0..12).collect(),
        other: Vec::new(),
        claims: vec![claim_of(vec![
            one_of(1, vec![(0, None)], false),
            one_of(1, vec![], false),
        ])],
    };
    let (want, got) = both(&s);
    assert_eq!(
        want,
        Some(vec![pick(0, "r0", "dev-1"), pick(0, "r1", "dev-0")])
    );
    assert_eq!(got, want);
}

/// Claim `c0` takes a device with admin access, claim `c1` (no admin access) wants one
/// device. Upstream records admin picks as "allocating" too, so `c1` must avoid the
/// device (spec 3.6 step 1, 3.10: "a later non-admin claim in the same call avoids
/// them"; upstream `allocateDevice` inserts every pick into `allocatingDevices`, and
/// `deviceInUse` checks it for any claim). Regression: the engine once tracked only
/// non-admin picks, so `c1` got the admin-picked device.
#[test]
fn admin_picks_block_later_non_admin_claims() {
    let mut s = Scenario {
        layout: Layout::OneSlice,
        devices: vec![dev(0, vec![]), dev(0, vec![])],
        names: (0..12).collect(),
        other: Vec::new(),
        claims: vec![
            claim_of(vec![one_of(1, vec![], true)]),
            claim_of(vec![one_of(1, vec![], false)]),
        ],
    };
    let (want, got) = both(&s);
    assert_eq!(
        want,
        Some(vec![pick(0, "r0", "dev-0"), pick(1, "r0", "dev-1")])
    );
    assert_eq!(got, want, "two devices");
    s.devices.pop();
    let (want, got) = both(&s);
    assert_eq!(want, None);
    assert_eq!(got, want, "one device");
}
