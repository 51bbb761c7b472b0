#!/bin/sh
# Test double of ovl-ddp for workloads/bench.sh (tests/test_workload_bench.c). It records how
# it was launched in $FAKE_DDP_LOG and prints, on rank 0, a RESULTS_JSON line whose epoch time
# follows a formula the test knows: 2 s x mode factor x 2 / GPUs. --model xlarge fails.
model=small mode=bucketed comm=nccl
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --mode) mode=$2; shift 2 ;;
    --comm) comm=$2; shift 2 ;;
    *) shift ;;
  esac
done
rank=${RANK:-0}
world=${WORLD_SIZE:-1}
echo "model=$model mode=$mode rank=$rank world=$world local=${LOCAL_RANK:-} addr=${MASTER_ADDR:-} port=${MASTER_PORT:-}" >>"$FAKE_DDP_LOG"
if [ "$model" = xlarge ]; then
  echo "fake ovl-ddp: out of memory" >&2
  exit 2
fi
case "$mode" in
  single) factor=1 ;; naive) factor=0.8 ;; interleaved) factor=0.5 ;; bucketed) factor=0.4 ;; *) factor=0.9 ;;
esac
case "$model" in small) params=1462538 ;; medium) params=8432138 ;; *) params=35211786 ;; esac
emulated=null
[ "$comm" = emulated ] && emulated=8
[ "$rank" = 0 ] || exit 0
awk -v f="$factor" -v w="$world" -v p="$params" -v em="$emulated" -v m="$model" -v md="$mode" 'BEGIN {
  e = (md == "single") ? 2 : 2 * f * 2 / w
  printf "some log line\n"
  printf "RESULTS_JSON {\"model\":\"%s\",\"mode\":\"%s\",\"comm\":\"nccl\",\"gpus\":%d,\"emulated_ranks\":%s,\"params\":%d,\"bucket_mb\":25,\"first_bucket_mb\":1,\"buckets\":2,\"find_unused\":false,\"epochs\":3,\"steps\":96,\"avg_epoch_s\":%g,\"comm_s\":%g,\"throughput\":%g,\"final_loss\":2.1,\"verify\":null}\n", m, md, w, em, p, e, e / 4, 32768 / e
}'
