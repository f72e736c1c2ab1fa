//! Reading objects from files, directories and stdin.
//!
//! A text is JSON when its first non-blank character is `{` or `[` (read with
//! serde_json, so numbers stay exact; several concatenated JSON documents are allowed),
//! otherwise multi-document YAML. Every document must be a Kubernetes object (a
//! mapping with `apiVersion`, `kind` and `metadata.name`) or a list of them (`kind:
//! List`, or `PodList`, `NodeList`, ... whose items may omit `apiVersion` / `kind`).
//! Empty documents are skipped; objects of kinds gangpack does not read are skipped
//! with a [`Warning`]. Every problem is collected and the load fails as a whole.
//!
//! As the API server and `kubectl` read them:
//!
//! - a duplicate mapping key is an error (`line 38: mapping key "metadata" already
//!   defined at line 37`; in JSON, the duplicate's line only), in YAML and JSON alike,
//!   never merged;
//! - every `apiVersion` a 1.37 API server serves for a kind gangpack reads is read,
//!   converted into the version gangpack reads as the API server converts it (so
//!   [`Object::raw`] holds the converted document), with one [`Warning`] per version and
//!   input when that version is not the one gangpack reads (a default 1.37 API server
//!   serves only `resource.k8s.io/v1`: beta and alpha versions need `--runtime-config`);
//!   a version it does not serve is an error naming those it does; a kind of a custom resource group (`scheduling.x-k8s.io`
//!   PodGroups) is skipped with a warning;
//! - a field the document's own version does not know is a warning naming its path
//!   (`unknown field "spec.devices.requests[0].bogusField"`), as server-side field
//!   validation warns, or an error with [`LoadOptions::strict`] (`kubectl
//!   --validate=strict`);
//! - `metadata.annotations` may hold at most 256 KiB ([`Limits::MAX_ANNOTATIONS_BYTES`]);
//! - numbers are read as JSON reads them: an integer beyond the 64-bit range becomes a
//!   floating-point number (so an integer field holding one is a type error naming the
//!   field), and YAML's `.inf`, `-.inf` and `.nan`, which JSON has not, are read as
//!   those strings (a number field holding one is a type error too).
//!
//! Whatever the input, a load takes memory and time in proportion to its size, within
//! the [`Limits`] of [`LoadOptions::limits`]: the bytes of one input, and what YAML
//! aliases may add to it (an alias bomb, "billion laughs", is an error naming the
//! limit, not an exhausted memory).

use std::cell::RefCell;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

mod json_list;
mod list;
mod value;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use list::threads;
pub(crate) use value::json_document;
pub use value::load_value;

use crate::convert::versions;
use crate::object::{Binding, InputError, InputErrors, Kind, Object, Source, Warning, describe};

/// How to read the input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Unknown fields are errors, not warnings (`kubectl --validate=strict`).
    pub strict: bool,
    /// The input is a scheduler's decisions (`gangpack check --decisions`): `v1`
    /// Bindings (the `pods/binding` subresource) are read into [`Loaded::bindings`],
    /// and a document of a kind gangpack does not read is an error, not a skip (a
    /// decision that would be ignored must not pass as checked).
    pub decisions: bool,
    /// The resource limits.
    pub limits: Limits,
}

/// The resource limits of a load: every limit the loader enforces on its own, in one
/// place. The two fields can be set (the CLI's `--max-input-bytes` and
/// `--max-alias-expansion`); the constants are fixed.
///
/// The defaults are chosen so that a real dump loads: `kubectl get -o yaml` of a
/// 100,000-GPU cluster is a few hundred MB over a handful of files (about 600 bytes of
/// YAML per device, 5 KB per node or pod), and `kubectl` never writes YAML aliases.
///
/// Beyond these, objects are held to Kubernetes 1.37's own validation limits (see
/// [`gangpack::limits`]): at most 128 devices in a ResourceSlice (64 when one has
/// taints or consumes counters), 32 attributes and capacities per device, 32 requests
/// per claim, CEL selectors of at most 10 KiB, whose parser refuses nesting deeper than
/// 64 levels and whose evaluation stops at a cost of 1,000,000 units; each is an error
/// naming the object and field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one input (a file, stdin, or one text given to [`load_str`])
    /// may have. A larger file is refused before it is read. Default:
    /// [`Limits::DEFAULT_MAX_INPUT_BYTES`] (1 GiB).
    pub max_input_bytes: usize,
    /// How much YAML aliases may add to one input: the values read from a text that
    /// has anchors (`&name`), counted one per value, key and byte of string, may
    /// exceed [`Limits::UNITS_PER_BYTE`] per byte of the text (more than any text
    /// without aliases reads) by at most this much. Default:
    /// [`Limits::DEFAULT_MAX_ALIAS_EXPANSION`] (1,000,000: some tens of MB).
    pub max_alias_expansion: usize,
}

impl Limits {
    /// The default [`Limits::max_input_bytes`]: 1 GiB.
    pub const DEFAULT_MAX_INPUT_BYTES: usize = 1 << 30;
    /// The default [`Limits::max_alias_expansion`].
    pub const DEFAULT_MAX_ALIAS_EXPANSION: usize = 1_000_000;
    /// The values (one per value and key, one per byte of string) a text without
    /// aliases reads at most, per byte of text. (At most two: `a:` is a mapping, a key
    /// of one byte and a null.)
    pub const UNITS_PER_BYTE: usize = 3;
    /// How deep mappings and lists may nest (fixed: the YAML and JSON readers'
    /// recursion limit, which keeps the stack bounded; Kubernetes objects nest about
    /// 15 levels).
    pub const MAX_NESTING: usize = 128;
    /// The YAML reader's own alias guard (fixed): a document may follow at most 100
    /// aliases per event (node) it has.
    pub const MAX_ALIAS_USES_PER_NODE: usize = 100;
    /// The most bytes an object's `metadata.annotations` may hold, keys and values
    /// together (upstream `TotalAnnotationSizeLimitB`).
    pub const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_input_bytes: Limits::DEFAULT_MAX_INPUT_BYTES,
            max_alias_expansion: Limits::DEFAULT_MAX_ALIAS_EXPANSION,
        }
    }
}

/// What a load read: the objects gangpack models, in input order, and warnings
/// (unknown kinds skipped, ...).
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// The objects, in input order.
    pub objects: Vec<Object>,
    /// What was skipped or reinterpreted.
    pub warnings: Vec<Warning>,
    /// `v1` Bindings, in input order (read only with [`LoadOptions::decisions`]).
    pub bindings: Vec<Binding>,
    /// The inputs (files, stdin, texts) that held no object and no Binding, in input
    /// order, each with why: an empty file is most often a `kubectl get` against the
    /// wrong context, which the caller may want to say.
    pub empty: Vec<EmptyInput>,
}

/// An input that held no object gangpack reads ([`Loaded::empty`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EmptyInput {
    /// The input's name in messages (a path, `<stdin>`, a text's name).
    pub name: String,
    /// What it held.
    pub held: Emptiness,
}

/// What an input without objects held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Emptiness {
    /// Nothing but white space: `an empty file` (a file), `empty` (a text).
    Blank {
        /// Whether the input is a file (or stdin) rather than a text handed over.
        file: bool,
    },
    /// Only comments and document separators (`---`).
    CommentsOnly,
    /// Lists with no items (`kind: List`, `PodList`, ...; the kind of each).
    EmptyLists(Vec<String>),
    /// Only objects of kinds gangpack does not read (each skipped with a warning):
    /// how many.
    Skipped(usize),
    /// A directory without `*.yaml`, `*.yml` or `*.json` files.
    NoManifests,
}

impl std::fmt::Display for EmptyInput {
    /// `cluster.yaml (an empty file)`, `- (a List with no items)`, ...
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (", self.name)?;
        match &self.held {
            Emptiness::Blank { file: true } => f.write_str("an empty file")?,
            Emptiness::Blank { file: false } => f.write_str("empty")?,
            Emptiness::CommentsOnly => f.write_str("only comments and ---")?,
            Emptiness::EmptyLists(kinds) if kinds.len() == 1 => {
                let a = if kinds[0].starts_with(['A', 'E', 'I', 'O', 'U']) {
                    "an"
                } else {
                    "a"
                };
                write!(f, "{a} {} with no items", kinds[0])?;
            }
            Emptiness::EmptyLists(kinds) => write!(f, "{} lists with no items", kinds.len())?,
            Emptiness::Skipped(1) => f.write_str("1 object, of a kind gangpack does not read")?,
            Emptiness::Skipped(n) => write!(f, "{n} objects, none of a kind gangpack reads")?,
            Emptiness::NoManifests => f.write_str("no *.yaml, *.yml or *.json files")?,
        }
        f.write_str(")")
    }
}

impl Loaded {
    /// Appends another load (objects and warnings keep their order).
    pub fn extend(&mut self, other: Loaded) {
        self.objects.extend(other.objects);
        self.warnings.extend(other.warnings);
        self.bindings.extend(other.bindings);
        self.empty.extend(other.empty);
    }
}

/// The name `-` (stdin) gets in sources.
pub const STDIN_NAME: &str = "<stdin>";

/// Reads every path (`-` is stdin; a directory is read recursively, `*.yaml`, `*.yml`
/// and `*.json`, sorted by path), with unknown fields as warnings.
pub fn load_paths<P: AsRef<Path>>(paths: &[P]) -> Result<Loaded, InputErrors> {
    load_paths_with(paths, &LoadOptions::default())
}

/// [`load_paths`] with options.
pub fn load_paths_with<P: AsRef<Path>>(
    paths: &[P],
    options: &LoadOptions,
) -> Result<Loaded, InputErrors> {
    let mut loaded = Loaded::default();
    let mut errors = InputErrors::default();
    for p in paths {
        let path = p.as_ref();
        if path == Path::new("-") {
            match read_text(STDIN_NAME, std::io::stdin().lock(), None, &options.limits) {
                Ok(text) => merge(
                    load_str_with(&text, STDIN_NAME, options).map(as_file),
                    &mut loaded,
                    &mut errors,
                ),
                Err(e) => errors.push(e),
            }
            continue;
        }
        let files = if path.is_dir() {
            let mut files = Vec::new();
            if let Err(e) = walk(path, &mut files) {
                errors.push(file_error(&path.display().to_string(), &e));
            }
            files.sort();
            if files.is_empty() && errors.is_empty() {
                loaded.empty.push(EmptyInput {
                    name: path.display().to_string(),
                    held: Emptiness::NoManifests,
                });
            }
            files
        } else {
            vec![path.to_path_buf()]
        };
        for file in files {
            let name = file.display().to_string();
            let text = std::fs::File::open(&file)
                .and_then(|f| Ok((f.metadata()?.len(), f)))
                .map_err(|e| file_error(&name, &e))
                .and_then(|(len, f)| read_text(&name, f, Some(len), &options.limits));
            match text {
                Ok(text) => merge(
                    load_str_with(&text, &name, options).map(as_file),
                    &mut loaded,
                    &mut errors,
                ),
                Err(e) => errors.push(e),
            }
        }
    }
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(errors)
    }
}

/// A load of a file (or stdin): an empty one is `an empty file`.
fn as_file(mut loaded: Loaded) -> Loaded {
    for e in &mut loaded.empty {
        if let Emptiness::Blank { file } = &mut e.held {
            *file = true;
        }
    }
    loaded
}

fn merge(result: Result<Loaded, InputErrors>, loaded: &mut Loaded, errors: &mut InputErrors) {
    match result {
        Ok(l) => loaded.extend(l),
        Err(e) => errors.extend(e),
    }
}

/// What went wrong with a file, as `ls` and `cat` say it, without Rust's `(os error
/// N)`: `no such file or directory`, `permission denied`, `is a directory`, ...
pub fn io_reason(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::NotFound => "no such file or directory".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::IsADirectory => "is a directory".into(),
        ErrorKind::NotADirectory => "not a directory".into(),
        ErrorKind::InvalidData => "not UTF-8 text".into(),
        _ => {
            let text = e.to_string();
            let text = match text.rfind(" (os error ") {
                Some(at) if text.ends_with(')') => text[..at].to_owned(),
                _ => text,
            };
            let mut chars = text.chars();
            chars.next().map_or_else(String::new, |c| {
                c.to_lowercase().chain(chars).collect::<String>()
            })
        }
    }
}

fn file_error(file: &str, e: &std::io::Error) -> InputError {
    whole_file_error(format!("cannot read {file}: {}", io_reason(e)))
}

fn whole_file_error(message: String) -> InputError {
    InputError {
        source: None,
        object: None,
        field: String::new(),
        message,
    }
}

/// Reads one input whole, refusing it unread when its known `len` is over the limit,
/// and as soon as it has read past it otherwise.
fn read_text(
    name: &str,
    reader: impl Read,
    len: Option<u64>,
    limits: &Limits,
) -> Result<String, InputError> {
    let max = limits.max_input_bytes;
    let max64 = u64::try_from(max).unwrap_or(u64::MAX);
    if let Some(len) = len.filter(|l| *l > max64) {
        return Err(too_large(name, Some(len), max));
    }
    // A file's length is known: one buffer, not a doubling one copied as it grows.
    let capacity = len
        .and_then(|l| usize::try_from(l).ok())
        .map_or(0, |l| l.saturating_add(1));
    let mut bytes = Vec::with_capacity(capacity);
    reader
        .take(max64.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| file_error(name, &e))?;
    if bytes.len() > max {
        return Err(too_large(name, None, max));
    }
    String::from_utf8(bytes).map_err(|e| not_utf8(name, e.as_bytes(), e.utf8_error()))
}

/// An input over [`Limits::max_input_bytes`], of `len` bytes when known.
fn too_large(name: &str, len: Option<u64>, max: usize) -> InputError {
    let len = len.map(|l| format!("{l} bytes, ")).unwrap_or_default();
    whole_file_error(format!(
        "{name}: input too large: {len}more than the max-input-bytes limit of {max} \
         (raise it with --max-input-bytes)"
    ))
}

/// Text that is not UTF-8, located at its first bad byte.
fn not_utf8(name: &str, bytes: &[u8], e: std::str::Utf8Error) -> InputError {
    let good = &bytes[..e.valid_up_to()];
    let line = good.split(|b| *b == b'\n').count();
    let line_start = good.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    // Valid UTF-8 up to there: count characters, not bytes.
    let column = 1 + String::from_utf8_lossy(&good[line_start..]).chars().count();
    let byte = bytes.get(e.valid_up_to()).copied().unwrap_or_default();
    whole_file_error(format!(
        "{name}: not UTF-8: byte 0x{byte:02x} at line {line} column {column} (offset {}); \
         Kubernetes objects are UTF-8 text",
        e.valid_up_to()
    ))
}

/// The `*.yaml`, `*.yml` and `*.json` files under `dir`, recursively, sorted by path:
/// the files [`load_paths`] reads for a directory.
pub fn manifest_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    Ok(files)
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

/// Reads one text (multi-document YAML or JSON); `file` names it in errors. Unknown
/// fields are warnings.
pub fn load_str(text: &str, file: &str) -> Result<Loaded, InputErrors> {
    load_str_with(text, file, &LoadOptions::default())
}

/// [`load_str`] with options.
pub fn load_str_with(text: &str, file: &str, options: &LoadOptions) -> Result<Loaded, InputErrors> {
    if text.len() > options.limits.max_input_bytes {
        let mut errors = InputErrors::default();
        let len = u64::try_from(text.len()).ok();
        errors.push(too_large(file, len, options.limits.max_input_bytes));
        return Err(errors);
    }
    crate::trace::emit(crate::trace::Event::Read {
        name: file,
        bytes: text.len(),
    });
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader {
        file,
        options: *options,
        loaded: Loaded::default(),
        errors: InputErrors::default(),
        seen: Seen::default(),
    };
    let first = text.trim_start().chars().next();
    if matches!(first, Some('{' | '[')) {
        reader.json(text);
    } else {
        reader.yaml(text);
    }
    let converted = std::mem::take(&mut reader.seen.converted);
    reader
        .loaded
        .warnings
        .extend(converted_warnings(file, converted));
    if reader.errors.is_empty()
        && reader.loaded.objects.is_empty()
        && reader.loaded.bindings.is_empty()
    {
        let seen = std::mem::take(&mut reader.seen);
        let held = if text.trim().is_empty() {
            Emptiness::Blank { file: false }
        } else if seen.skipped > 0 {
            Emptiness::Skipped(seen.skipped)
        } else if !seen.empty_lists.is_empty() {
            Emptiness::EmptyLists(seen.empty_lists)
        } else {
            Emptiness::CommentsOnly
        };
        reader.loaded.empty.push(EmptyInput {
            name: file.to_owned(),
            held,
        });
    }
    crate::trace::emit(crate::trace::Event::Parsed {
        name: file,
        objects: reader.loaded.objects.len(),
    });
    if reader.errors.is_empty() {
        Ok(reader.loaded)
    } else {
        Err(reader.errors)
    }
}

struct Reader<'a> {
    file: &'a str,
    options: LoadOptions,
    loaded: Loaded,
    errors: InputErrors,
    /// What the text held besides objects (for [`Loaded::empty`]).
    seen: Seen,
}

/// What a text held besides the objects: lists with no items, skipped objects,
/// objects converted from a version a default API server does not serve.
#[derive(Debug, Default)]
struct Seen {
    empty_lists: Vec<String>,
    skipped: usize,
    converted: Vec<Converted>,
}

/// An object read in a version a default 1.37 API server does not serve.
#[derive(Debug)]
struct Converted {
    from: String,
    to: &'static str,
    source: Source,
    object: String,
}

/// One warning per `apiVersion` of one text that a default 1.37 API server does not
/// serve: naming the object when it is alone, else the first few with their documents
/// and how many more.
fn converted_warnings(file: &str, converted: Vec<Converted>) -> Vec<Warning> {
    const SHOWN: usize = 3;
    let mut by_version: Vec<(String, &'static str, Vec<Converted>)> = Vec::new();
    for c in converted {
        match by_version.iter_mut().find(|(from, _, _)| *from == c.from) {
            Some((_, _, all)) => all.push(c),
            None => by_version.push((c.from.clone(), c.to, vec![c])),
        }
    }
    by_version
        .into_iter()
        .map(|(from, to, mut all)| {
            let why = not_served_by_default(&from, to);
            if all.len() == 1 {
                let one = all.remove(0);
                return Warning {
                    source: Some(one.source),
                    object: Some(one.object),
                    message: format!("uses {why}"),
                };
            }
            let mut named: Vec<String> = all
                .iter()
                .take(SHOWN)
                .map(|c| {
                    let item = c
                        .source
                        .item
                        .map(|i| format!(" item {i}"))
                        .unwrap_or_default();
                    format!("{} (doc {}{item})", c.object, c.source.doc)
                })
                .collect();
            if all.len() > SHOWN {
                named.push(format!("{} more", all.len() - SHOWN));
            }
            let list = match named.split_last() {
                Some((last, init)) if !init.is_empty() => format!("{} and {last}", init.join(", ")),
                _ => named.join(""),
            };
            Warning {
                source: None,
                object: None,
                message: format!("{file}: {} objects use {why}: {list}", all.len()),
            }
        })
        .collect()
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
        // `kubectl get -o json`'s one big List, read item by item (the same value, or
        // `None` and the whole read below).
        if let Some(v) = json_list::kubectl_json_list(text) {
            self.document(v, 1);
            return;
        }
        let stream = serde_json::Deserializer::from_str(text).into_iter::<Checked>();
        for (i, doc) in stream.enumerate() {
            let doc_no = i + 1;
            match doc {
                Ok(Checked(v)) => self.document(v, doc_no),
                Err(e) => {
                    let src = self.source(doc_no, None);
                    let message = e.to_string();
                    let msg = if message.starts_with(DUPLICATE) {
                        // The key is read: its line is the duplicate's.
                        let key = message.split(" at line ").next().unwrap_or(&message);
                        format!("line {}: {key}", e.line())
                    } else if message.starts_with("recursion limit exceeded") {
                        too_deep(
                            "JSON",
                            &format!(" at line {} column {}", e.line(), e.column()),
                        )
                    } else {
                        with_position("JSON syntax error", &message, || {
                            Some((e.line(), e.column()))
                        })
                    };
                    self.error(Some(src), None, "", msg);
                    // The stream cannot resynchronize after a syntax error.
                    return;
                }
            }
        }
    }

    fn yaml(&mut self, text: &str) {
        // What aliases may add: only a text with an anchor can have them.
        let mut budget = text.contains('&').then(|| {
            text.len()
                .saturating_mul(Limits::UNITS_PER_BYTE)
                .saturating_add(self.options.limits.max_alias_expansion)
        });
        // `kubectl get -o yaml`'s one big List, read in pieces (the same values, or
        // `None` and the whole read below).
        if budget.is_none()
            && let Some(v) = list::kubectl_list(text)
        {
            self.document(v, 1);
            return;
        }
        for (i, doc) in serde_norway::Deserializer::from_str(text).enumerate() {
            let doc_no = i + 1;
            let state = RefCell::new(Keys {
                budget,
                ..Keys::default()
            });
            let read = (ValueSeed { keys: &state }).deserialize(doc);
            let keys = state.into_inner();
            budget = keys.budget;
            match read {
                Ok(v) => self.document(v, doc_no),
                Err(e) => {
                    let src = self.source(doc_no, None);
                    if keys.exceeded {
                        let max = self.options.limits.max_alias_expansion;
                        let msg = format!(
                            "YAML aliases expand the input by more than the \
                             max-alias-expansion limit of {max} values (raise it with \
                             --max-alias-expansion)"
                        );
                        self.error(Some(src), None, "", msg);
                        return;
                    }
                    if let Some(dup) = keys.duplicate {
                        let line = e.location().map_or(0, |l| l.line());
                        let first = first_definition(text, i, &dup)
                            .map(|l| format!(" at line {l}"))
                            .unwrap_or_default();
                        let msg = format!(
                            "line {line}: mapping key \"{}\" already defined{first}",
                            dup.key
                        );
                        self.error(Some(src), None, "", msg);
                        // The next documents can be read only if this one loads whole: a
                        // YAML error after the duplicate (an unknown alias, say) leaves
                        // the reader inside it, and the next "document" would start
                        // mid-mapping (found by fuzzing: the YAML reader panicked).
                        if loads_whole(text, i) {
                            continue;
                        }
                        return;
                    }
                    let message = e.to_string();
                    let at = e
                        .location()
                        .map(|l| format!(" at line {} column {}", l.line(), l.column()))
                        .unwrap_or_default();
                    let msg = if message.starts_with("recursion limit exceeded") {
                        too_deep("YAML", &at)
                    } else if message.starts_with("repetition limit exceeded") {
                        format!(
                            "YAML aliases used more than {} times per node of the document \
                             (the YAML reader's fixed limit against alias bombs)",
                            Limits::MAX_ALIAS_USES_PER_NODE
                        )
                    } else {
                        with_position("YAML syntax error", &message, || {
                            e.location().map(|l| (l.line(), l.column()))
                        })
                    };
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
        let list_kind = kind.unwrap_or_default().to_owned();
        let item_kind = list_kind.strip_suffix("List").filter(|k| !k.is_empty());
        let api_version = map.get("apiVersion").and_then(Value::as_str);
        let defaults = item_kind
            .zip(api_version)
            .map(|(k, a)| (k.to_owned(), a.to_owned()));
        let Value::Object(mut map) = v else {
            return;
        };
        let items = match map.remove("items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        };
        if items.iter().all(Value::is_null) {
            self.seen.empty_lists.push(list_kind);
        }
        self.items(items, doc, defaults.as_ref());
    }

    /// A list's items, from item 0 of document `doc`: a long list in runs of
    /// [`ITEMS_RUN`] items, read on [`list::threads`] threads (this one too) in turn,
    /// run `r` on thread `r % threads` (a list's kinds come in blocks, some heavier
    /// than others); the runs' objects, warnings and errors then follow each other in
    /// the items' order, as one thread reading the items in turn would have them.
    #[cfg(not(target_arch = "wasm32"))]
    fn items(&mut self, items: Vec<Value>, doc: usize, defaults: Option<&(String, String)>) {
        let threads = list::threads().min(items.len() / ITEMS_RUN).max(1);
        if threads == 1 {
            self.run(items, 0, doc, defaults);
            return;
        }
        let mut shares: Vec<Vec<(usize, Vec<Value>)>> = (0..threads).map(|_| Vec::new()).collect();
        let mut rest = items.into_iter();
        for r in 0.. {
            let run: Vec<Value> = rest.by_ref().take(ITEMS_RUN).collect();
            if run.is_empty() {
                break;
            }
            shares[r % threads].push((r * ITEMS_RUN, run));
        }
        let (file, options) = (self.file, self.options);
        let read_share = move |share: Vec<(usize, Vec<Value>)>| -> Vec<Reader<'_>> {
            share
                .into_iter()
                .map(|(from, run)| {
                    let mut reader = Reader {
                        file,
                        options,
                        loaded: Loaded::default(),
                        errors: InputErrors::default(),
                        seen: Seen::default(),
                    };
                    reader.run(run, from, doc, defaults);
                    reader
                })
                .collect()
        };
        let done: Vec<Vec<Reader<'_>>> = std::thread::scope(|s| {
            let mut shares = shares.into_iter();
            let first = shares.next().unwrap_or_default();
            let others: Vec<_> = shares
                .map(|share| s.spawn(move || read_share(share)))
                .collect();
            let mut done = vec![read_share(first)];
            for h in others {
                done.push(
                    h.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
                );
            }
            done
        });
        // Run r is thread r % threads's (r / threads)th.
        let mut done: Vec<_> = done.into_iter().map(Vec::into_iter).collect();
        for r in 0.. {
            let Some(reader) = done[r % threads].next() else {
                break;
            };
            self.loaded.extend(reader.loaded);
            self.errors.extend(reader.errors);
            self.seen.skipped += reader.seen.skipped;
            self.seen.converted.extend(reader.seen.converted);
        }
    }

    /// A list's items, in turn (no threads).
    #[cfg(target_arch = "wasm32")]
    fn items(&mut self, items: Vec<Value>, doc: usize, defaults: Option<&(String, String)>) {
        self.run(items, 0, doc, defaults);
    }

    /// Items `from..` of document `doc`'s list.
    fn run(
        &mut self,
        items: Vec<Value>,
        from: usize,
        doc: usize,
        defaults: Option<&(String, String)>,
    ) {
        for (i, item) in items.into_iter().enumerate() {
            let src = self.source(doc, Some(from + i));
            if item.is_null() {
                continue;
            }
            self.object(item, src, defaults);
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
        if self.options.decisions && kind == "Binding" {
            self.binding(&v, src, &api_version, namespace, name);
            return;
        }
        let Some(k) = Kind::ALL.into_iter().find(|k| k.as_str() == kind) else {
            let message = if kind == "Binding" {
                format!(
                    "skipped: a Binding ({api_version}) is a scheduler's decision, not an object of the cluster (give it to `gangpack check --decisions`)"
                )
            } else {
                format!("skipped: {kind} ({api_version}) is not a kind gangpack reads")
            };
            self.skip(src, &kind, namespace.as_deref(), &name, message);
            return;
        };
        let served = versions::served(k);
        if !served.contains(&api_version.as_str()) {
            let group = versions::group(&api_version);
            if versions::is_builtin_group(group) {
                let namespace = k
                    .is_namespaced()
                    .then(|| namespace.as_deref().unwrap_or("default"));
                let object = describe(k, namespace, &name);
                let message = format!(
                    "{api_version} is not served for {kind} by Kubernetes 1.37 (served: {})",
                    served.join(", ")
                );
                self.error(Some(src), Some(object), "apiVersion", message);
            } else {
                let message = format!(
                    "skipped: {kind} ({api_version}) is a custom resource, not the {kind} of {} that gangpack reads",
                    versions::group(k.api_version())
                );
                self.skip(src, &kind, namespace.as_deref(), &name, message);
            }
            return;
        }
        let namespace = k
            .is_namespaced()
            .then(|| namespace.unwrap_or_else(|| "default".to_owned()));
        let object = describe(k, namespace.as_deref(), &name);
        let annotations = annotations_bytes(&v);
        if annotations > Limits::MAX_ANNOTATIONS_BYTES {
            let problem = gangpack::Problem::TooLong {
                max: Limits::MAX_ANNOTATIONS_BYTES,
                actual: annotations,
            };
            self.error(
                Some(src),
                Some(object),
                "metadata.annotations",
                problem.to_string(),
            );
            return;
        }
        match versions::unknown_fields(k, &api_version, &v) {
            Ok(known) => {
                if api_version != k.api_version() {
                    // Converted from what that version knows, as the API server does
                    // (an unknown field never turns into a field of the version read).
                    v = known.doc;
                    self.seen.converted.push(Converted {
                        from: api_version.clone(),
                        to: k.api_version(),
                        source: src.clone(),
                        object: object.clone(),
                    });
                }
                for f in known.unknown {
                    let message = format!("unknown field \"{f}\"");
                    if self.options.strict {
                        self.error(Some(src.clone()), Some(object.clone()), "", message);
                    } else {
                        self.loaded.warnings.push(Warning {
                            source: Some(src.clone()),
                            object: Some(object.clone()),
                            message,
                        });
                    }
                }
            }
            // A document of the version gangpack reads reports its type errors when it
            // is converted (with its other problems); another version's, here, in the
            // paths the document was written in.
            Err((field, message)) if api_version != k.api_version() => {
                self.error(Some(src), Some(object), &field, message);
                return;
            }
            Err(_) => {}
        }
        versions::to_read_version(k, &mut v);
        self.loaded.objects.push(Object {
            source: src,
            kind: k,
            namespace,
            name,
            raw: Arc::new(v),
        });
    }

    /// A `Binding` among decisions: `v1`, naming its pod by `metadata.namespace` and
    /// `metadata.name`, and its node by `target.name` (`target.kind` empty or `Node`,
    /// as the API server's binding subresource requires).
    fn binding(
        &mut self,
        v: &Value,
        src: Source,
        api_version: &str,
        namespace: Option<String>,
        name: String,
    ) {
        let namespace = namespace.unwrap_or_else(|| "default".to_owned());
        let object = format!("Binding \"{namespace}/{name}\"");
        if api_version != "v1" {
            let message =
                format!("{api_version} is not served for Binding by Kubernetes 1.37 (served: v1)");
            self.error(Some(src), Some(object), "apiVersion", message);
            return;
        }
        let target = v.get("target");
        let kind = target.and_then(|t| t.get("kind"));
        match kind {
            None | Some(Value::Null) => {}
            Some(Value::String(k)) if k.is_empty() || k == "Node" => {}
            Some(other) => {
                let found = other
                    .as_str()
                    .map_or_else(|| json_type(other).to_owned(), |k| format!("\"{k}\""));
                let message = format!("must be \"Node\" (a pod is bound to a node), found {found}");
                self.error(Some(src), Some(object), "target.kind", message);
                return;
            }
        }
        let node = target.and_then(|t| t.get("name"));
        let Some(node) = self.string_field(node, &src, Some(&object), "target.name") else {
            return;
        };
        self.loaded.bindings.push(Binding {
            source: src,
            namespace,
            name,
            node,
        });
    }

    /// A document gangpack does not read: a warning, and nothing loaded (an error
    /// among decisions).
    fn skip(
        &mut self,
        src: Source,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        message: String,
    ) {
        let object = match namespace {
            Some(ns) => format!("{kind} \"{ns}/{name}\""),
            None => format!("{kind} \"{name}\""),
        };
        if self.options.decisions {
            let what = message.strip_prefix("skipped: ").unwrap_or(&message);
            let message = format!(
                "{what}: a decision is a Binding or a patch (or whole object) of one of the kinds gangpack reads ({})",
                decision_kinds()
            );
            self.error(Some(src), Some(object), "kind", message);
            return;
        }
        self.seen.skipped += 1;
        self.loaded.warnings.push(Warning {
            source: Some(src),
            object: Some(object),
            message,
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

/// Why an object of a beta or alpha version a 1.37 API server serves only when enabled
/// is worth a warning (beta APIs are off by default since 1.24, KEP-3136; alpha ones
/// always were): it is read and converted to `to`, but a default server refuses it.
fn not_served_by_default(api_version: &str, to: &str) -> String {
    format!(
        "{api_version}, which a default Kubernetes 1.37 API server does not serve \
         (only with --runtime-config={api_version}=true); converted to {to}"
    )
}

/// The kinds a decision may be, for messages: `Binding`, then [`Kind::ALL`].
fn decision_kinds() -> String {
    let mut kinds = vec!["Binding"];
    kinds.extend(Kind::ALL.iter().map(|k| k.as_str()));
    kinds.join(", ")
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

/// Nesting past [`Limits::MAX_NESTING`].
fn too_deep(format: &str, at: &str) -> String {
    format!(
        "{format} nested more than {} levels deep{at} (the reader's fixed limit; Kubernetes \
         objects nest about 15 levels)",
        Limits::MAX_NESTING
    )
}

/// The bytes of an object's `metadata.annotations`, keys and values (upstream
/// `ValidateAnnotationsSize`).
fn annotations_bytes(v: &Value) -> usize {
    let Some(Value::Object(a)) = v.get("metadata").and_then(|m| m.get("annotations")) else {
        return 0;
    };
    a.iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum()
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

// ---------------------------------------------------------------------------------------------
// Duplicate mapping keys
// ---------------------------------------------------------------------------------------------

/// A long list's items are read in runs of this many, on threads ([`Reader::items`]).
#[cfg(not(target_arch = "wasm32"))]
const ITEMS_RUN: usize = 512;

/// How a duplicate-key error message starts.
const DUPLICATE: &str = "mapping key \"";

/// The keys of one document as they are read: mappings are numbered in the order they
/// start, keys by their position in their mapping.
#[derive(Default)]
struct Keys {
    /// Mappings started so far.
    mappings: usize,
    /// On a second read: the (mapping, key) to stop at, the key's first definition in
    /// that mapping, to learn its line.
    stop_at: Option<(usize, String)>,
    /// The first duplicate found.
    duplicate: Option<Duplicate>,
    /// What the rest of the text may still read (values, keys and string bytes), when
    /// it may have aliases ([`Limits::max_alias_expansion`]).
    budget: Option<usize>,
    /// The budget ran out.
    exceeded: bool,
    /// Sequences and mappings open now.
    depth: usize,
    /// The most that were open at once.
    max_depth: usize,
}

/// How a budget error's message starts (the message is replaced; the flag says it).
const EXPANSION: &str = "alias expansion limit";

impl Keys {
    /// Spends `units` of the budget, failing when it runs out.
    fn charge<E: serde::de::Error>(&mut self, units: usize) -> Result<(), E> {
        if let Some(left) = &mut self.budget {
            let Some(l) = left.checked_sub(units) else {
                self.exceeded = true;
                return Err(E::custom(EXPANSION));
            };
            *left = l;
        }
        Ok(())
    }
}

impl ValueSeed<'_> {
    fn charge<E: serde::de::Error>(self, units: usize) -> Result<(), E> {
        self.keys.borrow_mut().charge(units)
    }

    /// A sequence or mapping starts.
    fn open(self) {
        let mut k = self.keys.borrow_mut();
        k.depth += 1;
        k.max_depth = k.max_depth.max(k.depth);
    }
}

/// A key defined twice in one mapping.
struct Duplicate {
    key: String,
    /// The mapping's number ([`Keys::mappings`] order).
    mapping: usize,
}

/// Reads a [`Value`] and fails on the first key a mapping defines twice.
#[derive(Clone, Copy)]
struct ValueSeed<'k> {
    keys: &'k RefCell<Keys>,
}

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.charge(1)?;
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.charge(1)?;
        Ok(Value::from(v))
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.charge(1)?;
        Ok(Value::from(v))
    }

    fn visit_i128<E: serde::de::Error>(self, v: i128) -> Result<Value, E> {
        match (i64::try_from(v), u64::try_from(v)) {
            (Ok(v), _) => self.visit_i64(v),
            (_, Ok(v)) => self.visit_u64(v),
            // Beyond 64 bits: a float, as serde_json reads such a JSON number.
            #[allow(clippy::cast_precision_loss)]
            _ => self.visit_f64(v as f64),
        }
    }

    fn visit_u128<E: serde::de::Error>(self, v: u128) -> Result<Value, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            #[allow(clippy::cast_precision_loss)]
            Err(_) => self.visit_f64(v as f64),
        }
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.charge(1)?;
        Ok(match serde_json::Number::from_f64(v) {
            Some(n) => Value::Number(n),
            // JSON has no infinities or NaN: YAML's spelling, as a string.
            None if v.is_nan() => Value::String(".nan".into()),
            None if v > 0.0 => Value::String(".inf".into()),
            None => Value::String("-.inf".into()),
        })
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.charge(1 + v.len())?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.charge(1 + v.len())?;
        Ok(Value::String(v))
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value, E> {
        self.charge(1)?;
        Ok(Value::Null)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.charge(1)?;
        Ok(Value::Null)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.charge(1)?;
        self.open();
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        self.keys.borrow_mut().depth -= 1;
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.charge(1)?;
        self.open();
        let mapping = {
            let mut k = self.keys.borrow_mut();
            k.mappings += 1;
            k.mappings - 1
        };
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed {
            keys: self.keys,
            mapping,
            read: &out,
        })? {
            let value = map.next_value_seed(self)?;
            out.insert(key, value);
        }
        self.keys.borrow_mut().depth -= 1;
        Ok(Value::Object(out))
    }
}

/// Reads one mapping key, failing when the mapping already has it (or when it is the
/// key a second read stops at).
struct KeySeed<'k, 'o> {
    keys: &'k RefCell<Keys>,
    mapping: usize,
    /// The mapping's entries read so far.
    read: &'o Map<String, Value>,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_, '_> {
    type Value = String;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_string(self)
    }
}

impl Visitor<'_> for KeySeed<'_, '_> {
    type Value = String;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<String, E> {
        let mut k = self.keys.borrow_mut();
        k.charge(1 + key.len())?;
        if k.stop_at
            .as_ref()
            .is_some_and(|(mapping, stop)| *mapping == self.mapping && stop == key)
        {
            return Err(E::custom("first definition"));
        }
        if self.read.contains_key(key) {
            k.duplicate = Some(Duplicate {
                key: key.to_owned(),
                mapping: self.mapping,
            });
            return Err(E::custom(format!("{DUPLICATE}{key}\" already defined")));
        }
        Ok(key.to_owned())
    }
}

/// A document (JSON or YAML) read with [`ValueSeed`]: a key defined twice in one
/// mapping is an error.
pub(crate) struct Checked(pub(crate) Value);

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        let keys = RefCell::new(Keys::default());
        (ValueSeed { keys: &keys }).deserialize(d).map(Checked)
    }
}

/// Whether document `doc` (0-based) of `text` loads as YAML, duplicate keys aside.
fn loads_whole(text: &str, doc: usize) -> bool {
    serde_norway::Deserializer::from_str(text)
        .nth(doc)
        .is_some_and(|d| serde::de::IgnoredAny::deserialize(d).is_ok())
}

/// The line of a duplicate key's first definition: document `doc` (0-based) is read
/// again, stopping at that key.
fn first_definition(text: &str, doc: usize, dup: &Duplicate) -> Option<usize> {
    let d = serde_norway::Deserializer::from_str(text).nth(doc)?;
    let keys = RefCell::new(Keys {
        stop_at: Some((dup.mapping, dup.key.clone())),
        ..Keys::default()
    });
    let e = (ValueSeed { keys: &keys }).deserialize(d).err()?;
    e.location().map(|l| l.line())
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{InputErrors, LoadOptions, Loaded, Reader};

    fn reader(strict: bool) -> Reader<'static> {
        Reader {
            file: "list.yaml",
            options: LoadOptions {
                strict,
                ..LoadOptions::default()
            },
            loaded: Loaded::default(),
            errors: InputErrors::default(),
            seen: super::Seen::default(),
        }
    }

    /// A long list read on threads ([`Reader::items`]) loads what one thread reading
    /// its items in turn loads: objects, warnings and errors (more than
    /// [`InputErrors::MAX`]) in the same order.
    #[test]
    fn a_long_list_reads_on_threads_as_in_turn() {
        let items: Vec<Value> = (0..3000)
            .map(|i| {
                let name = format!("n-{i}");
                match i % 9 {
                    // An unknown field (a warning, or an error with `strict`).
                    0 => json!({"apiVersion": "v1", "kind": "Node",
                                "metadata": {"name": name}, "spec": {"bogus": i}}),
                    // No apiVersion.
                    1 => json!({"kind": "Node", "metadata": {"name": name}}),
                    2 => Value::Null,
                    3 => json!(i),
                    // A kind gangpack does not read.
                    4 => json!({"apiVersion": "v1", "kind": "Widget", "metadata": {"name": name}}),
                    // A type error in another served version.
                    5 => json!({"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice",
                                "metadata": {"name": name}, "spec": {"devices": i}}),
                    // Converted from another served version.
                    6 => json!({"apiVersion": "resource.k8s.io/v1beta1", "kind": "DeviceClass",
                                "metadata": {"name": name}, "spec": {}}),
                    _ => json!({"apiVersion": "v1", "kind": "Pod",
                                "metadata": {"name": name, "namespace": "ns"}}),
                }
            })
            .collect();
        for strict in [false, true] {
            let mut threaded = reader(strict);
            threaded.items(items.clone(), 2, None);
            let mut in_turn = reader(strict);
            in_turn.run(items.clone(), 0, 2, None);
            assert_eq!(threaded.loaded.objects, in_turn.loaded.objects);
            assert_eq!(threaded.loaded.warnings, in_turn.loaded.warnings);
            assert_eq!(threaded.errors, in_turn.errors);
            assert!(in_turn.errors.more > 0, "{}", in_turn.errors.len());
            assert!(!in_turn.loaded.objects.is_empty());
        }
    }
}
