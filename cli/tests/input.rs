//! Issue 13, input as the API server and kubectl handle it, from manifests in the shapes
//! the NVIDIA (gpu.nvidia.com, MIG with counters), Intel (gpu.intel.com) and DRA example
//! (gpu.example.com) drivers publish:
//!
//! - every API version a 1.37 API server serves plans exactly like the version gangpack
//!   reads, and a version it does not serve is an error naming those it does;
//! - unknown fields are warnings naming their path, errors with `--strict` (plan,
//!   explain and taint alike);
//! - duplicate mapping keys are errors naming the document, the key and both lines;
//! - an object's problems are reported together;
//! - one warning per cause, with a count.
//!
//! Runs from the workspace root, so paths (and the file names in messages) are
//! `cli/tests/fixtures/input/...`. The fixtures that are deliberately not in the
//! versions gangpack reads, or not valid, are `*.yml` (gangpack reads both), which
//! tests/examples.rs, checking every `*.yaml` fixture against the `v1` types, leaves out.

mod common;

use common::{Run, root, run};

const DIR: &str = "cli/tests/fixtures/input";

/// `cli/tests/fixtures/input/NAME`.
pub(crate) fn fixture(name: &str) -> String {
    format!("{DIR}/{name}")
}

/// `gangpack COMMAND -f FILE... EXTRA...`.
pub(crate) fn gangpack(command: &str, files: &[&str], extra: &[&str]) -> Run {
    let paths: Vec<String> = files.iter().map(|f| fixture(f)).collect();
    let mut args = vec![command];
    for p in &paths {
        args.extend(["-f", p.as_str()]);
    }
    args.extend(extra);
    run(&args)
}

/// stderr, one entry per line.
pub(crate) fn lines(r: &Run) -> Vec<&str> {
    r.err.lines().collect()
}

// ------------------------------------------------------------------------ versions

/// The same objects in resource.k8s.io/v1 (and scheduling.k8s.io/v1beta1), v1beta1 (and
/// v1alpha3 DeviceTaintRule, scheduling.k8s.io/v1alpha3) and v1beta2.
const VERSIONS: [&str; 3] = [
    "resources-v1.yaml",
    "resources-v1beta1.yml",
    "resources-v1beta2.yml",
];

#[test]
fn the_v1_form_plans_every_driver_s_devices() {
    let r = gangpack("plan", &["common.yaml", VERSIONS[0]], &[]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    for (pod, node, devices) in [
        // The upper 3g.20gb MIG device is allocated: the lower one is left.
        (
            "ml/mig-worker",
            "dgx-0",
            "gpu.nvidia.com/dgx-0: gpu-0-mig-3g20gb-0",
        ),
        (
            "ml/intel-worker",
            "intel-0",
            "gpu.intel.com/intel-0: 0000-3a-00-0-0x0bd5",
        ),
        // gpu-7 is tainted (DeviceTaintRule): eight cannot be had, four can.
        (
            "ml/example-worker",
            "example-0",
            "gpu.example.com/example-0: gpu-2 gpu-3 gpu-4 gpu-5",
        ),
        ("ml/pair-0", "example-0", "gpu.example.com/example-0: gpu-0"),
        ("ml/pair-1", "example-0", "gpu.example.com/example-0: gpu-1"),
    ] {
        let count = devices.split(' ').count() - 1;
        let mut row = vec![pod, node];
        let count = count.to_string();
        row.push(&count);
        row.extend(devices.split(' '));
        assert!(r.has_row(&row), "no row {row:?} in:\n{}", r.out);
    }
}

#[test]
fn v1beta1_and_v1beta2_plan_exactly_like_v1() {
    for extra in [&[][..], &["-o", "yaml"], &["-o", "json"]] {
        let v1 = gangpack("plan", &["common.yaml", VERSIONS[0]], extra);
        assert_eq!(v1.code, 0, "{}{}", v1.out, v1.err);
        for other in &VERSIONS[1..] {
            let r = gangpack("plan", &["common.yaml", other], extra);
            assert_eq!(r.code, v1.code, "{other} {extra:?}: {}", r.err);
            assert_eq!(r.out, v1.out, "{other} {extra:?} plans differently");
            // No warning of its own (the conversion adds no unknown field) but the
            // one that a default API server does not serve the version.
            let (served, own): (Vec<&str>, Vec<&str>) = r
                .err
                .lines()
                .partition(|l| l.contains("which a default Kubernetes 1.37 API server"));
            assert_eq!(own, v1.err.lines().collect::<Vec<_>>(), "{other} {extra:?}");
            assert!(!served.is_empty(), "{other}: {}", r.err);
        }
    }
}

#[test]
fn v1beta1_and_v1beta2_explain_and_taint_like_v1() {
    let v1 = [
        gangpack(
            "taint",
            &["common.yaml", VERSIONS[0]],
            &[
                "--device",
                "gpu.example.com/example-0/gpu-0",
                "--after-plan",
            ],
        ),
        gangpack(
            "explain",
            &["common.yaml", VERSIONS[0]],
            &["--pod", "ml/mig-worker"],
        ),
    ];
    for other in &VERSIONS[1..] {
        let r = [
            gangpack(
                "taint",
                &["common.yaml", other],
                &[
                    "--device",
                    "gpu.example.com/example-0/gpu-0",
                    "--after-plan",
                ],
            ),
            gangpack(
                "explain",
                &["common.yaml", other],
                &["--pod", "ml/mig-worker"],
            ),
        ];
        for (a, b) in v1.iter().zip(&r) {
            assert_eq!((a.code, &a.out), (b.code, &b.out), "{other}: {}", b.err);
        }
    }
}

#[test]
fn a_version_1_37_does_not_serve_is_an_error_naming_those_it_does() {
    let r = gangpack("plan", &["unserved.yml"], &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert_eq!(
        lines(&r),
        [
            "error: cli/tests/fixtures/input/unserved.yml doc 1: ResourceClaim \
             \"ml/single-gpu\": apiVersion: resource.k8s.io/v1alpha3 is not served for \
             ResourceClaim by Kubernetes 1.37 (served: resource.k8s.io/v1, \
             resource.k8s.io/v1beta2, resource.k8s.io/v1beta1)",
            "error: cli/tests/fixtures/input/unserved.yml doc 2: Workload \"ml/trainer\": \
             apiVersion: scheduling.k8s.io/v1alpha1 is not served for Workload by Kubernetes \
             1.37 (served: scheduling.k8s.io/v1beta1, scheduling.k8s.io/v1alpha3)",
        ]
    );
}

// ------------------------------------------------------------------ unknown fields

const UNKNOWN: [&str; 4] = [
    "cli/tests/fixtures/input/unknown-fields.yml doc 3: ResourceSlice \
     \"example-0-gpu.example.com\": unknown field \"spec.devices[0].capacities\"",
    "cli/tests/fixtures/input/unknown-fields.yml doc 4: ResourceClaim \"ml/single-gpu\": \
     unknown field \"metadata.lables\"",
    // `exactly` is v1's: a v1beta1 request does not know it.
    "cli/tests/fixtures/input/unknown-fields.yml doc 4: ResourceClaim \"ml/single-gpu\": \
     unknown field \"spec.devices.requests[0].exactly\"",
    "cli/tests/fixtures/input/unknown-fields.yml doc 5: Pod \"ml/worker\": unknown field \
     \"spec.nodeSelecter\"",
];

#[test]
fn unknown_fields_are_warnings_naming_their_path() {
    let r = gangpack("plan", &["unknown-fields.yml"], &[]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let mut want: Vec<String> = UNKNOWN.iter().map(|w| format!("warning: {w}")).collect();
    for (doc, object, version) in [
        (3, "ResourceSlice \"example-0-gpu.example.com\"", "v1beta2"),
        (4, "ResourceClaim \"ml/single-gpu\"", "v1beta1"),
    ] {
        want.push(format!(
            "warning: {DIR}/unknown-fields.yml doc {doc}: {object}: uses resource.k8s.io/{version}, \
             which a default Kubernetes 1.37 API server does not serve (only with \
             --runtime-config=resource.k8s.io/{version}=true); converted to resource.k8s.io/v1"
        ));
    }
    assert_eq!(lines(&r), want);
    // Ignored as the API server ignores them: the pod is placed on the one GPU.
    assert!(
        r.has_row(&[
            "ml/worker",
            "example-0",
            "1",
            "gpu.example.com/example-0:",
            "gpu-0"
        ]),
        "{}",
        r.out
    );
}

#[test]
fn strict_makes_unknown_fields_errors_in_every_command() {
    let want: Vec<String> = UNKNOWN.iter().map(|w| format!("error: {w}")).collect();
    for (command, extra) in [
        ("plan", &[][..]),
        ("explain", &[][..]),
        (
            "taint",
            &["--device", "gpu.example.com/example-0/gpu-0"][..],
        ),
    ] {
        let mut args = extra.to_vec();
        args.push("--strict");
        let r = gangpack(command, &["unknown-fields.yml"], &args);
        assert_eq!(r.code, 2, "{command}: {}", r.out);
        assert_eq!(lines(&r), want, "{command}");
    }
    // Input without unknown fields is not affected.
    let r = gangpack("plan", &["common.yaml", VERSIONS[1]], &["--strict"]);
    assert_eq!(r.code, 0, "{}", r.err);
}

// ------------------------------------------------------------------ duplicate keys

#[test]
fn duplicate_mapping_keys_are_errors_naming_document_key_and_lines() {
    let r = gangpack("plan", &["duplicate-keys.yml"], &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    assert_eq!(
        lines(&r),
        [
            "error: cli/tests/fixtures/input/duplicate-keys.yml doc 2: line 12: mapping key \
             \"metadata\" already defined at line 11",
            "error: cli/tests/fixtures/input/duplicate-keys.yml doc 3: line 29: mapping key \
             \"index\" already defined at line 27",
        ]
    );
}

// ------------------------------------------------------- all of an object's problems

#[test]
fn a_slice_reports_every_problem_at_once() {
    let r = gangpack("plan", &["bad-slice.yml"], &[]);
    assert_eq!(r.code, 2, "{}", r.out);
    let at = "error: cli/tests/fixtures/input/bad-slice.yml doc 1: ResourceSlice \
              \"dgx-0-gpu.nvidia.com\": ";
    let want: Vec<String> = [
        "spec: exactly one of `nodeName`, `nodeSelector`, `allNodes`, \
         `perDeviceNodeSelection` must be set, found 0",
        "spec.devices[0].attributes[\"productName\"]: exactly one of `bool`, `bools`, `int`, \
         `ints`, `string`, `strings`, `version`, `versions` must be set, found 2",
        "spec.devices[0].capacity[\"memory\"].value: invalid quantity \"40 GiB\": unexpected \
         character ' ' at byte 2",
        "spec.driver: required value",
        "spec.pool.name: required value",
        "spec.pool.resourceSliceCount: invalid value \"0\": must be greater than zero",
    ]
    .iter()
    .map(|l| format!("{at}{l}"))
    .collect();
    assert_eq!(lines(&r), want);
}

// ---------------------------------------------------------- one warning per cause

#[test]
fn one_warning_per_cause_with_a_count() {
    let r = gangpack("plan", &["alpha-fields.yaml"], &[]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        lines(&r),
        [
            "warning: spec.devices[*].consumesCounters[*].compatibilityGroups (alpha) is not \
             modelled: ignored (16 times in 2 objects: ResourceSlice \
             \"dgx-1-gpu.nvidia.com-devices\" (cli/tests/fixtures/input/alpha-fields.yaml doc \
             4), ResourceSlice \"dgx-2-gpu.nvidia.com-devices\" \
             (cli/tests/fixtures/input/alpha-fields.yaml doc 7))",
        ]
    );
}

// ------------------------------------------------------------------------- README

#[test]
fn the_readme_shows_real_messages() {
    let readme = std::fs::read_to_string(root().join("cli/README.md")).expect("README");
    let section = readme
        .split("## Input: API versions, unknown fields and --strict")
        .nth(1)
        .expect("cli/README.md has the section");
    for r in [
        gangpack("plan", &["unserved.yml"], &[]),
        gangpack("plan", &["unknown-fields.yml"], &["--strict"]),
        gangpack("plan", &["duplicate-keys.yml"], &[]),
        gangpack("plan", &["alpha-fields.yaml"], &[]),
    ] {
        assert!(
            section.contains(&r.err),
            "cli/README.md does not show:\n{}",
            r.err
        );
    }
}
