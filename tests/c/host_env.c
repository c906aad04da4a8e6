/* C contract test for host-defined environments (ht_environment_*,
 * ht_exec_*, ht_runtime_new_with_environments): a C host whose provider runs
 * each command as a local bash child in its own process group, streams its
 * output from a thread, and kills the group when asked. Without a files
 * callback the file tools run through spawn (stdin-fed scripts). Checks:
 * NULL arguments, one spawn per terminal command, the task's state kept,
 * a timeout reaching kill, the free function exactly once, after both the
 * handle and the runtime are gone. */
#include "hermes_tools.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)
#define S(lit) lit, strlen(lit)

extern char **environ;

struct provider {
  atomic_int spawns;
  atomic_int terminal_spawns;
  atomic_int kills;
  atomic_int frees;
  atomic_int cleanups;
  pthread_mutex_t mu;
  uint64_t ids[64];
  pid_t pids[64];
  int n;
};

struct job {
  struct provider *p;
  ht_exec *exec;
  pid_t pid;
  int out_fd, err_fd;
};

/* The script: the last element of "argv" in the request JSON, unescaped
 * enough for this test (the library's scripts use \n, \" and \\). */
static char *script_of(const char *json, size_t len) {
  const char *key = "\"-c\",\"";
  const char *at = strstr(json, key);
  CHECK(at != NULL);
  at += strlen(key);
  char *out = malloc(len + 1);
  size_t o = 0;
  for (const char *c = at; c < json + len && *c != '"'; c++) {
    if (*c == '\\') {
      c++;
      switch (*c) {
      case 'n': out[o++] = '\n'; break;
      case 't': out[o++] = '\t'; break;
      case 'r': out[o++] = '\r'; break;
      case 'b': out[o++] = '\b'; break;
      case 'f': out[o++] = '\f'; break;
      case 'u': { /* \u00XX: control characters */
        unsigned v = 0;
        sscanf(c + 1, "%4x", &v);
        out[o++] = (char)v;
        c += 4;
        break;
      }
      default: out[o++] = *c;
      }
    } else {
      out[o++] = *c;
    }
  }
  out[o] = 0;
  return out;
}

static uint64_t id_of(const char *json) {
  const char *at = strstr(json, "\"id\":");
  CHECK(at != NULL);
  return strtoull(at + 5, NULL, 10);
}

static void *pump(void *arg) {
  struct job *j = arg;
  char buf[4096];
  ssize_t n;
  while ((n = read(j->out_fd, buf, sizeof buf)) > 0) {
    if (ht_exec_output(j->exec, 1, (const uint8_t *)buf, (size_t)n) != HT_STATUS_OK) break;
  }
  while ((n = read(j->err_fd, buf, sizeof buf)) > 0) {
    ht_exec_output(j->exec, 2, (const uint8_t *)buf, (size_t)n);
  }
  int st = 0;
  waitpid(j->pid, &st, 0);
  int code = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
  CHECK(ht_exec_finish(j->exec, code, NULL, 0) == HT_STATUS_OK);
  /* answered: gone */
  CHECK(ht_exec_finish(j->exec, 0, NULL, 0) == HT_STATUS_NOT_FOUND);
  close(j->out_fd);
  close(j->err_fd);
  free(j);
  return NULL;
}

static void on_spawn(void *ud, ht_exec *exec) {
  struct provider *p = ud;
  atomic_fetch_add(&p->spawns, 1);
  size_t len = 0;
  const char *json = ht_exec_request_json(exec, &len);
  CHECK(json != NULL && len > 0);
  if (strstr(json, "\"capture\":false")) atomic_fetch_add(&p->terminal_spawns, 1);
  char *script = script_of(json, len);
  size_t in_len = 0;
  const uint8_t *in = ht_exec_stdin(exec, &in_len);
  CHECK(in != NULL);

  int out[2], err[2], inp[2];
  CHECK(pipe(out) == 0 && pipe(err) == 0 && pipe(inp) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addclose(&fa, inp[1]);
  posix_spawn_file_actions_addclose(&fa, out[0]);
  posix_spawn_file_actions_addclose(&fa, err[0]);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&at, 0);
  char *argv[] = {"bash", "-c", script, NULL};
  pid_t pid;
  CHECK(posix_spawnp(&pid, "bash", &fa, &at, argv, environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(inp[0]);
  close(out[1]);
  close(err[1]);
  if (in_len > 0) CHECK(write(inp[1], in, in_len) == (ssize_t)in_len);
  close(inp[1]);
  free(script);

  pthread_mutex_lock(&p->mu);
  if (p->n < 64) {
    p->ids[p->n] = id_of(json);
    p->pids[p->n] = pid;
    p->n++;
  }
  pthread_mutex_unlock(&p->mu);

  struct job *j = calloc(1, sizeof *j);
  j->p = p;
  j->exec = exec;
  j->pid = pid;
  j->out_fd = out[0];
  j->err_fd = err[0];
  pthread_t t;
  CHECK(pthread_create(&t, NULL, pump, j) == 0);
  pthread_detach(t);
}

static void on_kill(void *ud, uint64_t id, int32_t sig) {
  struct provider *p = ud;
  atomic_fetch_add(&p->kills, 1);
  pthread_mutex_lock(&p->mu);
  for (int i = 0; i < p->n; i++)
    if (p->ids[i] == id) kill(-p->pids[i], sig);
  pthread_mutex_unlock(&p->mu);
}

static void on_cleanup(void *ud, const char *task, size_t len) {
  (void)task;
  (void)len;
  atomic_fetch_add(&((struct provider *)ud)->cleanups, 1);
}

static void on_free(void *ud) { atomic_fetch_add(&((struct provider *)ud)->frees, 1); }

static char *dispatch(ht_runtime *rt, const char *args) {
  char *out = NULL;
  size_t len = 0;
  ht_error *err = NULL;
  CHECK(ht_runtime_dispatch(rt, S("terminal"), args, strlen(args), S("{\"task_id\":\"c1\"}"), &out,
                            &len, &err) == HT_STATUS_OK);
  return out;
}

int main(void) {
  static struct provider p;
  pthread_mutex_init(&p.mu, NULL);
  ht_environment *env = NULL;
  ht_error *err = NULL;

  /* NULL spawn / out_env: refused, user data never freed */
  CHECK(ht_environment_new(S("{\"name\":\"c-sub\"}"), NULL, on_kill, NULL, NULL, &p, on_free, &env,
                           &err) == HT_STATUS_INVALID_ARGUMENT);
  CHECK(err != NULL && ht_error_message(err) != NULL);
  ht_error_free(err);
  err = NULL;
  CHECK(ht_environment_new(S("{\"name\":\"c-sub\"}"), on_spawn, on_kill, NULL, NULL, &p, on_free,
                           NULL, NULL) == HT_STATUS_INVALID_ARGUMENT);
  CHECK(ht_environment_new(S("{\"name\":\"local\"}"), on_spawn, on_kill, NULL, NULL, &p, on_free,
                           &env, NULL) == HT_STATUS_INVALID_ARGUMENT);
  CHECK(atomic_load(&p.frees) == 0);
  ht_environment_free(NULL);

  CHECK(ht_environment_new(S("{\"name\":\"c-sub\"}"), on_spawn, on_kill, NULL, on_cleanup, &p,
                           on_free, &env, &err) == HT_STATUS_OK);
  CHECK(env != NULL && err == NULL);
  char cwd[] = "/tmp/ht-host-env-c-XXXXXX";
  CHECK(mkdtemp(cwd) != NULL);
  char cfg[512];
  snprintf(cfg, sizeof cfg,
           "{\"builtin_toolsets\":[\"terminal\",\"file\"],"
           "\"terminal\":{\"backend\":\"c-sub\",\"cwd\":\"%s\",\"kill_grace\":0.5}}",
           cwd);
  ht_runtime *rt = NULL;
  const ht_environment *envs[] = {env};
  CHECK(ht_runtime_new_with_environments(cfg, strlen(cfg), envs, 1, &rt, &err) == HT_STATUS_OK);
  ht_environment_free(env); /* the runtime keeps it */
  CHECK(atomic_load(&p.frees) == 0);

  int before = atomic_load(&p.terminal_spawns);
  char *out = dispatch(rt, "{\"command\":\"echo hi from c\"}");
  CHECK(strstr(out, "\"output\":\"hi from c\"") != NULL);
  ht_string_free(out);
  CHECK(atomic_load(&p.terminal_spawns) - before == 1);

  out = dispatch(rt, "{\"command\":\"mkdir -p d && cd d && export CV=5\"}");
  ht_string_free(out);
  out = dispatch(rt, "{\"command\":\"basename $(pwd); echo $CV\"}");
  CHECK(strstr(out, "\"output\":\"d\\n5\"") != NULL);
  ht_string_free(out);

  /* a file write without a files callback: a stdin-fed script through spawn */
  char args[512];
  snprintf(args, sizeof args, "{\"path\":\"%s/f.txt\",\"content\":\"from c\"}", cwd);
  CHECK(ht_runtime_dispatch(rt, S("write_file"), args, strlen(args), NULL, 0, &out, NULL, &err) ==
        HT_STATUS_OK);
  CHECK(strstr(out, "\"bytes_written\":6") != NULL);
  ht_string_free(out);
  char path[256];
  snprintf(path, sizeof path, "%s/f.txt", cwd);
  FILE *f = fopen(path, "r");
  CHECK(f != NULL);
  char got[16] = {0};
  CHECK(fread(got, 1, sizeof got - 1, f) == 6 && strcmp(got, "from c") == 0);
  fclose(f);

  /* a timeout reaches kill */
  out = dispatch(rt, "{\"command\":\"echo a; sleep 30\",\"timeout\":1}");
  CHECK(strstr(out, "\"output\":\"a") != NULL);
  ht_string_free(out);
  CHECK(atomic_load(&p.kills) >= 1);

  ht_runtime_free(rt);
  CHECK(atomic_load(&p.cleanups) >= 1);
  /* the free function runs once, after the handle and the runtime */
  for (int i = 0; i < 500 && atomic_load(&p.frees) == 0; i++) usleep(10000);
  CHECK(atomic_load(&p.frees) == 1);
  /* late answers to unknown objects are harmless */
  CHECK(ht_exec_finish((ht_exec *)(uintptr_t)0xfeed, 0, NULL, 0) == HT_STATUS_NOT_FOUND);
  unlink(path);
  char d[300];
  snprintf(d, sizeof d, "%s/d", cwd);
  rmdir(d);
  rmdir(cwd);
  printf("host_env: ok\n");
  return 0;
}
