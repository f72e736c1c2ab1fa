// Times two criterion benchmarks' scenarios in Node through the WebAssembly build
// (feature `bench`): `gang/64x8_on_4096x8/anywhere` and
// `lifecycle/cycle_1000_gangs_on_4096x8`. Prints one JSON line per benchmark with the
// median, min and max of the timed runs in milliseconds.
//
//   node wasm/bench/bench.mjs PATH/TO/gangpack_wasm.js [seconds per benchmark]

import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';

const [modulePath, secondsArg] = process.argv.slice(2);
if (!modulePath) {
  console.error('usage: node wasm/bench/bench.mjs PATH/TO/gangpack_wasm.js [seconds]');
  process.exit(2);
}
const budget = Number(secondsArg ?? 10) * 1000;
const { BenchScenario } = createRequire(import.meta.url)(modulePath);

function time(name, scenario, minRuns) {
  const samples = [];
  const started = performance.now();
  let checksum = 0;
  // Warm-up: one untimed run (the JIT tiers the module up).
  scenario.prepare();
  checksum += scenario.run();
  while (samples.length < minRuns || (performance.now() - started < budget && samples.length < 1000)) {
    scenario.prepare();
    const t0 = performance.now();
    checksum += scenario.run();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const median = samples[Math.floor(samples.length / 2)];
  console.log(JSON.stringify({ name, runs: samples.length, medianMs: median, minMs: samples[0], maxMs: samples.at(-1), checksum }));
}

const setup0 = performance.now();
const gang = BenchScenario.gang64x8On4096x8();
console.error(`gang scenario built in ${(performance.now() - setup0).toFixed(0)} ms`);
time('gang/64x8_on_4096x8/anywhere', gang, 10);
gang.free();

const setup1 = performance.now();
const cycle = BenchScenario.cycle1000GangsOn4096x8();
console.error(`cycle scenario built in ${(performance.now() - setup1).toFixed(0)} ms`);
time('lifecycle/cycle_1000_gangs_on_4096x8', cycle, 5);
cycle.free();
