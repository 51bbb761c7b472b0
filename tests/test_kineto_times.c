/*
** Kineto times read without strtod (kineto_event.c): for every form of `ts`/`dur` text a
** trace may hold (integers of 1 to 17 digits, 0 to 5 decimals, negative, -0, exponents, both
** sides of 2^53 ns), the float64 µs the event reader keeps for --hta-compat is bit for bit
** what strtod reads, and the exact ns are ovl_kineto_us_to_ns's. Texts come from a fixed
** pseudo-random sequence plus the edge cases, written as events and read back through the
** tokenizer.
*/
#include "check.h"
#include "load/byte_input.h"
#include "load/json_stream.h"
#include "load/kineto_event.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANDOM_TEXTS 20000

static uint64_t state = 0x2545f4914f6cdd1dULL;
static uint64_t next_random(void) {  /* xorshift64 */
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static void random_text(char *out, size_t cap) {
  int digits = 1 + (int)(next_random() % 17), decimals = (int)(next_random() % 6);
  size_t n = 0;
  if (next_random() % 8 == 0) out[n++] = '-';
  for (int i = 0; i < digits; i++) out[n++] = (char)('0' + (i == 0 && digits > 1 ? 1 + next_random() % 9 : next_random() % 10));
  if (decimals) {
    out[n++] = '.';
    for (int i = 0; i < decimals; i++) out[n++] = (char)('0' + next_random() % 10);
  }
  out[n] = 0;
  (void)cap;
}

static const char *const edges[] = {
  "0", "-0", "0.0", "-0.000", "0.5", "-0.001", "1", "1.5", "1.25", "1.125", "123.456",
  "9007199254740.991", "9007199254740.992", "9007199254740.993", "-9007199254740.993",
  "9007199254740993", "1669783687464200", "1669783687464200.5", "1669783687464200.125",
  "1711964646123456.789", "1.5e3", "2E-3", "1e6", "0.0005", "0.0004999", "12.3456789",
  /* the largest µs that fit in ns, and the first that do not */
  "9223372036854769", "9223372036854769.999", "-9223372036854769.5", "9223372036854770", "9223372036854775.807",
  "-9223372036854770.001", "10000000000000000", "9999999999999999999",
};

int main(void) {
  const char *path = "test_kineto_times.json";
  size_t count = sizeof edges / sizeof edges[0] + RANDOM_TEXTS;
  char (*texts)[32] = calloc(count, sizeof *texts);
  FILE *f = fopen(path, "w");
  if (!texts || !f) return 2;
  fprintf(f, "{\"traceEvents\": [\n");
  for (size_t i = 0; i < count; i++) {
    if (i < sizeof edges / sizeof edges[0]) snprintf(texts[i], sizeof texts[i], "%s", edges[i]);
    else random_text(texts[i], sizeof texts[i]);
    fprintf(f, "%s{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": %s, \"dur\": %s}\n", i ? "," : "", texts[i], texts[i]);
  }
  fprintf(f, "]}\n");
  fclose(f);

  ovl_err err = {0};
  ovl_byte_input *in = NULL;
  ovl_json *j = NULL;
  CHECK(ovl_input_open(path, &in, &err) == OVL_OK);
  CHECK(in && ovl_json_open(in, NULL, &j, &err) == OVL_OK);
  ovl_json_token tok;
  CHECK(j && ovl_json_next(j, &tok, &err) == OVL_OK && tok == OVL_JSON_OBJECT_BEGIN);
  CHECK(ovl_json_next(j, &tok, &err) == OVL_OK && tok == OVL_JSON_KEY);
  CHECK(ovl_json_next(j, &tok, &err) == OVL_OK && tok == OVL_JSON_ARRAY_BEGIN);
  ovl_kineto_event ev;
  memset(&ev, 0, sizeof ev);
  size_t read = 0, float_mismatches = 0, ns_mismatches = 0;
  while (ovl_json_next(j, &tok, &err) == OVL_OK && tok == OVL_JSON_OBJECT_BEGIN && read < count) {
    if (ovl_kineto_read_event(j, &ev, &err) != OVL_OK) break;
    const char *text = texts[read++];
    int64_t ns;
    if (ovl_kineto_us_to_ns(text, &ns) != 0) ns = INT64_MIN;
    double want = ns == INT64_MIN ? NAN : strtod(text, NULL);  /* out of range: unreadable */
    int same = isnan(want) ? isnan(ev.ts_us) && isnan(ev.dur_us)
                           : memcmp(&ev.ts_us, &want, sizeof want) == 0 && memcmp(&ev.dur_us, &want, sizeof want) == 0;
    if (!same) {
      if (float_mismatches++ < 5) fprintf(stderr, "%s: read %.17g, strtod %.17g\n", text, ev.ts_us, want);
    }
    if (ev.ts_ns != ns || ev.dur_ns != ns) {  /* both INT64_MIN (OVL_NONE) when out of range */
      if (ns_mismatches++ < 5) fprintf(stderr, "%s: %lld ns, expected %lld\n", text, (long long)ev.ts_ns, (long long)ns);
    }
  }
  CHECK(read == count);
  CHECK(float_mismatches == 0);
  CHECK(ns_mismatches == 0);
  ovl_kineto_event_free(&ev);
  ovl_json_close(j);
  ovl_input_close(in);
  free(texts);
  remove(path);
  return check_summary();
}
