//! The command line's `check`, `diff`, `capacity` and `gen` as functions returning
//! data: each result holds what the command prints as a table, the object it prints
//! with `-o json`, and its exit status, from one run of the same library function
//! (`gangpack_cli`) the native command calls.

use gangpack_cli::{CapacityKey, EXIT_OK, EXIT_VIOLATIONS};
use serde::{Deserialize, Serialize};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::js::{from_js_or_default, to_js};
use crate::manifests::{JsOptions, Manifests, failure, manifests};

/// `check`'s second argument: `--decisions` and `--admission`.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CheckSpec {
    decisions: Option<Manifests>,
    #[serde(default)]
    admission: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CheckResult {
    valid: bool,
    exit_code: u8,
    table: String,
    findings: serde_json::Value,
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
    bindings: std::collections::BTreeMap<String, String>,
    new_bindings: std::collections::BTreeSet<String>,
    evicted: std::collections::BTreeSet<String>,
    warnings: Vec<String>,
}

/// The cluster's state (or `spec.decisions` applied over it first) judged by the
/// validator, as `gangpack check` judges it (`CheckResult`): `findings` is exactly what
/// `gangpack check -o json` prints, `table` what `gangpack check` prints, `exitCode` 0
/// (valid) or 4 (a rule is broken). A broken rule is a result, never an error.
#[wasm_bindgen(unchecked_return_type = "CheckResult")]
pub fn check(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "CheckSpec | null")] spec: Option<JsValue>,
    #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let input = self::manifests(manifests, "manifests")?;
    let spec: CheckSpec = from_js_or_default(spec.unwrap_or(JsValue::UNDEFINED), "spec")?;
    let decisions = spec.decisions.map(|d| d.input_named("decisions"));
    let o = JsOptions::read(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let (report, warnings) = gangpack_cli::check_report(
        &input,
        decisions.as_ref(),
        &o.options("options")?,
        spec.admission,
    )
    .map_err(|f| failure(&f))?;
    let table = gangpack_cli::check_table(&report, decisions.is_some(), o.style());
    let findings = to_value(&report.findings)?;
    let valid = report.is_valid();
    to_js(&CheckResult {
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
        warnings: o
            .deprecation("options")
            .into_iter()
            .chain(warnings)
            .collect(),
    })
}

/// `diff`'s second argument: `--ours` and `--theirs`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DiffSpec {
    ours: Manifests,
    theirs: Manifests,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DiffResult {
    #[serde(flatten)]
    data: serde_json::Value,
    same: bool,
    exit_code: u8,
    table: String,
    warnings: Vec<String>,
}

/// Two schedulers' decisions for the same manifests compared, as `gangpack diff`
/// compares them (`DiffResult`): the fields of the object `gangpack diff -o json`
/// prints, `same` (the two place and evict the same pods on the same nodes), `table`
/// (what `gangpack diff` prints) and `exitCode` 0 (both valid) or 4.
#[wasm_bindgen(unchecked_return_type = "DiffResult")]
pub fn diff(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_param_type = "DiffSpec")] spec: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let input = self::manifests(manifests, "manifests")?;
    if spec.is_undefined() || spec.is_null() {
        return Err(crate::js::error(
            crate::js::INVALID_ARGUMENT,
            &[crate::js::Problem::field(
                "spec",
                "expected { ours, theirs }: the two decision manifests",
            )],
        ));
    }
    let spec: DiffSpec = crate::js::from_js(spec, "spec")?;
    let ours = spec.ours.input_named("ours");
    let theirs = spec.theirs.input_named("theirs");
    let o = JsOptions::read(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let report =
        gangpack_cli::diff_report(&input, &ours, &theirs, &o.options("options")?, o.style())
            .map_err(|f| failure(&f))?;
    to_js(&DiffResult {
        data: report.data,
        same: report.same,
        exit_code: report.code,
        table: report.table,
        warnings: o
            .deprecation("options")
            .into_iter()
            .chain(report.warnings)
            .collect(),
    })
}

/// `capacity`'s second argument: `--key` / `--whole` and `--gang-pods`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
struct CapacitySpec {
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CapacityResult {
    #[serde(flatten)]
    data: serde_json::Value,
    table: String,
    warnings: Vec<String>,
}

/// Which request shapes the free capacity can still host, per topology domain, as
/// `gangpack capacity` reports it (`CapacityResult`): the fields of the object
/// `gangpack capacity -o json` prints, and `table` (what `gangpack capacity` prints).
/// `spec.key`: a node label (`--key`), `null` for the whole cluster (`--whole`), left
/// out for the first PodGroup topology key; `spec.gangPods` (`--gang-pods`, default 8).
#[wasm_bindgen(unchecked_return_type = "CapacityResult")]
pub fn capacity(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "CapacitySpec | null")] spec: Option<JsValue>,
    #[wasm_bindgen(unchecked_optional_param_type = "Options")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    let input = self::manifests(manifests, "manifests")?;
    let spec: CapacitySpec = from_js_or_default(spec.unwrap_or(JsValue::UNDEFINED), "spec")?;
    let o = JsOptions::read(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let report =
        gangpack_cli::capacity_report(&input, &o.options("options")?, &spec.key, spec.gang_pods)
            .map_err(|f| failure(&f))?;
    to_js(&CapacityResult {
        data: report.data,
        table: report.table,
        warnings: o
            .deprecation("options")
            .into_iter()
            .chain(report.warnings)
            .collect(),
    })
}

fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, JsValue> {
    serde_json::to_value(value).map_err(|e| {
        crate::js::error_message(
            crate::js::IO_ERROR,
            format!("cannot convert the result: {e}"),
        )
    })
}

/// `gen`'s options: the command's `--seed`, `--size`, `--kind`, `--features`,
/// `--events` and `-o`. An object, so that options the command gains later are new
/// fields.
#[cfg(feature = "gen")]
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct GenOptions {
    #[serde(default)]
    seed: u64,
    size: Option<String>,
    kind: Option<String>,
    features: Option<String>,
    #[serde(default)]
    events: bool,
    output: Option<String>,
}

#[cfg(feature = "gen")]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GenResult {
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    list: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    events: Option<Vec<serde_json::Value>>,
}

/// A generated cluster and its workload, as `gangpack gen --seed SEED --size SIZE
/// --kind KIND -o OUTPUT` prints it (`GenResult`): `text`, exactly those bytes (YAML by
/// default), and `list`, the same `kind: List` as objects. The same options give the
/// same bytes on every machine, natively and here.
#[cfg(feature = "gen")]
#[wasm_bindgen(js_name = "gen", unchecked_return_type = "GenResult")]
pub fn generate(
    #[wasm_bindgen(unchecked_optional_param_type = "GenOptions")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    use gangpack_cli::{Format, Size, WorkloadKind};

    let o: GenOptions = from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let bad = |field: &str, value: &str, allowed: &str| {
        crate::js::error(
            crate::js::INVALID_ARGUMENT,
            &[crate::js::Problem::field(
                format!("options.{field}"),
                format!("invalid value {value:?} (expected {allowed})"),
            )],
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
            crate::js::error(
                crate::js::INVALID_ARGUMENT,
                &[crate::js::Problem::field("options.features", e.to_string())],
            )
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
            .into_iter::<serde_json::Value>()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                crate::js::error(
                    crate::js::IO_ERROR,
                    &[crate::js::Problem::message(format!(
                        "cannot read the events back: {e}"
                    ))],
                )
            })?;
        return to_js(&GenResult {
            text,
            list: None,
            events: Some(events),
        });
    }
    let list = gangpack_cli::generated_list(&spec);
    let text = gangpack_cli::print_list(&list, format).map_err(|f| failure(&f))?;
    to_js(&GenResult {
        text,
        list: Some(list),
        events: None,
    })
}

/// `shrink`'s options.
#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ShrinkSpec {
    max_runs: Option<u64>,
    max_time_ms: Option<f64>,
    #[serde(default)]
    keep_numbers: bool,
    output: Option<String>,
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

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ShrinkResult {
    text: String,
    list: serde_json::Value,
    runs: u64,
    cached: u64,
    rounds: u32,
    before: ShrinkSize,
    after: ShrinkSize,
    stopped: Option<&'static str>,
}

/// A failing scenario made small, as `gangpack shrink` makes it (`ShrinkResult`): the
/// objects of `manifests` are cut down (whole objects, then list items, then fields,
/// then numbers) while `judge` says the candidate still fails. `judge` is called with
/// `{ text, list }` (the candidate as a `kind: List`, in the input's format, and as
/// objects) and returns `true` (still fails: keep it), `false` (passes: drop it) or
/// `"stop"`; it must be synchronous. A judge that throws stops the shrink and the error
/// is rethrown. Deterministic: the same input and judge give the same result.
#[wasm_bindgen(unchecked_return_type = "ShrinkResult")]
pub fn shrink(
    #[wasm_bindgen(unchecked_param_type = "Manifests")] manifests: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ShrinkJudge")] judge: &js_sys::Function,
    #[wasm_bindgen(unchecked_optional_param_type = "ShrinkOptions")] options: Option<JsValue>,
) -> Result<JsValue, JsValue> {
    use gangpack_cli::Format;
    use gangpack_k8s::shrink::{self as shrinker, ShrinkOptions, Stopped, Verdict};

    let o: ShrinkSpec = from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let input = self::manifests(manifests, "manifests")?;
    let files = match &input {
        gangpack_cli::Input::Files(files) => files.clone(),
        gangpack_cli::Input::Paths(_) => Vec::new(),
    };
    let mut objects = Vec::new();
    let mut problems = Vec::new();
    for f in &files {
        match shrinker::read_objects(&f.text, &f.name) {
            Ok(found) => objects.extend(found),
            Err(errors) => {
                problems.extend(errors.to_string().lines().map(crate::js::Problem::message));
            }
        }
    }
    if !problems.is_empty() {
        return Err(crate::js::error(crate::js::INVALID_INPUT, &problems));
    }
    let json = files.first().is_some_and(|f| shrinker::is_json(&f.text));
    let format = match o.output.as_deref() {
        None if json => Format::Json,
        None | Some("yaml") => Format::Yaml,
        Some("json") => Format::Json,
        Some(other) => {
            return Err(crate::js::error(
                crate::js::INVALID_ARGUMENT,
                &[crate::js::Problem::field(
                    "options.output",
                    format!("invalid value {other:?} (expected yaml or json)"),
                )],
            ));
        }
    };
    let options = ShrinkOptions {
        max_runs: o.max_runs.unwrap_or(ShrinkOptions::DEFAULT_MAX_RUNS),
        numbers: !o.keep_numbers,
    };
    let deadline = o.max_time_ms.map(|ms| js_sys::Date::now() + ms);
    let mut thrown: Option<JsValue> = None;
    let mut bad_answer: Option<String> = None;
    let candidate = |objects: &[serde_json::Value]| -> Result<JsValue, JsValue> {
        let list = gangpack_k8s::output::list(objects.to_vec());
        let text = gangpack_cli::print_list(&list, format).map_err(|f| failure(&f))?;
        to_js(&serde_json::json!({ "text": text, "list": list }))
    };
    let shrunk = shrinker::shrink(
        objects,
        &options,
        |objects| {
            if deadline.is_some_and(|d| js_sys::Date::now() >= d) {
                return Verdict::Stop;
            }
            let answer = candidate(objects).and_then(|c| judge.call1(&JsValue::NULL, &c));
            match answer {
                Ok(v) if v.as_bool() == Some(true) => Verdict::Fails,
                Ok(v) if v.as_bool() == Some(false) => Verdict::Passes,
                Ok(v) if v.as_string().as_deref() == Some("stop") => Verdict::Stop,
                Ok(v) => {
                    bad_answer = Some(format!("{v:?}"));
                    Verdict::Stop
                }
                Err(e) => {
                    thrown = Some(e);
                    Verdict::Stop
                }
            }
        },
        |_| {},
    );
    if let Some(e) = thrown {
        return Err(e);
    }
    if let Some(v) = bad_answer {
        return Err(crate::js::error(
            crate::js::INVALID_ARGUMENT,
            &[crate::js::Problem::field(
                "judge",
                format!(
                    "returned {v}: a judge returns true (still fails), false (passes) or \"stop\""
                ),
            )],
        ));
    }
    let shrunk = shrunk.map_err(|e| {
        crate::js::error(
            crate::js::INVALID_ARGUMENT,
            &[crate::js::Problem::field("judge", e.to_string())],
        )
    })?;
    let list = gangpack_k8s::output::list(shrunk.objects);
    let text = gangpack_cli::print_list(&list, format).map_err(|f| failure(&f))?;
    let stats = shrunk.stats;
    to_js(&ShrinkResult {
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
