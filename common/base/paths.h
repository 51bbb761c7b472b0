/* Small file-system helpers shared by the CLI and the capture library. */
#ifndef OVL_PATHS_H
#define OVL_PATHS_H

/* mkdir -p: creates dir and its missing parents (mode 0777 less the umask). Returns 0, or -1
** with errno set. */
int ovl_mkdirs(const char *dir);

#endif
