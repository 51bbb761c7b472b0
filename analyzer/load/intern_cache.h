/*
** A small direct-mapped cache in front of the trace writer's string table (ovl_tw_intern):
** an importer interns the same few hundred kernel and API names millions of times, and
** hashing a 150-byte C++ kernel name byte by byte costs more than parsing its event.
**
** Invariants: a cached id is the one ovl_tw_intern returned for exactly that text (ids never
** change once given); a miss goes to ovl_tw_intern, so the ids are those it would give alone.
*/
#ifndef OVL_INTERN_CACHE_H
#define OVL_INTERN_CACHE_H

#include "base/status.h"
#include "store/trace_writer.h"

#include <stddef.h>
#include <stdint.h>

#define OVL_INTERN_CACHE_SLOTS 1024  /* a power of two */

typedef struct ovl_intern_slot {
  char *text;     /* owned; NULL when empty */
  size_t len;
  uint64_t hash;
  int64_t id;
} ovl_intern_slot;

typedef struct ovl_intern_cache {
  ovl_intern_slot slots[OVL_INTERN_CACHE_SLOTS];
} ovl_intern_cache;

/* The id of text (NUL-terminated) in w's string table, as ovl_tw_intern gives it. */
int ovl_intern_cached(ovl_intern_cache *c, ovl_trace_writer *w, const char *text, int64_t *id, ovl_err *err);
void ovl_intern_cache_free(ovl_intern_cache *c);

#endif
