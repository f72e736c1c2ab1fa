//! `gangpack plan` and `explain` act on the `NoExecute` taints already in their input:
//! evictions due at `--now` are carried out before the cycle, later ones are reported.
//!
//! Each scenario is a manifest under `cli/tests/fixtures/evictions/` (what `kubectl get
//! -o yaml` prints) with its expected table next to it (`NAME.plan`, or
//! `NAME.at-TIME.plan` with `--now`); `GANGPACK_BLESS=1 cargo test -p gangpack-cli --test
//! evictions` rewrites them. The YAML output is checked field by field.

mod common;

use common::root;
use serde_json::Value;

const DIR: &str = "cli/tests/fixtures/evictions";

/// Runs `gangpack ARGS` from the workspace root: (exit code, stdout).
fn run(args: &[&str]) -> (i32, String) {
    let r = common::run(args);
    (r.code, r.out)
}

fn fixture(name: &str) -> String {
    format!("{DIR}/{name}.yaml")
}

/// Checks `out` against the golden file `name` (rewritten with `GANGPACK_BLESS=1`).
fn golden(name: &str, out: &str) {
    let path = root().join(DIR).join(name);
    if std::env::var_os("GANGPACK_BLESS").is_some() {
        std::fs::write(&path, out).expect("golden file written");
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (run with GANGPACK_BLESS=1)", path.display()));
    assert_eq!(out, want, "stdout differs from {}", path.display());
}

/// The changed objects of `plan -o json`, by `Kind/namespace/name`.
fn changed(args: &[&str]) -> Vec<(String, Value)> {
    let mut all = vec!["plan"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", "json"]);
    let (_, out) = run(&all);
    let list: Value = serde_json::from_str(&out).expect("stdout is JSON");
    list["items"]
        .as_array()
        .expect("a List")
        .iter()
        .map(|o| {
            let key = format!(
                "{}/{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["namespace"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            );
            (key, o.clone())
        })
        .collect()
}

fn object<'a>(objects: &'a [(String, Value)], key: &str) -> &'a Value {
    &objects
        .iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| {
            let keys: Vec<&str> = objects.iter().map(|(k, _)| k.as_str()).collect();
            panic!("{key} is not among the changed objects {keys:?}")
        })
        .1
}

fn condition<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
}

/// The acceptance case: a running `disruptionMode: All` gang on a GPU a DeviceTaintRule
/// taints `NoExecute` (untolerated, due): both pods go, their claims are released,
/// and the freed devices are planned again.
#[test]
fn a_due_device_taint_evicts_the_whole_all_mode_gang() {
    let files = [
        "-f",
        "examples/cluster",
        "-f",
        "examples/running-job.yaml",
        "-f",
        "cli/tests/fixtures/evictions/xid-rule.yaml",
    ];
    let mut args = vec!["plan"];
    args.extend_from_slice(&files);
    let (code, out) = run(&args);
    assert_eq!(code, 0, "{out}");
    golden("xid-rule.plan", &out);

    let objects = changed(&files);
    for (pod, direct) in [
        ("resnet-finetune-worker-0", true),
        ("resnet-finetune-worker-1", false),
    ] {
        let p = object(&objects, &format!("Pod/ml/{pod}"));
        let c = condition(p, "DisruptionTarget").expect("DisruptionTarget set");
        assert_eq!(c["status"], "True");
        // A member evicted with its group gets the reason of the taint that started it.
        assert_eq!(
            c["reason"], "DeletionByDeviceTaintManager",
            "{pod} (direct: {direct})"
        );
        assert_eq!(
            c["message"],
            "Device Taint manager: deleting due to NoExecute taint"
        );
        assert_eq!(c["lastTransitionTime"], "2026-11-03T17:00:00Z");
        assert_eq!(p["metadata"]["deletionTimestamp"], "2026-11-03T17:00:30Z");
        assert_eq!(p["metadata"]["deletionGracePeriodSeconds"], 30);
    }
    for claim in [
        "resnet-finetune-worker-0-gpus-x7k2p",
        "resnet-finetune-worker-1-gpus-q9m4t",
    ] {
        let c = object(&objects, &format!("ResourceClaim/ml/{claim}"));
        assert!(c["status"]["allocation"].is_null(), "{claim} released: {c}");
        assert!(c["status"]["reservedFor"].is_null(), "{claim}: {c}");
    }
}

/// With the rack gang of `examples/gang-rack.yaml` pending as well, the freed GPUs of
/// gpu-r1-n1 are planned again; the one still tainted stays out.
#[test]
fn the_cycle_runs_on_the_freed_devices() {
    let (code, out) = run(&[
        "plan",
        "-f",
        "examples/cluster",
        "-f",
        "examples/running-job.yaml",
        "-f",
        "cli/tests/fixtures/evictions/xid-rule.yaml",
        "-f",
        "examples/gang-rack.yaml",
    ]);
    golden("xid-rule-and-gang.plan", &out);
    assert_eq!(code, 3, "{out}");
    // Without the rule the job holds four GPUs of rack-1, and the gang's reason says so.
    let (_, before) = run(&[
        "plan",
        "-f",
        "examples/cluster",
        "-f",
        "examples/running-job.yaml",
        "-f",
        "examples/gang-rack.yaml",
    ]);
    assert!(before.contains("allocated to other claims"), "{before}");
    assert!(!out.contains("allocated to other claims"), "{out}");
}

/// A claim that tolerates a device taint for 600 s: at 10:00 the eviction is reported as
/// due at 10:05 and the gang that needs its GPUs stays pending (and `explain` says the
/// eviction will free room); at 10:05 the pod is evicted first and the gang placed.
#[test]
fn an_eviction_not_yet_due_is_reported_and_explained() {
    let file = fixture("device-toleration");
    let (code, out) = run(&["plan", "-f", &file]);
    assert_eq!(code, 3, "{out}");
    golden("device-toleration.plan", &out);
    assert!(out.contains("due Pod default/inference at 2026-12-01T10:05:00Z"));

    let (_, why) = run(&["explain", "-f", &file, "default/train"]);
    assert!(
        why.contains(
            "pending evictions free room: once the NoExecute evictions due by \
             2026-12-01T10:05:00Z are carried out (1 pod: default/inference), it would be \
             placed"
        ),
        "{why}"
    );

    let (code, out) = run(&["plan", "-f", &file, "--now", "2026-12-01T10:05:00Z"]);
    assert_eq!(code, 0, "{out}");
    golden("device-toleration.at-10-05.plan", &out);
    let objects = changed(&["-f", &file, "--now", "2026-12-01T10:05:00Z"]);
    let evicted = object(&objects, "Pod/default/inference");
    assert_eq!(
        condition(evicted, "DisruptionTarget").expect("set")["reason"],
        "DeletionByDeviceTaintManager"
    );
    let released = object(&objects, "ResourceClaim/default/inference-gpus");
    assert!(released["status"]["allocation"].is_null(), "{released}");
    for pod in ["train-0", "train-1"] {
        let p = object(&objects, &format!("Pod/default/{pod}"));
        assert!(p["spec"]["nodeName"].is_string(), "{pod} bound: {p}");
    }
    // Node-b's tainted GPU is not given to the gang (its claims do not tolerate it).
    assert!(!out.contains("gpu-3"), "{out}");
}

/// A node `NoExecute` taint tolerated for 600 s: each pod's timer starts when the taint
/// manager first saw it on the tainted node — the taint's `timeAdded` for a pod bound
/// before, its binding for one bound after.
#[test]
fn node_taint_timers_start_at_the_later_of_binding_and_taint() {
    let file = fixture("node-drain");
    let (code, out) = run(&["plan", "-f", &file]);
    assert_eq!(code, 0, "{out}");
    golden("node-drain.plan", &out);
    assert!(
        out.contains(
            "evicted Pod default/batch-old (due 2026-12-01T09:10:00Z, DeletionByTaintManager)"
        ),
        "{out}"
    );
    assert!(
        out.contains("due Pod default/batch-new at 2026-12-01T10:05:00Z"),
        "{out}"
    );
    let objects = changed(&["-f", &file]);
    let old = object(&objects, "Pod/default/batch-old");
    let c = condition(old, "DisruptionTarget").expect("set");
    assert_eq!(c["reason"], "DeletionByTaintManager");
    assert_eq!(
        c["message"],
        "Taint manager: deleting due to NoExecute taint"
    );
    assert!(
        !objects.iter().any(|(k, _)| k == "Pod/default/batch-new"),
        "batch-new is not evicted yet"
    );
    assert!(object(&objects, "Pod/default/job")["spec"]["nodeName"].is_string());
}

/// A new pod may not reserve an allocated claim whose device carries a `NoExecute`
/// taint the claim does not tolerate; the reason names the claim, device and taint.
#[test]
fn a_claim_with_an_untolerated_no_execute_device_cannot_be_reserved() {
    let file = fixture("tainted-claim");
    let (code, out) = run(&["plan", "-f", &file]);
    assert_eq!(code, 3, "{out}");
    golden("tainted-claim.plan", &out);
    assert!(
        out.contains(
            "claim default/shared-gpus is allocated and its device \
             gpu.example.com/node-a/gpu-1 carries gpu.example.com/xid=79:NoExecute, not \
             tolerated: new pods may not reserve it"
        ),
        "{out}"
    );
    let (_, why) = run(&["explain", "-f", &file, "--pod", "default/reader"]);
    assert!(why.contains("UnschedulableAndUnresolvable"), "{why}");
    assert!(why.contains("new pods may not reserve it"), "{why}");
}
