// The answers side: metrics (and their chart), the explanation tree of a selected
// unit with the objects each fact names, the capacity report per domain and the
// timeline. Everything is read from the session's results; nothing is decided here.

import { NO_EXECUTE, NO_SCHEDULE, EFFECT_NONE, PALETTE, usedFraction } from './cluster-view.js';
import { naturalCompare } from './natural.js';

const h = (tag, attrs = {}, ...children) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c);
  return el;
};
export { h };

/**
 * The metrics of one snapshot: GPUs, allocation (shared devices by the fraction used),
 * fragmentation, pending gangs and pods, and GPUs held by gangs below minCount (held idle).
 *
 * Fragmentation is the share of the free GPUs that a pod of the largest one-pod shape
 * of the capacity report (1, 2, 4 or 8 GPUs) cannot use because too few are free on
 * their node, among the shapes that fit on some node at all: on 8-GPU nodes, free GPUs
 * no whole 8-GPU pod can use; on a cluster of one-GPU nodes the shape is one GPU and an
 * idle cluster is 0 % fragmented (a single free GPU is not stranded: nothing larger
 * could ever run there). `fragmentationShape` is that shape's GPUs per pod.
 */
export function metrics(cells, snap, capacity) {
  const devices = cells.domains.flatMap((d) => d.nodes.flatMap((n) => n.cells)).concat(cells.otherCells);
  let used = 0;
  for (const d of devices) used += usedFraction(d);
  const partial = new Set(snap.groups.filter((g) => g.minCount !== null && g.bound > 0 && g.bound < g.minCount).map((g) => g.name));
  const idle = devices.filter((d) => (d.owner !== null && partial.has(d.owner)) || d.shares.some(([o]) => partial.has(o))).length;
  const largestNode = Math.max(0, ...cells.domains.flatMap((d) => d.nodes.map((n) => n.cells.length)));
  const fits = (i) => capacity.shapes[i].pods === 1 && capacity.shapes[i].devicesPerPod <= largestNode;
  const k = capacity?.totals ? capacity.totals.findLastIndex((_, i) => fits(i)) : -1;
  const whole = k >= 0 ? capacity.totals[k] : null;
  return {
    gpus: devices.length,
    allocated: used,
    allocation: devices.length ? (100 * used) / devices.length : 0,
    fragmentation: whole && whole.free ? (100 * whole.fragmentation) / whole.free : 0,
    fragmentationShape: k >= 0 ? capacity.shapes[k].devicesPerPod : null,
    pendingGangs: snap.groups.filter((g) => g.minCount !== null && g.status !== 'running').length,
    pendingPods: snap.pods.filter((p) => p.status === 'pending').length,
    idleHeld: idle,
    evictions: snap.evictions.length,
    now: snap.now.seconds,
  };
}

/** GPU-hours held idle so far: the integral of `idleHeld` over the logical clock. */
export function idleHours(series) {
  let total = 0;
  for (let i = 1; i < series.length; i++) total += (series[i - 1].idleHeld * Math.max(0, series[i].now - series[i - 1].now)) / 3600;
  return total;
}

/** The metric cards. `runs` is `[{ label, series }]` (one per session side by side). */
export function renderMetrics(el, runs) {
  el.replaceChildren();
  for (const run of runs) {
    const m = run.series.at(-1);
    if (!m) continue;
    const card = (label, value, hint) => h('div', { class: 'metric', title: hint }, h('span', { class: 'value' }, value), h('span', { class: 'label' }, label));
    el.append(h('div', { class: 'metric-row', role: 'group', 'aria-label': `Metrics${run.label ? ` of ${run.label}` : ''}` },
      run.label ? h('strong', { class: 'run-label' }, run.label) : null,
      card('GPUs allocated', `${m.allocation.toFixed(1)} %`, `${m.allocated.toFixed(1)} of ${m.gpus} GPUs (shared GPUs by the fraction used)`),
      card(m.fragmentationShape ? `fragmentation (${m.fragmentationShape}-GPU pods)` : 'fragmentation', `${m.fragmentation.toFixed(1)} %`, fragmentationAbout(m)),
      card('pending gangs', String(m.pendingGangs), `${m.pendingPods} pending pod(s) in all`),
      card('GPU-hours held idle', idleHours(run.series).toFixed(2), `GPUs held by gangs below minCount, over the logical clock (now ${m.idleHeld})`),
    ));
  }
}

/** What the fragmentation figure measures, in words (the metric card's title and the legend under the chart). */
export function fragmentationAbout(m) {
  if (!m?.fragmentationShape) return 'Fragmentation: no GPU is free, or no node has GPUs.';
  const n = m.fragmentationShape;
  if (n === 1) return 'Fragmentation: no node here has more than one GPU, so any free GPU can run a 1-GPU pod: 0 %.';
  const a = /^(8|11|18)/.test(String(n)) ? 'an' : 'a';
  return `Fragmentation: the share of the free GPUs that ${a} ${n}-GPU pod cannot use because fewer than ${n} are free on their node. `
    + `${n} GPUs is the largest of the 1-, 2-, 4- and 8-GPU one-pod shapes that a node here can hold; 0 % means every free GPU is usable by it.`;
}

/** A small line chart of allocation % (solid) and fragmentation % (dashed) per step. */
export function renderChart(canvas, runs) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 300;
  const ht = canvas.clientHeight || 110;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(ht * ratio);
  const ctx = canvas.getContext('2d');
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, w, ht);
  const left = 30;
  const bottom = ht - 16;
  ctx.strokeStyle = '#dadce0';
  ctx.fillStyle = '#5f6368';
  ctx.font = '10px system-ui, sans-serif';
  for (const p of [0, 50, 100]) {
    const y = bottom - (p / 100) * (bottom - 6);
    ctx.beginPath();
    ctx.moveTo(left, y);
    ctx.lineTo(w - 4, y);
    ctx.stroke();
    ctx.fillText(`${p}%`, 2, y + 3);
  }
  const n = Math.max(2, ...runs.map((r) => r.series.length));
  ctx.fillText('step', w - 28, ht - 3);
  runs.forEach((run, k) => {
    const colour = PALETTE[k];
    for (const [field, dash] of [['allocation', []], ['fragmentation', [4, 3]]]) {
      ctx.setLineDash(dash);
      ctx.strokeStyle = colour;
      ctx.lineWidth = 2;
      ctx.beginPath();
      run.series.forEach((m, i) => {
        const x = left + (i / (n - 1)) * (w - left - 6);
        const y = bottom - (m[field] / 100) * (bottom - 6);
        if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      ctx.stroke();
    }
  });
  ctx.setLineDash([]);
  const last = runs.map((r) => r.series.at(-1)).filter(Boolean);
  canvas.setAttribute('aria-label', `Chart over ${n - 1} steps: ${runs.map((r, i) => `${r.label ? `${r.label}: ` : ''}allocation ${last[i]?.allocation.toFixed(1)} %, fragmentation ${last[i]?.fragmentation.toFixed(1)} %`).join('; ')}`);
}

const EFFECT_BITS = { NoSchedule: NO_SCHEDULE, NoExecute: NO_EXECUTE, None: EFFECT_NONE };

/**
 * What a fact names on the cluster view: devices, nodes and domains to light up.
 * `cells` is `Scheduler.cells()`; `device(id)` the session's full record of a device
 * (asked only for tainted devices on the fact's nodes, to match the taint's key).
 */
export function factTargets(fact, cells, device) {
  const [kind, body] = Object.entries(fact)[0] ?? [];
  const out = { devices: [], nodes: [], domains: [] };
  if (!body || typeof body !== 'object') return out;
  const nodes = Array.isArray(body.nodes) ? body.nodes : [];
  const byName = new Map(cells.domains.flatMap((d) => d.nodes).map((n) => [n.name, n]));
  if (kind === 'deviceTaint' && body.taint) {
    const t = body.taint;
    const bit = EFFECT_BITS[t.effect] ?? 16;
    for (const n of nodes) for (const c of byName.get(n)?.cells ?? []) {
      if (!(c.taints & bit)) continue;
      if (device(c.id).taints.some((x) => x.key === t.key && x.effect === t.effect && (x.value ?? '') === (t.value ?? ''))) out.devices.push(c.id);
    }
  } else if (kind === 'devicesInUse') {
    for (const n of nodes) for (const c of byName.get(n)?.cells ?? []) if (c.holders) out.devices.push(c.id);
  } else {
    out.nodes.push(...nodes);
  }
  if (typeof body.domain === 'string') out.domains.push(body.domain);
  return out;
}

export function mergeTargets(list) {
  const out = { devices: [], nodes: [], domains: [] };
  for (const t of list) for (const k of Object.keys(out)) out[k].push(...t[k]);
  return out;
}

/**
 * The explanation as a tree (the text's own structure: `├─` / `│  ` indentation),
 * each numbered fact a button that lights its objects up; the blocking facts marked.
 */
export function renderExplanation(el, result, cells, device, onHighlight) {
  const e = result.explanation;
  const blocking = new Set(e.blocking.map((i) => i + 1));
  // The verdict's line leads the text; it is drawn on its own (renderVerdict).
  const text = result.verdict?.pending && result.text.startsWith(`${result.verdict.text}\n`)
    ? result.text.slice(result.verdict.text.length + 1)
    : result.text;
  const lines = text.split('\n').filter((l) => l.trim());
  const root = h('ul', { class: 'tree', role: 'tree', 'aria-label': 'Explanation' });
  const stack = [{ depth: -1, list: root }];
  for (const line of lines) {
    const m = /^((?:[│ ] {2}|[├└]─ )*)(.*)$/u.exec(line);
    const prefix = m?.[1] ?? '';
    const depth = prefix.length / 3;
    const body = m?.[2] ?? line;
    while (stack.length > 1 && stack.at(-1).depth >= depth) stack.pop();
    const parent = stack.at(-1);
    const fact = /^\[(\d+)\]\s/.exec(body);
    const item = h('li', { role: 'treeitem' });
    if (fact) {
      const n = Number(fact[1]);
      const targets = factTargets(e.facts[n - 1] ?? {}, cells, device);
      const b = h('button', {
        type: 'button',
        class: `fact${blocking.has(n) ? ' blocking' : ''}`,
        'aria-label': `${blocking.has(n) ? 'Blocking fact' : 'Fact'} ${n}: ${body.slice(fact[0].length)}. Show on the cluster.`,
        onclick: () => onHighlight(targets),
      }, body);
      item.append(b);
      if (blocking.has(n)) item.append(h('span', { class: 'badge' }, 'blocking'));
    } else {
      item.append(h('span', {}, body));
    }
    const sub = h('ul', { role: 'group' });
    item.append(sub);
    parent.list.append(item);
    stack.push({ depth, list: sub });
  }
  for (const u of root.querySelectorAll('ul')) if (!u.children.length) u.remove();
  el.replaceChildren(root);
  return mergeTargets(e.blocking.map((i) => factTargets(e.facts[i] ?? {}, cells, device)));
}

/**
 * The verdict: what would get the unit placed, one item per help, in the core's words
 * (the same as the first line of `gangpack explain`).
 */
export function renderVerdict(el, verdict) {
  if (!verdict.pending) {
    el.replaceChildren(h('p', {}, 'Nothing of it is pending.'));
    return;
  }
  if (!verdict.lines.length) {
    el.replaceChildren(h('p', {}, 'Nothing found that would help.'));
    return;
  }
  el.replaceChildren(h('ul', { class: 'helps' }, ...verdict.lines.map((l) => h('li', {}, l))));
}

/** The capacity report as a table: one row per domain, one column per shape. */
export function renderCapacity(el, report) {
  const head = h('tr', {}, h('th', { scope: 'col' }, report.key ?? 'cluster'), h('th', { scope: 'col' }, 'nodes'), h('th', { scope: 'col' }, 'free GPUs'),
    ...report.labels.map((l) => h('th', { scope: 'col', title: `whole copies of ${l} that fit now` }, l)));
  const row = (name, d) => h('tr', {}, h('th', { scope: 'row' }, name), h('td', {}, `${d.nodes}${d.cordoned ? ` (${d.cordoned} cordoned)` : ''}`),
    h('td', {}, String(d.shapes[0]?.free ?? 0)), ...d.shapes.map((s) => h('td', { title: `${s.pods} pod(s); ${s.fragmentation} free GPUs stranded for this shape` }, String(s.copies))));
  const name = (d) => (d.domain === 'unlabelled' ? null : d.domain.value);
  const domains = report.domains.slice().sort((a, b) => (name(a) === null) - (name(b) === null) || naturalCompare(name(a), name(b)));
  const body = h('tbody', {}, ...domains.map((d) => row(name(d) ?? '(unlabelled)', d)));
  const foot = h('tfoot', {}, row('total', { nodes: report.nodes, cordoned: report.cordoned, shapes: report.totals }));
  el.replaceChildren(h('table', { class: 'capacity' }, h('caption', {}, 'Whole copies of each shape the free GPUs can host now'), h('thead', {}, head), body, foot));
}

const ICON = {
  cycle: '⟳', placed: '✔', pending: '…', preemption: '⇣', eviction: '✖', 'eviction-scheduled': '⏱', 'eviction-cancelled': '↺',
  'gang-broken': '⚠', taint: '⚠', untaint: '✓', rule: '§', submit: '+', remove: '−', clock: '⏩', recreated: '↻', error: '!', load: '▶',
};

/** The timeline (the latest `max` events), newest action first. */
export function renderTimeline(el, entries, max = 400) {
  // Newest action first; the events of one action in the order they happened.
  const shown = entries.slice(-max);
  const ordered = [];
  for (let i = shown.length; i > 0;) {
    let j = i - 1;
    while (j > 0 && shown[j - 1].step === shown[i - 1].step) j--;
    ordered.push(...shown.slice(j, i));
    i = j;
  }
  el.replaceChildren(...ordered.map((e) => h('li', { class: `ev ev-${e.kind}` },
    h('span', { class: 'icon', 'aria-hidden': 'true' }, ICON[e.kind] ?? '•'),
    h('time', {}, e.time.replace('T', ' ').replace('Z', '')),
    h('span', { class: 'text' }, `${e.label ? `[${e.label}] ` : ''}${e.text}`))));
}
