//! Issue 12 part 4 from manifests: the placer revisits the device choices other nodes'
//! pods see, so gangs that fit only when an earlier choice is taken back are placed —
//! a pod's own network-attached fabric port (`network-gang.yaml`) and a PodGroup-level
//! claim's port (`group-claim-gang.yaml`), both on `cluster.yaml`'s fabric of two
//! ports every node reaches.
//!
//! Runs from the workspace root, so paths are `cli/tests/fixtures/...`.

mod common;

use common::{Run, run};
use serde_json::Value;

const DIR: &str = "cli/tests/fixtures/placer-limits";

/// `gangpack plan` on the cluster and one workload file, with `rest`.
fn plan(workload: &str, rest: &[&str]) -> Run {
    let cluster = format!("{DIR}/cluster.yaml");
    let workload = format!("{DIR}/{workload}");
    let mut args = vec!["plan", "-f", &cluster, "-f", &workload];
    args.extend_from_slice(rest);
    run(&args)
}

/// The objects `plan -o json` prints.
fn objects(workload: &str) -> Vec<Value> {
    let r = plan(workload, &["-o", "json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let list: Value = serde_json::from_str(&r.out).expect("stdout is JSON");
    list["items"].as_array().expect("items").clone()
}

fn find<'a>(items: &'a [Value], kind: &str, name: &str) -> &'a Value {
    items
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{kind} {name} not in the output"))
}

/// The devices (`pool/device`) of claim `name`'s `status.allocation`.
fn allocated(items: &[Value], name: &str) -> Vec<String> {
    find(items, "ResourceClaim", name)["status"]["allocation"]["devices"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("ResourceClaim {name} is not allocated"))
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["pool"].as_str().unwrap(),
                r["device"].as_str().unwrap()
            )
        })
        .collect()
}

#[test]
fn a_pods_network_attached_choice_is_revisited_for_another_node() {
    let r = plan("network-gang.yaml", &[]);
    assert_eq!(r.code, 0, "placed: {}{}", r.out, r.err);
    assert!(
        r.has_row(&[
            "PodGroup",
            "default/train",
            "placed",
            "2",
            "6",
            "gpu-a",
            "gpu-b"
        ]),
        "{}",
        r.out
    );
    let items = objects("network-gang.yaml");
    assert_eq!(allocated(&items, "train-a-port"), ["fabric/switch-1"]);
    assert_eq!(allocated(&items, "train-b-port"), ["fabric/switch-0"]);
    let a = find(&items, "Pod", "train-a")["spec"]["nodeName"].clone();
    let b = find(&items, "Pod", "train-b")["spec"]["nodeName"].clone();
    assert!(a.is_string() && b.is_string() && a != b, "{a} {b}");
}

#[test]
fn a_group_claims_choice_is_revisited() {
    let r = plan("group-claim-gang.yaml", &[]);
    assert_eq!(r.code, 0, "placed: {}{}", r.out, r.err);
    assert!(
        r.out.ends_with(
            "1 unit: 1 placed, 0 preempted, 0 pending, 0 invalid, 0 failed; 2 pods bound, 0 \
                 nominated, 4 devices allocated (2 fabric.example.com, 2 gpu.example.com)\n"
        ),
        "{}",
        r.out
    );
    let items = objects("group-claim-gang.yaml");
    assert_eq!(allocated(&items, "ring-fabric"), ["fabric/switch-1"]);
    assert_eq!(allocated(&items, "ring-b-port"), ["fabric/switch-0"]);
    for pod in ["ring-a", "ring-b"] {
        assert!(
            find(&items, "Pod", pod)["spec"]["nodeName"].is_string(),
            "{pod} is not bound"
        );
    }
}
