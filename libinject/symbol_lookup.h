/*
** Finding NCCL's functions among the objects loaded in the process, whatever their soname
** and however they were loaded (linked, dlopen'ed RTLD_GLOBAL or RTLD_LOCAL, renamed by a
** wheel: libnccl-1a2b3c4d.so.2). An object counts as NCCL when its dynamic symbol table
** defines the function; libovl.so itself never does.
**
** Safe inside a GNU indirect-function resolver: no malloc, no dlsym, no locks of libovl;
** only dl_iterate_phdr and reads of the loaded objects' hash and symbol tables.
*/
#ifndef OVL_INJECT_NCCL_LOOKUP_H
#define OVL_INJECT_NCCL_LOOKUP_H

/* The address of the first definition of function `name` in a loaded object other than
** libovl.so (in load order), or NULL when no loaded object defines it. */
void *ovl_nccl_lookup(const char *name);

#endif
