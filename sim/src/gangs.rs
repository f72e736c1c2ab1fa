//! Gangs over time: the trace's tasks arriving and leaving at their `creation_time` and
//! `deletion_time`, mixed with generated multi-node training gangs, scheduled by the
//! engine as PodGroups (all or nothing) or, for contrast, pod by pod as a scheduler
//! without gangs does.
//!
//! # The generated gangs
//!
//! [`GangMix`] documents the distribution; by default:
//!
//! - arrivals: a Poisson process over the window, at the rate that offers
//!   [`GangMix::load`] of the 8-GPU nodes' GPUs on average;
//! - size: 8 · 2^k GPUs for k = 0..6 (8 to 512 GPUs), with weights 32, 16, 8, 4, 2, 1, 1
//!   (each size up to 256 GPUs brings the same GPU demand; the mean gang is 32 GPUs);
//!   pods of 8 GPUs, 64, 80 or 88 cores and 256 to 320 GiB each (an 8-GPU node of the
//!   trace has 96 to 128 cores);
//! - run time: log-uniform between 1 and 24 hours, counted from the moment every pod
//!   runs;
//! - a third of the gangs of up to 64 GPUs must sit in one rack (8 nodes of one model,
//!   [`crate::cluster::RACK`]);
//! - a tenth of the gangs, of any size, are high-priority preemptors
//!   ([`PREEMPTOR_PRIORITY`]; drawn from a stream of their own, so the other draws are
//!   the same with or without them). The others have priority 0. The trace's tasks
//!   (production services, mostly latency-sensitive) have the preemptors' priority and
//!   preemption policy `Never`: they neither preempt nor are preempted.
//!
//! # Preemption
//!
//! A preemptor that does not fit is placed by the engine's preemption: as a PodGroup,
//! workload-aware preemption evicts lower-priority PodGroups whole (`disruptionMode:
//! all`), and only when the whole preemptor then fits. Pod by pod, each preemptor pod
//! preempts on its own and its victims are single pods. Either way a training gang that
//! loses a pod fails as a job: every pod of the victim's gang goes, and the gang waits
//! in the queue again to start over (as a Job controller recreates it). The replay
//! counts preemptions, gangs evicted and the GPU-hours of work they lose.
//!
//! # What is measured
//!
//! GPU allocation over time, each gang's wait (arrival to the moment all its pods
//! run; gangs still waiting at the end count with their wait so far), waits by size,
//! and the GPU-hours held by gangs that are only partly placed: GPUs allocated to
//! members of a gang that cannot start yet. The engine places a PodGroup all at once,
//! so this is zero by construction there — the replay measures it anyway, from the
//! bindings, rather than assuming it.
//!
//! # The schedulers
//!
//! Both modes use the engine (`Scheduler`, BestFit) for every placement. Pending gangs
//! wait in a queue outside the engine, higher priority first and by arrival among
//! equals (as kube-scheduler's active queue orders pods), and are tried in order
//! whenever something leaves, and on arrival: greedy, as kube-scheduler is (a later
//! gang that fits goes ahead of an earlier one that does not). A gang is tried only
//! when enough whole 8-GPU nodes are free for it (in one rack if it needs one), the
//! engine deciding the rest; a preemptor is always tried, since preemption may make
//! room.
//!
//! - [`Mode::Gang`]: a gang is a PodGroup with `minCount` = its pods (and a topology
//!   constraint on the rack label when it needs one rack).
//! - [`Mode::PodByPod`]: its pods are plain pods, each bound as soon as it fits; the gang
//!   runs when the last one is bound. A rack constraint cannot be said pod by pod and is
//!   dropped.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use gangpack::{
    DisruptionMode, GangOptions, NodeLoad, PlacementDecision, PodGroup, PreemptionPolicy,
    Scheduler, SchedulingPolicy, ScoringPolicy, TopologyConstraint,
};

use crate::cluster;
use crate::protocol::Rng;
use crate::trace::{NodeRow, PodRow};

/// GPUs of one gang pod (a whole 8-GPU node).
pub const GPUS_PER_POD: u32 = 8;

/// The cores a gang pod asks for, one drawn per gang.
const POD_CORES: [u64; 3] = [64, 80, 88];

/// The memory a gang pod asks for: this many GiB plus 16 GiB times a draw of 0 to 4.
const POD_MIN_GIB: u64 = 256;

/// The priority of preemptor gangs and of the trace's tasks; other gangs have 0.
pub const PREEMPTOR_PRIORITY: i32 = 1000;

/// The distribution of generated gangs.
#[derive(Clone, Debug, PartialEq)]
pub struct GangMix {
    /// Length of the window in hours.
    pub hours: u64,
    /// Offered gang load: mean GPUs asked by running gangs ÷ GPUs of the 8-GPU nodes.
    pub load: f64,
    /// Sizes in GPUs and their weights.
    pub sizes: Vec<(u32, u32)>,
    /// Run time bounds in hours (log-uniform between them).
    pub run_hours: (f64, f64),
    /// Share of the gangs of at most [`GangMix::rack_max_gpus`] that need one rack.
    pub rack_share: f64,
    /// The largest gang that may need one rack (a rack of 8-GPU nodes holds 64).
    pub rack_max_gpus: u32,
    /// Share of the gangs that are high-priority preemptors.
    pub preemptor_share: f64,
}

impl Default for GangMix {
    fn default() -> GangMix {
        GangMix {
            hours: 7 * 24,
            load: 0.7,
            sizes: vec![
                (8, 32),
                (16, 16),
                (32, 8),
                (64, 4),
                (128, 2),
                (256, 1),
                (512, 1),
            ],
            run_hours: (1.0, 24.0),
            rack_share: 1.0 / 3.0,
            rack_max_gpus: 64,
            preemptor_share: 0.1,
        }
    }
}

/// One generated gang.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gang {
    /// Arrival, seconds from the window's start.
    pub arrival: u64,
    /// Pods (of [`GPUS_PER_POD`] GPUs each).
    pub pods: u32,
    /// Cores per pod, in milli-CPU.
    pub cpu_milli: u64,
    /// Memory per pod, MiB.
    pub memory_mib: u64,
    /// Run time once started, seconds.
    pub run: u64,
    /// Whether all pods must share one rack.
    pub rack: bool,
    /// Its priority: [`PREEMPTOR_PRIORITY`] for a preemptor, else 0.
    pub priority: i32,
}

impl Gang {
    /// GPUs asked.
    pub fn gpus(&self) -> u32 {
        self.pods * GPUS_PER_POD
    }

    fn pod_row(&self) -> PodRow {
        PodRow {
            name: String::new(),
            cpu_milli: self.cpu_milli,
            memory_mib: self.memory_mib,
            num_gpu: GPUS_PER_POD,
            gpu_milli: 1000,
            gpu_spec: Vec::new(),
            times: None,
        }
    }
}

/// The gangs of `mix` for a cluster of `nodes`, drawn from `seed`.
#[allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss
)]
pub fn generate(mix: &GangMix, nodes: &[NodeRow], seed: u64) -> Vec<Gang> {
    let mut rng = Rng::new(seed ^ 0x6a09_e667_f3bc_c908);
    let mut preemptors = Rng::new(seed ^ 0xbb67_ae85_84ca_a73b);
    let unit = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let big_gpus: u64 = nodes
        .iter()
        .filter(|n| n.gpus == GPUS_PER_POD)
        .map(|n| u64::from(n.gpus))
        .sum();
    let weight_sum: u32 = mix.sizes.iter().map(|(_, w)| w).sum();
    let mean_size: f64 = mix
        .sizes
        .iter()
        .map(|&(s, w)| f64::from(s) * f64::from(w))
        .sum::<f64>()
        / f64::from(weight_sum.max(1));
    let (lo, hi) = mix.run_hours;
    let mean_run_h = if hi > lo {
        (hi - lo) / (hi / lo).ln()
    } else {
        lo
    };
    // Gangs per hour so that λ · mean size · mean run = load · GPUs.
    let rate = mix.load * big_gpus as f64 / (mean_size * mean_run_h).max(1e-9);
    let end = mix.hours * 3600;
    let mut t = 0.0f64;
    let mut out = Vec::new();
    loop {
        t += -(1.0 - unit(&mut rng)).ln() / rate * 3600.0;
        if t >= end as f64 {
            break;
        }
        let mut pick = (unit(&mut rng) * f64::from(weight_sum)) as u32;
        let mut gpus = mix.sizes.last().map_or(8, |s| s.0);
        for &(s, w) in &mix.sizes {
            if pick < w {
                gpus = s;
                break;
            }
            pick -= w;
        }
        let cores = POD_CORES[rng.below(POD_CORES.len())];
        let memory_gib = POD_MIN_GIB + 16 * rng.below(5) as u64;
        let run_h = lo * (hi / lo).powf(unit(&mut rng));
        let rack = gpus <= mix.rack_max_gpus && unit(&mut rng) < mix.rack_share;
        out.push(Gang {
            arrival: t as u64,
            pods: (gpus / GPUS_PER_POD).max(1),
            cpu_milli: cores * 1000,
            memory_mib: memory_gib * 1024,
            run: (run_h * 3600.0) as u64,
            rack,
            priority: if unit(&mut preemptors) < mix.preemptor_share {
                PREEMPTOR_PRIORITY
            } else {
                0
            },
        });
    }
    out
}

/// Reservation with backfill (what Slurm's backfill scheduler and Kueue's
/// `BestEffortFIFO` with reservations do about big jobs starving behind small ones).
///
/// When the first waiting gang (by the queue's order) has waited `after` seconds and
/// does not fit, it holds a reservation: the replay works out its *shadow time*, the earliest moment enough
/// whole 8-GPU nodes will be free for it if the running gangs end when their run times
/// say (the schedulers' time limits), and how many nodes beyond its need will be free
/// then. Another gang may start before it only if it ends by the shadow time, fits in
/// those spare nodes (EASY backfill) or has a higher priority. Trace tasks are placed as
/// they come either way.
/// The shadow time ignores the reserved gang's rack constraint and the trace tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reservation {
    /// Seconds a gang waits before it may reserve.
    pub after: u64,
}

/// A reservation in force: the shadow time, the nodes spare then, and the priority
/// of the gang holding it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shadow {
    at: u64,
    spare: u32,
    priority: i32,
}

/// How gangs are scheduled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// As PodGroups: all pods at once or none.
    Gang,
    /// Pod by pod, as a scheduler without gangs.
    PodByPod,
}

impl Mode {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Gang => "gangpack (PodGroup)",
            Mode::PodByPod => "pod by pod",
        }
    }
}

/// What one time-based replay measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The mode.
    pub mode: Mode,
    /// Window length, seconds.
    pub seconds: u64,
    /// Each gang's GPUs and time spent waiting in seconds (from its arrival, and from
    /// each eviction, to its next start or the window's end), in arrival order, with
    /// whether it runs or ran (not waiting at the end).
    pub waits: Vec<(u32, u64, bool)>,
    /// GPU-hours allocated to members of gangs that could not start yet.
    pub partial_gpu_hours: f64,
    /// GPU-hours allocated in all (trace tasks and gangs).
    pub allocated_gpu_hours: f64,
    /// Allocated GPU as % of capacity at the end of each hour.
    pub hourly_allocated_pct: Vec<f64>,
    /// GPU held by members of gangs that cannot start yet, as % of capacity, at the end
    /// of each hour.
    pub hourly_partial_pct: Vec<f64>,
    /// Of the free GPUs on 8-GPU nodes, the % that no gang pod can use (a GPU of the node
    /// taken, or too little CPU or memory left for the smallest gang pod), at the end of
    /// each hour.
    pub hourly_fragmented_pct: Vec<f64>,
    /// Trace tasks that arrived in the window, and how many of them were placed.
    pub tasks: (usize, usize),
    /// What preemption did.
    pub preemption: Preemptions,
}

/// What preemption did in one replay.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Preemptions {
    /// Preemptor gangs' GPUs, wait in seconds and whether they started (in arrival
    /// order; also in [`Timeline::waits`]).
    pub preemptor_waits: Vec<(u32, u64, bool)>,
    /// Placements that evicted something.
    pub preemptions: usize,
    /// Gangs evicted (each time a gang is evicted counts).
    pub gangs_evicted: usize,
    /// GPU-hours the evicted gangs had run and lose (they start over).
    pub lost_gpu_hours: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// A gang leaves (its run is over), unless it was evicted since it started: the
    /// number of its starts before this one.
    GangEnd(usize, u32),
    /// A trace task leaves.
    TaskEnd(usize),
    /// A trace task arrives.
    TaskArrive(usize),
    /// A gang arrives.
    GangArrive(usize),
}

struct Running {
    decision: PlacementDecision,
}

/// The replay state.
struct Sim<'a> {
    mode: Mode,
    s: Scheduler,
    /// The node names, in the node list's order.
    names: Vec<String>,
    /// Node-list positions by name.
    index: BTreeMap<String, usize>,
    /// What each node has free, read from the engine again only after a change on it
    /// (a placement or removal there; every node after a preemption or a PodGroup
    /// removed).
    loads: std::cell::RefCell<Vec<Option<NodeLoad>>>,
    /// Nodes whose `loads` entry is out of date.
    stale: std::cell::RefCell<BTreeSet<usize>>,
    racks: Vec<String>,
    gangs: &'a [Gang],
    /// Per gang: its pods bound so far (pod by pod always the first ones), with their
    /// decisions.
    bound: Vec<Vec<Running>>,
    started: Vec<Option<u64>>,
    /// Per gang: how often it was evicted (the epoch of its `GangEnd`).
    evicted: Vec<u32>,
    /// Per gang: since when it waits (its arrival, or its last eviction), and how long
    /// it waited before its starts.
    waiting_since: Vec<u64>,
    waited: Vec<u64>,
    queue: Vec<usize>,
    tasks: Vec<Option<Running>>,
    events: BinaryHeap<Reverse<(u64, Event)>>,
    capacity_milli: u64,
    reservation: Option<Reservation>,
    /// The reservation in force since the last queue pass: shadow time, spare nodes.
    reserved: Option<Shadow>,
    preemptions: usize,
    /// Milli-GPU × seconds of work lost by evicted gangs.
    lost_ms: u128,
}

/// Whether a pod of `row` (no model list) fits a node with `load` free now: its CPU
/// and memory, and its share on one device or its count of wholly free devices.
fn load_fits(load: &NodeLoad, row: &PodRow) -> bool {
    if load.cpu_milli < row.cpu_milli || load.memory_mib < row.memory_mib {
        return false;
    }
    let free = load.devices.iter().map(|(_, f)| *f);
    match row.num_gpu {
        0 => true,
        _ if row.gpu_milli < 1000 => free.clone().any(|f| f >= row.gpu_milli),
        n => free.filter(|&f| f == 1000).count() >= n as usize,
    }
}

impl Sim<'_> {
    /// Every node's free resources now (see `loads`).
    fn loads(&self) -> std::cell::Ref<'_, Vec<Option<NodeLoad>>> {
        let stale = std::mem::take(&mut *self.stale.borrow_mut());
        if !stale.is_empty() {
            let c = self.s.cluster();
            let mut loads = self.loads.borrow_mut();
            for n in stale {
                loads[n] = c.node_load(&self.names[n]);
            }
        }
        self.loads.borrow()
    }

    /// Whether a pod of `row` fits node `n` now.
    fn fits(&self, n: usize, row: &PodRow) -> bool {
        self.loads()
            .get(n)
            .and_then(Option::as_ref)
            .is_some_and(|l| load_fits(l, row))
    }

    /// Marks node `name`'s load out of date.
    fn touch(&self, name: &str) {
        if let Some(&n) = self.index.get(name) {
            self.stale.borrow_mut().insert(n);
        }
    }

    /// Marks every node's load out of date.
    fn touch_all(&self) {
        self.stale.borrow_mut().extend(0..self.names.len());
    }

    /// A scheduling cycle; the nodes it placed on (every node after a preemption)
    /// change.
    fn cycle(&mut self) -> gangpack::CycleReport {
        let report = self.s.cycle();
        for (_, r) in &report.units {
            match r {
                gangpack::UnitResult::Scheduled(d) => {
                    for b in &d.bindings {
                        self.touch(&b.node);
                    }
                }
                gangpack::UnitResult::Preempted(_) => self.touch_all(),
                _ => {}
            }
        }
        report
    }

    /// Removes a pod; its node changes.
    fn remove_pod(&mut self, key: &str) -> Result<(), gangpack::SchedulerError> {
        let node = self.s.pod(key).and_then(|p| p.node_name.clone());
        if let Some(n) = node {
            self.touch(&n);
        }
        self.s.remove_pod(key).map(drop)
    }

    /// Removes a PodGroup (any node may change).
    fn remove_group(&mut self, key: &str) -> Result<(), gangpack::SchedulerError> {
        self.touch_all();
        self.s.remove_group(key).map(drop)
    }

    /// The nodes a pod of `row` fits on now.
    fn fitting_nodes(&self, row: &PodRow) -> u32 {
        let n = (0..self.names.len()).filter(|&n| self.fits(n, row)).count();
        u32::try_from(n).unwrap_or(u32::MAX)
    }

    /// The cheap necessary condition: `pods` nodes where a pod of the gang fits now
    /// (in one rack when the gang asks for one).
    fn room_for(&self, gang: &Gang, pods: u32) -> bool {
        let row = gang.pod_row();
        if !gang.rack {
            return self.fitting_nodes(&row) >= pods;
        }
        let mut per_rack: BTreeMap<&str, u32> = BTreeMap::new();
        for (n, rack) in self.racks.iter().enumerate() {
            if self.fits(n, &row) {
                *per_rack.entry(rack.as_str()).or_default() += 1;
            }
        }
        per_rack.values().any(|&c| c >= pods)
    }

    fn pod_name(g: usize, p: u32) -> String {
        format!("gang{g:05}-{p:02}")
    }

    fn group_name(g: usize) -> String {
        format!("gang{g:05}")
    }

    fn pod(&self, g: usize, p: u32) -> gangpack::Pod {
        let mut pod = cluster::task_pod(&self.gangs[g].pod_row(), &Self::pod_name(g, p));
        pod.priority = self.gangs[g].priority;
        if self.mode == Mode::Gang {
            pod.scheduling_group = Some(Self::group_name(g));
        }
        pod
    }

    /// The gang of a gang pod's key (`openb/gang00012-03` → 12).
    fn gang_of(pod: &str) -> Option<usize> {
        let name = pod.rsplit('/').next()?;
        name.strip_prefix("gang")?.split('-').next()?.parse().ok()
    }

    /// The placement of the pod with key `key` in a cycle's report, and the gangs it
    /// evicted to get there.
    fn placed(
        report: &gangpack::CycleReport,
        key: &str,
    ) -> Option<(PlacementDecision, Vec<usize>)> {
        if let Some(d) = cluster::placement(report, key) {
            return Some((d.clone(), Vec::new()));
        }
        report.units.iter().find_map(|(_, r)| match r {
            gangpack::UnitResult::Preempted(p)
                if p.decision.bindings.iter().any(|b| b.pod == key) =>
            {
                let mut victims: Vec<usize> = p
                    .victims
                    .iter()
                    .flat_map(|v| v.pods.iter())
                    .filter_map(|pod| Self::gang_of(pod))
                    .collect();
                victims.sort_unstable();
                victims.dedup();
                Some((p.decision.clone(), victims))
            }
            _ => None,
        })
    }

    /// Gang `g` lost pods to a preemptor: all of its pods go, the work it did is lost,
    /// and it waits again (in arrival order).
    fn evict(&mut self, g: usize, now: u64) -> Result<(), gangpack::SchedulerError> {
        if let Some(start) = self.started[g].take() {
            self.lost_ms += u128::from(self.gangs[g].gpus()) * 1000 * u128::from(now - start);
            self.waiting_since[g] = now;
        }
        self.evicted[g] += 1;
        for r in std::mem::take(&mut self.bound[g]) {
            if self.mode == Mode::PodByPod {
                for b in &r.decision.bindings {
                    self.remove_pod(&b.pod)?;
                }
            }
        }
        if self.mode == Mode::Gang {
            self.remove_group(&cluster::key(&Self::group_name(g)))?;
        }
        self.enqueue(g);
        Ok(())
    }

    /// Records a placement of gang `g` that evicted `victims`.
    fn commit(
        &mut self,
        g: usize,
        victims: &[usize],
        now: u64,
    ) -> Result<(), gangpack::SchedulerError> {
        if !victims.is_empty() {
            self.preemptions += 1;
        }
        for &v in victims.iter().filter(|&&v| v != g) {
            self.evict(v, now)?;
        }
        Ok(())
    }

    /// Tries gang `g`; true when it started.
    fn try_gang(&mut self, g: usize, now: u64) -> Result<bool, gangpack::SchedulerError> {
        let gang = self.gangs[g].clone();
        let missing = gang.pods - u32::try_from(self.bound[g].len()).unwrap_or(0);
        let need = if self.mode == Mode::Gang { missing } else { 1 };
        // A preemptor may make room by preemption: the engine decides.
        let preemptor = gang.priority > 0;
        if !preemptor && !self.room_for(&gang, need) {
            return Ok(false);
        }
        match self.mode {
            Mode::Gang => {
                let mut group = PodGroup::new(
                    cluster::NAMESPACE,
                    Self::group_name(g),
                    SchedulingPolicy::Gang {
                        min_count: gang.pods,
                    },
                );
                if gang.rack {
                    group.topology.push(TopologyConstraint::new(cluster::RACK));
                }
                group.priority = Some(gang.priority);
                group.disruption_mode = DisruptionMode::All;
                self.s.add_group(group)?;
                for p in 0..gang.pods {
                    self.s.add_pod(self.pod(g, p))?;
                }
                let report = self.cycle();
                let first = cluster::key(&Self::pod_name(g, 0));
                if let Some((d, victims)) = Self::placed(&report, &first) {
                    self.commit(g, &victims, now)?;
                    for b in &d.bindings {
                        self.bound[g].push(Running {
                            decision: PlacementDecision {
                                bindings: vec![b.clone()],
                                ..PlacementDecision::default()
                            },
                        });
                    }
                } else {
                    self.remove_group(&cluster::key(&Self::group_name(g)))?;
                }
            }
            Mode::PodByPod => {
                // Members are tried in order and stay bound, so the bound ones are the
                // first ones.
                let first_unbound = u32::try_from(self.bound[g].len()).unwrap_or(u32::MAX);
                for p in first_unbound..gang.pods {
                    if !preemptor && !self.room_for(&gang, 1) {
                        break;
                    }
                    let key = cluster::key(&Self::pod_name(g, p));
                    self.s.add_pod(self.pod(g, p))?;
                    let report = self.cycle();
                    let Some((d, victims)) = Self::placed(&report, &key) else {
                        self.remove_pod(&key)?;
                        break;
                    };
                    self.commit(g, &victims, now)?;
                    self.bound[g].push(Running { decision: d });
                }
            }
        }
        let done = self.bound[g].len() == gang.pods as usize;
        if done {
            self.started[g] = Some(now);
            self.waited[g] += now - self.waiting_since[g];
            self.events.push(Reverse((
                now + gang.run,
                Event::GangEnd(g, self.evicted[g]),
            )));
        }
        Ok(done)
    }

    fn end_gang(&mut self, g: usize) -> Result<(), gangpack::SchedulerError> {
        for r in std::mem::take(&mut self.bound[g]) {
            for b in &r.decision.bindings {
                self.remove_pod(&b.pod)?;
            }
        }
        if self.mode == Mode::Gang {
            self.remove_group(&cluster::key(&Self::group_name(g)))?;
        }
        Ok(())
    }

    /// The reservation of the first waiting gang `g`, if it has waited long enough:
    /// its shadow time and the nodes spare then.
    fn shadow(&self, g: usize, now: u64) -> Option<Shadow> {
        let r = self.reservation?;
        let gang = &self.gangs[g];
        if now.saturating_sub(gang.arrival) < r.after {
            return None;
        }
        let mut free = self.fitting_nodes(&gang.pod_row());
        let mut ends: Vec<(u64, u32)> = (0..self.gangs.len())
            .filter_map(|o| {
                let start = self.started[o]?;
                let pods = u32::try_from(self.bound[o].len()).ok()?;
                (pods > 0).then_some((start + self.gangs[o].run, pods))
            })
            .collect();
        ends.sort_unstable();
        let shadow = |at, free: u32| Shadow {
            at,
            spare: free - gang.pods,
            priority: gang.priority,
        };
        if free >= gang.pods {
            return Some(shadow(now, free));
        }
        for (end, pods) in ends {
            free += pods;
            if free >= gang.pods {
                return Some(shadow(end, free));
            }
        }
        // Not even an empty cluster of running gangs frees enough: no reservation.
        None
    }

    /// Whether gang `g` may start now under the reservation `shadow`: it ends by the
    /// shadow time, fits in the spare nodes (using them up) or outranks the reserving
    /// gang.
    fn backfills(&self, g: usize, now: u64, shadow: &mut Option<Shadow>) -> bool {
        let Some(shadow) = shadow.as_mut() else {
            return true;
        };
        let gang = &self.gangs[g];
        if gang.priority > shadow.priority || now + gang.run <= shadow.at {
            return true;
        }
        if gang.pods <= shadow.spare {
            shadow.spare -= gang.pods;
            return true;
        }
        false
    }

    /// The queue's order: higher priority first, then arrival (as kube-scheduler's
    /// active queue sorts).
    fn queue_key(&self, g: usize) -> (Reverse<i32>, usize) {
        (Reverse(self.gangs[g].priority), g)
    }

    /// Puts gang `g` in the queue in its place.
    fn enqueue(&mut self, g: usize) {
        if self.queue.contains(&g) {
            return;
        }
        let key = self.queue_key(g);
        let at = self.queue.partition_point(|&q| self.queue_key(q) < key);
        self.queue.insert(at, g);
    }

    fn retry_queue(&mut self, now: u64) -> Result<(), gangpack::SchedulerError> {
        let queue = std::mem::take(&mut self.queue);
        let mut reserved: Option<Shadow> = None;
        for g in queue {
            if !self.backfills(g, now, &mut reserved) {
                self.queue.push(g);
                continue;
            }
            if !self.try_gang(g, now)? {
                if reserved.is_none() && self.queue.is_empty() {
                    reserved = self.shadow(g, now);
                }
                self.queue.push(g);
            }
        }
        // Gangs evicted during the pass went in by their key among those already back.
        let mut queue = std::mem::take(&mut self.queue);
        queue.sort_by_key(|&g| self.queue_key(g));
        queue.dedup();
        self.queue = queue;
        self.reserved = reserved;
        Ok(())
    }

    /// A gang arriving: its pods' claims are added (once; its pods are added at each
    /// try), and it is tried at once unless the reservation forbids it.
    fn arrive(&mut self, g: usize, now: u64) -> Result<(), gangpack::SchedulerError> {
        let row = self.gangs[g].pod_row();
        for p in 0..self.gangs[g].pods {
            if let Some(claim) = cluster::task_claim(&row, &Self::pod_name(g, p)) {
                self.s.add_claim(claim)?;
            }
        }
        let mut reserved = self.reserved;
        let ok = self.backfills(g, now, &mut reserved);
        self.reserved = reserved;
        if !(ok && self.try_gang(g, now)?) {
            self.enqueue(g);
        }
        Ok(())
    }

    fn allocated_milli(&self) -> u64 {
        self.loads()
            .iter()
            .flatten()
            .map(|l| {
                l.devices
                    .iter()
                    .map(|&(_, f)| u64::from(1000 - f.min(1000)))
                    .sum::<u64>()
            })
            .sum()
    }

    /// One hourly sample: allocated and held-by-partial-gangs milli-GPU as % of capacity,
    /// and the fragmentation.
    #[allow(clippy::cast_precision_loss)]
    fn sample(&self, allocated: u64, partial: u64) -> (f64, f64, f64) {
        let pct = |v: u64| 100.0 * v as f64 / self.capacity_milli.max(1) as f64;
        (pct(allocated), pct(partial), self.fragmented_pct())
    }

    fn partial_milli(&self) -> u64 {
        (0..self.gangs.len())
            .filter(|&g| self.started[g].is_none())
            .map(|g| self.bound[g].len() as u64 * u64::from(GPUS_PER_POD) * 1000)
            .sum()
    }

    /// Of the free GPUs on 8-GPU nodes, the % on nodes where the smallest gang pod of
    /// the mix (the fewest cores and the least memory, 8 GPUs) does not fit: a GPU
    /// taken, or CPU or memory short.
    #[allow(clippy::cast_precision_loss)]
    fn fragmented_pct(&self) -> f64 {
        let smallest = Gang {
            arrival: 0,
            pods: 1,
            cpu_milli: POD_CORES.iter().min().map_or(0, |c| c * 1000),
            memory_mib: POD_MIN_GIB * 1024,
            run: 0,
            rack: false,
            priority: 0,
        }
        .pod_row();
        let (mut free, mut stranded) = (0u64, 0u64);
        for load in self.loads().iter().flatten() {
            if load.devices.len() != GPUS_PER_POD as usize {
                continue;
            }
            let f: u64 = load.devices.iter().map(|&(_, g)| u64::from(g)).sum();
            free += f;
            if !load_fits(load, &smallest) {
                stranded += f;
            }
        }
        if free == 0 {
            0.0
        } else {
            100.0 * stranded as f64 / free as f64
        }
    }
}

/// Replays `tasks` (those with times; the window is the last `hours` of the trace,
/// tasks alive at its start arriving at once) and `gangs` on `nodes` in `mode`, with
/// an optional reservation for gangs that wait.
#[allow(clippy::cast_precision_loss)]
pub fn replay(
    nodes: &[NodeRow],
    tasks: &[PodRow],
    gangs: &[Gang],
    hours: u64,
    mode: Mode,
    reservation: Option<Reservation>,
) -> Result<Timeline, gangpack::SchedulerError> {
    let setup = Setup {
        mode,
        reservation,
        policy: ScoringPolicy::BestFit,
    };
    replay_setup(nodes, tasks, gangs, hours, &setup)
}

/// [`replay`] with the engine's scoring policy of `setup` (Stranding and FGD with the
/// mix the scheduler observes: the running and pending tasks and gang pods).
#[allow(clippy::cast_precision_loss)]
pub fn replay_setup(
    nodes: &[NodeRow],
    tasks: &[PodRow],
    gangs: &[Gang],
    hours: u64,
    setup: &Setup,
) -> Result<Timeline, gangpack::SchedulerError> {
    let (mode, reservation) = (setup.mode, setup.reservation);
    let c = cluster::cluster(nodes).map_err(gangpack::SchedulerError::from)?;
    let options = GangOptions {
        policy: setup.policy.clone(),
        ..GangOptions::default()
    };
    let mut sim = Sim {
        mode,
        s: Scheduler::new(c, options),
        names: nodes.iter().map(|n| n.name.clone()).collect(),
        index: nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.clone(), i))
            .collect(),
        loads: std::cell::RefCell::new(vec![None; nodes.len()]),
        stale: std::cell::RefCell::new((0..nodes.len()).collect()),
        racks: cluster::racks(nodes),
        gangs,
        bound: (0..gangs.len()).map(|_| Vec::new()).collect(),
        started: vec![None; gangs.len()],
        evicted: vec![0; gangs.len()],
        waiting_since: gangs.iter().map(|g| g.arrival).collect(),
        waited: vec![0; gangs.len()],
        queue: Vec::new(),
        tasks: (0..tasks.len()).map(|_| None).collect(),
        events: BinaryHeap::new(),
        capacity_milli: nodes.iter().map(|n| u64::from(n.gpus) * 1000).sum(),
        reservation,
        reserved: None,
        preemptions: 0,
        lost_ms: 0,
    };
    let seconds = hours * 3600;
    let trace_end = tasks
        .iter()
        .filter_map(|t| t.times)
        .map(|t| t.1)
        .max()
        .unwrap_or(0);
    let start = trace_end.saturating_sub(seconds);
    let mut arrived_tasks = 0;
    for (i, t) in tasks.iter().enumerate() {
        let Some((created, deleted)) = t.times else {
            continue;
        };
        if deleted <= start || created >= start + seconds {
            continue;
        }
        arrived_tasks += 1;
        let at = created.saturating_sub(start);
        sim.events.push(Reverse((at, Event::TaskArrive(i))));
        sim.events.push(Reverse((
            deleted.saturating_sub(start).max(at),
            Event::TaskEnd(i),
        )));
    }
    for (g, gang) in gangs.iter().enumerate() {
        sim.events
            .push(Reverse((gang.arrival, Event::GangArrive(g))));
    }
    let mut placed_tasks = 0;
    let (mut last_t, mut alloc_ms, mut partial_ms) = (0u64, 0u128, 0u128);
    // (allocated %, held by partial gangs %, fragmented %) at the end of each hour.
    let mut hourly: Vec<(f64, f64, f64)> = Vec::new();
    while let Some(&Reverse((t, _))) = sim.events.peek() {
        if t >= seconds {
            break;
        }
        // Integrate the state over [last_t, t), hour marks on the way.
        let (alloc, partial) = (sim.allocated_milli(), sim.partial_milli());
        while (hourly.len() as u64 + 1) * 3600 <= t {
            hourly.push(sim.sample(alloc, partial));
        }
        alloc_ms += u128::from(alloc) * u128::from(t - last_t);
        partial_ms += u128::from(partial) * u128::from(t - last_t);
        last_t = t;
        let mut freed = false;
        let mut arrived_gangs = Vec::new();
        while let Some(&Reverse((t2, e))) = sim.events.peek() {
            if t2 != t {
                break;
            }
            sim.events.pop();
            match e {
                Event::GangEnd(g, epoch) => {
                    // The end of a run that an eviction cut short is not an end.
                    if epoch == sim.evicted[g] && sim.started[g].is_some() {
                        sim.end_gang(g)?;
                        freed = true;
                    }
                }
                Event::TaskEnd(i) => {
                    if let Some(r) = sim.tasks[i].take() {
                        for b in &r.decision.bindings {
                            sim.remove_pod(&b.pod)?;
                        }
                        freed = true;
                    }
                }
                Event::TaskArrive(i) => {
                    let name = format!("task{i:05}");
                    let key = cluster::key(&name);
                    let (mut pod, claim) = cluster::pod(&tasks[i], &name);
                    pod.priority = PREEMPTOR_PRIORITY;
                    pod.preemption_policy = PreemptionPolicy::Never;
                    if let Some(claim) = claim {
                        sim.s.add_claim(claim)?;
                    }
                    sim.s.add_pod(pod)?;
                    let report = sim.cycle();
                    if let Some(d) = cluster::placement(&report, &key) {
                        sim.tasks[i] = Some(Running {
                            decision: d.clone(),
                        });
                        placed_tasks += 1;
                    } else {
                        // A task that finds no room is dropped, as in the protocol.
                        sim.remove_pod(&key)?;
                    }
                }
                Event::GangArrive(g) => arrived_gangs.push(g),
            }
        }
        if freed {
            sim.retry_queue(t)?;
        }
        if !freed && sim.reservation.is_some() && !sim.queue.is_empty() {
            // A waiting gang may have reached its reservation age: recompute.
            let head = sim.queue[0];
            if sim.reserved.is_none() {
                sim.reserved = sim.shadow(head, t);
            }
        }
        for g in arrived_gangs {
            sim.arrive(g, t)?;
        }
    }
    let (alloc, partial) = (sim.allocated_milli(), sim.partial_milli());
    while (hourly.len() as u64) < hours {
        hourly.push(sim.sample(alloc, partial));
    }
    alloc_ms += u128::from(alloc) * u128::from(seconds.saturating_sub(last_t));
    partial_ms += u128::from(partial) * u128::from(seconds.saturating_sub(last_t));
    let waits: Vec<(u32, u64, bool)> = gangs
        .iter()
        .enumerate()
        .filter(|(_, g)| g.arrival < seconds)
        .map(|(i, g)| match sim.started[i] {
            // An evicted gang's wait adds its waits before each start.
            Some(_) => (g.gpus(), sim.waited[i], true),
            None => (
                g.gpus(),
                sim.waited[i] + (seconds - sim.waiting_since[i]),
                false,
            ),
        })
        .collect();
    let preemptor_waits = waits
        .iter()
        .zip(gangs)
        .filter(|(_, g)| g.priority > 0)
        .map(|(w, _)| *w)
        .collect();
    let lost_gpu_hours = sim.lost_ms as f64 / 1000.0 / 3600.0;
    let to_hours = |ms: u128| ms as f64 / 1000.0 / 3600.0;
    Ok(Timeline {
        mode,
        seconds,
        waits,
        partial_gpu_hours: to_hours(partial_ms),
        allocated_gpu_hours: to_hours(alloc_ms),
        hourly_allocated_pct: hourly.iter().map(|h| h.0).collect(),
        hourly_partial_pct: hourly.iter().map(|h| h.1).collect(),
        hourly_fragmented_pct: hourly.iter().map(|h| h.2).collect(),
        tasks: (arrived_tasks, placed_tasks),
        preemption: Preemptions {
            preemptor_waits,
            preemptions: sim.preemptions,
            gangs_evicted: sim.evicted.iter().map(|&e| e as usize).sum(),
            lost_gpu_hours,
        },
    })
}

/// Median, 95th percentile and maximum of `v` (nearest rank), in the unit of `v`.
pub fn quantiles(v: &mut [u64]) -> Option<(u64, u64, u64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let rank = |q: f64| {
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[i]
    };
    Some((rank(0.5), rank(0.95), v[v.len() - 1]))
}

/// One scheduler configuration of a gang run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Setup {
    /// The mode.
    pub mode: Mode,
    /// Reservation with backfill, if any.
    pub reservation: Option<Reservation>,
    /// The engine's scoring policy.
    pub policy: ScoringPolicy,
}

impl Setup {
    /// Its label in tables and plots (the policy named unless it is BestFit).
    pub fn label(&self) -> String {
        let mut label = match self.reservation {
            None => self.mode.name().to_owned(),
            Some(r) => format!(
                "{} + reservation after {} h",
                self.mode.name(),
                r.after / 3600
            ),
        };
        if self.policy != ScoringPolicy::BestFit {
            label.push_str(", ");
            label.push_str(self.policy.name());
        }
        label
    }
}

/// Every (setup, seed) replay on `threads` threads, in (setup, seed) order.
pub fn run_matrix(
    nodes: &[NodeRow],
    tasks: &[PodRow],
    mix: &GangMix,
    setups: &[Setup],
    seeds: &[u64],
    threads: usize,
) -> Result<Vec<(Setup, u64, Timeline)>, crate::run::SimError> {
    let jobs: Vec<(Setup, u64)> = setups
        .iter()
        .flat_map(|s| seeds.iter().map(move |&seed| (s.clone(), seed)))
        .collect();
    let results = crate::run::on_threads(&jobs, threads, |(setup, seed)| {
        let gangs = generate(mix, nodes, *seed);
        replay_setup(nodes, tasks, &gangs, mix.hours, setup)
    });
    jobs.into_iter()
        .zip(results)
        .map(|((setup, seed), r)| {
            let engine = |e: String| {
                crate::run::SimError::Engine(format!("{} seed {seed}: {e}", setup.label()))
            };
            match r {
                Some(Ok(t)) => Ok((setup, seed, t)),
                Some(Err(e)) => Err(engine(e.to_string())),
                None => Err(engine(
                    "the replay did not finish (a thread panicked)".into(),
                )),
            }
        })
        .collect()
}

/// The table over every seed of each setup: gangs, how many never started, waits
/// (median, p95, max, in hours) of all gangs and by size, GPU-hours held by partly
/// placed gangs, mean GPU allocation and mean fragmentation of the 8-GPU nodes.
#[allow(clippy::cast_precision_loss)]
pub fn table(runs: &[(Setup, u64, Timeline)]) -> String {
    use std::fmt::Write as _;
    let mut labels: Vec<String> = Vec::new();
    for (s, _, _) in runs {
        if !labels.contains(&s.label()) {
            labels.push(s.label());
        }
    }
    let h = |s: u64| s as f64 / 3600.0;
    let q = |v: &mut Vec<u64>| {
        quantiles(v).map_or("-".to_owned(), |(m, p, x)| {
            format!("{:.1} / {:.1} / {:.1}", h(m), h(p), h(x))
        })
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "gang waits in hours (median / p95 / max, every seed pooled; a wait runs from arrival, and from each eviction, to the next start or the window's end)"
    );
    let _ = writeln!(
        out,
        "{:<44} {:>6} {:>9} {:>20} {:>20} {:>20} {:>14} {:>8} {:>8}",
        "scheduler",
        "gangs",
        "waiting",
        "all gangs",
        "<= 32 GPUs",
        ">= 256 GPUs",
        "partial GPU-h",
        "alloc %",
        "frag %"
    );
    for label in &labels {
        let mine = of_setup(runs, label);
        let waits: Vec<(u32, u64, bool)> =
            mine.iter().flat_map(|t| t.waits.iter().copied()).collect();
        let mut all: Vec<u64> = waits.iter().map(|w| w.1).collect();
        let mut small: Vec<u64> = waits.iter().filter(|w| w.0 <= 32).map(|w| w.1).collect();
        let mut big: Vec<u64> = waits.iter().filter(|w| w.0 >= 256).map(|w| w.1).collect();
        let unstarted = waits.iter().filter(|w| !w.2).count();
        let partial: f64 =
            mine.iter().map(|t| t.partial_gpu_hours).sum::<f64>() / mine.len().max(1) as f64;
        let mean = |f: &dyn Fn(&Timeline) -> &Vec<f64>| {
            let v: Vec<f64> = mine.iter().flat_map(|t| f(t).iter().copied()).collect();
            v.iter().sum::<f64>() / v.len().max(1) as f64
        };
        let alloc = mean(&|t| &t.hourly_allocated_pct);
        let frag = mean(&|t| &t.hourly_fragmented_pct);
        let _ = writeln!(
            out,
            "{:<44} {:>6} {:>9} {:>20} {:>20} {:>20} {:>14.1} {:>8.1} {:>8.1}",
            label,
            waits.len(),
            unstarted,
            q(&mut all),
            q(&mut small),
            q(&mut big),
            partial,
            alloc,
            frag
        );
    }
    let _ = writeln!(
        out,
        "(partial GPU-h: GPU-hours allocated to gangs not yet running, mean per seed; alloc %: GPU allocated, hourly mean; frag %: free GPUs of 8-GPU nodes no gang pod can use, hourly mean)"
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<44} {:>10} {:>20} {:>12} {:>13} {:>10}",
        "preemption", "preemptors", "preemptor waits", "preemptions", "gangs evicted", "lost GPU-h"
    );
    for label in &labels {
        let mine = of_setup(runs, label);
        let seeds = mine.len().max(1) as f64;
        let mut waits: Vec<u64> = mine
            .iter()
            .flat_map(|t| t.preemption.preemptor_waits.iter().map(|w| w.1))
            .collect();
        let per_seed =
            |f: &dyn Fn(&Timeline) -> f64| mine.iter().map(|t| f(t)).sum::<f64>() / seeds;
        let _ = writeln!(
            out,
            "{:<44} {:>10} {:>20} {:>12.1} {:>13.1} {:>10.1}",
            label,
            waits.len(),
            q(&mut waits),
            per_seed(&|t| t.preemption.preemptions as f64),
            per_seed(&|t| t.preemption.gangs_evicted as f64),
            per_seed(&|t| t.preemption.lost_gpu_hours)
        );
    }
    let _ = writeln!(
        out,
        "(preemptors: high-priority gangs, every seed pooled, their waits in hours as above; preemptions, gangs evicted and the GPU-hours of work they lose: mean per seed)"
    );
    out
}

/// The timelines of the setup labelled `label`.
fn of_setup<'a>(runs: &'a [(Setup, u64, Timeline)], label: &str) -> Vec<&'a Timeline> {
    runs.iter()
        .filter(|(s, _, _)| s.label() == label)
        .map(|(_, _, t)| t)
        .collect()
}

/// One row per (scheduler, seed, hour):
/// `scheduler,seed,hour,allocated_pct,held_idle_pct,fragmented_pct` (held idle: by
/// gangs not running yet).
pub fn csv(runs: &[(Setup, u64, Timeline)]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("scheduler,seed,hour,allocated_pct,held_idle_pct,fragmented_pct\n");
    for (s, seed, t) in runs {
        for (hour, ((a, p), f)) in t
            .hourly_allocated_pct
            .iter()
            .zip(&t.hourly_partial_pct)
            .zip(&t.hourly_fragmented_pct)
            .enumerate()
        {
            let _ = writeln!(
                out,
                "{},{seed},{},{a:.3},{p:.3},{f:.3}",
                s.label(),
                hour + 1
            );
        }
    }
    out
}

/// An SVG plot over the hours of the window, the median over seeds of each scheduler:
/// GPU allocated to gangs and tasks that run (solid), and GPU held idle by gangs that
/// cannot start yet (dashed), as % of capacity.
#[allow(clippy::cast_precision_loss)]
pub fn svg(runs: &[(Setup, u64, Timeline)]) -> String {
    use std::fmt::Write as _;
    let hours = runs
        .iter()
        .map(|r| r.2.hourly_allocated_pct.len())
        .max()
        .unwrap_or(0);
    let frame = crate::report::Frame {
        width: 900.0,
        height: 460.0,
        left: 60.0,
        right: 330.0,
        top: 40.0,
        bottom: 50.0,
        x_max: hours.max(1) as f64,
    };
    let x = |hr: f64| frame.x(hr);
    let y = |u: f64| frame.y(u);
    let step = if hours > 48 { 24 } else { 6 };
    let mut out = frame.open(
        "GPU allocation over time with gangs",
        "GPU % running work (solid) and held idle by partly placed gangs (dashed)",
        (0..=hours).step_by(step),
        "hours",
        None,
    );
    let mut labels: Vec<String> = Vec::new();
    for (s, _, _) in runs {
        if !labels.contains(&s.label()) {
            labels.push(s.label());
        }
    }
    for (i, label) in labels.iter().enumerate() {
        let colour = crate::report::COLOURS[i % crate::report::COLOURS.len()];
        let mine = of_setup(runs, label);
        for (series, dash) in [(0, ""), (1, r#" stroke-dasharray="5 4""#)] {
            let points: Vec<String> = (0..hours)
                .filter_map(|hr| {
                    let mut v: Vec<f64> = mine
                        .iter()
                        .filter_map(|t| {
                            let held = *t.hourly_partial_pct.get(hr)?;
                            let allocated = *t.hourly_allocated_pct.get(hr)?;
                            Some(if series == 0 { allocated - held } else { held })
                        })
                        .collect();
                    (!v.is_empty()).then(|| {
                        format!(
                            "{:.1},{:.1}",
                            x(hr as f64 + 1.0),
                            y(crate::report::median(&mut v))
                        )
                    })
                })
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="1.5"{dash}/>"#,
                points.join(" ")
            );
        }
        frame.legend(&mut out, i, colour, label);
    }
    out.push_str("</svg>\n");
    out
}
