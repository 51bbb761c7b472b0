/*
** One-value SQL queries for tests that check what a trace file holds.
*/
#ifndef OVL_TEST_DB_QUERY_H
#define OVL_TEST_DB_QUERY_H

#include <sqlite3.h>
#include <stdint.h>

/* Runs sql (any number of statements) on the database at path, opened read-write; SQLITE_OK,
** else SQLite's code after printing the statement and SQLite's message (the caller checks). */
int dbq_exec(const char *path, const char *sql);
/* Opens a database read-only; exits the test (status 2) when it cannot. */
sqlite3 *dbq_open(const char *path);
/* The first column of the first row as an integer; -999 when NULL or there is no row. A bad
** query exits the test (status 2). */
int64_t dbq_int(sqlite3 *db, const char *sql);
/* The same as text, "(none)" when NULL or absent; valid until the next call. */
const char *dbq_text(sqlite3 *db, const char *sql);

#endif
