/*
** Test helper: `ovl-ddp --plan` without CUDA. Takes ovl-ddp's options and prints the plan
** the same library code prints, so tests (test_workload_pytorch.py) can compare against it
** on machines where the CUDA binary is not built.
*/
#include "ddp_options.h"
#include "plan_json.h"

#include <stdio.h>

int main(int argc, char **argv) {
  ovl_ddp_options o;
  ovl_err err;
  ovl_err_clear(&err);
  if (ovl_ddp_parse_options(argc, argv, &o, &err) || ovl_plan_print(&o.model, &o.plan, stdout, &err)) {
    fprintf(stderr, "workload_plan_tool: %s\n", err.msg);
    return err.code ? err.code : 2;
  }
  return 0;
}
