//! An explanation as a whole: its shapes, facts and blocking set, rendered as the
//! derivation tree and as the one-line summary.

use core::fmt;

use super::facts::{Fact, GangStatus, Resolution};

use crate::alloc_prelude::*;
use crate::gang::options::{SearchStats, StepBudget};
use crate::model::decision::PlacementDecision;

/// One pod shape (interchangeable pods) of the gang.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ShapeReport {
    /// Its pending pods (`namespace/name`).
    pub pods: Vec<String>,
    /// Devices one pod takes at least.
    pub devices_per_pod: u64,
    /// Nodes that may host at least one of its pods.
    pub nodes: usize,
    /// Pods of this shape those nodes could host at most (counted per node).
    pub capacity: u64,
    /// The facts about its rejected nodes (indices into [`Explanation::facts`]).
    pub facts: Vec<usize>,
}

/// Why a gang is (not) placed.
///
/// Why a gang is pending: a structured explanation in the style of pubgrub's
/// derivation trees.
///
/// [`Cluster::explain_gang`](crate::Cluster::explain_gang) places the gang like [`Cluster::place_gang`](crate::Cluster::place_gang); when it does
/// not fit, it diagnoses every node for every pod shape (the first filter that rejects
/// it, as kube-scheduler reports per node; but capacity others hold — scalars and
/// devices — is reported in full, since freeing only part of it may not help) against
/// every claim a pod may have to allocate there (its own and the shared claims it
/// uses; node-local and network-attached devices alike),
/// and turns the rejections into **facts**:
/// leaf statements such as "12 devices on nodes n3, n7 carry
/// `gpu.example.com/ecc=fatal:NoSchedule`, not tolerated" or "rack r2 can host 7 of the
/// 8 pods". Each fact is classed as *resolvable* (capacity held by other workloads:
/// waiting or preemption may free it) or *unresolvable* (taints, selectors, cordons,
/// hardware that is too small, topology).
///
/// A node the index's counts admit (class bits, free, tolerated) is first tried with
/// the allocator for one pod of the shape; where even that fails, the node is diagnosed
/// like a rejected one. Per (sub)request, the census of the node (`allocate/census.rs`,
/// explanations only) follows its devices through the class, each of the request's own
/// selectors, its capacity demand and the shared counters (MIG-style partitions of one
/// device), counted on the hardware whatever others hold: the first stage that leaves
/// too few is a fact naming the request and its selector, capacity or counters, with
/// counts; the census is repeated with that stage lifted, so every stage that blocks
/// is a fact. Then taints and what others hold (devices, consumed counters) among the
/// survivors, and the claim's `matchAttribute` / `distinctAttribute` constraints over
/// them. A `firstAvailable` request none of whose subrequests can be served reports
/// each of them.
///
/// The **minimal blocking set** is the smallest set of facts whose removal lets the gang
/// fit: every fact that can be relaxed is undone on a scratch copy (tolerate the taint,
/// free the devices in use, uncordon the nodes, ...) one subset at a time, smallest
/// subsets first, and the placement is tried again. The outcome uses the vocabulary of
/// KEP-6012 and the PodGroup scheduling cycle: [`GangStatus::Scheduled`], `Wait`
/// (fewer pods exist than `minCount`), `Unschedulable` (freeing capacity — waiting or
/// preemption — would let it fit) and `UnschedulableAndUnresolvable` (it would not fit
/// even on a cluster where nothing else runs).
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct Explanation {
    /// The PodGroup (`namespace/name`), or `None` for standalone pods.
    pub group: Option<String>,
    /// Without a group, the pod explained (`namespace/name`) when it is one pod.
    pub pod: Option<String>,
    /// The outcome.
    pub status: GangStatus,
    /// Pending pods that had to be placed together.
    pub required: usize,
    /// The most of them any attempt placed.
    pub best: usize,
    /// Members already running.
    pub running: usize,
    /// The placement, when scheduled.
    pub decision: Option<PlacementDecision>,
    /// The pod shapes, with their facts.
    pub shapes: Vec<ShapeReport>,
    /// Every fact found.
    pub facts: Vec<Fact>,
    /// The minimal blocking set (indices into `facts`): removing these lets the gang fit.
    pub blocking: Vec<usize>,
    /// Whether `blocking` was proven minimal (every smaller set was tried).
    pub minimal: bool,
    /// Whether the search ran out of steps: the outcome is undecided (a placement may
    /// exist), and [`budget`](Self::budget) says which budget.
    pub budget_exhausted: bool,
    /// The budget that ran out, when one did.
    pub budget: Option<BudgetExhaustion>,
    /// What the placement's search did (the relaxation trials behind the blocking set
    /// are not counted).
    pub search: SearchStats,
}

/// A step budget that ran out before a placement was decided, as an explanation
/// reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct BudgetExhaustion {
    /// Which budget.
    pub budget: StepBudget,
    /// Its value: the steps it allows (per allocator call, for
    /// [`StepBudget::Allocator`]).
    pub limit: u64,
}

impl fmt::Display for BudgetExhaustion {
    /// Which budget, its value and where to raise it, as in `the gang search's step
    /// budget (100000 steps) ran out before an answer was known: raise it to search
    /// further (GangOptions::step_budget, --step-budget, stepBudget)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (what, per) = match self.budget {
            StepBudget::Gang => ("the gang search's", ""),
            StepBudget::Allocator => ("a claim allocation's", " per call"),
        };
        write!(
            f,
            "{what} step budget ({} step{}{per}) ran out before an answer was known: raise it \
             to search further ({})",
            self.limit,
            if self.limit == 1 { "" } else { "s" },
            self.budget.settings()
        )
    }
}

impl Explanation {
    /// What is explained: `PodGroup ns/name`, `Pod ns/name`, or `pods`.
    pub(super) fn subject(&self) -> String {
        match (&self.group, &self.pod) {
            (Some(g), _) => format!("PodGroup {g}"),
            (None, Some(p)) => format!("Pod {p}"),
            (None, None) => String::from("pods"),
        }
    }

    /// `B of R pods fit` (`B of 1 pod fits`).
    pub(super) fn fit_count(&self) -> String {
        if self.required == 1 {
            format!("{} of 1 pod fits", self.best)
        } else {
            format!("{} of {} pods fit", self.best, self.required)
        }
    }

    /// The one-line summary (what `PodScheduled=False` carries as its message).
    pub fn summary(&self) -> String {
        let what = self.subject();
        match self.status {
            GangStatus::Scheduled => format!("{what}: fits now"),
            GangStatus::Wait => match self.facts.first() {
                Some(f) => format!("{what}: waiting: {f}"),
                None => format!("{what}: waiting"),
            },
            _ if self.budget.is_some() || self.budget_exhausted => match &self.budget {
                Some(b) => format!("{what}: undecided: {b}"),
                None => format!("{what}: undecided: a step budget ran out"),
            },
            _ => {
                let mut s = format!("{what}: {}", self.fit_count());
                for (i, &b) in self.blocking.iter().enumerate() {
                    s.push_str(if i == 0 { ": " } else { "; " });
                    s.push_str(&self.facts[b].to_string());
                }
                s
            }
        }
    }
}

impl fmt::Display for Explanation {
    /// The derivation tree as text (see [`Explanation`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.subject();
        match self.status {
            GangStatus::Scheduled => {
                let n = self.decision.as_ref().map_or(0, |d| d.bindings.len());
                let s = if n == 1 { "" } else { "s" };
                // What-if wording: explaining places nothing.
                return writeln!(f, "{what}: fits now ({n} pod{s} placed together)");
            }
            GangStatus::Wait => {
                writeln!(f, "{what}: Wait")?;
                for fact in &self.facts {
                    writeln!(f, "└─ {fact}")?;
                }
                return Ok(());
            }
            GangStatus::Undecided => {
                writeln!(f, "{what}: Undecided (a step budget ran out)")?;
            }
            GangStatus::Unschedulable => {
                writeln!(
                    f,
                    "{what}: Unschedulable (capacity other workloads hold is in the way)"
                )?;
            }
            GangStatus::UnschedulableAndUnresolvable => {
                writeln!(f, "{what}: UnschedulableAndUnresolvable")?;
            }
        }
        if self.budget_exhausted {
            writeln!(
                f,
                "├─ needs {} pending pod{} placed together ({} running); {} placed together \
                 before the budget ran out",
                self.required,
                if self.required == 1 { "" } else { "s" },
                self.running,
                self.best
            )?;
        } else {
            writeln!(
                f,
                "├─ needs {} pending pod{} placed together ({} running); at most {} fit",
                self.required,
                if self.required == 1 { "" } else { "s" },
                self.running,
                self.best
            )?;
        }
        if let Some(b) = &self.budget {
            writeln!(f, "├─ undecided: {b}; a placement may still exist")?;
        } else if self.budget_exhausted {
            writeln!(
                f,
                "├─ undecided: a step budget ran out; a placement may still exist"
            )?;
        }
        let shown: Vec<usize> = (0..self.facts.len())
            .filter(|i| !self.shapes.iter().any(|s| s.facts.contains(i)))
            .collect();
        for (si, s) in self.shapes.iter().enumerate() {
            let names = match s.pods.as_slice() {
                [one] => one.clone(),
                [first, .., last] => format!("{first} … {last}"),
                [] => String::new(),
            };
            writeln!(
                f,
                "├─ shape {}: {} pod{} ({names}), {} device{} each: {} node{} can host {}",
                si + 1,
                s.pods.len(),
                if s.pods.len() == 1 { "" } else { "s" },
                s.devices_per_pod,
                if s.devices_per_pod == 1 { "" } else { "s" },
                s.nodes,
                if s.nodes == 1 { "" } else { "s" },
                s.capacity
            )?;
            for (j, &fi) in s.facts.iter().enumerate() {
                let branch = if j + 1 == s.facts.len() {
                    "└─"
                } else {
                    "├─"
                };
                writeln!(f, "│  {branch} [{}] {}", fi + 1, self.facts[fi])?;
            }
        }
        for fi in shown {
            writeln!(f, "├─ [{}] {}", fi + 1, self.facts[fi])?;
        }
        if self.blocking.is_empty() {
            if self.budget_exhausted {
                return writeln!(f, "└─ no blocking set sought: the search is undecided");
            }
            return writeln!(f, "└─ no blocking set found");
        }
        let ids: Vec<String> = self
            .blocking
            .iter()
            .map(|b| format!("[{}]", b + 1))
            .collect();
        let resolvable = self
            .blocking
            .iter()
            .all(|&b| self.facts[b].resolution() == Resolution::WaitOrPreempt);
        writeln!(
            f,
            "└─ {} blocking set: {} ({})",
            if self.minimal { "minimal" } else { "a" },
            ids.join(" "),
            if resolvable {
                "capacity others hold"
            } else {
                "unresolvable"
            }
        )
    }
}
