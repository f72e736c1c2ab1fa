//! Stage 2 of gang placement: the node filter. One function decides whether a node may
//! host a pod of a shape, before devices, and if not, why: the node is outside the
//! gang's scope (`GangOptions::within`, the topology domain), cordoned, refused by the
//! pod's node selector or required affinity, tainted `NoSchedule` / `NoExecute`
//! without a toleration, or short of a requested scalar resource (too small whatever
//! runs, or in use). Candidate counting (`counts.rs`) and the explanation
//! (`explain/diagnose.rs`) both call it, so they cannot disagree; each [`Rejection`]
//! but [`Rejection::OutOfScope`] is one explanation fact.

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::cluster::ids::NodeId;
use crate::cluster::intern::Symbol;
use crate::model::node::Node;
use crate::model::toleration::first_untolerated_taint;
use crate::model::workload::Pod;
use crate::{Quantity, Taint, TaintEffect};

/// What the filter checks for one pod shape, prepared once per shape.
pub(crate) struct ShapeFilter<'a> {
    pod: &'a Pod,
    /// Neither a node selector nor a required affinity: every node passes that check.
    any_node: bool,
    /// The positive scalar requests: name, interned name, amount.
    requests: Vec<(&'a str, Option<Symbol>, Quantity)>,
    pods_symbol: Option<Symbol>,
    within: &'a [(String, String)],
    key: Option<&'a str>,
    /// `key` interned when the cluster tracks it: a node's value is then read from
    /// its domain slots, not looked up among its labels (see `Cluster::tracked_label`).
    tracked: Option<Symbol>,
    /// Name the resource a node is short of (explanations); without, a short node
    /// is rejected as [`Rejection::ResourceInUse`] of no name, at no cost (counting).
    reasons: bool,
}

/// Why a node cannot host a pod of the shape (the first check that fails, in this
/// order).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Rejection<'n> {
    /// Outside `GangOptions::within`, without the topology key's label, or in a domain
    /// the gang may not use: not the gang's node at all (no fact).
    OutOfScope,
    /// `spec.unschedulable`.
    Cordoned,
    /// The pod's `nodeSelector` or required node affinity refuses it.
    NodeSelector,
    /// An untolerated `NoSchedule` / `NoExecute` taint (the first).
    NodeTaint(&'n Taint),
    /// A requested scalar resource (or the pod slot) the node's allocatable cannot
    /// give one pod whatever runs.
    ResourceTooSmall(String),
    /// A requested scalar resource (or the pod slot) others use: too little is free for
    /// one pod.
    ResourceInUse(String),
}

/// What the filter says about one node.
pub(crate) struct Filtered<'n> {
    /// Its value of the topology key, once it is known to be in scope (`None` without
    /// a key, or out of scope).
    pub(crate) domain: Option<&'n str>,
    /// Admitted: how many pods of the shape its free scalar resources (and pod slots)
    /// allow, at most the `most` asked (0 when `most` is 0); else why not.
    pub(crate) verdict: Result<u32, Rejection<'n>>,
}

impl<'a> ShapeFilter<'a> {
    /// The filter for pods like `pod` requesting `requests`.
    pub(crate) fn new(
        cluster: &Cluster,
        pod: &'a Pod,
        requests: &'a BTreeMap<String, Quantity>,
        within: &'a [(String, String)],
        key: Option<&'a str>,
    ) -> ShapeFilter<'a> {
        ShapeFilter {
            pod,
            any_node: pod.node_selector.is_empty() && pod.required_node_affinity.is_none(),
            requests: requests
                .iter()
                .filter(|(_, q)| q.is_positive())
                .map(|(r, q)| (r.as_str(), cluster.symbol(r), *q))
                .collect(),
            pods_symbol: cluster.symbol("pods"),
            within,
            key,
            tracked: key.and_then(|k| cluster.tracked_key(k)),
            reasons: true,
        }
    }

    /// This filter without the resource named in a shortfall (see `reasons`): for
    /// counting, which only keeps the admitted nodes.
    pub(crate) fn without_reasons(self) -> ShapeFilter<'a> {
        ShapeFilter {
            reasons: false,
            ..self
        }
    }
}

impl Cluster {
    /// The node filter (see the module docs): whether node `id` (`node`, its object)
    /// may host a pod of the shape `f` describes, with `in_domain` saying which values
    /// of the topology key the gang may use; admitted, how many of its pods the free
    /// scalars allow, at most `most`.
    pub(crate) fn filter_node<'n>(
        &'n self,
        id: NodeId,
        node: &'n Node,
        f: &ShapeFilter<'_>,
        in_domain: impl Fn(&str) -> bool,
        most: u32,
    ) -> Filtered<'n> {
        let out = |domain, verdict| Filtered { domain, verdict };
        if !f.within.iter().all(|(k, v)| node.labels.get(k) == Some(v)) {
            return out(None, Err(Rejection::OutOfScope));
        }
        let domain = match f.key {
            None => None,
            Some(k) => {
                let value = match f.tracked {
                    Some(key) => {
                        let v = self.tracked_label(id, key);
                        debug_assert_eq!(v, node.labels.get(k).map(String::as_str));
                        v
                    }
                    None => node.labels.get(k).map(String::as_str),
                };
                match value {
                    Some(v) if in_domain(v) => Some(v),
                    _ => return out(None, Err(Rejection::OutOfScope)),
                }
            }
        };
        out(domain, self.node_checks(id, node, f, most))
    }

    /// The checks of [`filter_node`](Self::filter_node) past the scope, in order.
    fn node_checks<'n>(
        &'n self,
        id: NodeId,
        node: &'n Node,
        f: &ShapeFilter<'_>,
        most: u32,
    ) -> Result<u32, Rejection<'n>> {
        let (cordoned, hard_taints) = self.node_flags(id);
        if cordoned {
            return Err(Rejection::Cordoned);
        }
        if !(f.any_node || f.pod.fits_node(node)) {
            return Err(Rejection::NodeSelector);
        }
        if hard_taints
            && let Some(t) = first_untolerated_taint(&node.taints, &f.pod.tolerations, |e| {
                matches!(e, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            })
        {
            return Err(Rejection::NodeTaint(t));
        }
        let slot =
            self.node_has_pod_limit(id)
                .then_some(("pods", f.pods_symbol, Quantity::from_int(1)));
        let mut cap = most;
        let mut short = false;
        for (_, sym, q) in f.requests.iter().copied().chain(slot) {
            let free = self.node_free_by_symbol(id, sym);
            if free < q {
                short = true;
                cap = 0;
            } else if cap > 1 && q.as_nano().saturating_mul(i128::from(cap)) > free.as_nano() {
                // Only when `cap` pods do not fit: a 128-bit division costs more than the
                // rest of a node's check.
                cap = cap.min(u32::try_from(free.as_nano() / q.as_nano()).unwrap_or(u32::MAX));
            }
        }
        if short {
            if !f.reasons {
                return Err(Rejection::ResourceInUse(String::new()));
            }
            return Err(shortfall(self, id, node, f, slot));
        }
        Ok(cap)
    }
}

/// Why a node short of a scalar resource rejects the pod: too small whatever runs
/// comes before in use, over every request. Out of line: only a rejected node pays for
/// reading its node object (the counting loop over every node must not touch them).
#[cold]
#[inline(never)]
fn shortfall<'n>(
    cluster: &Cluster,
    id: NodeId,
    node: &Node,
    f: &ShapeFilter<'_>,
    slot: Option<(&str, Option<Symbol>, Quantity)>,
) -> Rejection<'n> {
    let wanted = || f.requests.iter().copied().chain(slot);
    for (r, _, q) in wanted() {
        if node.allocatable.get(r).copied().unwrap_or(Quantity::ZERO) < q {
            return Rejection::ResourceTooSmall(r.to_owned());
        }
    }
    let short = wanted()
        .find(|(_, sym, q)| cluster.node_free_by_symbol(id, *sym) < *q)
        .map_or("", |(r, _, _)| r);
    Rejection::ResourceInUse(short.to_owned())
}
