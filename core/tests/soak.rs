#![cfg(feature = "testing")]
//! The short soak (issue 18): a seeded sequence of 50,000 random operations on a small
//! cluster (`gangpack::testing::Driver`: pods, PodGroups, claims, slices, device and
//! node taints, DeviceTaintRules, cycles, clock advances, and since issue 33 a live
//! cluster's changes — nodes joining, changing and leaving, DeviceClasses, pods bound
//! and claims allocated by someone else, `minCount` — many of them deliberately
//! invalid), every refused operation checked to leave the scheduler unchanged, the
//! independent audit (`gangpack::testing::audit`) every 1,000 operations and at the
//! end; every kind of the live cluster's operations must be both applied and refused
//! in the run. The long soak (1M operations on 1,000 nodes) is `scripts/soak.sh`.

use gangpack::testing::{ClusterShape, Driver, Limits, Op, Source, SplitMix64, audit_scoped};
use std::collections::BTreeMap;

const SEED: u64 = 18;
const OPS: u64 = 50_000;
const AUDIT_EVERY: u64 = 1_000;

fn shape() -> ClusterShape {
    ClusterShape {
        nodes: 6,
        gpus_per_node: 4,
        nodes_per_rack: 2,
        shared_gpus: 2,
    }
}

fn limits() -> Limits {
    Limits {
        // Refusals are frequent: check one in sixteen (a check renders the whole state
        // twice); the fuzz target checks every one.
        check_refusals_every: 16,
        ..Limits::for_nodes(6)
    }
}

/// An operation's kind: its variant's name.
fn kind(op: &Op) -> String {
    let text = format!("{op:?}");
    text.split(['(', ' ', '{'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn fifty_thousand_operations_keep_every_invariant() {
    let mut driver = Driver::new(&shape(), limits());
    let mut rng = SplitMix64::new(SEED);
    // As `Driver::run`, counting what each kind of operation did.
    let mut kinds: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut last = Op::Cycle;
    for i in 1..=OPS {
        let op = driver.draw(&mut rng);
        let outcome = driver.step(&op).unwrap_or_else(|f| panic!("{f}"));
        let k = kinds.entry(kind(&op)).or_default();
        if outcome.is_refused() {
            k.1 += 1;
        } else {
            k.0 += 1;
        }
        if i % AUDIT_EVERY == 0 {
            driver.audit(&op).unwrap_or_else(|f| panic!("{f}"));
        }
        last = op;
    }
    driver.audit(&last).unwrap_or_else(|f| panic!("{f}"));
    eprintln!("operations (applied, refused): {kinds:?}");
    // Every kind of the live cluster's operations is applied and refused.
    for k in [
        "AddNode",
        "UpdateNode",
        "RemoveNode",
        "PutClass",
        "RemoveClass",
        "UpdatePod",
        "UpdateClaim",
        "UpdateGroup",
    ] {
        let (applied, refused) = kinds.get(k).copied().unwrap_or_default();
        assert!(
            applied > 0 && refused > 0,
            "{k}: {applied} applied, {refused} refused"
        );
    }
    let st = driver.stats();
    assert_eq!(st.ops, OPS);
    assert_eq!(st.audits, OPS / AUDIT_EVERY + 1, "{st:?}");
    assert_eq!(st.applied + st.refused, OPS);
    assert!(st.applied > OPS / 4, "too few operations applied: {st:?}");
    assert!(st.refused > OPS / 50, "too few operations refused: {st:?}");
    assert!(st.refusals_checked >= st.refused / 16, "{st:?}");
    assert!(st.cycles > 1_000 && st.pods_bound > 1_000, "{st:?}");
    assert!(st.evicted > 0, "no NoExecute eviction happened: {st:?}");
    // The audit with what the driver knows (claims allocated by someone else, nodes
    // resized or relabelled under their pods): the plain `audit` knows none of it.
    let findings = audit_scoped(driver.scheduler(), driver.scope());
    assert!(findings.is_empty(), "{findings:#?}");
    // The populations stay under their limits (no growth with the number of operations).
    let l = limits();
    assert!(driver.scheduler().pods().count() <= l.max_pods + 1);
    assert!(driver.scheduler().claims().count() <= l.max_claims + 1);
    assert!(driver.scheduler().groups().count() <= l.max_groups + 1);
}

#[test]
fn the_same_seed_gives_the_same_state() {
    let run = |seed: u64| {
        let mut driver = Driver::new(&shape(), limits());
        let mut rng = SplitMix64::new(seed);
        driver
            .run(&mut rng, 2_000, 0)
            .unwrap_or_else(|f| panic!("{f}"));
        (format!("{:?}", driver.scheduler()), driver.stats())
    };
    let (a, sa) = run(SEED);
    let (b, sb) = run(SEED);
    assert_eq!(sa, sb);
    assert!(a == b, "two runs of seed {SEED} differ");
    let (c, _) = run(SEED + 1);
    assert_ne!(a, c, "another seed gives another state");
}

#[test]
fn every_byte_string_decodes_to_operations() {
    // The fuzz target's decoder: arbitrary bytes, including none and all-0xff.
    let inputs: [&[u8]; 4] = [&[], &[0xff; 64], &[0; 64], b"gangpack scheduler ops"];
    for data in inputs {
        let mut src = gangpack::testing::ByteSource::new(data);
        let shape = ClusterShape::draw(&mut src);
        assert!(
            (1..=8).contains(&shape.nodes) && shape.gpus_per_node <= 3,
            "{shape:?}"
        );
        let mut driver = Driver::new(&shape, Limits::default());
        let mut n = 0;
        while !src.is_exhausted() {
            let op = driver.draw(&mut src);
            driver.step(&op).unwrap_or_else(|f| panic!("{data:?}: {f}"));
            driver
                .audit(&op)
                .unwrap_or_else(|f| panic!("{data:?}: {f}"));
            n += 1;
        }
        assert!(data.len() < 3 || n > 0, "{data:?} gave no operation");
    }
}

/// What the `scheduler_ops` fuzz target does with one input: the first bytes shape
/// the cluster, then up to 96 operations, each refusal checked, the audit every 4
/// operations and after the last.
fn replay(data: &[u8]) {
    let mut src = gangpack::testing::ByteSource::new(data);
    let shape = ClusterShape::draw(&mut src);
    let mut driver = Driver::new(&shape, Limits::default());
    let mut last = None;
    for i in 1..=96 {
        if src.is_exhausted() {
            break;
        }
        let op = driver.draw(&mut src);
        driver
            .step(&op)
            .unwrap_or_else(|f| panic!("{shape:?}: {f}"));
        if i % 4 == 0 {
            driver
                .audit(&op)
                .unwrap_or_else(|f| panic!("{shape:?}: {f}"));
        }
        last = Some(op);
    }
    if let Some(op) = last {
        driver
            .audit(&op)
            .unwrap_or_else(|f| panic!("{shape:?}: {f}"));
    }
}

#[test]
fn what_the_fuzzer_found_stays_fixed() {
    // Issue 33: a node's cpu shrunk under its running pods (`NodeChange::Allocatable`)
    // leaves less than nothing free; the audit expected zero.
    replay(include_bytes!(
        "../../fuzz/seeds/scheduler_ops/found-resized-node-overcommitted.bin"
    ));
}

/// The scoring policies that keep per-node measures (issue 34): Stranding, FGD and
/// GangAware over the observed mix, each through 5,000 operations with the audit
/// (tracked measures against their recomputation included) every 100 and every
/// refusal checked, so every mutation point of the live cluster meets a tracked table.
#[test]
fn tracked_policies_keep_every_invariant() {
    use gangpack::{GangOptions, ScoringPolicy};
    for (i, policy) in [
        ScoringPolicy::stranding(),
        ScoringPolicy::fgd(),
        ScoringPolicy::gang_aware(),
    ]
    .into_iter()
    .enumerate()
    {
        let name = policy.name();
        let options = GangOptions {
            policy,
            ..GangOptions::default()
        };
        let mut driver = Driver::with_options(&shape(), limits(), options);
        let mut rng = SplitMix64::new(SEED + 100 + i as u64);
        driver
            .run(&mut rng, 5_000, 100)
            .unwrap_or_else(|f| panic!("{name}: {f}"));
        assert!(driver.stats().ops >= 5_000, "{name}");
    }
}
