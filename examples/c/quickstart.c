/* Quickstart: a host that registers a tool, switches on the built-in
 * terminal, prints the schemas the model would see, dispatches one call, a
 * terminal command and a batch of model tool calls.
 * Build and run: make quickstart */
#include "hermes_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A host tool: {"city": "..."} -> a made-up forecast. Answers inline. */
static void weather(void *user_data, ht_call *call) {
  (void)user_data;
  size_t n = 0;
  const char *args = ht_call_args_json(call, &n);
  char out[256];
  int len = snprintf(out, sizeof out, "{\"forecast\":\"sunny\",\"args\":%.*s}", (int)n, args);
  ht_call_respond(call, false, out, (size_t)len);
}

static void die(const char *what, ht_error *err) {
  fprintf(stderr, "%s: %s\n", what, err ? ht_error_message(err) : "?");
  ht_error_free(err);
  exit(1);
}

int main(void) {
  if (ht_abi_version() != HT_ABI_VERSION) {
    fprintf(stderr, "hermes-tools ABI mismatch: header %d, library %u\n", HT_ABI_VERSION, ht_abi_version());
    return 1;
  }
  printf("%s\n", ht_version());

  ht_runtime *rt = NULL;
  ht_error *err = NULL;
  /* Built-in terminal on; commands are analysed before they run. */
  const char *config = "{\"builtin_toolsets\":[\"terminal\"]}";
  if (ht_runtime_new(config, strlen(config), &rt, &err) != HT_STATUS_OK) die("runtime", err);

  const char *spec =
      "{\"name\":\"get_weather\",\"toolset\":\"weather\",\"parallel_safe\":true,"
      "\"schema\":{\"description\":\"Weather forecast for a city\",\"parameters\":{\"type\":\"object\","
      "\"properties\":{\"city\":{\"type\":\"string\"},\"days\":{\"type\":\"integer\",\"minimum\":1}},"
      "\"required\":[\"city\"]}}}";
  if (ht_runtime_register_tool(rt, spec, strlen(spec), weather, NULL, NULL, NULL, &err) != HT_STATUS_OK)
    die("register", err);

  char *out = NULL;
  size_t len = 0;
  if (ht_runtime_definitions_json(rt, NULL, 0, &out, &len, &err) != HT_STATUS_OK) die("definitions", err);
  printf("schemas: %.300s...\n", out);
  ht_string_free(out);

  /* "3" is repaired to 3 because the schema says integer. */
  const char *args = "{\"city\":\"Lisbon\",\"days\":\"3\"}";
  if (ht_runtime_dispatch(rt, "get_weather", 11, args, strlen(args), NULL, 0, &out, &len, &err) != HT_STATUS_OK)
    die("dispatch", err);
  printf("dispatch: %s\n", out);
  ht_string_free(out);

  const char *cmd = "{\"command\":\"echo hello from the terminal && uname -s\"}";
  if (ht_runtime_dispatch(rt, "terminal", 8, cmd, strlen(cmd), NULL, 0, &out, &len, &err) != HT_STATUS_OK)
    die("terminal", err);
  printf("terminal: %s\n", out);
  ht_string_free(out);

  const char *calls =
      "[{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
      "\"arguments\":\"{\\\"city\\\":\\\"Oslo\\\"}\"}},"
      "{\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
      "\"arguments\":\"{\\\"days\\\":2}\"}},"
      "{\"id\":\"call_3\",\"type\":\"function\",\"function\":{\"name\":\"get_wether\",\"arguments\":\"{}\"}}]";
  if (ht_runtime_dispatch_batch(rt, calls, strlen(calls), NULL, 0, &out, &len, &err) != HT_STATUS_OK)
    die("batch", err);
  printf("batch: %s\n", out);
  ht_string_free(out);

  ht_runtime_free(rt);
  return 0;
}
