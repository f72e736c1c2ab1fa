//! The FGD paper's protocol: per seed, the pods shuffled, then pods drawn with
//! replacement from the same list appended until the requested GPU reaches 1.3 ×
//! capacity; scheduled one at a time; nothing leaves; after each attempt the arrived
//! GPU demand (failed pods count) and the allocated milli-GPU are recorded.

use gangpack::{GangOptions, Scheduler, ScoringPolicy};

use crate::cluster;
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

/// A replay's policy: one of the engine's scoring policies, the baselines
/// ([`ScoringPolicy::Random`], [`ScoringPolicy::DotProduct`]) included. The simulator
/// has no policy of its own: every pod is placed by the engine's `Scheduler`.
pub type Policy = ScoringPolicy;

/// The policy of a name (case-insensitive, `-`/`_` ignored): the engine's names and the
/// baselines' (`Random`, `DotProd`).
pub fn parse_policy(name: &str) -> Option<Policy> {
    ScoringPolicy::parse(name)
}

/// Every policy the protocol compares: the baselines (Random, DotProd), then the
/// engine's (BestFit, Spread, Stranding, FGD). GangAware is left out: one pod at a
/// time with no PodGroup it is its base policy, Stranding.
pub fn all_policies() -> Vec<Policy> {
    ScoringPolicy::BASELINES
        .iter()
        .chain(ScoringPolicy::NAMES.iter())
        .filter_map(|n| ScoringPolicy::parse(n))
        .filter(|p| !matches!(p, ScoringPolicy::GangAware(_)))
        .collect()
}

/// `policy` as a replay of `pods` with `seed` runs it: scoring against the typical
/// shapes of `pods` ([`crate::mix::typical`]) when it scores against observed ones
/// (the whole pod list, as FGD's simulator takes it), and drawing its random choices
/// (Random's, FGD's ties) from `seed` when it draws any.
pub fn engine_policy(policy: &ScoringPolicy, pods: &[PodRow], seed: u64) -> ScoringPolicy {
    let mut p = match policy.mix_source() {
        Some(gangpack::MixSource::Observed) => policy
            .clone()
            .with_mix(gangpack::MixSource::Given(crate::mix::typical(pods))),
        _ => policy.clone(),
    };
    match &mut p {
        ScoringPolicy::Random(s) if *s == 0 => *s = seed,
        ScoringPolicy::Fgd(f) if f.seed.is_none() => f.seed = Some(seed),
        _ => {}
    }
    p
}

/// Schedules `order` one pod at a time with `policy` on a fresh cluster of `nodes`:
/// one sample per attempt. A pod that does not fit is dropped (it never retries).
/// `seed` drives the policy's random choices (see [`engine_policy`]).
pub fn replay(
    nodes: &[NodeRow],
    pods: &[PodRow],
    order: &[usize],
    policy: &Policy,
    seed: u64,
) -> Result<Vec<Sample>, gangpack::SchedulerError> {
    let c = cluster::cluster(nodes).map_err(gangpack::SchedulerError::from)?;
    let options = GangOptions {
        policy: engine_policy(policy, pods, seed),
        ..GangOptions::default()
    };
    let mut s = Scheduler::new(c, options);
    let mut samples = Vec::with_capacity(order.len());
    let (mut arrived, mut allocated) = (0u64, 0u64);
    for (k, &i) in order.iter().enumerate() {
        let row = &pods[i];
        arrived += row.gpu_demand_milli();
        let name = format!("p{k:06}");
        let (pod, claim) = cluster::pod(row, &name);
        if let Some(claim) = claim {
            s.add_claim(claim)?;
        }
        s.add_pod(pod)?;
        let report = s.cycle();
        if cluster::placement(&report, &cluster::key(&name)).is_some() {
            allocated += row.gpu_demand_milli();
        } else {
            s.remove_pod(&cluster::key(&name))?;
        }
        samples.push(Sample { arrived, allocated });
    }
    Ok(samples)
}
