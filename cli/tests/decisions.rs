//! The decision contract of `gangpack check --decisions` (`docs/DECISIONS.md`): the
//! same decision written as whole objects, as minimal merge patches and as Bindings
//! with claim status patches is judged the same; decisions naming what the input lacks,
//! or changing what the API keeps immutable, are errors naming the decision.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use gangpack_cli::{
    EXIT_INVALID, EXIT_OK, EXIT_VIOLATIONS, Format, Input, InputFile, Options, Style,
};
use serde_json::{Value, json};

const CORPUS: &str = "cli/tests/fixtures/check";

fn path(p: &str) -> String {
    common::root().join(p).to_string_lossy().into_owned()
}

fn file(name: &str, v: &Value) -> Input {
    Input::Files(vec![InputFile {
        name: name.into(),
        text: serde_json::to_string_pretty(v).unwrap(),
    }])
}

fn list(items: impl Into<Vec<Value>>) -> Value {
    let items: Vec<Value> = items.into();
    json!({"apiVersion": "v1", "kind": "List", "items": items})
}

/// `check -o json`: the rules found and the exit status, or the error lines.
fn judge(input: &Input, decisions: &Input) -> Result<(BTreeSet<String>, u8), Vec<String>> {
    let run = gangpack_cli::check(
        input,
        Some(decisions),
        &Options::default(),
        false,
        Format::Json,
        Style::PLAIN,
    );
    if let Some(f) = run.failure {
        return Err(f.lines());
    }
    let found: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let rules = found
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_owned())
        .collect();
    Ok((rules, run.code))
}

type Key = (String, String, String);

fn key(v: &Value) -> Key {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let mut ns = s("/metadata/namespace");
    let kind = s("/kind");
    if ns.is_empty()
        && [
            "Pod",
            "ResourceClaim",
            "PodGroup",
            "Workload",
            "ResourceClaimTemplate",
        ]
        .contains(&kind.as_str())
    {
        ns = "default".into();
    }
    (kind, ns, s("/metadata/name"))
}

/// The JSON merge patch that turns `from` into `to` (the test's own diff, checked
/// against RFC 7386's apply below): changed members, `null` for removed ones.
fn diff(from: &Value, to: &Value) -> Option<Value> {
    match (from, to) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = serde_json::Map::new();
            for (k, v) in b {
                match a.get(k) {
                    Some(w) if w == v => {}
                    Some(w) if w.is_object() && v.is_object() => {
                        if let Some(d) = diff(w, v) {
                            out.insert(k.clone(), d);
                        }
                    }
                    _ => {
                        out.insert(k.clone(), v.clone());
                    }
                }
            }
            for k in a.keys() {
                if !b.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        _ => (from != to).then(|| to.clone()),
    }
}

/// The header every decision document keeps.
fn header(o: &Value) -> Value {
    let mut metadata = json!({"name": o["metadata"]["name"]});
    if let Some(ns) = o.pointer("/metadata/namespace") {
        metadata["namespace"] = ns.clone();
    }
    json!({"apiVersion": o["apiVersion"], "kind": o["kind"], "metadata": metadata})
}

/// A decision in minimal form: each decision object that the input (or its generated
/// claims) has as a merge patch of only what changed; with `bindings`, each pod the
/// decision binds as a `v1` Binding, plus a patch of anything else it changed.
fn minimal(inputs: &BTreeMap<Key, Value>, decisions: &[Value], bindings: bool) -> Vec<Value> {
    let mut out = Vec::new();
    for d in decisions {
        let Some(before) = inputs.get(&key(d)) else {
            out.push(d.clone()); // a whole new object
            continue;
        };
        let Some(mut patch) = diff(before, d) else {
            continue;
        };
        let node = d.pointer("/spec/nodeName").and_then(Value::as_str);
        let bound_before = before.pointer("/spec/nodeName").is_some();
        if bindings
            && d["kind"] == "Pod"
            && !bound_before
            && let Some(node) = node
        {
            let mut b = header(d);
            b["kind"] = json!("Binding");
            b["apiVersion"] = json!("v1");
            b["target"] = json!({"apiVersion": "v1", "kind": "Node", "name": node});
            out.push(b);
            let spec = patch.get_mut("spec").and_then(Value::as_object_mut);
            if let Some(spec) = spec {
                spec.remove("nodeName");
                if spec.is_empty() {
                    patch.as_object_mut().unwrap().remove("spec");
                }
            }
            if patch.as_object().unwrap().is_empty() {
                continue;
            }
        }
        let mut doc = header(d);
        gangpack_k8s::check::merge_patch(&mut doc, &patch);
        // The patch of a kind whose whole form is told by `spec` must not carry one
        // (a claim's spec is immutable: a decision never changes it).
        assert!(
            !gangpack_k8s::check::is_whole(kind_of(d), &doc),
            "{:?}: the minimal patch {doc:#} reads as a whole object",
            key(d)
        );
        out.push(doc);
    }
    out
}

fn kind_of(v: &Value) -> gangpack_k8s::Kind {
    let k = v["kind"].as_str().unwrap();
    *gangpack_k8s::Kind::ALL
        .iter()
        .find(|x| x.as_str() == k)
        .unwrap()
}

/// The input's objects by key (canonical documents, as loaded), and the claims a
/// snapshot generates from templates.
fn input_objects(files: &[String]) -> BTreeMap<Key, Value> {
    let loaded = gangpack_k8s::load_paths(files).expect("loads");
    let mut out: BTreeMap<Key, Value> = loaded
        .objects
        .iter()
        .map(|o| (key(&o.raw), (*o.raw).clone()))
        .collect();
    if let Ok(s) = gangpack_k8s::Snapshot::build(loaded, &gangpack_k8s::BuildOptions::default()) {
        for g in &s.generated {
            out.entry(key(&g.raw)).or_insert_with(|| g.raw.clone());
        }
    }
    out
}

fn decision_objects(file: &str) -> Vec<Value> {
    let loaded = gangpack_k8s::load_paths(&[path(file)]).expect("decisions load");
    loaded.objects.iter().map(|o| (*o.raw).clone()).collect()
}

/// The test's diff is a merge patch: RFC 7386 applied to it gives the decision back.
#[test]
fn the_tests_diff_is_inverted_by_merge_patch() {
    let cluster = path(&format!("{CORPUS}/cluster.yaml"));
    let mut checked = 0;
    for case in corpus() {
        let inputs = input_objects(&[cluster.clone(), path(&format!("{CORPUS}/{case}.yaml"))]);
        for d in decision_objects(&format!("{CORPUS}/{case}.decisions.yaml")) {
            if let Some(before) = inputs.get(&key(&d)) {
                let mut after = before.clone();
                if let Some(p) = diff(before, &d) {
                    gangpack_k8s::check::merge_patch(&mut after, &p);
                }
                assert_eq!(after, d, "{case}");
                checked += 1;
            }
        }
    }
    assert!(checked > 30, "{checked}");
}

/// Every case of the corpus with a decision file.
fn corpus() -> Vec<String> {
    let dir = common::root().join(CORPUS);
    let mut out: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".decisions.yaml").map(str::to_owned)
        })
        .collect();
    out.sort();
    out
}

/// Each wrong decision of the corpus, rewritten as minimal merge patches and as
/// Bindings with claim status patches, breaks exactly its rule, as the whole objects
/// do. Catches: patches replacing the input's object (the pod loses its claims and
/// PodGroup: `missing-allocation`, `below-min-count` and `topology-split` go
/// unfound), Bindings ignored or skipped as an unknown kind, `null` not removing.
#[test]
fn the_corpus_fails_the_same_as_patches_and_bindings() {
    let cluster = path(&format!("{CORPUS}/cluster.yaml"));
    let cases = corpus();
    assert!(cases.len() >= 26, "{cases:?}");
    let mut bindings = 0;
    for case in &cases {
        let files = [cluster.clone(), path(&format!("{CORPUS}/{case}.yaml"))];
        let input = Input::Paths(files.to_vec());
        let decisions = decision_objects(&format!("{CORPUS}/{case}.decisions.yaml"));
        let whole = judge(&input, &file("whole.json", &list(decisions.clone()))).unwrap();
        assert_eq!(
            whole,
            (BTreeSet::from([case.clone()]), EXIT_VIOLATIONS),
            "{case}"
        );
        let inputs = input_objects(&files);
        for with_bindings in [false, true] {
            let docs = minimal(&inputs, &decisions, with_bindings);
            if with_bindings {
                bindings += docs.iter().filter(|d| d["kind"] == "Binding").count();
            }
            let form = if with_bindings { "bindings" } else { "patches" };
            let found = judge(
                &input,
                &file(&format!("{case}.{form}.json"), &list(docs.clone())),
            );
            assert_eq!(found.as_ref(), Ok(&whole), "{case} as {form}: {docs:#?}");
        }
    }
    assert!(bindings >= 20, "{bindings}");
}

/// gangpack's own plans, written as Bindings and status patches, pass as the whole
/// objects do (and the patches of claims generated from templates apply over them).
#[test]
fn plans_pass_as_patches_and_bindings() {
    let sets: &[&[&str]] = &[
        &["examples/cluster", "examples/gang-rack.yaml"],
        &["examples/cluster", "examples/running-job.yaml"],
        &["examples/cluster", "examples/claim-first-available.yaml"],
        &["examples/cluster", "examples/taint-rule.yaml"],
    ];
    let mut generated = 0;
    for set in sets {
        let files: Vec<String> = set.iter().map(|f| path(f)).collect();
        let input = Input::Paths(files.clone());
        let plan = gangpack_cli::plan_report(&input, &Options::default(), Style::PLAIN).unwrap();
        let decisions = plan.list["items"].as_array().unwrap().clone();
        let inputs = input_objects(&files);
        let loaded = gangpack_k8s::load_paths(&files).unwrap();
        generated += decisions
            .iter()
            .filter(|d| {
                d["kind"] == "ResourceClaim"
                    && !loaded.objects.iter().any(|o| key(&o.raw) == key(d))
            })
            .count();
        for with_bindings in [false, true] {
            let docs = minimal(&inputs, &decisions, with_bindings);
            assert!(
                docs.iter()
                    .all(|d| d["kind"] == "Binding" || inputs.contains_key(&key(d)))
            );
            let found = judge(&input, &file("plan.json", &list(docs.clone())));
            assert_eq!(found, Ok((BTreeSet::new(), EXIT_OK)), "{set:?}: {docs:#?}");
        }
    }
    assert!(generated >= 4, "{generated}");
}

/// The report that asked for the contract (issue 35), replayed: pods with only
/// `metadata` and `spec.nodeName`, claims with only `status.allocation`. The wrong-rack
/// pod is found and the gang counted as running; the same placement done right (one
/// rack, claims reserved for their pods) is valid.
#[test]
fn hand_written_patches_keep_the_pods_group_and_claims() {
    let files = vec![path("examples/cluster"), path("examples/gang-rack.yaml")];
    let input = Input::Paths(files.clone());
    let naive = decision_objects("examples/testing/naive-decision.yaml");
    let bare = |with_reservation: bool| -> Vec<Value> {
        naive
            .iter()
            .map(|o| {
                let mut d = header(o);
                if o["kind"] == "Pod" {
                    d["spec"] = json!({"nodeName": o["spec"]["nodeName"]});
                } else {
                    d["status"] = json!({"allocation": o["status"]["allocation"]});
                    if with_reservation {
                        d["status"]["reservedFor"] = o["status"]["reservedFor"].clone();
                    }
                }
                d
            })
            .collect()
    };
    let (report, _) = gangpack_cli::check_report(
        &input,
        Some(&file("report.json", &list(bare(false)))),
        &Options::default(),
        false,
    )
    .unwrap();
    let rules: BTreeSet<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
    assert_eq!(
        rules,
        BTreeSet::from([
            "device-allocated-twice",
            "topology-split",
            "claim-not-reserved"
        ])
    );
    assert_eq!(report.groups_running, 1);
    assert_eq!((report.pods_bound, report.claims_allocated), (4, 4));
    assert_eq!((report.patched, report.replaced, report.added), (8, 0, 0));
    let split = report
        .findings
        .iter()
        .find(|f| f.rule == "topology-split")
        .unwrap();
    assert_eq!(split.objects[0].to_string(), "PodGroup ml/llm-pretrain");

    // Done right: gangpack's plan, written the same bare way (with reservedFor).
    let plan = gangpack_cli::plan_report(&input, &Options::default(), Style::PLAIN).unwrap();
    let right: Vec<Value> = plan.list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let mut d = header(o);
            if o["kind"] == "Pod" {
                d["spec"] = json!({"nodeName": o["spec"]["nodeName"]});
            } else {
                d["status"] = json!({
                    "allocation": o["status"]["allocation"],
                    "reservedFor": o["status"]["reservedFor"],
                });
            }
            d
        })
        .collect();
    let (report, _) = gangpack_cli::check_report(
        &input,
        Some(&file("right.json", &list(right))),
        &Options::default(),
        false,
    )
    .unwrap();
    assert!(report.is_valid(), "{:#?}", report.findings);
    assert_eq!((report.pods_bound, report.groups_running), (4, 1));
}

fn corpus_input(case: &str) -> Input {
    Input::Paths(vec![
        path(&format!("{CORPUS}/cluster.yaml")),
        path(&format!("{CORPUS}/{case}.yaml")),
    ])
}

fn yaml(text: &str) -> Input {
    Input::Files(vec![InputFile {
        name: "d.yaml".into(),
        text: text.into(),
    }])
}

/// Decisions the API server would refuse, or that name nothing: errors (exit 2) naming
/// the decision and its field, never a verdict. Catches: a misspelt pod added as a new
/// pod (the issue's report), unknown kinds skipped, a Binding for a bound pod applied,
/// immutable fields changed to make a decision pass.
#[test]
fn bad_decisions_are_errors_naming_the_decision() {
    let pod_patch = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml}\n";
    let cases: &[(&str, &str, &str)] = &[
        // (case input, decision, what the error says)
        (
            "missing-allocation",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: aa, namespace: ml}\nspec: {nodeName: n1}\n",
            "d.yaml doc 1: Pod \"ml/aa\": metadata.name: the input has no such Pod (did you mean Pod \"ml/a\"?)",
        ),
        (
            "missing-allocation",
            "apiVersion: v1\nkind: Binding\nmetadata: {name: b, namespace: ml}\ntarget: {kind: Node, name: n1}\n",
            "d.yaml doc 1: Binding \"ml/b\": metadata.name: the input has no such Pod (did you mean Pod \"ml/a\"?): a Binding binds a pod of the input",
        ),
        (
            "missing-allocation",
            "apiVersion: v1\nkind: Binding\nmetadata: {name: a, namespace: ml}\ntarget: {kind: Pod, name: n1}\n",
            "d.yaml doc 1: Binding \"ml/a\": target.kind: must be \"Node\"",
        ),
        (
            "missing-allocation",
            "apiVersion: v1\nkind: Binding\nmetadata: {name: a, namespace: ml}\n",
            "d.yaml doc 1: Binding \"ml/a\": target.name: required value",
        ),
        (
            "missing-allocation",
            "apiVersion: v1\nkind: Bindng\nmetadata: {name: a, namespace: ml}\ntarget: {name: n1}\n",
            "d.yaml doc 1: Bindng \"ml/a\": kind: Bindng (v1) is not a kind gangpack reads",
        ),
        (
            "missing-allocation",
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: a-gpux, namespace: ml}\nstatus: {}\n",
            "ResourceClaim \"ml/a-gpux\": metadata.name: the input has no such ResourceClaim (did you mean ResourceClaim \"ml/a-gpu\"?)",
        ),
        (
            "missing-allocation",
            &format!("{pod_patch}spec: {{nodeName: n1, containers: [{{name: c}}]}}\n"),
            "d.yaml doc 1: Pod \"ml/a\": spec.containers[0].resources: a Pod's spec is immutable",
        ),
        (
            "missing-allocation",
            &format!("{pod_patch}spec: {{nodeName: n1, resourceClaims: null}}\n"),
            "Pod \"ml/a\": spec.resourceClaims: a Pod's spec is immutable",
        ),
        (
            "missing-allocation",
            "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml, uid: other}\nspec: {nodeName: n1}\n",
            "Pod \"ml/a\": metadata.uid: is other, but the input's object has uid d2d0dca4-850a-4538-a5ed-f0f8c911803a",
        ),
        (
            "missing-allocation",
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: a-gpu, namespace: ml}\nspec: {devices: {requests: []}}\n",
            "ResourceClaim \"ml/a-gpu\": spec.devices.requests: a ResourceClaim's spec is immutable",
        ),
    ];
    for (case, decision, expected) in cases {
        let before = judge(&corpus_input(case), &yaml("")).unwrap();
        let lines = judge(&corpus_input(case), &yaml(decision)).expect_err(decision);
        assert!(
            lines.iter().any(|l| l.contains(expected)),
            "{decision}\nexpected: {expected}\ngot: {lines:#?}"
        );
        // And nothing else changed: the input alone judges as before.
        assert_eq!(judge(&corpus_input(case), &yaml("")).unwrap(), before);
    }
}

/// A bound pod stays where it is: a second Binding, a Binding of a pod being deleted and
/// a patch that moves or unbinds it are refused. Catches: running pods moved by a
/// decision and checked as if placed anew.
#[test]
fn bound_pods_cannot_be_bound_again_or_moved() {
    // eviction-overdue's input has a running pod.
    let input = corpus_input("eviction-overdue");
    let running =
        gangpack_k8s::load_paths(&[path(&format!("{CORPUS}/eviction-overdue.yaml"))]).unwrap();
    let bound = running
        .objects
        .iter()
        .find(|o| o.kind == gangpack_k8s::Kind::Pod && o.raw.pointer("/spec/nodeName").is_some())
        .expect("a running pod");
    let (ns, name) = (bound.namespace.clone().unwrap(), bound.name.clone());
    let node = bound
        .raw
        .pointer("/spec/nodeName")
        .unwrap()
        .as_str()
        .unwrap()
        .to_owned();
    let binding = format!(
        "apiVersion: v1\nkind: Binding\nmetadata: {{name: {name}, namespace: {ns}}}\ntarget: {{name: {node}}}\n"
    );
    let lines = judge(&input, &yaml(&binding)).unwrap_err();
    assert!(
        lines
            .iter()
            .any(|l| l.contains(&format!("pod {ns}/{name} is already bound to node {node}"))),
        "{lines:#?}"
    );
    for (patch, says) in [
        ("{nodeName: elsewhere}", "sets it to elsewhere"),
        ("{nodeName: null}", "removes it"),
    ] {
        let doc = format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {patch}\n"
        );
        let lines = judge(&input, &yaml(&doc)).unwrap_err();
        assert!(
            lines
                .iter()
                .any(|l| l.contains("spec.nodeName: the pod is bound to node") && l.contains(says)),
            "{lines:#?}"
        );
    }
    // Being deleted: marked in one decision, bound in the next.
    let pending = "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: ml, deletionTimestamp: \"2026-12-01T10:00:00Z\"}\n---\napiVersion: v1\nkind: Binding\nmetadata: {name: a, namespace: ml}\ntarget: {name: n1}\n";
    let lines = judge(&corpus_input("missing-allocation"), &yaml(pending)).unwrap_err();
    assert!(
        lines.iter().any(|l| l.contains("is being deleted")),
        "{lines:#?}"
    );
}

/// A Binding to a node the input lacks is the `unknown-node` finding (the API server
/// accepts it; the pod would never run), and a claim status reserving the claim for a
/// pod that does not use it is `reserved-for-non-user`: never "valid".
#[test]
fn wrong_bindings_and_claim_statuses_are_findings() {
    let input = corpus_input("missing-allocation");
    let to_nowhere = "apiVersion: v1\nkind: Binding\nmetadata: {name: a, namespace: ml}\ntarget: {kind: Node, name: n9}\n";
    let (rules, code) = judge(&input, &yaml(to_nowhere)).unwrap();
    assert_eq!(code, EXIT_VIOLATIONS);
    assert!(rules.contains("unknown-node"), "{rules:?}");

    // Claim a-gpu allocated on n1 and reserved for pod `ghost`, which is not there.
    let status = "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: a-gpu, namespace: ml}\nstatus:\n  allocation:\n    devices:\n      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]\n    nodeSelector:\n      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]\n  reservedFor: [{resource: pods, name: ghost, uid: x}]\n";
    let (rules, code) = judge(&input, &yaml(status)).unwrap();
    assert_eq!(
        (rules, code),
        (
            BTreeSet::from(["reserved-for-non-user".to_owned()]),
            EXIT_VIOLATIONS
        )
    );
}

/// The binary: a misspelt decision exits 2 with the error on stderr and nothing on
/// stdout; the summary counts patches and Bindings.
#[test]
fn binary_reports_patches_and_bindings() {
    let dir = std::env::temp_dir().join(format!("gangpack-decisions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cluster = format!("{CORPUS}/cluster.yaml");
    let case = format!("{CORPUS}/missing-allocation.yaml");
    let good = dir.join("good.yaml");
    std::fs::write(
        &good,
        "apiVersion: v1\nkind: Binding\nmetadata: {name: a, namespace: ml}\ntarget: {name: n1}\n---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: a-gpu, namespace: ml}\nstatus:\n  allocation:\n    devices:\n      results: [{request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}]\n    nodeSelector:\n      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [n1]}]}]\n  reservedFor: [{resource: pods, name: a, uid: d2d0dca4-850a-4538-a5ed-f0f8c911803a}]\n",
    )
    .unwrap();
    let run = common::run(&[
        "check",
        "-f",
        &cluster,
        "-f",
        &case,
        "--decisions",
        good.to_str().unwrap(),
    ]);
    assert_eq!(run.code, i32::from(EXIT_OK), "{}{}", run.out, run.err);
    assert_eq!(
        run.out,
        "valid: 1 pod bound, 1 claim allocated, 0 PodGroups running; decisions: 1 object patched, 1 Binding; 2 bindings or allocations new\n"
    );
    let bad = dir.join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: b, namespace: ml}\nspec: {nodeName: n1}\n",
    )
    .unwrap();
    let run = common::run(&[
        "check",
        "-f",
        &cluster,
        "-f",
        &case,
        "--decisions",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(run.code, i32::from(EXIT_INVALID));
    assert!(run.out.is_empty());
    assert!(
        run.err.contains(
            "Pod \"ml/b\": metadata.name: the input has no such Pod (did you mean Pod \"ml/a\"?)"
        ),
        "{}",
        run.err
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `docs/decision.schema.json` accepts every decision form the tests and docs use (the
/// corpus whole, as patches and as Bindings; the worked example's files; the YAML
/// blocks of `docs/DECISIONS.md`) and rejects malformed ones. Catches: a schema that
/// drifts from what `check` reads.
#[test]
fn the_schema_accepts_every_form_and_rejects_malformed_ones() {
    let schema_path = common::root().join("docs/decision.schema.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(&schema_path).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler
        .add_resource("decision.schema.json", schema)
        .unwrap();
    let id = compiler
        .compile("decision.schema.json", &mut schemas)
        .unwrap();
    let valid = |doc: &Value| schemas.validate(doc, id).map_err(|e| format!("{e:#}"));

    let mut checked = 0;
    let cluster = path(&format!("{CORPUS}/cluster.yaml"));
    for case in corpus() {
        let files = [cluster.clone(), path(&format!("{CORPUS}/{case}.yaml"))];
        let decisions = decision_objects(&format!("{CORPUS}/{case}.decisions.yaml"));
        let inputs = input_objects(&files);
        for docs in [
            decisions.clone(),
            minimal(&inputs, &decisions, false),
            minimal(&inputs, &decisions, true),
        ] {
            valid(&list(docs.clone())).unwrap_or_else(|e| panic!("{case}: {e}"));
            for d in &docs {
                valid(d).unwrap_or_else(|e| panic!("{case}: {e}\n{d:#}"));
                checked += 1;
            }
        }
    }
    let yaml_docs = |text: &str| -> Vec<Value> {
        serde_norway::Deserializer::from_str(text)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .filter(|v: &Value| !v.is_null())
            .collect()
    };
    for f in [
        "examples/testing/naive-decision.yaml",
        "examples/testing/naive-decision-bindings.yaml",
    ] {
        let text = std::fs::read_to_string(common::root().join(f)).unwrap();
        for d in yaml_docs(&text) {
            valid(&d).unwrap_or_else(|e| panic!("{f}: {e}"));
            checked += 1;
        }
    }
    let page = std::fs::read_to_string(common::root().join("docs/DECISIONS.md")).unwrap();
    let mut blocks = 0;
    for block in page.split("```yaml\n").skip(1) {
        let text = block.split("```").next().unwrap();
        for d in yaml_docs(text) {
            valid(&d).unwrap_or_else(|e| panic!("docs/DECISIONS.md: {e}\n{text}"));
            checked += 1;
        }
        blocks += 1;
    }
    assert!(blocks >= 4 && checked > 150, "{blocks} {checked}");

    for bad in [
        json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"}}),
        json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "a"}, "target": {"kind": "Pod", "name": "n"}}),
        json!({"apiVersion": "v1", "kind": "Bindng", "metadata": {"name": "a"}, "target": {"name": "n"}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}}),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"nodeName": 3}}),
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
               "status": {"allocation": {"devices": {"results": [{"request": "r", "driver": "d", "pool": "p"}]}}}}),
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
               "status": {"reservedFor": [{"resource": "nodes", "name": "n"}]}}),
    ] {
        assert!(valid(&bad).is_err(), "accepted {bad:#}");
    }
}
