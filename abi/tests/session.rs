//! Sessions over the C ABI's request handling (`session_new`, `session_call`,
//! `session_free`), natively: every method and every error.

use gangpack_abi::ops::{self, Host};
use serde_json::{Value, json};

mod common;
use common::{cluster, file};

struct NoJudge;

impl Host for NoJudge {
    fn judge(&mut self, _: u64, _: &str) -> i32 {
        2
    }
}

fn call(op: &str, request: &Value) -> Value {
    serde_json::from_str(&ops::call(op, request.to_string().as_bytes(), &mut NoJudge))
        .expect("the envelope is JSON")
}

fn ok(mut v: Value) -> Value {
    assert!(v.get("error").is_none(), "expected ok, got {v}");
    v["ok"].take()
}

/// The error's kind and first problem.
fn err(v: &Value) -> (String, Value) {
    assert!(v.get("ok").is_none(), "expected an error, got {v}");
    (
        v["error"]["kind"].as_str().unwrap().to_owned(),
        v["error"]["problems"][0].clone(),
    )
}

fn files(extra: &[&str]) -> Vec<Value> {
    let mut f = cluster();
    f.extend(extra.iter().map(|p| file(p)));
    f
}

fn open(extra: &[&str], options: &Value) -> u64 {
    ok(call(
        "session_new",
        &json!({"files": files(extra), "options": options}),
    ))["handle"]
        .as_u64()
        .unwrap()
}

fn method(handle: u64, method: &str, args: Value) -> Value {
    let mut req = json!({"handle": handle, "method": method});
    if let Value::Object(a) = args {
        req.as_object_mut().unwrap().extend(a);
    }
    call("session_call", &req)
}

fn status(handle: u64) -> Value {
    ok(method(handle, "status", json!({})))
}

/// The independent answer: `plan` on a dump of the session's objects, at `now`.
fn plan_of_manifests(handle: u64, now: Option<&str>) -> Value {
    let list = ok(method(handle, "manifests", json!({})));
    let mut options = json!({});
    if let Some(n) = now {
        options["now"] = json!(n);
    }
    ok(call(
        "plan",
        &json!({"files": [{"name": "dump.json", "text": list.to_string()}], "options": options}),
    ))
}

const RULE: &str = r#"{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
  "metadata": {"name": "ecc", "creationTimestamp": "2026-11-05T07:12:00Z"},
  "spec": {"deviceSelector": {"driver": "gpu.nvidia.com", "pool": "gpu-r1-n1", "device": "gpu-2"},
           "taint": {"key": "gpu.nvidia.com/ecc", "value": "uncorrectable", "effect": "NoExecute"}}}"#;

fn pod(name: &str, node: &Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ml", "creationTimestamp": "2026-11-05T08:00:00Z"},
           "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x",
                    "resources": {"requests": {"cpu": "1"}}}]}})
}

#[test]
fn a_cycle_decides_what_plan_decides_on_the_same_objects() {
    let h = open(&["examples/gang-rack.yaml"], &json!({}));
    let expected = plan_of_manifests(h, None);
    let c = ok(method(h, "cycle", json!({})));
    assert_eq!(c["list"], expected["list"], "cycle and plan decide alike");
    assert_eq!(c["exitCode"], expected["exitCode"]);
    let unit = c["units"]
        .as_array()
        .unwrap()
        .iter()
        .find(|u| u["name"] == "ml/llm-pretrain")
        .expect("the gang's row");
    assert_eq!(unit["outcome"], "placed");
    assert_eq!(unit["pods"].as_array().unwrap().len(), 4);
    assert!(
        unit["pods"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["node"].is_string())
    );
    // The `gangpack watch -o json` line, and its object.
    let line = c["line"].as_str().unwrap();
    assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
    assert_eq!(c["watch"]["cycle"], 1);
    assert_eq!(c["watch"]["trigger"], "requested");
    assert_eq!(serde_json::from_str::<Value>(line).unwrap(), c["watch"]);
    let placed: Vec<&Value> = c["watch"]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|ch| ch["change"] == "placed")
        .collect();
    assert_eq!(placed.len(), 1, "{}", c["watch"]);
    let s = status(h);
    assert_eq!(s["cycles"], 1);
    assert_eq!(s["pending"], 0);
    assert_eq!(s["dirty"], false);
    ok(call("session_free", &json!({"handle": h})));
}

#[test]
fn a_taint_rule_added_evicts_the_gang_and_the_clock_moves() {
    let h = open(&["examples/running-job.yaml"], &json!({}));
    let first = ok(method(h, "cycle", json!({"now": "2026-11-05T07:00:00Z"})));
    assert!(
        first["evictions"]["carriedOut"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let applied = ok(method(
        h,
        "apply",
        json!({"events": [{"type": "ADDED", "object": serde_json::from_str::<Value>(RULE).unwrap()}]}),
    ));
    assert_eq!(applied["applied"], 1);
    assert_eq!(status(h)["eventsSinceCycle"], 1);
    // No tolerationSeconds: the gang is evicted whole at the cycle's clock, as plan
    // evicts it at that clock.
    let expected = plan_of_manifests(h, Some("2026-11-05T07:10:00Z"));
    let early = ok(method(h, "cycle", json!({"now": "2026-11-05T07:10:00Z"})));
    assert_eq!(early["now"], "2026-11-05T07:10:00Z");
    assert_eq!(
        early["list"], expected["list"],
        "the eviction as plan carries it out"
    );
    let at: Vec<&str> = early["evictions"]["carriedOut"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["at"].as_str().unwrap())
        .collect();
    assert_eq!(at, ["2026-11-05T07:10:00Z"; 2], "{}", early["evictions"]);
    // The events did not write the eviction: moved on, the clock evicts again, later.
    ok(method(h, "advance", json!({"to": "2026-11-05T08:12:00Z"})));
    let expected = plan_of_manifests(h, Some("2026-11-05T08:12:00Z"));
    let c = ok(method(h, "cycle", json!({})));
    assert_eq!(c["now"], "2026-11-05T08:12:00Z");
    assert_eq!(c["list"], expected["list"]);
    assert_eq!(
        c["evictions"]["carriedOut"][0]["at"],
        "2026-11-05T08:12:00Z"
    );
    let evicted: Vec<&str> = early["evictions"]["carriedOut"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["pod"].as_str().unwrap())
        .collect();
    assert!(
        evicted.contains(&"ml/resnet-finetune-worker-1"),
        "{evicted:?}"
    );
    assert!(
        early["watch"]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|ch| ch["change"] == "evicted"),
        "{}",
        early["watch"]
    );
    // advance by seconds moves from the clock.
    let a = ok(method(h, "advance", json!({"seconds": 60})));
    assert_eq!(a["now"], "2026-11-05T08:13:00Z");
    assert_eq!(status(h)["now"], "2026-11-05T08:13:00Z");
}

#[test]
fn apply_is_all_or_none_and_names_the_object_and_field() {
    let h = open(&[], &json!({}));
    let before = status(h);
    let e = method(
        h,
        "apply",
        json!({"events": [
            {"type": "ADDED", "object": pod("good", &Value::Null)},
            {"type": "ADDED", "object": pod("bad", &json!(5))},
        ]}),
    );
    let (kind, problem) = err(&e);
    assert_eq!(kind, "InvalidInput");
    assert_eq!(problem["object"], "Pod \"ml/bad\"");
    assert_eq!(problem["field"], "spec.nodeName");
    assert!(
        problem["line"].as_str().unwrap().starts_with("events[1]"),
        "{problem}"
    );
    assert_eq!(status(h), before, "nothing applied");
    // The good one alone applies.
    let a = ok(method(
        h,
        "apply",
        json!({"events": [{"type": "ADDED", "object": pod("good", &Value::Null)}]}),
    ));
    assert_eq!(a["applied"], 1);
    assert_eq!(
        status(h)["objects"],
        before["objects"].as_u64().unwrap() + 1
    );
    // A refusal later in the same call undoes nothing because nothing was done: the
    // MODIFIED of a pod added earlier in the call is fine, the DELETED of an unknown is not.
    let e = method(
        h,
        "apply",
        json!({"events": [
            {"type": "ADDED", "object": pod("two", &Value::Null)},
            {"type": "MODIFIED", "object": pod("two", &Value::Null)},
            {"type": "DELETED", "object": pod("ghost", &Value::Null)},
        ]}),
    );
    let (kind, problem) = err(&e);
    assert_eq!(kind, "NotFound");
    assert_eq!(problem["object"], "Pod \"ml/ghost\"");
    assert_eq!(problem["field"], "events[2].type");
    assert_eq!(status(h)["eventsApplied"], 1);
}

#[test]
fn apply_refuses_what_does_not_fit() {
    let h = open(&[], &json!({}));
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-r1-n1"}});
    // A node of the dump listed again replaces it (kubectl's first listing) ...
    ok(method(
        h,
        "apply",
        json!({"events": [{"type": "MODIFIED", "object": node}]}),
    ));
    // ... but once an event set it, an ADDED is a conflict.
    let (kind, problem) = err(&method(
        h,
        "apply",
        json!({"events": [{"type": "ADDED", "object": node}]}),
    ));
    assert_eq!(
        (kind.as_str(), problem["object"].as_str()),
        ("AlreadyExists", Some("Node \"gpu-r1-n1\""))
    );
    let (kind, problem) = err(&method(
        h,
        "apply",
        json!({"events": [{"type": "MODIFIED", "object": pod("nobody", &Value::Null)}]}),
    ));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("NotFound", Some("events[0].type"))
    );
    let (kind, problem) = err(&method(
        h,
        "apply",
        json!({"events": [{"type": "BOOKMARK", "object": {}}]}),
    ));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("events[0].type"))
    );
    let (kind, problem) = err(&method(h, "apply", json!({"events": [{"type": "ADDED"}]})));
    assert_eq!(kind, "InvalidArgument");
    assert!(
        problem["field"].as_str().unwrap().starts_with("events[0]"),
        "{problem}"
    );
    let (kind, problem) = err(&method(h, "apply", json!({})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("events"))
    );
    // A kind gangpack does not read is skipped, with a warning.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ml"}});
    let a = ok(method(
        h,
        "apply",
        json!({"events": [{"type": "ADDED", "object": cm}]}),
    ));
    assert_eq!(
        (a["applied"].as_u64(), a["skipped"].as_u64()),
        (Some(0), Some(1))
    );
    assert!(!a["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn handles_unknown_freed_and_methods_unknown() {
    let (kind, problem) = err(&method(987_654, "status", json!({})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("NotFound", Some("handle"))
    );
    assert!(problem["message"].as_str().unwrap().contains("987654"));
    let h = open(&[], &json!({}));
    ok(call("session_free", &json!({"handle": h})));
    let (kind, problem) = err(&method(h, "cycle", json!({})));
    assert_eq!(kind, "NotFound");
    let message = problem["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("session {h} was freed")),
        "{message}"
    );
    let (kind, _) = err(&call("session_free", &json!({"handle": h})));
    assert_eq!(kind, "NotFound");
    let h = open(&[], &json!({}));
    let (kind, problem) = err(&method(h, "launch", json!({})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("method"))
    );
    let (kind, problem) = err(&method(h, "status", json!({"verbose": true})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("verbose"))
    );
    let (kind, problem) = err(&call("session_call", &json!({"method": "status"})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("handle"))
    );
    let (kind, problem) = err(&call(
        "session_new",
        &json!({"files": [{"name": "x.yaml", "text": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: 3}"}]}),
    ));
    assert_eq!(kind, "InvalidInput");
    assert_eq!(problem["field"], "spec.nodeName");
    let (kind, problem) = err(&method(h, "cycle", json!({"now": "yesterday"})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("now"))
    );
}

#[test]
fn advance_needs_a_clock_and_moves_forward() {
    let h = open(&[], &json!({}));
    let (kind, problem) = err(&method(h, "advance", json!({"seconds": 30})));
    assert_eq!(
        (kind.as_str(), problem["field"].as_str()),
        ("InvalidArgument", Some("seconds"))
    );
    let (kind, _) = err(&method(h, "advance", json!({})));
    assert_eq!(kind, "InvalidArgument");
    let h = open(&[], &json!({"now": "2026-11-05T10:00:00Z"}));
    assert_eq!(status(h)["now"], "2026-11-05T10:00:00Z");
    let (_, problem) = err(&method(h, "advance", json!({"to": "2026-11-05T09:00:00Z"})));
    assert_eq!(problem["field"], "to");
    let (_, problem) = err(&method(h, "advance", json!({"seconds": -1})));
    assert_eq!(problem["field"], "seconds");
    let a = ok(method(h, "advance", json!({"seconds": 3600})));
    assert_eq!(a["now"], "2026-11-05T11:00:00Z");
}

#[test]
fn explain_and_manifests() {
    let h = open(
        &["examples/running-job.yaml", "examples/gang-rack.yaml"],
        &json!({}),
    );
    let e = ok(method(
        h,
        "explain",
        json!({"unit": {"podGroup": "ml/llm-pretrain"}}),
    ));
    let expected = ok(call(
        "explain",
        &json!({"files": files(&["examples/running-job.yaml", "examples/gang-rack.yaml"]),
                "unit": {"podGroup": "ml/llm-pretrain"}}),
    ));
    assert_eq!(
        e["text"], expected["text"],
        "explain on the session = explain on the dump"
    );
    let (kind, _) = err(&method(h, "explain", json!({"unit": {"pod": "ml/nobody"}})));
    assert_eq!(kind, "NotFound");
    let list = ok(method(h, "manifests", json!({})));
    assert_eq!(list["kind"], "List");
    assert_eq!(
        list["items"].as_array().unwrap().len() as u64,
        status(h)["objects"].as_u64().unwrap()
    );
}

#[test]
fn planned_manifests_fold_the_last_cycle_in() {
    let h = open(&["examples/gang-rack.yaml"], &json!({}));
    let bound = |list: &Value| {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["kind"] == "Pod" && i["spec"]["nodeName"].is_string())
            .count()
    };
    let c = ok(method(h, "cycle", json!({})));
    let planned = ok(method(h, "manifests", json!({"planned": true})));
    let current = ok(method(h, "manifests", json!({})));
    assert_eq!(bound(&current), 0);
    assert_eq!(bound(&planned), 4, "the gang's pods bound");
    for item in c["list"]["items"].as_array().unwrap() {
        assert!(planned["items"].as_array().unwrap().contains(item));
    }
    // The cluster with the decisions written: nothing left to decide for the gang.
    let again = ok(call(
        "plan",
        &json!({"files": [{"name": "planned.json", "text": planned.to_string()}]}),
    ));
    assert_eq!(again["exitCode"], 0);
    assert!(
        !again["list"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["kind"] == "Pod"
                && i["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with("llm-pretrain")),
        "{}",
        again["list"]
    );
}

/// A session's cycle line is what `gangpack watch -o json` prints for the same dump
/// and events (the trigger aside: a stream's end there, a request here).
#[test]
fn a_cycle_line_is_what_gangpack_watch_prints() {
    use gangpack_cli::{Collected, Input, InputFile, Options, Style, WatchOptions, WatchSource};

    let dump: Vec<InputFile> = files(&["examples/gang-rack.yaml"])
        .into_iter()
        .map(|f| InputFile {
            name: f["name"].as_str().unwrap().to_owned(),
            text: f["text"].as_str().unwrap().to_owned(),
        })
        .collect();
    let rule: Value = serde_json::from_str(RULE).unwrap();
    let events = vec![
        json!({"type": "ADDED", "object": rule}),
        json!({"type": "ADDED", "object": pod("extra", &Value::Null)}),
    ];
    let text = events
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    let mut sink = Collected::default();
    let code = gangpack_cli::watch(
        Some(&Input::Files(dump)),
        &[WatchSource::Text {
            name: "events.json".into(),
            text,
        }],
        &Options::default(),
        &WatchOptions {
            quiet_ms: 0,
            json: true,
            ..WatchOptions::default()
        },
        Style::PLAIN,
        &mut sink,
    );
    assert_eq!(code, 0, "{:?}", sink.messages);
    let h = open(&["examples/gang-rack.yaml"], &json!({}));
    ok(method(h, "apply", json!({"events": events})));
    let c = ok(method(h, "cycle", json!({})));
    let line = c["line"]
        .as_str()
        .unwrap()
        .replace("\"trigger\":\"requested\"", "\"trigger\":\"end\"");
    assert_eq!(line, sink.stdout);
    assert!(line.contains("\"change\":\"placed\""), "{line}");
}
