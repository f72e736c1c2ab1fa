//! The FGD paper's protocol: per seed, the pods shuffled, then pods drawn with
//! replacement from the same list appended until the requested GPU reaches 1.3 ×
//! capacity; scheduled one at a time; nothing leaves; after each attempt the arrived
//! GPU demand (failed pods count) and the allocated milli-GPU are recorded.

use gangpack::{GangOptions, Scheduler, ScoringPolicy};

use crate::baseline::{Baseline, Mirror};
use crate::cluster;
use crate::fgd::Fgd;
use crate::stranding::Stranding;
use crate::trace::{NodeRow, PodRow};

/// A small, fixed pseudo-random generator (SplitMix64): the same sequence for a seed
/// on every platform.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), without modulo bias.
    pub fn below(&mut self, n: usize) -> usize {
        let n64 = n as u64;
        let zone = u64::MAX - u64::MAX % n64;
        loop {
            let x = self.next_u64();
            if x < zone {
                return usize::try_from(x % n64).unwrap_or(0);
            }
        }
    }
}

/// The arrival order of one seed: the pods sorted by name and shuffled (Fisher–Yates),
/// then pods drawn with replacement appended while the total requested GPU is below
/// `inflation` × `capacity_milli`. Indices into `pods`.
pub fn arrivals(pods: &[PodRow], capacity_milli: u64, inflation: f64, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..pods.len()).collect();
    order.sort_by(|&a, &b| pods[a].name.cmp(&pods[b].name));
    let mut rng = Rng::new(seed);
    for i in (1..order.len()).rev() {
        let j = rng.below(i + 1);
        order.swap(i, j);
    }
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let target = (capacity_milli as f64 * inflation).ceil() as u64;
    let mut requested: u64 = order.iter().map(|&i| pods[i].gpu_demand_milli()).sum();
    if pods.iter().any(|p| p.gpu_demand_milli() > 0) {
        while requested < target {
            let i = rng.below(pods.len());
            requested += pods[i].gpu_demand_milli();
            order.push(i);
        }
    }
    order
}

/// One attempt's record: GPU demand arrived so far and GPU allocated, in milli-GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Arrived demand, failed pods included.
    pub arrived: u64,
    /// Allocated after the attempt.
    pub allocated: u64,
}

/// How a replay chooses nodes: the engine's own scoring, or a baseline that picks the
/// node itself (and lets the engine place the pod there).
#[derive(Clone, Debug, PartialEq)]
pub enum Policy {
    /// One of the engine's scoring policies.
    Engine(ScoringPolicy),
    /// A baseline of the paper ([`crate::baseline`]).
    Baseline(Baseline),
    /// FGD re-implemented as a baseline ([`crate::fgd`]).
    Fgd,
    /// gangpack's stranding policy for GPU sharing ([`crate::stranding`]).
    Stranding,
}

impl Policy {
    /// Its name: the engine's policy names, `Random`, `DotProd`.
    pub fn name(&self) -> &'static str {
        match self {
            Policy::Engine(p) => p.name(),
            Policy::Baseline(Baseline::Random) => "Random",
            Policy::Baseline(Baseline::DotProd) => "DotProd",
            Policy::Fgd => "FGD",
            Policy::Stranding => "Stranding",
        }
    }

    /// The policy of a name (case-insensitive, `-`/`_` ignored).
    pub fn parse(name: &str) -> Option<Policy> {
        let flat: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect::<String>()
            .to_ascii_lowercase();
        match flat.as_str() {
            "random" => Some(Policy::Baseline(Baseline::Random)),
            "dotprod" => Some(Policy::Baseline(Baseline::DotProd)),
            "fgd" => Some(Policy::Fgd),
            "stranding" => Some(Policy::Stranding),
            _ => ScoringPolicy::parse(&flat).map(Policy::Engine),
        }
    }

    /// Every policy: the baselines (Random, DotProd, FGD), the engine's policies, then
    /// the stranding policy.
    pub fn all() -> Vec<Policy> {
        let mut v = vec![
            Policy::Baseline(Baseline::Random),
            Policy::Baseline(Baseline::DotProd),
            Policy::Fgd,
        ];
        v.extend(
            ScoringPolicy::NAMES
                .iter()
                .filter_map(|n| ScoringPolicy::parse(n))
                .map(Policy::Engine),
        );
        v.push(Policy::Stranding);
        v
    }
}

/// Schedules `order` one pod at a time with `policy` on a fresh cluster of `nodes`:
/// one sample per attempt. A pod that does not fit is dropped (it never retries).
/// `seed` drives the Random baseline's choices.
pub fn replay(
    nodes: &[NodeRow],
    pods: &[PodRow],
    order: &[usize],
    policy: &Policy,
    seed: u64,
) -> Result<Vec<Sample>, gangpack::SchedulerError> {
    let c = cluster::cluster(nodes).map_err(gangpack::SchedulerError::from)?;
    let scoring = match policy {
        Policy::Engine(p) => p.clone(),
        Policy::Baseline(_) | Policy::Fgd | Policy::Stranding => ScoringPolicy::BestFit,
    };
    let mut stranding = matches!(policy, Policy::Stranding).then(|| Stranding::new(pods, nodes));
    let mut fgd = matches!(policy, Policy::Fgd).then(|| Fgd::new(pods));
    let options = GangOptions {
        policy: scoring,
        ..GangOptions::default()
    };
    let mut s = Scheduler::new(c, options);
    let mut mirror = Mirror::new(nodes);
    let mut rng = Rng::new(seed ^ 0x5eed_0fba_5e11_e500);
    let mut samples = Vec::with_capacity(order.len());
    let (mut arrived, mut allocated) = (0u64, 0u64);
    for (k, &i) in order.iter().enumerate() {
        let row = &pods[i];
        arrived += row.gpu_demand_milli();
        let name = format!("p{k:06}");
        let (mut pod, mut claim) = cluster::pod(row, &name);
        let pinned = match (policy, stranding.as_mut(), fgd.as_mut()) {
            (Policy::Baseline(b), _, _) => Some(mirror.choose(*b, row, &mut rng)),
            (_, Some(st), _) => Some(st.choose(&mirror, row)),
            (_, _, Some(f)) => Some(f.choose(&mirror, row, &mut rng).map(|c| {
                if let (Some(g), Some(claim)) = (c.gpu, claim.as_mut()) {
                    cluster::pin_gpu(claim, g);
                }
                c.node
            })),
            _ => None,
        };
        if let Some(choice) = pinned {
            let Some(n) = choice else {
                samples.push(Sample { arrived, allocated });
                continue;
            };
            pod.node_selector
                .insert(cluster::HOSTNAME.into(), mirror.name(n).to_owned());
        }
        if let Some(claim) = claim {
            s.add_claim(claim)?;
        }
        s.add_pod(pod)?;
        let report = s.cycle();
        if let Some(d) = cluster::placement(&report, &cluster::key(&name)) {
            allocated += row.gpu_demand_milli();
            if matches!(
                policy,
                Policy::Baseline(_) | Policy::Fgd | Policy::Stranding
            ) {
                mirror.commit(row, d);
            }
        } else {
            s.remove_pod(&cluster::key(&name))?;
        }
        samples.push(Sample { arrived, allocated });
    }
    Ok(samples)
}
