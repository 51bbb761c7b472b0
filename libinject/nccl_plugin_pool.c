/* Bounded pools of event handles with a release quarantine: see nccl_plugin_pool.h. */
#include "nccl_plugin_pool.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#define SLAB_OBJECTS 256  /* objects allocated at a time */
#define SLAB_HEADER 16    /* a slab starts with the link to the pool's previous one */

/* More objects onto the free list. Called with the lock held. Slabs are never freed (late
** references stay readable) and stay on the pool's list, reachable also while every object is
** out with NCCL (a faulty NCCL may never give some back). */
static int grow(ovl_pool *p) {
  size_t n = p->cap - p->allocated < SLAB_OBJECTS ? p->cap - p->allocated : SLAB_OBJECTS;
  if (n == 0) return -1;
  unsigned char *slab = calloc(1, SLAB_HEADER + n * p->size);
  if (!slab) return -1;
  *(void **)slab = p->slabs;
  p->slabs = slab;
  for (size_t i = 0; i < n; i++) {
    void *obj = slab + SLAB_HEADER + i * p->size;
    *(void **)obj = p->free;
    p->free = obj;
  }
  p->allocated += n;
  return 0;
}

void *ovl_pool_get(ovl_pool *p) {
  pthread_mutex_lock(&p->lock);
  void *obj = p->free;
  if (!obj && grow(p) == 0) obj = p->free;
  if (obj) p->free = *(void **)obj;
  pthread_mutex_unlock(&p->lock);
  if (obj) memset(obj, 0, p->size);
  return obj;
}

void ovl_pool_put(ovl_pool *p, void *obj) {
  if (!obj) return;
  pthread_mutex_lock(&p->lock);
  if (p->quarantine && !p->ring) p->ring = calloc(p->quarantine, sizeof *p->ring);
  void *reusable = obj;
  if (p->ring) {  /* the oldest in quarantine leaves it; obj takes its place */
    size_t slot = (p->head + p->held) % p->quarantine;
    if (p->held == p->quarantine) {
      reusable = p->ring[p->head];
      slot = p->head;
      p->head = (p->head + 1) % p->quarantine;
    } else {
      reusable = NULL;
      p->held++;
    }
    p->ring[slot] = obj;
  }
  if (reusable) {
    *(void **)reusable = p->free;
    p->free = reusable;
  }
  assert(p->held <= p->quarantine);
  pthread_mutex_unlock(&p->lock);
}
