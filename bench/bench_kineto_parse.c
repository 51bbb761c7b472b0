/*
** The parts of a Kineto import alone, to set `ovl import` beside its floors (bench_import.sh):
**   inflate FILE  every byte through ovl_byte_input, discarded (gzip: zlib on the read-ahead
**                 thread, as the import reads it; plain: read(2))
**   parse FILE    the same plus the tokenizer and ovl_kineto_read_event on every event of
**                 traceEvents: what the import does short of writing rows
** Prints "<wall seconds> <CPU seconds, all threads> <uncompressed bytes> <events>".
*/
#include "load/byte_input.h"
#include "load/json_stream.h"
#include "load/kineto_event.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int inflate_all(ovl_byte_input *in, long *events, ovl_err *err) {
  static char buf[1 << 18];
  size_t got;
  int rc;
  *events = 0;
  while (!(rc = ovl_input_read(in, buf, sizeof buf, &got, err)) && got) {
  }
  return rc;
}

static int parse_all(ovl_byte_input *in, long *events, ovl_err *err) {
  ovl_json *j = NULL;
  ovl_kineto_event ev;
  memset(&ev, 0, sizeof ev);
  ovl_json_token tok;
  int rc = ovl_json_open(in, NULL, &j, err);
  *events = 0;
  if (!rc) rc = ovl_json_next(j, &tok, err);
  while (!rc && !(rc = ovl_json_next(j, &tok, err)) && tok == OVL_JSON_KEY) {
    if (strcmp(ovl_json_text(j, NULL), "traceEvents") != 0) {
      rc = ovl_json_skip_value(j, &tok, err);
      continue;
    }
    if ((rc = ovl_json_next(j, &tok, err)) || tok != OVL_JSON_ARRAY_BEGIN) break;
    while (!(rc = ovl_json_next(j, &tok, err)) && tok != OVL_JSON_ARRAY_END) {
      if (tok == OVL_JSON_OBJECT_BEGIN && !(rc = ovl_kineto_read_event(j, &ev, err))) (*events)++;
      else if (!rc && tok == OVL_JSON_ARRAY_BEGIN) rc = ovl_json_skip_container(j, err);
    }
  }
  ovl_kineto_event_free(&ev);
  ovl_json_close(j);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 3 || (strcmp(argv[1], "inflate") != 0 && strcmp(argv[1], "parse") != 0)) {
    fprintf(stderr, "usage: %s inflate|parse FILE\n", argv[0]);
    return 1;
  }
  ovl_err err = {0};
  ovl_byte_input *in = NULL;
  long events = 0;
  double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
  int rc = ovl_input_open(argv[2], &in, &err);
  if (!rc) rc = strcmp(argv[1], "parse") == 0 ? parse_all(in, &events, &err) : inflate_all(in, &events, &err);
  double t1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
  unsigned long long bytes = in ? (unsigned long long)ovl_input_offset(in) : 0;
  ovl_input_close(in);
  if (rc) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  printf("%.3f %.3f %llu %ld\n", t1 - t0, c1 - c0, bytes, events);
  return 0;
}
