// `hermes-tools mcp serve` driven by the official TypeScript SDK
// (@modelcontextprotocol/sdk, installed into build/tools by scripts/setup.sh).
// Run by crates/cli/tests/mcp_typescript.rs with HT_BIN, HT_WORK, HT_SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

const { BIN, WORK, SDK } = { BIN: process.env.HT_BIN, WORK: process.env.HT_WORK, SDK: process.env.HT_SDK };
const { Client } = await import(path.join(SDK, 'dist/esm/client/index.js'));
const { StdioClientTransport } = await import(path.join(SDK, 'dist/esm/client/stdio.js'));
const { ElicitRequestSchema } = await import(path.join(SDK, 'dist/esm/types.js'));

function config(name) {
  const file = path.join(WORK, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ builtin_toolsets: ['terminal', 'todo'], terminal: { backend: 'local', cwd: WORK } }));
  return file;
}

async function connect(name, elicit) {
  const client = new Client(
    { name: 'ts-test', version: '1.0.0' },
    { capabilities: elicit ? { elicitation: {} } : {} },
  );
  if (elicit) client.setRequestHandler(ElicitRequestSchema, async (req) => elicit(req.params));
  await client.connect(new StdioClientTransport({ command: BIN, args: ['mcp', 'serve', '--config', config(name)] }));
  return client;
}

function victim(name) {
  const dir = path.join(WORK, name);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

test('lists tools with annotations and calls the terminal', async () => {
  const c = await connect('ts-basic');
  try {
    const { tools } = await c.listTools();
    const terminal = tools.find((t) => t.name === 'terminal');
    assert.ok(terminal, 'terminal listed');
    assert.equal(terminal.annotations.destructiveHint, true);
    const r = await c.callTool({ name: 'terminal', arguments: { command: 'echo hi from ts' } });
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.equal(r.structuredContent.output, 'hi from ts');
  } finally {
    await c.close();
  }
});

test('approval through elicitation: accept runs, decline does not', async () => {
  const yes = victim('ts-yes');
  let c = await connect('ts-accept', async () => ({ action: 'accept', content: { approve: true } }));
  try {
    const r = await c.callTool({ name: 'terminal', arguments: { command: `rm -rf ${yes}` } });
    assert.equal(r.isError, false, JSON.stringify(r));
    assert.equal(fs.existsSync(yes), false);
  } finally {
    await c.close();
  }
  const no = victim('ts-no');
  c = await connect('ts-decline', async () => ({ action: 'decline' }));
  try {
    const r = await c.callTool({ name: 'terminal', arguments: { command: `rm -rf ${no}` } });
    assert.equal(r.isError, true);
    assert.equal(fs.existsSync(no), true, 'ran though declined');
  } finally {
    await c.close();
  }
});

test('a client without elicitation is blocked', async () => {
  const keep = victim('ts-keep');
  const c = await connect('ts-noelicit');
  try {
    const r = await c.callTool({ name: 'terminal', arguments: { command: `rm -rf ${keep}` } });
    assert.equal(r.isError, true);
    assert.equal(fs.existsSync(keep), true, 'ran without approval');
  } finally {
    await c.close();
  }
});

test('an aborted call ends its command', async () => {
  const marker = `30.${process.pid}`;
  const c = await connect('ts-cancel');
  try {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 1000);
    await assert.rejects(
      c.callTool({ name: 'terminal', arguments: { command: `sleep ${marker}` } }, undefined, { signal: ac.signal }),
    );
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      try {
        execFileSync('pgrep', ['-f', marker]);
        await new Promise((r) => setTimeout(r, 100));
      } catch {
        alive = false;
      }
    }
    assert.equal(alive, false, 'sleep still running after the abort');
  } finally {
    await c.close();
  }
});
