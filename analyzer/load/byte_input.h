/*
** Sequential reading of a file that may be gzip-compressed, in chunks, with memory that
** does not depend on the file size. Compression is recognised by content (zlib's gzip
** reader passes plain files through unchanged); concatenated gzip members are read as one
** stream. A truncated or corrupt gzip stream is an error, never a silent short read.
*/
#ifndef OVL_BYTE_INPUT_H
#define OVL_BYTE_INPUT_H

#include "base/status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct ovl_byte_input ovl_byte_input;

/* Opens `path`; fails with "<path>: <reason>". */
int ovl_input_open(const char *path, ovl_byte_input **out, ovl_err *err);
/* Reads up to cap bytes into buf; *got = 0 means the end of the data. Fails with
** "<path>: truncated gzip data ..." or "<path>: corrupt gzip data (...)" or an I/O error. */
int ovl_input_read(ovl_byte_input *in, char *buf, size_t cap, size_t *got, ovl_err *err);
/* The next bytes without a copy: *data points into the input's own buffer (or the read-ahead
** ring), writable by the caller, valid until the next read or borrow or the close; *got = 0
** at the end. Same errors as ovl_input_read. */
int ovl_input_borrow(ovl_byte_input *in, char **data, size_t *got, ovl_err *err);
/* Plain input too is read on the read-ahead thread once its first bytes are read (gzip input
** always is): for a caller that reads the whole file and has a CPU to spare, as read(2)'s copy
** is a tenth of parsing it. Call before the first read. */
void ovl_input_read_ahead_plain(ovl_byte_input *in);
const char *ovl_input_path(const ovl_byte_input *in);
/* 1 when the file is gzip-compressed. */
int ovl_input_is_gzip(const ovl_byte_input *in);
/* Uncompressed bytes delivered so far. */
uint64_t ovl_input_offset(const ovl_byte_input *in);
void ovl_input_close(ovl_byte_input *in);

#endif
