package hermestools

// Exported trampolines called from shims.c. A file with //export may only
// declare things in its preamble, so the C side lives in shims.c.
// Every export is short: it copies borrowed C data at once, then either hands
// off to a goroutine (handlers, hooks) or runs a quick callback under recover.
// No panic ever unwinds into C.

/*
#include "shims.h"
*/
import "C"

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync/atomic"
	"unsafe"
)

//export htgoToolHandler
func htgoToolHandler(handle C.uintptr_t, call C.uintptr_t) {
	reply := &Reply{call: uintptr(call)}
	var e *toolEntry
	func() {
		defer func() {
			if p := recover(); p != nil {
				e = nil
			}
		}()
		e, _ = cgo.Handle(handle).Value().(*toolEntry)
	}()
	if e == nil {
		reply.answer(true, "hermes-tools Go binding: unknown handler")
		return
	}
	var n C.size_t
	c := Call{call: uintptr(call)}
	p := C.htgo_call_tool_name(call, &n)
	c.ToolName = borrowed(p, n)
	p = C.htgo_call_args(call, &n)
	c.Args = borrowed(p, n)
	p = C.htgo_call_context(call, &n)
	c.Context = borrowed(p, n)
	// Ctx is done when the library stops waiting (timeout, Runtime.Cancel,
	// Close) or when the call is answered.
	ctx, cancel := context.WithCancel(context.Background())
	c.Ctx = ctx
	reply.cancel = cancel
	h := newHandle(cancel)
	if Status(C.htgo_call_on_cancel(call, C.uintptr_t(h))) != StatusOK {
		dropHandle(h) // refused: neither callback runs
		cancel()      // the call is no longer waiting
	}
	if e.async != nil {
		// Backstop: a Reply dropped without an answer answers with an error
		// when collected, so the dispatch does not wait for its timeout.
		runtime.SetFinalizer(reply, func(r *Reply) {
			r.answer(true, "the host dropped this call without answering")
		})
	}
	go runTool(e, c, reply)
}

func runTool(e *toolEntry, c Call, reply *Reply) {
	defer func() {
		if p := recover(); p != nil {
			reply.answer(true, fmt.Sprintf("panic in tool handler: %v", p))
		}
	}()
	if e.sync != nil {
		res, err := e.sync(c)
		if err != nil {
			reply.Fail(err)
		} else {
			reply.Respond(res)
		}
		return
	}
	e.async(c, reply)
}

//export htgoCheck
func htgoCheck(handle C.uintptr_t) (ok C.bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	e := cgo.Handle(handle).Value().(*toolEntry)
	if e.check == nil {
		return true
	}
	return C.bool(e.check())
}

//export htgoFree
func htgoFree(handle C.uintptr_t) {
	dropHandle(cgo.Handle(handle))
}

//export htgoCancel
func htgoCancel(handle C.uintptr_t) {
	defer func() { _ = recover() }()
	if f, ok := cgo.Handle(handle).Value().(context.CancelFunc); ok {
		f()
	}
}

//export htgoDone
func htgoDone(handle C.uintptr_t, status C.int32_t, result *C.char, n C.size_t) {
	defer func() {
		if recover() != nil {
			atomic.AddInt64(&badFrees, 1)
		}
	}()
	h := cgo.Handle(handle)
	e := h.Value().(*asyncEntry)
	dropHandle(h) // a completion runs exactly once, so the delete does too
	r := Result{Text: borrowed(result, n)}
	if Status(status) != StatusOK {
		r.Err = &Error{Status: Status(status), Message: r.Text}
	}
	if e.ch != nil {
		e.ch <- r // buffered (1): never blocks
	}
	if e.fn != nil {
		e.fn(r)
	}
}

//export htgoHook
func htgoHook(handle C.uintptr_t, hook C.uintptr_t) {
	var n C.size_t
	p := C.htgo_hook_event(hook, &n)
	ev := borrowed(p, n)
	var e *hookEntry
	func() {
		defer func() { _ = recover() }()
		e, _ = cgo.Handle(handle).Value().(*hookEntry)
	}()
	if e == nil {
		C.htgo_hook_respond(hook, nil, 0)
		return
	}
	go runHook(e, ev, uintptr(hook))
}

func runHook(e *hookEntry, ev string, hook uintptr) {
	answered := false
	respond := func(decision string) {
		if answered {
			return
		}
		answered = true
		var a cstrs
		defer a.free()
		p, n := a.str(decision)
		C.htgo_hook_respond(C.uintptr_t(hook), p, n)
	}
	fail := func(msg string) {
		if e.blocksOnError {
			respond(fmt.Sprintf(`{"action":"block","message":%s}`, jsonQuote("hook failed: "+msg)))
		} else {
			respond("")
		}
	}
	defer func() {
		if p := recover(); p != nil {
			fail(fmt.Sprint(p))
		}
	}()
	decision, err := e.fn(ev)
	if err != nil {
		fail(err.Error())
		return
	}
	respond(decision)
}

//export htgoEvent
func htgoEvent(handle C.uintptr_t, json *C.char, n C.size_t) {
	defer func() { _ = recover() }()
	ev := borrowed(json, n)
	cgo.Handle(handle).Value().(func(string))(ev)
}

//export htgoLog
func htgoLog(handle C.uintptr_t, level C.int32_t, msg *C.char, n C.size_t) {
	defer func() { _ = recover() }()
	m := borrowed(msg, n)
	cgo.Handle(handle).Value().(func(int, string))(int(level), m)
}

//export htgoEnvSpawn
func htgoEnvSpawn(handle C.uintptr_t, exec C.uintptr_t) {
	var n C.size_t
	req := C.GoStringN(C.htgo_exec_request(exec, &n), C.int(n))
	var r struct {
		ID      uint64   `json:"id"`
		Task    string   `json:"task"`
		Argv    []string `json:"argv"`
		Capture bool     `json:"capture"`
		Stdin   bool     `json:"stdin"`
		Mark    *string  `json:"mark"`
	}
	e := &Exec{ptr: uintptr(exec)}
	if err := json.Unmarshal([]byte(req), &r); err != nil || len(r.Argv) == 0 {
		e.Finish(255, "host environment: unreadable request")
		return
	}
	e.ID, e.Task, e.Argv, e.Capture = r.ID, r.Task, r.Argv, r.Capture
	if r.Mark != nil {
		e.Mark = *r.Mark
	}
	if r.Stdin {
		p := C.htgo_exec_stdin(exec, &n)
		e.Stdin = C.GoBytes(unsafe.Pointer(p), C.int(n))
	}
	var p Provider
	func() {
		defer func() { _ = recover() }()
		p, _ = cgo.Handle(handle).Value().(Provider)
	}()
	if p == nil {
		e.Finish(255, "host environment is gone")
		return
	}
	go func() {
		code, err := 255, error(nil)
		func() {
			defer func() {
				if x := recover(); x != nil {
					err = fmt.Errorf("panic: %v", x)
				}
			}()
			code, err = p.Run(e)
		}()
		if err != nil {
			e.Finish(255, err.Error())
			return
		}
		e.Finish(code, "")
	}()
}

//export htgoEnvKill
func htgoEnvKill(handle C.uintptr_t, id C.uint64_t, signal C.int32_t) {
	defer func() { _ = recover() }()
	if p, ok := cgo.Handle(handle).Value().(Provider); ok {
		p.Kill(uint64(id), int(signal))
	}
}

//export htgoEnvCleanup
func htgoEnvCleanup(handle C.uintptr_t, task *C.char, n C.size_t, has C.bool) {
	defer func() { _ = recover() }()
	c, ok := cgo.Handle(handle).Value().(Cleaner)
	if !ok {
		return
	}
	if bool(has) {
		t := C.GoStringN(task, C.int(n))
		c.Cleanup(&t)
	} else {
		c.Cleanup(nil)
	}
}
