//! DRA claim allocation on one node: every request form, selectors, constraints,
//! shared and partitioned devices, node-scalar resources.
//!
//! [`Cluster::allocate_claims`] takes one pod's pending claims and a node and returns,
//! without changing the cluster, either one [`AllocationResult`] per claim (all of them
//! or none), an [`Unsatisfiable`] explanation, or — for invalid input — an
//! [`AllocationError`]. [`Cluster::commit_allocation`] records a result.
//!
//! The work is split in two: *preparation* turns every (sub)request into an ordered
//! candidate list using the index (node reach, pool state, class and request
//! selectors, taints against the request's tolerations, committed allocations,
//! capacity), counting what each filter removed (`prepare.rs`); the *search*
//! (`search.rs`) then picks among the candidates, and `results.rs` writes what it picked
//! in upstream's `AllocationResult` shape. `census.rs` counts the same stages for
//! explanations only, on the hardware whatever others hold. This file holds the API: options, outcomes,
//! errors, claim preparation for many nodes, commit and release.
//!
//! Layer: above the cluster (it reads the index and the class cache, and records what
//! it allocates in the cluster's allocation table); the gang placer is its user above.

mod census;
mod prepare;
mod results;
mod search;

use core::fmt;

use crate::alloc_prelude::*;
use crate::cel::{CelError, EvalError, Selector};
use crate::cluster::ids::{DeviceId, NodeId};
use crate::cluster::{
    COUNTERS, Cluster, ClusterError, DeviceAllocation, DeviceKey, DeviceRef, ELIGIBLE, FREE,
    Located, SHAREABLE, Shortfall, TAINTED,
};
use crate::model::claim::{
    AllocationMode, AllocationResult, ConstraintKind, DeviceRequestKind, RequestView, ResourceClaim,
};
use crate::{DeviceAttribute, ObjectRef, Quantity, ValidationError};
use prepare::PreparedClaim;
use search::{Alternative, Claim, Pick, Request, SearchEnd};
use smallvec::SmallVec;

pub(crate) use census::Skip;
use search::MAX_DEVICES_PER_CLAIM;

/// Limits for one allocation call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct AllocatorOptions {
    /// The most search steps one call takes before it gives up with
    /// [`AllocationOutcome::BudgetExhausted`] (whose `steps` is then this budget).
    /// Default [`DEFAULT_ALLOCATOR_STEP_BUDGET`] (1,000,000).
    ///
    /// A step is one candidate device tried for one slot of one request (a device
    /// skipped as interchangeable with one that already failed there counts too).
    /// Checks that answer before any search take none: the node's scalar resources, a
    /// request with too few usable devices, and the counting bounds (too few free
    /// devices for the requests left, a `distinctAttribute` scope needing more values
    /// than its candidates have, a `matchAttribute` scope needing more devices with
    /// one value than exist). Exhaustion means undecided, never "does not fit": the
    /// outcome says so, and the gang placer stops with
    /// [`GangOutcome::BudgetExhausted`](crate::GangOutcome::BudgetExhausted) when one
    /// of its calls runs out (it sets this budget from
    /// [`GangOptions::allocator_step_budget`](crate::GangOptions::allocator_step_budget)).
    pub step_budget: u64,
}

/// The default [`AllocatorOptions::step_budget`] (and
/// [`GangOptions::allocator_step_budget`](crate::GangOptions::allocator_step_budget)).
pub const DEFAULT_ALLOCATOR_STEP_BUDGET: u64 = 1_000_000;

impl Default for AllocatorOptions {
    fn default() -> AllocatorOptions {
        AllocatorOptions {
            step_budget: DEFAULT_ALLOCATOR_STEP_BUDGET,
        }
    }
}

/// The outcome of a valid allocation call.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum AllocationOutcome {
    /// One result per claim, in input order.
    Allocated(Vec<AllocationResult>),
    /// No allocation exists on this node; why.
    Unsatisfiable(Unsatisfiable),
    /// The search ran out of steps before deciding: undecided (an allocation may
    /// exist). Raise [`AllocatorOptions::step_budget`] to search further.
    BudgetExhausted {
        /// Steps taken: the budget.
        steps: u64,
    },
}

/// Whether a pod's claims fit on a node ([`Cluster::fits_prepared`]): the outcome
/// [`Cluster::allocate_prepared`] would give there, without its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Fit {
    /// An allocation exists ([`AllocationOutcome::Allocated`]).
    Fits,
    /// No allocation exists on this node ([`AllocationOutcome::Unsatisfiable`]; the
    /// allocation call on this node says why).
    DoesNotFit,
    /// The search ran out of steps before deciding
    /// ([`AllocationOutcome::BudgetExhausted`]).
    Undecided {
        /// Steps taken: the budget.
        steps: u64,
    },
}

/// Why claims cannot be allocated on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum Unsatisfiable {
    /// The node lacks the pod's scalar resources (cpu, memory, ...).
    NodeResources {
        /// The node.
        node: String,
        /// Every resource that does not fit.
        shortfalls: Vec<Shortfall>,
    },
    /// A request (every alternative of it) has fewer usable devices than it needs.
    NotEnoughDevices(Box<RequestShortage>),
    /// Every request has enough usable devices on its own, but no combination
    /// satisfies them together: constraints, devices wanted by several requests or
    /// claims, shared capacity or shared counters.
    NoCombination {
        /// The claims, `namespace/name`.
        claims: Vec<String>,
        /// Search steps taken.
        steps: u64,
    },
}

/// One request that cannot be satisfied, with what removed the devices it could
/// have used (for the best alternative, the one with the most usable devices).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct RequestShortage {
    /// The claim, `namespace/name`.
    pub claim: String,
    /// The request, or `request/subrequest`.
    pub request: String,
    /// Devices needed (1 for `All`).
    pub required: u32,
    /// Devices usable.
    pub usable: u32,
    /// What removed the rest.
    pub funnel: Funnel,
}

/// How the devices a node reaches narrow down to the usable ones for a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Funnel {
    /// Devices the node reaches in complete, valid pools.
    pub reachable: u32,
    /// Removed by the DeviceClass selectors.
    pub class: u32,
    /// Removed by the request's selectors.
    pub selectors: u32,
    /// Removed by taints the request does not tolerate.
    pub taints: u32,
    /// Removed because they are allocated already.
    pub allocated: u32,
    /// Removed because their capacity cannot serve the request.
    pub capacity: u32,
}

/// A selector that does not compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorFailure {
    /// The claim or class holding the selector.
    pub object: ObjectRef,
    /// The field of the expression.
    pub field: String,
    /// Why.
    pub error: CelError,
}

/// A selector that failed on one device: a CEL runtime error, which aborts the
/// allocation (upstream: "CEL runtime error").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvaluationFailure {
    /// The claim.
    pub claim: ObjectRef,
    /// The request, or `request/subrequest`.
    pub request: String,
    /// The DeviceClass whose selector failed; `None` when it is one of the request's
    /// own selectors.
    pub class: Option<String>,
    /// Which selector: its index in the class's `spec.selectors` or in the request's
    /// `selectors`.
    pub selector: usize,
    /// The expression, as written.
    pub expression: String,
    /// The device.
    pub device: DeviceRef,
    /// Why.
    pub error: EvalError,
}

impl fmt::Display for EvaluationFailure {
    /// The claim, the request, the class (for a class selector), the selector's index
    /// and expression, the device and the error, as in
    /// ``ResourceClaim "ns/c": request gpu: selector #0 `device.attributes["d"].model ==
    /// "A"` failed on device d/pool/gpu-0: CEL runtime error: no such key: model``.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: request {}: ", self.claim, self.request)?;
        match &self.class {
            Some(class) => write!(f, "DeviceClass {class} selector")?,
            None => f.write_str("selector")?,
        }
        write!(
            f,
            " #{} `{}` failed on device {}: CEL runtime error: {}",
            self.selector, self.expression, self.device, self.error
        )
    }
}

/// Invalid input: the call cannot be answered (not "does not fit").
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AllocationError {
    /// A claim is invalid.
    InvalidClaim(Vec<ValidationError>),
    /// No node of this name.
    NodeNotFound(String),
    /// A request names a DeviceClass that does not exist.
    ClassNotFound {
        /// The claim.
        claim: ObjectRef,
        /// The field (`spec.devices.requests[0].exactly.deviceClassName`).
        field: String,
        /// The class name.
        class: String,
    },
    /// A selector does not compile.
    Selector(Box<SelectorFailure>),
    /// A selector failed while evaluating a device (upstream aborts the allocation).
    Evaluation(Box<EvaluationFailure>),
    /// A claim needs more devices than the per-claim limit (32,
    /// `AllocationResultsMaxSize`); upstream's allocator fails the pod with an error.
    TooManyDevices {
        /// The claim.
        claim: ObjectRef,
        /// The least number of devices it needs: the sum of `requests`' counts.
        needed: usize,
        /// Per request, in spec order, the least number of devices it needs: its
        /// `count`, the least over its subrequests for `firstAvailable`, the matching
        /// devices on the node tried for allocation mode `All`.
        requests: Vec<(String, usize)>,
    },
    /// An `All` request on a node one of whose pools is incomplete or invalid.
    IncompletePool {
        /// The claim.
        claim: ObjectRef,
        /// The request, or `request/subrequest`.
        request: String,
        /// `driver/pool`.
        pool: String,
    },
}

impl fmt::Display for AllocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocationError::InvalidClaim(errs) => {
                for (i, e) in errs.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            AllocationError::NodeNotFound(n) => write!(f, "Node \"{n}\" not found"),
            AllocationError::ClassNotFound {
                claim,
                field,
                class,
            } => {
                write!(f, "{claim}: {field}: DeviceClass \"{class}\" not found")
            }
            AllocationError::Selector(x) => write!(f, "{}: {}: {}", x.object, x.field, x.error),
            AllocationError::Evaluation(x) => write!(f, "{x}"),
            AllocationError::TooManyDevices {
                claim,
                needed,
                requests,
            } => {
                // Upstream: "claim ns/name: number of requested devices N exceeds the
                // claim limit of 32"; then which requests ask for them.
                f.write_str("claim ")?;
                if let Some(ns) = &claim.namespace {
                    write!(f, "{ns}/")?;
                }
                write!(
                    f,
                    "{}: number of requested devices {needed} exceeds the claim limit of {MAX_DEVICES_PER_CLAIM}",
                    claim.name
                )?;
                if !requests.is_empty() {
                    let noun = if requests.len() == 1 {
                        "request"
                    } else {
                        "requests"
                    };
                    write!(f, " ({noun} ")?;
                    for (i, (name, n)) in requests.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        write!(f, "{name}: {n}")?;
                    }
                    f.write_str(")")?;
                }
                Ok(())
            }
            AllocationError::IncompletePool {
                claim,
                request,
                pool,
            } => write!(
                f,
                "{claim}: request {request} asks for all matching devices, but pool {pool} is incomplete or invalid"
            ),
        }
    }
}

impl core::error::Error for AllocationError {}

/// Claims validated and their selectors compiled, ready to be tried on many nodes
/// (see [`Cluster::prepare_claims`]).
#[derive(Clone, Debug)]
pub struct PreparedClaims {
    claims: Vec<ResourceClaim>,
    /// claim → request → alternative.
    alternatives: Vec<Vec<Vec<CompiledAlternative>>>,
    /// Per claim: the form the allocator counts with instead of searching, if the claim
    /// has one ([`Cluster::counted_choice`]).
    simple: Vec<Option<SimpleClaim>>,
}

/// A claim of one request whose every alternative is a plain count (no admin access,
/// selectors or capacity), without constraints or with one `matchAttribute` over a
/// request of one alternative: the search's first solution for it is found by
/// counting ([`Cluster::counted_choice`]).
#[derive(Clone, Debug)]
struct SimpleClaim {
    alternatives: Vec<SimpleAlternative>,
    /// The attribute of the `matchAttribute` constraint, if there is one (the request
    /// then has one alternative).
    matching: Option<String>,
}

/// One alternative of a [`SimpleClaim`].
#[derive(Clone, Debug)]
struct SimpleAlternative {
    count: u32,
    tolerations: Vec<crate::DeviceToleration>,
}

/// The [`SimpleClaim`] form of `claim`, if it has it.
fn simple_claim(claim: &ResourceClaim) -> Option<SimpleClaim> {
    let [request] = claim.spec.requests.as_slice() else {
        return None;
    };
    let matching = match claim.spec.constraints.as_slice() {
        [] => None,
        [constraint] => match &constraint.kind {
            ConstraintKind::MatchAttribute(attribute)
                if matches!(request.kind, DeviceRequestKind::Exactly(_))
                    && constraint.applies_to(&request.name, None) =>
            {
                Some(attribute.clone())
            }
            _ => return None,
        },
        _ => return None,
    };
    let alternatives = request
        .alternatives()
        .iter()
        .map(|view| {
            let AllocationMode::ExactCount(count) = view.allocation_mode else {
                return None;
            };
            (count > 0
                && !view.admin_access
                && view.selectors.is_empty()
                && view.capacity.is_empty()
                && count as usize <= MAX_DEVICES_PER_CLAIM)
                .then(|| SimpleAlternative {
                    count,
                    tolerations: view.tolerations.to_vec(),
                })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(SimpleClaim {
        alternatives,
        matching,
    })
}

/// One claim to allocate with [`Cluster::allocate_parts`]: the claim and the entry of a
/// [`PreparedClaims`] prepared from a claim with the same spec.
pub(crate) struct ClaimPart<'p> {
    pub(crate) claim: &'p ResourceClaim,
    pub(crate) prepared: &'p PreparedClaims,
    pub(crate) index: usize,
}

/// A device of an allocation result, as [`Cluster::commit_allocation_on`] records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Picked {
    pub(crate) device: DeviceId,
    /// A non-admin pick of an exclusive device that consumes no shared counters: its
    /// allocation record would matter only by making the device not free, so the
    /// placer holds the device ([`Cluster::hold`]) instead of recording it.
    pub(crate) held: bool,
}

impl PreparedClaims {
    /// The claims, in the order they are allocated.
    pub fn claims(&self) -> &[ResourceClaim] {
        &self.claims
    }

    /// Every claim as a part of one allocation call (a pod has few claims: no
    /// allocation for up to two).
    fn parts(&self) -> SmallVec<[ClaimPart<'_>; 2]> {
        self.claims
            .iter()
            .enumerate()
            .map(|(index, claim)| ClaimPart {
                claim,
                prepared: self,
                index,
            })
            .collect()
    }

    /// Whether some request or subrequest has CEL selectors of its own (whose
    /// evaluation may fail on some device).
    pub(crate) fn has_request_selectors(&self) -> bool {
        self.alternatives
            .iter()
            .flatten()
            .flatten()
            .any(|a| !a.selectors.is_empty())
    }
}

#[derive(Clone, Debug)]
struct CompiledAlternative {
    reference: String,
    class: String,
    /// Where the class is named, for the error if it is gone at allocation time.
    class_path: String,
    selectors: Vec<Selector>,
}

/// What [`Cluster::counted_choice`] found.
enum Counted {
    /// The search's first solution takes this alternative, in this many steps.
    Chosen { alternative: usize, steps: u64 },
    /// No alternative has enough usable devices (with a `matchAttribute`: sharing one
    /// value).
    NotEnough,
}

/// An allocation [`Cluster::allocate_counted`] found: the outcome, its devices in
/// order, and the steps the search takes to find it.
struct CountedAllocation {
    outcome: AllocationOutcome,
    devices: SmallVec<[DeviceId; 8]>,
    steps: u64,
}

/// What [`Cluster::solve_parts`] found: the picks with what results are built from, or
/// an outcome without results.
enum Solved<'a> {
    Found {
        prepared: Vec<PreparedClaim<'a>>,
        problem: Vec<Claim>,
        picks: Vec<Pick>,
    },
    Ended(AllocationOutcome),
}

impl Cluster {
    /// Allocates one pod's pending `claims` on `node`, all together or not at all,
    /// without changing the cluster. `pod_resources` are the pod's scalar requests
    /// (cpu, memory, ...; include `pods: 1` to count the pod), checked against what the
    /// node has free.
    ///
    /// The first allocation in upstream's order is returned (claims, then requests,
    /// then subrequests in order; devices by driver, pool, slice and position), so
    /// results agree with kube-scheduler's where it finds one.
    pub fn allocate_claims(
        &self,
        node: &str,
        claims: &[ResourceClaim],
        pod_resources: &BTreeMap<String, Quantity>,
        options: &AllocatorOptions,
    ) -> Result<AllocationOutcome, AllocationError> {
        let prepared = self.prepare_claims(claims)?;
        self.allocate_prepared(node, &prepared, pod_resources, options)
    }

    /// Validates claims and compiles their selectors (and their classes' selectors)
    /// once, for [`allocate_prepared`](Self::allocate_prepared) on many nodes. The
    /// classes are read now: a class changed later is not seen by these claims.
    pub fn prepare_claims(
        &self,
        claims: &[ResourceClaim],
    ) -> Result<PreparedClaims, AllocationError> {
        let mut errs = Vec::new();
        for c in claims {
            if let Err(e) = c.validate() {
                errs.extend(e);
            }
        }
        if !errs.is_empty() {
            return Err(AllocationError::InvalidClaim(errs));
        }
        let mut alternatives = Vec::with_capacity(claims.len());
        for claim in claims {
            let mut requests = Vec::with_capacity(claim.spec.requests.len());
            for (ri, request) in claim.spec.requests.iter().enumerate() {
                let mut alts = Vec::new();
                for (ai, view) in request.alternatives().into_iter().enumerate() {
                    let path = match &request.kind {
                        DeviceRequestKind::Exactly(_) => {
                            format!("spec.devices.requests[{ri}].exactly")
                        }
                        DeviceRequestKind::FirstAvailable(_) => {
                            format!("spec.devices.requests[{ri}].firstAvailable[{ai}]")
                        }
                    };
                    alts.push(self.compile_alternative(claim, &view, &path)?);
                }
                requests.push(alts);
            }
            alternatives.push(requests);
        }
        Ok(PreparedClaims {
            claims: claims.to_vec(),
            alternatives,
            simple: claims.iter().map(simple_claim).collect(),
        })
    }

    fn compile_alternative(
        &self,
        claim: &ResourceClaim,
        view: &RequestView<'_>,
        path: &str,
    ) -> Result<CompiledAlternative, AllocationError> {
        let Some(class) = self.class(view.device_class_name) else {
            return Err(AllocationError::ClassNotFound {
                claim: claim.object_ref(),
                field: format!("{path}.deviceClassName"),
                class: view.device_class_name.to_owned(),
            });
        };
        let _ = class;
        let mut selectors = Vec::with_capacity(view.selectors.len());
        for (i, s) in view.selectors.iter().enumerate() {
            selectors.push(Selector::compile(&s.cel).map_err(|error| {
                AllocationError::Selector(Box::new(SelectorFailure {
                    object: claim.object_ref(),
                    field: format!("{path}.selectors[{i}].cel.expression"),
                    error,
                }))
            })?);
        }
        Ok(CompiledAlternative {
            reference: view.reference(),
            class: view.device_class_name.to_owned(),
            class_path: format!("{path}.deviceClassName"),
            selectors,
        })
    }

    /// [`allocate_claims`](Self::allocate_claims) for claims prepared once.
    pub fn allocate_prepared(
        &self,
        node: &str,
        prepared_claims: &PreparedClaims,
        pod_resources: &BTreeMap<String, Quantity>,
        options: &AllocatorOptions,
    ) -> Result<AllocationOutcome, AllocationError> {
        let parts = prepared_claims.parts();
        self.allocate_parts(node, &parts, pod_resources, *options)
    }

    /// The id of a node that exists (not only named).
    fn live_node(&self, node: &str) -> Result<NodeId, AllocationError> {
        self.node_id(node)
            .filter(|id| self.node_by_id(*id).is_some())
            .ok_or_else(|| AllocationError::NodeNotFound(node.to_owned()))
    }

    /// Allocates claims whose selectors were compiled in (possibly several)
    /// [`PreparedClaims`]: each part names a claim and the prepared entry with the
    /// same spec. Lets the placer allocate several pods' claims on one node jointly
    /// without preparing them again.
    pub(crate) fn allocate_parts(
        &self,
        node: &str,
        parts: &[ClaimPart<'_>],
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
    ) -> Result<AllocationOutcome, AllocationError> {
        let node_id = self.live_node(node)?;
        self.allocate_parts_on(node_id, parts, pod_resources, options, None)
    }

    /// [`allocate_parts`](Self::allocate_parts) on a live node, by id. When allocated,
    /// `devices` (if given) receives the allocated devices: those of every result's
    /// `devices`, in order, result after result.
    pub(crate) fn allocate_parts_on(
        &self,
        node_id: NodeId,
        parts: &[ClaimPart<'_>],
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
        devices: Option<&mut Vec<Picked>>,
    ) -> Result<AllocationOutcome, AllocationError> {
        let mut steps = 0;
        self.allocate_parts_counted(node_id, parts, pod_resources, options, devices, &mut steps)
    }

    /// [`allocate_parts_on`](Self::allocate_parts_on), adding the search steps it took
    /// to `steps` (none when counting or a check answers before any search).
    pub(crate) fn allocate_parts_counted(
        &self,
        node_id: NodeId,
        parts: &[ClaimPart<'_>],
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
        devices: Option<&mut Vec<Picked>>,
        steps: &mut u64,
    ) -> Result<AllocationOutcome, AllocationError> {
        if let [part] = parts
            && let Some(out) = self.allocate_counted(node_id, part, pod_resources, options)
        {
            #[cfg(debug_assertions)]
            self.check_counted(node_id, part, pod_resources, options, &out);
            *steps += out.steps;
            if let Some(devices) = devices {
                devices.clear();
                devices.extend(
                    out.devices
                        .iter()
                        .map(|&device| Picked { device, held: true }),
                );
            }
            return Ok(out.outcome);
        }
        let claims: Vec<&ResourceClaim> = parts.iter().map(|p| p.claim).collect();
        let claims = claims.as_slice();
        let (prepared, problem, picks) =
            match self.solve_parts(node_id, parts, claims, pod_resources, options, steps)? {
                Solved::Found {
                    prepared,
                    problem,
                    picks,
                } => (prepared, problem, picks),
                Solved::Ended(outcome) => return Ok(outcome),
            };
        if let Some(devices) = devices {
            // Picks come claim by claim, as the results list their devices.
            debug_assert!(picks.windows(2).all(|w| w[0].claim <= w[1].claim));
            devices.clear();
            devices.extend(picks.iter().map(|p| {
                let admin = prepared[p.claim].0[p.request][p.alternative].admin;
                let cand = &problem[p.claim].requests[p.request].alternatives[p.alternative]
                    .candidates[p.candidate];
                Picked {
                    device: p.device,
                    held: !admin && !cand.shareable && cand.counters.is_empty(),
                }
            }));
        }
        Ok(AllocationOutcome::Allocated(self.build_results(
            node_id, claims, &prepared, &problem, &picks,
        )))
    }

    /// Whether one pod's prepared claims fit on `node`: the outcome
    /// [`allocate_prepared`](Self::allocate_prepared) would give there, with the same
    /// errors, without building its results. For the scheduler's filter step (trying
    /// one pod on many nodes), then [`allocate_prepared`](Self::allocate_prepared) on
    /// the node chosen.
    ///
    /// One claim of one request without constraints, whose alternatives each ask for a
    /// count of devices (no admin access, request selectors or capacity), is answered by
    /// counting the node's free, untainted-or-tolerated devices of the class — unless
    /// a reachable device is shareable or consumes shared counters, or its class has
    /// selector errors, which take the full allocator as everything else does.
    pub fn fits_prepared(
        &self,
        node: &str,
        prepared_claims: &PreparedClaims,
        pod_resources: &BTreeMap<String, Quantity>,
        options: &AllocatorOptions,
    ) -> Result<Fit, AllocationError> {
        let node_id = self.live_node(node)?;
        if let Some(fit) = self.fits_by_counting(node_id, prepared_claims, pod_resources, *options)
        {
            return Ok(fit);
        }
        let parts = prepared_claims.parts();
        let claims: Vec<&ResourceClaim> = prepared_claims.claims.iter().collect();
        let mut steps = 0;
        Ok(
            match self.solve_parts(
                node_id,
                &parts,
                &claims,
                pod_resources,
                *options,
                &mut steps,
            )? {
                Solved::Found { .. } => Fit::Fits,
                Solved::Ended(AllocationOutcome::BudgetExhausted { steps }) => {
                    Fit::Undecided { steps }
                }
                Solved::Ended(_) => Fit::DoesNotFit,
            },
        )
    }

    /// [`fits_prepared`](Self::fits_prepared) by counting, for one [`SimpleClaim`];
    /// `None` when only the allocator can tell.
    fn fits_by_counting(
        &self,
        node: NodeId,
        prepared_claims: &PreparedClaims,
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
    ) -> Option<Fit> {
        let [Some(simple)] = prepared_claims.simple.as_slice() else {
            return None;
        };
        let compiled = prepared_claims.alternatives.first()?.first()?;
        let mut devices = SmallVec::new();
        let choice = self.counted_choice(node, simple, compiled, options, &mut devices)?;
        if !self.shortfalls_on(Some(node), pod_resources).is_empty() {
            return Some(Fit::DoesNotFit);
        }
        #[cfg(debug_assertions)]
        if let Counted::NotEnough = choice {
            self.check_not_enough(node, prepared_claims, pod_resources, options);
        }
        Some(match choice {
            Counted::Chosen { .. } => Fit::Fits,
            Counted::NotEnough => Fit::DoesNotFit,
        })
    }

    /// The allocation of one [`SimpleClaim`], by counting: the search's first solution
    /// (see [`counted_choice`](Self::counted_choice)), its results written straight
    /// from the devices. `None` when only the full allocator can answer: anything but
    /// that solution, whose outcomes carry explanations.
    fn allocate_counted(
        &self,
        node: NodeId,
        part: &ClaimPart<'_>,
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
    ) -> Option<CountedAllocation> {
        let simple = part.prepared.simple.get(part.index)?.as_ref()?;
        let compiled = part.prepared.alternatives.get(part.index)?.first()?;
        let mut devices = SmallVec::new();
        let Counted::Chosen { alternative, steps } =
            self.counted_choice(node, simple, compiled, options, &mut devices)?
        else {
            return None;
        };
        if !self.shortfalls_on(Some(node), pod_resources).is_empty() {
            return None;
        }
        let chosen = &compiled[alternative];
        let tolerations = &simple.alternatives[alternative].tolerations;
        let mut w = self.result_writer(
            part.claim,
            compiled.iter().map(|c| c.class.as_str()),
            devices.len(),
        );
        for &device in &devices {
            self.write_device(
                &mut w,
                &results::ResultDevice {
                    device,
                    reference: &chosen.reference,
                    class: &chosen.class,
                    admin: false,
                    tolerations,
                    share: None,
                },
            );
        }
        Some(CountedAllocation {
            outcome: AllocationOutcome::Allocated(vec![self.finish_result(w, node)]),
            devices,
            steps,
        })
    }

    /// Checks [`allocate_counted`](Self::allocate_counted) against the search (debug
    /// builds: every test that allocates runs both).
    #[cfg(debug_assertions)]
    fn check_counted(
        &self,
        node: NodeId,
        part: &ClaimPart<'_>,
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
        counted: &CountedAllocation,
    ) {
        let mut steps = 0;
        let solved = self.solve_parts(
            node,
            core::slice::from_ref(part),
            &[part.claim],
            pod_resources,
            options,
            &mut steps,
        );
        let Ok(Solved::Found {
            prepared,
            problem,
            picks,
        }) = solved
        else {
            panic!("the search finds nothing where counting allocates");
        };
        let devices: SmallVec<[DeviceId; 8]> = picks.iter().map(|p| p.device).collect();
        assert_eq!(devices, counted.devices, "counting picks other devices");
        assert_eq!(steps, counted.steps, "counting takes other steps");
        let results = self.build_results(node, &[part.claim], &prepared, &problem, &picks);
        assert_eq!(
            AllocationOutcome::Allocated(results),
            counted.outcome,
            "counting builds other results"
        );
    }

    /// Checks a [`Counted::NotEnough`] of [`fits_by_counting`](Self::fits_by_counting)
    /// against the search (debug builds): it must find nothing.
    #[cfg(debug_assertions)]
    fn check_not_enough(
        &self,
        node: NodeId,
        prepared_claims: &PreparedClaims,
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
    ) {
        let parts = prepared_claims.parts();
        let claims: Vec<&ResourceClaim> = prepared_claims.claims.iter().collect();
        let mut steps = 0;
        let solved = self.solve_parts(node, &parts, &claims, pod_resources, options, &mut steps);
        assert!(
            matches!(
                solved,
                Ok(Solved::Ended(AllocationOutcome::Unsatisfiable(_)))
            ),
            "counting finds too few devices where the search does not fail"
        );
    }

    /// For one [`SimpleClaim`] on `node`: the search's first solution, found by
    /// counting, or that there is none. `None` when only the allocator can tell: a
    /// reachable device is shareable or consumes shared counters, a class is missing or
    /// has selector errors, the step budget may run out, or a device's value of the
    /// `matchAttribute` is a list. Node resources are the caller's.
    ///
    /// Without a constraint, the first alternative with `count` usable devices takes
    /// the first `count` of them (in candidate order), one step each. With a
    /// `matchAttribute`, the search tries candidates in order and starts on one only
    /// when at least `count` candidates from it on share its value (its grouping), then
    /// takes the next candidates with that value, one step for every candidate it
    /// passes: the value whose first candidate comes first among the values with
    /// `count` candidates, its first `count` candidates, and as many steps as the
    /// position of the last one (plus one). `devices` receives the devices chosen.
    fn counted_choice(
        &self,
        node: NodeId,
        simple: &SimpleClaim,
        compiled: &[CompiledAlternative],
        options: AllocatorOptions,
        devices: &mut SmallVec<[DeviceId; 8]>,
    ) -> Option<Counted> {
        // Everything that could make the allocator fail is looked at before anything
        // that says "does not fit", as the allocator does.
        let mut classes = SmallVec::<[&crate::cluster::ClassCache; 2]>::new();
        for (alt, c) in simple.alternatives.iter().zip(compiled) {
            let class = self.class_cache.get(&c.class)?;
            // Picking `count` devices takes at least `count` steps.
            if !class.errors.is_empty() || u64::from(alt.count) > options.step_budget {
                return None;
            }
            classes.push(class);
        }
        // The node's free devices bound every alternative's candidates (shareable ones
        // included), unless devices no single node owns are reachable too.
        if !self.has_shared_devices() {
            let free = self.node_free_devices(node);
            if simple.alternatives.iter().all(|alt| free < alt.count) {
                devices.clear();
                return Some(Counted::NotEnough);
            }
        }
        let reach = self.reach_of(node);
        if let Some(attribute) = &simple.matching {
            let ([alt], [class]) = (simple.alternatives.as_slice(), classes.as_slice()) else {
                return None;
            };
            return self.counted_match(&reach, alt, class, attribute, options, devices);
        }
        for (a, (alt, class)) in simple.alternatives.iter().zip(classes).enumerate() {
            devices.clear();
            for &dev in reach.iter() {
                if devices.len() >= alt.count as usize {
                    break;
                }
                if self.counted_candidate(dev, class, &alt.tolerations)? {
                    devices.push(dev);
                }
            }
            // The search takes the first `count` candidates: nothing else is asked of them.
            if devices.len() >= alt.count as usize {
                return Some(Counted::Chosen {
                    alternative: a,
                    steps: u64::from(alt.count),
                });
            }
        }
        devices.clear();
        Some(Counted::NotEnough)
    }

    /// Whether `dev` is a candidate of a counted alternative of class `class` with
    /// `tolerations`: eligible, free, of the class, untainted or tolerated. `None` when
    /// it is shareable or consumes counters (only the allocator can tell then).
    fn counted_candidate(
        &self,
        dev: DeviceId,
        class: &crate::cluster::ClassCache,
        tolerations: &[crate::DeviceToleration],
    ) -> Option<bool> {
        let slot = self.devices[dev.index()].as_ref().expect("live device id");
        let flags = slot.flags;
        if flags & ELIGIBLE == 0 {
            return Some(false);
        }
        if flags & (SHAREABLE | COUNTERS) != 0 {
            return None;
        }
        Some(
            flags & FREE != 0
                && class.matches.contains(dev)
                && (flags & TAINTED == 0 || self.tolerated(dev, tolerations)),
        )
    }

    /// [`counted_choice`](Self::counted_choice) for one alternative under a
    /// `matchAttribute` on `attribute`.
    fn counted_match(
        &self,
        reach: &[DeviceId],
        alt: &SimpleAlternative,
        class: &crate::cluster::ClassCache,
        attribute: &str,
        options: AllocatorOptions,
        devices: &mut SmallVec<[DeviceId; 8]>,
    ) -> Option<Counted> {
        devices.clear();
        // The candidates with their values. Devices with equal `equiv` have equal
        // attributes: each class is looked up once.
        let mut candidates: SmallVec<[(DeviceId, Option<&DeviceAttribute>); 16]> = SmallVec::new();
        let mut looked_up: SmallVec<[(u32, Option<&DeviceAttribute>); 4]> = SmallVec::new();
        for &dev in reach {
            if !self.counted_candidate(dev, class, &alt.tolerations)? {
                continue;
            }
            let equiv = self.devices[dev.index()].as_ref().expect("live").equiv;
            let value = if let Some(&(_, v)) = looked_up.iter().find(|(e, _)| *e == equiv) {
                v
            } else {
                let v = self.attribute_of(dev, attribute);
                // A list shares a value with another list or a scalar in ways
                // equality does not tell: the search decides.
                if v.is_some_and(DeviceAttribute::is_list) {
                    return None;
                }
                looked_up.push((equiv, v));
                v
            };
            debug_assert_eq!(value, self.attribute_of(dev, attribute), "equiv lies");
            candidates.push((dev, value));
        }
        let count = alt.count as usize;
        for (i, &(_, value)) in candidates.iter().enumerate() {
            let Some(value) = value else {
                continue;
            };
            // A value seen before had too few candidates from its first on.
            if candidates[..i].iter().any(|(_, v)| *v == Some(value)) {
                continue;
            }
            devices.clear();
            let mut last = i;
            for (j, &(dev, v)) in candidates.iter().enumerate().skip(i) {
                if v == Some(value) {
                    devices.push(dev);
                    last = j;
                    if devices.len() == count {
                        break;
                    }
                }
            }
            if devices.len() == count {
                let steps = last as u64 + 1;
                if steps > options.step_budget {
                    return None;
                }
                return Some(Counted::Chosen {
                    alternative: 0,
                    steps,
                });
            }
        }
        devices.clear();
        Some(Counted::NotEnough)
    }

    /// The allocator without its results: prepares the parts' claims and searches.
    fn solve_parts<'a>(
        &self,
        node_id: NodeId,
        parts: &[ClaimPart<'a>],
        claims: &[&ResourceClaim],
        pod_resources: &BTreeMap<String, Quantity>,
        options: AllocatorOptions,
        steps: &mut u64,
    ) -> Result<Solved<'a>, AllocationError> {
        let shortfalls = self.shortfalls_on(Some(node_id), pod_resources);
        // Prepare every claim first: input errors win over "does not fit".
        let reach = self.reach_of(node_id);
        let mut prepared: Vec<PreparedClaim<'_>> = Vec::new();
        for part in parts {
            debug_assert_eq!(part.claim.spec, part.prepared.claims[part.index].spec);
            let compiled = &part.prepared.alternatives[part.index];
            prepared.push(self.prepare_claim(&reach, part.claim, compiled)?);
        }
        // The search owns the alternatives; `prepared` keeps what results need.
        let problem: Vec<Claim> = prepared
            .iter_mut()
            .map(|(requests, constraints)| Claim {
                requests: requests
                    .iter_mut()
                    .map(|alts| Request {
                        alternatives: alts
                            .iter_mut()
                            .map(|p| core::mem::replace(&mut p.alternative, Alternative::empty()))
                            .collect(),
                    })
                    .collect(),
                constraints: constraints
                    .iter()
                    .map(|k| match k {
                        ConstraintKind::MatchAttribute(_) => search::ConstraintKind::Match,
                        ConstraintKind::DistinctAttribute(_) => search::ConstraintKind::Distinct,
                    })
                    .collect(),
            })
            .collect();
        for (claim, c) in claims.iter().zip(&problem) {
            if let Some(e) = claim_limit_error(claim, c.requests.iter().map(search::min_devices_of))
            {
                return Err(e);
            }
        }
        if !shortfalls.is_empty() {
            return Ok(Solved::Ended(AllocationOutcome::Unsatisfiable(
                Unsatisfiable::NodeResources {
                    node: self.nodes_name(node_id).to_owned(),
                    shortfalls,
                },
            )));
        }
        // A request none of whose alternatives has enough devices fails at once.
        for ((claim, c), (requests, _)) in claims.iter().zip(&problem).zip(&prepared) {
            for (req, alts) in c.requests.iter().zip(requests) {
                let usable = |i: usize| req.alternatives[i].candidates.len();
                if alts
                    .iter()
                    .enumerate()
                    .any(|(i, p)| usable(i) >= p.required as usize)
                {
                    continue;
                }
                let best = (0..alts.len())
                    .max_by_key(|&i| (usable(i), core::cmp::Reverse(alts[i].required)))
                    .expect("a request has at least one alternative");
                let p = &alts[best];
                return Ok(Solved::Ended(AllocationOutcome::Unsatisfiable(
                    Unsatisfiable::NotEnoughDevices(Box::new(RequestShortage {
                        claim: claim_name(claim),
                        request: p.compiled.reference.clone(),
                        required: p.required,
                        usable: usable(best) as u32,
                        funnel: p.funnel,
                    })),
                )));
            }
        }
        let counters = self.counters_for(&problem);
        let (end, stats) = search::search(&problem, &counters, options.step_budget);
        *steps += stats.steps;
        Ok(match end {
            SearchEnd::Found(picks) => Solved::Found {
                prepared,
                problem,
                picks,
            },
            SearchEnd::NotFound => Solved::Ended(AllocationOutcome::Unsatisfiable(
                Unsatisfiable::NoCombination {
                    claims: claims.iter().map(|c| claim_name(c)).collect(),
                    steps: stats.steps,
                },
            )),
            SearchEnd::BudgetExhausted => {
                Solved::Ended(AllocationOutcome::BudgetExhausted { steps: stats.steps })
            }
        })
    }

    /// Records an allocation result for `claim` (`namespace/name`): every device is
    /// allocated with the result's tolerations, share id and consumed capacity.
    /// All or nothing: if one device cannot be recorded, none is.
    pub fn commit_allocation(
        &mut self,
        claim: &str,
        result: &AllocationResult,
    ) -> Result<(), ClusterError> {
        self.record_allocation(claim, result, false)
    }

    /// Puts back what [`release_allocation`](Self::release_allocation) took from
    /// `claim` while a change is only simulated (preemption's victim search evicts and
    /// reprieves victims in the live cluster): as
    /// [`commit_allocation`](Self::commit_allocation), except that a device no longer
    /// published at its pool's current generation (a driver withdrew it while the claim
    /// ran) gets its record back by name, as the claim held it before the release.
    /// All or nothing, like `commit_allocation`.
    pub(crate) fn restore_allocation(
        &mut self,
        claim: &str,
        result: &AllocationResult,
    ) -> Result<(), ClusterError> {
        self.record_allocation(claim, result, true)
    }

    /// [`commit_allocation`](Self::commit_allocation), and with `withdrawn` also
    /// [`restore_allocation`](Self::restore_allocation)'s record by name of a device
    /// no longer published.
    fn record_allocation(
        &mut self,
        claim: &str,
        result: &AllocationResult,
        withdrawn: bool,
    ) -> Result<(), ClusterError> {
        let located: Vec<_> = result
            .devices
            .iter()
            .map(|r| self.locate(&r.driver, &r.pool, &r.device))
            .collect();
        self.record_located(claim, result, &located, withdrawn)
    }

    /// [`commit_allocation`](Self::commit_allocation) for a result whose devices were
    /// looked up already: `located` holds [`Cluster::locate`]'s answer for each device
    /// of `result`, in order (the cluster unchanged since). No name is looked up again.
    pub(crate) fn commit_located(
        &mut self,
        claim: &str,
        result: &AllocationResult,
        located: &[Located],
    ) -> Result<(), ClusterError> {
        self.record_located(claim, result, located, false)
    }

    /// [`record_allocation`](Self::record_allocation) with every device located.
    fn record_located(
        &mut self,
        claim: &str,
        result: &AllocationResult,
        located: &[Located],
        withdrawn: bool,
    ) -> Result<(), ClusterError> {
        debug_assert_eq!(result.devices.len(), located.len());
        // The keys recorded so far, for the undo.
        let mut done: Vec<DeviceKey> = Vec::new();
        for (r, &loc) in result.devices.iter().zip(located) {
            debug_assert_eq!(loc, self.locate(&r.driver, &r.pool, &r.device));
            let allocation = DeviceAllocation {
                consumer: claim.to_owned(),
                tolerations: r.tolerations.clone(),
                admin_access: r.admin_access,
                share_id: r.share_id.clone(),
                consumed_capacity: r.consumed_capacity.clone(),
            };
            let dev = loc.and_then(|(_, dev)| dev);
            let recorded = match loc {
                Some((key, None)) if withdrawn => {
                    self.allocations.entry(key).or_default().push(allocation);
                    self.allocation_key_changed(key);
                    Ok(key)
                }
                // A name never interned has no record for the release to have taken
                // (a claim adopted with a device of a pool the cluster never saw,
                // say): there is nothing to put back.
                None if withdrawn => {
                    continue;
                }
                _ => self
                    .allocate_at(
                        dev,
                        || DeviceRef::new(&r.driver, &r.pool, &r.device),
                        allocation,
                    )
                    .map(|_| loc.expect("a device found has a key").0),
            };
            match recorded {
                Ok(key) => done.push(key),
                Err(e) => {
                    for &key in &done {
                        let _ = self.release_key(key, claim);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// [`commit_allocation`](Self::commit_allocation) while the placer tries a
    /// placement, for a result the allocator built (from validated claims, against this
    /// cluster as it is) with `devices` its devices in order: no record validation, no
    /// name lookups, and held picks ([`Picked::held`]) are held rather than recorded.
    /// Whether every device was recorded (if not, none is). Undone by
    /// [`release_allocation_on`](Self::release_allocation_on) only.
    pub(crate) fn commit_allocation_on(
        &mut self,
        claim: &str,
        result: &AllocationResult,
        devices: &[Picked],
    ) -> bool {
        debug_assert_eq!(result.devices.len(), devices.len());
        let paused = self.pause_scores();
        let mut all = true;
        for (done, (r, &picked)) in result.devices.iter().zip(devices).enumerate() {
            let recorded = if picked.held {
                self.hold(picked.device, claim)
            } else {
                let allocation = DeviceAllocation {
                    consumer: claim.to_owned(),
                    tolerations: r.tolerations.clone(),
                    admin_access: r.admin_access,
                    share_id: r.share_id.clone(),
                    consumed_capacity: r.consumed_capacity.clone(),
                };
                self.allocate_on(picked.device, allocation).is_ok()
            };
            if !recorded {
                self.release_allocation_on(claim, &devices[..done]);
                all = false;
                break;
            }
        }
        self.resume_scores(paused, devices.iter().map(|p| p.device));
        all
    }

    /// Undoes [`commit_allocation_on`](Self::commit_allocation_on): as
    /// [`release_allocation`](Self::release_allocation) for recorded devices.
    pub(crate) fn release_allocation_on(&mut self, claim: &str, devices: &[Picked]) {
        let paused = self.pause_scores();
        for &picked in devices {
            if picked.held {
                self.release_hold(picked.device);
            } else {
                self.release_on(picked.device, claim);
            }
        }
        self.resume_scores(paused, devices.iter().map(|p| p.device));
    }

    /// Releases what [`commit_allocation`](Self::commit_allocation) recorded for
    /// `claim`: every device of `result` (all the claim's shares on each). Devices the
    /// claim does not hold are skipped.
    pub fn release_allocation(&mut self, claim: &str, result: &AllocationResult) {
        let mut seen: BTreeSet<DeviceRef> = BTreeSet::new();
        for r in &result.devices {
            let device = DeviceRef::new(&r.driver, &r.pool, &r.device);
            if seen.insert(device.clone()) {
                let _ = self.release(&device, claim);
            }
        }
    }
}

/// [`AllocationError::TooManyDevices`] for `claim` when the least numbers of devices
/// its requests need (`counts`, in spec order) add up to more than the per-claim limit.
/// Allocates nothing unless they do (it runs on every allocator call).
pub(crate) fn claim_limit_error(
    claim: &ResourceClaim,
    counts: impl Iterator<Item = usize> + Clone,
) -> Option<AllocationError> {
    let needed = counts.clone().fold(0usize, usize::saturating_add);
    (needed > MAX_DEVICES_PER_CLAIM).then(|| AllocationError::TooManyDevices {
        claim: claim.object_ref(),
        needed,
        requests: claim
            .spec
            .requests
            .iter()
            .map(|r| r.name.clone())
            .zip(counts)
            .collect(),
    })
}

fn claim_name(c: &ResourceClaim) -> String {
    format!("{}/{}", c.namespace, c.name)
}
