// The gangpack playground. A case is a scenario (or a pasted cluster) plus the list
// of actions taken so far; both live in the URL hash, every action is replayed on the
// wasm `Scheduler` (gangpack-wasm), and the page draws what the session reports.
// This file wires the page: loading, actions, undo/redo through the browser's
// history, the run loop, dialogs and the answers panel.

import init, { Scheduler, demoManifests, version } from '../pkg/index.js';
import { apply, UNIT_DEFAULTS } from './actions.js';
import { ClusterView, describeDevice, duration, NO_EXECUTE, PALETTE } from './cluster-view.js';
import { fragmentationAbout, h, metrics, renderCapacity, renderChart, renderExplanation, renderMetrics, renderTimeline, renderVerdict } from './panel.js';
import { nodeTableSection } from './node-table.js';
import { DEFAULT_POLICY, POLICIES } from './policies.js';
import { SCENARIOS, scenarioById } from './scenarios/index.js';
import { decode, encode } from './url.js';
import { naturalCompare, naturalSort } from './natural.js';

const $ = (id) => document.getElementById(id);

const app = {
  source: { scenario: SCENARIOS[0].id },
  def: null,
  runs: [],
  actions: [],
  redo: [],
  timeline: [],
  checkpoints: [],
  selected: null,
  timer: null,
  busy: false,
  explaining: [],
  explainTimer: null,
};

// ------------------------------------------------------------------- loading

function customScenario(yaml) {
  return { id: 'yaml', title: 'Your cluster (pasted YAML)', summary: 'The cluster you pasted or dropped. Click a GPU to taint it, submit workloads, step cycles.', manifests: () => yaml, options: {}, steps: [] };
}

/**
 * Builds the sessions of a source (`{ scenario | yaml, policy? }`); throws the session's
 * error (with problems) when it does not load. A scenario that compares policies side by
 * side (`compare`: `{ label, policy, workloadMix? }` each) has one session per entry and
 * ignores the source's policy; any other has one, with the source's policy.
 */
function build(source) {
  const def = source.yaml !== undefined ? customScenario(source.yaml) : scenarioById(source.scenario);
  if (!def) throw new Error(`no scenario named ${JSON.stringify(source.scenario)}; pick one from the list`);
  const text = def.manifests({ demoManifests });
  const entries = def.compare ?? [{ label: '', policy: source.policy ?? def.options?.policy ?? DEFAULT_POLICY }];
  const runs = entries.map((entry, i) => {
    const options = { ...def.options, policy: entry.policy };
    if (entry.workloadMix) options.workloadMix = entry.workloadMix;
    const session = Scheduler.fromManifests(source.yaml !== undefined ? [{ name: 'pasted.yaml', text }] : [{ name: `${def.id}.yaml`, text }], options);
    return { label: entry.label, policy: entry.policy, session, book: new Map(), series: [], index: i };
  });
  if (!def.topologyKey) def.topologyKey = topologyKeyOf(runs[0].session.snapshot({ devices: false }));
  return { def, runs };
}

/** How to group a cluster that names no topology: the PodGroups' key, else a rack/block/zone-like node label. */
function topologyKeyOf(snap) {
  if (snap.topologyKey) return snap.topologyKey;
  const nodes = snap.domains.flatMap((d) => d.nodes);
  const values = new Map();
  for (const n of nodes) for (const [k, v] of Object.entries(n.labels)) {
    if (!values.has(k)) values.set(k, new Set());
    values.get(k).add(v);
  }
  const usable = [...values].filter(([k, vs]) => vs.size >= 2 && vs.size < nodes.length && !/hostname|^kubernetes\.io\/|instance-type|\/os$|\/arch$/.test(k));
  const rank = (k) => (/rack/.test(k) ? 0 : /block|spine|nvlink|clique/.test(k) ? 1 : /zone/.test(k) ? 2 : 3);
  usable.sort((a, b) => rank(a[0]) - rank(b[0]) || a[0].localeCompare(b[0]));
  return usable[0]?.[0] ?? null;
}

function cloneBook(book) {
  return new Map([...book].map(([k, v]) => [k, structuredClone(v)]));
}

/** Frees the forks of checkpoints from index `k` on (wasm memory is not garbage-collected). */
function freeCheckpoints(k) {
  for (const cp of app.checkpoints.slice(k)) for (const r of cp?.runs ?? []) r.fork.free();
  app.checkpoints.length = Math.min(app.checkpoints.length, k);
}

function checkpoint() {
  app.checkpoints[app.actions.length] = {
    runs: app.runs.map((r) => ({ fork: r.session.fork(), book: cloneBook(r.book), series: r.series.slice() })),
    timeline: app.timeline.length,
  };
}

/**
 * Reads a session's state for drawing: `cells()` (one small record per device), a
 * snapshot without devices (nodes, pods, groups, claims, rules), the capacity
 * report. A device's full record is asked for when needed (`device(id)`).
 */
function observe(run) {
  const key = app.def.topologyKey;
  run.cells = run.session.cells(key ? { topologyKey: key } : undefined);
  run.snap = run.session.snapshot({ ...(key ? { topologyKey: key } : {}), devices: false });
  try { run.capacity = run.session.capacityReport(key ? { key } : undefined); } catch { run.capacity = null; }
  run.nodes = new Map(run.snap.domains.flatMap((d) => d.nodes).map((n) => [n.name, n]));
  markEvictions(run);
}

/**
 * Every pod to be evicted carries the countdown on its GPUs, not only the one on the
 * tainted GPU: `cells()` times the claims of the tainted device, while a gang with
 * disruptionMode All goes as a unit (and a NoExecute node taint evicts its pods too).
 * One badge per pod (on its NoExecute-tainted GPU, else its first), so a gang of
 * 8-GPU pods shows a badge per node, not a wall of them. Read from the
 * snapshot's scheduled evictions and the claims' pods.
 */
function markEvictions(run) {
  const { evictions, claims } = run.snap;
  if (!evictions.length) return;
  const at = new Map();
  for (const e of evictions) at.set(e.pod, Math.min(at.get(e.pod) ?? Infinity, e.at.seconds));
  const cells = new Map(run.cells.domains.flatMap((d) => d.nodes.flatMap((n) => n.cells)).concat(run.cells.otherCells).map((c) => [c.id, c]));
  const devicesOf = new Map();
  for (const c of claims) for (const p of c.pods) if (at.has(p)) devicesOf.set(p, [...(devicesOf.get(p) ?? []), ...c.devices]);
  for (const c of cells.values()) c.evictAt = null;
  for (const [pod, ids] of devicesOf) {
    const held = ids.map((id) => cells.get(id)).filter(Boolean);
    // On the tainted GPU if the pod holds one (NoExecute bit), else on its first.
    const badge = held.find((c) => c.taints & NO_EXECUTE) ?? held[0];
    if (badge) badge.evictAt = Math.min(badge.evictAt ?? Infinity, at.get(pod));
  }
}

/** When an eviction happens, in words: the engine's clock moves only when told to. */
function evictionWhen(at, now) {
  return at <= now ? 'evicted when the clock next moves (due now)' : `evicted in ${duration(at - now)} of the clock`;
}

function record(run) {
  observe(run);
  run.series.push(metrics(run.cells, run.snap, run.capacity));
}

function refreshSnapshots() {
  for (const run of app.runs) observe(run);
}

function log(run, events) {
  const time = run.session.now().rfc3339;
  for (const e of events) app.timeline.push({ ...e, time, label: run.label, step: app.actions.length });
}

/**
 * Loads a source and replays `actions`; stops at the first action that fails and says
 * so. `selected` (a link's `{ kind, name }`) replaces the scenario's own selection.
 */
function load(source, actions = [], selected = undefined) {
  stop();
  let built;
  try {
    built = build(source);
  } catch (e) {
    return { error: e };
  }
  for (const r of app.runs) r.session.free();
  freeCheckpoints(0);
  app.source = source;
  app.def = built.def;
  app.runs = built.runs;
  app.actions = [];
  app.checkpoints = [];
  app.timeline = [];
  app.redo = [];
  for (const run of app.runs) {
    log(run, [{ kind: 'load', text: `loaded ${app.def.title} ${run.label ? `with ${run.label}` : `under ${run.policy}`}` }]);
    record(run);
  }
  // A scenario's focus names a PodGroup or a pod (it may not exist until a step submits it).
  const focus = app.def.focus ?? null;
  app.focus = typeof focus === 'string' ? { kind: app.runs[0].snap.pods.some((p) => p.name === focus && !p.podGroup) ? 'Pod' : 'PodGroup', name: focus } : focus;
  app.selected = selected ?? app.focus;
  checkpoint();
  setupViews();
  let failed = null;
  for (const a of actions) {
    try {
      doAction(a);
    } catch (e) {
      failed = e;
      break;
    }
  }
  render();
  if (failed) notify(`The link's action ${app.actions.length + 1} (${failed.action?.op ?? ''}) could not be replayed: ${message(failed)}`, true);
  return { error: null, replayed: !failed };
}

/**
 * Carries out one action on every session, all or nothing; throws, with state
 * unchanged, on failure (restored from the checkpoint taken after the previous action).
 */
function doAction(action) {
  try {
    for (const run of app.runs) {
      log(run, apply(run.session, action, run.book));
      record(run);
    }
  } catch (e) {
    restore(app.checkpoints[app.actions.length]);
    e.action = action;
    throw e;
  }
  app.actions.push(action);
  freeCheckpoints(app.actions.length);
  checkpoint();
}

/** Puts every session, its book and metrics, and the timeline back as a checkpoint has them. */
function restore(cp) {
  app.runs.forEach((r, i) => { r.session.restore(cp.runs[i].fork); r.book = cloneBook(cp.runs[i].book); r.series = cp.runs[i].series.slice(); });
  app.timeline.length = cp.timeline;
  refreshSnapshots();
}

/** Moves to the state after `actions`, reusing the longest common prefix's checkpoint. */
function goTo(actions) {
  let k = 0;
  while (k < actions.length && k < app.actions.length && JSON.stringify(actions[k]) === JSON.stringify(app.actions[k])) k++;
  restore(app.checkpoints[k]);
  app.actions = app.actions.slice(0, k);
  freeCheckpoints(k + 1);
  for (const a of actions.slice(k)) doAction(a);
}

// ------------------------------------------------------------------- actions from the page

/** A person's action: carried out, recorded in the URL (a new history entry), drawn. */
async function perform(action, { quiet = false } = {}) {
  try {
    doAction(action);
  } catch (e) {
    notify(message(e), true);
    return false;
  }
  app.redo = [];
  render();
  await pushUrl();
  if (!quiet) notify(evictionNotice(action));
  return true;
}

/**
 * After a change that scheduled evictions: which, and that the engine's logical clock
 * carries them out only when it moves (Advance clock, Step one cycle or Run), even
 * those due now, as Kubernetes' taint manager would do at once.
 */
function evictionNotice(action) {
  if (!['taint', 'rule', 'untaint', 'unrule', 'labelNode'].includes(action.op)) return '';
  const snap = app.runs[0].snap;
  const now = snap.now.seconds;
  const list = snap.evictions;
  if (!list.length) return '';
  const dueNow = list.filter((e) => e.at.seconds <= now).length;
  const later = list.length - dueNow;
  return `${list.length} pod(s) will be evicted${dueNow ? `: ${dueNow} due now` : ''}${later ? `${dueNow ? ',' : ':'} ${later} later` : ''}. `
    + 'The playground\'s clock moves only when you press Advance clock or Step one cycle (or Run): the evictions happen then.';
}

function message(e) {
  if (e?.problems?.length) return e.problems.map((p) => p.line ?? p.message).join('\n');
  return e?.message ?? String(e);
}

async function pushUrl(replace = false) {
  const hash = await encode({ scenario: app.source.scenario, yaml: app.source.yaml, policy: linkPolicy(), actions: app.actions, selected: linkSelection() });
  if (location.hash === hash) return;
  if (replace) history.replaceState({ depth: history.state?.depth ?? 0 }, '', hash);
  else history.pushState({ depth: (history.state?.depth ?? 0) + 1 }, '', hash);
}

/** The selection a link carries: the selected unit, unless it is the scenario's own. */
function linkSelection() {
  const s = app.selected;
  if (!s || (app.focus && s.kind === app.focus.kind && s.name === app.focus.name)) return undefined;
  return { kind: s.kind, name: s.name };
}

/** The policy a link carries: the source's, unless the scenario compares its own. */
function linkPolicy() {
  return app.def?.compare ? undefined : app.source.policy;
}

function undo() {
  if (!app.actions.length) return;
  if ((history.state?.depth ?? 0) > 0) {
    history.back();
    return;
  }
  app.redo.push(app.actions.at(-1));
  goTo(app.actions.slice(0, -1));
  render();
  pushUrl(true);
}

async function redo() {
  const a = app.redo.pop();
  if (!a) return;
  const keep = app.redo;
  if (await perform(a)) app.redo = keep;
}

window.addEventListener('popstate', async () => {
  let state;
  try {
    state = await decode(location.hash);
  } catch (e) {
    notify(message(e), true);
    return;
  }
  const same = (state.yaml !== undefined ? state.yaml === app.source.yaml : state.scenario === app.source.scenario && app.source.yaml === undefined)
    && (state.policy ?? DEFAULT_POLICY) === (linkPolicy() ?? DEFAULT_POLICY);
  if (!same) {
    load(sourceOf(state), state.actions, state.selected);
    return;
  }
  app.selected = state.selected ?? app.focus;
  const before = app.actions.slice();
  try {
    goTo(state.actions);
  } catch (e) {
    notify(message(e), true);
  }
  // Going back: what was undone can be redone.
  if (state.actions.length < before.length) app.redo.push(...before.slice(state.actions.length).reverse());
  render();
});

// ------------------------------------------------------------------- the run loop

/**
 * How far the scenario's script got: its steps are matched, in order, among the actions
 * so far; any other action is the person's own. The script carries on after them
 * (`next`), and `own` says how many there were.
 */
function scriptProgress() {
  const steps = app.def.steps ?? [];
  let played = 0;
  let own = 0;
  for (const a of app.actions) {
    if (played < steps.length && JSON.stringify(steps[played].do) === JSON.stringify(a)) played++;
    else own++;
  }
  return { steps, played, own, next: steps[played] ?? null };
}

function nextStep() {
  return scriptProgress().next;
}

/** Back to the script: the state after its steps played so far, without the person's own actions (undo brings them back). */
async function backToScript() {
  const { steps, played } = scriptProgress();
  try {
    goTo(steps.slice(0, played).map((x) => x.do));
  } catch (e) {
    notify(message(e), true);
    return;
  }
  app.redo = [];
  render();
  await pushUrl();
  notify(`Back to step ${played} of the script; Undo brings your own actions back.`);
}

async function tick() {
  if (app.busy) return;
  app.busy = true;
  try {
    const step = nextStep();
    if (step) {
      await perform(step.do, { quiet: true });
      return;
    }
    const before = JSON.stringify(app.runs.map((r) => r.series.at(-1)));
    await perform({ op: 'cycle' }, { quiet: true });
    const after = JSON.stringify(app.runs.map((r) => r.series.at(-1)));
    if (before === after) {
      const due = Math.min(...app.runs.flatMap((r) => r.snap.evictions.map((e) => e.at.seconds)));
      if (Number.isFinite(due)) {
        await perform({ op: 'advance', seconds: Math.max(0, due - app.runs[0].snap.now.seconds) }, { quiet: true });
      } else {
        stop();
        notify('Nothing changes any more: paused.');
      }
    }
  } finally {
    app.busy = false;
  }
}

function start() {
  if (app.timer) return;
  app.timer = setInterval(tick, 700);
  $('run').textContent = 'Pause';
  $('run').setAttribute('aria-pressed', 'true');
}

function stop() {
  if (!app.timer) return;
  clearInterval(app.timer);
  app.timer = null;
  $('run').textContent = 'Run';
  $('run').setAttribute('aria-pressed', 'false');
}

// ------------------------------------------------------------------- drawing

function setupViews() {
  const host = $('views');
  host.replaceChildren();
  host.classList.toggle('compare', app.runs.length > 1);
  for (const run of app.runs) {
    const canvas = h('canvas', {
      class: 'cluster',
      tabindex: '0',
      role: 'application',
      'aria-roledescription': 'GPU cluster map',
      'aria-label': `GPU cells by ${app.def.topologyKey ?? 'domain'} and node${run.label ? `, ${run.label}` : ''}. Arrow keys move between GPUs, Enter opens the GPU, Shift+Enter its node, plus and minus zoom, 0 fits.`,
      'aria-describedby': 'focused-cell',
    });
    const figure = h('figure', { class: 'view' }, run.label ? h('figcaption', {}, run.label, h('span', { class: 'policy' }, ` (policy ${run.policy})`)) : null, canvas);
    host.append(figure);
    run.view = new ClusterView(canvas, {
      onActivate: (hit) => openTarget(run, hit),
      onHover: (hit, x, y) => tooltip(run, hit, x, y, figure),
      onFocus: (hit) => { $('focused-cell').textContent = hit ? describeDevice(run.session.device(hit.device.id), run.snap.now.seconds) : ''; },
    });
  }
}

function tooltip(run, hit, x, y, figure) {
  const tip = $('tooltip');
  if (!hit) { tip.hidden = true; delete tip.dataset.id; return; }
  let text = '';
  if (hit.kind === 'device') {
    if (tip.dataset.id !== hit.device.id) tip.dataset.text = describeDevice(run.session.device(hit.device.id), run.snap.now.seconds);
    tip.dataset.id = hit.device.id;
    text = tip.dataset.text;
  } else if (hit.kind === 'node') {
    const n = run.nodes.get(hit.node.name);
    text = `node ${n.name}: ${n.pods.length} pod(s)${n.taints.map((t) => `; taint ${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join('')}${n.unschedulable ? '; cordoned' : ''}. Click to taint it.`;
  }
  else text = `${app.def.topologyKey ?? 'domain'} ${hit.domain.name ?? '(none)'}: ${hit.domain.nodes.length} node(s). Click to taint every node.`;
  tip.textContent = text;
  tip.hidden = false;
  const r = figure.getBoundingClientRect();
  const c = run.view.canvas.getBoundingClientRect();
  tip.style.left = `${Math.min(window.innerWidth - 300, c.left + x + 14)}px`;
  tip.style.top = `${c.top + y + 14 + window.scrollY}px`;
  void r;
}

function unitsOf(snap) {
  const list = snap.groups.map((g) => ({ kind: 'PodGroup', name: g.name, status: g.status, detail: `${g.bound}/${g.pods.length} bound${g.minCount !== null ? `, minCount ${g.minCount}` : ''}, priority ${g.priority}` }));
  for (const p of snap.pods) if (!p.podGroup) list.push({ kind: 'Pod', name: p.name, status: p.status === 'bound' ? 'running' : 'pending', detail: p.node ? `on ${p.node}` : `priority ${p.priority}` });
  for (const w of snap.waiting) list.push({ kind: w.kind, name: w.name, status: 'waiting', detail: w.reason });
  const order = { pending: 0, partial: 1, waiting: 2, running: 3 };
  return list.sort((a, b) => order[a.status] - order[b.status] || naturalCompare(a.name, b.name));
}

function render() {
  const t0 = performance.now();
  // Selection and highlights first, so the map is drawn once, with them.
  for (const run of app.runs) run.view.setSelected(app.selected?.name ?? null);
  renderSelected();
  for (const run of app.runs) run.view.update(run.snap, run.cells);
  const main = app.runs[0];
  $('clock').textContent = `clock ${main.snap.now.rfc3339}`;
  $('scenario').value = app.source.yaml !== undefined ? 'yaml' : app.def.id;
  renderPolicy();
  $('summary').textContent = app.def.summary;
  $('summary').title = app.def.summary;
  const progress = scriptProgress();
  const step = progress.next;
  const [head, ...rest] = caption(progress, main.policy).split(/(?<=^[^:]*:) /);
  // The step's number in bold, its caption in plain text (several lines on a phone).
  $('step-caption').replaceChildren(...(rest.length ? [h('strong', {}, head), ` ${rest.join(' ')}`] : [head]));
  $('next-step').disabled = !step;
  // Shown only while the script has a step to play: not once it is played, and never
  // for a pasted cluster (no script). A disabled "Next step" beside "Scenario played"
  // read as a button to press. Actions of one's own in between do not end the script.
  $('next-step').hidden = !step;
  $('script-back').hidden = !(step && progress.own > 0);
  $('script-back').textContent = progress.played ? `Back to step ${progress.played}` : 'Back to the start';
  $('undo').disabled = app.actions.length === 0;
  $('redo').disabled = app.redo.length === 0;
  $('download').disabled = false;
  renderUnits(main.snap);
  renderMetrics($('metrics'), app.runs);
  renderChart($('chart'), app.runs);
  $('chart-legend').textContent = `Solid: GPUs allocated %. Dashed: fragmentation %. ${fragmentationAbout(main.series.at(-1))}`;
  if (main.capacity) renderCapacity($('capacity'), main.capacity);
  renderTimeline($('timeline'), app.timeline);
  app.lastRender = performance.now() - t0;
}

/**
 * The script's caption: what is on screen now, i.e. the step just played (its caption
 * tells what that step did), or the scenario's opening before the first; the button
 * beside it plays the next. Actions of one's own in between are said, since the
 * captions were written without them.
 */
function caption({ steps, played, own }, policy) {
  if (!steps.length) return '';
  // A script's captions tell what its own policy does; under another they may not.
  const mine = app.def.options?.policy ?? DEFAULT_POLICY;
  const other = !app.def.compare && policy !== mine ? ` (written for ${mine})` : '';
  const yours = own && played < steps.length ? ` You took ${own} action${own === 1 ? '' : 's'} of your own: the captions do not count ${own === 1 ? 'it' : 'them'}.` : '';
  if (played === 0) return `Start${other}: ${app.def.opening ?? app.def.summary} Next step plays step 1 of ${steps.length}.${yours}`;
  const done = played === steps.length
    ? ` Scenario played (${steps.length} step${steps.length === 1 ? '' : 's'}). Carry on: click a GPU, submit a workload, step or run.`
    : '';
  return `Step ${played} of ${steps.length}${other}: ${steps[played - 1].say}${done}${yours}`;
}

/**
 * The policy menu: the session's policy; for a scenario that compares policies (each
 * view's caption names its own), disabled on a "side by side" entry.
 */
function renderPolicy() {
  const sel = $('policy');
  const compared = app.def.compare ? app.runs.map((r) => r.policy).join(' and ') : null;
  let entry = sel.querySelector('option[value=""]');
  if (compared) {
    if (!entry) sel.prepend(entry = h('option', { value: '' }, 'side by side'));
    sel.value = '';
  } else {
    entry?.remove();
    sel.value = app.runs[0].policy;
  }
  sel.disabled = compared !== null;
  sel.title = compared
    ? `This scenario compares ${compared} side by side.`
    : POLICIES.find((p) => p.name === sel.value)?.about ?? '';
}

const UNITS_SHOWN = 150;

function renderUnits(snap) {
  const list = $('units');
  const filter = $('unit-filter').value.trim().toLowerCase();
  const all = unitsOf(snap).filter((u) => !filter || `${u.kind} ${u.name} ${u.status}`.toLowerCase().includes(filter));
  const shown = all.slice(0, UNITS_SHOWN);
  list.replaceChildren(...shown.map((u) => h('li', {},
    h('button', {
      type: 'button',
      class: `unit status-${u.status}${app.selected?.name === u.name ? ' selected' : ''}`,
      'aria-pressed': app.selected?.name === u.name ? 'true' : 'false',
      onclick: () => select(u.kind, u.name),
    }, h('span', { class: 'swatch', style: app.runs[0].view.swatchCss(u.name), 'aria-hidden': 'true' }), `${u.kind} ${u.name}`, h('span', { class: 'status' }, u.status), h('small', {}, u.detail)))));
  if (all.length > shown.length) list.append(h('li', { class: 'hint' }, `… and ${all.length - shown.length} more (pending ones first): filter to find one.`));
  $('unit-count').textContent = `${all.length}${filter ? ' matching' : ''}`;
}

function select(kind, name) {
  app.selected = { kind, name };
  render();
  // The link names the selection too (no new history entry: selecting is not an action).
  pushUrl(true);
  $('selected').scrollIntoView?.({ block: 'nearest' });
}

function renderSelected() {
  const el = $('selected');
  clearTimeout(app.explainTimer);
  app.explaining = [];
  for (const r of app.runs) r.view.setHighlight(null);
  if (!app.selected) {
    el.replaceChildren(h('p', { class: 'hint' }, 'Select a PodGroup or pod from the list (or click one of its GPUs) to see where it runs or why it is pending.'));
    return;
  }
  const { kind, name } = app.selected;
  const parts = [h('h3', {}, `${kind} ${name}`)];
  const there = (run) => (kind === 'PodGroup' ? run.snap.groups : run.snap.pods).some((x) => x.name === name);
  // Absent from every session (side by side too): said once.
  if (!app.runs.some(there)) parts.push(h('p', {}, absent(kind, name)));
  else for (const run of app.runs) parts.push(...selectedIn(run, kind, name));
  el.replaceChildren(...parts);
  if (app.explaining.length) {
    el.dataset.explained = 'false';
    app.explainTimer = setTimeout(() => {
      for (const task of app.explaining) task();
      app.explaining = [];
      el.dataset.explained = 'true';
    });
  } else {
    el.dataset.explained = 'true';
  }
}

/** Why a selected unit is not in the cluster: a step of the script still to play submits it, or it is gone. */
function absent(kind, name) {
  const { steps, played } = scriptProgress();
  const names = (u) => {
    const ns = u.namespace ?? UNIT_DEFAULTS.namespace;
    if (kind === 'PodGroup') return (u.kind ?? UNIT_DEFAULTS.kind) === 'gang' ? [`${ns}/${u.name}`] : [];
    return [`${ns}/${u.name}`, `${ns}/${u.name}-0`];
  };
  const k = steps.findIndex((st, i) => i >= played && st.do.op === 'submit' && names(st.do.unit).includes(name));
  if (k >= 0) {
    return `${kind} ${name} has not arrived yet: step ${k + 1} of the script submits it${k === played ? ' (press Next step)' : ''}. Until then, select any workload from the list to see where it runs or why it waits.`;
  }
  return `${kind} ${name} is not in the cluster (any more). Select a workload from the list.`;
}

/** The selected unit in one session: its placement, or why it is pending (and the highlight on that session's view). */
function selectedIn(run, kind, name) {
  const snap = run.snap;
  const parts = run.label ? [h('h4', { class: 'run-label' }, run.label)] : [];
  const group = kind === 'PodGroup' ? snap.groups.find((g) => g.name === name) : null;
  const pod = kind === 'Pod' ? snap.pods.find((p) => p.name === name) : null;
  if (!group && !pod) {
    parts.push(h('p', {}, absent(kind, name)));
    return parts;
  }
  const pods = group ? naturalSort(snap.pods.filter((p) => p.podGroup === name), (p) => p.name) : [pod];
  if (group) parts.push(h('p', {}, `${group.status}: ${group.bound} of ${group.pods.length} pod(s) bound${group.minCount !== null ? `, minCount ${group.minCount}` : ' (basic policy)'}, priority ${group.priority}, disruptionMode ${group.disruptionMode}.`));
  else parts.push(h('p', {}, `${pod.status}${pod.node ? ` on ${pod.node}` : ''}, priority ${pod.priority}.`));
  const placed = pods.filter((p) => p.node);
  if (placed.length) {
    const devs = new Map();
    for (const c of snap.claims) for (const p of c.pods) {
      if (!devs.has(p)) devs.set(p, []);
      devs.get(p).push(...c.devices.map((id) => id.split('/').pop()));
    }
    parts.push(h('h4', {}, 'Placement'), h('ul', { class: 'placement' }, ...placed.map((p) => h('li', {}, `${p.name} → ${p.node}${devs.get(p.name) ? ` (${naturalSort(devs.get(p.name)).join(', ')})` : ''}${p.eviction ? `; ${evictionWhen(p.eviction.at.seconds, snap.now.seconds)}` : ''}`))));
    if (placed.some((p) => p.eviction)) parts.push(h('p', { class: 'hint' }, 'The playground\'s clock moves only when you press Advance clock or Step one cycle (or Run): evictions due now happen then.'));
    run.view.setHighlight({ nodes: [...new Set(placed.map((p) => p.node))], dim: false });
  }
  const pending = pods.some((p) => p.status === 'pending') || (group && group.pods.length === 0);
  if (pending) {
    // Explaining a big gang on a big cluster takes a while: the map is drawn first
    // and the answer follows in the next task (a newer render cancels it).
    const tree = h('div', { class: 'explanation', 'aria-busy': 'true' }, h('p', { class: 'hint' }, 'Explaining…'));
    const verdict = h('div', { class: 'verdict', 'aria-live': 'polite' });
    const what = h('pre', { class: 'what', tabindex: '0' });
    const hint = h('p', { class: 'hint' }, 'Click a fact to light up its objects.');
    parts.push(h('h4', {}, 'What would get it placed'), verdict,
      h('h4', {}, 'Why it is pending'), tree, hint,
      h('h4', {}, 'What it would take'), what);
    app.explaining.push(() => {
      try {
        const result = run.session.explain(kind === 'PodGroup' ? { podGroup: name } : { pod: name });
        renderVerdict(verdict, result.verdict);
        const blocking = renderExplanation(tree, result, run.cells, (id) => run.session.device(id), (t) => run.view.setHighlight(t));
        run.view.setHighlight(blocking);
        // Only a blocking set that exists is lit up.
        hint.textContent = result.explanation.blocking.length
          ? 'The minimal blocking set is lit up on the cluster; click a fact to light up its objects.'
          : 'Click a fact to light up its objects.';
        what.textContent = result.whatItTakes.text;
      } catch (e) {
        tree.replaceChildren(h('p', { class: 'error' }, message(e)));
      }
      tree.removeAttribute('aria-busy');
    });
  }
  parts.push(nodeTableSection({ session: run.session, unit: kind === 'PodGroup' ? { podGroup: name } : { pod: name }, view: run.view, id: run.index, label: run.label }));
  return parts;
}

// ------------------------------------------------------------------- dialogs

/**
 * Opens a modal dialog so that nothing in it acts on its own. A pointer's click in the
 * dialog counts only when the press began inside the dialog after it opened: the click
 * of the tap that opened it (a touch screen sends it after finger-up, where the dialog
 * now is) is dropped. Keyboard presses (click detail 0) always count.
 */
function openModal(dlg) {
  if (!dlg.dataset.guarded) {
    dlg.dataset.guarded = 'true';
    dlg.addEventListener('pointerdown', () => { dlg.dataset.pressed = 'true'; }, true);
    dlg.addEventListener('click', (e) => {
      if (e.detail > 0 && dlg.dataset.pressed !== 'true') {
        e.preventDefault();
        e.stopPropagation();
      }
    }, true);
  }
  dlg.dataset.pressed = 'false';
  dlg.showModal();
}

const NODE_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const DEVICE_EFFECTS = ['NoSchedule', 'NoExecute', 'None'];

function openTarget(run, hit) {
  const dlg = $('target-dialog');
  const body = $('target-body');
  const snap = run.snap;
  let target;
  let title;
  let taints;
  let effects;
  let ruleSelector = null;
  if (hit.kind === 'device') {
    const d = run.session.device(hit.device.id);
    target = { device: d.id };
    title = `GPU ${d.id}`;
    taints = d.taints;
    effects = DEVICE_EFFECTS;
    ruleSelector = { driver: d.driver, pool: d.pool, device: d.device };
    const holder = d.holders[0];
    if (holder) {
      const unit = holder.podGroup ? { kind: 'PodGroup', name: holder.podGroup } : holder.pods[0] ? { kind: 'Pod', name: holder.pods[0] } : null;
      if (unit) setTimeout(() => select(unit.kind, unit.name));
    }
  } else if (hit.kind === 'node') {
    const n = run.nodes.get(hit.node.name);
    target = { node: n.name };
    title = `node ${n.name}`;
    taints = n.taints;
    effects = NODE_EFFECTS;
    // A DeviceTaintRule selects by driver and pool: offered when the node's devices are one pool.
    const pools = new Set(hit.node.cells.map((c) => c.id.split('/').slice(0, 2).join('/')));
    if (pools.size === 1) {
      const [driver, pool] = [...pools][0].split('/');
      ruleSelector = { driver, pool };
    }
  } else {
    target = { domain: hit.domain.name, key: app.def.topologyKey ?? snap.topologyKey ?? undefined };
    title = `${target.key ?? 'domain'} ${hit.domain.name}`;
    const keys = new Map();
    for (const n of hit.domain.nodes) for (const t of run.nodes.get(n.name)?.taints ?? []) keys.set(t.key, t);
    taints = [...keys.values()];
    effects = NODE_EFFECTS;
  }
  $('target-title').textContent = hit.kind === 'node' ? `Node ${hit.node.name}` : `Taint ${title}`;
  const kindText = hit.kind === 'device'
    ? 'A device taint in its ResourceSlice, as the DRA driver sets it (e.g. on an ECC error).'
    : hit.kind === 'node' ? 'A node taint (spec.taints).' : `A node taint on each of its ${hit.domain.nodes.length} node(s).`;
  const key = h('input', { id: 't-key', name: 'key', value: 'gpu.nvidia.com/ecc', required: true, 'aria-describedby': 't-kind' });
  const value = h('input', { id: 't-value', name: 'value', value: 'uncorrectable' });
  const effect = h('select', { id: 't-effect', name: 'effect', 'aria-describedby': 't-effect-hint' }, ...effects.map((e) => h('option', { value: e, selected: e === 'NoExecute' }, e)));
  const out = h('div', { id: 't-dry', class: 'dry', 'aria-live': 'polite' });
  const taintOf = () => ({ key: key.value.trim(), value: value.value.trim() || undefined, effect: effect.value });
  const close = () => dlg.close();
  const existing = taints.length
    ? h('ul', { class: 'taints' }, ...taints.map((t) => h('li', {}, `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`,
      h('button', { type: 'button', onclick: async () => { close(); await perform({ op: 'untaint', target, key: t.key }); } }, 'Untaint'))))
    : h('p', {}, 'No taints.');
  const rules = snap.taintRules.filter((r) => ruleSelector && (!r.selector?.pool || r.selector.pool === ruleSelector.pool) && (!r.selector?.device || r.selector.device === ruleSelector.device));
  const ruleName = () => `playground-${(ruleSelector.device ?? ruleSelector.pool).replace(/[^a-z0-9-]/gi, '-').toLowerCase()}-${taintOf().key.replace(/[^a-z0-9-]/gi, '-').toLowerCase()}`.slice(0, 63).replace(/-+$/, '');
  const ruleOf = () => ({ name: ruleName(), selector: ruleSelector, taint: taintOf() });
  body.replaceChildren(...[
    hit.kind === 'node' ? nodeSection(run, hit.node.name, close) : null,
    h('p', { id: 't-kind' }, kindText),
    h('h4', {}, 'Current taints'), existing,
    rules.length ? h('div', {}, h('h4', {}, 'DeviceTaintRules selecting it'), h('ul', {}, ...rules.map((r) => h('li', {}, `${r.name}: ${r.taint.key}:${r.taint.effect}`,
      h('button', { type: 'button', onclick: async () => { close(); await perform({ op: 'unrule', name: r.name }); } }, 'Remove rule'))))) : null,
    h('h4', {}, 'Add a taint'),
    h('div', { class: 'fields' },
      h('label', { for: 't-key' }, 'key'), key,
      h('label', { for: 't-value' }, 'value'), value,
      h('label', { for: 't-effect' }, 'effect'), effect,
      h('p', { id: 't-effect-hint', class: 'hint wide' }, 'NoExecute evicts the pods that do not tolerate it (a gang with disruptionMode All goes whole) when the clock next moves: press Advance clock or Step one cycle after tainting.')),
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 't-apply', class: 'primary', onclick: async () => { if (!taintOf().key) return; close(); await perform({ op: 'taint', target, taint: taintOf() }); } }, hit.kind === 'device' ? 'Taint the GPU' : 'Taint'),
      ruleSelector ? h('button', { type: 'button', id: 't-dry-run', onclick: () => dryRun() }, 'DeviceTaintRule: dry run…') : null,
      h('button', { type: 'button', onclick: close }, 'Cancel')),
    out].filter(Boolean));
  function dryRun() {
    const rule = ruleOf();
    let r;
    try {
      r = run.session.dryRunRule({ ...rule, taint: { ...rule.taint, effect: 'None' } });
    } catch (e) {
      out.replaceChildren(h('p', { class: 'error' }, message(e)));
      return;
    }
    const devices = new Set();
    const prefix = `${ruleSelector.driver}/${ruleSelector.pool}/`;
    for (const c of run.cells.domains.flatMap((x) => x.nodes.flatMap((n) => n.cells))) {
      if (c.id.startsWith(prefix) && (!ruleSelector.device || c.id === prefix + ruleSelector.device)) devices.add(c.id);
    }
    run.view.setHighlight({ devices: [...devices], nodes: [...new Set(r.pods.map((p) => snap.pods.find((x) => x.name === p)?.node).filter(Boolean))] });
    out.replaceChildren(...[
      h('h4', {}, `Dry run of DeviceTaintRule ${rule.name} (effect None)`),
      h('p', {}, r.message),
      h('p', {}, `Blast radius with ${rule.taint.effect}: ${r.publishedDevices} device(s), ${r.allocatedDevices} allocated, ${r.pods.length} pod(s) in ${r.namespaces} namespace(s); ${r.brokenGroups.length} gang(s) broken${r.brokenGroups.length ? `: ${r.brokenGroups.map((b) => `${b.group} (${b.evicted.length} pod(s)${b.whole ? ', whole gang' : ''})`).join(', ')}` : ''}.`),
      r.pods.length ? h('details', {}, h('summary', {}, 'pods'), h('ul', {}, ...naturalSort(r.pods).map((p) => h('li', {}, p)))) : null,
      h('div', { class: 'buttons' }, h('button', { type: 'button', id: 't-rule-apply', class: 'primary', onclick: async () => { close(); await perform({ op: 'rule', rule }); } }, `Apply the rule (${rule.taint.effect})`))].filter(Boolean));
  }
  openModal(dlg);
  // On a touch screen the title takes the focus, not the key field: no on-screen
  // keyboard over the dialog, and never a button that acts.
  if (matchMedia('(pointer: coarse)').matches) $('target-title').focus();
  else key.focus();
}

/** The node itself: cordon, remove, add one like it, edit its labels. */
function nodeSection(run, name, close) {
  const node = run.session.node(name);
  if (!node) return null;
  const labels = h('textarea', { id: 'n-labels', name: 'labels', rows: String(Math.min(8, Object.keys(node.labels).length + 1)), spellcheck: 'false',
    'aria-describedby': 'n-labels-hint' }, Object.entries(node.labels).map(([k, v]) => `${k}=${v}`).join('\n'));
  const error = h('p', { class: 'error', 'aria-live': 'polite' });
  const taken = new Set(run.snap.domains.flatMap((d) => d.nodes.map((n) => n.name)));
  // The next free name in its series: gpu-r1-n8 → gpu-r1-n9 (else name-2, name-3, …).
  const m = /^(.*?)(\d+)$/.exec(name);
  let i = m ? Number(m[2]) + 1 : 2;
  const nameOf = (k) => (m ? `${m[1]}${k}` : `${name}-${k}`);
  while (taken.has(nameOf(i))) i += 1;
  const newName = h('input', { id: 'n-new', name: 'newName', value: nameOf(i), 'aria-label': 'Name of the new node' });
  const parseLabels = () => {
    const out = {};
    for (const line of labels.value.split('\n').map((l) => l.trim()).filter(Boolean)) {
      const at = line.indexOf('=');
      if (at <= 0) throw new Error(`labels: "${line}" is not key=value`);
      out[line.slice(0, at).trim()] = line.slice(at + 1).trim();
    }
    return out;
  };
  const act = async (action) => { close(); await perform(action); };
  return h('div', { class: 'node-section' },
    h('h4', {}, 'The node'),
    h('p', {}, `${node.unschedulable ? 'Cordoned: ' : ''}${Object.entries(node.allocatable).map(([k, v]) => `${k} ${v}`).join(', ')}.`),
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 'n-cordon', onclick: () => act({ op: 'cordon', node: name, cordoned: !node.unschedulable }) }, node.unschedulable ? 'Uncordon' : 'Cordon'),
      h('button', { type: 'button', id: 'n-remove', onclick: () => act({ op: 'removeNode', node: name }) }, 'Remove the node')),
    h('div', { class: 'fields' },
      h('label', { for: 'n-new' }, 'add a node like it'), newName),
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 'n-add', onclick: () => act({ op: 'addNode', name: newName.value.trim(), like: name }) }, 'Add the node')),
    h('label', { for: 'n-labels' }, 'labels (key=value, one per line)'),
    labels,
    h('p', { id: 'n-labels-hint', class: 'hint' }, 'Running pods stay where they are (node affinity is IgnoredDuringExecution); new placements read the new labels.'),
    h('div', { class: 'buttons' },
      h('button', { type: 'button', id: 'n-relabel', onclick: () => {
        let parsed;
        try { parsed = parseLabels(); } catch (e) { error.textContent = message(e); return; }
        act({ op: 'labelNode', node: name, labels: parsed });
      } }, 'Save labels')),
    error);
}

function submitForm() {
  const form = $('submit-form');
  const { models } = app.runs[0].cells;
  const sel = form.elements.namedItem('model');
  const keep = sel.value;
  sel.replaceChildren(h('option', { value: '' }, 'any model'), ...naturalSort(models).map((m) => h('option', { value: m }, m)));
  sel.value = models.includes(keep) ? keep : '';
  const keys = new Set([app.def.topologyKey, app.runs[0].snap.topologyKey].filter(Boolean));
  for (const n of app.runs[0].snap.domains.flatMap((d) => d.nodes)) for (const k of Object.keys(n.labels)) if (/topology|rack|block|zone|hostname/.test(k)) keys.add(k);
  const topo = form.elements.namedItem('topologyKey');
  const keepKey = topo.value;
  topo.replaceChildren(h('option', { value: '' }, 'no topology constraint'), ...naturalSort([...keys]).map((k) => h('option', { value: k }, k)));
  topo.value = keys.has(keepKey) ? keepKey : '';
}

/**
 * A PodGroup's minCount may not exceed its pods: Kubernetes would keep such a gang
 * waiting for pods that this form never creates. Said next to the field, and the form
 * does not submit until it is fixed.
 */
function checkMinCount(form) {
  const min = form.elements.namedItem('minCount');
  const pods = Number(form.elements.namedItem('pods').value);
  const wanted = Number(min.value || pods);
  const gang = form.elements.namedItem('kind').value === 'gang';
  const text = gang && pods >= 1 && wanted > pods
    ? `minCount ${wanted} is more than the ${pods} pod(s): the gang would wait for ${wanted - pods} pod(s) that never come. Lower minCount to at most ${pods}, or raise pods.`
    : '';
  min.setCustomValidity(text);
  if (text) min.setAttribute('aria-invalid', 'true'); else min.removeAttribute('aria-invalid');
  $('f-min-error').textContent = text;
  return !text;
}

function readUnit(form) {
  const f = new FormData(form);
  const tolerations = [];
  if (f.get('tolKey') || f.get('tolOperator') === 'Exists') {
    tolerations.push({ key: String(f.get('tolKey') ?? ''), operator: String(f.get('tolOperator')), value: String(f.get('tolValue') ?? ''), effect: String(f.get('tolEffect') ?? ''), tolerationSeconds: String(f.get('tolSeconds') ?? '') });
  }
  const kind = String(f.get('kind'));
  const pods = Number(f.get('pods'));
  return {
    kind,
    namespace: String(f.get('namespace') || 'default'),
    name: String(f.get('name')).trim(),
    pods,
    gpusPerPod: Number(f.get('gpusPerPod')),
    deviceClass: String(f.get('deviceClass') || UNIT_DEFAULTS.deviceClass),
    model: String(f.get('model') ?? ''),
    minCount: Number(f.get('minCount') || pods),
    topologyKey: String(f.get('topologyKey') ?? ''),
    priority: Number(f.get('priority') || 0),
    disruptionMode: String(f.get('disruptionMode')),
    gpuShare: String(f.get('gpuShare') ?? '').trim(),
    tolerations,
  };
}

function openYaml() {
  $('yaml-errors').replaceChildren();
  openModal($('yaml-dialog'));
  $('yaml-text').focus();
}

function loadYaml(text) {
  const result = load(app.source.policy ? { yaml: text, policy: app.source.policy } : { yaml: text });
  if (result.error) {
    const e = result.error;
    const problems = e.problems?.length ? e.problems : [{ line: message(e) }];
    $('yaml-errors').replaceChildren(h('p', {}, `Not loaded (${e.name ?? 'error'}): fix these and load again.`),
      h('ul', {}, ...problems.map((p) => h('li', {}, p.object ? h('strong', {}, p.object) : null, p.field ? h('code', {}, ` ${p.field}`) : null, p.object || p.field ? `: ${p.message}` : (p.line ?? p.message)))));
    return false;
  }
  $('yaml-dialog').close();
  pushUrl();
  const w = app.runs[0].session.warnings();
  notify(w.length ? `Loaded, with ${w.length} warning(s): ${w.slice(0, 3).join(' · ')}` : `Loaded ${app.runs[0].snap.domains.flatMap((d) => d.nodes).length} nodes.`);
  return true;
}

/** The source a decoded link names. */
function sourceOf(state) {
  const source = state.yaml !== undefined ? { yaml: state.yaml } : { scenario: state.scenario ?? SCENARIOS[0].id };
  if (state.policy !== undefined) source.policy = state.policy;
  return source;
}

/** The same case under another policy: the actions so far replayed on new sessions. */
function switchPolicy(name) {
  const source = { ...app.source };
  if (name === DEFAULT_POLICY) delete source.policy;
  else source.policy = name;
  const result = load(source, app.actions, app.selected);
  if (result.error) {
    notify(message(result.error), true);
    render();
    return;
  }
  pushUrl();
  if (result.replayed) notify(`Policy ${name}: ${POLICIES.find((p) => p.name === name)?.about ?? ''}${app.actions.length ? `; your ${app.actions.length} action(s) replayed under it` : ''}.`);
}

function notify(text, error = false) {
  const el = $('status');
  el.textContent = text;
  el.classList.toggle('error', error);
}

// ------------------------------------------------------------------- wiring

function wire() {
  const summary = $('summary');
  const toggle = () => summary.setAttribute('aria-expanded', String(summary.classList.toggle('open')));
  summary.addEventListener('click', toggle);
  summary.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); toggle(); } });
  const sel = $('scenario');
  sel.replaceChildren(...SCENARIOS.map((s) => h('option', { value: s.id }, s.title)), h('option', { value: 'yaml', disabled: true }, 'Your cluster (pasted YAML)'));
  sel.addEventListener('change', () => {
    if (sel.value === 'yaml') return;
    load(app.source.policy ? { scenario: sel.value, policy: app.source.policy } : { scenario: sel.value });
    pushUrl();
  });
  const policy = $('policy');
  policy.replaceChildren(...POLICIES.map((p) => h('option', { value: p.name, title: p.about }, p.name)));
  policy.addEventListener('change', () => { if (policy.value) switchPolicy(policy.value); });
  $('next-step').addEventListener('click', async () => { const s = nextStep(); if (s) await perform(s.do); });
  $('script-back').addEventListener('click', backToScript);
  $('step').addEventListener('click', () => perform({ op: 'cycle' }));
  $('run').addEventListener('click', () => (app.timer ? stop() : start()));
  $('advance').addEventListener('click', () => perform({ op: 'advance', seconds: Number($('advance-by').value) }));
  $('undo').addEventListener('click', undo);
  $('redo').addEventListener('click', redo);
  $('reset').addEventListener('click', () => { load(app.source); pushUrl(); });
  $('share').addEventListener('click', async () => {
    await pushUrl(true);
    try { await navigator.clipboard.writeText(location.href); notify('Link copied: it reloads to this state.'); } catch { notify(`Share this link: ${location.href}`); }
  });
  $('open-yaml').addEventListener('click', openYaml);
  $('download').addEventListener('click', () => {
    let text;
    try { text = app.runs[0].session.toManifests(); } catch (e) { notify(message(e), true); return; }
    const a = h('a', { href: URL.createObjectURL(new Blob([text], { type: 'application/yaml' })), download: `gangpack-${app.def.id}.yaml` });
    document.body.append(a);
    a.click();
    a.remove();
  });
  $('zoom-in').addEventListener('click', () => app.runs.forEach((r) => r.view.zoom(1.25)));
  $('zoom-out').addEventListener('click', () => app.runs.forEach((r) => r.view.zoom(0.8)));
  $('zoom-fit').addEventListener('click', () => app.runs.forEach((r) => { r.view.fit(); r.view.requestDraw(); }));
  $('yaml-load').addEventListener('click', () => loadYaml($('yaml-text').value));
  $('yaml-cancel').addEventListener('click', () => $('yaml-dialog').close());
  $('yaml-file').addEventListener('change', async (e) => {
    const files = [...e.target.files];
    // New files: the last load's errors were about other text.
    $('yaml-errors').replaceChildren();
    $('yaml-text').value = (await Promise.all(files.map((f) => f.text()))).join('\n---\n');
  });
  const drop = $('yaml-text');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('drag'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('drag'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('drag');
    const files = [...(e.dataTransfer?.files ?? [])];
    if (!files.length) return;
    $('yaml-errors').replaceChildren();
    drop.value = (await Promise.all(files.map((f) => f.text()))).join('\n---\n');
  });
  $('unit-filter').addEventListener('input', () => renderUnits(app.runs[0].snap));
  const form = $('submit-form');
  $('submit-details').addEventListener('toggle', submitForm);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!checkMinCount(form)) return;
    const unit = readUnit(form);
    if (!unit.name) { notify('Name the workload.', true); return; }
    if (await perform({ op: 'submit', unit })) {
      notify(`Submitted ${unit.namespace}/${unit.name}: step a cycle to schedule it.`);
      select(unit.kind === 'gang' ? 'PodGroup' : 'Pod', unit.kind === 'gang' ? `${unit.namespace}/${unit.name}` : `${unit.namespace}/${unit.pods > 1 ? `${unit.name}-0` : unit.name}`);
      const n = form.elements.namedItem('name');
      n.value = n.value.replace(/(\d*)$/, (m) => String((Number(m) || 1) + 1));
    }
  });
  form.elements.namedItem('kind').addEventListener('change', () => {
    const gang = form.elements.namedItem('kind').value === 'gang';
    for (const n of ['minCount', 'topologyKey', 'disruptionMode']) form.elements.namedItem(n).disabled = !gang;
    checkMinCount(form);
  });
  for (const n of ['pods', 'minCount']) form.elements.namedItem(n).addEventListener('input', () => checkMinCount(form));
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLSelectElement) return;
    if ((e.ctrlKey || e.metaKey) && e.key === 'z') { e.preventDefault(); (e.shiftKey ? redo : undo)(); }
  });
  let resize = null;
  window.addEventListener('resize', () => { clearTimeout(resize); resize = setTimeout(() => { for (const r of app.runs) { r.view.relayout(); r.view.fit(); r.view.draw(); } renderChart($('chart'), app.runs); }, 100); });
}

await init();
$('version').textContent = `gangpack ${version()}`;
wire();
let initial = { scenario: SCENARIOS[0].id, actions: [] };
if (location.hash.length > 1) {
  try {
    initial = await decode(location.hash);
  } catch (e) {
    notify(message(e), true);
  }
}
const first = load(sourceOf(initial), initial.actions, initial.selected);
if (first.error) {
  notify(message(first.error), true);
  load({ scenario: SCENARIOS[0].id });
}
history.replaceState({ depth: 0 }, '', location.hash || await encode({ scenario: app.source.scenario, yaml: app.source.yaml, policy: linkPolicy(), actions: app.actions, selected: linkSelection() }));

// For the end-to-end tests and the performance measurement.
window.gangpackPlayground = {
  state: () => ({
    scenario: app.def.id,
    policies: app.runs.map((r) => r.policy),
    actions: app.actions.slice(),
    // Full snapshots (with every device), read now: for the tests.
    snapshots: app.runs.map((r) => r.session.snapshot(app.def.topologyKey ? { topologyKey: app.def.topologyKey } : undefined)),
    metrics: app.runs.map((r) => r.series.at(-1)),
    timeline: app.timeline.slice(),
  }),
  cell: (id, run = 0) => app.runs[run]?.view.cellRect(id) ?? null,
  /** Where a node's name is drawn (run `run`), for clicking it. */
  nodeLabel: (name, run = 0) => app.runs[run]?.view.nodeRect(name) ?? null,
  /** Where a domain's title is drawn (run `run`), for tapping it. */
  domainLabel: (name, run = 0) => {
    const v = app.runs[run]?.view;
    const b = v?.layout.domains.find((x) => x.domain.name === name);
    return b ? { x: v.tx + (b.x + 8) * v.scale, y: v.ty + (b.y + 8) * v.scale } : null;
  },
  /** Pans a view by CSS pixels and draws it now (to put a GPU where a test needs it). */
  pan: (dx, dy, run = 0) => { const v = app.runs[run].view; v.pan(dx, dy); v.draw(); },
  /** Where a domain's box is drawn (run `run`), and the view's zoom: for the visual tests. */
  domainRect: (name, run = 0) => app.runs[run]?.view.domainRect(name) ?? null,
  zoom: (run = 0) => app.runs[run]?.view.scale ?? null,
  /** What the first view lights up now (sorted lists). */
  highlight: () => {
    const hl = app.runs[0].view.highlight;
    return { devices: [...hl.devices].sort(), nodes: [...hl.nodes].sort(), domains: [...hl.domains].sort() };
  },
  /** Milliseconds of one cycle action (the session's cycle, its snapshot and metrics) and of the redraw that follows. */
  timeCycle: async () => {
    const t0 = performance.now();
    doAction({ op: 'cycle' });
    const t1 = performance.now();
    render();
    await pushUrl();
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const t2 = performance.now();
    return { cycle: t1 - t0, redraw: t2 - t1, total: t2 - t0, render: app.lastRender };
  },
  /** Where the time of one cycle goes, on a fork (the state is unchanged). */
  profile: () => {
    const run = app.runs[0];
    const fork = run.session.fork();
    const opts = app.def.topologyKey ? { topologyKey: app.def.topologyKey } : undefined;
    const time = (f) => { const t = performance.now(); const v = f(); return [performance.now() - t, v]; };
    const [cycle] = time(() => fork.cycle());
    const [snapshot, snap] = time(() => fork.snapshot({ ...opts, devices: false }));
    const [cellsMs, cells] = time(() => fork.cells(opts));
    const [capacity] = time(() => fork.capacityReport(app.def.topologyKey ? { key: app.def.topologyKey } : undefined));
    const [metricsMs] = time(() => metrics(cells, snap, null));
    const [forkMs] = time(() => fork.fork().free());
    const sel = app.selected;
    const [explain] = time(() => { try { if (sel) fork.explain(sel.kind === 'Pod' ? { pod: sel.name } : { podGroup: sel.name }); } catch { /* not pending */ } });
    const [draw] = time(() => { run.view.update(run.snap, run.cells); });
    const [units] = time(() => renderUnits(run.snap));
    const [timeline] = time(() => renderTimeline($('timeline'), app.timeline));
    fork.free();
    return { cycle, snapshot, cells: cellsMs, capacity, metrics: metricsMs, fork: forkMs, explain, draw, units, timeline };
  },
  perform,
  /** The engine's node table of a unit (run `run`), as the Nodes section reads it. */
  nodeTable: (unit, run = 0) => app.runs[run].session.nodeTable(unit),
  palette: PALETTE,
};
document.body.dataset.ready = 'true';
