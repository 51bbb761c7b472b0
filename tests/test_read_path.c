/*
** The analysis read path's shortcuts answer what a plain search answers:
** - ovl_launch_step_near, which looks first where the previous lookup ended, against a linear
**   reference, for lookups in launch order, out of order, and from any hint;
** - the work stream's collective links, found by id in the collectives rows (no map of every
**   id), against a reference built from the rows and links as read: links out of id order,
**   dangling links, ids with gaps, one correlation launching several collectives, and a
**   repeated id (a collectives table without its primary key) linking to its last row;
** - ovl_work_stream_next_ref hands out the same pieces, in the same order, as
**   ovl_work_stream_next.
*/
#include "analyze/host_markers.h"
#include "analyze/work_stream.h"
#include "check.h"
#include "db_query.h"
#include "load/trace_reader.h"
#include "trace_builder.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The step of the ranged steps that launched correlation c, by a linear look (the contract of
** ovl_launch_step in host_markers.h). */
static long launch_step_reference(const ovl_host_markers *hm, int64_t c) {
  if (!hm->by_correlation || c == OVL_NONE) return -1;
  size_t last = SIZE_MAX;  /* the last ranged step whose min <= c */
  for (size_t i = 0; i < hm->nranged; i++)
    if (hm->ranged_min[i] <= c) last = i;
  if (last == SIZE_MAX) return -1;
  if (c <= hm->ranged_max[last]) return hm->ranged_step[last];
  return last + 1 == hm->nranged ? (long)hm->steps.len : -1;
}

static void launch_steps(void) {
  enum { STEPS = 9 };
  /* ranged steps 0, 1, 3, 4, 6, 7, 8 (2 and 5 launched nothing), with gaps between them */
  int64_t mins[] = {10, 20, 40, 41, 60, 75, 90}, maxs[] = {15, 30, 40, 50, 70, 80, 99};
  long steps[] = {0, 1, 3, 4, 6, 7, 8};
  size_t n = sizeof mins / sizeof *mins;
  ovl_host_markers hm;
  memset(&hm, 0, sizeof hm);
  hm.steps.len = STEPS;
  hm.ranged_min = mins;
  hm.ranged_max = maxs;
  hm.ranged_step = steps;
  hm.nranged = n;
  hm.by_correlation = 1;
  int mismatches = 0;
  size_t hint = 0;
  for (int64_t c = 0; c < 110; c++)  /* in launch order, one hint carried along */
    mismatches += ovl_launch_step_near(&hm, c, &hint) != launch_step_reference(&hm, c);
  srand(7);
  for (int i = 0; i < 5000; i++) {  /* any order, any hint (past the end too) */
    int64_t c = rand() % 120 - 5;
    if (i % 7 == 0) hint = (size_t)(rand() % 12);
    if (i % 11 == 0) hint = SIZE_MAX;
    mismatches += ovl_launch_step_near(&hm, c, &hint) != launch_step_reference(&hm, c);
    mismatches += ovl_launch_step(&hm, c) != launch_step_reference(&hm, c);
  }
  CHECK_I64(mismatches, 0);
  CHECK_I64(ovl_launch_step_near(&hm, OVL_NONE, &hint), -1);
  CHECK_I64(ovl_launch_step(&hm, 45), 4);
  CHECK_I64(ovl_launch_step(&hm, 55), -1);   /* between steps 4 and 6 */
  CHECK_I64(ovl_launch_step(&hm, 500), STEPS); /* after the last step */
}

static void exec_sql(const char *path, const char *sql) { CHECK(dbq_exec(path, sql) == SQLITE_OK); }

/* The collectives rows (indices into the rows as read) that the links tie to correlation c:
** a link's collective is the last row with its id. */
static size_t links_reference(const ovl_coll_rec *recs, size_t nrecs, const ovl_launch_rec *links, size_t nlinks,
                              int64_t c, int32_t *out) {
  size_t n = 0;
  for (size_t i = 0; i < nlinks; i++) {
    if (links[i].correlation != c) continue;
    int32_t row = -1;
    for (size_t k = 0; k < nrecs; k++)
      if (recs[k].id == links[i].collective) row = (int32_t)k;
    if (row >= 0) out[n++] = row;
  }
  for (size_t i = 1; i < n; i++)  /* sorted, as the stream keeps them */
    for (size_t k = i; k > 0 && out[k - 1] > out[k]; k--) {
      int32_t x = out[k];
      out[k] = out[k - 1];
      out[k - 1] = x;
    }
  return n;
}

static int same_work(const ovl_work *a, const ovl_work *b) {
  for (int i = 0; i < 3; i++)
    if (a->grid[i] != b->grid[i] || a->block[i] != b->block[i]) return 0;
  return a->start == b->start && a->end == b->end && a->device == b->device && a->stream == b->stream &&
         a->correlation == b->correlation && a->name == b->name && a->bytes == b->bytes &&
         a->is_memop == b->is_memop && strcmp(a->memkind, b->memkind) == 0;
}

static void collective_links(void) {
  const char *path = tb_temp_path("links.sqlite");
  tb b;
  tb_open(&b, path);
  int64_t corr[12];
  for (int i = 0; i < 12; i++) corr[i] = tb_kernel(&b, i % 3 ? "gemm" : "ncclKernel_AllReduce_RING_LL_Sum_float",
                                                   1000 + 100 * i, 1050 + 100 * i, 0, 7);
  /* written in reverse: the links table holds them out of id order */
  for (int i = 11; i >= 0; i--) tb_collective(&b, "AllReduce", 1024, 2, 900 + 100 * i, corr[i]);
  tb_close(&b);
  /* a gap in the ids, a dangling link, a second collective on one correlation, a repeated id */
  char sql[512];
  snprintf(sql, sizeof sql,
           "DELETE FROM collectives WHERE id = (SELECT min(id) + 4 FROM collectives);"
           "INSERT INTO collective_launches VALUES (999999, %lld);"
           "INSERT INTO collective_launches SELECT max(id), %lld FROM collectives;"
           "CREATE TABLE c2 AS SELECT * FROM collectives; DROP TABLE collectives;"
           "ALTER TABLE c2 RENAME TO collectives;"
           "INSERT INTO collectives SELECT * FROM collectives WHERE id = (SELECT min(id) + 2 FROM collectives);",
           (long long)corr[5], (long long)corr[1]);
  exec_sql(path, sql);

  ovl_err err = {0};
  ovl_trace *t = NULL;
  CHECK(ovl_trace_open(path, &t, &err) == OVL_OK);
  if (!t) return;
  ovl_coll_rec *recs = NULL;
  ovl_launch_rec *links = NULL;
  size_t nrecs = 0, nlinks = 0;
  CHECK(ovl_trace_read_collectives(t, &recs, &nrecs, &err) == OVL_OK);
  CHECK(ovl_trace_read_launches(t, &links, &nlinks, &err) == OVL_OK);
  CHECK_I64(nrecs, 12);  /* one deleted, one repeated */
  CHECK_I64(nlinks, 14);
  ovl_classifier cls;
  CHECK(ovl_classifier_init(&cls, NULL, &err) == OVL_OK);
  ovl_work_stream s;
  CHECK(ovl_work_stream_init(&s, t, &cls, &err) == OVL_OK);
  int mismatches = 0, linked = 0, several = 0;
  for (int i = 0; i < 12; i++) {
    int32_t want[8];
    size_t nwant = links_reference(recs, nrecs, links, nlinks, corr[i], want);
    const int32_t *got = NULL;
    uint32_t ngot = ovl_work_stream_links(&s, corr[i], &got);
    mismatches += ngot != nwant;
    for (size_t k = 0; k < nwant && k < ngot; k++) mismatches += got[k] != want[k];
    linked += ngot > 0;
    several += ngot > 1;
  }
  CHECK_I64(mismatches, 0);
  CHECK_I64(linked, 11);  /* the deleted collective's kernel has none */
  CHECK_I64(several, 1);
  const int32_t *none = NULL;
  CHECK_I64(ovl_work_stream_links(&s, OVL_NONE, &none), 0);

  /* the same pieces by reference as by copy */
  ovl_classified_work copies[16];
  size_t ncopies = 0;
  int has = 0;
  CHECK(ovl_work_stream_open(&s, 64, 0, &err) == OVL_OK);
  while (ncopies < 16 && ovl_work_stream_next(&s, &copies[ncopies], &has, &err) == OVL_OK && has) ncopies++;
  ovl_work_stream_close(&s);
  CHECK_I64(ncopies, 12);
  CHECK(ovl_work_stream_open(&s, 64, 0, &err) == OVL_OK);
  const ovl_classified_work *ref = NULL;
  size_t nref = 0;
  int differ = 0;
  while (ovl_work_stream_next_ref(&s, &ref, &has, &err) == OVL_OK && has) {
    if (nref < ncopies)
      differ += !same_work(&ref->w, &copies[nref].w) || ref->cls != copies[nref].cls ||
                ref->ncolls != copies[nref].ncolls || ref->colls != copies[nref].colls;
    nref++;
  }
  CHECK(!has && ref == NULL);
  ovl_work_stream_close(&s);
  CHECK_I64(nref, ncopies);
  CHECK_I64(differ, 0);
  ovl_work_stream_free(&s);
  ovl_classifier_free(&cls);
  free(recs);
  free(links);
  ovl_trace_close(t);
}

int main(void) {
  launch_steps();
  collective_links();
  return check_summary();
}
