/* Robust alpha-beta fits: see alpha_beta_fit.h. */
#include "alpha_beta_fit.h"

#include "base/vec.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TUKEY_C 4.685
#define MAX_ITERATIONS 100

static int cmp_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* Median of v[0..n) (reorders v). */
static double median(double *v, size_t n) {
  if (n == 0) return NAN;
  ovl_qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Weighted least squares on relative residuals: minimise sum w ((t - a - g b) / t)^2.
** Returns 0, or -1 when the system is singular. */
static int solve(const ovl_ab_sample *s, const double *w, size_t n, double *a, double *g) {
  double suu = 0, suv = 0, svv = 0, su = 0, sv = 0;
  for (size_t i = 0; i < n; i++) {
    double u = 1.0 / s[i].ns, v = s[i].bytes / s[i].ns;
    suu += w[i] * u * u;
    suv += w[i] * u * v;
    svv += w[i] * v * v;
    su += w[i] * u;
    sv += w[i] * v;
  }
  double det = suu * svv - suv * suv;
  if (!(fabs(det) > 1e-12 * suu * svv) || !(suu > 0)) return -1;
  *a = (su * svv - sv * suv) / det;
  *g = (suu * sv - suv * su) / det;
  if (*a < 0) {  /* the latency cannot be negative: fit the slope alone */
    *a = 0;
    if (!(svv > 0)) return -1;
    *g = sv / svv;
  }
  return 0;
}

/* Do the samples with weight > 0 still span enough sizes? */
static int spread_enough(const ovl_ab_sample *s, const double *w, size_t n) {
  double lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (w && !(w[i] > 0)) continue;
    if (s[i].bytes < lo) lo = s[i].bytes;
    if (s[i].bytes > hi) hi = s[i].bytes;
  }
  return hi > 0 && hi >= OVL_FIT_MIN_SPREAD * lo;
}

static void r_squared(const ovl_ab_sample *s, const double *w, size_t n, double a, double g, ovl_ab_fit *out) {
  double mean = 0, ss_res = 0, ss_tot = 0;
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if (w[i] > 0) {
      mean += s[i].ns;
      kept++;
    }
  mean /= (double)(kept ? kept : 1);
  for (size_t i = 0; i < n; i++) {
    if (!(w[i] > 0)) continue;
    double e = s[i].ns - (a + g * s[i].bytes);
    ss_res += e * e;
    ss_tot += (s[i].ns - mean) * (s[i].ns - mean);
  }
  out->kept = kept;
  out->r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : NAN;
}

static int sample_ok(const ovl_ab_sample *s) {
  return s->bytes >= 0 && s->ns > 0 && isfinite(s->bytes) && isfinite(s->ns);
}

int ovl_ab_fit_samples(const ovl_ab_sample *in, size_t n_in, ovl_ab_fit *out) {
  memset(out, 0, sizeof *out);
  out->alpha_ns = out->beta_bytes_per_s = out->r2 = NAN;
  /* the usable samples: the input itself when all are (no copy of a million samples) */
  size_t n = 0;
  for (size_t i = 0; i < n_in; i++) n += sample_ok(&in[i]);
  ovl_ab_sample *kept = n < n_in ? malloc((n ? n : 1) * sizeof *kept) : NULL;
  double *w = malloc((n ? n : 1) * sizeof *w);
  double *tmp = malloc((n ? n : 1) * sizeof *tmp);
  double *scratch = malloc((n ? n : 1) * sizeof *scratch);
  if ((n < n_in && !kept) || !w || !tmp || !scratch) {
    free(kept);
    free(w);
    free(tmp);
    free(scratch);
    return -1;
  }
  const ovl_ab_sample *s = in;
  if (kept) {
    size_t k = 0;
    for (size_t i = 0; i < n_in; i++)
      if (sample_ok(&in[i])) kept[k++] = in[i];
    s = kept;
  }
  int rc = n ? 0 : -1;
  out->samples = n;
  out->min_bytes = INFINITY;
  out->max_bytes = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (s[i].bytes < out->min_bytes) out->min_bytes = s[i].bytes;
    if (s[i].bytes > out->max_bytes) out->max_bytes = s[i].bytes;
    w[i] = 1.0;
  }
  double a = 0, g = 0;
  int fitted = !rc && spread_enough(s, NULL, n) && solve(s, w, n, &a, &g) == 0 && g > 0;
  for (int it = 0; fitted && it < MAX_ITERATIONS; it++) {
    /* relative residuals and their MAD scale */
    for (size_t i = 0; i < n; i++) scratch[i] = tmp[i] = (s[i].ns - a - g * s[i].bytes) / s[i].ns;
    double med = median(scratch, n);
    for (size_t i = 0; i < n; i++) scratch[i] = fabs(tmp[i] - med);
    double scale = median(scratch, n) / 0.6745;
    if (!(scale > 1e-9)) scale = 1e-9;  /* (nearly) exact data: only true outliers lose weight */
    for (size_t i = 0; i < n; i++) {
      double u = tmp[i] / (TUKEY_C * scale);
      w[i] = fabs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0;
    }
    double na, ng;
    if (!spread_enough(s, w, n) || solve(s, w, n, &na, &ng) || !(ng > 0)) break;
    int converged = fabs(na - a) <= 1e-9 * (fabs(a) + 1) && fabs(ng - g) <= 1e-12 * fabs(g);
    a = na;
    g = ng;
    if (converged) break;
  }
  if (fitted) {
    /* Final weights for the reported fit. */
    out->separable = 1;
    out->alpha_ns = a;
    out->beta_bytes_per_s = 1e9 / g;
    int any = 0;
    for (size_t i = 0; i < n; i++) any |= w[i] > 0;
    if (!any)
      for (size_t i = 0; i < n; i++) w[i] = 1;
    r_squared(s, w, n, a, g, out);
  } else if (!rc) {
    for (size_t i = 0; i < n; i++) tmp[i] = s[i].bytes / s[i].ns;
    out->beta_bytes_per_s = median(tmp, n) * 1e9;
    out->kept = n;
  }
  free(kept);
  free(w);
  free(tmp);
  free(scratch);
  return rc;
}

int ovl_ab_fit_beta(const ovl_ab_sample *s, size_t n, double alpha_ns, double *beta_bytes_per_s) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return -1;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].bytes > 0 && s[i].ns > alpha_ns) v[m++] = (s[i].ns - alpha_ns) / s[i].bytes;
  double per_byte = median(v, m);
  free(v);
  *beta_bytes_per_s = m && per_byte > 0 ? 1e9 / per_byte : -1;
  return 0;
}

int ovl_ab_fit_alpha(const ovl_ab_sample *s, size_t n, double beta_bytes_per_s, double *alpha_ns) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return -1;
  size_t m = 0;
  for (size_t i = 0; i < n; i++)
    if (s[i].bytes >= 0 && s[i].ns > 0) v[m++] = s[i].ns - s[i].bytes / beta_bytes_per_s * 1e9;
  double a = median(v, m);
  free(v);
  *alpha_ns = m ? (a > 0 ? a : 0) : NAN;
  return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Samples from analysed ranks                                                         */
/* ---------------------------------------------------------------------------------- */

/* One collective instance, for matching peers: same (comm, seq) on the same host. */
typedef struct arrival {
  int64_t comm, seq;
  size_t host;
  int64_t start;
} arrival;

static int cmp_arrival(const void *pa, const void *pb) {
  const arrival *a = pa, *b = pb;
  if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
  if (a->seq != b->seq) return a->seq < b->seq ? -1 : 1;
  if (a->host != b->host) return a->host < b->host ? -1 : 1;
  return (a->start > b->start) - (a->start < b->start);
}

/* Latest start of (comm, seq) on host among the sorted arrivals, or OVL_NONE. */
static int64_t last_arrival(const arrival *v, size_t n, int64_t comm, int64_t seq, size_t host) {
  size_t lo = 0, hi = n;
  arrival key = {comm, seq, host, INT64_MAX};
  while (lo < hi) {  /* first element > key */
    size_t mid = lo + (hi - lo) / 2;
    if (cmp_arrival(&v[mid], &key) <= 0) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return OVL_NONE;
  const arrival *a = &v[lo - 1];
  return (a->comm == comm && a->seq == seq && a->host == host) ? a->start : OVL_NONE;
}

static size_t host_id(const ovl_rank_result *ranks, size_t i) {
  for (size_t k = 0; k < i; k++) {
    const char *a = ranks[k].hostname, *b = ranks[i].hostname;
    if (a && b && strcmp(a, b) == 0) return k;
  }
  return i;
}

static int usable(const ovl_coll_result *c, int gradient_only) {
  if (gradient_only && c->diag.role != OVL_ROLE_GRADIENT) return 0;
  return c->bytes != OVL_NONE && c->bytes >= 0 && ovl_coll_gpu_end(c) > c->gpu_start;
}

/* The usable collectives' samples grouped by (communicator, operation), groups in that order
** (the fits' order) and each group's samples by size. Grouped by counting, not by sorting one
** entry per collective with its key: on a long trace (a million gradient all-reduces) the
** fit's memory is then its samples (16 bytes each) and one group's fit, not twice as much
** with a sort buffer as large beside them (the diagnosis' peak). */
typedef struct fit_key {
  int64_t comm;
  ovl_op op;
  size_t at, n;            /* the group's samples: samples[at .. at + n) */
} fit_key;

typedef struct fit_groups {
  fit_key *keys;           /* nkeys, by (comm, op) */
  size_t nkeys;
  ovl_ab_sample *samples;
} fit_groups;

static void fit_groups_free(fit_groups *g) {
  free(g->keys);
  free(g->samples);
  memset(g, 0, sizeof *g);
}

static int cmp_key(int64_t comm, ovl_op op, const fit_key *k) {
  if (comm != k->comm) return comm < k->comm ? -1 : 1;
  return (op > k->op) - (op < k->op);
}

/* The position of (comm, op) in the sorted keys, or where it would go (*found 0). */
static size_t find_key(const fit_groups *g, int64_t comm, ovl_op op, int *found) {
  size_t lo = 0, hi = g->nkeys;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = cmp_key(comm, op, &g->keys[mid]);
    if (c == 0) {
      *found = 1;
      return mid;
    }
    if (c < 0) hi = mid;
    else lo = mid + 1;
  }
  *found = 0;
  return lo;
}

static int cmp_sample_bytes(const void *pa, const void *pb) {
  const ovl_ab_sample *a = pa, *b = pb;
  return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/* Calls each(c, begin) for every usable collective, begin its transfer's start (the last
** peer's arrival when later than its own start), in the ranks' order. */
typedef int (*sample_fn)(void *ctx, const ovl_coll_result *c, int64_t begin);

static int each_sample(const ovl_rank_result *ranks, size_t nranks, int gradient_only, sample_fn each, void *ctx,
                       const arrival *arr, size_t narr) {
  for (size_t r = 0; r < nranks; r++) {
    size_t host = host_id(ranks, r);
    for (size_t s = 0; s < ranks[r].nsteps; s++)
      for (size_t i = 0; i < ranks[r].steps[s].ncolls; i++) {
        const ovl_coll_result *c = &ranks[r].steps[s].colls[i];
        if (!usable(c, gradient_only)) continue;
        int64_t begin = c->gpu_start;
        if (narr && c->comm != OVL_NONE && ovl_coll_seq(c) != OVL_NONE) {
          int64_t last = last_arrival(arr, narr, c->comm, ovl_coll_seq(c), host);
          if (last != OVL_NONE && last > begin && last < ovl_coll_gpu_end(c)) begin = last;
        }
        if (each(ctx, c, begin)) return -1;
      }
  }
  return 0;
}

/* First walk: the keys and their counts. */
static int count_sample(void *ctx, const ovl_coll_result *c, int64_t begin) {
  (void)begin;
  fit_groups *g = ctx;
  int found;
  size_t k = find_key(g, c->comm, c->op, &found);
  if (!found) {
    fit_key *grown = realloc(g->keys, (g->nkeys + 1) * sizeof *grown);
    if (!grown) return -1;
    g->keys = grown;
    memmove(&g->keys[k + 1], &g->keys[k], (g->nkeys - k) * sizeof *g->keys);
    g->keys[k] = (fit_key){c->comm, c->op, 0, 0};
    g->nkeys++;
  }
  g->keys[k].n++;
  return 0;
}

/* Second walk: each sample into its group, in the walk's order (keys[].n counts them again). */
static int place_sample(void *ctx, const ovl_coll_result *c, int64_t begin) {
  fit_groups *g = ctx;
  int found;
  fit_key *k = &g->keys[find_key(g, c->comm, c->op, &found)];
  assert(found);
  g->samples[k->at + k->n++] = (ovl_ab_sample){(double)c->bytes, (double)(ovl_coll_gpu_end(c) - begin)};
  return 0;
}

/* Every usable collective as a sample of its group, with its transfer time. */
static int collect(const ovl_rank_result *ranks, size_t nranks, int gradient_only, fit_groups *out, ovl_err *err) {
  memset(out, 0, sizeof *out);
  OVL_VEC(arrival) arr = {0};
  int rc = OVL_OK;
  for (size_t r = 0; !rc && nranks > 1 && r < nranks; r++) {  /* peers only exist with several ranks */
    size_t host = host_id(ranks, r);
    for (size_t s = 0; !rc && s < ranks[r].nsteps; s++)
      for (size_t i = 0; !rc && i < ranks[r].steps[s].ncolls; i++) {
        const ovl_coll_result *c = &ranks[r].steps[s].colls[i];
        int64_t seq = ovl_coll_seq(c);
        if (c->comm != OVL_NONE && seq != OVL_NONE && OVL_VEC_PUSH(&arr, ((arrival){c->comm, seq, host, c->gpu_start})))
          rc = ovl_oom(err, "fit");
      }
  }
  ovl_qsort(arr.items, arr.len, sizeof *arr.items, cmp_arrival);
  if (!rc && each_sample(ranks, nranks, gradient_only, count_sample, out, NULL, 0)) rc = ovl_oom(err, "fit");
  size_t n = 0;
  for (size_t k = 0; !rc && k < out->nkeys; k++) {
    out->keys[k].at = n;
    n += out->keys[k].n;
    out->keys[k].n = 0;
  }
  if (!rc && !(out->samples = malloc((n ? n : 1) * sizeof *out->samples))) rc = ovl_oom(err, "fit");
  if (!rc) (void)each_sample(ranks, nranks, gradient_only, place_sample, out, arr.items, arr.len);
  OVL_VEC_FREE(&arr);
  /* by size within each group; the sort keeps equal sizes in the walk's order */
  for (size_t k = 0; !rc && k < out->nkeys; k++)
    ovl_qsort(out->samples + out->keys[k].at, out->keys[k].n, sizeof *out->samples, cmp_sample_bytes);
  if (rc) fit_groups_free(out);
  return rc;
}

int ovl_fit_ranks(const ovl_rank_result *ranks, size_t nranks, int gradient_only, ovl_comm_fit **fits, size_t *nfits,
                  ovl_err *err) {
  *fits = NULL;
  *nfits = 0;
  fit_groups g;
  int rc = collect(ranks, nranks, gradient_only, &g, err);
  if (rc) return rc;
  for (size_t k = 0; !rc && k < g.nkeys; k++) {
    const ovl_ab_sample *s = g.samples + g.keys[k].at;
    int64_t total = 0;
    for (size_t i = 0; i < g.keys[k].n; i++) total += (int64_t)s[i].bytes;
    ovl_comm_fit f = {g.keys[k].comm, NULL, g.keys[k].op, {0}, total};
    for (size_t r = 0; !f.name && r < nranks; r++) f.name = ovl_rank_comm_name(&ranks[r], g.keys[k].comm);
    if (ovl_ab_fit_samples(s, g.keys[k].n, &f.fit) == 0) {
      ovl_comm_fit *grown = realloc(*fits, (*nfits + 1) * sizeof *grown);
      if (!grown) {
        rc = ovl_oom(err, "fit");
        break;
      }
      *fits = grown;
      (*fits)[(*nfits)++] = f;
    }
  }
  fit_groups_free(&g);
  if (rc) {
    free(*fits);
    *fits = NULL;
    *nfits = 0;
  }
  return rc;
}

int ovl_fit_samples_of(const ovl_rank_result *ranks, size_t nranks, int64_t comm, ovl_op op, int gradient_only,
                       ovl_ab_sample **out, size_t *n, ovl_err *err) {
  *out = NULL;
  *n = 0;
  fit_groups g;
  int rc = collect(ranks, nranks, gradient_only, &g, err);
  if (rc) return rc;
  int found;
  size_t k = find_key(&g, comm, op, &found);
  size_t count = found ? g.keys[k].n : 0;
  *out = malloc((count ? count : 1) * sizeof **out);
  if (!*out) rc = ovl_oom(err, "fit");
  else if (count) memcpy(*out, g.samples + g.keys[k].at, count * sizeof **out);
  if (!rc) *n = count;
  fit_groups_free(&g);
  return rc;
}
