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
//! - [`ScoringPolicy::FragmentationAware`] chooses the placement that raises the
//!   expected fragmentation of the free capacity least, for a [`WorkloadMix`] that
//!   describes which requests are expected next.
//!
//! # Fragmentation, after FGD
//!
//! The fragmentation-aware policy follows Fragmentation Gradient Descent (FGD): Q. Weng,
//! L. Yang, Y. Yu, W. Wang, X. Tang, G. Yang, L. Zhang, "Beware of Fragmentation:
//! Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC
//! 2023 (simulator: GitHub `hkust-adsl/kubernetes-scheduler-simulator`). In our words:
//!
//! - A node's fragmentation *for one task shape* is the part of its free GPU capacity
//!   that a task of that shape could not use. If the task does not fit on the node at
//!   all (too few GPUs, or too little CPU or memory), all of the node's free GPU
//!   capacity counts; if it fits, only the GPUs whose free share is smaller than what
//!   the task needs from one GPU count.
//! - A node's fragmentation *for a workload* is the expectation of that quantity over
//!   the distribution of task shapes (the "typical pods", each with its frequency).
//! - To place a task, FGD tries each feasible node (and GPU) and picks the one where
//!   the node's expected fragmentation grows least (or falls most): a greedy step down
//!   the fragmentation gradient.
//!
//! gangpack allocates whole devices and places gangs, so we generalise the measure:
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
//! - For N = 1 it reduces to `Σ (free mod k)`. On a node with fewer than k free devices
//!   that is all of its free devices, exactly FGD's measure for a whole-GPU task that
//!   does not fit. On a larger node FGD counts nothing (the task fits and it has no
//!   partial GPUs); we also count the shard left after as many copies as fit, e.g.
//!   3 of 11 free devices for an 8-device shape. That makes "leave 8 free, not 11" a
//!   preference, which FGD's measure cannot express with whole devices.
//! - Only devices are measured: CPU and memory, which FGD also checks, are the
//!   placer's feasibility question, not part of the score. GPU sharing (a fraction of
//!   one device) is not modelled: a device is either wholly free here or not free.
//!
//! [`WorkloadMix::openb`] is the default mix, derived from the Alibaba trace the FGD
//! paper evaluates on; [`WorkloadMix::node_fragmentation_delta`] is the per-node
//! gradient step, for ranking single nodes.

use crate::alloc_prelude::*;
use crate::model::error::{ObjectKind, ObjectRef, Problem, ValidationError, finish};

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
    /// The policy names as [`ScoringPolicy::name`] spells them, in declaration order.
    pub const NAMES: [&'static str; 3] = ["BestFit", "Spread", "FragmentationAware"];

    /// The policy's name as the CLI and the playground spell it.
    pub const fn name(&self) -> &'static str {
        match self {
            ScoringPolicy::BestFit => "BestFit",
            ScoringPolicy::Spread => "Spread",
            ScoringPolicy::FragmentationAware(_) => "FragmentationAware",
        }
    }

    /// The policy named `name` (one of [`ScoringPolicy::NAMES`], ASCII case-insensitive),
    /// `FragmentationAware` with the default mix ([`WorkloadMix::openb`]); `None` for any
    /// other text (no trimming).
    ///
    /// ```
    /// use gangpack::{ScoringPolicy, WorkloadMix};
    ///
    /// assert_eq!(ScoringPolicy::parse("spread"), Some(ScoringPolicy::Spread));
    /// assert_eq!(
    ///     ScoringPolicy::parse("FRAGMENTATIONAWARE"),
    ///     Some(ScoringPolicy::FragmentationAware(WorkloadMix::openb())),
    /// );
    /// assert_eq!(ScoringPolicy::parse("binpack"), None);
    /// ```
    pub fn parse(name: &str) -> Option<ScoringPolicy> {
        if name.eq_ignore_ascii_case("BestFit") {
            Some(ScoringPolicy::BestFit)
        } else if name.eq_ignore_ascii_case("Spread") {
            Some(ScoringPolicy::Spread)
        } else if name.eq_ignore_ascii_case("FragmentationAware") {
            Some(ScoringPolicy::FragmentationAware(WorkloadMix::openb()))
        } else {
            None
        }
    }

    /// Checks the policy's parameters: the workload mix of `FragmentationAware` (see
    /// [`WorkloadMix::validate`], whose object and field paths this uses); the other
    /// policies have none.
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        match self {
            ScoringPolicy::BestFit | ScoringPolicy::Spread => Ok(()),
            ScoringPolicy::FragmentationAware(mix) => mix.validate(),
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

/// The field path of a fragmentation-aware policy's mix inside `GangOptions`, in the
/// serde spelling (`{"policy": {"fragmentationAware": {"entries": [...]}}}`).
const MIX_PATH: &str = "policy.fragmentationAware";

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
    /// `policy.fragmentationAware.entries[2].devicesPerPod`. Use
    /// [`WorkloadMix::validate_at`] to report against another object or path.
    ///
    /// ```
    /// use gangpack::{MixEntry, WorkloadMix};
    ///
    /// assert!(WorkloadMix::openb().validate().is_ok());
    /// let bad = WorkloadMix { entries: vec![MixEntry { weight: 0, pods: 1, devices_per_pod: 8 }] };
    /// let errs = bad.validate().unwrap_err();
    /// assert_eq!(errs[0].field, "policy.fragmentationAware.entries[0].weight");
    /// ```
    pub fn validate(&self) -> Result<(), Vec<ValidationError>> {
        let object = ObjectRef::cluster(ObjectKind::PodGroup, POLICY_OBJECT);
        self.validate_at(&object, MIX_PATH)
    }

    /// [`WorkloadMix::validate`], reporting against `object` with field paths under
    /// `path` (the mix's own path, e.g. `policy.fragmentationAware`; the entries are at
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
        assert!(ScoringPolicy::FragmentationAware(m).validate().is_ok());
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
            ScoringPolicy::parse("fragmentationaware"),
            Some(ScoringPolicy::FragmentationAware(WorkloadMix::openb()))
        );
        for bad in [
            "",
            " BestFit",
            "BestFit ",
            "best-fit",
            "MostAllocated",
            "Spreadd",
        ] {
            assert_eq!(ScoringPolicy::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn validate_names_every_bad_field() {
        let errs = mix(&[]).validate().unwrap_err();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "policy.fragmentationAware.entries");
        assert_eq!(errs[0].problem, Problem::Required);
        assert_eq!(
            errs[0].to_string(),
            "PodGroup \"scoring policy\": policy.fragmentationAware.entries: required value"
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
                "policy.fragmentationAware.entries[0].weight",
                "policy.fragmentationAware.entries[1].pods",
                "policy.fragmentationAware.entries[1].devicesPerPod",
                "policy.fragmentationAware.entries[2]",
            ]
        );
        assert_eq!(
            errs[3].to_string(),
            "PodGroup \"scoring policy\": policy.fragmentationAware.entries[2]: invalid value \
             \"65536 × 65536\": pods × devicesPerPod must be at most 4294967295 devices"
        );

        let pg = ObjectRef::namespaced(ObjectKind::PodGroup, "ns", "train");
        let errs = mix(&[(0, 1, 1)]).validate_at(&pg, "spec.mix").unwrap_err();
        assert_eq!(errs[0].object, pg);
        assert_eq!(errs[0].field, "spec.mix.entries[0].weight");
        assert_eq!(ScoringPolicy::BestFit.validate(), Ok(()));
        assert!(
            ScoringPolicy::FragmentationAware(mix(&[]))
                .validate()
                .is_err()
        );
    }
}
