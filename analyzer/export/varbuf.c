/* Chunks of varint records for the export's captures: see varbuf.h. */
#include "varbuf.h"

#include <stdlib.h>

#define CHUNK_BYTES ((size_t)1 << 20)

unsigned char *ovl_varbuf_room(ovl_varbuf *b) {
  if (!b->tail || b->tail->cap - b->tail->len < OVL_VARBUF_RECORD_MAX) {
    ovl_varbuf_chunk *k = malloc(sizeof *k + CHUNK_BYTES);
    if (!k) return NULL;
    k->next = NULL;
    k->len = 0;
    k->cap = CHUNK_BYTES;
    if (b->tail) b->tail->next = k;
    else b->head = k;
    b->tail = k;
    b->bytes += CHUNK_BYTES;
  }
  return b->tail->data + b->tail->len;
}

void ovl_varbuf_free(ovl_varbuf *b) {
  while (b->head) {
    ovl_varbuf_chunk *next = b->head->next;
    free(b->head);
    b->head = next;
  }
  b->tail = NULL;
  b->bytes = 0;
}
