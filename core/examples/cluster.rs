//! The built-in example: a small GPU cluster with a failing GPU, a DeviceTaintRule
//! and a running claim; the answer to "which GPUs could this request use?"; and a
//! ResourceClaim for four H100s on one NUMA node, tried on three nodes; then two gangs
//! that must each fit in one rack: one is placed, the other is explained.
//!
//! Run it with `cargo run -p gangpack --example cluster`.

use gangpack::{
    AllocationMode, AllocationOutcome, AllocatorOptions, Cluster, ConstraintKind, Device,
    DeviceAllocation, DeviceAttribute, DeviceClass, DeviceConstraint, DeviceFilter, DeviceRef,
    DeviceRequest, DeviceTaint, DeviceTaintEffect, DeviceTaintRule, DeviceTaintSelector,
    DeviceToleration, DeviceTolerationOperator, ExactDeviceRequest, Node, Quantity, ResourceClaim,
    ResourceSlice, Time, Unsatisfiable,
};
use gangpack::{
    ClaimSource, GangOptions, Pod, PodGroup, PodResourceClaim, SchedulingPolicy, TopologyConstraint,
};

const DRIVER: &str = "gpu.nvidia.com";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut cluster = Cluster::new();
    cluster.track_topology_key("topology.kubernetes.io/rack");

    // Four nodes in two racks, eight GPUs each; rack r2 has A100s.
    for (n, rack, product) in [
        (1, "r1", "H100"),
        (2, "r1", "H100"),
        (3, "r2", "A100"),
        (4, "r2", "A100"),
    ] {
        let node = format!("gpu-node-{n}");
        cluster.add_node(
            Node::new(&node)
                .with_label("topology.kubernetes.io/rack", rack)
                .with_allocatable("cpu", Quantity::parse("96")?)
                .with_allocatable("memory", Quantity::parse("1536Gi")?),
        )?;
        let mut slice = ResourceSlice::node_local(format!("{node}-{DRIVER}"), DRIVER, &node, &node);
        for g in 0..8 {
            let mut device = Device::new(format!("gpu-{g}"))
                .with_attribute(
                    "productName",
                    DeviceAttribute::String(format!("NVIDIA {product}")),
                )
                .with_attribute("numaNode", DeviceAttribute::Int(g / 4))
                .with_capacity(
                    "memory",
                    Quantity::parse(if product == "H100" { "80Gi" } else { "40Gi" })?,
                );
            if n == 2 && g == 5 {
                // The driver saw uncorrectable ECC errors on this GPU.
                device = device.with_taint(DeviceTaint {
                    key: "gpu.nvidia.com/ecc".into(),
                    value: "uncorrectable".into(),
                    effect: DeviceTaintEffect::NoExecute,
                    time_added: Some(Time(1_700_000_000)),
                });
            }
            slice.devices.push(device);
        }
        cluster.add_slice(slice)?;
    }

    // A training job holds two GPUs on gpu-node-1.
    for g in [0, 1] {
        cluster.allocate(
            &DeviceRef::new(DRIVER, "gpu-node-1", format!("gpu-{g}")),
            DeviceAllocation::new("ml/train-0-gpus", vec![]),
        )?;
    }

    // An operator drains gpu-node-1/gpu-1 for maintenance with a DeviceTaintRule.
    let report = cluster.add_taint_rule(DeviceTaintRule {
        name: "maintenance-node-1-gpu-1".into(),
        selector: Some(DeviceTaintSelector {
            driver: Some(DRIVER.into()),
            pool: Some("gpu-node-1".into()),
            device: Some("gpu-1".into()),
        }),
        taint: DeviceTaint {
            key: "example.com/maintenance".into(),
            value: String::new(),
            effect: DeviceTaintEffect::NoExecute,
            time_added: Some(Time(1_700_000_600)),
        },
    })?;

    println!(
        "cluster: {} nodes, {} GPUs",
        cluster.nodes().count(),
        cluster.device_count()
    );
    for (rack, counts) in cluster.domains("topology.kubernetes.io/rack") {
        println!(
            "  rack {rack}: {} nodes, {} GPUs, {} free, {} free and untainted",
            counts.nodes, counts.devices, counts.free, counts.free_untainted
        );
    }
    println!(
        "\nDeviceTaintRule maintenance-node-1-gpu-1 affects {} device(s):",
        report.devices_affected
    );
    for e in &report.evictions {
        println!(
            "  evict pods of claim {} (device {}, taint {}) {}",
            e.consumer,
            e.device,
            e.taint,
            match e.evict_at {
                Some(t) => format!("at t={}", t.0),
                None => "now".into(),
            }
        );
    }

    let h100 = cluster.select(&DeviceFilter::all().driver(DRIVER).attribute(
        format!("{DRIVER}/productName"),
        DeviceAttribute::String("NVIDIA H100".into()),
    ));
    let plain = cluster.usable(&h100, &[]);
    let tolerant = [DeviceToleration {
        key: "gpu.nvidia.com/ecc".into(),
        operator: DeviceTolerationOperator::Exists,
        value: String::new(),
        effect: None,
        toleration_seconds: None,
    }];
    let with_toleration = cluster.usable(&h100, &tolerant);

    println!("\nrequest: devices of driver gpu.nvidia.com with productName == \"NVIDIA H100\"");
    println!(
        "  {} H100s published, {} usable without tolerations:",
        h100.len(),
        plain.len()
    );
    for id in plain.iter() {
        let d = cluster.device(id).expect("listed device");
        println!("    {} on {}", d.device_ref(), d.node.unwrap_or("-"));
    }
    println!(
        "  tolerating gpu.nvidia.com/ecc (Exists) adds {} more: {}",
        with_toleration.len() - plain.len(),
        with_toleration
            .iter()
            .filter(|d| !plain.contains(*d))
            .map(|d| cluster
                .device(d)
                .expect("listed device")
                .device_ref()
                .to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );

    // A ResourceClaim: four H100s on one NUMA node, allocated on each node in turn.
    cluster.put_class(DeviceClass::with_cel(
        "h100.nvidia.com",
        "device.driver == \"gpu.nvidia.com\" && \
         device.attributes[\"gpu.nvidia.com\"].productName.startsWith(\"NVIDIA H100\")",
    ))?;
    let mut claim = ResourceClaim::new("ml", "train-1-gpus");
    claim.spec.requests.push(DeviceRequest::exactly(
        "gpus",
        ExactDeviceRequest::new("h100.nvidia.com").with_mode(AllocationMode::ExactCount(4)),
    ));
    claim.spec.constraints.push(DeviceConstraint {
        requests: vec![],
        kind: ConstraintKind::MatchAttribute("gpu.nvidia.com/numaNode".into()),
    });
    println!(
        "
claim ml/train-1-gpus: 4 x class h100.nvidia.com, matchAttribute numaNode"
    );
    let prepared = cluster.prepare_claims(std::slice::from_ref(&claim))?;
    for node in ["gpu-node-1", "gpu-node-2", "gpu-node-3"] {
        match cluster.allocate_prepared(
            node,
            &prepared,
            &std::collections::BTreeMap::new(),
            &AllocatorOptions::default(),
        )? {
            AllocationOutcome::Allocated(results) => {
                let devices: Vec<&str> = results[0]
                    .devices
                    .iter()
                    .map(|d| d.device.as_str())
                    .collect();
                println!("  {node}: allocated {}", devices.join(", "));
            }
            AllocationOutcome::Unsatisfiable(why) => println!("  {node}: {}", describe(&why)),
            AllocationOutcome::BudgetExhausted { steps } => {
                println!("  {node}: gave up after {steps} steps");
            }
        }
    }

    // Gangs: two pods placed all together or not at all, in one rack.
    for (name, gpus) in [("train-2", 4), ("train-3", 8)] {
        let mut group = PodGroup::new("ml", name, SchedulingPolicy::Gang { min_count: 2 });
        group
            .topology
            .push(TopologyConstraint::new("topology.kubernetes.io/rack"));
        let mut pods = Vec::new();
        let mut claims = Vec::new();
        for i in 0..2 {
            let mut pod = Pod::new("ml", format!("{name}-worker-{i}"));
            pod.scheduling_group = Some(name.into());
            pod.requests.insert("cpu".into(), Quantity::parse("8")?);
            let mut claim = ResourceClaim::new("ml", format!("{name}-worker-{i}-gpus"));
            claim.spec.requests.push(DeviceRequest::exactly(
                "gpus",
                ExactDeviceRequest::new("h100.nvidia.com")
                    .with_mode(AllocationMode::ExactCount(gpus)),
            ));
            pod.resource_claims.push(PodResourceClaim {
                name: "gpus".into(),
                source: ClaimSource::ClaimName(claim.name.clone()),
            });
            pods.push(pod);
            claims.push(claim);
        }
        println!("\nPodGroup ml/{name}: 2 pods x {gpus} H100, all in one rack");
        let explanation =
            cluster.explain_gang(Some(&group), &pods, &claims, &GangOptions::default())?;
        if let Some(decision) = &explanation.decision {
            for b in &decision.bindings {
                let devices: Vec<&str> = b
                    .claims
                    .iter()
                    .flat_map(|c| c.result.devices.iter().map(|d| d.device.as_str()))
                    .collect();
                println!("  {} -> {}: {}", b.pod, b.node, devices.join(", "));
            }
        } else {
            for line in explanation.to_string().lines() {
                println!("  {line}");
            }
        }
    }
    Ok(())
}

fn describe(why: &Unsatisfiable) -> String {
    match why {
        Unsatisfiable::NotEnoughDevices(s) => format!(
            "request {} needs {}, {} usable ({} of {} reachable removed by the class, {} by taints, {} allocated)",
            s.request,
            s.required,
            s.usable,
            s.funnel.class,
            s.funnel.reachable,
            s.funnel.taints,
            s.funnel.allocated
        ),
        Unsatisfiable::NoCombination { steps, .. } => {
            format!("enough devices, but no combination satisfies the constraints ({steps} steps)")
        }
        Unsatisfiable::NodeResources { shortfalls, .. } => {
            format!("node resources short: {shortfalls:?}")
        }
    }
}
