/* The trace schema DDL (schema/ovl.sql), embedded at build time. */
#ifndef OVL_SCHEMA_H
#define OVL_SCHEMA_H

#include <stddef.h>

extern const char ovl_schema_sql[];
extern const size_t ovl_schema_sql_len;

#endif
