package hermestools

// Nothing a runtime started outlives the Go host that started it (issue 38):
// a host that calls os.Exit without Close, and one killed with SIGKILL,
// leave no command behind, nor a child the command double-forked out of its
// session with an empty environment. The host is this test binary run again
// in a child mode (HT_LIFETIME_CHILD).

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func init() {
	how := os.Getenv("HT_LIFETIME_CHILD")
	if how == "" {
		return
	}
	rt, err := New(`{"builtin_toolsets":["terminal"],"terminal":{"backend":"local"}}`)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	go func() {
		_, _ = rt.Dispatch("terminal", fmt.Sprintf(`{"command":"python3 %s"}`, os.Getenv("HT_LIFETIME_SCRIPT")), "")
	}()
	fmt.Println("started")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if how == "kill" {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	os.Exit(0)
}

func liveSleeps(arg string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(stat)
		state := strings.TrimSpace(s[strings.LastIndex(s, ")")+1:])
		argv := strings.Split(string(cmd), "\x00")
		if len(argv) >= 2 && argv[0] == "/bin/sleep" && argv[1] == arg && !strings.HasPrefix(state, "Z") {
			out = append(out, pid)
		}
	}
	return out
}

func waitUntil(pred func() bool, d time.Duration) bool {
	until := time.Now().Add(d)
	for time.Now().Before(until) {
		if pred() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return pred()
}

func TestNothingOutlivesTheHost(t *testing.T) {
	for i, how := range []string{"exit", "kill"} {
		tag := fmt.Sprintf("%d.%d", os.Getpid()%89+500, i)
		dir := t.TempDir()
		script := filepath.Join(dir, "child.py")
		body := "import os\nif os.fork() == 0:\n    getattr(os, 'set' + 'sid')()\n    if os.fork() == 0:\n" +
			"        os.execve('/bin/sleep', ['/bin/sleep', '6" + tag + "'], {})\n    os._exit(0)\n" +
			"os.execv('/bin/sleep', ['/bin/sleep', '7" + tag + "'])\n"
		if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "HT_LIFETIME_CHILD="+how, "HT_LIFETIME_SCRIPT="+script)
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		if strings.TrimSpace(line) != "started" {
			t.Fatalf("%s: child said %q", how, line)
		}
		all := []string{"6" + tag, "7" + tag}
		if !waitUntil(func() bool { return len(liveSleeps(all[0])) == 1 && len(liveSleeps(all[1])) == 1 }, 20*time.Second) {
			t.Fatalf("%s: the command did not start", how)
		}
		_, _ = stdin.Write([]byte("go\n"))
		_ = cmd.Wait()
		gone := waitUntil(func() bool { return len(liveSleeps(all[0])) == 0 && len(liveSleeps(all[1])) == 0 }, time.Second)
		left := append(liveSleeps(all[0]), liveSleeps(all[1])...)
		for _, p := range left {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		if !gone {
			t.Fatalf("%s: left running: %v", how, left)
		}
	}
}
