/*
** Where libovl looks for CUPTI (libcupti.so.<major>), as a pure function of what the
** process shows: the places to try, in order, each with the reason it is tried.
**
**   1. OVL_CUPTI_LIBRARY, when set: that file and nothing else;
**   2. a CUPTI already loaded in the process (its soname, RTLD_NOLOAD): PyTorch's own;
**   3. beside the CUDA libraries the process loaded (libcudart, libnccl, libcublas,
**      libtorch_cuda), in load order: the same directory, and the pip wheels' layouts
**      (<site-packages>/nvidia/cu13/lib, nvidia/cuda_cupti/lib; a toolkit's
**      extras/CUPTI/lib64): the CUPTI that matches the CUDA the program really uses;
**   4. the soname through the loader's search (LD_LIBRARY_PATH, ld.so.cache, ...);
**   5. $CUDA_HOME and $CUDA_PATH, then /usr/local/cuda: extras/CUPTI/lib64, lib64, lib;
**   6. the CUPTI the build linked against.
** Duplicates are given once (the first reason wins).
*/
#ifndef OVL_INJECT_CUPTI_LOCATE_H
#define OVL_INJECT_CUPTI_LOCATE_H

#include <stddef.h>

#define OVL_CUPTI_PATH_MAX 1024

typedef struct ovl_cupti_candidate {
  char path[OVL_CUPTI_PATH_MAX];  /* a file path, or the bare soname (steps 2 and 4) */
  char how[160];                  /* why it is tried: "already loaded", "beside <lib>", ... */
  int only_if_loaded;             /* step 2: dlopen with RTLD_NOLOAD */
} ovl_cupti_candidate;

typedef struct ovl_cupti_search {
  const char *soname;             /* "libcupti.so.13" */
  const char *explicit_path;      /* OVL_CUPTI_LIBRARY, or NULL/"" */
  const char *const *loaded;      /* paths of the loaded objects, in load order */
  size_t nloaded;
  const char *cuda_home, *cuda_path;  /* the environment's, or NULL */
  const char *build_path;         /* or NULL */
} ovl_cupti_search;

/* Fills out[0..max) with the places to try. Returns how many (at most max). */
size_t ovl_cupti_candidates(const ovl_cupti_search *s, ovl_cupti_candidate *out, size_t max);

#endif
