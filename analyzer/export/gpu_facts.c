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

#define CHUNK_BYTES ((size_t)1 << 20)
#define ITEM_MAX 64        /* a flags byte and at most five 10-byte varints */

/* Item flags: the class in the low two bits, then: */
#define CAP_MEMOP 4u
#define CAP_CHANNELS 8u
#define CAP_COLLS 16u      /* a count of collectives rows follows */
#define CAP_STREAM 32u     /* not the stream of the item before: its index follows */
#define CAP_NO_NAME 64u    /* a kernel of unknown name (OVL_NONE) */

static void capture_free(ovl_work_capture *c) {
  while (c->head) {
    ovl_work_chunk *next = c->head->next;
    free(c->head);
    c->head = next;
  }
  free(c->colls);
  int failed = c->failed;
  memset(c, 0, sizeof *c);
  c->failed = failed;
}

static unsigned char *put_varint(unsigned char *p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  *p++ = (unsigned char)v;
  return p;
}

/* Differences are taken modulo 2^64 (OVL_NONE included) and zigzagged: small either way. */
static uint64_t zigzag(uint64_t d) { return d << 1 ^ (uint64_t)-(int64_t)(d >> 63); }
static uint64_t unzigzag(uint64_t z) { return z >> 1 ^ (uint64_t)-(int64_t)(z & 1); }

static int memkind_index(ovl_work_capture *c, const char *kind) {
  for (unsigned i = 0; i < c->nmemkinds; i++)
    if (memcmp(c->memkind[i], kind, sizeof c->memkind[i]) == 0) return (int)i;
  if (c->nmemkinds == OVL_CAPTURE_MEMKINDS) return -1;
  memcpy(c->memkind[c->nmemkinds], kind, sizeof c->memkind[0]);
  return (int)c->nmemkinds++;
}

/* Room for one more record; 0 when memory runs out. */
static int capture_room(ovl_work_capture *c) {
  if (c->tail && c->tail->cap - c->tail->len >= ITEM_MAX) return 1;
  ovl_work_chunk *k = malloc(sizeof *k + CHUNK_BYTES);
  if (!k) return 0;
  k->next = NULL;
  k->len = 0;
  k->cap = CHUNK_BYTES;
  if (c->tail) c->tail->next = k;
  else c->head = k;
  c->tail = k;
  return 1;
}

static int capture_add(ovl_work_capture *c, size_t stream, const ovl_classified_work *cw) {
  const ovl_work *w = &cw->w;
  int kind = w->is_memop ? memkind_index(c, w->memkind) : 0;
  if (kind < 0 || (unsigned)cw->cls > 3 || !capture_room(c)) return -1;
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
  unsigned char *p = c->tail->data + c->tail->len;
  *p++ = (unsigned char)flags;
  if (flags & CAP_STREAM) p = put_varint(p, stream);
  p = put_varint(p, zigzag((uint64_t)w->start - (uint64_t)c->prev_start));
  p = put_varint(p, zigzag((uint64_t)w->end - (uint64_t)w->start));
  p = put_varint(p, zigzag((uint64_t)w->correlation - (uint64_t)c->prev_corr));
  if (w->is_memop) p = put_varint(p, (uint64_t)kind);
  else if (!(flags & CAP_NO_NAME)) p = put_varint(p, zigzag((uint64_t)w->name));
  if (flags & CAP_COLLS) p = put_varint(p, cw->ncolls);
  c->tail->len = (size_t)(p - c->tail->data);
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
  cur->chunk = g->capture.head;
}

static uint64_t get_varint(const unsigned char **pp) {
  const unsigned char *p = *pp;
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    unsigned char b = *p++;
    v |= (uint64_t)(b & 0x7F) << shift;
    if (!(b & 0x80)) break;
  }
  *pp = p;
  return v;
}

int ovl_capture_next(ovl_capture_cursor *cur, const ovl_gpu_facts *g, ovl_classified_work *cw) {
  const ovl_work_capture *c = &g->capture;
  if (cur->item == c->nitems) return 0;
  while (cur->pos == cur->chunk->len) {  /* records never straddle chunks */
    cur->chunk = cur->chunk->next;
    cur->pos = 0;
  }
  const unsigned char *p = cur->chunk->data + cur->pos;
  unsigned flags = *p++;
  if (flags & CAP_STREAM) cur->stream = (size_t)get_varint(&p);
  assert(cur->stream < g->nstreams);
  ovl_work *w = &cw->w;
  w->device = g->streams[cur->stream].device;
  w->stream = g->streams[cur->stream].stream;
  cur->start = w->start = (int64_t)((uint64_t)cur->start + unzigzag(get_varint(&p)));
  w->end = (int64_t)((uint64_t)w->start + unzigzag(get_varint(&p)));
  cur->corr = w->correlation = (int64_t)((uint64_t)cur->corr + unzigzag(get_varint(&p)));
  w->is_memop = (flags & CAP_MEMOP) != 0;
  w->name = OVL_NONE;
  memset(w->memkind, 0, sizeof w->memkind);
  if (w->is_memop) memcpy(w->memkind, c->memkind[get_varint(&p)], sizeof w->memkind);
  else if (!(flags & CAP_NO_NAME)) w->name = (int64_t)unzigzag(get_varint(&p));
  w->bytes = OVL_NONE;
  for (int i = 0; i < 3; i++) w->grid[i] = w->block[i] = OVL_NONE;
  cw->cls = (ovl_work_class)(flags & 3u);
  cw->from_channels = (flags & CAP_CHANNELS) != 0;
  cw->colls = NULL;
  cw->ncolls = 0;
  if (flags & CAP_COLLS) {
    cw->ncolls = (uint32_t)get_varint(&p);
    assert(cur->coll + cw->ncolls <= c->ncolls);
    cw->colls = c->colls + cur->coll;
    cur->coll += cw->ncolls;
  }
  cur->pos = (size_t)(p - cur->chunk->data);
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
  pthread_mutex_destroy(&x->lock);
}
