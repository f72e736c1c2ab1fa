//! A pod list's typical shapes, for the engine's Stranding and FGD policies: its GPU
//! tasks grouped by CPU, memory, GPU count, share and model list, each weighted by how
//! many tasks have it (CPU-only tasks change every node's measure alike and are left
//! out, as FGD leaves them out). The shapes are listed in that key's order, so the
//! engine sums them in the order the FGD paper's simulator-derived figures were first
//! computed in.

use std::collections::BTreeMap;

use gangpack::{Quantity, ShapeMix, TypicalShape};

use crate::cluster;
use crate::trace::PodRow;

/// The typical shapes of `pods`, as the engine sees each task ([`cluster::pod`]).
pub fn typical(pods: &[PodRow]) -> ShapeMix {
    let mut counts: BTreeMap<(u64, u64, u32, u32, &[String]), u32> = BTreeMap::new();
    for p in pods.iter().filter(|p| p.num_gpu > 0) {
        let key = (
            p.cpu_milli,
            p.memory_mib,
            p.num_gpu,
            p.gpu_milli,
            p.gpu_spec.as_slice(),
        );
        *counts.entry(key).or_default() += 1;
    }
    let shapes = counts
        .into_iter()
        .map(|((cpu_milli, memory_mib, num_gpu, gpu_milli, spec), n)| {
            let row = PodRow {
                name: String::new(),
                cpu_milli,
                memory_mib,
                num_gpu,
                gpu_milli,
                gpu_spec: spec.to_vec(),
                times: None,
            };
            let pod = cluster::task_pod(&row, "shape");
            let claim = cluster::task_claim(&row, "shape");
            let request = claim.as_ref().and_then(|c| match &c.spec.requests[0].kind {
                gangpack::DeviceRequestKind::Exactly(e) => Some(e.clone()),
                gangpack::DeviceRequestKind::FirstAvailable(_) => None,
            });
            let request = request.expect("a GPU task has one exact request");
            TypicalShape {
                weight: n,
                cpu: pod.requests.get("cpu").copied().unwrap_or(Quantity::ZERO),
                memory: pod
                    .requests
                    .get("memory")
                    .copied()
                    .unwrap_or(Quantity::ZERO),
                count: num_gpu,
                capacity: request.capacity,
                selectors: request.selectors,
                ..TypicalShape::new(cluster::CLASS)
            }
        })
        .collect();
    ShapeMix { shapes }
}
