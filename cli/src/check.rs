//! `gangpack check`: the running state of a dump, or the state after decision objects
//! are applied over it, judged by the core's independent validator
//! ([`gangpack_k8s::check`]).
//!
//! `-o table` (the default) prints one paragraph per finding:
//!
//! ```text
//! device-allocated-twice: device gpu.nvidia.com/node-a/gpu-0 is allocated to both ml/a and ml/b
//!   objects: ResourceClaim ml/a, ResourceClaim ml/b, Device gpu.nvidia.com/node-a/gpu-0
//! ```
//!
//! then the summary line, `invalid: N violations of R rules (...)` or `valid: ...`.
//! `-o json|yaml` prints the findings as a list of `{rule, message, objects}`, where
//! each object is `{kind, namespace?, name}`.

use std::fmt::Write as _;

use gangpack_k8s::check::{CheckOptions, Report};

use crate::input::{self, Messages};
use crate::render::{Paint, plural};
use crate::{EXIT_OK, EXIT_VIOLATIONS, Failure, Format, Input, Options, Style};

pub(crate) fn run(
    global: &Options,
    input: &Input,
    decisions: Option<&Input>,
    admission: bool,
    format: Format,
    style: Style,
    messages: &mut Messages,
) -> Result<crate::Outcome, Failure> {
    let report = report(global, input, decisions, admission, messages)?;
    let stdout = match format {
        Format::Table => table(&report, decisions.is_some(), style),
        Format::Json | Format::Yaml => {
            let list = serde_json::to_value(&report.findings)
                .map_err(|e| Failure::Io(format!("cannot print the findings: {e}")))?;
            crate::plan::print_list(&list, format)?
        }
    };
    let code = if report.is_valid() {
        EXIT_OK
    } else {
        EXIT_VIOLATIONS
    };
    Ok(crate::Outcome { stdout, code })
}

/// Loads the dump and the decisions and checks them.
pub(crate) fn report(
    global: &Options,
    input: &Input,
    decisions: Option<&Input>,
    admission: bool,
    messages: &mut Messages,
) -> Result<Report, Failure> {
    let options = input::load_options(global);
    let dump = input::load_cluster(input, options, messages)?;
    let decisions = match decisions {
        Some(d) => Some(input::load_with(
            d,
            gangpack_k8s::LoadOptions {
                decisions: true,
                ..options
            },
        )?),
        None => None,
    };
    let load_warnings = dump.warnings.clone();
    let check = CheckOptions {
        build: input::build_options(global),
        admission,
    };
    match gangpack_k8s::check::check(dump, decisions, &check) {
        Ok(report) => {
            messages.warnings(&report.warnings);
            for s in &report.skipped {
                messages.warning(&format!("skipped: {s}"));
            }
            Ok(report)
        }
        Err(errors) => {
            messages.warnings(&load_warnings);
            Err(input::input_failure(&errors))
        }
    }
}

pub(crate) fn table(report: &Report, decided: bool, style: Style) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let _ = writeln!(out, "{}: {}", style.paint(Paint::Red, &f.rule), f.message);
        if !f.objects.is_empty() {
            let objects: Vec<String> = f.objects.iter().map(ToString::to_string).collect();
            let _ = writeln!(out, "  objects: {}", objects.join(", "));
        }
    }
    if !report.findings.is_empty() {
        out.push('\n');
    }
    let mut state = format!(
        "{}, {}, {}",
        plural(report.pods_bound, "pod bound", "pods bound"),
        plural(
            report.claims_allocated,
            "claim allocated",
            "claims allocated"
        ),
        plural(
            report.groups_running,
            "PodGroup running",
            "PodGroups running"
        ),
    );
    if decided {
        let mut parts = Vec::new();
        for (n, what) in [
            (report.patched, "patched"),
            (report.replaced, "replaced"),
            (report.added, "added"),
        ] {
            if n > 0 {
                parts.push(format!("{} {what}", plural(n, "object", "objects")));
            }
        }
        if report.bound > 0 {
            parts.push(plural(report.bound, "Binding", "Bindings"));
        }
        if parts.is_empty() {
            parts.push("none".to_owned());
        }
        let _ = write!(
            state,
            "; decisions: {}; {}",
            parts.join(", "),
            plural(
                report.decided,
                "binding or allocation new",
                "bindings or allocations new"
            ),
        );
    }
    if report.running_exempt > 0 {
        let _ = writeln!(
            out,
            "note: {} on pods and claims already running {} not held against them (a NoSchedule taint, cordon or label change after they were placed); --admission holds them",
            plural(
                report.running_exempt,
                "finding of a placement-time rule",
                "findings of placement-time rules"
            ),
            if report.running_exempt == 1 {
                "is"
            } else {
                "are"
            },
        );
    }
    if report.is_valid() {
        let _ = writeln!(out, "{}: {state}", style.paint(Paint::Green, "valid"));
    } else {
        let mut rules: Vec<&str> = report.findings.iter().map(|f| f.rule.as_str()).collect();
        rules.sort_unstable();
        rules.dedup();
        let _ = writeln!(
            out,
            "{}: {} of {} ({state})",
            style.paint(Paint::Red, "invalid"),
            plural(report.findings.len(), "violation", "violations"),
            plural(rules.len(), "rule", "rules"),
        );
    }
    out
}
