//! Instrumentation without a clock: the loader, the snapshot builder and the commands
//! built on them report where they are as [`Event`]s to one process-wide hook, which a
//! program installs with [`set_hook`] (the `gangpack` binary does, for `--timings` and
//! the progress line on a terminal). Nothing here reads a clock or writes anywhere, so
//! it works the same in WebAssembly; with no hook installed an event costs one atomic
//! load.
//!
//! ```
//! use gangpack_k8s::trace::{self, Event};
//!
//! fn hook(e: Event<'_>) {
//!     if let Event::PhaseEnd(phase) = e {
//!         eprintln!("{phase} done");
//!     }
//! }
//! // Once per process; a second hook is refused.
//! assert!(trace::set_hook(hook).is_ok());
//! assert!(trace::set_hook(hook).is_err());
//! ```

use std::sync::OnceLock;

/// What the loader and the builder report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// An input was read whole, before it is parsed: its name and size.
    Read {
        /// The file name (`-` / `<stdin>` for standard input).
        name: &'a str,
        /// Its size in bytes.
        bytes: usize,
    },
    /// An input was parsed: how many objects it held.
    Parsed {
        /// The file name.
        name: &'a str,
        /// Objects read from it (the items of a `kind: List` count one each).
        objects: usize,
    },
    /// The snapshot builder starts converting and applying `objects` objects.
    Building {
        /// The objects to convert.
        objects: usize,
    },
    /// One object's conversion to the Kubernetes API types begins (the time until the
    /// matching [`Event::ConvertEnd`] is conversion; the rest of building is gangpack's
    /// own model and index). Where objects are converted ahead on other threads, the
    /// builder's thread waits for a run of them between this and the first of the
    /// run's [`Event::ConvertEnd`]s: conversion that overlaps the model's building is
    /// not counted.
    ConvertStart,
    /// One object's conversion ended (one per object, also for a run converted ahead).
    ConvertEnd,
    /// A phase of a command ended: `parse`, `build`, `plan`, `explain`, `write`.
    PhaseEnd(&'static str),
}

static HOOK: OnceLock<fn(Event<'_>)> = OnceLock::new();

/// Installs the process's hook. Refused (the hook given back) when one is installed.
///
/// # Errors
/// The hook, when a hook is already installed.
pub fn set_hook(hook: fn(Event<'_>)) -> Result<(), fn(Event<'_>)> {
    HOOK.set(hook)
}

/// Reports `event` to the hook, if one is installed.
#[inline]
pub fn emit(event: Event<'_>) {
    if let Some(hook) = HOOK.get() {
        hook(event);
    }
}
