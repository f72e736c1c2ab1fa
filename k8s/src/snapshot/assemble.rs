//! The scheduler assembled from what passed.

use std::collections::BTreeMap;

use gangpack::{ClusterError, ResourceClaim, Scheduler, SchedulerError};
use serde_json::Value;

use super::{Builder, Owner, ReadyPod};
use crate::convert::de::{input_error, validation_error};
use crate::object::{InputErrors, Kind};

impl Builder<'_> {
    // ----------------------------------------------------------------- assembly

    /// Builds the scheduler from what passed.
    pub(super) fn assemble(&mut self) {
        for g in self.groups.values() {
            for t in &g.done.topology {
                self.cluster.track_topology_key(&t.key);
            }
        }
        let cluster = std::mem::take(&mut self.cluster);
        let mut s = Scheduler::new(cluster, self.options.gang.clone());
        for c in &self.classes {
            s.put_priority_class(c.clone()).expect("validated");
        }
        let mut failures: Vec<(usize, SchedulerError)> = Vec::new();
        for (i, c) in self.claims.values() {
            if self.rejected.contains(i) {
                continue;
            }
            if let Err(e) = s.add_claim(c.claim.clone()) {
                failures.push((*i, e));
            }
        }
        let generated: Vec<ResourceClaim> =
            self.generated.iter().map(|g| g.claim.clone()).collect();
        for claim in generated {
            if let Err(e) = s.add_claim(claim.clone()) {
                // A generated name that collides with a claim of the input.
                let owner = self
                    .generated
                    .iter()
                    .find(|g| g.claim.name == claim.name)
                    .map(|g| &g.owner);
                let idx = match owner {
                    Some(Owner::Pod { namespace, name }) => {
                        self.find(Kind::Pod, Some(namespace), name).ok()
                    }
                    Some(Owner::PodGroup { namespace, name }) => {
                        self.find(Kind::PodGroup, Some(namespace), name).ok()
                    }
                    None => None,
                };
                if let Some(idx) = idx {
                    failures.push((idx, e));
                }
            }
        }
        for g in self.groups.values() {
            if self.rejected.contains(&g.idx) {
                continue;
            }
            if let Err(e) = s.add_group(g.done.clone()) {
                failures.push((g.idx, e));
            }
        }
        // Bound pods first (they hold their node resources), then pending ones.
        let (bound, pending): (Vec<&ReadyPod>, Vec<&ReadyPod>) =
            self.pods.iter().partition(|p| p.pod.node_name.is_some());
        let mut overcommitted = Vec::new();
        for p in bound.into_iter().chain(pending) {
            if self.rejected.contains(&p.idx) {
                continue;
            }
            match s.add_pod(p.pod.clone()) {
                Ok(()) => {}
                Err(SchedulerError::Cluster(ClusterError::Insufficient { node, shortfalls })) => {
                    // The pod runs there anyway (a node whose allocatable shrank, say).
                    let mut pod = p.pod.clone();
                    pod.requests.clear();
                    let what: Vec<String> = shortfalls
                        .iter()
                        .map(|s| {
                            format!(
                                "{} {} requested, {} free",
                                s.resource, s.requested, s.available
                            )
                        })
                        .collect();
                    overcommitted.push((
                        p.idx,
                        format!(
                            "node {node} is over-committed ({}): the running pod's requests are not reserved",
                            what.join(", ")
                        ),
                    ));
                    if let Err(e) = s.add_pod(pod) {
                        failures.push((p.idx, e));
                    }
                }
                Err(e) => failures.push((p.idx, e)),
            }
        }
        for (i, msg) in overcommitted {
            self.warn(i, msg);
        }
        // The taint manager has watched these pods since they were bound.
        let bound_at: BTreeMap<String, gangpack::Time> = self
            .pods
            .iter()
            .filter(|p| p.pod.node_name.is_some())
            .filter_map(|p| {
                let t = bound_time(&self.obj(p.idx).raw)?;
                Some((format!("{}/{}", p.pod.namespace, p.pod.name), t))
            })
            .collect();
        s.backdate_node_taint_timers(|p| {
            bound_at
                .get(&format!("{}/{}", p.namespace, p.name))
                .copied()
        });
        for (i, e) in failures {
            let obj = self.obj(i);
            let mut errs = InputErrors::default();
            match e {
                SchedulerError::Invalid(v) => {
                    for x in &v {
                        errs.push(validation_error(obj, x));
                    }
                }
                other => errs.push(input_error(obj, String::new(), other)),
            }
            self.reject(i, errs);
        }
        if self.errors.is_empty() && self.more_errors == 0 {
            self.scheduler = Some(s);
        }
    }
}

/// When a bound pod was bound, as its document tells: its `PodScheduled=True`
/// condition's `lastTransitionTime`, else `status.startTime`, else
/// `metadata.creationTimestamp`.
pub(crate) fn bound_time(pod: &Value) -> Option<gangpack::Time> {
    let parse = |v: Option<&Value>| {
        let t = v?.as_str()?.parse::<k8s_openapi::jiff::Timestamp>().ok()?;
        Some(gangpack::Time(t.as_second()))
    };
    let scheduled = pod
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|c| {
            c.get("type").and_then(Value::as_str) == Some("PodScheduled")
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
        .and_then(|c| parse(c.get("lastTransitionTime")));
    scheduled
        .or_else(|| parse(pod.pointer("/status/startTime")))
        .or_else(|| parse(pod.pointer("/metadata/creationTimestamp")))
}
