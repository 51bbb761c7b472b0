/*
** The streaming JSON tokenizer: token sequences and texts, escapes (surrogate pairs),
** tokens straddling the reader's chunks, long strings cut at the limit, nesting at and
** beyond the depth limit, skipping, plain input read on the read-ahead thread, gzip input
** (whole, concatenated members, truncated), and one error per kind of malformed document, each naming the file and the byte.
*/
#include "check.h"
#include "load/byte_input.h"
#include "load/json_stream.h"
#include "trace_builder.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static void write_file(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  fclose(f);
}

static void write_gzip(const char *path, const char *data, size_t n, const char *mode) {
  gzFile g = gzopen(path, mode);
  if (!g || gzwrite(g, data, (unsigned)n) != (int)n) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  gzclose(g);
}

/* This process's threads, from /proc/self/task. */
static long thread_count(void) {
  DIR *d = opendir("/proc/self/task");
  long n = 0;
  if (!d) return -1;
  for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

typedef struct opened {
  ovl_byte_input *in;
  ovl_json *j;
} opened;

/* ahead: plain input read on the read-ahead thread (ovl_input_read_ahead_plain). */
static opened open_json_ahead(const char *path, size_t max_depth, size_t max_string, int ahead) {
  opened o = {0};
  ovl_err err = {0};
  ovl_json_limits lim = {max_depth, max_string};
  int rc = ovl_input_open(path, &o.in, &err);
  if (!rc && ahead) ovl_input_read_ahead_plain(o.in);
  if (rc || ovl_json_open(o.in, &lim, &o.j, &err)) {
    fprintf(stderr, "cannot open %s: %s\n", path, err.msg);
    exit(2);
  }
  return o;
}

static opened open_json(const char *path, size_t max_depth, size_t max_string) {
  return open_json_ahead(path, max_depth, max_string, 0);
}

static void close_json(opened *o) {
  ovl_json_close(o->j);
  ovl_input_close(o->in);
}

/* Tokenizes a whole document into a compact description: {}[] for containers, k:<text>,
** s:<text>, n:<text>, t f z for literals, separated by spaces. Returns the status. */
static int describe(const char *path, char *out, size_t cap, ovl_err *err) {
  opened o = open_json(path, 0, 0);
  size_t used = 0;
  out[0] = 0;
  int rc;
  ovl_json_token tok;
  while (!(rc = ovl_json_next(o.j, &tok, err)) && tok != OVL_JSON_EOF) {
    const char *text = ovl_json_text(o.j, NULL);
    char item[256];
    switch (tok) {
      case OVL_JSON_OBJECT_BEGIN: snprintf(item, sizeof item, "{"); break;
      case OVL_JSON_OBJECT_END: snprintf(item, sizeof item, "}"); break;
      case OVL_JSON_ARRAY_BEGIN: snprintf(item, sizeof item, "["); break;
      case OVL_JSON_ARRAY_END: snprintf(item, sizeof item, "]"); break;
      case OVL_JSON_KEY: snprintf(item, sizeof item, "k:%s", text); break;
      case OVL_JSON_STRING: snprintf(item, sizeof item, "s:%s", text); break;
      case OVL_JSON_NUMBER: snprintf(item, sizeof item, "n:%s", text); break;
      case OVL_JSON_TRUE: snprintf(item, sizeof item, "t"); break;
      case OVL_JSON_FALSE: snprintf(item, sizeof item, "f"); break;
      case OVL_JSON_NULL: snprintf(item, sizeof item, "z"); break;
      default: snprintf(item, sizeof item, "?"); break;
    }
    used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", used ? " " : "", item);
  }
  close_json(&o);
  return rc;
}

static void expect_tokens(const char *doc, const char *want) {
  const char *path = tb_temp_path("tokens.json");
  write_file(path, doc, strlen(doc));
  char got[4096];
  ovl_err err = {0};
  int rc = describe(path, got, sizeof got, &err);
  CHECK_I64(rc, OVL_OK);
  CHECK_STR(got, want);
  if (rc) fprintf(stderr, "  document %s: %s\n", doc, err.msg);
}

/* A malformed document: the error names the file, "invalid JSON at byte" and `what`. */
static void expect_error(const char *doc, size_t n, const char *what) {
  const char *path = tb_temp_path("bad.json");
  write_file(path, doc, n);
  char got[4096];
  ovl_err err = {0};
  int rc = describe(path, got, sizeof got, &err);
  CHECK_I64(rc, OVL_EUSER);
  CHECK(strncmp(err.msg, path, strlen(path)) == 0);
  CHECK(strstr(err.msg, what) != NULL);
  if (rc != OVL_EUSER || !strstr(err.msg, what)) fprintf(stderr, "  document '%.40s': %s\n", doc, err.msg);
}

static void tokens(void) {
  expect_tokens(" {\"a\": [1, -2.5e3, true, false, null], \"b\": {}, \"c\": []}\n",
                "{ k:a [ n:1 n:-2.5e3 t f z ] k:b { } k:c [ ] }");
  expect_tokens("\"top\"", "s:top");
  expect_tokens("42", "n:42");
  expect_tokens("[NaN, Infinity, -Infinity]", "[ n:NaN n:Infinity n:-Infinity ]");
  /* Escapes: the simple ones, \u in the BMP, a surrogate pair, a lone surrogate (U+FFFD). */
  expect_tokens("[\"q\\\"b\\\\s\\/n\\nt\\t\", \"\\u00e9\\u4e2d\", \"\\ud83d\\ude00\", \"x\\ud800y\"]",
                "[ s:q\"b\\s/n\nt\t s:\xc3\xa9\xe4\xb8\xad s:\xf0\x9f\x98\x80 s:x\xef\xbf\xbdy ]");
}

static void errors(void) {
  expect_error("{\"a\": 1", 7, "unexpected end of data");
  expect_error("{\"a\" 1}", 7, "expected ':'");
  expect_error("{\"a\": 1,}", 9, "expected a string key");
  expect_error("[1 2]", 5, "expected ',' or ']'");
  expect_error("[1, 2}", 6, "expected ',' or ']'");
  expect_error("{\"a\": 1]", 8, "expected ',' or '}'");
  expect_error("[01]", 4, "invalid number");
  expect_error("[1.]", 4, "invalid number");
  expect_error("[tru]", 5, "unexpected word");
  expect_error("[\"abc", 5, "unterminated string");
  expect_error("[\"\\x\"]", 6, "bad escape");
  expect_error("[\"\\u12g4\"]", 10, "bad \\u escape");
  expect_error("{} {}", 5, "after the end of the document");
  expect_error("", 0, "unexpected end of data");
  expect_error("[@]", 3, "unexpected character '@'");
  expect_error("[\x01]", 3, "unexpected byte 0x01");
  /* The offset is where the problem is. */
  const char *path = tb_temp_path("offset.json");
  write_file(path, "[1, 2, x]", 9);
  char got[256];
  ovl_err err = {0};
  describe(path, got, sizeof got, &err);
  CHECK(strstr(err.msg, "at byte 7:") != NULL);
}

/* A document much larger than a chunk, with tokens of every kind straddling chunk ends. */
static void chunk_boundaries(void) {
  size_t cap = 3u << 20, n = 0;
  char *doc = malloc(cap);
  n += (size_t)snprintf(doc + n, cap - n, "[");
  long items = 0;
  while (n < cap - 4096) {
    /* Varying widths shift every token across the 256 KiB chunk boundaries. */
    n += (size_t)snprintf(doc + n, cap - n, "%s{\"k%ld\": \"v\\u00e9%ld\", \"n\": -%ld.%03ld, \"t\": true}",
                          items ? ", " : "", items, items * 7, items, items % 1000);
    items++;
  }
  n += (size_t)snprintf(doc + n, cap - n, "]");
  const char *path = tb_temp_path("big.json");
  write_file(path, doc, n);
  opened o;
  ovl_err err = {0};
  ovl_json_token tok;
  long objects, good;
  int rc;
  /* Read on this thread, then on the read-ahead thread (ovl_input_read_ahead_plain). */
  for (int ahead = 0; ahead < 2; ahead++) {
    o = open_json_ahead(path, 0, 0, ahead);
    objects = good = 0;
    while (!(rc = ovl_json_next(o.j, &tok, &err)) && tok != OVL_JSON_EOF) {
      if (tok == OVL_JSON_OBJECT_BEGIN) objects++;
      if (tok == OVL_JSON_STRING) {
        char want[64];
        snprintf(want, sizeof want, "v\xc3\xa9%ld", (objects - 1) * 7);
        good += strcmp(ovl_json_text(o.j, NULL), want) == 0;
      }
      if (tok == OVL_JSON_NUMBER) {
        char want[64];
        snprintf(want, sizeof want, "-%ld.%03ld", objects - 1, (objects - 1) % 1000);
        good += strcmp(ovl_json_text(o.j, NULL), want) == 0;
      }
    }
    CHECK_I64(rc, OVL_OK);
    CHECK_I64(objects, items);
    CHECK_I64(good, 2 * items);
    CHECK_I64(ovl_json_offset(o.j), n);
    CHECK_I64(ovl_input_offset(o.in), n);
    close_json(&o);
  }

  /* The same through gzip, and as two concatenated gzip members. */
  const char *gz = tb_temp_path("big.json.gz");
  write_gzip(gz, doc, n, "wb");
  size_t half = n / 2;
  const char *gz2 = tb_temp_path("big2.json.gz");
  write_gzip(gz2, doc, half, "wb");
  write_gzip(gz2, doc + half, n - half, "ab");
  const char *paths[] = {gz, gz2};
  for (int i = 0; i < 2; i++) {
    o = open_json(paths[i], 0, 0);
    CHECK(ovl_input_is_gzip(o.in));
    objects = 0;
    while (!(rc = ovl_json_next(o.j, &tok, &err)) && tok != OVL_JSON_EOF) objects += tok == OVL_JSON_OBJECT_BEGIN;
    CHECK_I64(rc, OVL_OK);
    CHECK_I64(objects, items);
    close_json(&o);
  }

  /* Truncated gzip: an error that says so, never a short document read as complete. */
  FILE *f = fopen(gz, "rb");
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *bytes = malloc((size_t)size);
  CHECK(fread(bytes, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  const char *cut = tb_temp_path("cut.json.gz");
  write_file(cut, bytes, (size_t)size / 2);
  o = open_json(cut, 0, 0);
  while (!(rc = ovl_json_next(o.j, &tok, &err)) && tok != OVL_JSON_EOF) {
  }
  CHECK_I64(rc, OVL_EUSER);
  CHECK(strstr(err.msg, "truncated gzip data") != NULL);
  CHECK(strncmp(err.msg, cut, strlen(cut)) == 0);
  close_json(&o);
  /* Corrupt deflate data in the middle. */
  memset(bytes + size / 2, 0x55, 64);
  write_file(cut, bytes, (size_t)size);
  o = open_json(cut, 0, 0);
  while (!(rc = ovl_json_next(o.j, &tok, &err)) && tok != OVL_JSON_EOF) {
  }
  CHECK_I64(rc, OVL_EUSER);
  CHECK(strstr(err.msg, "corrupt gzip data") != NULL || strstr(err.msg, "invalid JSON") != NULL);
  close_json(&o);
  free(bytes);
  free(doc);
  remove(path);
  remove(gz);
  remove(gz2);
  remove(cut);
}

/* Plain input read ahead when asked: past its first MiB a thread reads it (the document is
** larger than the ring, so the thread still waits to fill it when looked at), never otherwise;
** the same tokens either way. */
static void plain_read_ahead(void) {
  size_t n = 12u << 20;
  char *doc = malloc(n);
  memset(doc, ' ', n);
  doc[0] = '[';
  for (size_t at = 1; at + 8 < n; at += 8) memcpy(doc + at, at > 1 ? ",12345 " : "12345  ", 7);
  doc[n - 1] = ']';
  const char *path = tb_temp_path("ahead.json");
  write_file(path, doc, n);
  for (int ahead = 0; ahead < 2; ahead++) {
    ovl_err err = {0};
    opened o = open_json_ahead(path, 0, 0, ahead);
    ovl_json_token tok;
    long numbers = 0, threads = 0;
    int rc;
    while (!(rc = ovl_json_next(o.j, &tok, &err)) && tok != OVL_JSON_EOF) {
      numbers += tok == OVL_JSON_NUMBER && strcmp(ovl_json_text(o.j, NULL), "12345") == 0;
      if (!threads && ovl_json_offset(o.j) > (3u << 19)) threads = thread_count();
    }
    CHECK_I64(rc, OVL_OK);
    CHECK_I64(numbers, (long)((n - 9) / 8 + 1));
    CHECK_I64(threads, (ahead ? 2 : 1));
    close_json(&o);
  }
  free(doc);
  remove(path);
}

/* Strings beyond the limit are cut (and say so); what follows is read normally. */
static void long_strings(void) {
  size_t len = 5u << 20;  /* 5 MiB: several chunks */
  char *doc = malloc(len + 64);
  size_t n = (size_t)snprintf(doc, 64, "[\"");
  memset(doc + n, 'x', len);
  n += len;
  n += (size_t)snprintf(doc + n, 64, "\", \"after\"]");
  const char *path = tb_temp_path("long.json");
  write_file(path, doc, n);
  opened o = open_json(path, 0, 1000);
  ovl_err err = {0};
  ovl_json_token tok;
  size_t tl = 0;
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_STRING);
  ovl_json_text(o.j, &tl);
  CHECK_I64(tl, 1000);
  CHECK(ovl_json_truncated(o.j));
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_STRING);
  CHECK_STR(ovl_json_text(o.j, NULL), "after");
  CHECK(!ovl_json_truncated(o.j));
  close_json(&o);
  free(doc);
  remove(path);
}

/* [{"a":[{"a": ... 1 ... }]}] nested `depth` levels. */
static char *nested(size_t depth, size_t *n) {
  char *doc = malloc(7 * depth + 16);
  size_t k = 0;
  for (size_t i = 0; i < depth; i++) {
    if (i % 2) {
      memcpy(doc + k, "{\"a\":", 5);
      k += 5;
    } else {
      doc[k++] = '[';
    }
  }
  doc[k++] = '1';
  for (size_t i = depth; i-- > 0;) doc[k++] = i % 2 ? '}' : ']';
  *n = k;
  return doc;
}

static void nesting_and_skipping(void) {
  size_t n;
  char *doc = nested(3000, &n);  /* deeper than any trace, well within the limit */
  const char *path = tb_temp_path("deep.json");
  write_file(path, doc, n);
  free(doc);
  opened o = open_json(path, 5000, 0);
  ovl_err err = {0};
  ovl_json_token tok;
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
  CHECK(ovl_json_skip_container(o.j, &err) == OVL_OK);
  CHECK_I64(ovl_json_depth(o.j), 0);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_EOF);
  close_json(&o);
  /* The same document with a lower limit: a clear error, no recursion anywhere. */
  o = open_json(path, 1000, 0);
  int rc;
  while (!(rc = ovl_json_next(o.j, &tok, &err)) && tok != OVL_JSON_EOF) {
  }
  CHECK_I64(rc, OVL_EUSER);
  CHECK(strstr(err.msg, "nested deeper than 1000 levels") != NULL);
  close_json(&o);

  /* skip_value skips exactly one value and reports its first token. */
  const char *doc2 = "{\"a\": {\"x\": [1, {\"y\": \"z\"}]}, \"b\": 7, \"c\": [], \"d\": \"s\"}";
  write_file(path, doc2, strlen(doc2));
  o = open_json(path, 0, 0);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_OBJECT_BEGIN);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
  CHECK(ovl_json_skip_value(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_OBJECT_BEGIN);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
  CHECK_STR(ovl_json_text(o.j, NULL), "b");
  CHECK(ovl_json_skip_value(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_NUMBER);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
  CHECK(ovl_json_skip_value(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_END);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
  CHECK_STR(ovl_json_text(o.j, NULL), "d");
  CHECK(ovl_json_skip_container(o.j, &err) == OVL_OK);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_EOF);
  close_json(&o);
  /* Skipping matches brackets and finds the end of strings (the rest is not decoded). */
  write_file(path, "{\"a\": [1, {\"x\": \"]}\"}, 2}, \"b\": 1}", 31);
  o = open_json(path, 0, 0);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && ovl_json_next(o.j, &tok, &err) == OVL_OK);
  CHECK_I64(ovl_json_skip_value(o.j, &tok, &err), OVL_EUSER);
  CHECK(strstr(err.msg, "'}' closes an array") != NULL);
  CHECK(strstr(err.msg, "at byte 24:") != NULL);
  close_json(&o);
  write_file(path, "{\"a\": [1, {\"x\": \"]}\"}, 2], \"b\": 1}", 31);
  o = open_json(path, 0, 0);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && ovl_json_next(o.j, &tok, &err) == OVL_OK);
  CHECK(ovl_json_skip_value(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
  CHECK_STR(ovl_json_text(o.j, NULL), "b");
  close_json(&o);
  remove(path);
}

/* Skipped values longer than the skipper's 64-byte blocks: strings holding brackets (escaped
** quotes among them) straddle every block boundary; the value after is read intact, and a
** bracket that closes the wrong container is reported where it is. */
static void block_skipping(void) {
  const char *path = tb_temp_path("blocks.json");
  for (int shift = 0; shift < 130; shift++) {
    char doc[1024];
    int n = snprintf(doc, sizeof doc,
                     "{\"a\": [%*s{\"x\": \"]}[{ %.*s\", \"y\": [1, [2, {\"z\": \"}]\\\"{\"}]], \"w\": \"%.*s[\"}, "
                     "[[], {}, \"}\"]], \"b\": 7}",
                     shift, "", shift % 70, "0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz",
                     shift % 50, "{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{");
    write_file(path, doc, (size_t)n);
    opened o = open_json(path, 0, 0);
    ovl_err err = {0};
    ovl_json_token tok;
    CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && ovl_json_next(o.j, &tok, &err) == OVL_OK);
    CHECK(ovl_json_skip_value(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
    CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
    CHECK_STR(ovl_json_text(o.j, NULL), "b");
    int64_t v = 0;
    CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_NUMBER && ovl_json_integer(o.j, &v) && v == 7);
    close_json(&o);
    /* The last ']' of the skipped array made a '}': it closes an array, at its own offset. */
    char *last = strstr(doc, "]], \"b\"") + 1;
    *last = '}';
    write_file(path, doc, (size_t)n);
    o = open_json(path, 0, 0);
    CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && ovl_json_next(o.j, &tok, &err) == OVL_OK);
    CHECK_I64(ovl_json_skip_value(o.j, &tok, &err), OVL_EUSER);
    char where[64];
    snprintf(where, sizeof where, "at byte %ld: '}' closes an array", (long)(last - doc));
    CHECK(strstr(err.msg, where) != NULL);
    if (!strstr(err.msg, where)) fprintf(stderr, "  shift %d: %s (want %s)\n", shift, err.msg, where);
    close_json(&o);
  }
  remove(path);
}

/* Integers are read as they are scanned; every other number is left to the caller's text. */
static void integers(void) {
  const char *path = tb_temp_path("ints.json");
  const char *doc = "[123, -0, 0, -45, 123456789012345678, 1234567890123456789, 1.5, 1e3, -7.0]";
  static const struct { int has; int64_t v; } want[] = {
    {1, 123}, {1, 0}, {1, 0}, {1, -45}, {1, INT64_C(123456789012345678)}, {0, 0}, {0, 0}, {0, 0}, {0, 0},
  };
  write_file(path, doc, strlen(doc));
  opened o = open_json(path, 0, 0);
  ovl_err err = {0};
  ovl_json_token tok;
  CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int64_t v = -1;
    CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_NUMBER);
    CHECK_I64(ovl_json_integer(o.j, &v), want[i].has);
    if (want[i].has) CHECK_I64(v, want[i].v);
  }
  close_json(&o);
  /* Numbers longer than the kept text, whole inside the chunk: cut to 63 characters (still
  ** read as a number), whatever the string limit, and never written past the kept text. */
  size_t long_digits[] = {64, 200, 70000};
  for (size_t k = 0; k < sizeof long_digits / sizeof long_digits[0]; k++) {
    for (size_t max_string = 63; max_string <= 65536; max_string += 65536 - 63) {
      size_t n = long_digits[k] + 2;
      char *big = malloc(n + 1);
      big[0] = '[';
      memset(big + 1, '7', long_digits[k]);
      big[n - 1] = ']';
      big[n] = 0;
      write_file(path, big, n);
      free(big);
      o = open_json(path, 0, max_string);
      int64_t v;
      size_t len = 0;
      CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
      CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_NUMBER);
      ovl_json_text(o.j, &len);
      CHECK_I64(len, OVL_JSON_MAX_NUMBER);
      CHECK_I64(ovl_json_truncated(o.j), 1);
      CHECK_I64(ovl_json_integer(o.j, &v), 0);
      CHECK(ovl_json_next(o.j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_END);
      close_json(&o);
    }
  }
  remove(path);
}

int main(void) {
  tokens();
  block_skipping();
  integers();
  errors();
  chunk_boundaries();
  plain_read_ahead();
  long_strings();
  nesting_and_skipping();
  remove(tb_temp_path("tokens.json"));
  remove(tb_temp_path("bad.json"));
  remove(tb_temp_path("offset.json"));
  return check_summary();
}
