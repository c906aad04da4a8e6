package hermestools

/*
#include "shims.h"
*/
import "C"

import "unsafe"

// ProcessWrite types into a running PTY command: id is a background process
// id ("proc_..." from terminal(background=true)) or the tool_call_id of a
// foreground command running with pty=true. data is raw bytes ("\r" is
// Enter). It returns the bytes written; ErrNotFound for an unknown or
// finished id, ErrUnsupported without the terminal toolset. Blocks at most
// 5 s when the command is not reading.
func (r *Runtime) ProcessWrite(id string, data []byte) (int, error) {
	rt, err := r.acquire()
	if err != nil {
		return 0, err
	}
	defer r.release()
	var a cstrs
	defer a.free()
	ip, in := a.str(id)
	var dp *C.char
	if len(data) > 0 {
		dp = (*C.char)(C.CBytes(data))
		defer C.free(unsafe.Pointer(dp))
	}
	var written C.size_t
	var ce *C.ht_error
	if err := takeError(C.ht_runtime_process_write(rt, ip, in, dp, C.size_t(len(data)), &written, &ce), ce); err != nil {
		return 0, err
	}
	return int(written), nil
}

// SetTaskCwd sets the working directory of a task ("" = the default task):
// an absolute path to an existing directory.
func (r *Runtime) SetTaskCwd(taskID, cwd string) error {
	return r.withTwoStrings(taskID, cwd, func(rt *C.ht_runtime, tp *C.char, tn C.size_t, cp *C.char, cn C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_set_task_cwd(rt, tp, tn, cp, cn, ce)
	})
}

// SetTaskEnv sets environment variables for a task's later commands:
// envJSON is an object of strings (set) or null (unset), e.g.
// {"API_BASE":"http://localhost:8080","DEBUG":null}. Overrides accumulate.
func (r *Runtime) SetTaskEnv(taskID, envJSON string) error {
	return r.withTwoStrings(taskID, envJSON, func(rt *C.ht_runtime, tp *C.char, tn C.size_t, ep *C.char, en C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_set_task_env(rt, tp, tn, ep, en, ce)
	})
}

// SetTaskNetwork gives a task its own network setting in place of
// terminal.network: networkJSON is "\"off\"", "\"on\"", an allow-list object
// ({"allow":["pypi.org"]}: the task's own proxy) or "null" (back to
// terminal.network). On the sandbox it applies from the task's next command;
// on docker and podman before the task's container starts. Other backends
// return an error with StatusUnsupported.
func (r *Runtime) SetTaskNetwork(taskID, networkJSON string) error {
	return r.withTwoStrings(taskID, networkJSON, func(rt *C.ht_runtime, tp *C.char, tn C.size_t, np *C.char, nn C.size_t, ce **C.ht_error) C.ht_status {
		return C.ht_runtime_set_task_network(rt, tp, tn, np, nn, ce)
	})
}
