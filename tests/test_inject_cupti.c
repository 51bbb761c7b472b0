/*
** libovl's way into CUPTI, without a GPU:
**   locate    where libovl looks for libcupti (libinject/cupti_locate.h): the pip wheels'
**             layouts beside the CUDA libraries a process loaded (nvidia/cu13/lib next to
**             nvidia/nccl/lib, torch/lib), before the loader's search and the toolkit's
**             extras/CUPTI/lib64; OVL_CUPTI_LIBRARY alone when set
**   sequence  the attach sequence (libinject/cupti_attach.h) against the fake CUPTI
**             (tests/fakes/fake_cupti.c): the call order, and every refusal: a refused kind
**             degrades that kind only; a refusal libovl cannot do without leaves CUPTI as
**             it was found
*/
#include "check.h"
#include "cupti_attach.h"
#include "cupti_locate.h"
#include "fakes/fake_cupti.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* locate                                                                             */
/* ---------------------------------------------------------------------------------- */

static int position_of(const ovl_cupti_candidate *c, size_t n, const char *path) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(c[i].path, path) == 0) return (int)i;
  return -1;
}

static void locate_pip_wheels(void) {
  const char *loaded[] = {
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
    "/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2",
    "/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13",
  };
  ovl_cupti_search s = {"libcupti.so.13", NULL, loaded, 4, "/opt/cuda-13.0", NULL, "/build/libcupti.so"};
  ovl_cupti_candidate c[64];
  size_t n = ovl_cupti_candidates(&s, c, 64);
  for (size_t i = 0; i < n; i++) printf("  %2zu %-70s %s%s\n", i, c[i].path, c[i].how, c[i].only_if_loaded ? " (NOLOAD)" : "");
  /* first: a CUPTI already in the process, by soname, only if loaded */
  CHECK(n > 2);
  CHECK_STR(c[0].path, "libcupti.so.13");
  CHECK_I64(c[0].only_if_loaded, 1);
  /* torch/lib itself, then the cu13 wheel beside torch, then nvidia/nccl/lib: load order,
  ** each place once, under the first library that leads to it, before the loader's search */
  const char *site = "/venv/lib/python3.12/site-packages";
  char torch_lib[256], cu13[256], nccl_lib[256];
  snprintf(torch_lib, sizeof torch_lib, "%s/torch/lib/libcupti.so.13", site);
  snprintf(cu13, sizeof cu13, "%s/nvidia/cu13/lib/libcupti.so.13", site);
  snprintf(nccl_lib, sizeof nccl_lib, "%s/nvidia/nccl/lib/libcupti.so.13", site);
  int in_torch = position_of(c, n, torch_lib), wheel = position_of(c, n, cu13), beside_nccl = position_of(c, n, nccl_lib);
  int search = -1;
  for (size_t i = 1; i < n; i++)
    if (strcmp(c[i].path, "libcupti.so.13") == 0 && !c[i].only_if_loaded) search = (int)i;
  int cuda_home = position_of(c, n, "/opt/cuda-13.0/extras/CUPTI/lib64/libcupti.so.13");
  int toolkit = position_of(c, n, "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13");
  int build = position_of(c, n, "/build/libcupti.so");
  CHECK(in_torch > 0 && in_torch < wheel && wheel < beside_nccl && beside_nccl < search);
  CHECK(search < cuda_home && cuda_home < toolkit && toolkit < build);
  CHECK_STR(c[wheel].how, "beside libtorch_cuda.so");
  CHECK_STR(c[beside_nccl].how, "beside libnccl.so.2");
  CHECK(strstr(c[search].how, "search") != NULL);
  CHECK(strstr(c[cuda_home].how, "CUDA_HOME") != NULL);
  CHECK_I64(build, (int)n - 1);
  /* paths as a person would write them; nothing tried beside libc */
  for (size_t i = 0; i < n; i++) CHECK(strstr(c[i].path, "/../") == NULL);
  for (size_t i = 0; i < n; i++) CHECK(strncmp(c[i].path, "/usr/lib/x86_64-linux-gnu/", 26) != 0);
  /* no place twice */
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      CHECK(strcmp(c[i].path, c[j].path) != 0 || c[i].only_if_loaded != c[j].only_if_loaded);
}

static void locate_toolkit_and_explicit(void) {
  /* A toolkit's lib64: its extras/CUPTI/lib64 beside it. */
  const char *loaded[] = {"/usr/local/cuda-12.8/lib64/libcudart.so.12", "libnot-a-path.so"};
  ovl_cupti_search s = {"libcupti.so.12", "", loaded, 2, NULL, NULL, NULL};
  ovl_cupti_candidate c[64];
  size_t n = ovl_cupti_candidates(&s, c, 64);
  CHECK(position_of(c, n, "/usr/local/cuda-12.8/extras/CUPTI/lib64/libcupti.so.12") > 0);
  CHECK_STR(c[n - 1].path, "/usr/local/cuda/lib/libcupti.so.12");  /* no build path: the default toolkit last */
  /* OVL_CUPTI_LIBRARY: that file and nothing else */
  s.explicit_path = "/opt/my/libcupti.so.13";
  n = ovl_cupti_candidates(&s, c, 64);
  CHECK_I64(n, 1);
  CHECK_STR(c[0].path, "/opt/my/libcupti.so.13");
  CHECK_STR(c[0].how, "OVL_CUPTI_LIBRARY");
  /* a bounded list stays bounded */
  s.explicit_path = NULL;
  CHECK_I64(ovl_cupti_candidates(&s, c, 3), 3);
}

/* ---------------------------------------------------------------------------------- */
/* sequence                                                                           */
/* ---------------------------------------------------------------------------------- */

static void CUPTIAPI on_callback(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data) {
  (void)u, (void)d, (void)id, (void)data;
}
static uint64_t CUPTIAPI test_clock(void) { return 42; }
static void CUPTIAPI requested(uint8_t **b, size_t *size, size_t *max) {
  *b = NULL, *size = 0, *max = 0;
}
static void CUPTIAPI completed(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid) {
  (void)c, (void)s, (void)b, (void)size, (void)valid;
}
static const ovl_cupti_hooks hooks = {on_callback, test_clock, requested, completed};

/* Line number (0-based) of the first log line starting with `prefix`, or -1. */
static int log_line(const char *prefix) {
  const char *log = fake_cupti_log();
  int line = 0;
  for (const char *p = log; *p; line++) {
    if (strncmp(p, prefix, strlen(prefix)) == 0) return line;
    const char *nl = strchr(p, '\n');
    if (!nl) break;
    p = nl + 1;
  }
  return -1;
}

static int attach(ovl_cupti_api *api, ovl_cupti_attach_result *r) {
  int ok = ovl_cupti_attach_sequence(api, &hooks, r);
  printf("  attached %d, why '%s', degraded '%s'\n", ok, r->why, r->degraded);
  return ok;
}

static void sequence_in_order(void) {
  ovl_cupti_api api;
  fake_cupti_reset();
  fake_cupti_table(&api);
  ovl_cupti_attach_result r;
  CHECK_I64(attach(&api, &r), 1);
  CHECK_I64(r.attached, 1);
  CHECK_I64(r.kinds, (1u << OVL_KIND_COUNT) - 1);
  CHECK_I64(r.launch_apis, 2);  /* the fake knows one runtime and one driver launch */
  CHECK_STR(r.degraded, "");
  char kinds[160];
  ovl_cupti_kinds_text(r.kinds, kinds, sizeof kinds);
  CHECK_STR(kinds, "kernel,memcpy,memcpy_p2p,memset,external_correlation");
  /* subscribe (named) -> clock -> tids -> buffers -> kinds -> launch APIs */
  int sub = log_line("Subscribe_v2"), clock = log_line("ActivityRegisterTimestampCallback"),
      tid = log_line("SetThreadIdType"), buffers = log_line("ActivityRegisterCallbacks"),
      first_kind = log_line("ActivityEnable "), launches = log_line("ActivityEnableRuntimeApi");
  printf("%s", fake_cupti_log());
  CHECK(sub == 0 && sub < clock && clock < tid && tid < buffers && buffers < first_kind && first_kind < launches);
  CHECK(log_line("ActivityEnable 4") < 0);  /* never the serialising KERNEL kind */
  CHECK(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  CHECK(fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  CHECK(log_line("Unsubscribe") < 0);

  /* A CUPTI without cuptiSubscribe_v2: the plain call. */
  fake_cupti_reset();
  api.Subscribe_v2 = NULL;
  CHECK_I64(attach(&api, &r), 1);
  CHECK_I64(log_line("Subscribe"), 0);
  CHECK(log_line("Subscribe_v2") < 0);
}

/* Each kind refused on its own: that kind is missing and named, the others are there. */
static void refused_kind_degrades_that_kind(void) {
  for (int k = 0; k < OVL_KIND_COUNT; k++) {
    ovl_cupti_api api;
    fake_cupti_reset();
    fake_cupti_table(&api);
    fake_cupti_refuse("ActivityEnable", (int)ovl_cupti_kind(k), CUPTI_ERROR_NOT_SUPPORTED);
    ovl_cupti_attach_result r;
    CHECK_I64(attach(&api, &r), 1);
    CHECK_I64(r.kinds, ((1u << OVL_KIND_COUNT) - 1) & ~(1u << k));
    char expect[96];
    snprintf(expect, sizeof expect, "%s refused (CUPTI_ERROR_NOT_SUPPORTED", ovl_cupti_kind_name(k));
    CHECK(strstr(r.degraded, expect) != NULL);
    CHECK(!fake_cupti_kind_enabled(ovl_cupti_kind(k)));
    for (int other = 0; other < OVL_KIND_COUNT; other++)
      if (other != k) CHECK(fake_cupti_kind_enabled(ovl_cupti_kind(other)));
  }
}

/* What libovl cannot do without: CUPTI left as it was found (nothing enabled, not subscribed). */
static void fatal_refusals_leave_cupti_clean(void) {
  static const struct {
    const char *call;
    int kind;
    const char *why;
  } cases[] = {
    {"Subscribe_v2", -1, "cuptiSubscribe failed"},
    {"ActivityRegisterTimestampCallback", -1, "host clock"},
    {"ActivityRegisterCallbacks", -1, "cuptiActivityRegisterCallbacks failed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ovl_cupti_api api;
    fake_cupti_reset();
    fake_cupti_table(&api);
    fake_cupti_refuse(cases[i].call, cases[i].kind, CUPTI_ERROR_NOT_INITIALIZED);
    ovl_cupti_attach_result r;
    CHECK_I64(attach(&api, &r), 0);
    CHECK(strstr(r.why, cases[i].why) != NULL);
    CHECK_I64(r.kinds, 0);
    for (int k = 0; k < OVL_KIND_COUNT; k++) CHECK(!fake_cupti_kind_enabled(ovl_cupti_kind(k)));
    if (i > 0) CHECK(log_line("Unsubscribe") > 0);  /* the subscription given back */
  }
  /* Every kind of GPU work refused: external correlation alone is no capture; it is disabled again. */
  ovl_cupti_api api;
  fake_cupti_reset();
  fake_cupti_table(&api);
  for (int k = 0; k < OVL_KIND_COUNT; k++)
    if (k != OVL_KIND_EXTERNAL_CORRELATION) fake_cupti_refuse("ActivityEnable", (int)ovl_cupti_kind(k), CUPTI_ERROR_NOT_SUPPORTED);
  ovl_cupti_attach_result r;
  CHECK_I64(attach(&api, &r), 0);
  CHECK(strstr(r.why, "every kind of GPU work") != NULL);
  CHECK(!fake_cupti_kind_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  CHECK(log_line("ActivityDisable 39") > 0);
  CHECK(log_line("Unsubscribe") > 0);
}

static void degradations_that_keep_the_capture(void) {
  ovl_cupti_api api;
  fake_cupti_reset();
  fake_cupti_table(&api);
  fake_cupti_refuse("SetThreadIdType", -1, CUPTI_ERROR_NOT_SUPPORTED);
  fake_cupti_refuse("ActivityEnableRuntimeApi", -1, CUPTI_ERROR_NOT_SUPPORTED);
  fake_cupti_refuse("ActivityEnableDriverApi", -1, CUPTI_ERROR_NOT_SUPPORTED);
  ovl_cupti_attach_result r;
  CHECK_I64(attach(&api, &r), 1);
  CHECK_I64(r.launch_apis, 0);
  CHECK(strstr(r.degraded, "system thread ids") != NULL);
  CHECK(strstr(r.degraded, "launch API records refused") != NULL);
}

/* Another client holds CUPTI: refused, named, nothing touched. */
static void another_subscriber(void) {
  ovl_cupti_api api;
  fake_cupti_reset();
  fake_cupti_table(&api);
  fake_cupti_hold_subscription("Nsight Systems");
  ovl_cupti_attach_result r;
  CHECK_I64(attach(&api, &r), 0);
  CHECK(strstr(r.why, "another CUPTI client is active (CUPTI for Nsight Systems)") != NULL);
  CHECK(log_line("ActivityEnable") < 0);
  CHECK(log_line("ActivityRegisterCallbacks") < 0);
  CHECK(log_line("Unsubscribe") < 0);  /* not libovl's to give back */
  /* the plain cuptiSubscribe cannot name the holder: the message says who it may be */
  fake_cupti_reset();
  fake_cupti_hold_subscription("x");
  api.Subscribe_v2 = NULL;
  CHECK_I64(attach(&api, &r), 0);
  CHECK(strstr(r.why, "torch.profiler") != NULL);
}

int main(void) {
  locate_pip_wheels();
  locate_toolkit_and_explicit();
  sequence_in_order();
  refused_kind_degrades_that_kind();
  fatal_refusals_leave_cupti_clean();
  degradations_that_keep_the_capture();
  another_subscriber();
  return check_summary();
}
