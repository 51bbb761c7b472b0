/* Test analysis helper: see analysis_helper.h. */
#include "analysis_helper.h"

#include "diagnose/diagnose.h"

#include <stdio.h>
#include <stdlib.h>

ovl_rank_result *th_analyse(const char *path, size_t *n) {
  ovl_analysis_ctx ctx;
  ovl_analysis_options opt = {0};
  opt.launch_dims = 1;
  ovl_err err = {0};
  ovl_rank_result *r = NULL;
  if (ovl_analysis_ctx_init(&ctx, &opt, &err) || ovl_analyze_file(&ctx, path, &r, n, &err)) {
    fprintf(stderr, "analysis of %s failed: %s\n", path, err.msg);
    exit(2);
  }
  for (size_t i = 0; i < *n; i++)  /* each rank diagnosed alone, as the job driver does first */
    if (ovl_diagnose_rank(&r[i], &err)) {
      fprintf(stderr, "diagnosis of %s failed: %s\n", path, err.msg);
      exit(2);
    }
  ovl_analysis_ctx_free(&ctx);
  return r;
}

void th_release(ovl_rank_result *r, size_t n) {
  for (size_t i = 0; i < n; i++) ovl_rank_result_free(&r[i]);
  free(r);
}
