/*
 * agent-shell-helper relay [--ns FD]... [--listen PORT]... --give FD [--publish PATH]
 *
 * The network of an allowlist sandbox (SPEC §21; sandbox/network/): run in the kept sandbox's
 * network namespace (entered through its fds, user namespace first) but in the host's mount
 * namespace. Each `--listen PORT` is a socket listening on the sandbox's 127.0.0.1:PORT (the
 * proxy, a forwarded host port), handed to the server in one message on the unix socket
 * `--give` (SCM_RIGHTS): the server accepts there itself, with no process in between.
 * `--publish PATH` listens on the unix socket PATH (made before entering the namespace): a
 * connection there names a port in its first two bytes (big-endian) and is joined to the
 * sandbox's 127.0.0.1:PORT (a port a command listens on, published on the host); each is a
 * child (and a grandchild for the other direction) moving bytes with splice(2). Commands never
 * run here: this process has no seccomp filter, and it sits in no pid namespace a command sees.
 *
 * It says "\n" on stdout once the sockets are given, and ends then (no --publish), or when
 * stdin closes or the server dies.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_LISTEN 64

static void relay_fail(const char *what) {
  char line[512];
  int n = snprintf(line, sizeof line, "agent-shell: relay: %s: %s\n", what, strerror(errno));
  if (n > 0) (void)!write(2, line, (size_t)n);
  _exit(125);
}

static int unix_address(const char *path, struct sockaddr_un *sa) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof sa->sun_path) return -1;
  strcpy(sa->sun_path, path);
  return 0;
}

static int connect_inside(int port) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

/* Moves bytes from `from` to `to` until EOF, then half-closes `to`. */
static void pump(int from, int to) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return;
  for (;;) {
    ssize_t n = splice(from, NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    while (n > 0) {
      ssize_t m = splice(p[0], NULL, to, NULL, (size_t)n, SPLICE_F_MOVE);
      if (m < 0 && errno == EINTR) continue;
      if (m <= 0) goto done;
      n -= m;
    }
  }
done:
  shutdown(to, SHUT_WR);
}

/* Joins `a` and `b` both ways (a grandchild takes b→a) and returns when a→b ended. */
static void join_both(int a, int b) {
  pid_t other = fork();
  if (other == 0) {
    pump(b, a);
    _exit(0);
  }
  pump(a, b);
  if (other < 0) shutdown(a, SHUT_WR);
}

static int listen_inside(int port) {
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  if (fd < 0) relay_fail("socket");
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 512) != 0) relay_fail("listen on the sandbox's loopback");
  return fd;
}

/* Hands `fds` to the server in one message on `give`. */
static void give_fds(int give, const int *fds, int count) {
  char byte = 'L';
  struct iovec iov = {&byte, 1};
  union {
    char buf[CMSG_SPACE(sizeof(int) * MAX_LISTEN)];
    struct cmsghdr align;
  } control;
  struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
  if (count > 0) {
    msg.msg_control = control.buf;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)count);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)count);
    memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)count);
  }
  if (sendmsg(give, &msg, MSG_NOSIGNAL) != 1) relay_fail("hand the listening sockets over");
  close(give);
}

int relay(int argc, char **argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  /* Children are not waited for: SA_NOCLDWAIT reaps them. */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = SIG_IGN;
  sa.sa_flags = SA_NOCLDWAIT;
  sigaction(SIGCHLD, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  int ns[8], ns_count = 0, ports[MAX_LISTEN], count = 0, publish = -1, give = -1;
  for (int i = 2; i + 1 < argc; i += 2) {
    const char *a = argv[i], *v = argv[i + 1];
    if (strcmp(a, "--ns") == 0 && ns_count < 8) ns[ns_count++] = atoi(v);
    else if (strcmp(a, "--listen") == 0 && count < MAX_LISTEN) ports[count++] = atoi(v);
    else if (strcmp(a, "--give") == 0) give = atoi(v);
    else if (strcmp(a, "--publish") == 0) {
      struct sockaddr_un un;
      publish = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (publish < 0 || unix_address(v, &un) != 0) relay_fail("publish socket");
      unlink(v);
      umask(0177); /* the socket file is the user's alone (0600), as everything in the state dir */
      if (bind(publish, (struct sockaddr *)&un, sizeof un) != 0 || listen(publish, 512) != 0) relay_fail("publish socket");
    }
  }
  if (give < 0) relay_fail("--give is required");
  for (int i = 0; i < ns_count; i++)
    if (setns(ns[i], 0) != 0) relay_fail("setns");
  int listeners[MAX_LISTEN];
  for (int i = 0; i < count; i++) listeners[i] = listen_inside(ports[i]);
  give_fds(give, listeners, count);
  for (int i = 0; i < count; i++) close(listeners[i]);
  (void)!write(1, "\n", 1);
  if (publish < 0) return 0;
  struct pollfd fds[2] = {{0, POLLIN, 0}, {publish, POLLIN, 0}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      relay_fail("poll");
    }
    if (fds[0].revents) {
      char buf[64];
      ssize_t n = read(0, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return 0;
    }
    if (!(fds[1].revents & POLLIN)) continue;
    int conn = accept4(publish, NULL, NULL, SOCK_CLOEXEC);
    if (conn < 0) continue;
    if (fork() == 0) {
      close(publish);
      unsigned char port[2];
      int other = recv(conn, port, 2, MSG_WAITALL) == 2 ? connect_inside(port[0] << 8 | port[1]) : -1;
      if (other >= 0) join_both(conn, other);
      _exit(0);
    }
    close(conn);
  }
}
