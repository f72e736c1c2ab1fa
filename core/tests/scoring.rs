#![cfg(not(target_arch = "wasm32"))]
//! The workload mix's fragmentation measure against a brute-force oracle and its
//! invariants.
//!
//! - On tiny domains (≤ 4 nodes × ≤ 8 free devices, shapes of ≤ 4 pods × ≤ 4 devices)
//!   an exhaustive search places as many whole copies of each shape as it can, pod by
//!   pod, and the devices it leaves over must equal `WorkloadMix::fragmentation`'s
//!   closed formula.
//! - For any input (every `u32`, invalid mixes included): no panic; 0 on an empty
//!   domain; at most `weight_sum × Σ free`; exact below `u64::MAX`, saturated above;
//!   independent of node order and of empty nodes; additive over nodes for single-pod
//!   shapes; at least FGD's per-node measure and equal to it on nodes that are too small.
//! - `node_fragmentation_delta` agrees with `fragmentation` on one-node domains
//!   restricted to the single-pod entries.
//! - `validate` reports exactly the bad fields, with their paths.

use std::collections::HashMap;

use gangpack::{MixEntry, Problem, WorkloadMix};
use proptest::prelude::*;

// ---------------------------------------------------------------------------------
// Oracle: the most whole copies of `pods` × `k` that fit in a domain, by search.
// ---------------------------------------------------------------------------------

/// The most copies of a shape (`pods` pods of `k` devices, each pod on one node) that
/// the nodes with `free` free devices can hold at once, found by trying every way to
/// place every pod. Memoised on the sorted free counts (node order does not matter to
/// *how many* fit).
fn max_copies(free: &[u32], pods: u32, k: u32, memo: &mut HashMap<Vec<u32>, u64>) -> u64 {
    let mut key = free.to_vec();
    key.sort_unstable();
    if let Some(&m) = memo.get(&key) {
        return m;
    }
    let mut best = 0;
    let mut scratch = key.clone();
    place_copy(&mut scratch, pods, pods, k, 0, memo, &mut best);
    memo.insert(key, best);
    best
}

/// Places the remaining `left` of the `pods` pods of one copy on nodes `start..` (non-decreasing node
/// order: pods of a copy are interchangeable), then counts the copies that still fit.
fn place_copy(
    free: &mut Vec<u32>,
    pods: u32,
    left: u32,
    k: u32,
    start: usize,
    memo: &mut HashMap<Vec<u32>, u64>,
    best: &mut u64,
) {
    if left == 0 {
        let more = max_copies(free, pods, k, memo);
        *best = (*best).max(1 + more);
        return;
    }
    for i in start..free.len() {
        if free[i] >= k {
            free[i] -= k;
            place_copy(free, pods, left - 1, k, i, memo, best);
            free[i] += k;
        }
    }
}

/// The oracle's fragmentation: for each entry, the free devices left over after the
/// most whole copies the search could place, weighted.
fn oracle_fragmentation(mix: &WorkloadMix, free: &[u32]) -> u64 {
    let total: u64 = free.iter().map(|&f| u64::from(f)).sum();
    mix.entries
        .iter()
        .map(|e| {
            let copies = max_copies(free, e.pods, e.devices_per_pod, &mut HashMap::new());
            u64::from(e.weight) * (total - copies * u64::from(e.pods * e.devices_per_pod))
        })
        .sum()
}

/// The closed formula, in u128, saturated: a second statement of the documented
/// contract for inputs of any size.
fn reference(mix: &WorkloadMix, free: &[u32]) -> u64 {
    let total: u128 = free.iter().map(|&f| u128::from(f)).sum();
    let mut sum: u128 = 0;
    for e in &mix.entries {
        let k = u128::from(e.devices_per_pod.max(1));
        let n = u128::from(e.pods.max(1));
        let hosted: u128 = free.iter().map(|&f| u128::from(f) / k).sum();
        sum = sum.saturating_add(u128::from(e.weight) * (total - hosted / n * n * k));
    }
    u64::try_from(sum).unwrap_or(u64::MAX)
}

/// FGD's per-node measure for a whole-device single pod of `k`: everything free if it
/// does not fit, nothing if it does (whole devices have no partial remainder).
fn fgd_node(free: u32, k: u32) -> u64 {
    if free < k { u64::from(free) } else { 0 }
}

fn single_pod_only(mix: &WorkloadMix) -> WorkloadMix {
    WorkloadMix {
        entries: mix
            .entries
            .iter()
            .copied()
            .filter(|e| e.pods <= 1)
            .collect(),
    }
}

// ---------------------------------------------------------------------------------
// Strategies.
// ---------------------------------------------------------------------------------

fn small_entry() -> impl Strategy<Value = MixEntry> {
    (1..=5u32, 1..=4u32, 1..=4u32).prop_map(|(weight, pods, devices_per_pod)| MixEntry {
        weight,
        pods,
        devices_per_pod,
    })
}

fn small_mix() -> impl Strategy<Value = WorkloadMix> {
    prop::collection::vec(small_entry(), 1..=3).prop_map(|entries| WorkloadMix { entries })
}

fn tiny_domain() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(0..=8u32, 0..=4)
}

/// Any field value, edge cases favoured.
fn any_field() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(0u32),
        1..=9u32,
        65_535..=65_537u32,
        Just(u32::MAX),
        any::<u32>(),
    ]
}

fn any_entry() -> impl Strategy<Value = MixEntry> {
    (any_field(), any_field(), any_field()).prop_map(|(weight, pods, devices_per_pod)| MixEntry {
        weight,
        pods,
        devices_per_pod,
    })
}

fn any_mix() -> impl Strategy<Value = WorkloadMix> {
    prop::collection::vec(any_entry(), 0..=8).prop_map(|entries| WorkloadMix { entries })
}

fn any_domain() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(prop_oneof![0..=16u32, any::<u32>(), Just(u32::MAX)], 0..=40)
}

// ---------------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn formula_matches_exhaustive_placement(mix in small_mix(), free in tiny_domain()) {
        prop_assert_eq!(mix.fragmentation(&free), oracle_fragmentation(&mix, &free));
    }

    #[test]
    fn empty_domain_has_no_fragmentation(mix in any_mix(), nodes in 0..50usize) {
        prop_assert_eq!(mix.fragmentation(&vec![0; nodes]), 0);
    }

    #[test]
    fn exact_below_the_limit_and_bounded(mix in any_mix(), free in any_domain()) {
        let got = mix.fragmentation(&free);
        prop_assert_eq!(got, reference(&mix, &free));
        let total: u128 = free.iter().map(|&f| u128::from(f)).sum();
        let bound = u128::from(mix.weight_sum()) * total;
        prop_assert!(u128::from(got) <= bound, "{} > {}", got, bound);
    }

    #[test]
    fn node_order_and_empty_nodes_do_not_matter(
        mix in any_mix(),
        free in any_domain(),
        zeros in 0..5usize,
        rotate in 0..40usize,
    ) {
        let before = mix.fragmentation(&free);
        let mut other = free.clone();
        other.extend(std::iter::repeat_n(0, zeros));
        let len = other.len().max(1);
        other.rotate_left(rotate % len);
        other.reverse();
        prop_assert_eq!(mix.fragmentation(&other), before);
    }

    #[test]
    fn single_pod_shapes_add_up_over_nodes(mix in small_mix(), free in any_domain()) {
        let mix = single_pod_only(&mix);
        let sum = free
            .iter()
            .fold(0u64, |s, &f| s.saturating_add(mix.fragmentation(&[f])));
        prop_assert_eq!(mix.fragmentation(&free), sum);
    }

    #[test]
    fn single_pod_measure_extends_fgd(k in 1..=16u32, free in 0..=64u32, weight in 1..=9u32) {
        let mix = WorkloadMix { entries: vec![MixEntry::single(weight, k)] };
        let ours = mix.fragmentation(&[free]);
        let fgd = u64::from(weight) * fgd_node(free, k);
        prop_assert!(ours >= fgd);
        if free < k || free % k == 0 {
            prop_assert_eq!(ours, fgd);
        } else {
            // The extra shard left after as many copies as fit.
            prop_assert_eq!(ours - fgd, u64::from(weight) * u64::from(free % k));
        }
    }

    #[test]
    fn node_delta_agrees_with_fragmentation_small(
        mix in small_mix(),
        free_before in 0..=64u32,
        take in 0..=70u32,
    ) {
        let single = single_pod_only(&mix);
        let after = free_before.saturating_sub(take);
        let expected = i128::from(single.fragmentation(&[after]))
            - i128::from(single.fragmentation(&[free_before]));
        prop_assert_eq!(i128::from(mix.node_fragmentation_delta(free_before, take)), expected);
        prop_assert_eq!(mix.node_fragmentation(free_before), single.fragmentation(&[free_before]));
    }

    #[test]
    fn node_delta_agrees_with_fragmentation_any(
        mix in any_mix(),
        free_before in any::<u32>(),
        take in any::<u32>(),
    ) {
        let single = single_pod_only(&mix);
        let after = free_before.saturating_sub(take);
        let (a, b) = (single.fragmentation(&[after]), single.fragmentation(&[free_before]));
        let delta = mix.node_fragmentation_delta(free_before, take);
        if a < u64::MAX && b < u64::MAX {
            // Both exact: the delta is their difference, clamped to i64.
            let expected = (i128::from(a) - i128::from(b))
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX));
            prop_assert_eq!(i128::from(delta), expected);
        }
        prop_assert_eq!(mix.node_fragmentation(free_before), b);
    }

    #[test]
    fn validate_reports_exactly_the_bad_fields(
        entries in prop::collection::vec(any_entry(), 0..=70),
    ) {
        let mix = WorkloadMix { entries };
        let base = "mix.entries";
        let mut expected: Vec<(String, String)> = Vec::new();
        if mix.entries.is_empty() {
            expected.push((base.into(), "required".into()));
        } else if mix.entries.len() > 64 {
            expected.push((base.into(), format!("too many 64 {}", mix.entries.len())));
        }
        for (i, e) in mix.entries.iter().enumerate() {
            for (name, v) in [("weight", e.weight), ("pods", e.pods), ("devicesPerPod", e.devices_per_pod)] {
                if v == 0 {
                    expected.push((format!("{base}[{i}].{name}"), "invalid 0".into()));
                }
            }
            if u64::from(e.pods) * u64::from(e.devices_per_pod) > u64::from(u32::MAX) {
                expected.push((
                    format!("{base}[{i}]"),
                    format!("invalid {} × {}", e.pods, e.devices_per_pod),
                ));
            }
        }
        let got: Vec<(String, String)> = match mix.validate() {
            Ok(()) => Vec::new(),
            Err(errs) => errs
                .iter()
                .map(|e| {
                    prop_assert_eq!(e.object.to_string(), "PodGroup \"scoring policy\"");
                    let tag = match &e.problem {
                        Problem::Required => "required".to_string(),
                        Problem::TooMany { max, actual } => format!("too many {max} {actual}"),
                        Problem::Invalid { value, .. } => format!("invalid {value}"),
                        other => format!("unexpected {other:?}"),
                    };
                    Ok((e.field.clone(), tag))
                })
                .collect::<Result<_, TestCaseError>>()?,
        };
        prop_assert_eq!(&got, &expected);
    }
}

// ---------------------------------------------------------------------------------
// Examples.
// ---------------------------------------------------------------------------------

#[test]
fn oracle_sanity() {
    // 3 pods × 2 devices on 3 + 3 + 2: one copy (one pod per node), 2 left over.
    let mix = WorkloadMix {
        entries: vec![MixEntry {
            weight: 1,
            pods: 3,
            devices_per_pod: 2,
        }],
    };
    assert_eq!(oracle_fragmentation(&mix, &[3, 3, 2]), 2);
    assert_eq!(oracle_fragmentation(&mix, &[3, 3, 1]), 7);
    assert_eq!(oracle_fragmentation(&mix, &[8, 4]), 0);
}

#[test]
fn a_million_full_nodes_do_not_overflow() {
    let free = vec![u32::MAX; 1_000_000];
    let mix = WorkloadMix {
        entries: vec![
            MixEntry::single(u32::MAX, 3),
            MixEntry {
                weight: u32::MAX,
                pods: u32::MAX,
                devices_per_pod: 7,
            },
            MixEntry::single(u32::MAX, u32::MAX - 1),
        ],
    };
    assert_eq!(mix.fragmentation(&free), reference(&mix, &free));
    assert_eq!(
        WorkloadMix::openb().fragmentation(&free),
        reference(&WorkloadMix::openb(), &free)
    );
}

#[test]
fn packing_beats_breaking_a_full_node_under_openb() {
    // A 2-device pod: taking 2 of 10 leaves 8 (an 8-device hole), taking 2 of 8 breaks
    // the hole. The fragmentation-aware step must prefer the first.
    let mix = WorkloadMix::openb();
    assert!(mix.node_fragmentation_delta(10, 2) < mix.node_fragmentation_delta(8, 2));
    // A 1-device pod on 5 free (→ 4) beats one on 4 free (→ 3).
    assert!(mix.node_fragmentation_delta(5, 1) < mix.node_fragmentation_delta(4, 1));
}
