//! Reading objects from files, directories and stdin.
//!
//! A text is JSON when its first non-blank character is `{` or `[` (read with
//! serde_json, so numbers stay exact; several concatenated JSON documents are allowed),
//! otherwise multi-document YAML. Every document must be a Kubernetes object (a
//! mapping with `apiVersion`, `kind` and `metadata.name`) or a list of them (`kind:
//! List`, or `PodList`, `NodeList`, ... whose items may omit `apiVersion` / `kind`).
//! Empty documents are skipped; objects of kinds gangpack does not read are skipped
//! with a [`Warning`]. Every problem is collected and the load fails as a whole.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use crate::object::{InputError, InputErrors, Kind, Object, Source, Warning};

/// What a load read: the objects gangpack models, in input order, and warnings
/// (unknown kinds skipped, ...).
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The objects, in input order.
    pub objects: Vec<Object>,
    /// What was skipped or reinterpreted.
    pub warnings: Vec<Warning>,
}

impl Loaded {
    /// Appends another load (objects and warnings keep their order).
    pub fn extend(&mut self, other: Loaded) {
        self.objects.extend(other.objects);
        self.warnings.extend(other.warnings);
    }
}

/// The name `-` (stdin) gets in sources.
pub const STDIN_NAME: &str = "<stdin>";

/// Reads every path (`-` is stdin; a directory is read recursively, `*.yaml`, `*.yml`
/// and `*.json`, sorted by path).
pub fn load_paths<P: AsRef<Path>>(paths: &[P]) -> Result<Loaded, InputErrors> {
    let mut loaded = Loaded::default();
    let mut errors = InputErrors::default();
    for p in paths {
        let path = p.as_ref();
        if path == Path::new("-") {
            let mut text = String::new();
            match std::io::stdin().read_to_string(&mut text) {
                Ok(_) => merge(load_str(&text, STDIN_NAME), &mut loaded, &mut errors),
                Err(e) => errors.push(file_error(STDIN_NAME, &e)),
            }
            continue;
        }
        let files = if path.is_dir() {
            let mut files = Vec::new();
            if let Err(e) = walk(path, &mut files) {
                errors.push(file_error(&path.display().to_string(), &e));
            }
            files.sort();
            files
        } else {
            vec![path.to_path_buf()]
        };
        for file in files {
            let name = file.display().to_string();
            match std::fs::read_to_string(&file) {
                Ok(text) => merge(load_str(&text, &name), &mut loaded, &mut errors),
                Err(e) => errors.push(file_error(&name, &e)),
            }
        }
    }
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(errors)
    }
}

fn merge(result: Result<Loaded, InputErrors>, loaded: &mut Loaded, errors: &mut InputErrors) {
    match result {
        Ok(l) => loaded.extend(l),
        Err(e) => errors.extend(e),
    }
}

fn file_error(file: &str, e: &std::io::Error) -> InputError {
    InputError {
        source: None,
        object: None,
        field: String::new(),
        message: format!("cannot read {file}: {e}"),
    }
}

/// The `*.yaml`, `*.yml` and `*.json` files under `dir`, recursively.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Reads one text (multi-document YAML or JSON); `file` names it in errors.
pub fn load_str(text: &str, file: &str) -> Result<Loaded, InputErrors> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader {
        file,
        loaded: Loaded::default(),
        errors: InputErrors::default(),
    };
    let first = text.trim_start().chars().next();
    if matches!(first, Some('{' | '[')) {
        reader.json(text);
    } else {
        reader.yaml(text);
    }
    if reader.errors.is_empty() {
        Ok(reader.loaded)
    } else {
        Err(reader.errors)
    }
}

struct Reader<'a> {
    file: &'a str,
    loaded: Loaded,
    errors: InputErrors,
}

impl Reader<'_> {
    fn source(&self, doc: usize, item: Option<usize>) -> Source {
        Source {
            file: self.file.to_owned(),
            doc,
            item,
        }
    }

    fn error(&mut self, source: Option<Source>, object: Option<String>, field: &str, msg: String) {
        self.errors.push(InputError {
            source,
            object,
            field: field.to_owned(),
            message: msg,
        });
    }

    fn json(&mut self, text: &str) {
        let stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        for (i, doc) in stream.enumerate() {
            let doc_no = i + 1;
            match doc {
                Ok(v) => self.document(v, doc_no),
                Err(e) => {
                    let src = self.source(doc_no, None);
                    let msg = with_position("JSON syntax error", &e.to_string(), || {
                        Some((e.line(), e.column()))
                    });
                    self.error(Some(src), None, "", msg);
                    // The stream cannot resynchronize after a syntax error.
                    return;
                }
            }
        }
    }

    fn yaml(&mut self, text: &str) {
        for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
            let doc_no = i + 1;
            match Value::deserialize(doc) {
                Ok(v) => self.document(v, doc_no),
                Err(e) => {
                    let src = self.source(doc_no, None);
                    let msg = with_position("YAML syntax error", &e.to_string(), || {
                        e.location().map(|l| (l.line(), l.column()))
                    });
                    self.error(Some(src), None, "", msg);
                    // The parser cannot resynchronize after an error: stop at this file.
                    return;
                }
            }
        }
    }

    /// One document: skipped when empty, a List, or one object.
    fn document(&mut self, v: Value, doc: usize) {
        if v.is_null() {
            return;
        }
        let Value::Object(map) = &v else {
            let src = self.source(doc, None);
            self.error(
                Some(src),
                None,
                "",
                format!(
                    "expected a Kubernetes object (a mapping with apiVersion, kind and metadata), found {}",
                    json_type(&v)
                ),
            );
            return;
        };
        let kind = map.get("kind").and_then(Value::as_str);
        let is_list = kind.is_some_and(|k| k == "List" || k.ends_with("List"))
            && map
                .get("items")
                .is_some_and(|i| i.is_array() || i.is_null());
        if !is_list {
            self.object(v, self.source(doc, None), None);
            return;
        }
        // `kind: List` (kubectl), or `PodList` & co. (the API), whose items may lack
        // apiVersion and kind.
        let list_kind = kind.unwrap_or_default();
        let item_kind = list_kind.strip_suffix("List").filter(|k| !k.is_empty());
        let api_version = map.get("apiVersion").and_then(Value::as_str);
        let defaults = item_kind
            .zip(api_version)
            .map(|(k, a)| (k.to_owned(), a.to_owned()));
        let Some(Value::Array(items)) = v.get("items").cloned() else {
            return;
        };
        for (i, item) in items.into_iter().enumerate() {
            let src = self.source(doc, Some(i));
            if item.is_null() {
                continue;
            }
            self.object(item, src, defaults.as_ref());
        }
    }

    /// One object: checked for apiVersion, kind and name, then kept or skipped.
    fn object(&mut self, mut v: Value, src: Source, defaults: Option<&(String, String)>) {
        let Value::Object(map) = &mut v else {
            let msg = format!("expected a Kubernetes object, found {}", json_type(&v));
            self.error(Some(src), None, "", msg);
            return;
        };
        if let Some((kind, api_version)) = defaults {
            if !map.contains_key("kind") {
                map.insert("kind".into(), Value::String(kind.clone()));
            }
            if !map.contains_key("apiVersion") {
                map.insert("apiVersion".into(), Value::String(api_version.clone()));
            }
        }
        let api_version = self.string_field(map.get("apiVersion"), &src, None, "apiVersion");
        let kind = self.string_field(map.get("kind"), &src, None, "kind");
        let (Some(api_version), Some(kind)) = (api_version, kind) else {
            return;
        };
        let metadata = map.get("metadata");
        let name = self.string_field(
            metadata.and_then(|m| m.get("name")),
            &src,
            Some(&kind),
            "metadata.name",
        );
        let namespace = metadata
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
            .map(str::to_owned);
        let Some(name) = name else {
            return;
        };
        let Some(k) = Kind::from_type(&api_version, &kind) else {
            let message = match Kind::ALL.into_iter().find(|k| k.as_str() == kind) {
                Some(known) => {
                    let also = if known == Kind::DeviceTaintRule {
                        " (or resource.k8s.io/v1alpha3)"
                    } else {
                        ""
                    };
                    format!(
                        "skipped: apiVersion {api_version} is not read for {kind} (gangpack reads {}{also})",
                        known.api_version()
                    )
                }
                None => format!("skipped: {kind} ({api_version}) is not a kind gangpack reads"),
            };
            let object = match &namespace {
                Some(ns) => format!("{kind} \"{ns}/{name}\""),
                None => format!("{kind} \"{name}\""),
            };
            self.loaded.warnings.push(Warning {
                source: Some(src),
                object: Some(object),
                message,
            });
            return;
        };
        let namespace = k
            .is_namespaced()
            .then(|| namespace.unwrap_or_else(|| "default".to_owned()));
        self.loaded.objects.push(Object {
            source: src,
            kind: k,
            namespace,
            name,
            raw: v,
        });
    }

    /// A required, non-empty string field; records the error when it is not one.
    fn string_field(
        &mut self,
        v: Option<&Value>,
        src: &Source,
        kind: Option<&str>,
        field: &str,
    ) -> Option<String> {
        let object = kind.map(str::to_owned);
        match v {
            Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
            None | Some(Value::Null | Value::String(_)) => {
                self.error(Some(src.clone()), object, field, "required value".into());
                None
            }
            Some(other) => {
                let msg = format!("must be a string, found {}", json_type(other));
                self.error(Some(src.clone()), object, field, msg);
                None
            }
        }
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// `what: message`, with ` at line L column C` appended when the parser's message does
/// not say where.
fn with_position(
    what: &str,
    message: &str,
    position: impl FnOnce() -> Option<(usize, usize)>,
) -> String {
    match position() {
        Some((line, column)) if !message.contains(" at line ") => {
            format!("{what}: {message} at line {line} column {column}")
        }
        _ => format!("{what}: {message}"),
    }
}
