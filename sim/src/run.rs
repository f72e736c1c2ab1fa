//! Running the protocol for several workloads × policies × seeds, in parallel.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::protocol::{self, Policy};
use crate::report::{self, RunCurve};
use crate::trace::{self, NodeRow, PodRow};

/// The node list the paper uses, looked for beside a pod list.
pub const NODE_LIST: &str = "openb_node_list_gpu_node.csv";

/// A pod list and the node list it runs on.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The pod file's name without its directory (the CSV's `workload`).
    pub name: String,
    /// The cluster.
    pub nodes: Vec<NodeRow>,
    /// The tasks.
    pub pods: Vec<PodRow>,
}

impl Workload {
    /// Total GPU capacity in milli-GPU.
    pub fn capacity_milli(&self) -> u64 {
        self.nodes.iter().map(|n| u64::from(n.gpus) * 1000).sum()
    }
}

/// Why a run could not start.
#[derive(Debug)]
pub enum SimError {
    /// A file could not be read.
    Io(PathBuf, std::io::Error),
    /// A file is malformed.
    Trace(trace::TraceError),
    /// Nothing to run (an empty folder, no policy).
    Usage(String),
    /// The engine refused an object (a bug in the conversion, named).
    Engine(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            SimError::Trace(e) => write!(f, "{e}"),
            SimError::Usage(m) | SimError::Engine(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SimError {}

fn read(path: &Path) -> Result<String, SimError> {
    std::fs::read_to_string(path).map_err(|e| SimError::Io(path.to_owned(), e))
}

/// The pod lists named: files, or folders (every `openb_pod_list_*.csv` in them, by
/// name). Each runs on `nodes`, or on the node list beside it.
pub fn load(traces: &[PathBuf], nodes: Option<&Path>) -> Result<Vec<Workload>, SimError> {
    let mut files = Vec::new();
    for t in traces {
        if t.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(t)
                .map_err(|e| SimError::Io(t.clone(), e))?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                        n.starts_with("openb_pod_list_")
                            && p.extension().is_some_and(|e| e.eq_ignore_ascii_case("csv"))
                    })
                })
                .collect();
            if found.is_empty() {
                return Err(SimError::Usage(format!(
                    "{}: no openb_pod_list_*.csv in this folder",
                    t.display()
                )));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(t.clone());
        }
    }
    let mut out = Vec::new();
    for f in files {
        let node_file = match nodes {
            Some(n) => n.to_owned(),
            None => f.parent().unwrap_or(Path::new(".")).join(NODE_LIST),
        };
        let node_rows = trace::read_nodes(&node_file.display().to_string(), &read(&node_file)?)
            .map_err(SimError::Trace)?;
        let pods =
            trace::read_pods(&f.display().to_string(), &read(&f)?).map_err(SimError::Trace)?;
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        out.push(Workload {
            name,
            nodes: node_rows,
            pods,
        });
    }
    Ok(out)
}

/// One job of a run matrix, finished.
#[derive(Clone, Debug)]
pub struct Done {
    /// Its curve.
    pub curve: RunCurve,
    /// Wall time of the replay, seconds.
    pub seconds: f64,
    /// Pods attempted.
    pub attempts: usize,
}

/// Runs every (workload, policy, seed) on `threads` threads, calling `progress`
/// (jobs done, jobs in all, the job just done) as each finishes. The results are in
/// matrix order (workload, then policy, then seed), whatever order they finished in.
pub fn run_all(
    workloads: &[Workload],
    policies: &[Policy],
    seeds: &[u64],
    inflation: f64,
    threads: usize,
    progress: &(dyn Fn(usize, usize, &Done) + Sync),
) -> Result<Vec<Done>, SimError> {
    let jobs: Vec<(usize, usize, u64)> = (0..workloads.len())
        .flat_map(|w| (0..policies.len()).flat_map(move |p| seeds.iter().map(move |&s| (w, p, s))))
        .collect();
    let done = AtomicUsize::new(0);
    on_threads(&jobs, threads, |&(wi, pi, seed)| {
        let result = one(&workloads[wi], &policies[pi], seed, inflation);
        let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Ok(d) = &result {
            progress(finished, jobs.len(), d);
        }
        result
    })
    .into_iter()
    .map(|r| r.unwrap_or_else(|| Err(SimError::Engine("a replay did not finish".into()))))
    .collect()
}

/// `work` on every job, `threads` at a time, each thread taking the next job as it
/// finishes one; the results in job order (`None` where a job panicked).
pub(crate) fn on_threads<J: Sync, R: Send>(
    jobs: &[J],
    threads: usize,
    work: impl Fn(&J) -> R + Sync,
) -> Vec<Option<R>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else {
                        break;
                    };
                    let r = work(job);
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn one(w: &Workload, policy: &Policy, seed: u64, inflation: f64) -> Result<Done, SimError> {
    let capacity = w.capacity_milli();
    let order = protocol::arrivals(&w.pods, capacity, inflation, seed);
    let t = std::time::Instant::now();
    let samples = protocol::replay(&w.nodes, &w.pods, &order, policy, seed)
        .map_err(|e| SimError::Engine(format!("{}: {e}", w.name)))?;
    Ok(Done {
        curve: RunCurve {
            workload: w.name.clone(),
            policy: policy.name().to_owned(),
            seed,
            allocated_pct: report::curve(&samples, capacity),
        },
        seconds: t.elapsed().as_secs_f64(),
        attempts: samples.len(),
    })
}

/// `42..51` (inclusive), `42,45` or `42`.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, SimError> {
    let bad = || {
        SimError::Usage(format!(
            "--seeds {text:?}: expected N, A..B (inclusive) or a comma-separated list"
        ))
    };
    if let Some((a, b)) = text.split_once("..") {
        let (a, b): (u64, u64) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b {
            return Err(bad());
        }
        return Ok((a..=b).collect());
    }
    text.split(',')
        .map(|s| s.trim().parse().map_err(|_| bad()))
        .collect()
}
