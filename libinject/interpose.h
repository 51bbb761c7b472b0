/*
** Exporting an interposer (NCCL's and CUPTI's functions) so that it exists only where the
** real function does.
**
** OVL_INTERPOSE(fn) exports `fn` as a GNU indirect function whose resolver returns
** `hook_fn` when a loaded object other than libovl.so defines the real `fn`, and nothing
** otherwise: a process without NCCL (or CUPTI) that probes dlsym(RTLD_DEFAULT, "fn") finds
** NULL, as it would without libovl. The dynamic linker runs the resolver at each binding
** (program start-up, lazy binding, dlopen, dlsym); it may run before libovl's constructor,
** so it only reads the loaded objects' symbol tables (symbol_lookup.h). Before libovl is
** relocated it cannot look and binds to the hook: the object being bound refers to `fn` at
** start-up, so the real library is loaded (glibc prints a "Relink ... for IFUNC symbol"
** note on stderr then).
*/
#ifndef OVL_INJECT_INTERPOSE_H
#define OVL_INJECT_INTERPOSE_H

#include "symbol_lookup.h"

#define OVL_EXPORT __attribute__((visibility("default")))

/* The real function: the next definition in the global scope (linked, or dlopen'ed
** RTLD_GLOBAL), else the first loaded object that defines it, whatever its name and scope
** (a renamed RTLD_LOCAL copy vendored by a Python wheel). NULL when none does. */
void *ovl_find_real(const char *name);

/* An indirect function resolved to NULL makes dlsym return NULL without an error, and
** callers that then format dlerror() crash on it (Python 3.11's ctypes does). This leaves
** the thread's dlerror() saying "<libovl.so>: undefined symbol: <name>", as a plain miss
** would. */
void ovl_say_undefined(const char *name);

#define OVL_INTERPOSE(fn)                                                       \
  __attribute__((no_sanitize_address, no_sanitize_undefined))                   \
  static __typeof__(&hook_##fn) resolve_##fn(void) {                           \
    if (!ovl_self_relocated() || ovl_symbol_lookup(#fn)) return hook_##fn;      \
    ovl_say_undefined(#fn);                                                     \
    return NULL;                                                                \
  }                                                                             \
  OVL_EXPORT __typeof__(hook_##fn) fn __attribute__((ifunc("resolve_" #fn)));

#endif
