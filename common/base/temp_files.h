/*
** The temporary files this process created (conversions in $TMPDIR, spooled pipes, outputs
** being written beside their target), so that none is left behind: each is removed with its
** SQLite side files (-wal, -shm, -journal) when unregistered with removal, at exit, and on
** SIGINT, SIGTERM, SIGHUP or SIGQUIT (after which the signal is re-raised with its default
** action, so the exit status still tells what happened).
**
** Only the analyzer's command line installs the handlers: libovl.so never touches signals.
*/
#ifndef OVL_TEMP_FILES_H
#define OVL_TEMP_FILES_H

/* Records path (a regular file this process just created). Returns 0, or -1 when the registry
** is full or memory runs out (the file then is only removed by its owner). Thread-safe. */
int ovl_temp_register(const char *path);
/* mkstemp(templ) and ovl_temp_register of the name it made, with the signals of the cleanup
** blocked in between (so no signal can leave the file unregistered). Returns the open
** descriptor, or -1 with errno set. */
int ovl_temp_mkstemp(char *templ);
/* Forgets path; when remove_it, deletes it and its side files (regular files only). */
void ovl_temp_release(const char *path, int remove_it);
/* Deletes every registered file (used at exit and by the signal handler). */
void ovl_temp_remove_all(void);
/* Installs the signal handlers once (the exit hook comes with the first registration). */
void ovl_temp_install_cleanup(void);

#endif
