//! gangpack's JSON model, as the WebAssembly `Scheduler.fromModel` decodes it (serde on
//! the core's model types) and builds a scheduler in the same order: never a panic; a
//! refused object leaves the scheduler usable, and a cycle's decisions validate.
#![no_main]

use gangpack::{
    Cluster, DeviceClass, DeviceTaintRule, GangOptions, Node, Pod, PodGroup, PriorityClass,
    ResourceClaim, ResourceSlice, Scheduler,
};
use libfuzzer_sys::fuzz_target;

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Model {
    nodes: Vec<Node>,
    classes: Vec<DeviceClass>,
    slices: Vec<ResourceSlice>,
    rules: Vec<DeviceTaintRule>,
    priority_classes: Vec<PriorityClass>,
    claims: Vec<ResourceClaim>,
    groups: Vec<PodGroup>,
    pods: Vec<Pod>,
}

fuzz_target!(|data: &[u8]| {
    let Ok(model) = serde_json::from_slice::<Model>(data) else {
        return;
    };
    let mut cluster = Cluster::new();
    for n in model.nodes {
        let _ = cluster.add_node(n);
    }
    for c in model.classes {
        let _ = cluster.put_class(c);
    }
    for s in model.slices {
        let _ = cluster.add_slice(s);
    }
    for r in model.rules {
        let _ = cluster.add_taint_rule(r);
    }
    let mut sched = Scheduler::new(cluster, GangOptions::default());
    for c in model.priority_classes {
        let _ = sched.put_priority_class(c);
    }
    for c in model.claims {
        let _ = sched.add_claim(c);
    }
    for g in model.groups {
        let _ = sched.add_group(g);
    }
    for p in model.pods {
        let _ = sched.add_pod(p);
    }
    let _ = sched.cycle();
});
