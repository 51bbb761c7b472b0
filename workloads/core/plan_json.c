/* The --plan JSON document: see plan_json.h. */
#include "plan_json.h"

#include "base/json_out.h"
#include "zero3_plan.h"

int ovl_plan_write_json(const ovl_plan *plan, FILE *out, int pretty) {
  ovl_json j;
  ovl_json_init(&j, out, pretty);
  ovl_json_object_begin(&j, NULL);
  ovl_json_string(&j, "model", plan->model.name);
  ovl_json_string(&j, "mode", ovl_mode_names[plan->opt.mode]);
  ovl_json_array_begin(&j, "widths");
  for (int l = 0; l <= plan->model.nlayers; l++) ovl_json_int(&j, NULL, plan->model.width[l]);
  ovl_json_array_end(&j);
  ovl_json_int(&j, "param_floats", ovl_model_param_floats(&plan->model));
  if (plan->packed) {
    ovl_json_int(&j, "first_bucket_bytes", plan->opt.first_cap_bytes);
    ovl_json_int(&j, "bucket_bytes", plan->opt.cap_bytes);
  } else {
    ovl_json_null(&j, "first_bucket_bytes");
    ovl_json_null(&j, "bucket_bytes");
  }

  ovl_json_array_begin(&j, "params");
  for (int p = 0; p < plan->nparams; p++) {
    ovl_json_object_begin(&j, NULL);
    ovl_json_string(&j, "name", plan->params[p].name);
    ovl_json_int(&j, "bytes", plan->params[p].count * (int64_t)sizeof(float));
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);

  ovl_json_array_begin(&j, "ready_order");
  for (int i = 0; i < plan->nparams; i++) ovl_json_string(&j, NULL, plan->params[plan->ready_order[i]].name);
  ovl_json_array_end(&j);

  ovl_json_array_begin(&j, "buckets");
  for (int k = 0; k < plan->nbuckets; k++) {
    const ovl_bucket *b = &plan->buckets[k];
    ovl_json_object_begin(&j, NULL);
    ovl_json_int(&j, "index", k);
    ovl_json_array_begin(&j, "params");
    for (int i = b->first_member; i < b->first_member + b->nmembers; i++)
      ovl_json_string(&j, NULL, plan->params[plan->members[i]].name);
    ovl_json_array_end(&j);
    ovl_json_int(&j, "bytes", b->bytes);
    ovl_json_string(&j, "ready_after", plan->params[plan->ready_order[b->ready_pos]].name);
    ovl_json_string(&j, "launch_after", plan->params[plan->ready_order[b->launch_pos]].name);
    ovl_json_object_end(&j);
  }
  ovl_json_array_end(&j);

  ovl_json_array_begin(&j, "launch_order");
  for (int k = 0; k < plan->nbuckets; k++) ovl_json_int(&j, NULL, plan->launch_order[k]);
  ovl_json_array_end(&j);

  if (plan->opt.find_unused) {
    ovl_json_object_begin(&j, "find_unused");
    ovl_json_int(&j, "used_map_bytes", plan->used_map_bytes);
    ovl_json_int(&j, "after_bucket", plan->nbuckets - 1);
    ovl_json_object_end(&j);
  } else {
    ovl_json_null(&j, "find_unused");
  }
  if (plan->opt.mode == OVL_MODE_ZERO3) {
    /* the parameter all-gathers, in issue order (zero3_plan.h); the buckets are the layers'
    ** gradient reduce-scatters */
    ovl_z3_gather g[2 * OVL_MODEL_MAX_LAYERS];
    int n = ovl_z3_gathers(&plan->model, g);
    ovl_json_object_begin(&j, "zero3");
    ovl_json_array_begin(&j, "layers");
    for (int l = 0; l < plan->model.nlayers; l++) {
      ovl_json_object_begin(&j, NULL);
      ovl_json_int(&j, "layer", l);
      ovl_json_int(&j, "floats", ovl_z3_layer_floats(&plan->model, l));
      ovl_json_int(&j, "bytes", 4 * ovl_z3_layer_floats(&plan->model, l));
      ovl_json_object_end(&j);
    }
    ovl_json_array_end(&j);
    ovl_json_array_begin(&j, "all_gathers");
    for (int i = 0; i < n; i++) {
      char text[48];
      ovl_json_object_begin(&j, NULL);
      ovl_json_int(&j, "layer", g[i].layer);
      ovl_json_string(&j, "phase", g[i].backward ? "backward" : "forward");
      ovl_json_string(&j, "issued_with", ovl_z3_trigger_text(&g[i], text, sizeof text));
      ovl_json_string(&j, "stream", "communication");
      ovl_json_object_end(&j);
    }
    ovl_json_array_end(&j);
    ovl_json_string(&j, "reduce_scatter", "buckets: one per layer, after its weight gradient");
    ovl_json_object_end(&j);
  }
  ovl_json_object_end(&j);
  ovl_json_finish(&j);
  return ferror(out) ? -1 : 0;
}

int ovl_plan_print(const ovl_model *m, const ovl_plan_options *opt, FILE *out, ovl_err *err) {
  ovl_plan plan;
  int rc = ovl_plan_build(m, opt, &plan, err);
  if (rc) return rc;
  if (ovl_plan_write_json(&plan, out, 1) || fflush(out)) rc = ovl_fail(err, OVL_EUSER, "stdout: write error");
  ovl_plan_free(&plan);
  return rc;
}
