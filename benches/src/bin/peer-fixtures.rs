//! Writes the workloads of the side-by-side benchmark (`gangpack_benches::peer`) as
//! Kubernetes 1.37 objects, for the Go benchmark of Kubernetes' own allocator
//! (`go/upstream/peerbench`):
//!
//! ```sh
//! cargo run -p gangpack-benches --release --bin peer-fixtures -- target/peer-bench/fixtures
//! ```
//!
//! For each workload `<dir>/<name>/objects.json` (a `v1` List of every object of its
//! scenario, as `gangpack_k8s::output::scenario_manifests` writes them) and
//! `<dir>/<name>/expect.json` (its `Expect`ation); `<dir>/workloads.json` lists the
//! names in order.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gangpack_benches::peer::peer_workloads;
use gangpack_k8s::output::{list, scenario_manifests};

fn write(path: &Path, value: &serde_json::Value) -> Result<(), String> {
    let text = serde_json::to_string(value).map_err(|e| format!("{}: {e}", path.display()))?;
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn run(dir: &Path) -> Result<(), String> {
    let mut names = Vec::new();
    for w in peer_workloads() {
        let sub = dir.join(w.name);
        std::fs::create_dir_all(&sub).map_err(|e| format!("creating {}: {e}", sub.display()))?;
        let scenario = w.scenario();
        write(
            &sub.join("objects.json"),
            &list(scenario_manifests(&scenario)),
        )?;
        write(&sub.join("expect.json"), &w.expect().to_json())?;
        eprintln!("peer-fixtures: wrote {}", sub.display());
        names.push(w.name);
    }
    write(&dir.join("workloads.json"), &serde_json::json!(names))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir] = args.as_slice() else {
        eprintln!("usage: peer-fixtures <directory>");
        return ExitCode::from(2);
    };
    match run(&PathBuf::from(dir)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("peer-fixtures: {e}");
            ExitCode::FAILURE
        }
    }
}
