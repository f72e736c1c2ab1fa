//! The `gangpack` command's logic as a library: `plan`, `explain`, `taint` and `demo`
//! over manifests, producing exactly the bytes the command prints (and, with the `gen`
//! feature, `generate`: `gangpack gen`'s generated scenarios as manifests), and
//! `watch`, which follows kubectl's watch streams and writes as it goes ([`Watch`] is
//! its engine, for callers that feed events themselves).
//!
//! The `gangpack` binary (`src/main.rs`, feature `cli`) is a thin shell over this
//! library: it parses flags with clap, decides on colour from the terminal and writes
//! [`Run`]'s stdout, messages and exit status. `gangpack-wasm` calls the same functions
//! with manifests handed over as text ([`Input::Files`]), which is why a wasm build and
//! the native command print the same bytes: there is one implementation of every
//! table, summary line and object list, and it lives here.
//!
//! Nothing here writes to a terminal or reads the environment; file reading happens only
//! for [`Input::Paths`] (the native command's `-f`).

mod capacity;
mod check;
mod demo;
mod diff;
mod explain;
// `gangpack gen` (proptest): only with the `gen` feature (the command's build has it).
#[cfg(feature = "gen")]
mod generate;
// `gangpack gen --fleet` (plain code, but `gen` is the command's only).
#[cfg(feature = "cli")]
mod fleet;
mod input;
mod nodes;
mod plan;
mod render;
mod taint;
mod time;
mod watch;

pub use capacity::CapacityKey;
#[cfg(feature = "cli")]
pub use fleet::{
    FLEET_BLOCK_LABEL, FLEET_NODES, FLEET_RACK_LABEL, FleetSummary, GPUS_PER_NODE, MAX_FLEET_NODES,
    NODES_PER_RACK, PENDING_GANG, RACKS_PER_BLOCK, fleet_scenario,
};
pub use gangpack_k8s::io_reason;
#[cfg(feature = "gen")]
pub use generate::{GenSpec, Size, WorkloadKind, generated_list, generated_scenario};
pub use input::{Input, InputFile, Problem};
pub use nodes::explain_nodes;
pub use render::Style;
pub use taint::{DEFAULT_KEY, TaintRequest, TaintTargetSpec};
pub use time::{parse_rfc3339, parse_rfc3339_arg};
pub use watch::{
    Change, Collected, Cycle, EXIT_WATCH_ENDED, Flow, Message as WatchMessage, Trigger, Watch,
    WatchOptions, WatchSink, WatchSource,
};

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: I/O failure (unreadable file, unwritable output).
pub const EXIT_FAILURE: u8 = 1;
/// Exit status: invalid input or usage (clap uses 2 for usage errors too).
pub const EXIT_INVALID: u8 = 2;
/// Exit status: `plan` left something pending.
pub const EXIT_PENDING: u8 = 3;
/// Exit status: `check` found a broken rule.
pub const EXIT_VIOLATIONS: u8 = 4;

/// What every command takes besides its input: the command line's global flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// How to choose among feasible nodes and racks.
    pub policy: Policy,
    /// `--workload-mix`: the typical shapes Stranding and FGD score against (see
    /// [`workload_mix`]); `None`: the shapes of every pod in the input, running and
    /// pending. Ignored by best-fit and spread (the command line refuses it there).
    pub workload_mix: Option<gangpack::ShapeMix>,
    /// `--protect-key`: node label keys whose domains gang-aware keeps whole.
    pub protect: Vec<String>,
    /// `--lower-domain`: the levels inside a gang's domain gang-aware packs it into.
    pub levels: Vec<gangpack::DomainLevel>,
    /// The demo's seed (which GPU fails). Planning never uses randomness.
    pub seed: u64,
    /// Skip objects that fail validation or conversion (each a warning) instead of failing.
    pub skip_invalid: bool,
    /// Unknown fields are errors, not warnings.
    pub strict: bool,
    /// The logical clock; `None` is the latest timestamp in the input.
    pub now: Option<gangpack::Time>,
    /// `--step-budget`: the most steps one gang search takes
    /// ([`gangpack::GangOptions::step_budget`]).
    pub step_budget: u64,
    /// `--allocator-step-budget`: the most steps one claim allocator call takes
    /// ([`gangpack::GangOptions::allocator_step_budget`]).
    pub allocator_step_budget: u64,
    /// The loader's resource limits (`--max-input-bytes`, `--max-alias-expansion`).
    pub limits: gangpack_k8s::Limits,
    /// `--feature-gates PodGroupPreemptionPolicy=true`
    /// ([`gangpack::GangOptions::pod_group_preemption_policy`]).
    pub pod_group_preemption_policy: bool,
    /// `-n NS`: namespaced objects without a namespace are in NS (not `default`), and
    /// only NS's pending pods (and so PodGroups) are scheduled; `None` (`-A`, the
    /// default): every namespace.
    pub namespace: Option<String>,
}

impl Options {
    /// The core's policy: [`Policy::scoring`], with `--workload-mix` as its given mix.
    pub fn scoring(&self) -> gangpack::ScoringPolicy {
        let mut policy = self.policy.scoring();
        if let gangpack::ScoringPolicy::GangAware(p) = &mut policy {
            p.protect.clone_from(&self.protect);
            p.levels.clone_from(&self.levels);
        }
        match &self.workload_mix {
            Some(mix) => policy.with_mix(gangpack::MixSource::Given(mix.clone())),
            None => policy,
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            policy: Policy::BestFit,
            workload_mix: None,
            protect: Vec::new(),
            levels: Vec::new(),
            seed: 0,
            skip_invalid: false,
            strict: false,
            now: None,
            step_budget: gangpack::DEFAULT_STEP_BUDGET,
            allocator_step_budget: gangpack::DEFAULT_ALLOCATOR_STEP_BUDGET,
            limits: gangpack_k8s::Limits::default(),
            pod_group_preemption_policy: false,
            namespace: None,
        }
    }
}

/// Refuses `--protect-key` and `--lower-domain` with a policy other than gang-aware.
pub fn gang_aware_flags(
    policy: Policy,
    protect: &[String],
    levels: &[gangpack::DomainLevel],
) -> Result<(), Failure> {
    if (protect.is_empty() && levels.is_empty()) || policy == Policy::GangAware {
        return Ok(());
    }
    Err(Failure::invalid(format!(
        "--protect-key and --lower-domain apply to --policy gang-aware, not {}",
        policy.name()
    )))
}

/// A `--lower-domain` value: `device:ATTRIBUTE` (a device attribute), else a node
/// label key.
pub fn parse_lower_domain(s: &str) -> Result<gangpack::DomainLevel, String> {
    match s.strip_prefix("device:") {
        Some("") => Err("device: needs an attribute name (device:nvidia.com/clique)".into()),
        Some(a) => Ok(gangpack::DomainLevel::DeviceAttribute(a.to_owned())),
        None if s.is_empty() => Err("expected a node label key or device:ATTRIBUTE".into()),
        None => Ok(gangpack::DomainLevel::NodeLabel(s.to_owned())),
    }
}

/// The feature gates `--feature-gates` knows: kube-scheduler's gates whose default
/// gangpack can change, with their 1.37 defaults.
pub const FEATURE_GATES: &[(&str, bool)] = &[("PodGroupPreemptionPolicy", false)];

/// The gates of one `--feature-gates` value, in order (a later pair for the same gate
/// wins).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeatureGates(pub Vec<(String, bool)>);

impl FeatureGates {
    /// Whether gate `name` is on: its last pair, else its 1.37 default.
    pub fn enabled(&self, name: &str) -> bool {
        self.0
            .iter()
            .rev()
            .find(|(g, _)| g == name)
            .map(|(_, on)| *on)
            .or_else(|| {
                FEATURE_GATES
                    .iter()
                    .find(|(g, _)| *g == name)
                    .map(|(_, d)| *d)
            })
            .unwrap_or(false)
    }
}

/// `--feature-gates` as kube-scheduler reads it: `Name=true|false` pairs separated by
/// commas (`PodGroupPreemptionPolicy=true`). Returns the pairs in order; an unknown
/// gate or a value that is not a boolean is an error naming it.
pub fn parse_feature_gates(s: &str) -> Result<FeatureGates, String> {
    let mut out = Vec::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((name, value)) = pair.split_once('=') else {
            return Err(format!(
                "missing bool value for feature gate {pair:?} (expected {pair}=true or {pair}=false)"
            ));
        };
        let name = name.trim();
        if !FEATURE_GATES.iter().any(|(g, _)| *g == name) {
            let known: Vec<&str> = FEATURE_GATES.iter().map(|(g, _)| *g).collect();
            return Err(format!(
                "unrecognized feature gate: {name} (gangpack knows {})",
                known.join(", ")
            ));
        }
        let value = match value.trim() {
            v if v.eq_ignore_ascii_case("true") => true,
            v if v.eq_ignore_ascii_case("false") => false,
            v => {
                return Err(format!(
                    "invalid value of {name}: {v:?}, expected true or false"
                ));
            }
        };
        out.push((name.to_owned(), value));
    }
    Ok(FeatureGates(out))
}

/// A count for `--max-input-bytes` and `--max-alias-expansion`: digits (`_` allowed
/// between them), optionally followed by `K`, `M`, `G` (powers of 1000) or `Ki`, `Mi`,
/// `Gi` (powers of 1024): `100000000`, `512Mi`, `2Gi`.
pub fn parse_size_arg(s: &str) -> Result<usize, String> {
    let bad = || format!("not a size: {s:?} (expected e.g. 1073741824, 512Mi or 2Gi)");
    let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let factor: u64 = match &s[digits.len()..] {
        "" => 1,
        "K" | "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return Err(bad()),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') {
        return Err(bad());
    }
    let n: u64 = digits.replace('_', "").parse().map_err(|_| bad())?;
    n.checked_mul(factor)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("too large: {s:?} (at most {} on this machine)", usize::MAX))
}

/// `--policy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Policy {
    /// The tightest nodes and smallest free rack first (kube-scheduler's MostAllocated).
    BestFit,
    /// The emptiest nodes and racks first.
    Spread,
    /// Where a pod strands the least GPU, CPU and memory for the workload's typical
    /// shapes (`--workload-mix`, else the shapes of every pod in the input).
    Stranding,
    /// Fragmentation Gradient Descent: where the workload's expected GPU
    /// fragmentation grows least (same mix as stranding).
    Fgd,
    /// Stranding that keeps whole racks (`--protect-key`, and every key a pending
    /// PodGroup requires) whole when it can, and puts a gang in the fewest lower
    /// domains (`--lower-domain`).
    GangAware,
}

impl Policy {
    /// The command-line names, in order (`fragmentation-aware`, deprecated, is not one).
    pub const NAMES: [&'static str; 5] = ["best-fit", "spread", "stranding", "fgd", "gang-aware"];

    /// The core's policy of that name (Stranding and FGD with the observed mix).
    pub fn scoring(self) -> gangpack::ScoringPolicy {
        match self {
            Policy::BestFit => gangpack::ScoringPolicy::BestFit,
            Policy::Spread => gangpack::ScoringPolicy::Spread,
            Policy::Stranding => gangpack::ScoringPolicy::stranding(),
            Policy::Fgd => gangpack::ScoringPolicy::fgd(),
            Policy::GangAware => gangpack::ScoringPolicy::gang_aware(),
        }
    }

    /// The policy's command-line name.
    pub const fn name(self) -> &'static str {
        match self {
            Policy::BestFit => "best-fit",
            Policy::Spread => "spread",
            Policy::Stranding => "stranding",
            Policy::Fgd => "fgd",
            Policy::GangAware => "gang-aware",
        }
    }

    /// Whether the policy scores against a workload mix (`--workload-mix`).
    pub const fn uses_mix(self) -> bool {
        matches!(self, Policy::Stranding | Policy::Fgd | Policy::GangAware)
    }

    /// The policy of a command-line name (`best-fit`, `spread`, `stranding`, `fgd`; any
    /// case, `-` and `_` ignored) or a core name (`BestFit`, `FGD`, ...).
    /// `fragmentation-aware`, the policy FGD replaced, reads as [`Policy::Fgd`]; see
    /// [`Policy::is_deprecated_name`].
    pub fn parse(name: &str) -> Option<Policy> {
        match gangpack::ScoringPolicy::parse(name)? {
            gangpack::ScoringPolicy::BestFit => Some(Policy::BestFit),
            gangpack::ScoringPolicy::Spread => Some(Policy::Spread),
            gangpack::ScoringPolicy::Stranding(_) => Some(Policy::Stranding),
            gangpack::ScoringPolicy::Fgd(_) => Some(Policy::Fgd),
            gangpack::ScoringPolicy::GangAware(_) => Some(Policy::GangAware),
            // The baselines are `simulate`'s alone.
            gangpack::ScoringPolicy::Random(_) | gangpack::ScoringPolicy::DotProduct => None,
        }
    }

    /// Whether `name` is a deprecated spelling [`Policy::parse`] still reads
    /// (`fragmentation-aware`, now `fgd`): the caller says so ([`DEPRECATED_POLICY`]).
    pub fn is_deprecated_name(name: &str) -> bool {
        gangpack::ScoringPolicy::is_deprecated_name(name)
    }
}

/// The warning for `--policy fragmentation-aware` (printed after `warning: `).
pub const DEPRECATED_POLICY: &str = "--policy fragmentation-aware is deprecated; it now means fgd";

/// The workload mix of a `--workload-mix` file (`name` in messages, `text` its YAML or
/// JSON: a `ShapeMix`, `{shapes: [{weight, cpu, memory, deviceClassName, count,
/// capacity, selectors: [{cel}], pods, topologyKey}]}`), for `policy`. Invalid input
/// (exit 2) when the policy scores without a mix (best-fit, spread), when the text does
/// not parse or has a field a mix does not, or when the mix is invalid
/// ([`gangpack::ShapeMix::validate`]); every problem names the file and the field
/// (`mix.yaml: shapes[0].weight: invalid value "0": must be at least 1`).
pub fn workload_mix(policy: Policy, name: &str, text: &str) -> Result<gangpack::ShapeMix, Failure> {
    mix_policy(policy, name)?;
    input::workload_mix(name, text)
}

/// [`workload_mix`] of the file at `path` (unreadable: an I/O failure, exit 1).
pub fn read_workload_mix(policy: Policy, path: &str) -> Result<gangpack::ShapeMix, Failure> {
    mix_policy(policy, path)?;
    let text = std::fs::read_to_string(path).map_err(|e| input::io_failure(path, &e))?;
    input::workload_mix(path, &text)
}

/// Refuses a workload mix for a policy that scores without one.
fn mix_policy(policy: Policy, name: &str) -> Result<(), Failure> {
    if policy.uses_mix() {
        return Ok(());
    }
    Err(Failure::invalid(format!(
        "--workload-mix {name}: --policy {} scores without a workload mix; use --policy stranding, fgd or gang-aware",
        policy.name()
    )))
}

/// `-o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Format {
    /// Aligned text for people.
    Table,
    /// The changed objects as a YAML `kind: List`.
    Yaml,
    /// The changed objects as a JSON `kind: List`.
    Json,
}

/// `--effect`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Effect {
    /// Evict what does not tolerate it, and keep new work off.
    #[cfg_attr(feature = "cli", value(name = "NoExecute"))]
    NoExecute,
    /// Keep new work off; running pods stay.
    #[cfg_attr(feature = "cli", value(name = "NoSchedule"))]
    NoSchedule,
    /// Nodes only: the scheduler avoids the node when it can.
    #[cfg_attr(feature = "cli", value(name = "PreferNoSchedule"))]
    PreferNoSchedule,
    /// Devices only: informational (a DeviceTaintRule with it is a dry run).
    #[cfg_attr(feature = "cli", value(name = "None"))]
    None,
}

impl Effect {
    /// The effect of its Kubernetes name (`NoExecute`, ...), any case.
    pub fn parse(name: &str) -> Option<Effect> {
        match name.to_ascii_lowercase().as_str() {
            "noexecute" => Some(Effect::NoExecute),
            "noschedule" => Some(Effect::NoSchedule),
            "prefernoschedule" => Some(Effect::PreferNoSchedule),
            "none" => Some(Effect::None),
            _ => None,
        }
    }
}

/// Why a command stopped before producing its output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// Invalid input: every problem (exit 2).
    Invalid(Vec<Problem>),
    /// A unit, node or device asked about is not in the input (exit 2).
    NotFound(String),
    /// Reading failed (exit 1).
    Io(String),
}

impl Failure {
    /// An invalid-input failure with one message and no object.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure::Invalid(vec![Problem::message(message)])
    }

    /// The exit status: [`EXIT_INVALID`] or [`EXIT_FAILURE`].
    pub fn code(&self) -> u8 {
        match self {
            Failure::Invalid(_) | Failure::NotFound(_) => EXIT_INVALID,
            Failure::Io(_) => EXIT_FAILURE,
        }
    }

    /// The lines the command prints after `error: `, one per problem.
    pub fn lines(&self) -> Vec<String> {
        match self {
            Failure::Invalid(problems) => problems.iter().map(|p| p.line.clone()).collect(),
            Failure::Io(message) | Failure::NotFound(message) => vec![message.clone()],
        }
    }
}

/// What a command did: its stdout, the warnings it printed to stderr, and its exit
/// status. A failure has no stdout; its problems follow the warnings on stderr.
#[derive(Clone, Debug)]
pub struct Run {
    /// What goes to stdout (empty on failure).
    pub stdout: String,
    /// The warnings, one line each (printed after `warning: `), in order.
    pub warnings: Vec<String>,
    /// The exit status.
    pub code: u8,
    /// Why it stopped, when it did.
    pub failure: Option<Failure>,
}

impl Run {
    fn finish(result: Result<Outcome, Failure>, messages: input::Messages) -> Run {
        let warnings = messages.into_lines();
        match result {
            Ok(o) => Run {
                stdout: o.stdout,
                warnings,
                code: o.code,
                failure: None,
            },
            Err(f) => Run {
                stdout: String::new(),
                warnings,
                code: f.code(),
                failure: Some(f),
            },
        }
    }
}

/// What a command produced before it is packed into a [`Run`].
pub(crate) struct Outcome {
    pub(crate) stdout: String,
    pub(crate) code: u8,
}

/// `gangpack plan`: one scheduling cycle, printed as `format` asks.
pub fn plan(input: &Input, options: &Options, format: Format, style: Style) -> Run {
    plan_keeping(input, options, format, style).0
}

/// [`plan`], handing back the snapshot it planned on (when it got that far) instead of
/// freeing it, for a process that exits once it has printed: it can leave that memory
/// to the operating system (`std::mem::forget`), which takes no time, where freeing a
/// 100,000-GPU dump's objects and model one by one takes about a second.
pub fn plan_keeping(
    input: &Input,
    options: &Options,
    format: Format,
    style: Style,
) -> (Run, Option<gangpack_k8s::Snapshot>) {
    let mut messages = input::Messages::default();
    let mut kept = None;
    let result = plan::run(options, input, format, style, &mut messages, &mut kept);
    (Run::finish(result, messages), kept)
}

/// Both forms of `gangpack plan` from one cycle: the table (`-o table`) and the
/// object `-o json` prints.
#[derive(Clone, Debug)]
pub struct PlanReport {
    /// The table text, exactly as `gangpack plan` prints it.
    pub table: String,
    /// The `kind: List` of changed objects, exactly as `gangpack plan -o json` prints it.
    pub list: serde_json::Value,
    /// The exit status the command would have (0 or 3).
    pub code: u8,
    /// The warnings (including the derived-uid one `-o json` prints).
    pub warnings: Vec<String>,
}

/// [`plan`] once, in both forms.
pub fn plan_report(input: &Input, options: &Options, style: Style) -> Result<PlanReport, Failure> {
    let mut messages = input::Messages::default();
    let (table, list, code) = plan::both(options, input, style, &mut messages)?;
    Ok(PlanReport {
        table,
        list,
        code,
        warnings: messages.into_lines(),
    })
}

/// The table `gangpack plan` prints, for a plan already computed on `snapshot` (with
/// [`gangpack_k8s::output::plan`]): for callers that keep the snapshot between cycles,
/// such as the WebAssembly `Scheduler` class.
pub fn plan_table(
    plan: &gangpack_k8s::output::Plan,
    snapshot: &gangpack_k8s::Snapshot,
    style: Style,
) -> String {
    plan::render(plan, snapshot, style)
}

/// The snapshot every command starts from: the input loaded and built as the options
/// say, with the warnings the command would print. For callers that keep the state
/// (the WebAssembly `Scheduler` class).
pub fn snapshot(
    input: &Input,
    options: &Options,
) -> Result<(gangpack_k8s::Snapshot, Vec<String>), Failure> {
    let mut messages = input::Messages::default();
    let snapshot = input::snapshot(options, input, &mut messages)?;
    Ok((snapshot, messages.into_lines()))
}

/// `gangpack explain [PODGROUP | --pod POD]`.
pub fn explain(input: &Input, options: &Options, group: Option<&str>, pod: Option<&str>) -> Run {
    explain_keeping(input, options, group, pod).0
}

/// [`explain`], handing back the snapshot it explained on (when it got that far), as
/// [`plan_keeping`] does.
pub fn explain_keeping(
    input: &Input,
    options: &Options,
    group: Option<&str>,
    pod: Option<&str>,
) -> (Run, Option<gangpack_k8s::Snapshot>) {
    let mut messages = input::Messages::default();
    let mut kept = None;
    let result = explain::run(options, input, group, pod, &mut messages, &mut kept);
    (Run::finish(result, messages), kept)
}

/// `gangpack taint`: the blast radius of a taint.
pub fn taint(
    input: &Input,
    options: &Options,
    request: &TaintRequest,
    format: Format,
    style: Style,
) -> Run {
    let mut messages = input::Messages::default();
    let result = taint::run(options, input, request, format, style, &mut messages);
    Run::finish(result, messages)
}

/// Both forms of `gangpack taint` from one run.
#[derive(Clone, Debug)]
pub struct TaintReport {
    /// The table text.
    pub table: String,
    /// The `kind: List` `-o json` prints.
    pub list: serde_json::Value,
    /// The warnings.
    pub warnings: Vec<String>,
}

/// [`taint`] once, in both forms.
pub fn taint_report(
    input: &Input,
    options: &Options,
    request: &TaintRequest,
    style: Style,
) -> Result<TaintReport, Failure> {
    let mut messages = input::Messages::default();
    let (table, list) = taint::both(options, input, request, style, &mut messages)?;
    Ok(TaintReport {
        table,
        list,
        warnings: messages.into_lines(),
    })
}

/// `gangpack capacity`: the capacity report of the input's free capacity (before any
/// cycle), grouped by `key`, for single pods of 1, 2, 4 and 8 devices and a gang of
/// `gang_pods` pods of 8 devices; a table, or JSON with `json`.
pub fn capacity(
    input: &Input,
    options: &Options,
    key: &CapacityKey,
    gang_pods: u32,
    json: bool,
) -> Run {
    let mut messages = input::Messages::default();
    let result = capacity::run(options, input, key, gang_pods, json, &mut messages);
    Run::finish(result, messages)
}

/// Both forms of `gangpack capacity` from one report.
#[derive(Clone, Debug)]
pub struct CapacityOutput {
    /// The table text, exactly as `gangpack capacity` prints it.
    pub table: String,
    /// The report, exactly the object `gangpack capacity -o json` prints.
    pub data: serde_json::Value,
    /// The warnings.
    pub warnings: Vec<String>,
}

/// [`capacity`] once, in both forms.
pub fn capacity_report(
    input: &Input,
    options: &Options,
    key: &CapacityKey,
    gang_pods: u32,
) -> Result<CapacityOutput, Failure> {
    let mut messages = input::Messages::default();
    let (table, data) = capacity::both(options, input, key, gang_pods, &mut messages)?;
    Ok(CapacityOutput {
        table,
        data,
        warnings: messages.into_lines(),
    })
}

/// `gangpack check`: the running state of `input`, with the objects of `decisions`
/// (if any) applied over it first, judged by the independent validator. Exit
/// [`EXIT_OK`] when no rule is broken, [`EXIT_VIOLATIONS`] when one is, [`EXIT_INVALID`]
/// for invalid input. `admission` holds running pods and claims to the rules of
/// placement too (see [`gangpack_k8s::check`]).
pub fn check(
    input: &Input,
    decisions: Option<&Input>,
    options: &Options,
    admission: bool,
    format: Format,
    style: Style,
) -> Run {
    let mut messages = input::Messages::default();
    let result = check::run(
        options,
        input,
        decisions,
        admission,
        format,
        style,
        &mut messages,
    );
    Run::finish(result, messages)
}

/// The findings of [`check`], for callers that want them as data.
pub fn check_report(
    input: &Input,
    decisions: Option<&Input>,
    options: &Options,
    admission: bool,
) -> Result<(gangpack_k8s::check::Report, Vec<String>), Failure> {
    let mut messages = input::Messages::default();
    let report = check::report(options, input, decisions, admission, &mut messages)?;
    Ok((report, messages.into_lines()))
}

/// The table `gangpack check` prints for a report of [`check_report`] (`decided`:
/// whether decision objects were applied).
pub fn check_table(report: &gangpack_k8s::check::Report, decided: bool, style: Style) -> String {
    check::table(report, decided, style)
}

/// `gangpack diff`: two decision files (`ours`, `theirs`) for the same `input`,
/// compared: the validator's verdict on each, pods placed by one side only or on
/// different nodes, devices left unallocated, gangs split, evictions. Exit
/// [`EXIT_OK`] when both are valid, [`EXIT_VIOLATIONS`] when either breaks a rule.
pub fn diff(
    input: &Input,
    ours: &Input,
    theirs: &Input,
    options: &Options,
    format: Format,
    style: Style,
) -> Run {
    let mut messages = input::Messages::default();
    let result = diff::run(options, input, ours, theirs, format, style, &mut messages);
    Run::finish(result, messages)
}

/// Both forms of `gangpack diff` from one comparison.
#[derive(Clone, Debug)]
pub struct DiffReport {
    /// The table text, exactly as `gangpack diff` prints it.
    pub table: String,
    /// The comparison, exactly the object `gangpack diff -o json` prints.
    pub data: serde_json::Value,
    /// The two place and evict the same pods on the same nodes (the table's last
    /// line says which).
    pub same: bool,
    /// The exit status the command would have ([`EXIT_OK`] or [`EXIT_VIOLATIONS`]).
    pub code: u8,
    /// The warnings (the dump's once).
    pub warnings: Vec<String>,
}

/// [`diff`] once, in both forms.
pub fn diff_report(
    input: &Input,
    ours: &Input,
    theirs: &Input,
    options: &Options,
    style: Style,
) -> Result<DiffReport, Failure> {
    let mut messages = input::Messages::default();
    let (table, data, same, code) = diff::both(options, input, ours, theirs, style, &mut messages)?;
    Ok(DiffReport {
        table,
        data,
        same,
        code,
        warnings: messages.into_lines(),
    })
}

/// `gangpack demo` (`manifests`: `--manifests`, the demo's YAML instead of its run).
pub fn demo(options: &Options, manifests: bool, style: Style) -> Run {
    let mut messages = input::Messages::default();
    let result = demo::run(options, manifests, style, &mut messages);
    Run::finish(result, messages)
}

/// `gangpack gen`: the scenario generated for `spec` ([`GenSpec::scenario`]) as a
/// `kind: List` of Kubernetes manifests, YAML or JSON (`Table` prints YAML). Exit
/// status 0. Only with the `gen` feature.
#[cfg(feature = "gen")]
pub fn generate(spec: &GenSpec, format: Format) -> Run {
    let mut messages = input::Messages::default();
    let result = generate::run(spec, format, &mut messages);
    Run::finish(result, messages)
}

/// `gangpack gen --events`: the scenario generated for `spec` as a stream of watch
/// events ([`GenSpec::events`]), what `gangpack watch -f` reads. Exit status 0. Only
/// with the `gen` feature.
#[cfg(feature = "gen")]
pub fn generate_events(spec: &GenSpec) -> Run {
    Run::finish(Ok(generate::run_events(spec)), input::Messages::default())
}

/// `gangpack gen --fleet NODES`: the fleet of `nodes` nodes for `seed`
/// ([`fleet_scenario`]) as a `kind: List` of Kubernetes manifests, YAML or JSON
/// (`Table` prints YAML), and its numbers (the line `gen` prints on stderr). Exit
/// status 0. Only with the `cli` feature.
#[cfg(feature = "cli")]
pub fn generate_fleet(nodes: u32, seed: u64, format: Format) -> (Run, FleetSummary) {
    let (result, summary) = fleet::run(nodes, seed, format);
    (Run::finish(result, input::Messages::default()), summary)
}

/// `gangpack watch`: follows the event streams of `sources` (what `kubectl get KIND -A
/// --watch --output-watch-events -o json` prints), after the starting dump `initial`
/// if any, running a cycle whenever the input goes quiet, every N events and at its
/// end, and writing to `sink` what changed at each (see [`Watch`], [`WatchOptions`],
/// and `cli/README.md`). Returns the exit status: 0, 1 (a source could not be read),
/// 2 (invalid input: an error was said), 3 ([`EXIT_WATCH_ENDED`]: an `ERROR` event, the
/// watch expired), 4 (`--audit`: a rule is broken at the last cycle).
#[cfg(not(target_arch = "wasm32"))]
pub fn watch(
    initial: Option<&Input>,
    sources: &[WatchSource],
    options: &Options,
    watch: &WatchOptions,
    style: Style,
    sink: &mut dyn WatchSink,
) -> u8 {
    watch::watch(initial, sources, options, watch, style, sink)
}

/// The demo cluster's manifests (multi-document YAML, with comments), for `seed`.
pub fn demo_manifests(seed: u64) -> Result<String, Failure> {
    demo::build(seed).yaml()
}

/// A changed-objects list as `-o yaml` or `-o json` prints it (a trailing newline
/// either way); `Table` prints JSON too.
pub fn print_list(list: &serde_json::Value, format: Format) -> Result<String, Failure> {
    plan::print_list(list, format)
}
