/*
** Which files each process measures (mpi_job.h): TRACE arguments expanded once by the root and
** dealt out round-robin, or each node's --mpi-local folder dealt out among that node's
** processes. The job's file order is what one process would give the same files: the expanded
** list, or the nodes' lists one after another (in MPI rank order).
*/
#include "mpi_internal.h"

#include "base/vec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put_list(ovl_bytes *b, char *const *paths, size_t n) {
  ovl_put_u64(b, n);
  for (size_t i = 0; i < n; i++) ovl_put_str(b, paths[i]);
}

/* Reads a list written by put_list into *paths (caller frees each and the array). */
static int get_list(ovl_bytes_reader *in, char ***paths, size_t *n, ovl_err *err) {
  size_t count = ovl_get_count(in, 1);
  int oom = 0;
  *n = 0;
  *paths = calloc(count ? count : 1, sizeof **paths);
  if (!*paths) return ovl_oom(err, "file list");
  for (size_t i = 0; i < count && !in->bad && !oom; i++) {
    (*paths)[i] = ovl_get_str(in, &oom);
    if ((*paths)[i]) (*n)++;
    else in->bad = 1;
  }
  if (oom) return ovl_oom(err, "file list");
  if (in->bad) return ovl_fail(err, OVL_EINTERNAL, "file list received: malformed (a fault of ovl: please report it)");
  return OVL_OK;
}

/* This process's share: files first, first + every, ... of the list's first len. */
static int take_share(ovl_mpi_plan *plan, size_t offset, size_t len, size_t first, size_t every, ovl_err *err) {
  size_t n = first < len ? (len - first + every - 1) / every : 0;
  plan->paths = calloc(n ? n : 1, sizeof *plan->paths);
  plan->index = calloc(n ? n : 1, sizeof *plan->index);
  if (!plan->paths || !plan->index) return ovl_oom(err, "file list");
  for (size_t i = first; i < len; i += every) {
    plan->paths[plan->n] = plan->list.paths[i];
    plan->index[plan->n++] = offset + i;
  }
  return OVL_OK;
}

/* TRACE arguments: the root expands them and broadcasts the list and the skipped warning. */
static int plan_shared(char *const *args, size_t nargs, ovl_mpi_plan *plan, ovl_err *err) {
  int rc = OVL_OK;
  ovl_bytes b = {0};
  if (ovl_mpi_s.rank == 0) {
    rc = ovl_expand_trace_args(args, nargs, &plan->list, err);
    if (!rc) {
      ovl_file_list_skipped_text(&plan->list, plan->skipped, sizeof plan->skipped);
      put_list(&b, plan->list.paths, plan->list.len);
      if (b.oom) rc = ovl_oom(err, "file list");
    }
  }
  if ((rc = ovl_mpi_agree(rc, err)) != OVL_OK || (rc = ovl_mpi_bcast_bytes(&b, err)) != OVL_OK) {
    ovl_bytes_free(&b);
    return rc;
  }
  if (ovl_mpi_s.rank != 0) {
    ovl_bytes_reader in = {b.data, b.data + b.len, 0};
    rc = get_list(&in, &plan->list.paths, &plan->list.len, err);
  }
  ovl_bytes_free(&b);
  if ((rc = ovl_mpi_agree(rc, err)) != OVL_OK) return rc;
  plan->nfiles = plan->list.len;
  rc = take_share(plan, 0, plan->list.len, (size_t)ovl_mpi_s.rank, (size_t)ovl_mpi_s.size, err);
  return ovl_mpi_agree(rc, err);
}

/* ---------------------------------------------------------------------------------- */
/* --mpi-local                                                                         */
/* ---------------------------------------------------------------------------------- */

/* What one process found under its arguments, as the root receives it. */
typedef struct seen {
  int node;                /* the lowest MPI rank of its node */
  char *dir;               /* its arguments, as one text */
  int rc;
  char msg[1024];
  char **paths, **skipped, **not_traces;
  size_t npaths, nskipped, nnot_traces;
  int group;               /* processes of one node and folder form a group, in MPI rank order */
} seen;

static void seen_free(seen *s) {
  free(s->dir);
  for (size_t i = 0; i < s->npaths; i++) free(s->paths[i]);
  free(s->paths);
  for (size_t i = 0; i < s->nskipped; i++) free(s->skipped[i]);
  free(s->skipped);
  for (size_t i = 0; i < s->nnot_traces; i++) free(s->not_traces[i]);
  free(s->not_traces);
}

/* Appends a copy of text to (*list)[0..*n). */
static int add_copy(char ***list, size_t *n, const char *text, ovl_err *err) {
  char **grown = realloc(*list, (*n + 1) * sizeof *grown);
  if (grown) *list = grown;
  if (!grown || !(grown[*n] = strdup(text))) return ovl_oom(err, "file list");
  (*n)++;
  return OVL_OK;
}

static int node_of_this_process(void) {
  int node = ovl_mpi_s.rank;
  MPI_Comm comm;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ovl_mpi_s.rank, MPI_INFO_NULL, &comm) == MPI_SUCCESS) {
    MPI_Allreduce(&ovl_mpi_s.rank, &node, 1, MPI_INT, MPI_MIN, comm);
    MPI_Comm_free(&comm);
  }
  return node;
}

static int get_seen(ovl_bytes_reader *in, seen *s, ovl_err *err) {
  int oom = 0;
  s->node = (int)ovl_get_i64(in);
  s->dir = ovl_get_str(in, &oom);
  s->rc = (int)ovl_get_i64(in);
  ovl_get_str_into(in, s->msg, sizeof s->msg);
  if (oom) return ovl_oom(err, "file list");
  int rc = get_list(in, &s->paths, &s->npaths, err);
  if (!rc) rc = get_list(in, &s->skipped, &s->nskipped, err);
  if (!rc) rc = get_list(in, &s->not_traces, &s->nnot_traces, err);
  if (!rc && !s->dir) rc = ovl_fail(err, OVL_EINTERNAL, "file list received: malformed (a fault of ovl: please report it)");
  return rc;
}

typedef struct named {
  const char *path;
  int process;             /* the first process of the group that found it */
} named;

static int cmp_named(const void *pa, const void *pb) {
  const named *a = pa, *b = pb;
  int c = strcmp(a->path, b->path);
  return c ? c : (a->process > b->process) - (a->process < b->process);
}

/* A name on two nodes: a shared folder given as local, or names that do not tell ranks apart. */
static int check_names_apart(const seen *all, int size, ovl_err *err) {
  size_t n = 0, k = 0;
  for (int p = 0; p < size; p++) n += all[p].npaths;  /* at most: each group's first process counts */
  named *v = malloc((n ? n : 1) * sizeof *v);
  if (!v) return ovl_oom(err, "file list");
  for (int p = 0; p < size; p++) {
    int lead = 1;
    for (int q = 0; q < p && lead; q++) lead = all[q].group != all[p].group;
    for (size_t i = 0; lead && i < all[p].npaths; i++) v[k++] = (named){all[p].paths[i], p};
  }
  ovl_qsort(v, k, sizeof *v, cmp_named);
  int rc = OVL_OK;
  for (size_t i = 1; !rc && i < k; i++)
    if (strcmp(v[i].path, v[i - 1].path) == 0)
      rc = ovl_fail(err, OVL_EUSER, "--mpi-local: %s is found on the nodes of processes %d and %d: with a folder "
                                    "every node sees give TRACE arguments instead; else name each node's traces apart",
                    v[i].path, v[i - 1].process, v[i].process);
  free(v);
  return rc;
}

/* The root: groups, checks, and where each group's files start in the job's order. Fills
** assign[3 * p] = {offset of p's group, p's place in its group, its group's size}. */
static int plan_groups(seen *all, int size, long long *assign, ovl_mpi_plan *plan, ovl_err *err) {
  int ngroups = 0;
  for (int p = 0; p < size; p++) {
    if (all[p].rc) return ovl_fail(err, all[p].rc, "%s", all[p].msg);
    all[p].group = -1;
    for (int q = 0; q < p && all[p].group < 0; q++)
      if (all[q].node == all[p].node && strcmp(all[q].dir, all[p].dir) == 0) all[p].group = all[q].group;
    if (all[p].group < 0) all[p].group = ngroups++;
  }
  int rc = check_names_apart(all, size, err);
  /* the first process of each group stands for it; the others must see the same files */
  size_t offset = 0;
  ovl_file_list skipped = {0};
  for (int g = 0; !rc && g < ngroups; g++) {
    int lead = 0;
    while (all[lead].group != g) lead++;
    long long member = 0, gsize = 0;
    for (int p = lead; p < size; p++) gsize += all[p].group == g;
    for (int p = lead; !rc && p < size; p++) {
      if (all[p].group != g) continue;
      int same = all[p].npaths == all[lead].npaths;
      for (size_t i = 0; same && i < all[p].npaths; i++) same = strcmp(all[p].paths[i], all[lead].paths[i]) == 0;
      if (!same)
        rc = ovl_fail(err, OVL_EUSER, "--mpi-local %s: processes %d and %d of one node see different files",
                      all[lead].dir, lead, p);
      assign[3 * p] = (long long)offset;
      assign[3 * p + 1] = member++;
      assign[3 * p + 2] = gsize;
    }
    offset += all[lead].npaths;
    for (size_t i = 0; !rc && i < all[lead].nskipped; i++)
      rc = add_copy(&skipped.skipped, &skipped.nskipped, all[lead].skipped[i], err);
    for (size_t i = 0; !rc && i < all[lead].nnot_traces; i++)
      rc = add_copy(&skipped.not_traces, &skipped.nnot_traces, all[lead].not_traces[i], err);
  }
  if (!rc) ovl_file_list_skipped_text(&skipped, plan->skipped, sizeof plan->skipped);
  plan->nfiles = offset;
  ovl_file_list_free(&skipped);
  return rc;
}

/* The arguments as one text: "a b c" (processes given the same text share its files). */
static char *joined(char *const *args, size_t nargs) {
  size_t n = 1;
  for (size_t i = 0; i < nargs; i++) n += strlen(args[i]) + 1;
  char *s = malloc(n);
  if (!s) return NULL;
  s[0] = 0;
  for (size_t i = 0; i < nargs; i++) {
    if (i) strcat(s, " ");
    strcat(s, args[i]);
  }
  return s;
}

static int plan_local(char *const *args, size_t nargs, ovl_mpi_plan *plan, ovl_err *err) {
  ovl_err mine;
  ovl_err_clear(&mine);
  int found = ovl_expand_trace_args(args, nargs, &plan->list, &mine);
  char *dir = joined(args, nargs);
  ovl_bytes b = {0};
  if (!dir) b.oom = 1;
  ovl_put_i64(&b, node_of_this_process());
  ovl_put_str(&b, dir ? dir : "");
  free(dir);
  ovl_put_i64(&b, found);
  ovl_put_str(&b, mine.msg);
  put_list(&b, plan->list.paths, plan->list.len);
  put_list(&b, plan->list.skipped, plan->list.nskipped);
  put_list(&b, plan->list.not_traces, plan->list.nnot_traces);
  int rc = b.oom ? ovl_oom(err, "file list") : OVL_OK;
  if ((rc = ovl_mpi_agree(rc, err)) != OVL_OK) {
    ovl_bytes_free(&b);
    return rc;
  }
  ovl_bytes *all = NULL;
  rc = ovl_mpi_gather_bytes(&b, &all, err);
  ovl_bytes_free(&b);
  if (rc) return rc;
  int size = ovl_mpi_s.size;
  long long *assign = NULL, mine3[3] = {0, 0, 1};
  unsigned long long nfiles = 0;
  if (ovl_mpi_s.rank == 0) {
    seen *s = calloc((size_t)size, sizeof *s);
    assign = calloc(3 * (size_t)size, sizeof *assign);
    if (!s || !assign) rc = ovl_oom(err, "file list");
    for (int p = 0; !rc && p < size; p++) {
      ovl_bytes_reader in = {all[p].data, all[p].data + all[p].len, 0};
      rc = get_seen(&in, &s[p], err);
    }
    if (!rc) rc = plan_groups(s, size, assign, plan, err);
    nfiles = plan->nfiles;
    for (int p = 0; s && p < size; p++) seen_free(&s[p]);
    free(s);
    for (int p = 0; p < size; p++) ovl_bytes_free(&all[p]);
    free(all);
  }
  if ((rc = ovl_mpi_agree(rc, err)) != OVL_OK) {
    free(assign);
    return rc;
  }
  MPI_Scatter(assign, 3, MPI_LONG_LONG, mine3, 3, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  MPI_Bcast(&nfiles, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  free(assign);
  plan->nfiles = (size_t)nfiles;
  rc = take_share(plan, (size_t)mine3[0], plan->list.len, (size_t)mine3[1], (size_t)mine3[2], err);
  return ovl_mpi_agree(rc, err);
}

int ovl_mpi_plan_files(char *const *args, size_t nargs, int local, ovl_mpi_plan *plan, ovl_err *err) {
  memset(plan, 0, sizeof *plan);
  int rc = local ? plan_local(args, nargs, plan, err) : plan_shared(args, nargs, plan, err);
  if (rc) ovl_mpi_plan_free(plan);
  return rc;
}

void ovl_mpi_plan_free(ovl_mpi_plan *plan) {
  free(plan->paths);
  free(plan->index);
  ovl_file_list_free(&plan->list);
  memset(plan, 0, sizeof *plan);
}
