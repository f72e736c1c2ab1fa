//! Values across the boundary, and the errors thrown into JavaScript.
//!
//! # Error kinds
//!
//! Every thrown value is a JavaScript `Error` with:
//! - `name`: the kind, one of [`INVALID_INPUT`] (manifests or objects that fail
//!   validation or conversion), [`INVALID_ARGUMENT`] (an argument of the wrong shape:
//!   an options object with an unknown policy, a malformed time), [`NOT_FOUND`] (a
//!   unit, node, device or rule that does not exist), [`ALREADY_EXISTS`], [`CONFLICT`]
//!   (a change the state refuses: a device in use, capacity exceeded) and [`IO_ERROR`]
//!   (and `Freed`, thrown by the package's JavaScript entries, not here: a method of
//!   a freed `Scheduler`, or a freed one passed to a method);
//! - `message`: the native message, every problem on its own line, as the command
//!   line prints them after `error: `;
//! - `problems`: an array of [`Problem`]s, `{ line, file?, doc?, item?, object?,
//!   field, message }` (`file`, `doc`, `item` and `object` are left out when unknown).

use serde::de::DeserializeOwned;
use serde::{Deserialize as _, Serialize};
use wasm_bindgen::{JsCast, JsValue};

pub use gangpack_abi::error::{
    ALREADY_EXISTS, CONFLICT, INVALID_ARGUMENT, INVALID_INPUT, IO_ERROR, NOT_FOUND, Problem,
};

/// A JavaScript `Error` of `kind` carrying `problems` (its message: their lines).
pub fn error(kind: &str, problems: &[Problem]) -> JsValue {
    let message = problems
        .iter()
        .map(|p| p.line.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let e = js_sys::Error::new(&message);
    e.set_name(kind);
    let list = to_js(problems).unwrap_or(JsValue::NULL);
    let _ = js_sys::Reflect::set(&e, &JsValue::from_str("problems"), &list);
    e.unchecked_into()
}

/// A request's error (`gangpack_abi`) as a JavaScript `Error`.
#[allow(
    clippy::needless_pass_by_value,
    reason = "taken by value for `map_err(js::from)`"
)]
pub fn from(e: gangpack_abi::error::Error) -> JsValue {
    error(e.kind, &e.problems)
}

/// [`error`] with one message.
pub fn error_message(kind: &str, message: impl Into<String>) -> JsValue {
    error(kind, &[Problem::message(message)])
}

/// A JSON-compatible JavaScript value of `value` (maps as plain objects, 64-bit
/// integers as numbers).
///
/// Written as JSON text and parsed by the engine's `JSON.parse`: one string crosses
/// the boundary instead of one call per field and value, which makes large results
/// (a 1,000-node `snapshot()`) several times faster than building them value by value
/// with serde-wasm-bindgen, for the same value.
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let text = serde_json::to_string(value)
        .map_err(|e| error_message(IO_ERROR, format!("cannot convert the result: {e}")))?;
    js_sys::JSON::parse(&text)
        .map_err(|_| error_message(IO_ERROR, "cannot convert the result: JSON.parse failed"))
}

/// `value` read as `T`; an error names `what` and the field path that failed.
///
/// The value is read as JSON first and `T` from that, so `#[serde(deny_unknown_fields)]`
/// holds at every depth (serde-wasm-bindgen reads a struct by asking for its known
/// fields only, and a misspelt option would pass silently).
pub fn from_js<T: DeserializeOwned>(value: JsValue, what: &str) -> Result<T, JsValue> {
    let json = to_json(value, what)?;
    gangpack_abi::value::from_value(&json, what).map_err(from)
}

/// `value` as a JSON value, refusing what JSON cannot hold (NaN, functions, ...); an
/// error names `what` and the path that failed.
pub(crate) fn to_json(value: JsValue, what: &str) -> Result<serde_json::Value, JsValue> {
    let read = serde_path_to_error::deserialize::<_, Finite>(
        serde_wasm_bindgen::Deserializer::from(value),
    );
    read.map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            what.to_owned()
        } else {
            format!("{what}.{path}")
        };
        let message = e.inner().to_string();
        // serde_wasm_bindgen gives its errors as JavaScript `Error`s.
        let message = match message.strip_prefix("Error: ") {
            Some(m) if m.starts_with(NOT_FINITE) => m.to_owned(),
            _ => format!("not a JSON-like value: {message}"),
        };
        error(INVALID_ARGUMENT, &[Problem::field(field, message)])
    })
    .map(|f| f.0)
}

/// How the error for a NaN or infinite number starts.
const NOT_FINITE: &str = "not a finite number";

/// A JSON value read from JavaScript, refusing `NaN` and `±Infinity`: JSON has no such
/// numbers, and serde_json would read them as `null` (so that `tolerationSeconds: NaN`
/// would silently mean "forever").
struct Finite(serde_json::Value);

impl<'de> serde::Deserialize<'de> for Finite {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Finite, D::Error> {
        d.deserialize_any(FiniteVisitor).map(Finite)
    }
}

struct FiniteVisitor;

impl<'de> serde::de::Visitor<'de> for FiniteVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-like value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<serde_json::Value, E> {
        serde_json::Number::from_f64(v)
            .map(serde_json::Value::Number)
            .ok_or_else(|| E::custom(format!("{NOT_FINITE}: {v} (JSON has no NaN or Infinity)")))
    }

    fn visit_str<E>(self, v: &str) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<serde_json::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_none<E>(self) -> Result<serde_json::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<serde_json::Value, D::Error> {
        Finite::deserialize(d).map(|f| f.0)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> Result<serde_json::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Finite(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(serde_json::Value::Array(out))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> Result<serde_json::Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some((k, Finite(v))) = map.next_entry::<String, Finite>()? {
            out.insert(k, v);
        }
        Ok(serde_json::Value::Object(out))
    }
}

/// `value` read as `T`, `T::default()` for `undefined` or `null`.
pub fn from_js_or_default<T: DeserializeOwned + Default>(
    value: JsValue,
    what: &str,
) -> Result<T, JsValue> {
    if value.is_undefined() || value.is_null() {
        Ok(T::default())
    } else {
        from_js(value, what)
    }
}

pub(crate) use gangpack_abi::unit::UnitName;

/// `unit` read as a PodGroup name (`"ns/name"` or `"name"`), `{ podGroup }` or
/// `{ pod }`; the flag says whether it was a plain string.
pub(crate) fn unit_name(value: JsValue) -> Result<(UnitName, bool), JsValue> {
    gangpack_abi::unit::unit_name(&to_json(value, "unit")?).map_err(from)
}
