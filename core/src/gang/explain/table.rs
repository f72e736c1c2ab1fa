//! The node table: for one pod of a unit, every node of the cluster with the filter
//! that rejects it and why (the explanation's facts, in their words), or how many of
//! the pod's shape it takes now and how the scoring policy ranks it.

use core::cmp::Ordering;
use core::fmt;

use super::diagnose::{FactSet, own_claims};
use super::facts::Fact;

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::cluster::ids::NodeId;
use crate::cluster::ranking::RankMemo;
use crate::gang::filter::{Rejection, ShapeFilter};
use crate::gang::intake::Gang;
use crate::gang::options::{GangError, GangOptions, GangOutcome};
use crate::gang::scoring::ScoringPolicy;
use crate::model::claim::ResourceClaim;
use crate::model::node::Node;
use crate::model::workload::{Pod, PodGroup};

/// The filter that rejects a node, named after the kube-scheduler plugin that does the
/// same check (gangpack's node filter and device diagnosis, in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FilterStage {
    /// Not the unit's node at all: outside [`GangOptions::within`], without the unit's
    /// topology key, or outside the topology domains it may use (no explanation fact
    /// names such a node).
    OutOfScope,
    /// Cordoned (`spec.unschedulable`): [`Fact::Cordoned`].
    NodeUnschedulable,
    /// The pod's `nodeSelector` or required node affinity: [`Fact::NodeSelector`].
    NodeAffinity,
    /// An untolerated `NoSchedule` / `NoExecute` node taint: [`Fact::NodeTaint`].
    TaintToleration,
    /// A requested scalar resource (or the pod slot) too small or used by others:
    /// [`Fact::ResourceTooSmall`], [`Fact::ResourceInUse`].
    NodeResourcesFit,
    /// The pod's claims cannot get their devices there: the class, the request's
    /// selectors, device taints, devices in use, capacity, shared counters,
    /// constraints (every device fact).
    DynamicResources,
}

impl FilterStage {
    /// The name (the kube-scheduler plugin's, or `OutOfScope`).
    pub const fn as_str(self) -> &'static str {
        match self {
            FilterStage::OutOfScope => "OutOfScope",
            FilterStage::NodeUnschedulable => "NodeUnschedulable",
            FilterStage::NodeAffinity => "NodeAffinity",
            FilterStage::TaintToleration => "TaintToleration",
            FilterStage::NodeResourcesFit => "NodeResourcesFit",
            FilterStage::DynamicResources => "DynamicResources",
        }
    }

    /// The stage a node fact belongs to.
    pub fn of(fact: &Fact) -> FilterStage {
        match fact {
            Fact::Cordoned { .. } => FilterStage::NodeUnschedulable,
            Fact::NodeSelector { .. } => FilterStage::NodeAffinity,
            Fact::NodeTaint { .. } => FilterStage::TaintToleration,
            Fact::ResourceTooSmall { .. } | Fact::ResourceInUse { .. } => {
                FilterStage::NodeResourcesFit
            }
            _ => FilterStage::DynamicResources,
        }
    }
}

impl fmt::Display for FilterStage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One node of a [`NodeTable`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct NodeRow {
    /// The node.
    pub node: String,
    /// Its value of the unit's topology key (`None` without a key, or unlabelled).
    pub domain: Option<String>,
    /// Whether a pod of the shape may go there now.
    pub feasible: bool,
    /// Feasible: how many pods of the shape it can take now, at most (free scalar
    /// resources and pod slots, free devices as counted, and one pod's claims tried
    /// with the allocator); `u32::MAX` when nothing the pod requests bounds it.
    /// 0 when rejected.
    pub pods: u32,
    /// Feasible: the node's score under the policy (see [`NodeTable::score`] for what
    /// it measures and [`NodeTable::higher_is_better`]). `None` when rejected.
    pub score: Option<f64>,
    /// Feasible: its place (from 1) in the order the placement tries nodes for pods
    /// of the shape: the policy's preferred topology domains first, then by score
    /// (ties by name; the gang-aware policy's reordering included). `None` when the
    /// placement would not try it: rejected, or in a domain too small for the unit.
    pub order: Option<u32>,
    /// Pods of the shape the placement binds there now (0 for a bound pod's table:
    /// nothing is placed).
    pub planned: u32,
    /// Rejected: the filter that rejects it.
    pub filter: Option<FilterStage>,
    /// Rejected: why, as the explanation words it (its facts, as they read for this
    /// node alone, joined by `; `), or why the node is out of scope.
    pub reason: Option<String>,
    /// Rejected: the explanation's facts about this node (each naming it alone; empty
    /// when out of scope). The first fact's stage is [`filter`](Self::filter).
    pub facts: Vec<Fact>,
}

/// Every node of the cluster for one pod of a unit (see [`Cluster::node_table`]):
/// rejected by which filter and why, or feasible with its capacity and score.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct NodeTable {
    /// The PodGroup (`namespace/name`), if the pod has one.
    pub group: Option<String>,
    /// The pod whose shape the rows are for (`namespace/name`); `None` when the unit
    /// has no pending pod (then there are no rows).
    pub pod: Option<String>,
    /// The node the pod is bound to, when it is: the rows are then for a pending copy
    /// of it (its claims as they are), against the state with it running.
    pub bound: Option<String>,
    /// The scoring policy's name ([`ScoringPolicy::name`]).
    pub policy: String,
    /// What a row's score measures under the policy.
    pub score: String,
    /// Whether a higher score is preferred (Spread); otherwise a lower one is.
    pub higher_is_better: bool,
    /// The unit's topology key, if it has one.
    pub key: Option<String>,
    /// One row per node, in natural name order (`node-2` before `node-10`).
    pub rows: Vec<NodeRow>,
}

/// Compares names the way people sort them: runs of digits by their value
/// (`node-2` before `node-10`), the rest by character; equal that way, by bytes.
pub fn natural_cmp(left: &str, right: &str) -> Ordering {
    let (mut rest_l, mut rest_r) = (left.as_bytes(), right.as_bytes());
    loop {
        match (rest_l.first(), rest_r.first()) {
            (None, None) => return left.cmp(right),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(l), Some(r)) if l.is_ascii_digit() && r.is_ascii_digit() => {
                let (digits_l, after_l) = digit_run(rest_l);
                let (digits_r, after_r) = digit_run(rest_r);
                let by_value = digits_l
                    .len()
                    .cmp(&digits_r.len())
                    .then_with(|| digits_l.cmp(digits_r));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                rest_l = after_l;
                rest_r = after_r;
            }
            (Some(l), Some(r)) => {
                if l != r {
                    return l.cmp(r);
                }
                rest_l = &rest_l[1..];
                rest_r = &rest_r[1..];
            }
        }
    }
}

/// The leading run of digits of `text` without its leading zeros, and what follows it.
fn digit_run(text: &[u8]) -> (&[u8], &[u8]) {
    let len = text.iter().take_while(|c| c.is_ascii_digit()).count();
    let zeros = text[..len].iter().take_while(|&&c| c == b'0').count();
    (&text[zeros..len], &text[len..])
}

/// What a node's score measures under `policy` (its base policy's for GangAware).
fn score_meaning(policy: &ScoringPolicy) -> &'static str {
    match policy.base() {
        ScoringPolicy::BestFit | ScoringPolicy::GangAware(_) => {
            "free devices of the kinds the pod asks for; fewer is better (tightest fit)"
        }
        ScoringPolicy::Spread => {
            "free devices of the kinds the pod asks for; more is better (most room left)"
        }
        ScoringPolicy::Stranding(_) => {
            "capacity the pod would strand there for the typical shapes; lower is better"
        }
        ScoringPolicy::Fgd(_) => "99 minus the FGD score (fragmentation growth); lower is better",
        ScoringPolicy::Random(_) => "a seeded draw per pod and node; lower is better",
        ScoringPolicy::DotProduct => {
            "minus the alignment of the node's free resources with the pod's requests; lower \
             is better"
        }
    }
}

impl Cluster {
    /// The node table of one pod of a unit (the same inputs as
    /// [`place_gang`](Self::place_gang)): for every node of the cluster, in natural
    /// name order, whether a pod of `pod`'s shape may go there now, and
    ///
    /// - if not, the filter that rejects it ([`FilterStage`]) and the explanation's
    ///   facts about it ([`explain_gang`](Self::explain_gang) diagnoses nodes with the
    ///   same function, so a rejected row's facts are the explanation's, restricted to
    ///   the node);
    /// - if so, how many pods of the shape it takes at most, its score under
    ///   `options.policy` (from the ranker the placement orders nodes by), its place
    ///   in that order, and how many of the shape's pods the placement puts there now.
    ///
    /// `pod` (`namespace/name`) picks the pending pod whose shape is shown; `None`, or
    /// a pod that is not pending in the unit: the first pending pod by name. A unit
    /// without pending pods has no rows. The pods of a PodGroup are seen as members of
    /// it (its topology key and domains, its shared claims). Changes nothing.
    pub fn node_table(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        pod: Option<&str>,
    ) -> Result<NodeTable, GangError> {
        // The placement's own counts (candidates, caps, order), and the caps again
        // without the bound of the shape's pending pods, for how many a node takes.
        let mut gang = self.gang_counted(group, pods, claims, options)?;
        let uncapped = self.gang_counted_uncapped(group, pods, claims, options)?;
        let mut table = NodeTable {
            group: group.map(|g| format!("{}/{}", g.namespace, g.name)),
            pod: None,
            bound: None,
            policy: options.policy.name().to_owned(),
            score: score_meaning(&options.policy).to_owned(),
            higher_is_better: matches!(options.policy.base(), ScoringPolicy::Spread),
            key: gang.key.map(str::to_owned),
            rows: Vec::new(),
        };
        let chosen = pod
            .and_then(|k| gang.pods.iter().find(|p| p.key == k))
            .or_else(|| gang.pods.iter().min_by(|a, b| a.key.cmp(&b.key)));
        let Some((si, key)) = chosen.map(|p| (p.shape, p.key.clone())) else {
            return Ok(table);
        };
        table.pod = Some(key);
        let own = own_claims(&gang, claims);
        gang.own = self.devices_of(claims, &own);
        self.refine_caps(&mut gang);
        let planned = self.planned(group, pods, claims, options, &gang, si)?;
        let mut feasible = self.feasible_rows(&gang, si, options, pods, claims);
        for c in &uncapped.shapes[si].candidates {
            if let Some(row) = feasible.get_mut(&c.node) {
                row.0 = row.0.max(c.cap);
            }
        }
        let shape = &gang.shapes[si];
        let filter = ShapeFilter::new(self, shape.rep, &shape.requests, &options.within, gang.key);
        let blocked: Vec<Fact> = gang
            .tainted
            .iter()
            .filter(|(c, _, _)| shape.uses.contains(c))
            .map(|(c, device, taint)| Fact::ClaimDeviceTainted {
                claim: gang.shared[*c].name.clone(),
                device: device.to_string(),
                taint: taint.clone(),
            })
            .collect();
        let missing = self.missing_classes(&gang, si);
        let mut nodes: Vec<(NodeId, &Node)> = self.nodes_with_ids().collect();
        nodes.sort_by(|a, b| natural_cmp(&a.1.name, &b.1.name));
        for (id, node) in nodes {
            let mut row = NodeRow {
                node: node.name.clone(),
                domain: gang.key.and_then(|k| node.labels.get(k).cloned()),
                feasible: false,
                pods: 0,
                score: None,
                order: None,
                planned: planned.get(node.name.as_str()).copied().unwrap_or(0),
                filter: None,
                reason: None,
                facts: Vec::new(),
            };
            if let Some(&(pods, score, order)) = feasible.get(&id) {
                row.feasible = true;
                row.pods = pods;
                row.score = Some(score);
                row.order = order;
                table.rows.push(row);
                continue;
            }
            let in_scope = if blocked.is_empty() {
                let mut set = FactSet::default();
                let in_scope = self.diagnose_node(&gang, si, &filter, id, node, &mut |f, net| {
                    set.add(f, net, &mut Vec::new());
                });
                // A class without devices anywhere is one fact about every node the
                // device stage reaches (merged as the explanation merges it).
                if set
                    .facts
                    .first()
                    .is_none_or(|f| FilterStage::of(f) == FilterStage::DynamicResources)
                {
                    for f in &missing {
                        set.add(f.clone(), None, &mut Vec::new());
                    }
                }
                row.facts = set.facts;
                in_scope
            } else {
                // No node helps while a claim the pod uses cannot be reserved.
                let in_domain = |v: &str| gang.domains.iter().any(|d| d == v);
                let scope = self.filter_node(id, node, &filter, in_domain, 1).verdict;
                row.facts.clone_from(&blocked);
                !matches!(scope, Err(Rejection::OutOfScope))
            };
            if in_scope {
                row.filter = row.facts.first().map(FilterStage::of);
                let words: Vec<String> = row.facts.iter().map(ToString::to_string).collect();
                row.reason = Some(words.join("; "));
            } else {
                row.facts.clear();
                row.filter = Some(FilterStage::OutOfScope);
                row.reason = Some(self.scope_reason(&gang, options, node));
            }
            table.rows.push(row);
        }
        Ok(table)
    }

    /// Per node of shape `si` that can take a pod: its cap, score and place in the
    /// placement's order.
    fn feasible_rows(
        &self,
        gang: &Gang<'_>,
        si: usize,
        options: &GangOptions,
        pods: &[Pod],
        claims: &[ResourceClaim],
    ) -> BTreeMap<NodeId, (u32, f64, Option<u32>)> {
        let ranker = match options.policy.base() {
            ScoringPolicy::Spread => None,
            _ => self.policy_ranker(&options.policy, pods, claims, RankMemo::default()),
        };
        let shape = &gang.shapes[si];
        let mut order: BTreeMap<NodeId, u32> = BTreeMap::new();
        for &d in &gang.order {
            let Some(&(from, to)) = gang.ranges.get(si).and_then(|r| r.get(d as usize)) else {
                continue;
            };
            for c in &shape.candidates[from as usize..to as usize] {
                if c.cap > 0 {
                    let next = u32::try_from(order.len() + 1).unwrap_or(u32::MAX);
                    order.insert(c.node, next);
                }
            }
        }
        shape
            .candidates
            .iter()
            .filter(|c| c.cap > 0)
            .map(|c| {
                let score = match &ranker {
                    Some(r) => r.value(c.rank),
                    None => f64::from(c.free),
                };
                (c.node, (c.cap, score, order.get(&c.node).copied()))
            })
            .collect()
    }

    /// Pods of shape `si` the placement binds on each node now.
    fn planned(
        &self,
        group: Option<&PodGroup>,
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
        gang: &Gang<'_>,
        si: usize,
    ) -> Result<BTreeMap<String, u32>, GangError> {
        let mut out = BTreeMap::new();
        if let GangOutcome::Placed(d) = self.place_gang(group, pods, claims, options)? {
            for b in &d.bindings {
                if gang.pods.iter().any(|p| p.shape == si && p.key == b.pod) {
                    *out.entry(b.node.clone()).or_insert(0) += 1;
                }
            }
        }
        Ok(out)
    }

    /// Why `node` is out of the unit's scope (no fact says it).
    fn scope_reason(&self, gang: &Gang<'_>, options: &GangOptions, node: &Node) -> String {
        if let Some((k, v)) = options
            .within
            .iter()
            .find(|(k, v)| node.labels.get(k) != Some(v))
        {
            return format!("outside the scheduler's node restriction {k}={v}");
        }
        let Some(k) = gang.key else {
            return String::from("outside the unit's scope");
        };
        let Some(value) = node.labels.get(k) else {
            return format!("has no label {k}");
        };
        let running: BTreeSet<&str> = gang
            .running
            .iter()
            .filter_map(|p| self.node(p.node_name.as_deref()?)?.labels.get(k))
            .map(String::as_str)
            .collect();
        if gang.domains.is_empty() && !gang.running.is_empty() {
            format!("the unit's running members already break its {k} topology constraint")
        } else if !running.is_empty() && !running.contains(value.as_str()) {
            format!("outside the {k} domain of the unit's running members")
        } else {
            format!("every node of its {k} domain {value} is cordoned")
        }
    }
}

/// A score as the text table prints it: whole numbers bare, others to three places.
fn score_text(score: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let whole = score as i64;
    #[allow(clippy::cast_precision_loss)]
    let is_whole = (whole as f64 - score).abs() < f64::EPSILON;
    if is_whole {
        format!("{whole}")
    } else {
        format!("{score:.3}")
    }
}

impl NodeRow {
    /// The result column: `feasible`, `planned (N)` when the placement puts N pods of
    /// the shape there, or the filter that rejects it.
    pub fn result(&self) -> String {
        match (self.feasible, self.filter) {
            (true, _) if self.planned > 0 => format!("planned ({})", self.planned),
            (true, _) => String::from("feasible"),
            (false, Some(f)) => f.as_str().to_owned(),
            (false, None) => String::from("rejected"),
        }
    }
}

impl fmt::Display for NodeTable {
    /// A heading (the pod, its group, the policy and what its score means), then one
    /// line per node: `NODE`, `DOMAIN` (with a topology key), `RESULT`, `PODS`,
    /// `SCORE`, `ORDER`, `REASON`, aligned.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(pod) = &self.pod else {
            let what = self.group.as_deref().unwrap_or("the unit");
            return writeln!(f, "{what}: no pending pod, no node table");
        };
        write!(f, "Pod {pod}")?;
        if let Some(g) = &self.group {
            write!(f, " (PodGroup {g})")?;
        }
        if let Some(n) = &self.bound {
            write!(f, ": bound to {n}; the rows are for a pending copy of it")?;
        }
        writeln!(f)?;
        writeln!(f, "policy {}: score = {}", self.policy, self.score)?;
        let dash = || String::from("-");
        let mut lines: Vec<Vec<String>> = Vec::with_capacity(self.rows.len() + 1);
        let mut head: Vec<String> = vec!["NODE".into()];
        if self.key.is_some() {
            head.push("DOMAIN".into());
        }
        for h in ["RESULT", "PODS", "SCORE", "ORDER", "REASON"] {
            head.push(h.into());
        }
        lines.push(head);
        for r in &self.rows {
            let mut line = vec![r.node.clone()];
            if self.key.is_some() {
                line.push(r.domain.clone().unwrap_or_else(dash));
            }
            line.push(r.result());
            line.push(match (r.feasible, r.pods) {
                (false, _) => dash(),
                (true, u32::MAX) => String::from("any"),
                (true, n) => n.to_string(),
            });
            line.push(r.score.map_or_else(dash, score_text));
            line.push(r.order.map_or_else(dash, |o| o.to_string()));
            line.push(r.reason.clone().unwrap_or_default());
            lines.push(line);
        }
        let columns = lines[0].len();
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                lines
                    .iter()
                    .map(|l| l[c].chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        for line in &lines {
            let mut text = String::new();
            for (c, cell) in line.iter().enumerate() {
                if c + 1 == columns {
                    text.push_str(cell);
                } else {
                    text.push_str(cell);
                    let pad = widths[c] - cell.chars().count() + 2;
                    text.extend(core::iter::repeat_n(' ', pad));
                }
            }
            writeln!(f, "{}", text.trim_end())?;
        }
        Ok(())
    }
}
