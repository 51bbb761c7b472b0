/*
** Ending a process by a signal as if nobody had caught it: whoever waits for it then sees that
** signal (a shell prints 128 + its number), not an exit status made up to look like one.
*/
#ifndef OVL_DIE_OF_H
#define OVL_DIE_OF_H

/* Restores sig's default action, unblocks it for the calling thread and raises it. Returns only
** when that action does not end the process (an ignored or stopping signal). Async-signal-safe. */
void ovl_die_of(int sig);

#endif
