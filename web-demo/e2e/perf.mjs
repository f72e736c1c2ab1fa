// First contact with the playground, measured (issue 37): how long until the page
// answers, on this machine and over a throttled connection, and how long the
// 1,000-node scenario takes to draw. Not a test (reported, not asserted): run it on
// web-demo/dist/ (bash scripts/playground.sh --build-only) with
//
//   node web-demo/e2e/perf.mjs [--runs N] [--label NAME] [--profiles local,10mbit,fast3g] [--dist DIR]
//
// Each run is a new browser context (empty HTTP cache, no compiled-code cache). The
// site is served by web-demo/serve.mjs, which sends precompressed .br/.gz files when
// they exist (so the same script measures the build with and without them).
//
// - Time to interactive (TTI): navigation start → `body[data-ready=true]` (the wasm
//   module compiled and instantiated, the first scenario loaded and its map drawn),
//   and → the next animation frame after it (the drawn map on screen).
// - The 1,000-node scenario: (a) a page opened at `#s=large`, navigation start → ready
//   → next frame; (b) on a ready page, picking it from the menu → its map drawn (the
//   menu's change handler builds 4.5 MB of manifests, loads them into the engine,
//   reads the cells and draws) → next frame.
// Writes target/playground/first-contact-<label>.json and prints the medians.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const outDir = join(root, 'target', 'playground');

const args = process.argv.slice(2);
const arg = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const dist = arg('dist', join(here, '..', 'dist'));
const RUNS = Number(arg('runs', '5'));
const LABEL = arg('label', 'now');

// Chrome DevTools' presets ("Fast 3G": 1.6 Mbit/s × 0.9, 562.5 ms RTT) and a 10 Mbit/s line.
const PROFILES = {
  local: null,
  '10mbit': { latency: 40, downloadThroughput: (10e6 / 8), uploadThroughput: (5e6 / 8) },
  fast3g: { latency: 562.5, downloadThroughput: (1.6e6 / 8) * 0.9, uploadThroughput: (750e3 / 8) * 0.9 },
};
const chosen = arg('profiles', 'local,10mbit,fast3g').split(',');

// Records when the page says it is ready, and the frame after it.
const PROBE = `(() => {
  const mark = () => {
    if (window.__readyAt !== undefined || document.body?.dataset.ready !== 'true') return false;
    window.__readyAt = performance.now();
    requestAnimationFrame(() => { window.__frameAt = performance.now(); });
    return true;
  };
  new MutationObserver((_, obs) => { if (mark()) obs.disconnect(); })
    .observe(document, { subtree: true, attributes: true, attributeFilter: ['data-ready'] });
})();`;

const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function page(browser, profile) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript(PROBE);
  const p = await context.newPage();
  const cdp = await context.newCDPSession(p);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  if (profile) await cdp.send('Network.emulateNetworkConditions', { offline: false, ...profile });
  const errors = [];
  p.on('pageerror', (e) => errors.push(e.message));
  return { context, page: p, errors };
}

async function timeOpen(browser, base, hash, profile) {
  const { context, page: p, errors } = await page(browser, profile);
  try {
    await p.goto(base + hash, { timeout: 300000 });
    await p.waitForFunction(() => window.__frameAt !== undefined, null, { timeout: 300000 });
    if (errors.length) throw new Error(errors.join('; '));
    return await p.evaluate(() => {
      const wasm = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'));
      const all = performance.getEntriesByType('resource');
      return {
        ready: window.__readyAt,
        frame: window.__frameAt,
        wasmFetched: wasm ? wasm.responseEnd : null,
        wasmTransfer: wasm ? wasm.transferSize : null,
        wasmEncoded: wasm ? wasm.encodedBodySize : null,
        wasmDecoded: wasm ? wasm.decodedBodySize : null,
        totalTransfer: all.reduce((t, e) => t + (e.transferSize || 0), 0),
      };
    });
  } finally {
    await context.close();
  }
}

async function timeSwitch(browser, base) {
  const { context, page: p, errors } = await page(browser, null);
  try {
    await p.goto(base);
    await p.waitForFunction(() => window.__frameAt !== undefined, null, { timeout: 300000 });
    const r = await p.evaluate(() => new Promise((done) => {
      const sel = document.getElementById('scenario');
      const t0 = performance.now();
      sel.value = 'large';
      sel.dispatchEvent(new Event('change'));
      const t1 = performance.now();
      requestAnimationFrame(() => done({ drawn: t1 - t0, frame: performance.now() - t0 }));
    }));
    const st = await p.evaluate(() => window.gangpackPlayground.state().snapshots[0].domains.flatMap((d) => d.nodes).length);
    if (st !== 1000) throw new Error(`the large scenario has ${st} nodes`);
    if (errors.length) throw new Error(errors.join('; '));
    return r;
  } finally {
    await context.close();
  }
}

const server = await serve(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
const result = { label: LABEL, date: new Date().toISOString(), runs: RUNS, chromium: browser.version(), tti: {}, large: {} };
try {
  for (const name of chosen) {
    const runs = [];
    for (let i = 0; i < RUNS; i++) runs.push(await timeOpen(browser, base, '', PROFILES[name]));
    result.tti[name] = { runs, median: { ready: median(runs.map((r) => r.ready)), frame: median(runs.map((r) => r.frame)), wasmFetched: median(runs.map((r) => r.wasmFetched)) } };
    const m = result.tti[name].median;
    console.log(`TTI ${name}: ready ${m.ready.toFixed(0)} ms, frame ${m.frame.toFixed(0)} ms (wasm fetched at ${m.wasmFetched.toFixed(0)} ms, ${runs[0].wasmTransfer} B over the wire) — median of ${RUNS}`);
  }
  const opened = [];
  for (let i = 0; i < RUNS; i++) opened.push(await timeOpen(browser, base, '#s=large', null));
  const switched = [];
  for (let i = 0; i < RUNS; i++) switched.push(await timeSwitch(browser, base));
  result.large = {
    opened: { runs: opened, median: { ready: median(opened.map((r) => r.ready)), frame: median(opened.map((r) => r.frame)) } },
    fromMenu: { runs: switched, median: { drawn: median(switched.map((r) => r.drawn)), frame: median(switched.map((r) => r.frame)) } },
  };
  console.log(`1,000 nodes opened at #s=large: ready ${result.large.opened.median.ready.toFixed(0)} ms, frame ${result.large.opened.median.frame.toFixed(0)} ms — median of ${RUNS}`);
  console.log(`1,000 nodes picked from the menu: drawn ${result.large.fromMenu.median.drawn.toFixed(0)} ms, frame ${result.large.fromMenu.median.frame.toFixed(0)} ms — median of ${RUNS}`);
} finally {
  await browser.close();
  server.close();
}
mkdirSync(outDir, { recursive: true });
const file = join(outDir, `first-contact-${LABEL}.json`);
writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
console.log(`written: ${file}`);
