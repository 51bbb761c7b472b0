/* Quantities with units: see units.h. */
#include "units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Splits "12.5MB/s" into 12.5 and the suffix "MB/s"; rejects negatives and NaN. */
static int split_number(const char *text, double *value, const char **suffix) {
  if (!text || !*text) return -1;
  char *end = NULL;
  double v = strtod(text, &end);
  if (end == text || !isfinite(v) || v < 0) return -1;
  while (*end == ' ') end++;
  *value = v;
  *suffix = end;
  return 0;
}

int ovl_parse_time_ns(const char *text, double *ns) {
  static const struct { const char *unit; double scale; } units[] = {
    {"ns", 1.0}, {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"ms", 1e6}, {"s", 1e9},
  };
  double v;
  const char *suffix;
  if (split_number(text, &v, &suffix)) return -1;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strcasecmp(suffix, units[i].unit) == 0) {
      *ns = v * units[i].scale;
      return 0;
    }
  }
  return -1;
}

/* Size unit -> bytes multiplier, or 0 when unknown. An empty unit means bytes. */
static double size_scale(const char *unit, size_t n) {
  static const struct { const char *unit; double scale; } units[] = {
    {"", 1.0}, {"b", 1.0},
    {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
    {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0}, {"tib", 1099511627776.0},
  };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    if (strlen(units[i].unit) == n && strncasecmp(unit, units[i].unit, n) == 0) return units[i].scale;
  }
  return 0;
}

int ovl_parse_bytes(const char *text, double *bytes) {
  double v;
  const char *suffix;
  if (split_number(text, &v, &suffix)) return -1;
  double scale = size_scale(suffix, strlen(suffix));
  if (scale == 0) return -1;
  *bytes = v * scale;
  return 0;
}

int ovl_parse_rate(const char *text, double *bytes_per_s) {
  double v;
  const char *suffix;
  if (split_number(text, &v, &suffix)) return -1;
  const char *slash = strchr(suffix, '/');
  if (!slash || strcasecmp(slash, "/s") != 0) return -1;
  double scale = size_scale(suffix, (size_t)(slash - suffix));
  if (scale == 0 || v == 0) return -1;
  *bytes_per_s = v * scale;
  return 0;
}

char *ovl_format_ns(double ns, char *buf, size_t len) {
  double a = fabs(ns);
  if (a >= 1e9) snprintf(buf, len, "%.3f s", ns / 1e9);
  else if (a >= 1e6) snprintf(buf, len, "%.2f ms", ns / 1e6);
  else if (a >= 1e3) snprintf(buf, len, "%.1f us", ns / 1e3);
  else snprintf(buf, len, "%.0f ns", ns);
  return buf;
}

char *ovl_format_bytes(double bytes, char *buf, size_t len) {
  double a = fabs(bytes);
  if (a >= 1e9) snprintf(buf, len, "%.2f GB", bytes / 1e9);
  else if (a >= 1e6) snprintf(buf, len, "%.1f MB", bytes / 1e6);
  else if (a >= 1e3) snprintf(buf, len, "%.1f KB", bytes / 1e3);
  else snprintf(buf, len, "%.0f B", bytes);
  return buf;
}
