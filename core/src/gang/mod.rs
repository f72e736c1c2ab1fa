//! Gangs: placing a PodGroup (or standalone pods) all together or not at all, in one
//! topology domain when asked, ordered by a scoring policy; CompositePodGroups; why a
//! gang is pending; the capacity report; and recording a decision on the cluster.
//!
//! Layer: above claim allocation (every step of the search is one allocator call for
//! one pod on one node); the scheduler is its user above.
//!
//! | file | what it holds |
//! | --- | --- |
//! | `placer.rs` | `place_gang`: intake (shapes, shared and group claims), per-node caps from the index, domain pruning and order |
//! | `search.rs` | the depth-first, all-or-nothing search over pods and candidate nodes, with its scratch state and exact undo |
//! | `scoring.rs` | `ScoringPolicy` (BestFit, Spread, FragmentationAware) and `WorkloadMix` |
//! | `composite.rs` | `place_composite`: CompositePodGroups (KEP-6012), child by child with backtracking |
//! | `explain.rs` | `explain_gang`: the gang's status, per-shape reports, facts and the minimal blocking set |
//! | `capacity_report.rs` | `capacity_report`: per domain, how many copies of each shape the free capacity hosts |
//! | `apply.rs` | `apply_decision` / `revert_decision`: a decision recorded on the cluster, all or nothing |

pub(crate) mod apply;
pub(crate) mod capacity_report;
pub(crate) mod composite;
pub(crate) mod explain;
pub(crate) mod filter;
pub(crate) mod placer;
pub(crate) mod scoring;
mod search;
