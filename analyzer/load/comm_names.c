/* Names of communication and copies in foreign traces: see comm_names.h. */
#include "comm_names.h"

#include <assert.h>
#include <ctype.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

/* Lower-cased `name` without underscores, dashes and an "nccl" prefix, cut to fit. */
static void normalise_call(const char *name, char *out, size_t cap) {
  size_t n = 0;
  if (strncasecmp(name, "nccl", 4) == 0) name += 4;
  for (; *name && n + 1 < cap; name++)
    if (*name != '_' && *name != '-' && *name != ' ') out[n++] = (char)tolower((unsigned char)*name);
  out[n] = 0;
}

const char *ovl_comm_op_from_call(const char *name) {
  if (!name) return NULL;
  char s[64];
  normalise_call(name, s, sizeof s);
  /* Longer names first: "reducescatter" holds "reduce" and "scatter". */
  if (strstr(s, "reducescatter")) return "ReduceScatter";
  if (strstr(s, "allreduce")) return "AllReduce";
  if (strstr(s, "allgather")) return "AllGather";
  if (strstr(s, "alltoall")) return "AlltoAll";
  if (strstr(s, "broadcast") || strcmp(s, "bcast") == 0) return "Broadcast";
  if (strncmp(s, "reduce", 6) == 0) return "Reduce";
  if (strncmp(s, "gather", 6) == 0) return "Gather";
  if (strncmp(s, "scatter", 7) == 0) return "Scatter";
  if (strncmp(s, "send", 4) == 0) return "Send";
  if (strncmp(s, "recv", 4) == 0) return "Recv";
  return NULL;
}

int ovl_comm_dtype(const char *pytorch_name, const char **nccl_name, int64_t *size) {
  static const struct { const char *name; const char *nccl; int size; } types[] = {
    {"Float", "Float32", 4},        {"float32", "Float32", 4},     {"Double", "Float64", 8},
    {"float64", "Float64", 8},      {"Half", "Float16", 2},        {"float16", "Float16", 2},
    {"BFloat16", "Bfloat16", 2},    {"Long", "Int64", 8},          {"int64", "Int64", 8},
    {"Int", "Int32", 4},            {"int32", "Int32", 4},         {"Short", "Int16", 2},
    {"int16", "Int16", 2},          {"Char", "Int8", 1},           {"int8", "Int8", 1},
    {"Byte", "Uint8", 1},           {"uint8", "Uint8", 1},         {"Bool", "Uint8", 1},
    {"UInt16", "Uint16", 2},        {"UInt32", "Uint32", 4},       {"UInt64", "Uint64", 8},
    {"ComplexHalf", "ComplexHalf", 4}, {"ComplexFloat", "ComplexFloat", 8},
    {"ComplexDouble", "ComplexDouble", 16}, {"Float8_e4m3fn", "Float8e4m3", 1},
    {"Float8_e5m2", "Float8e5m2", 1}, {"Float8_e4m3fnuz", "Float8e4m3", 1},
    {"Float8_e5m2fnuz", "Float8e5m2", 1},
    /* C++ names, as record_shapes writes `Input type` */
    {"double", "Float64", 8},       {"c10::Half", "Float16", 2},   {"c10::BFloat16", "Bfloat16", 2},
    {"long int", "Int64", 8},       {"long long", "Int64", 8},     {"signed char", "Int8", 1},
    {"unsigned char", "Uint8", 1},  {"unsigned int", "Uint32", 4}, {"short int", "Int16", 2},
  };
  *nccl_name = NULL;
  *size = 0;
  if (!pytorch_name || !*pytorch_name) return 0;
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    if (strcasecmp(pytorch_name, types[i].name) == 0 || strcasecmp(pytorch_name, types[i].nccl) == 0) {
      *nccl_name = types[i].nccl;
      *size = types[i].size;
      return 1;
    }
  }
  return 0;
}

/* 1 when `tok` appears in s delimited by '_' before it and '_', '(' or the end after it. */
static int has_token(const char *s, const char *tok) {
  size_t n = strlen(tok);
  for (const char *p = strstr(s, tok); p; p = strstr(p + 1, tok))
    if (p > s && p[-1] == '_' && (p[n] == '_' || p[n] == '(' || p[n] == 0)) return 1;
  return 0;
}

const char *ovl_comm_redop_from_kernel(const char *kernel_name) {
  static const char *const ops[] = {"PreMulSum", "Sum", "Prod", "Max", "Min", "Avg"};
  if (!kernel_name) return NULL;
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (has_token(kernel_name, ops[i])) return ops[i];
  return NULL;
}

static char memory_side(char c) {
  switch (c) {
    case 'H': case 'h': return 'H';
    case 'D': case 'd': case 'A': case 'a': return 'D';
    case 'P': case 'p': return 'P';
    default: return 0;
  }
}

const char *ovl_memcpy_kind_from_name(const char *name) {
  if (!name || strncasecmp(name, "Memcpy", 6) != 0) return NULL;
  const char *p = name + 6;
  while (*p == ' ') p++;
  char from = memory_side(p[0]), to = p[0] && p[1] == 't' && p[2] == 'o' ? memory_side(p[3]) : 0;
  if (!from || !to) return NULL;
  if (from == 'H' && to == 'D') return "HtoD";
  if (from == 'D' && to == 'H') return "DtoH";
  if (from == 'D' && to == 'D') return "DtoD";
  if (from == 'H' && to == 'H') return "HtoH";
  if (from == 'P' && to == 'P') return "PtoP";
  return NULL;
}

const char *ovl_memcpy_kind_from_cupti(int64_t kind) {
  switch (kind) {
    case 1: return "HtoD";
    case 2: return "DtoH";
    case 3: return "HtoD";  /* host to array */
    case 4: return "DtoH";  /* array to host */
    case 5: case 6: case 7: case 8: return "DtoD";
    case 9: return "HtoH";
    case 10: return "PtoP";
    default: return NULL;
  }
}

/* The communication kernel families recognised by name, the one list (docs/report.md,
** "Communication kernels"). A kernel is communication when its name contains `match` (any
** case) and not `except`; `op` is the operation the family's kernels perform when the name
** does not say (OVL_OP_UNKNOWN: from the name, else unknown). Families that move data between
** GPUs outside NCCL's API (one-sided puts, multicast memory, peer pointers) are here because
** a trace shows them only as kernels: counted as compute, their time would hide. */
static const struct comm_family {
  const char *family, *match, *except;
  ovl_op op;
} families[] = {
  {"NCCL", "nccl", NULL, OVL_OP_UNKNOWN},                    /* ncclDevKernel_*, ncclKernel_*, ncclSymkDevKernel_*; RCCL's too */
  {"RCCL", "rccl", NULL, OVL_OP_UNKNOWN},
  {"MSCCL", "msccl", NULL, OVL_OP_UNKNOWN},                  /* MSCCL and MSCCL++ (mscclpp) */
  {"NVSHMEM", "nvshmem", NULL, OVL_OP_UNKNOWN},              /* nvshmemi_*, nvshmemx_* kernels */
  {"DeepEP", "deep_ep::", "deep_ep::layout::", OVL_OP_ALLTOALL},  /* intranode/internode/internode_ll dispatch, combine */
  {"SymmetricMemory", "symmetric_memory::", NULL, OVL_OP_UNKNOWN},  /* c10d::symmetric_memory kernels */
  {"SymmetricMemory", "multimem_all_reduce", NULL, OVL_OP_ALLREDUCE},
  {"SymmetricMemory", "multimem_one_shot", NULL, OVL_OP_ALLREDUCE},
  {"SymmetricMemory", "multimem_all_gather", NULL, OVL_OP_ALLGATHER},
  {"SymmetricMemory", "one_shot_all_reduce", NULL, OVL_OP_ALLREDUCE},
  {"SymmetricMemory", "two_shot_all_reduce", NULL, OVL_OP_ALLREDUCE},
  {"custom all-reduce (vLLM, SGLang)", "cross_device_reduce", NULL, OVL_OP_ALLREDUCE},
  {"custom all-reduce (TensorRT-LLM)", "oneshotallreduce", NULL, OVL_OP_ALLREDUCE},
  {"custom all-reduce (TensorRT-LLM)", "twoshotallreduce", NULL, OVL_OP_ALLREDUCE},
  {"custom all-reduce (TensorRT-LLM, FlashInfer)", "allreduce_fusion_kernel", NULL, OVL_OP_ALLREDUCE},
  {"ovl emulated", "ovl_emulated_", NULL, OVL_OP_UNKNOWN},   /* the reference workloads' emulated collectives */
};

enum { FAMILY_COUNT = sizeof families / sizeof families[0] };

/* Marks in *found the families whose `match` (lower case, as `except`) occurs in name, in
** *excepted those whose `except` does. One pass over the name: each letter looks up the
** patterns it may begin (most begin none), and only those are compared. Kernel names run to
** thousands of characters (C++ templates); a search of the whole name per pattern cost
** 200,000-300,000 instructions a name on real traces (~1,000 per letter). */
static void scan_families(const char *name, uint32_t *found, uint32_t *excepted) {
  /* By first letter, either case (ovl keeps the C locale): bit i for families[i].match, 32 + i
  ** for its except. */
  uint64_t starts[256] = {0};
  for (size_t i = 0; i < FAMILY_COUNT * 2; i++) {
    const char *pattern = i < FAMILY_COUNT ? families[i].match : families[i - FAMILY_COUNT].except;
    if (!pattern) continue;
    assert(pattern[0] && pattern[1]);  /* the scan compares two letters before the call */
    uint64_t bit = (uint64_t)1 << (i < FAMILY_COUNT ? i : 32 + i - FAMILY_COUNT);
    starts[(unsigned char)pattern[0]] |= bit;
    starts[(unsigned char)toupper((unsigned char)pattern[0])] |= bit;
  }
  uint64_t seen = 0;
  for (const char *p = name; *p; p++) {
    uint64_t maybe = starts[(unsigned char)*p] & ~seen;
    while (maybe) {
      int bit = __builtin_ctzll(maybe);
      maybe &= maybe - 1;
      const char *pattern = bit < 32 ? families[bit].match : families[bit - 32].except;
      /* the second letter first (patterns are two or more long; p[1] is at most the end) */
      if (tolower((unsigned char)p[1]) == pattern[1] && strncasecmp(p, pattern, strlen(pattern)) == 0)
        seen |= (uint64_t)1 << bit;
    }
  }
  *found = (uint32_t)seen;
  *excepted = (uint32_t)(seen >> 32);
}

/* The first family of the list whose match the name contains and whose except it does not. */
static const struct comm_family *family_of(const char *name) {
  if (!name) return NULL;
  _Static_assert(FAMILY_COUNT <= 32, "a bit per family");
  uint32_t found, excepted;
  scan_families(name, &found, &excepted);
  for (size_t i = 0; i < FAMILY_COUNT; i++)
    if ((found >> i & 1) && !(excepted >> i & 1)) return &families[i];
  return NULL;
}

int ovl_is_comm_kernel_name(const char *name) { return family_of(name) != NULL; }

const char *ovl_comm_kernel_family(const char *name) {
  const struct comm_family *f = family_of(name);
  return f ? f->family : NULL;
}

ovl_op ovl_comm_kernel_op(const char *name) {
  const struct comm_family *f = family_of(name);
  if (f && f->op != OVL_OP_UNKNOWN) return f->op;
  return ovl_op_from_kernel_name(name);
}

const char *ovl_comm_kernel_dtype(const char *name) {
  static const struct { const char *token, *dtype; } types[] = {
      {"f32", "Float32"},  {"float", "Float32"},   {"f16", "Float16"},   {"half", "Float16"},
      {"bf16", "Bfloat16"}, {"f64", "Float64"},    {"double", "Float64"}, {"i32", "Int32"},
      {"int32", "Int32"},  {"u32", "Uint32"},     {"uint32", "Uint32"}, {"i64", "Int64"},
      {"int64", "Int64"},  {"u64", "Uint64"},     {"uint64", "Uint64"}, {"i8", "Int8"},
      {"int8", "Int8"},    {"u8", "Uint8"},       {"uint8", "Uint8"},   {"f8e4m3", "Float8e4m3"},
      {"f8e5m2", "Float8e5m2"}};
  if (!name || !ovl_is_comm_kernel_name(name)) return NULL;
  /* whole '_'-separated words only: "i32" in "..._Sum_i32_RING..." but not inside "multi32" */
  for (const char *p = name; *p;) {
    size_t n = strcspn(p, "_");
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
      if (strlen(types[i].token) == n && strncmp(p, types[i].token, n) == 0) return types[i].dtype;
    p += n;
    while (*p == '_') p++;
  }
  return NULL;
}

/* 1 when word (lower case) is spelled at p, in any case, with '_' and '-' anywhere after its
** first letter ("All_Reduce" spells "allreduce"). */
static int spells(const char *p, const char *word) {
  for (; *word; p++) {
    if (!*p) return 0;
    if (*p == '_' || *p == '-') continue;
    if (tolower((unsigned char)*p) != *word++) return 0;
  }
  return 1;
}

const char *ovl_comm_lookalike_word(const char *name) {
  static const char *const words[] = {"allreduce", "allgather", "reducescatter", "alltoall", "all2all", "sendrecv"};
  for (const char *p = name; p && *p; p++) {
    if (*p == '_' || *p == '-') continue;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
      if (spells(p, words[i])) return p;
  }
  return NULL;
}

int ovl_comm_lookalike_name(const char *name) {
  return name && !ovl_is_comm_kernel_name(name) && ovl_comm_lookalike_word(name) != NULL;
}

int64_t ovl_comm_id(uint64_t hash) {
  return (int64_t)(hash & 0x7fffffffffffffffULL);
}
