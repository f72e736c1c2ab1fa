//! Issue 13 parts 3 and 4 from manifests: pods whose ResourceClaim or template is not in
//! the input wait (as kube-scheduler's PreEnqueue holds them) while the rest is
//! planned; the output never writes an empty uid; the tables count every device.
//!
//! Runs from the workspace root, so paths (and the file names in messages) are
//! `cli/tests/fixtures/...`.

mod common;

use common::run;
use serde_json::Value;

const WAITING: &str = "cli/tests/fixtures/waiting";
const CLUSTER: &str = "cli/tests/fixtures/waiting/cluster.yaml";
const WITH_UIDS: &str = "cli/tests/fixtures/uids/with-uids.yaml";

const SOLO_CLAIM: &str = "Pod default/solo-missing-claim: waiting for ResourceClaim \
                          \"default/not-created-yet\" (spec.resourceClaims[0].resourceClaimName): \
                          it is not in the input; the scheduler holds the pod until it exists";
const SOLO_TEMPLATE: &str = "Pod default/solo-missing-template: waiting for \
                             ResourceClaimTemplate \"default/typo-template\" \
                             (spec.resourceClaims[0].resourceClaimTemplateName): it is not in \
                             the input, so the resourceclaim controller cannot create the claim; \
                             the scheduler holds the pod until it exists";
const HELD_GROUP: &str = "PodGroup default/held: waiting for ResourceClaimTemplate \
                          \"default/missing-group-template\" \
                          (spec.resourceClaims[0].resourceClaimTemplateName): it is not in the \
                          input, so the resourceclaim controller cannot create the claim; the \
                          scheduler holds its pods until it exists";

fn items(out: &str) -> Vec<Value> {
    let list: Value = serde_json::from_str(out).expect("stdout is JSON");
    list["items"].as_array().expect("items").clone()
}

fn find<'a>(items: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    items
        .iter()
        .find(|o| o["kind"] == kind && o["metadata"]["name"] == name)
}

#[test]
fn pods_naming_missing_claims_wait_and_the_rest_is_planned() {
    let r = run(&["plan", "-f", WAITING]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    // Planned: the group without its waiting member, the ready pod.
    assert!(
        r.has_row(&["PodGroup", "default/train", "placed", "2", "6", "node-a"]),
        "{}",
        r.out
    );
    assert!(
        r.has_row(&["Pod", "default/ready", "placed", "1", "3", "node-b"]),
        "{}",
        r.out
    );
    // Waiting: each with its own row and reason.
    for (unit, pods) in [
        ("default/solo-missing-claim", "1"),
        ("default/solo-missing-template", "1"),
    ] {
        assert!(r.has_row(&["Pod", unit, "pending", pods, "0"]), "{}", r.out);
    }
    assert!(
        r.has_row(&["PodGroup", "default/held", "pending", "1", "0"]),
        "{}",
        r.out
    );
    for line in [SOLO_CLAIM, SOLO_TEMPLATE, HELD_GROUP] {
        assert!(
            r.out.contains(&format!("\n  {line}\n")),
            "{line}\n{}",
            r.out
        );
    }
    // A group that cannot reach minCount without its waiting member says so.
    assert!(
        r.out.contains(
            "Pod default/eval-1 is waiting for ResourceClaim \"default/eval-1-data\" \
             (spec.resourceClaims[0].resourceClaimName): it is not in the input"
        ),
        "{}",
        r.out
    );
    // One warning per waiting object, naming the field.
    assert!(
        r.err.contains(
            "workloads.yaml doc 9: Pod \"default/train-2\": spec.resourceClaims[0].resourceClaimName: \
             ResourceClaim \"train-2-scratch\" is not in the input: the pod waits for it"
        ),
        "{}",
        r.err
    );
    // A running pod whose claim is gone stays running; what the claim held is unknown.
    assert!(
        r.err.contains(
            "Pod \"default/running\": spec.resourceClaims[0].resourceClaimName: ResourceClaim \
             \"deleted-claim\" is not in the input: the devices the running pod holds through it \
             are not known"
        ),
        "{}",
        r.err
    );
    // Devices of every driver are counted, per driver in the summary.
    assert!(
        r.out.ends_with(
            "6 units: 2 placed, 0 preempted, 4 pending, 0 invalid, 0 failed; 3 pods bound, 0 \
             nominated, 9 devices allocated (6 gpu.example.com, 3 dra.cpu.example.com)\n"
        ),
        "{}",
        r.out
    );
    assert!(
        r.has_row(&[
            "default/ready",
            "node-b",
            "3",
            "gpu.example.com/node-b:",
            "gpu-0",
            "gpu-1;",
            "dra.cpu.example.com/node-b:",
            "cpu-socket-0"
        ]),
        "{}",
        r.out
    );
}

#[test]
fn waiting_pods_are_not_written_and_no_uid_is_empty() {
    let r = run(&["plan", "-f", WAITING, "-o", "json"]);
    assert_eq!(r.code, 3, "{}", r.err);
    let items = items(&r.out);
    // The scheduler never tried the waiting pods: nothing is written for them.
    for name in [
        "solo-missing-claim",
        "solo-missing-template",
        "train-2",
        "eval-1",
        "held-0",
    ] {
        assert!(find(&items, "Pod", name).is_none(), "Pod {name} written");
    }
    assert!(find(&items, "PodGroup", "held").is_none());
    assert!(!r.out.contains("\"uid\": \"\""), "{}", r.out);
    // The reservedFor uid of each bound pod is the one its generated claim's owner
    // reference carries (both derived, deterministic).
    let mut checked = 0;
    for claim in items.iter().filter(|o| o["kind"] == "ResourceClaim") {
        let owner = &claim["metadata"]["ownerReferences"][0];
        let uid = owner["uid"].as_str().expect("an owner uid");
        assert_eq!(uid.len(), 36, "{uid}");
        assert_eq!(&uid[14..15], "8", "a UUIDv8: {uid}");
        if let Some(reserved) = claim["status"]["reservedFor"].as_array() {
            assert_eq!(reserved.len(), 1);
            assert_eq!(reserved[0]["name"], owner["name"]);
            assert_eq!(reserved[0]["uid"], owner["uid"]);
            checked += 1;
        }
    }
    assert_eq!(checked, 3, "three bound pods' claims");
    // Said once, with a count.
    assert_eq!(r.err.matches("no metadata.uid").count(), 1, "{}", r.err);
    assert!(
        r.err.contains(
            "warning: 4 objects have no metadata.uid in the input (Pod default/eval-0, Pod \
             default/ready, Pod default/train-0 and 1 more): the uids written for them in \
             reservedFor and ownerReferences are derived from kind, namespace and name"
        ),
        "{}",
        r.err
    );
    // The same input gives the same uids.
    assert_eq!(run(&["plan", "-f", WAITING, "-o", "json"]).out, r.out);
}

#[test]
fn the_api_servers_uids_are_used_when_the_input_has_them() {
    let r = run(&["plan", "-f", CLUSTER, "-f", WITH_UIDS, "-o", "yaml"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!r.err.contains("metadata.uid"), "{}", r.err);
    let list: Value = serde_norway::from_str(&r.out).expect("YAML");
    let items = list["items"].as_array().expect("items").clone();
    let claims: Vec<&Value> = items
        .iter()
        .filter(|o| o["kind"] == "ResourceClaim")
        .collect();
    assert_eq!(claims.len(), 2, "{}", r.out);
    for claim in claims {
        let owner = &claim["metadata"]["ownerReferences"][0];
        let reserved = &claim["status"]["reservedFor"][0];
        let expected = if owner["kind"] == "PodGroup" {
            "0b6f3a52-8d0c-4a41-9a7e-2f1c5d9e6b10"
        } else {
            "7d2e9c41-3b5a-4f08-8c6d-1a9e0f4b2c37"
        };
        assert_eq!(owner["uid"], expected, "{claim}");
        assert_eq!(reserved["uid"], expected, "{claim}");
    }
}

#[test]
fn explain_names_what_a_waiting_pod_waits_for() {
    let r = run(&[
        "explain",
        "-f",
        WAITING,
        "--pod",
        "default/solo-missing-claim",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.out,
        SOLO_CLAIM.replacen(": waiting", ": pending: waiting", 1) + "\n"
    );
    let r = run(&["explain", "-f", WAITING, "default/held"]);
    assert_eq!(
        r.out,
        HELD_GROUP.replacen(": waiting", ": pending: waiting", 1) + "\n"
    );
    let r = run(&["explain", "-f", WAITING, "--pod", "default/held-0"]);
    assert_eq!(
        r.out,
        "Pod default/held-0: pending: waiting with its PodGroup \"default/held\", which waits \
         for an object not in the input\n"
    );
    // A waiting member of a group that is scheduled: the pod, then its group without it.
    let r = run(&["explain", "-f", WAITING, "--pod", "default/eval-1"]);
    assert!(
        r.out.starts_with(
            "Pod default/eval-1: pending: waiting for ResourceClaim \"default/eval-1-data\""
        ),
        "{}",
        r.out
    );
    assert!(
        r.out.contains(
            "\nIts PodGroup default/eval, without it:\nPodGroup default/eval: pending; \
                       waiting for more pods: 1 exist, minCount is 2\nPodGroup default/eval: Wait\n"
        ),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("\nheld back: Pod default/eval-1 is waiting for ResourceClaim"),
        "{}",
        r.out
    );
    // A member of a group: explain names the pod, then explains its group.
    let r = run(&["explain", "-f", WAITING, "--pod", "default/train-0"]);
    assert!(
        r.out.starts_with(
            "Pod default/train-0 is a member of PodGroup default/train:\nPodGroup default/train: \
             Scheduled (2 pods bound)\n"
        ),
        "{}",
        r.out
    );
    // Without a name, the waiting units are listed too.
    let all = run(&["explain", "-f", WAITING]);
    for line in [SOLO_CLAIM, SOLO_TEMPLATE, HELD_GROUP] {
        let line = line.replacen(": waiting", ": pending: waiting", 1);
        assert!(
            all.out.contains(&format!("{line}\n")),
            "{line}\n{}",
            all.out
        );
    }
}

#[test]
fn pods_of_a_pod_group_not_in_the_input_wait_for_it() {
    const PODS: &str = "cli/tests/fixtures/waiting-group/pods.yaml";
    const REASON: &str = "PodGroup default/later: waiting for the PodGroup: it is not in the \
                          input; the scheduler holds the 2 pods naming it \
                          (spec.schedulingGroup.podGroupName) until it exists";
    let r = run(&["plan", "-f", CLUSTER, "-f", PODS]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["PodGroup", "default/later", "pending", "2", "0"]),
        "{}",
        r.out
    );
    assert!(r.out.contains(&format!("\n  {REASON}\n")), "{}", r.out);
    let pending = REASON.replacen(": waiting", ": pending: waiting", 1);
    let x = run(&["explain", "-f", CLUSTER, "-f", PODS, "default/later"]);
    assert_eq!(
        (x.code, x.out.as_str()),
        (0, format!("{pending}\n").as_str())
    );
    let x = run(&[
        "explain",
        "-f",
        CLUSTER,
        "-f",
        PODS,
        "--pod",
        "default/later-1",
    ]);
    assert_eq!(
        x.out,
        format!("Pod default/later-1 is a member of PodGroup default/later:\n{pending}\n")
    );
    let x = run(&["explain", "-f", CLUSTER, "-f", PODS]);
    assert_eq!(x.out, format!("{pending}\n"));
    // A PodGroup nobody names is still an unknown name.
    let x = run(&["explain", "-f", CLUSTER, "-f", PODS, "default/nobody"]);
    assert_eq!(x.code, 2);
    assert!(
        x.err
            .contains("PodGroup default/nobody not found in the input"),
        "{}",
        x.err
    );
}
