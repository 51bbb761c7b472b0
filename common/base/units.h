/*
** Parsing and printing of quantities with units, as users type them on the command line.
**   times: a number followed by ns, us (or µs), ms or s             "200us", "3ms", "1.5s"
**   sizes: a number with B, KB, MB, GB, TB (SI: 10^3 steps) or KiB, MiB, GiB, TiB
**          (2^10 steps); a bare number is bytes                       "25MB", "1MiB", "4096"
**   rates: a size per second                                           "12GB/s", "25GiB/s"
** Unit letters are case-insensitive ("mb" = "MB"). Every parser returns 0 on success and -1
** on a malformed or negative quantity.
*/
#ifndef OVL_UNITS_H
#define OVL_UNITS_H

#include <stddef.h>
#include <stdint.h>

int ovl_parse_time_ns(const char *text, double *ns);
int ovl_parse_bytes(const char *text, double *bytes);
int ovl_parse_rate(const char *text, double *bytes_per_s);

/* Human-readable forms for reports: "12.34 ms", "25.0 MB". Return buf. */
char *ovl_format_ns(double ns, char *buf, size_t len);
char *ovl_format_bytes(double bytes, char *buf, size_t len);

#endif
