/* An example hermes-tools plugin: one tool, "plugin_hello" in toolset
 * "hello-plugin", that greets {"name": "..."}. It links against nothing: it
 * registers and answers through the function table its init receives.
 * Build: make example-plugin (build/plugins/libhello_plugin.so), then list it
 * in the runtime config: {"plugins": ["build/plugins/libhello_plugin.so"]}.
 *
 * -DHELLO_FAIL makes init fail and -DHELLO_ABI=N declares another ABI: the
 * tests use them to check that such a plugin is refused. */
#include "hermes_tools.h"

#include <stdio.h>
#include <string.h>

#ifdef HELLO_ABI
HT_PLUGIN_EXPORT const uint32_t ht_plugin_abi_version = HELLO_ABI;
#else
HT_PLUGIN_DECLARE_ABI;
#endif

/* Copied at init: the table itself is borrowed for the init call only. */
static ht_plugin_host host;

static void hello(void *user_data, ht_call *call) {
  (void)user_data;
  size_t n = 0;
  const char *args = host.call_args_json(call, &n);
  char out[512];
  int len = snprintf(out, sizeof out, "{\"greeting\":\"hello from a plugin\",\"args\":%.*s}",
                     (int)(n < 400 ? n : 400), args ? args : "{}");
  host.call_respond(call, false, out, (size_t)len);
}

HT_PLUGIN_EXPORT ht_status ht_plugin_init(const ht_plugin_host *h, char *err_buf, size_t err_cap) {
  if (h->abi_version != HT_PLUGIN_ABI_VERSION || h->struct_size < sizeof host) {
    snprintf(err_buf, err_cap, "host table too old");
    return HT_STATUS_UNSUPPORTED;
  }
  memcpy(&host, h, sizeof host);
#ifdef HELLO_FAIL
  snprintf(err_buf, err_cap, "hello plugin: refusing to start (HELLO_FAIL)");
  return HT_STATUS_INTERNAL;
#endif
  const char *spec =
      "{\"name\":\"plugin_hello\",\"toolset\":\"hello-plugin\","
      "\"schema\":{\"description\":\"Greets someone (from a C plugin)\",\"parameters\":{"
      "\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}}}";
  ht_error *err = NULL;
  ht_status st = h->register_tool(h->runtime, spec, strlen(spec), hello, NULL, NULL, NULL, &err);
  if (st != HT_STATUS_OK) {
    snprintf(err_buf, err_cap, "register plugin_hello: %s", err ? h->error_message(err) : "?");
    h->error_free(err);
    return st;
  }
  return HT_STATUS_OK;
}
