/*
** Output of `ovl fit`: one alpha-beta fit per (communicator, operation), as a table or as
** JSON {"fits":[{"comm","op","alpha_ns","beta_bytes_per_s","r2","samples", ...}]} (docs/fit-whatif.md).
*/
#ifndef OVL_FIT_REPORT_H
#define OVL_FIT_REPORT_H

#include "../analyze/alpha_beta_fit.h"

#include <stdio.h>

void ovl_fit_text(FILE *out, const ovl_comm_fit *fits, size_t n);
void ovl_fit_json(FILE *out, const ovl_comm_fit *fits, size_t n, int pretty);

#endif
