/* Plain or gzip input through zlib: see byte_input.h. */
#include "byte_input.h"

#include "base/progress.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* zlib's own input buffer: large reads keep the per-call overhead out of the profile. */
#define GZ_BUFFER_BYTES (1u << 20)

struct ovl_byte_input {
  gzFile gz;
  char *path;
  int is_gzip;
  uint64_t offset;
  double size;     /* of the file, for progress; 0 when unknown */
};

int ovl_input_open(const char *path, ovl_byte_input **out, ovl_err *err) {
  *out = NULL;
  ovl_byte_input *in = calloc(1, sizeof *in);
  if (!in || !(in->path = strdup(path))) {
    free(in);
    return ovl_oom(err, "input");
  }
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
  if (!f) return in->offset;
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) {  /* 32: gzip or zlib header */
    fclose(f);
    return in->offset;
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
  return total > in->offset ? total : in->offset;
}

int ovl_input_read(ovl_byte_input *in, char *buf, size_t cap, size_t *got, ovl_err *err) {
  *got = 0;
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
                    in->path, (unsigned long long)in->offset);
  in->offset += (uint64_t)n;
  *got = (size_t)n;
  /* the file's bytes consumed (compressed ones for gzip): what the reader has left to do */
  if (in->size > 0) ovl_progress("reading", (double)gzoffset(in->gz) / in->size);
  return OVL_OK;
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
  if (in->gz) gzclose(in->gz);
  free(in->path);
  free(in);
}
