/*
** A table's rows straight from its b-tree pages: see table_pages.h.
**
** The walk keeps a stack of the interior pages above the current leaf (copies, one buffer a
** level) and reads leaves in runs: the children a parent lists next that lie in consecutive
** pages of the file are read in one pread (at most WINDOW_BYTES), so a table written in
** order costs one system call per run, and another table's pages between runs are never
** copied. Reads go to the file SQLite holds open under its read transaction (the default
** VFS's file beneath the scan VFS, load/scan_vfs.h): opening the file a second time would
** not do, as closing any descriptor of a file drops the process's POSIX locks on it.
*/
#include "table_pages.h"
#include "scan_vfs.h"

#include <assert.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define WINDOW_BYTES (1024 * 1024)
/* A child this many pages past the run still joins it: the pages between are copied for
** nothing, but one system call is saved. */
#define RUN_GAP 2
/* Bytes to spare past the end of every buffer records are decoded from (load_be64). */
#define PAD 8

enum { PAGE_INTERIOR = 0x05, PAGE_LEAF = 0x0D };

typedef struct frame {
  unsigned char *page;   /* a copy of the interior page (page_size bytes) */
  uint32_t pgno;
  int hdr;               /* offset of the b-tree header: 100 on page 1, else 0 */
  int ncells;
  int idx;               /* the next child: cell idx, or the right child when idx == ncells */
} frame;

struct ovl_tp_scan {
  sqlite3 *db;
  const char *path;
  int began;                 /* this scan began the transaction: it commits it */
  sqlite3_file *file;
  uint32_t page_size, usable, npages;
  int64_t lo, hi;
  int ncols, nfields;        /* output columns; record fields to parse (largest wanted + 1) */
  int slot_of[OVL_TP_MAX_COLS * 4];  /* record field -> output column, -1: not read */
  int nwant;                 /* the fields read: want_field[i] into output column want_slot[i] */
  int prefix;                /* the fields read are the record's first nfields, in order */
  int want_field[OVL_TP_MAX_COLS], want_slot[OVL_TP_MAX_COLS];
  int rowid_slot;            /* the output column that is the rowid (INTEGER PRIMARY KEY), or -1 */
  ovl_tp_value dflt[OVL_TP_MAX_COLS];  /* a column absent from a short record */
  unsigned char *visited;    /* a bit per page: each is read at most once a scan */
  frame stack[OVL_TP_MAX_DEPTH];
  int depth;
  const unsigned char *leaf; /* the current leaf page (in the window) */
  uint32_t leaf_pgno;
  int leaf_hdr, leaf_ncells, leaf_idx;
  unsigned char *win;        /* pages [win_first, win_first + win_n) */
  uint32_t win_first, win_n, win_cap;
  unsigned char *ovfl;       /* one overflow page */
  unsigned char *big;        /* a payload assembled from its overflow pages */
  size_t big_cap;
  int done;
};

static atomic_llong scans_opened;

int ovl_tp_enabled(void) {
  const char *e = getenv("OVL_DIRECT_READ");
  return !(e && strcmp(e, "0") == 0);
}

long long ovl_tp_scans(void) { return atomic_load(&scans_opened); }

static uint32_t get_u16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t get_u32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A varint at p (never reading at or past end): its length (1 to 9), or 0 when it does not
** end before end. */
static int get_varint(const unsigned char *p, const unsigned char *end, uint64_t *out) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++) {
    if (p + i >= end) return 0;
    v = (v << 7) | (p[i] & 0x7f);
    if (!(p[i] & 0x80)) {
      *out = v;
      return i + 1;
    }
  }
  if (p + 8 >= end) return 0;
  *out = (v << 8) | p[8];
  return 9;
}

static int corrupt(ovl_tp_scan *s, ovl_err *err, const char *fmt, uint64_t a, uint64_t b) {
  char what[160];
  snprintf(what, sizeof what, fmt, (unsigned long long)a, (unsigned long long)b);
  s->done = 1;
  return -ovl_fail(err, OVL_EUSER, "%s: corrupt or truncated trace database (%s)", s->path, what);
}

/* Reads pages [first, first + n) into buf. */
static int read_pages(ovl_tp_scan *s, uint32_t first, uint32_t n, unsigned char *buf, ovl_err *err) {
  int rc = s->file->pMethods->xRead(s->file, buf, (int)(n * s->page_size),
                                    (sqlite3_int64)(first - 1) * s->page_size);
  if (rc == SQLITE_OK) return 0;
  if (rc == SQLITE_IOERR_SHORT_READ) return corrupt(s, err, "page %llu past the end of the file", first + n - 1, 0);
  s->done = 1;
  return -ovl_fail(err, OVL_EUSER, "%s: cannot read the trace (I/O error %d)", s->path, rc);
}

/* Marks page pgno read; a fault when it is out of range or was read before in this scan. */
static int visit(ovl_tp_scan *s, uint32_t pgno, ovl_err *err) {
  if (pgno < 1 || pgno > s->npages) return corrupt(s, err, "page number %llu out of range (%llu pages)", pgno, s->npages);
  unsigned char bit = (unsigned char)(1u << (pgno & 7));
  if (s->visited[pgno >> 3] & bit) return corrupt(s, err, "page %llu reached twice (a cycle or shared page)", pgno, 0);
  s->visited[pgno >> 3] |= bit;
  return 0;
}

static uint32_t child_at(const frame *f, int i) {
  const unsigned char *h = f->page + f->hdr;
  if (i == f->ncells) return get_u32(h + 8);
  return get_u32(f->page + get_u16(h + 12 + 2 * i));
}

/* Page pgno, a child of frame parent (NULL for the root), from the window: read with the run
** of the parent's next children that follow it in the file. */
static const unsigned char *window_page(ovl_tp_scan *s, uint32_t pgno, const frame *parent, ovl_err *err) {
  if (!(pgno >= s->win_first && pgno - s->win_first < s->win_n)) {
    uint32_t last = pgno;
    for (int i = parent ? parent->idx : 0; parent && i <= parent->ncells; i++) {
      uint32_t c = child_at(parent, i);
      if (c <= last || c - last > RUN_GAP || c - pgno >= s->win_cap || c > s->npages) break;
      last = c;
    }
    s->win_n = 0;
    if (read_pages(s, pgno, last - pgno + 1, s->win, err)) return NULL;
    s->win_first = pgno;
    s->win_n = last - pgno + 1;
  }
  return s->win + (size_t)(pgno - s->win_first) * s->page_size;
}

/* Checks a b-tree page's header: its type into *type, cell count into *ncells. */
static int page_header(ovl_tp_scan *s, uint32_t pgno, const unsigned char *page, int hdr, int *type, int *ncells,
                       ovl_err *err) {
  *type = page[hdr];
  if (*type != PAGE_INTERIOR && *type != PAGE_LEAF)
    return corrupt(s, err, "page %llu: not a table b-tree page (type %llu)", pgno, (uint64_t)*type);
  *ncells = (int)get_u16(page + hdr + 3);
  uint64_t ptr_end = (uint64_t)hdr + (*type == PAGE_INTERIOR ? 12 : 8) + 2 * (uint64_t)*ncells;
  if (ptr_end > s->usable) return corrupt(s, err, "page %llu: %llu cells do not fit", pgno, (uint64_t)*ncells);
  /* Every cell offset within the page, past the pointer array: checked once here. */
  const unsigned char *ptrs = page + hdr + (*type == PAGE_INTERIOR ? 12 : 8);
  for (int i = 0; i < *ncells; i++) {
    uint32_t off = get_u16(ptrs + 2 * i);
    if (off < ptr_end || off + (*type == PAGE_INTERIOR ? 5 : 2) > s->usable)
      return corrupt(s, err, "page %llu: cell offset %llu outside the page", pgno, off);
  }
  return 0;
}

/* The key of interior cell i (the largest rowid of its child). */
static int interior_key(ovl_tp_scan *s, const frame *f, int i, int64_t *key, ovl_err *err) {
  const unsigned char *c = f->page + get_u16(f->page + f->hdr + 12 + 2 * i);
  uint64_t k;
  if (!get_varint(c + 4, f->page + s->usable, &k)) return corrupt(s, err, "page %llu: cell %llu cut short", f->pgno, i);
  *key = (int64_t)k;
  return 0;
}

/* Descends from page pgno (a child of the top frame, or the root when the stack is empty) to
** its leftmost leaf, or with seek to the leaf where rowid s->lo would be. */
static int descend(ovl_tp_scan *s, uint32_t pgno, int seek, ovl_err *err) {
  for (;;) {
    if (visit(s, pgno, err)) return -OVL_EUSER;
    const frame *parent = s->depth ? &s->stack[s->depth - 1] : NULL;
    const unsigned char *page = window_page(s, pgno, parent, err);
    if (!page) return -OVL_EUSER;
    int hdr = pgno == 1 ? 100 : 0, type, ncells;
    if (page_header(s, pgno, page, hdr, &type, &ncells, err)) return -OVL_EUSER;
    if (type == PAGE_LEAF) {
      s->leaf = page;
      s->leaf_pgno = pgno;
      s->leaf_hdr = hdr;
      s->leaf_ncells = ncells;
      s->leaf_idx = 0;
      return 0;
    }
    if (s->depth == OVL_TP_MAX_DEPTH) return corrupt(s, err, "b-tree deeper than %llu pages at page %llu", OVL_TP_MAX_DEPTH, pgno);
    frame *f = &s->stack[s->depth];
    if (!f->page && !(f->page = malloc(s->page_size))) {
      s->done = 1;
      return -ovl_oom(err, "b-tree pages");
    }
    memcpy(f->page, page, s->page_size);
    f->pgno = pgno;
    f->hdr = hdr;
    f->ncells = ncells;
    f->idx = 0;
    s->depth++;
    if (seek) {
      int64_t key = 0;
      while (f->idx < f->ncells) {
        if (interior_key(s, f, f->idx, &key, err)) return -OVL_EUSER;
        if (key >= s->lo) break;
        f->idx++;
      }
    }
    pgno = child_at(f, f->idx++);
  }
}

/* The next leaf after the current one: 1, 0 when the tree has no more, or -status. */
static int next_leaf(ovl_tp_scan *s, ovl_err *err) {
  while (s->depth > 0 && s->stack[s->depth - 1].idx > s->stack[s->depth - 1].ncells) s->depth--;
  if (s->depth == 0) return 0;
  frame *f = &s->stack[s->depth - 1];
  int r = descend(s, child_at(f, f->idx++), 0, err);
  return r < 0 ? r : 1;
}

/* A payload of plen bytes, local bytes at cell and the rest in the overflow chain from
** page first, assembled into s->big. */
static const unsigned char *assemble(ovl_tp_scan *s, const unsigned char *local, uint64_t nlocal, uint64_t plen,
                                     uint32_t first, ovl_err *err) {
  if (plen > (uint64_t)s->npages * s->usable || plen > SIZE_MAX / 2) {
    corrupt(s, err, "page %llu: payload of %llu bytes larger than the file", s->leaf_pgno, plen);
    return NULL;
  }
  if (plen > s->big_cap) {
    unsigned char *b = realloc(s->big, (size_t)plen + PAD);
    if (!b) {
      s->done = 1;
      ovl_oom(err, "record payload");
      return NULL;
    }
    s->big = b;
    s->big_cap = (size_t)plen;
  }
  memcpy(s->big, local, (size_t)nlocal);
  uint64_t have = nlocal;
  uint32_t pgno = first;
  while (have < plen) {
    if (visit(s, pgno, err) || read_pages(s, pgno, 1, s->ovfl, err)) return NULL;
    uint64_t n = plen - have < s->usable - 4 ? plen - have : s->usable - 4;
    memcpy(s->big + have, s->ovfl + 4, (size_t)n);
    have += n;
    pgno = get_u32(s->ovfl);
  }
  return s->big;
}

/* Eight bytes at p, big-endian. Fields of fewer bytes are read with the bytes after them: every
** buffer a record lies in has PAD bytes to spare past its end. */
static inline uint64_t load_be64(const unsigned char *p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return __builtin_bswap64(v);
}

/* get_varint with the one-byte case (nearly every serial type and size) inline. */
static inline int varint_fast(const unsigned char *p, const unsigned char *end, uint64_t *out) {
  if (p < end && p[0] < 0x80) {
    *out = p[0];
    return 1;
  }
  return get_varint(p, end, out);
}

/* The size of a field of one-byte serial type st (0 to 127; 128 to 255 are not one byte). */
static const unsigned char one_byte_len[256] = {
    0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9,
    10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17, 18, 18, 19, 19, 20, 20, 21, 21, 22, 22, 23, 23, 24, 24, 25, 25,
    26, 26, 27, 27, 28, 28, 29, 29, 30, 30, 31, 31, 32, 32, 33, 33, 34, 34, 35, 35, 36, 36, 37, 37, 38, 38, 39, 39, 40, 40, 41, 41,
    42, 42, 43, 43, 44, 44, 45, 45, 46, 46, 47, 47, 48, 48, 49, 49, 50, 50, 51, 51, 52, 52, 53, 53, 54, 54, 55, 55, 56, 56, 57, 57,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* A field's value into x: serial type st, its bytes at d (size bytes). */
static void field_value(ovl_tp_value *x, uint64_t st, const unsigned char *d, uint64_t size) {
  if (st >= 12) {
    x->type = (st & 1) ? SQLITE_TEXT : SQLITE_BLOB;
    x->p = d;
    x->n = (size_t)size;
  } else if (st == 0 || st == 10 || st == 11) {
    x->type = SQLITE_NULL;  /* 10 and 11 are SQLite's internal NULLs */
  } else if (st >= 8) {
    x->type = SQLITE_INTEGER;
    x->i = (int64_t)st - 8;  /* 8 and 9: the integers 0 and 1 */
  } else if (st != 7) {
    x->type = SQLITE_INTEGER;
    x->i = (int64_t)load_be64(d) >> (64 - 8 * size);  /* sign-extended by the arithmetic shift */
  } else {
    uint64_t bits = load_be64(d);
    memcpy(&x->r, &bits, sizeof x->r);
    x->type = isnan(x->r) ? SQLITE_NULL : SQLITE_FLOAT;  /* as SQLite reads a NaN */
  }
}

/* decode_record for the usual record: a header of under 128 bytes whose serial types, up to the
** last field read, are one byte each. 1 when it was, 0 when the general decoding must run,
** -status on a fault. */
static int decode_short_header(ovl_tp_scan *restrict s, int64_t rowid, const unsigned char *restrict pl,
                               uint64_t plen, ovl_tp_value *restrict v, ovl_err *err) {
  uint32_t hlen = pl[0], off[OVL_TP_MAX_COLS * 4];
  const unsigned char *h = pl + 1;
  int n = s->nfields;
  if (hlen >= 0x80 || hlen > plen || (int)hlen - 1 < n) return 0;
  if (s->prefix) {  /* one pass: each field checked against the payload before it is read */
    uint64_t o = hlen;
    for (int f = 0; f < n; f++) {
      unsigned st = h[f], len = one_byte_len[st];
      if (st >= 0x80) return 0;  /* a serial type of more than one byte: the general decoding */
      if (o + len > plen)
        return corrupt(s, err, "page %llu: record of rowid %llu longer than its payload", s->leaf_pgno, (uint64_t)rowid);
      ovl_tp_value *x = &v[f];
      if (st - 1u < 6u) {
        x->type = SQLITE_INTEGER;
        x->i = (int64_t)load_be64(pl + o) >> (64 - 8 * len);
      } else {
        field_value(x, st, pl + o, len);
      }
      o += len;
    }
    if ((int)hlen - 1 == n && o != plen)  /* the last field read ends the header: SQLite's test */
      return corrupt(s, err, "page %llu: record of rowid %llu does not fill its payload", s->leaf_pgno, (uint64_t)rowid);
    if (s->rowid_slot >= 0) v[s->rowid_slot] = (ovl_tp_value){.type = SQLITE_INTEGER, .i = rowid};
    return 1;
  }
  unsigned any_long = 0;
  uint64_t o = hlen;
  for (int f = 0; f < n; f++) {  /* offsets first, checked once: the sum of at most 64 sizes < 64 * 64 */
    any_long |= h[f];
    off[f] = (uint32_t)o;
    o += one_byte_len[h[f]];
  }
  if (any_long & 0x80) return 0;
  if (o > plen || ((int)hlen - 1 == n && o != plen))  /* the last field read ends the header: SQLite's test */
    return corrupt(s, err, "page %llu: record of rowid %llu does not fill its payload", s->leaf_pgno, (uint64_t)rowid);
  const int nwant = s->nwant, *want_field = s->want_field, *want_slot = s->want_slot;
  for (int i = 0; i < nwant; i++) {
    int f = want_field[i];
    unsigned st = h[f];
    ovl_tp_value *x = &v[want_slot[i]];
    if (st - 1u < 6u) {  /* an integer of 1 to 8 bytes: nearly every field */
      x->type = SQLITE_INTEGER;
      x->i = (int64_t)load_be64(pl + off[f]) >> (64 - 8 * one_byte_len[st]);
    } else {
      field_value(x, st, pl + off[f], one_byte_len[st]);
    }
  }
  if (s->rowid_slot >= 0) v[s->rowid_slot] = (ovl_tp_value){.type = SQLITE_INTEGER, .i = rowid};
  return 1;
}

/* The values of one record (payload pl, plen bytes) into v. */
static int decode_record(ovl_tp_scan *s, int64_t rowid, const unsigned char *pl, uint64_t plen, ovl_tp_value *v,
                         ovl_err *err) {
  static const unsigned char fixed_len[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0};
  if (plen > 0) {
    int r = decode_short_header(s, rowid, pl, plen, v, err);
    if (r) return r < 0 ? r : 0;
  }
  uint64_t hlen;
  const unsigned char *end = pl + plen;
  int k = varint_fast(pl, end, &hlen);
  if (!k || hlen < (uint64_t)k || hlen > plen)
    return corrupt(s, err, "page %llu: record header of rowid %llu", s->leaf_pgno, (uint64_t)rowid);
  const unsigned char *h = pl + k, *hend = pl + hlen;
  uint64_t off = hlen;
  int field = 0;
  for (; field < s->nfields && h < hend; field++) {
    uint64_t st;
    k = varint_fast(h, hend, &st);
    if (!k) return corrupt(s, err, "page %llu: record header of rowid %llu", s->leaf_pgno, (uint64_t)rowid);
    h += k;
    uint64_t size = st < 12 ? fixed_len[st] : (st - 12) / 2;
    if (size > plen - off)
      return corrupt(s, err, "page %llu: record of rowid %llu longer than its payload", s->leaf_pgno, (uint64_t)rowid);
    int slot = s->slot_of[field];
    if (slot >= 0) field_value(&v[slot], st, pl + off, size);
    off += size;
  }
  /* The header read to its end: the fields must fill the payload exactly (SQLite's test). */
  if (h >= hend && off != plen)
    return corrupt(s, err, "page %llu: record of rowid %llu shorter than its payload", s->leaf_pgno, (uint64_t)rowid);
  for (; field < s->nfields; field++)  /* a short record: the columns added after it */
    if (s->slot_of[field] >= 0) v[s->slot_of[field]] = s->dflt[s->slot_of[field]];
  if (s->rowid_slot >= 0) v[s->rowid_slot] = (ovl_tp_value){.type = SQLITE_INTEGER, .i = rowid};
  (void)end;
  return 0;
}

int ovl_tp_next(ovl_tp_scan *s, ovl_tp_value *v, ovl_err *err) {
  for (;;) {
    if (s->done) return 0;
    if (s->leaf_idx >= s->leaf_ncells) {
      int r = next_leaf(s, err);
      if (r <= 0) {
        s->done = 1;
        return r;
      }
      continue;
    }
    const unsigned char *page = s->leaf, *pend = page + s->usable;
    const unsigned char *c = page + get_u16(page + s->leaf_hdr + 8 + 2 * s->leaf_idx);
    s->leaf_idx++;
    uint64_t plen, urowid;
    int k1 = varint_fast(c, pend, &plen);
    int k2 = k1 ? varint_fast(c + k1, pend, &urowid) : 0;
    if (!k2) return corrupt(s, err, "page %llu: cell %llu cut short", s->leaf_pgno, (uint64_t)s->leaf_idx - 1);
    int64_t rowid = (int64_t)urowid;
    if (rowid > s->hi) {
      s->done = 1;
      return 0;
    }
    const unsigned char *local = c + k1 + k2;
    /* The local part: all of it up to U - 35 bytes, else by the file format's rule. */
    uint64_t u = s->usable, x = u - 35, nlocal = plen;
    if (plen > x) {
      uint64_t m = ((u - 12) * 32 / 255) - 23, kk = m + ((plen - m) % (u - 4));
      nlocal = kk <= x ? kk : m;
    }
    if (nlocal > (uint64_t)(pend - local) || (nlocal < plen && 4 > (uint64_t)(pend - local) - nlocal))
      return corrupt(s, err, "page %llu: payload of rowid %llu past the page", s->leaf_pgno, urowid);
    if (rowid < s->lo) continue;
    const unsigned char *pl = local;
    if (nlocal < plen && !(pl = assemble(s, local, nlocal, plen, get_u32(local + nlocal), err))) return -OVL_EUSER;
    int r = decode_record(s, rowid, pl, plen, v, err);
    return r < 0 ? r : 1;
  }
}

/* ---------------------------------------------------------------------------------- */
/* Opening: whether the pages may be read, and the table's layout                      */
/* ---------------------------------------------------------------------------------- */

/* A column's affinity from its declared type, by SQLite's rules (datatype3.html, 3.1). */
static int affinity(const char *decl) {
  char up[128];
  size_t n = 0;
  for (; decl && decl[n] && n + 1 < sizeof up; n++) up[n] = (char)(decl[n] >= 'a' && decl[n] <= 'z' ? decl[n] - 32 : decl[n]);
  up[n] = 0;
  if (decl && strlen(decl) >= sizeof up) return 0;  /* unusual: not ours to guess */
  if (strstr(up, "INT")) return SQLITE_INTEGER;
  if (strstr(up, "CHAR") || strstr(up, "CLOB") || strstr(up, "TEXT")) return SQLITE_TEXT;
  if (!n || strstr(up, "BLOB")) return SQLITE_BLOB;
  if (strstr(up, "REAL") || strstr(up, "FLOA") || strstr(up, "DOUB")) return SQLITE_FLOAT;
  return 0;  /* NUMERIC */
}

/* A default value the reader can give as SQLite would: none (NULL), or an integer literal for
** an integer column. 0 when it cannot. */
static int parse_default(const char *d, int kind, ovl_tp_value *out) {
  *out = (ovl_tp_value){.type = SQLITE_NULL};
  if (!d || strcmp(d, "NULL") == 0) return 1;
  if (kind != OVL_TP_INT) return 0;
  const char *p = d;
  int neg = *p == '-';
  if (*p == '-' || *p == '+') p++;
  if (!*p || strlen(p) > 18) return 0;  /* no overflow to think about */
  int64_t v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return 0;
    v = v * 10 + (*p - '0');
  }
  *out = (ovl_tp_value){.type = SQLITE_INTEGER, .i = neg ? -v : v};
  return 1;
}

static int64_t one_int(sqlite3 *db, const char *sql, const char *arg, int64_t fallback) {
  sqlite3_stmt *st = NULL;
  int64_t v = fallback;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
    if (arg) sqlite3_bind_text(st, 1, arg, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) v = sqlite3_column_int64(st, 0);
  }
  sqlite3_finalize(st);
  return v;
}

/* The columns' record fields, kinds and defaults from PRAGMA table_xinfo: 1 when they are
** what the reader expects. */
static int layout(ovl_tp_scan *s, const char *table, const char *const *cols, const int *kinds) {
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, "SELECT cid, name, type, dflt_value, pk, hidden FROM pragma_table_xinfo(?1)", -1, &st,
                         NULL) != SQLITE_OK) {
    sqlite3_finalize(st);
    return 0;
  }
  sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
  int field_of[OVL_TP_MAX_COLS], ok = 1, npk = 0, ipk = -1;
  for (int i = 0; i < s->ncols; i++) field_of[i] = -2;
  while (ok && sqlite3_step(st) == SQLITE_ROW) {
    int cid = sqlite3_column_int(st, 0);
    const char *name = (const char *)sqlite3_column_text(st, 1);
    const char *type = (const char *)sqlite3_column_text(st, 2);
    const char *dflt = (const char *)sqlite3_column_text(st, 3);
    int pk = sqlite3_column_int(st, 4);
    if (sqlite3_column_int(st, 5) != 0) ok = 0;  /* generated or hidden columns: positions shift */
    if (pk) {
      npk++;
      if (type && sqlite3_stricmp(type, "INTEGER") == 0) ipk = cid;
    }
    for (int i = 0; ok && name && i < s->ncols; i++) {
      if (!cols[i] || sqlite3_stricmp(name, cols[i]) != 0) continue;
      int want = kinds[i] == OVL_TP_INT ? SQLITE_INTEGER : SQLITE_TEXT;
      if (cid < 0 || cid >= (int)(sizeof s->slot_of / sizeof *s->slot_of) || affinity(type) != want ||
          !parse_default(dflt, kinds[i], &s->dflt[i]) || field_of[i] != -2)
        ok = 0;
      else
        field_of[i] = cid;
    }
  }
  sqlite3_finalize(st);
  /* An INTEGER PRIMARY KEY is the rowid, unless it is backed by an index (declared DESC). */
  if (npk != 1 || one_int(s->db, "SELECT count(*) FROM pragma_index_list(?1) WHERE origin = 'pk'", table, 1) != 0)
    ipk = -1;
  for (size_t f = 0; f < sizeof s->slot_of / sizeof *s->slot_of; f++) s->slot_of[f] = -1;
  s->rowid_slot = -1;
  s->nfields = 0;
  s->nwant = 0;
  for (int i = 0; ok && i < s->ncols; i++) {
    if (!cols[i]) continue;         /* not read */
    if (field_of[i] < 0) return 0;  /* not a column of the table */
    if (field_of[i] == ipk) {
      if (s->rowid_slot >= 0) return 0;
      s->rowid_slot = i;
      continue;
    }
    s->slot_of[field_of[i]] = i;
    s->want_field[s->nwant] = field_of[i];
    s->want_slot[s->nwant++] = i;
    if (field_of[i] + 1 > s->nfields) s->nfields = field_of[i] + 1;
  }
  s->prefix = s->nwant == s->nfields;
  for (int i = 0; i < s->nwant; i++) s->prefix &= s->want_field[i] == i && s->want_slot[i] == i;
  return ok;
}

/* The file's header and journal: 1 when its pages are the database's content as SQLite reads it
** under this transaction, with page size and usable size set. */
static int file_ok(ovl_tp_scan *s) {
  sqlite3_file *f = NULL;
  if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK || !f || !f->pMethods) return 0;
  s->file = ovl_scan_vfs_inner(f);
  if (!s->file || !s->file->pMethods) return 0;
  unsigned char h[100];
  if (s->file->pMethods->xRead(s->file, h, sizeof h, 0) != SQLITE_OK) return 0;
  if (memcmp(h, "SQLite format 3", 16) != 0) return 0;
  uint32_t ps = get_u16(h + 16);
  if (ps == 1) ps = 65536;
  if (ps < 512 || ps > 65536 || (ps & (ps - 1))) return 0;
  if (h[18] > 2 || h[19] > 2) return 0;  /* a format SQLite itself would not read */
  if (get_u32(h + 56) != 1) return 0;  /* text not UTF-8 */
  if (h[18] == 2 || h[19] == 2) {      /* WAL: only while the -wal file holds no frame */
    const char *wal = sqlite3_filename_wal(sqlite3_db_filename(s->db, "main"));
    struct stat sb;
    if (!wal || (stat(wal, &sb) == 0 && sb.st_size > 32)) return 0;
  }
  s->page_size = ps;
  s->usable = ps - h[20];
  if (s->usable < 480) return 0;
  int64_t n = one_int(s->db, "PRAGMA page_count", NULL, -1);
  if (n < 1 || n > INT32_MAX) return 0;
  s->npages = (uint32_t)n;
  return 1;
}

static void end_transaction(sqlite3 *db, int began) {
  if (began) sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
}

void ovl_tp_close(ovl_tp_scan *s) {
  if (!s) return;
  end_transaction(s->db, s->began);
  for (int i = 0; i < OVL_TP_MAX_DEPTH; i++) free(s->stack[i].page);
  free(s->visited);
  free(s->win);
  free(s->ovfl);
  free(s->big);
  free(s);
}

int ovl_tp_open(sqlite3 *db, const char *path, const char *table, const char *const *cols, const int *kinds,
                int ncols, int64_t lo, int64_t hi, ovl_tp_scan **out, ovl_err *err) {
  *out = NULL;
  if (!ovl_tp_enabled() || ncols < 1 || ncols > OVL_TP_MAX_COLS || lo > hi) return OVL_OK;
  ovl_tp_scan *s = calloc(1, sizeof *s);
  if (!s) return ovl_oom(err, "table scan");
  s->db = db;
  s->path = path;
  s->ncols = ncols;
  s->lo = lo;
  s->hi = hi;
  /* A read transaction first (the schema read takes SQLite's shared lock and keeps it to the
  ** COMMIT): everything below is decided on the content no writer can change now. Inside
  ** another scan's transaction, that one holds it. */
  s->began = sqlite3_get_autocommit(db);
  if (s->began && sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) s->began = 0, s->done = 1;
  int64_t root = -1;
  if (!s->done && one_int(db, "PRAGMA schema_version", NULL, -1) >= 0 && file_ok(s) && layout(s, table, cols, kinds))
    root = one_int(db, "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = ?1 COLLATE NOCASE", table, -1);
  if (root < 1 || root > s->npages) {  /* not here: a view, a virtual table, an unreadable schema */
    ovl_tp_close(s);
    return OVL_OK;
  }
  s->win_cap = WINDOW_BYTES / s->page_size;
  if (s->win_cap < 1) s->win_cap = 1;
  s->visited = calloc((size_t)s->npages / 8 + 1, 1);
  s->win = malloc((size_t)s->win_cap * s->page_size + PAD);
  s->ovfl = malloc(s->page_size);
  if (!s->visited || !s->win || !s->ovfl) {
    ovl_tp_close(s);
    return ovl_oom(err, "table scan");
  }
  /* The root must be a table b-tree page (else a WITHOUT ROWID table, or a fault SQLite
  ** reports): decided before the first row. */
  ovl_err scratch = {0};
  const unsigned char *page = window_page(s, (uint32_t)root, NULL, &scratch);
  if (!page || (page[root == 1 ? 100 : 0] != PAGE_INTERIOR && page[root == 1 ? 100 : 0] != PAGE_LEAF)) {
    ovl_tp_close(s);
    return OVL_OK;
  }
  int r = descend(s, (uint32_t)root, lo != INT64_MIN, err);
  if (r < 0) {
    ovl_tp_close(s);
    return -r;
  }
  atomic_fetch_add(&scans_opened, 1);
  *out = s;
  return OVL_OK;
}
