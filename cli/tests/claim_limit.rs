//! Issue 12 part 3 from manifests: a gang with a claim over the 32-device limit fails
//! with upstream's error (not pending), another gang of the same cycle is placed, and
//! `plan` exits 3.
//!
//! Runs from the workspace root, so paths (and the file names in messages) are
//! `cli/tests/fixtures/...`.

mod common;

use common::run;
use serde_json::Value;

const FIXTURE: &str = "cli/tests/fixtures/claim-limit";

/// What upstream's allocator says, plus the request it counted.
const MESSAGE: &str = "claim default/big-1-gpus: number of requested devices 33 exceeds the \
                       claim limit of 32 (request gpus: 33)";

#[test]
fn plan_fails_the_gang_over_the_claim_limit_and_places_the_other() {
    let r = run(&["plan", "-f", FIXTURE]);
    assert_eq!(r.code, 3, "{}{}", r.out, r.err);
    assert!(
        r.has_row(&["PodGroup", "default/big", "failed", "2", "0"]),
        "{}",
        r.out
    );
    assert!(
        r.has_row(&["PodGroup", "default/small", "placed", "1", "4", "gpu-b"]),
        "{}",
        r.out
    );
    assert!(
        r.out.contains(&format!(
            "\nnot placed:\n  PodGroup default/big: failed: {MESSAGE}\n"
        )),
        "{}",
        r.out
    );
    assert!(
        r.out.ends_with(
            "2 units: 1 placed, 0 preempted, 0 pending, 0 invalid, 1 failed; 1 pod bound, 0 \
             nominated, 4 devices allocated\n"
        ),
        "{}",
        r.out
    );
}

#[test]
fn the_failed_gangs_pods_carry_the_error_and_explain_repeats_it() {
    let r = run(&["plan", "-f", FIXTURE, "-o", "json"]);
    assert_eq!(r.code, 3, "{}", r.err);
    let list: Value = serde_json::from_str(&r.out).expect("stdout is JSON");
    let items = list["items"].as_array().expect("items");
    for name in ["big-0", "big-1"] {
        let pod = items
            .iter()
            .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("Pod {name} not in the output"));
        assert!(pod["spec"]["nodeName"].is_null(), "{pod}");
        let scheduled = pod["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "PodScheduled"))
            .unwrap_or_else(|| panic!("no PodScheduled condition in {pod}"));
        assert_eq!(scheduled["status"], "False");
        assert_eq!(scheduled["reason"], "SchedulerError");
        assert_eq!(scheduled["message"], MESSAGE);
    }
    // Nothing of the failed gang is allocated: no claim of it is in the output.
    assert!(
        !items
            .iter()
            .any(|o| o["kind"] == "ResourceClaim" && o["metadata"]["name"] != "small-0-gpus"),
        "{}",
        r.out
    );

    let why = run(&["explain", "-f", FIXTURE, "default/big"]);
    assert_eq!(why.code, 0, "{}", why.err);
    assert_eq!(
        why.out,
        format!("PodGroup default/big: failed: {MESSAGE}\n")
    );
}
