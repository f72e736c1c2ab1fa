//! Stage 3b of gang placement (after `counts.rs` has ordered the candidates by the
//! base policy): the gang-aware policy's reordering ([`GangAwareParams`]).
//!
//! - **Keep whole domains.** A domain of a protected key is *whole* while none of its
//!   nodes has a device allocated, even in part. Within a gang's domain, candidates
//!   outside every whole protected domain come first; those that would break into
//!   whole domains follow, grouped domain by domain (so a gang that must break in
//!   breaks as few as it can), each group in the base policy's order.
//! - **Fitting partial domains first.** A gang with a topology key tries the domains
//!   of that key that are not whole before the whole ones (each set in the base
//!   policy's order): a fitting broken rack is used before a whole one is broken.
//! - **Fewest lower domains.** Inside the gang's domain, each shape's candidates are
//!   grouped by the value of each lower level in turn ([`DomainLevel`]), and the groups
//!   ordered the way Kueue's topology-aware BestFit picks domains: while the rest of
//!   the shape's pods fits in no single group, the group that holds the most; then the
//!   tightest group that holds the rest; then the others, largest first.
//!
//! The search then binds each pod to the first candidate the allocator accepts, so
//! this order is the whole policy: feasibility is unchanged.

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::cluster::ids::NodeId;
use crate::gang::scoring::{DomainLevel, GangAwareParams, MixSource};

use super::intake::{Candidate, Gang};

/// Per protected key, its whole domains (label values).
type Whole = BTreeMap<String, BTreeSet<String>>;

impl Cluster {
    /// The whole domains of each of `keys` (see the module docs): every value of the
    /// key whose nodes have no device allocated.
    fn whole_domains(&self, keys: &BTreeSet<String>) -> Whole {
        let mut seen: BTreeMap<&str, BTreeMap<&str, bool>> = BTreeMap::new();
        for &id in self.node_order() {
            let Some(node) = self.node_by_id(id) else {
                continue;
            };
            let mut touched = None;
            for k in keys {
                let Some(v) = node.labels.get(k) else {
                    continue;
                };
                let t = *touched.get_or_insert_with(|| self.node_touched(id));
                let whole = seen
                    .entry(k.as_str())
                    .or_default()
                    .entry(v.as_str())
                    .or_insert(true);
                *whole &= !t;
            }
        }
        seen.into_iter()
            .map(|(k, values)| {
                let whole = values
                    .into_iter()
                    .filter(|(_, w)| *w)
                    .map(|(v, _)| v.to_owned())
                    .collect();
                (k.to_owned(), whole)
            })
            .collect()
    }

    /// Node `n`'s value at a lower level.
    fn level_value(&self, n: NodeId, level: &DomainLevel) -> Option<String> {
        match level {
            DomainLevel::NodeLabel(k) => self.node_by_id(n)?.labels.get(k).cloned(),
            DomainLevel::DeviceAttribute(a) => self.node_device_attribute(n, a),
        }
    }
}

impl Gang<'_> {
    /// The gang-aware reordering (see the module docs), after the base policy's order
    /// of candidates (`shapes[..].candidates`, grouped by domain) and of domains
    /// (`order`).
    pub(super) fn keep_whole(&mut self, cluster: &Cluster, params: &GangAwareParams) {
        let mut keys: BTreeSet<String> = params.protect.iter().cloned().collect();
        if let Some(MixSource::Given(mix)) = params.base.mix_source() {
            keys.extend(
                mix.shapes
                    .iter()
                    .filter(|s| s.pods > 1)
                    .filter_map(|s| s.topology_key.clone()),
            );
        }
        let gang_key = self.key.map(str::to_owned);
        let mut all = keys.clone();
        all.extend(gang_key.iter().cloned());
        let whole = cluster.whole_domains(&all);
        // Domains of the gang's own key: broken ones first, each set in base order.
        if let Some(k) = &gang_key {
            let none = BTreeSet::new();
            let whole_values = whole.get(k).unwrap_or(&none);
            let domains = &self.domains;
            self.order
                .sort_by_key(|&d| whole_values.contains(&domains[d as usize]));
        }
        // Candidates: outside whole protected domains first, then by the first whole
        // domain they would break, each group in base order.
        let protected: Vec<(&String, &BTreeSet<String>)> = keys
            .iter()
            .filter_map(|k| Some((k, whole.get(k)?)))
            .filter(|(_, w)| !w.is_empty())
            .collect();
        let want = self.wanted_by_shape(self.required);
        for (s, shape) in self.shapes.iter_mut().enumerate() {
            if !protected.is_empty() {
                // (domain, breaks a whole domain, the first it breaks, base order).
                let mut keyed: Vec<((u32, bool, u64, usize), Candidate)> = shape
                    .candidates
                    .iter()
                    .enumerate()
                    .map(|(pos, c)| {
                        let labels = cluster.node_by_id(c.node).map(|n| &n.labels);
                        let first = protected
                            .iter()
                            .enumerate()
                            .filter_map(|(i, (k, w))| {
                                let v = labels?.get(*k)?;
                                let at = w.iter().position(|x| x == v)?;
                                Some(((i as u64) << 32) | at as u64)
                            })
                            .min();
                        let key = (c.domain, first.is_some(), first.unwrap_or(0), pos);
                        (key, *c)
                    })
                    .collect();
                keyed.sort_unstable_by_key(|(k, _)| *k);
                shape.candidates = keyed.into_iter().map(|(_, c)| c).collect();
            }
            if !params.levels.is_empty() {
                let need = want.get(s).copied().unwrap_or(0);
                let mut i = 0;
                let cands = &mut shape.candidates;
                while i < cands.len() {
                    let d = cands[i].domain;
                    let mut j = i;
                    while j < cands.len() && cands[j].domain == d {
                        j += 1;
                    }
                    fewest_groups(cluster, &mut cands[i..j], &params.levels, need);
                    i = j;
                }
            }
        }
    }
}

/// Orders `cands` (one domain's, in preference order) into groups by the first of
/// `levels`, the groups as Kueue's BestFit picks them for `need` pods, each group
/// ordered the same way by the next level.
fn fewest_groups(cluster: &Cluster, cands: &mut [Candidate], levels: &[DomainLevel], need: usize) {
    let Some((level, rest)) = levels.split_first() else {
        return;
    };
    // Groups in order of first appearance (the base order's best candidate first).
    let mut groups: Vec<(Option<String>, Vec<Candidate>)> = Vec::new();
    for c in cands.iter() {
        let v = cluster.level_value(c.node, level);
        match groups.iter_mut().find(|(g, _)| *g == v) {
            Some((_, members)) => members.push(*c),
            None => groups.push((v, vec![*c])),
        }
    }
    if groups.len() < 2 {
        fewest_groups(cluster, cands, rest, need);
        return;
    }
    let capacity = |m: &[Candidate]| m.iter().map(|c| c.cap as usize).sum::<usize>();
    let mut left: Vec<(usize, Vec<Candidate>)> =
        groups.into_iter().map(|(_, m)| (capacity(&m), m)).collect();
    let mut ordered: Vec<Vec<Candidate>> = Vec::new();
    let mut remaining = need;
    while !left.is_empty() {
        let fits = left
            .iter()
            .enumerate()
            .filter(|(_, (cap, _))| *cap >= remaining)
            .min_by_key(|(i, (cap, _))| (*cap, *i))
            .map(|(i, _)| i);
        let pick = match fits {
            Some(i) if remaining > 0 => i,
            _ => {
                // The largest (the first of equals).
                let mut best = 0;
                for (i, (cap, _)) in left.iter().enumerate() {
                    if *cap > left[best].0 {
                        best = i;
                    }
                }
                best
            }
        };
        let (cap, members) = left.remove(pick);
        remaining = remaining.saturating_sub(cap);
        ordered.push(members);
    }
    let mut at = 0;
    for mut members in ordered {
        let n = members.len();
        let need_here = need.min(capacity(&members));
        fewest_groups(cluster, &mut members, rest, need_here);
        cands[at..at + n].copy_from_slice(&members);
        at += n;
    }
}
