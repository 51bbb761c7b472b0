/*
** Streaming JSON tokenizer: see json_stream.h.
**
** The grammar is a small state machine (what may come next) plus a bit stack of the open
** containers (1 = object, 0 = array). Bytes are borrowed from the input a chunk at a time
** (ovl_input_borrow: its buffer, or the read-ahead ring, without a copy); every scanner
** re-checks the chunk end and refills, so tokens may straddle chunks. A chunk is ours until
** the next refill: strings are terminated in place there (read_string).
*/
#include "json_stream.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>  /* part of every x86-64 CPU; other targets take the word-at-a-time loops */
#endif

typedef enum parse_state {
  S_VALUE,         /* a value (document start, after ':' or after ',' in an array) */
  S_VALUE_OR_END,  /* after '[' */
  S_KEY_OR_END,    /* after '{' */
  S_KEY,           /* after ',' in an object */
  S_COLON,         /* after a key */
  S_AFTER_VALUE,   /* ',' or the end of the open container */
  S_DONE           /* the top-level value is complete */
} parse_state;

struct ovl_json {
  ovl_byte_input *in;
  char *buf;
  const char *p, *end;
  uint64_t buf_offset;     /* input offset of buf[0] */
  int at_eof;
  parse_state state;
  unsigned char *stack;    /* bit i: container at depth i+1 is an object */
  size_t stack_bytes, depth, max_depth;
  char *text;              /* storage for texts that cannot be handed out in place */
  const char *cur;         /* the last key, string or number: text, or in buf (see read_string) */
  size_t len, max_string;
  int truncated;
  int has_parts;           /* the last NUMBER was taken by fast_number: parts holds it */
  ovl_json_decimal parts;
  int keep;                /* 0 while skipping: strings are scanned, not copied */
  uint32_t high_surrogate; /* a \uD800-\uDBFF escape waiting for its low half, or 0 */
};

int ovl_json_open(ovl_byte_input *in, const ovl_json_limits *limits, ovl_json **out, ovl_err *err) {
  *out = NULL;
  ovl_json *j = calloc(1, sizeof *j);
  if (!j) return ovl_oom(err, "JSON reader");
  j->in = in;
  j->max_depth = limits && limits->max_depth ? limits->max_depth : OVL_JSON_DEFAULT_DEPTH;
  j->max_string = limits && limits->max_string ? limits->max_string : OVL_JSON_DEFAULT_STRING;
  if (j->max_string < OVL_JSON_MAX_NUMBER) j->max_string = OVL_JSON_MAX_NUMBER;
  j->text = malloc(j->max_string + 1);
  j->stack_bytes = 64;
  j->stack = calloc(j->stack_bytes, 1);
  if (!j->text || !j->stack) {
    ovl_json_close(j);
    return ovl_oom(err, "JSON reader");
  }
  static char nothing[1];  /* no chunk yet: p, end and buf still point somewhere */
  j->buf = nothing;
  j->p = j->end = j->buf;
  j->text[0] = 0;
  j->cur = j->text;
  j->state = S_VALUE;
  j->keep = 1;
  *out = j;
  return OVL_OK;
}

void ovl_json_close(ovl_json *j) {
  if (!j) return;
  free(j->text);
  free(j->stack);
  free(j);
}

uint64_t ovl_json_offset(const ovl_json *j) {
  return j->buf_offset + (uint64_t)(j->p - j->buf);
}

const char *ovl_json_text(const ovl_json *j, size_t *len) {
  if (len) *len = j->len;
  return j->cur;
}

int ovl_json_number_parts(const ovl_json *j, ovl_json_decimal *d) {
  if (!j->has_parts) return 0;
  *d = j->parts;
  return 1;
}

int ovl_json_integer(const ovl_json *j, int64_t *v) {
  if (!j->has_parts || j->parts.fraction_digits || j->parts.whole_digits > 18) return 0;
  *v = j->parts.negative ? -(int64_t)j->parts.whole : (int64_t)j->parts.whole;
  return 1;
}

int ovl_json_truncated(const ovl_json *j) {
  return j->truncated;
}

size_t ovl_json_depth(const ovl_json *j) {
  return j->depth;
}

static int syntax_error(const ovl_json *j, ovl_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int syntax_error(const ovl_json *j, ovl_err *err, const char *fmt, ...) {
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return ovl_fail(err, OVL_EUSER, "%s: invalid JSON at byte %llu: %s", ovl_input_path(j->in),
                  (unsigned long long)ovl_json_offset(j), what);
}

static int unexpected_end(const ovl_json *j, ovl_err *err) {
  return syntax_error(j, err, "unexpected end of data (truncated file?)");
}

/* Reads the next chunk. *more = 0 at the end of the input. */
static int refill(ovl_json *j, int *more, ovl_err *err) {
  *more = 0;
  if (j->at_eof) return OVL_OK;
  j->buf_offset += (uint64_t)(j->end - j->buf);
  j->p = j->end = j->buf;
  size_t got = 0;
  char *data = NULL;
  int rc = ovl_input_borrow(j->in, &data, &got, err);
  if (rc) return rc;
  if (got == 0) {
    j->at_eof = 1;
    return OVL_OK;
  }
  j->buf = data;
  j->p = data;
  j->end = j->buf + got;
  /* A UTF-8 byte order mark before the document (editors on Windows write one) is not JSON
  ** but means nothing: skip it. Offsets still count it. */
  if (j->buf_offset == 0 && got >= 3 && memcmp(j->buf, "\xEF\xBB\xBF", 3) == 0) j->p += 3;
  *more = 1;
  return OVL_OK;
}

/* The next non-space byte without consuming it, or -1 at the end of the input. */
static int peek_token_start(ovl_json *j, int *c, ovl_err *err) {
  for (;;) {
    const char *p = j->p, *e = j->end;
    while (p < e && (unsigned char)*p <= ' ' && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    j->p = p;
    if (p < e) {
      *c = (unsigned char)*p;
      return OVL_OK;
    }
    int more, rc = refill(j, &more, err);
    if (rc) return rc;
    if (!more) {
      *c = -1;
      return OVL_OK;
    }
  }
}

/* Consumes one byte; *c = -1 at the end of the input. */
static int take_byte(ovl_json *j, int *c, ovl_err *err) {
  if (j->p == j->end) {
    int more, rc = refill(j, &more, err);
    if (rc) return rc;
    if (!more) {
      *c = -1;
      return OVL_OK;
    }
  }
  *c = (unsigned char)*j->p++;
  return OVL_OK;
}

static void keep_bytes(ovl_json *j, const char *s, size_t n) {
  if (!j->keep || n == 0) return;
  size_t room = j->max_string - j->len;
  if (n > room) {
    n = room;
    j->truncated = 1;
  }
  memcpy(j->text + j->len, s, n);
  j->len += n;
}

static void keep_code_point(ovl_json *j, uint32_t cp) {
  char u[4];
  size_t n;
  if (cp < 0x80) {
    u[0] = (char)cp;
    n = 1;
  } else if (cp < 0x800) {
    u[0] = (char)(0xc0 | (cp >> 6));
    u[1] = (char)(0x80 | (cp & 0x3f));
    n = 2;
  } else if (cp < 0x10000) {
    u[0] = (char)(0xe0 | (cp >> 12));
    u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[2] = (char)(0x80 | (cp & 0x3f));
    n = 3;
  } else {
    u[0] = (char)(0xf0 | (cp >> 18));
    u[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    u[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    u[3] = (char)(0x80 | (cp & 0x3f));
    n = 4;
  }
  keep_bytes(j, u, n);
}

/* A high surrogate not followed by its low half becomes U+FFFD. */
static void flush_surrogate(ovl_json *j) {
  if (j->high_surrogate) keep_code_point(j, 0xfffd);
  j->high_surrogate = 0;
}

static int read_hex4(ovl_json *j, uint32_t *v, ovl_err *err) {
  *v = 0;
  for (int i = 0; i < 4; i++) {
    int c, rc = take_byte(j, &c, err);
    if (rc) return rc;
    if (c < 0) return unexpected_end(j, err);
    uint32_t d;
    if (c >= '0' && c <= '9') d = (uint32_t)(c - '0');
    else if (c >= 'a' && c <= 'f') d = (uint32_t)(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') d = (uint32_t)(c - 'A' + 10);
    else return syntax_error(j, err, "bad \\u escape in a string");
    *v = (*v << 4) | d;
  }
  return OVL_OK;
}

/* One escape sequence; the backslash is consumed. */
static int read_escape(ovl_json *j, ovl_err *err) {
  int c, rc = take_byte(j, &c, err);
  if (rc) return rc;
  if (c < 0) return unexpected_end(j, err);
  if (c == 'u') {
    uint32_t v;
    if ((rc = read_hex4(j, &v, err))) return rc;
    if (v >= 0xdc00 && v <= 0xdfff && j->high_surrogate) {
      keep_code_point(j, 0x10000 + ((j->high_surrogate - 0xd800) << 10) + (v - 0xdc00));
      j->high_surrogate = 0;
      return OVL_OK;
    }
    flush_surrogate(j);
    if (v >= 0xd800 && v <= 0xdbff) j->high_surrogate = v;
    else keep_code_point(j, (v >= 0xdc00 && v <= 0xdfff) ? 0xfffd : v);
    return OVL_OK;
  }
  flush_surrogate(j);
  char out;
  switch (c) {
    case '"': out = '"'; break;
    case '\\': out = '\\'; break;
    case '/': out = '/'; break;
    case 'b': out = '\b'; break;
    case 'f': out = '\f'; break;
    case 'n': out = '\n'; break;
    case 'r': out = '\r'; break;
    case 't': out = '\t'; break;
    default: return syntax_error(j, err, "bad escape '\\%c' in a string", c);
  }
  keep_bytes(j, &out, 1);
  return OVL_OK;
}

#if defined(__SSE2__)
/* Bit i set where byte i of the 16 at p equals c. */
static inline uint32_t eq16(__m128i v, char c) {
  return (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
}
#endif

/* The first '"' or '\\' in [p, e), or e. Eight bytes at a time: a byte equal to c makes
** the lane of w ^ (c * 0x01..01) zero, and the lowest "has a zero byte" bit marks the first
** one exactly (borrows only disturb lanes above it). Little-endian byte order. */
static inline const char *find_string_end(const char *p, const char *e) {
  const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
#if defined(__SSE2__)
  /* Sixteen at a time first: kernel names run to hundreds of bytes. */
  while (e - p >= 16) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    uint32_t hit = eq16(v, '"') | eq16(v, '\\');
    if (hit) return p + __builtin_ctz(hit);
    p += 16;
  }
#endif
  while (e - p >= 8) {
    uint64_t w, q, b;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    b = w ^ (ones * '\\');
    uint64_t hit = ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
    if (hit) return p + (__builtin_ctzll(hit) >> 3);
    p += 8;
  }
  while (p < e && *p != '"' && *p != '\\') p++;
  return p;
}

/* The first '"', '{', '[', '}' or ']' in [p, e), or e: as find_string_end, with brackets
** folded onto braces by setting bit 5 ('[' | 0x20 == '{', ']' | 0x20 == '}', and no other byte
** maps onto either). */
static inline const char *find_structure(const char *p, const char *e) {
  const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  while (e - p >= 8) {
    uint64_t w, q, o, c;
    memcpy(&w, p, 8);
    q = w ^ (ones * '"');
    o = (w | (ones * 0x20)) ^ (ones * '{');
    c = (w | (ones * 0x20)) ^ (ones * '}');
    uint64_t hit = ((q - ones) & ~q & highs) | ((o - ones) & ~o & highs) | ((c - ones) & ~c & highs);
    if (hit) return p + (__builtin_ctzll(hit) >> 3);
    p += 8;
  }
  while (p < e && *p != '"' && *p != '{' && *p != '[' && *p != '}' && *p != ']') p++;
  return p;
}

/* A string whose opening quote is consumed. */
static int read_string(ovl_json *j, ovl_err *err) {
  j->len = 0;
  j->truncated = 0;
  j->high_surrogate = 0;
  /* Nearly every string lies whole in the chunk and has no escapes: it is handed out where it
  ** lies, its closing quote (consumed, never read again) overwritten by the terminating NUL. */
  char *first = j->buf + (j->p - j->buf), *close = first + (find_string_end(first, j->end) - first);
  if (close < j->end && *close == '"') {
    j->p = close + 1;
    if (!j->keep) return OVL_OK;
    j->len = (size_t)(close - first);
    if (j->len > j->max_string) {
      j->len = j->max_string;
      j->truncated = 1;
    }
    first[j->len] = 0;
    j->cur = first;
    return OVL_OK;
  }
  j->cur = j->text;
  for (;;) {
    const char *p = j->p, *stop = find_string_end(p, j->end);
    if (stop > p) flush_surrogate(j);
    keep_bytes(j, p, (size_t)(stop - p));
    j->p = stop;
    if (stop == j->end) {
      int more, rc = refill(j, &more, err);
      if (rc) return rc;
      if (!more) return syntax_error(j, err, "unterminated string (truncated file?)");
      continue;
    }
    j->p = stop + 1;
    if (*stop == '"') break;
    int rc = read_escape(j, err);
    if (rc) return rc;
  }
  flush_surrogate(j);
  j->text[j->len] = 0;
  return OVL_OK;
}

/* The bytes a number's text may hold (the grammar is checked on the whole text after). */
static const unsigned char number_chars[256] = {
  ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
  ['-'] = 1, ['+'] = 1, ['.'] = 1, ['e'] = 1, ['E'] = 1,
};

/* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int valid_number(const char *s) {
  if (*s == '-') s++;
  if (*s == '0') s++;
  else if (*s >= '1' && *s <= '9') while (*s >= '0' && *s <= '9') s++;
  else return 0;
  if (*s == '.') {
    s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!(*s >= '0' && *s <= '9')) return 0;
    while (*s >= '0' && *s <= '9') s++;
  }
  return *s == 0;
}

/* Letters from the current position (true, false, null, NaN, Infinity), after `prefix`. */
static int read_word(ovl_json *j, const char *prefix, ovl_err *err) {
  j->len = 0;
  j->truncated = 0;
  j->cur = j->text;
  keep_bytes(j, prefix, strlen(prefix));
  for (;;) {
    if (j->p == j->end) {
      int more, rc = refill(j, &more, err);
      if (rc) return rc;
      if (!more) break;
    }
    char c = *j->p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) break;
    if (j->len >= 16) return syntax_error(j, err, "unexpected word");
    j->text[j->len++] = c;
    j->p++;
  }
  j->text[j->len] = 0;
  return OVL_OK;
}

static int read_number(ovl_json *j, ovl_err *err) {
  j->len = 0;
  j->truncated = 0;
  j->cur = j->text;
  for (;;) {
    const char *p = j->p, *e = j->end;
    while (p < e && number_chars[(unsigned char)*p]) p++;
    size_t n = (size_t)(p - j->p), room = OVL_JSON_MAX_NUMBER - j->len;
    if (n > room) {
      n = room;
      j->truncated = 1;
    }
    memcpy(j->text + j->len, j->p, n);
    j->len += n;
    j->p = p;
    if (p < e) break;
    int more, rc = refill(j, &more, err);
    if (rc) return rc;
    if (!more) break;
  }
  j->text[j->len] = 0;
  if (j->len == 1 && j->text[0] == '-' && j->p == j->end) {  /* "-Infinity" split across chunks */
    int more, rc = refill(j, &more, err);
    if (rc) return rc;
  }
  if (j->len == 1 && j->text[0] == '-' && j->p < j->end && *j->p == 'I') {
    int rc = read_word(j, "-", err);
    if (rc) return rc;
    if (strcmp(j->text, "-Infinity") != 0) return syntax_error(j, err, "invalid number");
    return OVL_OK;
  }
  /* A number longer than the kept text is judged by what was kept: a run of '-' or '+' is not
  ** a number however long it is. */
  if (!valid_number(j->text))
    return syntax_error(j, err, "invalid number '%.40s%s'", j->text, j->truncated ? "..." : "");
  return OVL_OK;
}

static int push_container(ovl_json *j, int is_object, ovl_err *err) {
  if (j->depth >= j->max_depth)
    return syntax_error(j, err, "nested deeper than %zu levels", j->max_depth);
  size_t byte = j->depth / 8;
  if (byte >= j->stack_bytes) {
    unsigned char *grown = realloc(j->stack, j->stack_bytes * 2);
    if (!grown) return ovl_oom(err, "JSON nesting");
    memset(grown + j->stack_bytes, 0, j->stack_bytes);
    j->stack = grown;
    j->stack_bytes *= 2;
  }
  unsigned char bit = (unsigned char)(1u << (j->depth % 8));
  if (is_object) j->stack[byte] |= bit;
  else j->stack[byte] &= (unsigned char)~bit;
  j->depth++;
  return OVL_OK;
}

static int top_is_object(const ovl_json *j) {
  size_t d = j->depth - 1;
  return (j->stack[d / 8] >> (d % 8)) & 1;
}

static void value_done(ovl_json *j) {
  j->state = j->depth ? S_AFTER_VALUE : S_DONE;
}

/* A value starting with byte c (not yet consumed). */
static int read_value(ovl_json *j, int c, ovl_json_token *tok, ovl_err *err) {
  int rc;
  switch (c) {
    case -1:
      return unexpected_end(j, err);
    case '{':
      if ((rc = push_container(j, 1, err))) return rc;
      j->p++;
      j->state = S_KEY_OR_END;
      *tok = OVL_JSON_OBJECT_BEGIN;
      return OVL_OK;
    case '[':
      if ((rc = push_container(j, 0, err))) return rc;
      j->p++;
      j->state = S_VALUE_OR_END;
      *tok = OVL_JSON_ARRAY_BEGIN;
      return OVL_OK;
    case '"':
      j->p++;
      if ((rc = read_string(j, err))) return rc;
      *tok = OVL_JSON_STRING;
      value_done(j);
      return OVL_OK;
    case 't':
    case 'f':
    case 'n':
    case 'N':
    case 'I':
      if ((rc = read_word(j, "", err))) return rc;
      if (strcmp(j->text, "true") == 0) *tok = OVL_JSON_TRUE;
      else if (strcmp(j->text, "false") == 0) *tok = OVL_JSON_FALSE;
      else if (strcmp(j->text, "null") == 0) *tok = OVL_JSON_NULL;
      else if (strcmp(j->text, "NaN") == 0 || strcmp(j->text, "Infinity") == 0) *tok = OVL_JSON_NUMBER;
      else return syntax_error(j, err, "unexpected word '%s'", j->text);
      value_done(j);
      return OVL_OK;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        if ((rc = read_number(j, err))) return rc;
        *tok = OVL_JSON_NUMBER;
        value_done(j);
        return OVL_OK;
      }
      if (c >= 0x20 && c < 0x7f) return syntax_error(j, err, "unexpected character '%c'", c);
      return syntax_error(j, err, "unexpected byte 0x%02x", (unsigned)c);
  }
}

static int close_container(ovl_json *j, int is_object, ovl_json_token *tok) {
  j->p++;
  j->depth--;
  *tok = is_object ? OVL_JSON_OBJECT_END : OVL_JSON_ARRAY_END;
  value_done(j);
  return OVL_OK;
}

/* A bracket outside strings (the fast path's or the skipper's): an opening one is pushed, a
** closing one popped. Returns 0, leaving *d alone, when the careful loop must judge it instead:
** the stack is at the depth limit or must grow, or the bracket closes the other kind. */
static inline int take_bracket(ovl_json *j, char c, size_t *d) {
  size_t n = *d;
  if (c == '{' || c == '[') {
    if (n >= j->max_depth || n / 8 >= j->stack_bytes) return 0;
    unsigned char bit = (unsigned char)(1u << (n % 8));
    if (c == '{') j->stack[n / 8] |= bit;
    else j->stack[n / 8] &= (unsigned char)~bit;
    *d = n + 1;
    return 1;
  }
  if (((j->stack[(n - 1) / 8] >> ((n - 1) % 8)) & 1) != (c == '}')) return 0;
  *d = n - 1;
  return 1;
}

static inline int is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

/* A number in the commonest shape, -?(0|[1-9][0-9]*)(\.[0-9]+)?, that ends inside the chunk
** (at a byte no number holds) and fits the kept text: copied as it is scanned, and valid by
** construction. Returns the byte after it, or NULL for anything else (the careful read_number
** judges it then, and reports the same errors as ever). */
static inline const char *fast_number(ovl_json *j, const char *p, const char *chunk_end) {
  /* At most OVL_JSON_MAX_NUMBER + 1 bytes are scanned and copied (the kept text holds that
  ** many): a number that reaches e is too long, or ends in the next chunk. */
  const char *start = p, *e = chunk_end - p > OVL_JSON_MAX_NUMBER + 1 ? p + OVL_JSON_MAX_NUMBER + 1 : chunk_end;
  char *t = j->text;
  ovl_json_decimal *d = &j->parts;
  d->negative = *p == '-';
  if (d->negative) *t++ = *p++;
  if (p == e || !(*p >= '0' && *p <= '9')) return NULL;
  const char *digits = p;
  uint64_t v = 0;
  if (*p == '0') *t++ = *p++;
  else
    while (p < e && *p >= '0' && *p <= '9') {
      v = v * 10 + (uint64_t)(*p - '0');  /* wraps past 19 digits: whole_digits says so */
      *t++ = *p++;
    }
  d->whole = v;
  d->whole_digits = (int)(p - digits);
  uint32_t f = 0;
  if (p < e && *p == '.') {
    *t++ = *p++;
    digits = p;
    while (p < e && *p >= '0' && *p <= '9') {
      if (p - digits < 3) f = f * 10 + (uint32_t)(*p - '0');
      *t++ = *p++;
    }
    if (p == digits) return NULL;
    d->fraction_digits = (int)(p - digits);
  } else {
    d->fraction_digits = 0;
  }
  if (p == e || number_chars[(unsigned char)*p]) return NULL;
  assert(p - start <= OVL_JSON_MAX_NUMBER);
  d->fraction = f;
  j->has_parts = 1;
  *t = 0;
  j->len = (size_t)(p - start);
  j->truncated = 0;
  j->cur = j->text;
  return p;
}

/* The tokens nearly every Kineto byte is made of, taken where they lie whole in the chunk:
** the separators `": "` and `", "`, keys and strings without escapes, numbers of the common
** shape, brackets while the stack has room and they match. Returns 1 with the token, or 0 with
** j->p at the first byte the general loop below must take (nothing is consumed that it would
** not have consumed the same way, so its errors and offsets are unchanged). */
static inline int fast_token(ovl_json *j, ovl_json_token *tok) {
  const char *p = j->p, *e = j->end;
  parse_state st = j->state;
  if (e - p < 2) return 0;
  if (st == S_COLON) {
    if (*p != ':') return 0;
    p += 1 + (p[1] == ' ');
    st = S_VALUE;
  } else if (st == S_AFTER_VALUE) {
    int in_object = top_is_object(j);
    if (*p == (in_object ? '}' : ']')) {
      close_container(j, in_object, tok);
      return 1;
    }
    if (*p != ',') return 0;
    p += 1 + (p[1] == ' ');
    st = in_object ? S_KEY : S_VALUE;
  }
  while (p < e && is_space(*p)) p++;
  j->p = p;
  j->state = st;
  if (p == e) return 0;
  char c = *p;
  if (c == '"') {
    if (st == S_COLON || st == S_AFTER_VALUE || st == S_DONE) return 0;
    char *first = j->buf + (p + 1 - j->buf), *close = first + (find_string_end(first, e) - first);
    if (close == e || *close != '"' || (size_t)(close - first) > j->max_string) return 0;
    j->p = close + 1;
    j->truncated = 0;
    if (j->keep) {
      j->len = (size_t)(close - first);
      *close = 0;
      j->cur = first;
    } else {
      j->len = 0;  /* as read_string leaves a string it only scanned */
    }
    if (st == S_KEY || st == S_KEY_OR_END) {
      j->state = S_COLON;
      *tok = OVL_JSON_KEY;
    } else {
      value_done(j);
      *tok = OVL_JSON_STRING;
    }
    return 1;
  }
  if (st != S_VALUE && st != S_VALUE_OR_END) {
    if (st == S_KEY_OR_END && c == '}') {
      close_container(j, 1, tok);
      return 1;
    }
    return 0;
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    const char *after = fast_number(j, p, e);
    if (!after) return 0;
    j->p = after;
    value_done(j);
    *tok = OVL_JSON_NUMBER;
    return 1;
  }
  if (c == '{' || c == '[') {
    size_t d = j->depth;
    if (!take_bracket(j, c, &d)) return 0;
    j->depth = d;
    j->p = p + 1;
    j->state = c == '{' ? S_KEY_OR_END : S_VALUE_OR_END;
    *tok = c == '{' ? OVL_JSON_OBJECT_BEGIN : OVL_JSON_ARRAY_BEGIN;
    return 1;
  }
  if (c == ']' && st == S_VALUE_OR_END) {
    close_container(j, 0, tok);
    return 1;
  }
  return 0;
}

/* The tokenizer proper, for whatever fast_token leaves: kept out of line so that the fast
** path needs no stack frame of its own. */
static __attribute__((noinline)) int next_token(ovl_json *j, ovl_json_token *tok, ovl_err *err) {
  j->has_parts = 0;
  for (;;) {
    int c, rc = peek_token_start(j, &c, err);
    if (rc) return rc;
    switch (j->state) {
      case S_DONE:
        if (c == -1) {
          *tok = OVL_JSON_EOF;
          return OVL_OK;
        }
        return syntax_error(j, err, "unexpected data after the end of the document");
      case S_VALUE:
        return read_value(j, c, tok, err);
      case S_VALUE_OR_END:
        if (c == ']') return close_container(j, 0, tok);
        return read_value(j, c, tok, err);
      case S_KEY_OR_END:
        if (c == '}') return close_container(j, 1, tok);
        /* fall through */
      case S_KEY:
        if (c == -1) return unexpected_end(j, err);
        if (c != '"') return syntax_error(j, err, "expected a string key");
        j->p++;
        if ((rc = read_string(j, err))) return rc;
        j->state = S_COLON;
        *tok = OVL_JSON_KEY;
        return OVL_OK;
      case S_COLON:
        if (c == -1) return unexpected_end(j, err);
        if (c != ':') return syntax_error(j, err, "expected ':' after an object key");
        j->p++;
        j->state = S_VALUE;
        continue;
      case S_AFTER_VALUE: {
        int in_object = top_is_object(j);
        if (c == ',') {
          j->p++;
          j->state = in_object ? S_KEY : S_VALUE;
          continue;
        }
        if (c == (in_object ? '}' : ']')) return close_container(j, in_object, tok);
        if (c == -1) return unexpected_end(j, err);
        return syntax_error(j, err, in_object ? "expected ',' or '}'" : "expected ',' or ']'");
      }
    }
    return syntax_error(j, err, "internal parser state");
  }
}

int ovl_json_next(ovl_json *j, ovl_json_token *tok, ovl_err *err) {
  if (fast_token(j, tok)) return OVL_OK;
  return next_token(j, tok, err);
}

/* 0x80 in each byte of x that is zero, exactly (no borrow between bytes, unlike the
** find_string_end test, so every set bit counts, not only the lowest). */
static inline uint64_t zero_bytes(uint64_t x) {
  const uint64_t low7 = 0x7f7f7f7f7f7f7f7fULL;
  return ~(((x & low7) + low7) | x | low7);
}

/* The word-at-a-time skipper: eight bytes give one mask of quotes, backslashes and brackets,
** whose bits are walked in order, inside or outside a string. Returns 1 when the container at
** `depth` closed (*p just past it), else 0 with *p at the first byte the byte-wise loops must
** take (the chunk's last bytes, a string's opening quote when an escape or the chunk end came
** inside it, or a bracket they must judge). */
static int skip_words(ovl_json *j, const char **pp, size_t *dp, size_t depth) {
  const uint64_t ones = 0x0101010101010101ULL;
  const char *p = *pp, *e = j->end, *str = NULL;  /* str: the open string's quote, or NULL */
  size_t d = *dp;
  int closed = 0;
  for (; e - p >= 8; p += 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t quotes = zero_bytes(w ^ (ones * '"')), slashes = zero_bytes(w ^ (ones * '\\'));
    uint64_t folded = w | (ones * 0x20);
    uint64_t brackets = zero_bytes(folded ^ (ones * '{')) | zero_bytes(folded ^ (ones * '}'));
    uint64_t seen = 0;
    for (;;) {
      uint64_t m = (str ? quotes | slashes : quotes | brackets) & ~seen;
      if (!m) break;
      int bit = __builtin_ctzll(m);
      seen = bit == 63 ? ~0ULL : (2ULL << bit) - 1;
      const char *at = p + (bit >> 3);
      char c = *at;
      if (str) {
        if (c != '"') goto careful;  /* an escape: read_string checks it */
        str = NULL;
      } else if (c == '"') {
        str = at;
      } else if (!take_bracket(j, c, &d)) {
        p = at;
        goto out;
      } else if (d < depth) {
        p = at + 1;
        closed = 1;
        goto out;
      }
    }
  }
careful:
  if (str) p = str;
out:
  *pp = p;
  *dp = d;
  return closed;
}

#if defined(__SSE2__)
/* Bit i: an odd number of the bits 0..i of x are set (inside a string, for x = quotes). */
static inline uint64_t prefix_xor(uint64_t x) {
  x ^= x << 1;
  x ^= x << 2;
  x ^= x << 4;
  x ^= x << 8;
  x ^= x << 16;
  x ^= x << 32;
  return x;
}

/* Bit i: byte i of the 64 at p equals c (or c's bracket, with fold 0x20: see find_structure). */
static inline uint64_t eq64(const __m128i v[4], char c) {
  return (uint64_t)eq16(v[0], c) | (uint64_t)eq16(v[1], c) << 16 | (uint64_t)eq16(v[2], c) << 32 |
         (uint64_t)eq16(v[3], c) << 48;
}

/* The skipper's first gear, 64 bytes at a time: which bytes lie inside strings follows from
** the quotes alone (a prefix xor of their mask) as long as the block holds no backslash, so only
** the brackets outside strings are walked one by one, never the quotes. Stops, leaving the rest
** to skip_words, at the chunk's last 63 bytes, at a block with a backslash (escapes are judged
** there) and at a bracket it must not take (stack full, a mismatch: the careful loop reports
** it). *pp is then never inside a string: a string still open goes back to its quote. Returns
** as skip_words does. */
static int skip_blocks(ovl_json *j, const char **pp, size_t *dp, size_t depth) {
  const char *p = *pp, *e = j->end, *str = NULL;  /* str: the open string's quote, or NULL */
  size_t d = *dp;
  int closed = 0;
  for (; e - p >= 64; p += 64) {
    __m128i v[4], fold = _mm_set1_epi8(0x20);
    for (int i = 0; i < 4; i++) v[i] = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i));
    if (eq64(v, '\\')) break;
    uint64_t quotes = eq64(v, '"');
    uint64_t inside = prefix_xor(quotes) ^ (str ? ~0ULL : 0);
    __m128i f[4];
    for (int i = 0; i < 4; i++) f[i] = _mm_or_si128(v[i], fold);
    uint64_t brackets = (eq64(f, '{') | eq64(f, '}')) & ~inside;
    while (brackets) {
      int bit = __builtin_ctzll(brackets);
      brackets &= brackets - 1;
      const char *at = p + bit;
      if (!take_bracket(j, *at, &d)) {
        p = at;
        goto out;
      }
      if (d < depth) {
        p = at + 1;
        closed = 1;
        goto out;
      }
    }
    if (inside >> 63) {
      if (quotes) str = p + 63 - __builtin_clzll(quotes);  /* the last quote opened it */
    } else {
      str = NULL;
    }
  }
  if (str) p = str;
out:
  *pp = p;
  *dp = d;
  return closed;
}
#endif

/* Skips bytes until fewer than `depth` containers are open: strings are jumped over and
** brackets matched, nothing else is decoded (the fast path for everything ovl ignores). */
static int skip_to_depth(ovl_json *j, size_t depth, ovl_err *err) {
  int rc = OVL_OK;
  j->keep = 0;
  while (!rc && j->depth >= depth) {
    const char *p = j->p, *e = j->end;
    size_t d = j->depth;
#if defined(__SSE2__)
    if (skip_blocks(j, &p, &d, depth)) {
      j->p = p;
      j->depth = d;
      break;
    }
#endif
    if (skip_words(j, &p, &d, depth)) {
      j->p = p;
      j->depth = d;
      break;
    }
    /* Inline, within the chunk: strings without escapes, brackets while the stack has room and
    ** they match. Everything else (escapes, chunk ends, errors, a deeper stack) goes the careful
    ** way below, from the byte where this loop stopped. */
    for (;;) {
      p = find_structure(p, e);
      if (p == e) break;
      char c = *p;
      if (c == '"') {
        const char *close = find_string_end(p + 1, e);
        if (close == e || *close != '"') break;
        p = close + 1;
      } else {
        if (!take_bracket(j, c, &d)) break;
        p++;
        if (d < depth) break;
      }
    }
    j->p = p;
    j->depth = d;
    if (d < depth) break;
    if (p == e) {
      int more;
      if (!(rc = refill(j, &more, err)) && !more) rc = unexpected_end(j, err);
      continue;
    }
    char c = *p;
    j->p = p + 1;
    if (c == '"') {
      rc = read_string(j, err);
    } else if (c == '{' || c == '[') {
      rc = push_container(j, c == '{', err);
    } else if (top_is_object(j) != (c == '}')) {
      j->p = p;
      rc = syntax_error(j, err, "'%c' closes a%s", c, top_is_object(j) ? "n object" : "n array");
    } else {
      j->depth--;
    }
  }
  if (!rc) value_done(j);
  j->keep = 1;
  j->len = 0;
  j->text[0] = 0;
  j->cur = j->text;
  return rc;
}

int ovl_json_skip_value(ovl_json *j, ovl_json_token *tok, ovl_err *err) {
  j->keep = 0;
  int rc = ovl_json_next(j, tok, err);
  j->keep = 1;
  if (rc) return rc;
  if (*tok == OVL_JSON_OBJECT_BEGIN || *tok == OVL_JSON_ARRAY_BEGIN) return skip_to_depth(j, j->depth, err);
  return OVL_OK;
}

int ovl_json_skip_container(ovl_json *j, ovl_err *err) {
  if (j->depth == 0) return OVL_OK;
  return skip_to_depth(j, j->depth, err);
}
