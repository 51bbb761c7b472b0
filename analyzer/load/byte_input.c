/*
** Plain input with read(2), straight into the caller's buffer; gzip input through zlib, on a
** read-ahead thread (read_ahead.h) once the first READ_AHEAD_AFTER bytes are read: callers
** that only sniff a file's first bytes never start one. Plain input takes the read-ahead
** thread too when the caller asks (ovl_input_read_ahead_plain). See byte_input.h.
*/
#include "byte_input.h"

#include "base/progress.h"
#include "read_ahead.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* zlib's own input buffer: large reads keep the per-call overhead out of the profile. */
#define GZ_BUFFER_BYTES (1u << 20)
#define READ_AHEAD_AFTER (1u << 20)
/* ovl_input_borrow's buffer where no read-ahead ring lends one: a size the caches hold. */
#define BORROW_BYTES (256u * 1024u)

struct ovl_byte_input {
  gzFile gz;         /* gzip input; the read-ahead thread's while ahead runs */
  int fd;            /* plain input, or -1 */
  ovl_read_ahead *ahead;
  char *own;         /* ovl_input_borrow's buffer, allocated at its first use */
  char *path;
  int is_gzip;
  int plain_ahead;   /* ovl_input_read_ahead_plain: plain input is read ahead too */
  uint64_t offset;   /* uncompressed bytes delivered */
  uint64_t produced; /* uncompressed bytes inflated or read (by the read-ahead thread when it runs) */
  double size;       /* of the file, for progress; 0 when unknown */
};

int ovl_input_open(const char *path, ovl_byte_input **out, ovl_err *err) {
  *out = NULL;
  ovl_byte_input *in = calloc(1, sizeof *in);
  if (!in || !(in->path = strdup(path))) {
    free(in);
    return ovl_oom(err, "input");
  }
  in->fd = -1;
  FILE *probe = fopen(path, "rb");
  if (!probe) {
    int rc = ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno));
    ovl_input_close(in);
    return rc;
  }
  unsigned char magic[2] = {0, 0};
  in->is_gzip = fread(magic, 1, 2, probe) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  struct stat sb;
  if (fstat(fileno(probe), &sb) == 0 && S_ISREG(sb.st_mode)) in->size = (double)sb.st_size;
  fclose(probe);
  if (!in->is_gzip) {
    in->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (in->fd < 0) {
      int rc = ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno));
      ovl_input_close(in);
      return rc;
    }
    *out = in;
    return OVL_OK;
  }
  in->gz = gzopen(path, "rb");
  if (!in->gz) {
    int rc = errno ? ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno)) : ovl_oom(err, "gzip reader");
    ovl_input_close(in);
    return rc;
  }
  gzbuffer(in->gz, GZ_BUFFER_BYTES);
  *out = in;
  return OVL_OK;
}

/* How many bytes decompress before the corruption. gzread drops what the failing call had
** already inflated (up to a whole buffer), so they are counted again with inflate itself,
** which reports every byte it produced; inputs are regular files here (input_spool.h copies
** the others), so reading the file a second time is safe. */
static uint64_t good_bytes(const ovl_byte_input *in) {
  FILE *f = fopen(in->path, "rb");
  if (!f) return in->produced;
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) {  /* 32: gzip or zlib header */
    fclose(f);
    return in->produced;
  }
  unsigned char src[1 << 14], dst[1 << 14];
  uint64_t total = 0;
  int ret = Z_OK;
  while (ret == Z_OK || ret == Z_STREAM_END || ret == Z_BUF_ERROR) {
    if (z.avail_in == 0) {
      z.avail_in = (uInt)fread(src, 1, sizeof src, f);
      z.next_in = src;
      if (z.avail_in == 0) break;
    }
    if (ret == Z_STREAM_END && inflateReset(&z) != Z_OK) break;  /* the next gzip member */
    z.next_out = dst;
    z.avail_out = sizeof dst;
    ret = inflate(&z, Z_NO_FLUSH);
    total += sizeof dst - z.avail_out;
  }
  inflateEnd(&z);
  fclose(f);
  return total > in->produced ? total : in->produced;
}

/* Inflates up to cap bytes (ovl_read_ahead_fill's contract; ctx is the input). */
static int gz_fill(void *ctx, char *buf, size_t cap, size_t *got, double *fraction, ovl_err *err) {
  ovl_byte_input *in = ctx;
  *got = 0;
  *fraction = -1;
  if (cap > INT_MAX) cap = INT_MAX;
  int n = gzread(in->gz, buf, (unsigned)cap);
  int code = Z_OK;
  const char *why = gzerror(in->gz, &code);
  if (n < 0 || (code != Z_OK && code != Z_BUF_ERROR)) {
    if (code == Z_ERRNO) return ovl_fail(err, OVL_EUSER, "%s: read error: %s", in->path, strerror(errno));
    if (code == Z_MEM_ERROR) return ovl_oom(err, "gzip decompression");
    /* zlib prefixes its message with the path, which ours names already. */
    size_t plen = strlen(in->path);
    if (why && strncmp(why, in->path, plen) == 0 && why[plen] == ':') why += plen + (why[plen + 1] == ' ' ? 2 : 1);
    return ovl_fail(err, OVL_EUSER, "%s: corrupt gzip data (%s) after %llu uncompressed bytes", in->path,
                    why ? why : "unknown error", (unsigned long long)good_bytes(in));
  }
  /* zlib reports a stream cut short as Z_BUF_ERROR once the file is exhausted. */
  if (n == 0 && code == Z_BUF_ERROR)
    return ovl_fail(err, OVL_EUSER, "%s: truncated gzip data (unexpected end of file after %llu uncompressed bytes)",
                    in->path, (unsigned long long)in->produced);
  in->produced += (uint64_t)n;
  *got = (size_t)n;
  /* the file's compressed bytes consumed: what the reader has left to do */
  if (in->size > 0) *fraction = (double)gzoffset(in->gz) / in->size;
  return OVL_OK;
}

/* Reads up to cap bytes of plain input (ovl_read_ahead_fill's contract; ctx is the input):
** on the caller's thread, or on the read-ahead thread once it runs. */
static int plain_fill(void *ctx, char *buf, size_t cap, size_t *got, double *fraction, ovl_err *err) {
  ovl_byte_input *in = ctx;
  ssize_t n;
  do n = read(in->fd, buf, cap > (size_t)INT_MAX ? (size_t)INT_MAX : cap);
  while (n < 0 && errno == EINTR);
  if (n < 0) return ovl_fail(err, OVL_EUSER, "%s: read error: %s", in->path, strerror(errno));
  in->produced += (uint64_t)n;
  *got = (size_t)n;
  *fraction = in->size > 0 ? (double)in->produced / in->size : -1;
  return OVL_OK;
}

/* Past the first bytes the input is read in full: inflate ahead on a thread. Without one (it
** could not start) reading goes on on the caller's, as fast as one core allows. */
static void maybe_read_ahead(ovl_byte_input *in) {
  if (!in->ahead && in->offset >= READ_AHEAD_AFTER && (in->is_gzip || in->plain_ahead) &&
      ovl_read_ahead_start(in->is_gzip ? gz_fill : plain_fill, in, &in->ahead, NULL) != OVL_OK)
    in->ahead = NULL;
}

int ovl_input_borrow(ovl_byte_input *in, char **data, size_t *got, ovl_err *err) {
  *data = NULL;
  *got = 0;
  maybe_read_ahead(in);
  if (!in->ahead) {
    if (!in->own && !(in->own = malloc(BORROW_BYTES))) return ovl_oom(err, "input buffer");
    *data = in->own;
    return ovl_input_read(in, in->own, BORROW_BYTES, got, err);
  }
  double fraction = -1;
  int rc = ovl_read_ahead_borrow(in->ahead, data, got, &fraction, err);
  if (rc) return rc;
  in->offset += (uint64_t)*got;
  if (fraction >= 0) ovl_progress("reading", fraction);
  return OVL_OK;
}

int ovl_input_read(ovl_byte_input *in, char *buf, size_t cap, size_t *got, ovl_err *err) {
  *got = 0;
  double fraction = -1;
  int rc;
  maybe_read_ahead(in);
  if (in->ahead) rc = ovl_read_ahead_read(in->ahead, buf, cap, got, &fraction, err);
  else if (in->is_gzip) rc = gz_fill(in, buf, cap, got, &fraction, err);
  else rc = plain_fill(in, buf, cap, got, &fraction, err);
  if (rc) return rc;
  in->offset += (uint64_t)*got;
  if (fraction >= 0) ovl_progress("reading", fraction);
  return OVL_OK;
}

void ovl_input_read_ahead_plain(ovl_byte_input *in) {
  assert(in->offset == 0);
  in->plain_ahead = 1;
}

const char *ovl_input_path(const ovl_byte_input *in) {
  return in->path;
}

int ovl_input_is_gzip(const ovl_byte_input *in) {
  return in->is_gzip;
}

uint64_t ovl_input_offset(const ovl_byte_input *in) {
  return in->offset;
}

void ovl_input_close(ovl_byte_input *in) {
  if (!in) return;
  ovl_read_ahead_stop(in->ahead);  /* first: the thread uses gz or fd */
  if (in->gz) gzclose(in->gz);
  if (in->fd >= 0) close(in->fd);
  free(in->own);
  free(in->path);
  free(in);
}
