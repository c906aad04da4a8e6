'use strict';
// Host-defined environments (issue 33): the terminal and file tools run
// through a provider written in JS that starts real child processes, with
// approval, timeouts and cancellation going through as for built-in backends.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Runtime, Environment, lib } = require('..');

class ChildProcessEnvironment extends Environment {
  constructor(name) {
    super(name, { location: `in a child process of node (environment '${name}')` });
    this.children = new Map();
    this.commands = [];
    this.kills = [];
    this.fileOps = [];
    this.cleanups = [];
  }

  run(exec) {
    this.commands.push(exec);
    return new Promise((resolve) => {
      const child = spawn(exec.argv[0], exec.argv.slice(1), { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      this.children.set(exec.id, child);
      child.stdin.on('error', () => {}); // a command that reads nothing closes it early
      child.stdin.end(exec.stdin);
      child.stdout.on('data', (d) => {
        if (!exec.output(d, 1)) this.kill(exec.id, 9);
      });
      child.stderr.on('data', (d) => exec.output(d, 2));
      child.on('close', (code, signal) => {
        this.children.delete(exec.id);
        resolve(code !== null ? code : -os.constants.signals[signal]);
      });
    });
  }

  kill(id, signal) {
    this.kills.push([id, signal]);
    const child = this.children.get(id);
    if (child) {
      try {
        process.kill(-child.pid, signal);
      } catch (_) {
        /* gone */
      }
    }
  }

  cleanup(task) {
    this.cleanups.push(task);
  }

  readFile(task, p) {
    this.fileOps.push(['read', p]);
    return fs.promises.readFile(p);
  }

  writeFile(task, p, data) {
    this.fileOps.push(['write', p]);
    return fs.promises.writeFile(p, data);
  }

  listDir(task, p) {
    this.fileOps.push(['list', p]);
    return fs.readdirSync(p, { withFileTypes: true }).map((e) => [e.name, e.isDirectory()]);
  }
}

const available = !!lib.environmentNew;

test('terminal and file tools run through a JS provider', { skip: !available }, async () => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ht-node-env-'));
  const env = new ChildProcessEnvironment('node-child');
  const rt = await Runtime.create(
    {
      builtin_toolsets: ['terminal', 'file'],
      terminal: { backend: 'node-child', cwd: work, kill_grace: 0.5 },
      approvals: { mode: 'manual', non_interactive: 'deny' },
    },
    { environments: [env] },
  );
  env.close();
  try {
    const ctx = { task_id: 'n1' };
    let out = JSON.parse(await rt.dispatch('terminal', { command: 'echo hi; exit 3' }, ctx));
    assert.equal(out.output, 'hi');
    assert.equal(out.exit_code, 3);
    await rt.dispatch('terminal', { command: 'mkdir -p s && cd s && export NV=9' }, ctx);
    out = JSON.parse(await rt.dispatch('terminal', { command: 'pwd; echo $NV' }, ctx));
    assert.equal(out.output, `${work}/s\n9`);

    const f = path.join(work, 'n.txt');
    out = JSON.parse(await rt.dispatch('write_file', { path: f, content: 'node' }, ctx));
    assert.equal(out.bytes_written, 4);
    out = JSON.parse(await rt.dispatch('read_file', { path: f }, ctx));
    assert.match(out.content, /node/);
    assert.deepEqual(env.fileOps.map((o) => o[0]).sort(), ['read', 'write']);
    out = JSON.parse(await rt.dispatch('read_file', { path: path.join(work, 'missing') }, ctx));
    assert.ok(out.error, JSON.stringify(out));

    // denied before the provider sees it
    const seen = env.commands.length;
    out = JSON.parse(await rt.dispatch('terminal', { command: `rm -rf ${work}/x` }, ctx));
    assert.equal(out.status, 'blocked');
    assert.ok(!env.commands.slice(seen).some((c) => c.script.includes('rm -rf')));

    // a timeout reaches kill
    const t0 = Date.now();
    out = JSON.parse(await rt.dispatch('terminal', { command: 'echo a; sleep 30', timeout: 1 }, ctx));
    assert.ok(Date.now() - t0 < 8000);
    assert.match(out.output, /^a/);
    assert.ok(env.kills.some(([, sig]) => sig === 15), JSON.stringify(env.kills));
  } finally {
    await rt.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
  assert.ok(env.cleanups.includes(null));
});
