/* Reading one Kineto event: see kineto_event.h. */
#include "kineto_event.h"

#include "store/trace_rows.h"
#include "comm_names.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ovl_kineto_us_to_ns; *exact = 1 when the text had at most 3 decimals and no exponent, so that
** the value is exactly *ns / 1000. */
static int us_to_ns(const char *s, int64_t *ns, int *exact) {
  const char *p = s;
  *exact = 0;
  int neg = *p == '-';
  if (neg) p++;
  if (!(*p >= '0' && *p <= '9')) return -1;
  int64_t us = 0;
  while (*p >= '0' && *p <= '9') {
    if (us > (INT64_MAX / 1000 - 9) / 10) return -1;  /* the result would not fit in ns */
    us = us * 10 + (*p++ - '0');
  }
  int64_t frac = 0;
  int digits = 0, round_up = 0;
  if (*p == '.') {
    p++;
    while (*p >= '0' && *p <= '9') {
      if (digits < 3) frac = frac * 10 + (*p - '0');
      else if (digits == 3) round_up = *p >= '5';
      digits++;
      p++;
    }
    for (int d = digits; d < 3; d++) frac *= 10;
  }
  if (*p == 'e' || *p == 'E') {  /* rare: exponent notation goes through a double */
    errno = 0;
    double v = strtod(s, NULL) * 1000.0;
    if (errno || !isfinite(v) || fabs(v) > 9.0e18) return -1;
    *ns = (int64_t)llround(v);
    return 0;
  }
  if (*p) return -1;
  int64_t v = us * 1000 + frac + round_up;
  *ns = neg ? -v : v;
  *exact = digits <= 3;
  return 0;
}

/* The largest whole number of µs us_to_ns accepts: its digit loop stops before a digit that
** follows a value above (INT64_MAX / 1000 - 9) / 10. */
#define US_WHOLE_MAX ((uint64_t)((INT64_MAX / 1000 - 9) / 10) * 10 + 9)

int ovl_kineto_us_to_ns(const char *s, int64_t *ns) {
  int exact;
  return us_to_ns(s, ns, &exact);
}

int ovl_kineto_int(const char *s, int64_t *v) {
  /* Plain integers (nearly all of them) without strtoll's locale machinery. */
  const char *p = s + (*s == '-');
  uint64_t x = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9' && digits < 18) {
    x = x * 10 + (uint64_t)(*p++ - '0');
    digits++;
  }
  if (!*p && digits) {
    *v = *s == '-' ? -(int64_t)x : (int64_t)x;
    return 0;
  }
  char *end = NULL;
  errno = 0;
  long long ll = strtoll(s, &end, 10);
  if (end != s && *end == 0 && !errno) {
    *v = (int64_t)ll;
    return 0;
  }
  double d = strtod(s, &end);
  if (end == s || *end || !isfinite(d) || fabs(d) >= 9.2e18) return -1;
  *v = (int64_t)d;
  return 0;
}

const char *ovl_kineto_accelerator(const char *cat) {
  static const struct { const char *prefix, *name; } kinds[] = {
    {"mtia_", "MTIA (Meta Training and Inference Accelerator)"}, {"hpu_", "Intel Gaudi (HPU)"},
    {"xpu_", "Intel XPU"}, {"mlu_", "Cambricon MLU"}, {"gcu_", "Enflame GCU"},
    {"privateuse1_", "a PrivateUse1 accelerator backend"},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (strncmp(cat, kinds[i].prefix, strlen(kinds[i].prefix)) == 0) return kinds[i].name;
  return NULL;
}

/* cat: NUL-terminated in a buffer of at least 32 bytes, all of them initialised (the
** comparisons read sizeof(literal) bytes, terminator included, without a call). */
#define CAT_IS(cat, literal) (memcmp((cat), (literal), sizeof(literal)) == 0)

static ovl_kineto_cat category(const char *cat) {
  switch (cat[0]) {
    case 'k': return CAT_IS(cat, "kernel") ? OVL_KCAT_KERNEL : OVL_KCAT_OTHER;
    case 'K': return CAT_IS(cat, "Kernel") ? OVL_KCAT_KERNEL : OVL_KCAT_OTHER;
    case 'g':
      if (CAT_IS(cat, "gpu_memcpy")) return OVL_KCAT_MEMCPY;
      if (CAT_IS(cat, "gpu_memset")) return OVL_KCAT_MEMSET;
      if (CAT_IS(cat, "gpu_user_annotation")) return OVL_KCAT_GPU_USER_ANNOTATION;
      return OVL_KCAT_OTHER;
    case 'M':
      if (CAT_IS(cat, "Memcpy")) return OVL_KCAT_MEMCPY;
      if (CAT_IS(cat, "Memset")) return OVL_KCAT_MEMSET;
      return OVL_KCAT_OTHER;
    case 'c':
      if (CAT_IS(cat, "cpu_op")) return OVL_KCAT_CPU_OP;
      if (CAT_IS(cat, "cuda_runtime") || CAT_IS(cat, "cuda_driver")) return OVL_KCAT_RUNTIME;
      return OVL_KCAT_OTHER;
    case 'R': return CAT_IS(cat, "Runtime") ? OVL_KCAT_RUNTIME : OVL_KCAT_OTHER;
    case 'O': return CAT_IS(cat, "Operator") ? OVL_KCAT_CPU_OP : OVL_KCAT_OTHER;
    case 'u': return CAT_IS(cat, "user_annotation") ? OVL_KCAT_USER_ANNOTATION : OVL_KCAT_OTHER;
    default: return OVL_KCAT_OTHER;
  }
}

/* A key whose length was checked to be the literal's: compared without a call. */
#define KEY_IS(k, literal) (memcmp((k), (literal), sizeof(literal) - 1) == 0)

/* Reads a value expected to be a scalar; containers are skipped (and *tok says so). */
static int next_scalar(ovl_json *j, ovl_json_token *tok, ovl_err *err) {
  int rc = ovl_json_next(j, tok, err);
  if (!rc && (*tok == OVL_JSON_OBJECT_BEGIN || *tok == OVL_JSON_ARRAY_BEGIN)) rc = ovl_json_skip_container(j, err);
  return rc;
}

/* An integer value (a number, or digits inside a string such as "stream 7"); OVL_NONE otherwise. */
static int read_int(ovl_json *j, int64_t *v, ovl_err *err) {
  ovl_json_token tok;
  int rc = next_scalar(j, &tok, err);
  *v = OVL_NONE;
  if (rc) return rc;
  const char *text = ovl_json_text(j, NULL);
  if (tok == OVL_JSON_NUMBER) {
    if (!ovl_json_integer(j, v) && ovl_kineto_int(text, v)) *v = OVL_NONE;
  } else if (tok == OVL_JSON_STRING) {
    const char *d = text + strcspn(text, "0123456789");
    if (*d && ovl_kineto_int(d, v)) *v = OVL_NONE;
  }
  return OVL_OK;
}

/* A time in µs: exactly, in ns, from its decimal text; and as a float64 reads it (what
** HTA's parser computes with, for --hta-compat). */
static int read_time(ovl_json *j, int64_t *ns, double *us, ovl_err *err) {
  ovl_json_token tok;
  int rc = next_scalar(j, &tok, err);
  *ns = OVL_NONE;
  *us = NAN;
  if (rc || tok != OVL_JSON_NUMBER) return rc;
  const char *text = ovl_json_text(j, NULL);
  int exact, unreadable;
  ovl_json_decimal d;
  if (ovl_json_number_parts(j, &d) && d.whole_digits <= 19 && d.whole <= US_WHOLE_MAX && d.fraction_digits <= 3) {
    /* us_to_ns's reading from the parts the tokenizer read as it scanned: exact, in range
    ** (absolute µs since 1970 have 16 digits: most traces' timestamps). */
    int64_t frac = d.fraction;
    for (int k = d.fraction_digits; k < 3; k++) frac *= 10;
    int64_t v = (int64_t)d.whole * 1000 + frac;
    *ns = d.negative ? -v : v;
    exact = 1;
    unreadable = 0;
  } else {
    unreadable = us_to_ns(text, ns, &exact);
  }
  if (unreadable) {
    *ns = OVL_NONE;
  } else if (exact && (*ns % 1000 == 0 || (*ns > -(INT64_C(1) << 53) && *ns < (INT64_C(1) << 53)))) {
    /* The text's value is exactly ns / 1000: a whole number of µs converts with one correct
    ** rounding, as does the division when ns is exact as a double; either is the correctly
    ** rounded reading strtod makes, without its cost. */
    int64_t a = *ns < 0 ? -*ns : *ns;
    *us = a % 1000 == 0 ? (double)(a / 1000) : (double)a / 1000.0;
    if (text[0] == '-') *us = -*us;  /* "-0.0" reads as -0.0 */
  } else {
    *us = strtod(text, NULL);
  }
  return rc;
}

/* Copies a string value into buf (cut to cap - 1); "" when the value is not a string. */
static int read_short_string(ovl_json *j, char *buf, size_t cap, ovl_err *err) {
  ovl_json_token tok;
  int rc = next_scalar(j, &tok, err);
  buf[0] = 0;
  if (rc) return rc;
  if (tok == OVL_JSON_STRING || tok == OVL_JSON_NUMBER) {
    size_t n = 0;
    const char *text = ovl_json_text(j, &n);
    if (n >= cap) n = cap - 1;
    memcpy(buf, text, n);
    buf[n] = 0;
  }
  return OVL_OK;
}

static int ensure_cap(char **buf, size_t *cap, size_t need, ovl_err *err) {
  if (need <= *cap) return OVL_OK;
  size_t ncap = *cap ? *cap : 256;
  while (ncap < need) ncap *= 2;
  char *grown = realloc(*buf, ncap);
  if (!grown) return ovl_oom(err, "event text");
  *buf = grown;
  *cap = ncap;
  return OVL_OK;
}

static int read_name(ovl_json *j, ovl_kineto_event *ev, ovl_err *err) {
  ovl_json_token tok;
  int rc = next_scalar(j, &tok, err);
  if (rc) return rc;
  size_t n = 0;
  const char *text = tok == OVL_JSON_STRING ? ovl_json_text(j, &n) : "";
  if ((rc = ensure_cap(&ev->name, &ev->name_cap, n + 1, err))) return rc;
  memcpy(ev->name, text, n);
  ev->name[n] = 0;
  return OVL_OK;
}

/* Appends the integers of a rank list to the comm args as "0,1,2". */
static int append_ranks(ovl_kineto_comm_args *c, const char *text, ovl_err *err) {
  size_t len = c->group_ranks ? strlen(c->group_ranks) : 0;
  for (const char *p = text; *p;) {
    if (!(*p >= '0' && *p <= '9')) {
      p++;
      continue;
    }
    size_t n = strspn(p, "0123456789");
    int rc = ensure_cap(&c->group_ranks, &c->group_ranks_cap, len + n + 2, err);
    if (rc) return rc;
    if (len) c->group_ranks[len++] = ',';
    memcpy(c->group_ranks + len, p, n);
    len += n;
    c->group_ranks[len] = 0;
    p += n;
  }
  return OVL_OK;
}

/* `Process Group Ranks`: a string "[0, 1]" (PyTorch) or an array of numbers. */
static int read_group_ranks(ovl_json *j, ovl_kineto_comm_args *c, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(j, &tok, err);
  if (!rc) rc = ensure_cap(&c->group_ranks, &c->group_ranks_cap, 1, err);
  if (rc) return rc;
  c->group_ranks[0] = 0;
  if (tok == OVL_JSON_STRING || tok == OVL_JSON_NUMBER) return append_ranks(c, ovl_json_text(j, NULL), err);
  if (tok == OVL_JSON_OBJECT_BEGIN) return ovl_json_skip_container(j, err);
  if (tok != OVL_JSON_ARRAY_BEGIN) return OVL_OK;
  size_t depth = ovl_json_depth(j);
  while (!rc && ovl_json_depth(j) >= depth) {
    if ((rc = ovl_json_next(j, &tok, err))) break;
    if (tok == OVL_JSON_NUMBER && ovl_json_depth(j) == depth) rc = append_ranks(c, ovl_json_text(j, NULL), err);
  }
  return rc;
}

/* `grid` / `block`: [x, y, z]. */
static int read_dims(ovl_json *j, int64_t dims[3], ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(j, &tok, err);
  if (rc || tok == OVL_JSON_OBJECT_BEGIN) return rc ? rc : ovl_json_skip_container(j, err);
  if (tok != OVL_JSON_ARRAY_BEGIN) return OVL_OK;
  for (int i = 0; !(rc = ovl_json_next(j, &tok, err)) && tok != OVL_JSON_ARRAY_END; i++) {
    int64_t v;
    if (tok == OVL_JSON_OBJECT_BEGIN || tok == OVL_JSON_ARRAY_BEGIN) rc = ovl_json_skip_container(j, err);
    else if (i < 3 && tok == OVL_JSON_NUMBER)
      dims[i] = ovl_json_integer(j, &v) || !ovl_kineto_int(ovl_json_text(j, NULL), &v) ? v : OVL_NONE;
    if (rc) break;
  }
  return rc;
}

/* Closes every container opened since depth `outer` - 1 (an array whose first element was read). */
static int close_to(ovl_json *j, size_t outer, ovl_err *err) {
  int rc = OVL_OK;
  while (!rc && ovl_json_depth(j) >= outer) rc = ovl_json_skip_container(j, err);
  return rc;
}

/* `Input Dims` [[a, b], [c], ...]: a * b, the element count of the first input. */
static int read_first_numel(ovl_json *j, int64_t *numel, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(j, &tok, err);
  if (rc || (tok != OVL_JSON_ARRAY_BEGIN && tok != OVL_JSON_OBJECT_BEGIN)) return rc;
  size_t outer = ovl_json_depth(j);
  if (tok == OVL_JSON_ARRAY_BEGIN && !(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_ARRAY_BEGIN) {
    int64_t product = 1, v;
    int dims = 0;
    while (!(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_NUMBER) {
      if ((!ovl_json_integer(j, &v) && ovl_kineto_int(ovl_json_text(j, NULL), &v)) || v < 0 ||
          (v && product > INT64_MAX / v))
        product = -1;
      else if (product >= 0) product *= v;
      dims++;
    }
    if (!rc && tok == OVL_JSON_ARRAY_END && dims > 0 && product >= 0) *numel = product;
  }
  return rc ? rc : close_to(j, outer, err);
}

/* `Input type` ["float", ...]: the first one. */
static int read_first_string(ovl_json *j, char *buf, size_t cap, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(j, &tok, err);
  if (rc || (tok != OVL_JSON_ARRAY_BEGIN && tok != OVL_JSON_OBJECT_BEGIN)) return rc;
  size_t outer = ovl_json_depth(j);
  if (tok == OVL_JSON_ARRAY_BEGIN && !(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_STRING)
    snprintf(buf, cap, "%s", ovl_json_text(j, NULL));
  return rc ? rc : close_to(j, outer, err);
}

static int read_comm_string(ovl_json *j, ovl_kineto_event *ev, int is_dtype, ovl_err *err) {
  char text[64];
  int rc = read_short_string(j, text, sizeof text, err);
  if (rc) return rc;
  ovl_kineto_comm_args *c = &ev->comm;
  c->present = 1;
  if (is_dtype) ovl_comm_dtype(text, &c->dtype, &c->dtype_size);
  else c->op = ovl_comm_op_from_call(text);
  return OVL_OK;
}

static int read_comm_int(ovl_json *j, ovl_kineto_event *ev, int64_t *field, ovl_err *err) {
  ev->comm.present = 1;
  return read_int(j, field, err);
}

/* One member of "args"; the key is the current token text. */
static int read_arg(ovl_json *j, ovl_kineto_event *ev, ovl_err *err) {
  size_t n = 0;
  const char *k = ovl_json_text(j, &n);
  ovl_kineto_comm_args *c = &ev->comm;
  ovl_json_token tok;
  /* Dispatch on the length first: most keys are compared once at most. */
  switch (n) {
    case 3:
      if (KEY_IS(k, "Seq")) return read_comm_int(j, ev, &c->seq, err);
      break;
    case 4:
      if (KEY_IS(k, "grid")) return read_dims(j, ev->grid, err);
      break;
    case 5:
      if (KEY_IS(k, "bytes")) return read_int(j, &ev->bytes, err);
      if (KEY_IS(k, "block")) return read_dims(j, ev->block, err);
      if (KEY_IS(k, "dtype")) return read_comm_string(j, ev, 1, err);
      break;
    case 6:
      if (KEY_IS(k, "device")) return read_int(j, &ev->device, err);
      if (KEY_IS(k, "stream")) return read_int(j, &ev->stream, err);
      break;
    case 10:
      if (KEY_IS(k, "Group size")) return read_comm_int(j, ev, &c->group_size, err);
      if (KEY_IS(k, "Input Dims")) return read_first_numel(j, &ev->input_numel, err);
      if (KEY_IS(k, "Input type")) return read_first_string(j, ev->input_type, sizeof ev->input_type, err);
      break;
    case 11:
      if (KEY_IS(k, "External id")) return read_int(j, &ev->external_id, err);
      if (KEY_IS(k, "correlation")) return read_int(j, &ev->correlation, err);
      break;
    case 13:
      if (KEY_IS(k, "In msg nelems")) return read_comm_int(j, ev, &c->in_nelems, err);
      break;
    case 14:
      if (KEY_IS(k, "Out msg nelems")) return read_comm_int(j, ev, &c->out_nelems, err);
      break;
    case 15:
      if (KEY_IS(k, "Collective name")) return read_comm_string(j, ev, 0, err);
      break;
    case 16:
      if (KEY_IS(k, "Process Group ID") && !c->group_name[0]) {
        c->present = 1;
        return read_short_string(j, c->group_name, sizeof c->group_name, err);
      }
      break;
    case 18:
      if (KEY_IS(k, "Process Group Name")) {
        c->present = 1;
        return read_short_string(j, c->group_name, sizeof c->group_name, err);
      }
      break;
    case 25:
      if (KEY_IS(k, "Process Group Description")) {
        c->present = 1;
        return read_short_string(j, c->group_desc, sizeof c->group_desc, err);
      }
      break;
    case 19:
      if (KEY_IS(k, "Process Group Ranks")) {
        c->present = 1;
        return read_group_ranks(j, c, err);
      }
      break;
    default:
      break;
  }
  return ovl_json_skip_value(j, &tok, err);
}

static int read_args(ovl_json *j, ovl_kineto_event *ev, ovl_err *err) {
  ovl_json_token tok;
  int rc = ovl_json_next(j, &tok, err);
  if (rc) return rc;
  if (tok == OVL_JSON_ARRAY_BEGIN) return ovl_json_skip_container(j, err);
  if (tok != OVL_JSON_OBJECT_BEGIN) return OVL_OK;
  while (!(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_KEY)
    if ((rc = read_arg(j, ev, err))) return rc;
  return rc;
}

static int reset_event(ovl_kineto_event *ev, ovl_err *err) {
  int rc = ensure_cap(&ev->name, &ev->name_cap, 1, err);
  if (rc) return rc;
  ev->name[0] = 0;
  ev->ph = 0;
  ev->cat = OVL_KCAT_OTHER;
  ev->accelerator = NULL;
  ev->pid = ev->tid = ev->ts_ns = ev->dur_ns = OVL_NONE;
  ev->ts_us = ev->dur_us = NAN;
  ev->external_id = ev->correlation = ev->device = ev->stream = ev->bytes = OVL_NONE;
  for (int i = 0; i < 3; i++) ev->grid[i] = ev->block[i] = OVL_NONE;
  ev->input_numel = OVL_NONE;
  ev->input_type[0] = 0;
  ovl_kineto_comm_args *c = &ev->comm;
  c->present = 0;
  c->op = c->dtype = NULL;
  c->dtype_size = 0;
  c->in_nelems = c->out_nelems = c->group_size = c->seq = OVL_NONE;
  c->group_name[0] = c->group_desc[0] = 0;
  if (c->group_ranks) {
    free(c->group_ranks);  /* rank lists can be long: do not keep the largest one forever */
    c->group_ranks = NULL;
    c->group_ranks_cap = 0;
  }
  return OVL_OK;
}

/* 1 once the fields read so far show that ovl has no use for the event: the rest of it is
** then skipped without being decoded (most events of a trace are CPU ops and flows). */
static int useless(const ovl_kineto_event *ev, int have_cat, int have_name) {
  if (ev->ph && ev->ph != 'X') return 1;
  if (!have_cat) return 0;
  if (ev->cat == OVL_KCAT_OTHER) return 1;
  return ev->cat == OVL_KCAT_CPU_OP && have_name && strncmp(ev->name, "ProfilerStep#", 13) != 0 &&
         strcmp(ev->name, "record_param_comms") != 0;
}

int ovl_kineto_read_event(ovl_json *j, ovl_kineto_event *ev, ovl_err *err) {
  int rc = reset_event(ev, err);
  int have_cat = 0, have_name = 0;
  ovl_json_token tok;
  while (!rc && !(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_KEY) {
    size_t n = 0;
    const char *k = ovl_json_text(j, &n);
    if (n == 2 && k[0] == 'p' && k[1] == 'h') {
      char ph[4];
      rc = read_short_string(j, ph, sizeof ph, err);
      ev->ph = ph[0];
    } else if (n == 3 && KEY_IS(k, "cat")) {
      char cat[32] = {0};
      rc = read_short_string(j, cat, sizeof cat, err);
      ev->cat = category(cat);
      ev->accelerator = ev->cat == OVL_KCAT_OTHER ? ovl_kineto_accelerator(cat) : NULL;
      have_cat = 1;
    } else if (n == 4 && KEY_IS(k, "name")) {
      rc = read_name(j, ev, err);
      have_name = 1;
    } else if (n == 3 && KEY_IS(k, "pid")) {
      rc = read_int(j, &ev->pid, err);
    } else if (n == 3 && KEY_IS(k, "tid")) {
      rc = read_int(j, &ev->tid, err);
    } else if (n == 2 && k[0] == 't' && k[1] == 's') {
      rc = read_time(j, &ev->ts_ns, &ev->ts_us, err);
    } else if (n == 3 && KEY_IS(k, "dur")) {
      rc = read_time(j, &ev->dur_ns, &ev->dur_us, err);
    } else if (n == 4 && KEY_IS(k, "args")) {
      rc = read_args(j, ev, err);
    } else {
      rc = ovl_json_skip_value(j, &tok, err);
    }
    if (!rc && useless(ev, have_cat, have_name)) return ovl_json_skip_container(j, err);
  }
  return rc;
}

void ovl_kineto_event_free(ovl_kineto_event *ev) {
  free(ev->name);
  free(ev->comm.group_ranks);
  ev->name = NULL;
  ev->comm.group_ranks = NULL;
  ev->name_cap = ev->comm.group_ranks_cap = 0;
}
