//! Trace replay over gangpack's engine: the Alibaba GPU cluster trace (openb, the
//! workload of the FGD paper, Weng et al., USENIX ATC'23) scheduled one pod at a time
//! by the same `Scheduler`, allocator and placer the library ships, under the paper's
//! protocol ([`protocol`]), reported as its CSV contract, a table and an SVG plot
//! ([`report`]).
//!
//! [`gangs`] is the time-based replay: the trace's tasks arriving and leaving at their
//! times, mixed with generated multi-node training gangs, scheduled as PodGroups (with
//! or without reservation and backfill) or pod by pod.
//!
//! The trace's GPUs are shareable devices with 1000 milli-GPU of consumable capacity;
//! a task is a pod with one claim for its GPUs ([`cluster`]).

pub mod cluster;
pub mod gangs;
pub mod mix;
pub mod protocol;
pub mod report;
pub mod run;
pub mod trace;
