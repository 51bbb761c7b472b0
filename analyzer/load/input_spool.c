/* Single-read inputs copied once into $TMPDIR: see input_spool.h. */
#include "input_spool.h"

#include "base/temp_files.h"
#include "trace_detect.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SPOOLS 64

typedef struct spool {
  char *user;  /* the name the user gave */
  char *copy;  /* the temporary copy */
} spool;

static spool spools[MAX_SPOOLS];
static size_t nspools;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *temp_dir(void) {
  const char *dir = getenv("TMPDIR");
  return dir && *dir ? dir : "/tmp";
}

/* Copies everything from fd `in` into a new temporary file; *copy is its name. */
static int copy_stream(const char *path, int in, char **copy, ovl_err *err) {
  const char *dir = temp_dir();
  size_t cap = strlen(dir) + 32;
  char *name = malloc(cap);
  if (!name) return ovl_oom(err, "input copy");
  snprintf(name, cap, "%s/ovl-input-XXXXXX", dir);
  int out = ovl_temp_mkstemp(name);
  if (out < 0) {
    int rc = ovl_fail(err, OVL_EUSER, "%s: cannot copy this single-read input into %s (TMPDIR): %s", path, dir,
                      strerror(errno));
    free(name);
    return rc;
  }
  enum { CHUNK = 1 << 20 };
  char *buf = malloc(CHUNK);
  int rc = buf ? OVL_OK : ovl_oom(err, "input copy");
  unsigned char head[OVL_HEAD_BYTES];
  size_t nhead = 0;
  while (!rc) {
    ssize_t n = read(in, buf, CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = ovl_fail(err, OVL_EUSER, "%s: read error: %s", path, strerror(errno));
      break;
    }
    if (n == 0) break;
    /* What is not a trace from its first bytes on is not read to its end (/dev/zero has none). */
    if (nhead < sizeof head) {
      size_t take = (size_t)n < sizeof head - nhead ? (size_t)n : sizeof head - nhead;
      memcpy(head + nhead, buf, take);
      nhead += take;
      if (nhead == sizeof head && ovl_detect_head(head, nhead) == OVL_HEAD_NONE) {
        rc = ovl_fail(err, OVL_EUSER, "%s: not a trace (neither an ovl/Nsight SQLite database nor Kineto JSON)",
                      path);
        break;
      }
    }
    for (ssize_t done = 0; !rc && done < n;) {
      ssize_t w = write(out, buf + done, (size_t)(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        rc = ovl_fail(err, OVL_EUSER, "%s: cannot copy this single-read input into %s (TMPDIR): %s", path, dir,
                      strerror(errno));
      else done += w;
    }
  }
  free(buf);
  if (close(out) != 0 && !rc)
    rc = ovl_fail(err, OVL_EUSER, "%s: cannot copy this single-read input into %s (TMPDIR): %s", path, dir,
                  strerror(errno));
  if (rc) {
    ovl_temp_release(name, 1);
    free(name);
    return rc;
  }
  *copy = name;
  return OVL_OK;
}

int ovl_input_resolve(const char *path, const char **readable, ovl_err *err) {
  *readable = path;
  struct stat sb;
  if (stat(path, &sb) != 0 || S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)) return OVL_OK;
  pthread_mutex_lock(&lock);
  int rc = OVL_OK;
  for (size_t i = 0; i < nspools; i++) {
    if (strcmp(spools[i].user, path) == 0) {
      *readable = spools[i].copy;
      pthread_mutex_unlock(&lock);
      return OVL_OK;
    }
  }
  if (nspools == MAX_SPOOLS) rc = ovl_fail(err, OVL_EUSER, "%s: too many single-read inputs (at most %d)", path,
                                           MAX_SPOOLS);
  int fd = -1;
  if (!rc && (fd = open(path, O_RDONLY)) < 0) rc = ovl_fail(err, OVL_EUSER, "%s: %s", path, strerror(errno));
  char *copy = NULL;
  if (!rc) rc = copy_stream(path, fd, &copy, err);
  if (fd >= 0) close(fd);
  if (!rc) {
    char *user = strdup(path);
    if (!user) {
      ovl_temp_release(copy, 1);
      free(copy);
      rc = ovl_oom(err, "input copy");
    } else {
      spools[nspools].user = user;
      spools[nspools].copy = copy;
      *readable = spools[nspools++].copy;
    }
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

void ovl_input_explain(ovl_err *err) {
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < nspools; i++) {
    const char *at = strstr(err->msg, spools[i].copy);
    if (!at) continue;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%.*s%s%s", (int)(at - err->msg), err->msg, spools[i].user,
             at + strlen(spools[i].copy));
    memcpy(err->msg, msg, sizeof msg);
  }
  pthread_mutex_unlock(&lock);
}
