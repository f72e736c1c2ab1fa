//! `gangpack gen`: one generated scenario, written as Kubernetes manifests.
//!
//! The scenario is one value of the scenario strategy (`generators::scenario`), drawn
//! deterministically for the seed: a proptest `TestRunner` over a ChaCha `TestRng`
//! seeded with the seed's 8 little-endian bytes (the other 24 zero), and the first
//! value tree's current value. It is written with
//! [`gangpack_k8s::output::scenario_manifests`] as a `v1` `List` (what `kubectl get
//! -o yaml` prints for several objects; `kubectl apply -f` and `gangpack plan -f`
//! both read it).
//!
//! Only with the `cli` feature (it pulls in proptest; the WebAssembly build does not
//! have it).

use gangpack::testing::Scenario;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::{EXIT_OK, Failure, Format, Outcome, input};

// The generators. TEMPORARY: the stand-in until `gangpack::testing`'s generators are
// merged; then this becomes `use gangpack::testing as generators;` (and the `cli`
// feature gains `gangpack/testing`), and `config` below is the one place to adapt.
mod standin;
use standin as generators;

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
    /// PodGroups with a gang policy (and their Workloads and pods) only.
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
    config.gangs = kind != WorkloadKind::Pods;
    config.single_pods = kind != WorkloadKind::Gangs;
    config
}

/// The 32-byte ChaCha seed of a `--seed`: its little-endian bytes, then zeros.
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut bytes = [0; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes
}

/// The scenario `gangpack gen` writes for these flags: the same for the same seed,
/// size and kind, on every machine.
pub fn generated_scenario(seed: u64, size: Size, kind: WorkloadKind) -> Result<Scenario, Failure> {
    let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed));
    let mut runner = TestRunner::new_with_rng(Config::default(), rng);
    let tree = generators::scenario(config(size, kind))
        .new_tree(&mut runner)
        .map_err(|reason| {
            Failure::Io(format!(
                "the generator gave no scenario for seed {seed}: {reason}"
            ))
        })?;
    Ok(tree.current())
}

pub(crate) fn run(
    seed: u64,
    size: Size,
    kind: WorkloadKind,
    format: Format,
    _messages: &mut input::Messages,
) -> Result<Outcome, Failure> {
    let scenario = generated_scenario(seed, size, kind)?;
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
