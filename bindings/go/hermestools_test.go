package hermestools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const echoParams = `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`

func newRT(t *testing.T, config string) *Runtime {
	t.Helper()
	rt, err := New(config)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(rt.Close)
	return rt
}

func echo(call Call) (string, error) { return call.Args, nil }

func mustRegister(t *testing.T, rt *Runtime, spec string, h ToolHandler, check func() bool) {
	t.Helper()
	if err := rt.RegisterTool(spec, h, check); err != nil {
		t.Fatalf("RegisterTool: %v", err)
	}
}

func mustDispatch(t *testing.T, rt *Runtime, name, args, ctx string) string {
	t.Helper()
	out, err := rt.Dispatch(name, args, ctx)
	if err != nil {
		t.Fatalf("Dispatch(%s): %v", name, err)
	}
	return out
}

func contains(t *testing.T, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		t.Fatalf("%q does not contain %q", s, sub)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; i < 400; i++ {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestVersionAndABI(t *testing.T) {
	if err := CheckABI(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(Version(), "hermes-tools/") {
		t.Fatalf("version %q", Version())
	}
	contains(t, Features(), `"abi":1`)
	if StatusNotFound.String() != "not_found" || Status(99).String() != "status(99)" {
		t.Fatal("status names")
	}
}

func TestConfigErrors(t *testing.T) {
	_, err := New(`{"dispatch":{"timeoutt":1}}`)
	var he *Error
	if !errors.As(err, &he) || he.Status != StatusInvalidJSON {
		t.Fatalf("want invalid_json, got %v", err)
	}
	contains(t, he.Message, "timeoutt")
	if !errors.Is(err, ErrInvalidJSON) || errors.Is(err, ErrNotFound) {
		t.Fatal("errors.Is by status")
	}
}

func TestDispatchSync(t *testing.T) {
	rt := newRT(t, "")
	var mu sync.Mutex
	var seen Call
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), func(c Call) (string, error) {
		mu.Lock()
		seen = c
		mu.Unlock()
		var args struct{ Text string }
		if err := c.Unmarshal(&args); err != nil {
			return "", err
		}
		return jsonQuote(args.Text), nil
	}, nil)
	if out := mustDispatch(t, rt, "echo", `{"text":"hi"}`, `{"task_id":"t1"}`); out != `"hi"` {
		t.Fatalf("got %s", out)
	}
	mu.Lock()
	if seen.ToolName != "echo" || seen.Args != `{"text":"hi"}` {
		t.Fatalf("call %+v", seen)
	}
	contains(t, seen.Context, `"task_id":"t1"`)
	mu.Unlock()
	contains(t, mustDispatch(t, rt, "echo", `{}`, ""), "missing required property 'text'")
	contains(t, mustDispatch(t, rt, "ech", `{}`, ""), "Unknown tool: ech")
	if _, err := rt.Dispatch("e\xff", "{}", ""); !errors.Is(err, ErrInvalidUTF8) {
		t.Fatalf("want invalid utf8, got %v", err)
	}
}

func TestHandlerErrorsAndPanics(t *testing.T) {
	rt := newRT(t, "")
	mustRegister(t, rt, ToolSpec("fails", "go", "fails", "", false), func(Call) (string, error) {
		return "", fmt.Errorf("disk full")
	}, nil)
	mustRegister(t, rt, ToolSpec("panics", "go", "panics", "", false), func(Call) (string, error) {
		panic("kaboom")
	}, nil)
	if err := rt.RegisterToolAsync(ToolSpec("apanics", "go", "async panics", "", false), func(Call, *Reply) {
		panic("async kaboom")
	}, nil); err != nil {
		t.Fatal(err)
	}
	contains(t, mustDispatch(t, rt, "fails", "{}", ""), "[TOOL_ERROR] disk full")
	contains(t, mustDispatch(t, rt, "panics", "{}", ""), "kaboom")
	contains(t, mustDispatch(t, rt, "apanics", "{}", ""), "async kaboom")
	if err := rt.RegisterTool(ToolSpec("nil", "go", "nil", "", false), nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("nil handler: %v", err)
	}
}

func TestAsyncHandlerAnswersLater(t *testing.T) {
	rt := newRT(t, "")
	err := rt.RegisterToolAsync(ToolSpec("later", "go", "answers later", echoParams, false), func(c Call, r *Reply) {
		go func() {
			time.Sleep(10 * time.Millisecond)
			if st := r.Respond(c.Args); st != StatusOK {
				panic(st)
			}
			if st := r.Respond("again"); st != StatusNotFound {
				panic(st)
			}
		}()
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := mustDispatch(t, rt, "later", `{"text":"a"}`, ""); out != `{"text":"a"}` {
		t.Fatalf("got %s", out)
	}
	ac, err := rt.DispatchAsync("later", `{"text":"b"}`, "")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := ac.Wait(); err != nil || out != `{"text":"b"}` {
		t.Fatalf("got %s %v", out, err)
	}
	_ = rt.RegisterToolAsync(ToolSpec("fail", "go", "fails via reply", "", false), func(c Call, r *Reply) {
		r.Fail(errors.New("nope"))
	}, nil)
	contains(t, mustDispatch(t, rt, "fail", "{}", ""), "nope")
}

func TestReentrantHandler(t *testing.T) {
	rt := newRT(t, "")
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), echo, nil)
	mustRegister(t, rt, ToolSpec("outer", "go", "calls back in", "", false), func(Call) (string, error) {
		defs, err := rt.Definitions("")
		if err != nil || !strings.Contains(defs, `"echo"`) {
			return "", fmt.Errorf("definitions: %v", err)
		}
		return rt.Dispatch("echo", `{"text":"inner"}`, "")
	}, nil)
	if out := mustDispatch(t, rt, "outer", "{}", ""); out != `{"text":"inner"}` {
		t.Fatalf("got %s", out)
	}
}

func TestChecks(t *testing.T) {
	rt := newRT(t, "")
	mustRegister(t, rt, ToolSpec("hidden", "go", "never offered", "", false), echo, func() bool { return false })
	mustRegister(t, rt, ToolSpec("broken", "go", "check panics", "", false), echo, func() bool { panic("x") })
	mustRegister(t, rt, ToolSpec("shown", "go", "offered", "", false), echo, func() bool { return true })
	defs, err := rt.Definitions("")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(defs, "hidden") || strings.Contains(defs, "broken") {
		t.Fatalf("unavailable tool offered: %s", defs)
	}
	contains(t, defs, `"shown"`)
	var parsed []map[string]any
	if err := json.Unmarshal([]byte(defs), &parsed); err != nil || len(parsed) != 1 {
		t.Fatalf("defs %s %v", defs, err)
	}
	anth, err := rt.Definitions(`{"format":"anthropic"}`)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, anth, "input_schema")
}

// Every handle the binding gives the library is released exactly once: by the
// free callback (tools, hooks, event handlers), by the completion (async
// calls), or by the binding itself when registration fails.
func TestCallbackResourcesReleasedExactlyOnce(t *testing.T) {
	base := atomic.LoadInt64(&liveHandles)
	bad := atomic.LoadInt64(&badFrees)
	rt, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	mustRegister(t, rt, ToolSpec("t1", "go", "one", "", false), echo, func() bool { return true })
	mustRegister(t, rt, ToolSpec("t2", "go", "two", "", false), echo, nil)
	if err := rt.AddHook("post_tool_call", func(string) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetEventHandler(func(string) {}); err != nil {
		t.Fatal(err)
	}
	if got := atomic.LoadInt64(&liveHandles) - base; got != 4 {
		t.Fatalf("live handles %d, want 4", got)
	}
	// Failed registrations are released by the binding, never by the library.
	if err := rt.RegisterTool("{not json", echo, nil); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("want invalid json, got %v", err)
	}
	if err := rt.AddHook("pre_tool_cal", func(string) (string, error) { return "", nil }); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("want invalid argument, got %v", err)
	}
	if got := atomic.LoadInt64(&liveHandles) - base; got != 4 {
		t.Fatalf("live handles %d after failures, want 4", got)
	}
	// Async calls release their handle in the completion.
	for i := 0; i < 20; i++ {
		ac, err := rt.DispatchAsync("t2", "{}", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ac.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "async handles", func() bool { return atomic.LoadInt64(&liveHandles)-base == 4 })
	// Deregistration, replacement and clearing release the old handle.
	if err := rt.DeregisterTool("t1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "deregistered handle", func() bool { return atomic.LoadInt64(&liveHandles)-base == 3 })
	mustRegister(t, rt, ToolSpec("t2", "go", "two again", "", false), echo, nil)
	waitFor(t, "replaced handle", func() bool { return atomic.LoadInt64(&liveHandles)-base == 3 })
	if err := rt.SetEventHandler(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "event handle", func() bool { return atomic.LoadInt64(&liveHandles)-base == 2 })
	rt.Close() // runs every remaining free callback before returning
	if got := atomic.LoadInt64(&liveHandles) - base; got != 0 {
		t.Fatalf("live handles %d after Close, want 0", got)
	}
	if atomic.LoadInt64(&badFrees) != bad {
		t.Fatal("a handle was released twice")
	}
	rt.Close() // idempotent
}

func TestConcurrentAsyncAndSync(t *testing.T) {
	rt := newRT(t, `{"dispatch":{"timeout":30}}`)
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), echo, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 400)
	for i := 0; i < 200; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			args := fmt.Sprintf(`{"text":"%d"}`, i)
			ac, err := rt.DispatchAsync("echo", args, "")
			if err != nil {
				errs <- err
				return
			}
			if out, err := ac.Wait(); err != nil || out != args {
				errs <- fmt.Errorf("async %d: %s %v", i, out, err)
			}
		}(i)
	}
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 25; j++ {
				args := fmt.Sprintf(`{"text":"s%d-%d"}`, i, j)
				if out, err := rt.Dispatch("echo", args, ""); err != nil || out != args {
					errs <- fmt.Errorf("sync: %s %v", out, err)
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The callback variant runs once, on the library thread.
	got := make(chan Result, 2)
	id, err := rt.DispatchAsyncFunc("echo", `{"text":"cb"}`, "", func(r Result) { got <- r })
	if err != nil || id == 0 {
		t.Fatal(id, err)
	}
	r := <-got
	if r.Err != nil || r.Text != `{"text":"cb"}` {
		t.Fatalf("%+v", r)
	}
	if _, err := rt.DispatchAsyncFunc("echo", "{}", "", nil); !errors.Is(err, ErrInvalidArgument) {
		t.Fatal(err)
	}
}

func TestCancelAndCloseWithPendingCalls(t *testing.T) {
	rt, err := New(`{"dispatch":{"timeout":100}}`)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var parked []*Reply
	if err := rt.RegisterToolAsync(ToolSpec("never", "go", "never answers", "", false), func(c Call, r *Reply) {
		mu.Lock()
		parked = append(parked, r)
		mu.Unlock()
	}, nil); err != nil {
		t.Fatal(err)
	}
	ac, err := rt.DispatchAsync("never", "{}", "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	if ok, err := rt.Cancel(ac.ID); !ok || err != nil {
		t.Fatalf("cancel: %v %v", ok, err)
	}
	text, err := ac.Wait()
	if !errors.Is(err, ErrCancelled) {
		t.Fatalf("want cancelled, got %v", err)
	}
	contains(t, text, "cancelled")
	if ok, err := rt.Cancel(ac.ID); ok || err != nil {
		t.Fatalf("second cancel: %v %v", ok, err)
	}
	pending, err := rt.DispatchAsync("never", "{}", "")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	rt.Close()
	select {
	case r := <-pending.Done:
		if !errors.Is(r.Err, ErrCancelled) {
			t.Fatalf("want cancelled, got %v", r.Err)
		}
	default:
		t.Fatal("Close returned before the pending completion ran")
	}
	mu.Lock()
	for _, r := range parked {
		r.Respond("late") // harmless after close
	}
	mu.Unlock()
	if _, err := rt.Dispatch("never", "{}", ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("want closed, got %v", err)
	}
	if _, err := rt.Definitions(""); !errors.Is(err, ErrClosed) {
		t.Fatalf("want closed, got %v", err)
	}
}

func TestBatch(t *testing.T) {
	rt := newRT(t, "")
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), echo, nil)
	mustRegister(t, rt, ToolSpec("fails", "go", "fails", "", false), func(Call) (string, error) {
		return "", errors.New("bad day")
	}, nil)
	calls := `[
	 {"id":"a","type":"function","function":{"name":"echo","arguments":"{\"text\":\"1\"}"}},
	 {"id":"b","type":"function","function":{"name":"fails","arguments":"{}"}},
	 {"id":"c","type":"function","function":{"name":"echo","arguments":{"text":"3"}}}]`
	out, err := rt.DispatchBatch(calls, "")
	if err != nil {
		t.Fatal(err)
	}
	var res []struct {
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
		Content    string `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 3 {
		t.Fatalf("%s %v", out, err)
	}
	if res[0].ToolCallID != "a" || res[1].ToolCallID != "b" || res[2].ToolCallID != "c" {
		t.Fatalf("order: %s", out)
	}
	contains(t, res[1].Content, "bad day")
	if res[2].Content != `{"text":"3"}` {
		t.Fatalf("content %q", res[2].Content)
	}
	if _, err := rt.DispatchBatch("{", ""); !errors.Is(err, ErrInvalidJSON) {
		t.Fatal(err)
	}
}

func TestHooks(t *testing.T) {
	rt := newRT(t, "")
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), echo, nil)
	_ = rt.AddHook("pre_tool_call", func(ev string) (string, error) {
		switch {
		case strings.Contains(ev, "devil"):
			return `{"action":"block","message":"no devils"}`, nil
		case strings.Contains(ev, "explode"):
			return "", errors.New("hook bug")
		case strings.Contains(ev, "panic"):
			panic("hook panic")
		}
		return "", nil
	})
	var post int64
	_ = rt.AddHook("post_tool_call", func(ev string) (string, error) {
		if strings.Contains(ev, "post_tool_call") {
			atomic.AddInt64(&post, 1)
		}
		return "{}", nil
	})
	_ = rt.AddHook("transform_tool_result", func(ev string) (string, error) {
		if strings.Contains(ev, "shout") {
			return `{"result":"SHOUTED"}`, nil
		}
		return "", nil
	})
	if out := mustDispatch(t, rt, "echo", `{"text":"hi"}`, ""); out != `{"text":"hi"}` {
		t.Fatal(out)
	}
	if out := mustDispatch(t, rt, "echo", `{"text":"devil"}`, ""); out != `{"error":"no devils"}` {
		t.Fatal(out)
	}
	contains(t, mustDispatch(t, rt, "echo", `{"text":"explode"}`, ""), "hook failed: hook bug")
	contains(t, mustDispatch(t, rt, "echo", `{"text":"panic"}`, ""), "hook failed: hook panic")
	if out := mustDispatch(t, rt, "echo", `{"text":"shout"}`, ""); out != "SHOUTED" {
		t.Fatal(out)
	}
	waitFor(t, "post hooks", func() bool { return atomic.LoadInt64(&post) >= 2 })
}

func TestCommandCheck(t *testing.T) {
	v, err := CommandCheck("rm -rf /")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(v), &res); err != nil || res.Verdict == "allow" {
		t.Fatalf("rm -rf /: %s", v)
	}
	rt := newRT(t, "")
	v, err = rt.CommandCheck("ls -la")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, v, `"verdict":"allow"`)
}

func TestRegistryManagement(t *testing.T) {
	rt := newRT(t, "")
	g0 := rt.Generation()
	mustRegister(t, rt, ToolSpec("a", "alpha", "A", "", false), echo, nil)
	if rt.Generation() <= g0 {
		t.Fatal("generation did not change")
	}
	if err := rt.DefineToolset(`{"name":"bundle","description":"alpha","includes":["alpha"]}`); err != nil {
		t.Fatal(err)
	}
	if err := rt.AliasToolset("mcp-x", "bundle"); err != nil {
		t.Fatal(err)
	}
	sets, err := rt.Toolsets()
	if err != nil {
		t.Fatal(err)
	}
	contains(t, sets, `"bundle"`)
	defs, err := rt.Definitions(`{"enabled_toolsets":["mcp-x"]}`)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, defs, `"a"`)
	if _, err := rt.Definitions(`{"enabled_toolsets":["nope"]}`); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	if err := rt.DeregisterTool("missing"); !errors.Is(err, ErrNotFound) {
		t.Fatal(err)
	}
	err = rt.RegisterTool(ToolSpec("a", "beta", "A", "", false), echo, nil)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "override") {
		t.Fatal(err)
	}
	if err := rt.InvalidateAvailability(); err != nil {
		t.Fatal(err)
	}
	if err := rt.CleanupTask("task-1"); err != nil {
		t.Fatal(err)
	}
	if err := rt.DefineToolset(`{"name":"c","includes":["c"]}`); err == nil {
		t.Fatal("cycle accepted")
	}
}

func TestLogHandler(t *testing.T) {
	base := atomic.LoadInt64(&liveHandles)
	var lines int64
	if err := SetLogHandler(5, func(level int, msg string) { atomic.AddInt64(&lines, 1) }); err != nil {
		t.Fatal(err)
	}
	rt, _ := New("")
	_, _ = rt.Dispatch("nothing", "{}", "")
	rt.Close()
	if err := SetLogHandler(0, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "log handler release", func() bool { return atomic.LoadInt64(&liveHandles) == base })
}

// The GC must be free to run while C holds only handles (no Go pointers).
func TestGCWhileRegistered(t *testing.T) {
	rt := newRT(t, "")
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), echo, nil)
	for i := 0; i < 5; i++ {
		runtime.GC()
		if out := mustDispatch(t, rt, "echo", `{"text":"gc"}`, ""); out != `{"text":"gc"}` {
			t.Fatal(out)
		}
	}
}

// The built-in terminal (when this build has it): a foreground command, and a
// background one whose completion arrives through the event handler.
func TestBuiltinTerminalAndEvents(t *testing.T) {
	rt, err := New(`{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}`)
	if errors.Is(err, ErrUnsupported) {
		t.Skip("built-in terminal not in this build:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	events := make(chan string, 16)
	if err := rt.SetEventHandler(func(ev string) {
		select {
		case events <- ev:
		default:
		}
	}); err != nil {
		t.Fatal(err)
	}
	defs, err := rt.Definitions("")
	if err != nil {
		t.Fatal(err)
	}
	contains(t, defs, `"terminal"`)
	out := mustDispatch(t, rt, "terminal", `{"command":"echo hello-go"}`, `{"task_id":"go-test"}`)
	contains(t, out, "hello-go")
	out = mustDispatch(t, rt, "terminal",
		`{"command":"echo bg-done","background":true,"notify_on_complete":true}`, `{"task_id":"go-test"}`)
	contains(t, out, "proc_")
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if strings.Contains(ev, `"process.completed"`) {
				contains(t, ev, "bg-done")
				if err := rt.CleanupTask("go-test"); err != nil {
					t.Fatal(err)
				}
				return
			}
		case <-deadline:
			t.Fatal("no process.completed event")
		}
	}
}

// Approvals with the built-in terminal: the handler (in its own goroutine)
// approves one command and denies another; block-tier commands never reach
// it; replacing and removing handlers releases their handles.
func TestApprovalHandler(t *testing.T) {
	rt, err := New(`{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}`)
	if errors.Is(err, ErrUnsupported) {
		t.Skip("built-in terminal not in this build:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	base := atomic.LoadInt64(&liveHandles)
	var mu sync.Mutex
	var asked []string
	err = rt.SetApprovalHandler(func(req string) (string, error) {
		mu.Lock()
		asked = append(asked, req)
		mu.Unlock()
		time.Sleep(5 * time.Millisecond) // a human thinking
		if strings.Contains(req, "ht-go-deny") {
			return Deny, nil
		}
		return ApproveOnce, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ok := mustDispatch(t, rt, "terminal", `{"command":"rm -rf /tmp/ht-go-allow-nonexistent && echo approved-ran"}`, "")
	contains(t, ok, "approved-ran")
	denied := mustDispatch(t, rt, "terminal", `{"command":"rm -rf /tmp/ht-go-deny-nonexistent && echo denied-ran"}`, "")
	if strings.Contains(denied, "denied-ran") {
		t.Fatalf("denied command ran: %s", denied)
	}
	contains(t, denied, `"error"`)
	contains(t, mustDispatch(t, rt, "terminal", `{"command":"rm -rf /"}`, ""), `"error"`)
	mu.Lock()
	if len(asked) != 2 {
		t.Fatalf("asked %d times: %v", len(asked), asked)
	}
	contains(t, asked[0], `"verdict":"ask"`)
	mu.Unlock()
	// An erroring handler denies; replacing releases the old handle.
	if err := rt.SetApprovalHandler(func(string) (string, error) { return "", errors.New("ui crashed") }); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replaced approval handle", func() bool { return atomic.LoadInt64(&liveHandles)-base == 1 })
	out := mustDispatch(t, rt, "terminal", `{"command":"rm -rf /tmp/ht-go-x-nonexistent && echo ran-anyway"}`, "")
	if strings.Contains(out, "ran-anyway") {
		t.Fatalf("ran despite a failing handler: %s", out)
	}
	if err := rt.SetApprovalReviewer(func(string) (string, error) { return ReviewEscalate, nil }); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetApprovalHandler(nil); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetApprovalReviewer(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "removed approval handles", func() bool { return atomic.LoadInt64(&liveHandles) == base })
	list, err := rt.Allowlist()
	if err != nil || !strings.HasPrefix(list, "[") {
		t.Fatal(list, err)
	}
	if err := rt.SetAllowlist("[]"); err != nil {
		t.Fatal(err)
	}
	if err := rt.SetAllowlist("{"); !errors.Is(err, ErrInvalidJSON) {
		t.Fatal(err)
	}
	if err := rt.ClearSessionApprovals("session-1"); err != nil {
		t.Fatal(err)
	}
	rt.Close()
}

// A Reply dropped without an answer is answered (with an error) by its finalizer.
func TestDroppedReplyIsAnswered(t *testing.T) {
	rt := newRT(t, `{"dispatch":{"timeout":60}}`)
	if err := rt.RegisterToolAsync(ToolSpec("drops", "go", "drops the reply", "", false), func(Call, *Reply) {}, nil); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
				runtime.GC()
			}
		}
	}()
	defer close(stop)
	start := time.Now()
	contains(t, mustDispatch(t, rt, "drops", "{}", ""), "without answering")
	if time.Since(start) > 30*time.Second {
		t.Fatal("the dropped call waited for its timeout")
	}
}

// Close while other goroutines keep calling: every call either succeeds or
// fails with ErrClosed; nothing crashes, and every handle is released.
func TestCloseWhileCalling(t *testing.T) {
	base := atomic.LoadInt64(&liveHandles)
	rt, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	mustRegister(t, rt, ToolSpec("echo", "go", "Echo", echoParams, true), echo, nil)
	var wg sync.WaitGroup
	var okCalls, closedCalls int64
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; ; j++ {
				var err error
				if j%2 == 0 {
					_, err = rt.Dispatch("echo", `{"text":"x"}`, "")
				} else {
					var ac *AsyncCall
					if ac, err = rt.DispatchAsync("echo", `{"text":"y"}`, ""); err == nil {
						r := <-ac.Done
						if r.Err != nil && !errors.Is(r.Err, ErrCancelled) {
							t.Error(r.Err)
						}
					}
				}
				if errors.Is(err, ErrClosed) {
					atomic.AddInt64(&closedCalls, 1)
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				atomic.AddInt64(&okCalls, 1)
			}
		}(i)
	}
	time.Sleep(50 * time.Millisecond)
	rt.Close()
	wg.Wait()
	if okCalls == 0 || closedCalls != 8 {
		t.Fatalf("ok=%d closed=%d", okCalls, closedCalls)
	}
	if got := atomic.LoadInt64(&liveHandles); got != base {
		t.Fatalf("live handles %d, want %d", got, base)
	}
}

// Terminal helpers: typing into a background PTY command, per-task cwd and env.
func TestTerminalProcessWriteCwdEnv(t *testing.T) {
	plain := newRT(t, "")
	if err := plain.SetTaskCwd("t", "/tmp"); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want unsupported, got %v", err)
	}
	rt, err := New(`{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}`)
	if errors.Is(err, ErrUnsupported) {
		t.Skip("built-in terminal not in this build:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	ctx := `{"task_id":"go-t"}`
	if err := rt.SetTaskCwd("go-t", "/tmp"); err != nil {
		t.Fatal(err)
	}
	contains(t, mustDispatch(t, rt, "terminal", `{"command":"pwd"}`, ctx), "/tmp")
	if err := rt.SetTaskEnv("go-t", `{"HT_GO_VAR":"forty-two"}`); err != nil {
		t.Fatal(err)
	}
	contains(t, mustDispatch(t, rt, "terminal", `{"command":"echo v=$HT_GO_VAR"}`, ctx), "v=forty-two")
	if err := rt.SetTaskEnv("go-t", "{"); !errors.Is(err, ErrInvalidJSON) {
		t.Fatalf("want invalid json, got %v", err)
	}
	// The local backend has no network of its own to set.
	if err := rt.SetTaskNetwork("go-t", `"on"`); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("want unsupported, got %v", err)
	}

	events := make(chan string, 64)
	_ = rt.SetEventHandler(func(ev string) {
		select {
		case events <- ev:
		default:
		}
	})
	out := mustDispatch(t, rt, "terminal",
		`{"command":"read line; echo got:$line","background":true,"pty":true,"notify_on_complete":true}`, ctx)
	var started struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &started); err != nil || !strings.HasPrefix(started.SessionID, "proc_") {
		t.Fatalf("start: %s %v", out, err)
	}
	var n int
	for i := 0; i < 100; i++ { // the PTY may not be ready at once
		n, err = rt.ProcessWrite(started.SessionID, []byte("hello\r"))
		if !errors.Is(err, ErrNotFound) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil || n != 6 {
		t.Fatalf("write: %d %v", n, err)
	}
	deadline := time.After(10 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-events:
			done = strings.Contains(ev, "process.completed") && strings.Contains(ev, "got:hello")
		case <-deadline:
			t.Fatal("no completion with the typed line")
		}
	}
	if _, err := rt.ProcessWrite("proc_nope", []byte("x")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("want not found, got %v", err)
	}
	_ = rt.CleanupTask("go-t")
}

// Agent-loop tools go to the interceptor (validated, without hooks).
func TestInterceptor(t *testing.T) {
	rt := newRT(t, "")
	spec := `{"name":"todo_list","toolset":"loop","agent_loop":true,"schema":{"description":"The loop's todo list",` +
		`"parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}}`
	mustRegister(t, rt, spec, func(Call) (string, error) { return "", errors.New("must not run") }, nil)
	_ = rt.AddHook("pre_tool_call", func(string) (string, error) { return `{"action":"block","message":"hooked"}`, nil })
	contains(t, mustDispatch(t, rt, "todo_list", `{"n":1}`, ""), "must be handled by the agent loop")
	base := atomic.LoadInt64(&liveHandles)
	if err := rt.SetInterceptor(func(c Call) (string, error) {
		return fmt.Sprintf(`{"loop":%s,"args":%s}`, jsonQuote(c.ToolName), c.Args), nil
	}); err != nil {
		t.Fatal(err)
	}
	if out := mustDispatch(t, rt, "todo_list", `{"n":"2"}`, ""); out != `{"loop":"todo_list","args":{"n":2}}` {
		t.Fatal(out)
	}
	contains(t, mustDispatch(t, rt, "todo_list", `{}`, ""), "missing required property 'n'")
	if err := rt.SetInterceptorAsync(func(c Call, r *Reply) {
		go r.Respond(`"async loop"`)
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "replaced interceptor handle", func() bool { return atomic.LoadInt64(&liveHandles)-base == 1 })
	if out := mustDispatch(t, rt, "todo_list", `{"n":3}`, ""); out != `"async loop"` {
		t.Fatal(out)
	}
	if err := rt.SetInterceptor(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "removed interceptor handle", func() bool { return atomic.LoadInt64(&liveHandles) == base })
	contains(t, mustDispatch(t, rt, "todo_list", `{"n":1}`, ""), "must be handled by the agent loop")
}

// The built-in file toolset (when this build has it): write a file and read
// it back as numbered lines, with the original's argument JSON.
func TestBuiltinFileTools(t *testing.T) {
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{
		"builtin_toolsets": []string{"file"},
		"terminal":         map[string]any{"cwd": dir},
		"data_dir":         dir + "/data",
	})
	rt, err := New(string(cfg))
	if errors.Is(err, ErrUnsupported) || (err != nil && strings.Contains(err.Error(), "unknown toolset")) {
		t.Skip("built-in file toolset not in this build:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	contains(t, mustDispatch(t, rt, "write_file", `{"path":"go.txt","content":"hello\ngo\n"}`, ""), `"bytes_written":9`)
	contains(t, mustDispatch(t, rt, "read_file", `{"path":"go.txt","offset":2}`, ""), `"content":"2|go"`)
}

// Issue 29: a ctx-first call (Call), its options, and cancellation through
// ctx.
func TestCallIsContextFirst(t *testing.T) {
	rt, err := New(`{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}`)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	out, err := rt.Call(context.Background(), "terminal", `{"command":"cd /tmp && echo hi"}`, WithTask("a"))
	if err != nil || !strings.Contains(out, "hi") {
		t.Fatalf("%v %s", err, out)
	}
	// The task's state: task a is in /tmp now, task b is not.
	out, _ = rt.Call(context.Background(), "terminal", `{"command":"pwd"}`, WithTask("a"))
	if !strings.Contains(out, "/tmp") {
		t.Fatalf("task a: %s", out)
	}
	out, _ = rt.Call(context.Background(), "terminal", `{"command":"pwd"}`, WithCallContext(`{"task_id":"b"}`))
	if strings.Contains(out, `"/tmp`) {
		t.Fatalf("task b: %s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = rt.Call(ctx, "terminal", `{"command":"sleep 30"}`)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("not cancelled by ctx: %v after %v", err, time.Since(start))
	}
}
