//! `allocate`: pending claims allocated together on one node by the core's
//! [`Cluster::allocate_claims`](gangpack::Cluster::allocate_claims), the analogue of
//! upstream's `Allocator.Allocate(ctx, node, claims)` (the differential's entry point).

use std::collections::BTreeMap;

use gangpack::{AllocationError, AllocationOutcome, AllocatorOptions, Unsatisfiable};
use gangpack_cli::Input;
use serde::Serialize;
use serde_json::Value;

use crate::error::{self, Error, INVALID_INPUT, NOT_FOUND, Problem};

/// `allocate`'s result.
#[derive(Debug, PartialEq, Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum AllocateResult {
    /// Every claim allocated: one `resource.k8s.io/v1` `AllocationResult` per claim, in
    /// request order.
    Allocated {
        /// The results.
        results: Vec<Value>,
    },
    /// No allocation exists on the node.
    Unsatisfiable {
        /// Why, in gangpack's words.
        reason: String,
        /// The same, as data (the core's `Unsatisfiable`).
        detail: Value,
    },
    /// The search ran out of steps before deciding.
    Undecided {
        /// Steps taken: the budget.
        steps: u64,
    },
}

/// Allocates `claims` (`namespace/name`) together on `node` over the cluster of
/// `input` (its Nodes, ResourceSlices, DeviceClasses, ResourceClaims and
/// DeviceTaintRules; a claim with `status.allocation` holds its devices). Each named
/// claim must exist and be unallocated, else an
/// [`INVALID_ARGUMENT`](crate::error::INVALID_ARGUMENT) naming it (`claims[i]`); an
/// unknown node is [`NOT_FOUND`]. The node's cpu and memory are not checked (upstream's
/// allocator does not either).
pub fn allocate(
    input: &Input,
    node: &str,
    claims: &[String],
    step_budget: u64,
) -> Result<AllocateResult, Error> {
    let options = gangpack_cli::Options::default();
    let (snapshot, _) = gangpack_cli::snapshot(input, &options).map_err(|f| error::failure(&f))?;
    let sched = &snapshot.scheduler;
    let mut chosen = Vec::with_capacity(claims.len());
    for (i, name) in claims.iter().enumerate() {
        let field = format!("claims[{i}]");
        let Some((ns, n)) = name
            .split_once('/')
            .filter(|(ns, n)| !ns.is_empty() && !n.is_empty() && !n.contains('/'))
        else {
            return Err(Error::argument(
                field,
                format!("{name:?} is not NAMESPACE/NAME"),
            ));
        };
        if claims[..i].contains(name) {
            return Err(Error::argument(
                field,
                format!("claim {name} is named twice"),
            ));
        }
        let claim = sched
            .claims()
            .find(|c| c.namespace == ns && c.name == n)
            .ok_or_else(|| {
                Error::argument(
                    field.clone(),
                    format!("ResourceClaim {name} is not in the input"),
                )
            })?;
        if claim.allocation.is_some() {
            return Err(Error::argument(
                field,
                format!("ResourceClaim {name} is allocated already (status.allocation)"),
            ));
        }
        chosen.push(claim.clone());
    }
    let outcome = sched
        .cluster()
        .allocate_claims(
            node,
            &chosen,
            &BTreeMap::new(),
            &AllocatorOptions { step_budget },
        )
        .map_err(|e| allocation_error(&e))?;
    Ok(match outcome {
        AllocationOutcome::Allocated(results) => AllocateResult::Allocated {
            results: results
                .iter()
                .map(|r| gangpack_k8s::output::allocation_to_json(r, sched.now()))
                .collect(),
        },
        AllocationOutcome::Unsatisfiable(u) => AllocateResult::Unsatisfiable {
            reason: reason(&u),
            detail: serde_json::to_value(&u).unwrap_or(Value::Null),
        },
        AllocationOutcome::BudgetExhausted { steps } => AllocateResult::Undecided { steps },
    })
}

/// An allocation that cannot be answered: invalid claims (each problem), a node or
/// class that does not exist, a selector that does not compile or fails on a device,
/// too many devices, an `All` request over an incomplete pool.
fn allocation_error(e: &AllocationError) -> Error {
    let at = |object: &gangpack::ObjectRef, field: &str| Problem {
        line: e.to_string(),
        object: Some(object.to_string()),
        field: field.to_owned(),
        message: e.to_string(),
        ..Problem::default()
    };
    match e {
        AllocationError::InvalidClaim(errs) => error::invalid(errs),
        AllocationError::NodeNotFound(_) => {
            Error::new(NOT_FOUND, vec![Problem::field("node", e.to_string())])
        }
        AllocationError::ClassNotFound { claim, field, .. } => {
            Error::new(NOT_FOUND, vec![at(claim, field)])
        }
        AllocationError::Selector(x) => Error::new(INVALID_INPUT, vec![at(&x.object, &x.field)]),
        AllocationError::Evaluation(x) => Error::new(
            INVALID_INPUT,
            vec![at(&x.claim, &format!("request {}", x.request))],
        ),
        AllocationError::TooManyDevices { claim, .. } => {
            Error::new(INVALID_INPUT, vec![at(claim, "spec.devices.requests")])
        }
        AllocationError::IncompletePool { claim, request, .. } => Error::new(
            INVALID_INPUT,
            vec![at(claim, &format!("request {request}"))],
        ),
        _ => Error::message(INVALID_INPUT, e.to_string()),
    }
}

/// Why claims do not fit, in a sentence.
fn reason(u: &Unsatisfiable) -> String {
    match u {
        Unsatisfiable::NodeResources { node, shortfalls } => {
            let parts: Vec<String> = shortfalls
                .iter()
                .map(|s| {
                    format!(
                        "{} (requested {}, free {})",
                        s.resource, s.requested, s.available
                    )
                })
                .collect();
            format!("node {node} lacks {}", parts.join(", "))
        }
        Unsatisfiable::NotEnoughDevices(s) => {
            let f = &s.funnel;
            let removed: Vec<String> = [
                ("by the class selectors", f.class),
                ("by the request selectors", f.selectors),
                ("by untolerated taints", f.taints),
                ("as allocated already", f.allocated),
                ("for lack of capacity", f.capacity),
            ]
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(why, n)| format!("{n} {why}"))
            .collect();
            let text = format!(
                "claim {} request {} needs {} device(s), {} usable of {} reachable",
                s.claim, s.request, s.required, s.usable, f.reachable
            );
            if removed.is_empty() {
                text
            } else {
                format!("{text} ({} removed)", removed.join(", "))
            }
        }
        Unsatisfiable::NoCombination { claims, steps } => format!(
            "no combination of devices satisfies claims {} together ({steps} steps searched)",
            claims.join(", ")
        ),
    }
}
