package hermestools

// Host-defined environments: the runtime's terminal and file tools run
// through a provider the host brings (a cloud sandbox SDK, a VM pool, child
// processes) when terminal.backend names it. Approval, limits, timeouts and
// cancellation stay the runtime's; they reach the provider as Kill.

/*
#include "shims.h"
*/
import "C"

import (
	"encoding/json"
	"sync/atomic"
	"unsafe"
)

// Exec is one command to run: `bash -c Script()` where Task's commands run.
// Stream with Output, end once with Finish (from any goroutine).
type Exec struct {
	ptr uintptr
	// ID is what Kill names.
	ID   uint64
	Task string
	// Argv is ["bash", "-c", script].
	Argv []string
	// Capture: a script of the library's own; report stdout (1) and stderr (2) apart.
	Capture bool
	// Stdin is fed to the command, then closed.
	Stdin []byte
	// Mark is the HERMES_TOOLS_TREE value of a terminal command's processes.
	Mark string
	done int32
}

// Script is the bash script to run.
func (e *Exec) Script() string { return e.Argv[len(e.Argv)-1] }

// Output reports output on stream 1 (stdout) or 2 (stderr); false means
// nobody reads any more (timeout, cancellation): stop the command.
func (e *Exec) Output(data []byte, stream int) bool {
	if atomic.LoadInt32(&e.done) != 0 {
		return false
	}
	if len(data) == 0 {
		return true
	}
	p := C.CBytes(data)
	defer C.free(p)
	return C.htgo_exec_output(C.uintptr_t(e.ptr), C.int32_t(stream), (*C.char)(p), C.size_t(len(data))) == 0
}

// Finish ends the command once: its exit status (-N: killed by signal N)
// and, when the provider ended it, why.
func (e *Exec) Finish(code int, message string) {
	if !atomic.CompareAndSwapInt32(&e.done, 0, 1) {
		return
	}
	var a cstrs
	defer a.free()
	p, n := a.str(message)
	C.htgo_exec_finish(C.uintptr_t(e.ptr), C.int32_t(code), p, n)
}

// Provider runs a host environment's commands. Run may block until the
// command ends (it runs on a goroutine of its own) and returns its exit
// status; an error ends the command with status 255 and the error's text.
type Provider interface {
	Run(e *Exec) (int, error)
	Kill(id uint64, signal int)
}

// Cleaner is implemented by providers that release a task's sandbox
// (task nil: the runtime closes).
type Cleaner interface {
	Cleanup(task *string)
}

// Environment is a host-defined environment handle.
type Environment struct {
	env *C.ht_environment
}

// NewEnvironment registers provider p as the environment `name` (what
// terminal.backend names); location says where commands run in approval
// prompts ("" for the default).
func NewEnvironment(name, location string, p Provider) (*Environment, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	spec := map[string]string{"name": name}
	if location != "" {
		spec["location"] = location
	}
	b, _ := json.Marshal(spec)
	var a cstrs
	defer a.free()
	sp, sn := a.str(string(b))
	h := newHandle(p)
	var env *C.ht_environment
	var e *C.ht_error
	if err := takeError(C.htgo_environment_new(sp, sn, C.uintptr_t(h), &env, &e), e); err != nil {
		dropHandle(h)
		return nil, err
	}
	return &Environment{env: env}, nil
}

// Close releases the handle; runtimes created with it keep what they need.
func (e *Environment) Close() {
	if e.env != nil {
		C.ht_environment_free(e.env)
		e.env = nil
	}
}

// NewWithEnvironments is New for a config whose terminal.backend may name
// one of envs.
func NewWithEnvironments(configJSON string, envs ...*Environment) (*Runtime, error) {
	if err := CheckABI(); err != nil {
		return nil, err
	}
	var a cstrs
	defer a.free()
	p, n := a.str(configJSON)
	arr := C.malloc(C.size_t(len(envs)+1) * C.size_t(unsafe.Sizeof(uintptr(0))))
	defer C.free(arr)
	list := unsafe.Slice((**C.ht_environment)(arr), len(envs)+1)
	for i, e := range envs {
		list[i] = e.env
	}
	var rt *C.ht_runtime
	var e *C.ht_error
	if err := takeError(C.htgo_runtime_new_with_environments(p, n, (**C.ht_environment)(arr), C.size_t(len(envs)), &rt, &e), e); err != nil {
		return nil, err
	}
	return adoptRuntime(rt), nil
}
