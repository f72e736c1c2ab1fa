//! Errors of a request: a kind and the problems, as the JavaScript package throws them
//! (`GangpackError`) and the C ABI returns them (`{"error": ...}`).
//!
//! # Kinds
//!
//! [`INVALID_INPUT`] (manifests or objects that fail validation or conversion),
//! [`INVALID_ARGUMENT`] (an argument of the wrong shape: an options object with an
//! unknown policy, a malformed time), [`NOT_FOUND`] (a unit, node, device or rule that
//! does not exist), [`ALREADY_EXISTS`], [`CONFLICT`] (a change the state refuses: a
//! device in use, capacity exceeded), [`IO_ERROR`] (reading or printing failed) and,
//! over the C ABI only, [`INTERNAL`] (a Rust panic: the host reads it after the trap).

use gangpack::{ClusterError, SchedulerError, ValidationError};
use serde::Serialize;

/// The kind of an error about invalid manifests or objects.
pub const INVALID_INPUT: &str = "InvalidInput";
/// The kind of an error about an argument of the wrong shape.
pub const INVALID_ARGUMENT: &str = "InvalidArgument";
/// The kind of an error about something that does not exist.
pub const NOT_FOUND: &str = "NotFound";
/// The kind of an error about adding what exists already.
pub const ALREADY_EXISTS: &str = "AlreadyExists";
/// The kind of an error about a change the state refuses.
pub const CONFLICT: &str = "Conflict";
/// The kind of an error about reading or printing.
pub const IO_ERROR: &str = "IoError";
/// The kind of a Rust panic (C ABI only: the module traps, and the host discards it).
pub const INTERNAL: &str = "Internal";

/// One problem of an error.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// The whole line, as the command prints it.
    pub line: String,
    /// The file (the name given with the manifests), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The document in the file (1-based), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<usize>,
    /// The item of a `kind: List` (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    /// The object, `Kind "ns/name"`, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The field path (`spec.devices[0].name`), empty for the whole object.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl Problem {
    /// A problem that is only a message.
    pub fn message(message: impl Into<String>) -> Problem {
        let message = message.into();
        Problem {
            line: message.clone(),
            message,
            ..Problem::default()
        }
    }

    /// A problem about one field of an argument.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Problem {
        let (field, message) = (field.into(), message.into());
        let line = if field.is_empty() {
            message.clone()
        } else {
            format!("{field}: {message}")
        };
        Problem {
            line,
            field,
            message,
            ..Problem::default()
        }
    }
}

/// A failed request: its kind and every problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// One of the kinds above ([`INVALID_INPUT`], ...).
    pub kind: &'static str,
    /// Every problem, in order.
    pub problems: Vec<Problem>,
}

impl Error {
    /// An error of `kind` with `problems`.
    pub fn new(kind: &'static str, problems: Vec<Problem>) -> Error {
        Error { kind, problems }
    }

    /// An error of `kind` with one message.
    pub fn message(kind: &'static str, message: impl Into<String>) -> Error {
        Error::new(kind, vec![Problem::message(message)])
    }

    /// An [`INVALID_ARGUMENT`] error about `field`.
    pub fn argument(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::new(INVALID_ARGUMENT, vec![Problem::field(field, message)])
    }

    /// The message: every problem's line, one per line.
    pub fn text(&self) -> String {
        self.problems
            .iter()
            .map(|p| p.line.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.kind, self.text())
    }
}

impl std::error::Error for Error {}

impl Serialize for Error {
    /// `{"kind", "message", "problems"}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("Error", 3)?;
        st.serialize_field("kind", self.kind)?;
        st.serialize_field("message", &self.text())?;
        st.serialize_field("problems", &self.problems)?;
        st.end()
    }
}

/// A refused scheduler operation: `Invalid` is `InvalidInput` (one problem per
/// validation error; `AlreadyExists` when every one is a duplicate name), a cluster
/// refusal as [`cluster`] maps it, a unit's bad inputs `InvalidInput`.
pub fn scheduler(e: &SchedulerError) -> Error {
    match e {
        SchedulerError::Invalid(errs) => invalid(errs),
        SchedulerError::Cluster(c) => cluster(c),
        other => Error::message(INVALID_INPUT, other.to_string()),
    }
}

/// A refused cluster change: `NotFound` (`NotFound`, `DeviceNotFound`),
/// `AlreadyExists`, `InvalidInput` (`Invalid`), `Conflict` (every other refusal: a
/// device in use, capacity or counters exceeded, a reservation that does not fit).
pub fn cluster(e: &ClusterError) -> Error {
    let kind = match e {
        ClusterError::Invalid(errs) => return invalid(errs),
        ClusterError::NotFound(_) | ClusterError::DeviceNotFound(_) => NOT_FOUND,
        ClusterError::AlreadyExists(_) => ALREADY_EXISTS,
        _ => CONFLICT,
    };
    Error::message(kind, e.to_string())
}

/// Validation errors, one problem each (object `Kind "ns/name"`, field path, message).
pub fn invalid(errs: &[ValidationError]) -> Error {
    let duplicate = !errs.is_empty()
        && errs
            .iter()
            .all(|e| matches!(e.problem, gangpack::Problem::Duplicate { .. }));
    Error::new(
        if duplicate {
            ALREADY_EXISTS
        } else {
            INVALID_INPUT
        },
        errs.iter().map(validation_problem).collect(),
    )
}

/// Validation errors of an argument (an option, a method's parameter) rather than of
/// an object: `InvalidArgument`, one problem each.
pub fn invalid_argument(errs: &[ValidationError]) -> Error {
    Error::new(
        INVALID_ARGUMENT,
        errs.iter().map(validation_problem).collect(),
    )
}

fn validation_problem(e: &ValidationError) -> Problem {
    Problem {
        line: e.to_string(),
        object: Some(e.object.to_string()),
        field: e.field.clone(),
        message: e.problem.to_string(),
        ..Problem::default()
    }
}

/// A failed command (`gangpack_cli::Failure`) as an error.
#[cfg(feature = "k8s")]
pub fn failure(f: &gangpack_cli::Failure) -> Error {
    use gangpack_cli::Failure;
    match f {
        Failure::Invalid(problems) => {
            Error::new(INVALID_INPUT, problems.iter().map(cli_problem).collect())
        }
        Failure::NotFound(message) => Error::message(NOT_FOUND, message.clone()),
        Failure::Io(message) => Error::message(IO_ERROR, message.clone()),
    }
}

/// A command's problem as errors carry it.
#[cfg(feature = "k8s")]
pub fn cli_problem(p: &gangpack_cli::Problem) -> Problem {
    Problem {
        line: p.line.clone(),
        file: p.file.clone(),
        doc: p.doc,
        item: p.item,
        object: p.object.clone(),
        field: p.field.clone(),
        message: p.message.clone(),
    }
}
