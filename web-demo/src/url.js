// The page's state in the URL hash, so a case can be shared as a link and the back
// button undoes: `#s=<scenario>&p=<policy>&a=<actions>&u=<kind>:<name>` where the
// actions are JSON in base64url, `p` is left out for the default policy (BestFit) and
// `u` is the selected workload (`PodGroup:ns/name` or `Pod:ns/name`), left out when
// nothing is selected or the selection is the scenario's own.
// A pasted cluster travels as `y=<deflate-raw, base64url>`; when that would make
// the link longer than browsers keep comfortably, the YAML stays in this browser's
// localStorage and the link carries `y=local:<hash>` (it then only reloads here).

import { DEFAULT_POLICY, POLICIES, isPolicy } from './policies.js';

const MAX_INLINE = 60000;
/** The most a link's pasted cluster may inflate to: a link is text anyone can craft,
 * and deflate turns a few kilobytes into gigabytes. Links this page writes carry at most
 * MAX_INLINE compressed characters, far below this. */
export const MAX_LINK_YAML_BYTES = 16 * 1024 * 1024;

function toBase64Url(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text) {
  const s = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** `bytes` through `stream`; `null` (the stream stopped) once the output passes `limit` bytes. */
async function pipe(bytes, stream, limit = Infinity) {
  const reader = new Blob([bytes]).stream().pipeThrough(stream).getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return new Uint8Array(await new Blob(chunks).arrayBuffer());
    total += value.length;
    if (total > limit) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
}

async function digest(text) {
  const h = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return toBase64Url(new Uint8Array(h)).slice(0, 16);
}

/** The kinds of unit a link may select. */
const SELECTABLE = ['PodGroup', 'Pod'];

/** The hash for a state: `{ scenario, yaml?, policy?, actions, selected?: { kind, name } }`. */
export async function encode(state) {
  const parts = [];
  if (state.yaml !== undefined) {
    const packed = toBase64Url(await pipe(new TextEncoder().encode(state.yaml), new CompressionStream('deflate-raw')));
    if (packed.length <= MAX_INLINE) {
      parts.push(`y=${packed}`);
    } else {
      const id = await digest(state.yaml);
      try { localStorage.setItem(`gangpack-yaml-${id}`, state.yaml); } catch { /* storage full or off */ }
      parts.push(`y=local:${id}`);
    }
  } else {
    parts.push(`s=${encodeURIComponent(state.scenario)}`);
  }
  if (state.policy !== undefined && state.policy !== DEFAULT_POLICY) parts.push(`p=${encodeURIComponent(state.policy)}`);
  if (state.actions.length) parts.push(`a=${toBase64Url(new TextEncoder().encode(JSON.stringify(state.actions)))}`);
  if (state.selected) parts.push(`u=${encodeURIComponent(`${state.selected.kind}:${state.selected.name}`)}`);
  return `#${parts.join('&')}`;
}

/** The state of a hash; throws an Error saying what is wrong with it. */
export async function decode(hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const state = { scenario: params.get('s') ?? undefined, yaml: undefined, policy: undefined, actions: [], selected: undefined };
  const p = params.get('p');
  if (p !== null && p !== DEFAULT_POLICY) {
    if (!isPolicy(p)) throw new Error(`the link's policy (p=…) is not one of ${POLICIES.map((x) => x.name).join(', ')}`);
    state.policy = p;
  }
  const y = params.get('y');
  if (y !== null) {
    if (y.startsWith('local:')) {
      const text = localStorage.getItem(`gangpack-yaml-${y.slice(6)}`);
      if (text === null) throw new Error('this link names a pasted cluster kept in another browser (too large for the link); paste the YAML again');
      state.yaml = text;
    } else {
      let packed;
      try {
        packed = fromBase64Url(y);
      } catch {
        throw new Error('the link\'s cluster (y=…) is not base64url text');
      }
      let bytes;
      try {
        bytes = await pipe(packed, new DecompressionStream('deflate-raw'), MAX_LINK_YAML_BYTES);
      } catch (e) {
        throw new Error(`the link's cluster (y=…) is not deflate-compressed YAML: ${e instanceof Error ? e.message : e}`);
      }
      if (bytes === null) {
        throw new Error(`the link's cluster (y=…) inflates to more than ${MAX_LINK_YAML_BYTES / (1024 * 1024)} MiB; a link this page writes is far smaller, so this one was not made here`);
      }
      try {
        state.yaml = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        throw new Error('the link\'s cluster (y=…) is not UTF-8 text');
      }
    }
  }
  const a = params.get('a');
  if (a) {
    let actions;
    try {
      actions = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(a)));
    } catch (e) {
      throw new Error(`the link's actions (a=…) are not valid: ${e.message}`);
    }
    if (!Array.isArray(actions) || actions.some((x) => typeof x !== 'object' || x === null || typeof x.op !== 'string')) {
      throw new Error('the link\'s actions (a=…) must be a list of { op, ... } objects');
    }
    state.actions = actions;
  }
  const u = params.get('u');
  if (u !== null) {
    const at = u.indexOf(':');
    const kind = u.slice(0, at);
    const name = u.slice(at + 1);
    if (at < 0 || !SELECTABLE.includes(kind) || !/^[a-z0-9]([a-z0-9.\-]*[a-z0-9])?\/[a-z0-9]([a-z0-9.\-]*[a-z0-9])?$/.test(name)) {
      throw new Error(`the link's selection (u=…) must be PodGroup:<namespace>/<name> or Pod:<namespace>/<name>, not ${JSON.stringify(u.slice(0, 80))}`);
    }
    state.selected = { kind, name };
  }
  return state;
}
