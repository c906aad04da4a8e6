// Agent-host example: the same scenario in every language binding.
//
// 1. create a runtime with the built-in terminal ({"builtin_toolsets": ["terminal"]}),
// 2. register a host tool (get_weather) with an async handler,
// 3. install the host's approval callback for dangerous commands,
// 4. print the tool schemas the model would see,
// 5. dispatch a model's tool_calls batch that includes a dangerous command,
//    which the approval callback denies (results carry is_error; pass
//    { format: 'anthropic' } or 'openai' / 'mcp' / 'auto' for the provider's
//    own result shape).
//
// Run: make example-node
import { createRequire } from 'node:module';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import assert from 'node:assert/strict';

const require = createRequire(import.meta.url);
const ht = require('../../bindings/node');
const { Runtime, HermesToolsError, Status } = ht;

// The host's approval callback: a real host would ask its user here.
async function approve(request) {
  const why = request.reasons.map((r) => r.description).join(', ');
  const command = request.untrusted_command_text ?? request.command;
  console.log(`  [approval] ${JSON.stringify(command)}: ${request.verdict} (${why}) -> denied`);
  return false;
}

function makeRuntime() {
  try {
    return [new Runtime({ builtin_toolsets: ['terminal'] }), true];
  } catch (e) {
    if (!(e instanceof HermesToolsError) || e.status !== Status.UNSUPPORTED) throw e;
    console.log(`note: built-in terminal not in this build (${e.detail}); using a host stand-in`);
    return [new Runtime(), false];
  }
}

// Used only while the library build has no built-in terminal.
function registerTerminalStandIn(rt) {
  const run = promisify(execFile);
  rt.tool(
    'terminal',
    {
      toolset: 'terminal',
      description: 'Run a shell command and return its output.',
      parameters: {
        type: 'object',
        properties: {
          command: { type: 'string', description: 'The shell command to run.' },
          timeout: { type: 'integer', description: 'Seconds before the command is killed.', default: 30 },
        },
        required: ['command'],
      },
    },
    async ({ command, timeout = 30 }) => {
      try {
        const { stdout, stderr } = await run('/bin/sh', ['-c', command], { timeout: timeout * 1000 });
        return { output: stdout + stderr, exit_code: 0 };
      } catch (e) {
        return { output: (e.stdout || '') + (e.stderr || ''), exit_code: e.code ?? 1 };
      }
    },
  );
}

// Commands that need approval go to the host's approval callback.
function installApprovalGate(rt, builtin) {
  if (builtin && ht.lib.setApprovalHandler) {
    // The built-in terminal asks the library's approval handler itself.
    rt.setApprovalHandler(approve);
    return;
  }
  // Older builds: analyse every terminal command with the library's rules in
  // a pre_tool_call hook and ask the same callback.
  rt.addHook('pre_tool_call', async (event) => {
    if (event.tool_name !== 'terminal') return {};
    const command = (event.args && event.args.command) || '';
    const check = rt.commandCheck(command);
    if (check.verdict === 'allow') return {};
    if (check.verdict === 'ask' && (await approve({ command, verdict: check.verdict, reasons: check.reasons }))) {
      return {};
    }
    if (check.verdict === 'block') {
      console.log(`  [approval] ${JSON.stringify(command)}: blocked by rule ${check.reasons[0].rule}`);
    }
    return { action: 'block', message: `BLOCKED: the user denied \`${command}\`. Do not retry it.` };
  });
}

console.log(ht.version());
const [rt, builtin] = makeRuntime();
try {
  if (!builtin) registerTerminalStandIn(rt);

  rt.tool(
    'get_weather',
    {
      toolset: 'weather',
      parallelSafe: true,
      description: 'Weather forecast for a city.',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name, e.g. "Lisbon".' },
          days: { type: 'integer', description: 'Number of days to forecast.', default: 1 },
        },
        required: ['city'],
      },
    },
    async ({ city, days = 1 }) => ({ city, days, forecast: 'sunny' }),
  );

  installApprovalGate(rt, builtin);

  console.log('\nschemas:');
  for (const d of await rt.definitions()) console.log('  ' + JSON.stringify(d));

  const toolCalls = [
    { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Lisbon", "days": "2"}' } },
    { id: 'call_2', type: 'function', function: { name: 'terminal', arguments: '{"command": "echo hello from the terminal"}' } },
    { id: 'call_3', type: 'function', function: { name: 'terminal', arguments: '{"command": "rm -rf /tmp/scratch"}' } },
  ];
  console.log("\ndispatching the model's tool_calls:");
  const results = await rt.dispatchBatch(toolCalls, { task_id: 'demo' });
  console.log('\nresults for the model:');
  for (const r of results) console.log(`  ${r.tool_call_id} ${r.name}${r.is_error ? ' (error)' : ''}: ${r.content}`);

  assert.ok(results[2].is_error && results[2].content.includes('denied'));
  assert.equal(results[0].is_error, false);
  assert.equal(JSON.parse(results[0].content).forecast, 'sunny');
} finally {
  await rt.close();
}
console.log('\nok');
