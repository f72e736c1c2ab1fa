// The node table of the selected workload (issue 37): every node of the cluster for
// one pod of it (a PodGroup: its first pending member), with the filter that rejects
// the node and why, or how many pods of the shape fit there, its score under the
// policy, its place in the placement's order and how many pods the placement puts
// there. Read from `Scheduler.nodeTable(unit)`; nothing is decided here.
//
// A collapsible section of the answers panel: computed only while open (after the
// map is drawn), sortable by any column (a `<button>` in each header, `aria-sort`),
// filterable, the first ROWS_SHOWN rows drawn until "show all", and scrolling inside
// its own box (a phone's page does not widen). Hovering or focusing a row lights its
// node up on the map.

import { naturalCompare } from './natural.js';
import { h } from './panel.js';

/** Rows drawn before "show all": a 1,000-node table stays quick to draw. */
export const ROWS_SHOWN = 200;
/** `pods` of a node where nothing the pod requests bounds it. */
const UNLIMITED = 4294967295;

/** Names in natural order (`node-2` before `node-10`), as everywhere on the page. */
export const natural = naturalCompare;

/** A score as the command line prints it: whole numbers bare, else three decimals. */
export function scoreText(score) {
  if (score === null || score === undefined) return '—';
  return Number.isInteger(score) ? String(score) : score.toFixed(3);
}

/** The result column: the filter that rejects the node, or how many pods of the shape fit there. */
export function resultText(row) {
  if (!row.feasible) return row.filter ?? 'rejected';
  return row.pods >= UNLIMITED ? 'fits (no limit)' : `fits ${row.pods}`;
}

const byName = (a, b) => natural(a.node, b.node);
/** Nulls last whatever the direction. */
const nullsLast = (x, y, cmp) => (x === null ? (y === null ? 0 : 1) : y === null ? -1 : cmp(x, y));

/**
 * The columns: key, header, a comparator for ascending order, the direction a first
 * click sorts in, and the cell's text. `result` ascending is the default order:
 * feasible nodes first in the order the placement tries them, then rejected ones by name.
 */
function columns(table) {
  const best = table.higherIsBetter ? 'descending' : 'ascending';
  return [
    { key: 'node', label: 'node', first: 'ascending', cmp: byName, text: (r) => r.node },
    { key: 'domain', label: table.key ? table.key.split('/').pop() : 'domain', title: table.key ?? 'the unit has no topology key', first: 'ascending',
      cmp: (a, b) => nullsLast(a.domain, b.domain, natural), text: (r) => r.domain ?? '—' },
    { key: 'result', label: 'result', first: 'ascending', title: 'the filter that rejects the node, or how many pods of the shape fit there',
      cmp: (a, b) => (a.feasible === b.feasible ? 0 : a.feasible ? -1 : 1) || nullsLast(a.order, b.order, (x, y) => x - y), text: resultText },
    { key: 'score', label: 'score', first: best, title: `${table.score} (${table.higherIsBetter ? 'higher' : 'lower'} is better)`,
      cmp: (a, b) => nullsLast(a.score, b.score, (x, y) => x - y), text: (r) => scoreText(r.score), nullsLast: true },
    { key: 'planned', label: 'planned', first: 'descending', title: 'pods of the shape the placement puts there now', cmp: (a, b) => a.planned - b.planned, text: (r) => String(r.planned) },
    { key: 'reason', label: 'reason', first: 'ascending', cmp: (a, b) => nullsLast(a.reason, b.reason, (x, y) => x.localeCompare(y)), text: (r) => r.reason ?? '', nullsLast: true },
  ];
}

/**
 * The rows in a column's order; ties (and the reverse direction's ties) by node name.
 * Rows without a value in the column (rejected nodes' scores, feasible nodes' reasons)
 * stay last in either direction.
 */
export function sortRows(rows, table, key, dir) {
  const col = columns(table).find((c) => c.key === key) ?? columns(table)[2];
  const sign = dir === 'descending' ? -1 : 1;
  const empty = (r) => col.nullsLast && (key === 'score' ? r.score === null : r.reason === null);
  return rows.slice().sort((a, b) => {
    if (col.nullsLast && empty(a) !== empty(b)) return empty(a) ? 1 : -1;
    return sign * col.cmp(a, b) || byName(a, b);
  });
}

// What survives a re-render (every action draws the panel again): whether the section
// is open, its sort, its filter and whether every row is shown.
const prefs = { open: false, key: 'result', dir: 'ascending', filter: '', all: false };

/**
 * The section for one unit of one session. `unit` is `{ podGroup }` or `{ pod }`;
 * `view` the session's ClusterView (its highlight API lights a row's node up); `id` a
 * suffix that keeps element ids unique when several sessions are side by side.
 */
export function nodeTableSection({ session, unit, view, id = 0, label = '' }) {
  const body = h('div', { class: 'node-table-body' });
  const summary = h('summary', {}, h('h4', { id: `nodes-h-${id}` }, `Nodes${label ? ` (${label})` : ''}: each one's filter or score`));
  const details = h('details', { class: 'node-table', 'data-ready': 'false', open: prefs.open }, summary, body);
  let scheduled = false;
  const fill = () => {
    scheduled = false;
    if (!details.isConnected || !details.open) return;
    let table;
    try {
      table = session.nodeTable(unit);
    } catch (e) {
      body.replaceChildren(h('p', { class: 'error' }, `${e?.name ? `${e.name}: ` : ''}${e?.message ?? String(e)}`));
      details.dataset.ready = 'true';
      return;
    }
    renderTable(body, table, view, id, () => openWide(table, view, id, () => renderTable(body, table, view, id)));
    details.dataset.ready = 'true';
  };
  // After the map is drawn (a 1,000-node table takes a moment), and only while open.
  const later = () => {
    if (scheduled) return;
    scheduled = true;
    body.replaceChildren(h('p', { class: 'hint' }, 'Reading every node…'));
    setTimeout(fill);
  };
  details.addEventListener('toggle', () => {
    prefs.open = details.open;
    if (details.open && details.dataset.ready !== 'true') later();
  });
  if (prefs.open) later();
  return details;
}

/**
 * The same table in a modal dialog as wide as the window (the side panel is narrow):
 * its sort and filter are the panel's; `closed` redraws the panel's table after.
 */
function openWide(table, view, id, closed) {
  const title = h('h3', { id: `nodes-wide-h-${id}` }, `Nodes for ${table.pod}`);
  const content = h('div', { class: 'node-table-body' });
  const dlg = h('dialog', { class: 'node-table-wide', 'aria-labelledby': `nodes-wide-h-${id}` }, title, content,
    h('div', { class: 'buttons' }, h('button', { type: 'button', class: 'close-wide', onclick: () => dlg.close() }, 'Close')));
  dlg.addEventListener('close', () => { dlg.remove(); closed(); });
  document.body.append(dlg);
  renderTable(content, table, view, `${id}-wide`, null);
  dlg.showModal();
  title.setAttribute('tabindex', '-1');
  title.focus();
}

function renderTable(body, table, view, id, wide) {
  if (!table.pod) {
    body.replaceChildren(h('p', {}, 'No pod of it is pending: there is no pod to try on the nodes.'));
    return;
  }
  const cols = columns(table);
  const counts = new Map();
  for (const r of table.rows) if (!r.feasible) counts.set(r.filter, (counts.get(r.filter) ?? 0) + 1);
  const fit = table.rows.filter((r) => r.feasible).length;
  const planned = table.rows.reduce((n, r) => n + r.planned, 0);
  const who = `Pod ${table.pod}${table.group ? ` (the first pending member of PodGroup ${table.group})` : ''}`
    + `${table.bound ? `: bound to ${table.bound}; the rows are for a pending copy of it` : ''}.`;
  const tally = `${table.rows.length} node(s): ${fit} fit${planned ? ` (the placement puts ${planned} pod(s) on them now)` : ''}`
    + `${counts.size ? `; rejected by ${[...counts].map(([f, n]) => `${f} ${n}`).join(', ')}` : ''}.`;
  const direction = table.higherIsBetter ? 'higher is better' : 'lower is better';
  const filter = h('input', { type: 'search', class: 'filter', id: `nodes-filter-${id}`, value: prefs.filter, placeholder: 'filter: node, domain, result, reason…' });
  const count = h('p', { class: 'hint node-count', 'aria-live': 'polite' });
  const tbody = h('tbody');
  const thead = h('thead');
  const more = h('div', { class: 'buttons' });
  const table$ = h('table', { class: 'node-table', 'aria-labelledby': `nodes-h-${id}`, 'aria-describedby': `nodes-score-${id}` }, thead, tbody);
  const scroll = h('div', { class: 'node-table-scroll', tabindex: '0', role: 'region', 'aria-label': 'Node table (scrolls)' }, table$);

  let saved = null;
  const light = (node) => {
    if (!view) return;
    if (saved === null) saved = view.highlight;
    view.setHighlight({ nodes: [node], dim: false });
  };
  const unlight = () => {
    if (!view || saved === null) return;
    view.setHighlight(saved);
    saved = null;
  };

  const draw = () => {
    thead.replaceChildren(h('tr', {}, ...cols.map((c) => {
      const sorted = prefs.key === c.key;
      const next = sorted ? (prefs.dir === 'ascending' ? 'descending' : 'ascending') : c.first;
      return h('th', { scope: 'col', class: `col-${c.key}`, 'aria-sort': sorted ? prefs.dir : null, title: c.title },
        h('button', { type: 'button', 'data-key': c.key, 'aria-label': `${c.label}: sort ${next}`, onclick: () => {
          prefs.dir = next;
          prefs.key = c.key;
          draw();
          thead.querySelector(`button[data-key="${c.key}"]`)?.focus();
        } }, c.label, h('span', { class: 'arrow', 'aria-hidden': 'true' }, sorted ? (prefs.dir === 'ascending' ? ' ▲' : ' ▼') : '')));
    })));
    const needle = prefs.filter.trim().toLowerCase();
    const rows = sortRows(table.rows, table, prefs.key, prefs.dir)
      .filter((r) => !needle || cols.some((c) => c.text(r).toLowerCase().includes(needle)));
    const shown = prefs.all ? rows : rows.slice(0, ROWS_SHOWN);
    tbody.replaceChildren(...shown.map((r) => h('tr', {
      class: r.feasible ? (r.planned ? 'fits planned' : 'fits') : 'rejected',
      'data-node': r.node,
      onmouseenter: () => light(r.node),
      onmouseleave: unlight,
      onfocusin: () => light(r.node),
      onfocusout: unlight,
    },
    h('th', { scope: 'row' }, h('button', { type: 'button', class: 'node-link', title: 'Light it up on the map', onclick: () => { saved = null; view?.setHighlight({ nodes: [r.node], dim: false }); } }, r.node)),
    ...cols.slice(1).map((c) => h('td', { class: `col-${c.key}` }, c.text(r))))));
    count.textContent = `${shown.length === rows.length ? `${rows.length}` : `${shown.length} of ${rows.length}`} row(s)${needle ? ` matching “${prefs.filter.trim()}”` : ''}.`;
    more.replaceChildren(...(rows.length > ROWS_SHOWN
      ? [h('button', { type: 'button', class: 'show-all', onclick: () => { prefs.all = !prefs.all; draw(); } }, prefs.all ? `Show the first ${ROWS_SHOWN}` : `Show all ${rows.length}`)]
      : []));
  };
  filter.addEventListener('input', () => { prefs.filter = filter.value; draw(); });
  body.replaceChildren(
    h('p', {}, who),
    h('p', { id: `nodes-score-${id}`, class: 'score-meaning' }, h('strong', {}, `Score (${table.policy}): `), `${table.score}. `, h('strong', {}, `${direction[0].toUpperCase()}${direction.slice(1)}.`)),
    h('p', {}, tally),
    h('label', { class: 'sr-only', for: `nodes-filter-${id}` }, 'Filter the nodes'),
    h('div', { class: 'node-tools' }, filter,
      wide ? h('button', { type: 'button', class: 'open-wide', title: 'The table as wide as the window', onclick: wide }, 'Wide view…') : null),
    count,
    scroll,
    more);
  draw();
}
