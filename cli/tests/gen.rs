//! `gangpack gen`: generated scenarios as manifests that `gangpack plan -f -` reads
//! back, byte-identical for a seed, different across seeds, and the same model
//! objects as the scenario drawn (`gangpack_cli::generated_scenario`).

use std::collections::BTreeSet;

use gangpack_cli::{Size, WorkloadKind, generated_scenario};
use gangpack_k8s::{BuildOptions, Snapshot, load_str};
use serde_json::Value;

const SEEDS: u64 = 20;

mod common;

use common::run_with_stdin as gangpack;

fn generate(seed: u64, size: &str, kind: &str) -> String {
    let seed = seed.to_string();
    let run = gangpack(
        &["gen", "--seed", &seed, "--size", size, "--kind", kind],
        None,
    );
    assert_eq!(run.code, 0, "gen --seed {seed} --size {size}: {}", run.err);
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
    for flag in ["--size", "--kind", "--seed", "--output"] {
        assert!(run.out.contains(flag), "{flag}: {}", run.out);
    }
}
