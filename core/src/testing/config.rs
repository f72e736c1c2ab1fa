//! The knobs of the generators: [`ScenarioConfig`] (sizes, densities, what to
//! generate: the [`Features`] and the [`WorkloadKinds`]) and its presets by [`Size`].

use core::fmt;
use core::str::FromStr;

use super::features::Features;
use crate::alloc_prelude::*;

/// A preset size, as `gangpack gen --size small|medium|large` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Size {
    /// A handful of nodes and workloads: fast properties, readable counterexamples.
    #[default]
    Small,
    /// Tens of nodes in a few racks and blocks.
    Medium,
    /// Over a hundred nodes of eight GPUs and dozens of workloads.
    Large,
}

impl Size {
    /// Every size, smallest first.
    pub const ALL: [Size; 3] = [Size::Small, Size::Medium, Size::Large];

    /// The lowercase name (`small`, `medium`, `large`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Size::Small => "small",
            Size::Medium => "medium",
            Size::Large => "large",
        }
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A size name that is not `small`, `medium` or `large`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownSize(pub String);

impl fmt::Display for UnknownSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown size {:?}: expected small, medium or large",
            self.0
        )
    }
}

impl core::error::Error for UnknownSize {}

impl FromStr for Size {
    type Err = UnknownSize;

    fn from_str(s: &str) -> Result<Size, UnknownSize> {
        Size::ALL
            .into_iter()
            .find(|z| z.as_str() == s)
            .ok_or_else(|| UnknownSize(s.into()))
    }
}

/// Which workloads to generate (each on or off; at least one should be on, else every
/// job is a single pod). Leader + workers groups also need
/// [`Features::composite_groups`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(clippy::struct_excessive_bools)] // independent switches, by design
pub struct WorkloadKinds {
    /// Gang PodGroups of identical workers (`gang: {minCount}`).
    pub gangs: bool,
    /// Gang PodGroups of one leader without GPUs and GPU workers (only with
    /// [`Features::composite_groups`] on).
    pub leader_workers: bool,
    /// PodGroups with the `basic` policy.
    pub basic_groups: bool,
    /// Pods without a PodGroup.
    pub single_pods: bool,
}

impl WorkloadKinds {
    /// Every kind.
    pub const ALL: WorkloadKinds = WorkloadKinds {
        gangs: true,
        leader_workers: true,
        basic_groups: true,
        single_pods: true,
    };
}

/// The knobs of [`scenario`](super::scenario) and the finer strategies: how big the
/// cluster is, how dense, how much already runs and what kinds of objects appear.
///
/// Ranges are inclusive `(min, max)` pairs; the generators shrink towards the minimum.
/// Start from a preset ([`small`](Self::small), [`medium`](Self::medium),
/// [`large`](Self::large), or [`for_size`](Self::for_size)) and change fields:
///
/// ```
/// use gangpack::testing::{Feature, Features, ScenarioConfig};
///
/// let config = ScenarioConfig {
///     taint_rate: 0.3,
///     features: Features::ALL.without(Feature::Sharing),
///     ..ScenarioConfig::small()
/// };
/// assert_eq!(config.nodes, (1, 6));
/// // For a scheduler without any of the features, then with topology only:
/// let plain = ScenarioConfig::small().plain();
/// assert_eq!(plain.features, Features::NONE);
/// let aimed = ScenarioConfig { features: "topology".parse().unwrap(), ..plain };
/// assert!(aimed.features.topology && !aimed.features.node_taints);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioConfig {
    /// Number of nodes.
    pub nodes: (usize, usize),
    /// Nodes per rack (the rack label's domain); at least 1.
    pub nodes_per_rack: usize,
    /// Racks per block (the block label's domain); at least 1.
    pub racks_per_block: usize,
    /// GPUs per node (whole GPUs; a partitioned GPU adds two halves).
    pub gpus_per_node: (u8, u8),
    /// Number of jobs (a PodGroup with its pods, or a single pod).
    pub jobs: (usize, usize),
    /// Pods per PodGroup (workers, for leader + workers).
    pub pods_per_group: (u8, u8),
    /// GPUs a pod asks for (0: a CPU-only pod).
    pub gpus_per_pod: (u8, u8),
    /// Fraction of jobs (0.0 to 1.0) placed by gangpack's own scheduler before the
    /// scenario is handed over: they are running (bound pods, allocated claims).
    pub running: f64,
    /// Probability (0.0 to 1.0) of a node taint (with
    /// [`node_taints`](Features::node_taints)), of a device taint per node and of each
    /// DeviceTaintRule slot (with [`device_taints`](Features::device_taints)).
    pub taint_rate: f64,
    /// DeviceTaintRules generated at most.
    pub max_taint_rules: usize,
    /// What the scenarios may contain: shareable and partitionable GPUs, taints,
    /// topology, request forms, ... (a feature off appears nowhere).
    pub features: Features,
    /// The kinds of jobs.
    pub kinds: WorkloadKinds,
}

impl ScenarioConfig {
    /// 1–6 nodes (2 per rack, 2 racks per block), 1–4 GPUs each, up to 6 jobs of 1–4
    /// pods: what a property test wants, every feature on ([`Features::ALL`]).
    pub fn small() -> ScenarioConfig {
        ScenarioConfig {
            nodes: (1, 6),
            nodes_per_rack: 2,
            racks_per_block: 2,
            gpus_per_node: (1, 4),
            jobs: (0, 6),
            pods_per_group: (1, 4),
            gpus_per_pod: (0, 2),
            running: 0.3,
            taint_rate: 0.15,
            max_taint_rules: 2,
            features: Features::ALL,
            kinds: WorkloadKinds::ALL,
        }
    }

    /// 4–24 nodes (4 per rack, 2 racks per block), 2–8 GPUs each, up to 20 jobs of
    /// 1–8 pods.
    pub fn medium() -> ScenarioConfig {
        ScenarioConfig {
            nodes: (4, 24),
            nodes_per_rack: 4,
            racks_per_block: 2,
            gpus_per_node: (2, 8),
            jobs: (2, 20),
            pods_per_group: (1, 8),
            gpus_per_pod: (0, 4),
            running: 0.4,
            taint_rate: 0.1,
            max_taint_rules: 4,
            ..ScenarioConfig::small()
        }
    }

    /// 64–160 nodes of 8 GPUs (8 per rack, 4 racks per block), 20–80 jobs of 1–16 pods.
    pub fn large() -> ScenarioConfig {
        ScenarioConfig {
            nodes: (64, 160),
            nodes_per_rack: 8,
            racks_per_block: 4,
            gpus_per_node: (8, 8),
            jobs: (20, 80),
            pods_per_group: (1, 16),
            gpus_per_pod: (0, 8),
            running: 0.5,
            taint_rate: 0.05,
            max_taint_rules: 8,
            ..ScenarioConfig::small()
        }
    }

    /// The preset of a [`Size`].
    pub fn for_size(size: Size) -> ScenarioConfig {
        match size {
            Size::Small => ScenarioConfig::small(),
            Size::Medium => ScenarioConfig::medium(),
            Size::Large => ScenarioConfig::large(),
        }
    }

    /// No feature ([`Features::NONE`]): whole exclusive GPUs, `ExactCount` requests
    /// of a class without selector, no taints, priorities, topology or leader +
    /// workers groups. The base for a scheduler that supports a subset: switch on what
    /// it supports (`features: "topology,node-taints".parse()?`, or
    /// [`Features::with`]). The sizes and densities stay.
    #[must_use]
    pub fn plain(mut self) -> ScenarioConfig {
        self.features = Features::NONE;
        self
    }
}

impl Default for ScenarioConfig {
    fn default() -> ScenarioConfig {
        ScenarioConfig::small()
    }
}

impl From<Size> for ScenarioConfig {
    fn from(size: Size) -> ScenarioConfig {
        ScenarioConfig::for_size(size)
    }
}
