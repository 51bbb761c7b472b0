/* The guards of issue 18, unit by unit: checked arithmetic and value ranges
** (base/sane_values.h), text cleaning (base/text_clean.h), the output rule
** (base/safe_output.h, cli/output_plan.h) and the temporary-file registry (base/temp_files.h). */
#include "check.h"

#include "base/safe_output.h"
#include "base/sane_values.h"
#include "base/temp_files.h"
#include "base/text_clean.h"
#include "cli/output_plan.h"

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void arithmetic(void) {
  int64_t v;
  CHECK(ovl_mul_i64(1 << 20, 4, &v) && v == 4 << 20);
  CHECK(!ovl_mul_i64((int64_t)1 << 62, 4, &v));
  CHECK(!ovl_mul_i64(INT64_MIN, -1, &v));
  CHECK(ovl_add_i64(INT64_MAX - 1, 1, &v) && v == INT64_MAX);
  CHECK(!ovl_add_i64(INT64_MAX, 1, &v));
  CHECK_I64(ovl_sat_add(INT64_MAX - 5, 10), INT64_MAX);
  CHECK_I64(ovl_sat_add(INT64_MIN + 5, -10), INT64_MIN);
  CHECK_I64(ovl_sat_add(3, 4), 7);
  CHECK(ovl_time_ok(OVL_TIME_LIMIT_NS) && ovl_time_ok(-OVL_TIME_LIMIT_NS));
  CHECK(!ovl_time_ok(OVL_TIME_LIMIT_NS + 1) && !ovl_time_ok(INT64_MIN));
  CHECK(ovl_interval_ok(0, OVL_SPAN_LIMIT_NS));
  CHECK(!ovl_interval_ok(0, OVL_SPAN_LIMIT_NS + 1));
  CHECK(!ovl_interval_ok(10, 9));
  /* The difference of any two sane times fits: the bound is what makes spreads safe. */
  CHECK(ovl_add_i64(OVL_TIME_LIMIT_NS, OVL_TIME_LIMIT_NS - 1, &v));
}

static void text(void) {
  CHECK_I64(ovl_utf8_len((const unsigned char *)"a"), 1);
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xC3\xA9"), 2);
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xE2\x82\xAC"), 3);
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xF0\x9F\x98\x80"), 4);
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xC0\xAF"), 0);          /* overlong '/' */
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xE0\x80\xAF"), 0);      /* overlong */
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xED\xA0\x80"), 0);      /* surrogate */
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xF4\x90\x80\x80"), 0);  /* beyond U+10FFFF */
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xE2\x82"), 0);          /* cut short */
  CHECK_I64(ovl_utf8_len((const unsigned char *)"\xFF"), 0);
  CHECK(ovl_text_is_clean("ncclDevKernel_AllReduce \xC3\xA9"));
  CHECK(!ovl_text_is_clean("a\x1b[31m"));
  CHECK(!ovl_text_is_clean("a\x7f"));
  CHECK(!ovl_text_is_clean("a\xC2\x9B" "2J"));  /* C1 CSI */
  char *c = ovl_text_clean_dup("a\x1b[31m\xff\xC3\xA9");
  CHECK(c && strcmp(c, "a\xEF\xBF\xBD[31m\xEF\xBF\xBD\xC3\xA9") == 0);
  CHECK(c && ovl_text_is_clean(c));
  free(c);
  char small[8];
  ovl_text_clean_into("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9", small, sizeof small);  /* cut on a boundary */
  CHECK(strcmp(small, "\xC3\xA9\xC3\xA9\xC3\xA9") == 0);
}

/* Files in dir (hidden temporary ones included). */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d) closedir(d);
  return n;
}

static void write_text(const char *path, const char *s) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(s, f);
    fclose(f);
  }
}

static int has_text(const char *path, const char *s) {
  char buf[256] = {0};
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return strcmp(buf, s) == 0;
}

static void outputs(void) {
  char dir[] = "/tmp/ovl-guards-XXXXXX";
  if (!mkdtemp(dir)) {
    CHECK(!"mkdtemp");
    return;
  }
  char target[256], slink[256], other[256];
  snprintf(target, sizeof target, "%s/out.txt", dir);
  snprintf(slink, sizeof slink, "%s/link", dir);
  snprintf(other, sizeof other, "%s/other", dir);
  ovl_err err;
  ovl_safe_out o;
  /* Nothing appears until commit; abort leaves nothing; commit replaces the old content. */
  write_text(target, "old");
  CHECK(ovl_safe_out_begin(&o, target, &err) == OVL_OK);
  CHECK(write(o.fd, "new", 3) == 3);
  CHECK(has_text(target, "old"));
  ovl_safe_out_abort(&o);
  CHECK(has_text(target, "old"));
  CHECK_I64(entries(dir), 1);
  CHECK(ovl_safe_out_begin(&o, target, &err) == OVL_OK);
  CHECK(write(o.fd, "new", 3) == 3);
  CHECK(ovl_safe_out_commit(&o, &err) == OVL_OK);
  CHECK(has_text(target, "new"));
  CHECK_I64(entries(dir), 1);
  /* Never through a link, never an empty name. */
  write_text(other, "kept");
  CHECK(symlink("other", slink) == 0);
  CHECK(ovl_safe_out_begin(&o, slink, &err) == OVL_EUSER);
  CHECK(strstr(err.msg, "symbolic link") != NULL);
  CHECK(has_text(other, "kept"));
  CHECK(ovl_output_check("", &err) == OVL_EUSER);
  CHECK(ovl_output_check(dir, &err) == OVL_EUSER);
  /* The plan: one file under two names, and an output that is an input. */
  ovl_output_plan plan = {0};
  char alias[300], hard[256];
  snprintf(alias, sizeof alias, "%s/./out.txt", dir);
  snprintf(hard, sizeof hard, "%s/hard.txt", dir);
  CHECK(link(target, hard) == 0);
  CHECK(ovl_output_plan_add(&plan, target, NULL, &err) == OVL_OK);
  CHECK(ovl_output_plan_add(&plan, alias, NULL, &err) == OVL_EUSER);
  char *inputs[] = {other, hard};
  CHECK(ovl_output_plan_check_inputs(&plan, inputs, 1, &err) == OVL_OK);
  CHECK(ovl_output_plan_check_inputs(&plan, inputs, 2, &err) == OVL_EUSER);
  CHECK(strstr(err.msg, "is also an input") != NULL);
  ovl_output_plan_free(&plan);
  /* The registry removes a temporary file with its SQLite side files. */
  char temp[256], wal[300];
  snprintf(temp, sizeof temp, "%s/t.sqlite", dir);
  snprintf(wal, sizeof wal, "%s-wal", temp);
  write_text(temp, "x");
  write_text(wal, "x");
  CHECK(ovl_temp_register(temp) == 0);
  ovl_temp_remove_all();
  CHECK(access(temp, F_OK) != 0 && access(wal, F_OK) != 0);
  ovl_temp_release(temp, 0);
  unlink(slink);
  unlink(other);
  unlink(hard);
  unlink(target);
  rmdir(dir);
}

int main(void) {
  arithmetic();
  text();
  outputs();
  return check_summary();
}
