//! The lines a watch prints on stderr: where, what, and warnings of one cause folded.

use std::collections::BTreeMap;
use std::fmt;

use gangpack_k8s::{InputError, Source, Warning};

/// One line `gangpack watch` prints on stderr.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// `warning: ...`: skipped or ignored; the objects still match the cluster.
    Warning(String),
    /// `error: ...`: the objects may no longer match the cluster (exit 2), or the
    /// watch ended (an `ERROR` event, exit 3), or a source could not be read (exit 1).
    Error(String),
}

impl Message {
    /// The text after `warning: ` or `error: `.
    pub fn text(&self) -> &str {
        match self {
            Message::Warning(t) | Message::Error(t) => t,
        }
    }

    /// Whether it is an error.
    pub fn is_error(&self) -> bool {
        matches!(self, Message::Error(_))
    }
}

impl fmt::Display for Message {
    /// `warning: TEXT` or `error: TEXT`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Warning(t) => write!(f, "warning: {t}"),
            Message::Error(t) => write!(f, "error: {t}"),
        }
    }
}

/// One thing to say about an object: where it comes from, the object, the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Said {
    /// `pods.json event 7`, or `dump.yaml doc 2 item 3`; empty when unknown.
    pub(crate) place: String,
    /// `Pod "ml/x"`, when known.
    pub(crate) object: Option<String>,
    /// `spec.nodeName: not found: "n9"`.
    pub(crate) text: String,
}

impl Said {
    /// A warning, named as [`Places`] names its source.
    pub(crate) fn warning(places: &Places, w: &Warning) -> Said {
        Said {
            place: places.of(w.source.as_ref()),
            object: w.object.clone(),
            text: w.message.clone(),
        }
    }

    /// An input error (its field first), named as [`Places`] names its source.
    pub(crate) fn error(places: &Places, e: &InputError) -> Said {
        let text = if e.field.is_empty() {
            e.message.clone()
        } else {
            format!("{}: {}", e.field, e.message)
        };
        Said {
            place: places.of(e.source.as_ref()),
            object: e.object.clone(),
            text,
        }
    }

    /// What makes two of them the same, wherever they are: the object and the text.
    pub(crate) fn key(&self) -> String {
        format!(
            "{}\u{0}{}",
            self.object.as_deref().unwrap_or_default(),
            self.text
        )
    }

    /// What makes two of them one cause: the object's kind and the text with list
    /// indexes written `[*]`.
    fn cause(&self) -> String {
        let kind = self
            .object
            .as_deref()
            .and_then(|o| o.split(' ').next())
            .unwrap_or_default();
        format!("{kind}\u{0}{}", without_indexes(&self.text))
    }
}

impl fmt::Display for Said {
    /// `PLACE: OBJECT: TEXT`, leaving out what is unknown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.place.is_empty() {
            write!(f, "{}: ", self.place)?;
        }
        if let Some(o) = &self.object {
            write!(f, "{o}: ")?;
        }
        f.write_str(&self.text)
    }
}

/// How sources are named: an object of a stream by the stream and its event
/// (`pods.json event 7`), one of a starting dump as the loader names it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Places {
    streams: std::collections::BTreeSet<String>,
}

impl Places {
    /// `name` is a stream.
    pub(crate) fn add_stream(&mut self, name: &str) {
        self.streams.insert(name.to_owned());
    }

    /// The place of a source.
    pub(crate) fn of(&self, source: Option<&Source>) -> String {
        match source {
            Some(s) if s.item.is_none() && self.streams.contains(&s.file) => {
                event_place(&s.file, s.doc)
            }
            Some(s) => s.to_string(),
            None => String::new(),
        }
    }
}

/// `pods.json event 7`.
pub(crate) fn event_place(stream: &str, event: usize) -> String {
    format!("{stream} event {event}")
}

/// Warnings of one cause folded into one line: the first, then `(and N more like
/// it)`, in the order each cause first appears.
pub(crate) fn folded(said: Vec<Said>) -> Vec<String> {
    let mut order: Vec<(Said, usize)> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for s in said {
        let cause = s.cause();
        if let Some(&i) = index.get(&cause) {
            order[i].1 += 1;
        } else {
            index.insert(cause, order.len());
            order.push((s, 0));
        }
    }
    order
        .into_iter()
        .map(|(s, more)| {
            if more == 0 {
                s.to_string()
            } else {
                format!("{s} (and {more} more like it)")
            }
        })
        .collect()
}

/// `spec.devices[3].x` → `spec.devices[*].x`.
fn without_indexes(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(']') {
            out.push('*');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::{Said, folded};

    fn said(object: &str, text: &str) -> Said {
        Said {
            place: "s.json event 1".into(),
            object: Some(object.into()),
            text: text.into(),
        }
    }

    #[test]
    fn one_cause_is_one_line() {
        let lines = folded(vec![
            said("ResourceSlice \"a\"", "spec.devices[0].x: ignored"),
            said("Pod \"ml/p\"", "spec.devices[0].x: ignored"),
            said("ResourceSlice \"b\"", "spec.devices[12].x: ignored"),
        ]);
        assert_eq!(
            lines,
            [
                "s.json event 1: ResourceSlice \"a\": spec.devices[0].x: ignored (and 1 more like it)",
                "s.json event 1: Pod \"ml/p\": spec.devices[0].x: ignored",
            ]
        );
    }
}
