//! The scheduler assembled from what passed.

use gangpack::{ClusterError, ResourceClaim, Scheduler, SchedulerError};

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
