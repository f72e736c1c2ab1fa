//! `gangpack capacity`: which request shapes the free capacity of a dump can still
//! host, per topology domain (the core's capacity report), as a table or JSON.

use std::fmt::Write as _;

use gangpack::{CapacityDomain, RequestShape};
use gangpack_k8s::Kind;

use crate::input::{self, Messages};
use crate::{Failure, Input, Options};

/// Which topology key the report groups nodes by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CapacityKey {
    /// The first PodGroup topology key in the input (by PodGroup name); the whole
    /// cluster as one domain when no PodGroup has one.
    Default,
    /// This node label.
    Label(String),
    /// The whole cluster as one domain.
    Whole,
}

pub(crate) fn run(
    global: &Options,
    input: &Input,
    key: &CapacityKey,
    gang_pods: u32,
    json: bool,
    messages: &mut Messages,
) -> Result<crate::Outcome, Failure> {
    let (table, data) = both(global, input, key, gang_pods, messages)?;
    let stdout = if json {
        let mut out =
            serde_json::to_string_pretty(&data).map_err(|e| Failure::Io(e.to_string()))?;
        out.push('\n');
        out
    } else {
        table
    };
    Ok(crate::Outcome {
        stdout,
        code: crate::EXIT_OK,
    })
}

/// Both forms from one report: the table, and the data `-o json` prints (the core's
/// report with each shape's label).
pub(crate) fn both(
    global: &Options,
    input: &Input,
    key: &CapacityKey,
    gang_pods: u32,
    messages: &mut Messages,
) -> Result<(String, serde_json::Value), Failure> {
    let snapshot = input::snapshot(global, input, messages)?;
    let key = match key {
        CapacityKey::Label(k) => Some(k.clone()),
        CapacityKey::Whole => None,
        CapacityKey::Default => {
            let mut groups: Vec<String> = snapshot
                .objects
                .iter()
                .filter(|o| o.kind == Kind::PodGroup)
                .map(|o| format!("{}/{}", o.namespace.as_deref().unwrap_or("default"), o.name))
                .collect();
            groups.sort();
            groups
                .iter()
                .filter_map(|g| snapshot.scheduler.group(g))
                .find_map(|g| g.topology.first().map(|t| t.key.clone()))
        }
    };
    let shapes = RequestShape::standard(gang_pods);
    let report = snapshot
        .scheduler
        .cluster()
        .capacity_report(&shapes, key.as_deref())
        .map_err(|errs| {
            Failure::Invalid(
                errs.iter()
                    .map(|e| crate::Problem::message(e.to_string()))
                    .collect(),
            )
        })?;
    let labels = report.labels();
    let mut data = serde_json::to_value(&report).map_err(|e| Failure::Io(e.to_string()))?;
    if let Some(o) = data.as_object_mut() {
        o.insert("labels".into(), serde_json::json!(labels));
    }
    let name_of = |d: &CapacityDomain| match d {
        CapacityDomain::Value(v) => v.clone(),
        CapacityDomain::Unlabelled => "(unlabelled)".to_owned(),
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut head = vec![
        if key.is_some() { "DOMAIN" } else { "CLUSTER" }.to_owned(),
        "NODES".into(),
        "FREE".into(),
    ];
    head.extend(labels.iter().cloned());
    rows.push(head);
    let row = |name: String, nodes: u32, cordoned: u32, shapes: &[gangpack::ShapeCapacity]| {
        let mut r = vec![
            name,
            if cordoned > 0 {
                format!("{nodes} (+{cordoned} cordoned)")
            } else {
                nodes.to_string()
            },
            shapes.first().map_or(0, |s| s.free).to_string(),
        ];
        r.extend(shapes.iter().map(|s| s.copies.to_string()));
        r
    };
    for d in &report.domains {
        rows.push(row(name_of(&d.domain), d.nodes, d.cordoned, &d.shapes));
    }
    rows.push(row(
        "total".into(),
        report.nodes,
        report.cordoned,
        &report.totals,
    ));
    let widths: Vec<usize> = (0..rows[0].len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i == 0 {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    let _ = writeln!(
        out,
        "\ncopies of each shape that fit now (FREE: free devices); shapes are pods x devices per pod, all of a pod's devices on one node{}",
        key.as_deref().map_or(String::new(), |k| format!(
            ", a multi-pod shape inside one {k} domain"
        ))
    );
    let whole = report
        .totals
        .iter()
        .zip(&report.shapes)
        .find(|(_, s)| s.pods == 1 && s.devices_per_pod == 8)
        .map(|(t, _)| t);
    if let Some(whole) = whole {
        let _ = writeln!(
            out,
            "fragmentation: {} of {} free devices cannot be part of a whole 1x8 pod",
            whole.fragmentation, whole.free
        );
    }
    Ok((out, data))
}
