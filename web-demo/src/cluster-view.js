// The cluster view: a canvas that draws `Scheduler.snapshot()` as topology domains
// (optionally grouped once more, e.g. blocks around racks) → nodes → GPU cells, with
// zoom and pan, hit testing, keyboard focus and highlighting. Only what is on screen
// is drawn, so 1,000 nodes × 8 GPUs stay smooth.
//
// Cell encoding (every state has a pattern as well as a colour):
//   free       pale, thin border
//   allocated  filled with its PodGroup's colour (pod's colour for plain pods)
//   shared     filled from the bottom by the fraction of capacity consumed
//   blocked    grey with a bar (free, but its partitions use up the counters)
//   unusable   grey with a dotted cross
//   NoSchedule black diagonal hatching
//   NoExecute  red, a white cross; a countdown while an eviction is pending
//   None       dashed blue outline

import { naturalCompare } from './natural.js';
import { BACKGROUND, FREE, FREE_BORDER, HIGHLIGHT, HIGHLIGHT_EDGE, WORKLOAD_COLOURS, fillStyle, workloadStyle } from './palette.js';

export const CELL = 16;
const GAP = 3;
const LABEL = 86;
const PAD = 8;
const HEADER = 22;
const GROUP_HEADER = 22;
/** Screen pixels of a domain's name band on an overview (its header grows to hold it). */
const OVERVIEW_LABEL = 15;
/** The least zoom a small cluster opens at (names about 10 px high), up to 2.5 screen widths. */
const READABLE = 0.9;

// The colours and patterns (src/palette.js): workloads by colour and, past eight, a
// white mark; free cells pale with a 3:1 border; what is lit up amber with a dark edge.
export const PALETTE = WORKLOAD_COLOURS;
export const RED = '#C5221F';
export { HIGHLIGHT };

/** Swatch images by style (data: URLs), drawn once. */
const swatches = new Map();

/** The owner a holder is coloured by: its PodGroup, else its pod, else its claim (as `cells()` names it). */
export function owner(holder) {
  return holder.podGroup ?? holder.pods[0] ?? holder.claim;
}

/** The share of a device in use, from its cell: 1 allocated, the shares' sum when shared, else 0. */
export function usedFraction(cell) {
  if (cell.state === 'allocated') return 1;
  if (cell.state === 'shared') return Math.min(1, cell.shares.reduce((t, [, f]) => t + f, 0));
  return 0;
}

/** Effect bits of `cells()`. */
export const NO_SCHEDULE = 1;
export const NO_EXECUTE = 2;
export const EFFECT_NONE = 4;

const SUFFIX = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12 };

/** A Kubernetes quantity as a number (enough for ratios). */
export function quantity(q) {
  const m = /^([0-9.]+)([A-Za-z]*)$/.exec(String(q).trim());
  if (!m) return 0;
  return Number(m[1]) * (SUFFIX[m[2]] ?? 1);
}

export function duration(seconds) {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
}

/** A node label key that groups the domains once more (blocks around racks), if any. */
function outerKey(domains, key) {
  if (!key || domains.length < 2) return null;
  const keys = new Map();
  for (const d of domains) {
    const seen = new Map();
    for (const n of d.nodes) for (const [k, v] of Object.entries(n.labels)) {
      if (k === key) continue;
      seen.set(k, seen.has(k) && seen.get(k) !== v ? null : v);
    }
    for (const [k, v] of seen) {
      if (v === null || d.nodes.some((n) => !(k in n.labels))) { keys.set(k, null); continue; }
      if (!keys.has(k)) keys.set(k, new Set());
      keys.get(k)?.add(v);
    }
  }
  const fits = [...keys].filter(([k, vs]) => vs && vs.size >= 2 && vs.size < domains.length && !k.startsWith('kubernetes.io/'));
  fits.sort((a, b) => rank(a[0]) - rank(b[0]) || a[1].size - b[1].size);
  return fits[0]?.[0] ?? null;
}

/**
 * How many domains side by side: as many as fit at 1:1 for small clusters; for large
 * ones (an overview), the count that lets the whole cluster fit the canvas largest,
 * with that zoom (`scale`; null when not an overview).
 */
function columns(snap, viewWidth, viewHeight, domainWidth, domainHeight) {
  const n = snap.domains.length;
  const natural = Math.max(1, Math.floor((viewWidth - 2 * PAD) / (domainWidth + GAP)));
  const cells = snap.domains.reduce((k, d) => k + d.nodes.reduce((j, x) => j + x.cells.length, 0), 0);
  if (cells <= 2000 || n <= natural) return { perRow: natural, scale: null };
  const tallest = Math.max(...snap.domains.map(domainHeight)) + GAP;
  let best = natural;
  let bestScale = 0;
  for (let c = 1; c <= n; c++) {
    const scale = Math.min(viewWidth / (c * (domainWidth + GAP) + 2 * PAD), viewHeight / (Math.ceil(n / c) * tallest));
    if (scale > bestScale) { bestScale = scale; best = c; }
  }
  return { perRow: best, scale: bestScale };
}

function rank(k) {
  if (/block|spine|pod|superpod/i.test(k)) return 0;
  if (/zone/i.test(k)) return 1;
  return 2;
}

export class ClusterView {
  /**
   * @param {HTMLCanvasElement} canvas
   * @param {{ onActivate?: (hit: object) => void, onFocus?: (hit: object|null) => void, label?: string }} hooks
   */
  constructor(canvas, hooks = {}) {
    this.canvas = canvas;
    this.ctx = canvas.getContext('2d');
    this.hooks = hooks;
    this.scale = 1;
    this.tx = 0;
    this.ty = 0;
    this.layout = { groups: [], domains: [], cells: [], width: 0, height: 0, header: HEADER };
    this.colours = new Map();
    this.highlight = { devices: new Set(), nodes: new Set(), domains: new Set(), dim: false };
    this.selected = null;
    this.focusIndex = -1;
    this.hover = null;
    this.snapshot = null;
    this.pending = false;
    this.fitted = false;
    this.bind();
  }

  /**
   * A workload's style (`{ colour, pattern }`, src/palette.js), assigned as workloads
   * appear (PodGroups, then lone pods, in natural order: see update), so a reload draws
   * the same picture.
   */
  styleOf(name) {
    if (!this.colours.has(name)) this.colours.set(name, workloadStyle(this.colours.size));
    return this.colours.get(name);
  }

  /** A workload's colour. */
  colour(name) {
    return this.styleOf(name).colour;
  }

  /** A CSS background drawing a workload's swatch as the map draws its cells. */
  swatchCss(name) {
    const style = this.styleOf(name);
    if (style.pattern === 'solid') return `background:${style.colour}`;
    const key = `${style.colour}/${style.pattern}`;
    if (!swatches.has(key)) {
      const c = document.createElement('canvas');
      c.width = 32;
      c.height = 32;
      fillStyle(c.getContext('2d'), style, 0, 0, 32, 32);
      swatches.set(key, c.toDataURL());
    }
    return `background:${style.colour} url(${swatches.get(key)}) center / cover`;
  }

  /**
   * Sets what to draw — `cells()` and a device-less `snapshot()` of the same state
   * (node labels, groups, pods) — then lays it out and draws (synchronously, so
   * callers can time it).
   */
  update(snapshot, cells) {
    this.snapshot = snapshot;
    this.cells = cells;
    this.labels = new Map(snapshot.domains.flatMap((d) => d.nodes).map((n) => [n.name, n.labels]));
    // PodGroups first (the gangs: the big blocks of the map get the plain colours), then
    // lone pods, each in natural order.
    const fresh = (names) => names.filter((n) => !this.colours.has(n)).sort(naturalCompare);
    for (const g of fresh(snapshot.groups.map((x) => x.name))) this.styleOf(g);
    for (const p of fresh(snapshot.pods.filter((x) => !x.podGroup).map((x) => x.name))) this.styleOf(p);
    this.relayout();
    if (!this.fitted) { this.fit(); this.fitted = true; }
    this.draw();
  }

  relayout() {
    const snap = this.cells;
    if (!snap) return;
    const viewWidth = Math.max(320, this.canvas.clientWidth);
    const maxDevices = Math.max(1, ...snap.domains.flatMap((d) => d.nodes.map((n) => n.cells.length)));
    const domainWidth = PAD * 2 + LABEL + maxDevices * (CELL + GAP);
    // On an overview, the header grows to hold the domain's name at a readable size.
    let header = HEADER;
    const domainHeight = (d) => header + d.nodes.length * (CELL + GAP) + PAD;
    const key = outerKey(this.snapshot.domains, snap.topologyKey);
    const groups = new Map();
    // Natural order (rack-2 before rack-10, n2 before n10), the unlabelled last; the
    // engine reports names in code-unit order.
    const sorted = snap.domains.slice().sort((a, b) => (a.name === null) - (b.name === null) || naturalCompare(a.name, b.name));
    const byDomain = new Map(sorted.map((d) => [d, d.nodes.slice().sort((a, b) => naturalCompare(a.name, b.name))]));
    const nodesOf = (d) => byDomain.get(d);
    for (const d of sorted) {
      const value = key ? this.labels.get(nodesOf(d)[0]?.name)?.[key] ?? null : null;
      if (!groups.has(value)) groups.set(value, []);
      groups.get(value).push(d);
    }
    const viewHeight = Math.max(200, this.canvas.clientHeight);
    let { perRow, scale } = columns(snap, viewWidth, viewHeight, domainWidth, domainHeight);
    if (scale) {
      header = Math.max(HEADER, OVERVIEW_LABEL / scale);
      ({ perRow } = columns(snap, viewWidth, viewHeight, domainWidth, domainHeight));
    }
    const layoutGroups = [];
    const domains = [];
    const cells = [];
    let y = 0;
    let width = 0;
    const ordered = [...groups].sort(([a], [b]) => (a === null) - (b === null) || naturalCompare(a, b));
    for (const [value, list] of ordered) {
      const gy = y;
      if (key) y += GROUP_HEADER;
      for (let i = 0; i < list.length; i += perRow) {
        const row = list.slice(i, i + perRow);
        const h = Math.max(...row.map(domainHeight));
        row.forEach((d, j) => {
          const x = PAD + j * (domainWidth + GAP);
          const box = { domain: d, name: d.name, x, y, w: domainWidth, h: domainHeight(d), nodes: [] };
          nodesOf(d).forEach((n, r) => {
            const ny = y + header + r * (CELL + GAP);
            const nodeBox = { node: n, x: x + PAD, y: ny, w: domainWidth - 2 * PAD, h: CELL, first: cells.length };
            n.cells.forEach((dev, c) => {
              cells.push({ device: dev, node: n, domain: d, x: x + PAD + LABEL + c * (CELL + GAP), y: ny });
            });
            nodeBox.last = cells.length;
            box.nodes.push(nodeBox);
          });
          domains.push(box);
          width = Math.max(width, x + domainWidth + PAD);
        });
        y += h + GAP;
      }
      if (key) layoutGroups.push({ key, value, y: gy, h: y - gy, w: 0 });
      y += key ? PAD : 0;
    }
    for (const g of layoutGroups) g.w = width;
    this.layout = { groups: layoutGroups, domains, cells, width, height: y + PAD, header };
    if (this.focusIndex >= cells.length) this.focusIndex = cells.length - 1;
  }

  /**
   * Zooms to fit: the whole cluster when it is large (an overview), else the width
   * at a readable size (the rest is a drag away), never above 2:1.
   */
  fit() {
    const w = this.canvas.clientWidth || 800;
    const h = this.canvas.clientHeight || 600;
    const { width, height, cells } = this.layout;
    const fitWidth = Math.min(2, w / Math.max(1, width));
    const fitAll = Math.min(fitWidth, h / Math.max(1, height));
    this.scale = Math.max(0.05, cells.length > 2000 ? fitAll : Math.max(fitAll, fitWidth * 0.75));
    // A small cluster on a narrow screen (a phone) is never shrunk below a readable
    // zoom: node names and partition cells stay legible, and a drag pans sideways.
    if (cells.length <= 2000) this.scale = Math.max(this.scale, Math.min(READABLE, fitWidth * 2.5));
    this.tx = Math.max(0, (w - width * this.scale) / 2);
    this.ty = 0;
  }

  zoom(factor, cx = this.canvas.clientWidth / 2, cy = this.canvas.clientHeight / 2) {
    const s = Math.min(6, Math.max(0.05, this.scale * factor));
    this.tx = cx - ((cx - this.tx) * s) / this.scale;
    this.ty = cy - ((cy - this.ty) * s) / this.scale;
    this.scale = s;
    this.requestDraw();
  }

  pan(dx, dy) {
    this.tx += dx;
    this.ty += dy;
    this.requestDraw();
  }

  /** Draws in the next frame, unless a synchronous draw comes first. */
  requestDraw() {
    this.dirty = true;
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      if (this.dirty) this.draw();
    });
  }

  /** Lights up devices, nodes and domains; with `dim`, everything else steps back. */
  setHighlight(h) {
    this.highlight = {
      devices: new Set(h?.devices ?? []),
      nodes: new Set(h?.nodes ?? []),
      domains: new Set(h?.domains ?? []),
      dim: h?.dim ?? true,
    };
    this.requestDraw();
  }

  setSelected(ownerName) {
    this.selected = ownerName;
    this.requestDraw();
  }

  /** Where a device is drawn, in CSS pixels relative to the canvas (for tests and tooltips). */
  cellRect(id) {
    const c = this.layout.cells.find((x) => x.device.id === id);
    if (!c) return null;
    return { x: this.tx + c.x * this.scale, y: this.ty + c.y * this.scale, size: CELL * this.scale };
  }

  /** Where a node's name is drawn, in CSS pixels relative to the canvas (for tests). */
  nodeRect(name) {
    for (const box of this.layout.domains) {
      const nb = box.nodes.find((x) => x.node.name === name);
      if (nb) return { x: this.tx + (nb.x + 2) * this.scale, y: this.ty + nb.y * this.scale, size: CELL * this.scale };
    }
    return null;
  }

  /** Where a domain's box is drawn, in CSS pixels relative to the canvas (for tests). */
  domainRect(name) {
    const box = this.layout.domains.find((b) => b.name === name);
    if (!box) return null;
    return { x: this.tx + box.x * this.scale, y: this.ty + box.y * this.scale, w: box.w * this.scale, h: box.h * this.scale };
  }

  /** Scrolls a cell into view at a readable zoom. */
  reveal(index) {
    const c = this.layout.cells[index];
    if (!c) return;
    if (this.scale < 0.8) this.scale = 1;
    const w = this.canvas.clientWidth;
    const h = this.canvas.clientHeight;
    const x = this.tx + c.x * this.scale;
    const y = this.ty + c.y * this.scale;
    if (x < 0 || x > w - CELL * this.scale || y < 0 || y > h - CELL * this.scale) {
      this.tx = w / 2 - c.x * this.scale;
      this.ty = h / 2 - c.y * this.scale;
    }
  }

  /** What is under a point in CSS pixels: a cell, a node label or a domain header. */
  hitAt(px, py) {
    const x = (px - this.tx) / this.scale;
    const y = (py - this.ty) / this.scale;
    for (const box of this.layout.domains) {
      if (x < box.x || x >= box.x + box.w || y < box.y || y >= box.y + box.h) continue;
      if (y < box.y + this.layout.header) return { kind: 'domain', domain: box.domain };
      for (const nb of box.nodes) {
        if (y < nb.y || y >= nb.y + CELL + GAP) continue;
        for (let i = nb.first; i < nb.last; i++) {
          const c = this.layout.cells[i];
          if (x >= c.x && x < c.x + CELL + GAP / 2) return { kind: 'device', device: c.device, node: c.node, domain: c.domain, index: i };
        }
        return { kind: 'node', node: nb.node, domain: box.domain };
      }
      return { kind: 'domain', domain: box.domain };
    }
    return null;
  }

  draw() {
    this.dirty = false;
    const { canvas, ctx } = this;
    const ratio = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    if (canvas.width !== Math.round(w * ratio) || canvas.height !== Math.round(h * ratio)) {
      canvas.width = Math.round(w * ratio);
      canvas.height = Math.round(h * ratio);
    }
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    if (!this.cells) return;
    ctx.setTransform(ratio * this.scale, 0, 0, ratio * this.scale, ratio * this.tx, ratio * this.ty);
    const x0 = -this.tx / this.scale;
    const y0 = -this.ty / this.scale;
    const x1 = x0 + w / this.scale;
    const y1 = y0 + h / this.scale;
    const visible = (x, y, bw, bh) => x + bw >= x0 && x <= x1 && y + bh >= y0 && y <= y1;
    const text = this.scale >= 0.45;
    const now = this.cells.now.seconds;
    ctx.textBaseline = 'middle';
    for (const g of this.layout.groups) {
      if (!visible(0, g.y, g.w, g.h)) continue;
      ctx.fillStyle = '#f1f3f4';
      ctx.fillRect(0, g.y, g.w, g.h);
      if (text) {
        ctx.fillStyle = '#3c4043';
        ctx.font = 'bold 13px system-ui, sans-serif';
        ctx.fillText(`${g.key}=${g.value ?? '(none)'}`, PAD, g.y + GROUP_HEADER / 2);
      }
    }
    for (const box of this.layout.domains) {
      if (!visible(box.x, box.y, box.w, box.h)) continue;
      const lit = this.highlight.domains.has(box.name);
      ctx.fillStyle = lit ? '#fef7e0' : BACKGROUND;
      ctx.fillRect(box.x, box.y, box.w, box.h);
      if (lit) {
        litFrame(ctx, box.x + 1.5, box.y + 1.5, box.w - 3, box.h - 3, 3, 1);
      } else {
        ctx.lineWidth = 1;
        ctx.strokeStyle = '#dadce0';
        ctx.strokeRect(box.x + 0.5, box.y + 0.5, box.w - 1, box.h - 1);
      }
      if (text) {
        ctx.fillStyle = '#202124';
        ctx.font = 'bold 12px system-ui, sans-serif';
        const devs = box.domain.nodes.flatMap((n) => n.cells);
        const used = devs.filter((d) => d.state !== 'free').length;
        ctx.fillText(`${box.name ?? '(no domain)'}  ·  ${used}/${devs.length} devices in use`, box.x + PAD, box.y + this.layout.header / 2 + 1);
      }
      for (const nb of box.nodes) {
        if (!visible(nb.x, nb.y, nb.w, CELL)) continue;
        const n = nb.node;
        if (this.highlight.nodes.has(n.name)) {
          ctx.fillStyle = '#fde293';
          ctx.fillRect(nb.x - 2, nb.y - 1, nb.w + 4, CELL + 2);
        }
        if (text) {
          ctx.font = '11px system-ui, sans-serif';
          ctx.fillStyle = n.taints || n.unschedulable ? RED : '#5f6368';
          const mark = n.unschedulable ? '⊘ ' : n.taints ? '⚠ ' : '';
          ctx.fillText(clip(ctx, mark + n.name, LABEL - 6), nb.x, nb.y + CELL / 2 + 1);
        }
        for (let i = nb.first; i < nb.last; i++) this.drawCell(this.layout.cells[i], now, text);
      }
    }
    if (!text) this.drawOverview(visible);
    if (this.focusIndex >= 0 && document.activeElement === canvas) {
      const c = this.layout.cells[this.focusIndex];
      if (c) {
        ctx.lineWidth = 2.5;
        ctx.strokeStyle = '#000';
        ctx.strokeRect(c.x - 2.5, c.y - 2.5, CELL + 5, CELL + 5);
        ctx.strokeStyle = '#fff';
        ctx.lineWidth = 1;
        ctx.strokeRect(c.x - 4, c.y - 4, CELL + 8, CELL + 8);
      }
    }
  }

  /**
   * Zoomed out (an overview, where names are too small to draw at their size): the
   * racks' names at a readable size, and what is lit up marked at a size that shows —
   * a lit node as an amber bar where its name would be, a lit GPU and a lit rack with
   * frames a few screen pixels wide, whatever the zoom.
   */
  drawOverview(visible) {
    const { ctx } = this;
    const px = 1 / this.scale;
    const hl = this.highlight;
    for (const box of this.layout.domains) {
      if (!visible(box.x, box.y, box.w, box.h)) continue;
      for (const nb of box.nodes) {
        if (!hl.nodes.has(nb.node.name)) continue;
        const hgt = Math.max(CELL, 5 * px);
        litFrame(ctx, nb.x, nb.y + CELL / 2 - hgt / 2, LABEL - 8, hgt, 0, px, true);
      }
      if (hl.domains.has(box.name)) litFrame(ctx, box.x + 2 * px, box.y + 2 * px, box.w - 4 * px, box.h - 4 * px, 4 * px, px);
    }
    if (hl.devices.size && hl.devices.size <= 256) {
      for (const c of this.layout.cells) {
        if (!hl.devices.has(c.device.id) || !visible(c.x, c.y, CELL, CELL)) continue;
        const wd = Math.max(3, 2 * px);
        litFrame(ctx, c.x - wd / 2, c.y - wd / 2, CELL + wd, CELL + wd, wd, px);
      }
    }
    // The names last, over the marks. A name too wide for its box is drawn smaller,
    // then without the prefix every domain shares (rack-12 → 12), then clipped.
    ctx.textBaseline = 'middle';
    const names = this.layout.domains.map((b) => b.name ?? '');
    let prefix = names[0] ?? '';
    for (const n of names) while (!n.startsWith(prefix)) prefix = prefix.slice(0, -1);
    prefix = prefix.replace(/[0-9]+$/, '');
    const label = (text, x, y, maxWidth) => {
      let size = 11;
      ctx.font = `600 ${size * px}px system-ui, sans-serif`;
      let t = text;
      if (ctx.measureText(t).width > maxWidth - 6 * px) {
        size = 9;
        ctx.font = `600 ${size * px}px system-ui, sans-serif`;
      }
      if (ctx.measureText(t).width > maxWidth - 6 * px && prefix && t.startsWith(prefix) && t.length > prefix.length) t = t.slice(prefix.length);
      t = clip(ctx, t, maxWidth - 6 * px);
      const tw = ctx.measureText(t).width;
      ctx.fillStyle = 'rgba(255, 255, 255, 0.88)';
      ctx.fillRect(x, y, tw + 6 * px, (size + 4) * px);
      ctx.fillStyle = '#202124';
      ctx.fillText(t, x + 3 * px, y + ((size + 4) / 2) * px);
    };
    for (const g of this.layout.groups) {
      if (visible(0, g.y, g.w, g.h)) label(`${g.key}=${g.value ?? '(none)'}`, PAD, g.y, g.w);
    }
    for (const box of this.layout.domains) {
      if (visible(box.x, box.y, box.w, box.h)) label(box.name ?? '(no domain)', box.x + px, box.y + px, box.w - 2 * px);
    }
  }

  drawCell(c, now, text) {
    const { ctx } = this;
    const d = c.device;
    const { x, y } = c;
    const effects = d.taints;
    ctx.fillStyle = FREE;
    ctx.fillRect(x, y, CELL, CELL);
    if (d.state === 'blocked') {
      // Free, but its partitions' shared counters are used up: one bar across.
      ctx.fillStyle = '#d5dbd5';
      ctx.fillRect(x, y, CELL, CELL);
      line(ctx, x + 2, y + CELL / 2, x + CELL - 2, y + CELL / 2, '#5f6368', 2);
    } else if (d.state === 'unusable') {
      ctx.fillStyle = '#9aa0a6';
      ctx.fillRect(x, y, CELL, CELL);
      ctx.setLineDash([2, 2]);
      line(ctx, x + 2, y + 2, x + CELL - 2, y + CELL - 2, '#fff', 1);
      line(ctx, x + CELL - 2, y + 2, x + 2, y + CELL - 2, '#fff', 1);
      ctx.setLineDash([]);
    } else if (d.holders > 0) {
      if (d.state === 'shared') {
        // One stacked segment per share, from the bottom, split by white lines.
        let top = y + CELL;
        for (const [holder, f] of d.shares) {
          const hgt = CELL * f;
          fillStyle(ctx, this.styleOf(holder), x, top - hgt, CELL, hgt, { x, y, size: CELL });
          top -= hgt;
          line(ctx, x, top, x + CELL, top, '#ffffff', 1.5);
        }
        line(ctx, x, top, x + CELL, top, '#202124', 1);
      } else {
        fillStyle(ctx, this.styleOf(d.owner), x, y, CELL, CELL);
      }
    }
    const selected = this.selected !== null && d.holders > 0 && (d.owner === this.selected || d.shares.some(([o]) => o === this.selected));
    if (selected || text) {
      // Zoomed out, the gaps between cells are their borders.
      ctx.lineWidth = selected ? 2 : 1;
      ctx.strokeStyle = selected ? '#202124' : FREE_BORDER;
      ctx.strokeRect(x + 0.5, y + 0.5, CELL - 1, CELL - 1);
    }
    if (effects & NO_SCHEDULE) {
      ctx.save();
      ctx.beginPath();
      ctx.rect(x, y, CELL, CELL);
      ctx.clip();
      for (let k = -CELL; k < CELL; k += 4) line(ctx, x + k, y + CELL, x + k + CELL, y, '#202124', 1);
      ctx.restore();
    }
    if (effects & NO_EXECUTE) {
      // Red over the holder's colour (a fifth of it shows through), a white cross: the
      // workload colours are dark, so a light tint no longer read as red.
      ctx.fillStyle = 'rgba(197, 34, 31, 0.8)';
      ctx.fillRect(x, y, CELL, CELL);
      line(ctx, x + 4, y + 4, x + CELL - 4, y + CELL - 4, '#ffffff', 2);
      line(ctx, x + CELL - 4, y + 4, x + 4, y + CELL - 4, '#ffffff', 2);
      ctx.lineWidth = 2.5;
      ctx.strokeStyle = RED;
      ctx.strokeRect(x + 1.25, y + 1.25, CELL - 2.5, CELL - 2.5);
    } else if (effects & EFFECT_NONE) {
      ctx.setLineDash([3, 2]);
      ctx.lineWidth = 2;
      ctx.strokeStyle = '#1a73e8';
      ctx.strokeRect(x + 1, y + 1, CELL - 2, CELL - 2);
      ctx.setLineDash([]);
    }
    if (d.evictAt !== null && text) {
      const left = d.evictAt - now;
      ctx.fillStyle = RED;
      ctx.fillRect(x - 1, y - 9, CELL + 2, 9);
      ctx.fillStyle = '#fff';
      ctx.font = 'bold 7px system-ui, sans-serif';
      ctx.textAlign = 'center';
      // Due now: the engine carries it out when its clock next moves.
      ctx.fillText(left > 0 ? duration(left) : 'due', x + CELL / 2, y - 4.5);
      ctx.textAlign = 'start';
    }
    const hl = this.highlight;
    if (hl.devices.has(d.id)) {
      // Zoomed out, drawOverview marks it (over its neighbours, at a size that shows).
      if (text) litFrame(ctx, x - 2, y - 2, CELL + 4, CELL + 4, 3, 1);
    } else if (hl.dim && hl.devices.size + hl.nodes.size + hl.domains.size > 0 && !hl.nodes.has(c.node.name) && !hl.domains.has(c.domain.name)) {
      // Something is lit up: everything else steps back.
      ctx.fillStyle = 'rgba(255, 255, 255, 0.5)';
      ctx.fillRect(x, y, CELL, CELL);
    }
  }

  bind() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      const r = c.getBoundingClientRect();
      this.zoom(e.deltaY < 0 ? 1.15 : 1 / 1.15, e.clientX - r.left, e.clientY - r.top);
    }, { passive: false });
    c.addEventListener('pointerdown', (e) => {
      drag = { x: e.clientX, y: e.clientY, moved: false };
    });
    c.addEventListener('pointermove', (e) => {
      const r = c.getBoundingClientRect();
      if (drag && (e.buttons & 1)) {
        const dx = e.clientX - drag.x;
        const dy = e.clientY - drag.y;
        if (drag.moved || Math.abs(dx) + Math.abs(dy) > 4) {
          drag.moved = true;
          c.setPointerCapture?.(e.pointerId);
          this.pan(dx, dy);
          drag.x = e.clientX;
          drag.y = e.clientY;
        }
        return;
      }
      this.hover = this.hitAt(e.clientX - r.left, e.clientY - r.top);
      this.hooks.onHover?.(this.hover, e.clientX - r.left, e.clientY - r.top);
    });
    c.addEventListener('pointerleave', () => this.hooks.onHover?.(null));
    // A GPU, node or domain opens on `click`, not on pointerup: on a touch screen the
    // click that follows finger-up would otherwise land on the dialog just opened
    // under the finger (and press its Taint button). A drag is not a click.
    let dragged = false;
    c.addEventListener('pointerup', () => {
      dragged = Boolean(drag?.moved);
      drag = null;
    });
    c.addEventListener('click', (e) => {
      if (dragged) { dragged = false; return; }
      const r = c.getBoundingClientRect();
      const hit = this.hitAt(e.clientX - r.left, e.clientY - r.top);
      if (hit) {
        if (hit.kind === 'device') this.focusIndex = hit.index;
        this.hooks.onActivate?.(hit);
      }
    });
    c.addEventListener('focus', () => {
      if (this.focusIndex < 0 && this.layout.cells.length) this.focusIndex = 0;
      this.announce();
      this.requestDraw();
    });
    c.addEventListener('blur', () => this.requestDraw());
    c.addEventListener('keydown', (e) => this.key(e));
  }

  /** Arrow keys move between GPUs, Home/End along a node, PageUp/PageDown between domains; Enter acts; +/−/0 zoom. */
  key(e) {
    const cells = this.layout.cells;
    if (!cells.length) return;
    let i = Math.max(0, this.focusIndex);
    const c = cells[i];
    const nodeOf = (k) => cells[k].node;
    const row = () => {
      let a = i;
      while (a > 0 && nodeOf(a - 1) === c.node) a--;
      let b = i;
      while (b < cells.length - 1 && nodeOf(b + 1) === c.node) b++;
      return [a, b];
    };
    const [a, b] = row();
    switch (e.key) {
      case 'ArrowRight': i = Math.min(cells.length - 1, i + 1); break;
      case 'ArrowLeft': i = Math.max(0, i - 1); break;
      case 'ArrowDown': i = Math.min(cells.length - 1, b + 1 + (i - a)); if (cells[i] && nodeOf(i) === c.node) i = b; break;
      case 'ArrowUp': {
        if (a === 0) break;
        let pa = a - 1;
        while (pa > 0 && nodeOf(pa - 1) === nodeOf(a - 1)) pa--;
        i = Math.min(a - 1, pa + (i - a));
        break;
      }
      case 'Home': i = a; break;
      case 'End': i = b; break;
      case 'PageDown': { let k = i; while (k < cells.length - 1 && cells[k].domain === c.domain) k++; i = k; break; }
      case 'PageUp': { let k = i; while (k > 0 && cells[k].domain === c.domain) k--; while (k > 0 && cells[k - 1].domain === cells[k].domain) k--; i = k; break; }
      case 'Enter': case ' ': {
        e.preventDefault();
        const hit = e.shiftKey
          ? { kind: 'node', node: c.node, domain: c.domain }
          : { kind: 'device', device: c.device, node: c.node, domain: c.domain, index: i };
        this.hooks.onActivate?.(hit);
        return;
      }
      case '+': case '=': this.zoom(1.25); return;
      case '-': this.zoom(0.8); return;
      case '0': this.fit(); this.requestDraw(); return;
      default: return;
    }
    e.preventDefault();
    this.focusIndex = i;
    this.reveal(i);
    this.announce();
    this.requestDraw();
  }

  announce() {
    const c = this.layout.cells[this.focusIndex];
    this.hooks.onFocus?.(c ? { kind: 'device', device: c.device, node: c.node, domain: c.domain, index: this.focusIndex } : null);
  }
}

/**
 * An amber frame (`width` wide, centred on the rectangle's outline) with a dark edge
 * (`edge` wide) outside it, so it shows against white and against the cells; `fill`
 * fills the rectangle amber instead (a bar).
 */
function litFrame(ctx, x, y, w, h, width, edge, fill = false) {
  ctx.lineWidth = edge;
  ctx.strokeStyle = HIGHLIGHT_EDGE;
  const out = width / 2 + edge / 2;
  ctx.strokeRect(x - out, y - out, w + 2 * out, h + 2 * out);
  if (fill) {
    ctx.fillStyle = HIGHLIGHT;
    ctx.fillRect(x - width / 2, y - width / 2, w + width, h + width);
    return;
  }
  ctx.lineWidth = width;
  ctx.strokeStyle = HIGHLIGHT;
  ctx.strokeRect(x, y, w, h);
}

function line(ctx, ax, ay, bx, by, colour, width) {
  ctx.beginPath();
  ctx.moveTo(ax, ay);
  ctx.lineTo(bx, by);
  ctx.strokeStyle = colour;
  ctx.lineWidth = width;
  ctx.stroke();
}

function clip(ctx, s, max) {
  if (ctx.measureText(s).width <= max) return s;
  let t = s;
  while (t.length > 1 && ctx.measureText(`${t}…`).width > max) t = t.slice(1);
  return `…${t}`;
}

/** A one-line description of a device (`Scheduler.device(id)`), for tooltips and the screen reader. */
export function describeDevice(d, now) {
  const parts = [`GPU ${d.id}${d.model ? ` (${d.model})` : ''}: ${d.state}`];
  for (const h of d.holders) {
    const share = Object.keys(h.consumedCapacity).length ? ` [${Object.entries(h.consumedCapacity).map(([k, v]) => `${k} ${v}`).join(', ')}]` : '';
    parts.push(`held by ${h.pods.length ? h.pods.join(', ') : `claim ${h.claim}`}${h.podGroup ? ` of PodGroup ${h.podGroup}` : ''}${share}`);
  }
  if (d.state === 'shared') {
    const [k, cap] = Object.entries(d.capacity).find(([, v]) => quantity(v) > 0) ?? [];
    if (k) parts.push(`${Math.round((100 * quantity(d.consumedCapacity[k] ?? '0')) / quantity(cap))} % of ${k} used`);
  }
  for (const t of d.taints) parts.push(`taint ${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`);
  for (const e of d.evictions) parts.push(`evicts ${e.pod} ${e.at.seconds <= now ? 'when the clock next moves (due now)' : `in ${duration(e.at.seconds - now)}`}`);
  return parts.join('; ');
}
