//! `gangpack plan` on the PodGroup claim scenarios of `cli/tests/fixtures/group-claims/`
//! (issue 31): which pod claim entries are the PodGroup's (KEP-5729).
//!
//! `shared/spec/dra.md` §3 says: "a claim referenced by a PodGroup is reserved for the
//! PodGroup (one `reservedFor` entry) and shared by all member pods". It does not say
//! which pod entries reference the group's claim. Upstream (KEP-5729) compares the
//! whole entry: a pod's `spec.resourceClaims` entry is the group's only when its name
//! and source equal the group's entry. An entry under another name that points at the
//! group's ResourceClaim is the pod's own use of that claim: `reservedFor` lists the
//! pod, not the PodGroup. A group claim no pod names is not allocated (the scheduler
//! allocates the claims pods use).
//!
//! Both scenarios run on the two-node cluster of `placer-limits/cluster.yaml` (two
//! GPUs per node, two network-attached fabric ports). Runs from the workspace root.

mod common;

use common::run;
use serde_json::Value;

const CLUSTER: &str = "cli/tests/fixtures/placer-limits/cluster.yaml";
const RENAMED: &str = "cli/tests/fixtures/group-claims/renamed-entry.yaml";
const MIXED: &str = "cli/tests/fixtures/group-claims/mixed-entries.yaml";

/// The objects of `gangpack plan -f CLUSTER -f scenario -o json`.
fn plan_objects(scenario: &str) -> Vec<Value> {
    let r = run(&["plan", "-f", CLUSTER, "-f", scenario, "-o", "json"]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    let list: Value = serde_json::from_str(&r.out).expect("stdout is JSON");
    list["items"].as_array().expect("a List").clone()
}

fn claim<'a>(objects: &'a [Value], name: &str) -> Option<&'a Value> {
    objects
        .iter()
        .find(|o| o["kind"] == "ResourceClaim" && o["metadata"]["name"] == name)
}

/// A claim's `status.reservedFor`, as `resource/name`.
fn reserved_for(claim: &Value) -> Vec<String> {
    claim["status"]["reservedFor"]
        .as_array()
        .expect("reservedFor")
        .iter()
        .map(|r| {
            format!(
                "{}/{}",
                r["resource"].as_str().unwrap_or_default(),
                r["name"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// The devices of a claim's `status.allocation`.
fn devices(claim: &Value) -> Vec<&str> {
    claim["status"]["allocation"]["devices"]["results"]
        .as_array()
        .expect("an allocation")
        .iter()
        .map(|r| r["device"].as_str().unwrap_or_default())
        .collect()
}

#[test]
fn a_differently_named_entry_to_the_group_claim_reserves_it_for_the_pods() {
    let r = run(&["plan", "-f", CLUSTER, "-f", RENAMED]);
    assert_eq!(r.code, 0, "{}{}", r.out, r.err);
    assert_eq!(
        r.out,
        "\
UNIT                   OUTCOME  PODS  DEVICES  NODES
PodGroup default/ring  placed   2     1        gpu-a

POD             NODE   COUNT  DEVICES
default/ring-0  gpu-a  1      fabric.example.com/fabric: switch-0
default/ring-1  gpu-a  0

1 unit: 1 placed, 0 preempted, 0 pending, 0 invalid, 0 failed; 2 pods bound, 0 nominated, 1 device allocated
"
    );
    let objects = plan_objects(RENAMED);
    let fabric = claim(&objects, "ring-fabric").expect("ring-fabric is written");
    assert_eq!(devices(fabric), ["switch-0"], "allocated once");
    assert_eq!(
        reserved_for(fabric),
        ["pods/ring-0", "pods/ring-1"],
        "the pods' own use, not the PodGroup's"
    );
    // The group's other claim, which no pod names, is not allocated: the plan leaves
    // it untouched.
    assert!(
        claim(&objects, "ring-spare").is_none_or(|c| c["status"]["allocation"].is_null()),
        "ring-spare is not allocated"
    );
}

#[test]
fn the_groups_entry_reserves_for_the_podgroup_and_another_entry_for_its_pod() {
    let objects = plan_objects(MIXED);
    let fabric = claim(&objects, "ring-fabric").expect("ring-fabric is written");
    assert_eq!(devices(fabric), ["switch-0"], "allocated once");
    assert_eq!(
        reserved_for(fabric),
        ["podgroups/ring", "pods/ring-1"],
        "ring-0 uses the group's entry, ring-1 its own"
    );
    let group = &fabric["status"]["reservedFor"][0];
    assert_eq!(group["apiGroup"], "scheduling.k8s.io");
    assert_eq!(group["uid"], "7e1a0000-0000-4000-8000-0000000031a0");
}
