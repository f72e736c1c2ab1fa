//! Determinism across platforms: golden scenarios whose decisions and explanations are
//! byte-identical natively and under wasm32.
//!
//! Each scenario of `scenarios.json` (manifest sets of `examples/` and of `inputs/`
//! through the Kubernetes adapter, the CLI's demo cluster, and
//! `gangpack::testing::generate` scenarios) is rendered twice, and each rendering is
//! compared byte for byte with its committed golden file:
//!
//! - `golden/NAME.trace.txt`: the engine, step by step (`render.rs`): every cycle's
//!   decisions (unit, outcome, node and devices of each pod, preemption victims), the
//!   eviction schedule, the free devices and fragmentation scores of every node, and
//!   the explanation and what-it-takes of every pending unit, after the scenario's
//!   steps (taints, DeviceTaintRules, clock advances);
//! - `golden/NAME.cli.txt`: the commands of its `cli` list (`plan`, `explain`, `taint`)
//!   as `gangpack_cli` prints them, which `wasm/tests-js/determinism.test.mjs` also
//!   compares, through the npm package's `runCli`;
//! - `golden/NAME.yaml` (generated scenarios with commands): the scenario as manifests,
//!   the input of those commands (and of the JavaScript test).
//!
//! The same test runs natively (`cargo test -p gangpack-wasm --test determinism`) and
//! under wasm32 in Node:
//!
//! ```text
//! CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
//!     cargo test --target wasm32-unknown-unknown -p gangpack-wasm --test determinism
//! ```
//!
//! A change that is meant to change decisions or wording is blessed natively (the
//! goldens are rewritten, then `git diff` shows what changed):
//!
//! ```text
//! GANGPACK_BLESS=1 cargo test -p gangpack-wasm --test determinism
//! ```
//!
//! A new scenario: an entry in `scenarios.json`, a `golden!` line below, its inputs in
//! [`FILES`], empty golden files (`include_str!` needs them), then bless.
//!
//! The platform hazards this suite found are pinned at the end (`hazards`).
#![cfg(feature = "k8s")]

mod diff;
mod hazards;
mod render;

use std::fmt::Write as _;

use gangpack::ScoringPolicy;
use gangpack::testing::{ScenarioConfig, Size, WorkloadKinds};
use gangpack_cli::{Format, Input, InputFile, Options, Policy, Style, TaintRequest};
use serde::Deserialize;

/// Every file a scenario reads, by its path from the repository root.
const FILES: &[(&str, &str)] = &[
    (
        "examples/cluster/namespace.yaml",
        include_str!("../../../examples/cluster/namespace.yaml"),
    ),
    (
        "examples/cluster/priorityclasses.yaml",
        include_str!("../../../examples/cluster/priorityclasses.yaml"),
    ),
    (
        "examples/cluster/deviceclasses.yaml",
        include_str!("../../../examples/cluster/deviceclasses.yaml"),
    ),
    (
        "examples/cluster/nodes.yaml",
        include_str!("../../../examples/cluster/nodes.yaml"),
    ),
    (
        "examples/cluster/resourceslices.yaml",
        include_str!("../../../examples/cluster/resourceslices.yaml"),
    ),
    (
        "examples/gang-rack.yaml",
        include_str!("../../../examples/gang-rack.yaml"),
    ),
    (
        "examples/claim-first-available.yaml",
        include_str!("../../../examples/claim-first-available.yaml"),
    ),
    (
        "examples/running-job.yaml",
        include_str!("../../../examples/running-job.yaml"),
    ),
    (
        "examples/taint-rule.yaml",
        include_str!("../../../examples/taint-rule.yaml"),
    ),
    (
        "examples/taint-rule-dry-run.yaml",
        include_str!("../../../examples/taint-rule-dry-run.yaml"),
    ),
    (
        "wasm/tests/determinism/inputs/sharing.yaml",
        include_str!("inputs/sharing.yaml"),
    ),
    (
        "wasm/tests/determinism/inputs/taints.yaml",
        include_str!("inputs/taints.yaml"),
    ),
    (
        "wasm/tests/determinism/inputs/ties.yaml",
        include_str!("inputs/ties.yaml"),
    ),
    (
        "wasm/tests/determinism/inputs/cel-cost.yaml",
        include_str!("inputs/cel-cost.yaml"),
    ),
];

/// The scenarios.
const SCENARIOS: &str = include_str!("scenarios.json");

/// The directory of the golden files, from the repository root.
const GOLDEN_DIR: &str = "wasm/tests/determinism/golden";

/// One scenario of `scenarios.json`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    name: String,
    /// One line for people; not rendered.
    #[allow(dead_code)]
    about: String,
    input: Source,
    /// The scoring policies to run the steps under (default: BestFit).
    #[serde(default)]
    policies: Vec<String>,
    steps: Vec<Step>,
    cli: Vec<Command>,
}

/// Where a scenario's objects come from.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
enum Source {
    /// Manifest files, in order (paths from the repository root).
    Files(Vec<String>),
    /// The CLI's demo cluster for this seed.
    Demo(u64),
    /// `gangpack::testing::generate`.
    Generate(Generated),
}

/// A generated scenario: `gangpack gen --size SIZE --kind KIND --seed SEED`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Generated {
    size: String,
    kind: String,
    seed: u64,
}

/// One step of a scenario's script (`render.rs` runs them).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) enum Step {
    /// One scheduling cycle.
    Cycle,
    /// The explanation and what-it-takes of every pending unit.
    Explain,
    /// A device taint.
    TaintDevice(DeviceTaintStep),
    /// A node taint.
    TaintNode(NodeTaintStep),
    /// A taint on the first allocated device (by driver, pool and name).
    TaintAllocated(TaintSpec),
    /// A DeviceTaintRule from a manifest file.
    Rule(String),
    /// The clock moves on by this many seconds (evictions that fall due happen).
    Advance(i64),
}

/// A taint's key, value and effect.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaintSpec {
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) value: String,
    pub(crate) effect: String,
}

/// `taintDevice`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct DeviceTaintStep {
    pub(crate) device: String,
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) value: String,
    pub(crate) effect: String,
}

/// `taintNode`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NodeTaintStep {
    pub(crate) node: String,
    pub(crate) key: String,
    #[serde(default)]
    pub(crate) value: String,
    pub(crate) effect: String,
}

/// One command of a scenario's `cli` list: a title and the `runCli` request (without
/// its files, which are the scenario's input).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Command {
    title: String,
    request: Request,
}

/// The part of `runCli`'s request the scenarios use.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    command: String,
    output: Option<String>,
    #[serde(default)]
    options: RequestOptions,
    group: Option<String>,
    pod: Option<String>,
    taint: Option<RequestTaint>,
}

/// `runCli`'s `options` (those the scenarios use).
#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestOptions {
    policy: Option<String>,
    now: Option<String>,
}

/// `runCli`'s `taint` (a `rule` is a file path here; the JavaScript test passes the
/// file's text).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RequestTaint {
    device: Option<String>,
    node: Option<String>,
    rule: Option<String>,
    effect: Option<String>,
    key: Option<String>,
    value: Option<String>,
    #[serde(default)]
    after_plan: bool,
}

fn scenarios() -> Vec<Scenario> {
    serde_json::from_str(SCENARIOS).expect("scenarios.json is valid")
}

fn scenario(name: &str) -> Scenario {
    scenarios()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no scenario {name:?} in scenarios.json"))
}

/// A file of [`FILES`].
pub(crate) fn file(path: &str) -> &'static str {
    FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map_or_else(|| panic!("{path} is not in FILES"), |(_, text)| *text)
}

/// The generators' configuration of `gangpack gen --size SIZE --kind KIND`
/// (`cli/src/generate.rs`, which the wasm32 build does not have).
fn generator_config(size: &str, kind: &str) -> ScenarioConfig {
    let size: Size = size.parse().expect("small, medium or large");
    let mut config = ScenarioConfig::from(size);
    config.kinds = match kind {
        "gangs" => WorkloadKinds {
            single_pods: false,
            ..WorkloadKinds::ALL
        },
        "pods" => WorkloadKinds {
            gangs: false,
            leader_workers: false,
            basic_groups: false,
            single_pods: true,
        },
        "mixed" => WorkloadKinds::ALL,
        other => panic!("unknown kind {other:?}"),
    };
    config.jobs.0 = config.jobs.0.max(1);
    config
}

/// A generated scenario as manifests: what `gangpack gen` prints.
fn generated_manifests(scenario: &gangpack::testing::Scenario) -> String {
    let list = gangpack_k8s::output::list(gangpack_k8s::output::scenario_manifests(scenario));
    gangpack_cli::print_list(&list, Format::Yaml).expect("a generated scenario prints")
}

/// The scenario's input as the CLI reads it, and the generated scenario if it is one.
fn input(s: &Scenario) -> (Input, Option<gangpack::testing::Scenario>) {
    match &s.input {
        Source::Files(paths) => (
            Input::Files(
                paths
                    .iter()
                    .map(|p| InputFile {
                        name: p.clone(),
                        text: file(p).to_owned(),
                    })
                    .collect(),
            ),
            None,
        ),
        Source::Demo(seed) => (
            Input::Files(vec![InputFile {
                name: "demo.yaml".to_owned(),
                text: gangpack_cli::demo_manifests(*seed).expect("the demo builds"),
            }]),
            None,
        ),
        Source::Generate(g) => {
            let generated =
                gangpack::testing::generate(&generator_config(&g.size, &g.kind), g.seed);
            let text = generated_manifests(&generated);
            (
                Input::Files(vec![InputFile {
                    name: format!("{GOLDEN_DIR}/{}.yaml", s.name),
                    text,
                }]),
                Some(generated),
            )
        }
    }
}

/// The command line's options for `policy` (a core name, `ScoringPolicy::parse`), as
/// `runCli` maps it: the command line's name for it.
fn options(policy: &str) -> Options {
    let named = Policy::parse(scoring(policy).name())
        .unwrap_or_else(|| panic!("the command line has no name for {policy:?}"));
    Options {
        policy: named,
        ..Options::default()
    }
}

/// The core's policy named `policy`.
fn scoring(policy: &str) -> ScoringPolicy {
    ScoringPolicy::parse(policy).unwrap_or_else(|| panic!("unknown policy {policy:?}"))
}

/// The commands' outputs, as `determinism.test.mjs` renders `runCli`'s results.
fn render_cli(s: &Scenario, input: &Input) -> String {
    let mut out = String::new();
    for (i, c) in s.cli.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let run = run_cli(&c.request, input);
        let _ = writeln!(out, "== {}\nexit {}", c.title, run.code);
        for w in &run.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        for e in run
            .failure
            .as_ref()
            .map(gangpack_cli::Failure::lines)
            .unwrap_or_default()
        {
            let _ = writeln!(out, "error: {e}");
        }
        out.push_str(&run.stdout);
        if !run.stdout.is_empty() && !run.stdout.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// One command, as `runCli` runs it (`wasm/src/manifests.rs`).
fn run_cli(r: &Request, input: &Input) -> gangpack_cli::Run {
    let mut o = options(r.options.policy.as_deref().unwrap_or("BestFit"));
    o.now =
        r.options.now.as_deref().map(|t| {
            gangpack_cli::parse_rfc3339_arg(t).unwrap_or_else(|e| panic!("options.now: {e}"))
        });
    let format = match r.output.as_deref() {
        None | Some("table") => Format::Table,
        Some("yaml") => Format::Yaml,
        Some("json") => Format::Json,
        Some(other) => panic!("unknown output {other:?}"),
    };
    let style = Style::new(false);
    match r.command.as_str() {
        "plan" => gangpack_cli::plan(input, &o, format, style),
        "explain" => gangpack_cli::explain(input, &o, r.group.as_deref(), r.pod.as_deref()),
        "taint" => {
            let t = r.taint.as_ref().expect("taint needs a taint");
            let effect = t.effect.as_deref().map(|e| {
                gangpack_cli::Effect::parse(e).unwrap_or_else(|| panic!("unknown effect {e:?}"))
            });
            let key = t
                .key
                .clone()
                .unwrap_or_else(|| gangpack_cli::DEFAULT_KEY.to_owned());
            let value = t.value.clone().unwrap_or_default();
            let target = match (&t.device, &t.node, &t.rule) {
                (Some(device), None, None) => gangpack_cli::TaintTargetSpec::Device {
                    device: device.clone(),
                    effect,
                    key,
                    value,
                },
                (None, Some(node), None) => gangpack_cli::TaintTargetSpec::Node {
                    node: node.clone(),
                    effect,
                    key,
                    value,
                },
                (None, None, Some(rule)) => {
                    gangpack_cli::TaintTargetSpec::Rule(Input::Files(vec![InputFile {
                        name: rule.clone(),
                        text: file(rule).to_owned(),
                    }]))
                }
                _ => panic!("taint: exactly one of device, node and rule"),
            };
            let request = TaintRequest {
                target,
                after_plan: t.after_plan,
            };
            gangpack_cli::taint(input, &o, &request, format, style)
        }
        other => panic!("unknown command {other:?}"),
    }
}

/// Compares `actual` with the golden file `name` (`golden` is its committed text), or
/// rewrites it when blessing (natively, `GANGPACK_BLESS=1`).
fn check(name: &str, golden: &str, actual: &str) {
    #[cfg(not(target_arch = "wasm32"))]
    if std::env::var_os("GANGPACK_BLESS").is_some_and(|v| v != "0") {
        let path = format!("{}/../{GOLDEN_DIR}/{name}", env!("CARGO_MANIFEST_DIR"));
        if golden != actual {
            std::fs::write(&path, actual).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        return;
    }
    assert!(
        golden == actual,
        "{GOLDEN_DIR}/{name} differs ({}):\n{}\nIf the change is intended, bless it natively: \
         GANGPACK_BLESS=1 cargo test -p gangpack-wasm --test determinism",
        if cfg!(target_arch = "wasm32") {
            "wasm32"
        } else {
            "native"
        },
        diff::unified(golden, actual),
    );
}

/// Renders scenario `name` and compares it with its goldens.
fn golden(name: &str, trace: &str, cli: &str, manifests: &str) {
    let s = scenario(name);
    let (input, generated) = input(&s);
    if generated.is_some() {
        if s.cli.is_empty() {
            assert!(
                manifests.is_empty(),
                "{name}: a manifests golden without commands"
            );
        } else {
            let Input::Files(files) = &input else {
                unreachable!("generated input is one text")
            };
            check(&format!("{name}.yaml"), manifests, &files[0].text);
        }
    }
    let policies = if s.policies.is_empty() {
        vec!["BestFit".to_owned()]
    } else {
        s.policies.clone()
    };
    let mut out = String::new();
    for policy in &policies {
        let (mut sched, header) = if let Some(g) = &generated {
            let gang = gangpack::GangOptions {
                policy: scoring(policy),
                ..gangpack::GangOptions::default()
            };
            let sched = g.scheduler(gang).expect("a generated scenario builds");
            (sched, format!("{g}"))
        } else {
            let (snapshot, warnings) = gangpack_cli::snapshot(&input, &options(policy))
                .expect("the scenario's input builds");
            (snapshot.scheduler, render::snapshot_header(&warnings))
        };
        render::trace(&mut out, &s.name, policy, &header, &mut sched, &s.steps);
    }
    check(&format!("{name}.trace.txt"), trace, &out);
    if s.cli.is_empty() {
        assert!(cli.is_empty(), "{name}: a CLI golden without commands");
    } else {
        check(&format!("{name}.cli.txt"), cli, &render_cli(&s, &input));
    }
}

/// One test per scenario: `golden!(test_name, "scenario-name")` reads the scenario's
/// golden files (empty when it has none of that kind).
macro_rules! golden {
    ($test:ident, $name:literal, manifests) => {
        #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
        #[cfg_attr(not(target_arch = "wasm32"), test)]
        fn $test() {
            golden(
                $name,
                include_str!(concat!("golden/", $name, ".trace.txt")),
                include_str!(concat!("golden/", $name, ".cli.txt")),
                include_str!(concat!("golden/", $name, ".yaml")),
            );
        }
    };
    ($test:ident, $name:literal, trace) => {
        #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
        #[cfg_attr(not(target_arch = "wasm32"), test)]
        fn $test() {
            golden(
                $name,
                include_str!(concat!("golden/", $name, ".trace.txt")),
                "",
                "",
            );
        }
    };
    ($test:ident, $name:literal) => {
        #[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
        #[cfg_attr(not(target_arch = "wasm32"), test)]
        fn $test() {
            golden(
                $name,
                include_str!(concat!("golden/", $name, ".trace.txt")),
                include_str!(concat!("golden/", $name, ".cli.txt")),
                "",
            );
        }
    };
}

golden!(examples_gang_rack, "examples-gang-rack");
golden!(examples_running_job, "examples-running-job");
golden!(demo, "demo");
golden!(sharing, "sharing");
golden!(taints, "taints");
golden!(ties, "ties");
golden!(cel_cost, "cel-cost");
golden!(gen_small_gangs, "gen-small-gangs", manifests);
golden!(gen_small_mixed, "gen-small-mixed", manifests);
golden!(gen_medium_gangs, "gen-medium-gangs", trace);
golden!(gen_medium_mixed, "gen-medium-mixed", trace);

/// Every scenario of `scenarios.json` has its test above (and so its goldens), and
/// every file it reads is in [`FILES`].
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test::wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn every_scenario_has_a_test_and_its_files() {
    let tested = [
        "examples-gang-rack",
        "examples-running-job",
        "demo",
        "sharing",
        "taints",
        "ties",
        "cel-cost",
        "gen-small-gangs",
        "gen-small-mixed",
        "gen-medium-gangs",
        "gen-medium-mixed",
    ];
    let all = scenarios();
    let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, tested);
    for s in &all {
        if let Source::Files(paths) = &s.input {
            for p in paths {
                file(p);
            }
        }
        for step in &s.steps {
            if let Step::Rule(p) = step {
                file(p);
            }
        }
        for c in &s.cli {
            if let Some(rule) = c.request.taint.as_ref().and_then(|t| t.rule.as_ref()) {
                file(rule);
            }
        }
    }
}
