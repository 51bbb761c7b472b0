/*
** `ovl stats` output (docs/stats.md): the tables of stats.h as text, CSV or JSON.
**   summary  per rank: the report's totals (steps, compute, communication, exposed, efficiency,
**            memory, counts of kernels, memops and collectives), the same numbers as
**            `ovl report --json`;
**   kernels  by name: count, total, share of the rank's kernel time, mean, min, max, class;
**   nccl     by operation and size bucket: count, bytes, GPU time, mean, min, max, bus bandwidth;
**   nvtx     ranges (and marks) by domain and name: count, total, mean, min, max;
**   memcpy   by kind: count, bytes, total, mean, min, max, throughput, class.
** CSV: each table a header row and its rows; several tables are separated by one empty line.
** JSON: {"ovl_stats_version": 1, "<table>": [rows keyed like the CSV header], ...}.
*/
#ifndef OVL_STATS_OUT_H
#define OVL_STATS_OUT_H

#include "stats/stats.h"
#include "table_out.h"

#include <stdio.h>

typedef enum ovl_stats_table {
  OVL_ST_SUMMARY,
  OVL_ST_KERNELS,
  OVL_ST_NCCL,
  OVL_ST_NVTX,
  OVL_ST_MEMCPY,
  OVL_ST_COUNT
} ovl_stats_table;

/* "summary", "kernels", ...; -1 from a name that is none of them. */
const char *ovl_stats_table_name(ovl_stats_table t);
int ovl_stats_table_from_name(const char *name);
/* The stats.h bits a table needs. */
unsigned ovl_stats_table_needs(ovl_stats_table t);

typedef struct ovl_stats_view {
  const ovl_job *job;
  const ovl_stats *stats;  /* per rank, or merged (ovl_stats_merge: no rank columns) */
  int merged;
  size_t top;              /* text: rows per table and rank (SIZE_MAX: all) */
} ovl_stats_view;

void ovl_stats_write(FILE *out, const ovl_stats_view *v, const ovl_stats_table *tables, size_t ntables,
                     ovl_table_format format, int pretty);

#endif
