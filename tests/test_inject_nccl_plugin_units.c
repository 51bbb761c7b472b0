/*
** The NCCL profiler plugin's pure parts: the GPU-timer offset (libinject/gpu_timer.c) from
** bracketed stamps with random delays, one-sided and contradicting bounds, drift across
** windows; and the handle pool's quarantine and bound (libinject/nccl_plugin_pool.c).
*/
#include "check.h"
#include "gpu_timer.h"
#include "nccl_plugin_pool.h"

#include "base/none.h"

#include <stdint.h>
#include <stdlib.h>

/* A stamp taken `before` ns after a host event and seen `after` ns later. */
static void stamp(ovl_gpu_timer *t, int64_t host, int64_t true_offset, int64_t before, int64_t after) {
  int64_t gpu = host - true_offset;
  ovl_gpu_timer_note(t, host - before, gpu, host + after);
}

static void test_offset(void) {
  ovl_gpu_timer t;
  ovl_gpu_timer_init(&t);
  int64_t off, err;
  CHECK(ovl_gpu_timer_offset(&t, &off, &err) == -1);
  const int64_t truth = -INT64_C(1600000000000000000) + 12345;
  srand(7);
  int64_t first_err = -1;
  for (int i = 0; i < 2000; i++) {
    int64_t host = INT64_C(1000000000) + i * INT64_C(100000);
    stamp(&t, host, truth, 1000 + rand() % 50000, 500 + rand() % 20000);
    CHECK(ovl_gpu_timer_offset(&t, &off, &err) == 0);
    if (first_err < 0) first_err = err;
    CHECK(llabs(off - truth) <= err);  /* the bounds always hold the truth */
  }
  CHECK(err < first_err / 10);  /* and close in: the tightest stamps win */
  CHECK(err <= 2000);
  CHECK_I64(t.stamps, 2000);
  CHECK_I64(t.contradictions, 0);
}

static void test_one_side(void) {
  ovl_gpu_timer t;
  ovl_gpu_timer_init(&t);
  ovl_gpu_timer_note(&t, OVL_NONE, 1000, 5000);  /* seen only: offset <= 4000 */
  int64_t off, err;
  CHECK(ovl_gpu_timer_offset(&t, &off, &err) == 0);
  CHECK_I64(off, 4000);
  CHECK_I64(err, -1);
  ovl_gpu_timer_note(&t, 4500, 0, OVL_NONE);  /* a stamp of 0: the timer was not read */
  CHECK_I64(t.stamps, 1);
}

static void test_contradiction(void) {
  ovl_gpu_timer t;
  ovl_gpu_timer_init(&t);
  ovl_gpu_timer_note(&t, 1000, 100, 1100);  /* offset in [900, 1000] */
  ovl_gpu_timer_note(&t, 2000, 100, 2100);  /* [1900, 2000]: crosses the first */
  int64_t off, err;
  CHECK(ovl_gpu_timer_offset(&t, &off, &err) == 0);
  CHECK_I64(off, 1000);  /* the upper bound, the observation, wins */
  CHECK_I64(err, 900);
  CHECK_I64(t.contradictions, 1);
}

/* The clocks drift apart: the estimate follows within two windows. */
static void test_drift(void) {
  ovl_gpu_timer t;
  ovl_gpu_timer_init(&t);
  int64_t off = 0, err = 0;
  for (int64_t s = 0; s < 60; s++) {  /* 60 s, 1 ms of drift a second */
    for (int i = 0; i < 100; i++) {
      int64_t host = INT64_C(1000000000) + s * INT64_C(1000000000) + i * INT64_C(10000000);
      int64_t truth = 5000000 + host / 1000;
      stamp(&t, host, truth, 30000, 3000);
    }
  }
  CHECK(ovl_gpu_timer_offset(&t, &off, &err) == 0);
  int64_t now = INT64_C(1000000000) + 60 * INT64_C(1000000000);
  CHECK(llabs(off - (5000000 + now / 1000)) < 2 * OVL_GPU_TIMER_WINDOW_NS / 1000);
}

/* Static, like libovl's pools: memory is never given back (late references stay readable). */
static ovl_pool p = OVL_POOL_INIT(40, 300, 4);

static void test_pool(void) {
  CHECK_I64(p.size, 48);
  void *a = ovl_pool_get(&p);
  CHECK(a != NULL);
  *(int *)((char *)a + 8) = 42;
  ovl_pool_put(&p, a);
  /* Quarantined: the next four gets never return it, and its contents stay. */
  void *held[4];
  for (int i = 0; i < 4; i++) {
    held[i] = ovl_pool_get(&p);
    CHECK(held[i] != a);
  }
  CHECK_I64(*(int *)((char *)a + 8), 42);
  for (int i = 0; i < 4; i++) ovl_pool_put(&p, held[i]);  /* pushes a out of quarantine */
  int seen = 0;
  void *all[300];
  int n = 0;
  for (void *o; n < 300 && (o = ovl_pool_get(&p)) != NULL;) {
    seen += o == a;
    all[n++] = o;
  }
  CHECK_I64(seen, 1);
  CHECK_I64(n, 300 - 4);  /* the cap counts the quarantined too */
  CHECK(ovl_pool_get(&p) == NULL);
  for (int i = 0; i < n; i++) ovl_pool_put(&p, all[i]);
}

int main(void) {
  test_offset();
  test_one_side();
  test_contradiction();
  test_drift();
  test_pool();
  return check_summary();
}
