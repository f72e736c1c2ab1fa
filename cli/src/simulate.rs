//! `gangpack simulate`: the FGD paper's trace protocol over gangpack's engine
//! (`gangpack-sim`), every policy side by side.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use gangpack_cli::Policy;
use gangpack_sim::protocol as sim;
use gangpack_sim::report;
use gangpack_sim::run::{self, Done, SimError};

/// `gangpack simulate` arguments.
#[derive(Debug, Args)]
pub(crate) struct SimulateArgs {
    /// A pod list (`openb_pod_list_*.csv`) or a folder of them; repeatable.
    #[arg(long = "trace", value_name = "FILE|DIR", required = true)]
    traces: Vec<PathBuf>,
    /// The node list [default: `openb_node_list_gpu_node.csv` beside each pod list].
    #[arg(long, value_name = "FILE")]
    nodes: Option<PathBuf>,
    /// Seeds: `42..51` (inclusive), `42,43` or `42`.
    #[arg(long, default_value = "42..51")]
    seeds: String,
    /// Requested GPU the arrivals are inflated to, as a multiple of capacity.
    #[arg(long, default_value_t = 1.3)]
    inflation: f64,
    /// Write one row per (workload, policy, seed, arrived %) here:
    /// `workload,policy,seed,arrived_pct,allocated_pct`.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write an SVG plot of unallocated % against arrived % here (one per workload:
    /// `NAME.svg`, or `NAME-<workload>.svg` for several).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// The policies to run, comma-separated: Random, DotProd (the FGD paper's
    /// baselines), BestFit, Spread, Stranding, FGD (every one the engine's own, the
    /// baselines included) [default: all; the global `--policy` runs one].
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    policies: Vec<String>,
    /// Threads [default: the machine's cores].
    #[arg(long)]
    threads: Option<usize>,
    /// Gangs over time instead of the protocol: the trace's tasks arriving and leaving
    /// at their times (the last `--hours` of the trace) mixed with generated multi-node
    /// training gangs (`gangpack_sim::gangs`), scheduled as PodGroups, as PodGroups with
    /// reservation and backfill, and pod by pod. `--csv` then writes
    /// `scheduler,seed,hour,allocated_pct,held_idle_pct,fragmented_pct` and `--svg`
    /// the GPU running work and held idle over time.
    #[arg(long)]
    gangs: bool,
    /// Gang mode: the window in hours.
    #[arg(long, default_value_t = 168, requires = "gangs")]
    hours: u64,
    /// Gang mode: the offered gang load, a share of the 8-GPU nodes' GPUs.
    #[arg(long, default_value_t = 0.9, requires = "gangs")]
    load: f64,
    /// Gang mode: hours a gang waits before it reserves (0: no reservation row).
    #[arg(long, default_value_t = 1, requires = "gangs")]
    reserve_after: u64,
    /// Gang mode: the share of gangs that are high-priority preemptors (0: none).
    #[arg(long, default_value_t = 0.1, requires = "gangs")]
    preemptors: f64,
}

/// `gangpack simulate --gangs`: the time-based replay with gangs, every scheduler
/// setup side by side.
/// With `policies` (the global `--policy` or `--policies`), one PodGroups row per
/// policy; without, PodGroups, with reservation and pod by pod under BestFit.
fn simulate_gangs(
    args: &SimulateArgs,
    policies: &[gangpack::ScoringPolicy],
) -> Result<String, SimError> {
    use gangpack_sim::gangs::{self, GangMix, Mode, Reservation, Setup};
    if !(args.load.is_finite() && args.load > 0.0) {
        return Err(SimError::Usage(format!(
            "--load {}: expected a positive number",
            args.load
        )));
    }
    if args.hours == 0 {
        return Err(SimError::Usage("--hours 0: expected at least 1".into()));
    }
    if !(0.0..=1.0).contains(&args.preemptors) {
        return Err(SimError::Usage(format!(
            "--preemptors {}: expected a share between 0 and 1",
            args.preemptors
        )));
    }
    let seeds = run::parse_seeds(&args.seeds)?;
    let mut workloads = run::load(&args.traces, args.nodes.as_deref())?;
    if workloads.len() != 1 {
        return Err(SimError::Usage(format!(
            "--gangs replays one pod list; {} given",
            workloads.len()
        )));
    }
    let w = workloads.remove(0);
    let mix = GangMix {
        hours: args.hours,
        load: args.load,
        preemptor_share: args.preemptors,
        ..GangMix::default()
    };
    let best_fit = gangpack::ScoringPolicy::BestFit;
    let mut setups: Vec<Setup> = policies
        .iter()
        .map(|p| Setup {
            mode: Mode::Gang,
            reservation: None,
            policy: p.clone(),
        })
        .collect();
    if policies.is_empty() {
        setups.push(Setup {
            mode: Mode::Gang,
            reservation: None,
            policy: best_fit.clone(),
        });
        if args.reserve_after > 0 {
            setups.push(Setup {
                mode: Mode::Gang,
                reservation: Some(Reservation {
                    after: args.reserve_after.saturating_mul(3600),
                }),
                policy: best_fit.clone(),
            });
        }
        setups.push(Setup {
            mode: Mode::PodByPod,
            reservation: None,
            policy: best_fit,
        });
    }
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let started = std::time::Instant::now();
    let runs = gangs::run_matrix(&w.nodes, &w.pods, &mix, &setups, &seeds, threads)?;
    if let Some(path) = &args.csv {
        std::fs::write(path, gangs::csv(&runs)).map_err(|e| SimError::Io(path.clone(), e))?;
    }
    if let Some(path) = &args.svg {
        std::fs::write(path, gangs::svg(&runs)).map_err(|e| SimError::Io(path.clone(), e))?;
    }
    let mut out = format!(
        "{}: {} h, gang load {:.2} of the 8-GPU nodes, seeds {}\n",
        w.name, args.hours, args.load, args.seeds
    );
    out.push_str(&gangs::table(&runs));
    let _ = write!(
        out,
        "\n{} replays ({} schedulers x {} seeds) in {:.1} s on {threads} threads\n",
        runs.len(),
        setups.len(),
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(out)
}

/// Runs it: the table at 100 % arrived on stdout, progress on stderr (a TTY only).
/// `policy` is the global `--policy` (one policy; without it, every policy).
pub(crate) fn simulate(args: &SimulateArgs, policy: Option<Policy>) -> Result<String, SimError> {
    let policies: Vec<sim::Policy> = match (policy, args.policies.is_empty()) {
        (Some(_), false) => {
            return Err(SimError::Usage(
                "--policy and --policies: give one of them".into(),
            ));
        }
        (Some(p), true) => vec![p.scoring()],
        (None, true) => sim::all_policies(),
        (None, false) => args
            .policies
            .iter()
            .map(|n| {
                sim::parse_policy(n).ok_or_else(|| {
                    SimError::Usage(format!(
                        "--policies: {n:?} is not a policy (Random, DotProd, BestFit, Spread, Stranding, FGD)"
                    ))
                })
            })
            .collect::<Result<_, _>>()?,
    };
    if args.gangs {
        let chosen = if policy.is_none() && args.policies.is_empty() {
            Vec::new()
        } else {
            policies
        };
        return simulate_gangs(args, &chosen);
    }
    if !(args.inflation.is_finite() && args.inflation > 0.0) {
        return Err(SimError::Usage(format!(
            "--inflation {}: expected a positive number",
            args.inflation
        )));
    }
    let seeds = run::parse_seeds(&args.seeds)?;
    let workloads = run::load(&args.traces, args.nodes.as_deref())?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    let jobs = workloads.len() * policies.len() * seeds.len();
    // indicatif draws only when stderr is a terminal: nothing in pipes, logs or CI.
    let bar = indicatif::ProgressBar::new(jobs as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} replays, ~{eta} left  {msg}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    let started = std::time::Instant::now();
    let progress = |_: usize, _: usize, d: &Done| {
        bar.set_message(format!(
            "{} {} seed {}: {:.1} s",
            d.curve.workload, d.curve.policy, d.curve.seed, d.seconds
        ));
        bar.inc(1);
    };
    let done = run::run_all(
        &workloads,
        &policies,
        &seeds,
        args.inflation,
        threads,
        &progress,
    );
    bar.finish_and_clear();
    let done = done?;
    let curves: Vec<report::RunCurve> = done.iter().map(|d| d.curve.clone()).collect();
    if let Some(path) = &args.csv {
        std::fs::write(path, report::csv(&curves)).map_err(|e| SimError::Io(path.clone(), e))?;
    }
    if let Some(path) = &args.svg {
        for w in &workloads {
            let file = if workloads.len() == 1 {
                path.clone()
            } else {
                let stem = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("simulate");
                let base = w.name.trim_end_matches(".csv");
                path.with_file_name(format!("{stem}-{base}.svg"))
            };
            std::fs::write(&file, report::svg(&curves, &w.name))
                .map_err(|e| SimError::Io(file.clone(), e))?;
        }
    }
    let mut out = report::table(&curves, 100);
    let replay: f64 = done.iter().map(|d| d.seconds).sum();
    let _ = write!(
        out,
        "\n{} replays ({} workloads x {} policies x {} seeds) in {:.1} s on {threads} threads ({replay:.1} s of replay)\n",
        done.len(),
        workloads.len(),
        policies.len(),
        seeds.len(),
        started.elapsed().as_secs_f64()
    );
    Ok(out)
}
