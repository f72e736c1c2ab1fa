// The scoring policies the page offers (the engine's names, `ScoringPolicy::NAMES`),
// each with a line saying what it prefers. BestFit is the engine's default: a case
// without a policy in its link uses it.

export const DEFAULT_POLICY = 'BestFit';

export const POLICIES = [
  { name: 'BestFit', about: 'the tightest node that fits: packs, keeps big holes open' },
  { name: 'Spread', about: 'the emptiest node: spreads load, fragments' },
  { name: 'Stranding', about: 'where a pod strands the least GPU, CPU and memory for the typical workload shapes' },
  { name: 'FGD', about: 'Fragmentation Gradient Descent: where the expected fragmentation for the typical shapes grows least' },
  { name: 'GangAware', about: 'Stranding inside what keeps whole racks whole for pending gangs: no rack a gang needs is broken into' },
];

/** Whether `name` is one of POLICIES (exactly as spelt there). */
export function isPolicy(name) {
  return POLICIES.some((p) => p.name === name);
}
