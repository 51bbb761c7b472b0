/* The diagnosis of a finished job: see diagnose.h. */
#include "diagnose_internal.h"

int ovl_diagnose_job(ovl_job *job, ovl_err *err) {
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < job->nranks; i++) rc = ovl_diagnose_rank(&job->ranks[i], err);
  if (!rc && job->cross.present) rc = ovl_diagnose_cross(job, err);
  if (!rc) rc = ovl_diagnose_dims(job, err);
  if (!rc) ovl_findings_judge_job(job);
  return rc;
}
