//! Issue 13 part 1 from manifests: DeviceClasses and claims in the shapes real DRA
//! drivers publish (NVIDIA, Intel, AMD, TPU), with the CEL functions real manifests use
//! (`matches()`, `find()`, `split()`, `lowerAscii()`, semver), plan like Kubernetes
//! plans them; a selector reading an attribute a device lacks fails the pod's attempt
//! with the CEL error (as upstream aborts the allocation); a pattern that does not
//! compile makes its object invalid.
//!
//! Runs from the workspace root, so paths (and the file names in messages) are
//! `cli/tests/fixtures/...`.

mod common;

use common::run;

const DRIVERS: &str = "cli/tests/fixtures/drivers";
const CLUSTER: &str = "cli/tests/fixtures/drivers/cluster.yaml";
const NAMESPACE: &str = "cli/tests/fixtures/drivers/namespace.yaml";

fn with(file: &str) -> Vec<String> {
    [CLUSTER, NAMESPACE, file]
        .iter()
        .flat_map(|f| ["-f".to_owned(), (*f).to_owned()])
        .collect()
}

fn plan(file: &str) -> common::Run {
    let mut args = vec!["plan".to_owned()];
    args.extend(with(file));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

#[test]
fn each_claim_lands_on_the_devices_its_selector_picks() {
    let r = run(&["plan", "-f", DRIVERS]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(r.err.is_empty(), "{}", r.err);
    for (pod, node, devices) in [
        // matches("^NVIDIA (H100|H200|B200)"): the H100 node, not the A100 one.
        (
            "ml/hopper-or-blackwell",
            "nv-h100",
            &["gpu.nvidia.com/nv-h100:", "gpu-0", "gpu-1"][..],
        ),
        // split("-")[1] of "NVIDIA A100-SXM4-40GB" and compute capability 8.0.0.
        (
            "ml/ampere-by-cc",
            "nv-a100",
            &["gpu.nvidia.com/nv-a100:", "gpu-0"],
        ),
        // lowerAscii().split(" ").exists(...) and a hex-range pattern.
        (
            "ml/intel-max",
            "intel-max",
            &["gpu.intel.com/intel-max:", "card0", "card1"],
        ),
        // find("MI[0-9]+X") == "MI300X".
        (
            "ml/mi300x",
            "amd-mi300",
            &["gpu.amd.com/amd-mi300:", "gpu-0"],
        ),
        // split("x").size() == 3.
        (
            "ml/tpu-slice",
            "tpu-v5p",
            &[
                "tpu.google.com/tpu-v5p:",
                "tpu-0",
                "tpu-1",
                "tpu-2",
                "tpu-3",
            ],
        ),
    ] {
        let count = (devices.len() - 1).to_string();
        let mut row = vec![pod, node, count.as_str()];
        row.extend_from_slice(devices);
        assert!(r.has_row(&row), "{row:?}\n{}", r.out);
    }
}

#[test]
fn a_selector_reading_a_missing_attribute_fails_the_pod_with_the_cel_error() {
    let r = plan("cli/tests/fixtures/drivers-errors/missing-attribute.yaml");
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["Pod", "ml/mig-user", "failed", "1", "0"]),
        "{}",
        r.out
    );
    // The template (where it is) and the claim made from it, the request, the
    // expression, the device and the error.
    let line = r
        .out
        .lines()
        .find(|l| l.starts_with("  Pod ml/mig-user: failed: "))
        .unwrap_or_else(|| panic!("no reason line:\n{}", r.out));
    for part in [
        "missing-attribute.yaml doc 1: ResourceClaimTemplate \"ml/mig-1g\" (for the claim \
         ml/mig-user-mig-",
        "request mig",
        "`device.attributes[\"gpu.nvidia.com\"].profile == \"1g.10gb\"`",
        "on device gpu.nvidia.com/nv-a100/gpu-0",
        "no such key: profile",
    ] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
    // cli/README.md shows this very line.
    let readme = std::fs::read_to_string(common::root().join("cli/README.md")).expect("README");
    assert!(
        readme.contains(&format!("```text\n{line}\n```")),
        "README lacks:\n{line}"
    );
    // explain says the same.
    let mut args = vec!["explain".to_owned()];
    args.extend(with(
        "cli/tests/fixtures/drivers-errors/missing-attribute.yaml",
    ));
    args.extend(["--pod".to_owned(), "ml/mig-user".to_owned()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let x = run(&args);
    assert!(x.out.contains("no such key: profile"), "{}", x.out);
    assert!(x.out.contains("failed"), "{}", x.out);
}

#[test]
fn a_guarded_selector_is_no_error_and_the_explanation_names_it() {
    let r = plan("cli/tests/fixtures/drivers-errors/guarded.yaml");
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["Pod", "ml/mig-guarded", "pending", "1", "0"]),
        "{}",
        r.out
    );
    assert!(
        r.out.contains(
            "0 match the request's selector `has(device.attributes[\"gpu.nvidia.com\"].profile)"
        ),
        "{}",
        r.out
    );
}

#[test]
fn a_pattern_that_does_not_compile_makes_its_object_invalid() {
    let r = plan("cli/tests/fixtures/drivers-errors/bad-pattern.yaml");
    assert_eq!(r.code, 2, "{}{}", r.out, r.err);
    assert!(r.out.is_empty(), "{}", r.out);
    assert!(
        r.err.contains(
            "bad-pattern.yaml doc 1: ResourceClaim \"ml/bad-pattern\": \
             spec.devices.requests[0].exactly.selectors[0].cel.expression: invalid CEL \
             expression: at 56: "
        ),
        "{}",
        r.err
    );
    assert!(r.err.contains("unclosed group"), "{}", r.err);
}

/// `plan` over the drivers' cluster, the MIG node and `file`.
fn plan_with_mig_node(file: &str) -> common::Run {
    let mut args = vec!["plan".to_owned()];
    args.extend(with(file));
    args.extend([
        "-f".to_owned(),
        "cli/tests/fixtures/drivers-errors/mig-node.yaml".to_owned(),
    ]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run(&args)
}

#[test]
fn an_error_on_any_node_fails_the_pod_even_where_another_node_fits() {
    // mig-a fits and is tried first; the full GPUs elsewhere make the selector fail, and
    // upstream filters every node before it chooses.
    let r = plan_with_mig_node("cli/tests/fixtures/drivers-errors/missing-attribute.yaml");
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["Pod", "ml/mig-user", "failed", "1", "0"]),
        "{}",
        r.out
    );
    assert!(r.out.contains("no such key: profile"), "{}", r.out);
    // Guarded, the same cluster places it on mig-a.
    let r = plan_with_mig_node("cli/tests/fixtures/drivers-errors/guarded.yaml");
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["Pod", "ml/mig-guarded", "placed", "1", "1", "mig-a"]),
        "{}",
        r.out
    );
}
