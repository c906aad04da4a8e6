/* Built against an installed hermes-tools (tests/install/run.sh). */
#include <hermes_tools.h>

#include <stdio.h>
#include <string.h>

static void shout(void *ud, ht_call *call) {
  (void)ud;
  size_t n = 0;
  const char *args = ht_call_args_json(call, &n);
  ht_call_respond(call, false, args, n);
}

int main(int argc, char **argv) {
  const char *who = argc > 0 ? argv[0] : "?";
  if (ht_abi_version() != HT_ABI_VERSION) {
    fprintf(stderr, "%s: ABI mismatch: header %d, library %u\n", who, HT_ABI_VERSION, ht_abi_version());
    return 1;
  }
  ht_runtime *rt = NULL;
  ht_error *err = NULL;
  if (ht_runtime_new("{}", 2, &rt, &err) != HT_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", who, ht_error_message(err));
    ht_error_free(err);
    return 1;
  }
  const char *spec = "{\"name\":\"echo\",\"toolset\":\"install\",\"schema\":{\"description\":\"Echo\"}}";
  if (ht_runtime_register_tool(rt, spec, strlen(spec), shout, NULL, NULL, NULL, &err) != HT_STATUS_OK) {
    fprintf(stderr, "%s: %s\n", who, ht_error_message(err));
    ht_error_free(err);
    return 1;
  }
  char *out = NULL;
  size_t len = 0;
  const char *args = "{\"x\":1}";
  if (ht_runtime_dispatch(rt, "echo", 4, args, strlen(args), NULL, 0, &out, &len, &err) != HT_STATUS_OK ||
      strcmp(out, args) != 0) {
    fprintf(stderr, "%s: dispatch failed\n", who);
    return 1;
  }
  ht_string_free(out);
  ht_runtime_free(rt);
  printf("%s: ok (%s, C)\n", strrchr(who, '/') ? strrchr(who, '/') + 1 : who, ht_version());
  return 0;
}
