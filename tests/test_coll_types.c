/*
** The interned (dtype, redop) pairs of collective results (analyze/coll_types.h): the same
** pair gives the same index and text, distinct pairs distinct ones, texts are cut as the
** char[16] fields they replace were, a text handed out stays put while the table grows (also
** while other threads intern), and many distinct pairs (a hostile trace) intern in linear time.
*/
#include "analyze/coll_types.h"
#include "analyze/analysis.h"
#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define THREADS 4
#define PER_THREAD 20000

static void *intern_many(void *arg) {
  long t = (long)(intptr_t)arg, wrong = 0;
  char d[32];
  for (long i = 0; i < PER_THREAD; i++) {
    snprintf(d, sizeof d, "T%ld_%ld", t, i % 5000);
    uint32_t id;
    if (ovl_coll_types_intern(d, "Sum", &id) || strcmp(ovl_coll_types_dtype(id), d) != 0 ||
        strcmp(ovl_coll_types_redop(id), "Sum") != 0)
      wrong++;
  }
  return (void *)(intptr_t)wrong;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void) {
  uint32_t none, a, b, c, a2, cut;
  CHECK(ovl_coll_types_intern(NULL, "", &none) == 0);
  CHECK_I64(none, 0);
  CHECK_STR(ovl_coll_types_dtype(0), "");
  CHECK_STR(ovl_coll_types_redop(0), "");
  CHECK(ovl_coll_types_intern("Bfloat16", "Sum", &a) == 0);
  CHECK(ovl_coll_types_intern("Bfloat16", "PreMulSum", &b) == 0);
  CHECK(ovl_coll_types_intern("Int64", "", &c) == 0);
  CHECK(a != 0 && b != 0 && c != 0 && a != b && b != c && a != c);
  const char *a_text = ovl_coll_types_dtype(a);
  CHECK(ovl_coll_types_intern("Bfloat16", "Sum", &a2) == 0);
  CHECK_I64(a2, a);
  CHECK_STR(ovl_coll_types_redop(b), "PreMulSum");
  CHECK_STR(ovl_coll_types_dtype(c), "Int64");
  CHECK_STR(ovl_coll_types_redop(c), "");
  /* 15 characters kept, as char[16] kept them */
  CHECK(ovl_coll_types_intern("a_type_name_longer_than_15", "an_op_name_longer_than_15", &cut) == 0);
  CHECK_STR(ovl_coll_types_dtype(cut), "a_type_name_lon");
  CHECK_STR(ovl_coll_types_redop(cut), "an_op_name_long");

  /* threads interning 5,000 pairs each, 4 times over: same answers, while the table grows */
  double t0 = now_s();
  pthread_t th[THREADS];
  for (long t = 0; t < THREADS; t++) CHECK(pthread_create(&th[t], NULL, intern_many, (void *)(intptr_t)t) == 0);
  for (long t = 0; t < THREADS; t++) {
    void *wrong = NULL;
    pthread_join(th[t], &wrong);
    CHECK_I64((intptr_t)wrong, 0);
  }
  double took = now_s() - t0;
  CHECK(a_text == ovl_coll_types_dtype(a));  /* never moved */
  CHECK_STR(a_text, "Bfloat16");
  /* 20,000 distinct pairs: a quadratic search would take 2e8 comparisons; a hash, milliseconds */
  printf("80,000 interns (20,000 distinct pairs) in %.3f s\n", took);
  CHECK(took < 5.0);

  /* a collective reads its texts through the accessors */
  ovl_coll_result r;
  memset(&r, 0, sizeof r);
  r.types = b;
  CHECK_STR(ovl_coll_dtype(&r), "Bfloat16");
  CHECK_STR(ovl_coll_redop(&r), "PreMulSum");
  return check_summary();
}
