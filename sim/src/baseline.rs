//! The paper's baselines, re-implemented from its description: they choose the node
//! themselves, from a mirror of what is free, and the engine then places the pod on
//! that node (a `kubernetes.io/hostname` node selector), allocating its GPUs as it
//! always does. Only the choice of node is theirs.
//!
//! - **Random**: a node chosen uniformly among the nodes where the task fits.
//! - **DotProd** (after Tetris's alignment score): the node whose free resources,
//!   each as a share of the node's capacity, have the largest dot product with the
//!   task's requests as shares of the same capacity — CPU, memory and GPU.

use std::collections::BTreeMap;

use gangpack::PlacementDecision;

use crate::protocol::Rng;
use crate::trace::{NodeRow, PodRow};

/// Which baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Baseline {
    /// Uniform among feasible nodes.
    Random,
    /// The largest dot product of normalised free resources and requests.
    DotProd,
}

/// What is free on each node, as the baselines see it.
#[derive(Clone, Debug)]
pub struct Mirror {
    nodes: Vec<NodeRow>,
    index: BTreeMap<String, usize>,
    cpu: Vec<u64>,
    mem: Vec<u64>,
    /// Free milli-GPU of each GPU of each node.
    gpus: Vec<Vec<u32>>,
    /// Per node, how often it changed (so policies can keep what they computed for it).
    versions: Vec<u64>,
}

impl Mirror {
    /// Everything free.
    pub fn new(nodes: &[NodeRow]) -> Mirror {
        Mirror {
            index: nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.clone(), i))
                .collect(),
            cpu: nodes.iter().map(|n| n.cpu_milli).collect(),
            mem: nodes.iter().map(|n| n.memory_mib).collect(),
            gpus: nodes.iter().map(|n| vec![1000; n.gpus as usize]).collect(),
            versions: vec![0; nodes.len()],
            nodes: nodes.to_vec(),
        }
    }

    /// Whether `pod` fits node `n` now.
    pub fn fits(&self, n: usize, pod: &PodRow) -> bool {
        if self.cpu[n] < pod.cpu_milli || self.mem[n] < pod.memory_mib {
            return false;
        }
        if pod.num_gpu == 0 {
            return true;
        }
        if !pod.gpu_spec.is_empty() && !pod.gpu_spec.contains(&self.nodes[n].model) {
            return false;
        }
        if pod.gpu_milli < 1000 {
            self.gpus[n].iter().any(|&f| f >= pod.gpu_milli)
        } else {
            self.gpus[n].iter().filter(|&&f| f == 1000).count() >= pod.num_gpu as usize
        }
    }

    /// The node `baseline` picks for `pod`, if any fits.
    pub fn choose(&self, baseline: Baseline, pod: &PodRow, rng: &mut Rng) -> Option<usize> {
        let feasible: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| self.fits(n, pod))
            .collect();
        if feasible.is_empty() {
            return None;
        }
        match baseline {
            Baseline::Random => Some(feasible[rng.below(feasible.len())]),
            Baseline::DotProd => {
                let mut best = feasible[0];
                let mut best_score = f64::NEG_INFINITY;
                for &n in &feasible {
                    let score = self.dot(n, pod);
                    if score > best_score {
                        best = n;
                        best_score = score;
                    }
                }
                Some(best)
            }
        }
    }

    // Shares of a node's capacity: small integers, exact in f64.
    #[allow(clippy::cast_precision_loss)]
    fn dot(&self, n: usize, pod: &PodRow) -> f64 {
        let node = &self.nodes[n];
        let share = |v: u64, cap: u64| if cap == 0 { 0.0 } else { v as f64 / cap as f64 };
        let gpu_cap = u64::from(node.gpus) * 1000;
        let gpu_free: u64 = self.gpus[n].iter().map(|&f| u64::from(f)).sum();
        share(pod.cpu_milli, node.cpu_milli) * share(self.cpu[n], node.cpu_milli)
            + share(pod.memory_mib, node.memory_mib) * share(self.mem[n], node.memory_mib)
            + share(pod.gpu_demand_milli(), gpu_cap) * share(gpu_free, gpu_cap)
    }

    /// Records what the engine placed: the pod's CPU and memory on its node, and on
    /// each GPU it got, its share (or the whole GPU).
    pub fn commit(&mut self, pod: &PodRow, decision: &PlacementDecision) {
        self.apply(pod, decision, false);
    }

    /// Gives back what [`Mirror::commit`] recorded for the same pod and decision (the
    /// pod left).
    pub fn release(&mut self, pod: &PodRow, decision: &PlacementDecision) {
        self.apply(pod, decision, true);
    }

    fn apply(&mut self, pod: &PodRow, decision: &PlacementDecision, back: bool) {
        let take = if pod.gpu_milli < 1000 {
            pod.gpu_milli
        } else {
            1000
        };
        for b in &decision.bindings {
            let Some(&n) = self.index.get(&b.node) else {
                continue;
            };
            self.versions[n] += 1;
            if back {
                self.cpu[n] = (self.cpu[n] + pod.cpu_milli).min(self.nodes[n].cpu_milli);
                self.mem[n] = (self.mem[n] + pod.memory_mib).min(self.nodes[n].memory_mib);
            } else {
                self.cpu[n] = self.cpu[n].saturating_sub(pod.cpu_milli);
                self.mem[n] = self.mem[n].saturating_sub(pod.memory_mib);
            }
            for c in &b.claims {
                for d in &c.result.devices {
                    let gpu = d
                        .device
                        .strip_prefix("gpu-")
                        .and_then(|g| g.parse::<usize>().ok());
                    if let Some(f) = gpu.and_then(|g| self.gpus[n].get_mut(g)) {
                        *f = if back {
                            (*f + take).min(1000)
                        } else {
                            f.saturating_sub(take)
                        };
                    }
                }
            }
        }
    }

    /// Nodes mirrored.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Node `n` now: its GPU model, free CPU (milli), free memory (MiB), and the free
    /// milli-GPU of each GPU.
    pub fn state(&self, n: usize) -> (&str, u64, u64, &[u32]) {
        (
            &self.nodes[n].model,
            self.cpu[n],
            self.mem[n],
            &self.gpus[n],
        )
    }

    /// How often node `n` changed: a value computed from its state stays good while
    /// this does not move.
    pub fn version(&self, n: usize) -> u64 {
        self.versions[n]
    }

    /// The name of node `n`.
    pub fn name(&self, n: usize) -> &str {
        &self.nodes[n].name
    }
}
