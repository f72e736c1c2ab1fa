//! Arguments read from JSON values, every error naming the field that failed.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::Error;

/// `value` read as `T`; an [`INVALID_ARGUMENT`](crate::error::INVALID_ARGUMENT) error
/// names `what` and the path that failed (`options.stepBudget`).
pub fn from_value<T: DeserializeOwned>(value: &Value, what: &str) -> Result<T, Error> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            what.to_owned()
        } else {
            format!("{what}.{path}")
        };
        Error::argument(field, e.inner().to_string())
    })
}

/// [`from_value`], `T::default()` for `null` or a missing value.
pub fn from_value_or_default<T: DeserializeOwned + Default>(
    value: Option<&Value>,
    what: &str,
) -> Result<T, Error> {
    match value {
        None | Some(Value::Null) => Ok(T::default()),
        Some(v) => from_value(v, what),
    }
}

/// `value` as JSON text.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    serde_json::to_string(value).map_err(|e| {
        Error::message(
            crate::error::IO_ERROR,
            format!("cannot convert the result: {e}"),
        )
    })
}
