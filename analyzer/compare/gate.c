/* The CI gate's conditions: parsing and judging (gate.h). */
#include "gate.h"

#include "base/units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
  const char *name;
  int metric;
} metric_names[] = {
  {"step_time", OVL_M_STEP_TIME}, {"step", OVL_M_STEP_TIME},   {"compute", OVL_M_COMPUTE},
  {"comm", OVL_M_COMM},           {"communication", OVL_M_COMM}, {"exposed", OVL_M_EXPOSED},
  {"efficiency", OVL_M_EFFICIENCY}, {"overlap_efficiency", OVL_M_EFFICIENCY},
  {"findings", OVL_GATE_FINDINGS}, {"recoverable", OVL_GATE_RECOVERABLE},
};

const char *ovl_gate_metric_name(int metric) {
  if (metric < OVL_M_COUNT) return ovl_metric_name((ovl_metric)metric);
  return metric == OVL_GATE_FINDINGS ? "findings" : "recoverable";
}

static int is_time(int metric) { return metric != OVL_M_EFFICIENCY && metric != OVL_GATE_FINDINGS; }

static const char *const op_text[] = {"<", "<=", ">", ">=", "==", "!="};

static int bad(ovl_err *err, const char *text, const char *what) {
  return ovl_fail(err, OVL_EUSER, "--fail-if '%s': %s", text, what);
}

/* The operator at *p; advances past it. -1 when there is none. */
static int parse_op(const char **p) {
  static const struct {
    const char *s;
    ovl_gate_op op;
  } ops[] = {{"<=", OVL_GATE_LE}, {">=", OVL_GATE_GE}, {"==", OVL_GATE_EQ}, {"!=", OVL_GATE_NE},
             {"<", OVL_GATE_LT},  {">", OVL_GATE_GT},  {"=", OVL_GATE_EQ}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strncmp(*p, ops[i].s, strlen(ops[i].s)) == 0) {
      *p += strlen(ops[i].s);
      return (int)ops[i].op;
    }
  return -1;
}

/* The value after the operator: a signed or unsigned number with a unit or %. */
static int parse_value(const char *text, const char *p, int allow_change, ovl_gate_cond *c, ovl_err *err) {
  while (isspace((unsigned char)*p)) p++;
  int sign = 0;
  if (*p == '+' || *p == '-') sign = *p++ == '+' ? 1 : -1;
  char value[64];
  size_t n = strlen(p);
  while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
  if (n == 0 || n >= sizeof value) return bad(err, text, "expected a value after the operator");
  memcpy(value, p, n);
  value[n] = 0;
  int percent = value[n - 1] == '%';
  if (percent) value[n - 1] = 0;
  char *end;
  double v = strtod(value, &end);
  if (end == value || !isfinite(v) || v < 0) return bad(err, text, "expected a number such as 0.8, 5ms or +5%");
  while (isspace((unsigned char)*end)) end++;
  if (sign && !allow_change)
    return bad(err, text, "a signed value is a change between two runs: use it with 'ovl diff'");
  if (percent && *end) return bad(err, text, "a percentage takes no unit");
  if (percent && is_time(c->metric) && !allow_change)
    return bad(err, text, "a percentage of a time is a change between two runs: use it with 'ovl diff'");
  if (percent && (sign || is_time(c->metric) || c->metric == OVL_GATE_FINDINGS)) {
    if (c->metric == OVL_GATE_FINDINGS && !sign) return bad(err, text, "findings are counted: no percentage");
    c->kind = OVL_GATE_RELATIVE;  /* +5%, or 5% of a time */
    c->threshold = (sign < 0 ? -v : v) / 100.0;
    return OVL_OK;
  }
  c->kind = sign ? OVL_GATE_CHANGE : OVL_GATE_VALUE;
  if (is_time(c->metric)) {
    double ns = v;
    if (*end && ovl_parse_time_ns(value, &ns)) return bad(err, text, "expected a time such as 5ms, 200us or 1000 (ns)");
    v = ns;
  } else if (*end) {
    return bad(err, text, c->metric == OVL_M_EFFICIENCY ? "expected a ratio such as 0.8 or 80%" : "expected a count");
  } else if (percent) {
    v /= 100.0;  /* efficiency<80% */
  }
  if (c->metric == OVL_M_EFFICIENCY && !sign && v > 1.0)
    return bad(err, text, "an overlap efficiency is at most 1 (100%)");
  c->threshold = sign < 0 ? -v : v;
  return OVL_OK;
}

int ovl_gate_parse(const char *text, int allow_change, ovl_gate_cond *out, ovl_err *err) {
  memset(out, 0, sizeof *out);
  snprintf(out->text, sizeof out->text, "%s", text);
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  const char *name = p;
  while (isalpha((unsigned char)*p) || *p == '_') p++;
  size_t len = (size_t)(p - name);
  out->metric = -1;
  for (size_t i = 0; i < sizeof metric_names / sizeof metric_names[0]; i++)
    if (strlen(metric_names[i].name) == len && strncmp(name, metric_names[i].name, len) == 0)
      out->metric = metric_names[i].metric;
  if (out->metric < 0)
    return bad(err, text,
               "expected a metric first: step_time, compute, comm, exposed, efficiency, findings or recoverable");
  while (isspace((unsigned char)*p)) p++;
  int op = parse_op(&p);
  if (op < 0) return bad(err, text, "expected an operator after the metric: <, <=, >, >=, == or !=");
  out->op = (ovl_gate_op)op;
  return parse_value(text, p, allow_change, out, err);
}

int ovl_gate_values_of(const ovl_profile *p, ovl_gate_values *out) {
  memset(out, 0, sizeof *out);
  ovl_side_metrics m;
  if (ovl_side_metrics_of(p, NULL, 0, &m)) return -1;
  for (int k = 0; k < OVL_M_EFFICIENCY; k++) out->v[k] = m.d[k].n ? m.d[k].median : 0.0;
  out->v[OVL_M_EFFICIENCY] = m.efficiency;
  /* the findings, summed as the diff sums them: a diff of the run with itself */
  ovl_diff self;
  memset(&self, 0, sizeof self);
  self.before = self.after = p;
  if (ovl_diff_findings(&self)) return -1;
  out->v[OVL_GATE_FINDINGS] = (double)self.nfindings;
  for (size_t i = 0; i < self.nfindings; i++) out->v[OVL_GATE_RECOVERABLE] += (double)self.findings[i].before.recoverable;
  free(self.findings);
  return 0;
}

static int compare(double a, ovl_gate_op op, double b) {
  if (isnan(a)) return 0;  /* no value (no communication): nothing to fail on */
  switch (op) {
    case OVL_GATE_LT: return a < b;
    case OVL_GATE_LE: return a <= b;
    case OVL_GATE_GT: return a > b;
    case OVL_GATE_GE: return a >= b;
    case OVL_GATE_EQ: return a == b;
    case OVL_GATE_NE: return a != b;
  }
  return 0;
}

/* A value in the metric's unit, into buf. */
static const char *value_text(int metric, double v, int change, char *buf, size_t len) {
  if (isnan(v)) snprintf(buf, len, "n/a");
  else if (metric == OVL_M_EFFICIENCY) snprintf(buf, len, change ? "%+.1f points" : "%.1f%%", 100.0 * v);
  else if (metric == OVL_GATE_FINDINGS) snprintf(buf, len, change ? "%+.0f" : "%.0f", v);
  else {
    char t[32];
    ovl_format_ns(v, t, sizeof t);
    snprintf(buf, len, "%s%s", change && v >= 0 ? "+" : "", t);
  }
  return buf;
}

static const char *what_of(int metric) {
  if (metric < OVL_M_EFFICIENCY) return metric == OVL_M_STEP_TIME ? "step time (median)" : NULL;
  return metric == OVL_M_EFFICIENCY ? "overlap efficiency" : metric == OVL_GATE_FINDINGS ? "findings" : "recoverable time";
}

static void describe(int metric, char *buf, size_t len) {
  const char *w = what_of(metric);
  if (w) snprintf(buf, len, "%s", w);
  else snprintf(buf, len, "%s per step (median)", ovl_metric_title((ovl_metric)metric));
}

void ovl_gate_check_run(const ovl_gate_cond *c, const ovl_gate_values *run, ovl_gate_result *out) {
  memset(out, 0, sizeof *out);
  out->observed = run->v[c->metric];
  out->holds = out->failed = compare(out->observed, c->op, c->threshold);
  char what[96], a[48], b[48];
  describe(c->metric, what, sizeof what);
  snprintf(out->why, sizeof out->why, "%s is %s (%s %s)", what, value_text(c->metric, out->observed, 0, a, sizeof a),
           op_text[c->op], value_text(c->metric, c->threshold, 0, b, sizeof b));
}

void ovl_gate_check_diff(const ovl_gate_cond *c, const ovl_diff *d, const ovl_gate_values *before,
                         const ovl_gate_values *after, ovl_gate_result *out) {
  if (c->kind == OVL_GATE_VALUE) {
    ovl_gate_check_run(c, after, out);
    return;
  }
  memset(out, 0, sizeof *out);
  double from = before->v[c->metric], to = after->v[c->metric];
  double delta = to - from;
  out->observed = c->kind == OVL_GATE_CHANGE ? delta : from != 0 ? delta / fabs(from) : (delta == 0 ? 0 : INFINITY * delta);
  out->holds = compare(out->observed, c->op, c->threshold);
  /* beyond the noise: the job's metric change (findings and recoverable: no noise) */
  int significant = 1;
  double noise = 0;
  if (c->metric < OVL_M_COUNT) {
    significant = d->job.c[c->metric].significant;
    noise = d->job.c[c->metric].noise;
  }
  out->failed = out->holds && significant;
  char what[96], a[48], b[48], t[48];
  describe(c->metric, what, sizeof what);
  int n = snprintf(out->why, sizeof out->why, "%s went from %s to %s", what, value_text(c->metric, from, 0, a, sizeof a),
                   value_text(c->metric, to, 0, b, sizeof b));
  if (c->kind == OVL_GATE_RELATIVE)
    n += snprintf(out->why + n, sizeof out->why - (size_t)n, " (%+.1f%%, %s %+g%%)", 100.0 * out->observed,
                  op_text[c->op], 100.0 * c->threshold);
  else
    n += snprintf(out->why + n, sizeof out->why - (size_t)n, " (%s, %s %s)",
                  value_text(c->metric, out->observed, 1, t, sizeof t), op_text[c->op],
                  value_text(c->metric, c->threshold, 1, a, sizeof a));
  if (c->metric < OVL_M_COUNT && n > 0 && (size_t)n < sizeof out->why)
    snprintf(out->why + n, sizeof out->why - (size_t)n, "; step-to-step noise %s: %s",
             value_text(c->metric, noise, 0, b, sizeof b), significant ? "beyond it" : "within it, not failed");
}
