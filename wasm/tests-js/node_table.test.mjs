// Scheduler.nodeTable through the package's Node entry:
//   bash scripts/wasm.sh && node --test wasm/tests-js/node_table.test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';

// GANGPACK_WASM_NODE points at another build of the package's Node entry file.
const g = await import(process.env.GANGPACK_WASM_NODE
  ? pathToFileURL(process.env.GANGPACK_WASM_NODE).href
  : '../pkg/node/index.js');

const STAGES = ['OutOfScope', 'NodeUnschedulable', 'NodeAffinity', 'TaintToleration', 'NodeResourcesFit', 'DynamicResources'];
const ROW_KEYS = ['domain', 'facts', 'feasible', 'filter', 'node', 'order', 'planned', 'pods', 'reason', 'score'];
const natural = (a, b) => a.localeCompare(b, 'en', { numeric: true });
const thrown = (f) => {
  try {
    f();
  } catch (e) {
    return e;
  }
  assert.fail('expected a throw');
};

/** The promises every table keeps, whatever the unit. */
function checkTable(s, t) {
  const names = s.snapshot().domains.flatMap((d) => d.nodes).map((n) => n.name).sort(natural);
  assert.deepEqual(t.rows.map((r) => r.node), names, 'every node once, in natural order');
  for (const r of t.rows) {
    assert.deepEqual(Object.keys(r).sort(), ROW_KEYS);
    if (r.feasible) {
      assert.equal(typeof r.score, 'number');
      assert.ok(r.pods > 0);
      assert.equal(r.filter, null);
      assert.equal(r.reason, null);
    } else {
      assert.ok(STAGES.includes(r.filter), r.filter);
      assert.equal(typeof r.reason, 'string');
      assert.equal(r.score, null);
      assert.equal(r.planned, 0);
      // In the explanation's words: each fact names this node alone.
      if (r.filter !== 'OutOfScope') assert.match(r.reason, new RegExp(`\\(${r.node}\\)`));
    }
  }
  const orders = t.rows.map((r) => r.order).filter((o) => o !== null).sort((a, b) => a - b);
  assert.deepEqual(orders, orders.map((_, i) => i + 1));
}

test('nodeTable: a pod sees every node, with its filter or its score', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  const t = s.nodeTable({ pod: 'inference/chat-0' });
  assert.deepEqual(t.unit, { pod: 'inference/chat-0' });
  assert.equal(t.pod, 'inference/chat-0');
  assert.equal(typeof t.policy, 'string');
  assert.equal(typeof t.higherIsBetter, 'boolean');
  assert.ok(t.text.startsWith('Pod inference/chat-0'), t.text);
  checkTable(s, t);
  assert.ok(t.rows.some((r) => r.feasible), 'the demo has room for a chat pod');

  // Cordon a feasible node: its row turns NodeUnschedulable, in explain's words.
  const node = t.rows.find((r) => r.feasible && r.filter === null).node;
  s.cordonNode(node, true);
  const after = s.nodeTable({ pod: 'inference/chat-0' });
  checkTable(s, after);
  const row = after.rows.find((r) => r.node === node);
  assert.equal(row.feasible, false);
  assert.equal(row.filter, 'NodeUnschedulable');
  assert.equal(row.reason, `1 node (${node}) is cordoned`);
  assert.deepEqual(row.facts, [{ cordoned: { nodes: [node] } }]);
});

test('nodeTable: a PodGroup shows its first pending member; rows agree with the placement', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  const unit = 'ml-training/gpt-moe-pretrain';
  const t = s.nodeTable(unit);
  assert.deepEqual(t.unit, { group: unit });
  assert.equal(t.group, unit);
  checkTable(s, t);
  const ex = s.explain(unit).explanation;
  if (ex.decision) {
    const planned = new Set(t.rows.filter((r) => r.planned > 0).map((r) => r.node));
    const placed = new Set(ex.decision.bindings.map((b) => b.node));
    for (const n of planned) assert.ok(placed.has(n), `${n} planned but not placed`);
  }
  // Unknown units throw a real Error, as explain does.
  const e = thrown(() => s.nodeTable({ pod: 'default/ghost' }));
  assert.ok(e instanceof Error);
  assert.equal(e.name, 'NotFound');
});

test('nodeTable: a bound pod gets its copy\'s table and names its node', () => {
  const s = g.Scheduler.fromManifests(g.demoManifests(0));
  const report = s.cycle();
  const bound = report.units.filter((u) => u.outcome === 'placed').flatMap((u) => u.pods).find((p) => p.node);
  assert.ok(bound, 'the demo binds some pod');
  const t = s.nodeTable({ pod: bound.pod });
  assert.equal(t.pod, bound.pod);
  assert.equal(t.bound, bound.node);
  checkTable(s, t);
  assert.ok(t.rows.every((r) => r.planned === 0));
});
