//! `gangpack gen`: one generated scenario, written as Kubernetes manifests.
//!
//! The scenario is [`gangpack::testing::generate`]'s for the seed (one value of the
//! scenario strategy, drawn from a ChaCha RNG seeded with the seed's bytes: the same on
//! every machine). It is written with [`gangpack_k8s::output::scenario_manifests`] as a
//! `v1` `List` (what `kubectl get -o yaml` prints for several objects; `kubectl apply
//! -f` and `gangpack plan -f` both read it).
//!
//! Only with the `cli` feature (it pulls in proptest; the WebAssembly build does not
//! have it).

use gangpack::testing::{self as generators, Scenario, WorkloadKinds};

use crate::{EXIT_OK, Failure, Format, Outcome, input};

/// `gangpack gen --size`: how big the cluster and its workload are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Size {
    /// A few nodes in one or two racks, a handful of workload units.
    Small,
    /// About a dozen nodes in up to four racks.
    Medium,
    /// Dozens of nodes in up to eight racks.
    Large,
}

/// `gangpack gen --kind`: which workloads are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadKind {
    /// PodGroups only: gangs of identical workers, gangs of a leader and workers, and
    /// groups with the `basic` policy.
    Gangs,
    /// Pods without a PodGroup only.
    Pods,
    /// Both.
    Mixed,
}

/// The generators' configuration for a size and a workload kind.
fn config(size: Size, kind: WorkloadKind) -> generators::ScenarioConfig {
    let mut config = generators::ScenarioConfig::from(match size {
        Size::Small => generators::Size::Small,
        Size::Medium => generators::Size::Medium,
        Size::Large => generators::Size::Large,
    });
    config.kinds = match kind {
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
    // A scenario to hand to a scheduler has work in it (the strategy's minimum, where
    // shrinking ends, is an empty cluster).
    config.jobs.0 = config.jobs.0.max(1);
    config
}

/// The scenario `gangpack gen` writes for these flags: the same for the same seed,
/// size and kind, on every machine.
pub fn generated_scenario(seed: u64, size: Size, kind: WorkloadKind) -> Scenario {
    generators::generate(&config(size, kind), seed)
}

pub(crate) fn run(
    seed: u64,
    size: Size,
    kind: WorkloadKind,
    format: Format,
    _messages: &mut input::Messages,
) -> Result<Outcome, Failure> {
    let scenario = generated_scenario(seed, size, kind);
    let list = gangpack_k8s::output::list(gangpack_k8s::output::scenario_manifests(&scenario));
    let format = match format {
        Format::Json => Format::Json,
        Format::Table | Format::Yaml => Format::Yaml,
    };
    Ok(Outcome {
        stdout: crate::plan::print_list(&list, format)?,
        code: EXIT_OK,
    })
}
