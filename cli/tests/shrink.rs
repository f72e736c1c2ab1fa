//! `gangpack shrink`: a failing scenario reduced with a shell judge, the exit statuses,
//! the judge's protocol (`GANGPACK_SCENARIO`, `{}`, the status that counts as failing,
//! timeouts) and the worked example of `examples/testing/README.md` (section 6).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use assert_cmd::cargo::cargo_bin_cmd;
use serde_json::Value;

mod common;

use common::root;

const CLUSTER: &str = "cli/tests/fixtures/check/cluster.yaml";
const OVERDUE: &str = "cli/tests/fixtures/check/eviction-overdue.yaml";

/// What one run of `gangpack shrink` printed and returned.
struct Shrink {
    code: i32,
    out: String,
    err: String,
}

/// `gangpack ARGS` from the workspace root, with `GANGPACK` naming the binary (for
/// judges that run `gangpack check`).
fn gangpack(args: &[&str]) -> Shrink {
    let mut cmd = cargo_bin_cmd!("gangpack");
    cmd.current_dir(root())
        .env("NO_COLOR", "1")
        .env("GANGPACK", env!("CARGO_BIN_EXE_gangpack"))
        .args(args);
    let output = cmd.output().expect("gangpack runs");
    let run = Shrink {
        code: output.status.code().expect("exited"),
        out: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        err: String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    };
    assert!(
        !run.err.contains("panicked"),
        "{args:?} panicked: {}",
        run.err
    );
    run
}

/// The objects of a shrunk scenario (a `v1` `List`, YAML or JSON).
fn objects(text: &str) -> Vec<Value> {
    let list: Value = serde_norway::from_str(text).expect("the output is YAML or JSON");
    assert_eq!(list["kind"], "List", "{text}");
    list["items"].as_array().expect("items").clone()
}

fn names(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or("?"),
                o["metadata"]["name"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

/// A directory for one test's files, removed first if a previous run left it.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "gangpack-shrink-test-{name}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn path(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// The judge that fails (exit 4) when `gangpack check` reports `rule`.
fn check_judge(rule: &str) -> String {
    format!(
        "\"$GANGPACK\" check -f \"$GANGPACK_SCENARIO\" -o json | grep -q '\"rule\": \"{rule}\"' && exit 4"
    )
}

/// A dump that breaks `eviction-overdue` by itself shrinks to the few objects the
/// rule needs, and the result still breaks it. Catches a judge not given the
/// candidate (it would judge the input each time and keep nothing or everything), the
/// output not being the best candidate, and candidates written in a form `check`
/// cannot read back.
#[test]
fn shrinks_a_broken_rule_to_the_objects_it_needs() {
    let run = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        &check_judge("eviction-overdue"),
    ]);
    assert_eq!(run.code, 0, "{}", run.err);
    let shrunk = objects(&run.out);
    assert!(shrunk.len() <= 5, "{:?}", names(&shrunk));
    assert!(
        names(&shrunk).contains(&"Pod/a".to_owned()),
        "{:?}",
        names(&shrunk)
    );
    let first = run.err.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("shrunk 16 objects to ") && first.contains(" judge runs, "),
        "{}",
        run.err
    );
    // Judged again by hand: the rule is still broken.
    let dir = scratch("rule");
    let file = dir.join("small.yaml");
    std::fs::write(&file, &run.out).expect("write");
    let check = gangpack(&["check", "-f", path(&file), "-o", "json"]);
    assert_eq!(check.code, 4, "{}{}", check.out, check.err);
    assert!(
        check.out.contains("\"rule\": \"eviction-overdue\""),
        "{}",
        check.out
    );
}

/// A candidate judged invalid input (exit 2 of `check`) does not count when the input
/// broke a rule (exit 4): without the rule pinned, the result still breaks a rule.
/// Catches "any non-zero status fails", which would shrink to an invalid scenario.
#[test]
fn only_the_inputs_exit_status_counts_as_failing() {
    let judge = "\"$GANGPACK\" check -f {} > /dev/null 2>&1";
    let run = gangpack(&["shrink", "-f", CLUSTER, "-f", OVERDUE, "--judge", judge]);
    assert_eq!(run.code, 0, "{}", run.err);
    let dir = scratch("status");
    let file = dir.join("small.yaml");
    std::fs::write(&file, &run.out).expect("write");
    assert_eq!(gangpack(&["check", "-f", path(&file)]).code, 4);
}

/// `{}` is the candidate's path (quoted), `GANGPACK_SCENARIO` too, and a YAML input
/// gives YAML candidates and output. Catches the substitution left out, a path
/// not quoted for the shell, and the input's format not kept.
#[test]
fn the_candidate_is_in_braces_and_in_the_environment() {
    let braces = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        "grep -q '^    name: a-gpu$' {} && exit 5",
    ]);
    assert_eq!(braces.code, 0, "{}", braces.err);
    let env = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        "grep -q '^    name: a-gpu$' \"$GANGPACK_SCENARIO\" && exit 5",
    ]);
    assert_eq!(env.out, braces.out);
    assert_eq!(
        objects(&braces.out),
        vec![serde_json::json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "a-gpu", "namespace": "ml"}
        })]
    );
    assert!(
        braces.out.starts_with("apiVersion: v1\n"),
        "YAML: {}",
        braces.out
    );
}

/// A JSON input gives JSON candidates and a JSON output; `-o` writes the file.
#[test]
fn json_in_json_out() {
    let dir = scratch("json");
    let input = dir.join("in.json");
    let output = dir.join("out.json");
    let json = r#"{"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"x": "1"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"y": "2", "z": "3"}}]}"#;
    std::fs::write(&input, json).expect("write");
    let judge = "head -c 1 {} | grep -q '{' && grep -q '\"z\"' {} && exit 3";
    let run = gangpack(&[
        "shrink",
        "-f",
        path(&input),
        "--judge",
        judge,
        "-o",
        path(&output),
    ]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert_eq!(run.out, "");
    let text = std::fs::read_to_string(&output).expect("the output file");
    assert!(text.starts_with("{\n"), "{text}");
    assert_eq!(
        objects(&text),
        vec![
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep"}, "data": {"z": "3"}})
        ]
    );
}

/// Catches a shrink that goes on when the judge passes on the input, and a
/// `--fails-with` that is not compared with the input's status.
#[test]
fn a_judge_that_passes_on_the_input_is_an_error() {
    let run = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "--judge",
        "echo looks fine; exit 0",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.out, "");
    assert!(
        run.err
            .contains("error: the judge passed on the input (exit status 0): nothing to shrink"),
        "{}",
        run.err
    );
    assert!(
        run.err.contains("  looks fine"),
        "the judge's output is shown: {}",
        run.err
    );
    let other = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "--judge",
        "exit 3",
        "--fails-with",
        "4",
    ]);
    assert_eq!(other.code, 2);
    assert!(
        other.err.contains(
            "the judge ended with exit status 3 on the input, not the exit status 4 of --fails-with"
        ),
        "{}",
        other.err
    );
}

/// Bad flags and files: exit 2 (usage, invalid input) or 1 (unreadable), each named.
#[test]
fn bad_flags_and_files() {
    let missing = gangpack(&["shrink", "-f", "no/such.yaml", "--judge", "exit 1"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.err.starts_with("error: no/such.yaml: "),
        "{}",
        missing.err
    );
    let time = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "--judge",
        "exit 1",
        "--max-time",
        "soon",
    ]);
    assert_eq!(time.code, 2);
    assert!(time.err.contains("--max-time"), "{}", time.err);
    let runs = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "--judge",
        "exit 1",
        "--max-runs",
        "0",
    ]);
    assert_eq!(runs.code, 2);
    let dir = scratch("bad");
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, "kind: Pod\n---\n- 1\n").expect("write");
    let doc = gangpack(&["shrink", "-f", path(&bad), "--judge", "exit 1"]);
    assert_eq!(doc.code, 2);
    assert!(
        doc.err
            .contains("bad.yaml doc 2: expected a Kubernetes object"),
        "{}",
        doc.err
    );
    let empty = dir.join("empty.yaml");
    std::fs::write(&empty, "---\n").expect("write");
    let nothing = gangpack(&["shrink", "-f", path(&empty), "--judge", "exit 1"]);
    assert_eq!(nothing.code, 2);
    assert!(nothing.err.contains("no objects in"), "{}", nothing.err);
}

/// A judge run past --judge-timeout is killed (its whole process group: the `sleep`
/// it started too) and passes; the note says how many. Catches a timeout that kills
/// only `sh` (the run would last the sleep) or that counts as failing.
#[test]
fn a_judge_that_times_out_passes() {
    let start = Instant::now();
    let judge = "grep -q '^    name: a-gpu$' {} || sleep 30; exit 5";
    let run = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        judge,
        "--judge-timeout",
        "300ms",
    ]);
    assert_eq!(run.code, 0, "{}", run.err);
    assert_eq!(names(&objects(&run.out)), ["ResourceClaim/a-gpu"]);
    assert!(
        run.err
            .contains("took longer than --judge-timeout 300ms and counted as passing"),
        "{}",
        run.err
    );
    assert!(
        start.elapsed() < Duration::from_secs(25),
        "{:?}",
        start.elapsed()
    );
}

/// The budgets: --max-runs and --max-time stop early with the best scenario so far
/// (exit 0, a note). Catches a budget stop that prints nothing or the input, and a
/// --max-time that waits for the judge.
#[test]
fn budgets_stop_early_with_the_best_so_far() {
    let runs = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        "exit 3",
        "--max-runs",
        "3",
    ]);
    assert_eq!(runs.code, 0, "{}", runs.err);
    assert!(runs.err.contains("(3 judge runs, "), "{}", runs.err);
    assert!(
        runs.err.contains("note: stopped early (--max-runs 3)"),
        "{}",
        runs.err
    );
    // Two removals of half the objects failed: a quarter is left.
    assert_eq!(objects(&runs.out).len(), 4);
    let start = Instant::now();
    let time = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        "sleep 30; exit 3",
        "--max-time",
        "1s",
    ]);
    assert_eq!(
        time.code, 2,
        "the input itself ran past the time: {}",
        time.err
    );
    assert!(
        time.err
            .contains("the judge ran past --max-time 1s on the input"),
        "{}",
        time.err
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let slow = gangpack(&[
        "shrink",
        "-f",
        CLUSTER,
        "-f",
        OVERDUE,
        "--judge",
        "sleep 0.2; exit 3",
        "--max-time",
        "1s",
    ]);
    assert_eq!(slow.code, 0, "{}", slow.err);
    assert!(
        slow.err.contains("note: stopped early (--max-time 1s)"),
        "{}",
        slow.err
    );
    assert!(objects(&slow.out).len() < 16);
}

/// The worked example (examples/testing/README.md, section 6): the naive scheduler's
/// failure on `gangpack gen --seed 1 --size small -o json` shrinks to a handful of
/// objects that still fail, and to the very bytes the README shows (so: the same on
/// every run). Catches any nondeterminism in the shrink (or in `gen`), and a README
/// that no longer shows what the command prints.
#[test]
fn the_naive_schedulers_failure_shrinks_to_a_handful_of_objects() {
    let dir = scratch("demo");
    let scenario = dir.join("scenario.json");
    let generated = gangpack(&["gen", "--seed", "1", "--size", "small", "-o", "json"]);
    assert_eq!(generated.code, 0, "{}", generated.err);
    std::fs::write(&scenario, &generated.out).expect("write");
    assert_eq!(objects(&generated.out).len(), 64);
    let run = gangpack(&[
        "shrink",
        "-f",
        path(&scenario),
        "--judge",
        "examples/testing/judge.sh",
    ]);
    assert_eq!(run.code, 0, "{}", run.err);
    let shrunk = objects(&run.out);
    assert!(shrunk.len() <= 7, "{:?}", names(&shrunk));
    assert!(run.err.starts_with("shrunk 64 objects to "), "{}", run.err);
    let readme =
        std::fs::read_to_string(root().join("examples/testing/README.md")).expect("README");
    assert!(
        readme.contains(&format!("```json\n{}```", run.out)),
        "examples/testing/README.md does not show the shrunk scenario:\n{}",
        run.out
    );
}
