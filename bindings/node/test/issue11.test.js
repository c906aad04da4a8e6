'use strict';
// Regression tests for issue 11 (Node): no deadlock on libuv's pool, no hang
// at exit or close, unserializable results, dispatch(undefined), the event
// list, index.d.ts doc comments, and the batch shapes the binding builds.
// Scenarios that used to hang run in a child process with a hard time limit.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ht = require('..');
const { Runtime, HermesToolsError, Status } = ht;

const PKG = path.resolve(__dirname, '..');
const hasTerminal = (ht.features().builtin_toolsets || []).includes('terminal');
const hasApprovals = !!ht.lib.setApprovalHandler && hasTerminal;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Run `body` in a fresh node process (libuv pool of 4); SIGKILL after limitMs. */
function child(body, limitMs = 20000, env = {}) {
  const script = `const ht = require(${JSON.stringify(PKG)});\n${body}`;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    timeout: limitMs,
    killSignal: 'SIGKILL',
    env: { ...process.env, UV_THREADPOOL_SIZE: '4', ...env },
  });
  return { ...r, ms: Date.now() - t0, killed: r.signal === 'SIGKILL' };
}

const tempDirs = [];
test.after(() => {
  for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
});

function smallFile() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ht-node-i11-'));
  tempDirs.push(dir);
  const file = path.join(dir, 'small.txt');
  fs.writeFileSync(file, 'hello from a small file\n');
  return file;
}

// --- finding 1: no libuv pool thread waits for JS ---------------------------

test('issue 11.1: eight concurrent dispatches whose handlers read files all complete', () => {
  const file = smallFile();
  const r = child(`
    const fs = require('node:fs');
    const FILE = ${JSON.stringify(file)};
    const rt = new ht.Runtime();
    rt.tool('read_promises', { toolset: 't' }, async () => (await fs.promises.readFile(FILE, 'utf8')).length);
    rt.tool('read_callback', { toolset: 't' }, () =>
      new Promise((res, rej) => fs.readFile(FILE, 'utf8', (e, d) => (e ? rej(e) : res(d.length)))));
    rt.tool('read_parallel', { toolset: 't', parallelSafe: true }, async () => (await fs.promises.readFile(FILE)).length);
    (async () => {
      const calls = [];
      for (let i = 0; i < 8; i++) calls.push(rt.dispatch(i % 2 ? 'read_promises' : 'read_callback', {}));
      const one = await Promise.all(calls);
      // Twice as many as the pool has threads, mixed with async dispatches and a batch.
      const mixed = await Promise.all([
        ...Array.from({ length: 8 }, () => rt.dispatchAsync('read_promises', {})),
        rt.dispatchBatch(Array.from({ length: 8 }, (_, i) => ({ id: 'c' + i, type: 'function',
          function: { name: i < 4 ? 'read_parallel' : 'read_callback', arguments: '{}' } }))),
      ]);
      console.log(JSON.stringify({ one, mixed: mixed.slice(0, 8), batch: mixed[8].map((x) => x.content) }));
      await rt.close();
      console.log('closed');
    })();
  `);
  assert.equal(r.killed, false, `deadlocked (killed after ${r.ms} ms); stderr: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  const [line, closed] = r.stdout.trim().split('\n');
  const out = JSON.parse(line);
  assert.deepEqual(out.one, Array(8).fill('24'));
  assert.deepEqual(out.mixed, Array(8).fill('24'));
  assert.deepEqual(out.batch, Array(8).fill('24'));
  assert.equal(closed, 'closed');
});

test('issue 11.1: approval callbacks that read files do not deadlock eight dispatches', { skip: !hasApprovals }, () => {
  const file = smallFile();
  const r = child(`
    const fs = require('node:fs');
    const FILE = ${JSON.stringify(file)};
    const rt = new ht.Runtime({ builtin_toolsets: ['terminal'], terminal: { backend: 'local' } });
    let asked = 0;
    rt.setApprovalHandler(async (req) => {
      asked++;
      await fs.promises.readFile(FILE);
      await new Promise((res, rej) => fs.readFile(FILE, (e) => (e ? rej(e) : res())));
      return 'deny';
    });
    (async () => {
      const cmd = (i) => 'rm -rf /tmp/hermes_tools_node_i11_never_there_' + i;
      const outs = await Promise.all(Array.from({ length: 8 }, (_, i) =>
        rt.dispatch('terminal', { command: cmd(i) }, { task_id: 't' + i })));
      console.log(JSON.stringify({ asked, statuses: outs.map((o) => JSON.parse(o).status) }));
      await rt.close();
    })();
  `);
  assert.equal(r.killed, false, `deadlocked (killed after ${r.ms} ms); stderr: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim());
  assert.equal(out.asked, 8);
  assert.deepEqual(out.statuses, Array(8).fill('blocked'));
});

test('issue 11.1: four long terminal commands in flight do not starve fs', { skip: !hasTerminal }, () => {
  const file = smallFile();
  const r = child(`
    const fs = require('node:fs');
    const rt = new ht.Runtime({ builtin_toolsets: ['terminal'], terminal: { backend: 'local' } });
    (async () => {
      const running = Array.from({ length: 4 }, (_, i) =>
        rt.dispatch('terminal', { command: 'sleep 20', timeout: 30 }, { task_id: 'sleep' + i }));
      await new Promise((r) => setTimeout(r, 400));
      const t0 = Date.now();
      await fs.promises.readFile(${JSON.stringify(file)});
      const readMs = Date.now() - t0;
      console.log(JSON.stringify({ readMs }));
      await rt.close(); // kills the sleeps
      await Promise.allSettled(running);
    })();
  `);
  assert.equal(r.killed, false, `hung (killed after ${r.ms} ms); stderr: ${r.stderr}`);
  assert.equal(r.status, 0, r.stderr);
  const { readMs } = JSON.parse(r.stdout.trim());
  // Starved, the read would wait for the 20 s sleeps; bounds for a loaded machine.
  assert.ok(readMs < 5000, `readFile took ${readMs} ms while four commands ran`);
  assert.ok(r.ms < 15000, `close() should kill the running commands (took ${r.ms} ms)`);
});

// --- finding 2: exit, close, keep-alive, unserializable results --------------

const NEVER = `rt.tool('never', { toolset: 't' }, () => new Promise(() => {}));`;

test('issue 11.2: process.exit() while a dispatch waits for a handler exits at once', () => {
  for (const [label, body] of [
    ['a pending handler promise', `setTimeout(() => process.exit(7), 300);`],
    [
      'a callback in flight (JS thread busy while the library calls it)',
      `const t = Date.now(); while (Date.now() - t < 300) {} process.exit(7);`,
    ],
  ]) {
    const r = child(
      `const rt = new ht.Runtime(); ${NEVER}
       rt.dispatch('never', {}).then(console.log, () => {});
       rt.dispatchAsync('never', {}).then(console.log, () => {});
       ${body}`,
      10000,
    );
    assert.equal(r.killed, false, `${label}: hung at exit (killed after ${r.ms} ms)`);
    assert.equal(r.status, 7, `${label}: ${r.stderr}`);
    assert.ok(r.ms < 5000, `${label}: exit took ${r.ms} ms`);
  }
});

test('issue 11.2: process.exit() while an approval callback is pending exits at once', { skip: !hasApprovals }, () => {
  const r = child(
    `const rt = new ht.Runtime({ builtin_toolsets: ['terminal'], terminal: { backend: 'local' } });
     rt.setApprovalHandler(() => new Promise(() => {}));
     rt.dispatch('terminal', { command: 'rm -rf /tmp/hermes_tools_node_i11_never_there' }).then(console.log, () => {});
     setTimeout(() => process.exit(3), 500);`,
    10000,
  );
  assert.equal(r.killed, false, `hung at exit (killed after ${r.ms} ms)`);
  assert.equal(r.status, 3, r.stderr);
});

test('issue 11.2: a never-settling handler, then close(): the process exits', () => {
  const r = child(
    `const rt = new ht.Runtime(); ${NEVER}
     rt.dispatch('never', {}).catch((e) => console.log('rejected', e.statusName, JSON.parse(e.result).status));
     rt.dispatchAsync('never', {}).catch((e) => console.log('rejected', e.statusName, JSON.parse(e.result).status));
     setTimeout(() => rt.close().then(() => console.log('closed', rt.liveHandles)), 300);`,
    10000,
  );
  assert.equal(r.killed, false, `the process stayed alive after close() (killed after ${r.ms} ms)`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'rejected CANCELLED cancelled\nrejected CANCELLED cancelled\nclosed 0');
});

test('issue 11.2: a never-settling handler does not keep the process alive after its timeout', () => {
  const r = child(
    `const rt = new ht.Runtime({ dispatch: { timeout: 0.3 } }); ${NEVER}
     rt.dispatch('never', {}).then((r) => console.log(JSON.parse(r).status));`,
    10000,
  );
  assert.equal(r.killed, false, `the process stayed alive after the timeout (killed after ${r.ms} ms)`);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'timeout');
});

test('issue 11.2: an unhandled cancellation during close() ends the process instead of hanging', () => {
  const r = child(
    `const rt = new ht.Runtime(); ${NEVER}
     rt.dispatchAsync('never', {}); // nobody handles its rejection
     setTimeout(() => rt.close(), 200);`,
    10000,
  );
  assert.equal(r.killed, false, `hung (killed after ${r.ms} ms)`);
  assert.equal(r.status, 1, 'Node ends the process for the unhandled rejection');
  assert.match(r.stderr, /CANCELLED/);
});

test('issue 11.2: process.exit() right after close() started does not hang', () => {
  // Many registrations make ht_runtime_free run many free callbacks on the JS thread.
  for (const delay of [0, 1, 5, 20]) {
    const r = child(
      `const rt = new ht.Runtime();
       for (let i = 0; i < 2000; i++) rt.tool('t' + i, { toolset: 't' }, () => 'x');
       rt.close();
       setTimeout(() => process.exit(5), ${delay});`,
      10000,
    );
    assert.equal(r.killed, false, `delay ${delay}: hung at exit (killed after ${r.ms} ms)`);
    assert.equal(r.status, 5, `delay ${delay}: ${r.stderr}`);
  }
});

test('issue 11.2: BigInt and circular results are answered at once with an error and a warning', async () => {
  // A 10 s library timeout: the old binding never answered, so these took 10 s.
  const rt = new Runtime({ dispatch: { timeout: 10 } });
  const warnings = [];
  const onWarning = (w) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    const circular = { a: 1 };
    circular.self = circular;
    rt.tool('big_sync', { toolset: 't' }, () => ({ n: 10n }));
    rt.tool('big_async', { toolset: 't' }, async () => 10n);
    rt.tool('circular', { toolset: 't' }, async () => circular);
    rt.tool('bad_tojson', { toolset: 't' }, () => ({ toJSON() { throw new Error('no JSON for you'); } }));
    rt.tool('deferred_big', { toolset: 't' }, (args, call) => {
      call.defer();
      setTimeout(() => call.respond({ n: 1n }), 10);
    });
    const t0 = Date.now();
    const results = await Promise.all(
      ['big_sync', 'big_async', 'circular', 'bad_tojson', 'deferred_big'].map(async (name) => [
        name,
        JSON.parse(await rt.dispatch(name, {})),
      ]),
    );
    assert.ok(Date.now() - t0 < 3000, `answered after ${Date.now() - t0} ms`);
    for (const [name, out] of results) {
      assert.equal(typeof out.error, 'string', `${name}: ${JSON.stringify(out)}`);
      assert.match(out.error, /cannot be encoded as JSON/, name);
      assert.match(out.error, new RegExp(`'${name}'`), name);
    }
    assert.match(results[0][1].error, /BigInt/);
    assert.match(results[2][1].error, /circular/i);
    assert.match(results[3][1].error, /no JSON for you/);
    await sleep(10);
    const ours = warnings.filter((w) => w.code === 'HERMES_TOOLS_UNSERIALIZABLE_RESULT');
    assert.equal(ours.length, 5, warnings.map(String).join('\n'));
  } finally {
    process.off('warning', onWarning);
    await rt.close();
  }
});

test('issue 11.2: each pending call holds the loop; a settled one releases it', async () => {
  const handles = () => process.getActiveResourcesInfo().filter((x) => x === 'Timeout').length;
  const rt = new Runtime();
  rt.tool('wait', { toolset: 't' }, (args, call) => {
    call.defer();
    setTimeout(() => call.respond('ok'), 50);
  });
  const before = handles();
  const ps = [rt.dispatchAsync('wait', {}), rt.dispatchAsync('wait', {}), rt.dispatchAsync('wait', {})];
  assert.ok(handles() >= before + 3, 'one keep-alive per pending call');
  assert.deepEqual(await Promise.all(ps), ['ok', 'ok', 'ok']);
  assert.equal(handles(), before, 'completions released their keep-alives');
  await rt.close();
});

// --- finding 8 (Node parts) ---------------------------------------------------

test('issue 11.8: dispatch(undefined) rejects with TypeError; dispatchAsync(undefined) throws it', async () => {
  const rt = new Runtime();
  try {
    for (const bad of [undefined, null, 42, {}, ['add']]) {
      await assert.rejects(rt.dispatch(bad), TypeError, `dispatch(${String(bad)})`);
      assert.throws(() => rt.dispatchAsync(bad), TypeError, `dispatchAsync(${String(bad)})`);
    }
    await assert.rejects(rt.dispatch(), /tool name must be a string, got undefined/);
  } finally {
    await rt.close();
  }
});

test('issue 11.8: the event list includes process.output, and the library sends it', { skip: !hasTerminal }, async () => {
  assert.ok(ht.EVENT_TYPES.includes('process.output'));
  assert.ok(Object.isFrozen(ht.EVENT_TYPES));
  const dts = fs.readFileSync(path.join(PKG, 'index.d.ts'), 'utf8');
  const eventType = dts.slice(dts.indexOf('export type EventType ='), dts.indexOf(';', dts.indexOf('export type EventType =')));
  for (const t of ht.EVENT_TYPES) assert.ok(eventType.includes(`'${t}'`), `index.d.ts EventType lacks ${t}`);
  assert.ok(dts.includes("type: 'process.output'"), 'index.d.ts RuntimeEvent lacks process.output');

  const rt = new Runtime({ builtin_toolsets: ['terminal'], terminal: { backend: 'local', stream_output: true } });
  const events = [];
  rt.setEventHandler((e) => events.push(e));
  try {
    const started = JSON.parse(
      await rt.dispatch('terminal', { command: 'echo one; sleep 0.3; echo two', background: true, notify_on_complete: true }),
    );
    assert.ok(started.session_id, JSON.stringify(started));
    for (let i = 0; i < 300 && !events.some((e) => e.type === 'process.completed'); i++) await sleep(10);
    await rt.dispatch('terminal', { command: 'echo fg' });
    await sleep(50);
    const output = events.filter((e) => e.type === 'process.output');
    assert.ok(output.length > 0, JSON.stringify(events));
    assert.match(output.map((e) => e.data).join(''), /one[\s\S]*two/);
    for (const e of events) assert.ok(ht.EVENT_TYPES.includes(e.type), `unlisted event type ${e.type}`);
  } finally {
    await rt.close();
  }
});

test('issue 11.8: index.d.ts doc comments sit on their own declarations', () => {
  const lines = fs.readFileSync(path.join(PKG, 'index.d.ts'), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim().endsWith('*/')) continue;
    const next = (lines[i + 1] || '').trim();
    assert.ok(!next.startsWith('/**'), `line ${i + 2}: a doc comment follows another one (misplaced): ${next}`);
    assert.notEqual(next, '', `line ${i + 2}: a doc comment is followed by a blank line`);
  }
  const docOf = (decl) => {
    const i = lines.findIndex((l) => l.trim().startsWith(decl));
    assert.ok(i > 0, `${decl} not found`);
    let j = i - 1;
    const doc = [];
    while (j >= 0 && !lines[j].trim().startsWith('/**')) doc.unshift(lines[j--]);
    doc.unshift(lines[j]);
    return lines[i - 1].trim().endsWith('*/') ? doc.join('\n') : '';
  };
  assert.match(docOf('setApprovalHandler('), /needs approval/);
  assert.match(docOf('setInterceptor('), /agent-loop/);
  assert.match(docOf('setApprovalReviewer('), /reviewer/);
  for (const m of ['dispatch(', 'dispatchAsync(', 'dispatchBatch<', 'close(', 'cancel(', 'setEventHandler(']) {
    assert.notEqual(docOf(m), '', `${m} has no doc comment`);
  }
});

// --- finding 3 (the shapes the Node binding builds) -----------------------------

test('issue 11.3: batch runs Anthropic tool_use input and MCP arguments, and marks errors', async () => {
  const rt = new Runtime();
  try {
    rt.tool('echo', { toolset: 't', parameters: { type: 'object', properties: { v: { type: 'string' } } } }, (a) => ({
      v: a.v,
    }));
    rt.tool('fails', { toolset: 't' }, () => {
      throw new Error('disk full');
    });
    const anthropicMessage = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'echo', input: { v: 'from anthropic' } },
        { type: 'tool_use', id: 'toolu_2', name: 'fails', input: {} },
      ],
    };
    const anth = await rt.dispatchBatch(anthropicMessage, null, { format: 'anthropic' });
    assert.deepEqual(anth, [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"v":"from anthropic"}', is_error: false },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: anth[1].content, is_error: true },
    ]);
    assert.match(anth[1].content, /disk full/);

    const plain = await rt.dispatchBatch([
      { id: 'a', type: 'function', function: { name: 'echo', arguments: '{"v":"openai"}' } },
      { type: 'tool_use', id: 'b', name: 'echo', input: { v: 'anthropic' } },
      { name: 'echo', arguments: { v: 'mcp' } },
      { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'echo', arguments: { v: 'rpc' } } },
      { type: 'function_call', id: 'fc_1', call_id: 'call_r', name: 'echo', arguments: '{"v":"responses"}' },
      { id: 'e', type: 'function', function: { name: 'fails', arguments: '{}' } },
      { id: 'f', type: 'function', function: { arguments: '{}' } },
    ]);
    assert.deepEqual(
      plain.map((r) => [r.tool_call_id, r.name, r.is_error]),
      [
        ['a', 'echo', false],
        ['b', 'echo', false],
        ['call_2', 'echo', false],
        ['9', 'echo', false],
        ['call_r', 'echo', false],
        ['e', 'fails', true],
        ['f', '', true],
      ],
    );
    assert.deepEqual(
      plain.slice(0, 5).map((r) => JSON.parse(r.content).v),
      ['openai', 'anthropic', 'mcp', 'rpc', 'responses'],
    );
    assert.match(plain[6].content, /no function name/);

    const auto = await rt.dispatchBatch(
      [
        { id: 'a', type: 'function', function: { name: 'echo', arguments: '{"v":"1"}' } },
        { type: 'tool_use', id: 'b', name: 'echo', input: { v: '2' } },
        { name: 'echo', arguments: { v: '3' } },
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'fails' } },
        { type: 'function_call', call_id: 'c', name: 'echo', arguments: '{"v":"5"}' },
      ],
      { task_id: 'x' },
      { format: 'auto' },
    );
    assert.deepEqual(auto[0], { role: 'tool', tool_call_id: 'a', content: '{"v":"1"}' });
    assert.deepEqual(auto[1], { type: 'tool_result', tool_use_id: 'b', content: '{"v":"2"}', is_error: false });
    assert.deepEqual(auto[2], {
      content: [{ type: 'text', text: '{"v":"3"}' }],
      isError: false,
      structuredContent: { v: '3' },
    });
    assert.equal(auto[3].jsonrpc, '2.0');
    assert.equal(auto[3].id, 9);
    assert.equal(auto[3].result.isError, true);
    assert.equal(auto[3].result.structuredContent, undefined);
    assert.deepEqual(auto[4], { type: 'function_call_output', call_id: 'c', output: '{"v":"5"}' });

    const openai = await rt.dispatchBatch({ role: 'assistant', tool_calls: [plainCall('x', 'echo')] }, null, {
      format: 'openai',
    });
    assert.deepEqual(openai, [{ role: 'tool', tool_call_id: 'x', content: '{}' }]);

    await assert.rejects(rt.dispatchBatch('{not json'), (e) => e instanceof HermesToolsError && e.status === Status.INVALID_JSON);
    await assert.rejects(rt.dispatchBatch({ nope: 1 }), (e) => e.status === Status.INVALID_JSON);
    await assert.rejects(rt.dispatchBatch([], null, { format: 'xml' }), TypeError);
  } finally {
    await rt.close();
  }
});

function plainCall(id, name, args = '{}') {
  return { id, type: 'function', function: { name, arguments: args } };
}

test('issue 11.3: batch runs consecutive parallel-safe calls together, the others in order', async () => {
  const rt = new Runtime({ dispatch: { timeout: 5 } });
  try {
    // Two parallel-safe calls that each wait for the other: they finish only if run together.
    let arrived = 0;
    let release;
    const both = new Promise((r) => {
      release = r;
    });
    rt.tool('meet', { toolset: 't', parallelSafe: true }, async () => {
      if (++arrived === 2) release();
      await both;
      return 'met';
    });
    const order = [];
    rt.tool('step', { toolset: 't', parameters: { type: 'object', properties: { n: { type: 'integer' } } } }, async ({ n }) => {
      order.push(`start${n}`);
      await sleep(20);
      order.push(`end${n}`);
      return n;
    });
    const t0 = Date.now();
    const out = await rt.dispatchBatch([
      plainCall('1', 'meet'),
      plainCall('2', 'meet'),
      plainCall('3', 'step', '{"n":1}'),
      plainCall('4', 'step', '{"n":2}'),
    ]);
    assert.ok(Date.now() - t0 < 4000, 'the parallel-safe pair ran concurrently');
    assert.deepEqual(out.map((r) => r.content), ['met', 'met', '1', '2']);
    assert.deepEqual(order, ['start1', 'end1', 'start2', 'end2']);
    // Context: every call gets its own tool_call_id.
    const seen = [];
    rt.tool('ctx', { toolset: 't', parallelSafe: true }, (a, call) => {
      seen.push(call.context);
      return 'ok';
    });
    await rt.dispatchBatch([plainCall('p', 'ctx'), plainCall('q', 'ctx')], { task_id: 'T' });
    assert.deepEqual(
      seen.map((c) => [c.task_id, c.tool_call_id]).sort(),
      [
        ['T', 'p'],
        ['T', 'q'],
      ],
    );
  } finally {
    await rt.close();
  }
});
