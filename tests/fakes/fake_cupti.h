/*
** Fake CUPTI: a TEST DOUBLE of the function table libinject reaches CUPTI through
** (libinject/cupti_api.h). Tests build activity buffers by hand with fake_buffer_add, in the
** fake's own layout, and the fake's ActivityGetNextRecord walks them; GetCallbackName knows
** two API names. Entries the record path never calls stay NULL (a call would crash the test).
*/
#ifndef OVL_TEST_FAKE_CUPTI_H
#define OVL_TEST_FAKE_CUPTI_H

#include "cupti_api.h"

#define FAKE_RUNTIME_LAUNCH_CBID 211  /* "cudaLaunchKernel_v7000" */
#define FAKE_DRIVER_LAUNCH_CBID 307   /* "cuLaunchKernelEx" */

void fake_cupti_table(ovl_cupti_api *api);

typedef struct fake_buffer {
  uint8_t *data;
  size_t used, cap;
} fake_buffer;

/* Appends a copy of a record (8-byte aligned in the buffer, as CUPTI's are). Returns a
** pointer to the copy, so a test can change it between two reads. */
void *fake_buffer_add(fake_buffer *b, const void *record, size_t size);
void fake_buffer_free(fake_buffer *b);

#endif
