//! Aligned tables and colour.
//!
//! Colour is decided once per stream by the caller (the binary: `--color always` /
//! `never` win; `auto` colours only a terminal, and only when `NO_COLOR` is unset or
//! empty, <https://no-color.org>). Widths are computed on the text without colour
//! codes, so piped output is the same text minus the codes.

use std::fmt::Write as _;

/// A colour (or weight) for one piece of text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Paint {
    /// As is.
    Plain,
    /// Bold (headers, titles).
    Bold,
    /// Green (placed).
    Green,
    /// Yellow (preempted, warnings).
    Yellow,
    /// Red (pending, errors).
    Red,
    /// Cyan (names of things).
    Cyan,
}

impl Paint {
    fn code(self) -> Option<&'static str> {
        match self {
            Paint::Plain => None,
            Paint::Bold => Some("1"),
            Paint::Green => Some("32"),
            Paint::Yellow => Some("33"),
            Paint::Red => Some("31"),
            Paint::Cyan => Some("36"),
        }
    }
}

/// Whether to emit colour codes (ANSI SGR) in a command's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    color: bool,
}

impl Style {
    /// No colour at all.
    pub const PLAIN: Style = Style { color: false };

    /// Colour codes when `color`.
    pub fn new(color: bool) -> Style {
        Style { color }
    }

    /// Whether colour codes are emitted.
    pub fn is_color(self) -> bool {
        self.color
    }

    /// `text` painted (or as is without colour).
    pub(crate) fn paint(self, paint: Paint, text: &str) -> String {
        match paint.code() {
            Some(code) if self.color && !text.is_empty() => format!("\x1b[{code}m{text}\x1b[0m"),
            _ => text.to_owned(),
        }
    }
}

/// One table cell.
#[derive(Clone, Debug)]
pub(crate) struct Cell {
    text: String,
    paint: Paint,
}

impl Cell {
    /// A cell without colour.
    pub(crate) fn plain(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            paint: Paint::Plain,
        }
    }

    /// A painted cell.
    pub(crate) fn painted(text: impl Into<String>, paint: Paint) -> Cell {
        Cell {
            text: text.into(),
            paint,
        }
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::plain(s)
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::plain(s)
    }
}

/// A table: a header row and rows, columns left-aligned and separated by two spaces,
/// no padding after the last column (no trailing spaces).
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    header: Vec<String>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these column titles.
    pub(crate) fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are empty).
    pub(crate) fn row(&mut self, cells: Vec<Cell>) {
        self.rows.push(cells);
    }

    /// Whether there are no rows.
    pub(crate) fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Writes the table, each line prefixed by `indent`.
    pub(crate) fn write(&self, out: &mut String, style: Style, indent: &str) {
        let columns = self.header.len();
        let mut widths: Vec<usize> = self.header.iter().map(|h| width(h)).collect();
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate().take(columns) {
                widths[i] = widths[i].max(width(&cell.text));
            }
        }
        let header: Vec<Cell> = self
            .header
            .iter()
            .map(|h| Cell::painted(h.clone(), Paint::Bold))
            .collect();
        for row in std::iter::once(&header).chain(&self.rows) {
            let mut line = String::from(indent);
            // The last non-empty cell ends the line: no trailing spaces.
            let last = row
                .iter()
                .take(columns)
                .rposition(|c| !c.text.is_empty())
                .unwrap_or(0);
            for (i, cell) in row.iter().enumerate().take(last + 1) {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(&style.paint(cell.paint, &cell.text));
                if i < last {
                    line.push_str(&" ".repeat(widths[i] - width(&cell.text)));
                }
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
}

/// Display width: one column per character (names, numbers and the box-drawing
/// characters gangpack prints are all single-width).
pub(crate) fn width(s: &str) -> usize {
    s.chars().count()
}

/// `n thing` or `n things`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_without_trailing_spaces() {
        let mut t = Table::new(&["NAME", "NODE", "GPUS"]);
        t.row(vec!["a".into(), "node-long".into(), "8".into()]);
        t.row(vec!["longer-name".into(), "n".into(), String::new().into()]);
        let mut out = String::new();
        t.write(&mut out, Style::PLAIN, "  ");
        assert_eq!(
            out,
            "  NAME         NODE       GPUS\n  a            node-long  8\n  longer-name  n\n"
        );
    }

    #[test]
    fn colour_codes_do_not_count_in_widths() {
        let mut t = Table::new(&["A", "B"]);
        t.row(vec![Cell::painted("xy", Paint::Red), "z".into()]);
        let mut out = String::new();
        t.write(&mut out, Style { color: true }, "");
        assert_eq!(
            out,
            "\x1b[1mA\x1b[0m   \x1b[1mB\x1b[0m\n\x1b[31mxy\x1b[0m  z\n"
        );
    }
}

/// The longest a list of node names gets in a table cell before it is cut short with
/// its count ([`node_list`]).
pub(crate) const NODE_LIST_WIDTH: usize = 72;

/// Node names for a table cell, in natural order, separated by spaces. A list longer
/// than [`NODE_LIST_WIDTH`] characters has its runs of numbered names folded as
/// Slurm's hostlists write them (`node-[0-331]`, `n[1-3,7] gpu-a`), and when that is
/// still too long it is cut short, ending with `…` and the count
/// (`node-[00008,00303,00317-00319,…] (100 nodes)`). Every node is still in the pods
/// table and in `-o yaml|json`.
pub(crate) fn node_list(nodes: &[&str]) -> String {
    let mut sorted: Vec<&str> = nodes.to_vec();
    sorted.sort_by(|a, b| gangpack_k8s::natural_cmp(a, b));
    sorted.dedup();
    let total = sorted.len();
    let plain = sorted.join(" ");
    if plain.chars().count() <= NODE_LIST_WIDTH {
        return plain;
    }
    // Groups of (prefix, digits width or 0 when unpadded, numbers), in order.
    let mut words: Vec<Word<'_>> = Vec::new();
    for name in &sorted {
        let digits = name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, number) = name.split_at(name.len() - digits);
        let parsed = (digits > 0 && digits <= 18)
            .then(|| number.parse::<u64>().ok())
            .flatten();
        let Some(n) = parsed else {
            words.push(Word::Plain(name));
            continue;
        };
        // Zero-padded numbers (`00317`) fold only with numbers of the same width.
        let width = if number.starts_with('0') && digits > 1 {
            digits
        } else {
            0
        };
        match words.last_mut() {
            Some(Word::Numbered {
                prefix: p,
                width: w,
                numbers,
            }) if *p == prefix && *w == width => {
                numbers.push(n);
            }
            _ => words.push(Word::Numbered {
                prefix,
                width,
                numbers: vec![n],
            }),
        }
    }
    let mut out = String::new();
    let mut shown = 0;
    for word in &words {
        let sep = if out.is_empty() { "" } else { " " };
        match word {
            Word::Plain(name) => {
                if !fits(&out, sep.len() + name.chars().count(), shown + 1, total) {
                    return cut(out, total);
                }
                out.push_str(sep);
                out.push_str(name);
                shown += 1;
            }
            Word::Numbered {
                prefix,
                width,
                numbers,
            } => {
                let pad = |n: u64| format!("{n:0width$}", width = *width);
                let runs = runs(numbers);
                if numbers.len() == 1 {
                    let name = format!("{prefix}{}", pad(numbers[0]));
                    if !fits(&out, sep.len() + name.chars().count(), shown + 1, total) {
                        return cut(out, total);
                    }
                    out.push_str(sep);
                    out.push_str(&name);
                    shown += 1;
                    continue;
                }
                let open = format!("{sep}{prefix}[");
                out.push_str(&open);
                for (i, (a, b)) in runs.iter().enumerate() {
                    let comma = if i == 0 { "" } else { "," };
                    let run = if a == b {
                        pad(*a)
                    } else {
                        format!("{}-{}", pad(*a), pad(*b))
                    };
                    let count = usize::try_from(b - a + 1).unwrap_or(usize::MAX);
                    // The run and the closing bracket.
                    let len = comma.len() + run.len() + 1;
                    if !fits(&out, len, shown + count, total) {
                        if i == 0 {
                            out.truncate(out.len() - open.len());
                        } else {
                            out.push_str(",…]");
                            return with_count(out, total);
                        }
                        return cut(out, total);
                    }
                    out.push_str(comma);
                    out.push_str(&run);
                    shown += count;
                }
                out.push(']');
            }
        }
    }
    out
}

/// A word of [`node_list`]: a name, or names that differ in a trailing number.
enum Word<'a> {
    Plain(&'a str),
    Numbered {
        prefix: &'a str,
        width: usize,
        numbers: Vec<u64>,
    },
}

/// Consecutive numbers as `(first, last)` runs (the numbers sorted, distinct).
fn runs(numbers: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &n in numbers {
        match out.last_mut() {
            Some((_, last)) if n == *last + 1 => *last = n,
            _ => out.push((n, n)),
        }
    }
    out
}

/// Whether `more` characters fit after `out`: always when they complete the list
/// (within [`NODE_LIST_WIDTH`]), else leaving room for the ` … (N nodes)` ending.
fn fits(out: &str, more: usize, shown_after: usize, total: usize) -> bool {
    let len = out.chars().count() + more;
    if shown_after >= total {
        return len <= NODE_LIST_WIDTH;
    }
    len + ending(total).chars().count() + 2 <= NODE_LIST_WIDTH
}

/// ` (N nodes)`.
fn ending(total: usize) -> String {
    format!(" ({total} nodes)")
}

/// The list cut short: `… (N nodes)` after what fits.
fn cut(mut out: String, total: usize) -> String {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push('…');
    with_count(out, total)
}

fn with_count(mut out: String, total: usize) -> String {
    out.push_str(&ending(total));
    out
}

#[cfg(test)]
mod node_list_tests {
    use super::node_list;

    #[test]
    fn node_lists_fold_and_cut() {
        assert_eq!(node_list(&["n10", "n2", "n1", "n2"]), "n1 n2 n10");
        let many: Vec<String> = (0..332).map(|i| format!("node-{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(node_list(&refs), "node-[0-331]");
        // Zero-padded numbers fold with their width; other names stay as they are.
        let mut padded: Vec<String> = (1..=40).map(|i| format!("gpu-{i:03}")).collect();
        padded.extend(["login".to_owned(), "gpu-x".to_owned()]);
        let refs: Vec<&str> = padded.iter().map(String::as_str).collect();
        assert_eq!(node_list(&refs), "gpu-[001-040] gpu-x login");
        // Too long even folded: cut at a run, with the count.
        let odd: Vec<String> = (0..400).step_by(2).map(|i| format!("n{i}")).collect();
        let refs: Vec<&str> = odd.iter().map(String::as_str).collect();
        let cell = node_list(&refs);
        assert!(cell.starts_with("n[0,2,4,6,"), "{cell}");
        assert!(cell.ends_with(",…] (200 nodes)"), "{cell}");
        assert!(cell.chars().count() <= super::NODE_LIST_WIDTH, "{cell}");
        // Long names without numbers: cut between names.
        let long: Vec<String> = (b'a'..=b'z')
            .map(|c| format!("host-{}", char::from(c)))
            .collect();
        let refs: Vec<&str> = long.iter().map(String::as_str).collect();
        let cell = node_list(&refs);
        assert!(cell.starts_with("host-a host-b "), "{cell}");
        assert!(cell.ends_with(" … (26 nodes)"), "{cell}");
        assert!(cell.chars().count() <= super::NODE_LIST_WIDTH, "{cell}");
    }
}
