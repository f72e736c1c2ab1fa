//! `gangpack check` and `gangpack diff`: the corpus of wrong decisions
//! (`cli/tests/fixtures/check/`, one case per rule), every decision `gangpack plan`
//! makes on the examples and fixtures, the binary's exit statuses, and arbitrary input
//! (never a panic).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use gangpack_cli::{
    EXIT_INVALID, EXIT_OK, EXIT_VIOLATIONS, Format, Input, InputFile, Options, Style,
};
use proptest::prelude::*;
use serde_json::Value;

const CORPUS: &str = "cli/tests/fixtures/check";

fn path(p: &str) -> String {
    common::root().join(p).to_string_lossy().into_owned()
}

fn paths(ps: &[&str]) -> Input {
    Input::Paths(ps.iter().map(|p| path(p)).collect())
}

/// The rules `check -o json` reports, sorted, and the exit status.
fn rules(input: &Input, decisions: Option<&Input>) -> (BTreeSet<String>, u8, Value) {
    let run = gangpack_cli::check(
        input,
        decisions,
        &Options::default(),
        false,
        Format::Json,
        Style::PLAIN,
    );
    assert!(run.failure.is_none(), "check failed: {:?}", run.failure);
    let list: Value = serde_json::from_str(&run.stdout).expect("JSON");
    let rules = list
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| f["rule"].as_str().expect("rule").to_owned())
        .collect();
    (rules, run.code, list)
}

/// Every case of the corpus: `(name, has decisions)`.
fn corpus() -> Vec<(String, bool)> {
    let dir = common::root().join(CORPUS);
    let mut out: Vec<(String, bool)> = std::fs::read_dir(&dir)
        .expect("corpus")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let case = name.strip_suffix(".yaml")?;
            (case != "cluster" && !case.ends_with(".decisions")).then(|| case.to_owned())
        })
        .map(|c| {
            let decided = dir.join(format!("{c}.decisions.yaml")).exists();
            (c, decided)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn every_case_breaks_exactly_its_rule() {
    let cluster = format!("{CORPUS}/cluster.yaml");
    let cases = corpus();
    assert!(cases.len() >= 26, "{cases:?}");
    for (case, decided) in &cases {
        let file = format!("{CORPUS}/{case}.yaml");
        let dump = paths(&[&cluster, &file]);
        let decisions = decided.then(|| paths(&[&format!("{CORPUS}/{case}.decisions.yaml")]));
        let (found, code, list) = rules(&dump, decisions.as_ref());
        assert_eq!(code, EXIT_VIOLATIONS, "{case}: {list:#}");
        assert_eq!(found, BTreeSet::from([case.clone()]), "{case}: {list:#}");
        // Every finding names its objects.
        for f in list.as_array().unwrap() {
            assert!(
                !f["objects"].as_array().unwrap().is_empty(),
                "{case}: {f:#}"
            );
            assert!(!f["message"].as_str().unwrap().is_empty(), "{case}: {f:#}");
        }
        if *decided && case != "admin-access-not-permitted" {
            // The state before the wrong decision is valid: the finding is the
            // decision's.
            let (before, code, list) = rules(&dump, None);
            assert_eq!(code, EXIT_OK, "{case} before: {list:#}");
            assert!(before.is_empty());
        }
    }
}

/// The rules the issue names, each with a case in the corpus.
#[test]
fn the_corpus_covers_every_rule_of_the_contract() {
    let cases: BTreeSet<String> = corpus().into_iter().map(|c| c.0).collect();
    for rule in [
        "device-allocated-twice",
        "device-in-use",
        "capacity-exceeded",
        "counters-exceeded",
        "device-taint-not-tolerated",
        "taint-rule-not-tolerated",
        "node-taint-not-tolerated",
        "class-selector-mismatch",
        "request-selector-mismatch",
        "wrong-device-count",
        "request-not-allocated",
        "match-attribute-violated",
        "distinct-attribute-violated",
        "device-unreachable",
        "allocation-not-for-node",
        "node-affinity-mismatch",
        "node-unschedulable",
        "node-resources-exceeded",
        "below-min-count",
        "topology-split",
        "admin-access-not-permitted",
        "missing-allocation",
        "claim-not-reserved",
        "reserved-for-non-user",
        "eviction-overdue",
    ] {
        assert!(cases.contains(rule), "no corpus case for {rule}");
        assert!(
            gangpack::Violation::RULES.contains(&rule)
                || [
                    "taint-rule-not-tolerated",
                    "admin-access-not-permitted",
                    "claim-not-reserved",
                    "reserved-for-non-user",
                    "eviction-overdue"
                ]
                .contains(&rule),
            "{rule} is not a documented rule"
        );
    }
}

/// The decision as a running state: the wrong decision's objects merged into the dump
/// by hand (no `--decisions`) are found too — except the rules that only hold when a
/// pod is placed (node taints, cordons, selectors), which Kubernetes does not apply to
/// running pods, unless `--admission`.
#[test]
fn running_state_is_checked_as_it_is() {
    let cluster = format!("{CORPUS}/cluster.yaml");
    let admission_only = [
        "node-taint-not-tolerated",
        "node-unschedulable",
        "node-affinity-mismatch",
        "device-taint-not-tolerated",
    ];
    for (case, decided) in corpus() {
        if !decided {
            continue;
        }
        let mut loaded =
            gangpack_k8s::load_paths(&[path(&cluster), path(&format!("{CORPUS}/{case}.yaml"))])
                .expect("loads");
        let decisions =
            gangpack_k8s::load_paths(&[path(&format!("{CORPUS}/{case}.decisions.yaml"))]).unwrap();
        gangpack_k8s::check::apply_decisions(&mut loaded, decisions).expect("applies");
        let text = loaded
            .objects
            .iter()
            .map(|o| serde_norway::to_string(&*o.raw).unwrap())
            .collect::<Vec<_>>()
            .join("---\n");
        let dump = Input::Files(vec![InputFile {
            name: format!("{case}-running.yaml"),
            text,
        }]);
        for admission in [false, true] {
            let run = gangpack_cli::check(
                &dump,
                None,
                &Options::default(),
                admission,
                Format::Json,
                Style::PLAIN,
            );
            assert!(run.failure.is_none(), "{case}: {:?}", run.failure);
            let list: Value = serde_json::from_str(&run.stdout).expect("JSON");
            let found: BTreeSet<&str> = list
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["rule"].as_str().unwrap())
                .collect();
            if admission_only.contains(&case.as_str()) && !admission {
                // The device taint was added at 08:00, before the 09:00 allocation:
                // it was there when the GPU was allocated, so it still counts.
                if case == "device-taint-not-tolerated" {
                    assert_eq!(found, BTreeSet::from([case.as_str()]), "{case}");
                } else {
                    assert!(found.is_empty(), "{case}: {list:#}");
                    assert_eq!(run.code, EXIT_OK);
                    // Counted, and said in the table.
                    let (report, _) =
                        gangpack_cli::check_report(&dump, None, &Options::default(), false)
                            .unwrap();
                    assert_eq!(report.running_exempt, 1, "{case}");
                    let table = gangpack_cli::check(
                        &dump,
                        None,
                        &Options::default(),
                        false,
                        Format::Table,
                        Style::PLAIN,
                    );
                    assert!(
                        table
                            .stdout
                            .starts_with("note: 1 finding of a placement-time rule"),
                        "{case}: {}",
                        table.stdout
                    );
                }
            } else {
                assert_eq!(
                    found,
                    BTreeSet::from([case.as_str()]),
                    "{case} admission={admission}: {list:#}"
                );
            }
        }
    }
}

/// The combinations of several sets `plan` runs on in the docs and tests.
const COMBINED: &[&[&str]] = &[
    &["examples/cluster", "examples/gang-rack.yaml"],
    &["examples/cluster", "examples/claim-first-available.yaml"],
    &["examples/cluster", "examples/running-job.yaml"],
    &[
        "examples/cluster",
        "examples/running-job.yaml",
        "examples/gang-rack.yaml",
    ],
    &[
        "examples/cluster",
        "examples/gang-rack.yaml",
        "examples/claim-first-available.yaml",
    ],
    &[
        "examples/cluster",
        "examples/running-job.yaml",
        "cli/tests/fixtures/evictions/xid-rule.yaml",
    ],
    &[
        "examples/cluster",
        "examples/running-job.yaml",
        "examples/taint-rule.yaml",
    ],
    &[
        "cli/tests/fixtures/preemption/cluster.yaml",
        "cli/tests/fixtures/preemption/fewest-pods.yaml",
    ],
    &[
        "cli/tests/fixtures/preemption/cluster.yaml",
        "cli/tests/fixtures/preemption/lowest-priority.yaml",
    ],
    &[
        "cli/tests/fixtures/preemption/cluster.yaml",
        "cli/tests/fixtures/preemption/pods-before-group.yaml",
    ],
    &[
        "cli/tests/fixtures/preemption/cluster.yaml",
        "cli/tests/fixtures/preemption/lone-pod.yaml",
    ],
    &[
        "cli/tests/fixtures/placer-limits/cluster.yaml",
        "cli/tests/fixtures/group-claims/renamed-entry.yaml",
    ],
    &[
        "cli/tests/fixtures/placer-limits/cluster.yaml",
        "cli/tests/fixtures/group-claims/mixed-entries.yaml",
    ],
];

/// Every manifest set of the examples and fixtures: each file alone, each directory
/// whole (as the Node identity test enumerates them).
fn manifest_sets() -> Vec<String> {
    fn visit(root: &Path, rel: &Path, out: &mut Vec<String>) {
        let abs = root.join(rel);
        let manifest = |p: &Path| {
            p.extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        };
        if abs.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(&abs)
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            entries.sort();
            out.push(rel.to_string_lossy().into_owned());
            for e in entries {
                visit(root, &rel.join(e), out);
            }
        } else if manifest(&abs) {
            out.push(rel.to_string_lossy().into_owned());
        }
    }
    let root = common::root();
    let mut out = Vec::new();
    for top in ["examples", "cli/tests/fixtures", "k8s/tests/data"] {
        visit(&root, Path::new(top), &mut out);
    }
    out
}

/// `check --decisions` on gangpack's plan for `files`: valid. `None` when the input
/// does not plan (invalid on purpose).
fn plan_then_check(files: &[&str]) -> Option<usize> {
    let dump = paths(files);
    let report = gangpack_cli::plan_report(&dump, &Options::default(), Style::PLAIN).ok()?;
    // A directory of separate scenarios that define the same objects (a later one
    // replacing an earlier one's) is no cluster: its mix of pools is not judged here.
    // (cli/tests/fixtures/explanations is one: a running claim of one file holds a
    // device of a pool that another file's slice makes invalid, so the input itself
    // breaks device-not-usable before anything is planned.)
    if report
        .warnings
        .iter()
        .any(|w| w.contains("replaces the one at"))
    {
        return None;
    }
    let text = serde_json::to_string(&report.list).unwrap();
    let decisions = Input::Files(vec![InputFile {
        name: "plan.json".into(),
        text,
    }]);
    let (found, code, list) = rules(&dump, Some(&decisions));
    assert_eq!(code, EXIT_OK, "{files:?}: {list:#}");
    assert!(found.is_empty());
    let (report, _) =
        gangpack_cli::check_report(&dump, Some(&decisions), &Options::default(), false).unwrap();
    Some(report.decided)
}

#[test]
fn every_plan_passes_check() {
    let mut decided = 0;
    let mut planned = 0;
    for set in manifest_sets() {
        if let Some(n) = plan_then_check(&[&set]) {
            decided += n;
            planned += 1;
        }
    }
    // The combinations the docs and tests run, over several sets.
    for files in COMBINED {
        decided += plan_then_check(files).unwrap_or_else(|| panic!("{files:?} plans"));
        planned += 1;
    }
    // Many inputs planned, and the plans did decide things.
    assert!(planned > 40, "{planned}");
    assert!(decided > 40, "{decided}");
}

#[test]
fn binary_exit_statuses_and_table() {
    let cluster = format!("{CORPUS}/cluster.yaml");
    let case = format!("{CORPUS}/device-allocated-twice.yaml");
    let wrong = format!("{CORPUS}/device-allocated-twice.decisions.yaml");
    let ok = common::run(&["check", "-f", &cluster, "-f", &case]);
    assert_eq!(ok.code, 0, "{}", ok.err);
    assert_eq!(
        ok.out,
        "valid: 0 pods bound, 0 claims allocated, 0 PodGroups running\n"
    );
    let bad = common::run(&["check", "-f", &cluster, "-f", &case, "--decisions", &wrong]);
    assert_eq!(bad.code, 4, "{}", bad.err);
    assert_eq!(
        bad.out,
        "device-allocated-twice: device gpu.example.com/n1/gpu-0 is allocated to both ml/a-gpu and ml/b-gpu\n  \
         objects: ResourceClaim ml/a-gpu, ResourceClaim ml/b-gpu, Device gpu.example.com/n1/gpu-0\n\
         \n\
         invalid: 1 violation of 1 rule (2 pods bound, 2 claims allocated, 0 PodGroups running; \
         decisions: 4 objects replaced; 4 bindings or allocations new)\n"
    );
    let json = common::run(&[
        "check",
        "-f",
        &cluster,
        "-f",
        &case,
        "--decisions",
        &wrong,
        "-o",
        "json",
    ]);
    let list: Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(
        list,
        serde_json::json!([{
            "rule": "device-allocated-twice",
            "message": "device gpu.example.com/n1/gpu-0 is allocated to both ml/a-gpu and ml/b-gpu",
            "objects": [
                {"kind": "ResourceClaim", "namespace": "ml", "name": "a-gpu"},
                {"kind": "ResourceClaim", "namespace": "ml", "name": "b-gpu"},
                {"kind": "Device", "name": "gpu.example.com/n1/gpu-0"},
            ]
        }])
    );
    // Invalid input: exit 2, nothing on stdout.
    let invalid = common::run(&["check", "-f", "cli/tests/bad/bad-quantity.yaml"]);
    assert_eq!(invalid.code, 2);
    assert!(invalid.out.is_empty());
    assert!(invalid.err.starts_with("error: "), "{}", invalid.err);
    let invalid = common::run(&[
        "check",
        "-f",
        &cluster,
        "--decisions",
        "cli/tests/bad/syntax.yaml",
    ]);
    assert_eq!(invalid.code, 2);
    assert!(invalid.out.is_empty());
}

#[test]
fn diff_reports_where_two_decisions_differ() {
    let cluster = format!("{CORPUS}/cluster.yaml");
    let case = format!("{CORPUS}/below-min-count.yaml");
    let ours = std::env::temp_dir().join(format!("gangpack-diff-ours-{}.yaml", std::process::id()));
    let plan = common::run(&["plan", "-f", &cluster, "-f", &case, "-o", "yaml"]);
    assert_eq!(plan.code, 0, "{}", plan.err);
    std::fs::write(&ours, &plan.out).unwrap();
    let ours = ours.to_string_lossy().into_owned();
    let theirs = format!("{CORPUS}/below-min-count.decisions.yaml");
    let run = common::run(&[
        "diff", "-f", &cluster, "-f", &case, "--ours", &ours, "--theirs", &theirs,
    ]);
    assert_eq!(run.code, 4, "{}", run.err);
    assert!(
        run.has_row(&["verdict", "valid", "invalid", "(1", "violation)"]),
        "{}",
        run.out
    );
    assert!(run.has_row(&["pods", "placed", "3", "2"]), "{}", run.out);
    assert!(run.has_row(&["gangs", "split", "0", "1"]), "{}", run.out);
    assert!(
        run.out
            .contains("gangs split by theirs:\n  PodGroup ml/train\n"),
        "{}",
        run.out
    );
    assert!(
        run.out
            .contains("placed by ours only:\n  Pod ml/train-2 on "),
        "{}",
        run.out
    );
    assert!(run.out.contains("violations (theirs):\n  below-min-count: pod group ml/train: 2 pods bound, fewer than minCount 3\n"), "{}", run.out);
    assert!(
        run.out.ends_with("the two decisions differ\n"),
        "{}",
        run.out
    );
    let json = common::run(&[
        "diff", "-f", &cluster, "-f", &case, "--ours", &ours, "--theirs", &theirs, "-o", "json",
    ]);
    let v: Value = serde_json::from_str(&json.out).unwrap();
    assert_eq!(v["ours"]["valid"], true);
    assert_eq!(v["theirs"]["valid"], false);
    assert_eq!(v["theirs"]["gangsSplit"], serde_json::json!(["ml/train"]));
    assert_eq!(v["placedByOursOnly"], serde_json::json!(["ml/train-2"]));
    // The same decision on both sides.
    let same = common::run(&[
        "diff", "-f", &cluster, "-f", &case, "--ours", &ours, "--theirs", &ours,
    ]);
    assert_eq!(same.code, 0, "{}", same.err);
    assert!(
        same.out
            .ends_with("the two decisions place and evict the same pods on the same nodes\n"),
        "{}",
        same.out
    );
    std::fs::remove_file(Path::new(&ours)).unwrap();
}

/// The corpus texts, for mutation.
fn texts() -> Vec<(String, String)> {
    let dir = common::root().join(CORPUS);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            let name = p.file_name()?.to_string_lossy().into_owned();
            Some((name, std::fs::read_to_string(&p).ok()?))
        })
        .collect();
    out.sort();
    out
}

/// A corpus file with one line replaced, deleted or duplicated, or cut short.
fn mutate(text: &str, line: usize, how: u8, junk: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return junk.to_owned();
    }
    let i = line % lines.len();
    let owned;
    match how % 5 {
        0 => {
            lines.remove(i);
        }
        1 => lines.insert(i, lines[i]),
        2 => {
            owned = format!("{}{junk}", lines[i]);
            lines[i] = &owned;
        }
        3 => {
            // Keep the indentation, replace the value.
            let l = lines[i];
            let key_end = l.find(':').map_or(l.len(), |k| k + 1);
            owned = format!("{} {junk}", &l[..key_end]);
            lines[i] = &owned;
        }
        _ => lines.truncate(i),
    }
    lines.join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Whatever the dump and decisions say, `check` returns valid, violations or
    /// invalid input: never a panic, never another status.
    #[test]
    fn check_never_panics(
        pick in 0usize..64,
        line in 0usize..400,
        how in 0u8..5,
        junk in prop_oneof![
            Just(String::new()),
            Just("-1".to_owned()),
            Just("{}".to_owned()),
            Just("[".to_owned()),
            Just("99999999999999999999Gi".to_owned()),
            Just("null".to_owned()),
            Just("\"n9\"".to_owned()),
            Just("gpu-0".to_owned()),
            "[ -~]{0,12}",
        ],
        mutate_decisions in any::<bool>(),
    ) {
        let texts = texts();
        let cases: Vec<&(String, String)> = texts
            .iter()
            .filter(|(n, _)| n.ends_with(".decisions.yaml"))
            .collect();
        let (name, decisions) = cases[pick % cases.len()];
        let case = name.replace(".decisions", "");
        let cluster = &texts.iter().find(|(n, _)| n == "cluster.yaml").unwrap().1;
        let pending = &texts.iter().find(|(n, _)| *n == case).unwrap().1;
        let (pending, decisions) = if mutate_decisions {
            (pending.clone(), mutate(decisions, line, how, &junk))
        } else {
            (mutate(pending, line, how, &junk), decisions.clone())
        };
        let dump = Input::Files(vec![
            InputFile { name: "cluster.yaml".into(), text: cluster.clone() },
            InputFile { name: case.clone(), text: pending },
        ]);
        let decisions = Input::Files(vec![InputFile { name: name.clone(), text: decisions }]);
        let run = gangpack_cli::check(&dump, Some(&decisions), &Options::default(), false, Format::Json, Style::PLAIN);
        prop_assert!([EXIT_OK, EXIT_INVALID, EXIT_VIOLATIONS].contains(&run.code), "{}", run.code);
        if run.code == EXIT_INVALID {
            prop_assert!(run.stdout.is_empty());
            prop_assert!(run.failure.is_some());
        } else {
            let v: Value = serde_json::from_str(&run.stdout).unwrap();
            prop_assert_eq!(v.as_array().unwrap().is_empty(), run.code == EXIT_OK);
        }
    }
}

/// The worked example of `examples/testing/README.md`.
#[test]
fn worked_example_finds_the_naive_schedulers_bugs() {
    let run = common::run(&[
        "check",
        "-f",
        "examples/cluster",
        "-f",
        "examples/gang-rack.yaml",
        "--decisions",
        "examples/testing/naive-decision.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(run.code, 4, "{}", run.err);
    let list: Value = serde_json::from_str(&run.out).unwrap();
    let rules: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(
        rules,
        [
            "device-allocated-twice",
            "device-allocated-twice",
            "device-allocated-twice",
            "device-allocated-twice",
            "topology-split"
        ]
    );
    // The same decision as kube-scheduler writes it (claim status patches, Bindings):
    // the same findings, word for word.
    let bindings = common::run(&[
        "check",
        "-f",
        "examples/cluster",
        "-f",
        "examples/gang-rack.yaml",
        "--decisions",
        "examples/testing/naive-decision-bindings.yaml",
        "-o",
        "json",
    ]);
    assert_eq!(
        (bindings.code, &bindings.out),
        (4, &run.out),
        "{}",
        bindings.err
    );
    // gangpack's own plan for the same input passes.
    let plan = common::run(&[
        "plan",
        "-f",
        "examples/cluster",
        "-f",
        "examples/gang-rack.yaml",
        "-o",
        "yaml",
    ]);
    let ours = std::env::temp_dir().join(format!("gangpack-worked-{}.yaml", std::process::id()));
    std::fs::write(&ours, &plan.out).unwrap();
    let ours = ours.to_string_lossy().into_owned();
    let diff = common::run(&[
        "diff",
        "-f",
        "examples/cluster",
        "-f",
        "examples/gang-rack.yaml",
        "--ours",
        &ours,
        "--theirs",
        "examples/testing/naive-decision.yaml",
    ]);
    assert_eq!(diff.code, 4, "{}", diff.err);
    assert!(
        diff.has_row(&["verdict", "valid", "invalid", "(5", "violations)"]),
        "{}",
        diff.out
    );
    assert!(
        diff.has_row(&["devices", "allocated", "16", "12"]),
        "{}",
        diff.out
    );
    assert!(
        diff.out.contains("placed on different nodes (ours, theirs):\n  Pod ml/llm-pretrain-worker-3: gpu-r1-n2, gpu-r2-n1\n"),
        "{}",
        diff.out
    );
    std::fs::remove_file(&ours).unwrap();
}

/// `cli/README.md` documents every rule `check` reports, once.
#[test]
fn every_rule_is_documented() {
    let readme = std::fs::read_to_string(common::root().join("cli/README.md")).unwrap();
    let adapter = [
        "taint-rule-not-tolerated",
        "eviction-overdue",
        "claim-not-reserved",
        "reserved-for-non-user",
        "admin-access-not-permitted",
    ];
    for rule in gangpack::Violation::RULES.iter().chain(&adapter) {
        let row = format!("| `{rule}` |");
        assert_eq!(readme.matches(&row).count(), 1, "{rule} in cli/README.md");
    }
    // And the adapter's rules in the module docs of gangpack_k8s::check.
    let docs = std::fs::read_to_string(common::root().join("k8s/src/check/mod.rs")).unwrap();
    for rule in adapter {
        assert!(
            docs.contains(&format!("//! | `{rule}` |")),
            "{rule} in k8s/src/check/mod.rs"
        );
    }
}

/// Mutation oracle: gangpack's plan for a generated scenario passes `check`; the same
/// plan with one planted bug fails with that bug's rule.
#[test]
fn planted_bugs_in_valid_plans_are_found() {
    use gangpack_cli::{Size, WorkloadKind};
    let as_input = |name: &str, v: &Value| {
        Input::Files(vec![InputFile {
            name: name.into(),
            text: serde_json::to_string(v).unwrap(),
        }])
    };
    let (mut doubled, mut split, mut unknown) = (0, 0, 0);
    for seed in 0..24 {
        let scenario = gangpack_cli::generated_scenario(seed, Size::Medium, WorkloadKind::Mixed);
        let manifests =
            gangpack_k8s::output::list(gangpack_k8s::output::scenario_manifests(&scenario));
        let dump = as_input("gen.json", &manifests);
        let plan = gangpack_cli::plan_report(&dump, &Options::default(), Style::PLAIN).unwrap();
        let items = plan.list["items"].as_array().unwrap().clone();
        let (found, code, _) = rules(&dump, Some(&as_input("plan.json", &plan.list)));
        assert_eq!((code, found.len()), (EXIT_OK, 0), "seed {seed}");
        let with = |items: Vec<Value>| serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});

        // 1. An exclusive device of one new claim given to another new claim too.
        let exclusive: Vec<(usize, Value)> = items
            .iter()
            .enumerate()
            .filter(|(_, o)| o["kind"] == "ResourceClaim")
            .filter_map(|(i, o)| {
                let r = o.pointer("/status/allocation/devices/results/0")?;
                (r.get("shareID").is_none() && r.get("adminAccess") != Some(&Value::Bool(true)))
                    .then(|| (i, r.clone()))
            })
            .collect();
        if let [(a, _), (_, theirs), ..] = exclusive.as_slice() {
            let mut bad = items.clone();
            let r = bad[*a]
                .pointer_mut("/status/allocation/devices/results/0")
                .unwrap();
            for k in ["driver", "pool", "device"] {
                r[k] = theirs[k].clone();
            }
            let (found, code, list) = rules(&dump, Some(&as_input("bad.json", &with(bad))));
            assert_eq!(code, EXIT_VIOLATIONS, "seed {seed}");
            assert!(
                found.contains("device-allocated-twice") || found.contains("device-in-use"),
                "seed {seed}: {list:#}"
            );
            doubled += 1;
        }

        // 2. One member of a gang placed at exactly minCount left out.
        let groups = manifests["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["kind"] == "PodGroup");
        for g in groups {
            let (Some(name), Some(min)) = (
                g.pointer("/metadata/name").and_then(Value::as_str),
                g.pointer("/spec/schedulingPolicy/gang/minCount")
                    .and_then(Value::as_u64),
            ) else {
                continue;
            };
            let member = |o: &Value| {
                o["kind"] == "Pod"
                    && o.pointer("/spec/schedulingGroup/podGroupName")
                        .and_then(Value::as_str)
                        == Some(name)
                    && o.pointer("/spec/nodeName").is_some()
            };
            let planned: Vec<usize> = (0..items.len()).filter(|&i| member(&items[i])).collect();
            let running = manifests["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| member(o))
                .count();
            if min < 2 || running > 0 || planned.len() as u64 != min {
                continue;
            }
            let mut bad = items.clone();
            bad[planned[0]]["spec"]
                .as_object_mut()
                .unwrap()
                .remove("nodeName");
            let (found, _, list) = rules(&dump, Some(&as_input("bad.json", &with(bad))));
            assert!(
                found.contains("below-min-count"),
                "seed {seed} group {name}: {list:#}"
            );
            split += 1;
            break;
        }

        // 3. A new binding to a node that does not exist.
        let running = |o: &Value| {
            manifests["items"].as_array().unwrap().iter().any(|m| {
                m["kind"] == "Pod"
                    && m["metadata"]["name"] == o["metadata"]["name"]
                    && m["metadata"]["namespace"] == o["metadata"]["namespace"]
                    && m.pointer("/spec/nodeName").is_some()
            })
        };
        if let Some(i) = items.iter().position(|o| {
            o["kind"] == "Pod" && o.pointer("/spec/nodeName").is_some() && !running(o)
        }) {
            let mut bad = items.clone();
            bad[i]["spec"]["nodeName"] = Value::String("no-such-node".into());
            let (found, _, list) = rules(&dump, Some(&as_input("bad.json", &with(bad))));
            assert!(found.contains("unknown-node"), "seed {seed}: {list:#}");
            unknown += 1;
        }
    }
    // Each planted bug was planted, and found, many times.
    assert!(
        doubled >= 10 && split >= 5 && unknown >= 10,
        "{doubled} {split} {unknown}"
    );
}
