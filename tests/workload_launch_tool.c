/*
** Test helper: what an ovl-ddp rank learns at start-up without a GPU. Detects the launcher,
** exchanges an id through the rendezvous as ovl-ddp does when there is no MPI build (rank 0
** makes it up, the others receive it) and prints one line:
**   launcher=<name> rank=<r> world=<n> local=<l> id=<rank 0's id>
*/
#include "launch_env.h"
#include "rendezvous.h"

#include <stdio.h>
#include <unistd.h>

int main(void) {
  ovl_launch l;
  ovl_err err;
  ovl_err_clear(&err);
  char id[64] = {0};
  if (ovl_launch_detect(&l, &err)) {
    fprintf(stderr, "workload_launch_tool: %s\n", err.msg);
    return 1;
  }
  if (l.rank == 0) snprintf(id, sizeof id, "rank0-pid%ld", (long)getpid());
  if (ovl_rdv_exchange(&l, id, sizeof id, 20000, &err)) {
    fprintf(stderr, "workload_launch_tool: rank %d: %s\n", l.rank, err.msg);
    return 1;
  }
  printf("launcher=%s rank=%d world=%d local=%d id=%s\n", ovl_launcher_name(l.launcher), l.rank, l.world_size,
         l.local_rank, id);
  return 0;
}
