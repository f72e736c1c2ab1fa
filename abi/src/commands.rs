//! The command line's commands as requests returning data: each result holds what the
//! command prints as a table, the object it prints with `-o json`, and its exit
//! status, from one run of the same library function (`gangpack_cli`) the native
//! command calls. Nothing is computed here.

use std::collections::{BTreeMap, BTreeSet};

use gangpack_cli::{
    CapacityKey, DEFAULT_KEY, EXIT_OK, EXIT_VIOLATIONS, Effect, Failure, Format, Input, InputFile,
    TaintRequest, TaintTargetSpec,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{self, Error, INVALID_ARGUMENT, IO_ERROR, Problem};
use crate::manifests::Manifests;
use crate::options::RequestOptions;
use crate::unit::UnitName;

/// `plan`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanResult {
    table: String,
    list: Value,
    exit_code: u8,
    pending: bool,
    warnings: Vec<String>,
}

/// One scheduling cycle over `input`: `{ table, list, exitCode, pending, warnings }`,
/// where `table` is what `gangpack plan` prints and `list` the object `gangpack plan -o
/// json` prints. Fails only for input that cannot be read; pending work is `pending:
/// true` (exit code 3).
pub fn plan(input: &Input, o: &RequestOptions) -> Result<PlanResult, Error> {
    let report = gangpack_cli::plan_report(input, &o.options("options")?, o.style())
        .map_err(|f| error::failure(&f))?;
    Ok(PlanResult {
        table: report.table,
        list: report.list,
        exit_code: report.code,
        pending: report.code != EXIT_OK,
        warnings: o.warnings("options", report.warnings),
    })
}

/// `explain`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainResult {
    text: String,
    warnings: Vec<String>,
}

/// Why a unit is not placed, as `gangpack explain` prints it: `{ text, warnings }`;
/// `unit` `None` explains every unit that stays pending.
pub fn explain(
    input: &Input,
    unit: Option<&UnitName>,
    o: &RequestOptions,
) -> Result<ExplainResult, Error> {
    let (group, pod) = match unit {
        None => (None, None),
        Some(UnitName::PodGroup(g)) => (Some(g.as_str()), None),
        Some(UnitName::Pod(p)) => (None, Some(p.as_str())),
    };
    let run = gangpack_cli::explain(input, &o.options("options")?, group, pod);
    if let Some(f) = &run.failure {
        return Err(error::failure(f));
    }
    Ok(ExplainResult {
        text: run.stdout,
        warnings: o.warnings("options", run.warnings),
    })
}

/// The taint `taint` applies: exactly one of `device`, `node` and `rule`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaintSpec {
    device: Option<String>,
    node: Option<String>,
    rule: Option<Manifests>,
    effect: Option<String>,
    key: Option<String>,
    value: Option<String>,
    #[serde(default)]
    after_plan: bool,
}

impl TaintSpec {
    /// The command's request; `what` names the argument in errors.
    pub fn request(self, what: &str) -> Result<TaintRequest, Error> {
        let bad = |field: &str, message: String| Error::argument(format!("{what}{field}"), message);
        let given = [
            self.device.is_some(),
            self.node.is_some(),
            self.rule.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(bad("", "give exactly one of device, node and rule".into()));
        }
        let effect = match &self.effect {
            None => None,
            Some(e) => Some(Effect::parse(e).ok_or_else(|| {
                bad(
                    ".effect",
                    format!(
                        "unknown effect {e:?} (expected NoExecute, NoSchedule, PreferNoSchedule or None)"
                    ),
                )
            })?),
        };
        let key = self.key.unwrap_or_else(|| DEFAULT_KEY.to_owned());
        let value = self.value.unwrap_or_default();
        let target = if let Some(rule) = self.rule {
            if effect.is_some() {
                return Err(bad(".effect", "a rule carries its own effect".into()));
            }
            TaintTargetSpec::Rule(rule.input())
        } else if let Some(device) = self.device {
            TaintTargetSpec::Device {
                device,
                effect,
                key,
                value,
            }
        } else {
            TaintTargetSpec::Node {
                node: self.node.unwrap_or_default(),
                effect,
                key,
                value,
            }
        };
        Ok(TaintRequest {
            target,
            after_plan: self.after_plan,
        })
    }
}

/// `taint`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaintResult {
    table: String,
    list: Value,
    warnings: Vec<String>,
}

/// What a taint would do, as `gangpack taint` prints it: `{ table, list, warnings }`.
pub fn taint(input: &Input, spec: TaintSpec, o: &RequestOptions) -> Result<TaintResult, Error> {
    let request = spec.request("spec")?;
    let report = gangpack_cli::taint_report(input, &o.options("options")?, &request, o.style())
        .map_err(|f| error::failure(&f))?;
    Ok(TaintResult {
        table: report.table,
        list: report.list,
        warnings: o.warnings("options", report.warnings),
    })
}

/// One command line, as a host hands it over (arguments parsed, files read).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CliRequest {
    command: String,
    #[serde(default)]
    files: Vec<FileArg>,
    output: Option<String>,
    #[serde(default)]
    options: RequestOptions,
    group: Option<String>,
    pod: Option<String>,
    taint: Option<TaintSpec>,
    #[serde(default)]
    manifests: bool,
    /// `check --decisions`.
    decisions: Option<Vec<FileArg>>,
    /// `check --admission`.
    #[serde(default)]
    admission: bool,
    /// `diff --ours`.
    ours: Option<Vec<FileArg>>,
    /// `diff --theirs`.
    theirs: Option<Vec<FileArg>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileArg {
    name: String,
    text: String,
}

/// `cli`'s result: what the native command prints and exits with.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CliResult {
    stdout: String,
    warnings: Vec<String>,
    errors: Vec<String>,
    code: u8,
}

/// Runs one `gangpack` command (`plan`, `explain`, `taint`, `demo`, `check`, `diff`):
/// `{ stdout, warnings, errors, code }`, exactly what the native command prints and
/// exits with. Never fails for bad input: that is `code: 2` with `errors`.
pub fn run_cli(r: CliRequest) -> CliResult {
    match cli_run(r) {
        Ok(run) => CliResult {
            errors: run.failure.as_ref().map(Failure::lines).unwrap_or_default(),
            stdout: run.stdout,
            warnings: run.warnings,
            code: run.code,
        },
        Err(lines) => CliResult {
            stdout: String::new(),
            warnings: Vec::new(),
            errors: lines,
            code: gangpack_cli::EXIT_INVALID,
        },
    }
}

fn cli_run(r: CliRequest) -> Result<gangpack_cli::Run, Vec<String>> {
    let lines = |e: Error| -> Vec<String> { e.text().lines().map(str::to_owned).collect() };
    let options = r.options.options("options").map_err(lines)?;
    let style = r.options.style();
    let format = match r.output.as_deref() {
        None | Some("table") => Format::Table,
        Some("yaml") => Format::Yaml,
        Some("json") => Format::Json,
        Some(other) => return Err(vec![format!("unknown output format {other:?}")]),
    };
    let files = |list: Vec<FileArg>| {
        Input::Files(
            list.into_iter()
                .map(|f| InputFile {
                    name: f.name,
                    text: f.text,
                })
                .collect(),
        )
    };
    let input = files(r.files);
    Ok(match r.command.as_str() {
        "plan" => gangpack_cli::plan(&input, &options, format, style),
        "explain" => gangpack_cli::explain(&input, &options, r.group.as_deref(), r.pod.as_deref()),
        "taint" => {
            let spec = r.taint.ok_or_else(|| {
                vec!["taint: one of --device, --node and --rule is required".to_owned()]
            })?;
            let request = spec.request("taint").map_err(lines)?;
            gangpack_cli::taint(&input, &options, &request, format, style)
        }
        "demo" => gangpack_cli::demo(&options, r.manifests, style),
        "check" => {
            let decisions = r.decisions.map(files);
            gangpack_cli::check(
                &input,
                decisions.as_ref(),
                &options,
                r.admission,
                format,
                style,
            )
        }
        "diff" => {
            let (Some(ours), Some(theirs)) = (r.ours, r.theirs) else {
                return Err(vec!["diff: --ours and --theirs are required".to_owned()]);
            };
            gangpack_cli::diff(
                &input,
                &files(ours),
                &files(theirs),
                &options,
                format,
                style,
            )
        }
        other => return Err(vec![format!("unknown command {other:?}")]),
    })
}

/// `check`'s spec: `--decisions` and `--admission`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CheckSpec {
    decisions: Option<Manifests>,
    #[serde(default)]
    admission: bool,
}

/// `check`'s result: the validator's report and the command's output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckResult {
    valid: bool,
    exit_code: u8,
    table: String,
    findings: Value,
    pods_bound: usize,
    claims_allocated: usize,
    groups_running: usize,
    devices: usize,
    devices_allocated: usize,
    running_exempt: usize,
    patched: usize,
    replaced: usize,
    added: usize,
    bound: usize,
    decided: usize,
    bindings: BTreeMap<String, String>,
    new_bindings: BTreeSet<String>,
    evicted: BTreeSet<String>,
    warnings: Vec<String>,
}

/// The cluster's state (or `spec.decisions` applied over it first) judged by the
/// validator, as `gangpack check` judges it: `findings` is exactly what `gangpack check
/// -o json` prints, `table` what `gangpack check` prints, `exitCode` 0 (valid) or 4 (a
/// rule is broken). A broken rule is a result, never an error.
pub fn check(input: &Input, spec: CheckSpec, o: &RequestOptions) -> Result<CheckResult, Error> {
    let decisions = spec.decisions.map(|d| d.input_named("decisions"));
    let (report, warnings) = gangpack_cli::check_report(
        input,
        decisions.as_ref(),
        &o.options("options")?,
        spec.admission,
    )
    .map_err(|f| error::failure(&f))?;
    let table = gangpack_cli::check_table(&report, decisions.is_some(), o.style());
    let findings = serde_json::to_value(&report.findings)
        .map_err(|e| Error::message(IO_ERROR, format!("cannot convert the result: {e}")))?;
    let valid = report.is_valid();
    Ok(CheckResult {
        valid,
        exit_code: if valid { EXIT_OK } else { EXIT_VIOLATIONS },
        table,
        findings,
        pods_bound: report.pods_bound,
        claims_allocated: report.claims_allocated,
        groups_running: report.groups_running,
        devices: report.devices,
        devices_allocated: report.devices_allocated,
        running_exempt: report.running_exempt,
        patched: report.patched,
        replaced: report.replaced,
        added: report.added,
        bound: report.bound,
        decided: report.decided,
        bindings: report.bindings,
        new_bindings: report.new_bindings,
        evicted: report.evicted,
        warnings: o.warnings("options", warnings),
    })
}

/// `diff`'s spec: `--ours` and `--theirs`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DiffSpec {
    ours: Manifests,
    theirs: Manifests,
}

/// What `diff`'s spec must be, for the error when it is missing.
pub const DIFF_SPEC_EXPECTED: &str = "expected { ours, theirs }: the two decision manifests";

/// `diff`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiffResult {
    #[serde(flatten)]
    data: Value,
    same: bool,
    exit_code: u8,
    table: String,
    warnings: Vec<String>,
}

/// Two schedulers' decisions for the same manifests compared, as `gangpack diff`
/// compares them: the fields of the object `gangpack diff -o json` prints, `same`,
/// `table` and `exitCode` 0 (both valid) or 4.
pub fn diff(input: &Input, spec: DiffSpec, o: &RequestOptions) -> Result<DiffResult, Error> {
    let ours = spec.ours.input_named("ours");
    let theirs = spec.theirs.input_named("theirs");
    let report =
        gangpack_cli::diff_report(input, &ours, &theirs, &o.options("options")?, o.style())
            .map_err(|f| error::failure(&f))?;
    Ok(DiffResult {
        data: report.data,
        same: report.same,
        exit_code: report.code,
        table: report.table,
        warnings: o.warnings("options", report.warnings),
    })
}

/// `capacity`'s spec: `--key` / `--whole` and `--gang-pods`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct CapacitySpec {
    /// Left out: the default key; `null`: the whole cluster; else a node label key.
    #[serde(deserialize_with = "key_choice")]
    key: CapacityKey,
    gang_pods: u32,
}

impl Default for CapacitySpec {
    fn default() -> CapacitySpec {
        CapacitySpec {
            key: CapacityKey::Default,
            gang_pods: 8,
        }
    }
}

fn key_choice<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CapacityKey, D::Error> {
    Option::<String>::deserialize(d).map(|k| k.map_or(CapacityKey::Whole, CapacityKey::Label))
}

/// `capacity`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CapacityResult {
    #[serde(flatten)]
    data: Value,
    table: String,
    warnings: Vec<String>,
}

/// Which request shapes the free capacity can still host, per topology domain, as
/// `gangpack capacity` reports it: the fields of the object `gangpack capacity -o json`
/// prints, and `table`.
pub fn capacity(
    input: &Input,
    spec: &CapacitySpec,
    o: &RequestOptions,
) -> Result<CapacityResult, Error> {
    let report =
        gangpack_cli::capacity_report(input, &o.options("options")?, &spec.key, spec.gang_pods)
            .map_err(|f| error::failure(&f))?;
    Ok(CapacityResult {
        data: report.data,
        table: report.table,
        warnings: o.warnings("options", report.warnings),
    })
}

/// `gen`'s options: the command's `--seed`, `--size`, `--kind`, `--features`,
/// `--events` and `-o`.
#[cfg(feature = "gen")]
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GenOptions {
    #[serde(default)]
    seed: u64,
    size: Option<String>,
    kind: Option<String>,
    features: Option<String>,
    #[serde(default)]
    events: bool,
    output: Option<String>,
}

/// `gen`'s result.
#[cfg(feature = "gen")]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GenResult {
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    list: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    events: Option<Vec<Value>>,
}

/// A generated cluster and its workload, as `gangpack gen --seed SEED --size SIZE
/// --kind KIND -o OUTPUT` prints it: `text`, exactly those bytes, and `list`, the same
/// `kind: List` as objects (or `events` with `events: true`).
#[cfg(feature = "gen")]
pub fn generate(o: &GenOptions) -> Result<GenResult, Error> {
    use gangpack_cli::{Size, WorkloadKind};

    let bad = |field: &str, value: &str, allowed: &str| {
        Error::argument(
            format!("options.{field}"),
            format!("invalid value {value:?} (expected {allowed})"),
        )
    };
    let size = match o.size.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("small") => Size::Small,
        Some("medium") => Size::Medium,
        Some("large") => Size::Large,
        Some(_) => {
            return Err(bad(
                "size",
                o.size.as_deref().unwrap_or_default(),
                "small, medium or large",
            ));
        }
    };
    let kind = match o.kind.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("mixed") => WorkloadKind::Mixed,
        Some("gangs") => WorkloadKind::Gangs,
        Some("pods") => WorkloadKind::Pods,
        Some(_) => {
            return Err(bad(
                "kind",
                o.kind.as_deref().unwrap_or_default(),
                "gangs, pods or mixed",
            ));
        }
    };
    let format = match o.output.as_deref() {
        None | Some("yaml") => Format::Yaml,
        Some("json") => Format::Json,
        Some(other) => return Err(bad("output", other, "yaml or json")),
    };
    let features = match o.features.as_deref() {
        None => gangpack::testing::Features::ALL,
        Some(f) => f.parse().map_err(|e: gangpack::testing::FeaturesError| {
            Error::argument("options.features", e.to_string())
        })?,
    };
    let spec = gangpack_cli::GenSpec {
        seed: o.seed,
        size,
        kind,
        features,
    };
    if o.events {
        if o.output.is_some() {
            return Err(bad(
                "output",
                o.output.as_deref().unwrap_or_default(),
                "no output with events: true (the stream is JSON watch events)",
            ));
        }
        let text = spec.events();
        let events = serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                Error::new(
                    IO_ERROR,
                    vec![Problem::message(format!(
                        "cannot read the events back: {e}"
                    ))],
                )
            })?;
        return Ok(GenResult {
            text,
            list: None,
            events: Some(events),
        });
    }
    let list = gangpack_cli::generated_list(&spec);
    let text = gangpack_cli::print_list(&list, format).map_err(|f| error::failure(&f))?;
    Ok(GenResult {
        text,
        list: Some(list),
        events: None,
    })
}

/// `shrink`'s options.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShrinkSpec {
    /// The most judge calls, the input's included.
    pub max_runs: Option<u64>,
    /// Stop after this many milliseconds (hosts with a clock only).
    pub max_time_ms: Option<f64>,
    /// Leave numbers as they are.
    #[serde(default)]
    pub keep_numbers: bool,
    /// The format of candidates and of `text`.
    pub output: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShrinkSize {
    objects: usize,
    items: usize,
    fields: usize,
}

impl From<gangpack_k8s::shrink::Size> for ShrinkSize {
    fn from(s: gangpack_k8s::shrink::Size) -> ShrinkSize {
        ShrinkSize {
            objects: s.objects,
            items: s.items,
            fields: s.fields,
        }
    }
}

/// `shrink`'s result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShrinkResult {
    text: String,
    list: Value,
    runs: u64,
    cached: u64,
    rounds: u32,
    before: ShrinkSize,
    after: ShrinkSize,
    stopped: Option<&'static str>,
}

/// A candidate handed to a judge: its text (a `kind: List` in the input's format or
/// `output`'s) and the same list as objects.
pub struct Candidate<'a> {
    /// The text.
    pub text: &'a str,
    /// The list.
    pub list: &'a Value,
}

/// A failing scenario made small, as `gangpack shrink` makes it: the objects of
/// `input` are cut down (whole objects, then list items, then fields, then numbers)
/// while `judge` says the candidate still fails. `clock` (milliseconds, any epoch)
/// bounds the time when `spec.max_time_ms` is given; without a clock that option is
/// refused. Deterministic: the same input and judge give the same result.
pub fn shrink(
    input: &Input,
    spec: &ShrinkSpec,
    clock: Option<&dyn Fn() -> f64>,
    mut judge: impl FnMut(Candidate<'_>) -> gangpack_k8s::shrink::Verdict,
) -> Result<ShrinkResult, Error> {
    use gangpack_k8s::shrink::{self as shrinker, ShrinkOptions, Stopped, Verdict};

    let files = match input {
        Input::Files(files) => files.clone(),
        Input::Paths(_) => Vec::new(),
    };
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    for f in &files {
        match shrinker::read_objects(&f.text, &f.name) {
            Ok(found) => objects.extend(found),
            Err(errors) => {
                problems.extend(errors.to_string().lines().map(Problem::message));
            }
        }
    }
    if !problems.is_empty() {
        return Err(Error::new(error::INVALID_INPUT, problems));
    }
    let json = files.first().is_some_and(|f| shrinker::is_json(&f.text));
    let format = match spec.output.as_deref() {
        None if json => Format::Json,
        None | Some("yaml") => Format::Yaml,
        Some("json") => Format::Json,
        Some(other) => {
            return Err(Error::argument(
                "options.output",
                format!("invalid value {other:?} (expected yaml or json)"),
            ));
        }
    };
    let options = ShrinkOptions {
        max_runs: spec.max_runs.unwrap_or(ShrinkOptions::DEFAULT_MAX_RUNS),
        numbers: !spec.keep_numbers,
    };
    let deadline = match (spec.max_time_ms, clock) {
        (None, _) => None,
        (Some(ms), Some(now)) => Some((now, now() + ms)),
        (Some(_), None) => {
            return Err(Error::argument(
                "options.maxTimeMs",
                "this host bounds the time itself (the module has no clock)",
            ));
        }
    };
    let mut failed: Option<Error> = None;
    let shrunk = shrinker::shrink(
        objects,
        &options,
        |objects| {
            if deadline.is_some_and(|(now, d)| now() >= d) {
                return Verdict::Stop;
            }
            let list = gangpack_k8s::output::list(objects.to_vec());
            match gangpack_cli::print_list(&list, format) {
                Ok(text) => judge(Candidate {
                    text: &text,
                    list: &list,
                }),
                Err(f) => {
                    failed = Some(error::failure(&f));
                    Verdict::Stop
                }
            }
        },
        |_| {},
    );
    if let Some(e) = failed {
        return Err(e);
    }
    let shrunk = shrunk.map_err(|e| Error::argument("judge", e.to_string()))?;
    let list = gangpack_k8s::output::list(shrunk.objects);
    let text = gangpack_cli::print_list(&list, format).map_err(|f| error::failure(&f))?;
    let stats = shrunk.stats;
    Ok(ShrinkResult {
        text,
        list,
        runs: stats.runs,
        cached: stats.cached,
        rounds: stats.rounds,
        before: stats.before.into(),
        after: stats.after.into(),
        stopped: stats.stopped.map(|s| match s {
            Stopped::MaxRuns => "maxRuns",
            Stopped::Judge => "judge",
        }),
    })
}

/// The judge's answer was not one a judge gives: an [`INVALID_ARGUMENT`] about
/// `judge`, `expected` saying what it returns.
pub fn bad_judge_answer(answer: &str, expected: &str) -> Error {
    Error::new(
        INVALID_ARGUMENT,
        vec![Problem::field(
            "judge",
            format!("returned {answer}: a judge returns {expected}"),
        )],
    )
}
