//! Issue 18: the bad-input corpus against the `gangpack` binary, run under an
//! address-space limit (`ulimit -v`, 2 GB) so that an unbounded blow-up fails the test
//! instead of passing slowly. Each malformed input exits 2 with nothing on stdout and
//! exactly its error lines on stderr.
//!
//! The committed corpus is `cli/tests/bad/*.yaml`, each with its `# expect ...` lines
//! (also checked through the library by `k8s/tests/bad_input.rs`); big and hostile
//! inputs (10,000 devices, 100 MB, alias bombs, non-UTF-8, 1 MB CEL) are generated
//! here into the target's tmp dir and removed afterwards. No timing assertions: the
//! limits bound the work.

mod common;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{Run, root};

/// The address-space limit the binary runs under, in KiB.
const MEMORY_KIB: u64 = 2_000_000;

/// `gangpack ARGS` from the workspace root under [`MEMORY_KIB`], with `stdin`.
fn limited(args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_gangpack"))
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    let mut input = child.stdin.take().expect("stdin");
    // The binary may exit before reading all of it (a refused input).
    let _ = input.write_all(stdin);
    drop(input);
    let output = child.wait_with_output().expect("gangpack runs");
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    let Some(code) = output.status.code() else {
        panic!("gangpack {args:?} was killed ({}): {err}", output.status);
    };
    assert!(
        !err.contains("panicked") && !err.contains("memory allocation"),
        "gangpack {args:?} crashed: {err}"
    );
    Run {
        code,
        out: String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        err,
    }
}

fn run(args: &[&str]) -> Run {
    limited(args, b"")
}

/// An input error: exit 2, nothing on stdout, exactly these stderr lines.
fn assert_refused(r: &Run, lines: &[String], what: &str) {
    assert_eq!(r.code, 2, "{what}: {}{}", r.out, r.err);
    assert_eq!(r.out, "", "{what}: nothing on stdout");
    assert_eq!(r.err.lines().collect::<Vec<_>>(), lines, "{what}");
}

/// Scratch files under the target's tmp dir, removed when dropped.
struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("cli-bad-input")
            .join(name);
        std::fs::create_dir_all(&dir).expect("tmp dir");
        Scratch { dir }
    }

    /// Writes `name` and returns its path as the binary is given it (absolute).
    fn file(&self, name: &str, bytes: &[u8]) -> String {
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).expect("write");
        path.display().to_string()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-a}\n";
const CLASS: &str = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n  selectors:\n  - cel: {expression: device.driver == \"gpu.nvidia.com\"}\n";

/// A pending claim `ml/gpus` with this CEL selector and a pod using it.
fn claim_with_selector(expr: &str) -> String {
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: gpus, namespace: ml}}\nspec:\n  devices:\n    requests:\n    - name: gpus\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        selectors:\n        - cel: {{expression: '{}'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: trainer, namespace: ml}}\nspec:\n  containers: [{{name: main, image: busybox}}]\n  resourceClaims: [{{name: gpus, resourceClaimName: gpus}}]\n",
        expr.replace('\'', "''")
    )
}

// ---------------------------------------------------------------------------------------------
// The committed corpus
// ---------------------------------------------------------------------------------------------

/// The fixtures added for issue 18 (`cli/tests/cli.rs` checks the older ones).
const CORPUS: [&str; 9] = [
    "wrong-types.yaml",
    "overflowing-numbers.yaml",
    "negative-counts.yaml",
    "unknown-enums.yaml",
    "future-taint-effects.yaml",
    "duplicate-names.yaml",
    "missing-priority-class.yaml",
    "alias-bomb.yaml",
    "deep-nesting.yaml",
];

/// Each fixture, alone, in every command that loads input: its `# expect` lines on
/// stderr (warnings first, as printed), its exit status, and no plan on stdout when it
/// fails.
#[test]
fn every_corpus_fixture_prints_exactly_its_expected_lines() {
    for name in CORPUS {
        let path = format!("cli/tests/bad/{name}");
        let text = std::fs::read_to_string(root().join(&path)).expect("fixture");
        let mut exit = 2;
        let mut warnings = Vec::new();
        let mut errors = Vec::new();
        for line in text.lines() {
            if let Some(code) = line.strip_prefix("# expect exit: ") {
                exit = code.parse().expect("an exit status");
            } else if let Some(w) = line.strip_prefix("# expect warning: ") {
                warnings.push(format!("warning: {path} {w}"));
            } else if let Some(e) = line.strip_prefix("# expect error: ") {
                errors.push(format!("error: {path} {e}"));
            }
        }
        let lines: Vec<String> = warnings.into_iter().chain(errors).collect();
        if exit != 2 {
            // Warnings only: the plan goes on.
            let r = run(&["plan", "-f", &path]);
            assert_eq!(r.code, exit, "{name}: {}", r.err);
            assert_eq!(r.err.lines().collect::<Vec<_>>(), lines, "{name}");
            continue;
        }
        for command in [
            &["plan"][..],
            &["explain"],
            &["taint", "--node", "gpu-a"],
            &["check"],
        ] {
            let mut args = command.to_vec();
            args.extend(["-f", &path]);
            assert_refused(&run(&args), &lines, &format!("{name} {command:?}"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Generated inputs
// ---------------------------------------------------------------------------------------------

#[test]
fn a_slice_of_10000_devices_is_refused_at_128() {
    let tmp = Scratch::new("devices");
    let mut text = String::from(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: gpu-a-gpu.nvidia.com}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: gpu-a\n  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}\n  devices:\n",
    );
    for i in 0..10_000 {
        let _ = writeln!(
            text,
            "  - name: gpu-{i}\n    attributes: {{index: {{int: {i}}}}}"
        );
    }
    let file = tmp.file("slice.yaml", format!("{NODE}---\n{text}").as_bytes());
    assert_refused(
        &run(&["plan", "-f", &file]),
        &[format!(
            "error: {file} doc 2: ResourceSlice \"gpu-a-gpu.nvidia.com\": spec.devices: too many: 10000, must have at most 128 items"
        )],
        "10,000 devices",
    );
}

#[test]
fn deeply_nested_and_huge_cel_are_refused_naming_claim_request_and_field() {
    let tmp = Scratch::new("cel");
    let field =
        "ResourceClaim \"ml/gpus\": spec.devices.requests[0].exactly.selectors[0].cel.expression";
    let mega = format!(
        "{} == 1",
        "device.attributes[\"gpu.nvidia.com\"].index + ".repeat(25_000)
    );
    let cases = [
        (
            "bangs",
            format!("{}true", "!".repeat(10_000)),
            "invalid CEL expression: at 9936: expression nested too deeply (more than 64 levels)"
                .to_owned(),
        ),
        (
            "parens",
            format!("{}true{}", "(".repeat(10_000), ")".repeat(10_000)),
            "too long: 20004 bytes, may not be more than 10240 bytes".to_owned(),
        ),
        (
            "mega",
            mega.clone(),
            format!(
                "too long: {} bytes, may not be more than 10240 bytes",
                mega.len()
            ),
        ),
    ];
    for (name, expr, message) in cases {
        let file = tmp.file(
            &format!("{name}.yaml"),
            format!("{CLASS}---\n{NODE}---\n{}", claim_with_selector(&expr)).as_bytes(),
        );
        assert_refused(
            &run(&["plan", "-f", &file]),
            &[format!("error: {file} doc 3: {field}: {message}")],
            name,
        );
    }
}

/// A selector that is valid but too costly to evaluate is a scheduling outcome, not an
/// input error: its unit fails at the CEL cost limit, bounded, with the reason.
#[test]
fn an_expensive_selector_fails_its_unit_at_the_cost_limit() {
    let tmp = Scratch::new("cost");
    let expr = "cel.bind(a, [1,2,3,4,5,6,7,8,9,10], a.all(x, a.all(y, a.all(z, a.all(w, a.all(v, a.all(u, x + y + z + w + v + u >= 0)))))))";
    let slice = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: gpu-a-gpu.nvidia.com}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: gpu-a\n  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}\n  devices:\n  - name: gpu-0\n";
    let file = tmp.file(
        "cost.yaml",
        format!(
            "{CLASS}---\n{NODE}---\n{slice}---\n{}",
            claim_with_selector(expr)
        )
        .as_bytes(),
    );
    let r = run(&["plan", "-f", &file]);
    assert_eq!(r.code, 3, "{}", r.err);
    assert!(
        r.out.lines().any(|l| l
            == format!(
                "  Pod ml/trainer: failed: ResourceClaim \"ml/gpus\": request gpus: selector #0 `{expr}` failed on device gpu.nvidia.com/gpu-a/gpu-0: CEL runtime error: operation cancelled: actual cost limit exceeded (1000000)"
            )),
        "{}",
        r.out
    );
}

#[test]
fn non_utf8_input_is_refused_with_its_position_from_a_file_or_stdin() {
    let tmp = Scratch::new("utf8");
    let bytes = b"apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-\xff\n";
    let file = tmp.file("latin1.yaml", bytes);
    let tail =
        "not UTF-8: byte 0xff at line 4 column 13 (offset 48); Kubernetes objects are UTF-8 text";
    assert_refused(
        &run(&["plan", "-f", &file]),
        &[format!("error: {file}: {tail}")],
        "file",
    );
    assert_refused(
        &limited(&["plan", "-f", "-"], bytes),
        &[format!("error: <stdin>: {tail}")],
        "stdin",
    );
}

/// A 100 MB document: one object with a 100 MB annotation, read in bounded memory (a
/// few times its size, under the 2 GB limit) and refused as the API server refuses it;
/// the same as YAML under a lower `--max-input-bytes` is refused unread.
#[test]
fn a_100_mb_document_is_refused_within_the_memory_limit() {
    let tmp = Scratch::new("big");
    let big = "x".repeat(100 << 20);
    let json = tmp.file(
        "node.json",
        format!(
            "{{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {{\"name\": \"gpu-a\", \"annotations\": {{\"note\": \"{big}\"}}}}}}"
        )
        .as_bytes(),
    );
    assert_refused(
        &run(&["plan", "-f", &json]),
        &[format!(
            "error: {json} doc 1: Node \"gpu-a\": metadata.annotations: too long: 104857604 bytes, may not be more than 262144 bytes"
        )],
        "100 MB JSON",
    );
    let yaml_text = format!("{NODE}  annotations:\n    note: {big}\n").replace(
        "metadata: {name: gpu-a}\n  annotations",
        "metadata:\n  name: gpu-a\n  annotations",
    );
    drop(big);
    let yaml = tmp.file("node.yaml", yaml_text.as_bytes());
    let len = yaml_text.len();
    drop(yaml_text);
    assert_refused(
        &run(&["plan", "-f", &yaml, "--max-input-bytes", "64Mi"]),
        &[format!(
            "error: {yaml}: input too large: {len} bytes, more than the max-input-bytes limit of 67108864 (raise it with --max-input-bytes)"
        )],
        "100 MB YAML over 64Mi",
    );
}

#[test]
fn max_input_bytes_bounds_stdin_and_is_raisable() {
    let text = format!("{NODE}---\n{CLASS}");
    assert_refused(
        &limited(&["plan", "-f", "-", "--max-input-bytes", "100"], text.as_bytes()),
        &["error: <stdin>: input too large: more than the max-input-bytes limit of 100 (raise it with --max-input-bytes)".to_owned()],
        "stdin over the limit",
    );
    let r = limited(
        &["plan", "-f", "-", "--max-input-bytes", "1Ki"],
        text.as_bytes(),
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "nothing to schedule: 0 pods bound\n");
    // A size that does not parse is a usage error.
    let r = run(&["plan", "-f", "-", "--max-input-bytes", "12 MB"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.out, "");
    assert!(
        r.err.contains("invalid value '12 MB' for '--max-input-bytes <BYTES>': not a size: \"12 MB\" (expected e.g. 1073741824, 512Mi or 2Gi)"),
        "{}",
        r.err
    );
}

/// One anchor of 20,000 values used 20,000 times: 4 × 10^8 values from 100 KB, which
/// ran a debug build out of 1.5 GB after 50 s before the limit existed.
#[test]
fn a_wide_alias_bomb_is_refused_naming_max_alias_expansion() {
    let tmp = Scratch::new("bomb");
    let n = 20_000;
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: wide, namespace: ml}}\ndata:\n  anchor: &a [{}]\n  uses: [{}]\n",
        vec!["x"; n].join(","),
        vec!["*a"; n].join(",")
    );
    let file = tmp.file("wide.yaml", text.as_bytes());
    // A lower limit stops it sooner (the default, 10^6, the same way).
    assert_refused(
        &run(&["plan", "-f", &file, "--max-alias-expansion", "100K"]),
        &[format!(
            "error: {file} doc 1: YAML aliases expand the input by more than the max-alias-expansion limit of 100000 values (raise it with --max-alias-expansion)"
        )],
        "wide alias bomb",
    );
}

#[test]
fn duplicates_within_one_file_are_errors_across_files_updates() {
    let tmp = Scratch::new("dup");
    let claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gpus, namespace: ml}\n";
    let a = tmp.file("a.yaml", claim.as_bytes());
    let b = tmp.file("b.yaml", format!("{NODE}---\n{claim}").as_bytes());
    // A later file updates the object (kubectl apply), with a note naming both.
    let r = run(&["plan", "-f", &a, "-f", &b]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "warning: {b} doc 2: ResourceClaim \"ml/gpus\": replaces the one at {a} doc 1 (a \
             later input updates the object, as kubectl apply does)\n"
        )
    );
    // Twice in one file: the dump contradicts itself.
    let c = tmp.file(
        "c.yaml",
        format!("{NODE}---\n{claim}---\n{claim}").as_bytes(),
    );
    assert_refused(
        &run(&["plan", "-f", &c]),
        &[format!(
            "error: {c} doc 3: ResourceClaim \"ml/gpus\": metadata.name: duplicate object: also defined at {c} doc 2"
        )],
        "duplicate in one file",
    );
}

/// The corpus lines `cli/README.md` shows are what the commands print.
#[test]
fn the_readme_shows_real_corpus_lines() {
    let readme = std::fs::read_to_string(root().join("cli/README.md")).expect("README");
    let section = readme
        .split("## Input: limits and bad input")
        .nth(1)
        .and_then(|s| s.split("```text\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("the section's sample");
    assert!(section.lines().count() >= 5);
    for line in section.lines() {
        let file = line
            .strip_prefix("error: ")
            .and_then(|l| l.split(" doc ").next())
            .expect("an error line");
        let r = run(&["plan", "-f", file]);
        assert!(
            r.err.lines().any(|l| l == line),
            "{line}\nis not printed:\n{}",
            r.err
        );
    }
}
