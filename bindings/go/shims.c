#include "shims.h"

#include "_cgo_export.h"

static void tramp_tool(void *ud, ht_call *call) { htgoToolHandler((uintptr_t)ud, (uintptr_t)call); }
static bool tramp_check(void *ud) { return htgoCheck((uintptr_t)ud) != 0; }
static void tramp_free(void *ud) { htgoFree((uintptr_t)ud); }
static void tramp_cancel(void *ud, ht_call *call) {
  (void)call;
  htgoCancel((uintptr_t)ud);
}
static void tramp_done(void *ud, ht_status status, const char *result, size_t len) {
  htgoDone((uintptr_t)ud, (int32_t)status, (char *)result, len);
}
static void tramp_hook(void *ud, ht_hook *hook) { htgoHook((uintptr_t)ud, (uintptr_t)hook); }
static void tramp_approval(void *ud, ht_approval *approval) {
  htgoApproval((uintptr_t)ud, (uintptr_t)approval);
}
static void tramp_event(void *ud, const char *json, size_t len) { htgoEvent((uintptr_t)ud, (char *)json, len); }
static void tramp_log(void *ud, int32_t level, const char *msg, size_t len) {
  htgoLog((uintptr_t)ud, level, (char *)msg, len);
}

ht_status htgo_register_tool(ht_runtime *rt, const char *spec, size_t spec_len, bool has_check,
                             uintptr_t handle, ht_error **out_err) {
  return ht_runtime_register_tool(rt, spec, spec_len, tramp_tool, has_check ? tramp_check : NULL,
                                  (void *)handle, tramp_free, out_err);
}

ht_status htgo_dispatch_async(ht_runtime *rt, const char *name, size_t name_len, const char *args,
                              size_t args_len, const char *ctx, size_t ctx_len, uintptr_t handle,
                              uint64_t *out_call_id, ht_error **out_err) {
  return ht_runtime_dispatch_async(rt, name, name_len, args, args_len, ctx, ctx_len, tramp_done,
                                   (void *)handle, out_call_id, out_err);
}

ht_status htgo_add_hook(ht_runtime *rt, const char *event, size_t event_len, uintptr_t handle,
                        ht_error **out_err) {
  return ht_runtime_add_hook(rt, event, event_len, tramp_hook, (void *)handle, tramp_free, out_err);
}

ht_status htgo_set_interceptor(ht_runtime *rt, uintptr_t handle, ht_error **out_err) {
  if (handle == 0) return ht_runtime_set_interceptor(rt, NULL, NULL, NULL, out_err);
  return ht_runtime_set_interceptor(rt, tramp_tool, (void *)handle, tramp_free, out_err);
}

ht_status htgo_set_event_handler(ht_runtime *rt, uintptr_t handle, ht_error **out_err) {
  if (handle == 0) return ht_runtime_set_event_handler(rt, NULL, NULL, NULL, out_err);
  return ht_runtime_set_event_handler(rt, tramp_event, (void *)handle, tramp_free, out_err);
}

ht_status htgo_set_log_handler(int32_t level, uintptr_t handle) {
  if (handle == 0) return ht_set_log_handler(NULL, level, NULL, NULL);
  return ht_set_log_handler(tramp_log, level, (void *)handle, tramp_free);
}

const char *htgo_call_args(uintptr_t call, size_t *out_len) {
  return ht_call_args_json((const ht_call *)call, out_len);
}
const char *htgo_call_context(uintptr_t call, size_t *out_len) {
  return ht_call_context_json((const ht_call *)call, out_len);
}
const char *htgo_call_tool_name(uintptr_t call, size_t *out_len) {
  return ht_call_tool_name((const ht_call *)call, out_len);
}
ht_status htgo_call_on_cancel(uintptr_t call, uintptr_t handle) {
  return ht_call_on_cancel((ht_call *)call, tramp_cancel, (void *)handle, tramp_free);
}
ht_status htgo_call_progress(uintptr_t call, double progress, double total, const char *message, size_t len) {
  return ht_call_progress((ht_call *)call, progress, total, message, len);
}
ht_status htgo_call_respond(uintptr_t call, bool is_error, const char *result, size_t len) {
  return ht_call_respond((ht_call *)call, is_error, result, len);
}
const char *htgo_hook_event(uintptr_t hook, size_t *out_len) {
  return ht_hook_event_json((const ht_hook *)hook, out_len);
}
ht_status htgo_hook_respond(uintptr_t hook, const char *decision, size_t len) {
  return ht_hook_respond((ht_hook *)hook, decision, len);
}

ht_status htgo_set_approval_handler(ht_runtime *rt, bool reviewer, uintptr_t handle, ht_error **out_err) {
  if (reviewer) {
    if (handle == 0) return ht_runtime_set_approval_reviewer(rt, NULL, NULL, NULL, out_err);
    return ht_runtime_set_approval_reviewer(rt, tramp_approval, (void *)handle, tramp_free, out_err);
  }
  if (handle == 0) return ht_runtime_set_approval_handler(rt, NULL, NULL, NULL, out_err);
  return ht_runtime_set_approval_handler(rt, tramp_approval, (void *)handle, tramp_free, out_err);
}
ht_status htgo_set_oauth_handler(ht_runtime *rt, uintptr_t handle, ht_error **out_err) {
  if (handle == 0) return ht_runtime_set_oauth_handler(rt, NULL, NULL, NULL, out_err);
  return ht_runtime_set_oauth_handler(rt, tramp_approval, (void *)handle, tramp_free, out_err);
}
const char *htgo_approval_request(uintptr_t approval, size_t *out_len) {
  return ht_approval_request_json((const ht_approval *)approval, out_len);
}
ht_status htgo_approval_respond(uintptr_t approval, const char *decision, size_t len) {
  return ht_approval_respond((ht_approval *)approval, decision, len);
}

static void tramp_env_spawn(void *ud, ht_exec *exec) { htgoEnvSpawn((uintptr_t)ud, (uintptr_t)exec); }
static void tramp_env_kill(void *ud, uint64_t id, int32_t sig) { htgoEnvKill((uintptr_t)ud, id, sig); }
static void tramp_env_cleanup(void *ud, const char *task, size_t len) {
  htgoEnvCleanup((uintptr_t)ud, (char *)task, len, task != NULL);
}

ht_status htgo_environment_new(const char *spec, size_t spec_len, uintptr_t handle, ht_environment **out_env,
                               ht_error **out_err) {
  return ht_environment_new(spec, spec_len, tramp_env_spawn, tramp_env_kill, NULL, tramp_env_cleanup,
                            (void *)handle, tramp_free, out_env, out_err);
}
ht_status htgo_runtime_new_with_environments(const char *cfg, size_t cfg_len, ht_environment **envs, size_t n,
                                             ht_runtime **out_rt, ht_error **out_err) {
  return ht_runtime_new_with_environments(cfg, cfg_len, (const ht_environment *const *)envs, n, out_rt, out_err);
}
const char *htgo_exec_request(uintptr_t exec, size_t *out_len) {
  return ht_exec_request_json((const ht_exec *)exec, out_len);
}
const char *htgo_exec_stdin(uintptr_t exec, size_t *out_len) {
  return (const char *)ht_exec_stdin((const ht_exec *)exec, out_len);
}
ht_status htgo_exec_output(uintptr_t exec, int32_t stream, const char *data, size_t len) {
  return ht_exec_output((ht_exec *)exec, stream, (const uint8_t *)data, len);
}
ht_status htgo_exec_finish(uintptr_t exec, int32_t code, const char *message, size_t len) {
  return ht_exec_finish((ht_exec *)exec, code, message, len);
}
