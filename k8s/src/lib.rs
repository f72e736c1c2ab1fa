//! Kubernetes 1.37 objects in and out of [`gangpack`].
//!
//! - [`load`] reads what `kubectl get ... -o yaml|json` prints (files, directories,
//!   stdin; multi-document YAML, JSON, `kind: List`) into [`Object`]s that keep the
//!   whole original document.
//! - [`Snapshot::build`] converts them (through the `k8s-openapi` 1.37 types) into a
//!   [`gangpack::Scheduler`]: pods with `spec.nodeName` and claims with
//!   `status.allocation` are the running state, the rest is pending.
//! - [`output`] writes decisions back in upstream shape: claim allocations and
//!   `reservedFor`, pod bindings, conditions, nominated nodes, eviction marks,
//!   DeviceTaintRule status.

mod convert;
pub mod load;
mod object;
pub mod output;
mod snapshot;

pub use convert::device_taint_rule;
pub use load::{Loaded, load_paths, load_str};
pub use object::{InputError, InputErrors, Kind, Object, Source, Warning, describe};
pub use snapshot::{BuildOptions, GeneratedClaim, Owner, RequestMapping, Snapshot};
