//! Why a gang is pending (see [`Explanation`], whose docs say how it is built).

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::gang::options::{GangError, GangOptions, GangOutcome};
use crate::model::claim::ResourceClaim;
use crate::model::workload::{Pod, PodGroup};

mod diagnose;
mod facts;
mod relax;
mod render;
mod table;

pub use facts::{Fact, GangStatus, Resolution};
pub use render::{BudgetExhaustion, Explanation, ShapeReport};
pub use table::{FilterStage, NodeRow, NodeTable, natural_cmp};

use diagnose::own_claims;
use relax::{Relaxation, choose};

/// Most subsets of facts tried for the minimal blocking set.
const MAX_TRIALS: usize = 64;

impl Cluster {
    /// Places the gang like [`place_gang`](Self::place_gang) and explains the outcome:
    /// for a gang that does not fit, the facts, the minimal blocking set and the status
    /// (see [`Explanation`]). Does not change the cluster.
    pub fn explain_gang(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<Explanation, GangError> {
        let (outcome, search) = self.place_gang_with_stats(group, pods, claims, options)?;
        let mut gang = self.gang_counted(group, pods, claims, options)?;
        let mut ex = Explanation {
            group: group.map(|g| format!("{}/{}", g.namespace, g.name)),
            pod: match pods {
                [p] if group.is_none() => Some(format!("{}/{}", p.namespace, p.name)),
                _ => None,
            },
            status: GangStatus::Unschedulable,
            required: gang.required,
            best: 0,
            running: gang.running.len(),
            decision: None,
            shapes: Vec::new(),
            facts: Vec::new(),
            blocking: Vec::new(),
            minimal: false,
            budget_exhausted: false,
            budget: None,
            search,
        };
        match outcome {
            GangOutcome::Placed(d) => {
                ex.status = GangStatus::Scheduled;
                ex.best = d.bindings.len();
                ex.decision = Some(d);
                return Ok(ex);
            }
            GangOutcome::WaitingForPods { present, min_count } => {
                ex.status = GangStatus::Wait;
                ex.facts.push(Fact::NotEnoughPods { present, min_count });
                ex.blocking.push(0);
                ex.minimal = true;
                return Ok(ex);
            }
            GangOutcome::Unschedulable { best, required } => {
                // Without a gang, `required` is the one pod that would make progress.
                ex.best = best;
                ex.required = required;
            }
            GangOutcome::BudgetExhausted { .. } => {
                ex.best = search.best;
                ex.budget_exhausted = true;
                ex.budget = search.exhausted.map(|budget| BudgetExhaustion {
                    budget,
                    limit: budget.value(options),
                });
            }
        }
        // What the unit holds itself is never "other claims", nor freed by a relaxation.
        let own_claims = own_claims(&gang, claims);
        gang.own = self.devices_of(claims, &own_claims);
        // Nodes the index's counts admit but where the allocator cannot serve one pod
        // (its own selectors, constraints, capacity, counters) are diagnosed as such.
        self.refine_caps(&mut gang);
        self.diagnose(&gang, options, &mut ex);
        if ex.budget_exhausted {
            // Undecided: the facts stand, but which of them block is not known, and
            // every relaxation trial would search again (up to the budget each).
            ex.status = GangStatus::Undecided;
            return Ok(ex);
        }
        // Which facts, removed, let the gang fit.
        let trial_options = GangOptions {
            step_budget: (options.step_budget / 4).max(1_000),
            ..options.clone()
        };
        let relaxable: Vec<usize> = (0..ex.facts.len())
            .filter(|&i| ex.facts[i].relaxation().is_some())
            .collect();
        let fits = |set: &[usize]| -> bool {
            let relax: Vec<Relaxation> = set
                .iter()
                .filter_map(|&i| ex.facts[i].relaxation())
                .collect();
            self.fits_relaxed(group, pods, claims, &trial_options, &relax, &own_claims)
        };
        let resolvable: Vec<usize> = relaxable
            .iter()
            .copied()
            .filter(|&i| ex.facts[i].resolution() == Resolution::WaitOrPreempt)
            .collect();
        ex.status = if !resolvable.is_empty() && fits(&resolvable) {
            GangStatus::Unschedulable
        } else {
            GangStatus::UnschedulableAndUnresolvable
        };
        // Smallest subsets first; at equal size, fewer unresolvable facts first.
        let mut trials = 0;
        'sizes: for size in 1..=relaxable.len().min(3) {
            let mut subsets = Vec::new();
            choose(&relaxable, size, &mut Vec::new(), &mut subsets);
            subsets.sort_by_key(|s: &Vec<usize>| {
                s.iter()
                    .filter(|&&i| ex.facts[i].resolution() == Resolution::Unresolvable)
                    .count()
            });
            for s in subsets {
                if trials == MAX_TRIALS {
                    break 'sizes;
                }
                trials += 1;
                if fits(&s) {
                    ex.blocking = s;
                    ex.minimal = true;
                    break 'sizes;
                }
            }
        }
        if ex.blocking.is_empty() {
            let hard: Vec<usize> = (0..ex.facts.len())
                .filter(|i| !relaxable.contains(i))
                .collect();
            if relaxable.len() > 3 && fits(&relaxable) {
                ex.blocking = relaxable;
            } else if hard.is_empty() {
                // Nothing rejects enough nodes on its own: the pods crowd each other out.
                let mut nodes: Vec<String> = gang
                    .shapes
                    .iter()
                    .flat_map(|s| &s.candidates)
                    .filter(|c| c.cap > 0)
                    .filter_map(|c| self.node_by_id(c.node).map(|n| n.name.clone()))
                    .collect();
                let mut hosts = ex.best;
                if nodes.is_empty() && !relaxable.is_empty() {
                    // No node hosts a pod now, and lifting every fact that stops them
                    // still leaves too few: say how few, on those nodes.
                    nodes = relaxable
                        .iter()
                        .flat_map(|&i| ex.facts[i].nodes().iter().cloned())
                        .collect();
                    let relax: Vec<Relaxation> = relaxable
                        .iter()
                        .filter_map(|&i| ex.facts[i].relaxation())
                        .collect();
                    if let Some(GangOutcome::Unschedulable { best, .. }) =
                        self.place_relaxed(group, pods, claims, &trial_options, &relax, &own_claims)
                    {
                        hosts = best;
                    }
                }
                nodes.sort_by(|a, b| table::natural_cmp(a, b));
                nodes.dedup();
                ex.facts.push(Fact::NotEnoughRoom {
                    nodes,
                    needed: ex.required,
                    hosts,
                });
                ex.blocking = vec![ex.facts.len() - 1];
                ex.minimal = true;
            } else {
                // Nothing the scheduler can relax suffices: the hard facts block.
                ex.minimal = hard.len() == 1;
                ex.blocking = hard;
            }
        }
        Ok(ex)
    }
}
