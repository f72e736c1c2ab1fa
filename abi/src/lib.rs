//! gangpack's requests and results as JSON, and a C-ABI WebAssembly surface over them
//! for hosts other than JavaScript (the Go module in `go/`).
//!
//! The JSON layer (every module but `exports`) is what the JavaScript package
//! (`gangpack-wasm`) and the C ABI share: options and manifests read from JSON with
//! errors naming the field, each command's result shape, and the core's errors as
//! [`error::Error`]s of a kind with problems. It holds no scheduling logic: every
//! answer comes from `gangpack_cli`, `gangpack_k8s` and the core.
//!
//! # The C ABI (feature `exports`, wasm32 only)
//!
//! - `gangpack_alloc(len: u32) -> u32` / `gangpack_free(ptr: u32, len: u32)`: the host
//!   writes a request into a buffer from `gangpack_alloc` and frees every response.
//! - `gangpack_<op>(ptr: u32, len: u32) -> u64` for each of [`ops::OPS`] (and the
//!   sessions): the request (JSON bytes) is consumed; the answer is `(ptr << 32) |
//!   len` of `{"ok": RESULT}` or `{"error": {"kind", "message", "problems"}}`.
//! - Import `gangpack_host.judge(ctx: u64, ptr: u32, len: u32) -> i32`, `shrink`'s
//!   judge (1 still fails, 0 passes, 2 stop).
//! - `gangpack_last_panic() -> u64`: a panic traps the module (panic = abort); the
//!   host reads the message from this, then discards the instance.
//!
//! Requests: `plan {files, options}`, `explain {files, unit, options}`, `check` /
//! `diff` / `capacity` / `taint {files, spec, options}`, `gen {options}`, `shrink
//! {files, judgeContext, options}`, `cli` (one command line), `allocate {files, node,
//! claims, stepBudget}`, `version {}`; each argument as the JavaScript function of
//! the same name takes it (`wasm/src/types.d.ts`), `files` as its `manifests`.
//! Sessions: `session_new {files, options}` → `{handle}`, `session_call {handle,
//! method, ...}`, `session_free {handle}` (the methods: [`session`]).

#[cfg(feature = "k8s")]
pub mod allocate;
#[cfg(feature = "k8s")]
pub mod commands;
pub mod error;
#[cfg(all(feature = "exports", target_arch = "wasm32"))]
mod exports;
#[cfg(feature = "k8s")]
pub mod manifests;
#[cfg(feature = "k8s")]
pub mod ops;
pub mod options;
#[cfg(feature = "k8s")]
pub mod session;
pub mod unit;
pub mod value;
