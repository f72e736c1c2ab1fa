#![cfg(not(target_arch = "wasm32"))]
//! The node table (`Scheduler::node_table`, `Cluster::node_table`): every node once,
//! in natural name order, rejected rows in the explanation's words, feasible rows
//! where the placement goes, and the filter's verdict against an independent oracle
//! (the pod pinned to the node by its hostname label, placed or not).

mod common;

use common::*;
use gangpack::{
    Cluster, ClusterError, Explanation, Fact, FilterStage, GangOptions, GangOutcome, GangStatus,
    Node, NodeTable, ObjectKind, Pod, PodGroup, Quantity, ResourceClaim, Scheduler, SchedulerError,
    SchedulingPolicy, ScoringPolicy, Taint, TaintEffect, TopologyConstraint, Unit, natural_cmp,
};

/// A fact with its nodes and counts blanked: what it says, not where or how often
/// (the explanation sums counts over nodes; a row counts its node alone).
fn subject(f: &Fact) -> Fact {
    let mut f = f.clone();
    match &mut f {
        Fact::Cordoned { nodes }
        | Fact::NodeSelector { nodes }
        | Fact::NodeTaint { nodes, .. }
        | Fact::ResourceTooSmall { nodes, .. }
        | Fact::ResourceInUse { nodes, .. }
        | Fact::TooFewDevices { nodes, .. }
        | Fact::NoCombination { nodes } => nodes.clear(),
        Fact::DeviceTaint { devices, nodes, .. }
        | Fact::DevicesInUse { devices, nodes }
        | Fact::HeldByOwnMembers { devices, nodes }
        | Fact::CountersInUse { devices, nodes } => {
            *devices = 0;
            nodes.clear();
        }
        Fact::RequestSelector {
            of_class,
            selectors,
            nodes,
            ..
        } => {
            *of_class = 0;
            for (_, n) in selectors {
                *n = 0;
            }
            nodes.clear();
        }
        Fact::CapacityTooSmall {
            matching,
            fit,
            nodes,
            ..
        }
        | Fact::CountersTooFew {
            matching,
            fit,
            nodes,
            ..
        } => {
            *matching = 0;
            *fit = 0;
            nodes.clear();
        }
        Fact::Constraint { best, nodes, .. } => {
            *best = 0;
            nodes.clear();
        }
        _ => {}
    }
    f
}

/// The structural promises of every table: each node of the cluster once, in natural
/// name order; feasible rows with a score and no filter, rejected rows with a filter
/// and a reason and no score; a rejected row's reason is its facts' words, each
/// naming the node alone, the first fact's stage its filter.
fn check_shape(c: &Cluster, t: &NodeTable) {
    let mut names: Vec<String> = c.nodes().map(|n| n.name.clone()).collect();
    names.sort_by(|a, b| natural_cmp(a, b));
    let rows: Vec<String> = t.rows.iter().map(|r| r.node.clone()).collect();
    if t.pod.is_some() {
        assert_eq!(rows, names, "every node once, in natural order");
    }
    for r in &t.rows {
        if r.feasible {
            assert!(r.score.is_some() && r.filter.is_none() && r.reason.is_none());
            assert!(r.pods > 0, "{}: feasible with room for no pod", r.node);
            assert!(r.facts.is_empty());
        } else {
            assert!(r.score.is_none() && r.order.is_none() && r.pods == 0);
            assert_eq!(r.planned, 0, "{}: planned on a rejected node", r.node);
            let filter = r
                .filter
                .unwrap_or_else(|| panic!("a rejected row names its filter: {r:?}\n{t}"));
            let reason = r.reason.as_deref().expect("a rejected row says why");
            if filter == FilterStage::OutOfScope {
                assert!(r.facts.is_empty());
                assert!(!reason.is_empty());
                continue;
            }
            assert!(!r.facts.is_empty(), "{}: rejected without a fact", r.node);
            assert_eq!(FilterStage::of(&r.facts[0]), filter);
            let words: Vec<String> = r.facts.iter().map(ToString::to_string).collect();
            assert_eq!(reason, words.join("; "));
            for f in &r.facts {
                assert!(
                    f.nodes().is_empty() || f.nodes() == [r.node.clone()],
                    "{}: a row's fact names other nodes: {f}",
                    r.node
                );
            }
        }
    }
    let mut orders: Vec<u32> = t.rows.iter().filter_map(|r| r.order).collect();
    orders.sort_unstable();
    let want: Vec<u32> = (1..=u32::try_from(orders.len()).unwrap()).collect();
    assert_eq!(orders, want, "orders are 1..n, each once");
}

/// A table agrees with the explanation of the same unit: each rejected row's facts
/// are among the explanation's facts about its node (same subject), and where the
/// placement puts the table's pods the rows are feasible and planned.
fn check_against(t: &NodeTable, ex: &Explanation) {
    if matches!(ex.status, GangStatus::Scheduled) {
        let d = ex.decision.as_ref().unwrap();
        for r in t.rows.iter().filter(|r| r.planned > 0) {
            assert!(r.feasible);
            let bound = d.bindings.iter().filter(|b| b.node == r.node).count();
            assert!(
                bound >= r.planned as usize,
                "{}: planned beyond the decision",
                r.node
            );
        }
        if let Some(b) = d.bindings.iter().find(|b| Some(&b.pod) == t.pod.as_ref()) {
            let row = t.rows.iter().find(|r| r.node == b.node).unwrap();
            assert!(
                row.feasible && row.planned > 0,
                "{}: the pod is placed there",
                b.node
            );
        }
        return;
    }
    if ex.facts.is_empty() {
        return;
    }
    for r in t.rows.iter().filter(|r| !r.feasible) {
        for f in &r.facts {
            let found = ex.facts.iter().any(|e| {
                subject(e) == subject(f) && (f.nodes().is_empty() || e.nodes().contains(&r.node))
            });
            assert!(
                found,
                "{}: row fact `{f}` not in the explanation:\n{ex}",
                r.node
            );
        }
    }
    // With one shape, the node filter's facts in the explanation are the rows'.
    if ex.shapes.len() == 1 {
        for e in &ex.facts {
            if let Fact::Cordoned { nodes }
            | Fact::NodeSelector { nodes }
            | Fact::NodeTaint { nodes, .. }
            | Fact::ResourceTooSmall { nodes, .. } = e
            {
                for n in nodes {
                    let row = t.rows.iter().find(|r| &r.node == n).unwrap();
                    assert_eq!(row.filter, Some(FilterStage::of(e)), "{n}: {e}");
                }
            }
        }
    }
}

/// Nodes `node-1`, `node-2`, `node-3`, `node-10`, `node-20` in racks; each 16 cpu, 110
/// pods, GPUs as given; node-2 cordoned, node-3 tainted, node-20 with 1 cpu.
fn five_nodes() -> Cluster {
    let mut c = rack_cluster(
        &[
            ("node-10", "r1", 4),
            ("node-1", "r1", 2),
            ("node-2", "r1", 4),
            ("node-3", "r2", 4),
            ("node-20", "r2", 4),
        ],
        16,
    );
    let mut n2 = c.node("node-2").unwrap().clone();
    n2.unschedulable = true;
    c.replace_node(n2).unwrap();
    let mut n3 = c.node("node-3").unwrap().clone();
    n3.taints
        .push(Taint::new("maintenance", "yes", TaintEffect::NoSchedule));
    c.replace_node(n3).unwrap();
    let mut n20 = c.node("node-20").unwrap().clone();
    n20.allocatable.insert("cpu".into(), Quantity::from_int(1));
    c.replace_node(n20).unwrap();
    c
}

fn scheduler(c: Cluster, policy: ScoringPolicy) -> Scheduler {
    Scheduler::new(
        c,
        GangOptions {
            policy,
            ..GangOptions::default()
        },
    )
}

/// A pod `ns/<name>` for 2 GPUs and 2 cpu.
fn add_gpu_pod(s: &mut Scheduler, name: &str) {
    let (mut pod, claim) = gpu_pod(name, 2);
    pod.requests.insert("cpu".into(), Quantity::from_int(2));
    s.add_claim(claim).unwrap();
    s.add_pod(pod).unwrap();
}

/// Catches: rows in byte order (node-10 before node-2), a filter mapped to the wrong
/// kube-scheduler stage, reasons worded apart from the facts, a feasible node
/// without a score or a rejected one with one.
#[test]
fn a_pod_sees_every_node_with_its_filter_or_score() {
    let mut s = scheduler(five_nodes(), ScoringPolicy::BestFit);
    add_gpu_pod(&mut s, "p");
    let unit = Unit::Pod("ns/p".into());
    let t = s.node_table(&unit).unwrap();
    check_shape(s.cluster(), &t);
    check_against(&t, &s.explain(&unit).unwrap());
    let rows: Vec<(&str, String)> = t
        .rows
        .iter()
        .map(|r| (r.node.as_str(), r.result()))
        .collect();
    assert_eq!(
        rows,
        [
            ("node-1", "planned (1)".to_owned()),
            ("node-2", "NodeUnschedulable".to_owned()),
            ("node-3", "TaintToleration".to_owned()),
            ("node-10", "feasible".to_owned()),
            ("node-20", "NodeResourcesFit".to_owned()),
        ]
    );
    assert_eq!(t.pod.as_deref(), Some("ns/p"));
    assert_eq!(t.policy, "BestFit");
    assert!(!t.higher_is_better);
    // BestFit: fewest free devices first; node-1 has 2, node-10 has 4.
    let n1 = &t.rows[0];
    let n10 = &t.rows[3];
    assert_eq!((n1.score, n1.order, n1.pods), (Some(2.0), Some(1), 1));
    assert_eq!((n10.score, n10.order, n10.pods), (Some(4.0), Some(2), 2));
    assert_eq!(
        t.rows[1].reason.as_deref(),
        Some("1 node (node-2) is cordoned")
    );
    assert_eq!(
        t.rows[4].reason.as_deref(),
        Some("1 node (node-20) has less cpu than a pod requests")
    );
    let text = t.to_string();
    assert!(text.contains("node-3   TaintToleration"), "{text}");
}

/// Catches: a score read from the wrong policy (Spread prefers the most free
/// devices: node-10 first), or the table's direction not following the policy.
#[test]
fn spread_orders_the_other_way() {
    let mut s = scheduler(five_nodes(), ScoringPolicy::Spread);
    add_gpu_pod(&mut s, "p");
    let t = s.node_table(&Unit::Pod("ns/p".into())).unwrap();
    check_shape(s.cluster(), &t);
    assert!(t.higher_is_better);
    let n10 = t.rows.iter().find(|r| r.node == "node-10").unwrap();
    assert_eq!((n10.order, n10.planned), (Some(1), 1));
}

/// Catches: a pod of a group seen alone (its group's rack would not count), a table
/// that refuses bound pods, planned pods reported for a bound pod.
#[test]
fn group_members_and_bound_pods() {
    let mut s = scheduler(five_nodes(), ScoringPolicy::BestFit);
    let mut group = PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: 1 });
    group.topology.push(TopologyConstraint::new("rack"));
    s.add_group(group).unwrap();
    for name in ["a", "b"] {
        let (mut pod, claim) = gpu_pod(name, 1);
        pod.scheduling_group = Some("g".into());
        s.add_claim(claim).unwrap();
        s.add_pod(pod).unwrap();
    }
    let t = s.node_table(&Unit::Group("ns/g".into())).unwrap();
    check_shape(s.cluster(), &t);
    check_against(&t, &s.explain(&Unit::Group("ns/g".into())).unwrap());
    assert_eq!(t.pod.as_deref(), Some("ns/a"));
    assert_eq!(t.key.as_deref(), Some("rack"));
    let n3 = t.rows.iter().find(|r| r.node == "node-3").unwrap();
    assert_eq!(n3.domain.as_deref(), Some("r2"));
    let by_pod = s.node_table(&Unit::Pod("ns/b".into())).unwrap();
    assert_eq!(by_pod.group.as_deref(), Some("ns/g"));
    assert_eq!(by_pod.pod.as_deref(), Some("ns/b"));
    // Place both; then the table of a bound member is its copy's, nothing planned.
    s.cycle();
    let host = s.binding("ns/a").unwrap().node.clone();
    let t = s.node_table(&Unit::Pod("ns/a".into())).unwrap();
    check_shape(s.cluster(), &t);
    assert_eq!(t.bound.as_deref(), Some(host.as_str()));
    assert!(t.rows.iter().all(|r| r.planned == 0));
    // Its running members keep the copy in their rack.
    let rack = s.cluster().node(&host).unwrap().labels["rack"].clone();
    for r in &t.rows {
        if r.domain.as_deref() != Some(rack.as_str()) {
            assert_eq!(r.filter, Some(FilterStage::OutOfScope), "{}", r.node);
            assert_eq!(
                r.reason.as_deref(),
                Some("outside the rack domain of the unit's running members")
            );
        }
    }
    let err = s.node_table(&Unit::Pod("ns/nope".into())).unwrap_err();
    match err {
        SchedulerError::Cluster(ClusterError::NotFound(o)) => {
            assert_eq!(o.kind, ObjectKind::Pod);
        }
        other => panic!("{other:?}"),
    }
}

/// Catches: a bound pod's copy that keeps its own claim's allocation, so asks for
/// no devices and "fits" everywhere, even where fewer GPUs are free than it needs.
#[test]
fn a_bound_pods_copy_asks_for_its_devices_anew() {
    // node-1 has 2 GPUs, node-10 4: the 2-GPU pod goes to node-1 (BestFit), filling it.
    let mut s = scheduler(five_nodes(), ScoringPolicy::BestFit);
    add_gpu_pod(&mut s, "p");
    s.cycle();
    assert_eq!(s.binding("ns/p").unwrap().node, "node-1");
    let t = s.node_table(&Unit::Pod("ns/p".into())).unwrap();
    check_shape(s.cluster(), &t);
    assert_eq!(t.bound.as_deref(), Some("node-1"));
    let row = |n: &str| t.rows.iter().find(|r| r.node == n).unwrap();
    // Its own node is full now (its GPUs are held), node-10 still takes 2 copies.
    assert_eq!(row("node-1").filter, Some(FilterStage::DynamicResources));
    assert!(
        row("node-1")
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("allocated to other claims")),
        "{:?}",
        row("node-1").reason
    );
    assert!(row("node-10").feasible);
    assert_eq!(row("node-10").pods, 2);
    // The query changed nothing: the pod's claim is still allocated.
    let claim = s.claims().find(|c| c.name == "p-gpus").unwrap();
    assert!(claim.allocation.is_some());
}

/// Catches: an explanation's facts listing nodes in byte order (node-10 before
/// node-2), unlike every table and list of the command and the playground.
#[test]
fn explanation_facts_list_nodes_in_natural_order() {
    let mut c = five_nodes();
    let mut n2 = c.node("node-2").unwrap().clone();
    n2.unschedulable = false;
    c.replace_node(n2).unwrap();
    let mut s = scheduler(c, ScoringPolicy::BestFit);
    let (pod, claim) = gpu_pod("big", 5); // no node has 5 GPUs
    s.add_claim(claim).unwrap();
    s.add_pod(pod).unwrap();
    let ex = s.explain(&Unit::Pod("ns/big".into())).unwrap();
    let lists: Vec<Vec<String>> = ex
        .facts
        .iter()
        .map(|f| f.nodes().to_vec())
        .filter(|n| n.len() > 1)
        .collect();
    assert!(
        lists.contains(&vec![
            "node-1".to_owned(),
            "node-2".to_owned(),
            "node-10".to_owned(),
            "node-20".to_owned()
        ]),
        "{lists:?}"
    );
    assert!(
        ex.to_string()
            .contains("4 nodes (node-1, node-2, node-10, +1)"),
        "{ex}"
    );
}

/// Catches: the table changing the cluster or the scheduler (a read-only query).
#[test]
fn the_table_changes_nothing() {
    let mut s = scheduler(five_nodes(), ScoringPolicy::stranding());
    add_gpu_pod(&mut s, "p");
    let before = format!("{s:?}");
    let t = s.node_table(&Unit::Pod("ns/p".into())).unwrap();
    assert_eq!(format!("{s:?}"), before);
    assert_eq!(t.policy, "Stranding");
    check_shape(s.cluster(), &t);
}

/// Catches: a comparison by bytes, or one that drops the leading zeros' tie-break.
#[test]
fn natural_order() {
    let mut v = vec![
        "node-10", "node-2", "node-1", "a", "node-02", "node-b", "node-",
    ];
    v.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(
        v,
        [
            "a", "node-", "node-1", "node-02", "node-2", "node-10", "node-b"
        ]
    );
}

/// The property test over the test kit's generated scenarios (feature `testing`).
#[cfg(feature = "testing")]
mod generated {
    use super::*;
    use gangpack::testing::{ScenarioConfig, scenario};
    use proptest::prelude::*;

    /// The one-pod gang `pod` pinned to node `n` by its hostname label: placed or not.
    fn pinned_fits(c: &Cluster, pod: &Pod, claims: &[ResourceClaim], n: &str) -> Option<bool> {
        if pod.node_selector.contains_key("kubernetes.io/hostname") {
            return None;
        }
        let mut pinned = pod.clone();
        pinned
            .node_selector
            .insert("kubernetes.io/hostname".into(), n.into());
        match c.place_gang(None, &[pinned], claims, &GangOptions::default()) {
            Ok(GangOutcome::Placed(_)) => Some(true),
            Ok(_) => Some(false),
            Err(_) => None,
        }
    }

    fn labelled(c: &Cluster) -> bool {
        c.nodes()
            .all(|n: &Node| n.labels.get("kubernetes.io/hostname") == Some(&n.name))
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 128,
            ..ProptestConfig::default()
        })]

        /// Generated scenarios: every pending unit's table has every node once in natural
        /// order and agrees with the unit's explanation; for a pod without a group (whose
        /// claims are its own), a row is feasible exactly when the pod pinned to that node
        /// places. Catches: a feasible row the allocator would refuse (the counts without
        /// `refine_caps`), a rejected row where the pod fits (a filter the placement does
        /// not apply), rows for some nodes only.
        #[test]
        fn rows_agree_with_explain_and_the_pinned_oracle(s in scenario(&ScenarioConfig::small())) {
            let Ok(sched) = s.scheduler(GangOptions::default()) else {
                return Ok(());
            };
            let c = sched.cluster();
            for unit in sched.pending_units() {
                let Ok(t) = sched.node_table(&unit) else { continue };
                check_shape(c, &t);
                if let Ok(ex) = sched.explain(&unit) {
                    check_against(&t, &ex);
                }
                let Unit::Pod(key) = &unit else { continue };
                let pod = sched.pod(key).unwrap();
                if !labelled(c) {
                    continue;
                }
                let claims: Vec<ResourceClaim> = sched.claims().cloned().collect();
                let own_only = pod.resource_claims.iter().all(|rc| match &rc.source {
                    gangpack::ClaimSource::ClaimName(n) => claims
                        .iter()
                        .any(|x| x.namespace == pod.namespace && &x.name == n && x.allocation.is_none()),
                    gangpack::ClaimSource::Template(_) => false,
                });
                if !own_only {
                    continue;
                }
                for r in &t.rows {
                    if let Some(fits) = pinned_fits(c, pod, &claims, &r.node) {
                        prop_assert_eq!(fits, r.feasible, "{}: pinned {} but row {:?}\n{}", r.node, fits, r, t);
                    }
                }
            }
        }
    }
}
