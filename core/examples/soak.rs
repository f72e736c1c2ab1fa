//! The release soak (`scripts/soak.sh [OPS] [NODES]`): a seeded sequence of random
//! operations (`gangpack::testing::Op`) on a cluster of NODES nodes of 8 GPUs each,
//! with the independent audit (`gangpack::testing::audit`) every `--audit-every`
//! operations and at the end, and every refusal's "unchanged" promise checked on a
//! sample (`--check-refusals-every`). Prints a progress line every tenth of the run and,
//! at 10k, 100k and 1M operations (and at the end), the operations done, audits
//! passed, elapsed time, operations per second, and the process's current and peak RSS
//! (`VmRSS` / `VmHWM` from `/proc/self/status`). Exits 1 at the first failure.
//!
//! `cargo run --release -p gangpack --features testing --example soak -- OPS NODES
//! [--seed S] [--audit-every N] [--check-refusals-every K]`

use std::process::ExitCode;
use std::time::Instant;

use gangpack::testing::{ClusterShape, Driver, Limits, Op, SplitMix64};

fn status(field: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .map(|l| l[field.len()..].trim().to_owned())
        })
        .unwrap_or_else(|| "n/a".into())
}

fn arg<T: std::str::FromStr>(args: &[String], flag: &str, default: T) -> T {
    args.iter()
        .position(|a| a == flag)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let positional: Vec<&String> = {
        let mut v = Vec::new();
        let mut skip = false;
        for a in &args {
            if skip {
                skip = false;
            } else if a.starts_with("--") {
                skip = true;
            } else {
                v.push(a);
            }
        }
        v
    };
    let ops: u64 = positional
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let nodes: u16 = positional
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000);
    let seed: u64 = arg(&args, "--seed", 18);
    let audit_every: u64 = arg(&args, "--audit-every", 10_000);
    let check_every: u64 = arg(&args, "--check-refusals-every", 1_000);

    let shape = ClusterShape {
        nodes,
        gpus_per_node: 8,
        nodes_per_rack: 16,
        shared_gpus: 4,
    };
    let limits = Limits {
        check_refusals_every: check_every,
        ..Limits::for_nodes(usize::from(nodes))
    };
    println!(
        "soak: {ops} operations on {nodes} nodes x 8 GPUs (+4 shared), seed {seed}, audit every \
         {audit_every}, refusals checked every {check_every}; limits: {} pods, {} claims, {} \
         groups, {} rules",
        limits.max_pods, limits.max_claims, limits.max_groups, limits.max_rules
    );
    let start = Instant::now();
    let mut driver = Driver::new(&shape, limits);
    println!(
        "built in {:.1}s, RSS {}, peak {}",
        start.elapsed().as_secs_f64(),
        status("VmRSS:"),
        status("VmHWM:")
    );
    let mut rng = SplitMix64::new(seed);
    let start = Instant::now();
    let tenth = (ops / 10).max(1);
    let mut last = Op::Cycle;
    #[allow(clippy::cast_precision_loss, reason = "a rate for a person to read")]
    let report = |driver: &Driver, done: u64, label: &str| {
        let secs = start.elapsed().as_secs_f64();
        let st = driver.stats();
        println!(
            "{label:>9} ops {done:>8}  audits {:>4}  elapsed {secs:>8.1}s  {:>7.0} ops/s  RSS {:>10}  \
             peak {:>10}  (applied {}, refused {}, cycles {}, bound {}, evicted {}, pods {})",
            st.audits,
            done as f64 / secs.max(1e-9),
            status("VmRSS:"),
            status("VmHWM:"),
            st.applied,
            st.refused,
            st.cycles,
            st.pods_bound,
            st.evicted,
            driver.scheduler().pods().count(),
        );
    };
    for i in 1..=ops {
        let op = driver.draw(&mut rng);
        if let Err(f) = driver.step(&op) {
            eprintln!("soak: FAILED: {f}");
            return ExitCode::FAILURE;
        }
        if audit_every > 0
            && i % audit_every == 0
            && let Err(f) = driver.audit(&op)
        {
            eprintln!("soak: FAILED: {f}");
            return ExitCode::FAILURE;
        }
        if matches!(i, 10_000 | 100_000 | 1_000_000) {
            report(&driver, i, "milestone");
        } else if i % tenth == 0 {
            report(&driver, i, "progress");
        }
        last = op;
    }
    if let Err(f) = driver.audit(&last) {
        eprintln!("soak: FAILED: {f}");
        return ExitCode::FAILURE;
    }
    report(&driver, ops, "end");
    let st = driver.stats();
    println!(
        "soak: OK: {ops} operations ({} applied, {} refused, {} refusals checked unchanged), \
         {} audits clean",
        st.applied, st.refused, st.refusals_checked, st.audits
    );
    ExitCode::SUCCESS
}
