/*
** libFuzzer target: the streaming JSON tokenizer (load/json_stream.c) over any bytes, plain
** or gzip. Its last byte also picks small or default limits and how often values are skipped
** instead of read, so truncation, the depth limit and both skip paths are reached. Checks
** the header's promises on every token: depth within the limit, texts within their limits
** and NUL-terminated, the offset never going back, and errors that say something.
*/
#include "fuzz_file.h"
#include "load/byte_input.h"
#include "load/json_stream.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  /* The mode comes from the last byte, not a prefix: seeds are whole files (tests/data). */
  unsigned mode = data[size - 1];
  const char *path = ovl_fuzz_write(data, size, ".json");
  if (!path) return 0;
  ovl_json_limits lim = {0, 0};
  if (mode & 1) lim = (ovl_json_limits){1 + (mode >> 4), 1 + (mode >> 3) % 8};
  size_t max_depth = lim.max_depth ? lim.max_depth : OVL_JSON_DEFAULT_DEPTH;
  size_t max_string = lim.max_string ? lim.max_string : OVL_JSON_DEFAULT_STRING;
  if (max_string < OVL_JSON_MAX_NUMBER) max_string = OVL_JSON_MAX_NUMBER;  /* its floor (json_stream.c) */
  unsigned skip_every = (mode >> 1) & 7;  /* 0: never skip */

  ovl_err err = {0};
  ovl_byte_input *in = NULL;
  ovl_json *j = NULL;
  if (ovl_input_open(path, &in, &err) || ovl_json_open(in, &lim, &j, &err)) {
    OVL_FUZZ_CHECK(err.msg[0] != '\0');
    ovl_input_close(in);
    return 0;
  }
  uint64_t last_offset = 0;
  int rc = 0;
  for (unsigned n = 1;; n++) {
    ovl_json_token tok;
    if (skip_every && n % skip_every == 0) {
      tok = OVL_JSON_NULL;
      rc = (n / skip_every) % 2 ? ovl_json_skip_value(j, &tok, &err) : ovl_json_skip_container(j, &err);
      if (!rc && (tok == OVL_JSON_EOF || ovl_json_depth(j) == 0)) break;
    } else {
      rc = ovl_json_next(j, &tok, &err);
      if (rc || tok == OVL_JSON_EOF) break;
      if (tok == OVL_JSON_KEY || tok == OVL_JSON_STRING || tok == OVL_JSON_NUMBER) {
        size_t len = 0;
        const char *text = ovl_json_text(j, &len);
        OVL_FUZZ_CHECK(text != NULL && text[len] == '\0');
        if (tok == OVL_JSON_NUMBER) OVL_FUZZ_CHECK(len <= OVL_JSON_MAX_NUMBER);
        else OVL_FUZZ_CHECK(len <= max_string);
      }
    }
    if (rc) break;
    OVL_FUZZ_CHECK(ovl_json_depth(j) <= max_depth);
    uint64_t off = ovl_json_offset(j);
    OVL_FUZZ_CHECK(off >= last_offset);
    last_offset = off;
  }
  if (rc) OVL_FUZZ_CHECK(err.msg[0] != '\0');
  ovl_json_close(j);
  ovl_input_close(in);
  return 0;
}
