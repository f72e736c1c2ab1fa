//! Scoring policies for gang placement: which nodes and topology domains a gang's pods
//! go to when several would do.
//!
//! Every policy ranks *feasible* placements only; feasibility (devices, taints,
//! resources, the topology constraint) is decided by the placer before scoring.
//!
//! # The policies
//!
//! - [`ScoringPolicy::BestFit`] (the default) packs: among feasible nodes and domains it
//!   prefers the ones that will have the least free capacity left. This is the idea of
//!   Kubernetes' NodeResourcesFit plugin with the `MostAllocated` scoring strategy
//!   (a node scores higher the larger the requested share of its allocatable
//!   resources), of Volcano's `binpack` plugin (the same preference, with per-resource
//!   weights), and of Kueue's topology-aware scheduling when it picks domains for a
//!   PodSet: its `BestFit` algorithm uses as few domains as it can and, where one domain
//!   can hold the (rest of the) request, takes the fitting domain with the least free
//!   capacity; its `LeastFreeCapacity` profile orders domains from the fullest up.
//!   Packing keeps large empty holes open for large requests that come later.
//! - [`ScoringPolicy::Spread`] does the opposite: the nodes and domains with the most
//!   free capacity left, as NodeResourcesFit's `LeastAllocated` strategy (the upstream
//!   default) does. It spreads load and failure risk at the price of fragmentation.
//! - [`ScoringPolicy::Stranding`] places each pod where it strands the least capacity
//!   for the typical shapes of the workload ([`ShapeMix`]): after FGD's measure (below),
//!   it also counts the GPU share a shape's CPU and memory needs leave unusable, keeps
//!   CPU and memory in balance with the GPUs they feed, and leaves devices that
//!   selector-bound shapes need to them. `docs/QUALITY.md` measures it against FGD and
//!   the paper's baselines on the Alibaba traces.
//! - [`ScoringPolicy::Fgd`] is Fragmentation Gradient Descent: Q. Weng, L. Yang, Y. Yu,
//!   W. Wang, X. Tang, G. Yang, L. Zhang, "Beware of Fragmentation: Scheduling
//!   GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023. A
//!   node's fragmentation for one shape is the free GPU share it could not use (all of
//!   it when no copy of the shape fits); for the workload, the expectation over the
//!   shapes; each pod goes where that grows least.
//!
//! Both measure nodes over their devices' free shares, CPU and memory; the formulas are
//! in `cluster/scores.rs`. A [`Cluster`](crate::Cluster) can keep every node's measure up
//! to date as it changes ([`Cluster::track_scoring`](crate::Cluster::track_scoring); a
//! [`Scheduler`](crate::Scheduler) does), so a placement reads it instead of computing it.
//!
//! `FragmentationAware`, the whole-device measure these replace, scored shareable GPUs as
//! if they were free as long as any share was, and so decided exactly like BestFit on the
//! GPU-sharing traces. Its name reads as FGD ([`ScoringPolicy::parse`]).
//!
//! # The capacity report's fragmentation
//!
//! [`WorkloadMix`] is the whole-device measure the capacity report counts with
//! ([`Cluster::capacity_report`](crate::Cluster::capacity_report)):
//!
//! - A shape is a [`MixEntry`]: `pods` (N) pods of `devices_per_pod` (k) whole devices
//!   each, all in one topology domain when N > 1.
//! - A domain whose nodes have `free` free devices can host `Σ ⌊free / k⌋` pods of k
//!   devices (a pod needs k devices on one node), hence `⌊Σ ⌊free / k⌋ / N⌋` whole copies
//!   of the shape. Its fragmentation for that shape is the free devices those copies
//!   leave over: `Σ free − copies · N · k`. [`WorkloadMix::fragmentation`] weights this
//!   by the entries' weights. Pods of one shape are interchangeable and each node's
//!   capacity for them is independent of the others', so this greedy count is the
//!   true maximum (the integration tests check it against an exhaustive search).
//! - For N = 1 it reduces to `Σ (free mod k)`.
//!
//! [`WorkloadMix::openb`] is the default mix, derived from the Alibaba trace the FGD
//! paper evaluates on.

use crate::alloc_prelude::*;
use crate::cluster::ranking::{RankMemo, Ranker};
use crate::cluster::{Cluster, ScoreKernel};
use crate::model::claim::ResourceClaim;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, finish};
use crate::model::mix::{ShapeMix, StrandingWeights};
use crate::model::workload::Pod;

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
    /// The node where the pod strands the least capacity for the typical shapes:
    /// GPU share left unusable by the shapes' GPU, CPU and memory needs, CPU and memory
    /// balance, and scarce devices left to the shapes that need them (see
    /// [`StrandingParams`]).
    Stranding(StrandingParams),
    /// Fragmentation Gradient Descent (Weng et al., USENIX ATC'23): the node whose
    /// expected fragmentation for the typical shapes grows least (see [`FgdParams`]).
    Fgd(FgdParams),
    /// Keeps topology domains whole for gangs: a placement avoids breaking into a
    /// domain (of a protected key) that is still whole when an equally feasible one
    /// keeps it whole, and inside a gang's required domain takes the fewest lower
    /// domains (see [`GangAwareParams`]); the base policy ranks nodes otherwise.
    GangAware(Box<GangAwareParams>),
    /// A baseline: a node drawn uniformly among the feasible ones, by a hash of this
    /// seed, the pod and the node (the FGD paper's Random).
    Random(u64),
    /// A baseline after Tetris's alignment score (the FGD paper's DotProd): the node
    /// whose free CPU, memory and device share, each over the node's capacity, have
    /// the largest dot product with the pod's requests over the same capacity.
    DotProduct,
}

/// Where a policy's typical shapes come from.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum MixSource {
    /// What the engine holds: a [`Scheduler`](crate::Scheduler) counts its running and
    /// pending pods ([`ShapeMix::observe`]); a single placement on a
    /// [`Cluster`](crate::Cluster) reads the mix the cluster tracks
    /// ([`Cluster::track_scoring`](crate::Cluster::track_scoring)), else the placed
    /// pods' own shapes.
    #[default]
    Observed,
    /// This mix.
    Given(ShapeMix),
}

/// The Stranding policy's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct StrandingParams {
    /// The typical shapes.
    pub mix: MixSource,
    /// The weights of the score's terms.
    pub weights: StrandingWeights,
}

/// The gang-aware policy's parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct GangAwareParams {
    /// The policy that ranks nodes within what keeping domains whole allows
    /// (Stranding by default; not GangAware itself).
    pub base: ScoringPolicy,
    /// Node label keys whose domains are kept whole, beside the keys that pending
    /// PodGroups require (a [`Scheduler`](crate::Scheduler) adds those each cycle) and
    /// the topology keys of a given mix's gang shapes. A domain is whole while none of
    /// its nodes' devices is allocated, even in part.
    pub protect: Vec<String>,
    /// Lower levels inside a gang's domain, outermost first (racks in a block, NVLink
    /// domains in a rack): a gang takes the fewest domains of each, the largest first
    /// while the rest of it fits in no single one, then the tightest that holds the
    /// rest (Kueue's topology-aware BestFit).
    pub levels: Vec<DomainLevel>,
}

impl Default for GangAwareParams {
    fn default() -> GangAwareParams {
        GangAwareParams {
            base: ScoringPolicy::stranding(),
            protect: Vec::new(),
            levels: Vec::new(),
        }
    }
}

/// A lower topology level (see [`GangAwareParams::levels`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub enum DomainLevel {
    /// Nodes with the same value of this label.
    NodeLabel(String),
    /// Nodes whose first device has the same value of this device attribute (its
    /// qualified name, `domain/name`, or its name under the device's driver).
    DeviceAttribute(String),
}

/// The FGD policy's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase", default))]
pub struct FgdParams {
    /// The typical shapes.
    pub mix: MixSource,
    /// Breaks ties between equally scored nodes by a hash of this seed, the pod and
    /// the node (FGD draws at random); `None`: the first node by name.
    pub seed: Option<u64>,
}

impl ScoringPolicy {
    /// The policy names as [`ScoringPolicy::name`] spells them, in declaration order.
    pub const NAMES: [&'static str; 5] = ["BestFit", "Spread", "Stranding", "FGD", "GangAware"];

    /// The baselines' names ([`ScoringPolicy::Random`], [`ScoringPolicy::DotProduct`]),
    /// which [`ScoringPolicy::parse`] also reads: policies to compare against, not to
    /// schedule with.
    pub const BASELINES: [&'static str; 2] = ["Random", "DotProd"];

    /// The policy's name as the CLI and the playground spell it.
    pub const fn name(&self) -> &'static str {
        match self {
            ScoringPolicy::BestFit => "BestFit",
            ScoringPolicy::Spread => "Spread",
            ScoringPolicy::Stranding(_) => "Stranding",
            ScoringPolicy::Fgd(_) => "FGD",
            ScoringPolicy::GangAware(_) => "GangAware",
            ScoringPolicy::Random(_) => "Random",
            ScoringPolicy::DotProduct => "DotProd",
        }
    }

    /// The Stranding policy with the observed mix and the default weights.
    pub fn stranding() -> ScoringPolicy {
        ScoringPolicy::Stranding(StrandingParams::default())
    }

    /// The gang-aware policy over Stranding with the observed mix, no key protected
    /// beyond what pending PodGroups require, no lower levels.
    pub fn gang_aware() -> ScoringPolicy {
        ScoringPolicy::GangAware(Box::default())
    }

    /// The FGD policy with the observed mix, ties to the first node by name.
    pub fn fgd() -> ScoringPolicy {
        ScoringPolicy::Fgd(FgdParams::default())
    }

    /// The policy named `name` (one of [`ScoringPolicy::NAMES`], ASCII case-insensitive,
    /// `-` and `_` ignored), Stranding and FGD with the observed mix; `None` for any
    /// other text (no trimming). `FragmentationAware`, the policy FGD replaced, is
    /// deprecated and reads as FGD ([`ScoringPolicy::is_deprecated_name`]).
    ///
    /// ```
    /// use gangpack::ScoringPolicy;
    ///
    /// assert_eq!(ScoringPolicy::parse("spread"), Some(ScoringPolicy::Spread));
    /// assert_eq!(ScoringPolicy::parse("STRANDING"), Some(ScoringPolicy::stranding()));
    /// assert_eq!(ScoringPolicy::parse("fragmentation-aware"), Some(ScoringPolicy::fgd()));
    /// assert_eq!(ScoringPolicy::parse("binpack"), None);
    /// ```
    pub fn parse(name: &str) -> Option<ScoringPolicy> {
        match flat(name).as_str() {
            "bestfit" => Some(ScoringPolicy::BestFit),
            "spread" => Some(ScoringPolicy::Spread),
            "stranding" => Some(ScoringPolicy::stranding()),
            "fgd" | "fragmentationaware" => Some(ScoringPolicy::fgd()),
            "gangaware" => Some(ScoringPolicy::gang_aware()),
            "random" => Some(ScoringPolicy::Random(0)),
            "dotprod" | "dotproduct" => Some(ScoringPolicy::DotProduct),
            _ => None,
        }
    }

    /// Whether `name` is a deprecated spelling [`ScoringPolicy::parse`] still reads
    /// (`FragmentationAware`, now FGD), for a warning.
    pub fn is_deprecated_name(name: &str) -> bool {
        flat(name) == "fragmentationaware"
    }

    /// The policy that orders nodes: the base of a gang-aware policy, else itself.
    pub fn base(&self) -> &ScoringPolicy {
        match self {
            ScoringPolicy::GangAware(p) => p.base.base(),
            other => other,
        }
    }

    /// The policy's mix source, for the policies that score against typical shapes.
    pub fn mix_source(&self) -> Option<&MixSource> {
        match self {
            ScoringPolicy::BestFit
            | ScoringPolicy::Spread
            | ScoringPolicy::Random(_)
            | ScoringPolicy::DotProduct => None,
            ScoringPolicy::Stranding(p) => Some(&p.mix),
            ScoringPolicy::Fgd(p) => Some(&p.mix),
            ScoringPolicy::GangAware(p) => p.base.mix_source(),
        }
    }

    /// The policy with its mix replaced by `mix` (no change for BestFit and Spread).
    #[must_use]
    pub fn with_mix(mut self, mix: MixSource) -> ScoringPolicy {
        match &mut self {
            ScoringPolicy::BestFit
            | ScoringPolicy::Spread
            | ScoringPolicy::Random(_)
            | ScoringPolicy::DotProduct => {}
            ScoringPolicy::Stranding(p) => p.mix = mix,
            ScoringPolicy::Fgd(p) => p.mix = mix,
            ScoringPolicy::GangAware(p) => {
                let base = core::mem::take(&mut p.base);
                p.base = base.with_mix(mix);
            }
        }
        self
    }

    /// Checks the policy's parameters: a given mix (see [`ShapeMix::validate_at`]),
    /// reported against the pseudo-object `PodGroup "scoring policy"` at
    /// `policy.stranding.mix.given` or `policy.fgd.mix.given`.
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let object = ObjectRef::cluster(ObjectKind::PodGroup, POLICY_OBJECT);
        match self {
            ScoringPolicy::Stranding(StrandingParams {
                mix: MixSource::Given(mix),
                ..
            }) => mix.validate_at(&object, "policy.stranding.mix.given"),
            ScoringPolicy::Fgd(FgdParams {
                mix: MixSource::Given(mix),
                ..
            }) => mix.validate_at(&object, "policy.fgd.mix.given"),
            ScoringPolicy::GangAware(p) => {
                let mut errs = match &p.base {
                    ScoringPolicy::GangAware(_) => vec![ValidationError::new(
                        object.clone(),
                        "policy.gangAware.base",
                        Problem::Invalid {
                            value: "gangAware".into(),
                            reason: "the base policy cannot be gangAware itself",
                        },
                    )],
                    base => base.validate().err().unwrap_or_default(),
                };
                for (i, k) in p.protect.iter().enumerate() {
                    if k.is_empty() {
                        errs.push(ValidationError::new(
                            object.clone(),
                            format!("policy.gangAware.protect[{i}]"),
                            Problem::Required,
                        ));
                    }
                }
                for (i, l) in p.levels.iter().enumerate() {
                    let (DomainLevel::NodeLabel(k) | DomainLevel::DeviceAttribute(k)) = l;
                    if k.is_empty() {
                        errs.push(ValidationError::new(
                            object.clone(),
                            format!("policy.gangAware.levels[{i}]"),
                            Problem::Required,
                        ));
                    }
                }
                finish(errs)
            }
            ScoringPolicy::BestFit
            | ScoringPolicy::Spread
            | ScoringPolicy::Stranding(_)
            | ScoringPolicy::Fgd(_)
            | ScoringPolicy::Random(_)
            | ScoringPolicy::DotProduct => Ok(()),
        }
    }
}

impl Cluster {
    /// Starts keeping every node's measure under `policy` (Stranding or FGD) with
    /// `mix`, so that placements with that policy and mix read a node's measure
    /// instead of computing it; BestFit and Spread stop any tracking. Each
    /// allocation, release and change of a node or device then updates the nodes it
    /// touches. A [`Scheduler`](crate::Scheduler) with one of these policies does this
    /// itself, with the mix it observes or was given.
    ///
    /// Placements with [`MixSource::Observed`] on this cluster use the tracked mix.
    pub fn track_scoring(&mut self, policy: &ScoringPolicy, mix: &ShapeMix) {
        match policy.kernel() {
            Some(kernel) => self.track_scores(kernel, mix),
            None => self.untrack_scores(),
        }
    }

    /// The ranker of a placement of `pods` under `policy`: its given mix, else the
    /// tracked one, else the pods' own shapes (the baselines need none); `None` for
    /// BestFit and Spread.
    pub(crate) fn policy_ranker(
        &self,
        policy: &ScoringPolicy,
        pods: &[Pod],
        claims: &[ResourceClaim],
        memo: RankMemo,
    ) -> Option<Ranker<'_>> {
        match policy {
            ScoringPolicy::GangAware(p) => return self.policy_ranker(&p.base, pods, claims, memo),
            ScoringPolicy::Random(seed) => return Some(self.baseline_ranker(Some(*seed))),
            ScoringPolicy::DotProduct => return Some(self.baseline_ranker(None)),
            _ => {}
        }
        let kernel = policy.kernel()?;
        let seed = match policy {
            ScoringPolicy::Fgd(p) => p.seed,
            _ => None,
        };
        match policy.mix_source()? {
            MixSource::Given(mix) => self.ranker(kernel, Some(mix), seed, memo),
            MixSource::Observed => {
                if self.tracks(kernel) {
                    return self.ranker(kernel, None, seed, memo);
                }
                let own = ShapeMix::observe(pods, claims);
                self.ranker(kernel, Some(&own), seed, memo)
            }
        }
    }
}

impl ScoringPolicy {
    /// The node measure the policy ranks by.
    fn kernel(&self) -> Option<ScoreKernel> {
        match self {
            ScoringPolicy::GangAware(p) => p.base.kernel(),
            ScoringPolicy::BestFit
            | ScoringPolicy::Spread
            | ScoringPolicy::Random(_)
            | ScoringPolicy::DotProduct => None,
            ScoringPolicy::Stranding(p) => Some(ScoreKernel::Stranding(p.weights)),
            ScoringPolicy::Fgd(_) => Some(ScoreKernel::Fgd),
        }
    }
}

/// `name` lower-cased without `-` and `_`.
fn flat(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '-' && *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
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

impl MixEntry {
    /// A single pod of `devices_per_pod` devices with relative frequency `weight`.
    pub const fn single(weight: u32, devices_per_pod: u32) -> MixEntry {
        MixEntry {
            weight,
            pods: 1,
            devices_per_pod,
        }
    }
}

/// The distribution of request shapes fragmentation is measured against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct WorkloadMix {
    /// The shapes.
    pub entries: Vec<MixEntry>,
}

/// The default mix is [`WorkloadMix::openb`].
impl Default for WorkloadMix {
    fn default() -> WorkloadMix {
        WorkloadMix::openb()
    }
}

/// The object [`WorkloadMix::validate`] reports against. No Kubernetes kind holds a
/// scoring policy (upstream it lives in the scheduler's configuration file); it is an
/// option of one gang placement, i.e. of placing one PodGroup, hence the kind.
const POLICY_OBJECT: &str = "scoring policy";

/// The field path [`WorkloadMix::validate`] reports under.
const MIX_PATH: &str = "mix";

impl WorkloadMix {
    /// The most entries a mix may have.
    pub const MAX_ENTRIES: usize = 64;

    /// The whole-GPU request mix of the Alibaba GPU cluster trace v2023 ("openb"), the
    /// production trace the FGD paper evaluates on: single pods of 1, 2, 4 and 8 devices
    /// with per-mille weights 981, 4, 4 and 11.
    ///
    /// Derivation (`shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv`, 8152
    /// pods; columns described in `FORMAT.md` there):
    ///
    /// - Rule: pods with `num_gpu > 0` and `gpu_milli == 1000`, i.e. whole GPUs
    ///   (`gpu_milli` is per GPU; multi-GPU pods always have 1000). Counted by `num_gpu`:
    ///   1 → 3911, 2 → 16, 4 → 15, 8 → 44; 3986 pods in all.
    /// - Weight = pods of that size per thousand whole-GPU pods, rounded to nearest:
    ///   981.19 → 981, 4.01 → 4, 3.76 → 4, 11.04 → 11 (they sum to 1000).
    /// - Left out: 1088 CPU-only pods and 3078 GPU-sharing pods (`num_gpu == 1`,
    ///   `gpu_milli < 1000`). gangpack hands out whole devices, and counting a sharing
    ///   pod as a 1-device request would change nothing but the scale: a 1-device single
    ///   pod never finds a free device unusable (`free mod 1 = 0`), so it only adds to
    ///   the 1-device weight, whose term is always zero.
    /// - The trace has no multi-node gangs (each row is one pod on one node), so every
    ///   entry has `pods == 1`.
    ///
    /// Reproduce from the project root (prints one line per size):
    ///
    /// ```sh
    /// awk -F, 'NR > 1 && $4 > 0 && $5 == 1000 { n[$4]++; t++ } END { for (k in n) printf "%d GPUs: %d pods, %.0f per mille\n", k, n[k], 1000 * n[k] / t }' shared/traces/alibaba-gpu-v2023/openb_pod_list_default.csv | sort -n
    /// ```
    ///
    /// Attribution: trace from GitHub `alibaba/clusterdata`, `cluster-trace-gpu-v2023`,
    /// published for research and study use (the repository has no licence file; the
    /// same CSVs are also in `hkust-adsl/kubernetes-scheduler-simulator`, Apache-2.0 at
    /// its root). Cite Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing
    /// Workloads with Fragmentation Gradient Descent", USENIX ATC 2023. Only the four
    /// counts above are used here; the crate never reads the trace.
    ///
    /// ```
    /// use gangpack::WorkloadMix;
    ///
    /// let mix = WorkloadMix::openb();
    /// assert_eq!(mix.weight_sum(), 1000);
    /// // Two nodes with 3 and 9 free devices. Of 3, one device strands for 2-device pods
    /// // and all 3 for 4- and 8-device pods; of 9, one is left over for each size.
    /// assert_eq!(mix.fragmentation(&[3, 9]), 4 * (1 + 1) + 4 * (3 + 1) + 11 * (3 + 1));
    /// assert_eq!(mix, WorkloadMix::default());
    /// ```
    pub fn openb() -> WorkloadMix {
        WorkloadMix {
            entries: vec![
                MixEntry::single(981, 1),
                MixEntry::single(4, 2),
                MixEntry::single(4, 4),
                MixEntry::single(11, 8),
            ],
        }
    }

    /// The sum of the entries' weights (saturating).
    pub fn weight_sum(&self) -> u64 {
        self.entries
            .iter()
            .fold(0u64, |s, e| s.saturating_add(u64::from(e.weight)))
    }

    /// Expected fragmentation of one domain whose nodes have `free` free devices each:
    /// for each entry of `pods` × `devices_per_pod`, the free devices that no whole copy
    /// of it could use (`Σ free − copies · pods · devices_per_pod`, where the domain
    /// hosts `Σ ⌊free / devices_per_pod⌋` pods), weighted by the entry's weight.
    ///
    /// Never panics and never overflows: the sum is exact up to `u64::MAX` and saturates
    /// there. An entry with `pods` or `devices_per_pod` 0 (which [`WorkloadMix::validate`]
    /// refuses) counts as 1; weight 0 contributes nothing. The result is 0 for an empty
    /// domain and at most [`WorkloadMix::weight_sum`] × `Σ free`.
    ///
    /// ```
    /// use gangpack::{MixEntry, WorkloadMix};
    ///
    /// // Two racks' worth of 4-device pods in one domain: 2 pods × 4 devices.
    /// let mix = WorkloadMix { entries: vec![MixEntry { weight: 1, pods: 2, devices_per_pod: 4 }] };
    /// // 5 + 4 + 3 free hosts 2 pods (one copy); 12 − 8 = 4 devices are left over.
    /// assert_eq!(mix.fragmentation(&[5, 4, 3]), 4);
    /// ```
    pub fn fragmentation(&self, free: &[u32]) -> u64 {
        // u128 throughout: a slice holds fewer than 2^62 elements, so Σ free < 2^94 and
        // weight · Σ free < 2^126; only the sum over entries needs saturation.
        let total: u128 = free.iter().map(|&f| u128::from(f)).sum();
        if total == 0 {
            return 0;
        }
        let mut sum: u128 = 0;
        for e in &self.entries {
            let k = e.devices_per_pod.max(1);
            let n = u128::from(e.pods.max(1));
            if e.weight == 0 || (k == 1 && n == 1) {
                // Single 1-device pods use every free device.
                continue;
            }
            let hosted: u128 = free.iter().map(|&f| u128::from(f / k)).sum();
            let used = hosted / n * n * u128::from(k);
            sum = sum.saturating_add(u128::from(e.weight) * (total - used));
        }
        u64::try_from(sum).unwrap_or(u64::MAX)
    }

    /// Expected fragmentation of a single node with `free` free devices, for the
    /// entries with `pods == 1` only: `Σ weight · (free mod devices_per_pod)`.
    ///
    /// A single node is measured per pod, as FGD measures nodes; multi-pod entries
    /// belong to a domain and are measured by [`WorkloadMix::fragmentation`]. Equals
    /// `fragmentation(&[free])` for a mix of single-pod entries. Saturates at
    /// `u64::MAX`; a `devices_per_pod` of 0 counts as 1.
    pub fn node_fragmentation(&self, free: u32) -> u64 {
        let sum = self.single_pod_entries().fold(0u128, |s, (w, k)| {
            s.saturating_add(u128::from(w) * u128::from(free % k))
        });
        u64::try_from(sum).unwrap_or(u64::MAX)
    }

    /// The change of [`WorkloadMix::node_fragmentation`] when `take` of a node's
    /// `free_before` free devices are taken: `node_fragmentation(free_before − take) −
    /// node_fragmentation(free_before)`, computed exactly and clamped to the `i64` range.
    ///
    /// Negative means the placement lowers the node's fragmentation; the
    /// fragmentation-aware policy prefers the node with the smallest delta (FGD's
    /// steepest descent). `take` beyond `free_before` is taken as `free_before`.
    ///
    /// ```
    /// use gangpack::WorkloadMix;
    ///
    /// let mix = WorkloadMix::openb();
    /// // Taking 1 of 9 leaves 8: the shards of 2-, 4- and 8-device pods disappear.
    /// assert_eq!(mix.node_fragmentation_delta(9, 1), -(4 + 4 + 11));
    /// // Taking 1 of 8 leaves 7: an 8-device hole is broken.
    /// assert_eq!(mix.node_fragmentation_delta(8, 1), 4 * 1 + 4 * 3 + 11 * 7);
    /// ```
    pub fn node_fragmentation_delta(&self, free_before: u32, take: u32) -> i64 {
        let after = free_before.saturating_sub(take);
        // Each term lies in (−2^64, 2^64); 2^62 of them cannot leave the i128 range,
        // but saturate anyway so no input can panic.
        let delta = self.single_pod_entries().fold(0i128, |d, (w, k)| {
            let change = i128::from(after % k) - i128::from(free_before % k);
            d.saturating_add(i128::from(w) * change)
        });
        i64::try_from(delta).unwrap_or(if delta < 0 { i64::MIN } else { i64::MAX })
    }

    /// `(weight, devices_per_pod)` of the entries with one pod (0 read as 1).
    fn single_pod_entries(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.entries
            .iter()
            .filter(|e| e.pods <= 1)
            .map(|e| (e.weight, e.devices_per_pod.max(1)))
    }

    /// Checks the mix: at least one and at most [`WorkloadMix::MAX_ENTRIES`] entries,
    /// every `weight`, `pods` and `devicesPerPod` at least 1, and `pods ×
    /// devicesPerPod` within `u32`.
    ///
    /// Errors name the pseudo-object `PodGroup "scoring policy"` (no Kubernetes kind
    /// holds a scoring policy; it is an option of placing one PodGroup) and the field
    /// path inside `GangOptions` in its serde spelling, e.g.
    /// `mix.entries[2].devicesPerPod`. Use
    /// [`WorkloadMix::validate_at`] to report against another object or path.
    ///
    /// ```
    /// use gangpack::{MixEntry, WorkloadMix};
    ///
    /// assert!(WorkloadMix::openb().validate().is_ok());
    /// let bad = WorkloadMix { entries: vec![MixEntry { weight: 0, pods: 1, devices_per_pod: 8 }] };
    /// let errs = bad.validate().unwrap_err();
    /// assert_eq!(errs[0].field, "mix.entries[0].weight");
    /// ```
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let object = ObjectRef::cluster(ObjectKind::PodGroup, POLICY_OBJECT);
        self.validate_at(&object, MIX_PATH)
    }

    /// [`WorkloadMix::validate`], reporting against `object` with field paths under
    /// `path` (the mix's own path, e.g. `mix`; the entries are at
    /// `<path>.entries`).
    pub fn validate_at(&self, object: &ObjectRef, path: &str) -> Result<(), Vec<ValidationError>> {
        let mut errs = Vec::new();
        let entries = format!("{path}.entries");
        if self.entries.is_empty() {
            errs.push(ValidationError::new(
                object.clone(),
                entries.as_str(),
                Problem::Required,
            ));
        } else if self.entries.len() > Self::MAX_ENTRIES {
            errs.push(ValidationError::new(
                object.clone(),
                entries.as_str(),
                Problem::TooMany {
                    max: Self::MAX_ENTRIES,
                    actual: self.entries.len(),
                },
            ));
        }
        for (i, e) in self.entries.iter().enumerate() {
            let at = format!("{entries}[{i}]");
            for (name, value) in [
                ("weight", e.weight),
                ("pods", e.pods),
                ("devicesPerPod", e.devices_per_pod),
            ] {
                if value == 0 {
                    errs.push(ValidationError::new(
                        object.clone(),
                        format!("{at}.{name}"),
                        Problem::Invalid {
                            value: value.to_string(),
                            reason: "must be at least 1",
                        },
                    ));
                }
            }
            if e.pods.checked_mul(e.devices_per_pod).is_none() {
                errs.push(ValidationError::new(
                    object.clone(),
                    at,
                    Problem::Invalid {
                        value: format!("{} × {}", e.pods, e.devices_per_pod),
                        reason: "pods × devicesPerPod must be at most 4294967295 devices",
                    },
                ));
            }
        }
        finish(errs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(entries: &[(u32, u32, u32)]) -> WorkloadMix {
        WorkloadMix {
            entries: entries
                .iter()
                .map(|&(weight, pods, devices_per_pod)| MixEntry {
                    weight,
                    pods,
                    devices_per_pod,
                })
                .collect(),
        }
    }

    #[test]
    fn openb_is_the_default_and_sums_to_a_thousand() {
        let m = WorkloadMix::openb();
        assert_eq!(m, WorkloadMix::default());
        assert_eq!(m.weight_sum(), 1000);
        assert!(m.entries.iter().all(|e| e.pods == 1));
        let sizes: Vec<u32> = m.entries.iter().map(|e| e.devices_per_pod).collect();
        assert_eq!(sizes, [1, 2, 4, 8]);
        assert!(m.validate().is_ok());
    }

    #[test]
    fn single_pod_shapes_count_the_remainder() {
        let m = mix(&[(1, 1, 8)]);
        // FGD: a node with fewer than 8 free strands all of them.
        for f in 0..8 {
            assert_eq!(m.fragmentation(&[f]), u64::from(f));
        }
        // Beyond that, ours counts the shard FGD ignores.
        assert_eq!(m.fragmentation(&[8]), 0);
        assert_eq!(m.fragmentation(&[11]), 3);
        assert_eq!(m.fragmentation(&[16, 3, 7]), 10);
    }

    #[test]
    fn multi_pod_shapes_count_whole_copies_in_the_domain() {
        // 3 pods × 2 devices: 3 + 3 + 2 free host 1 + 1 + 1 = 3 pods = one copy.
        let m = mix(&[(1, 3, 2)]);
        assert_eq!(m.fragmentation(&[3, 3, 2]), 8 - 6);
        // Only 2 pods fit: no copy, everything is stranded.
        assert_eq!(m.fragmentation(&[3, 3, 1]), 7);
        // 1-device pods, 4 per copy: 10 free → 2 copies, 2 left.
        assert_eq!(mix(&[(1, 4, 1)]).fragmentation(&[5, 5]), 2);
        // Weights scale each entry.
        assert_eq!(mix(&[(3, 1, 4), (2, 2, 1)]).fragmentation(&[5]), 3 + 2);
    }

    #[test]
    fn empty_inputs_have_no_fragmentation() {
        let m = WorkloadMix::openb();
        assert_eq!(m.fragmentation(&[]), 0);
        assert_eq!(m.fragmentation(&[0, 0, 0]), 0);
        assert_eq!(mix(&[]).fragmentation(&[7, 3]), 0);
        assert_eq!(m.node_fragmentation(0), 0);
        assert_eq!(m.node_fragmentation_delta(0, 5), 0);
    }

    #[test]
    fn invalid_entries_do_not_panic() {
        let m = mix(&[(0, 0, 0), (5, 0, 0), (1, u32::MAX, u32::MAX)]);
        // (5, 0, 0) reads as 5 × single 1-device pods: 0; the last needs more than exist.
        assert_eq!(m.fragmentation(&[3, 4]), 7);
        assert_eq!(m.node_fragmentation(3), 0);
        assert_eq!(m.node_fragmentation_delta(3, 9), 0);
    }

    #[test]
    fn fragmentation_saturates() {
        // Nothing fits anywhere: every free device is stranded for the last entry.
        let m = mix(&[
            (u32::MAX, 1, 2),
            (u32::MAX, 2, u32::MAX),
            (u32::MAX, 1, u32::MAX),
        ]);
        assert_eq!(m.fragmentation(&vec![u32::MAX - 1; 1_000_000]), u64::MAX);
        assert!(m.fragmentation(&vec![u32::MAX; 1_000_000]) > 0);
        // Right below the limit the value is exact: (2^32 − 1)(2^32 − 2) < 2^64.
        let m = mix(&[(u32::MAX, 1, u32::MAX)]);
        let max = u64::from(u32::MAX);
        assert_eq!(m.fragmentation(&[u32::MAX - 1]), max * (max - 1));
        assert_eq!(m.fragmentation(&[u32::MAX - 1, u32::MAX - 1]), u64::MAX);
        assert_eq!(m.node_fragmentation(u32::MAX - 1), max * (max - 1));
    }

    #[test]
    fn node_delta_is_exact_or_clamped() {
        let m = mix(&[(u32::MAX, 1, u32::MAX); 3]);
        // Each entry: (2^32 − 1) · ((2^32 − 2) − 0) ≈ 2^64 > i64::MAX.
        assert_eq!(m.node_fragmentation_delta(u32::MAX, 1), i64::MAX);
        assert_eq!(
            m.node_fragmentation_delta(u32::MAX - 1, u32::MAX - 1),
            i64::MIN
        );
        let m = mix(&[(2, 1, 4), (1, 1, 3), (7, 3, 2)]);
        assert_eq!(m.node_fragmentation_delta(5, 2), 2 * (3 - 1) + (0 - 2));
        assert_eq!(
            m.node_fragmentation_delta(5, 99),
            m.node_fragmentation_delta(5, 5)
        );
    }

    #[test]
    fn parse_and_names() {
        for name in ScoringPolicy::NAMES {
            let p = ScoringPolicy::parse(name).unwrap();
            assert_eq!(p.name(), name);
            assert_eq!(
                ScoringPolicy::parse(&name.to_ascii_lowercase()),
                Some(p.clone())
            );
            assert_eq!(ScoringPolicy::parse(&name.to_ascii_uppercase()), Some(p));
        }
        assert_eq!(
            ScoringPolicy::parse("fragmentation_aware"),
            Some(ScoringPolicy::fgd())
        );
        assert!(ScoringPolicy::is_deprecated_name("Fragmentation-Aware"));
        assert!(!ScoringPolicy::is_deprecated_name("fgd"));
        assert_eq!(
            ScoringPolicy::parse("best-fit"),
            Some(ScoringPolicy::BestFit)
        );
        assert_eq!(
            ScoringPolicy::parse("Best_Fit"),
            Some(ScoringPolicy::BestFit)
        );
        for bad in ["", " BestFit", "BestFit ", "MostAllocated", "Spreadd"] {
            assert_eq!(ScoringPolicy::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn validate_names_every_bad_field() {
        let errs = mix(&[]).validate().unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "mix.entries");
        assert_eq!(errs[0].problem, Problem::Required);
        assert_eq!(
            errs[0].to_string(),
            "PodGroup \"scoring policy\": mix.entries: required value"
        );

        let errs = mix(&[(1, 1, 1); 65]).validate().unwrap_err();
        assert_eq!(
            errs[0].problem,
            Problem::TooMany {
                max: 64,
                actual: 65
            }
        );
        assert!(mix(&[(1, 1, 1); 64]).validate().is_ok());

        let errs = mix(&[
            (0, 1, 1),
            (1, 0, 0),
            (1, 65_536, 65_536),
            (1, 65_537, 65_535),
        ])
        .validate()
        .unwrap_err();
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "mix.entries[0].weight",
                "mix.entries[1].pods",
                "mix.entries[1].devicesPerPod",
                "mix.entries[2]",
            ]
        );
        assert_eq!(
            errs[3].to_string(),
            "PodGroup \"scoring policy\": mix.entries[2]: invalid value \
             \"65536 × 65536\": pods × devicesPerPod must be at most 4294967295 devices"
        );

        let pg = ObjectRef::namespaced(ObjectKind::PodGroup, "ns", "train");
        let errs = mix(&[(0, 1, 1)]).validate_at(&pg, "spec.mix").unwrap_err();
        assert_eq!(errs[0].object, pg);
        assert_eq!(errs[0].field, "spec.mix.entries[0].weight");
        assert_eq!(ScoringPolicy::BestFit.validate(), Ok(()));
        assert_eq!(ScoringPolicy::stranding().validate(), Ok(()));
        let bad = ShapeMix {
            shapes: vec![crate::TypicalShape {
                weight: 0,
                ..crate::TypicalShape::new("gpu")
            }],
        };
        let errs = ScoringPolicy::fgd()
            .with_mix(MixSource::Given(bad))
            .validate()
            .unwrap_err();
        assert_eq!(errs[0].field, "policy.fgd.mix.given.shapes[0].weight");
    }
}
