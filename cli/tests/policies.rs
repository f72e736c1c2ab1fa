//! `--policy stranding|fgd` and `--workload-mix` on the examples (issue 34): every
//! example plans under both, a mix file changes the scoring and nothing else, a bad one
//! is refused naming its file and field, and `fragmentation-aware` still reads, as fgd,
//! with a warning.

mod common;

use std::path::{Path, PathBuf};

use common::{Run, root, run};
use gangpack::ShapeMix;
use gangpack_cli::{Input, Options, Policy};

const CLUSTER: &str = "examples/cluster";
const CLAIM: &str = "examples/claim-first-available.yaml";
const GANG: &str = "examples/gang-rack.yaml";
const RUNNING: &str = "examples/running-job.yaml";
/// Mostly whole-node (8-GPU) shapes.
const WHOLE_NODE_MIX: &str = "cli/tests/data/whole-node-mix.yaml";
/// A shape of weight 0.
const ZERO_WEIGHT_MIX: &str = "cli/tests/data/zero-weight-mix.yaml";

/// `plan -f PATH... ARGS...`.
fn plan(paths: &[&str], args: &[&str]) -> Run {
    let mut v = vec!["plan"];
    v.extend(paths.iter().flat_map(|p| ["-f", p]));
    v.extend_from_slice(args);
    run(&v)
}

/// The YAML files under `dir`, relative to the workspace root, sorted.
fn yaml_files(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(root().join(dir)).expect("readable") {
        let p: PathBuf = e.expect("entry").path();
        let rel = p
            .strip_prefix(root())
            .expect("under the root")
            .to_path_buf();
        if p.is_dir() {
            yaml_files(&rel, out);
        } else if p.extension().is_some_and(|x| x == "yaml") {
            out.push(rel.to_str().expect("UTF-8 path").to_owned());
        }
    }
}

#[test]
fn every_example_plans_under_stranding_and_fgd() {
    let mut files = Vec::new();
    yaml_files(Path::new("examples"), &mut files);
    files.sort();
    let (decisions, workloads): (Vec<String>, Vec<String>) = files
        .into_iter()
        .filter(|f| !f.starts_with("examples/cluster/"))
        .partition(|f| f.starts_with("examples/testing/"));
    assert!(workloads.len() >= 5, "{workloads:?}");
    // The cluster alone, each workload file on it, and the workloads that go together.
    let mut inputs: Vec<Vec<&str>> = vec![vec![CLUSTER]];
    inputs.extend(workloads.iter().map(|f| vec![CLUSTER, f.as_str()]));
    inputs.push(vec![CLUSTER, RUNNING, GANG, CLAIM]);
    for paths in &inputs {
        let best = plan(paths, &[]);
        for policy in ["stranding", "fgd", "gang-aware"] {
            let r = plan(paths, &["--policy", policy]);
            assert!(
                r.code == 0 || r.code == 3,
                "plan {paths:?} --policy {policy}: exit {}\n{}{}",
                r.code,
                r.out,
                r.err
            );
            // Whether everything fits does not depend on the policy here.
            assert_eq!(r.code, best.code, "plan {paths:?} --policy {policy}");
            assert_eq!(r.err, best.err, "plan {paths:?} --policy {policy}");
        }
    }
    // The decision files are not plan input (they double-book devices on purpose):
    // `check` reads them, under any policy, with the same verdict.
    assert!(!decisions.is_empty());
    for d in &decisions {
        let check = |policy: &str| {
            run(&[
                "check",
                "-f",
                CLUSTER,
                "-f",
                GANG,
                "--decisions",
                d,
                "--policy",
                policy,
            ])
        };
        let best = check("best-fit");
        assert_eq!(best.code, 4, "{d}: {}{}", best.out, best.err);
        for policy in ["stranding", "fgd", "gang-aware"] {
            let r = check(policy);
            assert_eq!((r.code, &r.out), (best.code, &best.out), "{d} {policy}");
        }
    }
}

#[test]
fn explain_and_taint_take_the_new_policies() {
    for policy in ["stranding", "fgd"] {
        for mix in [None, Some(WHOLE_NODE_MIX)] {
            let mut extra = vec!["--policy", policy];
            extra.extend(mix.iter().flat_map(|m| ["--workload-mix", m]));
            let mut explain = vec![
                "explain",
                "-f",
                CLUSTER,
                "-f",
                RUNNING,
                "-f",
                GANG,
                "ml/llm-pretrain",
            ];
            explain.extend_from_slice(&extra);
            let r = run(&explain);
            assert_eq!(r.code, 0, "{explain:?}: {}", r.err);
            assert!(r.out.contains("ml/llm-pretrain"), "{}", r.out);
            let mut taint = vec![
                "taint",
                "-f",
                CLUSTER,
                "-f",
                RUNNING,
                "--device",
                "gpu.nvidia.com/gpu-r1-n1/gpu-2",
            ];
            taint.extend_from_slice(&extra);
            let r = run(&taint);
            assert_eq!(r.code, 0, "{taint:?}: {}", r.err);
            assert!(r.out.contains("1 gang broken"), "{}", r.out);
        }
    }
}

#[test]
fn a_whole_node_mix_keeps_whole_nodes_free() {
    // One pending pod of one H100. Every node has 8 H100s; gpu-r2-n2 has 7 usable (one
    // is tainted), so it is the only node that cannot host a whole-node pod anyway.
    let spread = plan(&[CLUSTER, CLAIM], &["--policy", "spread"]);
    assert!(
        spread.has_row(&["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r1-n1"]),
        "spread breaks into a whole node:\n{}",
        spread.out
    );
    let mix = ["--workload-mix", WHOLE_NODE_MIX];
    let best = plan(&[CLUSTER, CLAIM], &[]);
    for policy in ["stranding", "fgd"] {
        let r = plan(&[CLUSTER, CLAIM], &["--policy", policy, mix[0], mix[1]]);
        assert_eq!(r.code, 0, "{}", r.err);
        assert_eq!(r.err, "");
        // The pod goes to gpu-r2-n2, and nothing else differs from best-fit's plan.
        assert_eq!(r.out, best.out, "--policy {policy}");
        let yaml = |extra: &[&str]| {
            let mut args = vec!["-o", "yaml"];
            args.extend_from_slice(extra);
            plan(&[CLUSTER, CLAIM], &args).out
        };
        assert_eq!(
            yaml(&["--policy", policy, mix[0], mix[1]]),
            yaml(&[]),
            "-o yaml --policy {policy}"
        );
    }
    // Without the file, fgd scores against the input's own shapes (one 1-GPU pod: every
    // node is as good, the first by name wins); the file changes only where it goes.
    let observed = plan(&[CLUSTER, CLAIM], &["--policy", "fgd"]);
    let given = plan(&[CLUSTER, CLAIM], &["--policy", "fgd", mix[0], mix[1]]);
    assert!(
        observed.has_row(&["Pod", "ml/chat-inference", "placed", "1", "1", "gpu-r1-n1"]),
        "{}",
        observed.out
    );
    assert_eq!(given.out, observed.out.replace("gpu-r1-n1", "gpu-r2-n2"));
    // A JSON file reads the same.
    let text = std::fs::read_to_string(root().join(WHOLE_NODE_MIX)).expect("mix");
    let value: serde_json::Value = serde_norway::from_str(&text).expect("YAML");
    let dir = std::env::temp_dir().join(format!("gangpack-mix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let json = dir.join("mix.json");
    std::fs::write(&json, value.to_string()).expect("written");
    let json = json.to_str().expect("UTF-8 path");
    let r = plan(
        &[CLUSTER, CLAIM],
        &["--policy", "fgd", "--workload-mix", json],
    );
    assert_eq!(r.out, given.out, "{}", r.err);
    std::fs::remove_dir_all(&dir).expect("removed");
}

#[test]
fn a_bad_mix_file_is_refused_naming_the_file_and_field() {
    let r = plan(
        &[CLUSTER, CLAIM],
        &["--policy", "stranding", "--workload-mix", ZERO_WEIGHT_MIX],
    );
    assert_eq!(r.code, 2, "{}{}", r.out, r.err);
    assert_eq!(r.out, "");
    assert_eq!(
        r.err,
        format!(
            "error: {ZERO_WEIGHT_MIX}: shapes[0].weight: invalid value \"0\": must be at least 1\n"
        )
    );
    // Unknown fields and values of the wrong type, each named.
    let dir = std::env::temp_dir().join(format!("gangpack-badmix-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bad = dir.join("typo.yaml");
    std::fs::write(
        &bad,
        "shapes:\n- wieght: 2\n  deviceClassName: gpu.nvidia.com\n  count: eight\n",
    )
    .expect("written");
    let bad = bad.to_str().expect("UTF-8 path");
    let r = plan(&[CLUSTER], &["--policy", "fgd", "--workload-mix", bad]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains(&format!(
            "error: {bad}: shapes[0].count: invalid type: string \"eight\""
        )),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains(&format!("error: {bad}: shapes[0].wieght: unknown field")),
        "{}",
        r.err
    );
    std::fs::remove_dir_all(&dir).expect("removed");
    // A missing file cannot be read: exit 1.
    let r = plan(
        &[CLUSTER],
        &[
            "--policy",
            "fgd",
            "--workload-mix",
            "cli/tests/data/no-such-mix.yaml",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err
            .starts_with("error: cli/tests/data/no-such-mix.yaml: "),
        "{}",
        r.err
    );
}

#[test]
fn a_mix_is_refused_with_a_policy_that_has_none() {
    for policy in [&["--policy", "best-fit"][..], &["--policy", "spread"], &[]] {
        let mut args = policy.to_vec();
        args.extend(["--workload-mix", WHOLE_NODE_MIX]);
        let r = plan(&[CLUSTER, CLAIM], &args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert_eq!(r.out, "");
        assert!(
            r.err.starts_with(&format!(
                "error: --workload-mix {WHOLE_NODE_MIX}: --policy "
            )) && r.err.contains("use --policy stranding, fgd or gang-aware"),
            "{}",
            r.err
        );
    }
}

/// `--protect-key` and `--lower-domain` go with gang-aware only; with it they are taken
/// (and a bad level is named).
#[test]
fn gang_aware_flags_need_gang_aware() {
    let r = plan(
        &[CLUSTER, GANG],
        &["--policy", "stranding", "--protect-key", "rack"],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains(
            "--protect-key and --lower-domain apply to --policy gang-aware, not stranding"
        ),
        "{}",
        r.err
    );
    let r = plan(
        &[CLUSTER, GANG],
        &[
            "--policy",
            "gang-aware",
            "--protect-key",
            "topology.kubernetes.io/rack",
            "--lower-domain",
            "device:gpu.nvidia.com/clique",
        ],
    );
    assert!(r.code == 0 || r.code == 3, "{}{}", r.out, r.err);
    let r = plan(
        &[CLUSTER, GANG],
        &["--policy", "gang-aware", "--lower-domain", "device:"],
    );
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(
        r.err.contains("device: needs an attribute name"),
        "{}",
        r.err
    );
}

#[test]
fn simulate_refuses_a_mix() {
    let r = run(&[
        "simulate",
        "--trace",
        "sim/tests/data/openb_pod_list_small.csv",
        "--policy",
        "fgd",
        "--workload-mix",
        WHOLE_NODE_MIX,
    ]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert_eq!(r.out, "");
    assert_eq!(
        r.err,
        "error: --workload-mix: simulate does not read a workload mix\n"
    );
}

#[test]
fn fragmentation_aware_is_fgd_with_a_warning() {
    let fgd = plan(&[CLUSTER, GANG, CLAIM], &["--policy", "fgd"]);
    for name in ["fragmentation-aware", "Fragmentation-Aware"] {
        let old = plan(&[CLUSTER, GANG, CLAIM], &["--policy", name]);
        assert_eq!(old.code, fgd.code);
        assert_eq!(old.out, fgd.out);
        assert_eq!(
            old.err,
            format!(
                "warning: --policy fragmentation-aware is deprecated; it now means fgd\n{}",
                fgd.err
            )
        );
    }
    // It is not offered any more.
    let bogus = plan(&[CLUSTER], &["--policy", "binpack"]);
    assert_eq!(bogus.code, 2);
    assert!(
        bogus
            .err
            .contains("[possible values: best-fit, spread, stranding, fgd, gang-aware]"),
        "{}",
        bogus.err
    );
    let help = run(&["--help"]);
    assert!(
        help.out
            .contains("[possible values: best-fit, spread, stranding, fgd, gang-aware]"),
        "{}",
        help.out
    );
}

#[test]
fn the_library_parses_every_name() {
    for (name, policy) in [
        ("best-fit", Policy::BestFit),
        ("BestFit", Policy::BestFit),
        ("spread", Policy::Spread),
        ("stranding", Policy::Stranding),
        ("fgd", Policy::Fgd),
        ("FGD", Policy::Fgd),
        ("fragmentation-aware", Policy::Fgd),
        ("FragmentationAware", Policy::Fgd),
    ] {
        assert_eq!(Policy::parse(name), Some(policy), "{name}");
        assert_eq!(
            Policy::is_deprecated_name(name),
            name.to_ascii_lowercase().starts_with("fragmentation"),
            "{name}"
        );
    }
    assert_eq!(Policy::parse("binpack"), None);
    for name in Policy::NAMES {
        let p = Policy::parse(name).expect("a policy");
        assert_eq!(p.name(), name);
        assert_eq!(
            p.scoring(),
            gangpack::ScoringPolicy::parse(name).expect("core")
        );
    }
}

/// Without `--workload-mix`, stranding and fgd score against the shapes of every pod of
/// the input, running and pending, from before the first cycle (so `explain` and
/// `taint`, which run none, do too); with it, against the file's.
#[test]
fn the_scheduler_scores_against_the_whole_input() {
    let input = Input::Paths(
        [CLUSTER, RUNNING, GANG, CLAIM]
            .iter()
            .map(|p| root().join(p).display().to_string())
            .collect(),
    );
    let options = |policy, workload_mix| Options {
        policy,
        workload_mix,
        ..Options::default()
    };
    let (best, _) = gangpack_cli::snapshot(&input, &options(Policy::BestFit, None)).expect("ok");
    assert_eq!(best.scheduler.workload_mix(), None);
    for policy in [Policy::Stranding, Policy::Fgd] {
        let (s, _) = gangpack_cli::snapshot(&input, &options(policy, None)).expect("ok");
        let all = ShapeMix::observe(s.scheduler.pods(), s.scheduler.claims());
        // Running workers, pending workers and the inference pod: 3 shapes, 7 pods.
        assert_eq!(all.weight_sum(), 7, "{all:?}");
        assert_eq!(s.scheduler.workload_mix(), Some(&all), "{policy:?}");

        let text = std::fs::read_to_string(root().join(WHOLE_NODE_MIX)).expect("mix");
        let given = gangpack_cli::workload_mix(policy, WHOLE_NODE_MIX, &text).expect("valid");
        assert_eq!(given.weight_sum(), 10);
        let (s, _) =
            gangpack_cli::snapshot(&input, &options(policy, Some(given.clone()))).expect("ok");
        assert_eq!(s.scheduler.workload_mix(), Some(&given), "{policy:?}");
    }
}

/// `cli/README.md`'s mix is the test's, and its error line is what the command prints.
#[test]
fn the_readme_shows_the_mix_and_its_error() {
    let readme = std::fs::read_to_string(root().join("cli/README.md")).expect("README");
    let section = readme
        .split("### Scoring policies and `--workload-mix`")
        .nth(1)
        .expect("the section");
    let shown = section
        .split("```yaml\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("a YAML block");
    let text = std::fs::read_to_string(root().join(WHOLE_NODE_MIX)).expect("mix");
    let read = |name, text| gangpack_cli::workload_mix(Policy::Stranding, name, text);
    assert_eq!(
        read("README", shown).expect("valid"),
        read(WHOLE_NODE_MIX, &text).expect("valid")
    );
    let r = plan(
        &[CLUSTER],
        &["--policy", "fgd", "--workload-mix", ZERO_WEIGHT_MIX],
    );
    assert!(
        section.contains(&format!("```text\n{}```", r.err)),
        "cli/README.md does not show:\n{}",
        r.err
    );
}
