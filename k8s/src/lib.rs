//! Kubernetes 1.37 objects in and out of [`gangpack`].
//!
//! - [`load`] reads what `kubectl get ... -o yaml|json` prints (files, directories,
//!   stdin; multi-document YAML, JSON, `kind: List`) into [`Object`]s that keep the
//!   whole original document, as the API server reads it: every API version a 1.37
//!   server serves is converted into the one gangpack reads ([`Kind::served_versions`]),
//!   unknown fields are [`Warning`]s (errors with [`LoadOptions::strict`]), duplicate
//!   mapping keys are errors.
//! - [`Snapshot::build`] converts them (through the `k8s-openapi` 1.37 types) into a
//!   [`gangpack::Scheduler`]: pods with `spec.nodeName` and claims with
//!   `status.allocation` are the running state, the rest is pending.
//! - [`check`] judges the running state of a dump (with decisions applied over it)
//!   with the core's independent validator: `gangpack check`.
//! - [`output`] writes decisions back in upstream shape: claim allocations and
//!   `reservedFor`, pod bindings, conditions, nominated nodes, eviction marks,
//!   DeviceTaintRule status.
//!   [`output::scenario_manifests`] writes a [`gangpack::testing::Scenario`] as the
//!   Kubernetes objects it stands for, which load back into the same model objects.
//! - [`shrink`] reduces a failing scenario (its objects as JSON values) to a small one
//!   that still fails, asking a judge the caller provides: `gangpack shrink`.
//! - [`watch`] reads the event streams of `kubectl get --watch --output-watch-events -o
//!   json` and keeps the objects they describe: `gangpack watch`.

pub mod check;
mod convert;
pub mod load;
mod names;
mod object;
pub mod output;
pub mod shrink;
mod snapshot;
pub mod trace;
pub mod watch;

pub use convert::device_taint_rule;
pub use load::{
    Emptiness, EmptyInput, Limits, LoadOptions, Loaded, io_reason, load_paths, load_paths_with,
    load_str, load_str_with, load_value, manifest_files,
};
pub use names::{closest_names, edit_distance, natural_cmp, natural_sort};
pub use object::{
    Binding, InputError, InputErrors, Kind, Object, Source, Warning, WarningGroup, describe,
    group_warnings,
};
pub use snapshot::{
    BuildOptions, GeneratedClaim, Owner, RequestMapping, Snapshot, Waiting, WaitingOn,
};
