// Determinism goldens through the npm package: every command of every scenario in
// wasm/tests/determinism/scenarios.json, run with `runCli` on the scenario's files,
// prints byte for byte what the committed golden `golden/NAME.cli.txt` holds. The
// same goldens are compared natively and under wasm32 by
// wasm/tests/determinism/main.rs (cargo test -p gangpack-wasm --test determinism,
// which also blesses them: GANGPACK_BLESS=1), so a drift in the native build and the
// package alike is caught, not only a difference between them (identity.test.mjs).
//
// The Scheduler session is held to the engine's golden too: after one cycle, the
// explanation of every pending unit (`explain(unit)`: text, summary, what it takes)
// is the block the engine's trace `golden/NAME.trace.txt` holds for it.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

// GANGPACK_WASM_NODE points at another build of the package's Node entry file.
const g = await import(process.env.GANGPACK_WASM_NODE
  ? pathToFileURL(process.env.GANGPACK_WASM_NODE).href
  : '../pkg/node/index.js');

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = 'wasm/tests/determinism';
const read = (rel) => readFileSync(join(root, rel), 'utf8');
const scenarios = JSON.parse(read(`${dir}/scenarios.json`));

/** The scenario's input as `runCli`'s `files`. */
function files(s) {
  if (s.input.files) return s.input.files.map((name) => ({ name, text: read(name) }));
  if (s.input.demo !== undefined) return [{ name: 'demo.yaml', text: g.demoManifests(s.input.demo) }];
  const name = `${dir}/golden/${s.name}.yaml`;
  return [{ name, text: read(name) }];
}

/** A command's request with the scenario's files (a taint rule's file read). */
function request(r, input) {
  const out = { ...r, files: input };
  if (r.taint?.rule) out.taint = { ...r.taint, rule: [{ name: r.taint.rule, text: read(r.taint.rule) }] };
  return out;
}

/** The commands' outputs, as main.rs's `render_cli` renders them. */
function renderCli(s, input) {
  return s.cli
    .map((c) => {
      const run = g.runCli(request(c.request, input));
      let out = `== ${c.title}\nexit ${run.code}\n`;
      for (const w of run.warnings) out += `warning: ${w}\n`;
      for (const e of run.errors) out += `error: ${e}\n`;
      out += run.stdout;
      if (run.stdout !== '' && !run.stdout.endsWith('\n')) out += '\n';
      return out;
    })
    .join('\n');
}

test('the scenarios are there', () => {
  assert.ok(scenarios.length >= 8, `only ${scenarios.length} scenarios`);
  assert.ok(scenarios.filter((s) => s.cli.length > 0).length >= 8);
});

for (const s of scenarios.filter((s) => s.cli.length > 0)) {
  test(`runCli prints the golden of ${s.name}`, () => {
    const golden = read(`${dir}/golden/${s.name}.cli.txt`);
    const actual = renderCli(s, files(s));
    if (actual !== golden) {
      const a = golden.split('\n');
      const b = actual.split('\n');
      let i = 0;
      while (i < a.length && a[i] === b[i]) i++;
      assert.fail(
        `${dir}/golden/${s.name}.cli.txt differs at line ${i + 1}:\n- ${a[i]}\n+ ${b[i]}\n` +
          '(bless natively if intended: GANGPACK_BLESS=1 cargo test -p gangpack-wasm --test determinism)',
      );
    }
  });
}

// The session's explanations, for the manifest scenarios that explain right after the
// first cycle (the trace's first `## explain` blocks) under the default policy.
const explained = scenarios.filter((s) => !s.input.generate && s.steps[0] === 'cycle' && s.steps[1] === 'explain');

test('scenarios explain after their first cycle', () => {
  assert.ok(explained.length >= 5, explained.map((s) => s.name).join(', '));
});

for (const s of explained) {
  test(`the Scheduler session explains ${s.name} as the engine's golden`, () => {
    // The first policy's section, up to its second cycle: its `## explain` blocks are
    // the units pending after the first cycle, in the order the engine lists them.
    const trace = read(`${dir}/golden/${s.name}.trace.txt`).split(/\n# /)[0].split('\n## cycle 2')[0];
    const blocks = [...trace.matchAll(/^## explain (PodGroup|Pod) (\S+)\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)];
    const session = g.Scheduler.fromManifests(files(s));
    try {
      const cycle = session.cycle();
      const explainedUnits = blocks.map((b) => `${b[1]} ${b[2]}`);
      for (const u of cycle.units.filter((u) => u.outcome === 'pending')) {
        assert.ok(explainedUnits.includes(`${u.kind} ${u.name}`), `${s.name}: ${u.kind} ${u.name} is pending`);
      }
      for (const [, kind, name, body] of blocks) {
        const unit = kind === 'PodGroup' ? { podGroup: name } : { pod: name };
        let text;
        try {
          const e = session.explain(unit);
          text = `${e.text}\nsummary: ${e.summary}\n${e.whatItTakes.text}\n`;
        } catch (err) {
          assert.ok(err instanceof Error);
          text = `error: ${err.message}\nerror: ${err.message}\n`;
        }
        // (The section's last block carries the blank line that ends the section.)
        assert.equal(text, body.replace(/\n\n$/, '\n'), `${s.name}: ${kind} ${name}`);
      }
    } finally {
      session.free();
    }
  });
}
