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

impl core::fmt::Display for PlacementDecision {
    /// `ns/a -> node-1 (3 devices), ns/b -> node-2; group claims: 1 device`, the
    /// bindings in order.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let devices = |claims: &[ClaimAllocation]| -> usize {
            claims.iter().map(|c| c.result.devices.len()).sum()
        };
        if self.bindings.is_empty() {
            f.write_str("no pods")?;
        }
        for (i, b) in self.bindings.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} -> {}", b.pod, b.node)?;
            match devices(&b.claims) {
                0 => {}
                1 => f.write_str(" (1 device)")?,
                n => write!(f, " ({n} devices)")?,
            }
        }
        match devices(&self.group_claims) {
            0 => Ok(()),
            1 => f.write_str("; group claims: 1 device"),
            n => write!(f, "; group claims: {n} devices"),
        }
    }
}
