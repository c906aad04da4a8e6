// Package hermestools is the Go binding of hermes-tools, the embeddable tools
// runtime for LLM agents (C ABI in include/hermes_tools.h).
//
//	rt, err := hermestools.New(`{"builtin_toolsets":["terminal"]}`)
//	if err != nil { ... }
//	defer rt.Close()
//	rt.RegisterTool(spec, func(call hermestools.Call) (string, error) {
//		return `{"ok":true}`, nil
//	}, nil)
//	defs, _ := rt.Definitions("")
//	out, _ := rt.Dispatch("my_tool", `{"x":1}`, "")
//
// Callbacks: tool handlers and hooks run in their own goroutine and may take
// as long as they need (or answer later through a Reply); availability
// checks, events, logs and async completion callbacks run on the library's
// callback thread and must be quick. A panic in any callback is recovered and
// never unwinds into C. User data crosses C as a cgo.Handle, deleted exactly
// once by the library's free callback; C never keeps a Go pointer.
//
// Build: in this repository the package links ../../target/debug
// (run `cargo build` first). Against an installed copy use the build tag
// hermes_pkgconfig, which asks pkg-config for hermes_tools.
package hermestools

/*
#cgo !hermes_pkgconfig CFLAGS: -I${SRCDIR}/../../include
#cgo !hermes_pkgconfig LDFLAGS: -L${SRCDIR}/../../target/debug -lhermes_tools -Wl,-rpath,${SRCDIR}/../../target/debug
#cgo hermes_pkgconfig pkg-config: hermes_tools
#include "shims.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"unsafe"
)

// ABIVersion is the C ABI version this binding was written for.
const ABIVersion = 1

// HeaderABIVersion is HT_ABI_VERSION of the header the package was compiled with.
const HeaderABIVersion = C.HT_ABI_VERSION

// CheckABI reports an error when the loaded library's ABI differs from this binding's.
func CheckABI() error {
	lib := uint32(C.ht_abi_version())
	if lib != ABIVersion || HeaderABIVersion != ABIVersion {
		return &Error{Status: StatusUnsupported, Message: fmt.Sprintf(
			"hermes-tools ABI mismatch: Go binding expects ABI %d, header has %d, loaded library has %d",
			ABIVersion, HeaderABIVersion, lib)}
	}
	return nil
}

// Version returns "hermes-tools/X.Y.Z" of the loaded library.
func Version() string { return C.GoString(C.ht_version()) }

// Features returns the build's optional features as a JSON object.
func Features() string { return C.GoString(C.ht_features()) }

// --- handle bookkeeping -------------------------------------------------

var (
	liveHandles int64 // cgo handles not yet released by the library
	badFrees    int64 // free callbacks for a handle that was already released (must stay 0)
)

func newHandle(v any) cgo.Handle {
	atomic.AddInt64(&liveHandles, 1)
	return cgo.NewHandle(v)
}

// dropHandle releases a handle the library never took (failed registration)
// or has finished with (free callback, completion).
func dropHandle(h cgo.Handle) {
	defer func() {
		if recover() != nil {
			atomic.AddInt64(&badFrees, 1)
		}
	}()
	h.Delete()
	atomic.AddInt64(&liveHandles, -1)
}

// --- C strings ----------------------------------------------------------

// cstrs copies Go strings to C memory for the length of one call.
type cstrs struct{ ptrs []unsafe.Pointer }

func (a *cstrs) str(s string) (*C.char, C.size_t) {
	if len(s) == 0 {
		return nil, 0
	}
	p := C.CString(s)
	a.ptrs = append(a.ptrs, unsafe.Pointer(p))
	return p, C.size_t(len(s))
}

func (a *cstrs) free() {
	for _, p := range a.ptrs {
		C.free(p)
	}
}

// takeString copies a library-owned string and frees it.
func takeString(p *C.char, n C.size_t) string {
	if p == nil {
		return ""
	}
	s := C.GoStringN(p, C.int(n))
	C.ht_string_free(p)
	return s
}

func borrowed(p *C.char, n C.size_t) string {
	if p == nil {
		return ""
	}
	return C.GoStringN(p, C.int(n))
}

// --- calls --------------------------------------------------------------

// Call is one tool invocation as the handler sees it (copied from the library).
type Call struct {
	ToolName string
	Args     string // JSON object text, repaired and validated against the schema
	Context  string // dispatch context JSON ({} when none was given)
	// Ctx is cancelled when the library stops waiting for the answer (the
	// call timed out, Runtime.Cancel, Runtime.Close) and once the call is
	// answered. A handler doing slow work should watch Ctx.Done(): an answer
	// after it is dropped (Respond returns StatusTimeout or StatusCancelled).
	Ctx context.Context

	call uintptr // the ht_call handle, for Progress
}

// Progress reports how far the handler got (total <= 0: unknown; message may
// be ""): the runtime's event handler gets a "tool.progress" event with this
// call's ids. StatusNotFound once the call is answered, timed out or cancelled.
func (c Call) Progress(progress, total float64, message string) Status {
	if c.call == 0 {
		return StatusNotFound
	}
	var a cstrs
	defer a.free()
	p, n := a.str(message)
	return Status(C.htgo_call_progress(C.uintptr_t(c.call), C.double(progress), C.double(total), p, n))
}

// Unmarshal decodes the arguments into v.
func (c Call) Unmarshal(v any) error { return json.Unmarshal([]byte(c.Args), v) }

// ToolHandler answers a call: the result text for the model, or an error
// (reported to the model as {"error": ...}). It runs in its own goroutine.
type ToolHandler func(call Call) (string, error)

// AsyncToolHandler gets the call and a Reply it may answer later, from any
// goroutine. A Reply that is garbage-collected unanswered answers with an
// error (a backstop only: always answer).
type AsyncToolHandler func(call Call, reply *Reply)

// Reply answers one call exactly once. Later answers return StatusNotFound.
type Reply struct {
	call   uintptr
	done   int32
	cancel context.CancelFunc // ends Call.Ctx once answered
}

// Respond answers with the tool's result text. It returns StatusOK, or
// StatusTimeout / StatusCancelled / StatusNotFound for a late or second answer (all harmless).
func (r *Reply) Respond(result string) Status { return r.answer(false, result) }

// Fail answers with an error; the library wraps it as a sanitised {"error": ...}.
func (r *Reply) Fail(err error) Status {
	msg := "error"
	if err != nil {
		msg = err.Error()
	}
	return r.answer(true, msg)
}

// Answered reports whether the call was answered.
func (r *Reply) Answered() bool { return atomic.LoadInt32(&r.done) != 0 }

func (r *Reply) answer(isErr bool, text string) Status {
	if !atomic.CompareAndSwapInt32(&r.done, 0, 1) {
		return StatusNotFound
	}
	var a cstrs
	defer a.free()
	p, n := a.str(text)
	st := Status(C.htgo_call_respond(C.uintptr_t(r.call), C.bool(isErr), p, n))
	if r.cancel != nil {
		r.cancel()
	}
	return st
}

type toolEntry struct {
	sync  ToolHandler
	async AsyncToolHandler
	check func() bool
}

// HookHandler inspects a hook event (JSON) and returns its decision JSON
// ("" means {}). For pre_tool_call: {} to continue,
// {"action":"block","message":"..."} or {"action":"rewrite","args":{...}};
// for transform_tool_result: {"result":"..."} to replace the text. An error or
// panic blocks a pre_tool_call and is ignored for other events.
type HookHandler func(eventJSON string) (string, error)

type hookEntry struct {
	fn            HookHandler
	blocksOnError bool
}

// Result is the outcome of an async dispatch. Err is an *Error with
// StatusCancelled after Cancel or Close (Text then holds the error result).
type Result struct {
	Text string
	Err  error
}

type asyncEntry struct {
	ch chan Result
	fn func(Result)
}

// AsyncCall is a started async dispatch.
type AsyncCall struct {
	ID   uint64        // for Runtime.Cancel
	Done <-chan Result // receives exactly one Result (buffered)
}

// Wait blocks until the call completes.
func (a *AsyncCall) Wait() (string, error) {
	r := <-a.Done
	return r.Text, r.Err
}

// --- runtime ------------------------------------------------------------

// Runtime is a hermes-tools runtime. All methods are safe for concurrent use,
// including from inside handlers. Close it when done.
type Runtime struct {
	mu       sync.Mutex
	cond     *sync.Cond
	rt       *C.ht_runtime
	inflight int
	closed   bool
}

// New creates a runtime from a JSON config ("" or "{}" = defaults), after
// checking the library's ABI version.
func New(configJSON string) (*Runtime, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var a cstrs
	defer a.free()
	p, n := a.str(configJSON)
	var rt *C.ht_runtime
	var e *C.ht_error
	if err := takeError(C.ht_runtime_new(p, n, &rt, &e), e); err != nil {
		return nil, err
	}
	return adoptRuntime(rt), nil
}

func adoptRuntime(rt *C.ht_runtime) *Runtime {
	r := &Runtime{rt: rt}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// acquire returns the C runtime for one call, or ErrClosed. Close waits for
// every acquired call to finish; a call started after Close began fails with
// StatusClosed (so a handler calling back in during Close cannot deadlock).
func (r *Runtime) acquire() (*C.ht_runtime, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, &Error{Status: StatusClosed, Message: "the runtime is closed"}
	}
	r.inflight++
	return r.rt, nil
}

func (r *Runtime) release() {
	r.mu.Lock()
	r.inflight--
	if r.inflight == 0 {
		r.cond.Broadcast()
	}
	r.mu.Unlock()
}

// Close frees the runtime: pending async calls complete with StatusCancelled,
// every handler's handle is released, library threads are joined. It waits
// for running calls to return. Idempotent. Do not call it from a handler.
func (r *Runtime) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	for r.inflight > 0 {
		r.cond.Wait()
	}
	rt := r.rt
	r.rt = nil
	r.mu.Unlock()
	C.ht_runtime_free(rt)
}

// RegisterTool registers a host tool from a JSON spec
// ({"name","toolset","schema":{"description","parameters"},...}).
// check (may be nil) is an availability predicate: fast, called on a library thread.
func (r *Runtime) RegisterTool(specJSON string, handler ToolHandler, check func() bool) error {
	if handler == nil {
		return &Error{Status: StatusInvalidArgument, Message: "RegisterTool: nil handler"}
	}
	return r.registerEntry(specJSON, &toolEntry{sync: handler, check: check})
}

// RegisterToolAsync registers a tool whose handler answers through a Reply,
// possibly later and from another goroutine.
func (r *Runtime) RegisterToolAsync(specJSON string, handler AsyncToolHandler, check func() bool) error {
	if handler == nil {
		return &Error{Status: StatusInvalidArgument, Message: "RegisterToolAsync: nil handler"}
	}
	return r.registerEntry(specJSON, &toolEntry{async: handler, check: check})
}

func (r *Runtime) registerEntry(specJSON string, e *toolEntry) error {
	rt, err := r.acquire()
	if err != nil {
		return err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	p, n := a.str(specJSON)
	h := newHandle(e)
	var ce *C.ht_error
	st := C.htgo_register_tool(rt, p, n, C.bool(e.check != nil), C.uintptr_t(h), &ce)
	if err := takeError(st, ce); err != nil {
		dropHandle(h) // on failure the library never calls the free function
		return err
	}
	return nil
}

// SetInterceptor handles agent-loop tools (specs with "agent_loop": true,
// e.g. todo, memory, delegate_task owned by the host's loop): their calls are
// repaired and validated, then handed to handler, without hooks. nil removes
// it (such calls then answer an error).
func (r *Runtime) SetInterceptor(handler ToolHandler) error {
	if handler == nil {
		return r.setInterceptor(nil)
	}
	return r.setInterceptor(&toolEntry{sync: handler})
}

// SetInterceptorAsync is SetInterceptor with a handler that answers through a Reply.
func (r *Runtime) SetInterceptorAsync(handler AsyncToolHandler) error {
	if handler == nil {
		return r.setInterceptor(nil)
	}
	return r.setInterceptor(&toolEntry{async: handler})
}

func (r *Runtime) setInterceptor(e *toolEntry) error {
	var v any
	if e != nil {
		v = e
	}
	return r.setCallback(v, func(rt *C.ht_runtime, h C.uintptr_t, ce **C.ht_error) C.ht_status {
		return C.htgo_set_interceptor(rt, h, ce)
	})
}

// setCallback installs v (nil: removes) through set as a cgo.Handle; when the
// library refuses, the handle is dropped again (it never calls its free).
func (r *Runtime) setCallback(v any, set func(*C.ht_runtime, C.uintptr_t, **C.ht_error) C.ht_status) error {
	rt, err := r.acquire()
	if err != nil {
		return err
	}
	defer r.release()
	var h cgo.Handle
	if v != nil {
		h = newHandle(v)
	}
	var ce *C.ht_error
	if err := takeError(set(rt, C.uintptr_t(h), &ce), ce); err != nil {
		if h != 0 {
			dropHandle(h)
		}
		return err
	}
	return nil
}

// withTwoStrings is withString for functions taking two strings.
func (r *Runtime) withTwoStrings(s1, s2 string, f func(*C.ht_runtime, *C.char, C.size_t, *C.char, C.size_t, **C.ht_error) C.ht_status) error {
	rt, err := r.acquire()
	if err != nil {
		return err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	p1, n1 := a.str(s1)
	p2, n2 := a.str(s2)
	var ce *C.ht_error
	return takeError(f(rt, p1, n1, p2, n2, &ce), ce)
}

// textOut calls a C function that returns an owned string, f(rt, &out, &len, &err).
func (r *Runtime) textOut(f func(*C.ht_runtime, **C.char, *C.size_t, **C.ht_error) C.ht_status) (string, error) {
	rt, err := r.acquire()
	if err != nil {
		return "", err
	}
	defer r.release()
	var out *C.char
	var n C.size_t
	var ce *C.ht_error
	if err := takeError(f(rt, &out, &n, &ce), ce); err != nil {
		return "", err
	}
	return takeString(out, n), nil
}

// withString calls a C function of the shape f(rt, text, len, &err) while
// holding the runtime open.
func (r *Runtime) withString(s string, f func(*C.ht_runtime, *C.char, C.size_t, **C.ht_error) C.ht_status) error {
	rt, err := r.acquire()
	if err != nil {
		return err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	p, n := a.str(s)
	var ce *C.ht_error
	return takeError(f(rt, p, n, &ce), ce)
}

// DeregisterTool removes a tool (ErrNotFound when absent).
func (r *Runtime) DeregisterTool(name string) error {
	return r.withString(name, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_deregister_tool(rt, p, n, ce)
	})
}

// DefineToolset defines or replaces a host toolset ({"name","description"?,"tools"?,"includes"?}).
func (r *Runtime) DefineToolset(toolsetJSON string) error {
	return r.withString(toolsetJSON, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_define_toolset(rt, p, n, ce)
	})
}

// AliasToolset makes alias name the toolset target.
func (r *Runtime) AliasToolset(alias, target string) error {
	return r.withTwoStrings(alias, target, func(rt *C.ht_runtime, ap *C.char, an C.size_t, tp *C.char, tn C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_alias_toolset(rt, ap, an, tp, tn, ce)
	})
}

// Toolsets returns every toolset with its tools and availability (JSON array).
func (r *Runtime) Toolsets() (string, error) {
	return r.textOut(func(rt *C.ht_runtime, out **C.char, n *C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_toolsets_json(rt, out, n, ce)
	})
}

// Generation returns the registry generation (changes on every registry change; 0 when closed).
func (r *Runtime) Generation() uint64 {
	rt, err := r.acquire()
	if err != nil {
		return 0
	}
	defer r.release()
	return uint64(C.ht_runtime_generation(rt))
}

// InvalidateAvailability forgets cached availability-check results.
func (r *Runtime) InvalidateAvailability() error {
	rt, err := r.acquire()
	if err != nil {
		return err
	}
	defer r.release()
	return takeError(C.ht_runtime_invalidate_availability(rt), nil)
}

// Definitions returns the tool definitions for the model. queryJSON ("" = all,
// OpenAI format): {"enabled_toolsets"?,"disabled_toolsets"?,"format"?:"openai"|"anthropic"|"mcp"}.
func (r *Runtime) Definitions(queryJSON string) (string, error) {
	rt, err := r.acquire()
	if err != nil {
		return "", err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	p, n := a.str(queryJSON)
	var out *C.char
	var on C.size_t
	var ce *C.ht_error
	if err := takeError(C.ht_runtime_definitions_json(rt, p, n, &out, &on, &ce), ce); err != nil {
		return "", err
	}
	return takeString(out, on), nil
}

// CallOption configures one Call.
type CallOption func(*callOptions)

type callOptions struct{ contextJSON string }

// WithCallContext gives the call its context JSON (task_id, session_id,
// tool_call_id, interactive, user_task; docs/json-shapes.md).
func WithCallContext(contextJSON string) CallOption {
	return func(o *callOptions) { o.contextJSON = contextJSON }
}

// WithTask runs the call as task id (its cwd, environment and background
// processes are the task's).
func WithTask(id string) CallOption {
	return func(o *callOptions) {
		b, _ := json.Marshal(map[string]string{"task_id": id})
		o.contextJSON = string(b)
	}
}

// Call runs one tool call and waits for its text for the model, Go style:
// ctx first. A ctx that can be cancelled ties the call to it (cancelled
// when ctx is done, as DispatchContext); context.Background() takes the
// synchronous path (the handler runs on this goroutine's thread). Tool
// failures (unknown tool, bad arguments, handler error, timeout) come back
// as {"error": ...} text with a nil error.
func (r *Runtime) Call(ctx context.Context, name, argsJSON string, opts ...CallOption) (string, error) {
	var o callOptions
	for _, f := range opts {
		f(&o)
	}
	if ctx.Done() == nil {
		return r.Dispatch(name, argsJSON, o.contextJSON)
	}
	return r.DispatchContext(ctx, name, argsJSON, o.contextJSON)
}

// Dispatch runs one tool call and waits for its text for the model. Tool
// failures (unknown tool, bad arguments, handler error, timeout) come back as
// {"error": ...} text with a nil error. contextJSON may be "".
//
// Deprecated: use Call (ctx first, the call context as an option).
func (r *Runtime) Dispatch(name, argsJSON, contextJSON string) (string, error) {
	rt, err := r.acquire()
	if err != nil {
		return "", err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	np, nn := a.str(name)
	ap, an := a.str(argsJSON)
	cp, cn := a.str(contextJSON)
	var out *C.char
	var on C.size_t
	var ce *C.ht_error
	if err := takeError(C.ht_runtime_dispatch(rt, np, nn, ap, an, cp, cn, &out, &on, &ce), ce); err != nil {
		return "", err
	}
	return takeString(out, on), nil
}

// DispatchContext runs one tool call like Dispatch, but as an async call
// tied to ctx: when ctx is done first, the call is cancelled (its handler's
// Call.Ctx is cancelled, a built-in tool's process is killed) and
// DispatchContext returns the cancelled result text with ctx.Err(). Like
// DispatchAsync it counts against limits.max_calls_in_flight.
func (r *Runtime) DispatchContext(ctx context.Context, name, argsJSON, contextJSON string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	call, err := r.DispatchAsync(name, argsJSON, contextJSON)
	if err != nil {
		return "", err
	}
	select {
	case res := <-call.Done:
		return res.Text, res.Err
	case <-ctx.Done():
		_, _ = r.Cancel(call.ID)
		res := <-call.Done
		if res.Err != nil {
			return res.Text, ctx.Err()
		}
		return res.Text, nil // it completed before the cancel reached it
	}
}

// DispatchAsync starts a call and returns at once; AsyncCall.Done receives
// exactly one Result.
func (r *Runtime) DispatchAsync(name, argsJSON, contextJSON string) (*AsyncCall, error) {
	ch := make(chan Result, 1) // buffered: the library thread never blocks on a receiver
	id, err := r.dispatchAsync(name, argsJSON, contextJSON, &asyncEntry{ch: ch})
	if err != nil {
		return nil, err
	}
	return &AsyncCall{ID: id, Done: ch}, nil
}

// DispatchAsyncFunc starts a call; done runs exactly once on the library's
// callback thread (keep it quick). Returns the call id.
func (r *Runtime) DispatchAsyncFunc(name, argsJSON, contextJSON string, done func(Result)) (uint64, error) {
	if done == nil {
		return 0, &Error{Status: StatusInvalidArgument, Message: "DispatchAsyncFunc: nil callback"}
	}
	return r.dispatchAsync(name, argsJSON, contextJSON, &asyncEntry{fn: done})
}

func (r *Runtime) dispatchAsync(name, argsJSON, contextJSON string, e *asyncEntry) (uint64, error) {
	rt, err := r.acquire()
	if err != nil {
		return 0, err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	np, nn := a.str(name)
	ap, an := a.str(argsJSON)
	cp, cn := a.str(contextJSON)
	h := newHandle(e)
	var id C.uint64_t
	var ce *C.ht_error
	st := C.htgo_dispatch_async(rt, np, nn, ap, an, cp, cn, C.uintptr_t(h), &id, &ce)
	if err := takeError(st, ce); err != nil {
		dropHandle(h) // on failure the completion never runs
		return 0, err
	}
	return uint64(id), nil
}

// Cancel cancels an async call; its Result gets StatusCancelled. It reports
// false when the call already completed or never existed.
func (r *Runtime) Cancel(callID uint64) (bool, error) {
	rt, err := r.acquire()
	if err != nil {
		return false, err
	}
	defer r.release()
	var ce *C.ht_error
	st := C.ht_runtime_cancel(rt, C.uint64_t(callID), &ce)
	if Status(st) == StatusNotFound {
		C.ht_error_free(ce)
		return false, nil
	}
	if err := takeError(st, ce); err != nil {
		return false, err
	}
	return true, nil
}

// DispatchBatch dispatches a model's tool_calls array and returns
// [{"tool_call_id","name","content"}] in input order.
func (r *Runtime) DispatchBatch(toolCallsJSON, contextJSON string) (string, error) {
	rt, err := r.acquire()
	if err != nil {
		return "", err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	tp, tn := a.str(toolCallsJSON)
	cp, cn := a.str(contextJSON)
	var out *C.char
	var on C.size_t
	var ce *C.ht_error
	if err := takeError(C.ht_runtime_dispatch_batch(rt, tp, tn, cp, cn, &out, &on, &ce), ce); err != nil {
		return "", err
	}
	return takeString(out, on), nil
}

// AddHook adds a hook for event: "pre_tool_call", "post_tool_call" or
// "transform_tool_result". The hook runs in its own goroutine.
func (r *Runtime) AddHook(event string, hook HookHandler) error {
	if hook == nil {
		return &Error{Status: StatusInvalidArgument, Message: "AddHook: nil hook"}
	}
	rt, err := r.acquire()
	if err != nil {
		return err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	p, n := a.str(event)
	h := newHandle(&hookEntry{fn: hook, blocksOnError: event == "pre_tool_call"})
	var ce *C.ht_error
	if err := takeError(C.htgo_add_hook(rt, p, n, C.uintptr_t(h), &ce), ce); err != nil {
		dropHandle(h)
		return err
	}
	return nil
}

// SetEventHandler receives library events (JSON) on the callback thread, in
// order; keep it quick. nil removes the handler.
func (r *Runtime) SetEventHandler(handler func(eventJSON string)) error {
	var v any
	if handler != nil {
		v = handler
	}
	return r.setCallback(v, func(rt *C.ht_runtime, h C.uintptr_t, ce **C.ht_error) C.ht_status {
		return C.htgo_set_event_handler(rt, h, ce)
	})
}

// CleanupTask drops a task's state (shell state, background processes).
func (r *Runtime) CleanupTask(taskID string) error {
	return r.withString(taskID, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_cleanup_task(rt, p, n, ce)
	})
}

// CommandCheck analyses a shell command with this runtime's rules without
// running it: {"verdict":"allow"|"ask"|"block","reasons":[...],...}.
func (r *Runtime) CommandCheck(command string) (string, error) {
	rt, err := r.acquire()
	if err != nil {
		return "", err
	}
	defer r.release()
	return commandCheck(rt, command)
}

// CommandCheck analyses a shell command with the default rules (no runtime).
func CommandCheck(command string) (string, error) { return commandCheck(nil, command) }

func commandCheck(rt *C.ht_runtime, command string) (string, error) {
	var a cstrs
	defer a.free()
	p, n := a.str(command)
	var out *C.char
	var on C.size_t
	var ce *C.ht_error
	if err := takeError(C.ht_command_check(rt, p, n, &out, &on, &ce), ce); err != nil {
		return "", err
	}
	return takeString(out, on), nil
}

// SetLogHandler installs the process-wide log handler (nil removes it).
// level is the most verbose level delivered: 1 error .. 5 trace (0 keeps the
// current level). Lines arrive on a library thread; keep the handler quick.
func SetLogHandler(level int, handler func(level int, message string)) error {
	var h cgo.Handle
	if handler != nil {
		h = newHandle(handler)
	}
	if err := takeError(C.htgo_set_log_handler(C.int32_t(level), C.uintptr_t(h)), nil); err != nil {
		if h != 0 {
			dropHandle(h)
		}
		return err
	}
	return nil
}
