/* The RESULTS_JSON line: see results_json.h. */
#include "results_json.h"

#include "base/json_out.h"

int ovl_ddp_write_results(FILE *out, const ovl_ddp_options *o, const ovl_ddp_result *r) {
  ovl_json j;
  fputs("RESULTS_JSON ", out);
  ovl_json_init(&j, out, 0);
  ovl_json_object_begin(&j, NULL);
  ovl_json_string(&j, "model", o->model.name);
  ovl_json_string(&j, "mode", ovl_mode_names[o->plan.mode]);
  ovl_json_string(&j, "comm", o->plan.mode == OVL_MODE_SINGLE ? "none" : o->emulated ? "emulated" : "nccl");
  ovl_json_int(&j, "gpus", r->gpus);
  if (o->emulated && o->plan.mode != OVL_MODE_SINGLE) ovl_json_int(&j, "emulated_ranks", o->emulate_ranks);
  else ovl_json_null(&j, "emulated_ranks");
  ovl_json_int(&j, "params", ovl_model_param_floats(&o->model));
  ovl_json_double(&j, "bucket_mb", o->bucket_mb);
  ovl_json_double(&j, "first_bucket_mb", o->first_bucket_mb);
  ovl_json_int(&j, "buckets", r->nbuckets);
  ovl_json_bool(&j, "find_unused", o->plan.find_unused);
  ovl_json_double(&j, "epochs", r->epochs);
  ovl_json_int(&j, "steps", r->steps);
  ovl_json_double(&j, "avg_epoch_s", r->avg_epoch_s);
  ovl_json_double(&j, "comm_s", r->comm_s);
  ovl_json_double(&j, "throughput", r->throughput);
  ovl_json_double(&j, "final_loss", r->final_loss);
  if (r->verified) {
    ovl_json_object_begin(&j, "verify");
    ovl_json_bool(&j, "passed", r->verify_passed);
    ovl_json_double(&j, "max_rel_err", r->verify_max_rel_err);
    ovl_json_double(&j, "tolerance", o->verify_tol);
    ovl_json_object_end(&j);
  } else {
    ovl_json_null(&j, "verify");
  }
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
  return ferror(out) ? -1 : 0;
}
