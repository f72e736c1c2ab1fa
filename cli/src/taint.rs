//! `gangpack taint`: the blast radius of a device taint, a node taint or a
//! DeviceTaintRule.
//!
//! The taint is applied to the input's running state (bound pods, allocated claims);
//! with `--after-plan`, one scheduling cycle runs first, as `plan` would, and the taint
//! applies to the state after it. Nothing is sent anywhere.
//!
//! A taint given with `--device` or `--node` has key `gangpack.dev/what-if` unless
//! `--key` says otherwise (no pod tolerates it by accident), an empty value, and effect
//! `NoExecute` unless `--effect` says otherwise; its `timeAdded` is the logical clock
//! (`--now`, default the latest timestamp in the input).
//!
//! # Table output (the default)
//!
//! 1. `taint: <what>: <key=value:effect> at <time>` (`taint (dry run): ...` for a
//!    DeviceTaintRule with effect `None`, followed by upstream's status message, and the
//!    sections below say what *would* happen with `NoExecute`).
//! 2. `evictions:` a table `POD`, `AT` (RFC 3339), `WHY` (the claim and taint, the node
//!    taint, or the `disruptionMode: All` PodGroup losing a member), by time then pod;
//!    or `no pod is evicted`.
//! 3. `evictions cancelled:` the same table, when the change cancels any.
//! 4. `broken gangs:` one line per PodGroup that falls below `minCount` or goes whole:
//!    `PodGroup ns/name (disruptionMode All): E of B bound pods evicted, L left,
//!    minCount M`.
//! 5. `where they could go:` the `plan` unit table for the evicted units after the
//!    evictions (a cycle on a copy, with the evicted pods pending again), then
//!    `not placed:` reasons.
//! 6. A summary line: `N pods evicted, G gangs broken`.
//!
//! `-o yaml|json` prints the objects the eviction controllers would change (evicted
//! pods with `DisruptionTarget=True`; a rule with its `EvictionInProgress` status) as a
//! `kind: List`.
//!
//! Exit status 0 when the taint could be applied, 2 when it is invalid (no such
//! device or node, a bad key, an effect the target does not take).

use std::fmt::Write as _;

use gangpack::{
    ClusterError, DeviceRef, DeviceTaint, DeviceTaintEffect, SchedulerError, Taint, TaintEffect,
};
use gangpack_k8s::Kind;
use gangpack_k8s::output::{self, Eviction, Outcome, TaintPlan, TaintTarget};

use crate::input::{self, Messages};
use crate::plan::{outcome_paint, reason_line};
use crate::render::{Cell, Paint, Style, Table, plural};
use crate::{EXIT_OK, Effect, Failure, Format, Input, Options};

/// The key of a taint given with `--device` or `--node` without `--key`.
pub const DEFAULT_KEY: &str = "gangpack.dev/what-if";

/// What `gangpack taint` is asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TaintRequest {
    /// The taint.
    pub target: TaintTargetSpec,
    /// Run one scheduling cycle first (`--after-plan`) and taint the state after it.
    pub after_plan: bool,
}

/// The taint: `--device`, `--node` or `--rule`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TaintTargetSpec {
    /// `--device DRIVER/POOL/DEVICE` (`effect` `None` means the default, `NoExecute`).
    Device {
        /// `DRIVER/POOL/DEVICE`.
        device: String,
        /// `--effect`.
        effect: Option<Effect>,
        /// `--key` ([`DEFAULT_KEY`] by default).
        key: String,
        /// `--value` (empty by default).
        value: String,
    },
    /// `--node NODE`.
    Node {
        /// The node's name.
        node: String,
        /// `--effect`.
        effect: Option<Effect>,
        /// `--key`.
        key: String,
        /// `--value`.
        value: String,
    },
    /// `--rule FILE`: the one DeviceTaintRule in this input (replacing a loaded rule of
    /// the same name).
    Rule(Input),
}

/// Runs `gangpack taint`.
pub(crate) fn run(
    global: &Options,
    input: &Input,
    request: &TaintRequest,
    format: Format,
    style: Style,
    messages: &mut Messages,
) -> Result<crate::Outcome, Failure> {
    let (preface, taint_plan) = compute(global, input, request, messages)?;
    let stdout = match format {
        Format::Table => preface + &render(&taint_plan, style),
        f => crate::plan::print_list(&output::list(taint_plan.changed), f)?,
    };
    Ok(crate::Outcome {
        stdout,
        code: EXIT_OK,
    })
}

/// One run in both forms: the table and the `kind: List` of changed objects.
pub(crate) fn both(
    global: &Options,
    input: &Input,
    request: &TaintRequest,
    style: Style,
    messages: &mut Messages,
) -> Result<(String, serde_json::Value), Failure> {
    let (preface, taint_plan) = compute(global, input, request, messages)?;
    let table = preface + &render(&taint_plan, style);
    Ok((table, output::list(taint_plan.changed)))
}

/// The `--after-plan` preface and the taint's plan.
fn compute(
    global: &Options,
    input: &Input,
    request: &TaintRequest,
    messages: &mut Messages,
) -> Result<(String, TaintPlan), Failure> {
    let target = target(global, &request.target, messages)?;
    let mut snapshot = input::snapshot(global, input, messages)?;
    let mut preface = String::new();
    if request.after_plan {
        let plan = output::plan(&mut snapshot);
        let placed = plan
            .rows
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Placed | Outcome::Preempted))
            .count();
        let _ = writeln!(
            preface,
            "after plan: {} of {} placed, {} bound",
            placed,
            plural(plan.rows.len(), "unit", "units"),
            plural(plan.report.pods_bound(), "pod", "pods")
        );
        preface.push('\n');
        snapshot.fold_back(plan.changed);
    }
    let taint_plan = output::taint(&mut snapshot, target).map_err(|e| {
        let message = format!("cannot apply the taint: {e}");
        match e {
            SchedulerError::Cluster(
                ClusterError::NotFound(_) | ClusterError::DeviceNotFound(_),
            ) => Failure::NotFound(message),
            _ => Failure::invalid(message),
        }
    })?;
    Ok((preface, taint_plan))
}

/// The taint the arguments ask for.
fn target(
    global: &Options,
    spec: &TaintTargetSpec,
    messages: &mut Messages,
) -> Result<TaintTarget, Failure> {
    let (device, node, effect, key, value) = match spec {
        TaintTargetSpec::Rule(input) => return rule_target(global, input, messages),
        TaintTargetSpec::Device {
            device,
            effect,
            key,
            value,
        } => (Some(device), None, effect, key, value),
        TaintTargetSpec::Node {
            node,
            effect,
            key,
            value,
        } => (None, Some(node), effect, key, value),
    };
    let effect = effect.unwrap_or(Effect::NoExecute);
    if let Some(d) = device {
        let device = DeviceRef::parse(d).ok_or_else(|| {
            Failure::invalid(format!("--device {d:?}: expected DRIVER/POOL/DEVICE"))
        })?;
        let effect = match effect {
            Effect::NoExecute => DeviceTaintEffect::NoExecute,
            Effect::NoSchedule => DeviceTaintEffect::NoSchedule,
            Effect::None => DeviceTaintEffect::None,
            Effect::PreferNoSchedule => {
                return Err(Failure::invalid(
                    "--effect PreferNoSchedule is for nodes; a device taint is NoExecute, \
                     NoSchedule or None",
                ));
            }
        };
        let taint = DeviceTaint::new(key.clone(), value.clone(), effect);
        return Ok(TaintTarget::Device { device, taint });
    }
    let node = node.cloned().unwrap_or_default();
    let effect = match effect {
        Effect::NoExecute => TaintEffect::NoExecute,
        Effect::NoSchedule => TaintEffect::NoSchedule,
        Effect::PreferNoSchedule => TaintEffect::PreferNoSchedule,
        Effect::None => {
            return Err(Failure::invalid(
                "--effect None is for devices; a node taint is NoExecute, NoSchedule or \
                 PreferNoSchedule",
            ));
        }
    };
    let taint = Taint::new(key.clone(), value.clone(), effect);
    Ok(TaintTarget::Node { node, taint })
}

/// The one DeviceTaintRule in `path`, read as the inputs are (unknown fields warned,
/// errors with `--strict`).
fn rule_target(
    global: &Options,
    rule: &Input,
    messages: &mut Messages,
) -> Result<TaintTarget, Failure> {
    let path = match rule {
        Input::Paths(paths) => paths.join(","),
        Input::Files(files) => files
            .iter()
            .map(|f| f.name.as_str())
            .collect::<Vec<_>>()
            .join(","),
    };
    let loaded = input::load_with(rule, input::load_options(global))?;
    messages.warnings(&loaded.warnings);
    let rules: Vec<_> = loaded
        .objects
        .iter()
        .filter(|o| o.kind == Kind::DeviceTaintRule)
        .collect();
    if rules.len() != 1 || loaded.objects.len() != 1 {
        return Err(Failure::invalid(format!(
            "--rule {path}: expected exactly one DeviceTaintRule, found {} object{} ({} \
             DeviceTaintRule{})",
            loaded.objects.len(),
            if loaded.objects.len() == 1 { "" } else { "s" },
            rules.len(),
            if rules.len() == 1 { "" } else { "s" },
        )));
    }
    let rule = gangpack_k8s::device_taint_rule(rules[0]).map_err(|e| input::input_failure(&e))?;
    Ok(TaintTarget::Rule(rule))
}

fn eviction_table(evictions: &[Eviction]) -> Table {
    let mut t = Table::new(&["POD", "AT", "WHY"]);
    for e in evictions {
        t.row(vec![
            Cell::plain(e.pod.clone()),
            Cell::plain(e.at_rfc3339.clone()),
            Cell::plain(e.why.clone()),
        ]);
    }
    t
}

/// The table form of a taint plan (see the module docs).
pub(crate) fn render(plan: &TaintPlan, style: Style) -> String {
    let mut out = String::new();
    let would = plan.dry_run.is_some();
    let title = if would { "taint (dry run):" } else { "taint:" };
    let _ = writeln!(
        out,
        "{} {} at {}",
        style.paint(Paint::Bold, title),
        plan.target,
        plan.now_rfc3339
    );
    if let Some(dry) = &plan.dry_run {
        let _ = writeln!(out, "  {}", dry.message);
        let _ = writeln!(
            out,
            "  nothing is evicted; below is what effect NoExecute would do"
        );
    }
    out.push('\n');

    if plan.evictions.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            if would {
                "no pod would be evicted"
            } else {
                "no pod is evicted"
            }
        );
    } else {
        let _ = writeln!(
            out,
            "{}",
            style.paint(
                Paint::Bold,
                if would {
                    "evictions (would):"
                } else {
                    "evictions:"
                }
            )
        );
        eviction_table(&plan.evictions).write(&mut out, style, "  ");
    }
    out.push('\n');

    if !plan.cancelled.is_empty() {
        let _ = writeln!(out, "{}", style.paint(Paint::Bold, "evictions cancelled:"));
        eviction_table(&plan.cancelled).write(&mut out, style, "  ");
        out.push('\n');
    }

    if !plan.broken_groups.is_empty() {
        let _ = writeln!(out, "{}", style.paint(Paint::Bold, "broken gangs:"));
        for g in &plan.broken_groups {
            let _ = writeln!(out, "  {}", style.paint(Paint::Red, &g.to_string()));
        }
        out.push('\n');
    }

    if !plan.replacements.is_empty() {
        let _ = writeln!(out, "{}", style.paint(Paint::Bold, "where they could go:"));
        let mut t = Table::new(&["UNIT", "OUTCOME", "PODS", "DEVICES", "NODES"]);
        for r in &plan.replacements {
            let mut nodes: Vec<&str> = Vec::new();
            for n in r.pods.iter().filter_map(|p| p.node.as_deref()) {
                if !nodes.contains(&n) {
                    nodes.push(n);
                }
            }
            t.row(vec![
                Cell::painted(format!("{} {}", r.kind, r.name), Paint::Cyan),
                Cell::painted(r.outcome.as_str(), outcome_paint(r.outcome)),
                Cell::plain(r.pods.len().to_string()),
                Cell::plain(r.device_count.to_string()),
                Cell::plain(nodes.join(" ")),
            ]);
        }
        t.write(&mut out, style, "  ");
        let stuck: Vec<_> = plan
            .replacements
            .iter()
            .filter(|r| !matches!(r.outcome, Outcome::Placed | Outcome::Preempted))
            .collect();
        if !stuck.is_empty() {
            let _ = writeln!(out, "  not placed:");
            for r in stuck {
                let _ = writeln!(out, "    {}", reason_line(r));
            }
        }
        out.push('\n');
    }

    let _ = writeln!(
        out,
        "{} {}, {} broken",
        plural(plan.evictions.len(), "pod", "pods"),
        if would { "would be evicted" } else { "evicted" },
        plural(plan.broken_groups.len(), "gang", "gangs"),
    );
    out
}
