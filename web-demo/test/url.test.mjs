// The link format (../src/url.js) on hostile links: a link is text anyone can craft and
// send, so decoding one must refuse, with a message saying what is wrong, anything this
// page would not have written — above all a deflate bomb, a few kilobytes that inflate to
// gigabytes — and never hand the engine more than MAX_LINK_YAML_BYTES.
//
//   cd web-demo && node --test test/

import { test } from 'node:test';
import assert from 'node:assert/strict';

import { MAX_LINK_YAML_BYTES, decode, encode } from '../src/url.js';

function base64url(bytes) {
  return Buffer.from(bytes).toString('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

async function deflate(bytes) {
  const r = new Blob([bytes]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(r).arrayBuffer());
}

test('a pasted cluster and actions survive the round trip', async () => {
  const yaml = 'apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-0 # ünïcode\n';
  const actions = [{ op: 'cycle' }, { op: 'taint', device: 'gpu-0/gpu-1', effect: 'NoExecute' }];
  const back = await decode(await encode({ yaml, actions }));
  assert.equal(back.yaml, yaml);
  assert.deepEqual(back.actions, actions);
});

test('the policy travels as p=, left out for the default', async () => {
  const actions = [{ op: 'cycle' }];
  const hash = await encode({ scenario: 'demo', policy: 'Stranding', actions });
  assert.match(hash, /^#s=demo&p=Stranding&a=/);
  assert.deepEqual(await decode(hash), { scenario: 'demo', yaml: undefined, policy: 'Stranding', actions, selected: undefined });
  assert.equal(await encode({ scenario: 'demo', policy: 'BestFit', actions: [] }), '#s=demo');
  assert.equal(await encode({ scenario: 'demo', actions: [] }), '#s=demo');
  assert.equal((await decode('#s=demo')).policy, undefined);
  assert.equal((await decode('#s=demo&p=BestFit')).policy, undefined);
  await assert.rejects(decode('#s=demo&p=binpack'), (e) => {
    assert.equal(e.message, "the link's policy (p=…) is not one of BestFit, Spread, Stranding, FGD, GangAware");
    return true;
  });
});

test('a deflate bomb is refused once it passes the limit, naming the limit', async () => {
  // 64 MiB of spaces packs into about 64 KB: the size of a link this page could write.
  const bomb = await deflate(new Uint8Array(64 * 1024 * 1024).fill(0x20));
  assert.ok(bomb.length < 100_000, `the bomb is ${bomb.length} bytes packed`);
  await assert.rejects(decode(`#y=${base64url(bomb)}`), (e) => {
    assert.match(e.message, /^the link's cluster \(y=…\) inflates to more than 16 MiB/);
    return true;
  });
});

test('a cluster just under the limit still loads', async () => {
  const yaml = '#'.repeat(MAX_LINK_YAML_BYTES);
  const back = await decode(`#y=${base64url(await deflate(new TextEncoder().encode(yaml)))}`);
  assert.equal(back.yaml.length, MAX_LINK_YAML_BYTES);
});

test('malformed links say which part is wrong', async () => {
  const cases = [
    ['#y=%%%%', /^the link's cluster \(y=…\) is not base64url text$/],
    [`#y=${base64url(new TextEncoder().encode('plain text, not deflate'))}`, /^the link's cluster \(y=…\) is not deflate-compressed YAML/],
    [`#y=${base64url(await deflate(new Uint8Array([0x6b, 0x69, 0x6e, 0x64, 0xff, 0xfe])))}`, /^the link's cluster \(y=…\) is not UTF-8 text$/],
    [`#a=${base64url(new Uint8Array([0xff, 0xfe]))}`, /^the link's actions \(a=…\) are not valid/],
    [`#a=${base64url(new TextEncoder().encode('{"op":"cycle"}'))}`, /must be a list of \{ op, \.\.\. \} objects$/],
    [`#a=${base64url(new TextEncoder().encode('[{"op":3}]'))}`, /must be a list of \{ op, \.\.\. \} objects$/],
  ];
  for (const [hash, expected] of cases) {
    await assert.rejects(decode(hash), (e) => {
      assert.match(e.message, expected, hash);
      return true;
    });
  }
});

test('the selected workload travels as u=<kind>:<namespace/name> (issue 37)', async () => {
  const actions = [{ op: 'cycle' }];
  for (const selected of [{ kind: 'PodGroup', name: 'ml-training/gpt-moe-pretrain' }, { kind: 'Pod', name: 'default/chat-0' }]) {
    const hash = await encode({ scenario: 'demo', actions, selected });
    assert.match(hash, /&u=/);
    assert.deepEqual(await decode(hash), { scenario: 'demo', yaml: undefined, policy: undefined, actions, selected });
  }
  assert.equal(await encode({ scenario: 'demo', actions: [], selected: null }), '#s=demo');
  assert.equal((await decode('#s=demo')).selected, undefined);
  for (const bad of ['Node:default/x', 'PodGroup', 'PodGroup:', 'PodGroup:no-namespace', 'Pod:default/<script>']) {
    await assert.rejects(decode(`#s=demo&u=${encodeURIComponent(bad)}`), (e) => {
      assert.match(e.message, /^the link's selection \(u=…\) must be PodGroup:<namespace>\/<name> or Pod:<namespace>\/<name>/);
      return true;
    });
  }
});
