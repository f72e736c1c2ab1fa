//! The scenarios of two criterion benchmarks, to be timed from JavaScript
//! (`wasm/bench/bench.mjs`; feature `bench`, never in the published package).
//!
//! Each scenario is built here from `gangpack-benches`' fixtures, the same functions the
//! native benchmarks use, so Node times exactly the work criterion times: JavaScript
//! calls [`BenchScenario::prepare`] (untimed) and then [`BenchScenario::run`] (timed).

use wasm_bindgen::prelude::wasm_bindgen;

enum Work {
    /// `gang/64x8_on_4096x8/anywhere`: `place_gang_mut` of a 64-pod x 8-GPU gang.
    Gang {
        fleet: gangpack::Cluster,
        group: gangpack::PodGroup,
        pods: Vec<gangpack::Pod>,
        claims: Vec<gangpack::ResourceClaim>,
    },
    /// `lifecycle/cycle_1000_gangs_on_4096x8`: one cycle over a copy of the pending state.
    Cycle {
        pending: gangpack::Scheduler,
        copy: Option<gangpack::Scheduler>,
    },
}

/// One benchmark scenario, built once.
#[wasm_bindgen]
pub struct BenchScenario {
    work: Work,
}

#[wasm_bindgen]
impl BenchScenario {
    /// The fleet and gang of `gang/64x8_on_4096x8/anywhere` (4096 nodes x 8 GPUs).
    #[wasm_bindgen(js_name = gang64x8On4096x8)]
    #[must_use]
    pub fn gang_64x8_on_4096x8() -> BenchScenario {
        let fleet = gangpack_benches::allocation_fleet_with_racks(4096, 8, 4, 33, 32);
        let (group, pods, claims) = gangpack_benches::gpu_gang(64, 8, false);
        BenchScenario {
            work: Work::Gang {
                fleet,
                group,
                pods,
                claims,
            },
        }
    }

    /// The pending state of `lifecycle/cycle_1000_gangs_on_4096x8`.
    #[wasm_bindgen(js_name = cycle1000GangsOn4096x8)]
    #[must_use]
    pub fn cycle_1000_gangs_on_4096x8() -> BenchScenario {
        BenchScenario {
            work: Work::Cycle {
                pending: gangpack_benches::pending_1000_gangs(32),
                copy: None,
            },
        }
    }

    /// The untimed set-up of one run (the cycle's copy of the pending state, as
    /// criterion's `iter_batched_ref` makes it).
    pub fn prepare(&mut self) {
        if let Work::Cycle { pending, copy } = &mut self.work {
            *copy = Some(pending.clone());
        }
    }

    /// One timed run; returns what it did (pods placed), so it cannot be optimised away.
    pub fn run(&mut self) -> u32 {
        let options = gangpack::GangOptions::default();
        match &mut self.work {
            Work::Gang {
                fleet,
                group,
                pods,
                claims,
            } => {
                let outcome = fleet
                    .place_gang_mut(Some(group), pods, claims, &options)
                    .expect("the bench gang is valid");
                match outcome {
                    gangpack::GangOutcome::Placed(d) => d.bindings.len() as u32,
                    _ => 0,
                }
            }
            Work::Cycle { pending, copy } => {
                let sched = copy.get_or_insert_with(|| pending.clone());
                let report = sched.cycle();
                *copy = None;
                report.pods_bound() as u32
            }
        }
    }
}
