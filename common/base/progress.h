/*
** Progress of long work (issue 33). Libraries report it at natural points (a few hundred
** kilobytes of JSON read, 64 Ki rows read, a pass over a trace begun) through ovl_progress();
** whoever installed a sink shows it: the CLI does (analyzer/cli/cli_progress.c), on stderr,
** when it is a terminal and the command has run about 2 s. Libraries never print.
**
** Without a sink a report costs one atomic load. The file a report is about is the calling
** thread's (ovl_progress_file): the job's workers each name theirs, as the user gave it, so a
** conversion in $TMPDIR is never what the user sees. The sink is called under a lock, one call
** at a time, from whichever thread reported.
*/
#ifndef OVL_PROGRESS_H
#define OVL_PROGRESS_H

/* what: "importing", "analysing", ...; file: the reporting thread's file, or NULL; fraction:
** 0..1 of that work, NAN when unknown. */
typedef void (*ovl_progress_sink)(const char *what, const char *file, double fraction);

/* Installs sink (NULL: none). Call before the work starts. */
void ovl_progress_set_sink(ovl_progress_sink sink);
/* Names the file this thread works on from now on (NULL: none); borrowed until replaced. */
void ovl_progress_file(const char *file);
/* Reports that this thread's `what` (a static string) is fraction done. */
void ovl_progress(const char *what, double fraction);

#endif
