//! One watch event read from its text: its type, and its object read as the loader
//! reads a document.

use std::fmt;

use serde_json::Value;

use super::frame::Frame;
use crate::load::{LoadOptions, json_document, load_value};
use crate::object::{InputError, InputErrors, Object, Source, Warning};

/// The `type` of a watch event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EventType {
    /// The object was created (or is listed at the start of the watch).
    Added,
    /// The object changed: the event carries it whole, as it is now.
    Modified,
    /// The object was deleted: the event carries it as it last was.
    Deleted,
    /// A progress mark (only `resourceVersion`): nothing changed.
    Bookmark,
    /// The watch failed: the event carries a `Status` (410 Gone: the watch expired).
    Error,
}

impl EventType {
    /// Every type, as Kubernetes spells it.
    pub const ALL: [EventType; 5] = [
        EventType::Added,
        EventType::Modified,
        EventType::Deleted,
        EventType::Bookmark,
        EventType::Error,
    ];

    /// `ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK` or `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
            EventType::Bookmark => "BOOKMARK",
            EventType::Error => "ERROR",
        }
    }

    /// The type of its name (exactly as Kubernetes spells it).
    pub fn parse(name: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `Status` of an `ERROR` event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// `code` (410 when the watch expired).
    pub code: Option<i64>,
    /// `reason` (`Expired`, `Gone`, `InternalError`, ...).
    pub reason: Option<String>,
    /// `message`.
    pub message: Option<String>,
}

impl Status {
    /// Whether the watch expired (`410 Gone`, reason `Expired` or `Gone`): the events
    /// since the resourceVersion it started from are no longer kept, and the client
    /// must list again.
    pub fn is_expired(&self) -> bool {
        self.code == Some(410) || matches!(self.reason.as_deref(), Some("Expired" | "Gone"))
    }

    fn of(object: &Value) -> Status {
        let text = |k: &str| {
            object
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        Status {
            code: object.get("code").and_then(Value::as_i64),
            reason: text("reason"),
            message: text("message"),
        }
    }
}

impl fmt::Display for Status {
    /// `410 Expired: too old resource version: 12 (34)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if let Some(c) = self.code {
            parts.push(c.to_string());
        }
        if let Some(r) = &self.reason {
            parts.push(r.clone());
        }
        let head = if parts.is_empty() {
            "no code".to_owned()
        } else {
            parts.join(" ")
        };
        match &self.message {
            Some(m) => write!(f, "{head}: {m}"),
            None => f.write_str(&head),
        }
    }
}

/// A watch event, read.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `ADDED`, `MODIFIED` or `DELETED` of an object gangpack reads.
    Object {
        /// The type.
        kind: EventType,
        /// The object (for `DELETED`, as it last was), its source the stream and the
        /// event's number (`doc`).
        object: Object,
        /// What the loader and the conversion warned about it.
        warnings: Vec<Warning>,
    },
    /// `ADDED`, `MODIFIED` or `DELETED` of an object of a kind gangpack does not read.
    Skipped {
        /// The type.
        kind: EventType,
        /// The loader's warning, naming the object and its kind.
        warning: Warning,
    },
    /// `BOOKMARK`: nothing changed.
    Bookmark,
    /// `ERROR`: the watch is over.
    Error(Status),
}

/// Why an event cannot be applied (the state stays as it was).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventError {
    /// Not UTF-8, not JSON, or JSON with a duplicate key: `line` is the stream's.
    Syntax {
        /// The line in the stream.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// JSON, but not a watch event (`{"type": ..., "object": {...}}`).
    NotAnEvent(String),
    /// A `type` that is none of the five.
    UnknownType(String),
    /// The object of an `ADDED`, `MODIFIED` or `DELETED` is malformed or invalid: its
    /// problems, each naming the object and the field.
    Object {
        /// The type.
        kind: EventType,
        /// The problems.
        errors: InputErrors,
    },
}

impl fmt::Display for EventError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventError::Syntax { line, message } => write!(f, "line {line}: {message}"),
            EventError::NotAnEvent(m) => f.write_str(m),
            EventError::UnknownType(t) => write!(
                f,
                "unknown event type {t:?} (expected ADDED, MODIFIED, DELETED, BOOKMARK or ERROR)"
            ),
            EventError::Object { kind, errors } => {
                for (i, e) in errors.errors.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{kind} {}", problem(e))?;
                }
                if errors.more > 0 {
                    write!(f, "; and {} more", errors.more)?;
                }
                Ok(())
            }
        }
    }
}

/// `Pod "ml/x": spec.nodeName: message`: an input error without its source.
fn problem(e: &InputError) -> String {
    let mut s = String::new();
    if let Some(o) = &e.object {
        s.push_str(o);
        s.push_str(": ");
    }
    if !e.field.is_empty() {
        s.push_str(&e.field);
        s.push_str(": ");
    }
    s.push_str(&e.message);
    s
}

/// Reads one event of stream `stream` (the name messages give it) from its frame: the
/// JSON (a duplicate key is an error, as in every input), the type, and for `ADDED`,
/// `MODIFIED` and `DELETED` the object, read as the loader reads a document (its
/// source is the stream, `doc` the event's number), then, but for `DELETED`,
/// converted on its own as a snapshot converts it, so that an object that would fail
/// the snapshot fails here, at its event. What depends on other objects (a pod's node)
/// is not checked here.
pub fn parse_event(
    stream: &str,
    frame: &Frame,
    options: &LoadOptions,
) -> Result<Event, EventError> {
    let text = std::str::from_utf8(&frame.bytes).map_err(|e| {
        let good = &frame.bytes[..e.valid_up_to()];
        let line = frame.at.line + good.split(|b| *b == b'\n').count() - 1;
        EventError::Syntax {
            line,
            message: format!(
                "not UTF-8: byte 0x{:02x} at offset {}; Kubernetes objects are UTF-8 text",
                frame.bytes[e.valid_up_to()],
                frame.at.offset + e.valid_up_to() as u64
            ),
        }
    })?;
    let mut doc = json_document(text).map_err(|e| EventError::Syntax {
        line: frame.at.line + e.line.saturating_sub(1),
        message: e.message,
    })?;
    let Value::Object(map) = &mut doc else {
        return Err(EventError::NotAnEvent("expected a watch event".into()));
    };
    let ty = match map.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => {
            return Err(EventError::NotAnEvent(format!(
                "type: must be a string, found {}",
                crate::load::json_type(other)
            )));
        }
        None if map.contains_key("apiVersion") || map.contains_key("kind") => {
            let what = match (map.get("kind").and_then(Value::as_str), name_of(map)) {
                (Some(k), Some(n)) => format!("{k} {n:?}"),
                (Some(k), None) => k.to_owned(),
                _ => "an object".to_owned(),
            };
            return Err(EventError::NotAnEvent(format!(
                "{what} is not a watch event (`{{\"type\": ..., \"object\": ...}}`): kubectl \
                 prints events only with --output-watch-events; a dump (kubectl get -o \
                 yaml|json) goes to --initial"
            )));
        }
        None => {
            return Err(EventError::NotAnEvent(
                "not a watch event: no \"type\" (expected {\"type\": ..., \"object\": ...})".into(),
            ));
        }
    };
    let Some(kind) = EventType::parse(&ty) else {
        return Err(EventError::UnknownType(ty));
    };
    let object = map.remove("object");
    match kind {
        EventType::Bookmark => return Ok(Event::Bookmark),
        EventType::Error => {
            return Ok(Event::Error(
                object.as_ref().map(Status::of).unwrap_or_default(),
            ));
        }
        EventType::Added | EventType::Modified | EventType::Deleted => {}
    }
    let object = match object {
        Some(o @ Value::Object(_)) => o,
        Some(other) => {
            return Err(EventError::NotAnEvent(format!(
                "{kind} event: object: must be a Kubernetes object, found {}",
                crate::load::json_type(&other)
            )));
        }
        None => {
            return Err(EventError::NotAnEvent(format!(
                "{kind} event without an object"
            )));
        }
    };
    let source = Source {
        file: stream.to_owned(),
        doc: frame.index,
        item: None,
    };
    // A deleted object only has to name itself: what it last held goes with it.
    let load = if kind == EventType::Deleted {
        LoadOptions {
            strict: false,
            ..*options
        }
    } else {
        *options
    };
    let loaded =
        load_value(object, source, &load).map_err(|errors| EventError::Object { kind, errors })?;
    let mut warnings = loaded.warnings;
    let Some(object) = loaded.objects.into_iter().next() else {
        // A kind gangpack does not read: the loader's warning says so.
        return match warnings.pop() {
            Some(warning) => Ok(Event::Skipped { kind, warning }),
            None => Err(EventError::NotAnEvent(format!(
                "{kind} event: no object read"
            ))),
        };
    };
    if kind == EventType::Deleted {
        return Ok(Event::Object {
            kind,
            object,
            warnings: Vec::new(),
        });
    }
    let (checked, found) = crate::convert::check(&object);
    warnings.extend(found);
    checked.map_err(|errors| EventError::Object { kind, errors })?;
    Ok(Event::Object {
        kind,
        object,
        warnings,
    })
}

/// Converts one object on its own, as [`parse_event`] converts the object of an `ADDED`
/// or `MODIFIED` event (and a snapshot converts it), keeping nothing: every problem the
/// object has by itself, each naming the object and the field, and its warnings. What
/// depends on other objects (a pod's node, a claim's class) is not checked: for a
/// starting dump's objects, which a watch takes as its first events.
pub fn check_object(object: &Object) -> (Result<(), InputErrors>, Vec<Warning>) {
    crate::convert::check(object)
}

/// `metadata.namespace/metadata.name` or `metadata.name` of a document, when it has one.
fn name_of(map: &serde_json::Map<String, Value>) -> Option<String> {
    let meta = map.get("metadata")?;
    let name = meta.get("name")?.as_str()?;
    Some(match meta.get("namespace").and_then(Value::as_str) {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    })
}
