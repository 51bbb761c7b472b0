/*
** The alpha-beta model of collective cost, fitted to a trace: time = alpha + bytes / beta.
**
** The fit minimises relative residuals ((t - model) / t), so a 1 KB message counts as much as
** a 1 GB one and alpha is pinned by the small messages, beta by the large ones. It is robust:
** iteratively reweighted least squares with Tukey's biweight (c = 4.685 times the MAD scale)
** drops outliers, such as a collective that waited for a late peer. Sizes must vary (the
** largest at least OVL_FIT_MIN_SPREAD times the smallest) to separate alpha from beta;
** otherwise only the effective bandwidth (median bytes / time) is known.
**
** The samples of a collective: bytes = its per-rank size (collectives.bytes), time = its
** transfer time, gpu_end - max(gpu_start, last arrival of a peer): when traces of other ranks
** of the communicator from the same host are analysed together, the time this rank waited
** for them to finish their compute before the transfer could start is left out. Across
** hosts the clocks differ, so there each rank's own kernel time is used and waiting shows
** up as outliers.
*/
#ifndef OVL_ALPHA_BETA_FIT_H
#define OVL_ALPHA_BETA_FIT_H

#include "base/status.h"
#include "analysis.h"

#include <stddef.h>

#define OVL_FIT_MIN_SPREAD 1.25

typedef struct ovl_ab_sample {
  double bytes, ns;
} ovl_ab_sample;

typedef struct ovl_ab_fit {
  int separable;           /* sizes varied enough: alpha and beta are both fitted */
  double alpha_ns;         /* NAN when not separable */
  double beta_bytes_per_s; /* when not separable: the effective bandwidth, median bytes/time */
  double r2;               /* of the kept samples; NAN when undefined */
  size_t samples, kept;    /* samples used; those the robust fit kept (weight > 0) */
  double min_bytes, max_bytes;
} ovl_ab_fit;

/* Fits samples with bytes >= 0 and ns > 0 (others are ignored). Returns 0, or -1 when no
** sample is usable or memory runs out. */
int ovl_ab_fit_samples(const ovl_ab_sample *s, size_t n, ovl_ab_fit *out);
/* Fits time = alpha + bytes/beta with alpha fixed (beta <= 0 on return: unfittable), or beta
** fixed: medians of (t - alpha)/bytes or t - bytes/beta. Return 0 or -1. */
int ovl_ab_fit_beta(const ovl_ab_sample *s, size_t n, double alpha_ns, double *beta_bytes_per_s);
int ovl_ab_fit_alpha(const ovl_ab_sample *s, size_t n, double beta_bytes_per_s, double *alpha_ns);

/* One fit per (communicator, operation). */
typedef struct ovl_comm_fit {
  int64_t comm;            /* OVL_NONE: collectives without a communicator id */
  const char *name;        /* the name the traces give comm ("default_pg"), or NULL; borrowed
                           ** from the ranks fitted (ovl_rank_comm_name) */
  ovl_op op;
  ovl_ab_fit fit;
  int64_t total_bytes;     /* of the samples */
} ovl_comm_fit;

/* Fits every (comm, op) of the ranks' collectives with a known size and a GPU interval.
** gradient_only: only gradient collectives (roles from the diagnosis). Returns 0 with *fits
** (caller frees) sorted by comm then op, or an error. */
int ovl_fit_ranks(const ovl_rank_result *ranks, size_t nranks, int gradient_only, ovl_comm_fit **fits, size_t *nfits,
                  ovl_err *err);
/* The samples of one (comm, op) as ovl_fit_ranks takes them; caller frees *out. */
int ovl_fit_samples_of(const ovl_rank_result *ranks, size_t nranks, int64_t comm, ovl_op op, int gradient_only,
                       ovl_ab_sample **out, size_t *n, ovl_err *err);

#endif
