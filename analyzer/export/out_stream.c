/* Buffered exporter output: see out_stream.h. */
#include "out_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_BUFFER (1u << 20)

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int ovl_out_open(ovl_out *o, const char *path, ovl_err *err) {
  memset(o, 0, sizeof *o);
  o->gzip = ends_with(path, ".gz");
  o->path = strdup(path);
  o->buf = malloc(OUT_BUFFER);
  o->cap = OUT_BUFFER;
  if (!o->path || !o->buf) {
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    return ovl_oom(err, "output buffer");
  }
  int rc = ovl_safe_out_begin(&o->target, path, err);
  if (rc) {
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    return rc;
  }
  errno = 0;
  int fd = dup(o->target.fd);
  o->file = fd < 0 ? NULL : o->gzip ? (void *)gzdopen(fd, "wb6") : (void *)fdopen(fd, "wb");
  if (!o->file) {
    int e = errno;
    if (fd >= 0) close(fd);
    ovl_safe_out_abort(&o->target);
    free(o->path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    return ovl_fail(err, OVL_EUSER, "%s: cannot write: %s", path, e ? strerror(e) : "cannot open");
  }
  return OVL_OK;
}

static void flush(ovl_out *o) {
  if (o->len && !o->failed) {
    int ok;
    errno = 0;
    if (o->gzip) ok = gzwrite((gzFile)o->file, o->buf, (unsigned)o->len) == (int)o->len;
    else ok = fwrite(o->buf, 1, o->len, (FILE *)o->file) == o->len;
    if (!ok) {
      o->failed = 1;
      o->write_errno = errno;
    }
  }
  o->written += o->len;
  o->len = 0;
}

char *ovl_out_reserve_slow(ovl_out *o, size_t n) {
  if (o->len + n <= o->cap) return o->buf + o->len;
  flush(o);
  if (n > o->cap) {
    char *b = realloc(o->buf, n);
    if (!b) return NULL;
    o->buf = b;
    o->cap = n;
  }
  return o->buf;
}

int ovl_out_write(ovl_out *o, const void *p, size_t n) {
  char *dst = ovl_out_reserve(o, n);
  if (!dst) return -1;
  memcpy(dst, p, n);
  ovl_out_commit(o, n);
  return 0;
}

int ovl_out_puts(ovl_out *o, const char *s) { return ovl_out_write(o, s, strlen(s)); }

int ovl_out_close(ovl_out *o, ovl_err *err) {
  if (!o->file) return OVL_OK;
  flush(o);
  int closed = o->gzip ? gzclose((gzFile)o->file) == Z_OK : fclose((FILE *)o->file) == 0;
  if (!closed && !o->failed) {
    o->failed = 1;
    o->write_errno = errno;
  }
  int rc = OVL_OK;
  if (o->failed) {
    rc = ovl_fail(err, OVL_EUSER, "%s: write failed: %s", o->path,
                  o->write_errno ? strerror(o->write_errno) : "output error");
    ovl_safe_out_abort(&o->target);
  } else {
    rc = ovl_safe_out_commit(&o->target, err);
  }
  free(o->path);
  free(o->buf);
  memset(o, 0, sizeof *o);
  return rc;
}

void ovl_out_discard(ovl_out *o) {
  if (!o->file) return;
  o->len = 0;
  o->failed = 1;  /* nothing more reaches the file; closing removes the temporary file */
  ovl_err ignored;
  ovl_out_close(o, &ignored);
}
