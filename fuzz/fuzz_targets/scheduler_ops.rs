//! Operation sequences against the `Scheduler`: the first bytes shape a small cluster
//! (1–8 nodes, 0–3 GPUs each, a shared GPU or not), the rest decode to operations
//! (`gangpack::testing::Op`: pods, PodGroups, claims, slices, device and node taints,
//! DeviceTaintRules, cycles, clock advances, and a live cluster's changes — nodes
//! joining, relabelled, cordoned, resized and leaving with their pods, DeviceClasses
//! changed and removed, pods bound and claims allocated by another scheduler, a gang's
//! `minCount` changed; dangling references, duplicates and removals of absent objects
//! among them). After every operation: a refused one left
//! the scheduler exactly as it was. Every 4 operations and after the last: the
//! independent audit (index recount, the scheduler's own views, the validator on the
//! whole state, the eviction schedule) finds nothing. Any panic or finding is a crash.
#![no_main]

use gangpack::testing::{ByteSource, ClusterShape, Driver, Limits, Source};
use libfuzzer_sys::fuzz_target;

/// Operations per input at most.
const MAX_OPS: usize = 96;
/// Audit every this many operations and after the last (an audit recounts and
/// revalidates the whole state; what it finds persists, so little is missed).
const AUDIT_EVERY: usize = 4;

fuzz_target!(|data: &[u8]| {
    let mut src = ByteSource::new(data);
    let shape = ClusterShape::draw(&mut src);
    let mut driver = Driver::new(&shape, Limits::default());
    let mut last = None;
    for i in 1..=MAX_OPS {
        if src.is_exhausted() {
            break;
        }
        let op = driver.draw(&mut src);
        if let Err(f) = driver.step(&op) {
            panic!("{shape:?}: {f}");
        }
        if i % AUDIT_EVERY == 0
            && let Err(f) = driver.audit(&op)
        {
            panic!("{shape:?}: {f}");
        }
        last = Some(op);
    }
    if let Some(op) = last
        && let Err(f) = driver.audit(&op)
    {
        panic!("{shape:?}: {f}");
    }
});
