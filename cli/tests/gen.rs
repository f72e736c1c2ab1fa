//! `gangpack gen`: generated scenarios as manifests that `gangpack plan -f -` reads
//! back, byte-identical for a seed, different across seeds, and the same model
//! objects as the scenario drawn (`gangpack_cli::generated_scenario`); `--features`
//! takes a switched-off feature out of them; `--events` writes them as a consistent
//! watch stream that `gangpack watch` reads.

use std::collections::{BTreeMap, BTreeSet};

use gangpack::testing::Feature;
use gangpack_cli::{
    Collected, GenSpec, Options, Size, Style, WatchOptions, WatchSource, WorkloadKind,
    generated_scenario,
};
use gangpack_k8s::{BuildOptions, Snapshot, load_str};
use serde_json::Value;

const SEEDS: u64 = 20;

mod common;

use common::run_with_stdin as gangpack;

fn generate(seed: u64, size: &str, kind: &str) -> String {
    generate_with(seed, size, kind, &[])
}

/// `gangpack gen --seed SEED --size SIZE --kind KIND EXTRA...`: its stdout.
fn generate_with(seed: u64, size: &str, kind: &str, extra: &[&str]) -> String {
    let seed = seed.to_string();
    let mut args = vec!["gen", "--seed", &seed, "--size", size, "--kind", kind];
    args.extend_from_slice(extra);
    let run = gangpack(&args, None);
    assert_eq!(run.code, 0, "gangpack {args:?}: {}", run.err);
    assert!(run.err.is_empty(), "no messages: {}", run.err);
    run.out
}

/// `plan -f -` reads the manifests: exit 0 (all placed) or 3 (some pending), never 2.
fn assert_plans(manifests: &str, what: &str) {
    let run = gangpack(&["plan", "-f", "-"], Some(manifests));
    assert!(
        run.code == 0 || run.code == 3,
        "{what}: plan exit {}:\n{}",
        run.code,
        run.err
    );
    assert!(!run.err.contains("error:"), "{what}: {}", run.err);
    assert!(!run.err.contains("warning:"), "{what}: {}", run.err);
    // The summary line (`N units: ...` or `nothing to schedule: ...`).
    assert!(
        run.out.contains(" pods bound") || run.out.contains(" pod bound"),
        "{what}: {}",
        run.out
    );
    assert_plan_checks(manifests, what);
}

/// The generated running state passes `gangpack check` as it is, and so does the state
/// after gangpack's plan for it (`check --decisions`).
fn assert_plan_checks(manifests: &str, what: &str) {
    use gangpack_cli::{EXIT_OK, Input, InputFile, Options, Style};
    let dump = Input::Files(vec![InputFile {
        name: "gen.yaml".into(),
        text: manifests.to_owned(),
    }]);
    let options = Options::default();
    let (report, _) = gangpack_cli::check_report(&dump, None, &options, false).expect("loads");
    assert!(
        report.is_valid(),
        "{what}: the generated state: {:#?}",
        report.findings
    );
    let plan = gangpack_cli::plan_report(&dump, &options, Style::PLAIN).expect("plans");
    let decisions = Input::Files(vec![InputFile {
        name: "plan.json".into(),
        text: serde_json::to_string(&plan.list).unwrap(),
    }]);
    let (report, _) =
        gangpack_cli::check_report(&dump, Some(&decisions), &options, false).expect("loads");
    assert!(
        report.is_valid(),
        "{what}: gangpack's plan: {:#?}",
        report.findings
    );
    let run = gangpack_cli::check(
        &dump,
        Some(&decisions),
        &options,
        false,
        gangpack_cli::Format::Json,
        Style::PLAIN,
    );
    assert_eq!(run.code, EXIT_OK, "{what}");
}

#[test]
fn small_scenarios_plan_for_every_seed_and_kind() {
    for kind in ["mixed", "gangs", "pods"] {
        for seed in 0..SEEDS {
            let text = generate(seed, "small", kind);
            assert_plans(&text, &format!("seed {seed} small {kind}"));
        }
    }
}

#[test]
fn medium_and_large_scenarios_plan() {
    for size in ["medium", "large"] {
        for seed in 0..3 {
            let text = generate(seed, size, "mixed");
            assert_plans(&text, &format!("seed {seed} {size}"));
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_bytes_and_seeds_differ() {
    let mut seen = BTreeSet::new();
    for seed in 0..SEEDS {
        let text = generate(seed, "small", "mixed");
        assert_eq!(
            text,
            generate(seed, "small", "mixed"),
            "seed {seed} repeats"
        );
        assert!(seen.insert(text), "seed {seed} gives a scenario of its own");
    }
    // The size and the kind change the scenario too.
    assert_ne!(
        generate(1, "small", "mixed"),
        generate(1, "medium", "mixed")
    );
    assert_ne!(generate(1, "small", "gangs"), generate(1, "small", "pods"));
}

#[test]
fn the_default_is_seed_0_small_mixed_yaml() {
    let run = gangpack(&["gen"], None);
    assert_eq!(run.code, 0, "{}", run.err);
    assert_eq!(run.out, generate(0, "small", "mixed"));
    assert!(
        run.out.starts_with("apiVersion: v1\nitems:\n"),
        "{}",
        run.out
    );
    assert!(
        run.out
            .ends_with("kind: List\nmetadata:\n  resourceVersion: ''\n")
    );
}

#[test]
fn json_is_the_same_list() {
    let yaml = generate(5, "small", "mixed");
    let run = gangpack(&["gen", "--seed", "5", "-o", "json"], None);
    assert_eq!(run.code, 0, "{}", run.err);
    assert!(run.out.ends_with("}\n"));
    let json: Value = serde_json::from_str(&run.out).expect("JSON");
    let from_yaml: Value = serde_norway::from_str(&yaml).expect("YAML");
    assert_eq!(json, from_yaml);
    assert_eq!(json["kind"], "List");
    assert_plans(&run.out, "seed 5 json");
}

#[test]
fn kinds_select_the_workloads() {
    let kinds = |text: &str| -> BTreeSet<String> {
        let list: Value = serde_norway::from_str(text).expect("YAML");
        list["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    for seed in 0..5 {
        let gangs = kinds(&generate(seed, "small", "gangs"));
        assert!(
            gangs.contains("PodGroup") && gangs.contains("Workload"),
            "{gangs:?}"
        );
        let pods = kinds(&generate(seed, "small", "pods"));
        assert!(
            !pods.contains("PodGroup") && !pods.contains("Workload"),
            "{pods:?}"
        );
        assert!(pods.contains("Pod"), "{pods:?}");
    }
}

#[test]
fn the_manifests_load_back_into_the_scenario() {
    for seed in 0..SEEDS {
        let scenario = generated_scenario(seed, Size::Small, WorkloadKind::Mixed);
        let text = generate(seed, "small", "mixed");
        let loaded = load_str(&text, "gen.yaml").expect("loads");
        let snap = Snapshot::build(loaded, &BuildOptions::default()).expect("builds");
        let sched = &snap.scheduler;
        let mut nodes: Vec<_> = sched.cluster().nodes().cloned().collect();
        let mut want = scenario.nodes.clone();
        nodes.sort_by(|a, b| a.name.cmp(&b.name));
        want.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(nodes, want, "seed {seed}: nodes");
        for slice in &scenario.slices {
            assert_eq!(
                sched.cluster().slice(&slice.name),
                Some(slice),
                "seed {seed}"
            );
        }
        for claim in &scenario.claims {
            let key = format!("{}/{}", claim.namespace, claim.name);
            assert_eq!(
                sched
                    .claims()
                    .find(|c| format!("{}/{}", c.namespace, c.name) == key),
                Some(claim),
                "seed {seed}: {key}"
            );
        }
        for pod in &scenario.pods {
            let key = format!("{}/{}", pod.namespace, pod.name);
            assert_eq!(sched.pod(&key), Some(pod), "seed {seed}: {key}");
        }
        for group in &scenario.groups {
            let key = format!("{}/{}", group.namespace, group.name);
            let got = sched.group(&key).expect("the group is loaded");
            assert_eq!(got.policy, group.policy, "seed {seed}: {key}");
            assert_eq!(got.topology, group.topology, "seed {seed}: {key}");
            assert_eq!(got.workload_ref, group.workload_ref, "seed {seed}: {key}");
        }
        assert_eq!(sched.pods().count(), scenario.pods.len());
        assert_eq!(sched.claims().count(), scenario.claims.len());
    }
}

#[test]
fn bad_flags_are_usage_errors() {
    for args in [
        &["gen", "--size", "huge"][..],
        &["gen", "--kind", "jobs"],
        &["gen", "--seed", "-1"],
        &["gen", "--seed", "many"],
        &["gen", "-o", "table"],
        &["gen", "extra"],
        &["gen", "--features", "sharng"],
        &["gen", "--features", ""],
        &["gen", "--features", "topology,,cel"],
        &["gen", "--features", "-all"],
        &["gen", "--events", "-o", "yaml"],
        &["gen", "--fleet", "8", "--features", "none"],
        &["gen", "--fleet", "8", "--events"],
    ] {
        let run = gangpack(args, None);
        assert_eq!(run.code, 2, "{args:?}: {}", run.err);
        assert!(run.out.is_empty(), "{args:?}");
        assert!(run.err.contains("error:"), "{args:?}: {}", run.err);
    }
}

#[test]
fn help_lists_gen() {
    let run = gangpack(&["--help"], None);
    assert_eq!(run.code, 0);
    assert!(run.out.contains("gen "), "{}", run.out);
    let run = gangpack(&["gen", "--help"], None);
    assert_eq!(run.code, 0);
    for flag in [
        "--size",
        "--kind",
        "--seed",
        "--output",
        "--features",
        "--events",
    ] {
        assert!(run.out.contains(flag), "{flag}: {}", run.out);
    }
    // The long help names every feature.
    for f in Feature::ALL {
        assert!(
            run.out.contains(&format!("`{}`", f.name())),
            "{f}: {}",
            run.out
        );
    }
}

#[test]
fn unknown_features_are_named_with_a_suggestion() {
    let run = gangpack(&["gen", "--features", "all,-sharng"], None);
    assert_eq!(run.code, 2);
    assert!(
        run.err.contains("'--features <FEATURES>'")
            && run
                .err
                .contains("unknown feature \"sharng\" (did you mean \"sharing\"?)")
            && run
                .err
                .contains("the features are sharing, partitioning, device-taints"),
        "{}",
        run.err
    );
}

// ------------------------------------------------------------------- features

/// The features a Kubernetes document shows, by what a scheduler without them would
/// not read: field names, kinds, names and values (see `has` in
/// `core/tests/testing_kit.rs` for the model's side).
fn feature_marks(doc: &Value) -> BTreeSet<Feature> {
    let kind = doc["kind"].as_str().unwrap_or_default();
    let name = doc["metadata"]["name"].as_str().unwrap_or_default();
    let mut marks = BTreeSet::new();
    match kind {
        "DeviceTaintRule" => {
            marks.insert(Feature::DeviceTaints);
        }
        "PriorityClass" => {
            marks.insert(Feature::Priorities);
        }
        "DeviceClass" if name == "shared.gangpack.dev" => {
            marks.insert(Feature::Sharing);
        }
        "DeviceClass" if name == "partition.gangpack.dev" => {
            marks.insert(Feature::Partitioning);
        }
        "Pod" if name.ends_with("-leader") => {
            marks.insert(Feature::CompositeGroups);
        }
        "Pod" if doc["spec"]["priority"].as_i64() != Some(0) => {
            marks.insert(Feature::Priorities);
        }
        "Namespace" if !doc["metadata"]["labels"].is_null() => {
            marks.insert(Feature::AdminAccess);
        }
        _ => {}
    }
    let mut stack = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    let mark = match k.as_str() {
                        "allowMultipleAllocations" => Some(Feature::Sharing),
                        "capacity" if kind == "ResourceClaim" => Some(Feature::Sharing),
                        "sharedCounters" | "consumesCounters" => Some(Feature::Partitioning),
                        "taints" if kind == "ResourceSlice" => Some(Feature::DeviceTaints),
                        "tolerations" if kind == "ResourceClaim" => Some(Feature::DeviceTaints),
                        "taints" | "unschedulable" | "tolerations" => Some(Feature::NodeTaints),
                        "topology" => Some(Feature::Topology),
                        "priorityClassName" => Some(Feature::Priorities),
                        "priority" if x.as_i64() != Some(0) => Some(Feature::Priorities),
                        "preemptionPolicy" if x != "PreemptLowerPriority" => {
                            Some(Feature::Priorities)
                        }
                        "selectors" | "cel" => Some(Feature::Cel),
                        "adminAccess" => Some(Feature::AdminAccess),
                        "firstAvailable" => Some(Feature::FirstAvailable),
                        "allocationMode" if x == "All" => Some(Feature::AllocationModeAll),
                        "matchAttribute" | "distinctAttribute" => Some(Feature::Constraints),
                        _ => None,
                    };
                    marks.extend(mark);
                    stack.push(x);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    marks
}

/// The features the documents of a `kind: List` show.
fn list_marks(text: &str) -> BTreeSet<Feature> {
    let list: Value = serde_json::from_str(text).expect("JSON");
    list["items"]
        .as_array()
        .expect("items")
        .iter()
        .flat_map(feature_marks)
        .collect()
}

/// `gen --features all,-NAME`: nothing of NAME in the manifests, and `plan` (and
/// `check`) read them as before. The planted bug each feature catches is a generator
/// that ignores that switch (the model-level property, `a_feature_switched_off_appears_nowhere`
/// in `core/tests/testing_kit.rs`, names them one by one); here it is the manifests a
/// scheduler reads, `cli/src/generate.rs` passing `--features` on, and the writer
/// writing nothing for a feature the model lacks.
#[test]
fn a_switched_off_feature_is_not_in_the_manifests() {
    for f in Feature::ALL {
        let features = format!("all,-{f}");
        for seed in 0..4 {
            let text = generate_with(
                seed,
                "small",
                "mixed",
                &["--features", &features, "-o", "json"],
            );
            let marks = list_marks(&text);
            assert!(
                !marks.contains(&f),
                "seed {seed} --features {features}: {marks:?}"
            );
            assert_plans(&text, &format!("seed {seed} --features {features}"));
        }
    }
}

/// `gen --features none` and `none,+NAME`: only NAME; and each feature, on, is seen in
/// some seed's manifests (else the property above would hold for a `feature_marks`
/// that sees nothing).
#[test]
fn only_the_switched_on_features_are_in_the_manifests() {
    let none = generate_with(3, "small", "mixed", &["--features", "none", "-o", "json"]);
    assert_eq!(list_marks(&none), BTreeSet::new());
    assert_plans(&none, "--features none");
    let mut seen = BTreeSet::new();
    for seed in 0..20 {
        seen.extend(list_marks(&generate_with(
            seed,
            "small",
            "mixed",
            &["-o", "json"],
        )));
    }
    assert_eq!(
        seen,
        Feature::ALL.into_iter().collect(),
        "every feature, all on"
    );
    for f in Feature::ALL {
        let features = format!("none,+{f}");
        let mut marks = BTreeSet::new();
        for seed in 0..12 {
            marks.extend(list_marks(&generate_with(
                seed,
                "small",
                "mixed",
                &["--features", &features, "-o", "json"],
            )));
        }
        assert_eq!(marks, BTreeSet::from([f]), "--features {features}");
    }
}

/// `--features all` is the default: the same bytes as without the flag, and as the
/// scenario of `generated_scenario` (the bytes `gen` printed before there were
/// switches; that was checked against a build of the commit before, seed by seed).
#[test]
fn every_feature_is_the_default() {
    for seed in [0, 9] {
        assert_eq!(
            generate_with(seed, "small", "mixed", &["--features", "all"]),
            generate(seed, "small", "mixed")
        );
    }
    assert_eq!(
        GenSpec::default().scenario(),
        generated_scenario(0, Size::Small, WorkloadKind::Mixed)
    );
    // The spellings of one set of features give the same bytes.
    let a = generate_with(4, "small", "mixed", &["--features", "topology,node-taints"]);
    let b = generate_with(
        4,
        "small",
        "mixed",
        &["--features", "none,+node-taints,+topology"],
    );
    assert_eq!(a, b);
    assert_ne!(a, generate(4, "small", "mixed"));
}

// ------------------------------------------------------------------- events

/// One event of a `gen --events` stream.
struct Event {
    ty: String,
    object: Value,
}

fn events(text: &str) -> Vec<Event> {
    serde_json::Deserializer::from_str(text)
        .into_iter::<Value>()
        .map(|e| {
            let e = e.expect("a JSON event");
            Event {
                ty: e["type"].as_str().expect("a type").to_owned(),
                object: e["object"].clone(),
            }
        })
        .collect()
}

fn object_key(o: &Value) -> (String, String, String) {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    (
        s(&o["kind"]),
        s(&o["metadata"]["namespace"]),
        s(&o["metadata"]["name"]),
    )
}

/// The latest timestamp of a document (the fields the watch's clock reads).
fn latest(o: &Value) -> i64 {
    const KEYS: [&str; 6] = [
        "creationTimestamp",
        "timeAdded",
        "allocationTimestamp",
        "deletionTimestamp",
        "startTime",
        "lastTransitionTime",
    ];
    let mut best = 0;
    let mut stack = vec![o];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(map) => {
                for (k, x) in map {
                    if KEYS.contains(&k.as_str())
                        && let Some(t) = x.as_str().and_then(gangpack_cli::parse_rfc3339)
                    {
                        best = best.max(t.0);
                    }
                    stack.push(x);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    best
}

/// What a stream did, counted.
#[derive(Default)]
struct Tally {
    /// `TYPE KIND` → events.
    counts: BTreeMap<String, usize>,
    /// Device taint or rule effects written after the listing.
    device_effects: BTreeSet<String>,
    /// Whether a clock step (a node's Ready condition) was written.
    clock_steps: usize,
}

/// Checks a stream's consistency as an informer applies it: `ADDED` of an object not
/// there, `MODIFIED` and `DELETED` of one there; resourceVersions 1, 2, ...; the
/// clock (the latest timestamp of the objects) never goes back. Returns the tally.
fn check_stream(text: &str, what: &str) -> Tally {
    let mut objects: BTreeMap<(String, String, String), Value> = BTreeMap::new();
    let mut tally = Tally::default();
    let mut clock = 0;
    for (i, e) in events(text).into_iter().enumerate() {
        let k = object_key(&e.object);
        let rv = e.object["metadata"]["resourceVersion"].as_str();
        assert_eq!(
            rv,
            Some((i + 1).to_string().as_str()),
            "{what}: event {}",
            i + 1
        );
        let there = objects.contains_key(&k);
        match e.ty.as_str() {
            "ADDED" => assert!(!there, "{what}: ADDED {k:?} twice"),
            "MODIFIED" | "DELETED" => assert!(there, "{what}: {} of {k:?} not there", e.ty),
            other => panic!("{what}: {other} event"),
        }
        *tally.counts.entry(format!("{} {}", e.ty, k.0)).or_default() += 1;
        if e.ty == "MODIFIED" && !e.object["status"]["conditions"].is_null() && k.0 == "Node" {
            tally.clock_steps += 1;
        }
        if e.ty == "DELETED" {
            objects.remove(&k);
        } else {
            if k.0 == "DeviceTaintRule" && e.ty == "ADDED" {
                tally.device_effects.extend(
                    e.object["spec"]["taint"]["effect"]
                        .as_str()
                        .map(str::to_owned),
                );
            }
            if k.0 == "ResourceSlice" && e.ty == "MODIFIED" {
                for d in e.object["spec"]["devices"].as_array().into_iter().flatten() {
                    for t in d["taints"].as_array().into_iter().flatten() {
                        tally
                            .device_effects
                            .extend(t["effect"].as_str().map(str::to_owned));
                    }
                }
            }
            objects.insert(k, e.object);
        }
        let now = objects.values().map(latest).max().unwrap_or(0);
        assert!(
            now >= clock,
            "{what}: the clock goes back at event {}",
            i + 1
        );
        clock = now;
    }
    tally
}

/// `gangpack watch` reads the stream: exit 0, not a message (no error, no warning),
/// with a cycle after every `every` events.
fn assert_watches(text: &str, every: Option<usize>, what: &str) {
    let mut sink = Collected::default();
    let code = gangpack_cli::watch(
        None,
        &[WatchSource::Text {
            name: "events.json".into(),
            text: text.to_owned(),
        }],
        &Options::default(),
        &WatchOptions {
            quiet_ms: 0,
            every,
            audit: false,
            json: false,
        },
        Style::PLAIN,
        &mut sink,
    );
    assert_eq!(code, 0, "{what}: {:?}", sink.messages);
    assert!(sink.messages.is_empty(), "{what}: {:?}", sink.messages);
    assert!(
        sink.stdout.starts_with("cycle 1 after "),
        "{what}: {}",
        sink.stdout
    );
}

/// `gen --events` for many seeds and every size: a consistent stream (see
/// [`check_stream`]) that `gangpack watch` reads without a message, with a cycle
/// after each event for the small ones (every state on the way builds); across the
/// seeds every kind of step appears: arrivals, clock steps, node taints, device taints
/// and rules with `NoExecute` among them, deletions of pods, nodes and slices.
#[test]
fn events_are_a_stream_watch_reads() {
    let mut total: BTreeMap<String, usize> = BTreeMap::new();
    let mut effects = BTreeSet::new();
    let mut clock_steps = 0;
    let mut runs = Vec::new();
    for kind in ["mixed", "gangs", "pods"] {
        runs.extend((0..6).map(|seed| (seed, "small", kind, Some(1))));
    }
    runs.extend((0..3).map(|seed| (seed, "medium", "mixed", Some(5))));
    runs.push((0, "large", "mixed", None));
    for (seed, size, kind, every) in runs {
        let what = format!("seed {seed} {size} {kind}");
        let text = generate_with(seed, size, kind, &["--events"]);
        let tally = check_stream(&text, &what);
        assert_watches(&text, every, &what);
        for (k, n) in tally.counts {
            *total.entry(k).or_default() += n;
        }
        effects.extend(tally.device_effects);
        clock_steps += tally.clock_steps;
    }
    for k in [
        "ADDED Pod",
        "ADDED DeviceTaintRule",
        "MODIFIED Node",
        "MODIFIED ResourceSlice",
        "DELETED Pod",
        "DELETED ResourceClaim",
        "DELETED ResourceSlice",
        "DELETED Node",
    ] {
        assert!(total.get(k).copied().unwrap_or(0) > 0, "no {k}: {total:?}");
    }
    assert!(clock_steps > 0);
    assert!(effects.contains("NoExecute"), "{effects:?}");
}

/// The same spec, the same bytes; another seed, another stream; and the stream's
/// objects at the end are the scenario's, less what was removed, plus what was
/// added, with arrivals created at their step.
#[test]
fn events_are_deterministic() {
    let a = generate_with(6, "small", "mixed", &["--events"]);
    assert_eq!(a, generate_with(6, "small", "mixed", &["--events"]));
    assert_ne!(a, generate_with(7, "small", "mixed", &["--events"]));
    let spec = GenSpec {
        seed: 6,
        ..GenSpec::default()
    };
    assert_eq!(spec.events(), a);
    // Every object of the scenario is ADDED exactly once (the stream's own
    // DeviceTaintRules aside).
    let added: Vec<_> = events(&a)
        .into_iter()
        .filter(|e| e.ty == "ADDED" && e.object["kind"] != "DeviceTaintRule")
        .map(|e| object_key(&e.object))
        .collect();
    let listed = list_keys(&generate_with(6, "small", "mixed", &["-o", "json"]));
    let mut sorted = added.clone();
    sorted.sort();
    assert_eq!(sorted, listed);
    // The stream starts with the namespaces, kubectl's four-space indentation.
    assert!(a.starts_with("{\n    \"type\": \"ADDED\",\n    \"object\": {\n        \"apiVersion\": \"v1\",\n        \"kind\": \"Namespace\","), "{a}");
}

fn list_keys(text: &str) -> Vec<(String, String, String)> {
    let list: Value = serde_json::from_str(text).expect("JSON");
    let mut keys: Vec<_> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|o| o["kind"] != "DeviceTaintRule")
        .map(object_key)
        .collect();
    keys.sort();
    keys
}

/// `gen --events --features all,-NAME`: no event's object shows NAME (no device taint
/// written along the way without `device-taints`, no node taint or cordon without
/// `node-taints`, ...), and watch reads the stream.
#[test]
fn events_respect_the_features() {
    for f in Feature::ALL {
        let features = format!("all,-{f}");
        for seed in 0..4 {
            let what = format!("seed {seed} --features {features} --events");
            let text = generate_with(
                seed,
                "small",
                "mixed",
                &["--features", &features, "--events"],
            );
            for e in events(&text) {
                let marks = feature_marks(&e.object);
                assert!(
                    !marks.contains(&f),
                    "{what}: {} {:?}",
                    e.ty,
                    object_key(&e.object)
                );
            }
            check_stream(&text, &what);
            assert_watches(&text, Some(3), &what);
        }
    }
    // None at all: arrivals, clock steps and removals only.
    let text = generate_with(2, "small", "mixed", &["--features", "none", "--events"]);
    let tally = check_stream(&text, "none");
    assert!(tally.device_effects.is_empty());
    assert!(
        events(&text)
            .iter()
            .all(|e| feature_marks(&e.object).is_empty())
    );
}
