/*
** Interval algebra and the streaming sweep against a brute-force reference: thousands of
** random cases on a small integer time grid, where the reference simply marks every
** nanosecond. Cases include zero-length, touching, nested and identical intervals.
*/
#include "analyze/intervals.h"
#include "analyze/sweep.h"
#include "check.h"

#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRID 160

/* The pieces as a collective's result keeps them, (start, end) pairs, measured there. */
static int64_t pieces_within(const ovl_exposed_pieces *p, int64_t lo, int64_t hi) {
  int64_t bounds[2 * OVL_EXPOSED_PIECES];
  for (int k = 0; k < p->n; k++) {
    bounds[2 * k] = p->start[k];
    bounds[2 * k + 1] = p->end[k];
  }
  return ovl_exposed_within(bounds, p->n, lo, hi);
}

static unsigned rng_state = 12345;
static unsigned rnd(unsigned n) {
  rng_state = rng_state * 1103515245u + 12345u;
  return (rng_state >> 8) % n;
}

static size_t random_intervals(ovl_interval *v, size_t max) {
  size_t n = rnd((unsigned)max + 1);
  for (size_t i = 0; i < n; i++) {
    int64_t s = rnd(GRID);
    int64_t len = rnd(5) == 0 ? 0 : rnd(40);  /* some zero-length */
    if (rnd(8) == 0 && i > 0) s = v[i - 1].end;  /* touching */
    v[i].start = s;
    v[i].end = s + len < GRID ? s + len : GRID;
  }
  return n;
}

static void mark(unsigned char *cells, const ovl_interval *v, size_t n) {
  for (size_t i = 0; i < n; i++)
    for (int64_t t = v[i].start; t < v[i].end; t++) cells[t] = 1;
}

static void test_algebra(void) {
  for (int round = 0; round < 3000; round++) {
    ovl_interval a[24], b[24], out[48];
    size_t na = random_intervals(a, 24), nb = random_intervals(b, 24);
    unsigned char ca[GRID] = {0}, cb[GRID] = {0};
    mark(ca, a, na);
    mark(cb, b, nb);
    na = ovl_intervals_normalize(a, na);
    nb = ovl_intervals_normalize(b, nb);
    /* normalized: sorted, positive length, neither overlapping nor touching */
    for (size_t i = 0; i < na; i++) {
      CHECK(a[i].end > a[i].start);
      if (i) CHECK(a[i].start > a[i - 1].end);
    }
    int64_t ua = 0, ub = 0, both = 0, a_not_b = 0, clip = 0;
    int64_t lo = rnd(GRID), hi = lo + rnd(GRID);
    for (int t = 0; t < GRID; t++) {
      ua += ca[t];
      ub += cb[t];
      both += ca[t] && cb[t];
      a_not_b += ca[t] && !cb[t];
      clip += ca[t] && t >= lo && t < hi;
    }
    CHECK_I64(ovl_intervals_length(a, na), ua);
    CHECK_I64(ovl_intervals_length(b, nb), ub);
    CHECK_I64(ovl_intervals_overlap(a, na, b, nb), both);
    size_t nd = ovl_intervals_subtract(a, na, b, nb, out);
    CHECK_I64(ovl_intervals_length(out, nd), a_not_b);
    for (size_t i = 1; i < nd; i++) CHECK(out[i].start >= out[i - 1].end);
    CHECK_I64(ovl_intervals_clip_length(a, na, lo, hi), clip);
  }
}

/* Random GPU work on several streams through the sweep, with static step windows and
** collectives, compared with per-nanosecond brute force. */
typedef struct item {
  ovl_sweep_item s;
  int32_t colls[3];
} item;

static int cmp_item(const void *pa, const void *pb) {
  const item *a = pa, *b = pb;
  return (a->s.start > b->s.start) - (a->s.start < b->s.start);
}

/* Compute items report (duration, ns overlapped by communication) when they end. */
typedef struct end_log {
  int64_t duration[64], overlapped[64];
  int seen[64];
} end_log;

static void on_end(void *ctx, int32_t sig, int64_t duration, int64_t overlapped) {
  end_log *log = ctx;
  log->duration[sig] = duration;
  log->overlapped[sig] = overlapped;
  log->seen[sig]++;
}

/* A sweep over n collectives (n <= FIXTURE_COLLS) whose per-collective state the fixture holds:
** opened in place (the state points into it), each collective's pieces cleared. */
enum { FIXTURE_COLLS = 8 };
typedef struct sweep_fixture {
  int64_t exposed[FIXTURE_COLLS];
  int32_t running[FIXTURE_COLLS];
  ovl_piece_slot slots[FIXTURE_COLLS];
  ovl_coll_state cs;
  ovl_sweep sw;
} sweep_fixture;

static int fixture_open(sweep_fixture *f, size_t n, ovl_step_windows *win) {
  assert(n <= FIXTURE_COLLS);
  memset(f, 0, sizeof *f);
  f->cs = (ovl_coll_state){f->exposed, f->running, f->slots, n, NULL, 0, 0, 0};
  for (size_t k = 0; k < n; k++) ovl_coll_pieces_clear(&f->cs, k);
  return ovl_sweep_init(&f->sw, win, &f->cs);
}

static void fixture_close(sweep_fixture *f) {
  ovl_sweep_free(&f->sw);
  ovl_coll_pieces_free(&f->cs);
}

static void test_sweep(void) {
  enum { NCOLL = 6, MAXITEMS = 40 };
  for (int round = 0; round < 3000; round++) {
    item items[MAXITEMS];
    size_t n = rnd(MAXITEMS) + 1;
    for (size_t i = 0; i < n; i++) {
      item *it = &items[i];
      int64_t s = rnd(GRID), len = rnd(4) == 0 ? 0 : rnd(50);
      it->s.start = s;
      it->s.end = s + len < GRID ? s + len : GRID;
      it->s.cls = (ovl_work_class)rnd(3);
      it->s.colls = NULL;
      it->s.ncolls = 0;
      it->s.coll = -1;
      it->s.close_step = -1;
      it->s.sig = -1;
      if (it->s.cls == OVL_CLASS_COMM) {
        unsigned k = rnd(3);
        for (unsigned j = 0; j < k; j++) it->colls[j] = (int32_t)rnd(NCOLL);
        if (k == 1 && rnd(2)) {  /* single collective given inline */
          it->s.coll = it->colls[0];
          it->s.ncolls = 1;
        } else {
          it->s.ncolls = k;
        }
      }
    }
    qsort(items, n, sizeof *items, cmp_item);
    for (size_t i = 0; i < n; i++) {
      if (items[i].s.ncolls > 0 && items[i].s.coll < 0) items[i].s.colls = items[i].colls;
      if (items[i].s.cls == OVL_CLASS_COMPUTE || rnd(2)) items[i].s.sig = (int32_t)i;  /* ignored unless compute */
    }

    /* 0 to 3 disjoint windows */
    ovl_step_windows win;
    size_t nwin = rnd(4);
    CHECK(ovl_windows_init(&win, nwin) == 0);
    int64_t edge = rnd(30);
    for (size_t w = 0; w < nwin; w++) {
      int64_t s = edge + rnd(20), e = s + rnd(60);
      ovl_windows_set(&win, w, s, e);
      edge = e;
    }
    sweep_fixture fx;
    CHECK(fixture_open(&fx, NCOLL, &win) == 0);
    end_log log;
    memset(&log, 0, sizeof log);
    fx.sw.on_compute_end = on_end;
    fx.sw.on_compute_end_ctx = &log;
    for (size_t i = 0; i < n; i++) CHECK(ovl_sweep_add(&fx.sw, &items[i].s) == 0);
    CHECK(ovl_sweep_finish(&fx.sw) == 0);

    /* brute force */
    int64_t comp = 0, comm = 0, expo = 0, mem = 0, wexp[3] = {0}, wcomm[3] = {0}, wcomp[3] = {0};
    int64_t cexp[NCOLL] = {0};
    unsigned char cexp_cell[NCOLL][GRID] = {{0}};
    for (int t = 0; t < GRID; t++) {
      int c[3] = {0};
      int active[NCOLL] = {0};
      for (size_t i = 0; i < n; i++) {
        if (t < items[i].s.start || t >= items[i].s.end) continue;
        c[items[i].s.cls] = 1;
        for (uint32_t k = 0; k < items[i].s.ncolls; k++)
          active[items[i].s.coll >= 0 ? items[i].s.coll : items[i].colls[k]] = 1;
      }
      int e = c[OVL_CLASS_COMM] && !c[OVL_CLASS_COMPUTE];
      comp += c[OVL_CLASS_COMPUTE];
      comm += c[OVL_CLASS_COMM];
      mem += c[OVL_CLASS_MEMORY];
      expo += e;
      for (int k = 0; k < NCOLL; k++) {
        cexp[k] += e && active[k];
        cexp_cell[k][t] = e && active[k];
      }
      for (size_t w = 0; w < nwin; w++) {
        if (t < win.start[w] || t >= win.end[w]) continue;
        wexp[w] += e;
        wcomm[w] += c[OVL_CLASS_COMM];
        wcomp[w] += c[OVL_CLASS_COMPUTE];
      }
    }
    CHECK_I64(fx.sw.total.compute, comp);
    CHECK_I64(fx.sw.total.comm, comm);
    CHECK_I64(fx.sw.total.exposed, expo);
    CHECK_I64(fx.sw.total.memory, mem);
    ovl_exposed_pieces pieces[NCOLL];
    for (int k = 0; k < NCOLL; k++) ovl_coll_pieces_get(&fx.cs, (size_t)k, &pieces[k]);
    for (int k = 0; k < NCOLL; k++) {
      CHECK_I64(fx.exposed[k], cexp[k]);
      /* exposure pieces: exact ones locate the exposed time anywhere; stretched ones cover it */
      int64_t lo = rnd(GRID), hi = lo + rnd(GRID), within = 0;
      for (int64_t t = lo; t < hi && t < GRID; t++) within += cexp_cell[k][t];
      if (pieces[k].exact) {
        CHECK_I64(pieces_within(&pieces[k], lo, hi), within);
        CHECK_I64(pieces_within(&pieces[k], 0, GRID), cexp[k]);
      } else {
        CHECK(pieces_within(&pieces[k], lo, hi) >= within);
      }
    }
    for (size_t w = 0; w < nwin; w++) {
      CHECK_I64(fx.sw.steps[w].exposed, wexp[w]);
      CHECK_I64(fx.sw.steps[w].comm, wcomm[w]);
      CHECK_I64(fx.sw.steps[w].compute, wcomp[w]);
    }
    for (int k = 0; k < NCOLL; k++) CHECK_I64(fx.running[k], 0);
    /* each compute item: its length and the ns of it with communication running */
    for (size_t i = 0; i < n; i++) {
      const ovl_sweep_item *it = &items[i].s;
      CHECK_I64(log.seen[i], it->cls == OVL_CLASS_COMPUTE ? 1 : 0);
      if (it->cls != OVL_CLASS_COMPUTE) continue;
      int64_t over = 0;
      for (int64_t t = it->start; t < it->end; t++) {
        int comm_now = 0;
        for (size_t j = 0; j < n; j++)
          comm_now |= items[j].s.cls == OVL_CLASS_COMM && t >= items[j].s.start && t < items[j].s.end;
        over += comm_now;
      }
      CHECK_I64(log.duration[i], it->end - it->start);
      CHECK_I64(log.overlapped[i], over);
    }
    fixture_close(&fx);
    ovl_windows_free(&win);
  }
}

#ifndef NDEBUG
/* Runs fn in a child process; returns 1 when it died of an assert() (SIGABRT). */
static int aborts(void (*fn)(void)) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(3);
    fn();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void unsorted_sweep(void) {
  ovl_step_windows win;
  int64_t exposed[1] = {0};
  int32_t running[1] = {0};
  ovl_coll_state cs = {.exposed = exposed, .running = running, .pieces = NULL, .len = 1};
  ovl_sweep sw;
  if (ovl_windows_init(&win, 0) || ovl_sweep_init(&sw, &win, &cs)) _exit(2);
  ovl_sweep_item a = {100, 200, OVL_CLASS_COMPUTE, NULL, 0, -1, -1, -1};
  ovl_sweep_item b = {50, 300, OVL_CLASS_COMPUTE, NULL, 0, -1, -1, -1};  /* starts before a */
  ovl_sweep_add(&sw, &a);
  ovl_sweep_add(&sw, &b);
}

static void overlapping_windows(void) {
  ovl_step_windows win;
  if (ovl_windows_init(&win, 2)) _exit(2);
  ovl_windows_set(&win, 0, 0, 100);
  ovl_windows_set(&win, 1, 50, 150);  /* overlaps window 0 */
}

static void window_changed_in_the_past(void) {
  ovl_step_windows win;
  long step;
  if (ovl_windows_init(&win, 2)) _exit(2);
  ovl_windows_open(&win, 0, 0);
  ovl_windows_locate(&win, 500, &step);
  ovl_windows_open(&win, 1, 400);  /* before the time already looked up */
}
#endif

/* The invariants the headers state are assert()ed (where asserts are compiled in: Debug and
** the sanitized build); a well-behaved caller never trips them (the tests above). */
static void test_invariant_asserts(void) {
#ifdef NDEBUG
  fprintf(stderr, "SKIP invariant asserts: this build compiles assert() out (NDEBUG)\n");
#else
  CHECK(aborts(unsorted_sweep));
  CHECK(aborts(overlapping_windows));
  CHECK(aborts(window_changed_in_the_past));
#endif
}

/* Exposed pieces longer than a slot's 32-bit length (4.3 s): a first piece that is long from the
** start, one that grows past the limit, long first pieces followed by more, and more pieces
** than are kept (the last stretched), all read back exactly (sweep.h's ovl_piece_slot). */
static void test_long_pieces(void) {
  const int64_t S = 1000000000;  /* 1 s in ns */
  enum { N = 5 };
  const ovl_sweep_item comm[] = {
      {0, 10 * S, OVL_CLASS_COMM, NULL, 1, 0, -1, -1},                /* 0: alone for 10 s */
      {20 * S, 30 * S, OVL_CLASS_COMM, NULL, 1, 1, -1, -1},           /* 1: three pieces */
      {40 * S, 43 * S, OVL_CLASS_COMM, NULL, 1, 2, -1, -1},           /* 2: grows 2 -> 3 -> 5 s */
      {42 * S, 45 * S, OVL_CLASS_COMM, NULL, 1, 2, -1, -1},
      {50 * S, 70 * S, OVL_CLASS_COMM, NULL, 1, 3, -1, -1},           /* 3: 6 s, then 13 s */
      {100 * S, 120 * S, OVL_CLASS_COMM, NULL, 1, 4, -1, -1},         /* 4: five pieces, four kept */
  };
  const int64_t compute[][2] = {{21 * S, 22 * S}, {25 * S, 25 * S + S / 2}, {56 * S, 57 * S}, {106 * S, 107 * S},
                                {108 * S, 109 * S}, {110 * S, 111 * S}, {112 * S, 113 * S}};
  ovl_sweep_item items[sizeof comm / sizeof *comm + sizeof compute / sizeof *compute];
  size_t n = 0, ic = 0, ik = 0;
  while (ic < sizeof comm / sizeof *comm || ik < sizeof compute / sizeof *compute) {  /* by start */
    if (ik == sizeof compute / sizeof *compute || (ic < sizeof comm / sizeof *comm && comm[ic].start <= compute[ik][0]))
      items[n++] = comm[ic++];
    else
      items[n++] = (ovl_sweep_item){compute[ik][0], compute[ik][1], OVL_CLASS_COMPUTE, NULL, 0, -1, -1, -1}, ik++;
  }
  ovl_step_windows win;
  CHECK(ovl_windows_init(&win, 0) == 0);
  sweep_fixture fx;
  CHECK(fixture_open(&fx, N, &win) == 0);
  for (size_t i = 0; i < n; i++) CHECK(ovl_sweep_add(&fx.sw, &items[i]) == 0);
  CHECK(ovl_sweep_finish(&fx.sw) == 0);
  static const struct {
    int n, exact;
    int64_t start[OVL_EXPOSED_PIECES], end[OVL_EXPOSED_PIECES];
  } want[N] = {
      {1, 1, {0}, {10 * S}},
      {3, 1, {20 * S, 22 * S, 25 * S + S / 2}, {21 * S, 25 * S, 30 * S}},
      {1, 1, {40 * S}, {45 * S}},
      {2, 1, {50 * S, 57 * S}, {56 * S, 70 * S}},
      {4, 0, {100 * S, 107 * S, 109 * S, 111 * S}, {106 * S, 108 * S, 110 * S, 120 * S}},
  };
  for (int k = 0; k < N; k++) {
    ovl_exposed_pieces p;
    ovl_coll_pieces_get(&fx.cs, (size_t)k, &p);
    CHECK_I64(p.n, want[k].n);
    CHECK_I64(p.exact, want[k].exact);
    for (int j = 0; j < want[k].n && j < p.n; j++) {
      CHECK_I64(p.start[j], want[k].start[j]);
      CHECK_I64(p.end[j], want[k].end[j]);
    }
  }
  CHECK_I64(fx.exposed[0], 10 * S);
  CHECK_I64(fx.exposed[2], 5 * S);
  fixture_close(&fx);
  ovl_windows_free(&win);
}

int main(void) {
  test_algebra();
  test_sweep();
  test_long_pieces();
  test_invariant_asserts();
  return check_summary();
}
