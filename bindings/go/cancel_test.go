package hermestools

// Cancellation reaches Go handlers through Call.Ctx, and DispatchContext
// cancels a call when its context ends (issue 11: a Go handler kept sleeping
// after its timeout).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// waiter registers a tool whose handler waits on its Call.Ctx (up to 20 s)
// and reports how long it waited and what its late answer got.
func waiter(t *testing.T, rt *Runtime) (woke chan time.Duration, answered chan Status) {
	t.Helper()
	woke = make(chan time.Duration, 1)
	answered = make(chan Status, 1)
	err := rt.RegisterToolAsync(ToolSpec("waits", "go", "waits for cancellation", "", false), func(c Call, r *Reply) {
		go func() {
			t0 := time.Now()
			select {
			case <-c.Ctx.Done():
			case <-time.After(20 * time.Second):
			}
			woke <- time.Since(t0)
			answered <- r.Respond("too late")
		}()
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return woke, answered
}

func TestHandlerContextEndsAtTimeout(t *testing.T) {
	rt := newRT(t, `{"dispatch":{"timeout":0.1}}`)
	woke, answered := waiter(t, rt)
	out := mustDispatch(t, rt, "waits", "{}", "")
	contains(t, out, `"status":"timeout"`)
	if d := <-woke; d > 2*time.Second {
		t.Fatalf("handler woke %v after the timeout", d)
	}
	if st := <-answered; st != StatusTimeout {
		t.Fatalf("late answer: %v, want timeout", st)
	}
}

func TestDispatchContextCancelsTheCall(t *testing.T) {
	rt := newRT(t, `{"dispatch":{"timeout":30}}`)
	woke, answered := waiter(t, rt)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	text, err := rt.DispatchContext(ctx, "waits", "{}", "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if !strings.Contains(text, `"cancelled"`) {
		t.Fatalf("text = %s", text)
	}
	if time.Since(t0) > 3*time.Second {
		t.Fatalf("DispatchContext took %v", time.Since(t0))
	}
	if d := <-woke; d > 2*time.Second {
		t.Fatalf("handler woke %v after the cancel", d)
	}
	if st := <-answered; st != StatusCancelled {
		t.Fatalf("late answer: %v, want cancelled", st)
	}
	// An already-done context does not start the call.
	if _, err := rt.DispatchContext(ctx, "waits", "{}", ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	// A context that stays live returns the result like Dispatch.
	if err := rt.RegisterTool(ToolSpec("echo2", "go", "echo", "", false), echo, nil); err != nil {
		t.Fatal(err)
	}
	text, err = rt.DispatchContext(context.Background(), "echo2", `{}`, "")
	if err != nil || text != "{}" {
		t.Fatalf("text=%q err=%v", text, err)
	}
}

func TestAnsweredCallEndsItsContext(t *testing.T) {
	rt := newRT(t, "")
	got := make(chan context.Context, 1)
	mustRegister(t, rt, ToolSpec("quick", "go", "answers", "", false), func(c Call) (string, error) {
		if c.Ctx.Err() != nil {
			return "", errors.New("context done before the answer")
		}
		got <- c.Ctx
		return "ok", nil
	}, nil)
	if out := mustDispatch(t, rt, "quick", "{}", ""); out != "ok" {
		t.Fatal(out)
	}
	ctx := <-got
	select {
	case <-ctx.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("the context of an answered call stays live")
	}
}

func TestProgressReachesTheEventHandler(t *testing.T) {
	rt := newRT(t, "")
	events := make(chan string, 8)
	if err := rt.SetEventHandler(func(e string) {
		if strings.Contains(e, `"tool.progress"`) {
			events <- e
		}
	}); err != nil {
		t.Fatal(err)
	}
	mustRegister(t, rt, ToolSpec("long", "go", "reports progress", "", false), func(c Call) (string, error) {
		if st := c.Progress(1, 4, "a quarter"); st != StatusOK {
			return "", fmt.Errorf("progress: %v", st)
		}
		return "done", nil
	}, nil)
	if out := mustDispatch(t, rt, "long", "{}", `{"tool_call_id":"call_1"}`); out != "done" {
		t.Fatal(out)
	}
	select {
	case e := <-events:
		for _, want := range []string{`"tool_call_id":"call_1"`, `"progress":1.0`, `"total":4.0`, `"message":"a quarter"`} {
			if !strings.Contains(e, want) {
				t.Fatalf("%s lacks %s", e, want)
			}
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no tool.progress event")
	}
}
