/*
** Finding a function among the objects loaded in the process, whatever their soname and
** however they were loaded (linked, dlopen'ed RTLD_GLOBAL or RTLD_LOCAL, renamed by a wheel:
** libnccl-1a2b3c4d.so.2): the NCCL and CUPTI interposers bind only where some object other
** than libovl.so defines the real function, and forward to it.
**
** Safe inside a GNU indirect-function resolver: no malloc, no dlsym, no locks of libovl;
** only dl_iterate_phdr and reads of the loaded objects' hash and symbol tables.
*/
#ifndef OVL_INJECT_SYMBOL_LOOKUP_H
#define OVL_INJECT_SYMBOL_LOOKUP_H

/* The address of the first definition of function `name` in a loaded object other than
** libovl.so (in load order), or NULL when no loaded object defines it. */
void *ovl_symbol_lookup(const char *name);

/* The first definition of the data object `name` (an exported variable or constant) in an
** object loaded before libovl.so, or NULL: another libovl instance's ncclProfiler_v5 table,
** which the later instance defers to (the earlier one never looks further). */
void *ovl_symbol_lookup_data_before_self(const char *name);

/* Whether libovl's own relocations are applied. glibc relocates the objects loaded at
** start-up in reverse load order, so a library loaded with the program (after the preload)
** that binds an interposed symbol immediately (LD_BIND_NOW, -z now, an address taken) runs
** a resolver before libovl is relocated: then nothing outside this object may be called, not
** even dl_iterate_phdr, and the resolver must bind without looking. */
int ovl_self_relocated(void);

#endif
