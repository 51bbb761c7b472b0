/*
** The one hash of the project (capture and analyzer alike): 64-bit FNV-1a. Values that leave
** the process (communicator ids in traces and reports) are computed with it, so it must not
** change; in-memory tables use it too, with ovl_hash_word folding a whole 64-bit value in
** one step where bytes are not needed.
**
** The seed is FNV's 64-bit offset basis (14695981039346656037) without its last digit, as
** every copy of this hash had it before they were merged here: the ids already written in
** traces and reports stay the same. The hash is as good with it.
*/
#ifndef OVL_HASH_H
#define OVL_HASH_H

#include <stddef.h>
#include <stdint.h>

#define OVL_HASH_SEED 1469598103934665603ULL   /* see above */
#define OVL_HASH_PRIME 1099511628211ULL        /* FNV 64-bit prime */

/* FNV-1a over n bytes, continuing from h (start with OVL_HASH_SEED). */
uint64_t ovl_hash_bytes(uint64_t h, const void *data, size_t n);
/* FNV-1a over the bytes of a NUL-terminated string (not the NUL). */
uint64_t ovl_hash_str(uint64_t h, const char *s);
/* One FNV-1a step over a whole 64-bit value (not its bytes): for in-memory tables. */
static inline uint64_t ovl_hash_word(uint64_t h, uint64_t v) { return (h ^ v) * OVL_HASH_PRIME; }

#endif
