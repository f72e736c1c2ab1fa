// What the e2e files share: web-demo/dist/ served by web-demo/serve.mjs (precompressed
// files with Content-Encoding, as `bash scripts/playground.sh` serves them), headless
// Chromium (Debian's /usr/bin/chromium through playwright-core), and a page opened
// ready, for every e2e file.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serve } from '../serve.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, '..', '..');
export const dist = process.env.PLAYGROUND_DIST ?? join(here, '..', 'dist');
export const shots = join(root, 'target', 'playground');
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** Serves dist/ and starts Chromium: `{ base, browser, close() }`. */
export async function start() {
  assert.ok(existsSync(join(dist, 'index.html')), 'run bash scripts/playground.sh --build-only');
  mkdirSync(shots, { recursive: true });
  const server = await serve(dist);
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox'] });
  return {
    base: `http://127.0.0.1:${server.address().port}/`,
    browser,
    close: async () => {
      await browser.close();
      server.close();
    },
  };
}

/**
 * A page at `hash`, ready; page errors and console errors (e.g. an invalid `pattern`)
 * fail the test at `done()`. `touch`: a phone-like context (hasTouch, isMobile), to
 * be driven with taps.
 */
export async function open(env, hash = '', size = DESKTOP, { touch = false } = {}) {
  const context = await env.browser.newContext({ viewport: size, ...(touch ? { hasTouch: true, isMobile: true } : {}) });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
  await page.goto(env.base + hash);
  await page.waitForSelector('body[data-ready=true]', { timeout: 120000 });
  page.done = async () => {
    assert.deepEqual(errors, [], 'no uncaught errors in the page, none in the console');
    await context.close();
  };
  return page;
}

/** Runs axe-core on the page as it is; returns the serious and critical violations, described. */
export async function axeViolations(page) {
  if (!(await page.evaluate(() => 'axe' in window))) {
    await page.addScriptTag({ path: join(here, '..', 'node_modules', 'axe-core', 'axe.min.js') });
  }
  return page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(', ')}`);
  });
}

export const state = (page) => page.evaluate(() => window.gangpackPlayground.state());

/** Plays a scenario's script to its end with the Next step button. */
export async function playScenario(page) {
  for (let i = 0; i < 50 && (await page.locator('#next-step').isVisible()) && !(await page.locator('#next-step').isDisabled()); i++) {
    const n = (await state(page)).actions.length;
    await page.click('#next-step');
    await page.waitForFunction((k) => window.gangpackPlayground.state().actions.length > k, n);
  }
}

/**
 * The canvas's pixels (device pixels, RGBA) of run `run` in a rectangle given in CSS
 * pixels relative to the canvas, with the ratio between the two.
 */
export async function pixels(page, rect, run = 0) {
  return page.evaluate(([r, k]) => {
    const canvas = document.querySelectorAll('canvas.cluster')[k];
    const ratio = window.devicePixelRatio || 1;
    const x = Math.max(0, Math.floor(r.x * ratio));
    const y = Math.max(0, Math.floor(r.y * ratio));
    const w = Math.max(1, Math.min(canvas.width - x, Math.ceil(r.w * ratio)));
    const h = Math.max(1, Math.min(canvas.height - y, Math.ceil(r.h * ratio)));
    return { w, h, data: [...canvas.getContext('2d').getImageData(x, y, w, h).data] };
  }, [rect, run]);
}

/** The pixel at a point in CSS pixels relative to the canvas, [r, g, b]. */
export async function pixel(page, x, y, run = 0) {
  const p = await pixels(page, { x, y, w: 1 / 8, h: 1 / 8 }, run);
  return p.data.slice(0, 3);
}

/** `[r, g, b]` as `#rrggbb`. */
export const hex = (rgb) => `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`;
