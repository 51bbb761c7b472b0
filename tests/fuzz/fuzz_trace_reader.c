/*
** libFuzzer target: reading an ovl trace (load/trace_reader.c) from the bytes of a SQLite
** file, and everything `ovl report --json` does with it: format detection, the analysis,
** the cross-rank stage and the JSON report (formatted into /dev/null). The report's
** promises are checked on what was analysed: durations not negative, efficiencies NaN
** (no communication) or within 0..1.
*/
#include "fuzz_file.h"
#include "analyze/analysis.h"
#include "driver/job_driver.h"
#include "report/report_json.h"

#include <math.h>
#include <stdlib.h>

static void check_totals(const ovl_totals *t) {
  OVL_FUZZ_CHECK(t->compute >= 0 && t->comm >= 0 && t->memory >= 0);
  OVL_FUZZ_CHECK(t->exposed >= 0 && t->exposed <= t->comm);
  double eff = ovl_overlap_efficiency(t);
  OVL_FUZZ_CHECK(isnan(eff) || (eff >= 0.0 && eff <= 1.0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ovl_analysis_ctx ctx;
  static int ready;
  ovl_err err = {0};
  if (!ready) {
    ovl_analysis_options opt = {0};
    if (ovl_analysis_ctx_init(&ctx, &opt, &err)) abort();
    ready = 1;
  }
  const char *path = ovl_fuzz_write(data, size, ".sqlite");
  if (!path) return 0;
  char *args[] = {(char *)path};
  ovl_job job = {0};
  if (ovl_analyze_job(&ctx, args, 1, NULL, NULL, &job, &err)) {
    OVL_FUZZ_CHECK(err.msg[0] != '\0');
    return 0;
  }
  for (size_t r = 0; r < job.nranks; r++) {
    const ovl_rank_result *rr = &job.ranks[r];
    check_totals(&rr->totals);
    for (size_t s = 0; s < rr->nsteps; s++) check_totals(&rr->steps[s].totals);
  }
  ovl_report_json(ovl_fuzz_null_stream(), &job, 0);
  ovl_job_free(&job);
  return 0;
}
