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
  readonly name: string;
  readonly argsJson: string;
  readonly contextJson: string;
  readonly args: { [key: string]: any };
  readonly context: { [key: string]: any };
  readonly answered: boolean;
  readonly deferred: boolean;
  /** Promise to answer later with respond(); the handler's return value is then ignored. */
  defer(): this;
  /** Answer once (strings as is, other values as JSON). Returns the ht_status (TIMEOUT/NOT_FOUND when too late: harmless). */
  respond(result: unknown, isError?: boolean): number;
  /** Answer with an error result (the library wraps it as {"error": ...}). */
  respondError(message: unknown): number;
}

/** A tool handler: return the result (or a Promise of it); throwing gives the model an error result. */
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

export interface ModelToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string | { [key: string]: unknown } };
}

export interface BatchResult {
  tool_call_id: string;
  name: string;
  content: string;
}

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

/** A Promise of an async call's result text, with the id for cancel(). */
export type PendingCall = Promise<string> & { callId: number };

export declare class Runtime {
  /** @param config ht_runtime_new config, e.g. { builtin_toolsets: ['terminal'] } */
  constructor(config?: { [key: string]: unknown } | string | null);
  readonly closed: boolean;
  /** The raw ht_runtime* as a BigInt. */
  readonly pointer: bigint | null;
  /** Live callback registrations (tools, hooks, event handler). */
  readonly liveHandles: number;
  /** How many times a registration's free function ran. */
  readonly releasedCount: number;
  /** The registry generation. */
  readonly generation: number;

  /** Free the runtime (on a worker thread), cancel pending calls, release all callbacks. Idempotent. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;

  registerTool(spec: ToolSpec | string | Buffer, handler: ToolHandler, options?: { check?: () => boolean }): string;
  tool(name: string, def: ToolDef, handler: ToolHandler): string;
  deregisterTool(name: string): void;
  defineToolset(toolset: ToolsetDef | string, opts?: Omit<ToolsetDef, 'name'>): void;
  aliasToolset(alias: string, target: string): void;
  toolsets(): Promise<{ [key: string]: any }[]>;
  invalidateAvailability(): void;

  definitions(query?: DefinitionsQuery): Promise<{ [key: string]: any }[]>;
  definitionsJson(query?: { [key: string]: unknown } | string | null): Promise<string>;

  /** Run one call (ht_runtime_dispatch on a worker thread); resolves with the result text. */
  dispatch(name: string, args?: { [key: string]: unknown } | JsonText, context?: DispatchContext | null): Promise<string>;
  /** Start a call (ht_runtime_dispatch_async); rejects with CANCELLED after cancel() or close(). */
  dispatchAsync(
    name: string,
    args?: { [key: string]: unknown } | JsonText,
    context?: DispatchContext | null,
    options?: { signal?: AbortSignal },
  ): PendingCall;
  cancel(callId: number): void;
  dispatchBatch(toolCalls: ModelToolCall[] | string, context?: DispatchContext | null): Promise<BatchResult[]>;

  addHook(event: HookEvent, fn: HookFn): void;
  setEventHandler(fn: ((event: { [key: string]: any }) => void) | null): void;
  cleanupTask(taskId: string): Promise<void>;

  /** Asked when a command needs approval; a throw or rejection denies. null removes it. */
  /** Handle agent-loop tools (agent_loop: true) with handler(args, call), without hooks; null removes it. */
  setInterceptor(handler: ToolHandler | null): void;
  setApprovalHandler(fn: ((request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>) | null): void;
  /** The smart reviewer (approvals.mode 'smart'); a throw escalates. null removes it. */
  setApprovalReviewer(fn: ((request: ApprovalRequest) => ReviewAnswer | Promise<ReviewAnswer>) | null): void;
  allowlist(): AllowlistEntry[];
  setAllowlist(entries: AllowlistEntry[] | string): void;
  clearSessionApprovals(sessionId: string): void;
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
