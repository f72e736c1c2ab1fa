//! End to end on the example manifests: YAML in, one planning cycle, YAML out. Every
//! field gangpack does not own survives; allocation results are upstream's shape; and
//! the objects written, applied to the input and read back, plan to nothing new.

use gangpack_k8s::output::{self, Outcome};
use gangpack_k8s::{BuildOptions, Kind, Snapshot, load_paths, load_str};
use serde_json::Value;

const INPUTS: [&str; 4] = [
    "../examples/cluster",
    "../examples/running-job.yaml",
    "../examples/gang-rack.yaml",
    "../examples/claim-first-available.yaml",
];

fn snapshot_of(paths: &[&str]) -> Snapshot {
    let loaded = load_paths(paths).unwrap_or_else(|e| panic!("{e}"));
    Snapshot::build(loaded, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn id(v: &Value) -> (String, String, String) {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    (s("/kind"), s("/metadata/namespace"), s("/metadata/name"))
}

/// Condition types the scheduler and the eviction controllers own.
const OWNED_CONDITIONS: [&str; 3] = [
    "PodScheduled",
    "DisruptionTarget",
    "PodGroupInitiallyScheduled",
];

/// The object without the fields a scheduling cycle owns.
fn without_owned(mut v: Value) -> Value {
    let obj = v.as_object_mut().expect("an object");
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove("nodeName");
    }
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(f) = meta.get_mut("finalizers").and_then(Value::as_array_mut)
    {
        f.retain(|x| x != "resource.kubernetes.io/delete-protection");
        if f.is_empty() {
            meta.remove("finalizers");
        }
    }
    if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
        for owned in [
            "nominatedNodeName",
            "allocation",
            "reservedFor",
            "resourceClaimStatuses",
        ] {
            status.remove(owned);
        }
        if let Some(c) = status.get_mut("conditions").and_then(Value::as_array_mut) {
            c.retain(|c| !OWNED_CONDITIONS.contains(&c["type"].as_str().unwrap_or_default()));
            if c.is_empty() {
                status.remove("conditions");
            }
        }
        if status.is_empty() {
            obj.remove("status");
        }
    }
    v
}

#[test]
fn fields_gangpack_does_not_own_survive_a_plan() {
    let mut snap = snapshot_of(&INPUTS);
    let originals: Vec<(Kind, Value)> = snap
        .objects
        .iter()
        .map(|o| (o.kind, (*o.raw).clone()))
        .collect();
    let plan = output::plan(&mut snap);
    assert!(
        plan.rows.iter().any(|r| r.outcome == Outcome::Placed),
        "the examples place something: {:#?}",
        plan.rows
    );
    let mut compared = 0;
    for changed in &plan.changed {
        let Some((_, before)) = originals.iter().find(|(_, o)| id(o) == id(changed)) else {
            // A claim generated from a template: a new object.
            assert_eq!(changed["kind"], "ResourceClaim", "{changed:#}");
            continue;
        };
        compared += 1;
        assert_eq!(
            without_owned(changed.clone()),
            without_owned(before.clone()),
            "{:?} changed beyond the fields the scheduler owns",
            id(changed)
        );
    }
    assert!(compared >= 3, "{compared} objects compared");
    // Pods name their generated claims in `status.resourceClaimStatuses`, as the
    // resourceclaim controller records them.
    for g in &snap.generated {
        let (Some(entry), gangpack_k8s::Owner::Pod { namespace, name }) = (&g.entry, &g.owner)
        else {
            continue;
        };
        let pod = plan
            .changed
            .iter()
            .find(|v| id(v) == ("Pod".into(), namespace.clone(), name.clone()))
            .expect("the pod is written");
        let statuses = pod["status"]["resourceClaimStatuses"]
            .as_array()
            .expect("statuses");
        assert!(
            statuses
                .contains(&serde_json::json!({"name": entry, "resourceClaimName": g.claim.name})),
            "{statuses:?}"
        );
    }
}

#[test]
fn allocations_written_are_upstream_allocation_results() {
    let mut snap = snapshot_of(&INPUTS);
    let plan = output::plan(&mut snap);
    let mut seen = 0;
    for v in &plan.changed {
        if v["kind"] != "ResourceClaim" || v.pointer("/status/allocation").is_none() {
            continue;
        }
        seen += 1;
        let a = &v["status"]["allocation"];
        // Through the upstream type and back: nothing unknown, nothing lost.
        let typed: k8s_openapi::api::resource::v1::AllocationResult =
            serde_json::from_value(a.clone()).unwrap_or_else(|e| panic!("{e}: {a:#}"));
        assert_eq!(&serde_json::to_value(&typed).unwrap(), a);
        for r in a["devices"]["results"].as_array().expect("results") {
            for field in ["request", "driver", "pool", "device"] {
                assert!(r[field].is_string(), "{field} in {r:#}");
            }
        }
        let claim: k8s_openapi::api::resource::v1::ResourceClaim =
            serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("{e}: {v:#}"));
        assert!(
            !claim
                .status
                .unwrap()
                .reserved_for
                .unwrap_or_default()
                .is_empty()
        );
    }
    assert!(seen > 0, "no allocation written");
}

#[test]
fn the_objects_written_applied_and_read_back_plan_to_nothing_new() {
    let mut snap = snapshot_of(&INPUTS);
    let first = output::plan(&mut snap);
    // Apply: each changed object replaces the input's, new ones are added.
    let mut applied: Vec<Value> = snap.objects.iter().map(|o| (*o.raw).clone()).collect();
    for c in &first.changed {
        match applied.iter_mut().find(|o| id(o) == id(c)) {
            Some(o) => *o = c.clone(),
            None => applied.push(c.clone()),
        }
    }
    // Written as YAML (as `gangpack plan -o yaml` prints it) and read back.
    let yaml = serde_norway::to_string(&output::list(applied)).unwrap();
    let loaded = load_str(&yaml, "applied.yaml").unwrap_or_else(|e| panic!("{e}"));
    let mut again =
        Snapshot::build(loaded, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let second = output::plan(&mut again);
    // What was placed is running now: only what stayed pending is tried again, and
    // it stays pending for the same reason, so nothing is written.
    let pending: Vec<(&str, &str)> = first
        .rows
        .iter()
        .filter(|r| r.outcome == Outcome::Pending)
        .map(|r| (r.name.as_str(), r.reason.as_str()))
        .collect();
    let retried: Vec<(&str, &str)> = second
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.reason.as_str()))
        .collect();
    assert_eq!(retried, pending);
    assert!(
        second.changed.is_empty(),
        "{:#?}",
        second.changed.iter().map(id).collect::<Vec<_>>()
    );
}

/// A plan that preempts, folded back into the objects as a session does it (the
/// WebAssembly `Scheduler.cycle` and `toManifests`): the victims, which the scheduler
/// holds pending again, are written pending — no `spec.nodeName`, no claim reserved
/// for them — so the state reads back. (Before, a victim was written still bound to
/// its node while its claim was released: a running pod without its allocation, which
/// the loader refuses.)
#[test]
fn preemption_victims_fold_back_as_pending_pods_that_read_back() {
    let mut snap = snapshot_of(&[
        "../cli/tests/fixtures/preemption/cluster.yaml",
        "../cli/tests/fixtures/preemption/fewest-pods.yaml",
    ]);
    let mut plan = output::plan(&mut snap);
    let victims: Vec<String> = plan
        .report
        .units
        .iter()
        .flat_map(|(_, r)| match r {
            gangpack::UnitResult::Preempted(p) => p.victims.clone(),
            _ => Vec::new(),
        })
        .flat_map(|v| v.pods)
        .collect();
    assert!(!victims.is_empty(), "the fixture preempts");
    snap.fold_back(std::mem::take(&mut plan.changed));
    snap.fold_deletions();
    let docs: Vec<Value> = snap
        .objects
        .iter()
        .map(|o| (*o.raw).clone())
        .chain(snap.generated.iter().map(|g| g.raw.clone()))
        .collect();
    for d in &docs {
        let name = format!(
            "{}/{}",
            d.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .unwrap_or("default"),
            d.pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
        );
        match d["kind"].as_str() {
            Some("Pod") if victims.contains(&name) => {
                assert!(
                    d.pointer("/spec/nodeName").is_none(),
                    "{name} still names a node"
                );
                assert_eq!(
                    d.pointer("/status/phase"),
                    Some(&Value::from("Pending")),
                    "{name}"
                );
            }
            Some("ResourceClaim") => {
                let reserved = d.pointer("/status/reservedFor").and_then(Value::as_array);
                for r in reserved.into_iter().flatten() {
                    let pod = r["name"].as_str().unwrap_or_default();
                    assert!(
                        !victims.iter().any(|v| v.rsplit('/').next() == Some(pod)),
                        "{name} is still reserved for victim {pod}"
                    );
                }
            }
            _ => {}
        }
    }
    let yaml = serde_norway::to_string(&output::list(docs)).unwrap();
    let loaded = load_str(&yaml, "state.yaml").unwrap_or_else(|e| panic!("{e}"));
    let again = Snapshot::build(loaded, &BuildOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    for v in &victims {
        let pod = again
            .scheduler
            .pod(v)
            .unwrap_or_else(|| panic!("{v} read back"));
        assert_eq!(pod.node_name, None, "{v} reads back pending");
    }
}
