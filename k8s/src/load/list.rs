//! The fast path for the layout `kubectl get -o yaml` writes: one YAML document, a
//! mapping at column 0 whose `items:` sequence has its entries (`- `) at column 0.
//!
//! Read as one document, such a dump is slow and large: the YAML reader buffers every
//! event of a document before it hands out the first value (3 GiB for a dump of
//! 100,000 GPUs). Here the item lines are cut, at entry boundaries, into a few pieces,
//! each read as a YAML sequence of its own (on their own threads where there are
//! threads), and the rest of the text, with `items: []` in place of the items, is
//! read as the head. A piece in the sequence's context reads exactly as it does in the
//! whole document: an entry at column 0 with its lines indented, in a block sequence
//! at column 0.
//!
//! It changes nothing but speed: [`kubectl_list`] answers `None` whenever it is not
//! sure, and the caller then reads the text whole, with its exact errors. It is not
//! sure when the text may have aliases (an anchor), more than one document or a
//! directive, when any piece or the head fails to read or holds a duplicate key, when
//! a piece reads as another number of entries than it starts (an entry start inside a
//! quoted scalar), when the head does not read `items` as the empty sequence put in
//! its place (the `items:` line was inside a scalar), or when anything nests within a
//! few levels of the reader's recursion limit.

use std::cell::RefCell;

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::{Keys, Limits, ValueSeed};

/// About the bytes of one piece: the reader buffers a piece's events whole, so pieces
/// bound the memory the events take. At 1 MiB the allocator reuses one piece's event
/// memory for the next; at 4 MiB each piece's events were fresh pages for the kernel
/// to zero (system time 1.2 s against 0.95 s on the 100,000-GPU dump).
#[cfg(not(test))]
const PIECE_BYTES: usize = 1 << 20;
/// Small pieces in the unit tests, so that small texts have many.
#[cfg(test)]
const PIECE_BYTES: usize = 64 << 10;
/// At most this many threads.
#[cfg(not(target_arch = "wasm32"))]
const MAX_THREADS: usize = 8;

/// The text's lines as (start, start of the next line, the line without its break).
fn lines(text: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |l| {
        let at = start;
        start += l.len();
        (at, start, l.trim_end_matches('\n').trim_end_matches('\r'))
    })
}

/// Where the items are: the `items:` line's start; the region of item lines, from the
/// line after it to the first line at column 0 that continues the head; each entry's
/// start.
struct Layout {
    items_line: usize,
    region: (usize, usize),
    starts: Vec<usize>,
}

fn layout(text: &str) -> Option<Layout> {
    let mut items_line = None;
    let mut region_start = 0;
    let mut region_end = None;
    let mut starts = Vec::new();
    for (at, next, line) in lines(text) {
        if line.starts_with("---") || line.starts_with("...") || line.starts_with('%') {
            return None;
        }
        if items_line.is_none() {
            if line.trim_end() == "items:" {
                items_line = Some(at);
                region_start = next;
            }
            continue;
        }
        if region_end.is_some() {
            continue;
        }
        if line.starts_with("- ") {
            starts.push(at);
        } else if line.is_empty() || line.starts_with(' ') || line.starts_with('#') {
            if starts.is_empty() && !line.trim_start().is_empty() && !line.starts_with('#') {
                // Indented content before the first entry (an indented sequence).
                return None;
            }
        } else {
            region_end = Some(at);
        }
    }
    if starts.is_empty() {
        return None;
    }
    Some(Layout {
        items_line: items_line?,
        region: (region_start, region_end.unwrap_or(text.len())),
        starts,
    })
}

/// Reads one YAML document of `text` with the loader's duplicate-key check; `None` on
/// any error, a duplicate, a second document, or nesting near the recursion limit.
fn read(text: &str) -> Option<Value> {
    let mut docs = serde_norway::Deserializer::from_str(text);
    let doc = docs.next()?;
    let keys = RefCell::new(Keys::default());
    let v = (ValueSeed { keys: &keys }).deserialize(doc).ok()?;
    if docs.next().is_some() {
        return None;
    }
    let keys = keys.into_inner();
    // A piece's entries sit two levels above the whole document's (no root mapping,
    // no `items`): leave anything near the limit to the whole read.
    (keys.duplicate.is_none() && keys.max_depth + 4 < Limits::MAX_NESTING).then_some(v)
}

/// The entries of one piece, when it reads as exactly `count` of them.
fn piece(text: &str, count: usize) -> Option<Vec<Value>> {
    match read(text)? {
        Value::Array(items) if items.len() == count => Some(items),
        _ => None,
    }
}

/// The document `text` is, read in pieces, or `None` when the fast path does not apply
/// or is not sure (see the module docs). `text` must not contain `&` (no anchors, so
/// no aliases to expand).
pub(super) fn kubectl_list(text: &str) -> Option<Value> {
    debug_assert!(!text.contains('&'));
    let Layout {
        items_line,
        region: (start, end),
        starts,
    } = layout(text)?;
    // Pieces of about equal bytes, cut at entry starts.
    let pieces_n = (end - start).div_ceil(PIECE_BYTES).max(1);
    let mut cuts = vec![0usize];
    for k in 1..pieces_n {
        let target = start + (end - start) * k / pieces_n;
        let i = starts.partition_point(|&s| s < target);
        if i > *cuts.last().expect("not empty") && i < starts.len() {
            cuts.push(i);
        }
    }
    cuts.push(starts.len());
    let ranges: Vec<(usize, usize, usize)> = cuts
        .windows(2)
        .map(|w| {
            let to = starts.get(w[1]).copied().unwrap_or(end);
            (starts[w[0]], to, w[1] - w[0])
        })
        .collect();
    let mut head = String::with_capacity(items_line + 12 + (text.len() - end));
    head.push_str(&text[..items_line]);
    head.push_str("items: []\n");
    head.push_str(&text[end..]);
    let (head, pieces) = read_all(
        &ranges,
        |&(from, to, n)| piece(&text[from..to], n),
        || read(&head),
    );
    join_items(head?, pieces, starts.len())
}

/// The List read back whole: `head` (the text around the items, read with `items`
/// empty) with the items of every piece put in, in order; `None` when the head is not
/// an object with empty `items` or a piece failed (the caller falls back to the whole
/// read). Shared by the YAML and the JSON reader.
pub(super) fn join_items(
    head: Value,
    pieces: Vec<Option<Vec<Value>>>,
    count: usize,
) -> Option<Value> {
    let Value::Object(mut map) = head else {
        return None;
    };
    match map.get("items") {
        Some(Value::Array(a)) if a.is_empty() => {}
        _ => return None,
    }
    let mut items = Vec::with_capacity(count);
    for p in pieces {
        items.extend(p?);
    }
    map.insert("items".into(), Value::Array(items));
    Some(Value::Object(map))
}

/// Threads the machine offers (the reading here, the item check in [`super`] and the
/// snapshot's conversion ahead all size themselves by it).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

type Pieces = Vec<Option<Vec<Value>>>;

/// The head and every piece: `read_piece` on each of `ranges`, in runs of about equal
/// length, the first run on this thread and each other one on a thread of its own,
/// and `read_head` on this thread. Shared with the JSON fast path ([`super::json_list`]).
#[cfg(not(target_arch = "wasm32"))]
pub(super) fn read_all<R: Sync>(
    ranges: &[R],
    read_piece: impl Fn(&R) -> Option<Vec<Value>> + Sync,
    read_head: impl FnOnce() -> Option<Value>,
) -> (Option<Value>, Pieces) {
    let run = ranges
        .len()
        .div_ceil(threads().clamp(1, MAX_THREADS))
        .max(1);
    let read_piece = &read_piece;
    let read_run = move |run: &[R]| -> Pieces { run.iter().map(read_piece).collect() };
    std::thread::scope(|s| {
        let mut runs = ranges.chunks(run);
        let first = runs.next().unwrap_or_default();
        let others: Vec<_> = runs.map(|r| s.spawn(move || read_run(r))).collect();
        let mut pieces = read_run(first);
        let head = read_head();
        // A run whose thread panicked (in the reader) is a piece not read: the whole
        // read then reports whatever it finds.
        for h in others {
            pieces.extend(h.join().unwrap_or_else(|_| vec![None]));
        }
        (head, pieces)
    })
}

/// The head and every piece, in turn (no threads).
#[cfg(target_arch = "wasm32")]
pub(super) fn read_all<R: Sync>(
    ranges: &[R],
    read_piece: impl Fn(&R) -> Option<Vec<Value>> + Sync,
    read_head: impl FnOnce() -> Option<Value>,
) -> (Option<Value>, Pieces) {
    let pieces = ranges.iter().map(read_piece).collect();
    (read_head(), pieces)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    /// The whole-document read the fast path stands in for.
    fn whole(text: &str) -> Option<Value> {
        let doc = serde_norway::Deserializer::from_str(text).next()?;
        let keys = RefCell::new(Keys::default());
        (ValueSeed { keys: &keys }).deserialize(doc).ok()
    }

    fn same(text: &str) {
        let fast = kubectl_list(text).expect("the fast path applies");
        assert_eq!(Some(fast), whole(text), "{text}");
    }

    const LIST: &str = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    labels:\n      x: \"1\"\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n  spec:\n    containers:\n    - name: c\n      args:\n      - |\n        line one\n\n        line three\n# a comment\n\n- kind: Node\n  metadata: {name: b}\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";

    #[test]
    fn a_kubectl_list_reads_as_the_whole_document_does() {
        same(LIST);
        same(&LIST.replace('\n', "\r\n"));
        // items last, no trailing newline.
        same("kind: List\napiVersion: v1\nitems:\n- kind: Node\n  metadata:\n    name: a\n- 3");
    }

    #[test]
    fn many_pieces_read_as_one() {
        let mut text = String::from("apiVersion: v1\nitems:\n");
        for i in 0..20_000 {
            writeln!(
                text,
                "- apiVersion: v1\n  kind: Node\n  metadata:\n    name: node-{i}\n    labels: {{a: b}}"
            )
            .expect("a String takes any text");
        }
        text.push_str("kind: List\n");
        assert!(text.len() > 16 * PIECE_BYTES);
        same(&text);
    }

    #[test]
    fn unsure_texts_are_left_to_the_whole_read() {
        for text in [
            // Not a list at column 0, or no entries.
            "kind: Node\nmetadata:\n  name: a\n",
            "items:\n  - kind: Node\n",
            "items: []\n",
            // Two documents, a directive.
            "items:\n- a\n---\nitems:\n- b\n",
            "%YAML 1.2\n---\nitems:\n- a\n",
            // A duplicate key in an entry, and in the head.
            "items:\n- a: 1\n  a: 2\n",
            "kind: List\nitems:\n- a\nkind: List\n",
            "items:\n- a\nitems:\n- b\n",
            // A syntax error in an entry.
            "items:\n- a: [1\n",
            // `items:` inside a quoted scalar.
            "note: \"x\nitems:\n- a\n\"\nkind: List\n",
            // An entry start inside a quoted scalar.
            "items:\n- a: \"x\n- b\"\n",
            // A head line the items cannot continue.
            "items:\n- a\n\tb: 1\n",
        ] {
            assert_eq!(kubectl_list(text), None, "{text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_left_to_the_whole_read() {
        let depth = Limits::MAX_NESTING - 3;
        let text = format!("items:\n- {}1{}\n", "[".repeat(depth), "]".repeat(depth));
        assert_eq!(kubectl_list(&text), None);
        let text = "items:\n- [[[1]]]\n";
        same(text);
    }
}
