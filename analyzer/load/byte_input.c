/* Plain or gzip input through zlib: see byte_input.h. */
#include "byte_input.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* zlib's own input buffer: large reads keep the per-call overhead out of the profile. */
#define GZ_BUFFER_BYTES (1u << 20)

struct ovl_byte_input {
  gzFile gz;
  char *path;
  int is_gzip;
  uint64_t offset;
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

int ovl_input_read(ovl_byte_input *in, char *buf, size_t cap, size_t *got, ovl_err *err) {
  *got = 0;
  if (cap > INT_MAX) cap = INT_MAX;
  int n = gzread(in->gz, buf, (unsigned)cap);
  int code = Z_OK;
  const char *why = gzerror(in->gz, &code);
  if (n < 0 || (code != Z_OK && code != Z_BUF_ERROR)) {
    if (code == Z_ERRNO) return ovl_fail(err, OVL_EUSER, "%s: read error: %s", in->path, strerror(errno));
    if (code == Z_MEM_ERROR) return ovl_oom(err, "gzip decompression");
    return ovl_fail(err, OVL_EUSER, "%s: corrupt gzip data (%s) after %llu uncompressed bytes", in->path,
                    why ? why : "unknown error", (unsigned long long)in->offset);
  }
  /* zlib reports a stream cut short as Z_BUF_ERROR once the file is exhausted. */
  if (n == 0 && code == Z_BUF_ERROR)
    return ovl_fail(err, OVL_EUSER, "%s: truncated gzip data (unexpected end of file after %llu uncompressed bytes)",
                    in->path, (unsigned long long)in->offset);
  in->offset += (uint64_t)n;
  *got = (size_t)n;
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
