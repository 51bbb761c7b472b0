/* OVL_NONE: the value of an unknown integer, everywhere (SQL NULL in a trace's columns). */
#ifndef OVL_NONE_H
#define OVL_NONE_H

#include <stdint.h>

#define OVL_NONE INT64_MIN

#endif
