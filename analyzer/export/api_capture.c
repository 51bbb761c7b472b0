/* The export's api rows read beside the analysis: see api_capture.h. */
#include "api_capture.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int ovl_api_reader_wanted(void) {
  const char *env = getenv("OVL_EXPORT_THREADS");
  if (env && (strcmp(env, "0") == 0 || strcmp(env, "1") == 0)) return env[0] == '1';
  return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

typedef struct api_scan {
  ovl_api_capture *c;
  size_t *budget_left;
} api_scan;

/* One row: start, duration, thread, correlation and name, each against the row before. */
static int on_row(void *ctx, const ovl_api_row *row) {
  api_scan *s = ctx;
  ovl_api_capture *c = s->c;
  size_t before = c->records.bytes;
  unsigned char *p = ovl_varbuf_room(&c->records);
  if (!p) return 1;
  if (c->records.bytes != before) {  /* a new chunk: within the budget? */
    size_t chunk = c->records.bytes - before;
    if (*s->budget_left < chunk) return 1;
    *s->budget_left -= chunk;
    c->charged += chunk;
  }
  p = ovl_put_varint(p, ovl_zigzag_diff(c->prev_start, row->start));
  p = ovl_put_varint(p, ovl_zigzag_diff(row->start, row->end));
  p = ovl_put_varint(p, ovl_zigzag_diff(c->prev_tid, row->tid));
  p = ovl_put_varint(p, ovl_zigzag_diff(c->prev_corr, row->correlation));
  p = ovl_put_varint(p, ovl_zigzag_diff(0, row->name));
  ovl_varbuf_commit(&c->records, p);
  c->prev_start = row->start;
  c->prev_tid = row->tid;
  c->prev_corr = row->correlation;
  c->nrows++;
  if (row->correlation >= 0 && ovl_idset_add(&c->corrs, row->correlation)) return 1;
  return 0;
}

/* Reads one file's rows into c; leaves c incomplete (and empty) on any failure. */
static void read_file(ovl_api_reader *r, const char *path, ovl_api_capture *c) {
  ovl_trace *t = NULL;
  ovl_err err;
  ovl_err_clear(&err);
  if (ovl_trace_open(path, &t, &err)) return;  /* not an ovl trace: the job converts it */
  api_scan s = {c, &r->budget_left};
  if (!ovl_trace_has_table(t, "api") || ovl_trace_scan_api(t, 0, on_row, &s, &err) == OVL_OK) c->complete = 1;
  ovl_trace_close(t);
  if (!c->complete) {  /* its chunks go back to the budget: a smaller file may still fit */
    r->budget_left += c->charged;
    ovl_varbuf_free(&c->records);
    ovl_idset_free(&c->corrs);
    c->nrows = 0;
  }
}

static void *reader_main(void *arg) {
  ovl_api_reader *r = arg;
  ovl_api_capture **tail = &r->files;
  for (size_t i = 0; i < r->npaths && !atomic_load(&r->stop); i++) {
    struct stat st;
    if (stat(r->paths[i], &st) != 0 || !S_ISREG(st.st_mode)) continue;
    ovl_api_capture *c = calloc(1, sizeof *c);
    if (!c) break;
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    read_file(r, r->paths[i], c);
    *tail = c;
    tail = &c->next;
  }
  return NULL;
}

void ovl_api_reader_start(ovl_api_reader *r, char *const *paths, size_t npaths) {
  memset(r, 0, sizeof *r);
  atomic_init(&r->stop, 0);
  r->budget_left = OVL_API_CAPTURE_BUDGET;
  r->paths = calloc(npaths ? npaths : 1, sizeof *r->paths);
  if (!r->paths) return;
  for (size_t i = 0; i < npaths; i++)
    if (!(r->paths[r->npaths++] = strdup(paths[i]))) {
      ovl_api_reader_free(r);
      return;
    }
  if (pthread_create(&r->thread, NULL, reader_main, r) == 0) r->running = 1;
}

void ovl_api_reader_join(ovl_api_reader *r) {
  if (!r->running) return;
  atomic_store(&r->stop, 1);
  pthread_join(r->thread, NULL);
  r->running = 0;
}

const ovl_api_capture *ovl_api_reader_find(const ovl_api_reader *r, const char *path) {
  struct stat st;
  if (r->running || !r->files || stat(path, &st) != 0) return NULL;
  for (const ovl_api_capture *c = r->files; c; c = c->next)
    if (c->dev == st.st_dev && c->ino == st.st_ino) return c->complete ? c : NULL;
  return NULL;
}

int ovl_api_capture_replay(const ovl_api_capture *c, ovl_api_fn fn, void *ctx) {
  ovl_varbuf_reader in;
  ovl_varbuf_reader_init(&in, &c->records);
  ovl_api_row row = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < c->nrows; i++) {
    const unsigned char *p = ovl_varbuf_next(&in);
    row.start = ovl_zigzag_add(row.start, ovl_get_varint(&p));
    row.end = ovl_zigzag_add(row.start, ovl_get_varint(&p));
    row.tid = ovl_zigzag_add(row.tid, ovl_get_varint(&p));
    row.correlation = ovl_zigzag_add(row.correlation, ovl_get_varint(&p));
    row.name = ovl_zigzag_add(0, ovl_get_varint(&p));
    ovl_varbuf_done(&in, p);
    int rc = fn(ctx, &row);
    if (rc) return rc;
  }
  return 0;
}

void ovl_api_reader_free(ovl_api_reader *r) {
  ovl_api_reader_join(r);
  while (r->files) {
    ovl_api_capture *next = r->files->next;
    ovl_varbuf_free(&r->files->records);
    ovl_idset_free(&r->files->corrs);
    free(r->files);
    r->files = next;
  }
  for (size_t i = 0; i < r->npaths; i++) free(r->paths[i]);
  free(r->paths);
  r->paths = NULL;
  r->npaths = 0;
}
