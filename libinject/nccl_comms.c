/*
** Communicator table: see nccl_comms.h. Open addressing on the handle with linear probing;
** a removed entry stays in its slot with its handle cleared, so probe chains never break
** and a reader that loaded the entry before the removal still reads valid memory.
*/
#include "nccl_comms.h"

#include "base/hash.h"
#include "base/none.h"

#include <pthread.h>
#include <stdlib.h>

#define SLOTS 4096  /* power of two; far more communicators than any job creates */

static _Atomic(ovl_comm_info *) slots[SLOTS];
static ovl_comm_info *retired;  /* replaced entries (under add_lock): kept, and reachable */
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER;
/* The largest communicator so far (rank << 32 | size, written under add_lock, one store so
** that a reader never pairs one communicator's rank with another's size), and the version. */
static atomic_uint_fast64_t world;
static atomic_int_fast64_t nccl_version;

static size_t slot_of(const void *handle) {
  uint64_t h = (uint64_t)(uintptr_t)handle * 0x9E3779B97F4A7C15ULL;
  return (size_t)(h >> 52) & (SLOTS - 1);
}

ovl_comm_info *ovl_comms_find(const void *handle) {
  if (!handle) return NULL;
  size_t s = slot_of(handle);
  for (size_t i = 0; i < SLOTS; i++, s = (s + 1) & (SLOTS - 1)) {
    ovl_comm_info *e = atomic_load_explicit(&slots[s], memory_order_acquire);
    if (!e) return NULL;
    if (atomic_load_explicit(&e->handle, memory_order_relaxed) == handle) return e;
  }
  return NULL;
}

ovl_comm_info *ovl_comms_add(const void *handle, int64_t id, int64_t rank, int64_t nranks, int64_t device) {
  ovl_comm_info *e = calloc(1, sizeof *e);
  if (!e) return NULL;
  atomic_init(&e->handle, handle);
  e->id = id;
  e->rank = rank;
  e->nranks = nranks;
  e->device = device;
  atomic_init(&e->next_seq, 0);
  atomic_init(&e->children, 0);
  pthread_mutex_lock(&add_lock);
  size_t s = slot_of(handle), free_slot = SLOTS;
  for (size_t i = 0; i < SLOTS; i++, s = (s + 1) & (SLOTS - 1)) {
    ovl_comm_info *old = atomic_load_explicit(&slots[s], memory_order_relaxed);
    const void *h = old ? atomic_load_explicit(&old->handle, memory_order_relaxed) : NULL;
    if (old && h == handle) {
      free_slot = s;
      break;
    }
    if (!old || !h) {  /* empty, or a removed entry: reusable */
      if (free_slot == SLOTS) free_slot = s;
      if (!old) break;
    }
  }
  if (free_slot < SLOTS) {
    ovl_comm_info *old = atomic_load_explicit(&slots[free_slot], memory_order_relaxed);
    if (old) {  /* readers may still hold it: never freed */
      old->retired = retired;
      retired = old;
    }
    atomic_store_explicit(&slots[free_slot], e, memory_order_release);
  }
  uint64_t w = atomic_load_explicit(&world, memory_order_relaxed);
  if (rank >= 0 && nranks > 0 && rank < nranks && nranks <= UINT32_MAX && (uint64_t)nranks > (w & UINT32_MAX))
    atomic_store_explicit(&world, (uint64_t)rank << 32 | (uint64_t)nranks, memory_order_relaxed);
  pthread_mutex_unlock(&add_lock);
  if (free_slot == SLOTS) {
    free(e);
    return NULL;
  }
  return e;
}

void ovl_comms_remove(const void *handle) {
  pthread_mutex_lock(&add_lock);
  ovl_comm_info *e = ovl_comms_find(handle);
  if (e) atomic_store_explicit(&e->handle, NULL, memory_order_relaxed);
  pthread_mutex_unlock(&add_lock);
}

int64_t ovl_comm_id_hash(const void *bytes, size_t n, uint64_t seed) {
  uint64_t h = ovl_hash_bytes(OVL_HASH_SEED ^ (seed * 0x9E3779B97F4A7C15ULL), bytes, n);
  h ^= h >> 29;
  return (int64_t)(h & ((UINT64_C(1) << 62) - 1));
}

void ovl_comms_world(int64_t *rank, int64_t *nranks) {
  uint64_t w = atomic_load_explicit(&world, memory_order_relaxed);
  *rank = w ? (int64_t)(w >> 32) : OVL_NONE;
  *nranks = w ? (int64_t)(w & UINT32_MAX) : OVL_NONE;
}

void ovl_comms_set_nccl_version(int64_t version) { atomic_store_explicit(&nccl_version, version, memory_order_relaxed); }
int64_t ovl_comms_nccl_version(void) { return atomic_load_explicit(&nccl_version, memory_order_relaxed); }
