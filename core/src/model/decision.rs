//! The decision a gang placer hands on: which pod goes to which node, and how each claim
//! is allocated. The placer builds it, `Cluster::apply_decision` records it, and the
//! independent validator re-checks it; the type sits here, below all three, so that none
//! of them imports another for it.

use crate::alloc_prelude::*;
use crate::model::claim::AllocationResult;

/// What a gang placer decided for one group: where each pod goes and how each claim is
/// allocated. Applying it means binding the pods, reserving their node resources and
/// committing the allocations.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct PlacementDecision {
    /// The pods placed, each with the allocations of its own claims.
    pub bindings: Vec<PodBinding>,
    /// The allocations of the PodGroup's claims (KEP-5729), shared by every member.
    pub group_claims: Vec<ClaimAllocation>,
}

/// One pod bound to one node.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct PodBinding {
    /// The pod, `namespace/name`.
    pub pod: String,
    /// The node it is bound to.
    pub node: String,
    /// Allocations of the pod's claims that are not allocated yet (a claim several
    /// pods share is allocated in the binding of one of them).
    pub claims: Vec<ClaimAllocation>,
}

/// The allocation of one ResourceClaim.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct ClaimAllocation {
    /// The claim, `namespace/name`.
    pub claim: String,
    /// Its `status.allocation`.
    pub result: AllocationResult,
}
