#![cfg(not(target_arch = "wasm32"))]
//! Adversarial search (issue 18, item 3): instances built to blow up a naive
//! backtracking search — many identical devices, near-miss counts, `matchAttribute`
//! with many values, `distinctAttribute` pigeonholes, gangs one GPU too large for
//! every domain, deep `firstAvailable` lists, composites of many roles with group
//! claims — each with its expected outcome, the steps it takes (from
//! [`Cluster::place_gang_with_stats`] / [`Cluster::place_composite_with_stats`]) and
//! the budget it stays within.
//!
//! Where an instance is infeasible, gangpack proves it: by counting (the placer's caps
//! and domain device bound, the allocator's bounds at each request), by symmetry
//! (devices the call cannot tell apart, interchangeable PodGroups), or by what the
//! search learns (a node that refuses a pod takes no more of its shape). Before those,
//! several of these ran for 25–45 s and answered "does not fit" after an allocator
//! call ran out of its budget unnoticed, and the near-miss gang ran out of its
//! 100,000 steps: each is kept as a regression test, with its step count pinned.
//!
//! Where sizes allow, small versions are checked against a brute-force oracle that
//! knows nothing of the engine. Every placement passes the independent validator.
//! Budget exhaustion, where it is the answer, is reported as such — never as "does
//! not fit" — with the budget, its value and where to raise it.

mod common;

use common::DRIVER;
use gangpack::{
    AllocationMode, AllocationOutcome, AllocatorOptions, ClaimSource, Cluster, CompositeOutcome,
    CompositePodGroup, CompositeSchedulingPolicy, CompositeStats, ConstraintKind, Device,
    DeviceAllocation, DeviceAttribute, DeviceClass, DeviceConstraint, DeviceRef, DeviceRequest,
    DeviceSubRequest, ExactDeviceRequest, GangOptions, GangOutcome, GangStatus, Node, Pod,
    PodGroup, PodGroupResourceClaim, PodResourceClaim, Quantity, ResourceClaim, ResourceSlice,
    Scheduler, SchedulingPolicy, SearchStats, StepBudget, TopologyConstraint, Unit, UnitResult,
    Unsatisfiable, WorkloadReference, validate_placement,
};
use std::collections::BTreeMap;

const CLASS: &str = "gpu";

/// Attributes of one GPU (besides its unique `uuid`), by node and GPU index.
type Attrs = fn(usize, usize) -> Vec<(&'static str, DeviceAttribute)>;

/// `nodes` nodes `n00..` with 64 CPUs and room for 110 pods, `per_rack` to a rack
/// (label `rack`: `r0..`), `per_block` to a block (label `block`: `b0..`), each with
/// `gpus` GPUs `gpu-0..` carrying a unique `uuid` and the attributes `attrs` gives.
fn fleet(nodes: usize, per_rack: usize, per_block: usize, gpus: usize, attrs: Attrs) -> Cluster {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for n in 0..nodes {
        let name = format!("n{n:02}");
        c.add_node(
            Node::new(&name)
                .with_label("rack", format!("r{}", n / per_rack))
                .with_label("block", format!("b{}", n / per_block))
                .with_allocatable("cpu", Quantity::from_int(64))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        let mut s = ResourceSlice::node_local(format!("{name}-gpus"), DRIVER, &name, &name);
        for g in 0..gpus {
            let mut d = Device::new(format!("gpu-{g}"));
            d.attributes.insert(
                "uuid".into(),
                DeviceAttribute::String(format!("GPU-{n:02}-{g:02}")),
            );
            for (k, v) in attrs(n, g) {
                d.attributes.insert(k.into(), v);
            }
            s.devices.push(d);
        }
        c.add_slice(s).unwrap();
    }
    c
}

fn int(v: usize) -> DeviceAttribute {
    DeviceAttribute::Int(i64::try_from(v).unwrap())
}

fn exact(name: &str, n: u32) -> DeviceRequest {
    DeviceRequest::exactly(
        name,
        ExactDeviceRequest::new(CLASS).with_mode(AllocationMode::ExactCount(n)),
    )
}

fn attr(name: &str) -> String {
    format!("{DRIVER}/{name}")
}

/// A claim with `requests`, all under one constraint (if any).
fn claim(requests: Vec<DeviceRequest>, constraint: Option<ConstraintKind>) -> ResourceClaim {
    let mut c = ResourceClaim::new("ns", "template");
    c.spec.requests = requests;
    if let Some(kind) = constraint {
        c.spec.constraints.push(DeviceConstraint {
            requests: vec![],
            kind,
        });
    }
    c
}

/// One request for `n` GPUs.
fn counted(n: u32, constraint: Option<ConstraintKind>) -> ResourceClaim {
    claim(vec![exact("gpus", n)], constraint)
}

/// `n` requests `r0..` for one GPU each.
fn singles(n: u32, constraint: Option<ConstraintKind>) -> ResourceClaim {
    claim(
        (0..n).map(|r| exact(&format!("r{r}"), 1)).collect(),
        constraint,
    )
}

/// A `matchAttribute` on `a`, as the optional constraint [`claim`] takes.
#[allow(clippy::unnecessary_wraps)]
fn match_on(a: &str) -> Option<ConstraintKind> {
    Some(ConstraintKind::MatchAttribute(attr(a)))
}

/// A `distinctAttribute` on `a`, as the optional constraint [`claim`] takes.
#[allow(clippy::unnecessary_wraps)]
fn distinct_on(a: &str) -> Option<ConstraintKind> {
    Some(ConstraintKind::DistinctAttribute(attr(a)))
}

/// A gang `ns/g` of `min`, with no pods yet.
fn group(min: u32) -> PodGroup {
    PodGroup::new("ns", "g", SchedulingPolicy::Gang { min_count: min })
}

/// A gang's pods and their claims.
#[derive(Default)]
struct Pods {
    pods: Vec<Pod>,
    claims: Vec<ResourceClaim>,
}

impl Pods {
    /// Adds `n` pods `<prefix>000..` of group `g`, each with 1 CPU and its own copy
    /// of `claim`.
    fn add(&mut self, prefix: &str, n: usize, claim: &ResourceClaim) -> &mut Pods {
        for i in 0..n {
            let name = format!("{prefix}{i:03}");
            let mut p = Pod::new("ns", &name);
            p.scheduling_group = Some("g".into());
            p.requests.insert("cpu".into(), Quantity::from_int(1));
            let mut c = claim.clone();
            c.name = format!("{name}-gpus");
            p.resource_claims.push(PodResourceClaim {
                name: "gpus".into(),
                source: ClaimSource::ClaimName(c.name.clone()),
            });
            self.pods.push(p);
            self.claims.push(c);
        }
        self
    }
}

fn pods(n: usize, claim: &ResourceClaim) -> Pods {
    let mut p = Pods::default();
    p.add("p", n, claim);
    p
}

/// Places the gang with `options`: the outcome and what the search did. A placement
/// must pass the validator, and the search must stay within its budget.
fn place_with(
    c: &Cluster,
    g: &PodGroup,
    p: &Pods,
    options: &GangOptions,
) -> (GangOutcome, SearchStats) {
    let (out, stats) = c
        .place_gang_with_stats(Some(g), &p.pods, &p.claims, options)
        .unwrap();
    assert!(
        stats.steps <= options.step_budget,
        "{} steps over a budget of {}",
        stats.steps,
        options.step_budget
    );
    if let GangOutcome::Placed(d) = &out {
        let v = validate_placement(c, Some(g), &p.pods, &p.claims, d);
        assert!(v.is_empty(), "invalid placement: {v:?}");
    }
    assert_eq!(
        stats.exhausted.is_some(),
        matches!(out, GangOutcome::BudgetExhausted { .. }),
        "{out:?} {stats:?}"
    );
    (out, stats)
}

/// [`place_with`] the default options (100,000 steps).
fn place(c: &Cluster, g: &PodGroup, p: &Pods) -> (GangOutcome, SearchStats) {
    place_with(c, g, p, &GangOptions::default())
}

fn unschedulable(required: usize, best: usize) -> GangOutcome {
    GangOutcome::Unschedulable { required, best }
}

fn bindings(out: &GangOutcome) -> usize {
    match out {
        GangOutcome::Placed(d) => d.bindings.len(),
        other => panic!("not placed: {other:?}"),
    }
}

/// The nodes a placement binds to, in binding order.
fn nodes_of(out: &GangOutcome) -> Vec<String> {
    match out {
        GangOutcome::Placed(d) => d.bindings.iter().map(|b| b.node.clone()).collect(),
        other => panic!("not placed: {other:?}"),
    }
}

/// The value of attribute `a` of every device a placement allocates, per claim.
fn values_of(c: &Cluster, out: &GangOutcome, a: &str) -> Vec<Vec<DeviceAttribute>> {
    let GangOutcome::Placed(d) = out else {
        panic!("not placed: {out:?}")
    };
    d.bindings
        .iter()
        .flat_map(|b| &b.claims)
        .map(|claim| {
            claim
                .result
                .devices
                .iter()
                .map(|r| {
                    let id = c
                        .device_id(&DeviceRef::new(&r.driver, &r.pool, &r.device))
                        .unwrap();
                    c.device(id).unwrap().device.attributes[a].clone()
                })
                .collect()
        })
        .collect()
}

// ---------------------------------------------------------------------------------
// Brute-force oracle: one node's devices (one attribute value each), claims of
// requests under one constraint over all their requests.
// ---------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Rule {
    Free,
    Match,
    Distinct,
}

/// Whether claims (each: request counts, and its rule) can all be allocated from
/// devices with `values`, no device twice: every combination, written out.
fn oracle(values: &[i64], claims: &[(Vec<u32>, Rule)]) -> bool {
    fn go(values: &[i64], used: &mut Vec<bool>, claims: &[(Vec<u32>, Rule)]) -> bool {
        let Some(((counts, rule), rest)) = claims.split_first() else {
            return true;
        };
        let mut taken = Vec::new();
        pick(values, used, counts, *rule, &mut taken, rest)
    }
    fn pick(
        values: &[i64],
        used: &mut Vec<bool>,
        counts: &[u32],
        rule: Rule,
        taken: &mut Vec<usize>,
        rest: &[(Vec<u32>, Rule)],
    ) -> bool {
        let need: u32 = counts.iter().sum();
        if taken.len() == need as usize {
            let vals: Vec<i64> = taken.iter().map(|&d| values[d]).collect();
            let ok = match rule {
                Rule::Free => true,
                Rule::Match => vals.windows(2).all(|w| w[0] == w[1]),
                Rule::Distinct => {
                    let mut v = vals.clone();
                    v.sort_unstable();
                    v.windows(2).all(|w| w[0] != w[1])
                }
            };
            return ok && go(values, used, rest);
        }
        // Devices of one claim are a set (its requests together): combinations.
        let from = taken.last().map_or(0, |&d| d + 1);
        for d in from..values.len() {
            if used[d] {
                continue;
            }
            used[d] = true;
            taken.push(d);
            let found = pick(values, used, counts, rule, taken, rest);
            taken.pop();
            used[d] = false;
            if found {
                return true;
            }
        }
        false
    }
    go(values, &mut vec![false; values.len()], claims)
}

/// The most copies of a claim one node with `values` hosts (oracle).
fn oracle_per_node(values: &[i64], counts: &[u32], rule: Rule) -> usize {
    let mut k = 0;
    while oracle(values, &vec![(counts.to_vec(), rule); k + 1]) {
        k += 1;
    }
    k
}

fn rule_kind(rule: Rule, a: &str) -> Option<ConstraintKind> {
    match rule {
        Rule::Free => None,
        Rule::Match => match_on(a),
        Rule::Distinct => distinct_on(a),
    }
}

/// A one-node cluster `n1` whose GPUs carry attribute `v` with `values`.
fn node_with(values: &[i64]) -> Cluster {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        CLASS,
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    c.add_node(Node::new("n1").with_allocatable("cpu", Quantity::from_int(64)))
        .unwrap();
    let mut s = ResourceSlice::node_local("n1-gpus", DRIVER, "n1", "n1");
    for (g, v) in values.iter().enumerate() {
        let mut d = Device::new(format!("gpu-{g}"));
        d.attributes
            .insert("uuid".into(), DeviceAttribute::String(format!("GPU-{g}")));
        d.attributes.insert("v".into(), DeviceAttribute::Int(*v));
        s.devices.push(d);
    }
    c.add_slice(s).unwrap();
    c
}

/// The allocator on one node agrees with the oracle for every claim set of
/// `shapes` × `rules` over every value pattern of `patterns`, within its budget.
#[test]
fn the_allocators_bounds_agree_with_a_brute_force_oracle() {
    let patterns: [&[i64]; 5] = [
        &[0, 0, 0, 0, 1, 1, 1, 1],
        &[0, 0, 1, 1, 2, 2, 3, 3],
        &[0, 1, 2, 3, 4, 5, 6, 7],
        &[0, 0, 0, 1, 2, 3, 4, 5],
        &[0, 0, 1, 2, 3, 4, 5, 5],
    ];
    let shapes: [&[u32]; 8] = [
        &[3],
        &[5],
        &[1, 1, 1],
        &[1, 1, 1, 1, 1],
        &[2, 2],
        &[2, 1, 1],
        &[4, 4],
        &[3, 3, 3],
    ];
    let mut cases = 0;
    // The most steps a search that found nothing took.
    let mut most = 0;
    for values in patterns {
        let c = node_with(values);
        for counts in shapes {
            for rule in [Rule::Free, Rule::Match, Rule::Distinct] {
                for copies in 1..=2 {
                    let want = oracle(values, &vec![(counts.to_vec(), rule); copies]);
                    let requests = || {
                        counts
                            .iter()
                            .enumerate()
                            .map(|(r, n)| exact(&format!("r{r}"), *n))
                            .collect()
                    };
                    let claims: Vec<ResourceClaim> = (0..copies)
                        .map(|i| {
                            let mut x = claim(requests(), rule_kind(rule, "v"));
                            x.name = format!("c{i}");
                            x
                        })
                        .collect();
                    let options = AllocatorOptions { step_budget: 1_000 };
                    let out = c
                        .allocate_claims("n1", &claims, &BTreeMap::new(), &options)
                        .unwrap();
                    let got = match &out {
                        AllocationOutcome::Allocated(_) => true,
                        AllocationOutcome::Unsatisfiable(_) => false,
                        AllocationOutcome::BudgetExhausted { steps } => {
                            panic!("{values:?} {counts:?} {rule:?} x{copies}: {steps} steps")
                        }
                    };
                    if let AllocationOutcome::Unsatisfiable(Unsatisfiable::NoCombination {
                        steps,
                        ..
                    }) = &out
                    {
                        most = most.max(*steps);
                    }
                    assert_eq!(got, want, "{values:?} {counts:?} {rule:?} x{copies}");
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 240);
    // Two claims of two 2-GPU requests each under distinctAttribute, on values
    // 0, 0, 0, 1, …, 5: each claim alone fits, together they need 8 distinct-enough
    // devices of 7; no bound sees that, the search does.
    assert_eq!(most, 384);
}

// ---------------------------------------------------------------------------------
// 1. Many identical devices.
// ---------------------------------------------------------------------------------

/// 64 nodes × 16 GPUs, identical but for their UUIDs, 8 on each of two NUMA nodes.
fn two_numa_nodes() -> Cluster {
    fleet(64, 8, 32, 16, |_, g| vec![("numa", int(g / 8))])
}

/// A claim for 9 of 16 identical GPUs on one NUMA node: impossible on every node (8
/// per NUMA node). Counting proves it in every allocator call (no search step), so
/// each pod costs one step per node. The same as 9 one-GPU requests under one
/// `matchAttribute` (every assignment of 8 alike GPUs to 8 requests, before: 41 s and
/// a wrong "does not fit" from an exhausted allocator call). 8 of 16 fits: two pods
/// per node.
#[test]
fn many_identical_devices_nine_of_sixteen_on_one_numa_node() {
    let c = two_numa_nodes();
    // A gang of 4 pods: each node refuses the first pod, one step per node.
    let (out, stats) = place(&c, &group(4), &pods(4, &counted(9, match_on("numa"))));
    assert_eq!(out, unschedulable(4, 0));
    // 61: after 61 nodes refused, the 3 left cannot hold 4 pods.
    assert_eq!((stats.steps, stats.allocator_steps), (61, 0));
    // Nine requests of one GPU each, under one constraint: the same proof.
    let (out, stats) = place(&c, &group(1), &pods(1, &singles(9, match_on("numa"))));
    assert_eq!(out, unschedulable(1, 0));
    assert_eq!((stats.steps, stats.allocator_steps), (64, 0));
    // One GPU fewer fits: four pods, two per node, each on one NUMA node.
    let (out, stats) = place(&c, &group(4), &pods(4, &counted(8, match_on("numa"))));
    assert_eq!(nodes_of(&out), ["n00", "n00", "n01", "n01"]);
    for v in values_of(&c, &out, "numa") {
        assert!(v.len() == 8 && v.iter().all(|x| *x == v[0]), "{v:?}");
    }
    assert_eq!(stats.steps, 4);
    let (out, _) = place(&c, &group(1), &pods(1, &singles(8, match_on("numa"))));
    assert_eq!(bindings(&out), 1);
}

// ---------------------------------------------------------------------------------
// 2. Near-miss counts.
// ---------------------------------------------------------------------------------

/// 64 nodes × 8 identical GPUs (no attributes beyond their UUIDs).
fn plain_fleet() -> Cluster {
    fleet(64, 8, 32, 8, |_, _| vec![])
}

/// Every node one GPU short: a GPU of each node is held by another workload, and the
/// pods want all 8. Counting drops every node before any step.
#[test]
fn near_miss_every_node_one_gpu_short() {
    let mut c = plain_fleet();
    for n in 0..64 {
        c.allocate(
            &DeviceRef::new(DRIVER, format!("n{n:02}"), "gpu-7"),
            DeviceAllocation::new("ns/other", vec![]),
        )
        .unwrap();
    }
    let (out, stats) = place(&c, &group(8), &pods(8, &counted(8, None)));
    assert_eq!(out, unschedulable(8, 0));
    assert_eq!(stats, SearchStats::default());
    // Seven each fits everywhere.
    let (out, stats) = place(&c, &group(8), &pods(8, &counted(7, None)));
    assert_eq!(bindings(&out), 8);
    assert_eq!(stats.steps, 8);
}

/// A gang of N + 1 whole-node pods on N nodes: the caps sum to 64 < 65, so counting
/// answers with no step, and says 64 fit. N of N fits in one step per pod.
#[test]
fn near_miss_a_gang_of_n_plus_one_on_n_nodes() {
    let c = plain_fleet();
    let (out, stats) = place(&c, &group(65), &pods(65, &counted(8, None)));
    assert_eq!(out, unschedulable(65, 64));
    assert_eq!(stats, SearchStats::default());
    let (out, stats) = place(&c, &group(64), &pods(64, &counted(8, None)));
    assert_eq!(bindings(&out), 64);
    assert_eq!(stats.steps, 64);
}

/// 64 nodes × 8 GPUs whose NUMA values are 0, 0, 1, 2, …, 6: one matched pair per
/// node, though the counts say four 2-GPU pods fit. A gang of 65 such pods: counting
/// admits it (64 × 4 ≥ 65), and a naive search then tries every way to spread 65
/// pods over 64 nodes (before: 100,000 steps, budget exhausted). A node that refuses
/// a pod takes no more of the shape, so the search fails in steps linear in the nodes.
#[test]
fn near_miss_hidden_by_a_constraint_every_node_hosts_one_pod_not_four() {
    let c = fleet(64, 8, 32, 8, |_, g| {
        vec![("numa", int(g.saturating_sub(1)))]
    });
    let pair = counted(2, match_on("numa"));
    let (out, stats) = place(&c, &group(65), &pods(65, &pair));
    assert_eq!(out, unschedulable(65, 64));
    assert_eq!(stats.steps, 128);
    // 64 fit, one per node, each on gpu-0 and gpu-1 (the NUMA 0 pair).
    let (out, stats) = place(&c, &group(64), &pods(64, &pair));
    let mut nodes = nodes_of(&out);
    nodes.dedup();
    assert_eq!(nodes.len(), 64);
    assert!(
        values_of(&c, &out, "numa")
            .iter()
            .all(|v| v == &[int(0), int(0)])
    );
    assert_eq!(stats.steps, 127);
}

/// The near miss on small fleets, against the oracle: per node, the most pods of the
/// shape it hosts (brute force), summed, decides the gang.
#[test]
fn near_misses_on_small_fleets_agree_with_the_oracle() {
    let numa: [Attrs; 3] = [
        |_, g| vec![("numa", int(g.saturating_sub(1)))],
        |_, g| vec![("numa", int(g / 3))],
        |n, g| vec![("numa", int((g + n) % 3))],
    ];
    let mut cases = 0;
    for (i, attrs) in numa.iter().enumerate() {
        let c = fleet(4, 2, 4, 6, *attrs);
        for (counts, rule) in [
            (vec![2], Rule::Match),
            (vec![3], Rule::Match),
            (vec![2], Rule::Distinct),
            (vec![1, 1], Rule::Match),
            (vec![2, 1], Rule::Distinct),
        ] {
            let per_node: usize = (0..4)
                .map(|n| {
                    let values: Vec<i64> = (0..6)
                        .map(|g| match &attrs(n, g)[0].1 {
                            DeviceAttribute::Int(v) => *v,
                            other => panic!("{other:?}"),
                        })
                        .collect();
                    oracle_per_node(&values, &counts, rule)
                })
                .sum();
            let requests = counts
                .iter()
                .enumerate()
                .map(|(r, n)| exact(&format!("r{r}"), *n))
                .collect();
            let x = claim(requests, rule_kind(rule, "numa"));
            for n in 1..=per_node + 1 {
                let n32 = u32::try_from(n).unwrap();
                let (out, _) = place(&c, &group(n32), &pods(n, &x));
                let fits = matches!(out, GangOutcome::Placed(_));
                assert_eq!(fits, n <= per_node, "pattern {i} {counts:?} {rule:?} {n}");
                cases += 1;
            }
        }
    }
    assert!(cases > 30, "{cases}");
}

/// Gangs of two shapes (2 GPUs on one NUMA node, and 1 GPU) on 3 nodes of 5 GPUs
/// (three matched pairs in all), every mix up to 4 + 10 pods, against the oracle: some split of the pods over the nodes whose
/// every node's claims fit (brute force). What the search learns about the second
/// shape holds only while the first shape's pods stay put; this checks it is forgotten
/// when they move.
#[test]
fn two_shape_gangs_on_small_fleets_agree_with_the_oracle() {
    const VALUES: [[i64; 5]; 3] = [[0, 0, 1, 2, 3], [0, 0, 1, 1, 2], [0, 1, 2, 3, 4]];
    // Whether `a` pairs and `b` singles fit on the nodes from `n` on.
    fn split(values: &[[i64; 5]; 3], n: usize, a: usize, b: usize) -> bool {
        if n == values.len() {
            return a == 0 && b == 0;
        }
        (0..=a).any(|x| {
            (0..=b).any(|y| {
                let mut claims = vec![(vec![2], Rule::Match); x];
                claims.extend(vec![(vec![1], Rule::Free); y]);
                oracle(&values[n], &claims) && split(values, n + 1, a - x, b - y)
            })
        })
    }
    let c = fleet(3, 3, 3, 5, |n, g| {
        vec![("numa", DeviceAttribute::Int(VALUES[n][g]))]
    });
    let pair = counted(2, match_on("numa"));
    let one = counted(1, None);
    let mut placed = 0;
    for a in 0..=4 {
        for b in 0..=10 {
            if a + b == 0 {
                continue;
            }
            let mut p = Pods::default();
            p.add("a", a, &pair).add("b", b, &one);
            let (out, _) = place(&c, &group(u32::try_from(a + b).unwrap()), &p);
            let fits = matches!(out, GangOutcome::Placed(_));
            assert_eq!(fits, split(&VALUES, 0, a, b), "{a} pairs, {b} singles");
            placed += usize::from(fits);
        }
    }
    // 15 GPUs, 3 matched pairs: exactly the mixes with a ≤ 3 and 2a + b ≤ 15.
    assert_eq!(placed, 42);
}

// ---------------------------------------------------------------------------------
// 3. matchAttribute with many distinct values.
// ---------------------------------------------------------------------------------

/// 64 nodes × 16 GPUs, each on its own NVSwitch (attribute `switch`) but for
/// gpu-0..3, which share one.
fn many_switches() -> Cluster {
    fleet(64, 8, 32, 16, |_, g| vec![("switch", int(g.max(3)))])
}

/// Five GPUs on one switch: impossible (four share the most common one), proved by
/// counting in every allocator call — one request for 5 or five requests for 1. Four
/// fit, and a gang of 8 such pods takes 8 nodes although the counts say 4 per node.
#[test]
fn match_attribute_with_many_distinct_values() {
    let c = many_switches();
    let (out, stats) = place(&c, &group(8), &pods(8, &counted(5, match_on("switch"))));
    assert_eq!(out, unschedulable(8, 0));
    // Counted 3 a node: after 62 refusals the last 2 nodes cannot hold 8.
    assert_eq!((stats.steps, stats.allocator_steps), (62, 0));
    let (out, stats) = place(&c, &group(1), &pods(1, &singles(5, match_on("switch"))));
    assert_eq!(out, unschedulable(1, 0));
    assert_eq!((stats.steps, stats.allocator_steps), (64, 0));
    let (out, stats) = place(&c, &group(8), &pods(8, &counted(4, match_on("switch"))));
    assert_eq!(
        nodes_of(&out),
        ["n00", "n01", "n02", "n03", "n04", "n05", "n06", "n07"]
    );
    assert!(
        values_of(&c, &out, "switch")
            .iter()
            .all(|v| *v == vec![int(3); 4])
    );
    assert_eq!(stats.steps, 15);
}

// ---------------------------------------------------------------------------------
// 4. distinctAttribute pigeonholes.
// ---------------------------------------------------------------------------------

/// 64 nodes × 16 GPUs on 8 NUMA nodes, two each.
fn eight_numa_nodes() -> Cluster {
    fleet(64, 8, 32, 16, |_, g| vec![("numa", int(g / 2))])
}

/// Nine GPUs on pairwise different NUMA nodes when there are eight: a pigeonhole,
/// proved by counting — one request for 9, or nine requests for 1 (before: every
/// way to give 8 requests 8 distinct values, 45 s, and a wrong "does not fit" from an
/// exhausted allocator call). Eight fit, one per NUMA node.
#[test]
fn distinct_attribute_pigeonholes() {
    let c = eight_numa_nodes();
    let (out, stats) = place(&c, &group(2), &pods(2, &counted(9, distinct_on("numa"))));
    assert_eq!(out, unschedulable(2, 0));
    assert_eq!((stats.steps, stats.allocator_steps), (63, 0));
    let (out, stats) = place(&c, &group(1), &pods(1, &singles(9, distinct_on("numa"))));
    assert_eq!(out, unschedulable(1, 0));
    assert_eq!((stats.steps, stats.allocator_steps), (64, 0));
    for x in [
        counted(8, distinct_on("numa")),
        singles(8, distinct_on("numa")),
    ] {
        let (out, stats) = place(&c, &group(2), &pods(2, &x));
        assert_eq!(nodes_of(&out), ["n00", "n00"]);
        for v in values_of(&c, &out, "numa") {
            let mut v: Vec<String> = v.iter().map(|x| format!("{x:?}")).collect();
            v.sort();
            v.dedup();
            assert_eq!(v.len(), 8);
        }
        assert_eq!(stats.steps, 2);
    }
}

// ---------------------------------------------------------------------------------
// 5. Gangs one GPU too large for every topology domain.
// ---------------------------------------------------------------------------------

/// A gang of `big` 8-GPU pods and `small` 1-GPU pods, all required, in one domain of
/// `key`.
fn mixed_gang(key: &str, big: usize, small: usize) -> (PodGroup, Pods) {
    let mut g = group(u32::try_from(big + small).unwrap());
    g.topology.push(TopologyConstraint::new(key));
    let mut p = Pods::default();
    p.add("big", big, &counted(8, None))
        .add("small", small, &counted(1, None));
    (g, p)
}

/// 64 nodes × 8 GPUs: racks of 8 nodes (64 GPUs), blocks of 32 (256 GPUs). Seven
/// 8-GPU pods and nine 1-GPU pods need 65 GPUs: each shape alone fits every rack,
/// so the per-shape counts admit all 8 racks, but no rack has 65 GPUs; the domain
/// device bound proves it before any step (the search alone took ~200 steps per
/// rack). The same one GPU over a block (257 of 256). One GPU fewer fits in one rack.
#[test]
fn gangs_one_gpu_too_large_for_every_rack_and_block() {
    let c = plain_fleet();
    let (g, p) = mixed_gang("rack", 7, 9);
    let (out, stats) = place(&c, &g, &p);
    // Counting: at most 15 of the 16 pods (the 9 small and 6 big) in 64 GPUs.
    assert_eq!(out, unschedulable(16, 15));
    assert_eq!(stats, SearchStats::default());
    let (g, p) = mixed_gang("block", 31, 9);
    let (out, stats) = place(&c, &g, &p);
    assert_eq!(out, unschedulable(40, 39));
    assert_eq!(stats, SearchStats::default());

    let (g, p) = mixed_gang("rack", 7, 8);
    let (out, stats) = place(&c, &g, &p);
    let racks: Vec<String> = nodes_of(&out)
        .iter()
        .map(|n| c.node(n).unwrap().labels["rack"].clone())
        .collect();
    assert_eq!(racks.len(), 15);
    assert!(racks.iter().all(|r| *r == racks[0]), "{racks:?}");
    assert_eq!(stats.steps, 22);
    let (g, p) = mixed_gang("block", 31, 8);
    let (out, _) = place(&c, &g, &p);
    assert_eq!(bindings(&out), 39);
}

// ---------------------------------------------------------------------------------
// 6. Deep firstAvailable lists.
// ---------------------------------------------------------------------------------

/// `requests` requests `r0..`, each `firstAvailable` of subrequests `s0..` for
/// `counts` GPUs in order.
fn first_available(requests: usize, counts: &[u32]) -> ResourceClaim {
    claim(
        (0..requests)
            .map(|r| {
                let subs = counts
                    .iter()
                    .enumerate()
                    .map(|(k, n)| {
                        DeviceSubRequest::new(format!("s{k}"), CLASS)
                            .with_mode(AllocationMode::ExactCount(*n))
                    })
                    .collect();
                DeviceRequest::first_available(format!("r{r}"), subs)
            })
            .collect(),
        None,
    )
}

/// The subrequest (`request/subrequest`) behind each device a placement allocates.
fn subrequests_of(out: &GangOutcome) -> Vec<String> {
    let GangOutcome::Placed(d) = out else {
        panic!("not placed: {out:?}")
    };
    let mut v: Vec<String> = d
        .bindings
        .iter()
        .flat_map(|b| &b.claims)
        .flat_map(|c| &c.result.devices)
        .map(|r| r.request.clone())
        .collect();
    v.dedup();
    v
}

/// Six requests, each `firstAvailable` over 8, 7, …, 3 GPUs, on 16-GPU nodes: at
/// least 18 GPUs, so the allocator's free-device bound answers at once (before: 6⁶
/// combinations of subrequests, 25 s, and a wrong "does not fit" from an exhausted
/// allocator call). Over 8, …, 1 (8 subrequests), the first allocation in upstream's
/// order is found: 8 + 4 + 1 + 1 + 1 + 1, with the bound cutting each dead prefix.
#[test]
fn deep_first_available_lists() {
    let c = two_numa_nodes();
    let x = first_available(6, &[8, 7, 6, 5, 4, 3]);
    let (out, stats) = place(&c, &group(1), &pods(1, &x));
    assert_eq!(out, unschedulable(1, 0));
    assert_eq!((stats.steps, stats.allocator_steps), (64, 0));

    let x = first_available(6, &[8, 7, 6, 5, 4, 3, 2, 1]);
    let (out, stats) = place(&c, &group(1), &pods(1, &x));
    assert_eq!(
        subrequests_of(&out),
        ["r0/s0", "r1/s4", "r2/s7", "r3/s7", "r4/s7", "r5/s7"]
    );
    assert_eq!(stats.steps, 1);
    assert!(stats.allocator_steps < 1_000, "{stats:?}");
    // Two such pods on one node: 16 GPUs for at least 12; a gang of 8 takes 4 nodes.
    let (out, stats) = place(&c, &group(8), &pods(8, &x));
    assert_eq!(
        nodes_of(&out),
        ["n00", "n00", "n01", "n01", "n02", "n02", "n03", "n03"]
    );
    assert!(stats.steps <= 16, "{stats:?}");
    assert!(stats.allocator_steps < 20_000, "{stats:?}");
}

// ---------------------------------------------------------------------------------
// 7. Composite groups: many roles with group claims.
// ---------------------------------------------------------------------------------

/// Everything a composite placement reads.
#[derive(Default)]
struct World {
    pods: Vec<Pod>,
    claims: Vec<ResourceClaim>,
    groups: Vec<PodGroup>,
}

impl World {
    /// Role `name`: a gang of 2 pods × 3 GPUs (1 CPU each, `cpu` more for the first)
    /// with a PodGroup-level claim for one more GPU that both pods use, so the role
    /// takes 7 GPUs on one node.
    fn role(&mut self, name: &str, cpu: i64) {
        let mut g = PodGroup::new("ns", name, SchedulingPolicy::Gang { min_count: 2 });
        let shared = format!("{name}-shared");
        g.resource_claims.push(PodGroupResourceClaim {
            name: "shared".into(),
            source: ClaimSource::ClaimName(shared.clone()),
        });
        let mut sc = counted(1, None);
        sc.name.clone_from(&shared);
        self.claims.push(sc);
        for i in 0..2 {
            let mut p = Pod::new("ns", format!("{name}-{i}"));
            p.scheduling_group = Some(name.into());
            p.requests.insert(
                "cpu".into(),
                Quantity::from_int(1 + if i == 0 { cpu } else { 0 }),
            );
            let mut own = counted(3, None);
            own.name = format!("{name}-{i}-gpus");
            p.resource_claims.push(PodResourceClaim {
                name: "gpus".into(),
                source: ClaimSource::ClaimName(own.name.clone()),
            });
            p.resource_claims.push(PodResourceClaim {
                name: "shared".into(),
                source: ClaimSource::ClaimName(shared.clone()),
            });
            self.claims.push(own);
            self.pods.push(p);
        }
        self.groups.push(g);
    }

    fn place(
        &self,
        c: &Cluster,
        root: &CompositePodGroup,
        options: &GangOptions,
    ) -> (CompositeOutcome, CompositeStats) {
        let (out, stats) = c
            .place_composite_with_stats(root, &[], &self.groups, &self.pods, &self.claims, options)
            .unwrap();
        assert!(stats.attempts <= options.step_budget, "{stats:?}");
        if let CompositeOutcome::Placed { decisions } = &out {
            let mut scratch = c.clone();
            for (name, d) in decisions {
                let g = self.groups.iter().find(|g| &g.name == name).unwrap();
                let v = validate_placement(&scratch, Some(g), &self.pods, &self.claims, d);
                assert!(v.is_empty(), "invalid placement of {name}: {v:?}");
                scratch.apply_decision(d, &self.pods).unwrap();
            }
        }
        (out, stats)
    }
}

fn composite(children: &[String], min_group_count: u32) -> CompositePodGroup {
    let mut root = CompositePodGroup::new(
        "ns",
        "job",
        WorkloadReference::new("w", "t"),
        CompositeSchedulingPolicy::Gang { min_group_count },
    );
    root.children = children.to_vec();
    root
}

/// 16 nodes × 8 GPUs and a composite of 20 identical roles, each 7 GPUs on one node
/// (two 3-GPU pods and their group claim's GPU): 16 fit. Needing 17, a naive subset
/// search tries every way to choose 17 of 20 (before: 3.7 s); identical roles are
/// interchangeable, so the roles placed are a prefix and 17 attempts prove it. Ten of
/// twenty are placed (and the other six that fit after them).
#[test]
fn a_composite_of_many_identical_roles_with_group_claims() {
    let c = fleet(16, 4, 16, 8, |_, _| vec![]);
    let mut w = World::default();
    let names: Vec<String> = (0..20).map(|r| format!("role-{r:02}")).collect();
    for n in &names {
        w.role(n, 0);
    }
    let options = GangOptions::default();
    let (out, stats) = w.place(&c, &composite(&names, 17), &options);
    assert_eq!(
        out,
        CompositeOutcome::Unschedulable {
            required: 17,
            best: 16
        }
    );
    assert_eq!((stats.attempts, stats.gang_steps), (17, 32));
    let (out, stats) = w.place(&c, &composite(&names, 10), &options);
    let CompositeOutcome::Placed { decisions } = out else {
        panic!("{out:?}")
    };
    assert_eq!(decisions.len(), 16);
    assert!(decisions.iter().all(|(_, d)| d.group_claims.len() == 1));
    assert_eq!((stats.attempts, stats.gang_steps), (20, 32));
}

/// Roles that differ (each asks a different number of CPUs) are not interchangeable,
/// and choosing 17 of 20 again means trying subsets: the composite's budget (one step
/// per PodGroup attempt) ends it with a clear outcome, at exactly the budget.
#[test]
fn a_composite_of_distinct_roles_stops_at_its_budget() {
    let c = fleet(16, 4, 16, 8, |_, _| vec![]);
    let mut w = World::default();
    let names: Vec<String> = (0..20).map(|r| format!("role-{r:02}")).collect();
    for (i, n) in names.iter().enumerate() {
        w.role(n, i64::try_from(i).unwrap());
    }
    let options = GangOptions {
        step_budget: 300,
        ..GangOptions::default()
    };
    let (out, stats) = w.place(&c, &composite(&names, 17), &options);
    assert_eq!(out, CompositeOutcome::BudgetExhausted { attempts: 300 });
    assert_eq!(stats.exhausted, Some(StepBudget::Gang));
}

// ---------------------------------------------------------------------------------
// Budget exhaustion, where it is the answer: said so, with the budget and its value.
// ---------------------------------------------------------------------------------

/// The near-miss gang of 65 needs 128 steps; with 50 it stops undecided at exactly 50,
/// and the explanation names the budget, its value and where to raise it — not a
/// blocking fact that would read as "does not fit". The scheduler keeps it pending.
#[test]
fn a_gang_search_out_of_steps_says_so() {
    let c = fleet(64, 8, 32, 8, |_, g| {
        vec![("numa", int(g.saturating_sub(1)))]
    });
    let g = group(65);
    let p = pods(65, &counted(2, match_on("numa")));
    let tight = GangOptions {
        step_budget: 50,
        ..GangOptions::default()
    };
    let (out, stats) = place_with(&c, &g, &p, &tight);
    assert_eq!(out, GangOutcome::BudgetExhausted { steps: 50 });
    assert_eq!(stats.exhausted, Some(StepBudget::Gang));
    let ex = c
        .explain_gang(Some(&g), &p.pods, &p.claims, &tight)
        .unwrap();
    assert!(ex.budget_exhausted);
    assert_eq!(ex.status, GangStatus::Undecided);
    assert_eq!(
        ex.summary(),
        "PodGroup ns/g: undecided: the gang search's step budget (50 steps) ran out before an \
         answer was known: raise it to search further (GangOptions::step_budget, \
         --step-budget, stepBudget)"
    );
    let text = ex.to_string();
    assert!(
        text.contains("├─ undecided: the gang search's step budget (50 steps) ran out"),
        "{text}"
    );
    assert!(
        text.ends_with("└─ no blocking set sought: the search is undecided\n"),
        "{text}"
    );

    let mut s = Scheduler::new(c, tight);
    for claim in &p.claims {
        s.add_claim(claim.clone()).unwrap();
    }
    s.add_group(g).unwrap();
    for pod in &p.pods {
        s.add_pod(pod.clone()).unwrap();
    }
    let report = s.cycle();
    let unit = Unit::Group("ns/g".into());
    assert_eq!(
        report.units,
        [(
            unit.clone(),
            UnitResult::Pending(GangOutcome::BudgetExhausted { steps: 50 })
        )]
    );
    assert!(s.explain(&unit).unwrap().summary().contains("(50 steps)"));
}

/// A claim whose constraints contradict each other in a way no bound sees (x and y on
/// different NUMA nodes, z on the NUMA node of each) needs a search; with 5 allocator
/// steps per call the first call runs out, and the gang is undecided — before, the
/// placer read that as "does not fit" and went on to the next node.
#[test]
fn an_allocator_call_out_of_steps_makes_the_gang_undecided() {
    let c = two_numa_nodes();
    let mut x = singles(3, None);
    for (requests, kind) in [
        (
            ["r0", "r1"],
            ConstraintKind::DistinctAttribute(attr("numa")),
        ),
        (["r0", "r2"], ConstraintKind::MatchAttribute(attr("numa"))),
        (["r1", "r2"], ConstraintKind::MatchAttribute(attr("numa"))),
    ] {
        x.spec.constraints.push(DeviceConstraint {
            requests: requests.iter().map(|r| (*r).to_string()).collect(),
            kind,
        });
    }
    let g = group(1);
    let p = pods(1, &x);
    let tight = GangOptions {
        allocator_step_budget: 5,
        ..GangOptions::default()
    };
    let (out, stats) = place_with(&c, &g, &p, &tight);
    assert_eq!(out, GangOutcome::BudgetExhausted { steps: 1 });
    assert_eq!(stats.exhausted, Some(StepBudget::Allocator));
    assert_eq!(stats.allocator_steps, 5);
    let ex = c
        .explain_gang(Some(&g), &p.pods, &p.claims, &tight)
        .unwrap();
    assert_eq!(
        ex.summary(),
        "PodGroup ns/g: undecided: a claim allocation's step budget (5 steps per call) ran \
         out before an answer was known: raise it to search further \
         (GangOptions::allocator_step_budget, --allocator-step-budget, allocatorStepBudget)"
    );
    // With the default budgets the search decides: no node fits.
    let (out, stats) = place(&c, &g, &p);
    assert_eq!(out, unschedulable(1, 0));
    assert_eq!(stats.steps, 64);
    assert!(matches!(
        c.allocate_claims(
            "n00",
            &p.claims,
            &BTreeMap::new(),
            &AllocatorOptions::default()
        )
        .unwrap(),
        AllocationOutcome::Unsatisfiable(Unsatisfiable::NoCombination { .. })
    ));
}
