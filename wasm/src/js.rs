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

/// `name` of an error about invalid manifests or objects.
pub const INVALID_INPUT: &str = "InvalidInput";
/// `name` of an error about an argument of the wrong shape.
pub const INVALID_ARGUMENT: &str = "InvalidArgument";
/// `name` of an error about something that does not exist.
pub const NOT_FOUND: &str = "NotFound";
/// `name` of an error about adding what exists already.
pub const ALREADY_EXISTS: &str = "AlreadyExists";
/// `name` of an error about a change the state refuses.
pub const CONFLICT: &str = "Conflict";
/// `name` of an error about reading or printing.
pub const IO_ERROR: &str = "IoError";

/// One problem, as thrown errors carry it in `problems`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// The whole line, as the command prints it.
    pub line: String,
    /// The file (the name given with the manifests), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The document in the file (1-based), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<usize>,
    /// The item of a `kind: List` (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item: Option<usize>,
    /// The object, `Kind "ns/name"`, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    /// The field path (`spec.devices[0].name`), empty for the whole object.
    pub field: String,
    /// What is wrong.
    pub message: String,
}

impl Problem {
    /// A problem that is only a message.
    pub fn message(message: impl Into<String>) -> Problem {
        let message = message.into();
        Problem {
            line: message.clone(),
            message,
            ..Problem::default()
        }
    }

    /// A problem about one field of an argument.
    pub fn field(field: impl Into<String>, message: impl Into<String>) -> Problem {
        let (field, message) = (field.into(), message.into());
        let line = if field.is_empty() {
            message.clone()
        } else {
            format!("{field}: {message}")
        };
        Problem {
            line,
            field,
            message,
            ..Problem::default()
        }
    }
}

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
    let read = serde_path_to_error::deserialize::<_, Finite>(
        serde_wasm_bindgen::Deserializer::from(value),
    );
    let json = read
        .map_err(|e| {
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
        })?
        .0;
    serde_path_to_error::deserialize(&json).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            what.to_owned()
        } else {
            format!("{what}.{path}")
        };
        error(
            INVALID_ARGUMENT,
            &[Problem::field(field, e.inner().to_string())],
        )
    })
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

/// A unit as JavaScript names it (`UnitName` in the declarations).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum UnitName {
    /// A PodGroup: a string, or `{ podGroup }`.
    PodGroup(String),
    /// `{ pod }`.
    Pod(String),
}

impl UnitName {
    /// The field of the argument that named it, for errors about the name.
    pub(crate) fn field(&self, plain: bool) -> &'static str {
        match (self, plain) {
            (_, true) => "unit",
            (UnitName::PodGroup(_), false) => "unit.podGroup",
            (UnitName::Pod(_), false) => "unit.pod",
        }
    }
}

/// `unit` read as a PodGroup name (`"ns/name"` or `"name"`), `{ podGroup }` or
/// `{ pod }`; the flag says whether it was a plain string.
pub(crate) fn unit_name(value: JsValue) -> Result<(UnitName, bool), JsValue> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Arg {
        Group(String),
        Named(Named),
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase", deny_unknown_fields)]
    struct Named {
        pod_group: Option<String>,
        pod: Option<String>,
    }
    match from_js::<Arg>(value, "unit")? {
        Arg::Group(g) => Ok((UnitName::PodGroup(g), true)),
        Arg::Named(Named {
            pod_group: Some(g),
            pod: None,
        }) => Ok((UnitName::PodGroup(g), false)),
        Arg::Named(Named {
            pod_group: None,
            pod: Some(p),
        }) => Ok((UnitName::Pod(p), false)),
        Arg::Named(_) => Err(error(
            INVALID_ARGUMENT,
            &[Problem::field(
                "unit",
                "give exactly one of podGroup and pod",
            )],
        )),
    }
}
