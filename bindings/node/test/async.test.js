'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ht = require('..');
const { Runtime, HermesToolsError, Status } = ht;

const ADD_SPEC = {
  name: 'add',
  toolset: 'math',
  parallel_safe: true,
  schema: {
    description: 'Add two integers',
    parameters: {
      type: 'object',
      properties: { x: { type: 'integer' }, y: { type: 'integer' } },
      required: ['x', 'y'],
    },
  },
};
const add = ({ x, y }) => ({ sum: x + y });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('100 concurrent async dispatches with async handlers', async () => {
  const rt = new Runtime();
  rt.registerTool(ADD_SPEC, async ({ x, y }) => {
    await sleep(Math.random() * 5);
    return { sum: x + y };
  });
  const ps = [];
  for (let i = 0; i < 100; i++) ps.push(rt.dispatchAsync('add', { x: i, y: 1 }));
  assert.ok(ps.every((p) => p.callId > 0));
  const results = await Promise.all(ps);
  assert.deepEqual(results.map((r) => JSON.parse(r).sum), Array.from({ length: 100 }, (_, i) => i + 1));
  // Mixed with blocking dispatches on worker threads.
  const mixed = await Promise.all([
    rt.dispatch('add', { x: 1, y: 1 }),
    rt.dispatchAsync('add', { x: 2, y: 2 }),
    rt.dispatch('add', { x: 3, y: 3 }),
  ]);
  assert.deepEqual(mixed.map((r) => JSON.parse(r).sum), [2, 4, 6]);
  await rt.close();
});

test('cancel and AbortSignal', async () => {
  const rt = new Runtime();
  const parked = [];
  rt.tool('never', { toolset: 't' }, (a, call) => {
    parked.push(call.defer());
  });
  const p = rt.dispatchAsync('never', {}, { timeout: 100 });
  await sleep(30);
  rt.cancel(p.callId);
  await assert.rejects(p, (e) => e instanceof HermesToolsError && e.status === Status.CANCELLED && /cancelled/.test(e.result));
  assert.throws(() => rt.cancel(p.callId), (e) => e.status === Status.NOT_FOUND);
  const ac = new AbortController();
  const p2 = rt.dispatchAsync('never', {}, { timeout: 100 }, { signal: ac.signal });
  await sleep(30);
  ac.abort();
  await assert.rejects(p2, (e) => e.status === Status.CANCELLED);
  await rt.close();
  for (const c of parked) c.respond('late'); // harmless after close
});

test('close with pending calls rejects them with CANCELLED', async () => {
  const rt = new Runtime();
  rt.tool('never', { toolset: 't' }, (a, call) => {
    call.defer();
  });
  const ps = Array.from({ length: 5 }, () => rt.dispatchAsync('never', {}, { timeout: 100 }));
  await sleep(30);
  const outcomes = Promise.allSettled(ps);
  await rt.close();
  for (const o of await outcomes) {
    assert.equal(o.status, 'rejected');
    assert.equal(o.reason.status, Status.CANCELLED);
  }
  assert.equal(rt.liveHandles, 0);
});

test('free functions run exactly once and release handlers', async () => {
  const rt = new Runtime();
  const released = [];
  rt.registerTool(ADD_SPEC, add, { check: () => true });
  rt.addHook('post_tool_call', () => {});
  rt.setEventHandler(() => {});
  const entries = [...rt._handles.values()];
  assert.equal(entries.length, 3);
  for (const e of entries) e.onRelease = () => released.push(e.kind);
  assert.equal(await rt.dispatch('add', { x: 1, y: 1 }), '{"sum":2}');
  // Replacing the tool frees the old registration on the callback thread.
  rt.registerTool(ADD_SPEC, add);
  for (let i = 0; i < 200 && entries[0].freeCount === 0; i++) await sleep(5);
  assert.equal(entries[0].freeCount, 1);
  assert.equal(rt.liveHandles, 3);
  await rt.close();
  assert.deepEqual(entries.map((e) => e.freeCount), [1, 1, 1]);
  assert.deepEqual(released.sort(), ['event', 'hook', 'tool']);
  assert.equal(rt.liveHandles, 0);
  assert.equal(rt.releasedCount, 4); // 3 + the replacement
});

test('failed registration leaves no handle and never frees', async () => {
  const rt = new Runtime();
  assert.throws(() => rt.registerTool('{bad', add));
  assert.throws(() => rt.addHook('nope', () => ({})));
  assert.equal(rt.liveHandles, 0);
  await rt.close();
  assert.equal(rt.releasedCount, 0);
});

test('deregistering releases the handler', async () => {
  const rt = new Runtime();
  rt.registerTool(ADD_SPEC, add);
  const [entry] = rt._handles.values();
  rt.deregisterTool('add');
  for (let i = 0; i < 200 && entry.freeCount === 0; i++) await sleep(5);
  assert.equal(entry.freeCount, 1);
  assert.equal(rt.liveHandles, 0);
  await rt.close();
});

test('the event loop stays alive for a pending async call', () => {
  const script = `
    const ht = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    const rt = new ht.Runtime();
    rt.tool('echo', { toolset: 't' }, (args) => 'echo:' + args.v);
    rt.dispatchAsync('echo', { v: 1 }).then((r) => { console.log(r); return rt.close(); }).then(() => console.log('closed'));
  `;
  const out = execFileSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 30000 });
  assert.equal(out.trim(), 'echo:1\nclosed');
});

test('an ABI mismatch is refused with a clear message', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ht-abi-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const src = path.join(dir, 'fake.c');
  const so = path.join(dir, 'libfake.so');
  fs.writeFileSync(src, 'unsigned int ht_abi_version(void) { return 999; }\n');
  const cc = spawnSync('cc', ['-shared', '-fPIC', src, '-o', so]);
  if (cc.status !== 0) {
    t.skip('no C compiler');
    return;
  }
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.resolve(__dirname, '..'))})`], {
    env: { ...process.env, HERMES_TOOLS_LIB: so },
    encoding: 'utf8',
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /ABI mismatch/);
  assert.match(r.stderr, /999/);
});

test('a missing library is a clear error', () => {
  const r = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(path.resolve(__dirname, '..'))})`], {
    env: { ...process.env, HERMES_TOOLS_LIB: '/nonexistent/libhermes_tools.so' },
    encoding: 'utf8',
  });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /cannot load libhermes_tools\.so/);
});
