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

/// Runs `gangpack plan -f CLUSTER -f scenario <rest>`: (exit code, stdout, stderr).
fn plan(scenario: &str, rest: &[&str]) -> (i32, String, String) {
    let mut args = vec!["plan", "-f", CLUSTER, "-f", scenario];
    args.extend_from_slice(rest);
    let r = run(&args);
    (r.code, r.out, r.err)
}

/// The objects of a `-o json` plan, by `kind/name`.
fn objects(scenario: &str) -> Vec<(String, Value)> {
    let (code, out, err) = plan(scenario, &["-o", "json"]);
    assert_eq!(code, 0, "{out}{err}");
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
    let (code, out, err) = plan(LOWEST_PRIORITY, &[]);
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
    let objects = objects(LOWEST_PRIORITY);
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
    let (code, out, err) = plan(PODS_BEFORE_GROUP, &[]);
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
    let objects = objects(PODS_BEFORE_GROUP);
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
