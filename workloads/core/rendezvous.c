/* TCP rendezvous for the NCCL unique id: see rendezvous.h. */
#include "rendezvous.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RDV_VERSION 1u

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int remaining_ms(int64_t deadline) {
  int64_t left = deadline - now_ms();
  return left < 0 ? 0 : (int)(left > 1000000 ? 1000000 : left);
}

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int set_nonblocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* Reads (or writes, when `out`) exactly n bytes on a non-blocking socket before the deadline.
** Returns 0, -1 on error or end of stream, -2 on timeout. */
static int transfer(int fd, void *buf, size_t n, int out, int64_t deadline) {
  unsigned char *p = buf;
  while (n > 0) {
    ssize_t k = out ? send(fd, p, n, MSG_NOSIGNAL) : recv(fd, p, n, 0);
    if (k > 0) {
      p += k;
      n -= (size_t)k;
      continue;
    }
    if (k == 0) return -1;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
    struct pollfd pfd = {fd, (short)(out ? POLLOUT : POLLIN), 0};
    int left = remaining_ms(deadline);
    if (left == 0) return -2;
    if (poll(&pfd, 1, left) < 0 && errno != EINTR) return -1;
  }
  return 0;
}

int ovl_rdv_port(const ovl_launch *l, int *port, ovl_err *err) {
  const char *env = getenv("OVL_DDP_PORT");
  if (env) {
    char *end = NULL;
    long p = strtol(env, &end, 10);
    if (!*env || *end || p < 1 || p > 65535)
      return ovl_fail(err, OVL_EUSER, "OVL_DDP_PORT='%s': expected a port number in 1..65535", env);
    *port = (int)p;
    return OVL_OK;
  }
  if (l->master_port == 0)
    return ovl_fail(err, OVL_EUSER,
                    "rendezvous: MASTER_PORT is not set (set MASTER_ADDR and MASTER_PORT, OVL_DDP_PORT, or NCCL_COMM_ID)");
  if (l->master_port == 65535)
    return ovl_fail(err, OVL_EUSER, "rendezvous: MASTER_PORT=65535 leaves no port above it; set OVL_DDP_PORT");
  *port = l->master_port + 1;
  return OVL_OK;
}

/* Listens on every interface: IPv6 dual-stack when available, else IPv4. */
static int listen_any(int port, int backlog, int *out_fd, ovl_err *err) {
  int one = 1, zero = 0;
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd >= 0) {
    struct sockaddr_in6 a6;
    memset(&a6, 0, sizeof a6);
    a6.sin6_family = AF_INET6;
    a6.sin6_addr = in6addr_any;
    a6.sin6_port = htons((uint16_t)port);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (bind(fd, (struct sockaddr *)&a6, sizeof a6) == 0 && listen(fd, backlog) == 0 && set_nonblocking(fd) == 0) {
      *out_fd = fd;
      return OVL_OK;
    }
    int e = errno;
    close(fd);
    if (e == EADDRINUSE)
      return ovl_fail(err, OVL_EUSER, "rendezvous: port %d is in use (set OVL_DDP_PORT to a free port)", port);
  }
  fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return ovl_fail(err, OVL_EINTERNAL, "rendezvous: socket: %s", strerror(errno));
  struct sockaddr_in a4;
  memset(&a4, 0, sizeof a4);
  a4.sin_family = AF_INET;
  a4.sin_addr.s_addr = htonl(INADDR_ANY);
  a4.sin_port = htons((uint16_t)port);
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind(fd, (struct sockaddr *)&a4, sizeof a4) != 0 || listen(fd, backlog) != 0 || set_nonblocking(fd) != 0) {
    int e = errno;
    close(fd);
    return ovl_fail(err, OVL_EUSER, "rendezvous: cannot listen on port %d: %s%s", port, strerror(e),
                    e == EADDRINUSE ? " (set OVL_DDP_PORT to a free port)" : "");
  }
  *out_fd = fd;
  return OVL_OK;
}

/* Serves one accepted peer: *served is set when it was a rank of this job and got the blob;
** a connection that is not an ovl-ddp peer is ignored. Returns a status. */
static int serve_peer(int conn, int world, unsigned char *seen, const void *blob, size_t len, int64_t deadline,
                      int *served, ovl_err *err) {
  unsigned char hello[16], head[12];
  *served = 0;
  if (set_nonblocking(conn) != 0 || transfer(conn, hello, sizeof hello, 0, deadline) != 0) return OVL_OK;
  if (memcmp(hello, "OVLR", 4) != 0 || get_u32(hello + 4) != RDV_VERSION) return OVL_OK;
  uint32_t rank = get_u32(hello + 8), peer_world = get_u32(hello + 12);
  if (peer_world != (uint32_t)world)
    return ovl_fail(err, OVL_EUSER, "rendezvous: rank %u says the world size is %u, rank 0 has %d", rank, peer_world,
                    world);
  if (rank == 0 || rank >= (uint32_t)world) return ovl_fail(err, OVL_EUSER, "rendezvous: a peer claims rank %u of %d", rank, world);
  if (seen[rank]) return ovl_fail(err, OVL_EUSER, "rendezvous: two processes claim rank %u", rank);
  memcpy(head, "OVLI", 4);
  put_u32(head + 4, RDV_VERSION);
  put_u32(head + 8, (uint32_t)len);
  if (transfer(conn, head, sizeof head, 1, deadline) != 0 || transfer(conn, (void *)blob, len, 1, deadline) != 0)
    return ovl_fail(err, OVL_EUSER, "rendezvous: rank %u disconnected before receiving the id", rank);
  seen[rank] = 1;
  *served = 1;
  return OVL_OK;
}

int ovl_rdv_serve(int port, int world, const void *blob, size_t len, int timeout_ms, ovl_err *err) {
  if (len > OVL_RDV_MAX_BLOB) return ovl_fail(err, OVL_EINTERNAL, "rendezvous: blob of %zu bytes is too large", len);
  int64_t deadline = now_ms() + timeout_ms;
  int fd = -1;
  int rc = listen_any(port, world, &fd, err);
  if (rc) return rc;
  unsigned char *seen = calloc((size_t)world, 1);
  if (!seen) {
    close(fd);
    return ovl_oom(err, "rendezvous");
  }
  int served = 0;
  while (served < world - 1) {
    struct pollfd pfd = {fd, POLLIN, 0};
    int left = remaining_ms(deadline);
    int ready = left > 0 ? poll(&pfd, 1, left) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      rc = ovl_fail(err, OVL_EUSER, "rendezvous: only %d of %d ranks connected to port %d within %.1f s", served + 1,
                    world, port, timeout_ms / 1000.0);
      break;
    }
    int conn = accept(fd, NULL, NULL);
    if (conn < 0) continue;
    int one = 0;
    rc = serve_peer(conn, world, seen, blob, len, deadline, &one, err);
    close(conn);
    if (rc) break;
    served += one;
  }
  free(seen);
  close(fd);
  return rc;
}

/* Starts a non-blocking connect to one address and waits for it until the deadline (at
** most a second per try). Returns the socket, or -1. */
static int try_connect(const struct addrinfo *ai, int64_t deadline) {
  int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
  if (fd < 0) return -1;
  if (set_nonblocking(fd) != 0) {
    close(fd);
    return -1;
  }
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno == EINPROGRESS) {
    struct pollfd pfd = {fd, POLLOUT, 0};
    int left = remaining_ms(deadline);
    if (poll(&pfd, 1, left < 1000 ? left : 1000) == 1) {
      int so_error = 0;
      socklen_t sl = sizeof so_error;
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &sl) == 0 && so_error == 0) return fd;
    }
  }
  close(fd);
  return -1;
}

int ovl_rdv_fetch(const char *host, int port, int rank, int world, void *blob, size_t len, int timeout_ms,
                  ovl_err *err) {
  int64_t deadline = now_ms() + timeout_ms;
  char service[16];
  snprintf(service, sizeof service, "%d", port);
  struct addrinfo hints, *res = NULL;
  memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  int gai = getaddrinfo(host, service, &hints, &res);
  if (gai != 0) return ovl_fail(err, OVL_EUSER, "rendezvous: MASTER_ADDR '%s': %s", host, gai_strerror(gai));
  int fd = -1;
  while (fd < 0 && remaining_ms(deadline) > 0) {
    for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) fd = try_connect(ai, deadline);
    if (fd < 0) {
      struct timespec pause = {0, 50 * 1000000L};  /* rank 0 may not listen yet */
      nanosleep(&pause, NULL);
    }
  }
  freeaddrinfo(res);
  if (fd < 0)
    return ovl_fail(err, OVL_EUSER, "rendezvous: rank %d could not reach rank 0 at %s:%d within %.1f s", rank, host,
                    port, timeout_ms / 1000.0);
  unsigned char hello[16], head[12];
  memcpy(hello, "OVLR", 4);
  put_u32(hello + 4, RDV_VERSION);
  put_u32(hello + 8, (uint32_t)rank);
  put_u32(hello + 12, (uint32_t)world);
  int rc = OVL_OK;
  int t = transfer(fd, hello, sizeof hello, 1, deadline);
  if (t == 0) t = transfer(fd, head, sizeof head, 0, deadline);
  if (t != 0) {
    rc = ovl_fail(err, OVL_EUSER, "rendezvous: rank %d: %s from rank 0 at %s:%d", rank,
                  t == -2 ? "no answer in time" : "connection closed", host, port);
  } else if (memcmp(head, "OVLI", 4) != 0 || get_u32(head + 4) != RDV_VERSION || get_u32(head + 8) != (uint32_t)len) {
    rc = ovl_fail(err, OVL_EUSER, "rendezvous: rank %d: %s:%d is not an ovl-ddp rank 0 of this build", rank, host, port);
  } else if (transfer(fd, blob, len, 0, deadline) != 0) {
    rc = ovl_fail(err, OVL_EUSER, "rendezvous: rank %d: the id from %s:%d was cut short", rank, host, port);
  }
  close(fd);
  return rc;
}

int ovl_rdv_exchange(const ovl_launch *l, void *blob, size_t len, int timeout_ms, ovl_err *err) {
  if (l->world_size <= 1) return OVL_OK;
  int port = 0;
  int rc = ovl_rdv_port(l, &port, err);
  if (rc) return rc;
  if (l->rank == 0) return ovl_rdv_serve(port, l->world_size, blob, len, timeout_ms, err);
  if (!l->master_addr[0])
    return ovl_fail(err, OVL_EUSER, "rendezvous: MASTER_ADDR is not set (rank %d needs rank 0's address)", l->rank);
  return ovl_rdv_fetch(l->master_addr, port, l->rank, l->world_size, blob, len, timeout_ms, err);
}
