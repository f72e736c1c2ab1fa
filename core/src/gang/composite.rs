//! CompositePodGroup placement (KEP-6012): a tree of gangs, placed child by child.
//!
//! [`Cluster::place_composite`] places the PodGroups under a [`CompositePodGroup`]
//! against one snapshot, without changing the cluster, and returns one
//! [`PlacementDecision`] per PodGroup placed ([`CompositeOutcome::Placed`]), or why
//! not.
//!
//! The model, in KEP-6012's vocabulary: a composite with the gang policy succeeds when at
//! least `minGroupCount` of its children succeed (S ≥ M); it keeps searching while the
//! children placed plus the children left to try can still reach it (S + R ≥ M) and
//! stops as soon as they cannot. The rule applies recursively. Preemption (the U of the
//! KEP) is not modelled: a child that does not fit is unschedulable.
//!
//! How the search works:
//!
//! - Children are placed one after another on a scratch copy of the cluster, each with
//!   [`Cluster::place_gang`] (PodGroups) or recursively (composites), and each placed
//!   PodGroup's decision is recorded there with [`Cluster::apply_decision`], so later
//!   children see its devices and node resources as taken. Backtracking undoes it with
//!   [`Cluster::revert_decision`].
//! - **Exhaustive** over *which* children are placed: with the gang policy, subsets are
//!   tried depth-first in child order (earlier children preferred), each child either
//!   placed or skipped, until `minGroupCount` children are placed.
//! - **Not exhaustive** over *where* each child goes: a child takes the first placement
//!   `place_gang` finds given the children placed before it; another placement of an
//!   earlier child that would leave room for a later one is not searched.
//! - A PodGroup that does not fit when nothing else of the composite is placed yet (in
//!   the current domain) is not retried there: adding placed pods only takes devices
//!   and resources away, and `place_gang` is complete for one gang.
//! - **Interchangeable children.** Two PodGroups listed next to each other that differ
//!   only in names (the group, its pods and their claims, each claim used by that
//!   group alone, no pod running) are placed the same way wherever the other would
//!   be, so the PodGroups placed of such a run are always a prefix of it: once one is
//!   skipped, the rest of its run is too. Without this, a composite of many identical
//!   roles one role too large for the cluster tries every subset of them.
//! - A topology constraint tries each domain (value of the node label) in label-value
//!   order, or only the domains of the subtree's running pods if any; the first domain
//!   where the gang is satisfied wins. The restriction is passed down through
//!   [`GangOptions::within`], so nested groups stay inside it.

use core::fmt;

use crate::alloc_prelude::*;
use crate::cluster::Cluster;
use crate::gang::options::{GangError, GangOptions, GangOutcome, StepBudget};
use crate::model::claim::ResourceClaim;
use crate::model::decision::PlacementDecision;
use crate::model::workload::{
    ClaimSource, CompositePodGroup, CompositeSchedulingPolicy, Pod, PodGroup,
};

/// The outcome of placing a CompositePodGroup tree.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(rename_all = "camelCase", rename_all_fields = "camelCase")
)]
pub enum CompositeOutcome {
    /// The PodGroups placed, flattened over the tree, each with its decision, **in the
    /// order they were placed**: each decision was computed on the cluster with the
    /// earlier ones applied, so apply (or validate) them in this order. A PodGroup that
    /// counts as placed but adds nothing (all its pods already running) is listed with
    /// an empty decision.
    Placed {
        /// `(PodGroup name, decision)`; the namespace is the root's.
        decisions: Vec<(String, PlacementDecision)>,
    },
    /// The root's `minGroupCount` cannot be reached (never for the basic policy).
    Unschedulable {
        /// The root's `minGroupCount`.
        required: usize,
        /// The most root children any attempt had placed at once.
        best: usize,
    },
    /// The budget ran out before an answer was known: the composite-level budget
    /// (child placement attempts), or a child's own `place_gang` step budget while the
    /// root's gang was not satisfied.
    BudgetExhausted {
        /// Child placement attempts made (`place_gang` calls).
        attempts: u64,
    },
}

/// What one composite placement's search did
/// ([`Cluster::place_composite_with_stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct CompositeStats {
    /// PodGroup placement attempts (`place_gang` calls): what
    /// [`GangOptions::step_budget`] counts at the composite's level, never more than it.
    pub attempts: u64,
    /// The steps of those placements' gang searches, summed (each within the step
    /// budget).
    pub gang_steps: u64,
    /// The steps of their claim allocator calls, summed.
    pub allocator_steps: u64,
    /// The budget that ran out, when the outcome is
    /// [`CompositeOutcome::BudgetExhausted`]: [`StepBudget::Gang`] for the attempts or a
    /// child's gang search, [`StepBudget::Allocator`] for a child's allocator call.
    pub exhausted: Option<StepBudget>,
}

/// Invalid input for a composite placement.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompositeError {
    /// A PodGroup of the tree cannot be placed (missing claim, claim template, claims
    /// that cannot be prepared). Reported for the first PodGroup the search reaches.
    Gang(GangError),
    /// A child names no PodGroup and no CompositePodGroup in the parent's namespace.
    MissingChild {
        /// The CompositePodGroup, `namespace/name`.
        parent: String,
        /// The child's name as listed.
        child: String,
    },
    /// A child names both a PodGroup and a CompositePodGroup.
    AmbiguousChild {
        /// The CompositePodGroup, `namespace/name`.
        parent: String,
        /// The child's name as listed.
        child: String,
    },
    /// A CompositePodGroup is its own descendant.
    Cycle {
        /// The names of the CompositePodGroups from the root down, ending with the one
        /// seen twice.
        path: Vec<String>,
    },
    /// A group is reached twice in the tree (listed twice, or under two parents), so it
    /// would be placed twice.
    RepeatedChild {
        /// The CompositePodGroup reaching it the second time, `namespace/name`.
        parent: String,
        /// The child's name as listed.
        child: String,
    },
}

impl fmt::Display for CompositeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompositeError::Gang(e) => write!(f, "{e}"),
            CompositeError::MissingChild { parent, child } => write!(
                f,
                "CompositePodGroup \"{parent}\": child \"{child}\" is neither a PodGroup nor a \
                 CompositePodGroup of its namespace"
            ),
            CompositeError::AmbiguousChild { parent, child } => write!(
                f,
                "CompositePodGroup \"{parent}\": child \"{child}\" names both a PodGroup and a \
                 CompositePodGroup"
            ),
            CompositeError::Cycle { path } => {
                f.write_str("CompositePodGroups form a cycle: ")?;
                for (i, name) in path.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" -> ")?;
                    }
                    f.write_str(name)?;
                }
                Ok(())
            }
            CompositeError::RepeatedChild { parent, child } => write!(
                f,
                "CompositePodGroup \"{parent}\": child \"{child}\" is reached more than once in \
                 the tree"
            ),
        }
    }
}

impl core::error::Error for CompositeError {
    fn source(&self) -> Option<&(dyn core::error::Error + 'static)> {
        match self {
            CompositeError::Gang(e) => Some(e),
            _ => None,
        }
    }
}

impl From<GangError> for CompositeError {
    fn from(e: GangError) -> CompositeError {
        CompositeError::Gang(e)
    }
}

/// The resolved tree.
enum Tree<'a> {
    Group(&'a PodGroup),
    Composite(&'a CompositePodGroup, Vec<Tree<'a>>),
}

/// What placing one child gave.
enum Placement {
    /// It counts toward its parent's `minGroupCount` (and what it placed is applied).
    Counted,
    /// It does not count, and nothing of it is applied. `definitive`: it would not
    /// count with more of the cluster taken either (a PodGroup found unschedulable).
    Failed { definitive: bool },
}

/// Resolves `c`'s children by name in its namespace, recursively. `path` holds the
/// composites from the root down to `c`'s parent; `seen` every group reached so far
/// (`true` for composites).
fn resolve_children<'a>(
    c: &'a CompositePodGroup,
    composites: &'a [CompositePodGroup],
    groups: &'a [PodGroup],
    path: &mut Vec<&'a str>,
    seen: &mut BTreeSet<(bool, &'a str)>,
) -> Result<Vec<Tree<'a>>, CompositeError> {
    path.push(&c.name);
    let parent = || format!("{}/{}", c.namespace, c.name);
    let mut children = Vec::with_capacity(c.children.len());
    for child in &c.children {
        let group = groups
            .iter()
            .find(|g| g.namespace == c.namespace && g.name == *child);
        let composite = composites
            .iter()
            .find(|x| x.namespace == c.namespace && x.name == *child);
        let mut node = match (group, composite) {
            (Some(g), None) => Tree::Group(g),
            (None, Some(x)) => Tree::Composite(x, Vec::new()),
            (Some(_), Some(_)) => {
                return Err(CompositeError::AmbiguousChild {
                    parent: parent(),
                    child: child.clone(),
                });
            }
            (None, None) => {
                return Err(CompositeError::MissingChild {
                    parent: parent(),
                    child: child.clone(),
                });
            }
        };
        let is_composite = matches!(node, Tree::Composite(..));
        if is_composite && path.contains(&child.as_str()) {
            let mut p: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
            p.push(child.clone());
            return Err(CompositeError::Cycle { path: p });
        }
        if !seen.insert((is_composite, child.as_str())) {
            return Err(CompositeError::RepeatedChild {
                parent: parent(),
                child: child.clone(),
            });
        }
        if let Tree::Composite(x, grandchildren) = &mut node {
            *grandchildren = resolve_children(x, composites, groups, path, seen)?;
        }
        children.push(node);
    }
    path.pop();
    Ok(children)
}

/// Whether `pod` is a member of `group`.
fn is_member(pod: &Pod, group: &PodGroup) -> bool {
    pod.namespace == group.namespace && pod.scheduling_group.as_deref() == Some(&group.name)
}

/// One gang composite's children being chosen in one domain.
struct GangLevel<'t, 'a> {
    children: &'t [Tree<'a>],
    /// Per child: it is interchangeable with the child before it (see the module
    /// docs).
    like_prev: &'t [bool],
    /// `minGroupCount`.
    m: usize,
    /// The caller's options with this domain pushed onto `within`.
    opts: &'t GangOptions,
    /// Which children are placed now.
    placed: Vec<bool>,
    /// Children known not to fit in this domain (PodGroups unschedulable before any
    /// sibling was placed).
    dead: Vec<bool>,
}

/// The search state: a scratch cluster and the decisions applied to it, in order.
struct Search<'a> {
    pods: &'a [Pod],
    claims: &'a [ResourceClaim],
    scratch: Cluster,
    decisions: Vec<(String, PlacementDecision)>,
    attempts: u64,
    budget: u64,
    /// Our own attempt budget ran out: everything unwinds.
    out_of_budget: bool,
    /// Some `place_gang` call ran out of a step budget: which.
    child_exhausted: Option<StepBudget>,
    /// The children's searches' steps, summed.
    gang_steps: u64,
    allocator_steps: u64,
    /// Per composite (by name), per child: interchangeable with the child before it.
    like_prev: BTreeMap<String, Vec<bool>>,
}

impl Search<'_> {
    /// Reverts the decisions applied after the first `mark`.
    fn undo_to(&mut self, mark: usize) {
        while self.decisions.len() > mark {
            let (_, d) = self.decisions.pop().expect("a decision to undo");
            self.scratch.revert_decision(&d, self.pods);
        }
    }

    fn place_tree(&mut self, tree: &Tree<'_>, opts: &GangOptions) -> Result<Placement, GangError> {
        match tree {
            Tree::Group(g) => self.place_group(g, opts),
            Tree::Composite(c, children) => {
                let counted = self.place_children(c, children, opts, &mut 0)?;
                Ok(if counted {
                    Placement::Counted
                } else {
                    Placement::Failed { definitive: false }
                })
            }
        }
    }

    /// Places one PodGroup. It counts when, after placement, at least its `minCount`
    /// pods (1 with the basic policy) are running or placed.
    fn place_group(&mut self, g: &PodGroup, opts: &GangOptions) -> Result<Placement, GangError> {
        let members = || self.pods.iter().filter(|p| is_member(p, g));
        let running = members().filter(|p| p.node_name.is_some()).count();
        let pending = members().filter(|p| p.node_name.is_none()).count();
        let need = g.policy.min_count().map_or(1, |m| m as usize);
        if pending == 0 || running + pending < need {
            if running >= need {
                self.decisions
                    .push((g.name.clone(), PlacementDecision::default()));
                return Ok(Placement::Counted);
            }
            return Ok(Placement::Failed { definitive: true });
        }
        if self.attempts >= self.budget {
            self.out_of_budget = true;
            return Ok(Placement::Failed { definitive: false });
        }
        self.attempts += 1;
        let (outcome, stats) =
            self.scratch
                .place_gang_counted(Some(g), self.pods, self.claims, opts)?;
        self.gang_steps += stats.steps;
        self.allocator_steps += stats.allocator_steps;
        match outcome {
            GangOutcome::Placed(d) if running + d.bindings.len() >= need => {
                if self.scratch.apply_decision(&d, self.pods).is_err() {
                    // Cannot happen: the decision was computed on this very state.
                    debug_assert!(false, "a fresh decision does not apply");
                    return Ok(Placement::Failed { definitive: false });
                }
                self.decisions.push((g.name.clone(), d));
                Ok(Placement::Counted)
            }
            GangOutcome::Placed(_)
            | GangOutcome::Unschedulable { .. }
            | GangOutcome::WaitingForPods { .. } => Ok(Placement::Failed { definitive: true }),
            GangOutcome::BudgetExhausted { .. } => {
                self.child_exhausted = self.child_exhausted.or(stats.exhausted);
                Ok(Placement::Failed { definitive: false })
            }
        }
    }

    /// Places a composite's children; true when it counts for its parent: its
    /// `minGroupCount` reached (gang), or at least one child placed (basic). Nothing is
    /// left applied when false. `best` gets the most children placed at once.
    fn place_children(
        &mut self,
        c: &CompositePodGroup,
        children: &[Tree<'_>],
        opts: &GangOptions,
        best: &mut usize,
    ) -> Result<bool, GangError> {
        let domains: Vec<Option<(String, String)>> = match c.topology.first() {
            None => vec![None],
            Some(t) => self
                .domains(children, &t.key, opts)
                .into_iter()
                .map(|v| Some((t.key.clone(), v)))
                .collect(),
        };
        // Basic with topology: the domain placing the most children (the first of ties).
        let mut best_basic: Option<Vec<(String, PlacementDecision)>> = None;
        let mut best_basic_count = 0;
        let single = domains.len() == 1;
        let like_prev = if let Some(v) = self.like_prev.get(&c.name) {
            v.clone()
        } else {
            let v = interchangeable(children, self.pods, self.claims);
            self.like_prev.insert(c.name.clone(), v.clone());
            v
        };
        for domain in domains {
            let mut o = opts.clone();
            o.within.extend(domain);
            let mark = self.decisions.len();
            match c.policy {
                CompositeSchedulingPolicy::Gang { min_group_count } => {
                    let mut gang = GangLevel {
                        children,
                        like_prev: &like_prev,
                        m: min_group_count as usize,
                        opts: &o,
                        placed: vec![false; children.len()],
                        dead: vec![false; children.len()],
                    };
                    if self.choose(&mut gang, 0, 0, best)? {
                        // Further children, where they still fit.
                        for (i, child) in children.iter().enumerate() {
                            if gang.placed[i] || gang.dead[i] || self.out_of_budget {
                                continue;
                            }
                            if matches!(self.place_tree(child, &o)?, Placement::Counted) {
                                gang.placed[i] = true;
                            }
                        }
                        *best = (*best).max(gang.placed.iter().filter(|p| **p).count());
                        return Ok(true);
                    }
                }
                CompositeSchedulingPolicy::Basic => {
                    let mut count = 0;
                    for child in children {
                        if self.out_of_budget {
                            break;
                        }
                        if matches!(self.place_tree(child, &o)?, Placement::Counted) {
                            count += 1;
                        }
                    }
                    *best = (*best).max(count);
                    if single {
                        return Ok(count > 0);
                    }
                    if count > best_basic_count {
                        best_basic_count = count;
                        best_basic = Some(self.decisions[mark..].to_vec());
                    }
                    self.undo_to(mark);
                    if count == children.len() {
                        break;
                    }
                }
            }
            if self.out_of_budget {
                break;
            }
        }
        let Some(chosen) = best_basic else {
            return Ok(false);
        };
        // Re-apply the chosen domain's decisions (undone above; exact, so they apply).
        let mark = self.decisions.len();
        for (name, d) in chosen {
            if self.scratch.apply_decision(&d, self.pods).is_err() {
                debug_assert!(false, "an undone decision does not apply again");
                self.undo_to(mark);
                return Ok(false);
            }
            self.decisions.push((name, d));
        }
        Ok(true)
    }

    /// Places at least `gang.m - count` more of `gang.children[i..]` (each placed or
    /// skipped, in order; placing is tried first); true when done, with the placements
    /// applied; false with nothing left applied of this call.
    fn choose(
        &mut self,
        gang: &mut GangLevel<'_, '_>,
        i: usize,
        count: usize,
        best: &mut usize,
    ) -> Result<bool, GangError> {
        *best = (*best).max(count);
        if count >= gang.m {
            return Ok(true);
        }
        // S + R < M: the children left cannot reach minGroupCount any more.
        let left = gang.dead[i..].iter().filter(|d| !**d).count();
        if count + left < gang.m || self.out_of_budget {
            return Ok(false);
        }
        if !gang.dead[i] {
            let mark = self.decisions.len();
            match self.place_tree(&gang.children[i], gang.opts)? {
                Placement::Counted => {
                    gang.placed[i] = true;
                    if self.choose(gang, i + 1, count + 1, best)? {
                        return Ok(true);
                    }
                    gang.placed[i] = false;
                    self.undo_to(mark);
                }
                // Nothing of this composite is placed yet: it fails at every later state.
                Placement::Failed { definitive: true } if count == 0 => gang.dead[i] = true,
                Placement::Failed { .. } => {}
            }
        }
        // Skipped: so are the children interchangeable with it right after it (placing
        // one of them instead is what placing this one was).
        let mut next = i + 1;
        while next < gang.children.len() && gang.like_prev[next] {
            next += 1;
        }
        self.choose(gang, next, count, best)
    }

    /// The domains (values of node label `key`) to try for a subtree: those of its
    /// running pods if any, else those of every node carrying the label and inside
    /// `opts.within`, in value order.
    fn domains(&self, children: &[Tree<'_>], key: &str, opts: &GangOptions) -> Vec<String> {
        let mut groups = Vec::new();
        collect_groups(children, &mut groups);
        let running: BTreeSet<String> = self
            .pods
            .iter()
            .filter(|p| groups.iter().any(|g| is_member(p, g)))
            .filter_map(|p| {
                self.scratch
                    .node(p.node_name.as_deref()?)?
                    .labels
                    .get(key)
                    .cloned()
            })
            .collect();
        if !running.is_empty() {
            return running.into_iter().collect();
        }
        let all: BTreeSet<String> = self
            .scratch
            .nodes()
            .filter(|n| opts.within.iter().all(|(k, v)| n.labels.get(k) == Some(v)))
            .filter_map(|n| n.labels.get(key).cloned())
            .collect();
        all.into_iter().collect()
    }
}

/// Every PodGroup under `children`.
fn collect_groups<'a>(children: &[Tree<'a>], out: &mut Vec<&'a PodGroup>) {
    for c in children {
        match c {
            Tree::Group(g) => out.push(g),
            Tree::Composite(_, ch) => collect_groups(ch, out),
        }
    }
}

/// Per child of `children`: whether it is a PodGroup interchangeable with the child
/// before it (see the module docs): equal but for names — the group, its pending
/// pods in name order, the claims they and the group name (matched by where they are
/// first named) — with no member running and every claim named by that group alone.
fn interchangeable(children: &[Tree<'_>], pods: &[Pod], claims: &[ResourceClaim]) -> Vec<bool> {
    // Who names each claim (`namespace/name`): the PodGroups (and pods of none).
    let mut named_by: BTreeMap<(&str, &str), BTreeSet<Option<&str>>> = BTreeMap::new();
    for p in pods {
        for c in &p.resource_claims {
            if let ClaimSource::ClaimName(n) = &c.source {
                named_by
                    .entry((&p.namespace, n))
                    .or_default()
                    .insert(p.scheduling_group.as_deref());
            }
        }
    }
    for t in children {
        if let Tree::Group(g) = t {
            for c in &g.resource_claims {
                if let ClaimSource::ClaimName(n) = &c.source {
                    named_by
                        .entry((&g.namespace, n))
                        .or_default()
                        .insert(Some(&g.name));
                }
            }
        }
    }
    // The last claim given of a name counts (as in `place_gang`).
    let claim = |ns: &str, name: &str| {
        claims
            .iter()
            .rev()
            .find(|c| c.namespace == ns && c.name == name)
    };
    let shape = |g: &PodGroup| -> Option<(PodGroup, Vec<Pod>, Vec<ResourceClaim>)> {
        let mut names: Vec<String> = Vec::new();
        let mut canonical = |source: &ClaimSource| -> Option<ClaimSource> {
            let ClaimSource::ClaimName(n) = source else {
                return Some(source.clone());
            };
            let only_ours = named_by
                .get(&(g.namespace.as_str(), n.as_str()))
                .is_some_and(|by| by.len() == 1 && by.contains(&Some(g.name.as_str())));
            if !only_ours {
                return None;
            }
            let at = if let Some(at) = names.iter().position(|x| x == n) {
                at
            } else {
                names.push(n.clone());
                names.len() - 1
            };
            Some(ClaimSource::ClaimName(format!("{at}")))
        };
        let mut group = g.clone();
        group.name = String::new();
        group.creation = crate::Time::default();
        for c in &mut group.resource_claims {
            c.source = canonical(&c.source)?;
        }
        let mut members: Vec<&Pod> = pods.iter().filter(|p| is_member(p, g)).collect();
        members.sort_by(|a, b| a.name.cmp(&b.name));
        let mut out = Vec::with_capacity(members.len());
        for p in members {
            if p.node_name.is_some() {
                return None;
            }
            let mut p = p.clone();
            p.name = String::new();
            p.scheduling_group = None;
            p.creation = crate::Time::default();
            for c in &mut p.resource_claims {
                c.source = canonical(&c.source)?;
            }
            out.push(p);
        }
        let mut specs = Vec::with_capacity(names.len());
        for n in names {
            let mut c = claim(&g.namespace, &n)?.clone();
            c.name = String::new();
            specs.push(c);
        }
        Some((group, out, specs))
    };
    let mut like = vec![false; children.len()];
    let mut prev = None;
    for (i, t) in children.iter().enumerate() {
        let this = match t {
            Tree::Group(g) => shape(g),
            Tree::Composite(..) => None,
        };
        like[i] = this.is_some() && this == prev;
        prev = this;
    }
    like
}

impl Cluster {
    /// Places the PodGroups of the CompositePodGroup tree under `root` against this
    /// cluster, without changing it.
    ///
    /// Children are resolved by name in `root.namespace`, among `groups` (PodGroups)
    /// and `composites` (nested CompositePodGroups, recursively); `pods` and `claims`
    /// are every pod and ResourceClaim the PodGroups' placement may need (members are
    /// found by `schedulingGroup`, as in [`place_gang`](Cluster::place_gang)).
    ///
    /// - A PodGroup child counts as placed when, with what `place_gang` places, at
    ///   least its `minCount` pods (1 for the basic policy) are running or placed; so
    ///   one whose pods already run (at least `minCount`, none pending) counts without
    ///   placing anything.
    /// - A composite child with the gang policy counts when `minGroupCount` of its
    ///   children count, all of them placed together or none; further children are then
    ///   placed where they still fit. With the basic policy every child that fits is
    ///   placed, and it counts for its parent when at least one does.
    /// - A topology constraint (`key`) keeps every pod of the subtree in one domain: the
    ///   domains are tried in turn, and the restriction is pushed onto
    ///   [`GangOptions::within`] for everything below. With the basic policy the domain
    ///   placing the most children wins.
    /// - Budget: each `place_gang` call takes one unit of `options.step_budget` at this
    ///   level (and gets the whole `step_budget` for its own search).
    ///
    /// The search is exhaustive over *which* children are placed (subsets tried
    /// depth-first in child order, earlier children preferred, backtracking undoing a
    /// placed child), not over *where* each goes: a child takes the first placement
    /// [`place_gang`](Self::place_gang) finds given the children placed before it. The
    /// same input gives the same output.
    ///
    /// The root's `minGroupCount` not reached gives [`CompositeOutcome::Unschedulable`];
    /// with the basic policy the outcome is `Placed`, possibly with no decision.
    pub fn place_composite(
        &self,
        root: &CompositePodGroup,
        composites: &[CompositePodGroup],
        groups: &[PodGroup],
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<CompositeOutcome, CompositeError> {
        self.place_composite_with_stats(root, composites, groups, pods, claims, options)
            .map(|(outcome, _)| outcome)
    }

    /// [`place_composite`](Self::place_composite), with what its search did: the
    /// PodGroup placement attempts (what [`GangOptions::step_budget`] counts at this
    /// level), the steps of their searches, and which budget ran out when the outcome
    /// is [`CompositeOutcome::BudgetExhausted`].
    pub fn place_composite_with_stats(
        &self,
        root: &CompositePodGroup,
        composites: &[CompositePodGroup],
        groups: &[PodGroup],
        pods: &[Pod],
        claims: &[ResourceClaim],
        options: &GangOptions,
    ) -> Result<(CompositeOutcome, CompositeStats), CompositeError> {
        let mut seen = BTreeSet::new();
        seen.insert((true, root.name.as_str()));
        let children = resolve_children(root, composites, groups, &mut Vec::new(), &mut seen)?;
        let mut search = Search {
            pods,
            claims,
            scratch: self.clone(),
            decisions: Vec::new(),
            attempts: 0,
            budget: options.step_budget,
            out_of_budget: false,
            child_exhausted: None,
            gang_steps: 0,
            allocator_steps: 0,
            like_prev: BTreeMap::new(),
        };
        let mut best = 0;
        let counted = search.place_children(root, &children, options, &mut best)?;
        let exhausted = if search.out_of_budget {
            Some(StepBudget::Gang)
        } else if root.policy == CompositeSchedulingPolicy::Basic {
            None
        } else {
            search.child_exhausted
        };
        let mut stats = CompositeStats {
            attempts: search.attempts,
            gang_steps: search.gang_steps,
            allocator_steps: search.allocator_steps,
            exhausted: None,
        };
        let placed = CompositeOutcome::Placed {
            decisions: search.decisions,
        };
        let outcome = match root.policy {
            CompositeSchedulingPolicy::Gang { .. } if counted => placed,
            _ if exhausted.is_some() => {
                stats.exhausted = exhausted;
                CompositeOutcome::BudgetExhausted {
                    attempts: search.attempts,
                }
            }
            CompositeSchedulingPolicy::Gang { min_group_count } => {
                CompositeOutcome::Unschedulable {
                    required: min_group_count as usize,
                    best,
                }
            }
            CompositeSchedulingPolicy::Basic => placed,
        };
        Ok((outcome, stats))
    }
}
