// The playground's scenarios, in menu order. Each is a plain object (see any scenario
// file): the manifests it loads, the session options, how the page groups nodes,
// optionally policies to compare side by side, and the steps it plays (actions of
// ../actions.js, each with a caption).

import demo from './demo.js';
import ecc from './ecc.js';
import fragmentation from './fragmentation.js';
import preemption from './preemption.js';
import deadlock from './deadlock.js';
import halfGpu from './half-gpu.js';
import large from './large.js';

export const SCENARIOS = Object.freeze([demo, ecc, fragmentation, preemption, deadlock, halfGpu, large]);

/** The scenario with id `id`, or `undefined`. */
export function scenarioById(id) {
  return SCENARIOS.find((s) => s.id === id);
}
