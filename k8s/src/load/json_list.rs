//! The fast path for the layout `kubectl get -o json` writes: one JSON document, an
//! object whose `"items": [` line opens the List's items, each item starting on a line
//! of its own that is `{` alone at one indentation (kubectl's 4-space indentation puts
//! them at 8 columns; any indentation does).
//!
//! Read as one document, such a dump is parsed on one core. Here each item is cut out
//! at those lines and parsed on its own (the items in runs on the machine's threads,
//! as the YAML fast path reads its pieces, [`super::list`]), and the rest of the text,
//! with the items taken out, is read as the head. A line break never occurs inside a
//! JSON string (a raw control character there is a syntax error), so a line is never
//! cut inside one; and an item that parses as one whole value, followed by the comma
//! that separates it from the next (none after the last), reads exactly as it does in
//! the whole document.
//!
//! It changes nothing but speed: [`kubectl_json_list`] answers `None` whenever it is
//! not sure, and the caller then reads the text whole, with its exact errors. It is not
//! sure when the `"items": [` line is not a key of the root object (the text before it
//! is scanned for that), when an item or the head fails to read or holds a duplicate
//! key, when an item is not followed by its comma (or the last one is), when the head
//! does not read `items` as the empty array left in its place or is followed by another
//! document, or when anything nests within a few levels of the reader's recursion limit.

use std::cell::RefCell;

use serde::de::DeserializeSeed;
use serde_json::Value;

use super::list::read_all;
use super::{Keys, Limits, ValueSeed};

/// About the bytes of the items of one run read in turn: runs are handed to the
/// threads in contiguous blocks, so a run only bounds how the work is shared.
#[cfg(not(test))]
const RUN_BYTES: usize = 1 << 20;
/// Small runs in the unit tests, so that small texts have many.
#[cfg(test)]
const RUN_BYTES: usize = 4 << 10;

/// Where the items are: the text before them (up to the line after `"items": [`), the
/// text after them (from the line that closes the array), each item's start.
struct Layout {
    region: (usize, usize),
    starts: Vec<usize>,
}

/// The spaces a line starts with, and the rest; `None` when it starts with a tab (not
/// kubectl's layout).
fn indented(line: &str) -> Option<(usize, &str)> {
    let rest = line.trim_start_matches(' ');
    (!rest.starts_with('\t')).then_some((line.len() - rest.len(), rest))
}

fn layout(text: &str) -> Option<Layout> {
    let mut lines = text.split_inclusive('\n').scan(0, |at, l| {
        let start = *at;
        *at += l.len();
        Some((start, *at, l.trim_end_matches('\n').trim_end_matches('\r')))
    });
    // The `"items": [` line, at depth 1 of the document.
    let (items_line, region_start, depth) = lines.find_map(|(at, next, line)| {
        let (depth, rest) = indented(line)?;
        (rest.trim_end() == "\"items\": [").then_some((at, next, depth))
    })?;
    if !in_root_object(&text[..items_line]) {
        return None;
    }
    // The first item's `{` sets the items' indentation.
    let mut starts = Vec::new();
    let mut item_depth = None;
    // A line that starts deeper than the items is inside one (most lines are): one
    // compare of its first bytes, no count of its spaces.
    let mut deeper = String::new();
    for (at, _, line) in lines {
        if !deeper.is_empty() && line.starts_with(deeper.as_str()) {
            continue;
        }
        let (d, rest) = indented(line)?;
        if rest.trim_end().is_empty() {
            continue;
        }
        if d <= depth {
            // The line that closes the items.
            return (rest.starts_with(']') && !starts.is_empty()).then_some(Layout {
                region: (region_start, at),
                starts,
            });
        }
        match item_depth {
            None if rest == "{" => {
                item_depth = Some(d);
                deeper = " ".repeat(d + 1);
                starts.push(at);
            }
            None => return None,
            Some(i) if d == i && rest == "{" => starts.push(at),
            Some(_) => {}
        }
    }
    None
}

/// Whether `prefix` (the text before the `"items": [` line) leaves the reader inside
/// the root object, one level deep and outside any string.
fn in_root_object(prefix: &str) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut first = None;
    for b in prefix.bytes() {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                first.get_or_insert(b);
                depth += 1;
            }
            b'}' | b']' => match depth.checked_sub(1) {
                // Closed back to the top level: a second document follows.
                Some(0) | None => return false,
                Some(d) => depth = d,
            },
            _ => {}
        }
    }
    !in_string && depth == 1 && first == Some(b'{')
}

/// Reads one JSON document of `text` whole, with the loader's duplicate-key check;
/// `None` on any error, a duplicate, anything after it, or nesting near the recursion
/// limit.
fn read(text: &str) -> Option<Value> {
    let mut de = serde_json::Deserializer::from_str(text);
    let keys = RefCell::new(Keys::default());
    let v = (ValueSeed { keys: &keys }).deserialize(&mut de).ok()?;
    de.end().ok()?;
    let keys = keys.into_inner();
    // An item sits two levels below the whole document's root: leave anything near
    // the limit to the whole read.
    (keys.duplicate.is_none() && keys.max_depth + 4 < Limits::MAX_NESTING).then_some(v)
}

/// Item `i` of the starts, without the comma that ends it (every item but the last
/// has one, the last none).
fn item<'t>(text: &'t str, layout: &Layout, i: usize) -> Option<&'t str> {
    let last = i + 1 == layout.starts.len();
    let end = if last {
        layout.region.1
    } else {
        layout.starts[i + 1]
    };
    let item = text[layout.starts[i]..end].trim_end();
    match item.strip_suffix(',') {
        Some(item) if !last => Some(item),
        None if last => Some(item),
        _ => None,
    }
}

/// The document `text` is, read item by item, or `None` when the fast path does not
/// apply or is not sure (see the module docs).
pub(super) fn kubectl_json_list(text: &str) -> Option<Value> {
    let layout = layout(text)?;
    let (start, end) = layout.region;
    let starts = &layout.starts;
    // Runs of about equal bytes, cut at item starts.
    let runs_n = (end - start).div_ceil(RUN_BYTES).max(1);
    let mut cuts = vec![0usize];
    for k in 1..runs_n {
        let target = start + (end - start) * k / runs_n;
        let i = starts.partition_point(|&s| s < target);
        if i > *cuts.last().expect("not empty") && i < starts.len() {
            cuts.push(i);
        }
    }
    cuts.push(starts.len());
    let runs: Vec<(usize, usize)> = cuts.windows(2).map(|w| (w[0], w[1])).collect();
    let read_run = |&(from, to): &(usize, usize)| -> Option<Vec<Value>> {
        (from..to)
            .map(|i| item(text, &layout, i).and_then(read))
            .collect()
    };
    let read_head = || {
        let mut head = String::with_capacity(start + (text.len() - end));
        head.push_str(&text[..start]);
        head.push_str(&text[end..]);
        read(&head)
    };
    let (head, pieces) = read_all(&runs, read_run, read_head);
    super::list::join_items(head?, pieces, starts.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    /// The whole-document read the fast path stands in for.
    fn whole(text: &str) -> Option<Value> {
        read(text)
    }

    fn same(text: &str) {
        let fast = kubectl_json_list(text).expect("the fast path applies");
        assert_eq!(Some(fast), whole(text), "{text}");
    }

    /// `kubectl get -o json`'s layout: 4-space indentation, items at 8 columns.
    const LIST: &str = r#"{
    "apiVersion": "v1",
    "items": [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "labels": {
                    "x": "{\n        {"
                },
                "name": "a"
            }
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "p"
            },
            "spec": {
                "containers": [
                    {
                        "args": ["]", "\"items\": ["],
                        "name": "c"
                    }
                ]
            }
        },
        {
            "kind": "Node", "metadata": {"name": "b"}
        }
    ],
    "kind": "List",
    "metadata": {
        "resourceVersion": ""
    }
}
"#;

    #[test]
    fn a_kubectl_json_list_reads_as_the_whole_document_does() {
        same(LIST);
        same(&LIST.replace('\n', "\r\n"));
        // Two-space indentation, items last, no trailing newline.
        same(
            "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\n      \"a\": 1\n    },\n    {\n    }\n  ]\n}",
        );
    }

    #[test]
    fn many_runs_read_as_one() {
        let mut text = String::from("{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n");
        for i in 0..5_000 {
            if i > 0 {
                text.push_str(",\n");
            }
            write!(
                text,
                "        {{\n            \"kind\": \"Node\",\n            \"metadata\": {{\n                \"name\": \"node-{i}\"\n            }}\n        }}"
            )
            .expect("a String takes any text");
        }
        text.push_str("\n    ],\n    \"kind\": \"List\"\n}\n");
        assert!(text.len() > 16 * RUN_BYTES);
        same(&text);
    }

    #[test]
    fn unsure_texts_are_left_to_the_whole_read() {
        for text in [
            // Not a list, no items, items not of the root object.
            "{\n    \"kind\": \"Node\"\n}\n",
            "{\n    \"items\": [\n    ]\n}\n",
            "{\n    \"a\": {\n        \"items\": [\n            {\n            }\n        ]\n    }\n}\n",
            "{\n    \"a\": \"x\"\n}\n{\n    \"items\": [\n        {\n        }\n    ]\n}\n",
            "[\n    \"items\": [\n        {\n        }\n    ]\n]\n",
            // Items not opened by `{` alone on their line.
            "{\n    \"items\": [\n        1,\n        {\n        }\n    ]\n}\n",
            "{\n    \"items\": [\n        {\n        },\n        {\"a\": 1}\n    ]\n}\n",
            // A duplicate key in an item, and in the head.
            "{\n    \"items\": [\n        {\n            \"a\": 1,\n            \"a\": 2\n        }\n    ]\n}\n",
            "{\n    \"kind\": \"List\",\n    \"items\": [\n        {\n        }\n    ],\n    \"kind\": \"List\"\n}\n",
            "{\n    \"items\": [\n        {\n        }\n    ],\n    \"items\": []\n}\n",
            // A syntax error in an item; a missing comma; a trailing one.
            "{\n    \"items\": [\n        {\n            \"a\": nope\n        }\n    ]\n}\n",
            "{\n    \"items\": [\n        {\n        }\n        {\n        }\n    ]\n}\n",
            "{\n    \"items\": [\n        {\n        },\n        {\n        },\n    ]\n}\n",
            // Two documents.
            "{\n    \"items\": [\n        {\n        }\n    ]\n}\n{}\n",
            // A tab.
            "{\n    \"items\": [\n\t{\n\t}\n    ]\n}\n",
        ] {
            assert_eq!(kubectl_json_list(text), None, "{text:?}");
        }
    }

    #[test]
    fn deep_nesting_is_left_to_the_whole_read() {
        let depth = Limits::MAX_NESTING - 3;
        let text = format!(
            "{{\n    \"items\": [\n        {{\n            \"a\": {}1{}\n        }}\n    ]\n}}\n",
            "[".repeat(depth),
            "]".repeat(depth)
        );
        assert_eq!(kubectl_json_list(&text), None);
        same("{\n    \"items\": [\n        {\n            \"a\": [[[1]]]\n        }\n    ]\n}\n");
    }
}
