/*
** What `ovl run` says when COMMAND has ended: the traces it wrote into DIR (the .sqlite files
** that were not there before it started), or why there are none; and, with --html FILE, their
** page (report_html.h).
*/
#ifndef OVL_RUN_OUTCOME_H
#define OVL_RUN_OUTCOME_H

#include <stddef.h>

/* The trace names (*.sqlite) directly in dir, sorted, NULL-terminated; an empty list when dir
** cannot be read; NULL when memory runs out. Free with ovl_run_free_names. */
char **ovl_run_list_traces(const char *dir);
void ovl_run_free_names(char **names);

/* Prints on stderr "ovl: run: wrote N traces in DIR: NAME, ..." for the traces of dir not in
** before, or "ovl: run: no trace written in DIR: <why>" (quiet: nothing); then, when html is
** not NULL, writes their page to html. Returns 0, or 1 when a page was asked for and none
** could be written (no trace, or the page failed: said on stderr). */
int ovl_run_outcome(const char *dir, char **before, const char *html, int quiet);

#endif
