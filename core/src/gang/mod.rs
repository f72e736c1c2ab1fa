//! Gangs: placing a PodGroup (or standalone pods) all together or not at all, in one
//! topology domain when asked, ordered by a scoring policy; CompositePodGroups; why a
//! gang is pending; the capacity report; and recording a decision on the cluster.
//!
//! Layer: above claim allocation (every step of the search is one allocator call for
//! one pod on one node); the scheduler is its user above.
//!
//! The gang placement runs in stages, each file using only the stages before it
//! (`core/tests/layering.rs` checks it):
//!
//! | stage | file | what it holds |
//! | --- | --- | --- |
//! | 0 | `options.rs` | `GangOptions`, `GangOutcome`, `GangError`, `SearchStats`, `StepBudget` |
//! | 0 | `scoring.rs` | `ScoringPolicy` (BestFit, Spread, Stranding, FGD, GangAware, the baselines), its mix source and the ranker it builds; `WorkloadMix` (the capacity report's measure) |
//! | 1 | `intake.rs` | the gang: pending pods resolved and grouped into shapes, shared and group claims |
//! | 2 | `filter.rs` | the node filter: why a node cannot host a pod of a shape (one rejection, one fact) |
//! | 2 | `count_memo.rs` | a scheduling cycle's counted candidates, kept between its placements |
//! | 3 | `counts.rs` | per-node caps (the filter, scalars, devices by count), domains and their order |
//! | 3 | `ranking.rs` | the gang-aware reordering: whole domains of protected keys kept, the fewest lower domains |
//! | 4 | `search.rs` | the depth-first, all-or-nothing search over pods and candidate nodes, with exact undo |
//! | 5 | `placer.rs` | `place_gang`: the stages in order |
//! | 6 | `explain/` | `explain_gang`: facts as data and their wording, the per-node diagnosis, relaxing facts, the minimal blocking set |
//! | 7 | `composite.rs` | `place_composite`: CompositePodGroups (KEP-6012), child by child with backtracking |
//! | 7 | `capacity_report.rs` | `capacity_report`: per domain, how many copies of each shape the free capacity hosts |
//! | 0 | `apply.rs` | `apply_decision` / `revert_decision`: a decision recorded on the cluster, all or nothing |

pub(crate) mod apply;
pub(crate) mod capacity_report;
pub(crate) mod composite;
pub(crate) mod count_memo;
pub(crate) mod counts;
pub(crate) mod explain;
pub(crate) mod filter;
pub(crate) mod intake;
pub(crate) mod options;
pub(crate) mod placer;
pub(crate) mod ranking;
pub(crate) mod scoring;
mod search;
