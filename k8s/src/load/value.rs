//! One document handed over on its own, as text or as a value: what one watch event
//! holds ([`crate::watch`]), read exactly as the loader reads a document of a file.

use std::cell::RefCell;

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::{Checked, DUPLICATE, Keys, LoadOptions, Loaded, Reader, ValueSeed, too_deep};
use crate::object::{InputErrors, Source};

/// Reads one object (not a List) given as a JSON value, as the document at `source`:
/// its `apiVersion` converted into the version gangpack reads, unknown fields warned
/// (errors with [`LoadOptions::strict`]), its annotations' size checked. An object of
/// a kind gangpack does not read loads as nothing, with a warning; a missing
/// `apiVersion`, `kind` or `metadata.name`, or an `apiVersion` Kubernetes 1.37 does not
/// serve, is an error naming the object and the field.
///
/// ```
/// use gangpack_k8s::{Source, load::load_value};
///
/// let pod = serde_json::json!({
///     "apiVersion": "v1", "kind": "Pod",
///     "metadata": {"name": "web", "namespace": "shop"},
///     "spec": {"containers": [{"name": "c", "image": "nginx"}]},
/// });
/// let source = Source { file: "pods.json".into(), doc: 3, item: None };
/// let loaded = load_value(pod, source, &Default::default()).unwrap();
/// assert_eq!(loaded.objects[0].describe(), "Pod \"shop/web\"");
/// assert_eq!(loaded.objects[0].source.doc, 3);
/// ```
pub fn load_value(
    value: Value,
    source: Source,
    options: &LoadOptions,
) -> Result<Loaded, InputErrors> {
    let file = source.file.clone();
    let mut reader = Reader {
        file: &file,
        options: *options,
        loaded: Loaded::default(),
        errors: InputErrors::default(),
        seen: super::Seen::default(),
    };
    reader.object(value, source, None);
    if reader.errors.is_empty() {
        Ok(reader.loaded)
    } else {
        Err(reader.errors)
    }
}

/// Where a JSON document that does not parse went wrong: the line and column within
/// its text (1-based) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct JsonError {
    /// The line within the document's text.
    pub(crate) line: usize,
    /// The column within that line.
    pub(crate) column: usize,
    /// What is wrong, without the position.
    pub(crate) message: String,
}

/// Parses one JSON document as the loader parses JSON: numbers exact, nesting at most
/// [`Limits::MAX_NESTING`](super::Limits::MAX_NESTING) deep, and a key defined twice in
/// one mapping an error, never merged.
pub(crate) fn json_document(text: &str) -> Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = Checked::deserialize_from(&mut de).and_then(|v| de.end().map(|()| v));
    parsed.map_err(|e| JsonError {
        line: e.line(),
        column: e.column(),
        message: json_message(&e),
    })
}

/// The message of a JSON error, without its position: `mapping key "x" already
/// defined`, the nesting limit, or `JSON syntax error: ...`.
pub(super) fn json_message(e: &serde_json::Error) -> String {
    let message = e.to_string();
    let bare = message.split(" at line ").next().unwrap_or(&message);
    if message.starts_with(DUPLICATE) {
        bare.to_owned()
    } else if message.starts_with("recursion limit exceeded") {
        too_deep("JSON", "")
    } else {
        format!("JSON syntax error: {bare}")
    }
}

impl Checked {
    /// A [`Checked`] document from `de`.
    fn deserialize_from<'de, D: serde::Deserializer<'de>>(de: D) -> Result<Value, D::Error> {
        let keys = RefCell::new(Keys::default());
        (ValueSeed { keys: &keys }).deserialize(de)
    }
}

#[cfg(test)]
mod tests {
    use super::json_document;

    #[test]
    fn a_document_parses_or_says_where_it_does_not() {
        assert_eq!(
            json_document("{\"a\": [1, 2]}\n").unwrap(),
            serde_json::json!({"a": [1, 2]})
        );
        let dup = json_document("{\n  \"a\": 1,\n  \"a\": 2\n}").unwrap_err();
        assert_eq!(
            (dup.line, dup.message.as_str()),
            (3, "mapping key \"a\" already defined")
        );
        let bad = json_document("{\n  \"a\": nope\n}").unwrap_err();
        assert_eq!(bad.line, 2);
        assert!(bad.message.starts_with("JSON syntax error: "), "{bad:?}");
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let deep = json_document(&deep).unwrap_err();
        assert!(deep.message.contains("nested more than 128"), "{deep:?}");
        assert!(json_document("{} {}").is_err());
    }
}
