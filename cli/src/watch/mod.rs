//! `gangpack watch`: follow a cluster through kubectl's watch streams, and say after
//! each scheduling cycle what changed.
//!
//! # Input
//!
//! Each `-f` source is what `kubectl get KIND -A --watch --output-watch-events -o
//! json` prints: JSON watch events one after another (`{"type": "ADDED" | "MODIFIED" |
//! "DELETED" | "BOOKMARK" | "ERROR", "object": {...}}`), one stream per kind (kubectl
//! watches one kind at a time). A source is a regular file (a recorded stream), a FIFO
//! or pipe (`<(kubectl ...)`), or `-` for stdin. `--initial PATH` (repeatable) is a
//! starting dump read as `plan` reads its input (files, directories, YAML or JSON,
//! Lists); its objects are the state before the first event, and a stream that lists
//! them again (`kubectl get --watch` without `--watch-only` starts with an `ADDED` of
//! every object) replaces them.
//!
//! # Order
//!
//! The starting dump first; then the regular files (and texts), each read whole, one
//! after another in the order given; then the live sources (FIFOs, pipes, stdin)
//! together, their events applied as they arrive. So a run on regular files is
//! reproducible: same files, same flags, same bytes out.
//!
//! # Cycles
//!
//! A cycle runs when the input has been quiet for `--quiet-ms` (live sources only; 0
//! turns it off), after every `--every N` events applied, and at the end of the input
//! (every source ended), whenever events were applied since the previous cycle. Each
//! cycle builds from the current objects (in the order `kubectl get -A` lists them)
//! the snapshot `gangpack plan` builds from a dump of the same objects, and runs the
//! same plan: the `NoExecute` evictions due, then one scheduling cycle. gangpack only
//! observes: nothing is written to the cluster, and the next cycle starts again from
//! the objects, so what the cluster's own scheduler and controllers do arrives as
//! events. Reading every event and running one cycle at the end gives exactly what
//! `gangpack plan` gives on the final objects (a test checks it over shuffled event
//! orders).
//!
//! # Output
//!
//! Per cycle, a header `cycle N after E events (TRIGGER): C changes; P pods running, U
//! units pending` (`TRIGGER`: `quiet`, `every N events`, `end of input`, `watch
//! ended`), then one line per change since the previous cycle, in this order:
//!
//! | change | meaning |
//! | --- | --- |
//! | `bound` | a unit the previous cycles saw pending is running: the cluster bound it (`as planned` when gangpack had placed it on those nodes) |
//! | `gone` | a unit the previous cycles saw pending has no pod pending or running any more |
//! | `evicted` | a running pod's `NoExecute` eviction is due (the eviction step of `plan`): `(due TIME, REASON): WHY` |
//! | `due` | a running pod's `NoExecute` eviction is scheduled for later |
//! | `placed` | the cycle places a unit: its pods, nodes and devices |
//! | `preempted` | the cycle places a unit by preempting lower-priority work (the victims) |
//! | `pending` | a unit is newly pending, or its reason changed: the verdict line (`Scheduler::verdict`) |
//! | `invalid`, `failed` | the cycle refuses a unit: the error |
//! | `finding` | `--audit`: a rule of `gangpack check` the cluster's state newly breaks |
//! | `cleared` | `--audit`: a finding no longer holds |
//!
//! A unit is printed again only when its result changes (other nodes, another reason).
//! With `-o json`, each cycle is one JSON object on one line instead.
//!
//! # Bad streams
//!
//! Every problem names the source, the event (`FILE event N`, the stream's N-th
//! JSON object, with its byte offset and line where the object itself could not be
//! read) and the object (`Kind "namespace/name"`); the event it is about changes
//! nothing. A warning means the objects still match the cluster; an error means they
//! may not (exit 2 at the end, the watch goes on):
//!
//! | problem | level | then |
//! | --- | --- | --- |
//! | `BOOKMARK` | none | ignored |
//! | an object of a kind gangpack does not read | warning | skipped |
//! | `DELETED` of an object never added | warning | nothing to delete |
//! | `ADDED` of an object already added (no `DELETED` between) | error | kept as it was |
//! | `MODIFIED` of an object never added | error | not applied |
//! | a malformed or invalid object (a field of the wrong type, a bad value, no name, an unserved `apiVersion`) | error (warning with `--skip-invalid`) | not applied; the object stays as it was |
//! | JSON that is not a watch event, an unknown `type`, a JSON syntax error inside one object | error | not applied; the stream goes on after it |
//! | bytes between objects that cannot start one; an object over `--max-input-bytes` | error | the source stops there |
//! | the stream ends inside an object (a killed kubectl) | error, with the byte offset | the source ends; what was applied stays |
//! | a source that cannot be read | I/O error (exit 1) | the source ends |
//! | an `ERROR` event (`410 Gone`: the watch expired) | error (exit 3) | every source stops; a last cycle runs on the objects so far |
//!
//! Objects that depend on others not there yet (a pod bound to a node whose `ADDED`
//! comes later in another stream) are left out of that cycle with a warning, as
//! `--skip-invalid` leaves them out of a plan, and come back once what they need is
//! there.

mod changes;
mod engine;
mod messages;
#[cfg(not(target_arch = "wasm32"))]
mod sources;

pub use changes::Change;
pub use engine::{Cycle, Flow, Trigger, Watch};
pub use messages::Message;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use sources::watch;

/// Exit status of `watch`: the input ended with an `ERROR` event (410 Gone: the watch
/// expired; list again and restart).
pub const EXIT_WATCH_ENDED: u8 = 3;

/// What `gangpack watch` is asked, besides the global flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchOptions {
    /// `--quiet-ms`: run a cycle once the live sources have been quiet this long
    /// (milliseconds; 0: never on quiet).
    pub quiet_ms: u64,
    /// `--every N`: run a cycle after every N events applied.
    pub every: Option<usize>,
    /// `--audit`: judge the cluster's own decisions with `gangpack check`'s rules.
    pub audit: bool,
    /// `-o json`: one JSON object per cycle, on one line.
    pub json: bool,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            quiet_ms: 200,
            every: None,
            audit: false,
            json: false,
        }
    }
}

/// One `-f` source of `gangpack watch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WatchSource {
    /// A path: a regular file is read whole in turn; anything else (a FIFO, a pipe,
    /// `/dev/fd/N`) live; `-` is stdin, live.
    Path(String),
    /// A stream already read, named for messages: read whole in turn, as a file.
    Text {
        /// The name messages give it.
        name: String,
        /// The events.
        text: String,
    },
}

impl WatchSource {
    /// The name messages give the source (`<stdin>` for `-`).
    pub fn name(&self) -> &str {
        match self {
            WatchSource::Path(p) if p == "-" => gangpack_k8s::load::STDIN_NAME,
            WatchSource::Path(p) => p,
            WatchSource::Text { name, .. } => name,
        }
    }
}

/// Where `gangpack watch` writes as it goes: each cycle's output, and each message
/// as it is found.
pub trait WatchSink {
    /// One cycle's output (whole lines). An error stops the watch (a closed pipe
    /// quietly: see [`std::io::ErrorKind::BrokenPipe`]).
    fn output(&mut self, text: &str) -> std::io::Result<()>;
    /// One message: `warning: ...` or `error: ...` on stderr.
    fn message(&mut self, message: &Message);
}

/// A [`WatchSink`] that keeps everything, for tests and callers that want the run
/// as data.
#[derive(Clone, Debug, Default)]
pub struct Collected {
    /// Every cycle's output, concatenated.
    pub stdout: String,
    /// Every message, in order.
    pub messages: Vec<Message>,
}

impl WatchSink for Collected {
    fn output(&mut self, text: &str) -> std::io::Result<()> {
        self.stdout.push_str(text);
        Ok(())
    }

    fn message(&mut self, message: &Message) {
        self.messages.push(message.clone());
    }
}
