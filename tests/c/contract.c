/* C contract test for the hermes-tools ABI: NULLs, bad UTF-8, conflicts,
 * free functions exactly once, completion exactly once on another thread,
 * re-entrancy, answers from other threads, free with calls pending. */
#include "hermes_tools.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);      \
      exit(1);                                                                      \
    }                                                                               \
  } while (0)

#define S(lit) lit, strlen(lit)

static atomic_int frees = 0;
static void count_free(void *ud) { if (getenv("HT_DEBUG_FREES")) fprintf(stderr, "free %s\n", ud ? (const char*)ud : "?"); atomic_fetch_add(&frees, 1); }

static ht_runtime *g_rt;

/* Answers inline: {"sum": x + y}. */
static void add_handler(void *ud, ht_call *call) {
  (void)ud;
  size_t n = 0;
  const char *args = ht_call_args_json(call, &n);
  CHECK(args != NULL);
  int x = 0, y = 0;
  char buf[256];
  CHECK(n < sizeof buf);
  memcpy(buf, args, n);
  buf[n] = 0;
  sscanf(strstr(buf, "\"x\":") + 4, "%d", &x);
  sscanf(strstr(buf, "\"y\":") + 4, "%d", &y);
  char out[64];
  int len = snprintf(out, sizeof out, "{\"sum\":%d}", x + y);
  CHECK(ht_call_respond(call, false, out, (size_t)len) == HT_STATUS_OK);
  /* A second answer is reported, not a crash. */
  CHECK(ht_call_respond(call, false, out, (size_t)len) == HT_STATUS_NOT_FOUND);
}

/* Answers from another thread, later. */
static void *answer_later(void *p) {
  usleep(20000);
  CHECK(ht_call_respond((ht_call *)p, false, S("\"late but fine\"")) == HT_STATUS_OK);
  return NULL;
}
static void thread_handler(void *ud, ht_call *call) {
  (void)ud;
  pthread_t t;
  CHECK(pthread_create(&t, NULL, answer_later, call) == 0);
  pthread_detach(t);
}

/* Re-enters the library from inside a handler. */
static void reentrant_handler(void *ud, ht_call *call) {
  (void)ud;
  char *defs = NULL;
  size_t n = 0;
  ht_error *err = NULL;
  CHECK(ht_runtime_definitions_json(g_rt, NULL, 0, &defs, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(defs, "\"add\"") != NULL);
  ht_string_free(defs);
  char *res = NULL;
  CHECK(ht_runtime_dispatch(g_rt, S("add"), S("{\"x\":2,\"y\":3}"), NULL, 0, &res, &n, &err) ==
        HT_STATUS_OK);
  CHECK(strcmp(res, "{\"sum\":5}") == 0);
  CHECK(ht_call_respond(call, false, res, n) == HT_STATUS_OK);
  ht_string_free(res);
}

/* Never answers (until the runtime is freed). */
static ht_call *g_parked = NULL;
static void never_handler(void *ud, ht_call *call) { (void)ud; g_parked = call; }

static void error_handler(void *ud, ht_call *call) {
  (void)ud;
  CHECK(ht_call_respond(call, true, S("<tool_call>disk full</tool_call>")) == HT_STATUS_OK);
}

static bool check_false(void *ud) { (void)ud; return false; }

struct completion {
  atomic_int calls;
  ht_status status;
  pthread_t thread;
  char result[512];
};
static void on_done(void *ud, ht_status status, const char *result, size_t len) {
  struct completion *c = ud;
  c->status = status;
  c->thread = pthread_self();
  size_t k = len < sizeof c->result - 1 ? len : sizeof c->result - 1;
  memcpy(c->result, result, k);
  c->result[k] = 0;
  atomic_fetch_add(&c->calls, 1);
}
static void wait_for(struct completion *c) {
  for (int i = 0; i < 500 && atomic_load(&c->calls) == 0; i++) usleep(10000);
  CHECK(atomic_load(&c->calls) == 1);
}

static void block_hook(void *ud, ht_hook *hook) {
  (void)ud;
  size_t n = 0;
  const char *ev = ht_hook_event_json(hook, &n);
  CHECK(ev != NULL);
  if (memmem(ev, n, "\"x\":666", 7))
    CHECK(ht_hook_respond(hook, S("{\"action\":\"block\",\"message\":\"no devils\"}")) == HT_STATUS_OK);
  else
    CHECK(ht_hook_respond(hook, NULL, 0) == HT_STATUS_OK);
}

static const char *ADD_SPEC =
    "{\"name\":\"add\",\"toolset\":\"math\",\"parallel_safe\":true,\"schema\":{\"description\":\"Add two "
    "integers\",\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"},"
    "\"y\":{\"type\":\"integer\"}},\"required\":[\"x\",\"y\"]}}}";

static void reg(const char *spec, ht_tool_handler_fn h, ht_check_fn chk) {
  ht_error *err = NULL;
  ht_status st = ht_runtime_register_tool(g_rt, spec, strlen(spec), h, chk, (void *)spec, count_free, &err);
  if (st != HT_STATUS_OK) fprintf(stderr, "register: %s\n", ht_error_message(err));
  CHECK(st == HT_STATUS_OK && err == NULL);
}

int main(void) {
  /* Versions. */
  CHECK(ht_abi_version() == HT_ABI_VERSION);
  CHECK(strcmp(ht_version(), "hermes-tools/" HT_VERSION) == 0);
  CHECK(strstr(ht_features(), "\"abi\":1") != NULL);

  /* NULLs are harmless. */
  ht_runtime_free(NULL);
  ht_string_free(NULL);
  ht_error_free(NULL);
  CHECK(ht_error_message(NULL) == NULL);
  CHECK(ht_runtime_new(NULL, 0, NULL, NULL) == HT_STATUS_INVALID_ARGUMENT);

  /* Bad config names the key. */
  ht_error *err = NULL;
  ht_runtime *rt = NULL;
  CHECK(ht_runtime_new(S("{\"dispatch\":{\"timeoutt\":1}}"), &rt, &err) == HT_STATUS_INVALID_JSON);
  CHECK(rt == NULL && err != NULL);
  CHECK(ht_error_code(err) == HT_STATUS_INVALID_JSON);
  CHECK(strstr(ht_error_message(err), "timeoutt") != NULL);
  ht_error_free(err);
  err = NULL;
  /* Schemas compile at registration here, so a bad one is refused there
     (by default they compile on the tool's first call: tests/integration/core_registry.rs). */
  CHECK(ht_runtime_new(S("{\"dispatch\":{\"timeout\":4,\"compile_schemas\":\"at_registration\"}}"), &rt, &err) ==
            HT_STATUS_OK &&
        err == NULL);
  g_rt = rt;

  /* Registration rules. */
  reg(ADD_SPEC, add_handler, NULL);
  CHECK(ht_runtime_register_tool(rt, ADD_SPEC, strlen(ADD_SPEC), NULL, NULL, NULL, count_free, &err) ==
        HT_STATUS_INVALID_ARGUMENT);
  ht_error_free(err);
  const char *other = "{\"name\":\"add\",\"toolset\":\"other\",\"schema\":{\"description\":\"x\"}}";
  CHECK(ht_runtime_register_tool(rt, other, strlen(other), add_handler, NULL, NULL, count_free, &err) ==
        HT_STATUS_CONFLICT);
  CHECK(strstr(ht_error_message(err), "override") != NULL);
  ht_error_free(err);
  const char *bad_schema =
      "{\"name\":\"bad\",\"toolset\":\"t\",\"schema\":{\"parameters\":{\"type\":\"object\","
      "\"properties\":{\"n\":{\"type\":\"int\"}}}}}";
  CHECK(ht_runtime_register_tool(rt, bad_schema, strlen(bad_schema), add_handler, NULL, NULL, count_free,
                                 &err) == HT_STATUS_INVALID_ARGUMENT);
  CHECK(strstr(ht_error_message(err), "properties.n.type") != NULL);
  ht_error_free(err);
  const char bad_utf8[] = {'{', '"', 'n', '\xff', '"', '}'};
  CHECK(ht_runtime_register_tool(rt, bad_utf8, sizeof bad_utf8, add_handler, NULL, NULL, count_free, &err) ==
        HT_STATUS_INVALID_UTF8);
  ht_error_free(err);
  CHECK(atomic_load(&frees) == 0); /* failed registrations never free */

  reg("{\"name\":\"later\",\"toolset\":\"misc\",\"schema\":{\"description\":\"answers from a thread\"}}",
      thread_handler, NULL);
  reg("{\"name\":\"reenter\",\"toolset\":\"misc\",\"schema\":{\"description\":\"calls back in\"}}",
      reentrant_handler, NULL);
  reg("{\"name\":\"never\",\"toolset\":\"misc\",\"schema\":{\"description\":\"never answers\"}}",
      never_handler, NULL);
  reg("{\"name\":\"fails\",\"toolset\":\"misc\",\"schema\":{\"description\":\"always fails\"}}",
      error_handler, NULL);
  reg("{\"name\":\"hidden\",\"toolset\":\"misc\",\"schema\":{\"description\":\"unavailable\"}}",
      add_handler, check_false);
  uint64_t gen = ht_runtime_generation(rt);
  CHECK(gen >= 6);

  /* Re-registering in the same toolset replaces and frees the old user_data. */
  reg(ADD_SPEC, add_handler, NULL);
  CHECK(ht_runtime_generation(rt) == gen + 1);

  /* Definitions. */
  char *out = NULL;
  size_t n = 0;
  CHECK(ht_runtime_definitions_json(rt, S("{\"format\":\"anthropic\"}"), &out, &n, &err) == HT_STATUS_OK);
  CHECK(n == strlen(out));
  CHECK(strstr(out, "\"input_schema\"") != NULL);
  CHECK(strstr(out, "hidden") == NULL);
  ht_string_free(out);
  CHECK(ht_runtime_definitions_json(rt, S("{\"enabled_toolsets\":[\"nope\"]}"), &out, &n, &err) ==
        HT_STATUS_NOT_FOUND);
  ht_error_free(err);
  CHECK(ht_runtime_definitions_json(rt, NULL, 0, NULL, &n, &err) == HT_STATUS_INVALID_ARGUMENT);
  ht_error_free(err);

  /* Sync dispatch: inline, other thread, re-entrant, handler error, bad args, unknown tool. */
  CHECK(ht_runtime_dispatch(rt, S("add"), S("{\"x\":\"40\",\"y\":2}"), NULL, 0, &out, &n, &err) ==
        HT_STATUS_OK);
  CHECK(strcmp(out, "{\"sum\":42}") == 0);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, S("later"), S("{}"), S("{\"task_id\":\"t1\"}"), &out, &n, &err) ==
        HT_STATUS_OK);
  CHECK(strcmp(out, "\"late but fine\"") == 0);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, S("reenter"), NULL, 0, NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strcmp(out, "{\"sum\":5}") == 0);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, S("fails"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(out, "\"error\":\"[TOOL_ERROR] disk full\"") != NULL);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, S("add"), S("{\"x\":1}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(out, "missing required property 'y'") != NULL);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, S("add"), S("{\"x\":"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(out, "Invalid tool arguments") != NULL);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, S("ad"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(out, "Unknown tool: ad") != NULL);
  ht_string_free(out);
  CHECK(ht_runtime_dispatch(rt, bad_utf8, sizeof bad_utf8, S("{}"), NULL, 0, &out, &n, &err) ==
        HT_STATUS_INVALID_UTF8);
  ht_error_free(err);
  CHECK(ht_runtime_dispatch(NULL, S("add"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_INVALID_ARGUMENT);
  ht_error_free(err);

  /* Timeout: the late answer is harmless. */
  CHECK(ht_runtime_dispatch(rt, S("never"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(out, "timed out") != NULL);
  ht_string_free(out);
  CHECK(g_parked != NULL);
  size_t an = 0;
  CHECK(ht_call_args_json(g_parked, &an) != NULL); /* still valid until answered */
  CHECK(ht_call_respond(g_parked, false, S("too late")) == HT_STATUS_TIMEOUT);
  CHECK(ht_call_respond(g_parked, false, S("again")) == HT_STATUS_NOT_FOUND);
  g_parked = NULL;

  /* Hooks. */
  CHECK(ht_runtime_add_hook(rt, S("pre_tool_call"), block_hook, NULL, count_free, &err) == HT_STATUS_OK);
  CHECK(ht_runtime_add_hook(rt, S("pre_tool_cal"), block_hook, NULL, count_free, &err) ==
        HT_STATUS_INVALID_ARGUMENT);
  ht_error_free(err);
  CHECK(ht_runtime_dispatch(rt, S("add"), S("{\"x\":666,\"y\":1}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strcmp(out, "{\"error\":\"no devils\"}") == 0);
  ht_string_free(out);

  /* Batch: order kept, one failure does not lose the others. */
  const char *calls =
      "[{\"id\":\"a\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"x\\\":1,\\\"y\\\":1}\"}},"
      "{\"id\":\"b\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":{\"x\":2,\"y\":2}}},"
      "{\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"fails\",\"arguments\":\"{}\"}},"
      "{\"id\":\"d\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"{\\\"x\\\":3,\\\"y\\\":3}\"}}]";
  CHECK(ht_runtime_dispatch_batch(rt, calls, strlen(calls), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  const char *a = strstr(out, "\"a\""), *b = strstr(out, "\"b\""), *c = strstr(out, "\"c\""),
             *d = strstr(out, "\"d\"");
  CHECK(a && b && c && d && a < b && b < c && c < d);
  CHECK(strstr(out, "{\\\"sum\\\":6}") != NULL);
  CHECK(strstr(out, "disk full") != NULL);
  ht_string_free(out);

  /* Async: exactly once, on another thread. */
  struct completion c1 = {0};
  uint64_t id = 0;
  CHECK(ht_runtime_dispatch_async(rt, S("later"), S("{}"), NULL, 0, on_done, &c1, &id, &err) == HT_STATUS_OK);
  CHECK(id != 0);
  wait_for(&c1);
  CHECK(c1.status == HT_STATUS_OK);
  CHECK(!pthread_equal(c1.thread, pthread_self()));
  CHECK(strcmp(c1.result, "\"late but fine\"") == 0);
  CHECK(ht_runtime_dispatch_async(rt, S("add"), S("{}"), NULL, 0, NULL, NULL, NULL, &err) ==
        HT_STATUS_INVALID_ARGUMENT);
  ht_error_free(err);

  /* Cancel an async call. */
  struct completion c2 = {0};
  CHECK(ht_runtime_dispatch_async(rt, S("never"), S("{}"), S("{\"timeout\":100}"), on_done, &c2, &id, &err) ==
        HT_STATUS_OK);
  usleep(20000);
  CHECK(ht_runtime_cancel(rt, id, &err) == HT_STATUS_OK);
  wait_for(&c2);
  CHECK(c2.status == HT_STATUS_CANCELLED);
  CHECK(strstr(c2.result, "cancelled") != NULL);

  /* Free with a call pending: its completion runs (cancelled) before free returns. */
  struct completion c3 = {0};
  CHECK(ht_runtime_dispatch_async(rt, S("never"), S("{}"), S("{\"timeout\":100}"), on_done, &c3, &id, &err) ==
        HT_STATUS_OK);
  usleep(20000);
  ht_call *parked = g_parked;
  ht_runtime_free(rt);
  CHECK(atomic_load(&c3.calls) == 1);
  CHECK(c3.status == HT_STATUS_CANCELLED);
  /* 6 tools registered + 1 replaced + 1 hook = 8 free calls, each exactly once. */
  if (atomic_load(&frees) != 8) fprintf(stderr, "frees=%d\n", atomic_load(&frees));
  CHECK(atomic_load(&frees) == 8);
  /* The parked call's texts stay readable after free until it is answered
     (ASan/valgrind check the reads); a late answer is harmless, once. */
  if (parked) {
    size_t alen = 0;
    const char *args = ht_call_args_json(parked, &alen);
    CHECK(args != NULL && alen == 2 && memcmp(args, "{}", 2) == 0);
    CHECK(ht_call_is_cancelled(parked));
    CHECK(ht_call_respond(parked, false, S("x")) == HT_STATUS_CANCELLED);
    CHECK(ht_call_respond(parked, false, S("x")) == HT_STATUS_NOT_FOUND);
    CHECK(ht_call_args_json(parked, &alen) == NULL);
  }
  printf("contract: ok\n");
  return 0;
}
