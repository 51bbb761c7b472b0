/*
** NVTX injection: NVTX (header-only, one copy per library that uses it) loads the library
** named by NVTX_INJECTION64_PATH at its first call and calls InitializeInjectionNvtx2, which
** fills NVTX's function tables with the handlers below. Each NVTX copy in the process calls
** it once; all share these handlers. (Routing NVTX into CUPTI instead is avoided: CUPTI 13.0
** can crash on NVTX.)
**
** Ranges become one nvtx row when they end: push/pop on a per-thread stack (each domain has
** its own nesting, as NVTX specifies), start/end in a process-wide table because a range
** may end on another thread. Marks become rows with end NULL. Messages may be ASCII, wide
** (converted to UTF-8) or registered strings; domains and registered strings are libovl
** objects that live as long as the process.
*/
#define NVTX_NO_IMPL
#include "capture.h"
#include "clock.h"
#include "host_buffer.h"
#include "store/trace_rows.h"

#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define EXPORT __attribute__((visibility("default")))

struct nvtxDomainRegistration_st {
  struct nvtxDomainRegistration_st *next;
  char name[];
};

struct nvtxStringRegistration_st {
  struct nvtxStringRegistration_st *next;  /* all of them, kept for the life of the process */
  char text[1];                            /* NUL-terminated, allocated to size */
};

/* A message as handed to NVTX, decoded into UTF-8 (or pointing at the caller's ASCII). */
typedef struct message {
  const char *text;
  size_t len;
  char buf[OVL_NVTX_NAME_MAX + 1];
} message;

/* Length of s cut to at most max bytes without splitting a UTF-8 character. */
static size_t cut_utf8(const char *s, size_t len, size_t max) {
  if (len <= max) return len;
  while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80) max--;
  return max;
}

/* UTF-32 (wchar_t on Linux) to UTF-8, cut to what fits. */
static size_t wide_to_utf8(const wchar_t *w, char *out, size_t cap) {
  size_t n = 0;
  for (; w && *w; w++) {
    uint32_t c = (uint32_t)*w;
    char tmp[4];
    size_t k;
    if (c < 0x80) tmp[0] = (char)c, k = 1;
    else if (c < 0x800) tmp[0] = (char)(0xC0 | c >> 6), tmp[1] = (char)(0x80 | (c & 0x3F)), k = 2;
    else if (c < 0x10000)
      tmp[0] = (char)(0xE0 | c >> 12), tmp[1] = (char)(0x80 | (c >> 6 & 0x3F)), tmp[2] = (char)(0x80 | (c & 0x3F)), k = 3;
    else if (c < 0x110000)
      tmp[0] = (char)(0xF0 | c >> 18), tmp[1] = (char)(0x80 | (c >> 12 & 0x3F)), tmp[2] = (char)(0x80 | (c >> 6 & 0x3F)),
      tmp[3] = (char)(0x80 | (c & 0x3F)), k = 4;
    else continue;
    if (n + k > cap) break;
    memcpy(out + n, tmp, k);
    n += k;
  }
  return n;
}

static void from_ascii(message *m, const char *s) {
  m->text = s ? s : "";
  m->len = cut_utf8(m->text, strlen(m->text), OVL_NVTX_NAME_MAX);
}

static void from_wide(message *m, const wchar_t *w) {
  m->len = wide_to_utf8(w, m->buf, OVL_NVTX_NAME_MAX);
  m->text = m->buf;
}

static void from_attributes(message *m, const nvtxEventAttributes_t *a) {
  if (a && a->messageType == NVTX_MESSAGE_TYPE_UNICODE)
    from_wide(m, a->message.unicode);
  else if (a && a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered)
    from_ascii(m, ((struct nvtxStringRegistration_st *)a->message.registered)->text);
  else
    from_ascii(m, a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : NULL);
}

static const char *domain_name(nvtxDomainHandle_t d) { return d ? d->name : NULL; }

/* What to do with a call: record it (1), count it as a dropped row (-1: the capture is
** closing or stopped writing) or ignore it (0: off). */
static int recording(void) {
  int s = ovl_capture_state();
  if (s == OVL_CAPTURE_CLOSING) ovl_capture_note_call_while_closing();
  if (s == OVL_CAPTURE_IDLE || s == OVL_CAPTURE_ACTIVE) return 1;
  return s == OVL_CAPTURE_CLOSING || s == OVL_CAPTURE_COUNTING ? -1 : 0;
}

static void emit(int64_t start, int64_t end, int64_t tid, const char *domain, const char *name, size_t len) {
  size_t size = (sizeof(ovl_nvtx_event) + len + 7) & ~(size_t)7;
  ovl_nvtx_event *e = ovl_hostbuf_reserve(size);
  if (!e) return;
  e->h = (ovl_event_header){OVL_EV_NVTX, (uint16_t)size, 0, 0, 0, 0};
  e->start = start;
  e->end = end;
  e->tid = tid;
  e->domain = domain;
  e->name_len = (uint32_t)len;
  memcpy(e->name, name, len);
  ovl_hostbuf_commit(size);
}

/* ---------------------------------------------------------------------------------- */
/* Marks                                                                              */
/* ---------------------------------------------------------------------------------- */

static void mark(nvtxDomainHandle_t domain, const message *m) {
  int r = recording();
  if (r > 0) emit(ovl_clock_ns(), OVL_NONE, ovl_capture_tid(), domain_name(domain), m->text, m->len);
  else if (r < 0) ovl_hostbuf_count_unrecorded();
}

/* NVTX's entry points differ in how the message comes (attributes, ASCII, wide) and whether
** a domain is given; each decodes the message and calls one handler. */
#define ENTRY(ret, name, arg_t, decode, handler)    \
  static ret name(arg_t arg) {                      \
    message m;                                      \
    decode(&m, arg);                                \
    return handler(NULL, &m);                       \
  }
#define DOMAIN_ENTRY(ret, name, decode, handler)                                  \
  static ret name(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {         \
    message m;                                                                    \
    decode(&m, a);                                                                \
    return handler(d, &m);                                                        \
  }

#define MARK_ENTRY(name, arg_t, decode) \
  static void name(arg_t arg) {         \
    message m;                          \
    decode(&m, arg);                    \
    mark(NULL, &m);                     \
  }
MARK_ENTRY(mark_ex, const nvtxEventAttributes_t *, from_attributes)
MARK_ENTRY(mark_a, const char *, from_ascii)
MARK_ENTRY(mark_w, const wchar_t *, from_wide)

static void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  message m;
  from_attributes(&m, a);
  mark(d, &m);
}

/* ---------------------------------------------------------------------------------- */
/* Push / pop: a stack per thread                                                     */
/* ---------------------------------------------------------------------------------- */

typedef struct frame {
  int64_t start;
  nvtxDomainHandle_t domain;
  char *name;       /* buffer reused from push to push */
  size_t len, cap;
} frame;

typedef struct thread_stack {
  frame *frames;
  int depth, cap;
} thread_stack;

static pthread_key_t stack_key;
static pthread_once_t stack_key_once = PTHREAD_ONCE_INIT;
static __thread thread_stack *my_stack;

static void stack_gone(void *p) {
  thread_stack *s = p;
  for (int i = 0; i < s->cap; i++) free(s->frames[i].name);
  free(s->frames);
  free(s);
  my_stack = NULL;
}

static void make_stack_key(void) { pthread_key_create(&stack_key, stack_gone); }

static thread_stack *stack_of_thread(void) {
  if (my_stack) return my_stack;
  pthread_once(&stack_key_once, make_stack_key);
  thread_stack *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  pthread_setspecific(stack_key, s);
  return my_stack = s;
}

/* Returns the new range's level in its domain, or -1 when out of memory. */
static int push(nvtxDomainHandle_t domain, const message *m) {
  if (!recording()) return 0;  /* (closing: the stack is kept, the pop counts the range) */
  thread_stack *s = stack_of_thread();
  if (!s) return -1;
  if (s->depth == s->cap) {
    int cap = s->cap ? s->cap * 2 : 16;
    frame *f = realloc(s->frames, (size_t)cap * sizeof *f);
    if (!f) return -1;
    memset(f + s->cap, 0, (size_t)(cap - s->cap) * sizeof *f);
    s->frames = f;
    s->cap = cap;
  }
  frame *f = &s->frames[s->depth];
  if (f->cap < m->len + 1) {
    char *name = realloc(f->name, m->len + 1);
    if (!name) return -1;
    f->name = name;
    f->cap = m->len + 1;
  }
  memcpy(f->name, m->text, m->len);
  f->len = m->len;
  f->domain = domain;
  int level = 0;
  for (int i = 0; i < s->depth; i++) level += s->frames[i].domain == domain;
  s->depth++;
  f->start = ovl_clock_ns();
  return level;
}

/* Ends the innermost open range of `domain`; returns its level, or -1 when none is open. */
static int pop(nvtxDomainHandle_t domain) {
  int r = recording();
  if (!r) return 0;
  int64_t end = ovl_clock_ns();
  thread_stack *s = my_stack;
  int i = s ? s->depth - 1 : -1;
  while (i >= 0 && s->frames[i].domain != domain) i--;
  if (i < 0) return -1;
  frame f = s->frames[i];
  if (r > 0) emit(f.start, end >= f.start ? end : f.start, ovl_capture_tid(), domain_name(domain), f.name, f.len);
  else ovl_hostbuf_count_unrecorded();
  int level = 0;
  for (int k = 0; k < i; k++) level += s->frames[k].domain == domain;
  /* Close the gap, keeping the popped frame's buffer for reuse at the top. */
  memmove(&s->frames[i], &s->frames[i + 1], (size_t)(s->depth - 1 - i) * sizeof *s->frames);
  s->frames[--s->depth] = f;
  return level;
}

ENTRY(int, push_ex, const nvtxEventAttributes_t *, from_attributes, push)
ENTRY(int, push_a, const char *, from_ascii, push)
ENTRY(int, push_w, const wchar_t *, from_wide, push)

static int pop_default(void) { return pop(NULL); }

DOMAIN_ENTRY(int, domain_push_ex, from_attributes, push)

static int domain_pop(nvtxDomainHandle_t d) { return pop(d); }

/* ---------------------------------------------------------------------------------- */
/* Start / end: ranges that may end on another thread                                 */
/* ---------------------------------------------------------------------------------- */

typedef struct open_range {
  struct open_range *next;
  uint64_t id;
  int64_t start, tid;
  const char *domain;
  size_t len;
  char name[];
} open_range;

#define RANGE_BUCKETS 1024
static open_range *open_ranges[RANGE_BUCKETS];
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t next_range_id = 1;

static nvtxRangeId_t range_start(nvtxDomainHandle_t domain, const message *m) {
  int rec = recording();
  if (rec < 0) ovl_hostbuf_count_unrecorded();  /* a range that will not be a row */
  if (rec <= 0) return 0;
  open_range *r = malloc(sizeof *r + m->len);
  if (!r) return 0;
  r->id = atomic_fetch_add(&next_range_id, 1);
  r->tid = ovl_capture_tid();
  r->domain = domain_name(domain);
  r->len = m->len;
  memcpy(r->name, m->text, m->len);
  r->start = ovl_clock_ns();
  pthread_mutex_lock(&ranges_lock);
  open_range **b = &open_ranges[r->id % RANGE_BUCKETS];
  r->next = *b;
  *b = r;
  pthread_mutex_unlock(&ranges_lock);
  return r->id;
}

static void range_end(nvtxRangeId_t id) {
  int64_t end = ovl_clock_ns();
  open_range *r = NULL;
  pthread_mutex_lock(&ranges_lock);
  for (open_range **p = &open_ranges[id % RANGE_BUCKETS]; *p; p = &(*p)->next) {
    if ((*p)->id == id) {
      r = *p;
      *p = r->next;
      break;
    }
  }
  pthread_mutex_unlock(&ranges_lock);
  if (!r) return;
  int rec = recording();
  if (rec > 0) emit(r->start, end >= r->start ? end : r->start, r->tid, r->domain, r->name, r->len);
  else if (rec < 0) ovl_hostbuf_count_unrecorded();
  free(r);
}

ENTRY(nvtxRangeId_t, start_ex, const nvtxEventAttributes_t *, from_attributes, range_start)
ENTRY(nvtxRangeId_t, start_a, const char *, from_ascii, range_start)
ENTRY(nvtxRangeId_t, start_w, const wchar_t *, from_wide, range_start)
DOMAIN_ENTRY(nvtxRangeId_t, domain_start_ex, from_attributes, range_start)

static void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  (void)d;
  range_end(id);
}

/* ---------------------------------------------------------------------------------- */
/* Domains and registered strings                                                     */
/* ---------------------------------------------------------------------------------- */

static struct nvtxDomainRegistration_st *domains;
static pthread_mutex_t domains_lock = PTHREAD_MUTEX_INITIALIZER;

/* One handle per name, never freed (rows being written may still point at the name). */
static nvtxDomainHandle_t domain_create(const message *m) {
  pthread_mutex_lock(&domains_lock);
  struct nvtxDomainRegistration_st *d = domains;
  while (d && !(strlen(d->name) == m->len && memcmp(d->name, m->text, m->len) == 0)) d = d->next;
  if (!d && (d = malloc(sizeof *d + m->len + 1)) != NULL) {
    memcpy(d->name, m->text, m->len);
    d->name[m->len] = 0;
    d->next = domains;
    domains = d;
  }
  pthread_mutex_unlock(&domains_lock);
  return d;
}

static nvtxDomainHandle_t domain_create_a(const char *s) {
  message m;
  from_ascii(&m, s);
  return domain_create(&m);
}

static nvtxDomainHandle_t domain_create_w(const wchar_t *s) {
  message m;
  from_wide(&m, s);
  return domain_create(&m);
}

static void domain_destroy(nvtxDomainHandle_t d) { (void)d; }

static struct nvtxStringRegistration_st *strings;

static nvtxStringHandle_t register_string(const message *m) {
  struct nvtxStringRegistration_st *r = malloc(sizeof *r + m->len);
  if (!r) return NULL;
  memcpy(r->text, m->text, m->len);
  r->text[m->len] = 0;
  pthread_mutex_lock(&domains_lock);
  r->next = strings;
  strings = r;
  pthread_mutex_unlock(&domains_lock);
  return r;
}

static nvtxStringHandle_t register_string_a(nvtxDomainHandle_t d, const char *s) {
  (void)d;
  message m;
  from_ascii(&m, s);
  return register_string(&m);
}

static nvtxStringHandle_t register_string_w(nvtxDomainHandle_t d, const wchar_t *s) {
  (void)d;
  message m;
  from_wide(&m, s);
  return register_string(&m);
}

static void initialize(const void *reserved) { (void)reserved; }

/* ---------------------------------------------------------------------------------- */
/* Attaching to an NVTX copy                                                          */
/* ---------------------------------------------------------------------------------- */

static void set_slot(NvtxFunctionTable table, unsigned size, unsigned id, NvtxFunctionPointer fn) {
  if (id < size && table[id]) *table[id] = fn;
}

#define SLOT(table, size, id, fn) set_slot(table, size, id, (NvtxFunctionPointer)(fn))

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  if (ovl_capture_state() == OVL_CAPTURE_OFF || !get_export_table) return 0;
  const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
  if (!cb || !cb->GetModuleFunctionTable) return 0;
  const NvtxExportTableVersionInfo *vi = get_export_table(NVTX_ETID_VERSIONINFO);
  if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion) vi->SetInjectionNvtxVersion(NVTX_VERSION);

  NvtxFunctionTable t;
  unsigned n;
  if (!cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) return 0;
  SLOT(t, n, NVTX_CBID_CORE_MarkEx, mark_ex);
  SLOT(t, n, NVTX_CBID_CORE_MarkA, mark_a);
  SLOT(t, n, NVTX_CBID_CORE_MarkW, mark_w);
  SLOT(t, n, NVTX_CBID_CORE_RangeStartEx, start_ex);
  SLOT(t, n, NVTX_CBID_CORE_RangeStartA, start_a);
  SLOT(t, n, NVTX_CBID_CORE_RangeStartW, start_w);
  SLOT(t, n, NVTX_CBID_CORE_RangeEnd, range_end);
  SLOT(t, n, NVTX_CBID_CORE_RangePushEx, push_ex);
  SLOT(t, n, NVTX_CBID_CORE_RangePushA, push_a);
  SLOT(t, n, NVTX_CBID_CORE_RangePushW, push_w);
  SLOT(t, n, NVTX_CBID_CORE_RangePop, pop_default);

  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
    SLOT(t, n, NVTX_CBID_CORE2_DomainMarkEx, domain_mark_ex);
    SLOT(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, domain_start_ex);
    SLOT(t, n, NVTX_CBID_CORE2_DomainRangeEnd, domain_end);
    SLOT(t, n, NVTX_CBID_CORE2_DomainRangePushEx, domain_push_ex);
    SLOT(t, n, NVTX_CBID_CORE2_DomainRangePop, domain_pop);
    SLOT(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, register_string_a);
    SLOT(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, register_string_w);
    SLOT(t, n, NVTX_CBID_CORE2_DomainCreateA, domain_create_a);
    SLOT(t, n, NVTX_CBID_CORE2_DomainCreateW, domain_create_w);
    SLOT(t, n, NVTX_CBID_CORE2_DomainDestroy, domain_destroy);
    SLOT(t, n, NVTX_CBID_CORE2_Initialize, initialize);
  }
  return 1;
}
