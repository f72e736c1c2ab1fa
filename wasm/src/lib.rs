//! WebAssembly bindings for gangpack: a thin adapter, with no scheduling logic of its
//! own.
//!
//! Every function takes and returns plain JavaScript values (objects, arrays, strings,
//! numbers), converted with `serde-wasm-bindgen`'s JSON-compatible serializer (maps
//! become plain objects). gangpack's own shapes are camelCase; Kubernetes objects keep
//! Kubernetes' spelling. What crosses the boundary, and why nothing else does, is in
//! `docs/ARCHITECTURE.md` ("The WebAssembly boundary").
//!
//! - [`plan`], [`explain`] and [`taint`] (feature `k8s`): the command line's contract on
//!   manifest text, returning the table text and the object `gangpack ... -o json`
//!   prints, computed by the same library (`gangpack_cli`) as the native command.
//! - [`check`], [`diff`] and [`capacity`] (feature `k8s`) and [`generate`] (`gen` in
//!   JavaScript, feature `gen`): the command's `check`, `diff`, `capacity` and `gen` as
//!   data, with the table text and the `-o json` object from one run.
//! - [`run_cli`] (feature `k8s`): one command line, as `wasm/js/gangpack.mjs` runs it.
//! - [`Scheduler`]: a stateful scheduler for interactive use (the playground).
//!
//! Errors are thrown as JavaScript `Error`s whose `name` is the kind (see [`js`]) and
//! which carry the structured `problems`. A unit that stays pending is an outcome,
//! never an error.

#![cfg_attr(not(feature = "k8s"), allow(unused_crate_dependencies))]

#[cfg(feature = "bench")]
mod bench;
#[cfg(feature = "k8s")]
mod commands;
pub mod js;
#[cfg(feature = "k8s")]
mod manifests;
mod session;
mod types;

use wasm_bindgen::prelude::wasm_bindgen;

#[cfg(feature = "bench")]
pub use bench::BenchScenario;
#[cfg(feature = "gen")]
pub use commands::generate;
#[cfg(feature = "k8s")]
pub use commands::{capacity, check, diff, shrink};
#[cfg(feature = "k8s")]
pub use manifests::{demo_manifests, explain, format_list, plan, run_cli, taint};
pub use session::Scheduler;

/// The version of the gangpack core this module was built from.
#[wasm_bindgen]
#[must_use]
pub fn version() -> String {
    gangpack::VERSION.to_owned()
}

/// Whether this build reads Kubernetes manifests (the `k8s` feature).
#[wasm_bindgen(js_name = hasManifests)]
#[must_use]
pub fn has_manifests() -> bool {
    cfg!(feature = "k8s")
}

/// Installs the panic hook (feature `panic-hook`) when the module starts: a Rust panic
/// then reaches the console with its message before the module traps.
#[wasm_bindgen(start)]
fn start() {
    #[cfg(feature = "panic-hook")]
    console_error_panic_hook::set_once();
}
