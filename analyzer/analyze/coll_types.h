/*
** A collective's data type and reduction op as its trace names them ("Bfloat16", "Sum"),
** kept once per process: a collective result holds the index of its (dtype, redop) pair,
** 4 bytes where two char[16] took 32. A job uses a handful of pairs.
**
** Invariants: index 0 is ("", ""); an index, once given, names the same pair for the life of
** the process, and the text it gives is never moved or freed (the table only grows, in blocks
** that stay where they are). Each text is at most OVL_COLL_TYPE_LEN - 1 characters: longer
** ones are cut, as the fixed fields they replace cut them. Thread-safe: files are analysed
** concurrently.
*/
#ifndef OVL_COLL_TYPES_H
#define OVL_COLL_TYPES_H

#include <stdint.h>

#define OVL_COLL_TYPE_LEN 16

/* The index of (dtype, redop) into *id (either may be NULL: ""). Returns 0, or -1 when memory
** runs out (*id set to 0: no type). */
int ovl_coll_types_intern(const char *dtype, const char *redop, uint32_t *id);
/* The texts of an index ovl_coll_types_intern gave (borrowed for the life of the process). */
const char *ovl_coll_types_dtype(uint32_t id);
const char *ovl_coll_types_redop(uint32_t id);

#endif
