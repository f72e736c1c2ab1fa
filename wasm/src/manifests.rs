//! The command line's contract on manifest text: `plan`, `explain`, `taint`, and one
//! whole command line for `wasm/js/gangpack.mjs`.
//!
//! Each function hands the texts to `gangpack_cli` (the library the native `gangpack`
//! is built on) and converts the result; nothing is computed here.

use gangpack::ShapeMix;
use gangpack_cli::{
    DEFAULT_KEY, Effect, Failure, Format, Input, InputFile, Options, Policy, Style, TaintRequest,
    TaintTargetSpec,
};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::js::{
    self, INVALID_ARGUMENT, INVALID_INPUT, IO_ERROR, NOT_FOUND, Problem, from_js,
    from_js_or_default, to_js,
};

/// Manifests as JavaScript passes them: one text, or texts each optionally named.
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Manifests {
    /// One text (named `manifests` in messages).
    One(String),
    /// Several, in order.
    Many(Vec<Piece>),
}

/// One text of [`Manifests::Many`].
#[derive(Deserialize)]
#[serde(untagged)]
pub(crate) enum Piece {
    /// A text (named `manifests[i]`).
    Text(String),
    /// A text and the name messages give it (a file name).
    File {
        /// The name.
        name: String,
        /// The text.
        text: String,
    },
}

impl Manifests {
    pub(crate) fn input(self) -> Input {
        self.input_named("manifests")
    }

    /// The input, its texts named `base` (one text) or `base[i]` unless named.
    pub(crate) fn input_named(self, base: &str) -> Input {
        Input::Files(match self {
            Manifests::One(text) => vec![InputFile {
                name: base.to_owned(),
                text,
            }],
            Manifests::Many(pieces) => pieces
                .into_iter()
                .enumerate()
                .map(|(i, p)| match p {
                    Piece::Text(text) => InputFile {
                        name: format!("{base}[{i}]"),
                        text,
                    },
                    Piece::File { name, text } => InputFile { name, text },
                })
                .collect(),
        })
    }
}

/// `manifests` read from JavaScript.
pub(crate) fn manifests(value: JsValue, what: &str) -> Result<Input, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Err(js::error(
            INVALID_ARGUMENT,
            &[Problem::field(
                what,
                "expected manifest text (a string) or an array of strings or { name, text }",
            )],
        ));
    }
    Ok(from_js::<Manifests>(value, what)?.input())
}

/// The options every call takes (the command line's global flags).
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct JsOptions {
    /// The logical clock: RFC 3339 text or seconds since the Unix epoch.
    now: Option<Now>,
    /// `BestFit` (default), `Spread`, `Stranding`, `FGD` (any case, `-` and `_`
    /// ignored: `best-fit`); `FragmentationAware` is FGD, deprecated.
    policy: Option<String>,
    /// The typical shapes Stranding and FGD score against (default: the shapes of the
    /// pods in the manifests).
    workload_mix: Option<ShapeMix>,
    /// Skip invalid objects (warnings) instead of failing.
    #[serde(default)]
    skip_invalid: bool,
    /// Unknown fields are errors.
    #[serde(default)]
    strict: bool,
    /// ANSI colour codes in table text.
    #[serde(default)]
    color: bool,
    /// The demo's seed.
    seed: Option<u64>,
    /// `--step-budget`: the most steps one gang search takes.
    step_budget: Option<u64>,
    /// `--allocator-step-budget`: the most steps one claim allocator call takes.
    allocator_step_budget: Option<u64>,
    /// `--feature-gates PodGroupPreemptionPolicy=true` (default false).
    pod_group_preemption_policy: Option<bool>,
}

/// [`JsOptions::resolve`]'s answer.
pub(crate) struct Resolved {
    /// The command line's options.
    pub(crate) options: Options,
    /// The policy asked for, its mix given if the options give one.
    pub(crate) scoring: crate::session::Scoring,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Now {
    Text(String),
    Seconds(i64),
}

impl JsOptions {
    pub(crate) fn read(value: JsValue, what: &str) -> Result<JsOptions, JsValue> {
        from_js_or_default(value, what)
    }

    /// The library's options for a command (`plan`, `explain`, `taint`, `runCli`);
    /// `what` names the argument in errors.
    pub(crate) fn options(&self, what: &str) -> Result<Options, JsValue> {
        Ok(self.resolve(what)?.options)
    }

    /// The warning a deprecated policy name earns (`FragmentationAware`), for the
    /// results of `plan`, `explain` and `taint` (`runCli` prints what the native
    /// command prints).
    pub(crate) fn deprecation(&self, what: &str) -> Option<String> {
        self.policy
            .as_deref()
            .and_then(|n| crate::session::deprecation(n, &format!("{what}.policy")))
    }

    /// The library's options and the scoring policy they ask for: the command line's
    /// policy of that name, with the given mix, else the mix of the manifests' pods.
    pub(crate) fn resolve(&self, what: &str) -> Result<Resolved, JsValue> {
        let scoring = crate::session::scoring(
            self.policy.as_deref(),
            &format!("{what}.policy"),
            self.workload_mix.clone(),
            &format!("{what}.workloadMix"),
        )?;
        let named = Policy::parse(scoring.policy.name()).ok_or_else(|| {
            js::error(
                INVALID_ARGUMENT,
                &[Problem::field(
                    format!("{what}.policy"),
                    format!("{} is not a placement policy", scoring.policy.name()),
                )],
            )
        })?;
        let now = match &self.now {
            None => None,
            Some(Now::Seconds(s)) => Some(gangpack::Time(*s)),
            Some(Now::Text(t)) => Some(gangpack_cli::parse_rfc3339_arg(t).map_err(|m| {
                js::error(
                    INVALID_ARGUMENT,
                    &[Problem::field(format!("{what}.now"), m)],
                )
            })?),
        };
        let options = Options {
            policy: named,
            workload_mix: self.workload_mix.clone(),
            seed: self.seed.unwrap_or(0),
            skip_invalid: self.skip_invalid,
            strict: self.strict,
            now,
            step_budget: crate::session::step_budget(
                self.step_budget,
                gangpack::DEFAULT_STEP_BUDGET,
                &format!("{what}.stepBudget"),
            )?,
            allocator_step_budget: crate::session::step_budget(
                self.allocator_step_budget,
                gangpack::DEFAULT_ALLOCATOR_STEP_BUDGET,
                &format!("{what}.allocatorStepBudget"),
            )?,
            pod_group_preemption_policy: self.pod_group_preemption_policy.unwrap_or(false),
            ..Options::default()
        };
        Ok(Resolved { options, scoring })
    }

    pub(crate) fn style(&self) -> Style {
        Style::new(self.color)
    }
}

/// A failed command as a thrown error.
pub(crate) fn failure(f: &Failure) -> JsValue {
    match f {
        Failure::Invalid(problems) => {
            let problems: Vec<Problem> = problems.iter().map(problem).collect();
            js::error(INVALID_INPUT, &problems)
        }
        Failure::NotFound(message) => js::error_message(NOT_FOUND, message.clone()),
        Failure::Io(message) => js::error_message(IO_ERROR, message.clone()),
    }
}

/// A command's problem as thrown errors carry it.
pub(crate) fn problem(p: &gangpack_cli::Problem) -> Problem {
    Problem {
        line: p.line.clone(),
        file: p.file.clone(),
        doc: p.doc,
        item: p.item,
        object: p.object.clone(),
        field: p.field.clone(),
        message: p.message.clone(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PlanResult {
    table: String,
    list: serde_json::Value,
    exit_code: u8,
    pending: bool,
    warnings: Vec<String>,
}

/// One scheduling cycle over `manifests`: `{ table, list, exitCode, pending, warnings }`,
/// where `table` is what `gangpack plan` prints and `list` the object `gangpack plan -o
/// json` prints. Throws only for input that cannot be read; pending work is `pending:
/// true` (exit code 3).
#[wasm_bindgen(unchecked_return_type = "PlanResult")]
pub fn plan(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let input = self::manifests(manifests, "manifests")?;
    let o = JsOptions::read(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let report = gangpack_cli::plan_report(&input, &o.options("options")?, o.style())
        .map_err(|f| failure(&f))?;
    to_js(&PlanResult {
        table: report.table,
        list: report.list,
        exit_code: report.code,
        pending: report.code != gangpack_cli::EXIT_OK,
        warnings: o
            .deprecation("options")
            .into_iter()
            .chain(report.warnings)
            .collect(),
    })
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ExplainResult {
    text: String,
    warnings: Vec<String>,
}

/// Why a unit is not placed, as `gangpack explain` prints it: `{ text, warnings }`.
/// `unit` is a PodGroup name (`namespace/name` or `name`), `{ podGroup }`, `{ pod }`, or
/// `null` for every unit that stays pending.
#[wasm_bindgen(unchecked_return_type = "ExplainResult")]
pub fn explain(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "UnitName | null")] unit: Option<JsValue>,
    #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let input = self::manifests(manifests, "manifests")?;
    let unit = unit.unwrap_or(JsValue::UNDEFINED);
    let (group, pod) = if unit.is_undefined() || unit.is_null() {
        (None, None)
    } else {
        match js::unit_name(unit)?.0 {
            js::UnitName::PodGroup(g) => (Some(g), None),
            js::UnitName::Pod(p) => (None, Some(p)),
        }
    };
    let o = JsOptions::read(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let run = gangpack_cli::explain(
        &input,
        &o.options("options")?,
        group.as_deref(),
        pod.as_deref(),
    );
    if let Some(f) = &run.failure {
        return Err(failure(f));
    }
    to_js(&ExplainResult {
        text: run.stdout,
        warnings: o
            .deprecation("options")
            .into_iter()
            .chain(run.warnings)
            .collect(),
    })
}

/// The taint `taint` applies: exactly one of `device`, `node` and `rule`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct TaintSpec {
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
    pub(crate) fn request(self, what: &str) -> Result<TaintRequest, JsValue> {
        let bad = |field: &str, message: String| {
            js::error(
                INVALID_ARGUMENT,
                &[Problem::field(format!("{what}{field}"), message)],
            )
        };
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TaintResult {
    table: String,
    list: serde_json::Value,
    warnings: Vec<String>,
}

/// What a taint would do, as `gangpack taint` prints it: `{ table, list, warnings }`.
/// `spec` is `{ device: "DRIVER/POOL/DEVICE" }`, `{ node }` or `{ rule: <DeviceTaintRule
/// manifest text> }`, with `effect`, `key`, `value` (device and node) and `afterPlan`.
#[wasm_bindgen(unchecked_return_type = "TaintResult")]
pub fn taint(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_param_type = "TaintSpec")] spec: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let input = self::manifests(manifests, "manifests")?;
    let request = from_js::<TaintSpec>(spec, "spec")?.request("spec")?;
    let o = JsOptions::read(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let report = gangpack_cli::taint_report(&input, &o.options("options")?, &request, o.style())
        .map_err(|f| failure(&f))?;
    to_js(&TaintResult {
        table: report.table,
        list: report.list,
        warnings: o
            .deprecation("options")
            .into_iter()
            .chain(report.warnings)
            .collect(),
    })
}

/// A `kind: List` (the `list` of a result) as `-o yaml` or `-o json` prints it.
#[wasm_bindgen(js_name = formatList)]
pub fn format_list(
    #[wasm_bindgen(unchecked_param_type = "KubeList")] list: JsValue,
    #[wasm_bindgen(unchecked_param_type = "\"yaml\" | \"json\"")] format: &str,
) -> Result<String, JsValue> {
    let format = match format {
        "yaml" => Format::Yaml,
        "json" => Format::Json,
        other => {
            return Err(js::error(
                INVALID_ARGUMENT,
                &[Problem::field(
                    "format",
                    format!("unknown format {other:?} (expected yaml or json)"),
                )],
            ));
        }
    };
    let list: serde_json::Value = from_js(list, "list")?;
    gangpack_cli::print_list(&list, format).map_err(|f| failure(&f))
}

/// The demo cluster's manifests (`gangpack demo --manifests`), for `seed` (default 0).
#[wasm_bindgen(js_name = demoManifests)]
pub fn demo_manifests(seed: Option<u32>) -> Result<String, JsValue> {
    gangpack_cli::demo_manifests(u64::from(seed.unwrap_or(0))).map_err(|f| failure(&f))
}

/// One command line, as `wasm/js/gangpack.mjs` hands it over (arguments parsed, files
/// read): the command's stdout, warnings, error lines and exit status.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CliRequest {
    command: String,
    #[serde(default)]
    files: Vec<FileArg>,
    output: Option<String>,
    #[serde(default)]
    options: JsOptions,
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
struct FileArg {
    name: String,
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CliResult {
    stdout: String,
    warnings: Vec<String>,
    errors: Vec<String>,
    code: u8,
}

/// Runs one `gangpack` command (`plan`, `explain`, `taint`, `demo`, `check`, `diff`) on texts the host
/// read: `{ stdout, warnings, errors, code }`, exactly what the native command prints
/// and exits with. Never throws for bad input: that is `code: 2` with `errors`.
#[wasm_bindgen(js_name = runCli, unchecked_return_type = "CliResult")]
pub fn run_cli(
    #[wasm_bindgen(unchecked_param_type = "CliRequest")] request: JsValue,
) -> Result<JsValue, JsValue> {
    let r: CliRequest = from_js(request, "request")?;
    let result = match cli_run(r) {
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
    };
    to_js(&result)
}

fn cli_run(r: CliRequest) -> Result<gangpack_cli::Run, Vec<String>> {
    let lines = |e: JsValue| -> Vec<String> {
        let message = js_sys::Reflect::get(&e, &JsValue::from_str("message"))
            .ok()
            .and_then(|m| m.as_string())
            .unwrap_or_default();
        message.lines().map(str::to_owned).collect()
    };
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
