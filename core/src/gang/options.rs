//! The gang layer's public vocabulary (stage 0, used by every stage): the options of a
//! placement, its outcome, its errors and its search statistics.

use core::fmt;

use crate::alloc_prelude::*;
use crate::allocate::AllocationError;
use crate::gang::scoring::ScoringPolicy;
use crate::model::decision::PlacementDecision;

/// The default [`GangOptions::step_budget`].
pub const DEFAULT_STEP_BUDGET: u64 = 100_000;

/// Options of one gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct GangOptions {
    /// The most steps one gang search takes before it gives up with
    /// [`GangOutcome::BudgetExhausted`]. Default [`DEFAULT_STEP_BUDGET`] (100,000).
    ///
    /// A step is one pod tried on one candidate node (one claim allocator call for its
    /// claims there, jointly with the gang's pods already on it), or one revisit of a
    /// device choice other nodes see (the same binding tried again with one device
    /// fewer of a class it took, when a later pod finds too few left). Checks that answer before any
    /// search take none: pods too few for `minCount`, nodes and domains counting rules
    /// out, and the node-by-node bounds the search learns as it goes. Pods placed
    /// beyond `minCount` spend what is left, without making the outcome undecided.
    ///
    /// Running out means undecided, never "does not fit": the outcome is
    /// `BudgetExhausted`, [`Cluster::explain_gang`](crate::Cluster::explain_gang) names this budget and its value,
    /// and the [`Scheduler`](crate::Scheduler) keeps the unit pending (it retries next
    /// cycle). [`Cluster::place_composite`](crate::Cluster::place_composite) uses this budget for its own level too
    /// (each PodGroup placement attempt is one step there; each attempt gets the whole
    /// budget for its own search). Callers set it here; the `gangpack` command line
    /// with `--step-budget N`, the WebAssembly API with `stepBudget` in its options.
    #[cfg_attr(feature = "serde", serde(default = "default_step_budget"))]
    pub step_budget: u64,
    /// The step budget of each claim allocator call the search makes
    /// ([`AllocatorOptions::step_budget`](crate::AllocatorOptions::step_budget); default
    /// [`DEFAULT_ALLOCATOR_STEP_BUDGET`](crate::DEFAULT_ALLOCATOR_STEP_BUDGET),
    /// 1,000,000). One call that runs out ends the search with
    /// [`GangOutcome::BudgetExhausted`]: whether that node fits is unknown, so the
    /// gang's outcome is too. The command line sets it with `--allocator-step-budget N`,
    /// the WebAssembly API with `allocatorStepBudget`.
    #[cfg_attr(feature = "serde", serde(default = "default_allocator_step_budget"))]
    pub allocator_step_budget: u64,
    /// How to choose among feasible nodes and domains.
    pub policy: ScoringPolicy,
    /// Place only on nodes whose label `key` has value `value`, for every `(key, value)`
    /// given, as the topology constraints of enclosing CompositePodGroups ask of their
    /// children.
    pub within: Vec<(String, String)>,
    /// The `PodGroupPreemptionPolicy` feature gate of kube-scheduler (off by default in
    /// Kubernetes 1.37). Off: a PodGroup's pods must share one `preemptionPolicy`, and
    /// theirs decides whether the group may preempt; the PodGroup's own
    /// `spec.preemptionPolicy` is not read (the API server drops it without the gate).
    /// On: the PodGroup's `preemptionPolicy` (its field, else its PriorityClass's)
    /// decides, and every pod must have the same. A group breaking the rule fails with
    /// `SchedulerError` ([`check_group_members_gated`](crate::check_group_members_gated)).
    /// The command line sets it with `--feature-gates PodGroupPreemptionPolicy=true`,
    /// the WebAssembly API with `podGroupPreemptionPolicy`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub pod_group_preemption_policy: bool,
}

#[cfg(feature = "serde")]
fn default_step_budget() -> u64 {
    DEFAULT_STEP_BUDGET
}

#[cfg(feature = "serde")]
fn default_allocator_step_budget() -> u64 {
    crate::allocate::DEFAULT_ALLOCATOR_STEP_BUDGET
}

impl Default for GangOptions {
    fn default() -> GangOptions {
        GangOptions {
            step_budget: DEFAULT_STEP_BUDGET,
            allocator_step_budget: crate::allocate::DEFAULT_ALLOCATOR_STEP_BUDGET,
            policy: ScoringPolicy::BestFit,
            within: Vec::new(),
            pod_group_preemption_policy: false,
        }
    }
}

/// A step budget of a placement ([`GangOptions`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum StepBudget {
    /// [`GangOptions::step_budget`]: the gang search's steps (or a composite's
    /// placement attempts).
    Gang,
    /// [`GangOptions::allocator_step_budget`]: the steps of one claim allocator call.
    Allocator,
}

impl StepBudget {
    /// Its value in `options`.
    pub fn value(self, options: &GangOptions) -> u64 {
        match self {
            StepBudget::Gang => options.step_budget,
            StepBudget::Allocator => options.allocator_step_budget,
        }
    }

    /// Where callers set it: the Rust field, the command-line flag and the WebAssembly
    /// option, as one phrase (`GangOptions::step_budget, --step-budget, stepBudget`).
    pub fn settings(self) -> &'static str {
        match self {
            StepBudget::Gang => "GangOptions::step_budget, --step-budget, stepBudget",
            StepBudget::Allocator => {
                "GangOptions::allocator_step_budget, --allocator-step-budget, allocatorStepBudget"
            }
        }
    }
}

impl fmt::Display for StepBudget {
    /// `gang search` or `claim allocation`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StepBudget::Gang => "gang search",
            StepBudget::Allocator => "claim allocation",
        })
    }
}

/// What one placement's search did ([`Cluster::place_gang_with_stats`](crate::Cluster::place_gang_with_stats)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct SearchStats {
    /// Steps of the gang search ([`GangOptions::step_budget`] counts them): never more
    /// than the budget.
    pub steps: u64,
    /// Steps of every claim allocator call the search made, summed (each call stays
    /// within [`GangOptions::allocator_step_budget`]).
    pub allocator_steps: u64,
    /// The budget that ran out, when the outcome is
    /// [`GangOutcome::BudgetExhausted`].
    pub exhausted: Option<StepBudget>,
    /// The most of the required pods any attempt placed together (before a budget ran
    /// out, too).
    pub best: usize,
}

/// The outcome of a gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum GangOutcome {
    /// Where the pods go and what their claims get.
    Placed(PlacementDecision),
    /// No placement of the required pods exists. Exact below the step budget, but
    /// for picks of shareable devices and admin-access picks, which the search does not
    /// revisit (another choice of shared or admin-access devices is not tried).
    Unschedulable {
        /// Pending pods that must be placed together.
        required: usize,
        /// The most of them any attempt placed; when counting ruled out every domain
        /// before any search, the most that any domain's free capacity could hold.
        best: usize,
    },
    /// Fewer members exist (pending and running) than `minCount`: the group waits for
    /// more pods, as upstream's PreEnqueue holds it.
    WaitingForPods {
        /// Members that exist.
        present: usize,
        /// `minCount`.
        min_count: u32,
    },
    /// A step budget ran out first: undecided (a placement may exist). Which budget —
    /// [`GangOptions::step_budget`], or [`GangOptions::allocator_step_budget`] of one
    /// allocator call — is in [`SearchStats::exhausted`] and in the explanation.
    BudgetExhausted {
        /// Steps of the gang search taken (the budget, when it is the one that ran
        /// out).
        steps: u64,
    },
}

/// Invalid input for a gang placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum GangError {
    /// A pod or the group names a claim that is not among the claims given.
    MissingClaim {
        /// The pod (`namespace/name`) or group.
        owner: String,
        /// The claim (`namespace/name`).
        claim: String,
    },
    /// A claim comes from a ResourceClaimTemplate; instantiate it first.
    TemplateClaim {
        /// The pod or group.
        owner: String,
        /// The template name.
        template: String,
    },
    /// The claims of a pod cannot be prepared (invalid claim, missing class, CEL, more
    /// devices than the per-claim limit), or the allocator failed on a node with an
    /// error (upstream fails the pod with an error status, not Unschedulable).
    Allocation(AllocationError),
}

impl fmt::Display for GangError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GangError::MissingClaim { owner, claim } => {
                write!(f, "{owner}: ResourceClaim \"{claim}\" not found")
            }
            GangError::TemplateClaim { owner, template } => write!(
                f,
                "{owner}: claim template \"{template}\" must be instantiated before placement"
            ),
            GangError::Allocation(e) => write!(f, "{e}"),
        }
    }
}

impl core::error::Error for GangError {}

impl From<AllocationError> for GangError {
    fn from(e: AllocationError) -> GangError {
        GangError::Allocation(e)
    }
}
