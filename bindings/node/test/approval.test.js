'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ht = require('..');
const { Runtime, HermesToolsError } = ht;

const skip =
  !ht.lib.setApprovalHandler || !(ht.features().builtin_toolsets || []).includes('terminal')
    ? 'library without the approval API or the built-in terminal'
    : false;
const ASK = 'rm -rf /tmp/hermes_tools_node_scratch_dir';
const terminalRt = (approvals) =>
  new Runtime({ builtin_toolsets: ['terminal'], terminal: { backend: 'local' }, ...(approvals ? { approvals } : {}) });

test('built-in terminal runs a command', { skip }, async () => {
  const rt = terminalRt();
  assert.ok((await rt.definitions()).some((d) => d.function.name === 'terminal'));
  const out = JSON.parse(await rt.dispatch('terminal', { command: 'echo hello' }));
  assert.equal(out.output.trim(), 'hello');
  await rt.close();
});

test('approval handler denies and sees the request', { skip }, async () => {
  const rt = terminalRt();
  const asked = [];
  rt.setApprovalHandler((req) => {
    asked.push(req);
    return false;
  });
  const out = JSON.parse(await rt.dispatch('terminal', { command: ASK }, { task_id: 't1' }));
  assert.equal(out.status, 'blocked');
  assert.match(out.error, /denied/);
  assert.equal(asked[0].verdict, 'ask');
  assert.equal(asked[0].untrusted_command_text, ASK);
  // Through the async dispatch path too (handler on the callback thread).
  const out2 = JSON.parse(await rt.dispatchAsync('terminal', { command: ASK }));
  assert.equal(out2.status, 'blocked');
  await rt.close();
});

test('async approval allows once', { skip }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ht-node-appr-'));
  fs.writeFileSync(path.join(dir, 'f'), 'x');
  const rt = terminalRt();
  rt.setApprovalHandler(async () => {
    await new Promise((r) => setTimeout(r, 2));
    return 'once';
  });
  const out = JSON.parse(await rt.dispatch('terminal', { command: `rm -rf ${dir}` }));
  assert.equal(out.exit_code, 0, JSON.stringify(out));
  assert.equal(fs.existsSync(dir), false);
  await rt.close();
});

test('hardline block never asks; a throwing handler denies', { skip }, async () => {
  const rt = terminalRt();
  let asked = 0;
  rt.setApprovalHandler(() => {
    asked++;
    throw new Error('ui crashed');
  });
  const out = JSON.parse(await rt.dispatch('terminal', { command: 'rm -rf /' }));
  assert.match(out.error, /hardline/);
  assert.equal(asked, 0);
  const out2 = JSON.parse(await rt.dispatch('terminal', { command: ASK }));
  assert.equal(out2.status, 'blocked');
  assert.equal(asked, 1);
  await rt.close();
});

test('smart reviewer is asked first', { skip }, async () => {
  const rt = terminalRt({ mode: 'smart' });
  const reviewed = [];
  let asked = 0;
  rt.setApprovalReviewer((req) => {
    reviewed.push(req);
    return 'deny';
  });
  rt.setApprovalHandler(() => {
    asked++;
    return true;
  });
  const out = JSON.parse(await rt.dispatch('terminal', { command: ASK }));
  assert.equal(out.status, 'blocked');
  assert.equal(reviewed[0].kind, 'review');
  assert.equal(asked, 0);
  await rt.close();
});

test('approval handler released exactly once', { skip }, async () => {
  const rt = terminalRt();
  rt.setApprovalHandler(() => false);
  const [first] = rt._handles.values();
  rt.setApprovalHandler(() => false);
  for (let i = 0; i < 200 && first.freeCount === 0; i++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(first.freeCount, 1);
  rt.setApprovalHandler(null);
  rt.setApprovalReviewer(() => undefined);
  await rt.close();
  assert.equal(first.freeCount, 1);
  assert.equal(rt.liveHandles, 0);
});

test('allowlist and session approvals', { skip }, async () => {
  const rt = terminalRt();
  assert.deepEqual(rt.allowlist(), []);
  rt.clearSessionApprovals('s1');
  assert.throws(() => rt.setAllowlist('not json'), HermesToolsError);
  rt.setAllowlist([]);
  assert.throws(() => rt.setApprovalHandler('nope'), TypeError);
  await rt.close();
});
