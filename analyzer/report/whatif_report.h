/*
** Output of `ovl whatif`: the trace's step time and exposed communication, the prediction for
** each bucket size and the best one, as a table or as JSON {"current":{"step_ns","t_exposed_ns"},
** "candidates":[{"bucket_mb","step_ns","t_exposed_ns"}],"best":{"bucket_mb","step_ns"}, ...}
** (docs/fit-whatif.md). bucket_mb is in MiB, as PyTorch's bucket_cap_mb.
*/
#ifndef OVL_WHATIF_REPORT_H
#define OVL_WHATIF_REPORT_H

#include "../analyze/whatif.h"

#include <stdio.h>

void ovl_whatif_text(FILE *out, const ovl_whatif_result *w, double first_cap_bytes);
void ovl_whatif_json(FILE *out, const ovl_whatif_result *w, double first_cap_bytes, int pretty);

#endif
