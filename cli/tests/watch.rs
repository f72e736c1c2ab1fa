//! `gangpack watch` on recorded streams: `cli/tests/fixtures/watch/*.json` are what
//! `kubectl get KIND -A --watch --output-watch-events -o json` prints (written by
//! hand, one case each), `classes.yaml` the starting dump every case reads with
//! `--initial`. Each case's expected run (the command, the exit status, stdout and
//! stderr) is `NAME.out` beside them; `GANGPACK_BLESS=1 cargo test -p gangpack-cli
//! --test watch` rewrites them.

mod common;

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::root;
use gangpack_cli::{Collected, Options, Style, WatchOptions, WatchSource};
use proptest::prelude::*;

const DIR: &str = "cli/tests/fixtures/watch";

fn fixture(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// `gangpack watch --initial classes.yaml ARGS`, checked against `NAME.out`.
fn golden(name: &str, args: &[&str]) {
    let initial = fixture("classes.yaml");
    let mut all = vec!["watch", "--initial", &initial];
    all.extend_from_slice(args);
    let r = common::run(&all);
    let got = format!(
        "$ gangpack {}\nexit status {}\n--- stdout\n{}--- stderr\n{}",
        all.join(" "),
        r.code,
        r.out,
        r.err
    );
    let path = root().join(DIR).join(format!("{name}.out"));
    if std::env::var_os("GANGPACK_BLESS").is_some() {
        std::fs::write(&path, &got).expect("golden file written");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with GANGPACK_BLESS=1)", path.display()));
    assert_eq!(got, want, "the run differs from {}", path.display());
}

/// A pod waits for a node, the node and its GPUs arrive, the cluster's scheduler
/// allocates the claim and binds the pod where gangpack placed it, then a GPU
/// driver taints the GPU `NoExecute` (its ResourceSlice MODIFIED): the pod is evicted.
/// A second pod asks for more GPUs than there are: pending, with its verdict.
#[test]
fn a_normal_stream() {
    golden("normal", &["-f", &fixture("normal.json"), "--every", "1"]);
    golden(
        "normal-json",
        &["-f", &fixture("normal.json"), "--every", "1", "-o", "json"],
    );
    // One cycle at the end: what `plan` says of the final objects.
    golden("normal-end", &["-f", &fixture("normal.json")]);
}

/// Two low-priority pods hold both GPUs of the node when a high-priority pod arrives:
/// the cycle preempts them; the cluster's scheduler deletes them one after the other
/// (the victims left change), then binds the preemptor where gangpack nominated it.
#[test]
fn a_preemption() {
    golden("preempt", &["-f", &fixture("preempt.json"), "--every", "2"]);
}

/// The same stream through stdin (a live source: read as it arrives, on its own
/// thread) gives the same bytes as the regular file.
#[test]
fn stdin_is_read_as_it_comes_and_gives_the_same_output() {
    let stream = std::fs::read_to_string(root().join(DIR).join("normal.json")).unwrap();
    let initial = fixture("classes.yaml");
    let file = fixture("normal.json");
    let args = |source: &'static str| {
        vec![
            "watch".to_owned(),
            "--initial".into(),
            initial.clone(),
            "-f".into(),
            if source == "-" {
                "-".into()
            } else {
                file.clone()
            },
            "--every".into(),
            "2".into(),
            "--quiet-ms".into(),
            "0".into(),
        ]
    };
    let from_file = common::run(&args("file").iter().map(String::as_str).collect::<Vec<_>>());
    let from_stdin = common::run_with_stdin(
        &args("-").iter().map(String::as_str).collect::<Vec<_>>(),
        Some(&stream),
    );
    assert_eq!(from_stdin.code, 0, "{}", from_stdin.err);
    assert_eq!(from_stdin.out, from_file.out);
    assert!(
        from_file
            .out
            .starts_with("cycle 1 after 2 events (every 2 events)")
    );
    // The last cycle ran at the end of the input, after the ninth event.
    assert!(
        from_file
            .out
            .contains("cycle 5 after 1 event (end of input)"),
        "{}",
        from_file.out
    );
}

/// A live source that goes quiet gets a cycle before it ends: events, a pause longer
/// than --quiet-ms, more events, the end.
#[test]
fn a_quiet_live_source_gets_a_cycle() {
    let stream = std::fs::read_to_string(root().join(DIR).join("normal.json")).unwrap();
    // The events before the binding, then the rest.
    let cut = stream
        .find("{\n    \"type\": \"MODIFIED\"")
        .expect("a MODIFIED event");
    let mut child = Command::new(env!("CARGO_BIN_EXE_gangpack"))
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args([
            "watch",
            "--initial",
            &fixture("classes.yaml"),
            "-f",
            "-",
            "--quiet-ms",
            "300",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("gangpack runs");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(&stream.as_bytes()[..cut]).unwrap();
    stdin.flush().unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    stdin.write_all(&stream.as_bytes()[cut..]).unwrap();
    drop(stdin);
    let out = child.wait_with_output().expect("gangpack ends");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let headers: Vec<&str> = stdout.lines().filter(|l| l.starts_with("cycle")).collect();
    assert!(
        headers[0].starts_with("cycle 1 after 6 events (quiet)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("placed    Pod ml/trainer: 1 pod on n1, 1 device"),
        "{stdout}"
    );
    assert!(stdout.contains("evicted   Pod ml/trainer"), "{stdout}");
}

/// Every kind of bad stream: what is said, what is applied, the exit status.
#[test]
fn bad_streams() {
    for case in [
        "modified-unknown",
        "duplicate-added",
        "deleted-unknown",
        "unknown-kind",
        "malformed",
        "expired",
        "cut",
        "garbage",
    ] {
        golden(case, &["-f", &fixture(&format!("{case}.json"))]);
    }
    // With --skip-invalid, a malformed object is a warning; the rest stay errors.
    golden(
        "malformed-skip-invalid",
        &["-f", &fixture("malformed.json"), "--skip-invalid"],
    );
    // An ERROR event stops every source: the second is not read.
    golden(
        "expired-stops-all",
        &[
            "-f",
            &fixture("expired.json"),
            "-f",
            &fixture("unknown-kind.json"),
        ],
    );
}

/// `--audit`: the cluster's own scheduler allocates one GPU to two claims (two
/// streams, read one after the other); the finding is printed when it appears, and
/// when it clears (one of the pods and its claim deleted).
#[test]
fn audit_findings_appear_and_clear() {
    let streams = format!(
        "{},{}",
        fixture("audit-cluster.json"),
        fixture("audit-work.json")
    );
    golden("audit", &["-f", &streams, "--every", "2", "--audit"]);
    golden(
        "audit-json",
        &["-f", &streams, "--every", "2", "--audit", "-o", "json"],
    );
    // The double booking still holds at the end: exit 4.
    golden(
        "audit-open",
        &[
            "-f",
            &fixture("audit-cluster.json"),
            "-f",
            &fixture("audit-open.json"),
            "--audit",
        ],
    );
}

#[test]
fn sources_that_are_not_streams() {
    let r = common::run(&["watch", "-f", DIR]);
    assert_eq!(r.code, 2);
    assert!(
        r.err.contains("a directory is not a watch stream"),
        "{}",
        r.err
    );
    let r = common::run(&["watch", "-f", "no/such/stream.json"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.starts_with("error: cannot read no/such/stream.json"),
        "{}",
        r.err
    );
    let r = common::run(&["watch", "-f", "-", "--initial", "-"]);
    assert_eq!(r.code, 2);
    let r = common::run(&["watch", "-f", &fixture("normal.json"), "--every", "0"]);
    assert_eq!(r.code, 2);
    let help = common::run(&["watch", "--help"]);
    assert_eq!(help.code, 0);
    for words in [
        "--output-watch-events",
        "ERROR event",
        "3  an ERROR event ended the watch",
        "FILE event N",
    ] {
        assert!(
            help.out.contains(words),
            "--help lacks {words:?}:\n{}",
            help.out
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the bytes (a stream cut anywhere, bytes changed anywhere), the watch
    /// ends with 0, 2 or 3, never a panic.
    #[test]
    fn a_damaged_stream_never_panics(
        cut in 0usize..9000,
        flips in proptest::collection::vec((0usize..9000, any::<u8>()), 0..6),
        every in 1usize..4,
    ) {
        let stream = std::fs::read(root().join(DIR).join("normal.json")).unwrap();
        let mut bytes = stream[..cut.min(stream.len())].to_vec();
        for (at, b) in flips {
            if let Some(x) = bytes.get_mut(at) {
                *x = b;
            }
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let mut sink = Collected::default();
        let code = gangpack_cli::watch(
            None,
            &[WatchSource::Text { name: "damaged.json".into(), text }],
            &Options::default(),
            &WatchOptions { quiet_ms: 0, every: Some(every), audit: true, json: false },
            Style::PLAIN,
            &mut sink,
        );
        prop_assert!(matches!(code, 0 | 2 | 3), "exit {code}: {:?}", sink.messages);
    }
}
