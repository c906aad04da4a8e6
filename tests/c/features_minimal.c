/* The minimal library (cargo build -p hermes-tools --no-default-features):
 * no MCP client, no MCP server, no HTTPS, no PTY, no modal backend. It keeps every C function,
 * says what it lacks in ht_features(), and refuses what needs a missing
 * feature with a message naming it; the rest works (make test-features). */
#include <hermes_tools.h>

#include <stdio.h>
#include <string.h>

static int failures = 0;
#define CHECK(cond)                                                  \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                    \
    }                                                                \
  } while (0)

static int fails_naming(ht_status st, ht_error *err, const char *feature) {
  int ok = st != HT_STATUS_OK && err != NULL && strstr(ht_error_message(err), feature) != NULL;
  if (!ok) fprintf(stderr, "expected an error naming %s, got status %d: %s\n", feature, (int)st,
                   err ? ht_error_message(err) : "(no error)");
  ht_error_free(err);
  return ok;
}

int main(void) {
  const char *f = ht_features();
  CHECK(strstr(f, "\"mcp-client\":false") != NULL);
  CHECK(strstr(f, "\"mcp-server\":false") != NULL);
  CHECK(strstr(f, "\"https\":false") != NULL);
  CHECK(strstr(f, "\"pty\":false") != NULL);
  CHECK(strstr(f, "\"modal\":false") != NULL);

  ht_runtime *rt = NULL;
  ht_error *err = NULL;
  const char *with_mcp = "{\"mcp_servers\":{\"x\":{\"command\":\"true\"}}}";
  ht_status st = ht_runtime_new(with_mcp, strlen(with_mcp), &rt, &err);
  CHECK(fails_naming(st, err, "mcp-client"));

  const char *with_modal = "{\"builtin_toolsets\":[\"terminal\"],\"terminal\":{\"backend\":\"modal\"}}";
  err = NULL;
  st = ht_runtime_new(with_modal, strlen(with_modal), &rt, &err);
  CHECK(fails_naming(st, err, "Cargo feature `modal`"));

  const char *cfg = "{\"builtin_toolsets\":[\"terminal\"],\"terminal\":{\"backend\":\"local\"},"
                    "\"approvals\":{\"mode\":\"off\"}}";
  err = NULL;
  CHECK(ht_runtime_new(cfg, strlen(cfg), &rt, &err) == HT_STATUS_OK);
  if (rt == NULL) return 1;

  /* The terminal works; a PTY command says which feature it needs. */
  char *out = NULL;
  size_t len = 0;
  const char *args = "{\"command\":\"echo minimal\"}";
  CHECK(ht_runtime_dispatch(rt, "terminal", 8, args, strlen(args), NULL, 0, &out, &len, &err) == HT_STATUS_OK);
  CHECK(out && strstr(out, "minimal") != NULL);
  ht_string_free(out);
  out = NULL;
  const char *pty = "{\"command\":\"echo x\",\"pty\":true}";
  CHECK(ht_runtime_dispatch(rt, "terminal", 8, pty, strlen(pty), NULL, 0, &out, &len, &err) == HT_STATUS_OK);
  CHECK(out && strstr(out, "Cargo feature `pty`") != NULL);
  ht_string_free(out);

  /* Serving MCP is refused, naming the feature. */
  ht_mcp_server *srv = NULL;
  err = NULL;
  st = ht_runtime_serve_mcp(rt, "{\"transport\":\"http\"}", 20, &srv, &err);
  CHECK(fails_naming(st, err, "mcp-server"));

  ht_runtime_free(rt);
  if (failures == 0) printf("features_minimal: ok\n");
  return failures != 0;
}
