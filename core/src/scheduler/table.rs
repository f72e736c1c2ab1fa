//! The node table of a unit against the scheduler's state (see
//! [`Scheduler::node_table`]).

use super::{Scheduler, SchedulerError, Unit, key};

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
    /// A pod already bound gets the table of a pending copy of it (its claims as they
    /// are, allocated ones included) against the state with it running, and
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
        if let Some(c) = &chosen
            && let Some(p) = pods.iter_mut().find(|p| key(&p.namespace, &p.name) == *c)
        {
            bound = p.node_name.take();
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
