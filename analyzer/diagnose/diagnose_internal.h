/*
** Shared by the files of the diagnosis (diagnose.c: a rank's driver and rank-level findings;
** diagnose_steps.c: the per-step findings; diagnose_cross.c: findings across ranks;
** diagnose_dims.c: the dimension findings; diagnose_job.c: the job's pass). Not part of the
** analyzer's interface.
*/
#ifndef OVL_DIAGNOSE_INTERNAL_H
#define OVL_DIAGNOSE_INTERNAL_H

#include "analyze/alpha_beta_fit.h"
#include "analyze/grad_phase.h"
#include "diagnose.h"
#include "thresholds.h"

#include <stdarg.h>

/* A growing message. Errors (no memory) are sticky and reported once at the end. A fixed
** message writes into the caller's buffer s of cap bytes and never grows: a text that does
** not fit sets oom (a finding's text written when read, ovl_finding_text_fn). */
typedef struct ovl_msg {
  char *s;
  size_t len, cap;
  int oom;
  int fixed;
} ovl_msg;

void ovl_msg_printf(ovl_msg *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ovl_msg_free(ovl_msg *m);
/* "12.34 ms" / "25.0 MB" into a caller buffer of 32 bytes. */
const char *ovl_ns_str(double ns, char *buf);
const char *ovl_bytes_str(double bytes, char *buf);

typedef struct ovl_diag {
  ovl_rank_result *r;
  ovl_step_marks marks;
  /* alpha-beta of the gradient collectives */
  int have_cost;           /* a fit of the gradient collectives exists that explains their time */
  int fit_useless;         /* a fit exists but explains none of their time (r2 < OVL_FIT_MIN_R2) */
  int alpha_assumed;       /* sizes did not vary: alpha taken as 0, beta the effective bandwidth */
  double alpha_ns, beta;
  ovl_comm_fit fit;
  ovl_err *err;
} ovl_diag;

/* Per-step findings of step s (steady state). Returns OVL_OK or an error. */
int ovl_diagnose_step(ovl_diag *d, size_t s);

/* Appends a finding to the step (recoverable rounded to ns). Returns OVL_OK or OVL_EINTERNAL. */
int ovl_step_finding(ovl_diag *d, ovl_step_result *st, const char *code, double recoverable_ns, int64_t at_ns,
                     ovl_msg *m);
/* Appends a finding to the step whose text `text` writes when it is read (nothing to
** recover); returns it, or NULL with the error set when memory runs out. */
ovl_finding *ovl_step_finding_text(ovl_diag *d, ovl_step_result *st, const char *code, int64_t at_ns,
                                   ovl_finding_text_fn text);
/* The same, for a finding whose evidence is weaker than its code's usual (evidence.c). */
int ovl_step_finding_rests_on(ovl_diag *d, ovl_step_result *st, const char *code, double recoverable_ns,
                              int64_t at_ns, ovl_msg *m, ovl_confidence confidence, const char *evidence);

/* What findings rest on and how sure they are (evidence.c): a finding made with weaker
** evidence than its code's usual is given it where it is made; the table fills the rest. */
void ovl_finding_rests_on(ovl_finding *f, ovl_confidence confidence, const char *evidence);
void ovl_findings_judge_rank(ovl_rank_result *r);
void ovl_findings_judge_job(ovl_job *job);

/* Rebuilds the rank-level summaries of the step findings (after a later stage changed step
** findings). Returns OVL_OK or an error (no memory). */
int ovl_diagnose_resummarise(ovl_rank_result *r, ovl_err *err);

/* Across ranks (diagnose_cross.c), after the job's wait/transfer split: the straggler findings
** of the ranks the cross-rank statistics call stragglers, then blocking_collective findings
** whose collective mostly waited for a peer become peer_wait. */
int ovl_diagnose_cross(ovl_job *job, ovl_err *err);
/* The dimension findings (diagnose_dims.c). */
int ovl_diagnose_dims(ovl_job *job, ovl_err *err);

#endif
