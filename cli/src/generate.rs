//! `gangpack gen`: one generated scenario, written as Kubernetes manifests, or as the
//! watch events of a cluster that gets there and goes on (`--events`, see
//! [`events`]).
//!
//! The scenario is [`gangpack::testing::generate`]'s for the seed (one value of the
//! scenario strategy, drawn from a ChaCha RNG seeded with the seed's bytes: the same on
//! every machine), with the features `--features` leaves on
//! ([`gangpack::testing::Features`]; all of them by default, which draws exactly the
//! scenarios `gen` drew before there were switches). It is written with
//! [`gangpack_k8s::output::scenario_manifests`] as a `v1` `List` (what `kubectl get -o
//! yaml` prints for several objects; `kubectl apply -f` and `gangpack plan -f` both
//! read it).
//!
//! Only with the `gen` feature (it pulls in proptest; `cli` turns it on, and the
//! WebAssembly package's `gen` does).

mod events;

use gangpack::testing::{self as generators, Features, Scenario, WorkloadKinds};

use crate::{EXIT_OK, Failure, Format, Outcome, input};

/// `gangpack gen --size`: how big the cluster and its workload are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Size {
    /// A few nodes in one or two racks, a handful of workload units.
    Small,
    /// About a dozen nodes in up to four racks.
    Medium,
    /// Dozens of nodes in up to eight racks.
    Large,
}

/// `gangpack gen --kind`: which workloads are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum WorkloadKind {
    /// PodGroups only: gangs of identical workers, gangs of a leader and workers, and
    /// groups with the `basic` policy.
    Gangs,
    /// Pods without a PodGroup only.
    Pods,
    /// Both.
    Mixed,
}

/// What `gangpack gen` draws (without `--fleet`): the same spec gives the same
/// scenario, and the same bytes, on every machine.
///
/// ```
/// use gangpack::testing::{Feature, Features};
/// use gangpack_cli::{GenSpec, Size, WorkloadKind};
///
/// // gangpack gen --seed 3 --features all,-sharing,-partitioning
/// let spec = GenSpec {
///     seed: 3,
///     features: "all,-sharing,-partitioning".parse().unwrap(),
///     ..GenSpec::default()
/// };
/// assert_eq!(spec.features, Features::ALL.without(Feature::Sharing).without(Feature::Partitioning));
/// let scenario = spec.scenario();
/// assert!(scenario.slices.iter().all(|s| s.shared_counters.is_empty()));
/// // gangpack gen --seed 3 --features ... --events: watch events, ADDED first.
/// let events = spec.events();
/// assert!(events.starts_with("{\n    \"type\": \"ADDED\",\n    \"object\": {"));
/// assert_eq!(spec.kind, WorkloadKind::Mixed);
/// assert_eq!(spec.size, Size::Small);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GenSpec {
    /// The global `--seed`.
    pub seed: u64,
    /// `--size`.
    pub size: Size,
    /// `--kind`.
    pub kind: WorkloadKind,
    /// `--features`.
    pub features: Features,
}

impl Default for GenSpec {
    /// `gangpack gen` without flags: seed 0, small, mixed, every feature.
    fn default() -> GenSpec {
        GenSpec {
            seed: 0,
            size: Size::Small,
            kind: WorkloadKind::Mixed,
            features: Features::ALL,
        }
    }
}

impl GenSpec {
    /// The generators' configuration: the size's preset, the kinds, the features, and
    /// at least one job.
    pub fn config(&self) -> generators::ScenarioConfig {
        let mut config = generators::ScenarioConfig::from(match self.size {
            Size::Small => generators::Size::Small,
            Size::Medium => generators::Size::Medium,
            Size::Large => generators::Size::Large,
        });
        config.kinds = match self.kind {
            WorkloadKind::Gangs => WorkloadKinds {
                single_pods: false,
                ..WorkloadKinds::ALL
            },
            WorkloadKind::Pods => WorkloadKinds {
                gangs: false,
                leader_workers: false,
                basic_groups: false,
                single_pods: true,
            },
            WorkloadKind::Mixed => WorkloadKinds::ALL,
        };
        config.features = self.features;
        // A scenario to hand to a scheduler has work in it (the strategy's minimum,
        // where shrinking ends, is an empty cluster).
        config.jobs.0 = config.jobs.0.max(1);
        config
    }

    /// The scenario `gangpack gen` writes.
    pub fn scenario(&self) -> Scenario {
        generators::generate(&self.config(), self.seed)
    }

    /// What `gangpack gen --events` writes: the scenario as a stream of watch events,
    /// as `kubectl get --watch --output-watch-events -o json` prints them and
    /// `gangpack watch -f` reads them, with taints, removals and clock steps along the
    /// way (see `cli/README.md`).
    pub fn events(&self) -> String {
        events::stream(self)
    }
}

/// The scenario `gangpack gen` writes for these flags, every feature on: the same for
/// the same seed, size and kind, on every machine ([`GenSpec::scenario`]).
pub fn generated_scenario(seed: u64, size: Size, kind: WorkloadKind) -> Scenario {
    GenSpec {
        seed,
        size,
        kind,
        features: Features::ALL,
    }
    .scenario()
}

/// The `kind: List` `gangpack gen` prints for `spec` (as YAML or JSON).
pub fn generated_list(spec: &GenSpec) -> serde_json::Value {
    gangpack_k8s::output::list(gangpack_k8s::output::scenario_manifests(&spec.scenario()))
}

pub(crate) fn run(
    spec: &GenSpec,
    format: Format,
    _messages: &mut input::Messages,
) -> Result<Outcome, Failure> {
    let list = generated_list(spec);
    let format = match format {
        Format::Json => Format::Json,
        Format::Table | Format::Yaml => Format::Yaml,
    };
    Ok(Outcome {
        stdout: crate::plan::print_list(&list, format)?,
        code: EXIT_OK,
    })
}

pub(crate) fn run_events(spec: &GenSpec) -> Outcome {
    Outcome {
        stdout: spec.events(),
        code: EXIT_OK,
    }
}
