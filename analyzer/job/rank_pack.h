/*
** A measured TRACE file in bytes, and back: its ranks (every field of each ovl_rank_result,
** every list), its processes without GPU work, its source's names and counts, or its failure.
** `ovl report --mpi` (analyzer/mpi/) measures files on many processes and sends them to the
** one that assembles the job this way; what it assembles is what one process would have.
**
** Exact: unpack(pack(x)) equals x field by field (doubles bit for bit), except the pointers,
** which point into the new rank's own arrays as they did into the old one's (a collective's
** exposed pieces and cross part). Compact: times are written as differences from the previous
** collective's (pack_bytes.h), so a collective takes about 80 bytes instead of its 392 + 72.
** A file is packed before its diagnosis: findings travel without the diagnosis' evidence (a
** static string), which is asserted to be unset.
**
** A source unpacked on another process names conversions it does not own: it is marked not
** temporary (closing it deletes nothing), and its ovl_paths are names only.
*/
#ifndef OVL_RANK_PACK_H
#define OVL_RANK_PACK_H

#include "job.h"
#include "pack_bytes.h"

/* Appends the rank to out (check out->oom once at the end). */
void ovl_rank_pack(const ovl_rank_result *r, ovl_bytes *out);
/* Reads one rank into *r (zeroed first). On error: OVL_EINTERNAL (corrupt bytes) or no memory,
** *err set, *r freed and zeroed. */
int ovl_rank_unpack(ovl_bytes_reader *in, ovl_rank_result *r, ovl_err *err);

/* Appends the measured file (its ranks, processes without GPU work, source, status). */
void ovl_measured_file_pack(const ovl_measured_file *f, ovl_bytes *out);
/* Reads one measured file into *f (zeroed first). Same failure contract as ovl_rank_unpack. */
int ovl_measured_file_unpack(ovl_bytes_reader *in, ovl_measured_file *f, ovl_err *err);

#endif
