/*
** What each finding rests on and how sure it is: one table, by code (docs/findings.md repeats
** it per finding). A finding made with weaker evidence than its code's usual (readiness
** approximated, a collective only seen to stall compute) is given its own level where it is
** made; this table fills the rest.
*/
#include "diagnose_internal.h"

#include <string.h>

static const struct {
  const char *code;
  ovl_confidence confidence;
  const char *evidence;
} table[] = {
  {"first_iteration_differs", OVL_CONF_HIGH, "bucket layouts of step 0 and the later steps"},
  {"readiness_stall", OVL_CONF_HIGH, "grad_ready marks and launch times of the buckets"},
  {"late_firing", OVL_CONF_HIGH, "kernel times: gradient collectives after the last backward kernel"},
  {"single_bucket", OVL_CONF_MEDIUM, "collective sizes and kernel times, replayed with the alpha-beta model"},
  {"exposed_tail", OVL_CONF_MEDIUM, "collective sizes and kernel times, replayed with the alpha-beta model"},
  {"latency_bound", OVL_CONF_MEDIUM, "an alpha-beta fit over collectives of varied sizes"},
  {"find_unused_parameters", OVL_CONF_MEDIUM, "a small integer all-reduce after the last bucket (DDP's signature)"},
  {"blocking_collective", OVL_CONF_HIGH, "a collective on a stream that mostly computes"},
  {"peer_wait", OVL_CONF_HIGH, "arrival times of every rank at the call, clocks aligned"},
  {"exposed_communication", OVL_CONF_HIGH, "the step's measured exposed communication"},
  {"compute_slowdown", OVL_CONF_MEDIUM, "runs of one kernel signature alone and overlapped"},
  {"unrecognised_communication", OVL_CONF_LOW, "kernel names only"},
  {"straggler", OVL_CONF_HIGH, "arrival order at every matched collective, clocks aligned"},
  {"late_prefetch", OVL_CONF_MEDIUM, "exposed time of collectives given their dimension by op mix"},
  {"exposed_reduce_scatter", OVL_CONF_MEDIUM, "exposed time of collectives given their dimension by op mix"},
  {"tp_blocking_share", OVL_CONF_MEDIUM, "communication time of a group judged tensor-parallel"},
  {"pipeline_bubble", OVL_CONF_MEDIUM, "compute per stage against the pipeline model"},
  {"alltoall_imbalance", OVL_CONF_MEDIUM, "all-to-all time per rank, with MoE kernels as evidence of experts"},
};

void ovl_finding_rests_on(ovl_finding *f, ovl_confidence confidence, const char *evidence) {
  f->confidence = confidence;
  f->evidence = evidence;
}

static void judge(ovl_finding *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (f[i].confidence != OVL_CONF_UNSET) continue;
    f[i].confidence = OVL_CONF_MEDIUM;
    f[i].evidence = "see the message";
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
      if (strcmp(f[i].code, table[k].code) == 0) {
        f[i].confidence = table[k].confidence;
        f[i].evidence = table[k].evidence;
      }
  }
}

void ovl_findings_judge_rank(ovl_rank_result *r) {
  for (size_t s = 0; s < r->nsteps; s++) judge(r->steps[s].findings, r->steps[s].nfindings);
  /* a rank summary rests on what its worst step's finding rests on */
  for (size_t i = 0; i < r->nfindings; i++) {
    ovl_finding *f = &r->findings[i];
    if (f->confidence != OVL_CONF_UNSET || f->steps_affected == 0) continue;
    for (size_t s = 0; s < r->nsteps; s++)
      for (size_t k = 0; k < r->steps[s].nfindings; k++) {
        const ovl_finding *g = &r->steps[s].findings[k];
        if (strcmp(g->code, f->code) == 0 && g->confidence > f->confidence) {
          f->confidence = g->confidence;  /* the weakest of its steps */
          f->evidence = g->evidence;
        }
      }
  }
  judge(r->findings, r->nfindings);
}

void ovl_findings_judge_job(ovl_job *job) {
  for (size_t i = 0; i < job->nranks; i++) ovl_findings_judge_rank(&job->ranks[i]);
  judge(job->findings, job->nfindings);
}
