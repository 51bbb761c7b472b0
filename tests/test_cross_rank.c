/*
** Cross-rank analysis on generated jobs whose truth is known by construction: per-rank
** clock offsets up to +-50 ms, one straggler with extra compute before every collective,
** microsecond noise. Offsets must come back within 5 us, the straggler (and only it) must
** be found, waits and transfers must be right within 1%. A job whose ranks issue
** collectives in different orders must be reported as mismatched.
*/
#include "job/cross_rank.h"
#include "diagnose/diagnose.h"
#include "check.h"
#include "store/trace_rows.h"

#include <stdlib.h>

#define NRANKS 8
#define STEPS 40
#define PER_STEP 5

static unsigned rng = 99;
static int64_t noise(int64_t amplitude) {  /* uniform in [-amplitude, amplitude] */
  rng = rng * 1664525u + 1013904223u;
  return (int64_t)((rng >> 8) % (unsigned)(2 * amplitude + 1)) - amplitude;
}

typedef struct truth {
  int64_t offset[NRANKS];          /* local = true + offset */
  int64_t wait[NRANKS], transfer[NRANKS];
} truth;

/* Builds the calls of every rank. straggler: rank with extra compute (-1: none). */
static void generate(ovl_xr_call calls[NRANKS][STEPS * PER_STEP], ovl_xr_rank_input in[NRANKS], truth *t,
                     int straggler, int64_t extra, int known_realtime) {
  static const int64_t sizes[PER_STEP] = {1 << 20, 25 << 20, 25 << 20, 12 << 20, 4 << 20};
  for (int r = 0; r < NRANKS; r++) {
    t->offset[r] = (r == 0 ? 0 : noise(50000000));
    t->wait[r] = t->transfer[r] = 0;
  }
  int64_t now = 1000000000;
  int64_t seq = 0;
  for (int s = 0; s < STEPS; s++) {
    now += 2000000;  /* forward */
    for (int k = 0; k < PER_STEP; k++, seq++) {
      int64_t arrive[NRANKS], last = INT64_MIN;
      for (int r = 0; r < NRANKS; r++) {
        arrive[r] = now + 300000 + noise(20000) + (r == straggler ? extra : 0);
        if (arrive[r] > last) last = arrive[r];
      }
      int64_t transfer = 150000 + sizes[k] / 100;
      for (int r = 0; r < NRANKS; r++) {
        int64_t end = last + transfer + noise(500);  /* ranks leave within a microsecond */
        ovl_xr_call *c = &calls[r][s * PER_STEP + k];
        c->comm = 42;
        c->seq = seq;
        c->op = OVL_OP_ALLREDUCE;
        c->bytes = sizes[k];
        c->nranks = NRANKS;
        c->host_launch = arrive[r] - 5000 + t->offset[r];
        c->gpu_start = arrive[r] + t->offset[r];
        c->gpu_end = end + t->offset[r];
        c->step = s;
        t->wait[r] += last - arrive[r];
        t->transfer[r] += end - last;
      }
      now = last + transfer;
    }
  }
  for (int r = 0; r < NRANKS; r++) {
    in[r].rank = r;
    /* realtime offsets from NTP-synchronised hosts: right within a few ms, not within us */
    in[r].realtime_offset = known_realtime ? -t->offset[r] + noise(3000000) : OVL_NONE;
    in[r].calls = calls[r];
    in[r].read = NULL;
    in[r].ctx = NULL;
    in[r].ncalls = STEPS * PER_STEP;
    in[r].nsteps = STEPS;
  }
}

/* The diagnosis' judgement of rank r from the counts the statistics measured. The chances of
** arriving last add up to one per decisive instance: their sum over the ranks is the number of
** decisive instances. */
static int is_straggler(const ovl_xr_result *res, int r) {
  double expected = 0;
  long decisive = 0;
  for (int k = 0; k < NRANKS; k++) {
    expected += res->ranks[k].expected_last;
    decisive += res->ranks[k].times_last;
  }
  CHECK_NEAR(expected, (double)decisive, 1e-6 * (double)decisive + 1e-9);
  return ovl_is_straggler(res->ranks[r].times_last, res->ranks[r].expected_last, res->ranks[r].p_value, NRANKS);
}

static void check_job(int known_realtime) {
  static ovl_xr_call calls[NRANKS][STEPS * PER_STEP];
  ovl_xr_rank_input in[NRANKS];
  truth t;
  const int straggler = 5;
  generate(calls, in, &t, straggler, 400000, known_realtime);
  ovl_xr_result res;
  CHECK(ovl_cross_rank(in, NRANKS, &res) == 0);
  CHECK_I64(res.matched, STEPS * PER_STEP);
  CHECK_I64(res.unmatched, 0);
  CHECK(!res.has_mismatch);
  for (int r = 0; r < NRANKS; r++) {
    /* job time = local time + clock_offset; truth: local = true + offset, and rank 0 is the reference */
    CHECK_NEAR((double)res.ranks[r].clock_offset, (double)(t.offset[0] - t.offset[r]), 5000.0);
    CHECK_NEAR((double)res.ranks[r].wait_ns, (double)t.wait[r], 0.01 * (double)t.wait[r] + 1000.0 * STEPS);
    CHECK_NEAR((double)res.ranks[r].transfer_ns, (double)t.transfer[r], 0.01 * (double)t.transfer[r]);
    CHECK(is_straggler(&res, r) == (r == straggler));
  }
  CHECK_I64(res.ranks[straggler].times_last, STEPS * PER_STEP);
  /* the straggler makes every other rank wait ~its extra compute, every collective */
  CHECK_NEAR((double)res.ranks[straggler].wait_caused_ns, (double)(t.wait[0] + t.wait[1] + t.wait[2] + t.wait[3] +
                                                                   t.wait[4] + t.wait[6] + t.wait[7]),
             0.01 * (double)res.ranks[straggler].wait_caused_ns);
  CHECK_NEAR((double)res.ranks[straggler].late_gpu_ns, 400000.0, 20000.0);
  /* it arrived ~400 us after the next slowest rank, every collective */
  CHECK_NEAR((double)res.ranks[straggler].delay_ns / (STEPS * PER_STEP), 400000.0 - 15000.0, 25000.0);
  CHECK_NEAR((double)res.ranks[straggler].late_host_ns, 400000.0, 20000.0);
  CHECK(res.skew_p50 >= 400000 - 40000 && res.skew_p50 <= 400000 + 40000);
  CHECK(res.residual_p99 < 5000);
  ovl_xr_result_free(&res);

  /* No straggler: nobody is flagged. */
  generate(calls, in, &t, -1, 0, known_realtime);
  CHECK(ovl_cross_rank(in, NRANKS, &res) == 0);
  for (int r = 0; r < NRANKS; r++) CHECK(!is_straggler(&res, r));
  ovl_xr_result_free(&res);
}

static void mismatched_order(void) {
  static ovl_xr_call calls[NRANKS][STEPS * PER_STEP];
  ovl_xr_rank_input in[NRANKS];
  truth t;
  generate(calls, in, &t, -1, 0, 1);
  /* rank 3 issues the 2nd and 4th collective of step 7 in the other order */
  ovl_xr_call *a = &calls[3][7 * PER_STEP + 1], *b = &calls[3][7 * PER_STEP + 3];
  ovl_xr_call tmp = *a;
  a->op = b->op;
  a->bytes = b->bytes;
  b->op = tmp.op;
  b->bytes = tmp.bytes;
  ovl_xr_result res;
  CHECK(ovl_cross_rank(in, NRANKS, &res) == 0);
  CHECK(res.has_mismatch);
  CHECK_I64(res.first_mismatch.seq, 7 * PER_STEP + 1);
  CHECK(res.first_mismatch.rank_a == 3 || res.first_mismatch.rank_b == 3);
  CHECK_I64(res.unmatched, 2);
  CHECK_I64(res.matched, STEPS * PER_STEP - 2);
  ovl_xr_result_free(&res);
}

static void binomial(void) {
  CHECK_NEAR(ovl_binomial_tail(10, 0, 0.3), 1.0, 1e-12);
  CHECK_NEAR(ovl_binomial_tail(1, 1, 0.25), 0.25, 1e-12);
  CHECK_NEAR(ovl_binomial_tail(3, 2, 0.5), 0.5, 1e-12);  /* (3 + 1) / 8 */
  CHECK_NEAR(ovl_binomial_tail(4, 4, 0.5), 1.0 / 16.0, 1e-12);
}

/* The calls read one at a time (ovl_xr_rank_input.read, as job_cross_rank.c hands a job's
** results over) give the same answers as the same calls in arrays. */
static void read_from_array(const void *ctx, size_t j, ovl_xr_call *out) { *out = ((const ovl_xr_call *)ctx)[j]; }

/* a and b, of the same job's calls, agree on every answer but the mismatch's numbers. */
static void same_answers(const ovl_xr_result *a, const ovl_xr_result *b) {
  CHECK(a->matched == b->matched && a->unmatched == b->unmatched && a->has_mismatch == b->has_mismatch);
  CHECK(a->skew_p50 == b->skew_p50 && a->skew_p99 == b->skew_p99 && a->residual_p50 == b->residual_p50 &&
        a->residual_p99 == b->residual_p99 && a->alignment_samples == b->alignment_samples);
  for (int r = 0; r < NRANKS; r++) {
    CHECK(memcmp(&a->ranks[r], &b->ranks[r], sizeof a->ranks[r]) == 0);
    for (int j = 0; j < STEPS * PER_STEP; j++)
      CHECK(a->calls[r][j].wait_ns == b->calls[r][j].wait_ns &&
            ovl_xr_arrived_last(a, (size_t)r, (size_t)j) == ovl_xr_arrived_last(b, (size_t)r, (size_t)j));
  }
}

static void read_calls(void) {
  static ovl_xr_call calls[NRANKS][STEPS * PER_STEP];
  ovl_xr_rank_input in[NRANKS], by_read[NRANKS];
  truth t;
  generate(calls, in, &t, 5, 400000, 1);
  calls[2][3].seq = calls[2][4].seq;  /* a repeated sequence number: matching must still agree */
  for (int r = 0; r < NRANKS; r++) {
    by_read[r] = in[r];
    by_read[r].calls = NULL;
    by_read[r].read = read_from_array;
    by_read[r].ctx = calls[r];
  }
  ovl_xr_result a, b;
  CHECK(ovl_cross_rank(in, NRANKS, &a) == 0);
  CHECK(ovl_cross_rank(by_read, NRANKS, &b) == 0);
  CHECK(a.matched > 0 && a.unmatched > 0);
  same_answers(&a, &b);
  ovl_xr_result_free(&a);
  ovl_xr_result_free(&b);
}

/* Sequence numbers that span more than 2^32 on a communicator (the matching keeps their low 32
** bits apart from the rest: cross_rank.c's participant), negative ones and two interleaved
** communicators give the answers that the same calls numbered 0, 1, 2... give. */
static void wide_numbers(void) {
  static ovl_xr_call calls[NRANKS][STEPS * PER_STEP], wide[NRANKS][STEPS * PER_STEP];
  ovl_xr_rank_input in[NRANKS], in_wide[NRANKS];
  truth t;
  generate(calls, in, &t, 5, 400000, 1);
  calls[2][3].seq = calls[2][4].seq;  /* one unmatched instance, one repeated number */
  for (int r = 0; r < NRANKS; r++) {
    for (int j = 0; j < STEPS * PER_STEP; j++) {
      if (j % 2) calls[r][j].comm = -7;  /* sorts before 42 */
      wide[r][j] = calls[r][j];
      wide[r][j].seq = calls[r][j].seq * ((int64_t)1 << 33) - ((int64_t)1 << 40);
    }
    in_wide[r] = in[r];
    in_wide[r].calls = wide[r];
  }
  ovl_xr_result a, b;
  CHECK(ovl_cross_rank(in, NRANKS, &a) == 0);
  CHECK(ovl_cross_rank(in_wide, NRANKS, &b) == 0);
  CHECK(a.matched == STEPS * PER_STEP - 1 && a.unmatched == 2);  /* (-7, 3) lacks rank 2, (-7, 4) is its alone */
  same_answers(&a, &b);
  ovl_xr_result_free(&a);
  ovl_xr_result_free(&b);
}

int main(void) {
  binomial();
  read_calls();
  wide_numbers();
  check_job(1);
  check_job(0);
  mismatched_order();
  return check_summary();
}
