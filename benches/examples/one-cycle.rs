//! One scheduling cycle of a `scale` benchmark's workload, run once, printing its wall
//! time: for comparing two builds by the least of several runs each where a shared
//! machine makes criterion's means swing (the same binary's cycle moved 1.5× within
//! one sitting). On a machine with hardware counters, `perf stat -e instructions:u`
//! of a run and of a `--setup-only` run gives the cycle's instructions by difference.
//!
//! ```sh
//! cargo build --release -p gangpack-benches --example one-cycle
//! for i in 1 2 3 4 5; do target/release/examples/one-cycle fitting; done
//! ```
//!
//! The workloads are the `scale` benchmarks' (`benches/scale.rs`): `mixed`, 10,000
//! units of mixed shapes (`cycle_10000_units_on_100k`), and `fitting`, 2,000 small
//! units that nearly all fit (`cycle_2000_fitting_units_on_100k`), each added to the
//! 100k-GPU fleet. The process exits without dropping anything.

use std::time::Instant;

use gangpack::{DisruptionMode, GangOptions};
use gangpack_benches::{add_class_gang, mixed_gang_shapes};
use gangpack_cli::{FLEET_NODES, fleet_scenario};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let setup_only = args.iter().any(|a| a == "--setup-only");
    let shapes: Vec<(usize, u32)> = match args.first().map(String::as_str) {
        Some("mixed") => mixed_gang_shapes(10_000, 19),
        Some("fitting") => mixed_gang_shapes(2_000, 23)
            .into_iter()
            .map(|(pods, gpus)| (pods.min(4), gpus.min(2)))
            .collect(),
        _ => {
            eprintln!("usage: one-cycle mixed|fitting [--setup-only]");
            std::process::exit(2);
        }
    };
    let (scenario, _) = fleet_scenario(FLEET_NODES, 0);
    let mut sched = scenario
        .scheduler(GangOptions::default())
        .expect("valid fleet");
    for (i, &shape) in shapes.iter().enumerate() {
        add_class_gang(
            &mut sched,
            "gpu.nvidia.com",
            &format!("unit-{i:05}"),
            shape,
            0,
            DisruptionMode::Single,
        );
    }
    if setup_only {
        println!("setup only");
        std::process::exit(0);
    }
    let started = Instant::now();
    let report = sched.cycle();
    println!(
        "{} units, {} pods bound, in {:.2?}",
        report.units.len(),
        report.pods_bound(),
        started.elapsed()
    );
    std::process::exit(0);
}
