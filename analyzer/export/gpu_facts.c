/* Facts of each file's GPU work for the export, gathered during the analysis: see gpu_facts.h. */
#include "gpu_facts.h"

#include "base/none.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

int64_t ovl_fact_stream_key(int64_t device, int64_t stream) {
  return (int64_t)((uint64_t)device << 32 ^ (uint64_t)stream);
}

/* The entry of (device, stream), created on first sight; NULL when memory runs out. */
static ovl_fact_stream *fact_stream(ovl_gpu_facts *g, int64_t device, int64_t stream) {
  if (g->nstreams && g->streams[g->last].device == device && g->streams[g->last].stream == stream)
    return &g->streams[g->last];
  int64_t idx;
  if (ovl_i64map_get(&g->index, ovl_fact_stream_key(device, stream), &idx) && g->streams[idx].device == device &&
      g->streams[idx].stream == stream)
    return &g->streams[g->last = (size_t)idx];
  for (size_t i = 0; i < g->nstreams; i++)  /* key collision: rare */
    if (g->streams[i].device == device && g->streams[i].stream == stream) return &g->streams[g->last = i];
  if (g->nstreams == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 16;
    ovl_fact_stream *grown = realloc(g->streams, cap * sizeof *grown);
    if (!grown) return NULL;
    g->streams = grown;
    g->cap = cap;
  }
  if (ovl_i64map_put(&g->index, ovl_fact_stream_key(device, stream), (int64_t)g->nstreams)) return NULL;
  ovl_fact_stream *s = &g->streams[g->nstreams];
  memset(s, 0, sizeof *s);
  s->device = device;
  s->stream = stream;
  g->last = g->nstreams++;
  return s;
}

int ovl_gpu_facts_add(ovl_gpu_facts *g, const ovl_classified_work *cw) {
  ovl_fact_stream *s = fact_stream(g, cw->w.device, cw->w.stream);
  if (!s) return -1;
  s->count[cw->cls]++;
  return ovl_idset_add(&g->gpu_corr, cw->w.correlation);
}

/* ---- the capture of the work ---- */

/* Item flags: the class in the low two bits, then: */
#define CAP_MEMOP 4u
#define CAP_CHANNELS 8u
#define CAP_COLLS 16u      /* a count of collectives rows follows */
#define CAP_STREAM 32u     /* not the stream of the item before: its index follows */
#define CAP_NO_NAME 64u    /* a kernel of unknown name (OVL_NONE) */

static void capture_free(ovl_work_capture *c) {
  ovl_varbuf_free(&c->records);
  free(c->colls);
  int failed = c->failed;
  memset(c, 0, sizeof *c);
  c->failed = failed;
}

static int memkind_index(ovl_work_capture *c, const char *kind) {
  for (unsigned i = 0; i < c->nmemkinds; i++)
    if (strncmp(c->memkind[i], kind, sizeof c->memkind[i]) == 0) return (int)i;  /* the bytes after the NUL may be unset */
  if (c->nmemkinds == OVL_CAPTURE_MEMKINDS) return -1;
  memcpy(c->memkind[c->nmemkinds], kind, sizeof c->memkind[0]);
  return (int)c->nmemkinds++;
}

static int capture_add(ovl_work_capture *c, size_t stream, const ovl_classified_work *cw) {
  const ovl_work *w = &cw->w;
  int kind = w->is_memop ? memkind_index(c, w->memkind) : 0;
  unsigned char *p = ovl_varbuf_room(&c->records);
  if (kind < 0 || (unsigned)cw->cls > 3 || !p) return -1;
  if (cw->ncolls) {
    if (c->colls_cap - c->ncolls < cw->ncolls) {
      size_t cap = c->colls_cap ? c->colls_cap : 1024;
      while (cap - c->ncolls < cw->ncolls) cap *= 2;
      int32_t *grown = realloc(c->colls, cap * sizeof *grown);
      if (!grown) return -1;
      c->colls = grown;
      c->colls_cap = cap;
    }
    memcpy(c->colls + c->ncolls, cw->colls, cw->ncolls * sizeof *cw->colls);
    c->ncolls += cw->ncolls;
  }
  unsigned flags = (unsigned)cw->cls;
  if (w->is_memop) flags |= CAP_MEMOP;
  if (cw->from_channels) flags |= CAP_CHANNELS;
  if (cw->ncolls) flags |= CAP_COLLS;
  if (c->nitems == 0 || stream != c->prev_stream) flags |= CAP_STREAM;
  if (!w->is_memop && w->name == OVL_NONE) flags |= CAP_NO_NAME;
  *p++ = (unsigned char)flags;
  if (flags & CAP_STREAM) p = ovl_put_varint(p, stream);
  p = ovl_put_varint(p, ovl_zigzag_diff(c->prev_start, w->start));
  p = ovl_put_varint(p, ovl_zigzag_diff(w->start, w->end));
  p = ovl_put_varint(p, ovl_zigzag_diff(c->prev_corr, w->correlation));
  if (w->is_memop) p = ovl_put_varint(p, (uint64_t)kind);
  else if (!(flags & CAP_NO_NAME)) p = ovl_put_varint(p, ovl_zigzag_diff(0, w->name));
  if (flags & CAP_COLLS) p = ovl_put_varint(p, cw->ncolls);
  ovl_varbuf_commit(&c->records, p);
  c->prev_start = w->start;
  c->prev_corr = w->correlation;
  c->prev_stream = stream;
  c->nitems++;
  return 0;
}

void ovl_gpu_facts_capture(ovl_gpu_facts *g, const ovl_classified_work *cw) {
  ovl_work_capture *c = &g->capture;
  if (c->failed) return;
  if (capture_add(c, g->last, cw)) {
    capture_free(c);
    c->failed = 1;
  }
}

int ovl_gpu_facts_captured(const ovl_gpu_facts *g) {
  long counted = 0;
  for (size_t i = 0; i < g->nstreams; i++) counted += g->streams[i].count[0] + g->streams[i].count[1] + g->streams[i].count[2];
  return !g->capture.failed && (size_t)counted == g->capture.nitems;
}

void ovl_capture_cursor_init(ovl_capture_cursor *cur, const ovl_gpu_facts *g) {
  memset(cur, 0, sizeof *cur);
  ovl_varbuf_reader_init(&cur->in, &g->capture.records);
}

int ovl_capture_next(ovl_capture_cursor *cur, const ovl_gpu_facts *g, ovl_classified_work *cw) {
  const ovl_work_capture *c = &g->capture;
  if (cur->item == c->nitems) return 0;
  const unsigned char *p = ovl_varbuf_next(&cur->in);
  unsigned flags = *p++;
  if (flags & CAP_STREAM) cur->stream = (size_t)ovl_get_varint(&p);
  assert(cur->stream < g->nstreams);
  ovl_work *w = &cw->w;
  w->device = g->streams[cur->stream].device;
  w->stream = g->streams[cur->stream].stream;
  cur->start = w->start = ovl_zigzag_add(cur->start, ovl_get_varint(&p));
  w->end = ovl_zigzag_add(w->start, ovl_get_varint(&p));
  cur->corr = w->correlation = ovl_zigzag_add(cur->corr, ovl_get_varint(&p));
  w->is_memop = (flags & CAP_MEMOP) != 0;
  w->name = OVL_NONE;
  memset(w->memkind, 0, sizeof w->memkind);
  if (w->is_memop) memcpy(w->memkind, c->memkind[ovl_get_varint(&p)], sizeof w->memkind);
  else if (!(flags & CAP_NO_NAME)) w->name = ovl_zigzag_add(0, ovl_get_varint(&p));
  w->bytes = OVL_NONE;
  for (int i = 0; i < 3; i++) w->grid[i] = w->block[i] = OVL_NONE;
  cw->cls = (ovl_work_class)(flags & 3u);
  cw->from_channels = (flags & CAP_CHANNELS) != 0;
  cw->colls = NULL;
  cw->ncolls = 0;
  if (flags & CAP_COLLS) {
    cw->ncolls = (uint32_t)ovl_get_varint(&p);
    assert(cur->coll + cw->ncolls <= c->ncolls);
    cw->colls = c->colls + cur->coll;
    cur->coll += cw->ncolls;
  }
  ovl_varbuf_done(&cur->in, p);
  cur->item++;
  return 1;
}

void ovl_gpu_facts_clear(ovl_gpu_facts *g) {
  capture_free(&g->capture);
  g->capture.failed = 0;
  g->nstreams = 0;
  g->last = 0;
  ovl_i64map_free(&g->index);
  ovl_idset_free(&g->gpu_corr);
}

void ovl_gpu_facts_free(ovl_gpu_facts *g) {
  ovl_gpu_facts_clear(g);
  free(g->streams);
  free(g->path);
  memset(g, 0, sizeof *g);
}

/* ---- the analysis's observer ---- */

static void *facts_open(void *self, const char *path) {
  ovl_export_facts *x = self;
  ovl_gpu_facts *g = calloc(1, sizeof *g);
  if (g) g->path = strdup(path);
  if (!g || !g->path) {
    free(g);
    return NULL;
  }
  pthread_mutex_lock(&x->lock);
  g->next = x->files;
  x->files = g;
  pthread_mutex_unlock(&x->lock);
  return g;
}

static void facts_restart(void *file_state) {
  ovl_gpu_facts *g = file_state;
  ovl_gpu_facts_clear(g);
  g->sorted = 1;
}

static int facts_on_work(void *file_state, const struct ovl_classified_work *cw) {
  if (ovl_gpu_facts_add(file_state, cw)) return -1;
  ovl_gpu_facts_capture(file_state, cw);
  return 0;
}

int ovl_export_facts_init(ovl_export_facts *x) {
  memset(x, 0, sizeof *x);
  if (pthread_mutex_init(&x->lock, NULL) != 0) return -1;
  x->observer = (ovl_work_observer){x, facts_open, facts_restart, facts_on_work};
  return 0;
}

const ovl_gpu_facts *ovl_export_facts_find(const ovl_export_facts *x, const char *path) {
  const ovl_gpu_facts *found = NULL;
  for (const ovl_gpu_facts *g = x ? x->files : NULL; g; g = g->next) {
    if (strcmp(g->path, path) != 0) continue;
    if (found) return NULL;
    found = g;
  }
  return found;
}

void ovl_export_facts_free(ovl_export_facts *x) {
  while (x->files) {
    ovl_gpu_facts *next = x->files->next;
    ovl_gpu_facts_free(x->files);
    free(x->files);
    x->files = next;
  }
  ovl_api_reader_free(&x->api);
  pthread_mutex_destroy(&x->lock);
}
