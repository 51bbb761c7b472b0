/* `ovl run --html FILE` (run_html.c). */
#ifndef OVL_RUN_HTML_H
#define OVL_RUN_HTML_H

/* Runs command (environment already set) to its end, then writes the page of the traces it
** wrote into dir to html. Returns the command's exit status (128 + signal when killed), or,
** when that is 0, the page's (1 when no trace was written or the page failed). */
int ovl_run_and_write_html(char **command, const char *dir, const char *html);

#endif
