'use strict';
// Cancellation reaches Node handlers as `call.signal` (an AbortSignal) and
// `call.cancelled` (issue 11): a handler that waits on its signal returns
// promptly when its call times out or is cancelled.
const test = require('node:test');
const assert = require('node:assert/strict');
const { Runtime, HermesToolsError, Status } = require('..');

const SPEC = {
  name: 'waits',
  toolset: 'node',
  schema: { description: 'waits for its cancellation', parameters: { type: 'object' } },
};

/** A handler that resolves when its signal aborts (or after 20 s), recording what it saw. */
function waiter(seen) {
  return (_args, call) =>
    new Promise((resolve) => {
      const t0 = Date.now();
      assert.equal(call.cancelled, false);
      const timer = setTimeout(() => resolve('slept'), 20000);
      call.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        seen.push({ ms: Date.now() - t0, reason: call.signal.reason, cancelled: call.cancelled });
        resolve('too late');
      });
    });
}

test('call.signal aborts when the call times out', async () => {
  const rt = new Runtime({ dispatch: { timeout: 0.1 } });
  try {
    const seen = [];
    rt.registerTool(SPEC, waiter(seen));
    const text = await rt.dispatch('waits', {});
    assert.match(text, /"status":"timeout"/);
    for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(seen.length, 1);
    assert.ok(seen[0].ms < 2000, `woke after ${seen[0].ms} ms`);
    assert.ok(seen[0].reason instanceof HermesToolsError);
    assert.equal(seen[0].reason.status, Status.CANCELLED);
    assert.equal(seen[0].cancelled, true);
  } finally {
    await rt.close();
  }
});

test('call.signal aborts when dispatch({signal}) aborts', async () => {
  const rt = new Runtime({ dispatch: { timeout: 30 } });
  try {
    const seen = [];
    rt.registerTool(SPEC, waiter(seen));
    const ac = new AbortController();
    const p = rt.dispatch('waits', {}, null, { signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    await assert.rejects(p, (e) => e instanceof HermesToolsError && e.status === Status.CANCELLED);
    for (let i = 0; i < 200 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(seen.length, 1);
    assert.ok(seen[0].ms < 2000, `woke after ${seen[0].ms} ms`);
  } finally {
    await rt.close();
  }
});

test('an answered call does not abort its signal', async () => {
  const rt = new Runtime({});
  try {
    let sig;
    rt.registerTool({ ...SPEC, name: 'quick' }, (_args, call) => {
      sig = call.signal;
      return 'ok';
    });
    assert.equal(await rt.dispatch('quick', {}), 'ok');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(sig.aborted, false);
  } finally {
    await rt.close();
    assert.equal(rt.liveHandles, 0);
  }
});

test('call.progress reaches the event handler', async () => {
  const rt = new Runtime({});
  try {
    const events = [];
    rt.setEventHandler((e) => events.push(e));
    rt.registerTool({ ...SPEC, name: 'long' }, (_args, call) => {
      assert.equal(call.progress(1, 4, 'a quarter'), Status.OK);
      return 'done';
    });
    assert.equal(await rt.dispatch('long', {}, { tool_call_id: 'call_1' }), 'done');
    for (let i = 0; i < 200 && !events.some((e) => e.type === 'tool.progress'); i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    const e = events.find((x) => x.type === 'tool.progress');
    assert.ok(e, 'no tool.progress event');
    assert.equal(e.tool_call_id, 'call_1');
    assert.equal(e.progress, 1);
    assert.equal(e.total, 4);
    assert.equal(e.message, 'a quarter');
  } finally {
    await rt.close();
  }
});
