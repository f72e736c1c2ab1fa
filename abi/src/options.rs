//! The options of a request: scoring policies, step budgets and, with manifests, the
//! command line's global flags.

use gangpack::{GangOptions, MixSource, ObjectKind, ObjectRef, ScoringPolicy, ShapeMix};

use crate::error::{self, Error};

/// A step budget option: at least 1, `default` when left out; `field` names it in the
/// error.
pub fn step_budget(value: Option<u64>, default: u64, field: &str) -> Result<u64, Error> {
    match value {
        None => Ok(default),
        Some(0) => Err(Error::argument(
            field,
            "must be at least 1 (steps a search may take)",
        )),
        Some(n) => Ok(n),
    }
}

/// A scoring policy as the options name it, with its mix.
pub struct Scoring {
    /// The policy, its mix given when the options give one.
    pub policy: ScoringPolicy,
    /// A warning for a deprecated name (`FragmentationAware`).
    pub warning: Option<String>,
}

/// The policy `name` (`what`: its field, `options.policy`; default BestFit) with
/// `mix` (`mix_what`: its field, `options.workloadMix`) as its typical shapes. A mix is
/// refused when it is invalid (every problem named under `mix_what`) and with a policy
/// that scores against none (BestFit, Spread).
pub fn scoring(
    name: Option<&str>,
    what: &str,
    mix: Option<ShapeMix>,
    mix_what: &str,
) -> Result<Scoring, Error> {
    let policy = match name {
        None => GangOptions::default().policy,
        Some(n) => ScoringPolicy::parse(n)
            .filter(|p| !matches!(p, ScoringPolicy::Random(_) | ScoringPolicy::DotProduct))
            .ok_or_else(|| {
                Error::argument(
                    what,
                    format!(
                        "unknown policy {n:?} (expected {})",
                        or_list(&ScoringPolicy::NAMES)
                    ),
                )
            })?,
    };
    let warning = name.and_then(|n| deprecation(n, what));
    let policy = match mix {
        None => policy,
        Some(mix) => {
            if policy.mix_source().is_none() {
                return Err(Error::argument(
                    mix_what,
                    format!(
                        "{} scores against no workload mix (only Stranding, FGD and GangAware do)",
                        policy.name()
                    ),
                ));
            }
            validate_mix(&mix, mix_what)?;
            policy.with_mix(MixSource::Given(mix))
        }
    };
    Ok(Scoring { policy, warning })
}

/// The warning for policy name `name` at field `what` when the name is deprecated
/// (`FragmentationAware`, which now reads as FGD).
pub fn deprecation(name: &str, what: &str) -> Option<String> {
    ScoringPolicy::is_deprecated_name(name).then(|| {
        format!("{what}: {name:?} is deprecated; it now means FGD, the policy that replaced it")
    })
}

/// Checks a workload mix, every problem named under `what` (`what.shapes[0].count`).
pub fn validate_mix(mix: &ShapeMix, what: &str) -> Result<(), Error> {
    let object = ObjectRef::cluster(ObjectKind::PodGroup, "workload mix");
    mix.validate_at(&object, what)
        .map_err(|errs| error::invalid_argument(&errs))
}

/// `A, B, C or D`.
fn or_list(names: &[&str]) -> String {
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => (*last).to_owned(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(feature = "k8s")]
pub use manifests::{Now, RequestOptions, Resolved};

#[cfg(feature = "k8s")]
mod manifests {
    use gangpack::ShapeMix;
    use gangpack_cli::{Options, Policy, Style};
    use serde::Deserialize;

    use super::{Scoring, deprecation, scoring, step_budget};
    use crate::error::Error;

    /// The options every manifest request takes (the command line's global flags).
    #[derive(Clone, Default, Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    pub struct RequestOptions {
        /// The logical clock: RFC 3339 text or seconds since the Unix epoch.
        pub now: Option<Now>,
        /// `BestFit` (default), `Spread`, `Stranding`, `FGD` (any case, `-` and `_`
        /// ignored: `best-fit`); `FragmentationAware` is FGD, deprecated.
        pub policy: Option<String>,
        /// The typical shapes Stranding and FGD score against (default: the shapes of
        /// the pods in the manifests).
        pub workload_mix: Option<ShapeMix>,
        /// Skip invalid objects (warnings) instead of failing.
        #[serde(default)]
        pub skip_invalid: bool,
        /// Unknown fields are errors.
        #[serde(default)]
        pub strict: bool,
        /// ANSI colour codes in table text.
        #[serde(default)]
        pub color: bool,
        /// The demo's seed.
        pub seed: Option<u64>,
        /// `--step-budget`: the most steps one gang search takes.
        pub step_budget: Option<u64>,
        /// `--allocator-step-budget`: the most steps one claim allocator call takes.
        pub allocator_step_budget: Option<u64>,
        /// `--feature-gates PodGroupPreemptionPolicy=true` (default false).
        pub pod_group_preemption_policy: Option<bool>,
    }

    /// The clock of [`RequestOptions::now`].
    #[derive(Clone, Deserialize)]
    #[serde(untagged)]
    pub enum Now {
        /// RFC 3339 text.
        Text(String),
        /// Seconds since the Unix epoch.
        Seconds(i64),
    }

    /// [`RequestOptions::resolve`]'s answer.
    pub struct Resolved {
        /// The command line's options.
        pub options: Options,
        /// The policy asked for, its mix given if the options give one.
        pub scoring: Scoring,
    }

    impl RequestOptions {
        /// The library's options for a command; `what` names the argument in errors.
        pub fn options(&self, what: &str) -> Result<Options, Error> {
            Ok(self.resolve(what)?.options)
        }

        /// The warning a deprecated policy name earns (`FragmentationAware`), for the
        /// results of the commands (`cli` prints what the native command prints).
        pub fn deprecation(&self, what: &str) -> Option<String> {
            self.policy
                .as_deref()
                .and_then(|n| deprecation(n, &format!("{what}.policy")))
        }

        /// [`deprecation`](Self::deprecation) followed by `warnings`.
        pub fn warnings(&self, what: &str, warnings: Vec<String>) -> Vec<String> {
            self.deprecation(what).into_iter().chain(warnings).collect()
        }

        /// The library's options and the scoring policy they ask for: the command
        /// line's policy of that name, with the given mix, else the mix of the
        /// manifests' pods.
        pub fn resolve(&self, what: &str) -> Result<Resolved, Error> {
            let scoring = scoring(
                self.policy.as_deref(),
                &format!("{what}.policy"),
                self.workload_mix.clone(),
                &format!("{what}.workloadMix"),
            )?;
            let named = Policy::parse(scoring.policy.name()).ok_or_else(|| {
                Error::argument(
                    format!("{what}.policy"),
                    format!("{} is not a placement policy", scoring.policy.name()),
                )
            })?;
            let now = match &self.now {
                None => None,
                Some(Now::Seconds(s)) => Some(gangpack::Time(*s)),
                Some(Now::Text(t)) => Some(
                    gangpack_cli::parse_rfc3339_arg(t)
                        .map_err(|m| Error::argument(format!("{what}.now"), m))?,
                ),
            };
            let options = Options {
                policy: named,
                workload_mix: self.workload_mix.clone(),
                seed: self.seed.unwrap_or(0),
                skip_invalid: self.skip_invalid,
                strict: self.strict,
                now,
                step_budget: step_budget(
                    self.step_budget,
                    gangpack::DEFAULT_STEP_BUDGET,
                    &format!("{what}.stepBudget"),
                )?,
                allocator_step_budget: step_budget(
                    self.allocator_step_budget,
                    gangpack::DEFAULT_ALLOCATOR_STEP_BUDGET,
                    &format!("{what}.allocatorStepBudget"),
                )?,
                pod_group_preemption_policy: self.pod_group_preemption_policy.unwrap_or(false),
                ..Options::default()
            };
            Ok(Resolved { options, scoring })
        }

        /// The table style the options ask for.
        pub fn style(&self) -> Style {
            Style::new(self.color)
        }
    }
}
