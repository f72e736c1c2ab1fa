// What the map looks like, read back from the canvas's pixels (issue 37): workloads
// told apart and 3:1 against free cells; free cells' borders 3:1; the focus ring not
// the amber of what is lit up; the 1,000-node overview with its racks named, lit-up
// nodes visible at that zoom and names in natural order; the module sent compressed.
// Screenshots (1280×800 and 390×844) of the 1,000-node scenario and of a scenario with
// more than eight workloads go to target/playground/visuals-*.png.
//
//   bash scripts/playground.sh --build-only && node --test web-demo/e2e/visuals.test.mjs

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { dirname, join, relative, resolve } from 'node:path';
import { DESKTOP, PHONE, dist, hex, open, pixel, pixels, playScenario, shots, start, state } from './harness.mjs';
import { contrast, luminance } from '../src/palette.js';
import { naturalCompare } from '../src/natural.js';

let env;
before(async () => { env = await start(); });
after(async () => { await env?.close(); });

/** The scenario with more than eight workloads the colour checks run on, and what it starts from. */
const MANY = 'demo';

const devicesOf = (snap) => snap.domains.flatMap((d) => d.nodes.flatMap((n) => n.devices));
const rgbOf = (s) => s.match(/\d+/g).slice(0, 3).map(Number);
const isWhite = (p) => luminance(hex(p)) > 0.6;

/** A viewport where the whole of a small cluster is on the map at a size its marks can be read. */
const LARGE = { width: 1600, height: 1400 };

test('the module and the page travel compressed: brotli or gzip copies, identical once decoded', async () => {
  const wasm = join(dist, 'pkg', 'gangpack_wasm_bg.wasm');
  const raw = readFileSync(wasm);
  for (const [ext, decode] of [['.br', brotliDecompressSync], ['.gz', gunzipSync]]) {
    assert.ok(existsSync(wasm + ext), `scripts/playground.sh writes ${wasm}${ext}`);
    const packed = readFileSync(wasm + ext);
    assert.ok(packed.length < raw.length / 2, `${ext}: ${packed.length} B of ${raw.length}`);
    assert.ok(decode(packed).equals(raw), `${ext} decodes to the module`);
  }
  // The server picks by Accept-Encoding; without one, the file as it is.
  const get = (encoding) => new Promise((resolve, reject) => {
    const url = new URL('pkg/gangpack_wasm_bg.wasm', env.base);
    request(url, { headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject).end();
  });
  const plain = await get(null);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.equal(plain.headers['content-type'], 'application/wasm');
  assert.ok(plain.body.equals(raw));
  const gz = await get('gzip, deflate');
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gunzipSync(gz.body).equals(raw));
  const br = await get('gzip, deflate, br');
  assert.equal(br.headers['content-encoding'], 'br');
  assert.equal(br.headers.vary, 'Accept-Encoding');
  assert.ok(brotliDecompressSync(br.body).equals(raw));
  assert.equal((await get('br;q=0, gzip')).headers['content-encoding'], 'gzip', 'q=0 refuses an encoding');

  // And the browser takes what it is sent: the page comes up on the compressed module.
  const page = await env.browser.newPage();
  const encodings = [];
  page.on('response', (r) => { if (r.url().endsWith('.wasm')) encodings.push(r.headers()['content-encoding']); });
  await page.goto(env.base);
  await page.waitForSelector('body[data-ready=true]', { timeout: 120000 });
  assert.equal(encodings.length, 1);
  assert.ok(['br', 'gzip'].includes(encodings[0]), `the module came ${encodings[0] ?? 'uncompressed'}`);
  const transfer = await page.evaluate(() => performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm')).encodedBodySize);
  assert.ok(transfer < raw.length / 2, `${transfer} B over the wire for ${raw.length} B`);
  await page.close();
});

test('the page asks for the module and every ES module at once (preload), and each arrives once', async () => {
  // The static import graph from src/main.js, in dist/ (where ../pkg/ is the package).
  const graph = new Set();
  const visit = (file) => {
    const rel = relative(dist, file).split('\\').join('/');
    if (graph.has(rel)) return;
    graph.add(rel);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm)) {
      const spec = m[1] ?? m[2];
      if (spec.startsWith('.')) visit(resolve(dirname(file), spec));
    }
  };
  visit(join(dist, 'src', 'main.js'));
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const preloaded = [...html.matchAll(/<link rel="modulepreload" href="\.\/([^"]+)">/g)].map((m) => m[1]);
  assert.deepEqual(preloaded.slice().sort(), [...graph].sort(), 'index.html modulepreloads exactly the modules main.js imports');
  assert.match(html, /<link rel="preload" href="\.\/pkg\/gangpack_wasm_bg\.wasm" as="fetch" type="application\/wasm" crossorigin>/);

  // In the browser: each file fetched once (a preload the page's fetch() did not
  // match would fetch the 6 MB module twice), the module among the first requests.
  const page = await env.browser.newPage();
  const requests = [];
  page.on('request', (r) => requests.push(new URL(r.url()).pathname));
  await page.goto(env.base);
  await page.waitForSelector('body[data-ready=true]', { timeout: 120000 });
  const warnings = [];
  page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
  await page.waitForTimeout(3500);
  await page.close();
  const counts = new Map();
  for (const r of requests) counts.set(r, (counts.get(r) ?? 0) + 1);
  assert.deepEqual([...counts].filter(([, n]) => n > 1), [], 'nothing fetched twice');
  assert.ok(requests.indexOf('/pkg/gangpack_wasm_bg.wasm') <= 3, `the module is asked for early: ${requests.slice(0, 6).join(', ')}`);
  assert.deepEqual(warnings.filter((w) => /preload/i.test(w)), [], 'no unused-preload warnings');
});

test(`more than eight workloads (${MANY}): each its own mark, 3:1 against free cells; free borders 3:1; the focus ring is not amber`, async () => {
  const page = await open(env, `#s=${MANY}`, LARGE);
  try {
    const snap = (await state(page)).snapshots[0];
    // Nothing lit up or dimmed: the selection shows a running workload's placement.
    const owners = snap.groups.map((g) => g.name).concat(snap.pods.filter((p) => !p.podGroup).map((p) => p.name));
    assert.ok(owners.length > 8, `${MANY} has ${owners.length} workloads`);
    const whole = devicesOf(snap).filter((d) => d.holders.length === 1 && !d.taints.length && d.state === 'allocated');
    const byOwner = new Map();
    for (const d of whole) {
      const h = d.holders[0];
      const o = h.podGroup ?? h.pods[0];
      if (!byOwner.has(o)) byOwner.set(o, d.id);
    }
    assert.ok(byOwner.size > 8, `${byOwner.size} workloads hold whole GPUs`);
    const running = [...byOwner.keys()].find((o) => snap.groups.some((g) => g.name === o));
    if (running) await page.locator('#units button', { hasText: `PodGroup ${running}` }).click();
    assert.deepEqual((await page.evaluate(() => window.gangpackPlayground.highlight())).devices, [], 'nothing lit up');
    const free = devicesOf(snap).find((d) => d.state === 'free' && !d.taints.length);
    assert.ok(free, 'a free GPU');

    // A cell's mark: its colour near a corner, and where its white pattern is (centre: a
    // dot or a bar; left of centre: a ring; above centre: a bar).
    const mark = async (id) => {
      const c = await page.evaluate((d) => window.gangpackPlayground.cell(d), id);
      assert.ok(c && c.size >= 12 && c.x >= 0 && c.y >= 0, `${id} is drawn on screen, large enough: ${JSON.stringify(c)}`);
      const at = (fx, fy) => pixel(page, c.x + c.size * fx, c.y + c.size * fy);
      return { c, colour: hex(await at(0.16, 0.16)), centre: isWhite(await at(0.5, 0.5)), left: isWhite(await at(0.28, 0.5)), top: isWhite(await at(0.5, 0.22)) };
    };
    const freeMark = await mark(free.id);
    const marks = new Map();
    for (const [o, id] of byOwner) marks.set(o, await mark(id));
    const problems = [];
    for (const [o, m] of marks) {
      const r = contrast(m.colour, freeMark.colour);
      if (r < 3) problems.push(`${o}: ${m.colour} against a free cell ${freeMark.colour} is ${r.toFixed(2)}:1`);
    }
    assert.deepEqual(problems, [], 'every workload 3:1 against a free cell');
    const signature = (m) => `${m.colour}/${m.centre}/${m.left}/${m.top}`;
    const seen = new Map();
    for (const [o, m] of marks) {
      const s = signature(m);
      assert.ok(!seen.has(s), `${o} and ${seen.get(s)} look the same (${s})`);
      seen.set(s, o);
    }
    // Past eight, colours repeat with a pattern: at most eight plain colours in use.
    assert.ok(new Set([...marks.values()].map((m) => m.colour)).size <= 8, 'eight colours, then patterns');
    assert.ok([...marks.values()].some((m) => m.centre || m.left || m.top), 'some workloads carry a white mark');

    // A free cell's border against the white around it: the darkest pixel across its left edge.
    const fc = freeMark.c;
    const edge = await pixels(page, { x: fc.x - 0.5, y: fc.y + fc.size / 2, w: 2.5, h: 1 / 8 });
    let darkest = '#ffffff';
    for (let i = 0; i < edge.data.length; i += 4) {
      const p = hex(edge.data.slice(i, i + 3));
      if (luminance(p) < luminance(darkest)) darkest = p;
    }
    const gap = hex(await pixel(page, fc.x - fc.size * 0.09, fc.y + fc.size / 2));
    assert.ok(contrast(darkest, gap) >= 3, `a free cell's border ${darkest} against ${gap}: ${contrast(darkest, gap).toFixed(2)}:1`);

    // The focus ring: 3:1 against the page, and not the amber of the blocking set.
    await page.focus('#step');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Tab');
    const ring = await page.evaluate(() => {
      const s = getComputedStyle(document.activeElement);
      return { id: document.activeElement.id, colour: s.outlineColor, style: s.outlineStyle, width: s.outlineWidth };
    });
    assert.equal(ring.id, 'step');
    assert.equal(ring.style, 'solid');
    const lit = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue('--lit').trim());
    const ringHex = hex(rgbOf(ring.colour));
    assert.notEqual(ringHex.toLowerCase(), lit.toLowerCase(), 'the focus ring is not the blocking amber');
    assert.ok(contrast(ringHex, '#ffffff') >= 3, `focus ring ${ringHex}: ${contrast(ringHex, '#ffffff').toFixed(2)}:1 against white`);

    // The workload list's swatches carry the same marks as the map.
    const swatches = await page.locator('#units .swatch').evaluateAll((els) => els.map((e) => e.getAttribute('style')));
    assert.ok(swatches.some((s) => /url\(data:image\/png/.test(s)), 'patterned swatches in the list');

    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(shots, `visuals-${MANY}-${size.width}x${size.height}.png`) });
    }
  } finally {
    await page.done();
  }
});

test('1,000 nodes: racks named on the overview, a lit fact visible at that zoom, names in natural order', async () => {
  const page = await open(env, '#s=large');
  try {
    await playScenario(page);
    await page.waitForSelector('#selected[data-explained=true]', { timeout: 60000 });
    const zoom = await page.evaluate(() => window.gangpackPlayground.zoom());
    assert.ok(zoom < 0.45, `the map opens as an overview (zoom ${zoom})`);

    // Natural order on the map: n2 above n10, rack-2 before rack-10.
    const rect = (n) => page.evaluate((x) => window.gangpackPlayground.nodeLabel(x), n);
    const [n2, n10] = [await rect('gpu-r1-n2'), await rect('gpu-r1-n10')];
    assert.ok(n2.y < n10.y, `gpu-r1-n2 (y ${n2.y}) is drawn above gpu-r1-n10 (y ${n10.y})`);
    const box = (d) => page.evaluate((x) => window.gangpackPlayground.domainRect(x), d);
    const order = [];
    for (let r = 1; r <= 25; r++) order.push({ r, ...(await box(`rack-${r}`)) });
    const reading = order.slice().sort((a, b) => a.y - b.y || a.x - b.x).map((b) => b.r);
    assert.deepEqual(reading, order.map((b) => b.r), 'racks in reading order rack-1, rack-2, … rack-25');
    // … and in the lists: the capacity table, the workloads (within a status), the placement.
    const rows = await page.locator('#capacity tbody th').allTextContents();
    assert.deepEqual(rows, Array.from({ length: 25 }, (_, i) => `rack-${i + 1}`));
    const units = await page.locator('#units button.unit').evaluateAll((els) => els.map((e) => ({ status: e.querySelector('.status').textContent, name: e.childNodes[1].textContent.replace(/^\S+ /, '') })));
    for (let i = 1; i < units.length; i++) {
      if (units[i].status === units[i - 1].status) assert.ok(naturalCompare(units[i - 1].name, units[i].name) < 0, `${units[i - 1].name} before ${units[i].name}`);
    }
    assert.ok(units.findIndex((u) => u.name === 'serve/svc-r1-n2-0') < units.findIndex((u) => u.name === 'serve/svc-r1-n10-0') || !units.some((u) => u.name === 'serve/svc-r1-n2-0'));

    // Rack names on the overview: dark, grey text at each rack's top-left corner.
    const textPixels = async (b) => {
      const p = await pixels(page, { x: b.x + 1, y: b.y + 1, w: Math.min(60, b.w - 2), h: 15 });
      let n = 0;
      for (let i = 0; i < p.data.length; i += 4) {
        const [r, g, bl] = p.data.slice(i, i + 3);
        if (Math.max(r, g, bl) - Math.min(r, g, bl) <= 16 && luminance(hex([r, g, bl])) < 0.06) n++;
      }
      return n;
    };
    for (const r of [1, 13, 25]) assert.ok(await textPixels(order[r - 1]) >= 15, `rack-${r} is named on the overview`);

    // Amber (the lit-up colour) pixels in a rectangle of the map.
    const amberIn = async (r) => {
      const p = await pixels(page, r);
      let n = 0;
      for (let i = 0; i < p.data.length; i += 4) {
        const [red, g, b] = p.data.slice(i, i + 3);
        if (Math.abs(red - 0xf9) < 24 && Math.abs(g - 0xab) < 24 && b < 48) n++;
      }
      return n;
    };
    const frame = (b) => amberIn({ x: b.x - 2, y: b.y + b.h / 2, w: 8, h: 1 / 8 });
    // The explanation's fact naming a rack, clicked: the rack framed in amber at least 3 screen pixels wide.
    const facts = page.locator('#selected .fact');
    let rack = null;
    for (let i = 0; i < (await facts.count()) && !rack; i++) {
      await facts.nth(i).click();
      const hl = await page.evaluate(() => window.gangpackPlayground.highlight());
      if (hl.domains.length) rack = hl.domains[0];
    }
    assert.ok(rack, 'a fact names a rack');
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    const litBox = order.find((b) => `rack-${b.r}` === rack);
    assert.ok(await frame(litBox) >= 3, `${rack} is framed (4 screen pixels) at zoom ${zoom}: ${await frame(litBox)} amber pixels across its left side`);
    const other = order.find((b) => `rack-${b.r}` !== rack);
    assert.equal(await frame(other), 0, `rack-${other.r} is not framed`);

    // Nodes lit up (a running gang's placement): an amber bar where each node's name would be.
    await page.fill('#unit-filter', 'pretrain-r3');
    await page.locator('#units button', { hasText: 'PodGroup train/pretrain-r3' }).click();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    const lit = await page.evaluate(() => window.gangpackPlayground.highlight());
    assert.ok(lit.nodes.length >= 12, `its nodes are lit: ${lit.nodes}`);
    const bar = async (node) => {
      const r = await rect(node);
      return amberIn({ x: r.x - 2, y: r.y - 2, w: 80 * zoom, h: r.size + 4 });
    };
    for (const node of lit.nodes) assert.ok(await bar(node) >= 12, `lit node ${node} is marked at zoom ${zoom}: ${await bar(node)} amber pixels`);
    const unlit = ['gpu-r3-n40', 'gpu-r4-n1'].find((n) => !lit.nodes.includes(n));
    assert.equal(await bar(unlit), 0, `${unlit} is not lit`);
    // The placement lists the pods in natural order.
    const placed = await page.locator('#selected .placement li').allTextContents();
    const podsInOrder = placed.map((l) => l.split(' → ')[0]);
    assert.deepEqual(podsInOrder, podsInOrder.slice().sort(naturalCompare));
    assert.ok(podsInOrder.length >= 12);

    for (const size of [DESKTOP, PHONE]) {
      await page.setViewportSize(size);
      await page.waitForTimeout(400);
      await page.screenshot({ path: join(shots, `visuals-large-${size.width}x${size.height}.png`) });
    }
  } finally {
    await page.done();
  }
});
