//! `gangpack plan` on the preemption scenarios of `cli/tests/fixtures/preemption/`
//! (issue 12): which victims a preemptor evicts when several sets would make room.
//! Every scenario runs on the four nodes of `cluster.yaml` with 8 GPUs each, all of them
//! in use, and a pending gang of higher priority; each fixture's header says what runs.
//!
//! The order is issue 31's (KEP-5710's workload-aware preemption, mirrored in
//! `shared/spec/gang.md` 1.4): the lowest highest-victim priority first; then, at that
//! priority, victim sets that leave every `All`-mode PodGroup running ("PodGroups are
//! considered more important than individual Pods of the same priority"); gangpack's
//! least cost (fewest pods, lowest priority sum, …) only breaks the remaining ties.
//!
//! Runs from the workspace root, so paths are as in the fixtures' comments.

mod common;

use common::run;
use serde_json::Value;

const CLUSTER: &str = "cli/tests/fixtures/preemption/cluster.yaml";
const FEWEST_PODS: &str = "cli/tests/fixtures/preemption/fewest-pods.yaml";
const LOWEST_PRIORITY: &str = "cli/tests/fixtures/preemption/lowest-priority.yaml";
const PODS_BEFORE_GROUP: &str = "cli/tests/fixtures/preemption/pods-before-group.yaml";
const LONE_POD: &str = "cli/tests/fixtures/preemption/lone-pod.yaml";
const MIXED_POLICY: &str = "cli/tests/fixtures/preemption/mixed-policy.yaml";
const GROUP_NEVER: &str = "cli/tests/fixtures/preemption/group-never.yaml";
const GATE_ON: &str = "PodGroupPreemptionPolicy=true";

/// Runs `gangpack plan -f CLUSTER -f scenario <rest>`: (exit code, stdout, stderr).
fn plan(scenario: &str, rest: &[&str]) -> (i32, String, String) {
    let mut args = vec!["plan", "-f", CLUSTER, "-f", scenario];
    args.extend_from_slice(rest);
    let r = run(&args);
    (r.code, r.out, r.err)
}

/// The objects of a `-o json` plan, by `kind/name`.
fn objects(scenario: &str) -> Vec<(String, Value)> {
    objects_with(scenario, &[], 0)
}

/// [`objects`] with more arguments, expecting exit code `expect`.
fn objects_with(scenario: &str, rest: &[&str], expect: i32) -> Vec<(String, Value)> {
    let mut args = vec!["-o", "json"];
    args.extend_from_slice(rest);
    let (code, out, err) = plan(scenario, &args);
    assert_eq!(code, expect, "{out}{err}");
    let list: Value = serde_json::from_str(&out).expect("stdout is JSON");
    list["items"]
        .as_array()
        .expect("a List")
        .iter()
        .map(|o| {
            let key = format!(
                "{}/{}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            );
            (key, o.clone())
        })
        .collect()
}

/// The `kind/name` of every object marked `DisruptionTarget` (reason
/// `PreemptionByScheduler`), sorted.
fn disruption_targets(objects: &[(String, Value)]) -> Vec<&str> {
    let mut out: Vec<&str> = objects
        .iter()
        .filter(|(_, o)| {
            o["status"]["conditions"].as_array().is_some_and(|cs| {
                cs.iter().any(|c| {
                    c["type"] == "DisruptionTarget" && c["reason"] == "PreemptionByScheduler"
                })
            })
        })
        .map(|(k, _)| k.as_str())
        .collect();
    out.sort_unstable();
    out
}

/// Each preemptor pod's `status.nominatedNodeName`.
fn nominated(objects: &[(String, Value)]) -> Vec<(&str, &str)> {
    objects
        .iter()
        .filter_map(|(k, o)| Some((k.as_str(), o["status"]["nominatedNodeName"].as_str()?)))
        .collect()
}

#[test]
fn among_all_mode_groups_of_equal_priority_the_one_of_two_pods_goes() {
    // Same priority everywhere and every victim an `All`-mode PodGroup: the order of
    // importance ties, and evicting `whole` (2 pods) is cheaper than both shard gangs
    // (8 pods).
    let (code, out, err) = plan(FEWEST_PODS, &[]);
    assert_eq!(code, 0, "a preemptor counts as placed: {out}{err}");
    assert_eq!(err, "");
    assert_eq!(
        out,
        "\
UNIT                OUTCOME    PODS  DEVICES  NODES
PodGroup ml/urgent  preempted  2     16       gpu-n1 gpu-n2

POD          NODE    COUNT  DEVICES
ml/urgent-0  gpu-n1  8      gpu.example.com/gpu-n1: gpu-0 gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7
ml/urgent-1  gpu-n2  8      gpu.example.com/gpu-n2: gpu-0 gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7

preemptions:
  PodGroup ml/urgent evicts:
    PodGroup ml/whole (2 pods, 16 devices, priority 100)

1 unit: 0 placed, 1 preempted, 0 pending, 0 invalid, 0 failed; 0 pods bound, 2 nominated, 0 devices allocated
"
    );
    let objects = objects(FEWEST_PODS);
    assert_eq!(
        disruption_targets(&objects),
        ["Pod/whole-0", "Pod/whole-1", "PodGroup/whole"]
    );
    assert_eq!(
        nominated(&objects),
        [("Pod/urgent-0", "gpu-n1"), ("Pod/urgent-1", "gpu-n2")]
    );
}

#[test]
fn a_lower_highest_victim_priority_comes_before_fewer_pods() {
    // `whole` runs at priority 200, the shards at 100: evicting the eight shards keeps
    // the highest victim priority at 100, which decides before the number of pods.
    urgent_evicts_the_eight_shard_pods(LOWEST_PRIORITY);
}

/// The plan of `scenario` on the full cluster: `urgent` preempts the eight shard pods
/// (gpu-n3 and gpu-n4) and leaves `whole` running; the table, the `DisruptionTarget`
/// marks and the nominated nodes, exactly.
fn urgent_evicts_the_eight_shard_pods(scenario: &str) {
    let (code, out, err) = plan(scenario, &[]);
    assert_eq!(code, 0, "a preemptor counts as placed: {out}{err}");
    assert_eq!(err, "");
    assert_eq!(
        out,
        "\
UNIT                OUTCOME    PODS  DEVICES  NODES
PodGroup ml/urgent  preempted  2     16       gpu-n3 gpu-n4

POD          NODE    COUNT  DEVICES
ml/urgent-0  gpu-n3  8      gpu.example.com/gpu-n3: gpu-0 gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7
ml/urgent-1  gpu-n4  8      gpu.example.com/gpu-n4: gpu-0 gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7

preemptions:
  PodGroup ml/urgent evicts:
    Pod ml/shards-a-0 (1 pod, 2 devices, priority 100)
    Pod ml/shards-a-1 (1 pod, 2 devices, priority 100)
    Pod ml/shards-a-2 (1 pod, 2 devices, priority 100)
    Pod ml/shards-a-3 (1 pod, 2 devices, priority 100)
    Pod ml/shards-b-0 (1 pod, 2 devices, priority 100)
    Pod ml/shards-b-1 (1 pod, 2 devices, priority 100)
    Pod ml/shards-b-2 (1 pod, 2 devices, priority 100)
    Pod ml/shards-b-3 (1 pod, 2 devices, priority 100)

1 unit: 0 placed, 1 preempted, 0 pending, 0 invalid, 0 failed; 0 pods bound, 2 nominated, 0 devices allocated
"
    );
    let objects = objects(scenario);
    assert_eq!(disruption_targets(&objects), shard_pods());
    assert!(
        objects.iter().all(|(k, _)| !k.contains("whole")),
        "whole keeps running untouched"
    );
    assert_eq!(
        nominated(&objects),
        [("Pod/urgent-0", "gpu-n3"), ("Pod/urgent-1", "gpu-n4")]
    );
}

/// The eight shard pods of `shards-a` and `shards-b`, as `Pod/name`.
fn shard_pods() -> Vec<String> {
    ["a", "b"]
        .iter()
        .flat_map(|g| (0..4).map(move |i| format!("Pod/shards-{g}-{i}")))
        .collect()
}

#[test]
fn at_equal_priority_eight_single_mode_pods_go_before_an_all_mode_group() {
    // The fewest-pods cluster with the shard gangs in `Single` mode: each shard pod is
    // a victim of its own. By cost `whole` (2 pods) would go; upstream reprieves the
    // PodGroup first because it outranks individual pods of the same priority, and the
    // preemptor fits without evicting it.
    urgent_evicts_the_eight_shard_pods(PODS_BEFORE_GROUP);
}

#[test]
fn a_gang_evicts_the_lone_pod_rather_than_a_podgroup_of_equal_priority() {
    // Issue 31's report: `ring` (an `All`-mode PodGroup of one pod, started later) and
    // `solo` (a pod without a group) each free the eight GPUs `urgent` needs, at the
    // same priority. Cost alone would pick `ring` (later start); the PodGroup outranks
    // the lone pod, so `solo` goes.
    let (code, out, err) = plan(LONE_POD, &[]);
    assert_eq!(code, 0, "a preemptor counts as placed: {out}{err}");
    assert_eq!(err, "");
    assert_eq!(
        out,
        "\
UNIT                OUTCOME    PODS  DEVICES  NODES
PodGroup ml/urgent  preempted  1     8        gpu-n2

POD          NODE    COUNT  DEVICES
ml/urgent-0  gpu-n2  8      gpu.example.com/gpu-n2: gpu-0 gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7

preemptions:
  PodGroup ml/urgent evicts:
    Pod ml/solo (1 pod, 8 devices, priority 100)

1 unit: 0 placed, 1 preempted, 0 pending, 0 invalid, 0 failed; 0 pods bound, 1 nominated, 0 devices allocated
"
    );
    let objects = objects(LONE_POD);
    assert_eq!(disruption_targets(&objects), ["Pod/solo"]);
    assert!(
        objects.iter().all(|(k, _)| !k.contains("ring")),
        "ring keeps running untouched"
    );
    assert_eq!(nominated(&objects), [("Pod/urgent-0", "gpu-n2")]);
}

/// The `(type, status, reason, message)` of object `key`'s condition `kind`.
fn condition<'a>(
    objects: &'a [(String, Value)],
    key: &str,
    kind: &str,
) -> Option<(&'a str, &'a str, &'a str)> {
    let (_, o) = objects.iter().find(|(k, _)| k == key)?;
    let c = o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)?;
    Some((
        c["status"].as_str()?,
        c["reason"].as_str()?,
        c["message"].as_str()?,
    ))
}

// Issue 31, the gate-dependent checks. Kubernetes 1.37's kube-scheduler
// (`validatePodGroup`) with the `PodGroupPreemptionPolicy` gate off, its default: "the
// preemption policy is determined by the first pod in the group", and a pod that
// differs fails the group with "all pods in a single pod group should have the same
// preemption policy" (condition PodGroupInitiallyScheduled=False, SchedulerError).
// With the gate on, every pod must have the PodGroup's policy, which decides.
// `shared/spec/gang.md` 1.1: "All pods of a group must also share `spec.schedulerName`
// and `preemptionPolicy`"; its 1.6.3: "Fail a group whose members disagree on
// `schedulerName`, priority value or `preemptionPolicy`, as upstream does" — the spec
// does not name the gate.

#[test]
fn pods_of_a_group_that_disagree_on_preemption_policy_fail_it_with_scheduler_error() {
    let (code, out, err) = plan(MIXED_POLICY, &[]);
    assert_eq!(code, 3, "an invalid unit exits 3: {out}{err}");
    assert!(
        out.contains(
            "PodGroup ml/urgent: invalid: Pod \"ml/urgent-1\": spec.preemptionPolicy: \
             invalid value \"Never\": must be the same for every pod of a PodGroup"
        ),
        "{out}"
    );
    let objects = objects_with(MIXED_POLICY, &[], 3);
    let (status, reason, message) =
        condition(&objects, "PodGroup/urgent", "PodGroupInitiallyScheduled").expect("condition");
    assert_eq!((status, reason), ("False", "SchedulerError"));
    assert!(message.contains("spec.preemptionPolicy"), "{message}");
    assert!(
        disruption_targets(&objects).is_empty(),
        "nothing is evicted"
    );
    assert!(nominated(&objects).is_empty(), "nothing is nominated");
    // The same with the gate on: the pods differ from each other, so one of them
    // differs from the group's policy too.
    let objects = objects_with(MIXED_POLICY, &["--feature-gates", GATE_ON], 3);
    let (_, reason, message) =
        condition(&objects, "PodGroup/urgent", "PodGroupInitiallyScheduled").expect("condition");
    assert_eq!(reason, "SchedulerError");
    assert!(message.contains("Pod \"ml/urgent-1\""), "{message}");
}

#[test]
fn without_the_gate_the_pods_policy_decides_and_the_groups_is_not_read() {
    // The PodGroup says Never, its pods PreemptLowerPriority: by default the pods'
    // policy decides, and `urgent` preempts `whole` as in fewest-pods.yaml.
    let (code, out, err) = plan(GROUP_NEVER, &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "PodGroup ml/urgent evicts:\n    PodGroup ml/whole (2 pods, 16 devices, priority 100)"
        ),
        "{out}"
    );
    let objects = objects(GROUP_NEVER);
    assert_eq!(
        disruption_targets(&objects),
        ["Pod/whole-0", "Pod/whole-1", "PodGroup/whole"]
    );
}

#[test]
fn with_the_gate_the_groups_policy_decides_and_every_pod_must_match_it() {
    let (code, out, _) = plan(GROUP_NEVER, &["--feature-gates", GATE_ON]);
    assert_eq!(code, 3, "{out}");
    let objects = objects_with(GROUP_NEVER, &["--feature-gates", GATE_ON], 3);
    let (status, reason, message) =
        condition(&objects, "PodGroup/urgent", "PodGroupInitiallyScheduled").expect("condition");
    assert_eq!((status, reason), ("False", "SchedulerError"));
    assert!(
        message.contains("must equal the preemptionPolicy of the pod's PodGroup"),
        "{message}"
    );
    assert!(
        disruption_targets(&objects).is_empty(),
        "nothing is evicted"
    );
    // Gate on and the pods agreeing with their group's PreemptLowerPriority: the group
    // preempts as without the gate.
    let (code, out, err) = plan(
        FEWEST_PODS,
        &["--feature-gates", "PodGroupPreemptionPolicy=true"],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("PodGroup ml/whole"),
        "the group's PreemptLowerPriority: {out}"
    );
}

#[test]
fn feature_gates_are_read_as_kube_scheduler_reads_them() {
    for (gates, says) in [
        ("Foo=true", "unrecognized feature gate: Foo"),
        ("PodGroupPreemptionPolicy", "missing bool value"),
        ("PodGroupPreemptionPolicy=yes", "expected true or false"),
    ] {
        let (code, out, err) = plan(FEWEST_PODS, &["--feature-gates", gates]);
        assert_eq!(code, 2, "{gates}: {out}{err}");
        assert!(err.contains(says), "{gates}: {err}");
    }
    // A later pair wins, and false is the default.
    let (code, out, err) = plan(
        GROUP_NEVER,
        &[
            "--feature-gates",
            "PodGroupPreemptionPolicy=true,PodGroupPreemptionPolicy=false",
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
}
