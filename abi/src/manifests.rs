//! Manifests as requests carry them: one text, or texts each optionally named.

use gangpack_cli::{Input, InputFile};
use serde::Deserialize;
use serde_json::Value;

use crate::error::Error;

/// Manifests: one text, or several texts each optionally named (`{name, text}`).
#[derive(Clone, Deserialize)]
#[serde(untagged)]
pub enum Manifests {
    /// One text (named after the argument in messages).
    One(String),
    /// Several, in order.
    Many(Vec<Piece>),
}

/// One text of [`Manifests::Many`].
#[derive(Clone, Deserialize)]
#[serde(untagged)]
pub enum Piece {
    /// A text (named `ARG[i]`).
    Text(String),
    /// A text and the name messages give it (a file name).
    File {
        /// The name.
        name: String,
        /// The text.
        text: String,
    },
}

/// What a manifests argument must be, for the error when it is missing.
pub const EXPECTED: &str =
    "expected manifest text (a string) or an array of strings or { name, text }";

impl Manifests {
    /// The input, its texts named `manifests` / `manifests[i]` unless named.
    pub fn input(self) -> Input {
        self.input_named("manifests")
    }

    /// The input, its texts named `base` (one text) or `base[i]` unless named.
    pub fn input_named(self, base: &str) -> Input {
        Input::Files(match self {
            Manifests::One(text) => vec![InputFile {
                name: base.to_owned(),
                text,
            }],
            Manifests::Many(pieces) => pieces
                .into_iter()
                .enumerate()
                .map(|(i, p)| match p {
                    Piece::Text(text) => InputFile {
                        name: format!("{base}[{i}]"),
                        text,
                    },
                    Piece::File { name, text } => InputFile { name, text },
                })
                .collect(),
        })
    }
}

/// The manifests of argument `what`, required.
pub fn manifests(value: Option<&Value>, what: &str) -> Result<Manifests, Error> {
    match value {
        None | Some(Value::Null) => Err(Error::argument(what, EXPECTED)),
        Some(v) => crate::value::from_value(v, what),
    }
}
