/*
** A SQLite VFS for read-only trace scans. It wraps the default VFS and reads a main database
** file opened read-only in windows of OVL_SCAN_VFS_WINDOW bytes while its reads go forward
** (a table scan reads leaf pages in file order, with other tables' pages between them), so a
** scan makes one pread per window instead of one per page: on a virtual machine the system
** call, not the copy, is most of a page read's cost (bench/results/report-3m.md).
**
** Invariants: a window only serves reads while the connection holds the lock it held when
** the window was read (dropped on every xUnlock and every shared-memory unlock, the end of a
** read transaction in either journal mode), so a reader never sees bytes older than SQLite's
** own locking allows. Reads it cannot serve whole from a window, writes and every other call
** go to the wrapped file unchanged. Results are the same bytes as the default VFS gives.
*/
#ifndef OVL_SCAN_VFS_H
#define OVL_SCAN_VFS_H

#define OVL_SCAN_VFS_WINDOW (256 * 1024)

/* The registered VFS's name, for sqlite3_open_v2's zVfs; NULL (use the default VFS) when it
** could not be registered. Thread-safe; registers on first use. */
const char *ovl_scan_vfs_name(void);

/* The file a scan-VFS file wraps (the default VFS's), else `file` itself: a reader that reads
** large ranges itself (load/table_pages.c) reads through it, not through the windows. */
typedef struct sqlite3_file sqlite3_file;
sqlite3_file *ovl_scan_vfs_inner(sqlite3_file *file);

/* Page reads served from windows and windows read, over every file since the start (tests
** and benchmarks). */
void ovl_scan_vfs_counts(long long *served, long long *windows);

#endif
