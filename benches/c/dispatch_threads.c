/* Dispatch throughput as a host sees it (issue 36): threads started by the
 * host, the C ABI, one trivial tool answering inline, each result string
 * freed by the host; 1, 2, 4 and 8 threads in one run.
 *   make bench-threads            (release library; N calls per thread: BENCH_N)
 */
#include <hermes_tools.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static ht_runtime *rt;
static long per_thread = 300000;
static void echo(void *ud, ht_call *call) { (void)ud; ht_call_respond(call, false, "{\"ok\":1}", 8); }
static void *work(void *arg) {
  (void)arg;
  for (long i = 0; i < per_thread; i++) {
    char *out = NULL; size_t len = 0; ht_error *err = NULL;
    if (ht_runtime_dispatch(rt, "echo", 4, "{}", 2, NULL, 0, &out, &len, &err) != HT_STATUS_OK) { fprintf(stderr, "fail\n"); exit(1); }
    ht_string_free(out);
  }
  return NULL;
}
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
  if (argc > 1) per_thread = atol(argv[1]);
  ht_error *err = NULL;
  if (ht_runtime_new("{}", 2, &rt, &err) != HT_STATUS_OK) return 1;
  const char *spec = "{\"name\":\"echo\",\"toolset\":\"b\",\"schema\":{\"description\":\"e\",\"parameters\":{\"type\":\"object\"}}}";
  if (ht_runtime_register_tool(rt, spec, strlen(spec), echo, NULL, NULL, NULL, &err) != HT_STATUS_OK) return 1;
  work(NULL);
  double base = 0;
  int ns[] = {1, 2, 4, 8};
  for (int k = 0; k < 4; k++) {
    int n = ns[k]; pthread_t t[8];
    double t0 = now();
    for (int i = 0; i < n; i++) pthread_create(&t[i], NULL, work, NULL);
    for (int i = 0; i < n; i++) pthread_join(t[i], NULL);
    double rate = n * per_thread / (now() - t0);
    if (n == 1) base = rate;
    printf("%d threads: %.0f calls/s (%.2fx one thread)\n", n, rate, rate / base);
  }
  ht_runtime_free(rt);
  return 0;
}
