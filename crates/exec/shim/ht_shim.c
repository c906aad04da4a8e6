/*
 * ht-shim: the owner of one command's process tree (hermes-tools).
 *
 *   ht-shim [-l] PROGRAM ARGS...
 *   ht-shim -w PROGRAM ARGS...
 *
 * The runtime starts every command (and every MCP stdio server) through this
 * program instead of starting it directly. The shim:
 *
 *  - becomes a child subreaper (PR_SET_CHILD_SUBREAPER), so every descendant
 *    of the command that is orphaned (a double fork, `setsid`, `nohup ... &`,
 *    a process that cleared its environment) is reparented to the shim, not to
 *    init, and stays findable as a descendant;
 *  - watches its parent (the host process) through a pidfd: when the host
 *    dies, by any signal or an exit without cleanup, the shim kills the whole
 *    tree and exits, so nothing outlives the host;
 *  - when the command itself ends, kills whatever it left behind and exits
 *    with the command's status (or dies by the same signal), so the host sees
 *    the command's own result.
 *
 * -w (watch): run nothing now; when the host dies, run PROGRAM ARGS (a
 *    cleanup the host can no longer do itself: remove its containers). A
 *    termination signal (the host's own orderly cleanup) ends the watcher
 *    without running it. It leaves the host's session, so a Ctrl-C aimed at
 *    the host's terminal does not end it.
 *
 * -l (linger, for background processes): when the command ends, keep what it
 *    left behind (a launcher that started a server) and exit with the
 *    command's status once the last of them has ended; the host's death
 *    still kills them all.
 *
 * -L [-W DIR]... [-D DIR]... (Landlock, used inside the sandbox): the command
 *    runs in a Landlock domain where the whole file system is read-only
 *    (read, list, execute), each -W DIR is writable and each -D DIR allows
 *    writing and ioctls on existing files (devices) but no creation; where
 *    the kernel offers scoping (ABI 6), the command can neither send
 *    signals to nor connect to abstract unix sockets of processes outside
 *    its domain (the shim, the host). It is applied in the command's
 *    process after the fork, so the shim itself stays outside the domain
 *    and out of the command's reach. A kernel without Landlock runs the
 *    command without it (bubblewrap's mounts still hold); a kernel that has
 *    it but refuses the ruleset stops the command (exit 126): fail closed.
 *
 * -e (exec, with -L): apply the rules, then become the command (no fork,
 *    no supervision): for a foreground sandboxed command, whose bubblewrap
 *    PID namespace already holds its whole tree.
 *
 * -T [-A DIR]... (trampoline, the sandbox's PTY path, whose spawner closes
 *    every descriptor): each argument `@O:PATH` is opened here (O_PATH,
 *    O_NOFOLLOW), checked through its descriptor to lie in one of the -A
 *    folders and not to be a symlink, and replaced by the descriptor's
 *    number; `@R:PATH` is opened for reading (a regular file); then the
 *    shim becomes PROGRAM (bubblewrap, `--ro-bind-fd N DEST`, `--seccomp
 *    N`). What bwrap binds is what was checked: a swap of the path for a
 *    symlink after the check changes nothing. Any failure stops (126).
 *
 * -K (keep descriptors): the program is bubblewrap, handed descriptors it
 *    needs (the seccomp program) and passing the rest to the shim inside,
 *    which closes them. Without -K the shim closes every descriptor above
 *    stderr before the command starts (see close_inherited).
 *
 * -P PORT:SOCKET (the sandbox's network proxy): before anything else, listen
 *    on 127.0.0.1:PORT (inside the sandbox's own network namespace) and hand
 *    the listening socket to the proxy at the Unix socket SOCKET, which then
 *    accepts the sandbox's connections itself. A detached keeper (double
 *    fork: no part of the command's tree, outside its Landlock domain, so
 *    the command cannot signal it) holds the proxy connection open until
 *    the sandbox's PID namespace ends; the proxy then lets the listener go.
 *
 * The shim does not die of the termination signals: one sent to it by a
 * process is passed on to the command, and the shim ends when the command
 * does. Only SIGKILL ends the shim early; the runtime sends that to the whole
 * tree at once (found through the shim, its subreaper root), and the
 * command has a parent-death signal should the shim go first.
 *
 * Plain C with no allocation after start: it is small, has no dependencies
 * and is compiled by crates/exec/build.rs, embedded in the library and
 * written to a private file once per process (see supervisor.rs).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

static pid_t self_pid;

/* Send SIGKILL to every child of the shim; return how many were signalled. */
static int kill_children(void) {
    char path[64];
    int n = 0;
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)self_pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[8192];
        ssize_t len = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (len >= 0) {
            buf[len] = 0;
            char *p = buf;
            while (*p) {
                char *end;
                long pid = strtol(p, &end, 10);
                if (end == p) break;
                if (pid > 1) {
                    kill((pid_t)pid, SIGKILL);
                    n++;
                }
                p = end;
                while (*p == ' ' || *p == '\n') p++;
            }
            if ((size_t)len < sizeof buf - 1) return n;
        }
    }
    /* No children file (or more than fits): scan /proc for our children. */
    DIR *d = opendir("/proc");
    if (!d) return n;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 1) continue;
        char stat[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        int sfd = open(path, O_RDONLY | O_CLOEXEC);
        if (sfd < 0) continue;
        ssize_t len = read(sfd, stat, sizeof stat - 1);
        close(sfd);
        if (len <= 0) continue;
        stat[len] = 0;
        char *rp = strrchr(stat, ')');
        if (!rp) continue;
        char st;
        int ppid;
        if (sscanf(rp + 1, " %c %d", &st, &ppid) == 2 && ppid == self_pid) {
            kill((pid_t)pid, SIGKILL);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* Kill the whole tree below the shim and reap it (orphans of killed processes
 * are reparented to the shim and killed in the next round). */
static void kill_everything(void) {
    for (int rounds = 0; rounds < 100000; rounds++) {
        kill_children();
        pid_t w = waitpid(-1, NULL, 0);
        if (w < 0 && errno == ECHILD) return;
    }
}

static void exit_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
        signal(sig, SIG_DFL);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        kill(self_pid, sig);
        _exit(128 + sig);
    }
    _exit(1);
}

/* -w: wait for the host's death, then run `cmd` in its place. */
static int watch(char **cmd) {
    pid_t parent = getppid();
    int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
    setsid();
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGQUIT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    int sfd = signalfd(-1, &set, SFD_CLOEXEC);
    if (pidfd < 0 || sfd < 0 || getppid() != parent) {
        /* No watch possible (or the host is already gone): clean up now. */
        if (getppid() != parent) execvp(cmd[0], cmd);
        return 0;
    }
    struct pollfd fds[2] = {{pidfd, POLLIN, 0}, {sfd, POLLIN, 0}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR) return 1;
        if (fds[1].revents & POLLIN) return 0;
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            sigprocmask(SIG_UNBLOCK, &set, NULL);
            close(sfd);
            close(pidfd);
            execvp(cmd[0], cmd);
            _exit(127);
        }
    }
}

/* ---- Landlock (defined here: the build machine's headers may predate it) */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_EXECUTE (1ULL << 0)
#define LL_WRITE_FILE (1ULL << 1)
#define LL_READ_FILE (1ULL << 2)
#define LL_READ_DIR (1ULL << 3)
#define LL_TRUNCATE (1ULL << 14)
#define LL_IOCTL_DEV (1ULL << 15)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

struct ll_ruleset_attr {
    unsigned long long handled_access_fs;
    unsigned long long handled_access_net;
    unsigned long long scoped;
};

struct ll_path_beneath_attr {
    unsigned long long allowed_access;
    int parent_fd;
} __attribute__((packed));

#define MAX_DIRS 64
static const char *ll_write_dirs[MAX_DIRS];
static int ll_nwrite;
static const char *ll_dev_dirs[MAX_DIRS];
static int ll_ndev;

static int ll_rule(int ruleset, const char *path, unsigned long long access) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1; /* a missing dir is no loss */
    struct ll_path_beneath_attr pb = {.allowed_access = access, .parent_fd = fd};
    long r = syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
    int saved = errno;
    close(fd);
    errno = saved;
    return r < 0 ? -1 : 0;
}

/* Restrict the calling process as -L describes; 0 on success or when the
 * kernel has no Landlock, -1 (errno set, message printed) otherwise. */
static int apply_landlock(void) {
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    if (abi < 1) return 0; /* not built in or disabled: the mounts still hold */
    /* Every file-system right of the ABI: ABI 1 has bits 0-12, 2 adds
     * REFER (13), 3 TRUNCATE (14), 5 IOCTL_DEV (15). */
    unsigned long long all = (1ULL << 13) - 1;
    if (abi >= 2) all |= 1ULL << 13;
    if (abi >= 3) all |= LL_TRUNCATE;
    if (abi >= 5) all |= LL_IOCTL_DEV;
    struct ll_ruleset_attr attr = {.handled_access_fs = all};
    size_t size = sizeof attr - sizeof attr.scoped;
    if (abi >= 6) {
        attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
        size = sizeof attr;
    }
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    if (rs < 0) goto fail;
    unsigned long long ro = LL_READ_FILE | LL_READ_DIR | LL_EXECUTE;
    unsigned long long dev = (ro | LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV) & all;
    if (ll_rule(rs, "/", ro) < 0) goto fail_rs;
    /* Files under /proc/self (oom_score_adj, comm): /proc/sys is bound read-only. */
    if (ll_rule(rs, "/proc", ro | LL_WRITE_FILE) < 0) goto fail_rs;
    for (int i = 0; i < ll_ndev; i++)
        if (ll_rule(rs, ll_dev_dirs[i], dev) < 0) goto fail_rs;
    for (int i = 0; i < ll_nwrite; i++)
        if (ll_rule(rs, ll_write_dirs[i], all) < 0) goto fail_rs;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) goto fail_rs;
    if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) goto fail_rs;
    close(rs);
    return 0;
fail_rs:;
    int saved = errno;
    close(rs);
    errno = saved;
fail:
    fprintf(stderr, "ht-shim: cannot apply the sandbox's Landlock rules: %s\n", strerror(errno));
    return -1;
}


/* ---- the network proxy's listener (-P) */

/* -P PORT:SOCKET: listen on 127.0.0.1:PORT in the sandbox's own network
 * namespace, hand the listening socket to the proxy over the Unix socket
 * SOCKET (SCM_RIGHTS, with the one byte 'L'), and leave behind a detached
 * keeper that holds that connection open for the sandbox's life: the proxy
 * accepts the sandbox's connections itself (no copy in between) and stops
 * when the keeper's connection ends. Done before the command starts, so
 * the command never races it. 0 on success. */
static int start_forwarder(const char *spec) {
    char *end;
    long port = strtol(spec, &end, 10);
    if (port <= 0 || port > 65535 || *end != ':' || strlen(end + 1) == 0 ||
        strlen(end + 1) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fprintf(stderr, "ht-shim: -P wants PORT:SOCKET, got '%s'\n", spec);
        return -1;
    }
    const char *path = end + 1;
    int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (ls < 0 || setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) < 0 ||
        bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 512) < 0) {
        fprintf(stderr, "ht-shim: cannot listen on 127.0.0.1:%ld for the network proxy: %s\n", port, strerror(errno));
        return -1;
    }
    int up = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un ua = {.sun_family = AF_UNIX};
    strncpy(ua.sun_path, path, sizeof ua.sun_path - 1);
    if (up < 0 || connect(up, (struct sockaddr *)&ua, sizeof ua) < 0) {
        fprintf(stderr, "ht-shim: cannot reach the network proxy at %s: %s\n", path, strerror(errno));
        return -1;
    }
    char tag = 'L';
    struct iovec iov = {.iov_base = &tag, .iov_len = 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &ls, sizeof(int));
    ssize_t sent;
    while ((sent = sendmsg(up, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    if (sent != 1) {
        fprintf(stderr, "ht-shim: cannot hand the listener to the network proxy: %s\n", strerror(errno));
        return -1;
    }
    close(ls);
    pid_t mid = fork();
    if (mid < 0) return -1;
    if (mid == 0) {
        if (fork() != 0) _exit(0);
        /* The keeper: no terminal, no output pipe held open; it ends with
         * the sandbox's PID namespace (or when the proxy goes). */
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        setsid();
        signal(SIGHUP, SIG_IGN);
        char b;
        for (;;) {
            ssize_t r = read(up, &b, 1);
            if (r == 0 || (r < 0 && errno != EINTR)) break;
        }
        _exit(0);
    }
    close(up);
    while (waitpid(mid, NULL, 0) < 0 && errno == EINTR) {
    }
    return 0;
}

/* Close every descriptor above stderr before the command starts: the host
 * process may hold descriptors without close-on-exec (a C host's plain
 * open(), what its own launcher left it: `7</etc/shadow`, a connected
 * socket), and bubblewrap and the shim pass them on. A command gets stdin,
 * stdout and stderr, nothing else, on every backend: no file, socket or
 * directory of the host reaches it past the sandbox's mounts, network and
 * approval. */
static void close_inherited(void) {
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
    if (syscall(SYS_close_range, 3U, ~0U, 0U) == 0) return;
    struct rlimit r;
    long max = getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? (long)r.rlim_cur : 65536;
    for (long fd = 3; fd < max; fd++) close((int)fd);
}

#define MAX_AREAS 64
static const char *areas[MAX_AREAS];
static int nareas = 0;

/* Whether `real` is one of the -A folders or lies below one. */
static int in_area(const char *real) {
    for (int i = 0; i < nareas; i++) {
        size_t n = strlen(areas[i]);
        if (strncmp(real, areas[i], n) == 0 && (real[n] == '\0' || real[n] == '/')) return 1;
    }
    return 0;
}

/* -T: open the `@O:`/`@R:` arguments (see the top), then become argv[0]. */
static int trampoline(char **args) {
    for (int i = 1; args[i]; i++) {
        int path_only = strncmp(args[i], "@O:", 3) == 0;
        int readable = strncmp(args[i], "@R:", 3) == 0;
        if (!path_only && !readable) continue;
        const char *p = args[i] + 3;
        int fd = open(p, (path_only ? O_PATH : O_RDONLY) | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
            fprintf(stderr, "ht-shim: cannot open %s: %s\n", p, strerror(errno));
            return 126;
        }
        if (S_ISLNK(st.st_mode) || (readable && !S_ISREG(st.st_mode))) {
            fprintf(stderr, "ht-shim: %s changed under the sandbox's start (a symlink now): refused\n", p);
            return 126;
        }
        if (path_only) {
            char link[64], real[4096];
            snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
            ssize_t n = readlink(link, real, sizeof real - 1);
            if (n <= 0) return 126;
            real[n] = '\0';
            if (!in_area(real)) {
                fprintf(stderr, "ht-shim: %s is %s now, outside the sandbox's writable folders: refused\n", p, real);
                return 126;
            }
        }
        char *num = malloc(16);
        if (!num) return 126;
        snprintf(num, 16, "%d", fd);
        args[i] = num;
    }
    execvp(args[0], args);
    fprintf(stderr, "ht-shim: cannot run %s: %s\n", args[0], strerror(errno));
    return 127;
}

int main(int argc, char **argv) {
    int linger = 0, landlock = 0, exec_only = 0, keep_fds = 0, tramp = 0;
    const char *forward = NULL;
    int first = 1;
    if (argc > 2 && strcmp(argv[1], "-w") == 0) return watch(argv + 2);
    while (first < argc && argv[first][0] == '-') {
        const char *o = argv[first];
        if (strcmp(o, "--") == 0) {
            first++;
            break;
        } else if (strcmp(o, "-l") == 0) {
            linger = 1;
        } else if (strcmp(o, "-L") == 0) {
            landlock = 1;
        } else if (strcmp(o, "-e") == 0) {
            exec_only = 1;
        } else if (strcmp(o, "-K") == 0) {
            keep_fds = 1;
        } else if (strcmp(o, "-T") == 0) {
            tramp = 1;
        } else if (strcmp(o, "-A") == 0 && first + 1 < argc) {
            if (nareas >= MAX_AREAS) {
                fprintf(stderr, "ht-shim: more than %d folders for -A\n", MAX_AREAS);
                return 127;
            }
            areas[nareas++] = argv[first + 1];
            first++;
        } else if (strcmp(o, "-P") == 0 && first + 1 < argc) {
            forward = argv[first + 1];
            first++;
        } else if ((strcmp(o, "-W") == 0 || strcmp(o, "-D") == 0) && first + 1 < argc) {
            int dev = o[1] == 'D';
            if ((dev ? ll_ndev : ll_nwrite) >= MAX_DIRS) {
                fprintf(stderr, "ht-shim: more than %d directories for %s\n", MAX_DIRS, o);
                return 127;
            }
            if (dev) ll_dev_dirs[ll_ndev++] = argv[first + 1];
            else ll_write_dirs[ll_nwrite++] = argv[first + 1];
            first++;
        } else {
            break; /* a program whose name starts with '-' */
        }
        first++;
    }
    if (first >= argc) {
        fprintf(stderr, "ht-shim: usage: ht-shim [-l] [-e] [-P PORT:SOCKET] [-L [-W DIR]... [-D DIR]...] [--] PROGRAM ARGS...\n");
        return 127;
    }
    if (tramp) return trampoline(&argv[first]);
    if (forward && start_forwarder(forward) < 0) return 126;
    if (exec_only) {
        if (landlock && apply_landlock() < 0) return 126;
        if (!keep_fds) close_inherited();
        execvp(argv[first], &argv[first]);
        fprintf(stderr, "ht-shim: cannot run %s: %s\n", argv[first], strerror(errno));
        return 127;
    }
    self_pid = getpid();
    pid_t parent = getppid();
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    int pidfd = (int)syscall(SYS_pidfd_open, parent, 0);
    /* The host died before the watch was in place: nothing to run for. */
    if (getppid() != parent) _exit(137);

    sigset_t watched, old;
    sigemptyset(&watched);
    sigaddset(&watched, SIGCHLD);
    sigaddset(&watched, SIGTERM);
    sigaddset(&watched, SIGINT);
    sigaddset(&watched, SIGHUP);
    sigaddset(&watched, SIGQUIT);
    sigaddset(&watched, SIGPIPE);
    sigprocmask(SIG_BLOCK, &watched, &old);
    int sfd = signalfd(-1, &watched, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        perror("ht-shim: signalfd");
        return 127;
    }

    pid_t child = fork();
    if (child < 0) {
        perror("ht-shim: fork");
        return 127;
    }
    if (child == 0) {
        /* Should the shim itself be killed outright (SIGKILL cannot be
         * caught), the command goes with it rather than running on. */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != self_pid) _exit(137);
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(sfd);
        if (pidfd >= 0) close(pidfd);
        if (landlock && apply_landlock() < 0) _exit(126);
        if (!keep_fds) close_inherited();
        execvp(argv[first], &argv[first]);
        fprintf(stderr, "ht-shim: cannot run %s: %s\n", argv[first], strerror(errno));
        _exit(127);
    }

    int child_status = 0;
    int child_done = 0;
    struct pollfd fds[2];
    fds[0].fd = sfd;
    fds[0].events = POLLIN;
    fds[1].fd = pidfd;
    fds[1].events = POLLIN;
    nfds_t nfds = pidfd >= 0 ? 2 : 1;
    for (;;) {
        int r = poll(fds, nfds, pidfd >= 0 ? -1 : 500);
        if (r < 0 && errno != EINTR) break;
        if (nfds == 2 && (fds[1].revents & (POLLIN | POLLHUP))) {
            kill_everything();
            _exit(137);
        }
        /* Without a pidfd (kernel < 5.3): the reparenting tells. */
        if (pidfd < 0 && getppid() != parent) {
            kill_everything();
            _exit(137);
        }
        if (fds[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si) {
                /* A termination signal sent to the shim by a process (kill(2)
                 * of its pid, not the terminal driver's Ctrl-C to the
                 * foreground group) is passed on to the command, so a kill of
                 * the pid the runtime knows reaches what runs. */
                int sig = (int)si.ssi_signo;
                int by_process = si.ssi_code == SI_USER || si.ssi_code == SI_QUEUE;
                if (by_process && !child_done && sig != SIGCHLD && sig != SIGPIPE)
                    kill(child, sig);
            }
        }
        int status;
        pid_t w;
        while ((w = waitpid(-1, &status, WNOHANG)) > 0) {
            if (w == child) {
                child_status = status;
                child_done = 1;
                if (!linger) {
                    kill_everything();
                    exit_like(status);
                }
            }
        }
        /* Lingering: the last of the tree has ended. */
        if (child_done && w < 0 && errno == ECHILD) exit_like(child_status);
    }
    kill_everything();
    return 127;
}
