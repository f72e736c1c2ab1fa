//! `gangpack diff`: two schedulers' decisions for one scenario, side by side.
//!
//! Both decision files are applied over the same dump and checked
//! ([`gangpack_k8s::check`]); the report prints the validator's verdict on each side,
//! a summary (pods placed, devices allocated and left unallocated, gangs split,
//! preemptions), then where they differ: pods placed by one side only, pods placed on
//! different nodes, pods evicted by one side only, gangs split, and each side's
//! findings. `-o json|yaml` prints the same as data.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use gangpack_k8s::check::{Finding, Report};
use serde_json::{Value, json};

use crate::input::Messages;
use crate::render::{Cell, Paint, Table, plural};
use crate::{EXIT_OK, EXIT_VIOLATIONS, Failure, Format, Input, Options, Style};

/// The rules that mean a gang is split (placed below `minCount`, or across domains).
const SPLIT_RULES: &[&str] = &[
    "below-min-count",
    "topology-split",
    "topology-label-missing",
];

/// One summary row's number for a side.
type Count = fn(&Side) -> usize;

struct Side {
    name: &'static str,
    report: Report,
}

impl Side {
    fn split(&self) -> BTreeSet<String> {
        self.report
            .findings
            .iter()
            .filter(|f| SPLIT_RULES.contains(&f.rule.as_str()))
            .filter_map(|f| {
                f.objects
                    .iter()
                    .find(|o| o.kind == "PodGroup")
                    .map(|o| format!("{}/{}", o.namespace.as_deref().unwrap_or_default(), o.name))
            })
            .collect()
    }

    fn placed(&self) -> &BTreeSet<String> {
        &self.report.new_bindings
    }
}

pub(crate) fn run(
    global: &Options,
    input: &Input,
    ours: &Input,
    theirs: &Input,
    format: Format,
    style: Style,
    messages: &mut Messages,
) -> Result<crate::Outcome, Failure> {
    let (ours, theirs) = sides(global, input, ours, theirs, messages)?;
    let stdout = match format {
        Format::Table => table(&ours, &theirs, style),
        Format::Json | Format::Yaml => crate::plan::print_list(&data(&ours, &theirs), format)?,
    };
    Ok(crate::Outcome {
        stdout,
        code: code(&ours, &theirs),
    })
}

/// Both forms from one comparison: the table, the data `-o json` prints, whether the
/// two are the same (the table's last line), the exit status.
pub(crate) fn both(
    global: &Options,
    input: &Input,
    ours: &Input,
    theirs: &Input,
    style: Style,
    messages: &mut Messages,
) -> Result<(String, Value, bool, u8), Failure> {
    let (ours, theirs) = sides(global, input, ours, theirs, messages)?;
    Ok((
        table(&ours, &theirs, style),
        data(&ours, &theirs),
        same(&ours, &theirs),
        code(&ours, &theirs),
    ))
}

fn code(ours: &Side, theirs: &Side) -> u8 {
    if ours.report.is_valid() && theirs.report.is_valid() {
        EXIT_OK
    } else {
        EXIT_VIOLATIONS
    }
}

/// Both decision files applied over the dump and checked.
fn sides(
    global: &Options,
    input: &Input,
    ours: &Input,
    theirs: &Input,
    messages: &mut Messages,
) -> Result<(Side, Side), Failure> {
    let mut side_messages = Messages::default();
    let ours = Side {
        name: "ours",
        report: crate::check::report(global, input, Some(ours), false, &mut side_messages)?,
    };
    // The dump's warnings once, not once per side.
    for w in side_messages.into_lines() {
        messages.warning(&w);
    }
    let theirs = Side {
        name: "theirs",
        report: crate::check::report(global, input, Some(theirs), false, &mut Messages::default())?,
    };
    Ok((ours, theirs))
}

/// Pods placed by both on different nodes: pod → (ours, theirs).
fn moved<'a>(a: &'a Side, b: &'a Side) -> BTreeMap<&'a str, (&'a str, &'a str)> {
    a.placed()
        .intersection(b.placed())
        .filter_map(|p| {
            let x = a.report.bindings.get(p)?;
            let y = b.report.bindings.get(p)?;
            (x != y).then_some((p.as_str(), (x.as_str(), y.as_str())))
        })
        .collect()
}

fn only<'a>(a: &'a BTreeSet<String>, b: &'a BTreeSet<String>) -> Vec<&'a str> {
    a.difference(b).map(String::as_str).collect()
}

fn verdict(r: &Report) -> String {
    if r.is_valid() {
        "valid".to_owned()
    } else {
        format!(
            "invalid ({})",
            plural(r.findings.len(), "violation", "violations")
        )
    }
}

fn table(ours: &Side, theirs: &Side, style: Style) -> String {
    let mut out = String::new();
    let mut t = Table::new(&["", "OURS", "THEIRS"]);
    let paint = |r: &Report| {
        if r.is_valid() {
            Cell::painted(verdict(r), Paint::Green)
        } else {
            Cell::painted(verdict(r), Paint::Red)
        }
    };
    t.row(vec![
        "verdict".into(),
        paint(&ours.report),
        paint(&theirs.report),
    ]);
    let rows: [(&str, Count); 5] = [
        ("pods placed", |s| s.placed().len()),
        ("pods bound", |s| s.report.pods_bound),
        ("devices allocated", |s| s.report.devices_allocated),
        ("devices unallocated", |s| {
            s.report.devices.saturating_sub(s.report.devices_allocated)
        }),
        ("gangs split", |s| s.split().len()),
    ];
    for (label, f) in rows {
        t.row(vec![
            label.into(),
            f(ours).to_string().into(),
            f(theirs).to_string().into(),
        ]);
    }
    t.row(vec![
        "pods evicted".into(),
        ours.report.evicted.len().to_string().into(),
        theirs.report.evicted.len().to_string().into(),
    ]);
    t.write(&mut out, style, "");

    let mut section = |title: &str, lines: Vec<String>| {
        if lines.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{}", style.paint(Paint::Bold, title));
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    };
    for (a, b) in [(ours, theirs), (theirs, ours)] {
        let lines = only(a.placed(), b.placed())
            .into_iter()
            .map(|p| format!("Pod {p} on {}", a.report.bindings[p]))
            .collect();
        section(&format!("placed by {} only:", a.name), lines);
    }
    section(
        "placed on different nodes (ours, theirs):",
        moved(ours, theirs)
            .into_iter()
            .map(|(p, (x, y))| format!("Pod {p}: {x}, {y}"))
            .collect(),
    );
    for (a, b) in [(ours, theirs), (theirs, ours)] {
        section(
            &format!("evicted by {} only:", a.name),
            only(&a.report.evicted, &b.report.evicted)
                .into_iter()
                .map(|p| format!("Pod {p}"))
                .collect(),
        );
    }
    for s in [ours, theirs] {
        section(
            &format!("gangs split by {}:", s.name),
            s.split()
                .into_iter()
                .map(|g| format!("PodGroup {g}"))
                .collect(),
        );
    }
    for s in [ours, theirs] {
        section(
            &format!("violations ({}):", s.name),
            s.report
                .findings
                .iter()
                .map(|f| format!("{}: {}", style.paint(Paint::Red, &f.rule), f.message))
                .collect(),
        );
    }
    let _ = writeln!(
        out,
        "\n{}",
        if same(ours, theirs) {
            "the two decisions place and evict the same pods on the same nodes"
        } else {
            "the two decisions differ"
        }
    );
    out
}

/// Whether the two place and evict the same pods on the same nodes.
fn same(ours: &Side, theirs: &Side) -> bool {
    ours.placed() == theirs.placed()
        && moved(ours, theirs).is_empty()
        && ours.report.evicted == theirs.report.evicted
}

fn findings(f: &[Finding]) -> Value {
    serde_json::to_value(f).unwrap_or(Value::Null)
}

fn data(ours: &Side, theirs: &Side) -> Value {
    let side = |s: &Side| {
        json!({
            "valid": s.report.is_valid(),
            "podsPlaced": s.placed().len(),
            "podsBound": s.report.pods_bound,
            "devicesAllocated": s.report.devices_allocated,
            "devicesUnallocated": s.report.devices.saturating_sub(s.report.devices_allocated),
            "gangsSplit": s.split(),
            "evicted": s.report.evicted,
            "violations": findings(&s.report.findings),
        })
    };
    let moved: Vec<Value> = moved(ours, theirs)
        .into_iter()
        .map(|(p, (x, y))| json!({"pod": p, "ours": x, "theirs": y}))
        .collect();
    json!({
        "ours": side(ours),
        "theirs": side(theirs),
        "placedByOursOnly": only(ours.placed(), theirs.placed()),
        "placedByTheirsOnly": only(theirs.placed(), ours.placed()),
        "placedOnDifferentNodes": moved,
        "evictedByOursOnly": only(&ours.report.evicted, &theirs.report.evicted),
        "evictedByTheirsOnly": only(&theirs.report.evicted, &ours.report.evicted),
    })
}
