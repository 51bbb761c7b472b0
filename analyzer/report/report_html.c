/* The HTML report page: see report_html.h. */
#include "report_html.h"

#include "base/none.h"
#include "base/vec.h"
#include "html_charts.h"
#include "html_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_RANKS 16
#define TOP_FINDINGS 8

static const char css[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#222}"
    "header{background:#1f2d3d;color:#fff;padding:10px 20px}header h1{margin:0;font-size:20px}"
    "nav a{color:#cfe3ff;margin-right:14px;font-size:13px}"
    "main{max-width:1240px;margin:0 auto;padding:8px 16px}"
    "section{background:#fff;border:1px solid #dde;border-radius:6px;margin:12px 0;padding:8px 16px;min-height:0}"
    "h2{font-size:17px;margin:6px 0}table{border-collapse:collapse;font-size:13px}"
    "td,th{padding:2px 10px;border-bottom:1px solid #eee;text-align:right}th{background:#f0f2f5}"
    "td.l,th.l{text-align:left}.bad{color:#c0392b}.code{font-family:monospace;font-weight:bold}"
    "svg.chart{display:block;max-width:100%;height:auto;font-size:11px}"
    ".tick{fill:#666}.lbl{fill:#333}.hd{fill:#222;font-weight:bold}.val{fill:#333}"
    ".grid{stroke:#e4e4e4}.lane{fill:#f6f6f6}.shade{fill:#e74c3c;opacity:.22}.exposed{fill:#e74c3c}"
    ".coll{fill:#f28e2b}.collx{fill:#e15759}.ready{fill:#2e9d4f}.launch{fill:#1f5fbf}"
    ".stall{stroke:#888;stroke-dasharray:2 2}.queue{stroke:#1f5fbf}.bwd{stroke:#000;stroke-dasharray:5 3}"
    ".bwdl{fill:#000;font-weight:bold}.ordok{stroke:#59a14f;stroke-width:1.5}.ordbad{stroke:#e15759;stroke-width:2}"
    ".stallbar{fill:#e15759}.valley{fill:none;stroke:#4e79a7;stroke-width:2}.pt{fill:#4e79a7}.best{fill:#59a14f}"
    ".cur{stroke:#e15759;stroke-dasharray:6 3}.def{stroke:#888;stroke-dasharray:3 3}.capl{stroke:#f28e2b;"
    "stroke-dasharray:3 3}.bar{fill:#4e79a7}.barbad{fill:#e15759}.trend{fill:none;stroke-width:1.5}"
    ".legend{font-size:12px;color:#444}.sw{display:inline-block;width:12px;height:10px;margin:0 4px 0 10px}"
    ".shadei{background:#e74c3c;opacity:.5}.readyc{color:#2e9d4f}.launchc{color:#1f5fbf}"
    ".finding{margin:4px 0}.msg{color:#333}"
    /* page.html#job shows that section alone (a link to one picture; the screenshot tests) */
    "main:has(section:target) section:not(:target){display:none}";

/* Script errors, if any, and the time the page took to load land in the DOM, where a headless
** browser's --dump-dom shows them. */
static const char js[] =
    "window.onerror=function(m){var d=document.documentElement;"
    "d.setAttribute('data-errors',(d.getAttribute('data-errors')||'')+m+';');};"
    "addEventListener('load',function(){document.documentElement.setAttribute('data-load-ms',"
    "Math.round(performance.now()));});";

typedef struct found {
  const ovl_finding *f;
  long ri;   /* rank index, -1 for the job */
  size_t fi;
} found;

static int cmp_found(const void *pa, const void *pb) {
  const found *a = pa, *b = pb;
  if (a->f->recoverable_ns != b->f->recoverable_ns) return a->f->recoverable_ns > b->f->recoverable_ns ? -1 : 1;
  if (a->ri != b->ri) return a->ri < b->ri ? -1 : 1;
  return (a->fi > b->fi) - (a->fi < b->fi);
}

static void findings(FILE *out, const ovl_job *job) {
  size_t n = job->nfindings;
  for (size_t i = 0; i < job->nranks; i++) n += job->ranks[i].nfindings;
  if (n == 0) {
    fputs("<p>No findings.</p>\n", out);
    return;
  }
  found *all = malloc(n * sizeof *all);
  if (!all) return;
  size_t k = 0;
  for (size_t i = 0; i < job->nfindings; i++) all[k++] = (found){&job->findings[i], -1, i};
  for (size_t r = 0; r < job->nranks; r++)
    for (size_t i = 0; i < job->ranks[r].nfindings; i++) all[k++] = (found){&job->ranks[r].findings[i], (long)r, i};
  ovl_qsort(all, n, sizeof *all, cmp_found);
  /* One finding per code, the largest; a job's ranks often share one problem. */
  fprintf(out, "<h3>Top findings</h3>\n");
  size_t shown = 0;
  for (size_t i = 0; i < n && shown < TOP_FINDINGS; i++) {
    const found *x = &all[i];
    size_t same = 0;
    int first = 1;
    for (size_t k = 0; k < n; k++)
      if (strcmp(all[k].f->code, x->f->code) == 0) {
        if (k < i) first = 0;
        same++;
      }
    if (!first) continue;
    shown++;
    fputs("<div class=\"finding\"><span class=\"code\">[", out);
    ovl_html_text(out, x->f->code);
    fputs("]</span> ", out);
    if (x->ri < 0) fputs("job", out);
    else {
      fputs("rank ", out);
      ovl_html_inum(out, OVL_HN_COUNT, job->ranks[x->ri].rank, "ranks.%ld.rank", x->ri);
    }
    if (x->f->recoverable_ns > 0) {
      fputs(", recoverable ", out);
      if (x->ri < 0) ovl_html_inum(out, OVL_HN_NS, x->f->recoverable_ns, "findings.%zu.recoverable_ns", x->fi);
      else ovl_html_inum(out, OVL_HN_NS, x->f->recoverable_ns, "ranks.%ld.findings.%zu.recoverable_ns", x->ri, x->fi);
    }
    /* the message as the JSON (and the text report) word it */
    if (x->ri < 0) fprintf(out, ": <span class=\"msg\" data-j=\"findings.%zu.message\" data-k=\"text\">", x->fi);
    else fprintf(out, ": <span class=\"msg\" data-j=\"ranks.%ld.findings.%zu.message\" data-k=\"text\">", x->ri, x->fi);
    ovl_html_text(out, x->f->message);
    fputs("</span>", out);
    if (same > 1) fprintf(out, " <i>(the largest of %zu %s findings)</i>", same, x->f->code);
    fputs("</div>\n", out);
  }
  fputs("<p>Every finding, with its evidence: <code>ovl report</code> (text) or <code>--json</code>.</p>\n", out);
  free(all);
}

/* The most exposed step of a rank; NULL when it has none. */
static const ovl_step_result *worst_step_of(const ovl_rank_result *r, size_t *si) {
  const ovl_step_result *w = NULL;
  for (size_t s = 0; s < r->nsteps; s++)
    if (!w || r->steps[s].totals.exposed > w->totals.exposed) {
      w = &r->steps[s];
      *si = s;
    }
  return w;
}

/* A rank's place in the summary: stragglers, then the least efficient (no communication last). */
typedef struct rank_key {
  int straggler;
  double efficiency;
  size_t index;
} rank_key;

static int cmp_rank_key(const void *pa, const void *pb) {
  const rank_key *a = pa, *b = pb;
  if (a->straggler != b->straggler) return b->straggler - a->straggler;
  if (a->efficiency != b->efficiency) return a->efficiency < b->efficiency ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static void summary(FILE *out, const ovl_job *job) {
  size_t n = job->nranks, shown = n < SUMMARY_RANKS ? n : SUMMARY_RANKS;
  rank_key *order = malloc((n ? n : 1) * sizeof *order);
  if (!order) return;
  for (size_t i = 0; i < n; i++) {
    double e = ovl_overlap_efficiency(&job->ranks[i].totals);
    order[i] = (rank_key){job->ranks[i].cross.straggler, isnan(e) ? 2.0 : e, i};
  }
  if (n > SUMMARY_RANKS) ovl_qsort(order, n, sizeof *order, cmp_rank_key);
  fputs("<table><tr><th class=\"l\">rank</th><th>overlap efficiency</th><th>exposed</th><th>communication</th>"
        "<th>compute</th><th>steps</th><th>most exposed step</th><th>its duration</th><th>its exposed</th></tr>\n",
        out);
  for (size_t k = 0; k < shown; k++) {
    size_t i = order[k].index;
    const ovl_rank_result *r = &job->ranks[i];
    fputs("<tr><td class=\"l\">", out);
    ovl_html_inum(out, OVL_HN_COUNT, r->rank, "ranks.%zu.rank", i);
    if (r->cross.straggler) fputs(" <b class=\"bad\">straggler</b>", out);
    fputs("</td><td>", out);
    ovl_html_dnum(out, OVL_HN_PCT, ovl_overlap_efficiency(&r->totals), "ranks.%zu.overlap_efficiency", i);
    fputs("</td><td>", out);
    ovl_html_inum(out, OVL_HN_NS, r->totals.exposed, "ranks.%zu.t_exposed_ns", i);
    fputs("</td><td>", out);
    ovl_html_inum(out, OVL_HN_NS, r->totals.comm, "ranks.%zu.t_comm_ns", i);
    fputs("</td><td>", out);
    ovl_html_inum(out, OVL_HN_NS, r->totals.compute, "ranks.%zu.t_compute_ns", i);
    fputs("</td><td>", out);
    ovl_html_inum(out, OVL_HN_COUNT, (int64_t)r->nsteps, "ranks.%zu.steps.length", i);
    fputs("</td><td>", out);
    size_t si = 0;
    const ovl_step_result *st = worst_step_of(r, &si);
    if (st) {
      ovl_html_inum(out, OVL_HN_COUNT, st->index, "ranks.%zu.steps.%zu.index", i, si);
      fputs("</td><td>", out);
      ovl_html_inum(out, OVL_HN_NS, st->end - st->start, "ranks.%zu.steps.%zu.end_ns-ranks.%zu.steps.%zu.start_ns", i,
                    si, i, si);
      fputs("</td><td>", out);
      ovl_html_inum(out, OVL_HN_NS, st->totals.exposed, "ranks.%zu.steps.%zu.t_exposed_ns", i, si);
    } else {
      fputs("-</td><td>-</td><td>-", out);
    }
    fputs("</td></tr>\n", out);
  }
  fputs("</table>\n", out);
  if (shown < n) fprintf(out, "<p>%zu of %zu ranks shown: stragglers, then the least efficient.</p>\n", shown, n);
  free(order);
  findings(out, job);
}

/* The most exposed step of the job, over every rank. */
static const ovl_step_result *worst_step(const ovl_job *job, size_t *ri, size_t *si) {
  const ovl_step_result *w = NULL;
  for (size_t r = 0; r < job->nranks; r++) {
    size_t s = 0;
    const ovl_step_result *st = worst_step_of(&job->ranks[r], &s);
    if (st && (!w || st->totals.exposed > w->totals.exposed)) {
      w = st;
      *ri = r;
      *si = s;
    }
  }
  return w;
}

/* The largest gradient bucket of the worst step (the cap in use is at least that). */
static int64_t largest_bucket(const ovl_step_result *st, size_t *ci) {
  int64_t best = 0;
  for (size_t i = 0; st && i < st->ncolls; i++)
    if (st->colls[i].diag.role == OVL_ROLE_GRADIENT && st->colls[i].bytes != OVL_NONE && st->colls[i].bytes > best) {
      best = st->colls[i].bytes;
      *ci = i;
    }
  return best;
}

static void section(FILE *out, const char *id, const char *title) {
  fprintf(out, "<section id=\"%s\"><h2>", id);
  ovl_html_text(out, title);
  fputs("</h2>\n", out);
}

int ovl_report_html(FILE *out, const ovl_html_inputs *in, ovl_err *err) {
  const ovl_job *job = in->job;
  size_t ri = 0, si = 0;
  const ovl_step_result *worst = job ? worst_step(job, &ri, &si) : NULL;
  ovl_step_work work;
  memset(&work, 0, sizeof work);
  if (worst) {
    /* Boxes closer than a third of a pixel apart are drawn as one. */
    int64_t merge = (worst->end - worst->start) / (3 * OVL_HTML_WIDTH);
    int rc = ovl_step_work_read(in->ctx, &job->ranks[ri], worst, merge, &work, err);
    if (rc) return rc;
  }
  const char *heading = in->heading ? in->heading : "ovl report";
  fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
        out);
  ovl_html_text(out, heading);
  fputs(": ", out);
  ovl_html_text(out, in->title);
  fprintf(out, "</title>\n<style>%s</style>\n<script>%s</script>\n</head><body>\n<header><h1>", css, js);
  ovl_html_text(out, heading);
  fputs(": <span class=\"path\">", out);
  ovl_html_text(out, in->title);  /* a file name: its digits are no quantity (class path) */
  fputs("</span></h1>\n<nav>", out);
  if (in->extra) {
    fprintf(out, "<a href=\"#%s\">", in->extra->id);
    ovl_html_text(out, in->extra->nav);
    fputs("</a>", out);
  }
  if (job)
    fputs("<a href=\"#summary\">1 summary</a><a href=\"#timeline\">2 worst step</a>"
          "<a href=\"#order\">3 bucket order</a><a href=\"#valley\">4 bucket size</a><a href=\"#job\">5 ranks</a>"
          "<a href=\"#trend\">6 steps</a>",
          out);
  fputs("</nav></header>\n<main>\n", out);
  if (in->extra) {
    section(out, in->extra->id, in->extra->title);
    in->extra->write(out, in->extra->ctx);
    fputs("</section>\n", out);
  }
  if (!job) {
    fputs("</main>\n</body></html>\n", out);
    return OVL_OK;
  }

  section(out, "summary", "1. Summary: overlap efficiency = 1 - exposed / communication");
  summary(out, job);
  fputs("</section>\n", out);

  section(out, "timeline", "2. The most exposed step");
  if (worst) ovl_html_timeline(out, &job->ranks[ri], ri, si, &work);
  else fputs("<p>No step.</p>\n", out);
  fputs("</section>\n", out);

  section(out, "order", "3. Bucket firing order");
  if (worst) ovl_html_order(out, &job->ranks[ri], ri, si);
  else fputs("<p>No step.</p>\n", out);
  fputs("</section>\n", out);

  section(out, "valley", "4. Bucket size: predicted step time");
  if (in->whatif && in->whatif->ncands) {
    size_t ci = 0;
    int64_t cap = largest_bucket(worst, &ci);
    char cap_path[128];
    snprintf(cap_path, sizeof cap_path, "ranks.%zu.steps.%zu.collectives.%zu.bytes", ri, si, ci);
    /* what `ovl whatif --json` needs to give the same predictions (the tests run it) */
    fprintf(out, "<div data-caps=\"%s\"", OVL_HTML_VALLEY_CAPS);
    if (in->whatif->alpha_given) fprintf(out, " data-alpha=\"%.17gns\"", in->whatif->alpha_ns);
    if (in->whatif->beta_given) fprintf(out, " data-beta=\"%.17gB/s\"", in->whatif->beta);
    fputs(">\n", out);
    ovl_html_valley(out, in->whatif, (double)cap, cap_path);
    fputs("</div>\n", out);
  } else {
    fputs("<p>No replay: <span class=\"why\">", out);  /* whatif's own words, as `ovl whatif` prints them */
    ovl_html_text(out, in->whatif_error ? in->whatif_error : "not computed");
    fputs("</span></p>\n", out);
  }
  fputs("</section>\n", out);

  section(out, "job", "5. Ranks of the job");
  if (job->cross.present) ovl_html_job(out, job);
  else fputs("<p>One rank, or ranks that share no communicator: nothing to compare across ranks.</p>\n", out);
  fputs("</section>\n", out);

  section(out, "trend", "6. Overlap efficiency per step");
  ovl_html_trend(out, job);
  fputs("</section>\n</main>\n</body></html>\n", out);
  ovl_step_work_free(&work);
  return OVL_OK;
}
