/*
** The CI gate: `--fail-if CONDITION` of `ovl report` and `ovl diff` (docs/diff.md, "CI gate").
**
**   CONDITION = METRIC OP VALUE
**   METRIC    step_time | compute | comm | exposed   per step: the median over steps of the
**                                                    job's mean over ranks (as `ovl diff`)
**             efficiency                             the whole run's 1 - exposed/comm (as the report)
**             findings                               distinct finding codes
**             recoverable                            recoverable time of all findings (ns)
**   OP        <  <=  >  >=  ==  !=
**   VALUE     a value of the run (report; diff: of AFTER): times with a unit (ns, us, ms, s;
**             bare: ns), efficiency as a ratio (0.8) or a percentage (80%), counts plain;
**             diff only, with a sign: the change from BEFORE to AFTER, absolute (+2ms, -0.05)
**             or relative to BEFORE with % (+5%).
** A condition that holds fails the gate. A change condition of `ovl diff` fails only when the
** change is beyond the step-to-step noise (spread.h): noise never breaks a build.
*/
#ifndef OVL_GATE_H
#define OVL_GATE_H

#include "base/status.h"
#include "diff.h"

#include <stddef.h>

/* The exit status of a command whose gate failed (its output is complete). */
#define OVL_GATE_FAILED_STATUS 3

/* Metrics beyond ovl_metric's. */
enum { OVL_GATE_FINDINGS = OVL_M_COUNT, OVL_GATE_RECOVERABLE, OVL_GATE_METRICS };

typedef enum ovl_gate_op { OVL_GATE_LT, OVL_GATE_LE, OVL_GATE_GT, OVL_GATE_GE, OVL_GATE_EQ, OVL_GATE_NE } ovl_gate_op;

typedef enum ovl_gate_kind {
  OVL_GATE_VALUE,          /* the run's value (diff: AFTER's) */
  OVL_GATE_CHANGE,         /* AFTER - BEFORE */
  OVL_GATE_RELATIVE        /* (AFTER - BEFORE) / |BEFORE| */
} ovl_gate_kind;

typedef struct ovl_gate_cond {
  char text[128];          /* as given */
  int metric;              /* ovl_metric, OVL_GATE_FINDINGS or OVL_GATE_RECOVERABLE */
  ovl_gate_op op;
  ovl_gate_kind kind;
  double threshold;        /* ns, a ratio, a count; a fraction for OVL_GATE_RELATIVE */
} ovl_gate_cond;

/* Parses a condition; allow_change: signed values (diff). Fails with
** "--fail-if '<text>': <what is wrong>". */
int ovl_gate_parse(const char *text, int allow_change, ovl_gate_cond *out, ovl_err *err);

/* The values a condition reads of one run. */
typedef struct ovl_gate_values {
  double v[OVL_GATE_METRICS];
} ovl_gate_values;

/* A run's values: the metrics of its profile and its findings. Returns 0, or -1 when memory
** runs out. */
int ovl_gate_values_of(const ovl_profile *p, ovl_gate_values *out);

typedef struct ovl_gate_result {
  int holds;               /* the comparison is true */
  int failed;              /* it fails the gate (holds, and a change is beyond the noise) */
  double observed;         /* the value or change compared */
  char why[320];           /* "<metric> is <value> (<op> <threshold>)" and the noise, for messages */
} ovl_gate_result;

/* A value condition on one run. */
void ovl_gate_check_run(const ovl_gate_cond *c, const ovl_gate_values *run, ovl_gate_result *out);
/* Any condition on a diff: values are AFTER's; changes are judged against the diff's noise
** (the job's metric changes; findings and recoverable have none). */
void ovl_gate_check_diff(const ovl_gate_cond *c, const ovl_diff *d, const ovl_gate_values *before,
                         const ovl_gate_values *after, ovl_gate_result *out);

/* "efficiency", "findings", ...: the name conditions use. */
const char *ovl_gate_metric_name(int metric);

#endif
