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
#include <sys/prctl.h>
#include <sys/resource.h>
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

int main(int argc, char **argv) {
    int linger = 0;
    int first = 1;
    if (argc > 1 && strcmp(argv[1], "-l") == 0) {
        linger = 1;
        first = 2;
    }
    if (argc > 2 && strcmp(argv[1], "-w") == 0) return watch(argv + 2);
    if (first >= argc) {
        fprintf(stderr, "ht-shim: usage: ht-shim [-l] PROGRAM ARGS...\n");
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
