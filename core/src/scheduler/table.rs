//! The node table of a unit against the scheduler's state (see
//! [`Scheduler::node_table`]).

use super::{Scheduler, SchedulerError, Unit, key};

use crate::alloc_prelude::*;
use crate::model::workload::ClaimSource;

use crate::gang::explain::NodeTable;

impl Scheduler {
    /// Every node of the cluster for one pod of `unit`, against the current state and
    /// the scheduler's options (policy included): the filter that rejects it and why,
    /// in the words of [`Scheduler::explain`]'s facts, or how many pods of its shape
    /// it takes, its score and whether the placement puts them there now (see
    /// [`Cluster::node_table`](crate::Cluster::node_table)). Changes nothing.
    ///
    /// - [`Unit::Pod`]: that pod; a member of an existing PodGroup is seen in its
    ///   group (the group's topology key and domains, its shared claims).
    /// - [`Unit::Group`]: its first pending member by name; with none pending, its
    ///   first member by name.
    ///
    /// A pod already bound gets the table of a pending copy of it against the state
    /// with it running (where would another pod like it go now): the copy asks for
    /// the devices of the claims only it uses anew, and keeps the allocation of claims
    /// it shares with other pods;
    /// [`NodeTable::bound`] names its node; nothing is planned then. A group without
    /// members has no rows. A unit that does not exist is
    /// [`ClusterError::NotFound`](crate::ClusterError::NotFound), as for `explain`.
    pub fn node_table(&self, unit: &Unit) -> Result<NodeTable, SchedulerError> {
        self.check_unit(unit)?;
        let (context, chosen) = match unit {
            Unit::Pod(p) => match self.pods.get(p).and_then(|pod| self.group_of(pod)) {
                Some(g) => (Unit::Group(g), Some(p.clone())),
                None => (unit.clone(), Some(p.clone())),
            },
            Unit::Group(_) => (unit.clone(), None),
        };
        let (group, mut pods, claims) = self.explain_inputs(&context);
        let chosen = chosen.or_else(|| {
            if pods.iter().any(|p| p.node_name.is_none()) {
                None
            } else {
                pods.iter().map(|p| key(&p.namespace, &p.name)).min()
            }
        });
        let mut bound = None;
        let mut claims = claims;
        if let Some(c) = &chosen
            && let Some(p) = pods.iter_mut().find(|p| key(&p.namespace, &p.name) == *c)
        {
            bound = p.node_name.take();
            if bound.is_some() {
                // The copy asks for its devices anew: a claim only this pod uses
                // loses its allocation (else the copy would hold its devices
                // already and fit anywhere); a claim others share keeps it.
                let mine: Vec<String> = p
                    .resource_claims
                    .iter()
                    .filter_map(|rc| match &rc.source {
                        ClaimSource::ClaimName(n) => Some(key(&p.namespace, n)),
                        ClaimSource::Template(_) => None,
                    })
                    .collect();
                let shared_with_others = |k: &str| {
                    self.pods.values().any(|o| {
                        key(&o.namespace, &o.name) != *c
                            && o.resource_claims.iter().any(|rc| {
                                matches!(&rc.source, ClaimSource::ClaimName(n)
                                    if key(&o.namespace, n) == k)
                            })
                    })
                };
                for claim in &mut claims {
                    let k = key(&claim.namespace, &claim.name);
                    if mine.contains(&k) && !shared_with_others(&k) {
                        claim.allocation = None;
                    }
                }
            }
        }
        let mut table = self.cluster.node_table(
            group.as_ref(),
            &pods,
            &claims,
            &self.options,
            chosen.as_deref(),
        )?;
        if bound.is_some() {
            table.bound = bound;
            for r in &mut table.rows {
                r.planned = 0;
            }
        }
        Ok(table)
    }
}
