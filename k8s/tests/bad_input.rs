//! Issue 18: the bad-input corpus, through the library. Every malformed input gets a
//! specific error naming the object (kind, namespace, name) and the field, or a
//! resource-limit error naming the limit and how to raise it; big and hostile inputs
//! are generated here, once, not committed.
//!
//! The corpus fixtures are `cli/tests/bad/*.yaml`; each says what it expects in
//! `# expect error: doc N: ...` / `# expect warning: ...` lines (and `# expect exit: N`
//! when the CLI does not exit 2), which this file checks against `load_paths` and
//! `Snapshot::build` (each error's object and field as structured fields, too) and
//! `cli/tests/bad_input.rs` against the `gangpack` binary under a memory limit.
//!
//! Loading is pure (no state to leave unchanged); the wasm session's state is checked
//! in `wasm/tests-js/bad_input.test.mjs`.

use std::fmt::Write as _;
use std::path::PathBuf;

use gangpack::{Unit, UnitResult};
use gangpack_k8s::{
    BuildOptions, InputError, InputErrors, Limits, LoadOptions, Loaded, Snapshot, load_paths,
    load_str, load_str_with,
};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// The load's errors or, when it loads, the build's; `Ok` when both succeed.
fn outcome(text: &str, options: &LoadOptions) -> Result<Snapshot, InputErrors> {
    load_str_with(text, "in.yaml", options)
        .and_then(|l| Snapshot::build(l, &BuildOptions::default()))
}

/// The errors of `text`, one per line.
fn errors(text: &str) -> String {
    errors_with(text, &LoadOptions::default())
}

fn errors_with(text: &str, options: &LoadOptions) -> String {
    match outcome(text, options) {
        Ok(_) => panic!("no error for:\n{}", &text[..text.len().min(2000)]),
        Err(e) => e.to_string(),
    }
}

/// The snapshot of `text`, which must build.
fn snapshot(text: &str) -> Snapshot {
    outcome(text, &LoadOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The warnings of loading and building `text` (the snapshot keeps the load's), which
/// must build.
fn warnings(text: &str) -> Vec<String> {
    let s = snapshot(text);
    s.warnings.iter().map(ToString::to_string).collect()
}

/// A scratch file under the target's tmp dir, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str, bytes: &[u8]) -> Scratch {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("k8s-bad-input");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

const NODE: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: gpu-a}\n";
const CLASS: &str = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu.nvidia.com}\nspec:\n  selectors:\n  - cel: {expression: device.driver == \"gpu.nvidia.com\"}\n";

/// A slice of `devices` (`  - name: ...` lines) on gpu-a.
fn slice(devices: &str) -> String {
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: gpu-a-gpu.nvidia.com}}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: gpu-a\n  pool: {{name: gpu-a, generation: 1, resourceSliceCount: 1}}\n  devices:\n{devices}"
    )
}

/// A pending claim `ml/gpus` for one device with this CEL selector (YAML-quoted as a
/// single-quoted scalar), and a pod using it.
fn claim_with_selector(expr: &str) -> String {
    let expr = expr.replace('\'', "''");
    format!(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: gpus, namespace: ml}}\nspec:\n  devices:\n    requests:\n    - name: gpus\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        selectors:\n        - cel: {{expression: '{expr}'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: trainer, namespace: ml}}\nspec:\n  containers: [{{name: main, image: busybox}}]\n  resourceClaims: [{{name: gpus, resourceClaimName: gpus}}]\n"
    )
}

// ---------------------------------------------------------------------------------------------
// The corpus fixtures (cli/tests/bad/*.yaml)
// ---------------------------------------------------------------------------------------------

/// The corpus fixtures added for issue 18 (the older ones are checked by
/// `cli/tests/cli.rs`).
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

/// What a fixture's `# expect` lines say: `(error lines, warning lines)`, each
/// `doc N: ...` as it follows the file name.
fn expectations(text: &str) -> (Vec<String>, Vec<String>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    for line in text.lines() {
        if let Some(e) = line.strip_prefix("# expect error: ") {
            errors.push(e.to_owned());
        } else if let Some(w) = line.strip_prefix("# expect warning: ") {
            warnings.push(w.to_owned());
        }
    }
    (errors, warnings)
}

#[test]
fn every_corpus_fixture_fails_with_exactly_its_expected_errors() {
    for name in CORPUS {
        // As the CLI tests run it, from the workspace root; here from k8s/.
        let path = PathBuf::from("../cli/tests/bad").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        let (mut want_errors, want_warnings) = expectations(&text);
        for e in &mut want_errors {
            *e = e.replace(" at cli/tests/bad/", " at ../cli/tests/bad/");
        }
        assert!(
            !want_errors.is_empty() || !want_warnings.is_empty(),
            "{name} expects nothing"
        );
        let file = path.display().to_string();
        let strip = |s: String| {
            s.strip_prefix(&format!("{file} "))
                .unwrap_or_else(|| panic!("{name}: not located in the file: {s}"))
                .to_owned()
        };
        let (errors, warnings, failed): (Vec<InputError>, Vec<String>, bool) =
            match load_paths(&[&path]) {
                Err(e) => (e.errors, Vec::new(), true),
                Ok(loaded) => {
                    let load_warnings: Vec<String> =
                        loaded.warnings.iter().map(ToString::to_string).collect();
                    match Snapshot::build(loaded, &BuildOptions::default()) {
                        Err(e) => (e.errors, load_warnings, true),
                        Ok(s) => {
                            let mut w = load_warnings;
                            w.extend(s.warnings.iter().map(ToString::to_string));
                            (Vec::new(), w, false)
                        }
                    }
                }
            };
        assert_eq!(failed, !want_errors.is_empty(), "{name}");
        let got: Vec<String> = errors.iter().map(|e| strip(e.to_string())).collect();
        assert_eq!(got, want_errors, "{name}: errors");
        let got: Vec<String> = warnings.into_iter().map(strip).collect();
        assert_eq!(got, want_warnings, "{name}: warnings");
        // Structured: an object-level error carries its object and field apart.
        for e in &errors {
            let s = e.to_string();
            if let Some(object) = &e.object {
                assert!(s.contains(&format!(": {object}: ")), "{s}");
                assert!(
                    !e.field.is_empty() || s.contains("duplicate object"),
                    "{name}: no field: {s}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

/// A binary-SI quantity beyond 2^63 - 1 is capped there, as upstream's parser caps
/// it (so `99999999999999999999Ki` is a huge but valid capacity); a decimal one beyond
/// the 128-bit range is an error.
#[test]
fn an_overflowing_binary_quantity_is_capped_as_upstream_caps_it() {
    let devices = "  - name: gpu-0\n    capacity:\n      memory: {value: 99999999999999999999Ki}\n";
    let s = snapshot(&format!("{NODE}---\n{CLASS}---\n{}", slice(devices)));
    let device = s
        .scheduler
        .cluster()
        .slices()
        .flat_map(|sl| sl.devices.iter())
        .find(|d| d.name == "gpu-0")
        .expect("gpu-0");
    let memory = device.capacity["memory"].value;
    assert_eq!(memory.value(), i64::MAX);
    assert_eq!(memory.to_string(), "9223372036854775807");
}

#[test]
fn json_numbers_out_of_range_are_errors_too() {
    // An integer beyond 64 bits is a float (a type error naming the field) ...
    let claim = r#"{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "gpus", "namespace": "ml"}, "spec": {"devices": {"requests": [{"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 18446744073709551616}}]}}}"#;
    assert_eq!(
        errors(claim),
        "in.yaml doc 1: ResourceClaim \"ml/gpus\": spec.devices.requests[0].exactly.count: invalid type: floating point `1.8446744073709552e+19`, expected i64"
    );
    // ... and a number beyond a float's range does not parse (JSON cannot resume
    // after it, so the error is the document's, with its position).
    let claim = claim.replace("18446744073709551616", "1e400");
    assert_eq!(
        errors(&claim),
        "in.yaml doc 1: JSON syntax error: number out of range at line 1 column 225"
    );
}

/// `tolerationSeconds` at the int64 bounds: the eviction time saturates instead of
/// overflowing; a negative one evicts at once, as upstream.
#[test]
fn toleration_seconds_at_the_int64_bounds_saturate() {
    let cluster = |seconds: i64| {
        format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: gpu-a}}\nspec:\n  taints: [{{key: maintenance, effect: NoExecute, timeAdded: \"2026-11-05T08:00:00Z\"}}]\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: trainer, namespace: ml}}\nspec:\n  nodeName: gpu-a\n  containers: [{{name: main, image: busybox}}]\n  tolerations: [{{key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: {seconds}}}]\n"
        )
    };
    let s = snapshot(&cluster(i64::MAX));
    let due: Vec<i64> = s
        .scheduler
        .scheduled_evictions()
        .iter()
        .map(|e| e.at.0)
        .collect();
    assert_eq!(due, [i64::MAX]);
    let s = snapshot(&cluster(i64::MIN));
    let due: Vec<i64> = s
        .scheduler
        .scheduled_evictions()
        .iter()
        .map(|e| e.at.0)
        .collect();
    let added = gangpack::Time::parse_rfc3339("2026-11-05T08:00:00Z").unwrap();
    assert_eq!(due, [added.0]);
}

// ---------------------------------------------------------------------------------------------
// Size limits
// ---------------------------------------------------------------------------------------------

#[test]
fn the_default_limits_are_documented_values() {
    let l = Limits::default();
    assert_eq!(l.max_input_bytes, 1 << 30);
    assert_eq!(l.max_alias_expansion, 1_000_000);
    assert_eq!(LoadOptions::default().limits, l);
    assert_eq!(Limits::MAX_NESTING, 128);
    assert_eq!(Limits::MAX_ANNOTATIONS_BYTES, 262_144);
}

#[test]
fn an_input_over_max_input_bytes_is_refused_naming_the_limit() {
    let options = LoadOptions {
        limits: Limits {
            max_input_bytes: NODE.len() - 1,
            ..Limits::default()
        },
        ..LoadOptions::default()
    };
    assert_eq!(
        errors_with(NODE, &options),
        format!(
            "in.yaml: input too large: {} bytes, more than the max-input-bytes limit of {} (raise it with --max-input-bytes)",
            NODE.len(),
            NODE.len() - 1
        )
    );
    // At the limit it loads; and a file over it is refused unread.
    let options = LoadOptions {
        limits: Limits {
            max_input_bytes: NODE.len(),
            ..Limits::default()
        },
        ..LoadOptions::default()
    };
    assert!(outcome(NODE, &options).is_ok());
    let file = Scratch::new("node.yaml", format!("{NODE}# padding\n").as_bytes());
    let e = gangpack_k8s::load_paths_with(&[&file.0], &options).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: input too large: {} bytes, more than the max-input-bytes limit of {} (raise it with --max-input-bytes)",
            file.0.display(),
            NODE.len() + 10,
            NODE.len()
        )
    );
}

/// A 100 MB document (one annotation of 100 MB) reads in bounded memory and is
/// refused as the API server refuses it: annotations hold at most 256 KiB.
#[test]
fn annotations_over_256_kib_are_refused() {
    let big = "x".repeat(Limits::MAX_ANNOTATIONS_BYTES);
    let text = format!(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-a\n  annotations:\n    a: {big}\n"
    );
    assert_eq!(
        errors(&text),
        "in.yaml doc 1: Node \"gpu-a\": metadata.annotations: too long: 262145 bytes, may not be more than 262144 bytes"
    );
    // Keys count too; exactly the limit is fine.
    let text = text.replace(&format!("a: {big}"), &format!("a: {}", &big[1..]));
    assert!(outcome(&text, &LoadOptions::default()).is_ok());
}

// ---------------------------------------------------------------------------------------------
// YAML aliases and nesting
// ---------------------------------------------------------------------------------------------

/// A wide alias bomb: one anchor of `n` values used `n` times reads n² values from
/// about 5n bytes (n = 20,000: 4 × 10^8 values from 100 KB, which once took 1.5 GB and
/// 50 s before the reader ran out of memory). The YAML reader's own guard (100 alias
/// uses per node) lets it through; `Limits::max_alias_expansion` stops it.
fn wide_bomb(n: usize) -> String {
    let items = vec!["x"; n].join(",");
    let uses = vec!["*a"; n].join(",");
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: wide, namespace: ml}}\ndata:\n  anchor: &a [{items}]\n  uses: [{uses}]\n"
    )
}

#[test]
fn a_wide_alias_bomb_stops_at_max_alias_expansion() {
    let limited = |max_alias_expansion| LoadOptions {
        limits: Limits {
            max_alias_expansion,
            ..Limits::default()
        },
        ..LoadOptions::default()
    };
    // 90,000 values (180,000 with their bytes) from 1.5 KB, over a limit of 10,000 (the default, 10^6, is reached
    // the same way, only more slowly in a debug build).
    assert_eq!(
        errors_with(&wide_bomb(300), &limited(10_000)),
        "in.yaml doc 1: YAML aliases expand the input by more than the max-alias-expansion limit of 10000 values (raise it with --max-alias-expansion)"
    );
    // Raised, it loads (and is skipped: a ConfigMap).
    let loaded: Loaded = load_str_with(&wide_bomb(300), "in.yaml", &limited(200_000)).unwrap();
    assert_eq!((loaded.objects.len(), loaded.warnings.len()), (0, 1));
    // Strings count by their bytes: twenty uses of a 100 KB string pass the default.
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: wide, namespace: ml}}\ndata:\n  anchor: &a {}\n  uses: [{}]\n",
        "x".repeat(100_000),
        vec!["*a"; 20].join(",")
    );
    assert_eq!(
        errors(&text),
        "in.yaml doc 1: YAML aliases expand the input by more than the max-alias-expansion limit of 1000000 values (raise it with --max-alias-expansion)"
    );
}

/// Anchors and aliases used as people use them load, and a `&` in a text with no
/// anchor costs nothing.
#[test]
fn ordinary_anchors_and_ampersands_load() {
    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: resource.k8s.io/v1\n  kind: DeviceClass\n  metadata:\n    name: gpu.nvidia.com\n    annotations: {docs: \"https://example.com/?a=1&b=2\"}\n  spec:\n    selectors: &sel\n    - cel: {expression: device.driver == \"gpu.nvidia.com\"}\n- apiVersion: resource.k8s.io/v1\n  kind: DeviceClass\n  metadata: {name: h100.nvidia.com}\n  spec:\n    selectors: *sel\n";
    let s = snapshot(text);
    let classes: Vec<&str> = s
        .scheduler
        .cluster()
        .classes()
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(classes, ["gpu.nvidia.com", "h100.nvidia.com"]);
}

#[test]
fn nesting_is_bounded_in_yaml_and_json() {
    let doc = |open: &str, close: &str, n: usize| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: deep, namespace: ml}}\ndata:\n  deep: {}{}\n",
            open.repeat(n),
            close.repeat(n)
        )
    };
    assert_eq!(
        errors(&doc("[", "]", 1_000)),
        "in.yaml doc 1: YAML nested more than 128 levels deep at line 5 column 135 (the reader's fixed limit; Kubernetes objects nest about 15 levels)"
    );
    assert_eq!(
        errors(&doc("{a: ", "}", 1_000)),
        "in.yaml doc 1: YAML nested more than 128 levels deep at line 5 column 513 (the reader's fixed limit; Kubernetes objects nest about 15 levels)"
    );
    let json = format!(
        "{{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {{\"name\": \"deep\"}}, \"data\": {}{}}}",
        "[".repeat(1_000),
        "]".repeat(1_000)
    );
    assert_eq!(
        errors(&json),
        "in.yaml doc 1: JSON nested more than 128 levels deep at line 1 column 207 (the reader's fixed limit; Kubernetes objects nest about 15 levels)"
    );
    // 120 levels read (the object is skipped: a ConfigMap).
    assert!(load_str(&doc("[", "]", 120), "in.yaml").is_ok());
}

// ---------------------------------------------------------------------------------------------
// Big objects and CEL
// ---------------------------------------------------------------------------------------------

#[test]
fn a_slice_of_10000_devices_is_refused_at_128() {
    let mut devices = String::new();
    for i in 0..10_000 {
        let _ = writeln!(devices, "  - name: gpu-{i}");
    }
    assert_eq!(
        errors(&format!("{NODE}---\n{CLASS}---\n{}", slice(&devices))),
        "in.yaml doc 3: ResourceSlice \"gpu-a-gpu.nvidia.com\": spec.devices: too many: 10000, must have at most 128 items"
    );
}

const SELECTOR_FIELD: &str = "in.yaml doc 3: ResourceClaim \"ml/gpus\": spec.devices.requests[0].exactly.selectors[0].cel.expression";

#[test]
fn huge_cel_is_refused_once_by_its_length() {
    let expr = format!(
        "{} == 1",
        "device.attributes[\"gpu.nvidia.com\"].index + ".repeat(25_000)
    );
    assert!(expr.len() > 1 << 20);
    assert_eq!(
        errors(&format!(
            "{CLASS}---\n{NODE}---\n{}",
            claim_with_selector(&expr)
        )),
        format!(
            "{SELECTOR_FIELD}: too long: {} bytes, may not be more than 10240 bytes",
            expr.len()
        )
    );
}

#[test]
fn deeply_nested_cel_is_refused_by_its_depth_or_its_length() {
    let cases = [
        // 10,000 parentheses: 20 KB, over the length limit.
        (
            format!("{}true{}", "(".repeat(10_000), ")".repeat(10_000)),
            "too long: 20004 bytes, may not be more than 10240 bytes",
        ),
        // 10,000 negations: under 10 KiB, over the nesting limit.
        (
            format!("{}true", "!".repeat(10_000)),
            "invalid CEL expression: at 9936: expression nested too deeply (more than 64 levels)",
        ),
        (
            format!("{}true{}", "(".repeat(5_000), ")".repeat(5_000)),
            "invalid CEL expression: at 64: expression nested too deeply (more than 64 levels)",
        ),
        (
            format!("{}1{}", "[".repeat(3_000), "]".repeat(3_000)) + " == []",
            "invalid CEL expression: at 64: expression nested too deeply (more than 64 levels)",
        ),
    ];
    for (expr, message) in cases {
        let text = format!("{CLASS}---\n{NODE}---\n{}", claim_with_selector(&expr));
        assert_eq!(errors(&text), format!("{SELECTOR_FIELD}: {message}"));
    }
}

/// What is hostile at run time rather than at load: a selector whose evaluation would
/// run for 10^6 steps per device fails its unit at the CEL cost limit, naming the claim,
/// request and selector.
#[test]
fn an_expensive_selector_fails_its_unit_at_the_cost_limit() {
    let expr = "cel.bind(a, [1,2,3,4,5,6,7,8,9,10], a.all(x, a.all(y, a.all(z, a.all(w, a.all(v, a.all(u, x + y + z + w + v + u >= 0)))))))";
    let mut s = snapshot(&format!(
        "{CLASS}---\n{NODE}---\n{}---\n{}",
        slice("  - name: gpu-0\n"),
        claim_with_selector(expr)
    ));
    let report = s.scheduler.cycle();
    let [(unit, UnitResult::Failed(e))] = report.units.as_slice() else {
        panic!("{:?}", report.units);
    };
    assert_eq!(unit, &Unit::Pod("ml/trainer".into()));
    assert_eq!(
        e.to_string(),
        format!(
            "ResourceClaim \"ml/gpus\": request gpus: selector #0 `{expr}` failed on device gpu.nvidia.com/gpu-a/gpu-0: CEL runtime error: operation cancelled: actual cost limit exceeded (1000000)"
        )
    );
}

/// Loading the deepest inputs the limits let through needs a bounded stack: half a wasm
/// module's default (1 MiB) is enough, in a debug build. (Measured in debug: about
/// 350 KiB for YAML nested 125 deep, 320 KiB for CEL nested 62 deep, 130 KiB for a
/// plain object; an optimised build needs a fraction of that.)
#[test]
fn the_deepest_accepted_inputs_load_on_a_small_stack() {
    let deep_yaml = format!(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: gpu-a}}\nspec:\n  deep: {}{}\n",
        "[".repeat(125),
        "]".repeat(125)
    );
    let deep_cel = claim_with_selector(&format!("{}true{}", "(".repeat(62), ")".repeat(62)));
    let bangs = claim_with_selector(&format!("{}true", "!".repeat(10_000)));
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let s = snapshot(&format!("{CLASS}---\n{deep_yaml}---\n{deep_cel}"));
            let loaded = outcome(
                &format!("{CLASS}---\n{NODE}---\n{bangs}"),
                &LoadOptions::default(),
            );
            (s.scheduler.pods().count(), loaded.is_err())
        })
        .unwrap();
    assert_eq!(handle.join().unwrap(), (1, true));
}

// ---------------------------------------------------------------------------------------------
// Text
// ---------------------------------------------------------------------------------------------

#[test]
fn non_utf8_text_is_refused_with_its_position() {
    let mut bytes = b"apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-\xe9\n".to_vec();
    let file = Scratch::new("latin1.yaml", &bytes);
    let e = load_paths(&[&file.0]).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}: not UTF-8: byte 0xe9 at line 4 column 13 (offset 48); Kubernetes objects are UTF-8 text",
            file.0.display()
        )
    );
    // The column counts characters: after a multi-byte one it is not the byte's.
    bytes.splice(36..36, "é".bytes());
    let file = Scratch::new("mixed.yaml", &bytes);
    let e = load_paths(&[&file.0]).unwrap_err();
    assert!(
        e.to_string()
            .ends_with(": not UTF-8: byte 0xe9 at line 4 column 14 (offset 50); Kubernetes objects are UTF-8 text"),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// References
// ---------------------------------------------------------------------------------------------

#[test]
fn duplicates_across_files_are_updates_within_one_an_error() {
    let claim = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gpus, namespace: ml}\n";
    let mut loaded = load_str(claim, "a.yaml").unwrap();
    loaded.extend(load_str(&format!("{NODE}---\n{claim}"), "b.yaml").unwrap());
    // The later input updates it (kubectl apply); a note names both.
    let s = Snapshot::build(loaded, &BuildOptions::default()).unwrap();
    assert_eq!(
        s.warnings[0].to_string(),
        "b.yaml doc 2: ResourceClaim \"ml/gpus\": replaces the one at a.yaml doc 1 (a later input updates the object, as kubectl apply does)"
    );
    // Twice in one input: still an error.
    let twice = load_str(&format!("{claim}---\n{claim}"), "c.yaml").unwrap();
    let e = Snapshot::build(twice, &BuildOptions::default())
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "c.yaml doc 2: ResourceClaim \"ml/gpus\": metadata.name: duplicate object: also defined at c.yaml doc 1"
    );
}

/// Dangling references that Kubernetes accepts: the API server has no cross-object
/// checks, and the scheduler waits (claims, templates, PodGroups) or fails the unit
/// (a DeviceClass). Each is named with its field; none is silent.
#[test]
fn dangling_references_wait_or_fail_naming_the_reference() {
    let text = format!(
        "{NODE}---\n{}",
        [
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\nspec:\n  containers: [{name: main, image: busybox}]\n  resourceClaims: [{name: gpus, resourceClaimTemplateName: missing}]\n",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: ml}\nspec:\n  containers: [{name: main, image: busybox}]\n  resourceClaims: [{name: gpus, resourceClaimName: missing}]\n",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: c, namespace: ml}\nspec:\n  schedulingGroup: {podGroupName: missing}\n  containers: [{name: main, image: busybox}]\n",
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: gpus, namespace: ml}\nspec:\n  devices:\n    requests:\n    - name: gpus\n      exactly: {deviceClassName: missing.example.com}\n",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: d, namespace: ml}\nspec:\n  containers: [{name: main, image: busybox}]\n  resourceClaims: [{name: gpus, resourceClaimName: gpus}]\n",
        ]
        .join("---\n")
    );
    let mut s = snapshot(&text);
    let waiting: Vec<String> = s
        .waiting
        .iter()
        .map(|w| format!("{}: {}", w.unit(), w.reason()))
        .collect();
    assert_eq!(
        waiting,
        [
            "Pod ml/a: waiting for ResourceClaimTemplate \"ml/missing\" (spec.resourceClaims[0].resourceClaimTemplateName): it is not in the input, so the resourceclaim controller cannot create the claim; the scheduler holds the pod until it exists",
            "Pod ml/b: waiting for ResourceClaim \"ml/missing\" (spec.resourceClaims[0].resourceClaimName): it is not in the input; the scheduler holds the pod until it exists",
        ]
    );
    let warnings: Vec<String> = s.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(
        warnings,
        [
            "in.yaml doc 2: Pod \"ml/a\": spec.resourceClaims[0].resourceClaimTemplateName: ResourceClaimTemplate \"missing\" is not in the input: the pod waits for it",
            "in.yaml doc 3: Pod \"ml/b\": spec.resourceClaims[0].resourceClaimName: ResourceClaim \"missing\" is not in the input: the pod waits for it",
            "in.yaml doc 4: Pod \"ml/c\": spec.schedulingGroup.podGroupName: PodGroup \"missing\" is not in the input: the pod waits for it",
        ]
    );
    let report = s.scheduler.cycle();
    let failed: Vec<String> = report
        .units
        .iter()
        .filter_map(|(u, r)| match r {
            UnitResult::Failed(e) => Some(format!("{u:?}: {e}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        failed,
        [
            "Pod(\"ml/d\"): ResourceClaim \"ml/gpus\": spec.devices.requests[0].exactly.deviceClassName: DeviceClass \"missing.example.com\" not found"
        ]
    );
}

/// A PodGroup naming a Workload the input lacks is planned from its own spec (the
/// 1.37 PodGroup is decoupled from its Workload, KEP-5832); one naming a parent
/// CompositePodGroup, a kind the loader does not read, is planned on its own, with a
/// warning. A Workload/PodGroup cycle cannot be written: a PodGroup names its
/// Workload, never the reverse (the core refuses cycles of CompositePodGroups).
#[test]
fn pod_groups_naming_missing_workloads_or_parents_are_planned_alone() {
    let group = |name: &str, extra: &str| {
        format!(
            "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {{name: {name}, namespace: ml}}\nspec:\n  workloadRef: {{workloadName: missing, templateName: workers}}\n{extra}  schedulingPolicy: {{gang: {{minCount: 1}}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: {name}-0, namespace: ml}}\nspec:\n  schedulingGroup: {{podGroupName: {name}}}\n  containers: [{{name: main, image: busybox}}]\n"
        )
    };
    let text = format!(
        "{NODE}---\napiVersion: scheduling.k8s.io/v1alpha3\nkind: CompositePodGroup\nmetadata: {{name: parent, namespace: ml}}\nspec: {{}}\n---\n{}---\n{}",
        group("solo", ""),
        group("child", "  parentCompositePodGroupName: parent\n")
    );
    assert_eq!(
        warnings(&text),
        [
            "in.yaml doc 2: CompositePodGroup \"ml/parent\": skipped: CompositePodGroup (scheduling.k8s.io/v1alpha3) is not a kind gangpack reads",
            "in.yaml doc 5: PodGroup \"ml/child\": spec.parentCompositePodGroupName: CompositePodGroup \"ml/parent\" is not read (gangpack does not read that alpha kind): the group is planned on its own, without its parent's policy",
        ]
    );
    let mut s = snapshot(&text);
    assert_eq!(s.scheduler.cycle().pods_bound(), 2);
}

/// Found by fuzzing (`check_decisions`): a duplicate key, then a YAML error later in
/// the same document (here an alias to an anchor that does not exist). The loader went
/// on to the next document after the duplicate, but the YAML reader was still inside
/// this one, and it panicked ("unexpected end of mapping"). Now the duplicate is
/// reported and reading stops; a duplicate in a document that loads whole still lets
/// the next documents be read.
#[test]
fn a_duplicate_key_before_a_yaml_error_in_its_document_is_an_error_not_a_panic() {
    assert_eq!(
        errors("a: 1\na: 2\nb: *0\n"),
        "in.yaml doc 1: line 2: mapping key \"a\" already defined at line 1"
    );
    assert_eq!(
        errors("a: 1\na: 2\n---\nb: *0\n"),
        "in.yaml doc 1: line 2: mapping key \"a\" already defined at line 1\n\
         in.yaml doc 2: YAML syntax error: unknown anchor at line 4 column 4"
    );
}

/// `kubectl get -o json`'s one big List is read item by item (the loader's fast path):
/// its problems are those the same List written on one line (read whole) has, naming
/// the object, the item and the field; a duplicate key anywhere falls back to the whole
/// read, whose message has the duplicate's line.
#[test]
fn a_kubectl_json_list_says_what_the_same_list_read_whole_says() {
    let slice = |name: &str, driver: &str, extra: serde_json::Value, memory: &str| {
        let mut device = serde_json::json!({
            "name": "gpu-0",
            "capacity": {"memory": {"value": memory}},
        });
        if let (Some(d), serde_json::Value::Object(e)) = (device.as_object_mut(), extra) {
            d.extend(e);
        }
        serde_json::json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": name},
            "spec": {"driver": driver, "nodeName": "gpu-a",
                     "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [device]},
        })
    };
    let list = |items: Vec<serde_json::Value>| {
        let list = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
        (
            serde_json::to_string_pretty(&list).unwrap(),
            serde_json::to_string(&list).unwrap(),
        )
    };
    let node =
        serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a"}});
    let no_extra = serde_json::json!({});
    let (pretty, one_line) = list(vec![
        node.clone(),
        slice("a", "", no_extra.clone(), "80Gi"),
        slice(
            "b",
            "gpu.nvidia.com",
            serde_json::json!({"bogusField": 1}),
            "80Gi",
        ),
        slice("c", "gpu.nvidia.com", no_extra.clone(), "80 GiB"),
    ]);
    assert!(pretty.contains("\n  \"items\": [\n    {\n"), "{pretty}");
    for strict in [false, true] {
        let options = LoadOptions {
            strict,
            ..LoadOptions::default()
        };
        let fast = errors_with(&pretty, &options);
        assert_eq!(fast, errors_with(&one_line, &options));
        let unknown = "in.yaml doc 1 item 2: ResourceSlice \"b\": unknown field \"spec.devices[0].bogusField\"";
        if strict {
            // The load fails: the build's problems are not reached.
            assert_eq!(fast, unknown);
            continue;
        }
        assert!(
            fast.contains("in.yaml doc 1 item 1: ResourceSlice \"a\": spec.driver: "),
            "{fast}"
        );
        assert!(
            fast.contains("in.yaml doc 1 item 3: ResourceSlice \"c\": spec.devices[0].capacity[\"memory\"].value: "),
            "{fast}"
        );
    }
    let (pretty, _) = list(vec![node, slice("d", "gpu.nvidia.com", no_extra, "80Gi")]);
    let twice = pretty.replacen("\"name\": \"d\"", "\"name\": \"d\",\n\"name\": \"d\"", 1);
    // The duplicate's line: the one after the first definition's.
    let first = twice.find("\"name\": \"d\",\n").unwrap();
    let line = 2 + twice[..first].matches('\n').count();
    assert_eq!(
        errors(&twice),
        format!("in.yaml doc 1: line {line}: mapping key \"name\" already defined")
    );
}
