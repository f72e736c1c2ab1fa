#![cfg(feature = "testing")]
//! The short soak (issue 18): a seeded sequence of 50,000 random operations on a small
//! cluster (`gangpack::testing::Driver`: pods, PodGroups, claims, slices, device and
//! node taints, DeviceTaintRules, cycles, clock advances, many of them deliberately
//! invalid), every refused operation checked to leave the scheduler unchanged, the
//! independent audit (`gangpack::testing::audit`) every 1,000 operations and at the
//! end. The long soak (1M operations on 1,000 nodes) is `scripts/soak.sh`.

use gangpack::testing::{ClusterShape, Driver, Limits, Source, SplitMix64, audit};

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

#[test]
fn fifty_thousand_operations_keep_every_invariant() {
    let mut driver = Driver::new(&shape(), limits());
    let mut rng = SplitMix64::new(SEED);
    if let Err(f) = driver.run(&mut rng, OPS, AUDIT_EVERY) {
        panic!("{f}");
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
    assert!(audit(driver.scheduler()).is_empty());
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
