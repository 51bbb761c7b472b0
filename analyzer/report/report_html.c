/* The HTML report page: see report_html.h. */
#include "report_html.h"

#include "base/none.h"
#include "base/vec.h"
#include "html_charts.h"
#include "html_out.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SUMMARY_RANKS 16
#define TOP_FINDINGS 8
/* The timeline section holds the most exposed steps of the most exposed ranks, one picture
** each, the reader picking rank and step (the page stays one offline file of bounded size). */
#define TIMELINE_RANKS 8
#define TIMELINE_STEPS 8

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
    "i.lk{height:0;width:18px;border-top:2px dashed #888;vertical-align:middle}i.lk.cur{border-color:#e15759}"
    "i.lk.capl{border-color:#f28e2b}.pick select{font:inherit;margin:0 8px 0 4px}"
    /* a narrow window scrolls a picture sideways rather than shrinking its text to nothing */
    "@media (max-width:1100px){svg.chart{max-width:none}section{overflow-x:auto}}"
    /* page.html#job shows that section alone (a link to one picture; the screenshot tests) */
    "main:has(section:target) section:not(:target){display:none}";

/* Script errors, if any, the time the page took to load and how far its pictures were scaled
** down land in the DOM, where a headless browser's --dump-dom shows them. */
static const char js[] =
    "window.onerror=function(m){var d=document.documentElement;"
    "d.setAttribute('data-errors',(d.getAttribute('data-errors')||'')+m+';');};"
    "addEventListener('load',function(){var d=document.documentElement,m=1;"
    "d.setAttribute('data-load-ms',Math.round(performance.now()));"
    /* how much the pictures shown are scaled down (text with them): for the narrow-window test */
    "document.querySelectorAll('svg.chart').forEach(function(s){var w=s.getBoundingClientRect().width,"
    "v=s.viewBox.baseVal.width;if(w>0&&v>0&&w/v<m)m=w/v;});d.setAttribute('data-chart-scale',m.toFixed(3));});";

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
    assert(!x->f->text);  /* a rank's or the job's findings keep their message */
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

/* ------------------------------------------------------------------------------------ */
/* Section 2: timelines of the most exposed steps of the most exposed ranks                */
/* ------------------------------------------------------------------------------------ */

typedef struct picked {
  size_t ri;                       /* index into job->ranks */
  size_t si[TIMELINE_STEPS];       /* its steps shown, in step order */
  size_t nsteps;
  ovl_step_work work[TIMELINE_STEPS];
} picked;

typedef struct timelines {
  picked *ranks;                   /* the worst rank first */
  size_t n;
} timelines;

typedef struct exposed_key {
  int64_t exposed;
  size_t index;
} exposed_key;

static int cmp_exposed_key(const void *pa, const void *pb) {
  const exposed_key *a = pa, *b = pb;
  if (a->exposed != b->exposed) return a->exposed > b->exposed ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

static int cmp_size(const void *pa, const void *pb) {
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  return (a > b) - (a < b);
}

/* The ranks to show, most exposed (by their worst step) first, worst_ri among them first. */
static size_t pick_ranks(const ovl_job *job, size_t worst_ri, exposed_key *keys) {
  size_t n = 0;
  for (size_t r = 0; r < job->nranks; r++) {
    size_t s = 0;
    const ovl_step_result *st = worst_step_of(&job->ranks[r], &s);
    if (st) keys[n++] = (exposed_key){r == worst_ri ? INT64_MAX : st->totals.exposed, r};
  }
  ovl_qsort(keys, n, sizeof *keys, cmp_exposed_key);
  return n < TIMELINE_RANKS ? n : TIMELINE_RANKS;
}

/* The picked steps of one rank (most exposed first, then shown in step order), read in one pass. */
static int read_rank(const ovl_analysis_ctx *ctx, ovl_step_work_reader read_step, const ovl_rank_result *r, picked *p,
                     ovl_err *err) {
  exposed_key *keys = malloc((r->nsteps ? r->nsteps : 1) * sizeof *keys);
  if (!keys) return ovl_oom(err, "timeline");
  for (size_t s = 0; s < r->nsteps; s++) keys[s] = (exposed_key){r->steps[s].totals.exposed, s};
  ovl_qsort(keys, r->nsteps, sizeof *keys, cmp_exposed_key);
  p->nsteps = r->nsteps < TIMELINE_STEPS ? r->nsteps : TIMELINE_STEPS;
  for (size_t k = 0; k < p->nsteps; k++) p->si[k] = keys[k].index;
  free(keys);
  qsort(p->si, p->nsteps, sizeof *p->si, cmp_size);
  const ovl_step_result *steps[TIMELINE_STEPS];
  int64_t merge[TIMELINE_STEPS];
  for (size_t k = 0; k < p->nsteps; k++) {
    steps[k] = &r->steps[p->si[k]];
    merge[k] = (steps[k]->end - steps[k]->start) / (3 * OVL_HTML_WIDTH);  /* a third of a pixel */
  }
  return read_step(ctx, r, steps, merge, p->nsteps, p->work, err);
}

static void timelines_free(timelines *tl) {
  for (size_t i = 0; i < tl->n; i++)
    for (size_t k = 0; k < tl->ranks[i].nsteps; k++) ovl_step_work_free(&tl->ranks[i].work[k]);
  free(tl->ranks);
  memset(tl, 0, sizeof *tl);
}

static int timelines_read(const ovl_analysis_ctx *ctx, ovl_step_work_reader read_step, const ovl_job *job,
                          size_t worst_ri, timelines *tl, ovl_err *err) {
  memset(tl, 0, sizeof *tl);
  exposed_key *keys = malloc((job->nranks ? job->nranks : 1) * sizeof *keys);
  tl->ranks = calloc(TIMELINE_RANKS, sizeof *tl->ranks);
  if (!keys || !tl->ranks) {
    free(keys);
    free(tl->ranks);
    tl->ranks = NULL;
    return ovl_oom(err, "timeline");
  }
  size_t n = pick_ranks(job, worst_ri, keys);
  int rc = OVL_OK;
  for (size_t i = 0; !rc && i < n; i++) {
    tl->ranks[i].ri = keys[i].index;
    rc = read_rank(ctx, read_step, &job->ranks[keys[i].index], &tl->ranks[i], err);
    tl->n = i + 1;
  }
  free(keys);
  if (rc) timelines_free(tl);
  return rc;
}

/* Shows the picture of the rank and step picked; the step list follows the rank. Pictures other
** than the first wait in <template>s (parsed, never laid out: the page loads as fast as with
** one) and are made on their first pick. */
static const char picker_js[] =
    "(function(){var r=document.getElementById('tl-rank'),s=document.getElementById('tl-step');"
    "function all(){return [].slice.call(document.querySelectorAll('#timeline .tl,#timeline template'));}"
    "function steps(){s.innerHTML='';all().forEach(function(d){if(d.getAttribute('data-pick')==r.value){"
    "var o=document.createElement('option');o.value=d.getAttribute('data-id');o.textContent=d.getAttribute('data-step');"
    "if(d.getAttribute('data-worst'))o.selected=true;s.appendChild(o);}});}"
    "function show(){var id=s.value;if(!document.getElementById(id)){var t=document.getElementById('t-'+id),"
    "d=document.createElement('div');d.className='tl';d.id=id;d.appendChild(t.content.cloneNode(true));"
    "t.parentNode.insertBefore(d,t);}"
    "[].slice.call(document.querySelectorAll('#timeline div.tl')).forEach(function(d){d.hidden=d.id!=id;});}"
    "r.addEventListener('change',function(){steps();show();});s.addEventListener('change',show);"
    "steps();show();})();";

static void timelines_write(FILE *out, const ovl_job *job, const timelines *tl) {
  size_t total = 0;
  for (size_t i = 0; i < tl->n; i++) total += tl->ranks[i].nsteps;
  fputs("<p class=\"pick\">Rank<select id=\"tl-rank\">", out);
  for (size_t i = 0; i < tl->n; i++)
    fprintf(out, "<option value=\"%zu\"%s>%lld</option>", i, i == 0 ? " selected" : "",
            (long long)job->ranks[tl->ranks[i].ri].rank);
  fputs("</select>step<select id=\"tl-step\"></select>", out);
  fprintf(out, "<span class=\"lbl\">%zu picture%s in this page: the most exposed steps (up to %d) of the most exposed "
               "ranks (up to %d)</span></p>\n", total, total == 1 ? "" : "s", TIMELINE_STEPS, TIMELINE_RANKS);
  for (size_t i = 0; i < tl->n; i++) {
    const picked *p = &tl->ranks[i];
    const ovl_rank_result *r = &job->ranks[p->ri];
    size_t worst = 0;
    for (size_t k = 0; k < p->nsteps; k++)
      if (r->steps[p->si[k]].totals.exposed > r->steps[p->si[worst]].totals.exposed) worst = k;
    for (size_t k = 0; k < p->nsteps; k++) {
      /* the job's most exposed step is drawn; the others wait in templates (also without a script) */
      int shown = i == 0 && k == worst;
      fprintf(out, "<%s %s=\"%stl-%zu-%zu\" data-id=\"tl-%zu-%zu\" data-pick=\"%zu\" data-step=\"%ld\"%s>\n",
              shown ? "div class=\"tl\"" : "template", "id", shown ? "" : "t-", i, k, i, k, i, r->steps[p->si[k]].index,
              k == worst ? " data-worst=\"1\"" : "");
      ovl_html_timeline(out, r, p->ri, p->si[k], &p->work[k]);
      fprintf(out, "</%s>\n", shown ? "div" : "template");
    }
  }
  fprintf(out, "<script>%s</script>\n", picker_js);
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
  timelines tl;
  memset(&tl, 0, sizeof tl);
  if (job) {
    int rc = timelines_read(in->ctx, in->read_step ? in->read_step : ovl_step_work_read_many, job, ri, &tl, err);
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
    fputs("<a href=\"#summary\">1 summary</a><a href=\"#timeline\">2 timeline</a>"
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

  section(out, "timeline", "2. Timeline of a step (the most exposed first)");
  if (worst) timelines_write(out, job, &tl);
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
  timelines_free(&tl);
  return OVL_OK;
}
