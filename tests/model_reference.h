/*
** A reference implementation, for tests only, of the alpha-beta model with DDP bucketing over
** equal layers, written out from its definition (docs/simulate.md, docs/fit-whatif.md) so that
** the analyzer's replays are checked against something they do not share code with.
*/
#ifndef OVL_TEST_MODEL_REFERENCE_H
#define OVL_TEST_MODEL_REFERENCE_H

#include "model/bucket_model.h"

/* alpha + bytes / beta, ns. */
double ref_cost(const ovl_sim_params *p, double bytes);
/* Overlapped backward time (compute + tail) when layers are bucketed as DDP does: in ready
** order, a bucket closes once its bytes reach the cap (first_cap for the first bucket; <= 0:
** cap), starts when ready and the channel is free. */
double ref_ddp_overlap(const ovl_sim_params *p, double first_cap, double cap);

#endif
