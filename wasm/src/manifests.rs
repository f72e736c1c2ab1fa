//! The command line's contract on manifest text: `plan`, `explain`, `taint`, and one
//! whole command line for `wasm/js/gangpack.mjs`.
//!
//! Each function reads its JavaScript arguments and hands them to `gangpack_abi` (the
//! requests and results the C-ABI module shares), which runs `gangpack_cli` (the
//! library the native `gangpack` is built on); nothing is computed here.

use gangpack_abi::commands::{self, CliRequest, TaintSpec};
use gangpack_cli::{Failure, Format, Input};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::js::{self, INVALID_ARGUMENT, Problem, from_js, from_js_or_default, to_js};

pub(crate) use gangpack_abi::manifests::Manifests;
/// The options every call takes (the command line's global flags).
pub(crate) use gangpack_abi::options::RequestOptions as JsOptions;

/// `manifests` read from JavaScript.
pub(crate) fn manifests(value: JsValue, what: &str) -> Result<Input, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Err(js::error(
            INVALID_ARGUMENT,
            &[Problem::field(what, gangpack_abi::manifests::EXPECTED)],
        ));
    }
    Ok(from_js::<Manifests>(value, what)?.input())
}

/// The options argument (`undefined` or `null`: the defaults).
pub(crate) fn options(value: Option<JsValue>, what: &str) -> Result<JsOptions, JsValue> {
    from_js_or_default(value.unwrap_or(JsValue::UNDEFINED), what)
}

/// A failed command as a thrown error.
pub(crate) fn failure(f: &Failure) -> JsValue {
    js::from(gangpack_abi::error::failure(f))
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
    let o = self::options(options, "options")?;
    to_js(&commands::plan(&input, &o).map_err(js::from)?)
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
    let unit = if unit.is_undefined() || unit.is_null() {
        None
    } else {
        Some(js::unit_name(unit)?.0)
    };
    let o = self::options(options, "options")?;
    to_js(&commands::explain(&input, unit.as_ref(), &o).map_err(js::from)?)
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
    let spec = from_js::<TaintSpec>(spec, "spec")?;
    let o = self::options(options, "options")?;
    to_js(&commands::taint(&input, spec, &o).map_err(js::from)?)
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

/// Runs one `gangpack` command (`plan`, `explain`, `taint`, `demo`, `check`, `diff`) on texts the host
/// read: `{ stdout, warnings, errors, code }`, exactly what the native command prints
/// and exits with. Never throws for bad input: that is `code: 2` with `errors`.
#[wasm_bindgen(js_name = runCli, unchecked_return_type = "CliResult")]
pub fn run_cli(
    #[wasm_bindgen(unchecked_param_type = "CliRequest")] request: JsValue,
) -> Result<JsValue, JsValue> {
    let r: CliRequest = from_js(request, "request")?;
    to_js(&commands::run_cli(r))
}
