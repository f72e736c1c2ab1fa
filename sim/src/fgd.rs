//! FGD (Fragmentation Gradient Descent, Weng et al., USENIX ATC'23) as a baseline,
//! re-implemented from the paper and the published simulator's scoring, so it runs on
//! the same arrivals as every other policy here.
//!
//! - **Typical tasks**: the GPU tasks of the pod list by shape (CPU, GPU count, milli-GPU
//!   per GPU, allowed models) with their frequencies. Memory is not part of a shape:
//!   FGD's node state is CPU and GPU only.
//! - **A node's fragmentation** is, over the typical tasks by frequency: all of its free
//!   milli-GPU when the task cannot run there (model not allowed, too little CPU, or not
//!   enough GPUs with the share free); otherwise the free milli-GPU of the GPUs each too
//!   small for the task's per-GPU share.
//! - **The score** of a node is `⌊100 · σ((before − after) / 1000)⌋`, σ the logistic
//!   function, as the simulator's scheduler plugin computes it; for a share the best GPU
//!   of the node decides (the first best), for whole GPUs the first wholly free ones.
//!   The highest score wins and ties are broken uniformly at random, as the Kubernetes
//!   scheduler's host selection does. The integer score makes ties common, so the seed
//!   matters.
//!
//! What this copy does not share with the paper's runs: the arrival orders (another
//! shuffle) and memory, which the replay enforces for every policy (the engine checks
//! each node's memory; FGD does not look at it).

use crate::baseline::Mirror;
use crate::protocol::Rng;
use crate::stranding::{PerNode, StateMemo};
use crate::trace::PodRow;

/// One typical task shape and its frequency.
#[derive(Clone, Debug, PartialEq)]
struct Shape {
    cpu_milli: u64,
    num_gpu: u32,
    gpu_milli: u32,
    gpu_spec: Vec<String>,
    frequency: f64,
}

/// The baseline: the typical shapes of a pod list, and a memo of node
/// fragmentations (keyed by model, free CPU and the sorted free milli-GPU: the measure
/// does not depend on the order of the GPUs).
#[derive(Clone, Debug)]
pub struct Fgd {
    shapes: Vec<Shape>,
    memo: StateMemo,
    /// Each node's fragmentation now.
    current: PerNode<f64>,
}

/// The node FGD picks, and for a share the GPU (its index on the node).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// The node (index into the mirror).
    pub node: usize,
    /// The GPU for a share; `None` for whole GPUs and CPU-only tasks (the engine's
    /// first wholly free GPUs are FGD's choice too).
    pub gpu: Option<usize>,
}

impl Fgd {
    /// The baseline for a workload whose tasks are `pods`.
    pub fn new(pods: &[PodRow]) -> Fgd {
        let shapes = crate::stranding::typical(pods, |p| {
            (p.cpu_milli, p.num_gpu, p.gpu_milli, p.gpu_spec.as_slice())
        })
        .into_iter()
        .map(|((cpu_milli, num_gpu, gpu_milli, spec), frequency)| Shape {
            cpu_milli,
            num_gpu,
            gpu_milli,
            gpu_spec: spec.to_vec(),
            frequency,
        })
        .collect();
        Fgd {
            shapes,
            memo: StateMemo::default(),
            current: PerNode::default(),
        }
    }

    /// Node `n`'s fragmentation now, computed once per change of the node.
    fn now(&mut self, mirror: &Mirror, n: usize) -> f64 {
        if let Some(f) = self.current.get(mirror, n) {
            return f;
        }
        let (model, cpu, _, gpus) = mirror.state(n);
        let f = self.fragmentation(model, cpu, gpus);
        self.current.put(mirror, n, f);
        f
    }

    /// FGD's choice for `pod`, `None` when no node fits.
    pub fn choose(&mut self, mirror: &Mirror, pod: &PodRow, rng: &mut Rng) -> Option<Choice> {
        let mut best_score = i64::MIN;
        let mut best: Vec<Choice> = Vec::new();
        for n in 0..mirror.len() {
            if !mirror.fits(n, pod) {
                continue;
            }
            let before = self.now(mirror, n);
            let (model, cpu, _, gpus) = mirror.state(n);
            let cpu_after = cpu - pod.cpu_milli;
            let (score, gpu) = if pod.num_gpu == 1 && pod.gpu_milli < 1000 {
                let mut pick: Option<(i64, usize)> = None;
                let mut after = gpus.to_vec();
                // GPUs with the same free share leave the same node: the first of them
                // scores for all (ties go to the first).
                let mut seen: Vec<u32> = Vec::with_capacity(gpus.len());
                for (g, &free) in gpus.iter().enumerate() {
                    if free < pod.gpu_milli || seen.contains(&free) {
                        continue;
                    }
                    seen.push(free);
                    after[g] = free - pod.gpu_milli;
                    let s = score(before, self.fragmentation(model, cpu_after, &after));
                    after[g] = free;
                    if pick.is_none_or(|(b, _)| s > b) {
                        pick = Some((s, g));
                    }
                }
                let Some((s, g)) = pick else { continue };
                (s, Some(g))
            } else {
                let mut after = gpus.to_vec();
                if pod.num_gpu > 0 {
                    for f in after
                        .iter_mut()
                        .filter(|f| **f == 1000)
                        .take(pod.num_gpu as usize)
                    {
                        *f = 0;
                    }
                }
                (
                    score(before, self.fragmentation(model, cpu_after, &after)),
                    None,
                )
            };
            if score > best_score {
                best_score = score;
                best.clear();
            }
            if score == best_score {
                best.push(Choice { node: n, gpu });
            }
        }
        if best.is_empty() {
            return None;
        }
        Some(best[rng.below(best.len())])
    }

    /// The node's fragmentation for the typical tasks, in milli-GPU (memoised).
    fn fragmentation(&mut self, model: &str, cpu: u64, gpus: &[u32]) -> f64 {
        // FGD's node state is CPU and GPU only: memory is not part of the key.
        let shapes = &self.shapes;
        self.memo
            .get_or(model, cpu, 0, gpus, |g| measure(shapes, model, cpu, g))
    }
}

/// [`Fgd::fragmentation`], computed (the order of `gpus` does not matter).
fn measure(shapes: &[Shape], model: &str, cpu: u64, gpus: &[u32]) -> f64 {
    let free: u64 = gpus.iter().map(|&g| u64::from(g)).sum();
    if free == 0 {
        return 0.0;
    }
    let mut sum = 0.0;
    for s in shapes {
        let allowed = s.gpu_spec.is_empty() || s.gpu_spec.iter().any(|m| m == model);
        let enough = gpus.iter().filter(|&&g| g >= s.gpu_milli).count() >= s.num_gpu as usize;
        let part = if allowed && enough && cpu >= s.cpu_milli {
            crate::stranding::too_small(gpus, s.gpu_milli)
        } else {
            free
        };
        #[allow(clippy::cast_precision_loss)]
        {
            sum += s.frequency * part as f64;
        }
    }
    sum
}

/// The simulator's integer score of a change of fragmentation: `⌊100 · σ(Δ / 1000)⌋`
/// with `Δ = before − after` (a fall scores above 50).
#[allow(clippy::cast_possible_truncation)]
fn score(before: f64, after: f64) -> i64 {
    let x = (before - after) / 1000.0;
    (100.0 / (1.0 + (-x).exp())) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(cpu: u64, num_gpu: u32, gpu_milli: u32) -> Shape {
        Shape {
            cpu_milli: cpu,
            num_gpu,
            gpu_milli,
            gpu_spec: Vec::new(),
            frequency: 0.5,
        }
    }

    #[test]
    fn fragmentation_follows_the_paper() {
        let mut f = Fgd {
            shapes: vec![shape(4000, 1, 500), shape(4000, 2, 1000)],
            memo: StateMemo::default(),
            current: PerNode::default(),
        };
        // GPUs with 1000, 600 and 300 free, 8 cores: the share fits (300 too small for
        // it); two whole GPUs do not (one is wholly free): all 1900 count.
        let v = f.fragmentation("T4", 8000, &[1000, 600, 300]);
        assert!((v - (0.5 * 300.0 + 0.5 * 1900.0)).abs() < 1e-9, "{v}");
        // Too little CPU: everything free counts for both.
        let v = f.fragmentation("T4", 1000, &[1000, 600, 300]);
        assert!((v - 1900.0).abs() < 1e-9, "{v}");
    }

    #[test]
    fn the_score_is_the_simulators_integer_sigmoid() {
        assert_eq!(score(0.0, 0.0), 50);
        assert_eq!(score(3000.0, 0.0), 95);
        assert_eq!(score(0.0, 3000.0), 4);
    }
}
