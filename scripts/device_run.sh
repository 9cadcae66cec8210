#!/usr/bin/env bash
# One device session's worth of checks and measurements, from a build made
# elsewhere: the GPU suites, the per-algorithm bench table, tuning runs and
# the seed's check. Outputs land in ${OUT:-out}/. Usage: scripts/device_run.sh [build-dir]
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${OUT:-out}"
mkdir -p "$out"
export SSMTUNE_DB="$out/tuning.db"
step() {  # step NAME SECONDS CMD...
  local name=$1 secs=$2
  shift 2
  local t0=$SECONDS
  timeout "$secs" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc, $((SECONDS - t0)) s"
  tail -n "${TAIL:-25}" "$out/$name.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
step gpu_tests 300 ctest --test-dir "$build" -L gpu --output-on-failure
TAIL=12 step bench_mid_fp32 60 "$build/ssmtune" bench --all-algorithms --batch 8 --dim 1536 --seqlen 2048 --dstate 16 --dtype fp32
TAIL=12 step bench_mid_bf16 60 "$build/ssmtune" bench --all-algorithms --batch 8 --dim 1536 --seqlen 2048 --dstate 16 --dtype bf16
TAIL=12 step bench_seed 60 "$build/ssmtune" bench --all-algorithms --batch 8 --dim 256 --seqlen 1024 --dstate 4 --dtype fp32
TAIL=8 step tune_seed 150 "$build/ssmtune" tune --batch 8 --dim 256 --seqlen 1024 --dstate 4 --time-limit 60
TAIL=8 step tune_mid_fp32 150 "$build/ssmtune" tune --batch 8 --dim 1536 --seqlen 2048 --dstate 16 --time-limit 60
TAIL=8 step tune_mid_bf16 150 "$build/ssmtune" tune --batch 8 --dim 1536 --seqlen 2048 --dstate 16 --dtype bf16 --time-limit 60
TAIL=8 step tune_again 30 "$build/ssmtune" tune --batch 8 --dim 256 --seqlen 1024 --dstate 4
TAIL=30 step check_seed 60 "$build/ssmtune" check --batch 8 --dim 256 --seqlen 1024 --dstate 4
TAIL=10 step db_show 20 "$build/ssmtune" db best
