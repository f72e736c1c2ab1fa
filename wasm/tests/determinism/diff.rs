//! A unified-style line diff for golden mismatches: the common head and tail are cut,
//! the middle is diffed by longest common subsequence, three lines of context around
//! each change.

use std::fmt::Write as _;

/// Lines of the middle diffed exactly; beyond that the rest is summarised.
const MAX_MIDDLE: usize = 600;
/// Lines of context around a change.
const CONTEXT: usize = 3;

/// `-` lines of `expected`, `+` lines of `actual`, with line numbers.
pub(crate) fn unified(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.lines().collect();
    let b: Vec<&str> = actual.lines().collect();
    let head = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "--- golden ({} lines)\n+++ actual ({} lines)\n@@ first difference at line {} @@",
        a.len(),
        b.len(),
        head + 1
    );
    if ma.is_empty() && mb.is_empty() {
        out.push_str("(the texts differ only in line endings or a final newline)\n");
        return out;
    }
    for line in &a[head.saturating_sub(CONTEXT)..head] {
        let _ = writeln!(out, " {line}");
    }
    if ma.len() > MAX_MIDDLE || mb.len() > MAX_MIDDLE {
        for line in ma.iter().take(20) {
            let _ = writeln!(out, "-{line}");
        }
        for line in mb.iter().take(20) {
            let _ = writeln!(out, "+{line}");
        }
        let _ = writeln!(
            out,
            "... {} golden and {} actual lines differ in all",
            ma.len(),
            mb.len()
        );
        return out;
    }
    // lcs[i][j]: the longest common subsequence of ma[i..] and mb[j..].
    let mut lcs = vec![vec![0u16; mb.len() + 1]; ma.len() + 1];
    for i in (0..ma.len()).rev() {
        for j in (0..mb.len()).rev() {
            lcs[i][j] = if ma[i] == mb[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut same_run: Vec<&str> = Vec::new();
    let flush = |out: &mut String, run: &mut Vec<&str>, last: bool| {
        if run.len() > 2 * CONTEXT {
            for line in &run[..CONTEXT] {
                let _ = writeln!(out, " {line}");
            }
            if !last {
                out.push_str("@@\n");
                for line in &run[run.len() - CONTEXT..] {
                    let _ = writeln!(out, " {line}");
                }
            }
        } else {
            for line in run.iter() {
                let _ = writeln!(out, " {line}");
            }
        }
        run.clear();
    };
    while i < ma.len() || j < mb.len() {
        if i < ma.len() && j < mb.len() && ma[i] == mb[j] {
            same_run.push(ma[i]);
            i += 1;
            j += 1;
        } else if i < ma.len() && (j == mb.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            flush(&mut out, &mut same_run, false);
            let _ = writeln!(out, "-{}", ma[i]);
            i += 1;
        } else {
            flush(&mut out, &mut same_run, false);
            let _ = writeln!(out, "+{}", mb[j]);
            j += 1;
        }
    }
    flush(&mut out, &mut same_run, true);
    let end = a.len() - tail;
    for line in &a[end..(end + CONTEXT).min(a.len())] {
        let _ = writeln!(out, " {line}");
    }
    out
}
