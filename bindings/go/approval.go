package hermestools

/*
#include "shims.h"
*/
import "C"

import (
	"runtime/cgo"
	"sync/atomic"
)

// Approval decisions for an ApprovalHandler (approvals of commands such as
// terminal calls whose analysis says "ask").
const (
	ApproveOnce    = `{"choice":"once"}`
	ApproveSession = `{"choice":"session"}`
	ApproveAlways  = `{"choice":"always"}`
	Deny           = `{"choice":"deny"}`
)

// Decisions for a smart reviewer (SetApprovalReviewer).
const (
	ReviewApprove  = `{"decision":"approve"}`
	ReviewDeny     = `{"decision":"deny"}`
	ReviewEscalate = `{"decision":"escalate"}`
)

// ApprovalHandler decides on an approval request (JSON: kind, verdict, rules,
// reasons, commands, untrusted_command_text, suggested_scope, choices,
// session_id, task_id, tool_call_id, timeout_s) and returns the decision JSON
// (ApproveOnce, Deny, ... or {"choice":"session","scope":[...]}). It runs in its
// own goroutine, so it may wait for a human; the command waits up to
// approvals.timeout seconds. An error or panic denies (a reviewer escalates).
type ApprovalHandler func(requestJSON string) (decision string, err error)

type approvalEntry struct {
	fn       ApprovalHandler
	reviewer bool
}

// SetApprovalHandler sets the handler asked when a command needs approval
// (nil removes it; then "ask" commands are denied unless
// approvals.non_interactive is "allow").
func (r *Runtime) SetApprovalHandler(handler ApprovalHandler) error {
	return r.setApproval(false, handler)
}

// SetApprovalReviewer sets the smart reviewer (approvals.mode "smart"), asked
// first; it answers ReviewApprove, ReviewDeny or ReviewEscalate and can never
// allow a block-tier command. nil removes it.
func (r *Runtime) SetApprovalReviewer(reviewer ApprovalHandler) error {
	return r.setApproval(true, reviewer)
}

func (r *Runtime) setApproval(reviewer bool, fn ApprovalHandler) error {
	var v any
	if fn != nil {
		v = &approvalEntry{fn: fn, reviewer: reviewer}
	}
	return r.setCallback(v, func(rt *C.ht_runtime, h C.uintptr_t, ce **C.ht_error) C.ht_status {
		return C.htgo_set_approval_handler(rt, C.bool(reviewer), h, ce)
	})
}

// Allowlist returns the persistent allowlist (JSON array of
// {"rule","argv_prefix","exact","added_at","note"}).
func (r *Runtime) Allowlist() (string, error) {
	return r.textOut(func(rt *C.ht_runtime, out **C.char, n *C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_allowlist_json(rt, out, n, ce)
	})
}

// SetAllowlist replaces the allowlist (validated; saved when
// approvals.allowlist_path is configured).
func (r *Runtime) SetAllowlist(allowlistJSON string) error {
	return r.withString(allowlistJSON, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_allowlist_set(rt, p, n, ce)
	})
}

// ClearSessionApprovals forgets the "session" approvals given in sessionID.
func (r *Runtime) ClearSessionApprovals(sessionID string) error {
	return r.withString(sessionID, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_clear_session_approvals(rt, p, n, ce)
	})
}

//export htgoApproval
func htgoApproval(handle C.uintptr_t, approval C.uintptr_t) {
	var n C.size_t
	p := C.htgo_approval_request(approval, &n)
	req := borrowed(p, n)
	var e *approvalEntry
	var o *oauthEntry
	func() {
		defer func() { _ = recover() }()
		switch v := cgo.Handle(handle).Value().(type) {
		case *approvalEntry:
			e = v
		case *oauthEntry:
			o = v
		}
	}()
	if o != nil {
		go runOAuth(o, req, uintptr(approval))
		return
	}
	if e == nil {
		respondApproval(uintptr(approval), Deny)
		return
	}
	go runApproval(e, req, uintptr(approval))
}

func runApproval(e *approvalEntry, req string, approval uintptr) {
	var answered int32
	respond := func(decision string) {
		if atomic.CompareAndSwapInt32(&answered, 0, 1) {
			respondApproval(approval, decision)
		}
	}
	fallback := Deny
	if e.reviewer {
		fallback = ReviewEscalate
	}
	defer func() {
		if p := recover(); p != nil {
			respond(fallback)
		}
	}()
	decision, err := e.fn(req)
	if err != nil || decision == "" {
		respond(fallback)
		return
	}
	respond(decision)
}

func respondApproval(approval uintptr, decision string) {
	var a cstrs
	defer a.free()
	p, n := a.str(decision)
	// Timeout / NotFound (a late or second answer) are harmless; an
	// unreadable decision is treated as a deny by the library.
	C.htgo_approval_respond(C.uintptr_t(approval), p, n)
}
