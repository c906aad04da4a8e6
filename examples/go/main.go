// Agent-host example (Go): the same scenario in every language binding.
//
//  1. create a runtime with the built-in terminal ({"builtin_toolsets":["terminal"]}),
//  2. register a host tool (get_weather),
//  3. install the host's approval callback for dangerous commands,
//  4. print the tool schemas the model would see,
//  5. dispatch a model's tool_calls batch with two dangerous commands: one
//     the approval callback denies (`rm -rf /tmp/hermes-demo-scratch`), and
//     `rm -rf /`, which the library refuses without asking.
//
// Run: make example-go
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	ht "github.com/hermes-tools/hermes-tools/bindings/go"
)

type approvalRequest struct {
	Verdict string `json:"verdict"`
	Command string `json:"untrusted_command_text"`
	Reasons []struct {
		Description string `json:"description"`
	} `json:"reasons"`
}

// approve is the host's approval callback, asked by the library when a
// command needs approval (verdict "ask"). It runs in its own goroutine while
// the command waits; a real host would ask its user here. Block-tier
// commands such as `rm -rf /` never get here: the library refuses them.
func approve(requestJSON string) (string, error) {
	var req approvalRequest
	if err := json.Unmarshal([]byte(requestJSON), &req); err != nil {
		return "", err // an error denies
	}
	var why []string
	for _, r := range req.Reasons {
		why = append(why, r.Description)
	}
	fmt.Printf("  [approval] %q: %s (%s) -> denied\n", req.Command, req.Verdict, strings.Join(why, "; "))
	return ht.Deny, nil
}

// makeRuntime enables the built-in terminal, or says so when this build lacks it.
func makeRuntime() (*ht.Runtime, bool, error) {
	rt, err := ht.New(`{"builtin_toolsets":["terminal"]}`)
	if err == nil {
		return rt, true, nil
	}
	if !errors.Is(err, ht.ErrUnsupported) {
		return nil, false, err
	}
	fmt.Printf("note: built-in terminal not in this build (%v); using a host stand-in\n", err)
	rt, err = ht.New("{}")
	return rt, false, err
}

// registerTerminalStandIn is used only while the library has no built-in
// terminal. It has no approval round trip, so it runs only commands the
// library's rules allow.
func registerTerminalStandIn(rt *ht.Runtime) error {
	params := `{"type":"object","properties":{"command":{"type":"string","description":"The shell command to run."}},"required":["command"]}`
	return rt.RegisterTool(ht.ToolSpec("terminal", "terminal", "Run a shell command and return its output.", params, false),
		func(call ht.Call) (string, error) {
			var args struct{ Command string }
			if err := call.Unmarshal(&args); err != nil {
				return "", err
			}
			raw, err := rt.CommandCheck(args.Command)
			if err != nil {
				return "", err
			}
			var check struct{ Verdict string }
			if err := json.Unmarshal([]byte(raw), &check); err != nil || check.Verdict != "allow" {
				return "", errors.New("BLOCKED: the stand-in terminal runs only commands that need no approval")
			}
			out, err := exec.Command("sh", "-c", args.Command).CombinedOutput()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				return "", err
			}
			b, _ := json.Marshal(map[string]any{"output": string(out), "exit_code": code})
			return string(b), nil
		}, nil)
}

func run() error {
	fmt.Println(ht.Version())
	rt, builtin, err := makeRuntime()
	if err != nil {
		return err
	}
	defer rt.Close()
	if !builtin {
		if err := registerTerminalStandIn(rt); err != nil {
			return err
		}
	}

	weatherParams := `{"type":"object","properties":{"city":{"type":"string","description":"City name, e.g. \"Lisbon\"."},` +
		`"days":{"type":"integer","minimum":1,"description":"Number of days to forecast."}},"required":["city"]}`
	err = rt.RegisterTool(ht.ToolSpec("get_weather", "weather", "Weather forecast for a city.", weatherParams, true),
		func(call ht.Call) (string, error) {
			var args struct {
				City string `json:"city"`
				Days int    `json:"days"`
			}
			if err := call.Unmarshal(&args); err != nil {
				return "", err
			}
			if args.Days == 0 {
				args.Days = 1
			}
			b, _ := json.Marshal(map[string]any{"city": args.City, "days": args.Days, "forecast": "sunny"})
			return string(b), nil
		}, nil)
	if err != nil {
		return err
	}
	if err := rt.SetApprovalHandler(approve); err != nil {
		return err
	}

	defs, err := rt.Definitions("")
	if err != nil {
		return err
	}
	var schemas []json.RawMessage
	if err := json.Unmarshal([]byte(defs), &schemas); err != nil {
		return err
	}
	fmt.Println("\nschemas:")
	for _, s := range schemas {
		fmt.Println("  " + string(s))
	}

	toolCalls := `[
	  {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Lisbon\", \"days\": \"2\"}"}},
	  {"id":"call_2","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"echo hello from the terminal\"}"}},
	  {"id":"call_3","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"rm -rf /tmp/hermes-demo-scratch\"}"}},
	  {"id":"call_4","type":"function","function":{"name":"terminal","arguments":"{\"command\": \"rm -rf /\"}"}}]`
	fmt.Println("\ndispatching the model's tool_calls:")
	out, err := rt.DispatchBatch(toolCalls, `{"task_id":"demo"}`)
	if err != nil {
		return err
	}
	var results []struct {
		ToolCallID string `json:"tool_call_id"`
		Name       string `json:"name"`
		Content    string `json:"content"`
	}
	if err := json.Unmarshal([]byte(out), &results); err != nil {
		return err
	}
	fmt.Println("\nresults for the model:")
	for _, r := range results {
		fmt.Printf("  %s %s: %s\n", r.ToolCallID, r.Name, r.Content)
	}
	if len(results) != 4 || !strings.Contains(results[0].Content, "sunny") ||
		!strings.Contains(results[1].Content, "hello from the terminal") ||
		!strings.Contains(results[2].Content, "BLOCKED") || !strings.Contains(results[3].Content, "BLOCKED") ||
		(builtin && !strings.Contains(results[2].Content, "the user denied")) {
		return fmt.Errorf("unexpected results: %s", out)
	}
	fmt.Println("\nok")
	return nil
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
