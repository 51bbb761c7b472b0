/* Facts of each file's GPU work for the export, gathered during the analysis: see gpu_facts.h. */
#include "gpu_facts.h"

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

void ovl_gpu_facts_clear(ovl_gpu_facts *g) {
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
  return ovl_gpu_facts_add(file_state, cw);
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
