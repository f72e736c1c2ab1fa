// The playground in real Chromium (playwright-core driving Debian's /usr/bin/chromium):
// the page loads the wasm module and draws the demo cluster; clicking a GPU taints it
// NoExecute, the evictions appear in the timeline and the cell is drawn with a red
// frame; advancing the clock carries the evictions out; undo restores the state.
// Screenshots (1280x800 and 390x844) go to target/playground/.
//
// Needs the static site: `bash scripts/playground.sh --build-only`.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { extname, join, dirname, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const shots = join(here, '..', '..', 'target', 'playground');
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };

function serve() {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(/^(\.\.[/\\])+/, '');
    const file = join(dist, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(dist) || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('the playground draws the cluster, breaks a GPU and undoes it', async () => {
  assert.ok(existsSync(join(dist, 'index.html')), 'run bash scripts/playground.sh --build-only');
  mkdirSync(shots, { recursive: true });
  const server = await serve();
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(url);
    await page.waitForSelector('body[data-ready=true]');

    // The demo cluster: 4 racks x 8 nodes x 8 GPUs, one gang pending after the cycle.
    const view = await page.evaluate(() => window.gangpackPlayground.snapshot());
    assert.equal(view.domains.length, 4);
    assert.equal(view.domains.flatMap((d) => d.nodes).flatMap((n) => n.devices).length, 256);
    assert.match(await page.locator('#units').innerText(), /PodGroup ml-training\/gpt-moe-pretrain: pending/);
    assert.match(await page.locator('#why').innerText(), /^PodGroup ml-training\/gpt-moe-pretrain: Unschedulable/);
    await page.screenshot({ path: join(shots, 'demo-1280x800.png') });

    // Click an allocated GPU of a training gang: it is tainted NoExecute.
    const id = 'gpu.nvidia.com/gpu-r1-n1/gpu-0';
    const cell = await page.evaluate((d) => window.gangpackPlayground.cell(d), id);
    const box = await page.locator('#cluster').boundingBox();
    await page.mouse.click(box.x + cell.x + cell.size / 2, box.y + cell.y + cell.size / 2);
    const timeline = await page.locator('#timeline').innerText();
    assert.match(timeline, /tainted gpu.nvidia.com\/gpu-r1-n1\/gpu-0: 8 evictions started/);
    assert.match(timeline, /eviction of ml-training\/bert-large-worker-0 at /);
    const tainted = await page.evaluate((d) => {
      const all = window.gangpackPlayground.snapshot().domains.flatMap((x) => x.nodes).flatMap((n) => n.devices);
      return all.find((x) => x.id === d);
    }, id);
    assert.deepEqual(tainted.taints.map((t) => t.effect), ['NoExecute']);
    assert.ok(tainted.evictions.length > 0, 'the eviction is pending on the device');
    // What a person sees: the cell's frame is red.
    const pixel = await page.evaluate(({ c }) => {
      const canvas = document.getElementById('cluster');
      const r = window.devicePixelRatio || 1;
      return Array.from(canvas.getContext('2d').getImageData(Math.round((c.x + 1.5) * r), Math.round((c.y + c.size / 2) * r), 1, 1).data);
    }, { c: cell });
    assert.deepEqual(pixel.slice(0, 3), [0xc5, 0x22, 0x1f], `frame pixel ${pixel}`);
    await page.screenshot({ path: join(shots, 'gpu-broken-1280x800.png') });

    // The clock moves: the evictions are carried out and the gang's GPUs are free.
    await page.click('#advance');
    assert.match(await page.locator('#timeline').innerText(), /evicted ml-training\/bert-large-worker-0/);
    const after = await page.evaluate(() => window.gangpackPlayground.snapshot());
    const rack1 = after.domains.find((d) => d.name === 'rack-1').nodes.find((n) => n.name === 'gpu-r1-n1');
    assert.ok(rack1.devices.every((d) => d.holders.length === 0), 'gpu-r1-n1 is empty after the evictions');

    // Undo twice: back to before the taint, byte for byte.
    await page.click('#undo');
    await page.click('#undo');
    assert.deepEqual(await page.evaluate(() => window.gangpackPlayground.snapshot()), view);

    // Keyboard: the controls are buttons in order, reached with Tab, pressed with Enter.
    await page.focus('#step');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'advance');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'undo');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'step');
    await page.keyboard.press('Enter');
    assert.match(await page.locator('#timeline').innerText(), /cycle: /);

    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto(url);
    await phone.waitForSelector('body[data-ready=true]');
    await phone.screenshot({ path: join(shots, 'demo-390x844.png') });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    server.close();
  }
});
