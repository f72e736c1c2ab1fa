//! The operations of the C ABI: a request's JSON bytes in, the response envelope out
//! (`{"ok": RESULT}` or `{"error": {kind, message, problems}}`). Natively testable: the
//! exports (module `exports`, wasm32 only) only move the bytes.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::commands::{self, CapacitySpec, CheckSpec, DiffSpec, TaintSpec};
use crate::error::{Error, INVALID_ARGUMENT};
use crate::manifests::manifests;
use crate::options::RequestOptions;
use crate::value::{from_value, to_json};

/// The host's side of `shrink`: `gangpack_host.judge` over the C ABI.
pub trait Host {
    /// Judges a candidate (its YAML or JSON text): 1 still fails (keep it), 0 passes,
    /// 2 stop; `ctx` is the request's `judgeContext`.
    fn judge(&mut self, ctx: u64, candidate: &str) -> i32;
}

/// Every operation, by the name its export carries after `gangpack_`.
pub const OPS: [&str; 14] = [
    "plan",
    "explain",
    "check",
    "diff",
    "capacity",
    "taint",
    "gen",
    "shrink",
    "cli",
    "allocate",
    "session_new",
    "session_call",
    "session_free",
    "version",
];

/// Runs operation `op` on `request` (JSON bytes): the response envelope.
pub fn call(op: &str, request: &[u8], host: &mut dyn Host) -> String {
    match run(op, request, host) {
        Ok(json) => format!("{{\"ok\":{json}}}"),
        Err(e) => format!(
            "{{\"error\":{}}}",
            serde_json::to_string(&e).unwrap_or_else(|_| String::from("null"))
        ),
    }
}

fn run(op: &str, request: &[u8], host: &mut dyn Host) -> Result<String, Error> {
    match op {
        "plan" => {
            let r = Request::parse(request, &["files", "options"])?;
            to_json(&commands::plan(&r.input()?, &r.options()?)?)
        }
        "explain" => {
            let r = Request::parse(request, &["files", "unit", "options"])?;
            let input = r.input()?;
            let unit = match r.get("unit") {
                None | Some(Value::Null) => None,
                Some(v) => Some(crate::unit::unit_name(v)?.0),
            };
            to_json(&commands::explain(&input, unit.as_ref(), &r.options()?)?)
        }
        "check" => {
            let r = Request::parse(request, &["files", "spec", "options"])?;
            let input = r.input()?;
            let spec: CheckSpec = r.optional("spec")?;
            to_json(&commands::check(&input, spec, &r.options()?)?)
        }
        "diff" => {
            let r = Request::parse(request, &["files", "spec", "options"])?;
            let input = r.input()?;
            let spec: DiffSpec = match r.get("spec") {
                None | Some(Value::Null) => {
                    return Err(Error::argument("spec", commands::DIFF_SPEC_EXPECTED));
                }
                Some(v) => from_value(v, "spec")?,
            };
            to_json(&commands::diff(&input, spec, &r.options()?)?)
        }
        "capacity" => {
            let r = Request::parse(request, &["files", "spec", "options"])?;
            let input = r.input()?;
            let spec: CapacitySpec = r.optional("spec")?;
            to_json(&commands::capacity(&input, &spec, &r.options()?)?)
        }
        "taint" => {
            let r = Request::parse(request, &["files", "spec", "options"])?;
            let input = r.input()?;
            let spec: TaintSpec = r.required("spec", "expected { device | node | rule, ... }")?;
            to_json(&commands::taint(&input, spec, &r.options()?)?)
        }
        "gen" => {
            let r = Request::parse(request, &["options"])?;
            to_json(&commands::generate(&r.optional("options")?)?)
        }
        "shrink" => shrink(request, host),
        "cli" => {
            let value = parse_json(request)?;
            to_json(&commands::run_cli(from_value(&value, "request")?))
        }
        "allocate" => {
            let r = Request::parse(request, &["files", "node", "claims", "stepBudget"])?;
            let input = r.input()?;
            let node: String = r.required("node", "expected the node's name")?;
            let claims: Vec<String> = r.required(
                "claims",
                "expected the claims to allocate, NAMESPACE/NAME each",
            )?;
            let budget = crate::options::step_budget(
                r.optional::<Option<u64>>("stepBudget")?,
                gangpack::DEFAULT_ALLOCATOR_STEP_BUDGET,
                "stepBudget",
            )?;
            to_json(&crate::allocate::allocate(&input, &node, &claims, budget)?)
        }
        "session_new" => {
            let r = Request::parse(request, &["files", "options"])?;
            crate::session::new(&r.fields)
        }
        "session_call" => {
            let value = parse_json(request)?;
            let Value::Object(fields) = value else {
                return Err(Error::argument(
                    "request",
                    format!("expected an object, not {}", kind(&value)),
                ));
            };
            let r = Request { fields };
            let handle: u64 = r.required("handle", "expected the session's handle (a number)")?;
            let method: String = r.required(
                "method",
                &format!(
                    "expected the method, one of {}",
                    crate::session::METHODS.join(", ")
                ),
            )?;
            crate::session::call(handle, &method, &r.fields)
        }
        "session_free" => {
            let r = Request::parse(request, &["handle"])?;
            let handle: u64 = r.required("handle", "expected the session's handle (a number)")?;
            crate::session::free(handle)
        }
        "version" => {
            Request::parse(request, &[])?;
            to_json(&serde_json::json!({ "version": gangpack::VERSION }))
        }
        other => Err(Error::argument(
            "op",
            format!(
                "unknown operation {other:?} (expected one of {})",
                OPS.join(", ")
            ),
        )),
    }
}

fn shrink(request: &[u8], host: &mut dyn Host) -> Result<String, Error> {
    use gangpack_k8s::shrink::Verdict;

    let r = Request::parse(request, &["files", "judgeContext", "options"])?;
    let ctx: u64 = r.required(
        "judgeContext",
        "expected the host's judge context (a number)",
    )?;
    let spec: commands::ShrinkSpec = r.optional("options")?;
    let input = r.input()?;
    let mut bad: Option<i32> = None;
    let result = commands::shrink(&input, &spec, None, |c| match host.judge(ctx, c.text) {
        1 => Verdict::Fails,
        0 => Verdict::Passes,
        2 => Verdict::Stop,
        other => {
            bad = Some(other);
            Verdict::Stop
        }
    });
    if let Some(v) = bad {
        return Err(commands::bad_judge_answer(
            &v.to_string(),
            "1 (still fails), 0 (passes) or 2 (stop)",
        ));
    }
    to_json(&result?)
}

/// `request` as JSON; an error names `request` and where the text is bad.
fn parse_json(request: &[u8]) -> Result<Value, Error> {
    serde_json::from_slice(request)
        .map_err(|e| Error::argument("request", format!("not JSON: {e}")))
}

/// A request object whose fields are read one by one, each error naming its field.
struct Request {
    fields: Map<String, Value>,
}

impl Request {
    /// `request` read as an object with only the fields `allowed`.
    fn parse(request: &[u8], allowed: &[&str]) -> Result<Request, Error> {
        let fields = match parse_json(request)? {
            Value::Object(fields) => fields,
            Value::Null => Map::new(),
            other => {
                return Err(Error::argument(
                    "request",
                    format!("expected an object, not {}", kind(&other)),
                ));
            }
        };
        if let Some(unknown) = fields.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(Error::new(
                INVALID_ARGUMENT,
                vec![crate::error::Problem::field(
                    unknown.clone(),
                    format!(
                        "unknown field (expected {})",
                        if allowed.is_empty() {
                            "none".to_owned()
                        } else {
                            allowed.join(", ")
                        }
                    ),
                )],
            ));
        }
        Ok(Request { fields })
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.fields.get(key)
    }

    /// `files`, required.
    fn input(&self) -> Result<gangpack_cli::Input, Error> {
        Ok(manifests(self.get("files"), "files")?.input_named("files"))
    }

    /// `options`, the defaults when left out.
    fn options(&self) -> Result<RequestOptions, Error> {
        self.optional("options")
    }

    fn optional<T: DeserializeOwned + Default>(&self, key: &str) -> Result<T, Error> {
        crate::value::from_value_or_default(self.get(key), key)
    }

    fn required<T: DeserializeOwned>(&self, key: &str, expected: &str) -> Result<T, Error> {
        match self.get(key) {
            None | Some(Value::Null) => Err(Error::argument(key, expected)),
            Some(v) => from_value(v, key),
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
