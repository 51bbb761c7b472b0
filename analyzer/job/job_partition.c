/*
** Which job each trace comes from: see ovl_job_partition in job.h.
**
** Ranks are merged into jobs in three passes, a merge taking place only when the merged job
** stays possible: no rank number held by two processes (a process driving several GPUs holds
** one number for each), and at most one known world size.
**   1. the ranks of one process (one ovl trace);
**   2. ranks sharing a communicator (its id is the same on every member);
**   3. what is left, in rank order: traces that share nothing are taken to be one job unless
**      they cannot be (nothing tells two jobs apart otherwise).
** A merge refused in pass 2 or 3 is the evidence that the traces are of different jobs, and
** why_parts names it. Memory: a sorted list of rank numbers per set; merging is linear in the
** sizes merged.
*/
#include "job.h"

#include "base/i64map.h"
#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One rank number and the process (ovl trace) that holds it. */
typedef struct held {
  int64_t rank;
  const char *process;
} held;

typedef struct set {
  size_t parent, size;
  int64_t world_size;
  held *ranks;             /* sorted by rank; ranks with an unknown number are not listed */
  size_t nranks;
} set;

typedef struct partition {
  set *sets;
  size_t n;
  int64_t clash_rank;      /* the first rank number found in two processes, or OVL_NONE */
  int64_t world_a, world_b;  /* the first two world sizes found to differ, or OVL_NONE */
} partition;

static const char *process_of(const ovl_rank_result *r);

static size_t root(partition *p, size_t x) {
  while (p->sets[x].parent != x) x = p->sets[x].parent = p->sets[p->sets[x].parent].parent;
  return x;
}

/* Merges the sorted rank lists of a and b into *out (caller frees); returns the rank number
** held by two processes, or OVL_NONE when the merge is possible. *out NULL on no memory. */
static int64_t merged_ranks(const set *a, const set *b, held **out, size_t *n) {
  held *m = malloc((a->nranks + b->nranks + 1) * sizeof *m);
  *out = m;
  *n = 0;
  if (!m) return OVL_NONE;
  size_t i = 0, j = 0;
  while (i < a->nranks || j < b->nranks) {
    const held *next = j >= b->nranks || (i < a->nranks && a->ranks[i].rank <= b->ranks[j].rank) ? &a->ranks[i++]
                                                                                                 : &b->ranks[j++];
    if (*n > 0 && m[*n - 1].rank == next->rank) {
      if (strcmp(m[*n - 1].process, next->process) != 0) {
        free(m);
        *out = NULL;
        return next->rank;
      }
      continue;  /* the same process: several devices of one rank */
    }
    m[(*n)++] = *next;
  }
  return OVL_NONE;
}

/* Merges the sets of x and y when one job can hold both: 1 merged (or already one), 0 refused
** (the evidence recorded), -1 no memory. */
static int join(partition *p, size_t x, size_t y) {
  size_t a = root(p, x), b = root(p, y);
  if (a == b) return 1;
  set *sa = &p->sets[a], *sb = &p->sets[b];
  if (sa->world_size != OVL_NONE && sb->world_size != OVL_NONE && sa->world_size != sb->world_size) {
    if (p->world_a == OVL_NONE) p->world_a = sa->world_size, p->world_b = sb->world_size;
    return 0;
  }
  held *m = NULL;
  size_t n = 0;
  int64_t clash = merged_ranks(sa, sb, &m, &n);
  if (clash != OVL_NONE) {
    if (p->clash_rank == OVL_NONE) p->clash_rank = clash;
    return 0;
  }
  if (!m) return -1;
  if (sa->size < sb->size) {  /* the larger set stays the root */
    set *t = sa;
    sa = sb;
    sb = t;
    size_t u = a;
    a = b;
    b = u;
  }
  free(sa->ranks);
  sa->ranks = m;
  sa->nranks = n;
  if (sa->world_size == OVL_NONE) sa->world_size = sb->world_size;
  sa->size += sb->size;
  free(sb->ranks);
  sb->ranks = NULL;
  sb->nranks = 0;
  sb->parent = a;
  return 1;
}

static int init_sets(partition *p, const ovl_job *job) {
  p->n = job->nranks;
  p->clash_rank = p->world_a = p->world_b = OVL_NONE;
  p->sets = calloc(p->n ? p->n : 1, sizeof *p->sets);
  if (!p->sets) return -1;
  for (size_t i = 0; i < p->n; i++) {
    const ovl_rank_result *r = &job->ranks[i];
    set *s = &p->sets[i];
    s->parent = i;
    s->size = 1;
    s->world_size = r->world_size;
    if (r->rank == OVL_NONE) continue;
    if (!(s->ranks = malloc(sizeof *s->ranks))) return -1;
    s->ranks[0] = (held){r->rank, process_of(r)};
    s->nranks = 1;
  }
  return 0;
}

static void free_sets(partition *p) {
  for (size_t i = 0; p->sets && i < p->n; i++) free(p->sets[i].ranks);
  free(p->sets);
}

static const ovl_job *sort_job;  /* for cmp_process: qsort has no context argument */

/* The process a rank's result comes from: the ovl trace it was read from. */
static const char *process_of(const ovl_rank_result *r) { return r->ovl_path ? r->ovl_path : r->trace_path; }

static int cmp_process(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  int c = strcmp(process_of(&sort_job->ranks[a]), process_of(&sort_job->ranks[b]));
  return c ? c : (a > b) - (a < b);
}

/* Pass 1: the ranks of one process (its devices). */
static int join_by_process(partition *p, const ovl_job *job) {
  size_t *order = malloc((job->nranks ? job->nranks : 1) * sizeof *order);
  if (!order) return -1;
  for (size_t i = 0; i < job->nranks; i++) order[i] = i;
  sort_job = job;
  qsort(order, job->nranks, sizeof *order, cmp_process);
  int rc = 0;
  for (size_t i = 1; !rc && i < job->nranks; i++)
    if (strcmp(process_of(&job->ranks[order[i]]), process_of(&job->ranks[order[i - 1]])) == 0)
      rc = join(p, order[i], order[i - 1]) < 0;
  free(order);
  return rc ? -1 : 0;
}

/* Pass 2: ranks sharing a communicator. */
static int join_by_communicator(partition *p, const ovl_job *job) {
  ovl_i64map first_user = {0};  /* comm -> first rank index using it */
  int rc = 0;
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    const ovl_rank_result *r = &job->ranks[i];
    for (size_t s = 0; !rc && s <= r->nsteps; s++) {
      const ovl_coll_result *c = s < r->nsteps ? r->steps[s].colls : r->unstepped;
      size_t n = s < r->nsteps ? r->steps[s].ncolls : r->nunstepped;
      for (size_t k = 0; !rc && k < n; k++) {
        int64_t other;
        if (c[k].comm == OVL_NONE) continue;
        if (ovl_i64map_get(&first_user, c[k].comm, &other)) rc = join(p, i, (size_t)other) < 0;
        else rc = ovl_i64map_put(&first_user, c[k].comm, (int64_t)i);
      }
    }
  }
  ovl_i64map_free(&first_user);
  return rc ? -1 : 0;
}

static int cmp_size_t(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  return (a > b) - (a < b);
}

/* The parts, numbered in the order of their first rank. */
static int build_parts(partition *p, ovl_job *job) {
  size_t *part_of_root = malloc((p->n ? p->n : 1) * sizeof *part_of_root);
  if (!part_of_root) return -1;
  for (size_t i = 0; i < p->n; i++) part_of_root[i] = SIZE_MAX;
  for (size_t i = 0; i < p->n; i++) {
    size_t r = root(p, i);
    if (part_of_root[r] == SIZE_MAX) part_of_root[r] = job->nparts++;
  }
  job->parts = calloc(job->nparts ? job->nparts : 1, sizeof *job->parts);
  int rc = job->parts ? 0 : -1;
  for (size_t i = 0; !rc && i < p->n; i++) {
    size_t r = root(p, i);
    ovl_job_part *part = &job->parts[part_of_root[r]];
    if (!part->ranks && !(part->ranks = malloc(p->sets[r].size * sizeof *part->ranks))) rc = -1;
    if (rc) break;
    part->ranks[part->nranks++] = i;
    part->world_size = p->sets[r].world_size;
    job->ranks[i].job = (int)part_of_root[r];
  }
  for (size_t k = 0; !rc && k < job->nparts; k++)
    ovl_qsort(job->parts[k].ranks, job->parts[k].nranks, sizeof *job->parts[k].ranks, cmp_size_t);
  free(part_of_root);
  return rc;
}

static void explain(const partition *p, ovl_job *job) {
  job->why_parts[0] = 0;
  if (job->nparts < 2) return;
  size_t used = 0;
  if (p->clash_rank != OVL_NONE)
    used += (size_t)snprintf(job->why_parts, sizeof job->why_parts, "rank %lld is held by more than one process",
                             (long long)p->clash_rank);
  if (p->world_a != OVL_NONE && used < sizeof job->why_parts)
    snprintf(job->why_parts + used, sizeof job->why_parts - used, "%sworld sizes %lld and %lld", used ? "; " : "",
             (long long)p->world_a, (long long)p->world_b);
}

int ovl_job_partition(ovl_job *job, ovl_err *err) {
  partition p;
  memset(&p, 0, sizeof p);
  int rc = init_sets(&p, job);
  if (!rc) rc = join_by_process(&p, job);
  if (!rc) rc = join_by_communicator(&p, job);
  /* pass 3: the rest, each into the first job that can hold it */
  for (size_t i = 0; !rc && i < job->nranks; i++) {
    if (root(&p, i) != i) continue;
    for (size_t k = 0; !rc && k < i; k++)
      if (root(&p, k) == k) {
        int j = join(&p, i, k);
        if (j < 0) rc = 1;
        if (j) break;
      }
  }
  if (!rc) rc = build_parts(&p, job);
  if (!rc) explain(&p, job);
  free_sets(&p);
  return rc ? ovl_oom(err, "job partition") : OVL_OK;
}

void ovl_job_parts_describe(const ovl_job *job, size_t k, char *buf, size_t len) {
  const ovl_job_part *part = &job->parts[k];
  const ovl_rank_result *first = &job->ranks[part->ranks[0]], *last = &job->ranks[part->ranks[part->nranks - 1]];
  size_t files = 0;
  for (size_t i = 0; i < part->nranks; i++)
    files += i == 0 || strcmp(job->ranks[part->ranks[i]].trace_path, job->ranks[part->ranks[i - 1]].trace_path) != 0;
  int n = snprintf(buf, len, "job %zu: ", k + 1);
  if (first->rank == OVL_NONE) n += snprintf(buf + n, len - (size_t)n, "rank ?");
  else if (first->rank == last->rank) n += snprintf(buf + n, len - (size_t)n, "rank %lld", (long long)first->rank);
  else n += snprintf(buf + n, len - (size_t)n, "ranks %lld-%lld", (long long)first->rank, (long long)last->rank);
  if (part->world_size != OVL_NONE && (size_t)n < len)
    n += snprintf(buf + n, len - (size_t)n, " of %lld", (long long)part->world_size);
  if ((size_t)n < len)
    snprintf(buf + n, len - (size_t)n, " (%s%s)", first->trace_path, files > 1 ? " and others" : "");
}
