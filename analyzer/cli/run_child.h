/*
** `ovl run`'s child: COMMAND started (fork, exec) and waited for. While it runs, a signal sent
** to ovl run by another process (kill, a batch scheduler) is passed on to it; one the terminal
** sent (Ctrl-C, Ctrl-\, a hangup) already reached it with its process group and is not sent
** again. ovl run itself lives on to say what was captured.
*/
#ifndef OVL_RUN_CHILD_H
#define OVL_RUN_CHILD_H

/* Runs command (environment already set) to its end: returns 0 with *wstatus (waitpid's), or,
** when it could not be started, the exit status to give after printing why ("ovl: run: CMD:
** No such file or directory"): 127 when not found, 126 when not runnable, 1 when no process
** could be made. */
int ovl_run_child(char **command, int *wstatus);

/* Ends as the command ended: returns its exit code, or, when a signal killed it, re-raises that
** signal with its default action (returning 128 + the signal only if ovl run survives it). */
int ovl_run_exit_as(int wstatus);

#endif
