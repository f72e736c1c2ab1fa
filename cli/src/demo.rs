//! `gangpack demo`: a built-in cluster, loaded through the same path as real input.
//!
//! The demo's objects are built here as Kubernetes documents (`serde_json` values in
//! upstream shape), printed as multi-document YAML, and that text is read back with
//! `gangpack_k8s::load_str`, so the demo exercises the real adapter. `gangpack demo
//! --manifests` prints the same text.
//!
//! The cluster: 4 racks (`topology.kubernetes.io/rack`) x 8 nodes x 8 NVIDIA H100
//! (one NVSwitch domain per node, NUMA nodes and PCIe roots per GPU), three GPUs
//! tainted by their driver (ECC and Xid errors), two PriorityClasses.
//!
//! Running (bound pods, allocated claims): two 8 x 8-GPU training gangs filling racks
//! 1 and 2, a 4 x 8 and a 2 x 8 gang in rack 4, a 3 x 8 gang and eight low-priority
//! batch-embedding pods (4 GPUs each) in rack 3. Pending: a high-priority 2 x 8 serving
//! gang (no rack has two free healthy nodes: it preempts; at equal priority
//! workload-aware preemption keeps a PodGroup before individual pods, so four batch
//! pods go rather than the 2-pod ViT sweep gang), six high-priority chat pods (1 GPU), two more batch
//! pods, and a 4 x 8 training gang that stays pending (explained). Then one
//! GPU under the rack-2 gang fails (`--seed` picks which): the whole gang is evicted.

use std::fmt::Write as _;

use gangpack::{DeviceRef, DeviceTaint, DeviceTaintEffect, Unit};
use gangpack_k8s::Snapshot;
use gangpack_k8s::output::{self, TaintTarget};
use serde_json::{Value, json};

use crate::input::{self, Messages};
use crate::render::{Paint, Style};
use crate::{EXIT_OK, Failure, Options};

/// Racks in the demo cluster.
const RACKS: usize = 4;
/// Nodes per rack.
const NODES: usize = 8;
/// GPUs per node.
const GPUS: usize = 8;

const PRODUCT: &str = "NVIDIA H100 80GB HBM3";
const RACK_LABEL: &str = "topology.kubernetes.io/rack";
const TRAINING: &str = "ml-training";
const INFERENCE: &str = "inference";
/// The gang the demo explains.
pub(crate) const PENDING_GANG: &str = "ml-training/gpt-moe-pretrain";
/// The file name the demo's documents are loaded as.
pub(crate) const SOURCE_NAME: &str = "<demo>";

/// When the cluster objects were created.
const T_CLUSTER: &str = "2026-11-02T09:00:00Z";
/// When the running workloads were created.
const T_RUNNING: &str = "2026-11-04T18:00:00Z";
/// When the pending workloads were created (the latest timestamp: the demo's clock).
const T_PENDING: &str = "2026-11-05T08:00:00Z";

/// A small deterministic generator (SplitMix64) for the demo's random choices.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`.
    fn gpu_uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        format!(
            "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            a >> 32,
            (a >> 16) & 0xffff,
            a & 0xffff,
            b >> 48,
            b & 0xffff_ffff_ffff
        )
    }
}

fn node_name(rack: usize, node: usize) -> String {
    format!("gpu-r{rack}-n{node}")
}

/// The demo: its documents and the device that fails in the last act.
pub(crate) struct Demo {
    /// The documents, in the order they are printed.
    docs: Vec<(Option<&'static str>, Value)>,
    /// The GPU that fails.
    pub(crate) failing: DeviceRef,
}

/// A device taint the driver published in its slice.
fn driver_taint(rack: usize, node: usize, gpu: usize) -> Option<Value> {
    match (rack, node, gpu) {
        (3, 5, 6) => Some(json!({
            "key": "gpu.nvidia.com/ecc", "value": "uncorrectable", "effect": "NoExecute",
            "timeAdded": "2026-11-04T22:41:07Z",
        })),
        (4, 2, 1) => Some(json!({
            "key": "gpu.nvidia.com/ecc", "value": "correctable-threshold", "effect": "NoSchedule",
            "timeAdded": "2026-11-03T05:12:44Z",
        })),
        (4, 7, 3) => Some(json!({
            "key": "gpu.nvidia.com/xid", "value": "79", "effect": "NoExecute",
            "timeAdded": "2026-11-05T02:03:19Z",
        })),
        _ => None,
    }
}

fn cluster_docs(rng: &mut Rng, docs: &mut Vec<(Option<&'static str>, Value)>) {
    for ns in [TRAINING, INFERENCE] {
        docs.push((
            None,
            json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "creationTimestamp": T_CLUSTER,
                             "labels": {"kubernetes.io/metadata.name": ns}},
            }),
        ));
    }
    docs.push((
        Some("Two priorities: training and batch work may be preempted by online inference."),
        json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "training-low", "creationTimestamp": T_CLUSTER},
            "value": 1000, "preemptionPolicy": "PreemptLowerPriority", "globalDefault": false,
        }),
    ));
    docs.push((
        None,
        json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": "inference-high", "creationTimestamp": T_CLUSTER},
            "value": 100_000, "preemptionPolicy": "PreemptLowerPriority", "globalDefault": false,
        }),
    ));
    docs.push((
        Some("Every GPU of the NVIDIA DRA driver."),
        json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "gpu.nvidia.com", "creationTimestamp": T_CLUSTER},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == \"gpu.nvidia.com\""}}],
                     "extendedResourceName": "nvidia.com/gpu"},
        }),
    ));
    docs.push((
        Some("H100s only."),
        json!({
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "h100.nvidia.com", "creationTimestamp": T_CLUSTER},
            "spec": {"selectors": [{"cel": {"expression": format!(
                "device.driver == \"gpu.nvidia.com\" && \
                 device.attributes[\"gpu.nvidia.com\"].productName == \"{PRODUCT}\"")}}]},
        }),
    ));
    for rack in 1..=RACKS {
        for node in 1..=NODES {
            let name = node_name(rack, node);
            docs.push((
                ((rack, node) == (1, 1)).then_some("Nodes: four racks of eight HGX H100 nodes."),
                json!({
                    "apiVersion": "v1", "kind": "Node",
                    "metadata": {
                        "name": name, "creationTimestamp": T_CLUSTER,
                        "labels": {
                            "kubernetes.io/hostname": name,
                            "kubernetes.io/os": "linux",
                            "topology.kubernetes.io/zone": "us-central1-a",
                            RACK_LABEL: format!("rack-{rack}"),
                        },
                    },
                    "status": {"allocatable": {"cpu": "206", "memory": "1850Gi", "pods": "110"}},
                }),
            ));
        }
    }
    for rack in 1..=RACKS {
        for node in 1..=NODES {
            let name = node_name(rack, node);
            let devices: Vec<Value> = (0..GPUS)
                .map(|g| {
                    let mut d = json!({
                        "name": format!("gpu-{g}"),
                        "attributes": {
                            "type": {"string": "gpu"},
                            "productName": {"string": PRODUCT},
                            "architecture": {"string": "Hopper"},
                            "index": {"int": g},
                            "uuid": {"string": rng.gpu_uuid()},
                            "numaNode": {"int": g / 4},
                            "nvlinkDomain": {"string": format!("{name}-nvswitch")},
                            "resource.kubernetes.io/pcieRoot":
                                {"string": format!("pci0000:{:02x}", 0x10 * (g / 2 + 1))},
                        },
                        "capacity": {"memory": {"value": "80Gi"}},
                    });
                    if let Some(t) = driver_taint(rack, node, g) {
                        d["taints"] = json!([t]);
                    }
                    d
                })
                .collect();
            docs.push((
                ((rack, node) == (1, 1)).then_some(
                    "ResourceSlices: one pool per node. Three GPUs carry driver taints: \
                     gpu-r3-n5/gpu-6 and gpu-r4-n7/gpu-3 NoExecute, gpu-r4-n2/gpu-1 NoSchedule.",
                ),
                json!({
                    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": format!("{name}-gpu.nvidia.com"), "creationTimestamp": T_CLUSTER},
                    "spec": {
                        "driver": "gpu.nvidia.com", "nodeName": name,
                        "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                        "devices": devices,
                    },
                }),
            ));
        }
    }
}

/// A claim spec for `count` H100s (on one NUMA node when 4, one node's NVSwitch when 8).
fn gpu_claim_spec(count: usize) -> Value {
    let mut spec = json!({
        "devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "h100.nvidia.com", "allocationMode": "ExactCount", "count": count,
        }}]},
    });
    let attribute = match count {
        8 => Some("gpu.nvidia.com/nvlinkDomain"),
        2..=4 => Some("gpu.nvidia.com/numaNode"),
        _ => None,
    };
    if let Some(a) = attribute {
        spec["devices"]["constraints"] = json!([{"requests": ["gpus"], "matchAttribute": a}]);
    }
    spec
}

struct PodSpec<'a> {
    namespace: &'a str,
    name: String,
    group: Option<&'a str>,
    priority_class: &'a str,
    gpus: usize,
    created: &'a str,
    /// Bound: the node and the GPU indices its claim holds.
    bound: Option<(String, Vec<usize>)>,
}

fn priority_value(class: &str) -> i32 {
    if class == "inference-high" {
        100_000
    } else {
        1000
    }
}

/// A pod and, when bound, its allocated claim (a pending pod's claim comes from a
/// template).
fn pod_docs(p: &PodSpec<'_>, docs: &mut Vec<(Option<&'static str>, Value)>) {
    let cpu = (p.gpus * 12).to_string();
    let memory = format!("{}Gi", p.gpus * 100);
    let uid = format!("00000000-0000-4000-8000-{:012x}", fnv(&p.name));
    let claim_name = format!("{}-gpus", p.name);
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": p.name, "namespace": p.namespace, "uid": uid,
                     "creationTimestamp": p.created},
        "spec": {
            "priorityClassName": p.priority_class,
            "priority": priority_value(p.priority_class),
            "preemptionPolicy": "PreemptLowerPriority",
            "schedulerName": "default-scheduler",
            "containers": [{
                "name": "main",
                "image": if p.namespace == TRAINING { "nvcr.io/nvidia/pytorch:25.10-py3" }
                         else { "nvcr.io/nim/meta/llama-3.1-70b-instruct:1.8" },
                "resources": {"requests": {"cpu": cpu, "memory": memory},
                              "limits": {"memory": memory},
                              "claims": [{"name": "gpus"}]},
            }],
            "resourceClaims": [{"name": "gpus"}],
        },
        "status": {"phase": "Pending"},
    });
    if let Some(g) = p.group {
        pod["spec"]["schedulingGroup"] = json!({"podGroupName": g});
    }
    match &p.bound {
        None => {
            pod["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] =
                json!(format!("h100-x{}", p.gpus));
            docs.push((None, pod));
        }
        Some((node, gpus)) => {
            pod["spec"]["nodeName"] = json!(node);
            pod["spec"]["resourceClaims"][0]["resourceClaimName"] = json!(claim_name);
            pod["status"] = json!({"phase": "Running", "conditions": [
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": p.created}]});
            docs.push((None, pod));
            let results: Vec<Value> = gpus
                .iter()
                .map(|g| {
                    json!({"request": "gpus", "driver": "gpu.nvidia.com",
                                "pool": node, "device": format!("gpu-{g}")})
                })
                .collect();
            docs.push((
                None,
                json!({
                    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": claim_name, "namespace": p.namespace,
                                 "creationTimestamp": p.created,
                                 "finalizers": ["resource.kubernetes.io/delete-protection"]},
                    "spec": gpu_claim_spec(p.gpus),
                    "status": {
                        "allocation": {
                            "devices": {"results": results},
                            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                        },
                        "reservedFor": [{"resource": "pods", "name": p.name, "uid": uid}],
                    },
                }),
            ));
        }
    }
}

/// FNV-1a, for stable made-up uids.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3) & 0xffff_ffff_ffff
    })
}

/// A PodGroup document: a gang of `min` pods in one rack, evicted whole.
fn group_doc(namespace: &str, name: &str, min: usize, class: &str, created: &str) -> Value {
    json!({
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": created},
        "spec": {
            "schedulingPolicy": {"gang": {"minCount": min}},
            "schedulingConstraints": {"topology": [{"key": RACK_LABEL}]},
            "disruptionMode": {"all": {}},
            "priorityClassName": class,
            "priority": priority_value(class),
            "preemptionPolicy": "PreemptLowerPriority",
        },
    })
}

/// A gang: its PodGroup and `pods` pods of `gpus` GPUs; bound to `nodes` when given
/// (one pod per node, all its GPUs).
#[allow(clippy::too_many_arguments)]
fn gang(
    docs: &mut Vec<(Option<&'static str>, Value)>,
    comment: &'static str,
    namespace: &'static str,
    name: &'static str,
    class: &'static str,
    pods: usize,
    gpus: usize,
    nodes: Option<&[String]>,
) {
    let created = if nodes.is_some() {
        T_RUNNING
    } else {
        T_PENDING
    };
    docs.push((
        Some(comment),
        group_doc(namespace, name, pods, class, created),
    ));
    for i in 0..pods {
        let spec = PodSpec {
            namespace,
            name: format!("{name}-worker-{i}"),
            group: Some(name),
            priority_class: class,
            gpus,
            created,
            bound: nodes.map(|n| (n[i].clone(), (0..gpus).collect())),
        };
        pod_docs(&spec, docs);
    }
}

/// Builds the demo's documents (`seed` picks the GPU that fails and the GPU uuids).
pub(crate) fn build(seed: u64) -> Demo {
    let mut rng = Rng(seed);
    let mut docs = Vec::new();
    cluster_docs(&mut rng, &mut docs);

    for n in [1, 2, 4, 8] {
        let ns = if n == 1 { INFERENCE } else { TRAINING };
        docs.push((
            (n == 1).then_some(
                "ResourceClaimTemplates: each pod gets its own claim for n H100s \
                 (4 on one NUMA node, 8 on one NVSwitch board).",
            ),
            json!({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": format!("h100-x{n}"), "namespace": ns,
                             "creationTimestamp": T_CLUSTER},
                "spec": {"spec": gpu_claim_spec(n)},
            }),
        ));
    }
    // The serving gang and the batch pods live in the inference namespace: they need
    // the 4- and 8-GPU templates there too.
    for n in [4, 8] {
        docs.push((
            None,
            json!({
                "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": format!("h100-x{n}"), "namespace": INFERENCE,
                             "creationTimestamp": T_CLUSTER},
                "spec": {"spec": gpu_claim_spec(n)},
            }),
        ));
    }

    let rack = |r: usize, nodes: &[usize]| -> Vec<String> {
        nodes.iter().map(|&n| node_name(r, n)).collect()
    };
    gang(
        &mut docs,
        "Running: BERT pre-training fills rack-1 (8 pods x 8 GPUs, one rack, evicted whole).",
        TRAINING,
        "bert-large",
        "training-low",
        8,
        8,
        Some(&rack(1, &[1, 2, 3, 4, 5, 6, 7, 8])),
    );
    gang(
        &mut docs,
        "Running: Llama 70B pre-training fills rack-2. One of its GPUs fails at the end.",
        TRAINING,
        "llama-70b-pretrain",
        "training-low",
        8,
        8,
        Some(&rack(2, &[1, 2, 3, 4, 5, 6, 7, 8])),
    );
    gang(
        &mut docs,
        "Running: Mixtral fine-tuning, 4 x 8 GPUs in rack-4.",
        TRAINING,
        "mixtral-finetune",
        "training-low",
        4,
        8,
        Some(&rack(4, &[3, 4, 5, 6])),
    );
    gang(
        &mut docs,
        "Running: a ViT sweep, 2 x 8 GPUs in rack-4.",
        TRAINING,
        "vit-sweep",
        "training-low",
        2,
        8,
        Some(&rack(4, &[1, 8])),
    );
    for i in 0..8 {
        let node = node_name(3, 1 + i / 2);
        let gpus: Vec<usize> = (0..4).map(|g| g + 4 * (i % 2)).collect();
        if i == 0 {
            docs.push((
                Some(
                    "Running: batch embedding pods at low priority, 4 GPUs each, \
                     on gpu-r3-n1 .. gpu-r3-n4 (no PodGroup: each may be preempted alone).",
                ),
                Value::Null,
            ));
        }
        pod_docs(
            &PodSpec {
                namespace: INFERENCE,
                name: format!("embed-batch-{i}"),
                group: None,
                priority_class: "training-low",
                gpus: 4,
                created: T_RUNNING,
                bound: Some((node, gpus)),
            },
            &mut docs,
        );
    }
    // rack-3 nodes 6..8: a running 3 x 8 gang.
    gang(
        &mut docs,
        "Running: ResNet hyper-parameter sweep, 3 x 8 GPUs in rack-3.",
        TRAINING,
        "resnet-sweep",
        "training-low",
        3,
        8,
        Some(&rack(3, &[6, 7, 8])),
    );

    gang(
        &mut docs,
        "Pending: a high-priority serving gang (tensor parallel over 2 nodes, one rack). \
         No rack has two free untainted nodes: it preempts the cheapest lower-priority work.",
        INFERENCE,
        "llama-405b-serve",
        "inference-high",
        2,
        8,
        None,
    );
    for i in 0..6 {
        if i == 0 {
            docs.push((
                Some("Pending: high-priority chat servers, one GPU each."),
                Value::Null,
            ));
        }
        pod_docs(
            &PodSpec {
                namespace: INFERENCE,
                name: format!("chat-{i}"),
                group: None,
                priority_class: "inference-high",
                gpus: 1,
                created: T_PENDING,
                bound: None,
            },
            &mut docs,
        );
    }
    for i in 8..10 {
        if i == 8 {
            docs.push((
                Some("Pending: two more batch embedding pods at low priority."),
                Value::Null,
            ));
        }
        pod_docs(
            &PodSpec {
                namespace: INFERENCE,
                name: format!("embed-batch-{i}"),
                group: None,
                priority_class: "training-low",
                gpus: 4,
                created: T_PENDING,
                bound: None,
            },
            &mut docs,
        );
    }
    gang(
        &mut docs,
        "Pending: a 4 x 8-GPU training gang that must fit in one rack.",
        TRAINING,
        "gpt-moe-pretrain",
        "training-low",
        4,
        8,
        None,
    );

    let failing = DeviceRef::new(
        "gpu.nvidia.com",
        node_name(2, 1 + rng.below(NODES)),
        format!("gpu-{}", rng.below(GPUS)),
    );
    Demo { docs, failing }
}

impl Demo {
    /// The documents as multi-document YAML, with comments.
    pub(crate) fn yaml(&self) -> Result<String, Failure> {
        let mut out = String::from(
            "# gangpack demo cluster: `gangpack demo --manifests > demo.yaml`, then\n\
             # `gangpack plan -f demo.yaml`, `gangpack explain -f demo.yaml ml-training/gpt-moe-pretrain`.\n",
        );
        let mut pending_comment: Option<&str> = None;
        let mut first = true;
        for (comment, doc) in &self.docs {
            if doc.is_null() {
                pending_comment = *comment;
                continue;
            }
            if !first {
                out.push_str("---\n");
            }
            first = false;
            for c in comment.iter().chain(pending_comment.take().as_ref()) {
                for line in wrap(c, 86) {
                    let _ = writeln!(out, "# {line}");
                }
            }
            let text = serde_norway::to_string(doc)
                .map_err(|e| Failure::Io(format!("cannot print the demo's YAML: {e}")))?;
            out.push_str(&text);
        }
        Ok(out)
    }
}

/// Splits text into lines of at most `width` characters at spaces.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

fn heading(out: &mut String, style: Style, text: &str) {
    let _ = writeln!(out, "{}", style.paint(Paint::Bold, &format!("==> {text}")));
    out.push('\n');
}

/// Runs `gangpack demo`.
pub(crate) fn run(
    global: &Options,
    manifests: bool,
    style: Style,
    messages: &mut Messages,
) -> Result<crate::Outcome, Failure> {
    let demo = build(global.seed);
    let yaml = demo.yaml()?;
    if manifests {
        return Ok(crate::Outcome {
            stdout: yaml,
            code: EXIT_OK,
        });
    }
    let loaded =
        gangpack_k8s::load_str(&yaml, SOURCE_NAME).map_err(|e| input::input_failure(&e))?;
    let mut snapshot: Snapshot = input::build(global, loaded, messages)?;

    let mut out = String::new();
    let gpus = RACKS * NODES * GPUS;
    let _ = writeln!(
        out,
        "gangpack demo: {RACKS} racks x {NODES} nodes x {GPUS} {PRODUCT} ({gpus} GPUs); \
         3 GPUs tainted by their driver (ECC, Xid 79)."
    );
    let _ = writeln!(
        out,
        "Running, low priority: 5 training gangs, 8 batch pods. Pending: a serving gang and 6 \
         chat pods (high priority), 2 batch pods and a training gang (low)."
    );
    let _ = writeln!(
        out,
        "The manifests: `gangpack demo --manifests`. Every step below reads them as real input."
    );
    out.push('\n');

    heading(
        &mut out,
        style,
        "gangpack plan: one scheduling cycle (highest priority first, gangs whole or not at all)",
    );
    let plan = output::plan(&mut snapshot);
    out.push_str(&crate::plan::render(&plan, &snapshot, style));
    out.push('\n');

    heading(
        &mut out,
        style,
        &format!("gangpack explain {PENDING_GANG}: why it stays pending"),
    );
    out.push_str(&crate::explain::explain_unit(
        &snapshot.scheduler,
        &plan.report,
        &Unit::Group(PENDING_GANG.into()),
    ));
    out.push('\n');

    heading(
        &mut out,
        style,
        &format!(
            "gangpack taint --device {} --key gpu.nvidia.com/ecc --value uncorrectable: \
             the GPU fails",
            demo.failing
        ),
    );
    let target = TaintTarget::Device {
        device: demo.failing.clone(),
        taint: DeviceTaint::new(
            "gpu.nvidia.com/ecc",
            "uncorrectable",
            DeviceTaintEffect::NoExecute,
        ),
    };
    let taint_plan = output::taint(&mut snapshot, target)
        .map_err(|e| Failure::Io(format!("the demo's taint failed: {e}")))?;
    out.push_str(&crate::taint::render(&taint_plan, style));
    Ok(crate::Outcome {
        stdout: out,
        code: EXIT_OK,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_picks_a_gpu_of_rack_2() {
        for seed in 0..20 {
            let d = build(seed);
            assert!(d.failing.pool.starts_with("gpu-r2-n"), "{}", d.failing);
        }
        assert_eq!(build(7).failing, build(7).failing);
    }

    #[test]
    fn wraps_at_spaces() {
        assert_eq!(wrap("aa bb cc", 5), ["aa bb", "cc"]);
        assert_eq!(wrap("", 5), Vec::<String>::new());
    }
}
