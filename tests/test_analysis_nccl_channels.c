/*
** NCCL's channel timing (collective_channels, from libovl as NCCL's profiler plugin) in the
** analysis, on traces built by hand:
**   * without CUPTI (no kernel linked): the channels are the collectives' GPU time, placed with
**     gpu_timer_offsets (not with the start/end written before the offset was known): the
**     communication, its overlap with a compute kernel and the exposed time follow from them;
**   * with CUPTI: the linked kernels stay the GPU time; channels inside them agree, channels a
**     millisecond off do not, and the facts say how far;
**   * the spread (a slow channel) per collective and the widest per rank;
**   * malformed channel rows are skipped and counted; `ovl report --json` carries it all.
*/
#include "analysis_helper.h"
#include "check.h"
#include "run_cmd.h"
#include "trace_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define US INT64_C(1000)
#define MS INT64_C(1000000)
#define OFFSET (-INT64_C(1600000000000000000))  /* host = gpu timer + OFFSET */

static void writer_ok(int rc, const ovl_err *err) {
  if (rc) {
    fprintf(stderr, "writer: %s\n", err->msg);
    exit(2);
  }
}

/* Four channels of a collective spanning [start, end] on the host clock; channel `slow` ends
** `lag` later. `written_skew`: how far the start/end columns are off (the offset known when
** the row was written), which readers must not use when gpu_timer_offsets is there. */
static void channels(tb *b, int64_t coll, int64_t start, int64_t end, int slow, int64_t lag, int64_t written_skew) {
  ovl_err err = {0};
  for (int c = 0; c < 4; c++) {
    int64_t s = start + 100 * c, e = end - 100 * (3 - c) + (c == slow ? lag : 0);
    ovl_channel_row row = {coll, c, 0, s + written_skew, e + written_skew, s - OFFSET, e - OFFSET};
    writer_ok(ovl_tw_channel(b->w, &row, &err), &err);
  }
}

static const ovl_coll_result *find_coll(const ovl_rank_result *r, int64_t id) {
  for (size_t s = 0; s < r->nsteps; s++)
    for (size_t i = 0; i < r->steps[s].ncolls; i++)
      if (ovl_coll_id(&r->steps[s].colls[i]) == id) return &r->steps[s].colls[i];
  for (size_t i = 0; i < r->nunstepped; i++)
    if (ovl_coll_id(&r->unstepped[i]) == id) return &r->unstepped[i];
  return NULL;
}

/* No CUPTI: three all-reduces timed by their channels, a compute kernel overlapping the first
** half of the second. */
static void test_without_cupti(void) {
  const char *path = tb_temp_path("no-cupti.sqlite");
  tb b;
  tb_open(&b, path);
  ovl_err err = {0};
  int64_t t0 = 10 * MS;
  int64_t a = tb_collective(&b, "AllReduce", 1 << 20, 8, t0 - 50 * US, OVL_NONE);
  int64_t c = tb_collective(&b, "AllReduce", 1 << 20, 8, t0 + 100 * US, OVL_NONE);
  int64_t d = tb_collective(&b, "AllReduce", 1 << 20, 8, t0 + 300 * US, OVL_NONE);
  channels(&b, a, t0, t0 + 100 * US, -1, 0, 5 * MS);
  channels(&b, c, t0 + 200 * US, t0 + 300 * US, 1, 40 * US, 5 * MS);
  channels(&b, d, t0 + 400 * US, t0 + 500 * US, -1, 0, 5 * MS);
  tb_kernel(&b, "sgemm_kernel", t0 + 200 * US, t0 + 250 * US, 0, 7);
  writer_ok(ovl_tw_gpu_timer_offset(b.w, 0, OFFSET, 2 * US, 300, &err), &err);
  /* A malformed channel row (end before start) of a fourth collective: skipped, counted. */
  int64_t e = tb_collective(&b, "AllReduce", 1 << 20, 8, t0 + 600 * US, OVL_NONE);
  ovl_channel_row bad = {e, 0, 0, t0 + 700 * US, t0 + 650 * US, t0 + 700 * US - OFFSET, t0 + 650 * US - OFFSET};
  writer_ok(ovl_tw_channel(b.w, &bad, &err), &err);
  tb_close(&b);

  size_t n = 0;
  ovl_rank_result *r = th_analyse(path, &n);
  CHECK_I64(n, 1);
  if (n != 1) return;
  /* Communication: the three hulls (100 us; 100 us + 40 us - 200 ns, its slow channel ending
  ** 200 ns before the kernel's end but 40 us late; 100 us); the compute kernel covers 50 us of
  ** the second. */
  CHECK_I64(r->totals.comm, 340 * US - 200);
  CHECK_I64(r->totals.compute, 50 * US);
  CHECK_I64(r->totals.exposed, 290 * US - 200);
  const ovl_coll_result *ca = find_coll(r, a), *cc = find_coll(r, c);
  CHECK(ca && cc);
  if (ca && cc) {
    CHECK_I64(ca->gpu_start, t0);  /* placed with gpu_timer_offsets, not the written columns */
    CHECK_I64(ovl_coll_gpu_end(ca), t0 + 100 * US);
    CHECK_I64(ovl_coll_extra_of(ca)->channels.n, 4);
    CHECK(ovl_coll_extra_of(ca)->channels.timed);
    CHECK_I64(ovl_coll_extra_of(ca)->channels.spread, 300);
    CHECK_I64(ovl_coll_extra_of(cc)->channels.spread, 40 * US + 100);  /* channel 1's late end - channel 0's end */
    CHECK_I64(ovl_coll_gpu_end(cc), t0 + 300 * US + 40 * US - 200);
    CHECK_I64(ovl_coll_exposed(cc), 90 * US - 200);
  }
  CHECK(find_coll(r, e) == NULL);  /* no valid channels: no GPU time */
  CHECK_I64(r->channel_facts.collectives, 3);
  CHECK_I64(r->channel_facts.timed, 3);
  CHECK_I64(r->channel_facts.checked, 0);
  CHECK_I64(r->channel_facts.max_spread, 40 * US + 100);
  CHECK_I64(r->channel_facts.max_spread_id, c);
  th_release(r, n);

  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s report --json '%s'", OVL_TEST_OVL, path);
  cmd_result res = run_cmd(cmd);
  CHECK_I64(res.status, 0);
  CHECK(strstr(res.out, "\"gpu_time_from\": \"nccl_channels\"") != NULL);
  CHECK(strstr(res.out, "\"channel_spread_ns\": 40100") != NULL);
  CHECK(strstr(res.out, "\"gpu_time_from_channels\": 3") != NULL);
  CHECK(strstr(res.err, "skipped 1 collective_channels row") != NULL);
  cmd_free(&res);
}

/* CUPTI too: kernels are the GPU time; channels are checked against them. */
static void test_with_cupti(void) {
  const char *path = tb_temp_path("cupti.sqlite");
  tb b;
  tb_open(&b, path);
  ovl_err err = {0};
  int64_t t0 = 20 * MS;
  int64_t ids[3];
  for (int i = 0; i < 3; i++) {
    int64_t k0 = t0 + i * 200 * US;
    int64_t corr = tb_kernel(&b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", k0, k0 + 100 * US, 0, 13);
    ids[i] = tb_collective(&b, "AllReduce", 1 << 20, 8, k0 - 10 * US, corr);
    /* Inside their kernel, but the third 1 ms late. */
    int64_t s = k0 + 2 * US + (i == 2 ? MS : 0);
    channels(&b, ids[i], s, s + 96 * US, -1, 0, 0);
  }
  writer_ok(ovl_tw_gpu_timer_offset(b.w, 0, OFFSET, 1 * US, 300, &err), &err);
  tb_close(&b);

  size_t n = 0;
  ovl_rank_result *r = th_analyse(path, &n);
  CHECK_I64(n, 1);
  if (n != 1) return;
  CHECK_I64(r->totals.comm, 300 * US);  /* the kernels: the late channels add nothing */
  const ovl_coll_result *c0 = find_coll(r, ids[0]), *c2 = find_coll(r, ids[2]);
  CHECK(c0 && c2);
  if (c0 && c2) {
    CHECK_I64(c0->gpu_start, t0);
    CHECK(!ovl_coll_extra_of(c0)->channels.timed);
    CHECK_I64(ovl_coll_extra_of(c0)->channels.outside, 0);
    CHECK(ovl_coll_extra_of(c0)->channels.agree);
    CHECK_I64(ovl_coll_extra_of(c2)->channels.outside, MS - 2 * US);  /* ends 1 ms - 2 us after its kernel */
    CHECK(!ovl_coll_extra_of(c2)->channels.agree);
  }
  CHECK_I64(r->channel_facts.collectives, 3);
  CHECK_I64(r->channel_facts.timed, 0);
  CHECK_I64(r->channel_facts.checked, 3);
  CHECK_I64(r->channel_facts.agree, 2);
  CHECK_I64(r->channel_facts.max_outside, MS - 2 * US);
  th_release(r, n);
}

int main(void) {
  test_without_cupti();
  test_with_cupti();
  return check_summary();
}
