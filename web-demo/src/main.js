// The playground's first cut: the demo cluster drawn from `Scheduler.snapshot()`,
// one cycle at a time, GPUs broken by clicking them, the clock advanced so NoExecute
// evictions play out, and the pending units explained. Every decision is the wasm
// module's (gangpack-wasm); this file only draws and forwards clicks.

import init, { Scheduler, demoManifests } from '../pkg/gangpack_wasm.js';

const TAINT = { key: 'gpu.nvidia.com/ecc', value: 'uncorrectable', effect: 'NoExecute' };
const CELL = 16;
const GAP = 3;
const NODE_LABEL = 78;

const canvas = document.getElementById('cluster');
const ctx = canvas.getContext('2d');
const $ = (id) => document.getElementById(id);

let session;
const history = [];
let hits = [];

function log(text) {
  const li = document.createElement('li');
  li.textContent = `${session.now().rfc3339}  ${text}`;
  $('timeline').prepend(li);
}

function hue(name) {
  let h = 2166136261;
  for (const c of name) h = Math.imul(h ^ c.codePointAt(0), 16777619);
  // Hues 30..320: reds are kept for NoExecute taints.
  return 30 + (Math.abs(h) % 290);
}

function cellColour(d) {
  if (d.state === 'unusable') return '#9aa0a6';
  if (d.holders.length === 0) return '#e8f0e8';
  const owner = d.holders[0].podGroup ?? d.holders[0].pods[0] ?? d.holders[0].claim;
  return `hsl(${hue(owner)} 55% 55%)`;
}

function drawCell(x, y, d) {
  ctx.fillStyle = cellColour(d);
  ctx.fillRect(x, y, CELL, CELL);
  const effects = new Set(d.taints.map((t) => t.effect));
  if (effects.has('NoSchedule')) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, CELL, CELL);
    ctx.clip();
    ctx.strokeStyle = '#333';
    ctx.lineWidth = 1;
    for (let k = -CELL; k < CELL; k += 5) {
      ctx.beginPath();
      ctx.moveTo(x + k, y + CELL);
      ctx.lineTo(x + k + CELL, y);
      ctx.stroke();
    }
    ctx.restore();
  }
  if (effects.has('NoExecute')) {
    ctx.strokeStyle = '#c5221f';
    ctx.lineWidth = 3;
    ctx.strokeRect(x + 1.5, y + 1.5, CELL - 3, CELL - 3);
    if (d.evictions.length > 0) {
      ctx.fillStyle = '#c5221f';
      ctx.fillRect(x + 4, y + 4, CELL - 8, CELL - 8);
    }
  } else if (effects.has('None')) {
    ctx.strokeStyle = '#1a73e8';
    ctx.lineWidth = 2;
    ctx.strokeRect(x + 1, y + 1, CELL - 2, CELL - 2);
  }
}

function draw() {
  const view = session.snapshot();
  const domains = view.domains;
  const width = canvas.parentElement.clientWidth;
  const rackWidth = NODE_LABEL + 8 * (CELL + GAP) + 24;
  const perRow = Math.max(1, Math.floor(width / rackWidth));
  const rackHeight = (n) => 22 + n * (CELL + GAP) + 16;
  const tallest = Math.max(...domains.map((d) => d.nodes.length));
  const rows = Math.ceil(domains.length / perRow);
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.floor(Math.min(width, perRow * rackWidth) * ratio);
  canvas.height = Math.floor(rows * rackHeight(tallest) * ratio);
  canvas.style.width = `${canvas.width / ratio}px`;
  canvas.style.height = `${canvas.height / ratio}px`;
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  ctx.font = '12px system-ui, sans-serif';
  hits = [];
  domains.forEach((domain, i) => {
    const ox = (i % perRow) * rackWidth;
    const oy = Math.floor(i / perRow) * rackHeight(tallest);
    ctx.fillStyle = '#202124';
    ctx.fillText(domain.name ?? '(no rack)', ox, oy + 14);
    domain.nodes.forEach((node, r) => {
      const y = oy + 22 + r * (CELL + GAP);
      ctx.fillStyle = node.taints.length ? '#c5221f' : '#5f6368';
      ctx.fillText(node.name, ox, y + CELL - 3);
      node.devices.forEach((d, c) => {
        const x = ox + NODE_LABEL + c * (CELL + GAP);
        drawCell(x, y, d);
        hits.push({ x, y, d });
      });
    });
  });
  $('clock').textContent = `clock ${view.now.rfc3339}`;
  return view;
}

function units(cycle) {
  const list = $('units');
  list.replaceChildren();
  for (const u of cycle.units) {
    const li = document.createElement('li');
    li.textContent = `${u.kind} ${u.name}: ${u.outcome}${u.reason ? ` (${u.reason})` : ''}`;
    li.className = u.outcome;
    list.append(li);
  }
  const pending = cycle.units.find((u) => u.outcome === 'pending');
  $('why').textContent = pending
    ? session.explain(pending.kind === 'PodGroup' ? { podGroup: pending.name } : { pod: pending.name }).text
    : 'Nothing is pending.';
}

function step() {
  history.push(session.fork());
  const cycle = session.cycle();
  for (const e of cycle.carriedOut ?? []) log(`evicted ${e.pod}`);
  const placed = cycle.units.filter((u) => u.outcome === 'placed' || u.outcome === 'preempted').length;
  log(`cycle: ${placed} of ${cycle.units.length} units placed`);
  units(cycle);
  draw();
}

canvas.addEventListener('click', (event) => {
  const rect = canvas.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  const hit = hits.find((h) => px >= h.x && px < h.x + CELL && py >= h.y && py < h.y + CELL);
  if (!hit) return;
  history.push(session.fork());
  const tainted = hit.d.taints.some((t) => t.key === TAINT.key);
  const report = tainted ? session.untaintDevice(hit.d.id, TAINT.key) : session.taintDevice(hit.d.id, TAINT);
  log(`${tainted ? 'untainted' : 'tainted'} ${hit.d.id}: ${report.started.length} evictions started, ${report.cancelled.length} cancelled`);
  for (const e of report.started) log(`  eviction of ${e.pod} at ${e.at.rfc3339}`);
  draw();
});

$('step').addEventListener('click', step);
$('advance').addEventListener('click', () => {
  history.push(session.fork());
  const r = session.advance(session.now().seconds + 300);
  for (const e of r.evictions) log(`evicted ${e.pod}`);
  draw();
});
$('undo').addEventListener('click', () => {
  const previous = history.pop();
  if (previous) {
    session.restore(previous);
    log('undo');
    draw();
  }
});
$('reset').addEventListener('click', () => {
  session = Scheduler.fromManifests(demoManifests(0));
  history.length = 0;
  $('timeline').replaceChildren();
  step();
});
window.addEventListener('resize', draw);

await init();
session = Scheduler.fromManifests(demoManifests(0));
step();
// For the end-to-end tests: the state the page draws, and where each GPU is drawn.
window.gangpackPlayground = {
  snapshot: () => session.snapshot(),
  cell: (id) => {
    const h = hits.find((x) => x.d.id === id);
    return h && { x: h.x, y: h.y, size: CELL };
  },
};
document.body.dataset.ready = 'true';
