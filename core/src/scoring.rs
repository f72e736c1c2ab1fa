//! Scoring policies for gang placement: which nodes and topology domains a gang's pods
//! go to when several would do.
//!
//! Skeleton: the types and the fragmentation measure. See `docs/ARCHITECTURE.md`.

use crate::alloc_prelude::*;

/// How the placer chooses among feasible nodes and domains.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum ScoringPolicy {
    /// Tightest fit: the nodes and domain with the least free capacity left.
    #[default]
    BestFit,
    /// The nodes and domain with the most free capacity left.
    Spread,
    /// The placement that least raises the expected fragmentation of the free capacity
    /// for a workload mix.
    FragmentationAware(WorkloadMix),
}

impl ScoringPolicy {
    /// The policy's name as the CLI and the playground spell it.
    pub const fn name(&self) -> &'static str {
        match self {
            ScoringPolicy::BestFit => "BestFit",
            ScoringPolicy::Spread => "Spread",
            ScoringPolicy::FragmentationAware(_) => "FragmentationAware",
        }
    }
}

/// One kind of incoming request: `pods` pods of `devices_per_pod` devices each, in one
/// topology domain when `pods > 1`, seen with relative frequency `weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct MixEntry {
    /// Relative frequency (any positive scale).
    pub weight: u32,
    /// Pods per request (1 for a single pod).
    pub pods: u32,
    /// Devices each pod needs.
    pub devices_per_pod: u32,
}

/// The distribution of request shapes fragmentation is measured against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadMix {
    /// The shapes.
    pub entries: Vec<MixEntry>,
}

impl Default for WorkloadMix {
    fn default() -> WorkloadMix {
        WorkloadMix {
            entries: vec![
                MixEntry {
                    weight: 1,
                    pods: 1,
                    devices_per_pod: 1,
                },
                MixEntry {
                    weight: 1,
                    pods: 1,
                    devices_per_pod: 2,
                },
                MixEntry {
                    weight: 1,
                    pods: 1,
                    devices_per_pod: 4,
                },
                MixEntry {
                    weight: 1,
                    pods: 1,
                    devices_per_pod: 8,
                },
            ],
        }
    }
}

impl WorkloadMix {
    /// Expected fragmentation of one domain whose nodes have `free` free devices each:
    /// for each entry of `pods` × `devices_per_pod`, the free devices that no whole copy
    /// of it could use (`Σ free − copies · pods · devices_per_pod`, where the domain
    /// hosts `Σ ⌊free / devices_per_pod⌋` pods), weighted by the entry's weight.
    pub fn fragmentation(&self, free: &[u32]) -> u64 {
        let total: u64 = free.iter().map(|&f| u64::from(f)).sum();
        self.entries
            .iter()
            .map(|e| {
                let k = u64::from(e.devices_per_pod.max(1));
                let n = u64::from(e.pods.max(1));
                let hosted: u64 = free.iter().map(|&f| u64::from(f) / k).sum();
                let copies = hosted / n;
                u64::from(e.weight) * (total - copies * n * k)
            })
            .sum()
    }
}
