// The map's colours (../src/palette.js) against WCAG 2.2 SC 1.4.11, non-text contrast:
// every part needed to read the map 3:1 against what is next to it, computed with the
// WCAG relative-luminance formula over the colours as the page uses them (the canvas
// constants and the CSS custom properties the legend and focus ring use). The pixels
// on the canvas are checked too, in ../e2e/visuals.test.mjs. And natural order
// (../src/natural.js).
//
//   cd web-demo && node --test test/

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

import {
  BACKGROUND, FOCUS, FREE, FREE_BORDER, HIGHLIGHT, HIGHLIGHT_EDGE, PATTERN_INK, PATTERNS, WORKLOAD_COLOURS,
  contrast, luminance, workloadStyle,
} from '../src/palette.js';
import { PALETTE, RED } from '../src/cluster-view.js';
import { naturalCompare, naturalSort } from '../src/natural.js';

const css = readFileSync(new URL('../src/style.css', import.meta.url), 'utf8');
const cssVar = (name) => {
  const m = new RegExp(`--${name}:\\s*(#[0-9a-fA-F]{6})\\s*;`).exec(css);
  assert.ok(m, `style.css defines --${name}`);
  return m[1];
};

test('the contrast formula is WCAG\'s', () => {
  assert.equal(luminance('#000000'), 0);
  assert.equal(luminance('#ffffff'), 1);
  assert.equal(contrast('#000000', '#ffffff'), 21);
  assert.equal(contrast('#ffffff', '#000000'), 21);
  // Published values: #767676 on white is the lightest grey that passes 4.5:1.
  assert.equal(contrast('#767676', '#ffffff').toFixed(2), '4.54');
  assert.equal(contrast('#777777', '#ffffff').toFixed(2), '4.48');
});

test('every workload colour stands out 3:1 from a free cell, the white between cells and its white mark', () => {
  assert.equal(PALETTE, WORKLOAD_COLOURS, 'the map and the chart use these colours');
  for (const c of WORKLOAD_COLOURS) {
    assert.ok(contrast(c, FREE) >= 3, `${c} against a free cell ${FREE}: ${contrast(c, FREE).toFixed(2)}`);
    assert.ok(contrast(c, BACKGROUND) >= 3, `${c} against the background: ${contrast(c, BACKGROUND).toFixed(2)}`);
    assert.ok(contrast(c, PATTERN_INK) >= 3, `${c} against its pattern: ${contrast(c, PATTERN_INK).toFixed(2)}`);
    assert.notEqual(c.toLowerCase(), RED.toLowerCase(), 'red means NoExecute');
    assert.notEqual(c.toLowerCase(), HIGHLIGHT.toLowerCase(), 'amber means lit up');
  }
  assert.equal(new Set(WORKLOAD_COLOURS.map((c) => c.toLowerCase())).size, WORKLOAD_COLOURS.length, 'eight different colours');
});

test('32 workloads get 32 different marks (colour × pattern); past 8 the pattern tells them apart', () => {
  const seen = new Set();
  for (let i = 0; i < WORKLOAD_COLOURS.length * PATTERNS.length; i++) {
    const s = workloadStyle(i);
    assert.ok(WORKLOAD_COLOURS.includes(s.colour) && PATTERNS.includes(s.pattern));
    seen.add(`${s.colour}/${s.pattern}`);
  }
  assert.equal(seen.size, 32);
  assert.equal(workloadStyle(0).pattern, 'solid', 'the first eight are plain colours');
  assert.equal(workloadStyle(8).pattern, 'dot');
  assert.deepEqual(workloadStyle(32), workloadStyle(0), 'then they repeat');
});

test('NoExecute: a red cell 3:1 against free cells, its white cross 3:1 against the red', () => {
  assert.ok(contrast(RED, FREE) >= 3, `red against a free cell: ${contrast(RED, FREE).toFixed(2)}`);
  assert.ok(contrast(RED, '#ffffff') >= 3, `the white cross against red: ${contrast(RED, '#ffffff').toFixed(2)}`);
  assert.equal(cssVar('red').toLowerCase(), RED.toLowerCase(), 'the legend\'s red is the map\'s');
});

test('free cells have a border 3:1 against the white around them', () => {
  assert.ok(contrast(FREE_BORDER, BACKGROUND) >= 3, `free border: ${contrast(FREE_BORDER, BACKGROUND).toFixed(2)}`);
  assert.ok(contrast(FREE_BORDER, FREE) >= 3, `free border against the cell: ${contrast(FREE_BORDER, FREE).toFixed(2)}`);
  assert.equal(cssVar('free').toLowerCase(), FREE.toLowerCase(), 'the legend\'s free cell is the map\'s');
  assert.equal(cssVar('free-border').toLowerCase(), FREE_BORDER.toLowerCase());
  assert.match(css, /\.swatch \{[^}]*border: 1px solid var\(--free-border\)/, 'swatches are framed as free cells are');
});

test('what is lit up has an edge 3:1 against white and against its amber', () => {
  assert.equal(cssVar('lit').toLowerCase(), HIGHLIGHT.toLowerCase());
  assert.equal(cssVar('lit-edge').toLowerCase(), HIGHLIGHT_EDGE.toLowerCase());
  assert.ok(contrast(HIGHLIGHT_EDGE, BACKGROUND) >= 3);
  assert.ok(contrast(HIGHLIGHT_EDGE, HIGHLIGHT) >= 3);
});

test('the focus ring is 3:1 against the page and is not the amber of what is lit up', () => {
  const focus = cssVar('focus');
  assert.equal(focus.toLowerCase(), FOCUS.toLowerCase());
  assert.match(css, /:focus-visible \{ outline: 3px solid var\(--focus\)/, 'the focus ring uses --focus');
  assert.doesNotMatch(css, /focus-visible[^}]*var\(--lit\)/, 'no focus ring in the lit-up amber');
  assert.notEqual(focus.toLowerCase(), HIGHLIGHT.toLowerCase());
  assert.ok(contrast(focus, '#ffffff') >= 3 && contrast(focus, cssVar('bg-soft')) >= 3, 'against white and the control bar');
  assert.ok(contrast(focus, HIGHLIGHT) >= 3, 'and tells itself apart from the amber');
});

test('natural order: digit runs compare as numbers, everywhere the page sorts names', () => {
  const nodes = Array.from({ length: 20 }, (_, i) => `gpu-r1-n${i + 1}`);
  const shuffled = nodes.slice().sort();
  assert.deepEqual(shuffled.slice(0, 4), ['gpu-r1-n1', 'gpu-r1-n10', 'gpu-r1-n11', 'gpu-r1-n12'], 'code-unit order, as the engine reports');
  assert.deepEqual(naturalSort(shuffled), nodes);
  assert.deepEqual(naturalSort(['rack-10', 'rack-2', 'rack-1']), ['rack-1', 'rack-2', 'rack-10']);
  assert.deepEqual(naturalSort(['train/llama-70b', 'serve/chat-10', 'serve/chat-9']), ['serve/chat-9', 'serve/chat-10', 'train/llama-70b']);
  assert.ok(naturalCompare('a', 'a') === 0);
  // Total: names that differ only by leading zeros or case still get an order, both ways.
  assert.ok(naturalCompare('n02', 'n2') !== 0 && Math.sign(naturalCompare('n02', 'n2')) === -Math.sign(naturalCompare('n2', 'n02')));
  assert.ok(naturalCompare('N2', 'n2') !== 0);
});
