/*
** The MPI session and its byte transport: see mpi_internal.h. Every collective here is entered
** by every process; a failure on one (no memory) is agreed on before anyone moves on, so no
** process waits forever in a collective the others left.
*/
#include "mpi_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

ovl_mpi_session ovl_mpi_s;

/* A round of the gather carries at most this many bytes in all (Gatherv counts are ints). */
#define ROUND_BYTES ((size_t)1 << 28)

int ovl_mpi_begin(int *is_root, ovl_err *err) {
  *is_root = 1;
  if (ovl_mpi_s.started) {
    *is_root = ovl_mpi_s.rank == 0;
    return OVL_OK;
  }
  int inited = 0, provided = 0;
  MPI_Initialized(&inited);
  if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    return ovl_fail(err, OVL_EINTERNAL, "--mpi: MPI_Init failed");
  MPI_Comm_rank(MPI_COMM_WORLD, &ovl_mpi_s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ovl_mpi_s.size);
  MPI_Comm node;
  ovl_mpi_s.node_procs = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ovl_mpi_s.rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_size(node, &ovl_mpi_s.node_procs);
    MPI_Comm_free(&node);
  }
  ovl_mpi_s.started = 1;
  *is_root = ovl_mpi_s.rank == 0;
  return OVL_OK;
}

int ovl_mpi_active(void) { return ovl_mpi_s.started; }

int ovl_mpi_agree_status(int rc, ovl_err *err) { return ovl_mpi_agree(rc, err); }

/* The pause before the next test of a wait: 20 us doubling to 1 ms, so a short wait costs
** little latency and a long one (the root's serial part: seconds) costs no CPU. */
static void idle_pause(long *ns) {
  struct timespec t = {0, *ns};
  nanosleep(&t, NULL);
  if (*ns < 1000000) *ns *= 2;
}

int ovl_mpi_wait_idle(MPI_Request *req) {
  long pause = 20000;
  for (;;) {
    int done = 0;
    int rc = MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    idle_pause(&pause);
  }
}

int ovl_mpi_probe_idle(int from, int tag, MPI_Status *st) {
  long pause = 20000;
  for (;;) {
    int found = 0;
    int rc = MPI_Iprobe(from, tag, MPI_COMM_WORLD, &found, st);
    if (rc != MPI_SUCCESS || found) return rc;
    idle_pause(&pause);
  }
}

int ovl_mpi_agree(int rc, ovl_err *err) {
  int mine = rc ? ovl_mpi_s.rank : ovl_mpi_s.size, first = 0;
  /* Processes reach an agreement at different times (each after its own share of the work):
  ** the early ones wait here without spinning. */
  MPI_Request req;
  if (MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
      ovl_mpi_wait_idle(&req) != MPI_SUCCESS)
    return ovl_fail(err, OVL_EINTERNAL, "--mpi: the processes could not agree (MPI_Iallreduce failed)");
  if (first == ovl_mpi_s.size) return OVL_OK;
  ovl_err shared;
  memset(&shared, 0, sizeof shared);
  if (ovl_mpi_s.rank == first) {
    shared = *err;
    shared.code = rc;
  }
  MPI_Bcast(&shared, (int)sizeof shared, MPI_BYTE, first, MPI_COMM_WORLD);
  shared.msg[sizeof shared.msg - 1] = 0;
  *err = shared;
  return shared.code ? shared.code : OVL_EINTERNAL;
}

/* Sends or receives n bytes from the root in pieces an int can count. */
static void bcast_raw(unsigned char *p, size_t n) {
  while (n > 0) {
    int piece = n > ROUND_BYTES ? (int)ROUND_BYTES : (int)n;
    MPI_Bcast(p, piece, MPI_BYTE, 0, MPI_COMM_WORLD);
    p += piece;
    n -= (size_t)piece;
  }
}

int ovl_mpi_bcast_bytes(ovl_bytes *b, ovl_err *err) {
  unsigned long long len = b->len;
  MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  int rc = OVL_OK;
  if (ovl_mpi_s.rank != 0) {
    ovl_bytes_free(b);
    if (len && !(b->data = malloc(len))) rc = ovl_oom(err, "file list received");
    else b->len = b->cap = len;
  }
  if ((rc = ovl_mpi_agree(rc, err)) != OVL_OK) return rc;
  bcast_raw(b->data, len);
  return OVL_OK;
}

static void free_all(ovl_bytes *all, int n) {
  for (int p = 0; all && p < n; p++) ovl_bytes_free(&all[p]);
  free(all);
}

/* One round on the root: counts[p] bytes of each process appended to all[p]. */
static int gather_round(const unsigned char *mine, int count, ovl_bytes *all, ovl_err *err) {
  int size = ovl_mpi_s.size, root = ovl_mpi_s.rank == 0, rc = OVL_OK;
  int *counts = NULL, *displs = NULL;
  unsigned char *buf = NULL;
  if (root) {
    counts = calloc((size_t)size, sizeof *counts);
    displs = calloc((size_t)size, sizeof *displs);
    if (!counts || !displs) rc = ovl_oom(err, "results received");
  }
  MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
  size_t total = 0;
  for (int p = 0; root && !rc && p < size; p++) {
    displs[p] = (int)total;
    total += (size_t)counts[p];
  }
  if (root && !rc && !(buf = malloc(total ? total : 1))) rc = ovl_oom(err, "results received");
  rc = ovl_mpi_agree(rc, err);
  if (!rc) MPI_Gatherv(mine, count, MPI_BYTE, buf, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
  for (int p = 0; root && !rc && p < size; p++) {
    ovl_put_raw(&all[p], buf + displs[p], (size_t)counts[p]);
    if (all[p].oom) rc = ovl_oom(err, "results received");
  }
  free(buf);
  free(counts);
  free(displs);
  return ovl_mpi_agree(rc, err);
}

int ovl_mpi_gather_bytes(const ovl_bytes *mine, ovl_bytes **all, ovl_err *err) {
  int size = ovl_mpi_s.size, rc = OVL_OK;
  *all = NULL;
  if (ovl_mpi_s.rank == 0 && !(*all = calloc((size_t)size, sizeof **all))) rc = ovl_oom(err, "results received");
  rc = ovl_mpi_agree(rc, err);
  size_t per_round = ROUND_BYTES / (size_t)size, sent = 0;
  if (per_round < 65536) per_round = 65536;
  for (;;) {
    if (rc) break;
    size_t left = mine->len - sent;
    int count = left > per_round ? (int)per_round : (int)left, most = 0;
    MPI_Allreduce(&count, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (most == 0) break;
    rc = gather_round(mine->data + sent, count, *all, err);
    sent += (size_t)count;
  }
  if (rc) {
    free_all(*all, size);
    *all = NULL;
  }
  return rc;
}
