package hermestools

/*
#include "shims.h"
*/
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MCPServerStatus is one server's entry of Runtime.MCPStatus
// (docs/json-shapes.md, ht_runtime_mcp_status).
type MCPServerStatus struct {
	// State: "connecting", "ready", "disconnected", "failed", "disabled" or "closed".
	State     string   `json:"state"`
	Transport string   `json:"transport"` // "stdio" or "http"
	Toolset   string   `json:"toolset"`   // "mcp-<server>"
	Tools     []string `json:"tools"`     // registered names, "mcp__<server>__<tool>"
	// SkippedTools were not registered (another toolset holds the name);
	// HeldTools changed since first listed and wait for AcceptMCPTools.
	SkippedTools    []string        `json:"skipped_tools"`
	HeldTools       []string        `json:"held_tools"`
	PID             *int            `json:"pid"` // stdio servers' process id
	Connects        int             `json:"connects"`
	Failures        int             `json:"failures"`
	RetryInMS       *int64          `json:"retry_in_ms"`
	LastError       *string         `json:"last_error"` // why the last attempt failed
	ProtocolVersion *string         `json:"protocol_version"`
	ServerInfo      json.RawMessage `json:"server_info"`
}

// MCPStatusJSON returns the state of every MCP server as the library's JSON
// object keyed by server name ("{}" without servers). It never waits for a server.
func (r *Runtime) MCPStatusJSON() (string, error) {
	return r.textOut(func(rt *C.ht_runtime, out **C.char, n *C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_mcp_status(rt, out, n, ce)
	})
}

// MCPStatus returns the state of every MCP server (configured or added),
// keyed by server name. It never waits for a server (one still connecting is
// "connecting"); a server that failed to start is "failed" with LastError.
func (r *Runtime) MCPStatus() (map[string]MCPServerStatus, error) {
	text, err := r.MCPStatusJSON()
	if err != nil {
		return nil, err
	}
	out := map[string]MCPServerStatus{}
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return nil, fmt.Errorf("hermes-tools: unreadable MCP status: %w", err)
	}
	return out, nil
}

// AddMCPServer starts an MCP server at run time. configJSON is one
// mcp_servers entry ({"command","args","env",...} for stdio,
// {"url","headers","oauth",...} for HTTP; docs/json-shapes.md). It blocks for
// the server's first connection attempt (at most twice its connect_timeout):
// its tools, named mcp__<name>__<tool>, are registered when it returns, or the
// server keeps retrying in the background (see MCPStatus); either way nil.
// ErrConflict for a name in use, ErrInvalidJSON or ErrInvalidArgument for a
// bad config. Do not call it from a tool handler of the same runtime.
func (r *Runtime) AddMCPServer(name, configJSON string) error {
	return r.withTwoStrings(name, configJSON, func(rt *C.ht_runtime, np *C.char, nn C.size_t, cp *C.char, cn C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_add_mcp_server(rt, np, nn, cp, cn, ce)
	})
}

// RemoveMCPServer stops an MCP server (its process tree: TERM, then KILL after
// 0.5 s) and deregisters its tools; calls in flight to it end with an error.
// ErrNotFound for an unknown name.
func (r *Runtime) RemoveMCPServer(name string) error {
	return r.withString(name, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_remove_mcp_server(rt, p, n, ce)
	})
}

// AcceptMCPTools accepts the changed definitions of a server's held tools
// (MCPServerStatus.HeldTools) so they are listed again. ErrNotFound for an
// unknown server, ErrTimeout when the listing takes longer (the tools then
// come back in the background).
func (r *Runtime) AcceptMCPTools(name string) error {
	return r.withString(name, func(rt *C.ht_runtime, p *C.char, n C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_mcp_accept_tools(rt, p, n, ce)
	})
}

// --- serving -------------------------------------------------------------

// MCPServer is a server started by Runtime.ServeMCP. Close it when done; it
// may outlive its Runtime (closing the runtime stops the server, the handle
// stays valid until Close). Safe for concurrent use.
type MCPServer struct {
	mu      sync.RWMutex
	srv     *C.ht_mcp_server
	address string
}

// MCPAddress is ht_mcp_server_address's JSON.
type MCPAddress struct {
	Transport string `json:"transport"` // "http" or "stdio"
	URL       string `json:"url"`
	Auth      string `json:"auth"`       // "bearer" or "none"
	TokenFile string `json:"token_file"` // the generated bearer token's file ("" when the host gave one)
}

// ServeMCP serves this runtime's enabled tools (host tools included) as an
// MCP server on a library thread. optionsJSON: "" or "{}" for stdio on
// descriptors 0 and 1; `{"transport":"http"}` for streamable HTTP on a free
// loopback port with a generated bearer token (MCPServer.Address,
// MCPServer.Token). Other options (address, token, auth, limits, approvals)
// are documented in include/hermes_tools.h. ErrInvalidJSON or
// ErrInvalidArgument for bad options.
func (r *Runtime) ServeMCP(optionsJSON string) (*MCPServer, error) {
	rt, err := r.acquire()
	if err != nil {
		return nil, err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	p, n := a.str(optionsJSON)
	var srv *C.ht_mcp_server
	var ce *C.ht_error
	if err := takeError(C.ht_runtime_serve_mcp(rt, p, n, &srv, &ce), ce); err != nil {
		return nil, err
	}
	s := &MCPServer{srv: srv}
	if addr := C.ht_mcp_server_address(srv); addr != nil {
		s.address = C.GoString(addr)
	}
	return s, nil
}

// AddressJSON is where and how to reach the server, as the library's JSON.
func (s *MCPServer) AddressJSON() string { return s.address }

// Address is AddressJSON parsed.
func (s *MCPServer) Address() MCPAddress {
	var a MCPAddress
	_ = json.Unmarshal([]byte(s.address), &a)
	return a
}

// Token reads the generated bearer token ("" when the server has no token file).
func (s *MCPServer) Token() (string, error) {
	f := s.Address().TokenFile
	if f == "" {
		return "", nil
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]), nil
}

// Wait waits up to timeout (0: just look; negative: for ever) for the
// server to end: true when it ended (or was closed), false while it still
// serves; an error when it ended with one.
func (s *MCPServer) Wait(timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		step := 100 * time.Millisecond
		if timeout >= 0 {
			if left := time.Until(deadline); left < step {
				step = left
			}
			if step < 0 {
				step = 0
			}
		}
		s.mu.RLock()
		if s.srv == nil {
			s.mu.RUnlock()
			return true, nil
		}
		var ce *C.ht_error
		st := C.ht_mcp_server_wait(s.srv, C.uint64_t(step/time.Millisecond), &ce)
		s.mu.RUnlock()
		if Status(st) != StatusTimeout {
			return true, takeError(st, ce)
		}
		C.ht_error_free(ce)
		if timeout >= 0 && !time.Now().Before(deadline) {
			return false, nil
		}
	}
}

// Close stops serving (calls in flight are cancelled) and frees the handle,
// waiting up to 5 s for the server's thread. Idempotent. Not from a tool call
// that this same server is serving.
func (s *MCPServer) Close() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		C.ht_mcp_server_free(srv)
	}
}

// --- OAuth -----------------------------------------------------------------

// OAuthRequest is what the OAuth handler is asked (ht_runtime_set_oauth_handler).
type OAuthRequest struct {
	// Kind: "oauth_authorize"; for servers with oauth.token_store "host" also
	// "oauth_tokens_load", "oauth_tokens_save" and "oauth_tokens_clear".
	Kind             string   `json:"kind"`
	Server           string   `json:"server"`
	AuthorizationURL string   `json:"authorization_url"` // show it to the user (open a browser)
	RedirectURI      string   `json:"redirect_uri"`      // where the browser comes back to
	Scopes           []string `json:"scopes"`
	StepUp           bool     `json:"step_up"`   // a step-up to more scopes (403 insufficient_scope)
	TimeoutS         float64  `json:"timeout_s"` // the sign-in gives up after this
	// Tokens (oauth_tokens_save only) is secret: store it as it is, never log it.
	Tokens json.RawMessage `json:"tokens"`
	// JSON is the request as the library sent it.
	JSON string `json:"-"`
}

// OAuthHandler does the browser step of MCP servers' OAuth 2.1 sign-in and,
// for servers with oauth.token_store "host", keeps their tokens. It runs in
// its own goroutine, so it may wait for the user. What it returns, by Kind:
//   - "oauth_authorize": the full URL the authorization server redirected
//     the browser to (a value starting with '{' is sent as the answer JSON
//     as it is, e.g. {"code":"..."}).
//   - "oauth_tokens_load": the tokens JSON saved before, or "" for none.
//   - "oauth_tokens_save", "oauth_tokens_clear": "" once done.
//
// An error (or a panic) gives the sign-in up with the error's text.
type OAuthHandler func(req OAuthRequest) (string, error)

type oauthEntry struct{ fn OAuthHandler }

// SetOAuthHandler sets the handler of MCP servers' OAuth sign-in (the
// library does discovery, client registration, PKCE, token requests and
// refresh; the host only does the browser step). Set it before AddMCPServer.
// nil removes it: a server that needs authorization then fails (MCPStatus).
// The previous handler is released when replaced or when the runtime closes.
func (r *Runtime) SetOAuthHandler(handler OAuthHandler) error {
	var v any
	if handler != nil {
		v = &oauthEntry{fn: handler}
	}
	return r.setCallback(v, func(rt *C.ht_runtime, h C.uintptr_t, ce **C.ht_error) C.ht_status {
		return C.htgo_set_oauth_handler(rt, h, ce)
	})
}

func oauthErrorAnswer(reason string) string {
	b, _ := json.Marshal(map[string]string{"error": reason})
	return string(b)
}

// oauthAnswer turns a handler's return value into the library's answer JSON.
func oauthAnswer(kind, value string) (string, error) {
	switch kind {
	case "oauth_authorize":
		if strings.HasPrefix(strings.TrimSpace(value), "{") {
			return value, nil
		}
		if value == "" {
			return "", errors.New("the OAuth handler gave no redirect URL")
		}
		b, err := json.Marshal(map[string]string{"redirect_url": value})
		return string(b), err
	case "oauth_tokens_load":
		if strings.TrimSpace(value) == "" {
			return `{"tokens":null}`, nil
		}
		if !json.Valid([]byte(value)) {
			return "", errors.New("the OAuth handler loaded tokens that are not JSON")
		}
		return `{"tokens":` + value + `}`, nil
	default:
		if strings.HasPrefix(strings.TrimSpace(value), "{") {
			return value, nil
		}
		return "{}", nil
	}
}

func runOAuth(e *oauthEntry, reqJSON string, approval uintptr) {
	var answered int32
	respond := func(answer string) {
		if atomic.CompareAndSwapInt32(&answered, 0, 1) {
			respondApproval(approval, answer)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			respond(oauthErrorAnswer(fmt.Sprintf("the OAuth handler panicked: %v", p)))
		}
	}()
	var req OAuthRequest
	if err := json.Unmarshal([]byte(reqJSON), &req); err != nil {
		respond(oauthErrorAnswer("unreadable OAuth request"))
		return
	}
	req.JSON = reqJSON
	value, err := e.fn(req)
	if err == nil {
		var answer string
		if answer, err = oauthAnswer(req.Kind, value); err == nil {
			respond(answer)
			return
		}
	}
	respond(oauthErrorAnswer(err.Error()))
}
