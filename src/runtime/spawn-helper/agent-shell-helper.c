/*
 * agent-shell-helper: starts one command at the price of a spawn, inside a sandbox that was
 * built once (runtime/containment/kept-sandbox.ts) or inside none. Built static by build.ts and embedded
 * in the agent-shell binary; the server writes it to its state dir and runs it.
 *
 *   agent-shell-helper hold
 *     The first process of a kept sandbox (bwrap --as-pid-1): it says on stdout that the
 *     sandbox is complete, keeps the namespaces alive and reaps. When its stdin closes (the server retired the sandbox or died) it ends as
 *     soon as nothing else runs inside; its end ends the pid namespace.
 *
 *   agent-shell-helper start [--pids TASKS_FILE] [--cgroup DIR] [--ns FD]... [--own-pid-ns]
 *                            [--drop-caps] [--landlock FD] [--seccomp FD] --request FD
 *     The monitor (whose pid results show): it joins the process limit (a v1 pids cgroup, moving only its own thread,
 *     which needs no RCU grace period), enters the namespaces (user first), and forks the
 *     command straight into its task cgroup (clone3 CLONE_INTO_CGROUP: no migration). The
 *     command restricts itself (capabilities, Landlock, seccomp), then reads its request
 *     (working directory, argv, environment, NUL-separated, up to EOF) and execs. The monitor
 *     stays, passing on what is sent to it alone, and ends the way the command ended (same
 *     code, same signal), so the server's child reports exactly the command's status.
 *     --own-pid-ns (where no task cgroup holds a task): the command runs as pid 2 of a pid
 *     namespace of its own, with its own /proc, whose init ends everything when it ends.
 *
 *   agent-shell-helper relay ...
 *     The network of an allowlist sandbox: see relay.c.
 *
 *   agent-shell-helper serve [--ns FD]... [--drop-caps] [--landlock FD] [--seccomp FD]
 *                            --control FD --status FD
 *     The spawner kept per sandbox (runtime/spawner.ts): it enters the namespaces and restricts
 *     itself once (capabilities, Landlock, seccomp: every command inherits them, so no filter
 *     is compiled per command), then serves requests. A request is one message on the control
 *     socket: the command's request (as above) with its stdout, stderr, task cgroup, process
 *     limit and stdin as fds (SCM_RIGHTS). The command is cloned straight into its task cgroup,
 *     joins its process limit, leads its own session and execs; it is the spawner's child, so
 *     no monitor stands between it and its status. The status pipe gets, per request, its pid
 *     (or the errno of a failed start), and for each command its wait status when it ends.
 *     It ends when the control socket closes, or when the server dies (PR_SET_PDEATHSIG).
 *
 * Nothing here reads the environment: the server runs it with the launcher environment, and
 * the command's environment comes in the request. Being static, no loader variable acts on it.
 * Every failure before exec exits 125 (the sandbox could not be entered) with a message; the
 * command never runs unrestricted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define CANNOT_ENTER 125
/* The bash tool recognises this text (sandbox/namespaces/bwrap.ts CWD_REPLACED_MESSAGE). */
#define CWD_REPLACED "agent-shell: the working directory was replaced (e.g. by a symlink) while the command was starting; it did not run\n"

static void say(const char *a, const char *b, const char *c) {
  char line[1024];
  int n = snprintf(line, sizeof line, "agent-shell: %s%s%s\n", a, b ? b : "", c ? c : "");
  if (n > 0) (void)!write(2, line, n < (int)sizeof line ? (size_t)n : sizeof line - 1);
}

static void die(const char *what) {
  char detail[256];
  snprintf(detail, sizeof detail, "%s: %s", what, strerror(errno));
  say("cannot start the command inside its sandbox: ", detail, NULL);
  _exit(CANNOT_ENTER);
}

/* Everything from fd up to EOF, NUL-terminated; *len excludes the terminator. */
static char *read_all(int fd, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  if (!buf) die("memory");
  for (;;) {
    if (n == cap) {
      cap *= 2;
      buf = realloc(buf, cap + 1);
      if (!buf) die("memory");
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      die("read");
    }
    n += (size_t)r;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

static void default_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++) sigaction(s, &sa, NULL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static pid_t command_pid;
static pid_t server_pid;

/*
 * The monitor's pid is the one results show: a signal sent to it alone (by a person's `kill
 * PID`) is passed on to the command. One sent to the whole group (by the server, or a
 * terminal's Ctrl-C) reaches the command directly, and is not passed on twice.
 */
static void pass_on(int sig, siginfo_t *info, void *context) {
  (void)context;
  if ((info->si_code == SI_USER || info->si_code == SI_QUEUE) && info->si_pid != server_pid && command_pid > 0) kill(command_pid, sig);
}

static void forward_signals(pid_t command) {
  command_pid = command;
  server_pid = getppid();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = pass_on;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGCHLD && s != SIGKILL && s != SIGSTOP) sigaction(s, &sa, NULL);
}

static void ignore_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGCHLD && s != SIGKILL && s != SIGSTOP) sigaction(s, &sa, NULL);
}

/* Waits for `pid` (EINTR-safe); returns its wait status. */
static int wait_for(pid_t pid) {
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 0;
  return status;
}

/* Ends this process the way `status` says a child ended: the same code, or the same signal. */
static void end_like(int status) {
  if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
  int sig = WTERMSIG(status);
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_DFL;
  sigaction(sig, &sa, NULL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  sigprocmask(SIG_UNBLOCK, &one, NULL);
  kill(getpid(), sig);
  _exit(128 + sig); /* a signal whose default is to be ignored cannot end us */
}

static void drop_capabilities(void) {
  for (int cap = 0; cap <= 63; cap++)
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) die("dropping the bounding set");
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &header, data) < 0) die("capset");
}

/*
 * The Landlock ruleset, as runtime/spawn-helper/requests.ts writes it (NUL-separated): the ABI,
 * the handled filesystem, network and scope bits, then pairs of rights and path (or `tcp:PORT`:
 * a port that may be connected to).
 */
static void apply_landlock(int fd) {
  size_t len;
  char *text = read_all(fd, &len);
  close(fd);
  char *end = text + len, *p = text;
#define NEXT() ({ char *f = p; p += strlen(p) + 1; f; })
  int abi = atoi(NEXT());
  /* struct landlock_ruleset_attr grew with the ABI (fs; + net from 4; + scoped from 6): laid out by hand. */
  uint64_t raw[3];
  for (int i = 0; i < 3; i++) raw[i] = strtoull(NEXT(), NULL, 10);
  size_t size = abi >= 6 ? 24 : abi >= 4 ? 16 : 8;
  int ruleset = (int)syscall(SYS_landlock_create_ruleset, raw, size, 0);
  if (ruleset < 0) die("landlock_create_ruleset");
  while (p < end) {
    unsigned long long rights = strtoull(NEXT(), NULL, 10);
    if (p >= end) break;
    const char *path = NEXT();
    if (strncmp(path, "tcp:", 4) == 0) {
      /* struct landlock_net_port_attr (ABI 4) and LANDLOCK_RULE_NET_PORT (2), by hand: older headers lack them. */
      uint64_t port[2] = {rights, strtoull(path + 4, NULL, 10)};
      if (syscall(SYS_landlock_add_rule, ruleset, 2, port, 0) < 0) die(path);
      continue;
    }
    int target = open(path, O_PATH | O_CLOEXEC);
    if (target < 0) continue; /* gone since the rules were made: nothing to allow */
    struct landlock_path_beneath_attr rule;
    rule.allowed_access = rights;
    rule.parent_fd = target;
    if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0) die(path);
    close(target);
  }
#undef NEXT
  if (syscall(SYS_landlock_restrict_self, ruleset, 0) < 0) die("landlock_restrict_self");
  close(ruleset);
  free(text);
}

static void apply_seccomp(int fd) {
  size_t len;
  char *bytes = read_all(fd, &len);
  close(fd);
  struct sock_fprog prog = {(unsigned short)(len / sizeof(struct sock_filter)), (struct sock_filter *)bytes};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) die("seccomp");
}

/* The program `name` on `path` (a PATH value), as a shell would find it; returns only on failure. */
static int exec_on_path(const char *name, char **argv, char **envp, const char *path) {
  if (strchr(name, '/')) {
    execve(name, argv, envp);
    return errno;
  }
  int seen_eacces = 0;
  const char *dirs = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (*dirs) {
    const char *colon = strchr(dirs, ':');
    size_t dlen = colon ? (size_t)(colon - dirs) : strlen(dirs);
    char full[PATH_MAX];
    if (snprintf(full, sizeof full, "%.*s/%s", (int)dlen, dlen ? dirs : ".", name) < (int)sizeof full) {
      execve(full, argv, envp);
      if (errno == EACCES) seen_eacces = 1;
      else if (errno != ENOENT && errno != ENOTDIR) return errno;
    }
    if (!colon) break;
    dirs = colon + 1;
  }
  return seen_eacces ? EACCES : ENOENT;
}

/* A request, parsed: its fields point into the request's text. */
struct request {
  const char *cwd;
  int null_stdin;
  char **argv;
  char **envp;
  const char *path;
};

/* Parses a request's text (NUL-separated, runtime/spawn-helper/start.ts encodeRequest); 0 if it names no command. */
static int parse_request(char *req, size_t len, struct request *r) {
  char *end = req + len, *p = req;
  r->cwd = p;
  p += strlen(p) + 1;
  /* "null": stdin is /dev/null (a helper started ahead was given a pipe for it). */
  r->null_stdin = p < end && strcmp(p, "null") == 0;
  p += strlen(p) + 1;
  int argc = p < end ? atoi(p) : 0;
  p += strlen(p) + 1;
  if (argc < 1) return 0;
  r->argv = calloc((size_t)argc + 1, sizeof *r->argv);
  for (int i = 0; i < argc && p < end; i++, p += strlen(p) + 1) r->argv[i] = p;
  size_t envc = 0;
  for (char *q = p; q < end; q += strlen(q) + 1) envc++;
  r->envp = calloc(envc + 1, sizeof *r->envp);
  if (!r->argv || !r->envp) die("memory");
  r->path = NULL;
  for (size_t i = 0; p < end; p += strlen(p) + 1, i++) {
    r->envp[i] = p;
    if (strncmp(p, "PATH=", 5) == 0) r->path = p + 5;
  }
  return 1;
}

/*
 * Enters the request's working directory (the very one validated) and execs its command.
 * Allocates nothing: a served command runs this in the spawner's memory (spawn_into).
 */
static void exec_request(const struct request *r) {
  char here[PATH_MAX];
  if (chdir(r->cwd) != 0 || !getcwd(here, sizeof here) || strcmp(here, r->cwd) != 0) {
    (void)!write(2, CWD_REPLACED, sizeof CWD_REPLACED - 1);
    _exit(126);
  }
  if (r->null_stdin) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull < 0 || dup2(devnull, 0) < 0) die("/dev/null");
  }
  syscall(SYS_close_range, 3, ~0U, 0);
  default_signals();
  int err = exec_on_path(r->argv[0], r->argv, r->envp, r->path);
  errno = err;
  char line[512];
  int n = snprintf(line, sizeof line, "agent-shell: %s: %s\n", r->argv[0], err == ENOENT ? "command not found" : strerror(err));
  (void)!write(2, line, (size_t)n);
  _exit(err == ENOENT ? 127 : 126);
}

/* Reads the request up to EOF, then exec_request. */
static void run_request(int request_fd) {
  size_t len;
  char *req = read_all(request_fd, &len);
  close(request_fd);
  struct request r;
  if (len == 0 || !parse_request(req, len, &r)) _exit(CANNOT_ENTER); /* empty: the server gave up on this start */
  exec_request(&r);
}

struct options {
  const char *pids;
  const char *cgroup;
  int ns[8];
  int ns_count;
  int own_pid_ns;
  int drop_caps;
  int landlock;
  int seccomp;
  int request;
  int control;
};

/* The command's own restrictions, then its request. */
static void become_command(const struct options *o) {
  if (o->drop_caps) drop_capabilities();
  if (o->drop_caps || o->landlock >= 0 || o->seccomp >= 0)
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("no_new_privs");
  if (o->landlock >= 0) apply_landlock(o->landlock);
  if (o->seccomp >= 0) apply_seccomp(o->seccomp);
  run_request(o->request);
}

/* Closes every fd but `keep` (-1: none). close_range, not a loop: a loop over the fd table was
   a thousand syscalls per command, beside the command on the other core. */
static void close_all_but(int keep) {
  int done = keep < 0 ? syscall(SYS_close_range, 0, ~0U, 0) == 0
                      : (keep == 0 || syscall(SYS_close_range, 0, keep - 1, 0) == 0) && syscall(SYS_close_range, keep + 1, ~0U, 0) == 0;
  if (done) return;
  for (int fd = 0; fd < 1024; fd++) /* kernels before 5.9 */
    if (fd != keep) close(fd);
}

/*
 * pid 1 of the command's own pid namespace: its own /proc, the command as pid 2 (an init
 * ignores signals it has no handler for, so the command must not be the init), reaping until
 * the command ends. Its status goes to the monitor on `report` (an init cannot die of a signal
 * it sends itself).
 */
static void own_namespace_init(const struct options *o, int report) {
  if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) die("private mounts");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) die("mounting /proc");
  pid_t command = fork();
  if (command < 0) die("fork");
  if (command == 0) {
    close(report);
    become_command(o);
  }
  ignore_signals();
  close_all_but(report);
  int status = 0;
  for (;;) {
    int st;
    pid_t got = wait(&st);
    if (got < 0 && errno == ECHILD) break;
    if (got == command) {
      status = st;
      break;
    }
  }
  (void)!write(report, &status, sizeof status);
  _exit(0);
}

/*
 * Forks a child born in the task cgroup `cgroup` (-1: none) and, with `own_pid_ns`, as pid 1
 * of a new pid namespace: clone3 with CLONE_INTO_CGROUP, no migration. Where clone3 or
 * CLONE_INTO_CGROUP is missing (kernels before 5.7, qemu-user): a plain fork, the child moving
 * itself into its task cgroup before anything else (that move may wait for an RCU grace
 * period), and the pid namespace made by unshare first.
 */
static long fork_into(int cgroup, int own_pid_ns) {
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.exit_signal = SIGCHLD;
  if (cgroup >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = (uint64_t)cgroup;
  }
  if (own_pid_ns) args.flags |= CLONE_NEWPID | CLONE_NEWNS;
  long child = syscall(SYS_clone3, &args, sizeof args);
  if (child >= 0 || (errno != ENOSYS && errno != EINVAL && errno != E2BIG)) return child;
  if (own_pid_ns && unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) die("unshare");
  child = fork();
  if (child == 0 && cgroup >= 0) {
    int procs = openat(cgroup, "cgroup.procs", O_WRONLY | O_CLOEXEC);
    if (procs < 0 || write(procs, "0", 1) != 1) die("joining the task cgroup");
    close(procs);
  }
  return child;
}

static int start(struct options *o) {
  if (o->pids) {
    int fd = open(o->pids, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0", 1) != 1) die("joining the process limit");
    close(fd);
  }
  int cgroup = -1;
  if (o->cgroup && (cgroup = open(o->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) die("opening the task cgroup");
  for (int i = 0; i < o->ns_count; i++) {
    if (setns(o->ns[i], 0) < 0) die("entering the sandbox");
    close(o->ns[i]);
  }
  int report[2] = {-1, -1};
  if (o->own_pid_ns && pipe2(report, O_CLOEXEC) < 0) die("pipe");
  /* The child is born unreadable and untraceable: no other command in the sandbox can attach to
     it while it waits for its request (its exec makes the command ordinary again). */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  long child = fork_into(cgroup, o->own_pid_ns);
  if (child < 0) die("clone3");
  if (child == 0) {
    if (o->own_pid_ns) {
      close(report[0]);
      own_namespace_init(o, report[1]);
    }
    become_command(o);
  }
  /* The monitor: holds nothing of the command's, ends as it ends. */
  prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); /* its environment shows the owner marker (SPEC §14) */
  if (o->own_pid_ns) ignore_signals(); /* its init could not tell a forwarded signal from the group's */
  else forward_signals((pid_t)child);
  if (report[1] >= 0) close(report[1]);
  int keep = report[0];
  close_all_but(keep);
  int status = wait_for((pid_t)child);
  if (keep >= 0) {
    int reported;
    if (read(keep, &reported, sizeof reported) == sizeof reported) status = reported;
  }
  end_like(status);
  return 0;
}

/*
 * serve: the spawner. What the status pipe says (runtime/spawner.ts reads it): three int32s,
 * one write each (atomic on a pipe).
 */
enum { STARTED = 1, FAILED = 2, ENDED = 3 };
static int status_fd = -1;

static void report(int kind, int pid, int value) {
  int32_t record[3] = {kind, pid, value};
  if (write(status_fd, record, sizeof record) != (ssize_t)sizeof record) _exit(0); /* the server is gone */
}

/* A request's fds (SCM_RIGHTS): at most these, named in order by the message's first field. */
#define MAX_FDS 5
/* A message's size at most (runtime/spawner.ts starts a larger request the usual way). */
#define MAX_MESSAGE (128 * 1024)

/* One request's command: what its child needs, parsed by the spawner before the clone. */
struct served {
  struct request request;
  int out, err, pids, in;
};

/* The command of one request, in the child: its stdio, its process limit, a session of its own, then exec_request. */
static void become_served_command(void *arg) {
  const struct served *s = arg;
  if (dup2(s->out, 1) < 0 || dup2(s->err, 2) < 0 || (s->in >= 0 && dup2(s->in, 0) < 0)) _exit(CANNOT_ENTER);
  if (s->pids >= 0 && write(s->pids, "0", 1) != 1) die("joining the process limit");
  if (setsid() < 0) die("setsid");
  exec_request(&s->request);
}

#if defined(__x86_64__)
/*
 * clone3 whose child calls fn(arg) on the stack args gives it (fn must exec or _exit): libc
 * offers no clone3 wrapper, and a child on a stack of its own cannot return from one.
 */
static long clone3_calling(struct clone_args *args, void (*fn)(void *), void *arg) {
  long ret;
  __asm__ volatile(
      "syscall\n\t"
      "test %%rax, %%rax\n\t"
      "jnz 1f\n\t"
      "xor %%ebp, %%ebp\n\t"
      "mov %[arg], %%rdi\n\t"
      "call *%[fn]\n\t"
      "hlt\n"
      "1:\n\t"
      : "=a"(ret)
      : "a"((long)SYS_clone3), "D"(args), "S"(sizeof *args), [fn] "r"(fn), [arg] "r"(arg)
      : "rcx", "r11", "memory");
  return ret;
}

/* The stack of the one child at a time that runs in the spawner's memory (CLONE_VFORK holds the spawner until its exec). */
static char child_stack[256 * 1024] __attribute__((aligned(16)));
#endif

/*
 * Runs fn(arg) (which execs or _exits) in a child born in the task cgroup `cgroup`. On x86-64 the
 * child shares the spawner's memory until its exec, as posix_spawn's does: no page tables to
 * copy and no copy-on-write faults, ~0.17 ms a command less than a fork here.
 * So it allocates nothing and writes only its own stack. Elsewhere, and where
 * clone3 is refused (qemu-user), a fork (fork_into).
 */
static long spawn_into(int cgroup, void (*fn)(void *), void *arg) {
#if defined(__x86_64__)
  struct clone_args args;
  memset(&args, 0, sizeof args);
  args.flags = CLONE_VM | CLONE_VFORK | (cgroup >= 0 ? CLONE_INTO_CGROUP : 0);
  args.exit_signal = SIGCHLD;
  args.cgroup = cgroup >= 0 ? (uint64_t)cgroup : 0;
  args.stack = (uint64_t)(uintptr_t)child_stack;
  args.stack_size = sizeof child_stack;
  long child = clone3_calling(&args, fn, arg);
  if (child >= 0) return child;
  if (child != -ENOSYS && child != -EINVAL && child != -E2BIG) {
    errno = (int)-child;
    return -1;
  }
#endif
  long forked = fork_into(cgroup, 0);
  if (forked == 0) fn(arg);
  return forked;
}

/* Reads one request and starts its command; an empty read means the server closed the socket. */
static void serve_request(int control) {
  static char buf[MAX_MESSAGE + 1];
  union {
    char space[CMSG_SPACE(MAX_FDS * sizeof(int))];
    struct cmsghdr align;
  } cbuf;
  struct iovec iov = {buf, MAX_MESSAGE};
  struct msghdr msg;
  memset(&msg, 0, sizeof msg);
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cbuf.space;
  msg.msg_controllen = sizeof cbuf.space;
  ssize_t n = recvmsg(control, &msg, MSG_CMSG_CLOEXEC);
  if (n == 0) _exit(0);
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) return;
    _exit(0);
  }
  buf[n] = 0;
  int fds[MAX_FDS], nfds = 0;
  for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; i++) {
      int fd;
      memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
      if (nfds < MAX_FDS) fds[nfds++] = fd;
      else close(fd);
    }
  }
  /* The first field names the fds in order: o stdout, e stderr, c task cgroup, p process limit, i stdin. */
  int out = -1, err = -1, cgroup = -1, pids = -1, in = -1;
  size_t names = strlen(buf);
  int bad = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || names >= (size_t)n || names != (size_t)nfds;
  for (size_t i = 0; !bad && i < names; i++) {
    int *slot = buf[i] == 'o' ? &out : buf[i] == 'e' ? &err : buf[i] == 'c' ? &cgroup : buf[i] == 'p' ? &pids : buf[i] == 'i' ? &in : NULL;
    if (slot) *slot = fds[i];
    else bad = 1;
  }
  long child = -1;
  struct served served = {.out = out, .err = err, .pids = pids, .in = in};
  int parsed = !bad && out >= 0 && err >= 0 && parse_request(buf + names + 1, (size_t)n - names - 1, &served.request);
  if (parsed) child = spawn_into(cgroup, become_served_command, &served);
  else errno = EINVAL;
  int failure = errno;
  if (parsed) {
    free(served.request.argv);
    free(served.request.envp);
  }
  for (int i = 0; i < nfds; i++) close(fds[i]);
  if (child > 0) report(STARTED, (int)child, 0);
  else report(FAILED, 0, failure);
}

/* Reports every ended child. */
static void reap(void) {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) report(ENDED, pid, status);
}

__attribute__((noreturn)) static void serve(struct options *o, int control) {
  /* Its children are born unreadable and untraceable until their exec: no command in the
     sandbox can attach to one that holds another task's cgroup and limit fds. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct sigaction ignore;
  memset(&ignore, 0, sizeof ignore);
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, NULL); /* a write to a gone server fails instead */
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int ended = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (ended < 0) die("signalfd");
  for (int i = 0; i < o->ns_count; i++) {
    if (setns(o->ns[i], 0) < 0) die("entering the sandbox");
    close(o->ns[i]);
  }
  if (o->drop_caps) drop_capabilities();
  if (o->drop_caps || o->landlock >= 0 || o->seccomp >= 0)
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) die("no_new_privs");
  if (o->landlock >= 0) apply_landlock(o->landlock);
  if (o->seccomp >= 0) apply_seccomp(o->seccomp);
  struct pollfd watch[2] = {{control, POLLIN, 0}, {ended, POLLIN, 0}};
  for (;;) {
    if (poll(watch, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die("poll");
    }
    if (watch[1].revents) {
      struct signalfd_siginfo info;
      while (read(ended, &info, sizeof info) > 0) {
      }
      reap();
    }
    if (watch[0].revents) serve_request(control);
  }
}

static volatile sig_atomic_t child_ended;
static void on_child(int sig) {
  (void)sig;
  child_ended = 1;
}

/* Whether any process other than this one is left in the pid namespace (its /proc). */
static int others_alive(void) {
  DIR *proc = opendir("/proc");
  if (!proc) return 0;
  struct dirent *e;
  int found = 0;
  while ((e = readdir(proc)))
    if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && strcmp(e->d_name, "1") != 0) {
      found = 1;
      break;
    }
  closedir(proc);
  return found;
}

static int hold(void) {
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  ignore_signals();
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_child; /* no SA_RESTART: a child's end wakes the poll */
  sigaction(SIGCHLD, &sa, NULL);
  syscall(SYS_close_range, 3, ~0U, 0);
  /* bwrap execs us once the sandbox is complete (its info fd speaks earlier): say so. */
  (void)!write(1, "\n", 1);
  close(1);
  close(2);
  int draining = 0;
  for (;;) {
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    if (draining && !others_alive()) return 0;
    struct pollfd in = {0, POLLIN, 0};
    int ready = poll(draining ? NULL : &in, draining ? 0 : 1, draining ? 200 : -1);
    if (ready > 0 && !draining) {
      char buf[64];
      ssize_t n = read(0, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) draining = 1;
    }
  }
}

int relay(int argc, char **argv); /* relay.c */

int main(int argc, char **argv) {
  if (argc >= 2 && strcmp(argv[1], "hold") == 0) return hold();
  if (argc >= 2 && strcmp(argv[1], "relay") == 0) return relay(argc, argv);
  if (argc < 2 || (strcmp(argv[1], "start") != 0 && strcmp(argv[1], "serve") != 0)) {
    say("usage: agent-shell-helper hold | start [options] --request FD | serve [options] --control FD --status FD", NULL, NULL);
    return 2;
  }
  int serving = argc >= 2 && strcmp(argv[1], "serve") == 0;
  struct options o = {.landlock = -1, .seccomp = -1, .request = -1, .control = -1};
  for (int i = 2; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (strcmp(a, "--own-pid-ns") == 0) o.own_pid_ns = 1;
    else if (strcmp(a, "--drop-caps") == 0) o.drop_caps = 1;
    else if (!v) break;
    else if (strcmp(a, "--pids") == 0) o.pids = v, i++;
    else if (strcmp(a, "--cgroup") == 0) o.cgroup = v, i++;
    else if (strcmp(a, "--ns") == 0 && o.ns_count < 8) o.ns[o.ns_count++] = atoi(v), i++;
    else if (strcmp(a, "--landlock") == 0) o.landlock = atoi(v), i++;
    else if (strcmp(a, "--seccomp") == 0) o.seccomp = atoi(v), i++;
    else if (strcmp(a, "--request") == 0) o.request = atoi(v), i++;
    else if (strcmp(a, "--control") == 0) o.control = atoi(v), i++;
    else if (strcmp(a, "--status") == 0) status_fd = atoi(v), i++;
  }
  if (serving) {
    if (o.control < 0 || status_fd < 0) {
      say("serve needs --control FD and --status FD", NULL, NULL);
      return 2;
    }
    serve(&o, o.control);
  }
  if (o.request < 0) {
    say("start needs --request FD", NULL, NULL);
    return 2;
  }
  return start(&o);
}
