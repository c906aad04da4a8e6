'use strict';
// Nothing a runtime started outlives the Node host that started it (issue
// 38): a host that calls process.exit() without close(), and one killed with
// SIGKILL, leave no command behind, nor a child the command double-forked
// out of its session with an empty environment.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ht = require('..');

const PKG = path.resolve(__dirname, '..');
const hasTerminal = (ht.features().builtin_toolsets || []).includes('terminal');

/** Live `/bin/sleep ARG` processes. */
function sleeps(arg) {
  const out = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      const state = fs.readFileSync(`/proc/${pid}/stat`, 'latin1').split(')').pop().trim()[0];
      if (state !== 'Z' && argv[0] === '/bin/sleep' && argv[1] === arg) out.push(Number(pid));
    } catch {}
  }
  return out;
}

async function waitFor(pred, ms) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (pred()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return pred();
}

for (const how of ['exit', 'kill']) {
  test(`nothing outlives a host that ends by ${how}`, { skip: !hasTerminal }, async () => {
    const tag = `${(process.pid % 89) + 300}.${how === 'exit' ? 1 : 2}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ht-node-life-'));
    const child = path.join(dir, 'child.py');
    fs.writeFileSync(
      child,
      [
        'import os',
        'if os.fork() == 0:',
        "    getattr(os, 'set' + 'sid')()",
        '    if os.fork() == 0:',
        `        os.execve('/bin/sleep', ['/bin/sleep', '6${tag}'], {})`,
        '    os._exit(0)',
        `os.execv('/bin/sleep', ['/bin/sleep', '7${tag}'])`,
        '',
      ].join('\n'),
    );
    const body = `
      const ht = require(${JSON.stringify(PKG)});
      const rt = new ht.Runtime({ builtin_toolsets: ['terminal'], terminal: { backend: 'local' } });
      rt.dispatch('terminal', { command: 'python3 ${child}' }).catch(() => {});
      process.stdout.write('started\\n');
      process.stdin.once('data', () => {
        if (${JSON.stringify(how)} === 'exit') process.exit(0);
        else process.kill(process.pid, 'SIGKILL');
      });`;
    const p = spawn(process.execPath, ['-e', body], { stdio: ['pipe', 'pipe', 'inherit'] });
    await new Promise((r) => p.stdout.once('data', r));
    const all = [`6${tag}`, `7${tag}`];
    assert.ok(await waitFor(() => all.every((a) => sleeps(a).length === 1), 20000), 'the command started');
    const exited = new Promise((r) => p.once('exit', r));
    p.stdin.write('go\n');
    await exited;
    const gone = await waitFor(() => all.every((a) => sleeps(a).length === 0), 1000);
    const left = all.flatMap(sleeps);
    for (const pid of left) process.kill(pid, 'SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    assert.ok(gone, `${how}: left running: ${left}`);
  });
}
