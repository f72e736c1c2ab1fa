//! Hostile input never panics: the example manifests, mutated at random (fields
//! removed, replaced by values of other types, odd numbers and strings, duplicated
//! documents), go through loading, conversion, a planning cycle and a taint what-if,
//! and each step either succeeds or returns errors that name where.

use gangpack_k8s::output::{self, TaintTarget};
use gangpack_k8s::{BuildOptions, Snapshot, load_paths, load_str};
use proptest::prelude::*;
use serde_json::{Value, json};

const INPUTS: [&str; 5] = [
    "../examples/cluster",
    "../examples/running-job.yaml",
    "../examples/gang-rack.yaml",
    "../examples/claim-first-available.yaml",
    "../examples/taint-rule.yaml",
];

fn documents() -> Vec<Value> {
    let loaded = load_paths(&INPUTS).unwrap_or_else(|e| panic!("{e}"));
    loaded
        .objects
        .into_iter()
        .map(|o| std::sync::Arc::unwrap_or_clone(o.raw))
        .collect()
}

/// A replacement value: other types, edge numbers and strings.
fn odd_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        Just(json!(true)),
        Just(json!(-1)),
        Just(json!(0)),
        Just(json!(1e308)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!("")),
        Just(json!("80 GiB")),
        Just(json!("-3")),
        Just(json!("1e9999")),
        Just(json!("not/a valid name!")),
        Just(json!("device.attributes[\"x\"].y ==")),
        Just(json!("x".repeat(5000))),
        Just(json!([])),
        Just(json!({})),
        Just(json!([{"a": 1}, null])),
        "[a-z0-9./-]{0,12}".prop_map(Value::String),
    ]
}

/// Every path to a value in `v` (object keys and array indices).
fn paths(v: &Value, prefix: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(prefix.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                prefix.push(json!(k));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                prefix.push(json!(i));
                paths(x, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn at<'v>(v: &'v mut Value, path: &[Value]) -> Option<&'v mut Value> {
    let mut cur = v;
    for p in path {
        cur = match p {
            Value::String(k) => cur.get_mut(k.as_str())?,
            Value::Number(i) => cur.get_mut(usize::try_from(i.as_u64()?).ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

#[derive(Clone, Debug)]
enum Mutation {
    Replace(usize, usize, Value),
    Remove(usize, usize),
    Duplicate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (any::<usize>(), any::<usize>(), odd_value())
            .prop_map(|(d, p, v)| Mutation::Replace(d, p, v)),
        3 => (any::<usize>(), any::<usize>()).prop_map(|(d, p)| Mutation::Remove(d, p)),
        1 => any::<usize>().prop_map(Mutation::Duplicate),
    ]
}

fn apply(docs: &mut Vec<Value>, change: &Mutation) {
    match change {
        Mutation::Duplicate(which) => {
            let doc = docs[which % docs.len()].clone();
            docs.push(doc);
        }
        Mutation::Replace(which, where_, _) | Mutation::Remove(which, where_) => {
            let count = docs.len();
            let doc = &mut docs[which % count];
            let mut all = Vec::new();
            paths(doc, &mut Vec::new(), &mut all);
            let path = all[where_ % all.len()].clone();
            match change {
                Mutation::Replace(_, _, value) => {
                    if let Some(slot) = at(doc, &path) {
                        *slot = value.clone();
                    }
                }
                _ => {
                    if let Some((last, parent)) = path.split_last()
                        && let Some(parent) = at(doc, parent)
                    {
                        match (parent, last) {
                            (Value::Object(o), Value::String(k)) => {
                                o.remove(k);
                            }
                            (Value::Array(a), Value::Number(i)) => {
                                let i = usize::try_from(i.as_u64().unwrap_or(0)).unwrap_or(0);
                                if i < a.len() {
                                    a.remove(i);
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn mutated_manifests_never_panic(muts in proptest::collection::vec(mutation(), 1..5)) {
        let mut docs = documents();
        for m in &muts {
            apply(&mut docs, m);
        }
        let text = serde_norway::to_string(&output::list(docs)).unwrap();
        let loaded = match load_str(&text, "mutated.yaml") {
            Ok(l) => l,
            Err(e) => {
                // Every error says where.
                for err in &e.errors {
                    prop_assert!(err.source.is_some(), "{err}");
                }
                return Ok(());
            }
        };
        for skip_invalid in [false, true] {
            let options = BuildOptions { skip_invalid, ..BuildOptions::default() };
            match Snapshot::build(loaded.clone(), &options) {
                Ok(mut snap) => {
                    let mut copy = Snapshot {
                        scheduler: snap.scheduler.clone(),
                        objects: snap.objects.clone(),
                        generated: snap.generated.clone(),
                        warnings: Vec::new(),
                        skipped: Vec::new(),
                        waiting: snap.waiting.clone(),
                    };
                    let plan = output::plan(&mut snap);
                    // What is written reads back.
                    let written = serde_norway::to_string(&output::list(plan.changed)).unwrap();
                    prop_assert!(load_str(&written, "written.yaml").is_ok());
                    let node = copy.scheduler.cluster().nodes().next().map(|n| n.name.clone());
                    if let Some(node) = node {
                        let taint = "example.com/broken:NoExecute".parse().unwrap();
                        let _ = output::taint(&mut copy, TaintTarget::Node { node, taint });
                    }
                }
                Err(e) => {
                    prop_assert!(!e.is_empty());
                    for err in &e.errors {
                        prop_assert!(err.source.is_some() && err.object.is_some(), "{err}");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Any text: YAML-ish fragments, JSON-ish fragments, control characters.
    #[test]
    fn any_text_loads_or_fails_with_a_located_error(
        text in prop_oneof![
            "\\PC{0,200}",
            "(---\n|apiVersion: v1\n|kind: (List|Pod|Node)\n|metadata:\n  name: [a-z]{1,5}\n|items:\n- |  [a-z]+: [0-9a-z\\[\\]{}\"']{0,6}\n|\\{|\\}|\\[|\\]|,|: |\t){0,30}",
        ]
    ) {
        match load_str(&text, "any.yaml") {
            Ok(loaded) => {
                let _ = Snapshot::build(loaded, &BuildOptions::default());
            }
            Err(e) => {
                for err in &e.errors {
                    prop_assert!(err.source.as_ref().is_some_and(|s| s.file == "any.yaml"), "{err}");
                }
            }
        }
    }
}
