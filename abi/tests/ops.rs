//! The C ABI's request handling, natively: `ops::call` is what every export runs.

use gangpack_abi::ops::{self, Host};
use serde_json::{Value, json};

mod common;
use common::{cluster, file};

/// A host whose judge keeps candidates that still contain `needle`.
struct Judge {
    needle: &'static str,
    answer_otherwise: i32,
    calls: u32,
}

impl Host for Judge {
    fn judge(&mut self, ctx: u64, candidate: &str) -> i32 {
        assert_eq!(ctx, 7, "the request's judgeContext is passed through");
        self.calls += 1;
        if candidate.contains(self.needle) {
            1
        } else {
            self.answer_otherwise
        }
    }
}

fn judge() -> Judge {
    Judge {
        needle: "",
        answer_otherwise: 0,
        calls: 0,
    }
}

fn call(op: &str, request: &Value) -> Value {
    call_bytes(op, request.to_string().as_bytes())
}

fn call_bytes(op: &str, request: &[u8]) -> Value {
    serde_json::from_str(&ops::call(op, request, &mut judge())).expect("the envelope is JSON")
}

/// The error of an envelope: its kind and first problem's field.
fn error(v: &Value) -> (&str, &str, &str) {
    let e = &v["error"];
    assert!(v.get("ok").is_none(), "expected an error, got {v}");
    (
        e["kind"].as_str().unwrap(),
        e["problems"][0]["field"].as_str().unwrap(),
        e["message"].as_str().unwrap(),
    )
}

const SMALL: &str = r#"
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.example.com
  nodeName: n1
  pool: {name: n1, resourceSliceCount: 1}
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: ns}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
status:
  allocation:
    devices: {results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: ns}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: two, namespace: ns}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu, count: 2}}]}}
"#;

#[test]
fn bad_json_is_an_invalid_argument_about_the_request() {
    let v = call_bytes("plan", b"{\"files\": [");
    let (kind, field, message) = error(&v);
    assert_eq!((kind, field), ("InvalidArgument", "request"));
    assert!(message.contains("not JSON"), "{message}");
    let v = call_bytes("plan", b"[1]");
    assert_eq!(error(&v).1, "request");
}

#[test]
fn unknown_fields_and_operations_are_named() {
    let v = call("plan", &json!({"files": SMALL, "option": {}}));
    let (kind, field, message) = error(&v);
    assert_eq!((kind, field), ("InvalidArgument", "option"));
    assert!(message.contains("expected files, options"), "{message}");
    let v = call(
        "plan",
        &json!({"files": SMALL, "options": {"stepBudgett": 1}}),
    );
    assert_eq!(error(&v).1, "options.stepBudgett");
    assert!(error(&v).2.contains("unknown field"));
    let v = call("planx", &json!({}));
    assert_eq!(error(&v).1, "op");
}

#[test]
fn missing_and_mistyped_arguments_name_their_field() {
    let v = call("plan", &json!({}));
    assert_eq!(error(&v).1, "files");
    let v = call("plan", &json!({"files": 3}));
    assert_eq!(error(&v).1, "files");
    let v = call(
        "plan",
        &json!({"files": SMALL, "options": {"stepBudget": 0}}),
    );
    assert_eq!(
        error(&v),
        (
            "InvalidArgument",
            "options.stepBudget",
            "options.stepBudget: must be at least 1 (steps a search may take)"
        )
    );
    let v = call(
        "plan",
        &json!({"files": SMALL, "options": {"now": "yesterday"}}),
    );
    assert_eq!(error(&v).1, "options.now");
    let v = call("diff", &json!({"files": SMALL}));
    assert_eq!(error(&v).1, "spec");
    let v = call(
        "explain",
        &json!({"files": SMALL, "unit": {"podGroup": "a", "pod": "b"}}),
    );
    assert_eq!(error(&v).1, "unit");
}

#[test]
fn invalid_manifests_name_file_object_and_field() {
    let bad = SMALL.replace("count: 2", "count: -2");
    let v = call(
        "plan",
        &json!({"files": [{"name": "small.yaml", "text": bad}]}),
    );
    let e = &v["error"];
    assert_eq!(e["kind"], "InvalidInput");
    let p = &e["problems"][0];
    assert_eq!(p["file"], "small.yaml");
    assert!(p["object"].as_str().unwrap().contains("ns/two"), "{p}");
    assert!(p["field"].as_str().unwrap().contains("count"), "{p}");
}

#[test]
fn plan_and_check_results_have_the_javascript_shapes() {
    let mut files = cluster();
    files.push(file("examples/gang-rack.yaml"));
    let v = call("plan", &json!({"files": files}));
    let ok = &v["ok"];
    assert!(ok["table"].as_str().unwrap().contains("UNIT"));
    assert_eq!(ok["list"]["kind"], "List");
    assert!(ok["exitCode"] == 0 || ok["exitCode"] == 3);
    let decisions = gangpack_cli_list_text(&ok["list"]);
    let v = call(
        "check",
        &json!({"files": files, "spec": {"decisions": [{"name": "plan.json", "text": decisions}]}}),
    );
    assert_eq!(v["ok"]["valid"], true, "{v}");
    assert!(v["ok"]["decided"].as_u64().unwrap() > 0);
    let v = call(
        "check",
        &json!({"files": files, "spec": {"decisions": [file("examples/testing/naive-decision.yaml")]}}),
    );
    let findings = v["ok"]["findings"].as_array().unwrap();
    assert!(!findings.is_empty(), "{v}");
    assert!(
        findings
            .iter()
            .all(|f| f["rule"].is_string() && f["objects"].is_array())
    );
}

fn gangpack_cli_list_text(list: &Value) -> String {
    list.to_string()
}

#[test]
fn allocate_fits_refuses_and_names_claims() {
    let files = json!([{"name": "small.yaml", "text": SMALL}]);
    let v = call(
        "allocate",
        &json!({"files": files, "node": "n1", "claims": ["ns/one"]}),
    );
    let ok = &v["ok"];
    assert_eq!(ok["outcome"], "allocated", "{v}");
    assert_eq!(ok["results"][0]["devices"]["results"][0]["device"], "gpu-1");
    let v = call(
        "allocate",
        &json!({"files": files, "node": "n1", "claims": ["ns/one", "ns/two"]}),
    );
    assert_eq!(v["ok"]["outcome"], "unsatisfiable", "{v}");
    assert!(v["ok"]["reason"].as_str().unwrap().contains("ns/two"));
    for (claims, field) in [
        (json!(["ns/missing"]), "claims[0]"),
        (json!(["ns/one", "ns/held"]), "claims[1]"),
        (json!(["ns/one", "ns/one"]), "claims[1]"),
        (json!(["one"]), "claims[0]"),
    ] {
        let v = call(
            "allocate",
            &json!({"files": files, "node": "n1", "claims": claims}),
        );
        assert_eq!(error(&v).0, "InvalidArgument", "{claims}");
        assert_eq!(error(&v).1, field, "{claims}");
    }
    let v = call("allocate", &json!({"files": files, "node": "n1"}));
    assert_eq!(error(&v).1, "claims");
    let v = call(
        "allocate",
        &json!({"files": files, "node": "n7", "claims": ["ns/one"]}),
    );
    assert_eq!(error(&v).0, "NotFound");
    let v = call(
        "allocate",
        &json!({"files": files, "node": "n1", "claims": ["ns/one"], "stepBudget": 0}),
    );
    assert_eq!(error(&v).1, "stepBudget");
}

#[test]
fn gen_is_deterministic_and_checks_its_options() {
    let a = call("gen", &json!({"options": {"seed": 3}}));
    let b = call("gen", &json!({"options": {"seed": 3}}));
    assert_eq!(a, b);
    assert!(a["ok"]["text"].as_str().unwrap().contains("kind: List"));
    let v = call("gen", &json!({"options": {"size": "huge"}}));
    assert_eq!(error(&v).1, "options.size");
    let v = call("gen", &json!({"options": {"features": "all,-nonsense"}}));
    assert_eq!(error(&v).1, "options.features");
}

#[test]
fn shrink_calls_the_host_judge_with_its_context() {
    let mut files = cluster();
    files.push(file("examples/claim-first-available.yaml"));
    let request = json!({"files": files, "judgeContext": 7}).to_string();
    let mut host = Judge {
        needle: "chat-inference-gpu",
        answer_otherwise: 0,
        calls: 0,
    };
    let v: Value =
        serde_json::from_str(&ops::call("shrink", request.as_bytes(), &mut host)).unwrap();
    let ok = &v["ok"];
    assert!(host.calls > 1);
    assert_eq!(ok["runs"].as_u64(), Some(u64::from(host.calls)));
    assert_eq!(ok["after"]["objects"], 1, "{ok}");
    assert!(ok["text"].as_str().unwrap().contains("chat-inference-gpu"));
    // An answer a judge never gives.
    let mut host = Judge {
        needle: "nothing contains this",
        answer_otherwise: 9,
        calls: 0,
    };
    let v: Value =
        serde_json::from_str(&ops::call("shrink", request.as_bytes(), &mut host)).unwrap();
    assert_eq!(error(&v).1, "judge");
    let v = call("shrink", &json!({"files": files}));
    assert_eq!(error(&v).1, "judgeContext");
    let v = call(
        "shrink",
        &json!({"files": files, "judgeContext": 7, "options": {"maxTimeMs": 5}}),
    );
    assert_eq!(error(&v).1, "options.maxTimeMs");
}

#[test]
fn cli_prints_what_the_command_prints() {
    let v = call(
        "cli",
        &json!({"command": "plan", "files": [{"name": "small.yaml", "text": SMALL}]}),
    );
    assert_eq!(v["ok"]["code"], 0, "{v}");
    let v = call("cli", &json!({"command": "nope"}));
    assert_eq!(v["ok"]["code"], 2);
    let v = call("cli", &json!({"command": "plan", "bogus": 1}));
    assert_eq!(error(&v).0, "InvalidArgument");
    assert!(error(&v).1.starts_with("request"));
}

#[test]
fn version_takes_no_arguments() {
    let v = call("version", &json!({}));
    assert!(v["ok"]["version"].is_string());
    let v = call("version", &json!({"x": 1}));
    assert_eq!(error(&v).1, "x");
}

/// An empty manifest text (a `kubectl get` against the wrong context) is invalid input
/// naming the text, in every operation that reads a cluster; not "nothing to schedule".
#[test]
fn empty_manifests_are_invalid_input_naming_the_text() {
    let hint = "is the kubectl context right?";
    for op in ["plan", "check", "capacity"] {
        let v = call(op, &json!({"files": ""}));
        let e = &v["error"];
        assert_eq!(e["kind"], "InvalidInput", "{op}: {v}");
        assert_eq!(
            e["problems"][0]["message"],
            format!("no Kubernetes objects in files (empty); {hint}"),
            "{op}: {v}"
        );
    }
    let v = call(
        "plan",
        &json!({"files": [{"name": "nodes.yaml", "text": "# nothing\n---\n"}]}),
    );
    assert_eq!(
        v["error"]["problems"][0]["message"],
        format!("no Kubernetes objects in nodes.yaml (only comments and ---); {hint}")
    );
}
