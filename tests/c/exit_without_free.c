/* A C host that starts a command and then ends without ht_runtime_free:
 * exit() (atexit handlers only), or SIGKILL. Run by
 * tests/integration/c_api.rs, which checks that the command, and a child it
 * double-forked out of its session with an empty environment, are gone
 * within a second (the process shim watches the host).
 *
 *   exit_without_free exit|kill TAG SCRIPT
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hermes_tools.h"

static void done(void *user_data, ht_status status, const char *result, size_t len) {
  (void)user_data;
  (void)status;
  (void)result;
  (void)len;
}

int main(int argc, char **argv) {
  if (argc != 4) return 2;
  const char *config = "{\"builtin_toolsets\":[\"terminal\"],\"terminal\":{\"backend\":\"local\"}}";
  ht_runtime *rt = NULL;
  ht_error *err = NULL;
  if (ht_runtime_new(config, strlen(config), &rt, &err) != HT_STATUS_OK) return 3;
  char args[4096];
  snprintf(args, sizeof args, "{\"command\":\"python3 %s\"}", argv[3]);
  uint64_t id = 0;
  if (ht_runtime_dispatch_async(rt, "terminal", 8, args, strlen(args), NULL, 0, done, NULL, &id,
                                &err) != HT_STATUS_OK)
    return 4;
  printf("started\n");
  fflush(stdout);
  char line[16];
  if (!fgets(line, sizeof line, stdin)) return 5;
  if (strcmp(argv[1], "kill") == 0) kill(getpid(), SIGKILL);
  exit(0); /* no ht_runtime_free */
}
