/* C side of the Go binding: trampolines from library callbacks to exported Go
 * functions. user_data values and ht_call / ht_hook handles cross into Go as
 * uintptr_t (cgo.Handle ids, library ids) and are cast to pointers only here,
 * in C, so Go never holds an integer posing as a pointer (golang/go#49633). */
#ifndef HERMESTOOLS_GO_SHIMS_H
#define HERMESTOOLS_GO_SHIMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "hermes_tools.h"

ht_status htgo_register_tool(ht_runtime *rt, const char *spec, size_t spec_len, bool has_check,
                             uintptr_t handle, ht_error **out_err);
ht_status htgo_dispatch_async(ht_runtime *rt, const char *name, size_t name_len, const char *args,
                              size_t args_len, const char *ctx, size_t ctx_len, uintptr_t handle,
                              uint64_t *out_call_id, ht_error **out_err);
ht_status htgo_add_hook(ht_runtime *rt, const char *event, size_t event_len, uintptr_t handle,
                        ht_error **out_err);
/* handle 0 removes the interceptor (agent-loop tools). */
ht_status htgo_set_interceptor(ht_runtime *rt, uintptr_t handle, ht_error **out_err);
/* handle 0 removes the handler. */
ht_status htgo_set_event_handler(ht_runtime *rt, uintptr_t handle, ht_error **out_err);
ht_status htgo_set_log_handler(int32_t level, uintptr_t handle);

/* reviewer: the smart reviewer instead of the approval handler; handle 0 removes it. */
ht_status htgo_set_approval_handler(ht_runtime *rt, bool reviewer, uintptr_t handle, ht_error **out_err);
/* handle 0 removes the OAuth handler. */
ht_status htgo_set_oauth_handler(ht_runtime *rt, uintptr_t handle, ht_error **out_err);
const char *htgo_approval_request(uintptr_t approval, size_t *out_len);
ht_status htgo_approval_respond(uintptr_t approval, const char *decision, size_t len);

const char *htgo_call_args(uintptr_t call, size_t *out_len);
const char *htgo_call_context(uintptr_t call, size_t *out_len);
const char *htgo_call_tool_name(uintptr_t call, size_t *out_len);
/* handle: a cgo.Handle of a context.CancelFunc, called once when the call is
   cancelled; the handle is deleted through htgoFree. */
ht_status htgo_call_on_cancel(uintptr_t call, uintptr_t handle);
ht_status htgo_call_progress(uintptr_t call, double progress, double total, const char *message, size_t len);
ht_status htgo_call_respond(uintptr_t call, bool is_error, const char *result, size_t len);
const char *htgo_hook_event(uintptr_t hook, size_t *out_len);
ht_status htgo_hook_respond(uintptr_t hook, const char *decision, size_t len);

/* Host-defined environments: handle is a cgo.Handle of the Go provider. */
ht_status htgo_environment_new(const char *spec, size_t spec_len, uintptr_t handle, ht_environment **out_env,
                               ht_error **out_err);
ht_status htgo_runtime_new_with_environments(const char *cfg, size_t cfg_len, ht_environment **envs, size_t n,
                                             ht_runtime **out_rt, ht_error **out_err);
const char *htgo_exec_request(uintptr_t exec, size_t *out_len);
const char *htgo_exec_stdin(uintptr_t exec, size_t *out_len);
ht_status htgo_exec_output(uintptr_t exec, int32_t stream, const char *data, size_t len);
ht_status htgo_exec_finish(uintptr_t exec, int32_t code, const char *message, size_t len);

#endif
