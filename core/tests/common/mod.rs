//! Helpers shared by the integration tests.
#![allow(dead_code)]

use gangpack::{
    AllocationMode, ClaimSource, Cluster, Device, DeviceAllocation, DeviceAttribute, DeviceClass,
    DeviceRef, DeviceRequest, DeviceTaint, DeviceTaintEffect, DeviceToleration, ExactDeviceRequest,
    Node, Pod, PodResourceClaim, Quantity, ResourceClaim, ResourceSlice, Time,
};
use std::fmt::Write;

pub(crate) const DRIVER: &str = "gpu.example.com";

/// A node-local slice `<node>-gpus` in pool `<node>` with `n` devices `gpu-0..`.
pub(crate) fn gpus(node: &str, n: usize) -> ResourceSlice {
    let mut s = ResourceSlice::node_local(format!("{node}-gpus"), DRIVER, node, node);
    for g in 0..n {
        s.devices.push(Device::new(format!("gpu-{g}")));
    }
    s
}

/// A cluster with DeviceClass `gpu` (every device of [`DRIVER`]) and nodes
/// `(name, rack, gpus)`: label `rack`, `cpu` CPUs, room for 110 pods, and `gpus` H100s
/// (attribute `model`) in a node-local slice (none when `gpus` is 0).
pub(crate) fn rack_cluster(nodes: &[(&str, &str, usize)], cpu: i64) -> Cluster {
    let mut c = Cluster::new();
    c.put_class(DeviceClass::with_cel(
        "gpu",
        format!("device.driver == \"{DRIVER}\""),
    ))
    .unwrap();
    for (name, rack, n) in nodes {
        c.add_node(
            Node::new(*name)
                .with_label("rack", *rack)
                .with_allocatable("cpu", Quantity::from_int(cpu))
                .with_allocatable("pods", Quantity::from_int(110)),
        )
        .unwrap();
        if *n > 0 {
            let mut s = gpus(name, *n);
            for d in &mut s.devices {
                d.attributes
                    .insert("model".into(), DeviceAttribute::String("H100".into()));
            }
            c.add_slice(s).unwrap();
        }
    }
    c
}

pub(crate) fn dref(pool: &str, device: &str) -> DeviceRef {
    DeviceRef::new(DRIVER, pool, device)
}

pub(crate) fn taint(key: &str, value: &str, effect: DeviceTaintEffect, at: i64) -> DeviceTaint {
    DeviceTaint {
        key: key.into(),
        value: value.into(),
        effect,
        time_added: Some(Time(at)),
    }
}

pub(crate) fn holder(consumer: &str, tolerations: Vec<DeviceToleration>) -> DeviceAllocation {
    DeviceAllocation::new(consumer, tolerations)
}

pub(crate) fn node(name: &str, rack: &str) -> Node {
    Node::new(name).with_label("rack", rack)
}

/// Everything observable about a cluster, as text: two clusters that print the same
/// are the same to every caller.
pub(crate) fn observe(c: &Cluster) -> String {
    let mut out = String::new();
    for n in c.nodes() {
        let id = c.node_id(&n.name).unwrap();
        writeln!(out, "free resources {:?}", c.node_free_resources(&n.name)).unwrap();
        writeln!(
            out,
            "node {n:?} counts {:?} devices {:?}",
            c.node_counts(id),
            c.node_devices(id)
        )
        .unwrap();
    }
    for s in c.slices() {
        writeln!(out, "slice {s:?}").unwrap();
    }
    for p in c.pools() {
        writeln!(out, "pool {p:?}").unwrap();
    }
    for r in c.taint_rules() {
        writeln!(out, "rule {r:?}").unwrap();
    }
    for cl in c.classes() {
        writeln!(out, "class {cl:?}").unwrap();
    }
    writeln!(out, "usable {:?}", c.usable_devices()).unwrap();
    writeln!(out, "free {:?}", c.free_devices()).unwrap();
    writeln!(out, "tainted {:?}", c.tainted_devices()).unwrap();
    writeln!(out, "shared {:?}", c.shared_devices()).unwrap();
    for id in c.usable_devices().iter() {
        let v = c.device(id).unwrap();
        writeln!(
            out,
            "device {} {:?} {:?}",
            v.device_ref(),
            c.device_taints(id),
            c.allocations(&v.device_ref())
        )
        .unwrap();
    }
    for (rack, counts) in c.domains("rack") {
        writeln!(out, "rack {rack} {counts:?}").unwrap();
    }
    writeln!(out, "evictions {:?}", c.pending_evictions()).unwrap();
    out
}

/// Pod `ns/<name>` with one claim `<name>-gpus` for `gpus` devices of class `gpu`.
pub(crate) fn gpu_pod(name: &str, gpus: u32) -> (Pod, ResourceClaim) {
    let mut pod = Pod::new("ns", name);
    let mut claim = ResourceClaim::new("ns", format!("{name}-gpus"));
    claim.spec.requests.push(DeviceRequest::exactly(
        "gpus",
        ExactDeviceRequest::new("gpu").with_mode(AllocationMode::ExactCount(gpus)),
    ));
    pod.resource_claims.push(PodResourceClaim {
        name: "gpus".into(),
        source: ClaimSource::ClaimName(claim.name.clone()),
    });
    (pod, claim)
}
