//! Following a cluster through its watch streams: what `kubectl get KIND -A --watch
//! --output-watch-events -o json` prints (the engine of `gangpack watch`).
//!
//! Such a stream is JSON objects one after another (pretty-printed, not one per line),
//! each an event `{"type": "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR",
//! "object": {...}}`. Three steps read it:
//!
//! 1. [`Framer`] cuts the bytes into one text per object as they arrive, following
//!    strings and brackets only; where the stream cannot be cut any further (bytes
//!    that do not start an object, an object over the size limit, the end of the
//!    stream inside an object) it says so with the byte offset ([`FrameError`]).
//! 2. [`parse_event`] reads one text: JSON (a duplicate key is an error, as in every
//!    input), the event's type, and its object read as the loader reads a document
//!    ([`load_value`](crate::load::load_value): API versions converted, unknown fields
//!    warned) and converted on its own as a snapshot converts it, so that a malformed
//!    object fails at its event ([`EventError`]). The object's [`Source`] is the stream,
//!    with the event's number as `doc`.
//! 3. [`Objects`] applies the events, keyed by kind, namespace and name, and refuses
//!    those that do not fit what came before ([`Rejected`]), unchanged.
//!
//! The objects at any point are a dump like any other ([`Objects::loaded`], in the
//! order `kubectl get -A` lists them): a [`Snapshot`](crate::Snapshot) built from them
//! is what `gangpack plan` builds from a dump of the same objects.
//!
//! [`Source`]: crate::Source

mod event;
mod frame;
mod state;

pub use event::{Event, EventError, EventType, Status, check_object, parse_event};
pub use frame::{Frame, FrameError, Framer, Position};
pub use state::{Applied, Objects, Rejected};

#[cfg(test)]
mod tests;
