/* C contract test for cancellation of host calls: ht_call_is_cancelled and
 * ht_call_on_cancel. A handler that waits on its cancellation signal returns
 * promptly when its call times out, is cancelled, or its runtime is freed;
 * the callback runs at most once, its free function exactly once; a late
 * answer reports how the wait ended (timeout or cancelled). */
#include "hermes_tools.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)
#define S(lit) lit, strlen(lit)

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One worker per call: waits (up to 10 s) for its cancellation signal, then answers. */
struct work {
  ht_call *call;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int signalled;
  atomic_int cb_calls;
  atomic_int frees;
  atomic_int respond_status; /* -1 until answered */
  double woke_after;
};

static struct work g_work;
static void work_reset(struct work *w) {
  memset(w, 0, sizeof *w);
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  atomic_store(&w->respond_status, -1);
}

static void on_cancel(void *ud, ht_call *call) {
  struct work *w = ud;
  CHECK(call == w->call);
  CHECK(ht_call_is_cancelled(call));
  atomic_fetch_add(&w->cb_calls, 1);
  pthread_mutex_lock(&w->mu);
  w->signalled = 1;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}
static void free_work(void *ud) { atomic_fetch_add(&((struct work *)ud)->frees, 1); }

static void *worker(void *p) {
  struct work *w = p;
  double t0 = now();
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 10;
  pthread_mutex_lock(&w->mu);
  while (!w->signalled)
    if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0) break;
  pthread_mutex_unlock(&w->mu);
  w->woke_after = now() - t0;
  atomic_store(&w->respond_status, ht_call_respond(w->call, false, S("\"too late\"")));
  return NULL;
}

/* Registers its cancellation callback, then waits on another thread. */
static void waiting_handler(void *ud, ht_call *call) {
  (void)ud;
  g_work.call = call;
  CHECK(!ht_call_is_cancelled(call));
  CHECK(ht_call_on_cancel(call, on_cancel, &g_work, free_work) == HT_STATUS_OK);
  pthread_t t;
  CHECK(pthread_create(&t, NULL, worker, &g_work) == 0);
  pthread_detach(t);
}

/* Answers at once after registering: the callback never runs, its free does. */
static void answering_handler(void *ud, ht_call *call) {
  (void)ud;
  g_work.call = call;
  CHECK(ht_call_on_cancel(call, on_cancel, &g_work, free_work) == HT_STATUS_OK);
  CHECK(atomic_load(&g_work.frees) == 0);
  CHECK(ht_call_respond(call, false, S("\"ok\"")) == HT_STATUS_OK);
  CHECK(atomic_load(&g_work.frees) == 1);
  CHECK(atomic_load(&g_work.cb_calls) == 0);
  CHECK(ht_call_is_cancelled(call)); /* no longer a waiting call */
  CHECK(ht_call_on_cancel(call, on_cancel, &g_work, free_work) == HT_STATUS_NOT_FOUND);
}

/* Keeps the call unanswered. */
static void parking_handler(void *ud, ht_call *call) {
  (void)ud;
  g_work.call = call;
}

static atomic_int done_calls;
static atomic_int done_status;
static char done_text[512];
static void on_done(void *ud, ht_status st, const char *text, size_t len) {
  (void)ud;
  size_t k = len < sizeof done_text - 1 ? len : sizeof done_text - 1;
  memcpy(done_text, text, k);
  done_text[k] = 0;
  atomic_store(&done_status, st);
  atomic_fetch_add(&done_calls, 1);
}

static void wait_answered(struct work *w) {
  for (int i = 0; i < 1000 && atomic_load(&w->respond_status) == -1; i++) usleep(10000);
  CHECK(atomic_load(&w->respond_status) != -1);
}

static void reg(ht_runtime *rt, const char *name, ht_tool_handler_fn h) {
  char spec[256];
  snprintf(spec, sizeof spec,
           "{\"name\":\"%s\",\"toolset\":\"t\",\"schema\":{\"description\":\"d\",\"parameters\":{\"type\":\"object\"}}}",
           name);
  ht_error *err = NULL;
  CHECK(ht_runtime_register_tool(rt, spec, strlen(spec), h, NULL, NULL, NULL, &err) == HT_STATUS_OK);
}

int main(void) {
  /* NULL and unknown handles. */
  CHECK(ht_call_is_cancelled(NULL));
  CHECK(ht_call_is_cancelled((ht_call *)(uintptr_t)12345));
  CHECK(ht_call_on_cancel(NULL, on_cancel, NULL, free_work) == HT_STATUS_INVALID_ARGUMENT);
  CHECK(ht_call_on_cancel((ht_call *)(uintptr_t)12345, NULL, NULL, NULL) == HT_STATUS_INVALID_ARGUMENT);
  work_reset(&g_work);
  CHECK(ht_call_on_cancel((ht_call *)(uintptr_t)12345, on_cancel, &g_work, free_work) == HT_STATUS_NOT_FOUND);
  CHECK(atomic_load(&g_work.frees) == 0 && atomic_load(&g_work.cb_calls) == 0);

  ht_runtime *rt = NULL;
  ht_error *err = NULL;
  CHECK(ht_runtime_new(S("{\"dispatch\":{\"timeout\":0.1}}"), &rt, &err) == HT_STATUS_OK);
  reg(rt, "waits", waiting_handler);
  reg(rt, "answers", answering_handler);

  /* 1. A synchronous call times out: the handler's worker is told at once. */
  work_reset(&g_work);
  char *out = NULL;
  size_t n = 0;
  CHECK(ht_runtime_dispatch(rt, S("waits"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strstr(out, "\"status\":\"timeout\"") != NULL);
  ht_string_free(out);
  wait_answered(&g_work);
  CHECK(g_work.woke_after < 6.0); /* told at once; 10 s when never told */
  CHECK(atomic_load(&g_work.cb_calls) == 1);
  CHECK(atomic_load(&g_work.frees) == 1);
  CHECK(atomic_load(&g_work.respond_status) == HT_STATUS_TIMEOUT);

  /* 2. An async call cancelled with ht_runtime_cancel: completion cancelled,
        worker told, late answer reported as cancelled (not timeout). */
  work_reset(&g_work);
  uint64_t id = 0;
  CHECK(ht_runtime_dispatch_async(rt, S("waits"), S("{}"), S("{\"timeout\":30}"), on_done, NULL, &id, &err) ==
        HT_STATUS_OK);
  for (int i = 0; i < 500 && g_work.call == NULL; i++) usleep(10000);
  CHECK(g_work.call != NULL);
  double t0 = now();
  CHECK(ht_runtime_cancel(rt, id, &err) == HT_STATUS_OK);
  wait_answered(&g_work);
  CHECK(now() - t0 < 6.0); /* told at once; 10 s when never told */
  for (int i = 0; i < 500 && atomic_load(&done_calls) == 0; i++) usleep(10000);
  CHECK(atomic_load(&done_calls) == 1);
  CHECK(atomic_load(&done_status) == HT_STATUS_CANCELLED);
  CHECK(strstr(done_text, "\"status\":\"cancelled\"") != NULL);
  CHECK(atomic_load(&g_work.cb_calls) == 1 && atomic_load(&g_work.frees) == 1);
  CHECK(atomic_load(&g_work.respond_status) == HT_STATUS_CANCELLED);
  /* The call is answered now, so it is unknown: no callback. */
  CHECK(ht_call_on_cancel(g_work.call, on_cancel, &g_work, free_work) == HT_STATUS_NOT_FOUND);

  /* 3. Answered before any cancellation: callback never runs, free once. */
  work_reset(&g_work);
  CHECK(ht_runtime_dispatch(rt, S("answers"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  CHECK(strcmp(out, "\"ok\"") == 0);
  ht_string_free(out);
  CHECK(atomic_load(&g_work.cb_calls) == 0 && atomic_load(&g_work.frees) == 1);

  /* 4. The runtime is freed with a call waiting: the worker is told. */
  work_reset(&g_work);
  atomic_store(&done_calls, 0);
  CHECK(ht_runtime_dispatch_async(rt, S("waits"), S("{}"), S("{\"timeout\":30}"), on_done, NULL, &id, &err) ==
        HT_STATUS_OK);
  for (int i = 0; i < 500 && g_work.call == NULL; i++) usleep(10000);
  CHECK(g_work.call != NULL);
  ht_call *parked = g_work.call;
  ht_runtime_free(rt);
  wait_answered(&g_work);
  CHECK(atomic_load(&g_work.cb_calls) == 1 && atomic_load(&g_work.frees) == 1);
  CHECK(atomic_load(&g_work.respond_status) == HT_STATUS_CANCELLED);
  CHECK(atomic_load(&done_status) == HT_STATUS_CANCELLED);
  (void)parked;

  /* 5. Already cancelled: a late registration runs the callback at once. Uses
        a call that timed out and was not answered yet. */
  CHECK(ht_runtime_new(S("{\"dispatch\":{\"timeout\":0.05}}"), &rt, &err) == HT_STATUS_OK);
  reg(rt, "parks", parking_handler);
  work_reset(&g_work);
  CHECK(ht_runtime_dispatch(rt, S("parks"), S("{}"), NULL, 0, &out, &n, &err) == HT_STATUS_OK);
  ht_string_free(out);
  CHECK(ht_call_is_cancelled(g_work.call));
  CHECK(ht_call_on_cancel(g_work.call, on_cancel, &g_work, free_work) == HT_STATUS_OK);
  CHECK(atomic_load(&g_work.cb_calls) == 1 && atomic_load(&g_work.frees) == 1);
  CHECK(ht_call_respond(g_work.call, false, S("\"late\"")) == HT_STATUS_TIMEOUT);
  ht_runtime_free(rt);
  printf("cancel: ok\n");
  return 0;
}
