//! The command line's `check`, `diff`, `capacity` and `gen` as functions returning
//! data: each result holds what the command prints as a table, the object it prints
//! with `-o json`, and its exit status, from one run of the same library function
//! (`gangpack_cli`) the native command calls.

use gangpack_abi::commands::{
    self as cmd, CapacitySpec, CheckSpec, DiffSpec, ShrinkSpec, bad_judge_answer,
};
use wasm_bindgen::JsValue;
use wasm_bindgen::prelude::wasm_bindgen;

use crate::js::{self, from_js_or_default, to_js};
use crate::manifests::{manifests, options as read_options};

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
    let o = read_options(options, "options")?;
    to_js(&cmd::check(&input, spec, &o).map_err(js::from)?)
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
        return Err(js::error(
            js::INVALID_ARGUMENT,
            &[js::Problem::field("spec", cmd::DIFF_SPEC_EXPECTED)],
        ));
    }
    let spec: DiffSpec = js::from_js(spec, "spec")?;
    let o = read_options(options, "options")?;
    to_js(&cmd::diff(&input, spec, &o).map_err(js::from)?)
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
    let o = read_options(options, "options")?;
    to_js(&cmd::capacity(&input, &spec, &o).map_err(js::from)?)
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
    let o: cmd::GenOptions = from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    to_js(&cmd::generate(&o).map_err(js::from)?)
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
    use gangpack_k8s::shrink::Verdict;

    let o: ShrinkSpec = from_js_or_default(options.unwrap_or(JsValue::UNDEFINED), "options")?;
    let input = self::manifests(manifests, "manifests")?;
    let mut thrown: Option<JsValue> = None;
    let mut bad_answer: Option<String> = None;
    let clock = || js_sys::Date::now();
    let shrunk = cmd::shrink(&input, &o, Some(&clock), |c| {
        let answer = to_js(&serde_json::json!({ "text": c.text, "list": c.list }))
            .and_then(|c| judge.call1(&JsValue::NULL, &c));
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
    });
    if let Some(e) = thrown {
        return Err(e);
    }
    if let Some(v) = bad_answer {
        return Err(js::from(bad_judge_answer(
            &v,
            "true (still fails), false (passes) or \"stop\"",
        )));
    }
    to_js(&shrunk.map_err(js::from)?)
}
