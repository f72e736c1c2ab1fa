//! Issue 13 part 2 from manifests: `plan`'s one-line reason, `explain`'s tree and its
//! "what it would take" name the real blocker when a claim's own selector, a
//! constraint, a capacity request or shared counters (MIG) leave no device, and the
//! minimal blocking set is resolvable exactly when freeing what others hold helps.
//!
//! Each scenario is a manifest under `cli/tests/fixtures/explanations/`, loaded after
//! the cluster it names (the dra-example-driver's shape in `example-driver.yaml`, the
//! NVIDIA driver's MIG shape in `nvidia-mig.yaml`); `NAME.golden` holds what `plan` and
//! `explain` print. `GANGPACK_BLESS=1 cargo test -p gangpack-cli --test explanations`
//! rewrites the goldens.

mod common;

use common::{root, run};

const DIR: &str = "cli/tests/fixtures/explanations";

/// `plan` then `explain --pod POD` on the cluster file and the scenario, as one text,
/// checked against `NAME.golden`; returned for further checks.
fn scenario(cluster: Option<&str>, name: &str, pod: &str) -> String {
    let scenario = format!("{DIR}/{name}.yaml");
    let mut files: Vec<String> = Vec::new();
    if let Some(c) = cluster {
        files.extend(["-f".to_owned(), format!("{DIR}/{c}.yaml")]);
    }
    files.extend(["-f".to_owned(), scenario]);
    let files: Vec<&str> = files.iter().map(String::as_str).collect();
    let mut plan = vec!["plan"];
    plan.extend(&files);
    let p = run(&plan);
    assert!(p.err.is_empty(), "{}", p.err);
    let mut explain = vec!["explain"];
    explain.extend(&files);
    explain.extend(["--pod", pod]);
    let e = run(&explain);
    // Of the plan, its reasons only (the table's columns are not the subject here).
    let mut reasons = String::new();
    for l in p
        .out
        .lines()
        .skip_while(|l| *l != "not placed:")
        .take_while(|l| !l.is_empty())
    {
        reasons.push_str(l);
        reasons.push('\n');
    }
    let out = format!(
        "$ gangpack plan (exit {})\n{reasons}\n$ gangpack explain --pod {pod} (exit {})\n{}",
        p.code, e.code, e.out
    );
    let path = root().join(DIR).join(format!("{name}.golden"));
    if std::env::var_os("GANGPACK_BLESS").is_some() {
        std::fs::write(&path, &out).expect("golden file written");
    } else {
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with GANGPACK_BLESS=1)", path.display()));
        assert_eq!(out, want, "output differs from {}", path.display());
    }
    out
}

/// The explanation's line for the minimal blocking set.
fn blocking(out: &str) -> &str {
    out.lines()
        .find(|l| l.contains("blocking set"))
        .unwrap_or_else(|| panic!("no blocking set in {out}"))
}

#[test]
fn a_selector_that_matches_no_device_is_named_with_counts_and_unresolvable() {
    let out = scenario(
        Some("example-driver"),
        "selector-nomatch",
        "default/train-0",
    );
    let selector = "0 match the request's selector \
                    `device.attributes[\"gpu.example.com\"].model == \"B200\"`";
    assert!(
        out.contains("PodGroup default/train: 0 of 2 pods fit: claim default/train-0-gpu-"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "request gpu: on 2 nodes (gpu-a, gpu-b), 5 devices match class gpu.example.com, \
             {selector}"
        )),
        "{out}"
    );
    assert!(!out.contains("can each host a pod"), "{out}");
    assert!(out.contains("0 nodes can host 0"), "{out}");
    assert!(blocking(&out).ends_with("(unresolvable)"), "{out}");
    // "What it would take" names the selector too, not free devices.
    assert!(
        out.contains("capacity: more free devices would not help; first, change:"),
        "{out}"
    );
    assert!(!out.contains("fit by count, but not together"), "{out}");
}

#[test]
fn a_selector_blocked_only_by_devices_in_use_is_resolvable() {
    let out = scenario(Some("example-driver"), "selector-in-use", "default/batch");
    assert!(
        out.contains(
            "Pod default/batch: 0 of 1 pod fits: 1 device on 1 node (gpu-b) is \
             allocated to other claims"
        ),
        "{out}"
    );
    assert!(
        out.contains("Unschedulable (capacity other workloads hold is in the way)"),
        "{out}"
    );
    assert!(
        out.contains("Pod default/batch: pending; waiting helps: the room it needs is held by Pod default/serve"),
        "{out}"
    );
    assert!(blocking(&out).ends_with("(capacity others hold)"), "{out}");
}

#[test]
fn a_capacity_request_larger_than_any_device_is_named() {
    let out = scenario(Some("example-driver"), "capacity", "default/big");
    assert!(
        out.contains(
            "claim default/big-memory, request gpu asks for capacity memory=100Gi: on 2 nodes \
             (gpu-a, gpu-b), 0 of the 5 matching devices can provide it"
        ),
        "{out}"
    );
    assert!(blocking(&out).ends_with("(unresolvable)"), "{out}");
}

#[test]
fn a_match_attribute_no_node_satisfies_is_named() {
    let out = scenario(None, "match-attribute", "default/pair");
    assert!(
        out.contains(
            "claim default/pair: matchAttribute resource.kubernetes.io/pcieRoot (requests gpus): \
             2 devices need one common value, but at most 1 of the devices the requests could \
             use on 1 node (gpu-c) share one"
        ),
        "{out}"
    );
    assert!(blocking(&out).ends_with("(unresolvable)"), "{out}");
}

#[test]
fn mig_devices_whose_counters_the_full_gpu_consumes_are_resolvable() {
    let out = scenario(
        Some("nvidia-mig"),
        "mig-counters-in-use",
        "default/inference",
    );
    assert!(
        out.contains(
            "2 free devices on 1 node (dgx-0) draw on shared counters that devices allocated to \
             other claims consume"
        ),
        "{out}"
    );
    assert!(blocking(&out).ends_with("(capacity others hold)"), "{out}");
}

#[test]
fn mig_devices_overlapping_on_memory_slices_are_too_few_whatever_runs() {
    let out = scenario(Some("nvidia-mig"), "mig-counters-too-few", "default/sweep");
    assert!(
        out.contains(
            "claim default/three-migs, request migs: on 1 node (dgx-0), the shared counters of \
             the 3 matching devices admit at most 2 together, even with nothing allocated (3 \
             needed per pod)"
        ),
        "{out}"
    );
    assert!(blocking(&out).ends_with("(unresolvable)"), "{out}");
}

#[test]
fn first_available_names_every_failing_subrequest() {
    let out = scenario(Some("example-driver"), "first-available", "default/flex");
    assert!(
        out.contains(
            "claim default/flex-gpu, request gpu/b200: on 2 nodes (gpu-a, gpu-b), 5 devices \
             match class gpu.example.com, 0 match the request's selector"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "claim default/flex-gpu, request gpu/h100s: on 1 node (gpu-a), 3 devices match class \
             gpu.example.com, 2 match the request's selector"
        ),
        "{out}"
    );
    assert!(blocking(&out).ends_with("(unresolvable)"), "{out}");
}

#[test]
fn a_selector_error_names_claim_request_expression_and_device() {
    let r = run(&["plan", "-f", &format!("{DIR}/celerr.yaml")]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    let want = "request gpu: selector #0 \
                `device.attributes[\"gpu.example.com\"].model == \"H100\"` failed on device \
                gpu.example.com/gpu-a/gpu-0: CEL runtime error: no such key: model";
    assert!(r.out.contains(want), "{}", r.out);
    let e = run(&[
        "explain",
        "-f",
        &format!("{DIR}/celerr.yaml"),
        "--pod",
        "default/p",
    ]);
    assert!(
        e.out.contains(want) || e.err.contains(want),
        "{}{}",
        e.out,
        e.err
    );
}

#[test]
fn a_class_selector_error_fails_the_pod_naming_the_class_and_its_expression() {
    let file = format!("{DIR}/class-celerr.yaml");
    let r = run(&["plan", "-f", &file]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    let want = "Pod default/p: failed: ResourceClaim \"default/c\": request gpu: DeviceClass \
                gpu.example.com selector #0 \
                `device.attributes[\"gpu.example.com\"].model == \"H100\"` failed on device \
                gpu.example.com/gpu-a/gpu-0: CEL runtime error: no such key: model";
    assert!(r.out.contains(want), "{}", r.out);
    assert!(!r.out.contains("no device matches class"), "{}", r.out);
    let e = run(&["explain", "-f", &file, "--pod", "default/p"]);
    assert!(
        e.out.contains(want) || e.err.contains(want),
        "{}{}",
        e.out,
        e.err
    );
}

#[test]
fn a_selector_blocked_by_a_lower_priority_holder_is_resolved_by_preemption() {
    let r = run(&[
        "plan",
        "-f",
        &format!("{DIR}/example-driver.yaml"),
        "-f",
        &format!("{DIR}/selector-preempt.yaml"),
    ]);
    assert!(
        r.has_row(&["Pod", "default/batch", "preempted", "1", "1", "gpu-b"]),
        "{}",
        r.out
    );
    assert!(
        r.has_row(&[
            "default/batch",
            "gpu-b",
            "1",
            "gpu.example.com/gpu-b:",
            "gpu-1"
        ]),
        "{}",
        r.out
    );
}
