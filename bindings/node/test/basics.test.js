'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
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

async function withRuntime(config, fn) {
  const rt = new Runtime(config);
  try {
    await fn(rt);
  } finally {
    await rt.close();
    assert.equal(rt.liveHandles, 0, 'every registration was released');
  }
}

test('versions and ABI', () => {
  assert.equal(ht.abiVersion(), ht.ABI_VERSION);
  assert.match(ht.version(), /^hermes-tools\//);
  assert.equal(ht.features().abi, 1);
});

test('register, definitions, dispatch', () =>
  withRuntime({}, async (rt) => {
    assert.equal(rt.registerTool(ADD_SPEC, add), 'add');
    const defs = await rt.definitions();
    assert.deepEqual(defs.map((d) => d.function.name), ['add']);
    const anth = await rt.definitions({ format: 'anthropic' });
    assert.ok('input_schema' in anth[0]);
    assert.deepEqual(JSON.parse(await rt.dispatch('add', { x: '40', y: 2 })), { sum: 42 });
    assert.deepEqual(JSON.parse(await rt.dispatch('add', '{"x":1,"y":2}')), { sum: 3 });
    assert.match(await rt.dispatch('add', { x: 1 }), /missing required property 'y'/);
    assert.match(await rt.dispatch('ad', {}), /Unknown tool: ad/);
  }));

test('async handlers, context and name', () =>
  withRuntime({}, async (rt) => {
    let seen;
    rt.tool('slow', { toolset: 't', description: 'waits' }, async (args, call) => {
      await new Promise((r) => setTimeout(r, 10));
      seen = { name: call.name, ctx: call.context };
      return 'done';
    });
    assert.equal(await rt.dispatch('slow', {}, { task_id: 't1' }), 'done');
    assert.equal(seen.name, 'slow');
    assert.equal(seen.ctx.task_id, 't1');
  }));

test('exceptions and rejections become error results', () =>
  withRuntime({}, async (rt) => {
    rt.tool('boom', { toolset: 't' }, () => {
      throw new Error('disk full');
    });
    rt.tool('rej', { toolset: 't' }, async () => {
      throw new RangeError('too far');
    });
    rt.tool('err', { toolset: 't' }, (args, call) => {
      call.respondError('<tool_call>nope</tool_call>');
    });
    assert.match(JSON.parse(await rt.dispatch('boom', {})).error, /disk full/);
    assert.match(JSON.parse(await rt.dispatch('rej', {})).error, /too far/);
    assert.match(JSON.parse(await rt.dispatch('err', {})).error, /nope/);
    rt.registerTool(ADD_SPEC, add);
    assert.deepEqual(JSON.parse(await rt.dispatch('add', { x: 1, y: 1 })), { sum: 2 });
  }));

test('deferred answer later', () =>
  withRuntime({}, async (rt) => {
    rt.tool('later', { toolset: 't' }, (args, call) => {
      call.defer();
      setTimeout(() => {
        assert.equal(call.respond('late but fine'), Status.OK);
        assert.equal(call.respond('again'), Status.NOT_FOUND);
      }, 20);
    });
    assert.equal(await rt.dispatch('later', {}), 'late but fine');
  }));

test('re-entrant handler calls back into the runtime', () =>
  withRuntime({}, async (rt) => {
    rt.registerTool(ADD_SPEC, add);
    rt.tool('re', { toolset: 't' }, async () => {
      const defs = await rt.definitions();
      assert.ok(defs.some((d) => d.function.name === 'add'));
      return rt.dispatch('add', { x: 2, y: 3 });
    });
    assert.deepEqual(JSON.parse(await rt.dispatch('re', {})), { sum: 5 });
    assert.deepEqual(JSON.parse(await rt.dispatchAsync('re', {})), { sum: 5 });
  }));

test('timeout, then a late answer is harmless', () =>
  withRuntime({ dispatch: { timeout: 0.2 } }, async (rt) => {
    const parked = [];
    rt.tool('never', { toolset: 't' }, (args, call) => {
      parked.push(call.defer());
    });
    assert.match(await rt.dispatch('never', {}), /timed out/);
    assert.equal(parked[0].respond('too late'), Status.TIMEOUT);
  }));

test('availability checks', () =>
  // 5 s for a check (it runs on the JS thread): not the default 250 ms.
  withRuntime({ availability: { check_timeout_ms: 5000 } }, async (rt) => {
    rt.registerTool(ADD_SPEC, add, { check: () => false });
    assert.deepEqual(await rt.definitions(), []);
    rt.registerTool({ ...ADD_SPEC, name: 'add2' }, add, { check: () => true });
    rt.registerTool({ ...ADD_SPEC, name: 'add3' }, add, {
      check: () => {
        throw new Error('x');
      },
    });
    assert.deepEqual((await rt.definitions()).map((d) => d.function.name), ['add2']);
    rt.invalidateAvailability();
  }));

test('errors carry status and message', () =>
  // Schemas compile at registration here, so a bad one is refused there.
  withRuntime({ dispatch: { compile_schemas: 'at_registration' } }, async (rt) => {
    rt.registerTool(ADD_SPEC, add);
    assert.throws(
      () => rt.registerTool({ ...ADD_SPEC, toolset: 'other' }, add),
      (e) => e instanceof HermesToolsError && e.status === Status.CONFLICT && /override/.test(e.message),
    );
    rt.registerTool({ ...ADD_SPEC, toolset: 'other', override: true }, add);
    assert.throws(
      () =>
        rt.registerTool(
          { name: 'bad', toolset: 't', schema: { parameters: { type: 'object', properties: { n: { type: 'int' } } } } },
          add,
        ),
      (e) => e.status === Status.INVALID_ARGUMENT && /properties\.n\.type/.test(e.message),
    );
    assert.throws(
      () => rt.registerTool(Buffer.from([0x7b, 0x22, 0x6e, 0xff, 0x22, 0x7d]), add),
      (e) => e.status === Status.INVALID_UTF8,
    );
    assert.throws(() => rt.registerTool('{not json', add), HermesToolsError);
    await assert.rejects(rt.definitions({ enabledToolsets: ['nope'] }), (e) => e.status === Status.NOT_FOUND);
    assert.throws(() => rt.deregisterTool('nope'), (e) => e.status === Status.NOT_FOUND);
    assert.throws(() => rt.addHook('pre_tool_cal', () => ({})), (e) => e.status === Status.INVALID_ARGUMENT);
  }));

test('bad config names the key', () => {
  assert.throws(
    () => new Runtime({ dispatch: { timeoutt: 1 } }),
    (e) => e.status === Status.INVALID_JSON && /timeoutt/.test(e.message),
  );
});

test('type errors are caught before C', () =>
  withRuntime({}, async (rt) => {
    assert.throws(() => rt.registerTool(ADD_SPEC, 'nope'), TypeError);
    assert.throws(() => rt.addHook('pre_tool_call', null), TypeError);
    await assert.rejects(rt.dispatch(123, {}), TypeError);
  }));

test('closed runtime gives CLOSED errors', async () => {
  const rt = new Runtime();
  await rt.close();
  await rt.close(); // idempotent
  assert.ok(rt.closed);
  const closed = (e) => e instanceof HermesToolsError && e.status === Status.CLOSED;
  assert.throws(() => rt.registerTool(ADD_SPEC, add), closed);
  assert.throws(() => rt.dispatchAsync('add', {}), closed);
  assert.throws(() => rt.generation, closed);
  assert.throws(() => rt.cancel(1), closed);
  await assert.rejects(rt.dispatch('add', {}), closed);
  await assert.rejects(rt.definitions(), closed);
  await assert.rejects(rt.toolsets(), closed);
});

test('NULL arguments at the C level are refused cleanly', () => {
  const C = ht.lib;
  const out = [null];
  const len = [0];
  const err = [null];
  assert.equal(C.dispatch(null, Buffer.from('add'), 3, Buffer.from('{}'), 2, null, 0, out, len, err), Status.INVALID_ARGUMENT);
  assert.equal(C.errorCode(err[0]), Status.INVALID_ARGUMENT);
  C.errorFree(err[0]);
  assert.equal(C.runtimeNew(null, 0, null, null), Status.INVALID_ARGUMENT);
  C.runtimeFree(null);
  C.stringFree(null);
  C.errorFree(null);
  assert.equal(C.errorMessage(null), null);
  assert.equal(Number(C.generation(null)), 0);
  assert.notEqual(C.callRespond(null, false, Buffer.from('x'), 1), Status.OK);
  assert.notEqual(C.hookRespond(null, null, 0), Status.OK);
});

test('toolsets, define, alias, generation, deregister', () =>
  withRuntime({}, async (rt) => {
    const g0 = rt.generation;
    rt.registerTool(ADD_SPEC, add);
    assert.ok(rt.generation > g0);
    rt.defineToolset('arith', { description: 'Arithmetic', tools: ['add'] });
    rt.aliasToolset('mcp-math', 'arith');
    const sets = Object.fromEntries((await rt.toolsets()).map((t) => [t.name, t]));
    assert.ok(sets.arith.resolved_tools.includes('add'));
    assert.deepEqual((await rt.definitions({ enabledToolsets: ['mcp-math'] })).map((d) => d.function.name), ['add']);
    assert.throws(() => rt.defineToolset({ name: 'x', includes: ['nope'] }), HermesToolsError);
    rt.deregisterTool('add');
    assert.deepEqual(await rt.definitions(), []);
    await rt.cleanupTask('t1');
  }));

test('command check', () => {
  assert.equal(ht.commandCheck('rm -rf /').verdict, 'block');
  assert.equal(ht.commandCheck('ls -la').verdict, 'allow');
  const rt = new Runtime();
  assert.equal(rt.commandCheck('rm -rf /').verdict, 'block');
  return rt.close();
});

test('batch keeps order and failures', () =>
  withRuntime({}, async (rt) => {
    rt.registerTool(ADD_SPEC, add);
    rt.tool('fails', { toolset: 't' }, (a, call) => call.respondError('disk full'));
    const out = await rt.dispatchBatch([
      { id: 'a', type: 'function', function: { name: 'add', arguments: '{"x":1,"y":1}' } },
      { id: 'b', type: 'function', function: { name: 'add', arguments: { x: 2, y: 2 } } },
      { id: 'c', type: 'function', function: { name: 'fails', arguments: '{}' } },
      { id: 'd', type: 'function', function: { name: 'add', arguments: '{"x":3,"y":3}' } },
    ]);
    assert.deepEqual(out.map((r) => r.tool_call_id), ['a', 'b', 'c', 'd']);
    assert.deepEqual(JSON.parse(out[3].content), { sum: 6 });
    assert.match(out[2].content, /disk full/);
  }));

test('hooks: block, rewrite, transform, observe, async, failure', () =>
  withRuntime({}, async (rt) => {
    rt.registerTool(ADD_SPEC, add);
    const posts = [];
    rt.addHook('pre_tool_call', async (ev) => {
      await new Promise((r) => setTimeout(r, 1));
      if (ev.args.x === 666) return { action: 'block', message: 'no devils' };
      if (ev.args.x === 7) return { action: 'rewrite', args: { x: 70, y: ev.args.y } };
      if (ev.args.x === 13) throw new Error('unlucky');
      return undefined;
    });
    rt.addHook('transform_tool_result', (ev) => (ev.result.includes('sum') ? { result: ev.result + '!' } : {}));
    rt.addHook('post_tool_call', (ev) => {
      posts.push(ev);
    });
    assert.deepEqual(JSON.parse(await rt.dispatch('add', { x: 666, y: 1 })), { error: 'no devils' });
    assert.equal(await rt.dispatch('add', { x: 7, y: 1 }), '{"sum":71}!');
    assert.match(JSON.parse(await rt.dispatch('add', { x: 13, y: 1 })).error, /hook failed: .*unlucky/);
    assert.equal(await rt.dispatchAsync('add', { x: 1, y: 1 }), '{"sum":2}!');
    assert.ok(posts.length >= 2 && posts[0].tool_name === 'add');
  }));

test('event handler set, replace, remove', () =>
  withRuntime({}, async (rt) => {
    rt.setEventHandler(() => {});
    rt.setEventHandler(() => {});
    rt.setEventHandler(null);
  }));

test('log handler install and remove', async () => {
  const lines = [];
  await ht.setLogHandler((level, msg) => lines.push([level, msg]), 5);
  await withRuntime({}, async (rt) => {
    rt.registerTool(ADD_SPEC, add);
    await rt.dispatch('add', { x: 1, y: 2 });
  });
  await ht.setLogHandler(null);
  // Lines come from the library's log thread, after removal too.
  for (let i = 0; i < 500 && lines.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(lines.length > 0, 'debug lines were delivered');
  // Replacing and removing while lines are flowing must not deadlock.
  for (let i = 0; i < 5; i++) {
    await ht.setLogHandler(() => {}, 5);
    const rt = new Runtime();
    rt.registerTool(ADD_SPEC, add);
    await Promise.all([rt.dispatch('add', { x: 1, y: 1 }), ht.setLogHandler(null), rt.dispatchAsync('add', { x: 1, y: 2 })]);
    await rt.close();
  }
  for (const [l, m] of lines) {
    assert.equal(typeof l, 'number');
    assert.equal(typeof m, 'string');
  }
});

test('interceptor handles agent-loop tools', () =>
  withRuntime({}, async (rt) => {
    rt.registerTool(
      {
        name: 'todo',
        toolset: 'todo',
        agent_loop: true,
        schema: { parameters: { type: 'object', properties: { n: { type: 'integer' } } } },
      },
      () => 'not used',
    );
    assert.match(await rt.dispatch('todo', {}), /must be handled by the agent loop/);
    rt.setInterceptor(async (args) => ({ looped: args }));
    assert.deepEqual(JSON.parse(await rt.dispatch('todo', { n: '2' })), { looped: { n: 2 } });
    rt.setInterceptor(null);
    assert.match(await rt.dispatch('todo', {}), /agent loop/);
  }));

test('built-in file tools write and read a file', {
  skip: (ht.features().builtin_toolsets || []).includes('file') ? false : 'library without the built-in file toolset',
}, async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const path = require('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ht-node-file-'));
  const rt = new Runtime({ builtin_toolsets: ['file'], terminal: { cwd: dir }, data_dir: path.join(dir, 'data') });
  try {
    const w = JSON.parse(await rt.dispatch('write_file', { path: 'node.txt', content: 'hello\nnode\n' }));
    assert.equal(w.bytes_written, 11);
    const r = JSON.parse(await rt.dispatch('read_file', { path: 'node.txt' }));
    assert.equal(r.content, '1|hello\n2|node');
  } finally {
    await rt.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
