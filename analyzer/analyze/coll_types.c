/*
** The process's table of collective (dtype, redop) pairs: see coll_types.h.
**
** Pairs live in blocks of BLOCK_PAIRS that never move; a directory of block pointers grows by
** doubling. A lookup takes the lock only to read the directory, so a text handed out stays
** valid while another thread grows the table. Interning searches linearly: pairs are few, and
** each thread first checks the last pair it interned (consecutive collectives share theirs).
*/
#include "coll_types.h"

#include "base/hash.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_PAIRS = 64 };

typedef struct type_pair {
  char dtype[OVL_COLL_TYPE_LEN], redop[OVL_COLL_TYPE_LEN];
} type_pair;

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static type_pair first_block[BLOCK_PAIRS];  /* its pair 0 is ("", "") */
static type_pair **blocks;  /* blocks[i]: pairs i * BLOCK_PAIRS ...; blocks[0] is first_block */
static size_t nblocks, blocks_cap;
static uint32_t npairs = 1;
/* Open addressing over the pairs (index + 1; 0 empty), at most half full: a trace naming
** many distinct types must not make interning quadratic. */
static uint32_t *slots;
static size_t nslots;

static _Thread_local type_pair last_pair;
static _Thread_local uint32_t last_id;  /* 0: none yet (pair 0 needs no cache) */

static void fill_pair(type_pair *p, const char *dtype, const char *redop) {
  memset(p, 0, sizeof *p);
  if (dtype) strncpy(p->dtype, dtype, sizeof p->dtype - 1);
  if (redop) strncpy(p->redop, redop, sizeof p->redop - 1);
}

static uint64_t pair_hash(const type_pair *p) { return ovl_hash_bytes(OVL_HASH_SEED, p, sizeof *p); }

/* Caller holds the lock (or the pair is 0). */
static type_pair *pair_at(uint32_t id) {
  if (id == 0) return &first_block[0];
  assert(id < npairs && id / BLOCK_PAIRS < nblocks);
  return &blocks[id / BLOCK_PAIRS][id % BLOCK_PAIRS];
}

/* The slot of p: its index there, or the empty slot where it goes. Caller holds the lock. */
static size_t slot_of(const type_pair *p) {
  size_t i = (size_t)(pair_hash(p) & (nslots - 1));
  while (slots[i] && memcmp(pair_at(slots[i] - 1), p, sizeof *p) != 0) i = (i + 1) & (nslots - 1);
  return i;
}

/* Room for one more pair in the directory, its block and the slots. -1: no memory. */
static int make_room(void) {
  if (npairs == UINT32_MAX - 1) return -1;
  if (nblocks == blocks_cap) {
    size_t cap = blocks_cap ? 2 * blocks_cap : 8;
    type_pair **grown = realloc(blocks, cap * sizeof *grown);
    if (!grown) return -1;
    blocks = grown;
    blocks_cap = cap;
    if (nblocks == 0) blocks[nblocks++] = first_block;
  }
  if (npairs / BLOCK_PAIRS == nblocks) {
    type_pair *b = malloc(BLOCK_PAIRS * sizeof *b);
    if (!b) return -1;
    blocks[nblocks++] = b;
  }
  if (2 * ((size_t)npairs + 1) > nslots) {
    size_t n = nslots ? 2 * nslots : 64;
    uint32_t *grown = calloc(n, sizeof *grown), *old = slots;
    if (!grown) return -1;
    size_t nold = nslots;
    slots = grown;
    nslots = n;
    for (size_t i = 0; i < nold; i++)
      if (old[i]) slots[slot_of(pair_at(old[i] - 1))] = old[i];
    free(old);
  }
  return 0;
}

int ovl_coll_types_intern(const char *dtype, const char *redop, uint32_t *id) {
  type_pair p;
  fill_pair(&p, dtype, redop);
  *id = 0;
  if (!p.dtype[0] && !p.redop[0]) return 0;
  if (last_id && memcmp(&p, &last_pair, sizeof p) == 0) {
    *id = last_id;
    return 0;
  }
  pthread_mutex_lock(&table_lock);
  int rc = make_room();
  if (!rc) {
    size_t i = slot_of(&p);
    if (!slots[i]) {
      uint32_t n = npairs++;
      *pair_at(n) = p;
      slots[i] = n + 1;
    }
    *id = slots[i] - 1;
  }
  pthread_mutex_unlock(&table_lock);
  if (!rc) {
    last_pair = p;
    last_id = *id;
  }
  return rc;
}

/* The pair's text never moves, so it outlives the lock. */
static const type_pair *lookup(uint32_t id) {
  if (id == 0) return &first_block[0];
  pthread_mutex_lock(&table_lock);
  const type_pair *p = pair_at(id);
  pthread_mutex_unlock(&table_lock);
  return p;
}

const char *ovl_coll_types_dtype(uint32_t id) { return lookup(id)->dtype; }
const char *ovl_coll_types_redop(uint32_t id) { return lookup(id)->redop; }
