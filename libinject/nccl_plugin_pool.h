/*
** Fixed-size objects for the NCCL profiler plugin's event handles, from a bounded pool.
**
** NCCL hands a handle back as the parent of later events, possibly from another thread and
** after the handle itself was stopped (a kernel channel reports in after its collective was
** enqueued and stopped). So a released object is not reused at once: it waits in a FIFO
** quarantine until `quarantine` later objects have been released, and memory is never given
** back to the system: a late reference reads the object it meant, with its fields intact,
** unless that many operations completed in between.
**
** Thread-safe (one mutex per pool: a get or put is a few tens of ns uncontended). Memory is
** bounded: at most `cap` objects live or in quarantine; ovl_pool_get returns NULL beyond
** (the caller drops the event and counts it).
*/
#ifndef OVL_INJECT_NCCL_PLUGIN_POOL_H
#define OVL_INJECT_NCCL_PLUGIN_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ovl_pool {
  pthread_mutex_t lock;
  size_t size;              /* object size, a multiple of 16 */
  size_t cap;               /* objects allocated at most */
  size_t allocated;
  void *free;               /* reusable objects, linked through their first word */
  void *slabs;              /* every allocation, linked through its first word */
  void **ring;              /* quarantine: released objects, oldest at ring[head] */
  size_t quarantine, head, held;
} ovl_pool;

#define OVL_POOL_INIT(obj_size, max_objects, quarantined)                                          \
  {PTHREAD_MUTEX_INITIALIZER, ((obj_size) + 15) / 16 * 16, (max_objects), 0, NULL, NULL, NULL, (quarantined), 0, 0}

/* A zeroed object, or NULL when the pool is at its cap or memory is short. */
void *ovl_pool_get(ovl_pool *p);
/* Releases an object (NULL is ignored): reusable after `quarantine` later releases. */
void ovl_pool_put(ovl_pool *p, void *obj);

#endif
