'use strict';
// MCP servers through the binding (issue 35): a real stdio server added at
// run time, serveMcp -> addMcpServer over HTTP, and the OAuth handler with a
// full sign-in against a real authorization server
// (crates/runtime/tests/fixtures/oauth-server.cjs).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const readline = require('node:readline');
const ht = require('..');
const { Runtime, HermesToolsError, Status } = ht;

const FIXTURES = path.resolve(__dirname, '../../../crates/runtime/tests/fixtures');
const skip = !ht.lib.mcpStatus || !ht.features().features['mcp-client'] ? 'library without the MCP client' : false;
const MODULES = process.env.HT_MCP_SERVERS || path.resolve(__dirname, '../../../build/tools/node_modules');
const oauthSkip =
  skip || (fs.existsSync(path.join(MODULES, '@modelcontextprotocol/sdk')) ? false : `no ${MODULES}/@modelcontextprotocol/sdk (scripts/setup.sh)`);

const rejectsWith = (p, status) =>
  assert.rejects(p, (e) => {
    assert.ok(e instanceof HermesToolsError, String(e));
    assert.equal(e.status, status, e.message);
    return true;
  });

test('a stdio MCP server: add, status with its tools, call, remove', { skip }, async () => {
  const rt = new Runtime();
  try {
    assert.deepEqual(rt.mcpStatus(), {});
    await rejectsWith(rt.addMcpServer('bad', '{not json'), Status.INVALID_JSON);
    await rejectsWith(rt.removeMcpServer('nobody'), Status.NOT_FOUND);
    const cfg = { command: 'python3', args: [path.join(FIXTURES, 'versioned_server.py')], connect_timeout: 20 };
    await rt.addMcpServer('v', cfg);
    await rejectsWith(rt.addMcpServer('v', cfg), Status.CONFLICT);
    const s = rt.mcpStatus().v;
    assert.equal(s.state, 'ready', JSON.stringify(s));
    assert.equal(s.transport, 'stdio');
    assert.deepEqual(s.tools, ['mcp__v__offered']);
    assert.ok((await rt.definitions()).some((d) => d.function.name === 'mcp__v__offered'));
    assert.match(await rt.dispatch('mcp__v__offered', {}), /2025-11-25/);
    await rt.removeMcpServer('v');
    assert.equal(rt.mcpStatus().v, undefined);
    assert.ok(!(await rt.definitions()).some((d) => d.function.name === 'mcp__v__offered'));
    await rejectsWith(rt.removeMcpServer('v'), Status.NOT_FOUND);
    // A server that cannot start is visible: failed, with the cause.
    await rt.addMcpServer('broken', { command: 'ht-no-such-command-xyz', connect_timeout: 5 });
    const b = rt.mcpStatus().broken;
    assert.equal(b.state, 'failed');
    assert.ok(b.last_error, JSON.stringify(b));
  } finally {
    await rt.close();
  }
  assert.throws(() => rt.mcpStatus(), (e) => e.status === Status.CLOSED);
});

test('serveMcp over HTTP, added by a second runtime with the bearer token', { skip }, async () => {
  const host = new Runtime();
  const client = new Runtime();
  let server;
  try {
    host.registerTool(
      {
        name: 'shout',
        toolset: 'demo',
        schema: { description: 'Upper-cases text', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
      },
      (args) => args.text.toUpperCase(),
    );
    assert.throws(() => host.serveMcp('{nope'), (e) => e.status === Status.INVALID_JSON);
    server = host.serveMcp({ transport: 'http' });
    assert.equal(server.address.transport, 'http');
    assert.equal(server.address.auth, 'bearer');
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.equal(await server.wait(0), false);
    const token = server.token();
    assert.ok(token.length >= 16);
    await client.addMcpServer('loop', { url: server.url, headers: { Authorization: `Bearer ${token}` } });
    assert.equal(client.mcpStatus().loop.state, 'ready');
    assert.match(await client.dispatch('mcp__loop__shout', { text: 'quiet' }), /QUIET/);
    await server.close();
    await server.close(); // idempotent
    assert.equal(await server.wait(1000), true);
  } finally {
    if (server) await server.close();
    await client.close();
    await host.close();
  }
});

test('OAuth handler: set, replace and clear release the handler', { skip }, async () => {
  const rt = new Runtime();
  const base = rt.liveHandles;
  rt.setOAuthHandler(() => ({ error: 'no browser here' }));
  rt.setOAuthHandler(async () => ({ error: 'no browser here' }));
  // Free functions run on the library's callback thread, queued to this one.
  const settle = async (want) => {
    for (let i = 0; i < 200 && rt.liveHandles !== want; i++) await new Promise((r) => setTimeout(r, 5));
    assert.equal(rt.liveHandles, want);
  };
  await settle(base + 1);
  rt.setOAuthHandler(null);
  await settle(base);
  assert.throws(() => rt.setOAuthHandler(42), TypeError);
  rt.setOAuthHandler(() => 'http://127.0.0.1:1/cb');
  await rt.close();
  assert.equal(rt.liveHandles, 0);
});

/** Start the OAuth fixture; resolves with {port, stop}. */
async function oauthFixture() {
  const child = spawn(process.execPath, [path.join(FIXTURES, 'oauth-server.cjs')], {
    env: { ...process.env, NODE_PATH: MODULES },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', (l) => {
      rl.close();
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`fixture exited ${code}`)));
  });
  const m = /^READY (\d+)$/.exec(line.trim());
  assert.ok(m, `fixture said ${line}`);
  return {
    port: Number(m[1]),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill();
      }),
  };
}

/** The "browser": follow the authorization URL (the fixture approves at once) and return the redirect. */
async function browse(url) {
  const res = await fetch(url, { redirect: 'manual' });
  assert.equal(res.status, 302);
  return res.headers.get('location');
}

test('OAuth: without a handler the server fails and says why; with one the sign-in completes', { skip: oauthSkip }, async () => {
  const f = await oauthFixture();
  const url = `http://127.0.0.1:${f.port}/mcp`;
  try {
    const bare = new Runtime();
    await bare.addMcpServer('secure', { url, connect_timeout: 20, oauth: { token_store: 'memory' } });
    const s = bare.mcpStatus().secure;
    assert.equal(s.state, 'failed');
    assert.match(s.last_error, /no OAuth handler/);
    await bare.close();

    // Token store "host": the handler also keeps the tokens.
    let saved = null;
    const kinds = [];
    const handler = async (req) => {
      kinds.push(req.kind);
      switch (req.kind) {
        case 'oauth_authorize':
          assert.equal(req.server, 'secure');
          assert.match(req.authorization_url, /code_challenge_method=S256/);
          return browse(req.authorization_url); // a string: the redirect URL
        case 'oauth_tokens_load':
          return saved ? { tokens: saved } : undefined;
        case 'oauth_tokens_save':
          saved = req.tokens;
          return undefined;
        default:
          return undefined;
      }
    };
    const cfg = { url, connect_timeout: 20, timeout: 20, oauth: { token_store: 'host' } };
    const rt = new Runtime();
    rt.setOAuthHandler(handler);
    await rt.addMcpServer('secure', cfg);
    const ready = async (r) => {
      for (let i = 0; i < 300; i++) {
        const st = r.mcpStatus().secure;
        if (st.state === 'ready' && st.tools.length) return;
        await new Promise((res) => setTimeout(res, 100));
      }
      assert.fail(JSON.stringify(r.mcpStatus()));
    };
    await ready(rt);
    assert.match(await rt.dispatch('mcp__secure__whoami', {}), /scopes: mcp/);
    assert.ok(kinds.includes('oauth_authorize'), kinds.join());
    assert.ok(saved && saved.token_response && saved.token_response.access_token);
    assert.ok(!JSON.stringify(rt.mcpStatus()).includes(saved.token_response.access_token));
    await rt.close();

    // A new runtime signs in with the saved tokens: no browser step.
    kinds.length = 0;
    const rt2 = new Runtime();
    rt2.setOAuthHandler(handler);
    await rt2.addMcpServer('secure', cfg);
    await ready(rt2);
    assert.match(await rt2.dispatch('mcp__secure__whoami', {}), /scopes: mcp/);
    assert.equal(kinds[0], 'oauth_tokens_load');
    assert.ok(!kinds.includes('oauth_authorize'), kinds.join());
    await rt2.close();

    // A handler that throws gives the sign-in up, with the reason.
    const rt3 = new Runtime();
    rt3.setOAuthHandler(() => {
      throw new Error('the browser was closed');
    });
    await rt3.addMcpServer('secure', { url, connect_timeout: 20, oauth: { token_store: 'memory' } });
    const s3 = rt3.mcpStatus().secure;
    assert.equal(s3.state, 'failed');
    assert.match(s3.last_error, /browser was closed/);
    await rt3.close();
  } finally {
    await f.stop();
  }
});

test('index.d.ts declares and documents the MCP and OAuth API', () => {
  const lines = fs.readFileSync(path.join(__dirname, '..', 'index.d.ts'), 'utf8').split('\n');
  const docOf = (decl) => {
    const i = lines.findIndex((l) => l.trim().startsWith(decl));
    assert.ok(i > 0, `${decl} not declared in index.d.ts`);
    return lines[i - 1].trim().endsWith('*/') ? lines[i - 1] : '';
  };
  for (const m of ['setOAuthHandler(', 'mcpStatus(', 'addMcpServer(', 'removeMcpServer(', 'acceptMcpTools(', 'serveMcp(']) {
    assert.notEqual(docOf(m), '', `${m} has no doc comment`);
  }
  for (const d of ['export interface McpServerStatus', 'export interface OAuthRequest', 'export declare class McpServer']) {
    assert.notEqual(docOf(d), '', `${d} has no doc comment`);
  }
  assert.equal(typeof ht.McpServer, 'function');
});
