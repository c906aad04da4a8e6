// Type declarations for hermes-tools (Node.js binding of the hermes-tools C library).

/** The ABI this binding was written for (HT_ABI_VERSION). */
export declare const ABI_VERSION: number;

/** ht_status codes. */
export declare const Status: Readonly<{
  OK: 0;
  INVALID_ARGUMENT: 1;
  INVALID_UTF8: 2;
  INVALID_JSON: 3;
  NOT_FOUND: 4;
  CONFLICT: 5;
  CLOSED: 6;
  CANCELLED: 7;
  TIMEOUT: 8;
  TOOL_ERROR: 9;
  PANIC: 10;
  INTERNAL: 11;
  UNSUPPORTED: 12;
}>;
export type StatusCode = (typeof Status)[keyof typeof Status];

/** A failed library call: `status` is the ht_status code, `detail` the library's message. */
export declare class HermesToolsError extends Error {
  constructor(status: number, message: string, result?: string);
  readonly status: number;
  readonly statusName: string;
  /** The library's one-line message. */
  readonly detail: string;
  /** For a cancelled async call: the error text for the model. */
  readonly result?: string;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonText = string | Buffer | Uint8Array;

/** One invocation of a host tool. Borrowed data is copied at once. */
export declare class ToolCall {
  /** The called tool's name. */
  readonly name: string;
  /** The arguments as JSON text (repaired and validated by the library). */
  readonly argsJson: string;
  /** The dispatch context as JSON text (`{}` when none was given). */
  readonly contextJson: string;
  /** The arguments, parsed. */
  readonly args: { [key: string]: any };
  /** The dispatch context, parsed. */
  readonly context: { [key: string]: any };
  /** True once the call was answered. */
  readonly answered: boolean;
  /**
   * Aborts (reason: HermesToolsError with status CANCELLED) when the library
   * stops waiting for this call: timeout, cancel() or close(). Not aborted
   * when the call is answered.
   */
  readonly signal: AbortSignal;
  /** True once the library stopped waiting for this call (timeout, cancel, close). */
  readonly cancelled: boolean;
  /**
   * Report progress (total <= 0 or omitted: unknown): the event handler gets
   * a 'tool.progress' event with this call's ids. Returns the ht_status.
   */
  progress(progress: number, total?: number, message?: string): number;
  /** True after defer(). */
  readonly deferred: boolean;
  /** Promise to answer later with respond(); the handler's return value is then ignored. */
  defer(): this;
  /**
   * Answer once (strings as is, other values as JSON). A value JSON cannot
   * encode (BigInt, circular) is answered at once with an error result and a
   * process warning. Returns the ht_status (TIMEOUT/NOT_FOUND when too late: harmless).
   */
  respond(result: unknown, isError?: boolean): number;
  /** Answer with an error result (the library wraps it as {"error": ...}). */
  respondError(message: unknown): number;
}

/**
 * A tool handler: return the result (or a Promise of it); throwing gives the
 * model an error result. A result JSON cannot encode (BigInt, circular)
 * gives an error result at once and a process warning.
 */
export type ToolHandler = (args: { [key: string]: any }, call: ToolCall) => unknown | Promise<unknown>;

export interface ToolSpec {
  name: string;
  toolset: string;
  schema: { name?: string; description?: string; parameters?: Json } | { type: 'function'; function: Json };
  description?: string;
  emoji?: string;
  requires_env?: string[];
  max_result_size_chars?: number;
  parallel_safe?: boolean;
  override?: boolean;
  [key: string]: unknown;
}

export interface ToolDef {
  toolset?: string;
  description?: string;
  /** JSON schema of the arguments (an object schema). */
  parameters?: Json;
  parallelSafe?: boolean;
  /** Availability check: must be synchronous and fast. */
  check?: () => boolean;
  [key: string]: unknown;
}

/**
 * The part of a zod (v4) schema `typedTool` uses. The handler's `args` type
 * is the schema's output type (`z.output<typeof schema>`), inferred from
 * `safeParse`; zod itself is not imported by these declarations.
 */
export interface ZodLikeSchema<Out = unknown> {
  safeParse(data: unknown):
    | { success: true; data: Out }
    | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };
  toJSONSchema?(params?: { io?: 'input' | 'output' }): { [key: string]: unknown };
}

/** The output type of a zod schema (what a typed tool's handler receives). */
export type SchemaOutput<S> = S extends { safeParse(data: unknown): infer R }
  ? R extends { success: true; data: infer O }
    ? O
    : never
  : never;

export interface TypedToolDef<S extends ZodLikeSchema<any>> extends Omit<ToolDef, 'parameters'> {
  /** The arguments as a zod object schema (z.object({...})). */
  schema: S;
  /** Converts the schema to JSON Schema when it has no toJSONSchema() (zod 3 with zod-to-json-schema). */
  toJSONSchema?: (schema: S) => { [key: string]: unknown };
}

export interface DefinitionsQuery {
  enabledToolsets?: string[] | null;
  disabledToolsets?: string[];
  format?: 'openai' | 'anthropic' | 'mcp';
}

export interface ToolsetDef {
  name: string;
  description?: string;
  tools?: string[];
  includes?: string[];
}

export interface DispatchContext {
  task_id?: string;
  session_id?: string;
  tool_call_id?: string;
  user_task?: string;
  interactive?: boolean;
  timeout?: number;
  [key: string]: unknown;
}

/** An OpenAI Chat Completions tool call (`message.tool_calls[i]`). */
export interface ModelToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string | { [key: string]: unknown } };
}
/** An OpenAI Responses API `function_call` output item. */
export interface ResponsesFunctionCall {
  type: 'function_call';
  call_id: string;
  id?: string;
  name: string;
  arguments: string;
}
/** An Anthropic `tool_use` content block. */
export interface AnthropicToolUse {
  type: 'tool_use';
  id: string;
  name: string;
  input: { [key: string]: unknown };
}
/** MCP `tools/call` params, or the whole JSON-RPC request. */
export type McpToolCall =
  | { name: string; arguments?: { [key: string]: unknown } }
  | { jsonrpc?: '2.0'; id?: string | number; method: 'tools/call'; params: { name: string; arguments?: { [key: string]: unknown } } };
/** Anything dispatchBatch accepts as one call. */
export type AnyToolCall = ModelToolCall | ResponsesFunctionCall | AnthropicToolUse | McpToolCall;
/**
 * The calls of a batch: an array of calls, an OpenAI assistant message
 * (`{tool_calls}`), an Anthropic assistant message (`{content}`: non-tool
 * blocks are skipped), a single call, or the same as JSON text.
 */
export type ToolCallsInput =
  | AnyToolCall[]
  | { tool_calls: ModelToolCall[]; [key: string]: unknown }
  | { content: ({ type: string; [key: string]: unknown } | AnthropicToolUse)[]; [key: string]: unknown }
  | AnyToolCall
  | string;

/** A batch result in the default ('plain') shape. */
export interface BatchResult {
  tool_call_id: string;
  name: string;
  content: string;
  /** True for an error result (a JSON object whose `error` is set). */
  is_error: boolean;
}
/** OpenAI Chat Completions tool message. */
export interface OpenAIToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}
/** OpenAI Responses API `function_call_output` item (format 'auto' for `function_call` input). */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}
/** Anthropic `tool_result` content block. */
export interface AnthropicToolResult {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error: boolean;
}
/** MCP `CallToolResult`; `structuredContent` when the result is a JSON object. */
export interface McpCallToolResult {
  content: { type: 'text'; text: string }[];
  isError: boolean;
  structuredContent?: { [key: string]: unknown };
}
/** MCP JSON-RPC response (format 'auto' for a JSON-RPC `tools/call` request). */
export interface McpToolCallResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  result: McpCallToolResult;
}
export type BatchFormat = 'plain' | 'openai' | 'anthropic' | 'mcp' | 'auto';
export interface BatchOptions<F extends BatchFormat = BatchFormat> {
  /** Result shape (default 'plain'); 'auto' answers each call in its input's shape. */
  format?: F;
}
export type BatchResultOf<F extends BatchFormat> = F extends 'openai'
  ? OpenAIToolMessage
  : F extends 'anthropic'
    ? AnthropicToolResult
    : F extends 'mcp'
      ? McpCallToolResult
      : F extends 'auto'
        ? BatchResult | OpenAIToolMessage | ResponsesFunctionCallOutput | AnthropicToolResult | McpCallToolResult | McpToolCallResponse
        : BatchResult;

/** Options of a single call. */
export interface DispatchOptions {
  /** Aborting cancels the call: its Promise rejects with HermesToolsError(CANCELLED). */
  signal?: AbortSignal;
}

/** Every event type the library sends to setEventHandler (`EVENT_TYPES`). */
export type EventType =
  | 'terminal.started'
  | 'terminal.output'
  | 'terminal.finished'
  | 'process.output'
  | 'process.completed'
  | 'process.watch_match'
  | 'process.watch_disabled'
  | 'tool.progress';
/** The event type list, at run time. */
export declare const EVENT_TYPES: readonly EventType[];
/**
 * A library event. Streaming events (`terminal.started`, `terminal.output`,
 * `process.output`) come only with `terminal.stream_output` on; `*.output`
 * carry a chunk of output in `data` under the call's or process's `id`.
 */
export type RuntimeEvent =
  | { type: 'terminal.started'; id: string; task_id: string; command: string; pid: number; pty: boolean }
  | { type: 'terminal.output'; id: string; task_id: string; data: string }
  | { type: 'terminal.finished'; id: string; task_id: string; exit_code: number }
  | { type: 'process.output'; id: string; task_id: string; data: string }
  | {
      type: 'process.completed';
      session_id: string;
      task_id: string;
      command: string;
      exit_code: number | null;
      completion_reason?: string;
      termination_source?: string | null;
      output: string;
    }
  | {
      type: 'process.watch_match';
      session_id: string;
      task_id: string;
      command: string;
      pattern: string;
      output: string;
      suppressed: number;
    }
  | { type: 'process.watch_disabled'; session_id: string; task_id: string; reason: string }
  | {
      type: 'tool.progress';
      call: number;
      tool_name: string;
      tool_call_id: string;
      task_id: string;
      progress_token?: unknown;
      progress: number;
      total?: number;
      message?: string;
    }
  | { type: string; [key: string]: any };

export type HookEvent = 'pre_tool_call' | 'post_tool_call' | 'transform_tool_result';
export type HookDecision =
  | {}
  | { action: 'block'; message: string }
  | { action: 'rewrite'; args: { [key: string]: unknown } }
  | { result: string };
export type HookFn = (event: { [key: string]: any }) => HookDecision | void | Promise<HookDecision | void>;

export interface CommandCheck {
  verdict: 'allow' | 'ask' | 'block';
  reasons: { rule: string; description: string; tier: string; command: string }[];
  commands: string[][];
  normalized?: string[];
  [key: string]: unknown;
}

export interface ApprovalRequest {
  kind: 'approval' | 'review';
  verdict: 'ask' | 'block';
  rules: string[];
  reasons: { rule: string; description: string; tier: string; command: string }[];
  commands: string[][];
  untrusted_command_text: string;
  suggested_scope?: unknown[];
  choices?: string[];
  session_id?: string;
  task_id?: string;
  tool_call_id?: string;
  timeout_s?: number;
  [key: string]: unknown;
}
export type ApprovalChoice = 'once' | 'session' | 'always' | 'deny';
export type ApprovalAnswer = { choice: ApprovalChoice; scope?: unknown[] } | ApprovalChoice | boolean;
export type ReviewDecision = 'approve' | 'deny' | 'escalate';
export type ReviewAnswer = { decision: ReviewDecision } | ReviewDecision | boolean | undefined | void;
export interface AllowlistEntry {
  rule: string;
  argv_prefix: string[];
  exact?: boolean;
  added_at?: string | number;
  note?: string;
  [key: string]: unknown;
}

/** One server's entry of Runtime.mcpStatus() (docs/json-shapes.md). */
export interface McpServerStatus {
  state: 'connecting' | 'ready' | 'disconnected' | 'failed' | 'disabled' | 'closed';
  transport: 'stdio' | 'http';
  /** 'mcp-<server>' */
  toolset?: string;
  /** Registered tool names, 'mcp__<server>__<tool>'. */
  tools: string[];
  skipped_tools?: string[];
  /** Tools whose definitions changed, held until acceptMcpTools(). */
  held_tools?: string[];
  pid?: number | null;
  connects?: number;
  failures?: number;
  retry_in_ms?: number | null;
  /** Why the last connection attempt failed (null when it did not). */
  last_error?: string | null;
  protocol_version?: string | null;
  server_info?: { name: string; version: string; [key: string]: unknown } | null;
  [key: string]: unknown;
}

/** A request to the OAuth handler (Runtime.setOAuthHandler). */
export interface OAuthRequest {
  /** The token kinds come only for servers with oauth.token_store 'host'. */
  kind: 'oauth_authorize' | 'oauth_tokens_load' | 'oauth_tokens_save' | 'oauth_tokens_clear';
  server: string;
  /** oauth_authorize: show it to the user (open a browser). */
  authorization_url?: string;
  /** oauth_authorize: where the authorization server sends the browser back. */
  redirect_uri?: string;
  scopes?: string[];
  /** A step-up to more scopes (the server answered 403 insufficient_scope). */
  step_up?: boolean;
  timeout_s?: number;
  /** oauth_tokens_save: secret; store it as it is, never log it. */
  tokens?: { [key: string]: unknown };
  [key: string]: unknown;
}
/**
 * The OAuth handler's answer: the redirect URL (a string), {redirect_url},
 * {code} or {error} for oauth_authorize; {tokens} (or nothing: none saved)
 * for oauth_tokens_load; nothing for oauth_tokens_save / _clear.
 */
export type OAuthAnswer =
  | string
  | { redirect_url: string }
  | { code: string }
  | { tokens: { [key: string]: unknown } | null }
  | { error: string }
  | Record<string, never>
  | undefined
  | void;

/** ht_mcp_server_address: where and how to reach a served runtime. */
export interface McpAddress {
  transport: 'http' | 'stdio';
  url?: string;
  auth?: 'bearer' | 'none';
  /** The generated bearer token's file (null when the host gave the token or auth is off). */
  token_file?: string | null;
}

/**
 * A server of Runtime.serveMcp. close() stops it (calls in flight are
 * cancelled); it may outlive its runtime (closing the runtime stops it, the
 * handle stays until close()).
 */
export declare class McpServer {
  /** ht_mcp_server_address's JSON. */
  readonly address: McpAddress;
  /** The streamable HTTP URL (undefined for stdio). */
  readonly url: string | undefined;
  /** The generated bearer token (null when there is no token file). */
  token(): string | null;
  /** Wait up to timeoutMs (0: just look; null: for ever): true when the server ended, false while it serves. */
  wait(timeoutMs?: number | null): Promise<boolean>;
  /** Stop serving and free the handle (on a worker thread). Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A Promise of an async call's result text, with the id for cancel(). */
export type PendingCall = Promise<string> & { callId: number };

/** One command for a host environment to run. */
export declare class Exec {
  readonly id: number;
  readonly task: string;
  /** ['bash', '-c', script] */
  readonly argv: string[];
  readonly capture: boolean;
  readonly stdin: Buffer;
  readonly script: string;
  /** false: nobody reads any more (timeout, cancellation): stop the command. */
  output(data: string | Buffer | Uint8Array, stream?: 1 | 2): boolean;
  finish(code: number, message?: string): void;
}

/** A host-defined environment, selected by `terminal.backend` naming it. */
export declare class Environment {
  /** `name` is what `terminal.backend` names; `location` is shown in approval prompts. */
  constructor(name: string, options?: { location?: string });
  /** The name given to the constructor. */
  readonly name: string;
  /** Run `exec` (`bash -c` its script where the task's commands run), streaming its output; resolve with its exit code. */
  run(exec: Exec): number | Promise<number>;
  /** Signal the run `id` (its whole process tree) with `signal`. */
  kill(id: number, signal: number): void;
  /** A task ended (`task`) or the runtime is freed (`null`): release what it held. */
  cleanup(task: string | null): void;
  /** File tools: a file's bytes (optional: give readFile, writeFile and listDir, or none and the library goes through `run`). */
  readFile?(task: string, path: string): Buffer | string | Promise<Buffer | string>;
  /** File tools: replace a file (optional, with readFile and listDir). */
  writeFile?(task: string, path: string, data: Buffer, mode: number | null): void | Promise<void>;
  /** File tools: a folder's entries as [name, isDir] (optional, with readFile and writeFile). */
  listDir?(task: string, path: string): Array<[string, boolean]> | Promise<Array<[string, boolean]>>;
  /** Release the native handle (runtimes created with it keep it until they close). */
  close(): void;
}

export declare class Runtime {
  /** Create a runtime off the JS thread, with host environments. */
  static create(config?: { [key: string]: unknown } | string | null, options?: { environments?: Environment[] }): Promise<Runtime>;
  /** @param config ht_runtime_new config, e.g. { builtin_toolsets: ['terminal'] } */
  constructor(config?: { [key: string]: unknown } | string | null);
  /** True once close() has started. */
  readonly closed: boolean;
  /** The raw ht_runtime* as a BigInt. */
  readonly pointer: bigint | null;
  /** Live callback registrations (tools, hooks, event handler). */
  readonly liveHandles: number;
  /** How many times a registration's free function ran. */
  readonly releasedCount: number;
  /** The registry generation. */
  readonly generation: number;

  /**
   * Free the runtime: pending calls reject at once with CANCELLED and release
   * the event loop; ht_runtime_free then runs on a worker thread (late answers
   * and completions are ignored) and every callback is released. Idempotent.
   */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;

  /**
   * Register a host tool from a spec; returns the tool name. `options.check`
   * hides the tool while it returns false (must be synchronous and fast).
   */
  registerTool(spec: ToolSpec | string | Buffer, handler: ToolHandler, options?: { check?: () => boolean }): string;
  /** Register a tool from a name, a definition and a handler; returns the name. */
  tool(name: string, def: ToolDef, handler: ToolHandler): string;
  /**
   * Register a tool whose parameters are a zod schema: the model gets its JSON
   * Schema, the handler gets `schema.safeParse(args).data` (typed, defaults
   * applied); a refinement that fails answers the model with an error result.
   * Throws TypeError when `def.schema` is not a zod object schema.
   */
  typedTool<S extends ZodLikeSchema<any>>(
    name: string,
    def: TypedToolDef<S>,
    handler: (args: SchemaOutput<S>, call: ToolCall) => unknown | Promise<unknown>,
  ): string;
  /** Remove a tool (its handler is released); NOT_FOUND when unknown. */
  deregisterTool(name: string): void;
  /** Define or replace a toolset. */
  defineToolset(toolset: ToolsetDef | string, opts?: Omit<ToolsetDef, 'name'>): void;
  /** Make `alias` name the toolset `target`. */
  aliasToolset(alias: string, target: string): void;
  /** Every toolset with its tools, includes, resolved tools and availability. */
  toolsets(): Promise<{ [key: string]: any }[]>;
  /** Forget cached availability results. */
  invalidateAvailability(): void;

  /** Tool definitions for the model, in the requested format. */
  definitions(query?: DefinitionsQuery): Promise<{ [key: string]: any }[]>;
  /** Raw JSON text of definitions() for a query object. */
  definitionsJson(query?: { [key: string]: unknown } | string | null): Promise<string>;

  /**
   * Run one call and resolve with the result text (error results are text
   * too). Goes through ht_runtime_dispatch_async: no worker thread waits for
   * the handler. Rejects with TypeError when `name` is not a string, and with
   * HermesToolsError(CANCELLED) when `options.signal` aborts or close() runs.
   */
  dispatch(
    name: string,
    args?: { [key: string]: unknown } | JsonText,
    context?: DispatchContext | null,
    options?: DispatchOptions,
  ): Promise<string>;
  /**
   * Start a call (ht_runtime_dispatch_async); the Promise has `callId` and
   * rejects with CANCELLED after cancel() or close(). Throws TypeError at
   * once when `name` is not a string.
   */
  dispatchAsync(
    name: string,
    args?: { [key: string]: unknown } | JsonText,
    context?: DispatchContext | null,
    options?: DispatchOptions,
  ): PendingCall;
  /** Cancel an async call: its Promise rejects with CANCELLED. Throws NOT_FOUND when already done. */
  cancel(callId: number): void;
  /**
   * Dispatch a model's tool calls (OpenAI, Responses, Anthropic or MCP shapes);
   * one result per call in input order. Consecutive parallel-safe tools run
   * concurrently (at most `dispatch.max_parallel`), the others in order.
   */
  dispatchBatch<F extends BatchFormat = 'plain'>(
    toolCalls: ToolCallsInput,
    context?: DispatchContext | string | null,
    options?: BatchOptions<F>,
  ): Promise<BatchResultOf<F>[]>;

  /** Add a hook; a pre_tool_call hook that throws or rejects blocks the call. */
  addHook(event: HookEvent, fn: HookFn): void;
  /** Receive library events (see EVENT_TYPES); null removes the handler. */
  setEventHandler(fn: ((event: RuntimeEvent) => void | Promise<void>) | null): void;
  /** Drop a task's shell state and kill its background processes. */
  cleanupTask(taskId: string): Promise<void>;

  /** Handle agent-loop tools (agent_loop: true) with handler(args, call), without hooks; null removes it. */
  setInterceptor(handler: ToolHandler | null): void;
  /** Asked when a command needs approval; a throw or rejection denies. null removes it. */
  setApprovalHandler(fn: ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>) | null): void;
  /** The smart reviewer (approvals.mode 'smart'); a throw escalates. null removes it. */
  setApprovalReviewer(fn: ((request: ApprovalRequest) => ReviewAnswer | Promise<ReviewAnswer>) | null): void;
  /**
   * The browser step of MCP servers' OAuth 2.1 sign-in (the library does
   * discovery, registration, PKCE, tokens and refresh): show the user
   * request.authorization_url and answer the URL the browser was redirected
   * to. With oauth.token_store 'host' it also loads, saves and clears the
   * tokens. A throw or rejection gives the sign-in up. Set it before
   * addMcpServer; null removes it (such servers then fail, see mcpStatus()).
   */
  setOAuthHandler(fn: ((request: OAuthRequest) => OAuthAnswer | Promise<OAuthAnswer>) | null): void;
  /** Each MCP server's state, keyed by name ({} without servers); never waits for a server. */
  mcpStatus(): { [server: string]: McpServerStatus };
  /**
   * Start an MCP server at run time (one mcp_servers entry: {command, args, ...}
   * or {url, headers, oauth, ...}). Resolves after its first connection
   * attempt, with its tools registered or the server 'failed' in mcpStatus()
   * (retrying in the background). Rejects with INVALID_JSON / INVALID_ARGUMENT
   * for a bad config, CONFLICT for a name in use.
   */
  addMcpServer(name: string, config: { [key: string]: unknown } | string): Promise<void>;
  /** Stop an MCP server and deregister its tools; rejects with NOT_FOUND when unknown. */
  removeMcpServer(name: string): Promise<void>;
  /** Accept the changed definitions of a server's held tools (held_tools). */
  acceptMcpTools(name: string): Promise<void>;
  /**
   * Serve this runtime's tools as an MCP server on a library thread: null / {}
   * for stdio on descriptors 0 and 1, {transport: 'http'} for streamable HTTP
   * on a free loopback port with a generated bearer token. Close it when done.
   */
  serveMcp(options?: { [key: string]: unknown } | string | null): McpServer;
  /** The persistent allowlist ('always' answers). */
  allowlist(): AllowlistEntry[];
  /** Replace the allowlist (validated; saved to approvals.allowlist_path when configured). */
  setAllowlist(entries: AllowlistEntry[] | string): void;
  /** Forget the 'session' approvals given in sessionId. */
  clearSessionApprovals(sessionId: string): void;
  /** Analyse a shell command with this runtime's rules, without running it. */
  commandCheck(command: string | Buffer): CommandCheck;
}

export declare function abiVersion(): number;
export declare function version(): string;
export declare function features(): { [key: string]: any };
/** Analyse a shell command with the default rules, without running it. */
export declare function commandCheck(command: string | Buffer): CommandCheck;
/** Process-wide log handler (1 error .. 5 trace); null removes it. Remove it before the process exits. */
export declare function setLogHandler(
  fn: ((level: number, message: string) => void) | null,
  level?: number,
): Promise<void>;
/** The path of the loaded libhermes_tools.so. */
export declare const libraryPath: string;
/** The raw koffi function table. */
export declare const lib: { [name: string]: any };
