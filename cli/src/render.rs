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
