/*
** After the gather: the root's requests to the processes that measured its ranks (the HTML
** timeline's step work, read from a trace only its measurer can read), and the end of the
** command (every process exits with the root's status). Messages are point to point: a request
** is the root's packed question, a reply the packed answer.
*/
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

/* The sanitized build checks for leaks before MPI_Finalize: Open MPI unloads its components
** there, and what they keep for good would be reported at exit from modules no longer known. */
#if defined(__SANITIZE_ADDRESS__)
#define OVL_LEAK_CHECK_HERE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OVL_LEAK_CHECK_HERE 1
#endif
#endif
#ifdef OVL_LEAK_CHECK_HERE
#include <sanitizer/lsan_interface.h>
#endif

static int send_bytes(const ovl_bytes *b, int to, int tag) {
  return MPI_Send(b->data, (int)b->len, MPI_BYTE, to, tag, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/* Receives one message of any size into *b (caller frees). */
static int recv_bytes(ovl_bytes *b, int from, int tag) {
  MPI_Status st;
  int n = 0;
  memset(b, 0, sizeof *b);
  /* the others wait here through the root's serial part: without spinning */
  if (ovl_mpi_probe_idle(from, tag, &st) != MPI_SUCCESS) return -1;
  MPI_Get_count(&st, MPI_BYTE, &n);
  if (!(b->data = malloc(n > 0 ? (size_t)n : 1))) return -1;
  b->len = b->cap = (size_t)n;
  return MPI_Recv(b->data, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS ? 0 : -1;
}

static void put_work(ovl_bytes *b, const ovl_step_work *w) {
  ovl_put_u64(b, w->nlanes);
  for (size_t i = 0; i < w->nlanes; i++) {
    const ovl_step_lane *l = &w->lanes[i];
    ovl_put_i64(b, l->stream);
    for (int k = 0; k < 3; k++) ovl_put_i64(b, l->busy[k]);
    ovl_put_u64(b, l->n);
    for (size_t k = 0; k < l->n; k++) {
      ovl_put_i64(b, l->boxes[k].start);
      ovl_put_i64_near(b, l->boxes[k].end, l->boxes[k].start);
      ovl_put_i64(b, l->boxes[k].cls);
    }
  }
  ovl_put_u64(b, w->nexposed);
  for (size_t k = 0; k < w->nexposed; k++) {
    ovl_put_i64(b, w->exposed[k].start);
    ovl_put_i64_near(b, w->exposed[k].end, w->exposed[k].start);
    ovl_put_i64(b, w->exposed[k].cls);
  }
}

static int get_boxes(ovl_bytes_reader *in, ovl_step_box **out, size_t *n) {
  size_t count = ovl_get_count(in, 3);
  *n = 0;
  if (!(*out = calloc(count ? count : 1, sizeof **out))) return -1;
  for (size_t k = 0; k < count && !in->bad; k++, (*n)++) {
    (*out)[k].start = ovl_get_i64(in);
    (*out)[k].end = ovl_get_i64_near(in, (*out)[k].start);
    (*out)[k].cls = (ovl_work_class)ovl_get_i64(in);
  }
  return 0;
}

static int get_work(ovl_bytes_reader *in, ovl_step_work *w) {
  memset(w, 0, sizeof *w);
  size_t nlanes = ovl_get_count(in, 6);
  if (!(w->lanes = calloc(nlanes ? nlanes : 1, sizeof *w->lanes))) return -1;
  for (size_t i = 0; i < nlanes && !in->bad; i++, w->nlanes++) {
    ovl_step_lane *l = &w->lanes[i];
    l->stream = ovl_get_i64(in);
    for (int k = 0; k < 3; k++) l->busy[k] = ovl_get_i64(in);
    if (get_boxes(in, &l->boxes, &l->n)) return -1;
    l->cap = l->n;
  }
  if (get_boxes(in, &w->exposed, &w->nexposed)) return -1;
  w->exposed_cap = w->nexposed;
  return in->bad ? -1 : 0;
}

/* A process's answer to a step work request: read its own trace, every step asked in one pass. */
static void answer_step_work(ovl_bytes_reader *in, ovl_bytes *reply) {
  int oom = 0;
  ovl_rank_result r;
  memset(&r, 0, sizeof r);
  r.ovl_path = ovl_get_str(in, &oom);
  r.device = ovl_get_i64(in);
  size_t n = ovl_get_count(in, 3);
  ovl_step_result *st = calloc(n ? n : 1, sizeof *st);
  const ovl_step_result **steps = calloc(n ? n : 1, sizeof *steps);
  int64_t *merge = calloc(n ? n : 1, sizeof *merge);
  ovl_step_work *w = calloc(n ? n : 1, sizeof *w);
  oom |= !st || !steps || !merge || !w;
  for (size_t i = 0; !oom && i < n; i++) {
    st[i].start = ovl_get_i64(in);
    st[i].end = ovl_get_i64(in);
    merge[i] = ovl_get_i64(in);
    steps[i] = &st[i];
  }
  ovl_err err;
  ovl_err_clear(&err);
  int rc = oom ? ovl_oom(&err, "timeline")
           : in->bad || !r.ovl_path ? ovl_fail(&err, OVL_EINTERNAL, "timeline request: malformed (a fault of ovl)")
                                     : ovl_step_work_read_many(ovl_mpi_s.ctx, &r, steps, merge, n, w, &err);
  ovl_put_i64(reply, rc);
  ovl_put_str(reply, err.msg);
  for (size_t i = 0; !rc && i < n; i++) put_work(reply, &w[i]);
  for (size_t i = 0; !rc && i < n; i++) ovl_step_work_free(&w[i]);
  free(st);
  free(steps);
  free(merge);
  free(w);
  free(r.ovl_path);
}

static void finalize(void) {
  ovl_mpi_kept_free_all();
  for (size_t i = 0; i < ovl_mpi_s.nmine; i++) ovl_measured_file_free(&ovl_mpi_s.mine[i]);
  free(ovl_mpi_s.mine);
  free(ovl_mpi_s.owners);
  memset(&ovl_mpi_s, 0, sizeof ovl_mpi_s);
#ifdef OVL_LEAK_CHECK_HERE
  __lsan_do_leak_check();  /* ovl's own memory: everything not reachable now is a leak */
#endif
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

/* Answers the root's requests until one of kind last; *status: its status (REQ_END's). 0, or -1
** when the root could not be heard or answered. */
static int serve_until(uint64_t last, int *status) {
  for (;;) {
    ovl_bytes req;
    if (recv_bytes(&req, 0, OVL_MPI_TAG_REQUEST)) return -1;
    ovl_bytes_reader in = {req.data, req.data + req.len, 0};
    uint64_t kind = ovl_get_u64(&in);
    if (kind == last) {
      if (kind == OVL_MPI_REQ_END) *status = (int)ovl_get_i64(&in);
      ovl_bytes_free(&req);
      return 0;
    }
    ovl_bytes reply = {0};
    if (kind == OVL_MPI_REQ_STEP_WORK) answer_step_work(&in, &reply);
    else if (kind == OVL_MPI_REQ_PIECES) ovl_mpi_answer_pieces(&in, &reply);
    else ovl_put_i64(&reply, OVL_EINTERNAL), ovl_put_str(&reply, "unknown request (a fault of ovl)");
    ovl_bytes_free(&req);
    int failed = reply.oom || send_bytes(&reply, 0, OVL_MPI_TAG_REPLY);
    ovl_bytes_free(&reply);
    if (failed) return -1;
  }
}

int ovl_mpi_serve_assembly(void) {
  int unused = 0;
  return serve_until(OVL_MPI_REQ_ASSEMBLED, &unused);
}

void ovl_mpi_assembled(void) {
  ovl_bytes done = {0};
  ovl_put_u64(&done, OVL_MPI_REQ_ASSEMBLED);
  for (int p = 1; !done.oom && p < ovl_mpi_s.size; p++) send_bytes(&done, p, OVL_MPI_TAG_REQUEST);
  ovl_bytes_free(&done);
}

int ovl_mpi_ask(int to, const ovl_bytes *req, ovl_bytes *reply) {
  memset(reply, 0, sizeof *reply);
  return send_bytes(req, to, OVL_MPI_TAG_REQUEST) || recv_bytes(reply, to, OVL_MPI_TAG_REPLY) ? -1 : 0;
}

int ovl_mpi_ask_all(const ovl_bytes *req, ovl_bytes *reply) {
  int n = ovl_mpi_s.size, failed = 0, posted = 0;
  MPI_Request *sent = malloc((size_t)n * sizeof *sent);
  if (!sent) return -1;
  /* every request posted first, so the processes answer at the same time; a reply is received
  ** before the next is awaited, and no process sends before it has its request: no deadlock */
  for (int p = 1; p < n; p++) {
    if (req[p].len == 0) continue;
    if (MPI_Isend(req[p].data, (int)req[p].len, MPI_BYTE, p, OVL_MPI_TAG_REQUEST, MPI_COMM_WORLD, &sent[posted]) !=
        MPI_SUCCESS) {
      failed = 1;
      break;
    }
    posted++;
  }
  for (int p = 1; !failed && p < n; p++)
    if (req[p].len > 0 && recv_bytes(&reply[p], p, OVL_MPI_TAG_REPLY)) failed = 1;
  if (posted && MPI_Waitall(posted, sent, MPI_STATUSES_IGNORE) != MPI_SUCCESS) failed = 1;
  free(sent);
  return failed ? -1 : 0;
}

int ovl_mpi_serve(void) {
  int status = OVL_EINTERNAL;
  if (serve_until(OVL_MPI_REQ_END, &status)) status = OVL_EINTERNAL;
  finalize();
  return status;
}

int ovl_mpi_end(int status) {
  if (!ovl_mpi_s.started) return status;
  if (ovl_mpi_s.rank != 0) return ovl_mpi_serve();
  ovl_bytes end = {0};
  ovl_put_u64(&end, OVL_MPI_REQ_END);
  ovl_put_i64(&end, status);
  for (int p = 1; !end.oom && p < ovl_mpi_s.size; p++) send_bytes(&end, p, OVL_MPI_TAG_REQUEST);
  ovl_bytes_free(&end);
  finalize();
  return status;
}

int ovl_mpi_step_work_read_many(const ovl_analysis_ctx *ctx, const ovl_rank_result *r,
                                const ovl_step_result *const *steps, const int64_t *merge_ns, size_t n,
                                ovl_step_work *out, ovl_err *err) {
  int owner = 0;
  for (size_t i = 0; i < ovl_mpi_s.nowners && !owner; i++)
    if (ovl_mpi_s.owners[i].ovl_path == r->ovl_path) owner = ovl_mpi_s.owners[i].process;
  if (!ovl_mpi_s.started || owner == 0) return ovl_step_work_read_many(ctx, r, steps, merge_ns, n, out, err);
  memset(out, 0, n * sizeof *out);
  ovl_bytes req = {0}, reply = {0};
  ovl_put_u64(&req, OVL_MPI_REQ_STEP_WORK);
  ovl_put_str(&req, r->ovl_path);
  ovl_put_i64(&req, r->device);
  ovl_put_u64(&req, n);
  for (size_t i = 0; i < n; i++) {
    ovl_put_i64(&req, steps[i]->start);
    ovl_put_i64(&req, steps[i]->end);
    ovl_put_i64(&req, merge_ns[i]);
  }
  int rc = req.oom || ovl_mpi_ask(owner, &req, &reply)
               ? ovl_fail(err, OVL_EINTERNAL, "%s: timeline: no answer from process %d", r->trace_path, owner)
               : OVL_OK;
  ovl_bytes_free(&req);
  if (!rc) {
    ovl_bytes_reader in = {reply.data, reply.data + reply.len, 0};
    int theirs = (int)ovl_get_i64(&in);
    char msg[sizeof err->msg];
    ovl_get_str_into(&in, msg, sizeof msg);
    if (theirs) rc = ovl_fail(err, theirs, "%s", msg);
    for (size_t i = 0; !rc && i < n; i++)
      if (get_work(&in, &out[i])) rc = ovl_fail(err, OVL_EINTERNAL, "%s: timeline: malformed answer", r->trace_path);
    if (rc) {
      for (size_t i = 0; i < n; i++) ovl_step_work_free(&out[i]);
      memset(out, 0, n * sizeof *out);
    }
  }
  ovl_bytes_free(&reply);
  return rc;
}
