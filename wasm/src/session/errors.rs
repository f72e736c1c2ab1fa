//! The core's errors as thrown JavaScript errors (see [`crate::js`] for the kinds).

use gangpack::{ClusterError, SchedulerError, ValidationError};
use wasm_bindgen::JsValue;

use crate::js::{
    self, ALREADY_EXISTS, CONFLICT, INVALID_ARGUMENT, INVALID_INPUT, NOT_FOUND, Problem,
};

/// A refused scheduler operation: `Invalid` is `InvalidInput` (one problem per
/// validation error; `AlreadyExists` when every one is a duplicate name), a cluster
/// refusal as [`cluster`] maps it, a unit's bad inputs `InvalidInput`.
pub(crate) fn scheduler(e: &SchedulerError) -> JsValue {
    match e {
        SchedulerError::Invalid(errs) => invalid(errs),
        SchedulerError::Cluster(c) => cluster(c),
        other => js::error_message(INVALID_INPUT, other.to_string()),
    }
}

/// A refused cluster change: `NotFound` (`NotFound`, `DeviceNotFound`),
/// `AlreadyExists`, `InvalidInput` (`Invalid`), `Conflict` (every other refusal: a
/// device in use, capacity or counters exceeded, a reservation that does not fit).
pub(crate) fn cluster(e: &ClusterError) -> JsValue {
    let kind = match e {
        ClusterError::Invalid(errs) => return invalid(errs),
        ClusterError::NotFound(_) | ClusterError::DeviceNotFound(_) => NOT_FOUND,
        ClusterError::AlreadyExists(_) => ALREADY_EXISTS,
        _ => CONFLICT,
    };
    js::error_message(kind, e.to_string())
}

/// Validation errors, one problem each (object `Kind "ns/name"`, field path, message).
pub(crate) fn invalid(errs: &[ValidationError]) -> JsValue {
    let duplicate = !errs.is_empty()
        && errs
            .iter()
            .all(|e| matches!(e.problem, gangpack::Problem::Duplicate { .. }));
    let problems: Vec<Problem> = errs.iter().map(problem).collect();
    js::error(
        if duplicate {
            ALREADY_EXISTS
        } else {
            INVALID_INPUT
        },
        &problems,
    )
}

/// Validation errors of an argument (an option, a method's parameter) rather than of
/// an object: `InvalidArgument`, one problem each.
pub(crate) fn invalid_argument(errs: &[ValidationError]) -> JsValue {
    let problems: Vec<Problem> = errs.iter().map(problem).collect();
    js::error(INVALID_ARGUMENT, &problems)
}

fn problem(e: &ValidationError) -> Problem {
    Problem {
        line: e.to_string(),
        object: Some(e.object.to_string()),
        field: e.field.clone(),
        message: e.problem.to_string(),
        ..Problem::default()
    }
}
