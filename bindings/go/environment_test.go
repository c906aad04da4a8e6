package hermestools

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// childProvider runs each command as a bash child in its own process group.
type childProvider struct {
	mu       sync.Mutex
	procs    map[uint64]*exec.Cmd
	commands []string
	kills    [][2]int
	cleanups int
}

func (p *childProvider) Run(e *Exec) (int, error) {
	cmd := exec.Command(e.Argv[0], e.Argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = strings.NewReader(string(e.Stdin))
	out, _ := cmd.StdoutPipe()
	errp, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	p.mu.Lock()
	p.procs[e.ID] = cmd
	p.commands = append(p.commands, e.Script())
	p.mu.Unlock()
	var wg sync.WaitGroup
	pump := func(r io.Reader, stream int) {
		defer wg.Done()
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			if n > 0 && !e.Output(buf[:n], stream) {
				p.Kill(e.ID, 9)
			}
			if err != nil {
				return
			}
		}
	}
	wg.Add(2)
	go pump(out, 1)
	go pump(errp, 2)
	wg.Wait()
	err := cmd.Wait()
	p.mu.Lock()
	delete(p.procs, e.ID)
	p.mu.Unlock()
	if ee, ok := err.(*exec.ExitError); ok {
		if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return -int(st.Signal()), nil
		}
		return ee.ExitCode(), nil
	}
	return 0, err
}

func (p *childProvider) Kill(id uint64, signal int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kills = append(p.kills, [2]int{int(id), signal})
	if c, ok := p.procs[id]; ok && c.Process != nil {
		_ = syscall.Kill(-c.Process.Pid, syscall.Signal(signal))
	}
}

func (p *childProvider) Cleanup(task *string) {
	p.mu.Lock()
	p.cleanups++
	p.mu.Unlock()
}

func TestHostEnvironment(t *testing.T) {
	if !strings.Contains(Features(), "terminal") {
		t.Skip("library without the built-in terminal")
	}
	work := t.TempDir()
	p := &childProvider{procs: map[uint64]*exec.Cmd{}}
	env, err := NewEnvironment("go-child", "in a Go child process", p)
	if err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"builtin_toolsets":["terminal","file"],"terminal":{"backend":"go-child","cwd":%q,"kill_grace":0.5},"approvals":{"mode":"manual","non_interactive":"deny"}}`, work)
	rt, err := NewWithEnvironments(cfg, env)
	env.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	run := func(args string) map[string]any {
		out, err := rt.Dispatch("terminal", args, `{"task_id":"g1"}`)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := run(`{"command":"echo hi; exit 6"}`)
	if v["output"] != "hi" || v["exit_code"] != float64(6) {
		t.Fatalf("%v", v)
	}
	run(`{"command":"mkdir -p q && cd q && export GV=2"}`)
	v = run(`{"command":"pwd; echo $GV"}`)
	if v["output"] != filepath.Join(work, "q")+"\n2" {
		t.Fatalf("%v", v)
	}
	out, err := rt.Dispatch("write_file", fmt.Sprintf(`{"path":%q,"content":"go"}`, filepath.Join(work, "g.txt")), "")
	if err != nil || !strings.Contains(out, `"bytes_written":2`) {
		t.Fatalf("%v %s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(work, "g.txt")); string(b) != "go" {
		t.Fatalf("%q", b)
	}
	// denied before the provider sees it
	v = run(fmt.Sprintf(`{"command":"rm -rf %s/x"}`, work))
	if v["status"] != "blocked" {
		t.Fatalf("%v", v)
	}
	p.mu.Lock()
	for _, c := range p.commands {
		if strings.Contains(c, "rm -rf") {
			t.Fatalf("the provider saw a denied command")
		}
	}
	p.mu.Unlock()
	// a timeout reaches Kill
	t0 := time.Now()
	v = run(`{"command":"echo a; sleep 30","timeout":1}`)
	if time.Since(t0) > 8*time.Second || !strings.HasPrefix(v["output"].(string), "a") {
		t.Fatalf("%v after %v", v, time.Since(t0))
	}
	p.mu.Lock()
	killed := len(p.kills) > 0
	p.mu.Unlock()
	if !killed {
		t.Fatal("kill never reached the provider")
	}
}
