//! Sessions loaded from Kubernetes manifests (feature `k8s`): the loaded objects kept
//! beside the core scheduler, cycles through `gangpack_k8s::output::plan` with what
//! they write folded back, and the state written out again.
//!
//! The objects and the scheduler together are a `gangpack_k8s::Snapshot`; the
//! session keeps them apart (the scheduler is the session's, whatever it was loaded
//! from) and puts a snapshot together for the calls that need one.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use gangpack_cli::{Format, Style};
use gangpack_k8s::output;
use gangpack_k8s::{GeneratedClaim, InputError, Kind, Object, Snapshot, Waiting, Warning};
use serde_json::Value;
use wasm_bindgen::JsValue;

use super::State;
use super::view::{self, CycleView, WaitingView};
use crate::js::{self, INVALID_ARGUMENT};
use crate::manifests as m;

/// The loaded objects (everything of a `Snapshot` but its scheduler).
#[derive(Clone)]
pub(crate) struct Kube {
    objects: Vec<Object>,
    generated: Vec<GeneratedClaim>,
    warnings: Vec<Warning>,
    skipped: Vec<InputError>,
    waiting: Vec<Waiting>,
    style: Style,
}

/// A session just loaded.
pub(crate) struct LoadedSession {
    pub(crate) sched: gangpack::Scheduler,
    pub(crate) kube: Kube,
    pub(crate) warnings: Vec<String>,
    pub(crate) groups: BTreeSet<String>,
    pub(crate) priority_classes: Vec<gangpack::PriorityClass>,
}

/// Loads and builds as `gangpack plan` does (`gangpack_cli::snapshot`: the options'
/// strictness, policy, clock and `skipInvalid`, and the same warnings), a deprecated
/// policy name's warning first.
pub(crate) fn load(manifests: JsValue, options: JsValue) -> Result<LoadedSession, JsValue> {
    let input = m::manifests(manifests, "manifests")?;
    let o = m::options(Some(options), "options")?;
    let style = o.style();
    let r = o.resolve("options").map_err(js::from)?;
    let (snapshot, cli_warnings) =
        gangpack_cli::snapshot(&input, &r.options).map_err(|f| m::failure(&f))?;
    let mut warnings: Vec<String> = r.scoring.warning.into_iter().collect();
    warnings.extend(cli_warnings);
    let groups = snapshot
        .objects
        .iter()
        .filter(|o| o.kind == Kind::PodGroup)
        .map(|o| format!("{}/{}", o.namespace.as_deref().unwrap_or("default"), o.name))
        .collect();
    let (sched, kube) = Kube::split(snapshot, style);
    Ok(LoadedSession {
        sched,
        kube,
        warnings,
        groups,
        priority_classes: Vec::new(),
    })
}

impl Kube {
    fn split(s: Snapshot, style: Style) -> (gangpack::Scheduler, Kube) {
        (
            s.scheduler,
            Kube {
                objects: s.objects,
                generated: s.generated,
                warnings: s.warnings,
                skipped: s.skipped,
                waiting: s.waiting,
                style,
            },
        )
    }

    fn join(self, scheduler: gangpack::Scheduler) -> Snapshot {
        Snapshot {
            scheduler,
            objects: self.objects,
            generated: self.generated,
            warnings: self.warnings,
            skipped: self.skipped,
            waiting: self.waiting,
        }
    }

    /// The units held back, waiting for an object that is not in the manifests.
    pub(crate) fn waiting_views(&self) -> Vec<WaitingView> {
        self.waiting
            .iter()
            .map(|w| WaitingView {
                kind: w.kind.as_str(),
                name: format!("{}/{}", w.namespace, w.name),
                reason: w.reason(),
            })
            .collect()
    }
}

/// A cycle of a session loaded from manifests (`None` for other sessions): pods the
/// scheduler no longer has are folded out of the objects, `output::plan` runs (the
/// evictions due first, then the core's cycle), its table is rendered and the
/// objects it changed are folded back.
pub(crate) fn cycle(state: &mut State) -> Option<CycleView> {
    let kube = state.kube.take()?;
    let style = kube.style;
    let placeholder =
        gangpack::Scheduler::new(gangpack::Cluster::new(), gangpack::GangOptions::default());
    let mut snapshot = kube.join(std::mem::replace(&mut state.sched, placeholder));
    snapshot.fold_deletions();
    let mut plan = output::plan(&mut snapshot);
    let table = gangpack_cli::plan_table(&plan, &snapshot, style);
    snapshot.fold_back(std::mem::take(&mut plan.changed));
    let sched = &snapshot.scheduler;
    let tried = plan.report.units.len();
    let mut units: Vec<view::UnitView> = plan
        .report
        .units
        .iter()
        .zip(&plan.rows)
        .map(|((u, r), row)| view::unit(sched, u, r, Some(row.reason.clone())))
        .collect();
    units.extend(plan.rows.iter().skip(tried).map(view::waiting_unit));
    let carried: Vec<gangpack::PodEviction> = plan
        .evictions
        .carried_out
        .iter()
        .map(|e| gangpack::PodEviction {
            at: e.at,
            pod: e.pod.clone(),
            reason: e.reason.clone(),
        })
        .collect();
    let v = CycleView {
        carried_out: view::evictions(&carried),
        all_placed: units
            .iter()
            .all(|u| matches!(u.outcome, "placed" | "preempted")),
        units,
        evictions: (&plan.report.evictions).into(),
        pods_bound: plan.report.pods_bound(),
        table: Some(table),
    };
    let (sched, kube) = Kube::split(snapshot, style);
    state.sched = sched;
    state.kube = Some(kube);
    Some(v)
}

/// The state as multi-document YAML (see `Scheduler::to_manifests`).
pub(crate) fn to_manifests(state: &State) -> Result<String, JsValue> {
    let Some(kube) = &state.kube else {
        return Err(js::error_message(
            INVALID_ARGUMENT,
            "toManifests: this Scheduler was not loaded from manifests (fromManifests); \
             read its state with snapshot()",
        ));
    };
    let mut snapshot = kube.clone().join(state.sched.clone());
    let deleted = snapshot.fold_deletions();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# gangpack Scheduler state at {} (toManifests)",
        super::time::format(snapshot.scheduler.now())
    );
    if !deleted.is_empty() {
        let _ = writeln!(
            out,
            "# Pods deleted since loading (evicted or removed), not written: {}",
            deleted.join(", ")
        );
    }
    if !state.journal.is_empty() {
        let _ = writeln!(
            out,
            "# Changes made in this session that no loaded object carries, not written:"
        );
        for j in &state.journal {
            let _ = writeln!(out, "#   {j}");
        }
    }
    let docs = snapshot
        .objects
        .iter()
        .map(|o| &*o.raw)
        .chain(snapshot.generated.iter().map(|g| &g.raw));
    for doc in docs {
        out.push_str("---\n");
        out.push_str(&yaml(doc)?);
    }
    Ok(out)
}

/// One document as YAML: the item of a one-item `kind: List` as
/// `gangpack_cli::print_list` prints it, moved to the top level.
fn yaml(doc: &Value) -> Result<String, JsValue> {
    let list = output::list(vec![doc.clone()]);
    let text = gangpack_cli::print_list(&list, Format::Yaml).map_err(|f| m::failure(&f))?;
    let mut lines = text
        .lines()
        .skip_while(|l| *l != "items:")
        .skip(1)
        .peekable();
    let indent = lines
        .peek()
        .map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
    let mut item = String::new();
    for l in lines {
        let Some(rest) = l.get(indent..) else {
            break;
        };
        let body = if item.is_empty() {
            rest.strip_prefix("- ")
        } else {
            rest.strip_prefix("  ").or((rest.is_empty()).then_some(""))
        };
        let Some(body) = body.filter(|_| l.starts_with(&" ".repeat(indent))) else {
            break;
        };
        item.push_str(body);
        item.push('\n');
    }
    if item.is_empty() {
        // Not the shape expected: JSON is YAML too.
        return serde_json::to_string_pretty(doc)
            .map(|s| s + "\n")
            .map_err(|e| js::error_message(js::IO_ERROR, e.to_string()));
    }
    Ok(item)
}
