/*
** What if the gradient buckets were formed differently? Replays a step's backward with the
** trace's own gradient-readiness curve (grad_phase.h) and an alpha-beta cost, with buckets
** formed as PyTorch DDP forms them (bucket_model.h: ready order, close at >= cap, never
** split, own cap for the first bucket) on one network channel: a bucket starts when it is
** ready and the channel is free.
**
** The replay predicts the step's tail: how long after backward_end the last gradient
** collective ends (0 when it ends before). Everything else in the step is kept, so
**   predicted step    = observed step - observed tail + predicted tail
**   predicted exposed = max(0, observed exposed - observed tail + predicted tail)
** where the observed tail is grad_end - backward_end.
**
** A candidate is judged against the same model's replay of the trace's own buckets, never
** against the trace: the difference between the model's replay and the trace is model error,
** not a gain. The fitted cost comes with how much of the collectives' time it explains (r2):
** below OVL_WHATIF_WEAK_R2 the predictions carry a caveat.
*/
#ifndef OVL_WHATIF_H
#define OVL_WHATIF_H

#include "base/status.h"
#include "../model/bucket_model.h"
#include "alpha_beta_fit.h"
#include "analysis.h"
#include "grad_phase.h"

/* Tail of a replay of the curve g (n gradients in ready order) with the given caps (bytes).
** scratch needs room for n buckets; *nbuckets (may be NULL) receives the buckets formed. */
double ovl_replay_tail(const ovl_bm_grad *g, size_t n, double backward_end, double first_cap, double cap,
                       double alpha_ns, double beta, ovl_bm_bucket *scratch, size_t *nbuckets);

/* Tail of a replay of the step's own gradient collectives with ready times `ready` (firing
** order, see ovl_bucket_ready_times). in_ready_order: launched in readiness order as soon as
** ready; else in firing order, each when ready and its predecessor launched (DDP's rule).
** measured: each costs its observed GPU time; else alpha + bytes/beta. Returns -1 when the
** step has no gradient collective or memory runs out. */
double ovl_replay_observed_tail(const ovl_step_result *st, const double *ready, int in_ready_order, int measured,
                                double alpha_ns, double beta);

/* Observed tail of a step: grad_end - backward_end, at least 0; -1 when unknown. */
double ovl_observed_tail(const ovl_step_result *st);

typedef struct ovl_whatif_options {
  const double *caps;      /* bucket caps to try, bytes */
  size_t ncaps;
  double first_cap;        /* bytes; 0: the first bucket has no cap of its own */
  double alpha_ns, beta;   /* NAN: fitted from the trace */
} ovl_whatif_options;

typedef struct ovl_whatif_candidate {
  double cap_bytes;
  double step_ns, exposed_ns;  /* per step */
  double buckets;              /* mean number of buckets per step */
} ovl_whatif_candidate;

/* A fitted cost that explains less than this share of the collectives' time (r2) is weak. */
#define OVL_WHATIF_WEAK_R2 0.5

typedef struct ovl_whatif_result {
  double current_step_ns, current_exposed_ns;  /* what the trace shows, per step */
  double model_step_ns, model_exposed_ns;      /* replay of the trace's own buckets: the baseline */
  ovl_whatif_candidate *cands;                 /* one per cap, in the order given */
  size_t ncands, best;
  double gain_ns;                              /* model_step_ns - the best candidate's step: > 0 when it beats the trace's buckets */
  int fit_weak;                                /* the cost was fitted and explains little (r2 < OVL_WHATIF_WEAK_R2) */
  double alpha_ns, beta;
  int alpha_given, beta_given;
  int alpha_assumed;                           /* sizes did not vary: alpha taken as 0, beta the effective bandwidth */
  ovl_comm_fit fit;                            /* of the gradient collectives (comm, op) */
  size_t ranks, steps;                         /* ranks and step indices replayed */
  int approximated;                            /* some readiness came from the approximation */
  int skipped_first_step;                      /* a differing first step was left out */
} ovl_whatif_result;

/* Runs every candidate on every replayable step (steady state: a first step whose buckets
** differ is left out) of every rank. Per step index the job's step time is the slowest rank's;
** results are means over step indices (step times) and over rank-steps (exposure). */
int ovl_whatif_run(const ovl_rank_result *ranks, size_t nranks, const ovl_whatif_options *opt, ovl_whatif_result *out,
                   ovl_err *err);
void ovl_whatif_result_free(ovl_whatif_result *r);

#endif
