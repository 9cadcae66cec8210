#!/usr/bin/env bash
# One device session's worth of checks and measurements, from a build made
# elsewhere: the GPU suites, the per-algorithm bench table, tuning runs and
# the seed's check. Outputs land in ${OUT:-out}/: steps.log (every step's
# tail), tuning.db, report.html; whole step logs in ${STEP_LOGS:-/tmp/ssmtune_steps}.
# Usage: scripts/device_run.sh BUILD_DIR PART...
#   (tests bench check tune_seed tune_mid tune_bwd db report overhead explain bwd_chan bwd_ab
#    bwd_groups bwd_lanes fwd_groups fwd_mid_groups fwd_odd)
# bwd_ab: TPL_OLD=DIR (a templates/ folder of an older tree) times the
# backward default with those templates and with the build's own.
set -uo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
out="${OUT:-out}"
mkdir -p "$out"
export SSMTUNE_DB="$out/tuning.db"
# Each step's whole log goes to $logs; its last 40 lines are appended to one file,
# $out/steps.log, as the step ends (the device tool returns a few files from $out, and
# what a run cut short by its limit had written).
logs="${STEP_LOGS:-/tmp/ssmtune_steps}"
mkdir -p "$logs"
step() {  # step NAME SECONDS CMD...
  local name=$1 secs=$2
  shift 2
  local t0=$SECONDS
  timeout "$secs" "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc, $((SECONDS - t0)) s"
  tail -n "${TAIL:-25}" "$logs/$name.log"
  { echo "#### $name: rc=$rc, $((SECONDS - t0)) s"; tail -n 40 "$logs/$name.log"; } >>"$out/steps.log"
}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
shape_seed=(--batch 8 --dim 256 --seqlen 1024 --dstate 4)
shape_mid=(--batch 8 --dim 1536 --seqlen 2048 --dstate 16)
shape_large=(--batch 4 --dim 5120 --seqlen 8192 --dstate 16)
# The backward as a Mamba block trains it: bf16, the block's flags, saved states.
bwd_flags=(--family bwd --with-d --with-z --delta-bias --softplus --saved-states)
bwd_block=("${bwd_flags[@]}" --dtype bf16)
for part in "${@:2}"; do
  case "$part" in
    tests) step gpu_tests 270 ctest --test-dir "$build" -L gpu --output-on-failure ;;
    bench)
      TAIL=8 step bench_mid_fp32 50 "$build/ssmtune" bench --all-algorithms "${shape_mid[@]}"
      TAIL=8 step bench_mid_bf16 50 "$build/ssmtune" bench --all-algorithms "${shape_mid[@]}" --dtype bf16
      TAIL=8 step bench_seed 40 "$build/ssmtune" bench --all-algorithms "${shape_seed[@]}" ;;
    check) TAIL=30 step check_seed 50 "$build/ssmtune" check "${shape_seed[@]}" ;;
    tune_seed)
      TAIL=6 step tune_seed 120 "$build/ssmtune" tune "${shape_seed[@]}" --time-limit 40
      TAIL=6 step tune_again 30 "$build/ssmtune" tune "${shape_seed[@]}" ;;
    tune_mid)
      TAIL=6 step tune_mid_fp32 150 "$build/ssmtune" tune "${shape_mid[@]}" --time-limit 40
      TAIL=6 step tune_mid_bf16 150 "$build/ssmtune" tune "${shape_mid[@]}" --dtype bf16 --time-limit 40 ;;
    # The backward's tune of record: (8, 1536, 2048, 16) bf16 with the block's flags.
    tune_bwd)
      TAIL=10 step tune_bwd_record 150 "$build/ssmtune" tune "${shape_mid[@]}" --family bwd \
        --dtype bf16 --with-d --with-z --delta-bias --softplus --time-limit 60 ;;
    db) TAIL=12 step db_best 20 "$build/ssmtune" db best ;;
    # The HTML report of this session's database: $out/report.html (copy it to bench/).
    report) TAIL=2 step report 60 "$build/ssmtune" report -o "$out/report.html" ;;
    overhead) TAIL=6 step overhead 60 "$build/ssmtune_bench_overhead" ;;
    explain)
      TAIL=4 step explain_exact 30 "$build/ssmtune" explain "${shape_seed[@]}"
      TAIL=4 step explain_nearest 30 "$build/ssmtune" explain --batch 8 --dim 256 --seqlen 2048 --dstate 4
      TAIL=4 step explain_default 30 "$build/ssmtune" explain "${shape_seed[@]}" --dtype fp16 ;;
    # The backward's default against 2 channels a thread (.c2) at the training
    # shapes, the block's flags, saved states (each config checked against fp64
    # before it is timed).
    bwd_chan)
      chan=(seq.K16.D32.fp32.t128.s4.fast.b3 seq.K16.D32.fp32.t128.s4.fast
            seq.K16.D32.fp32.t64.s4.fast.c2 seq.K16.D64.fp32.t128.s4.fast.c2
            seq.K8.D32.fp32.t64.s4.fast.c2 seq.K16.D16.fp32.t32.s4.fast.c2)
      TAIL=10 step bwd_chan_mid 120 "$build/ssmtune" bench "${shape_mid[@]}" "${bwd_block[@]}" \
        --config "${chan[@]}"
      TAIL=10 step bwd_chan_large 200 "$build/ssmtune" bench "${shape_large[@]}" "${bwd_block[@]}" \
        --config "${chan[@]:1}"
      TAIL=10 step bwd_chan_fp32 120 "$build/ssmtune" bench "${shape_mid[@]}" --family bwd \
        --saved-states --config "${chan[@]}" ;;
    # The few-channel warp-scan backward with a channel's states over 1, 2, 4
    # and 8 blocks (state groups), the block's flags, saved states, at mamba_ssm's
    # test grid and a few more (each config checked against fp64 first).
    bwd_groups)
      for shape in "2 4 2048 8 bf16" "2 4 4096 8 fp32" "2 4 4096 8 bf16" "1 4 2048 4 bf16" \
                   "2 32 4096 8 fp32" "2 4 3000 8 fp16"; do
        read -r b d l n t <<<"$shape"
        cfgs=()
        for s in 1 2 4 8; do
          [ "$s" -le "$n" ] && cfgs+=("ws.K2048.D1.fp32.t512.s$s.fast")
        done
        TAIL=8 step "bwd_groups_${b}_${d}_${l}_${n}_$t" 90 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t" --config "${cfgs[@]}"
      done
      for shape in "2 4 1024 8 fp32" "2 4 2048 16 bf16" "2 64 2048 16 bf16"; do
        read -r b d l n t <<<"$shape"
        TAIL=8 step "bwd_groups_${b}_${d}_${l}_${n}_$t" 90 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t" --config \
          ws.K1024.D1.fp32.t256.s1.fast ws.K1024.D1.fp32.t256.s2.fast \
          ws.K1024.D1.fp32.t256.s4.fast ws.K1024.D1.fp32.t256.s8.fast \
          ws.K2048.D1.fp32.t512.s2.fast ws.K2048.D1.fp32.t512.s4.fast
      done ;;
    # The backward's 8 lanes (3 or 4 states a thread) against the warp scan at dstate
    # 20 to 31 where the rule keeps the warp scan (193 to 255 blocks of 32 channels on
    # 132 SMs, under 512 steps), at dstate 33 to 64 the default (4 lanes of 9 to 16
    # states at chunk 4, 189 to 252 registers, to dstate 63) against 8 and 16 lanes, and
    # at dstate 100 and 128 against 16 and 32 lanes; the flags, saved states, each config
    # checked against fp64 first.
    bwd_lanes)
      for shape in "4 1536 1024 24 bf16" "6 1024 2048 24 bf16" "7 1024 2048 30 bf16" \
                   "5 1536 1024 26 fp16" "9 1024 1024 21 fp32" "32 1536 256 28 bf16" \
                   "8 1024 256 24 bf16" "8 1024 128 24 bf16" "12 1024 64 20 fp16"; do
        read -r b d l n t <<<"$shape"
        TAIL=4 step "bwd_lanes_${b}_${d}_${l}_${n}_$t" 60 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t" --config \
          seq.K16.D32.fp32.t256.s8.fast ws.K256.D16.fp32.t512.s1.fast
      done
      for shape in "8 1536 2048 48 bf16" "8 1024 1024 40 fp16" "4 2048 1024 56 fp32" \
                   "16 1536 512 48 bf16" "8 1024 2048 64 bf16" "4 1024 2048 36 fp16"; do
        read -r b d l n t <<<"$shape"
        TAIL=3 step "bwd_lanes_default_${b}_${d}_${l}_${n}_$t" 60 "$build/ssmtune" bench \
          --batch "$b" --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t"
        TAIL=6 step "bwd_lanes_${b}_${d}_${l}_${n}_$t" 90 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t" --config \
          seq.K8.D16.fp32.t128.s8.fast seq.K16.D32.fp32.t256.s8.fast \
          seq.K8.D32.fp32.t256.s8.fast seq.K16.D16.fp32.t256.s16.fast \
          seq.K16.D32.fp32.t512.s16.fast
      done
      # Past dstate 64: 16 and 32 lanes against the default (9 to 16 states a thread at
      # dstate 100, 8 at 128).
      for shape in "4 1024 2048 100 bf16" "4 1024 1024 128 fp16"; do
        read -r b d l n t <<<"$shape"
        TAIL=3 step "bwd_lanes_default_${b}_${d}_${l}_${n}_$t" 60 "$build/ssmtune" bench \
          --batch "$b" --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t"
        TAIL=6 step "bwd_lanes_${b}_${d}_${l}_${n}_$t" 90 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${bwd_flags[@]}" --dtype "$t" --config \
          seq.K8.D8.fp32.t128.s16.fast seq.K8.D4.fp32.t128.s32.fast
      done ;;
    # The forward's short-sequence default at lengths not a multiple of its chunk of 32,
    # against the sequential kernel, the block's flags.
    fwd_odd)
      for shape in "48 1536 100 16 bf16" "24 1536 90 16 bf16" "16 2048 200 16 fp16" \
                   "32 1024 150 8 bf16" "12 2048 330 12 fp32" "16 1536 72 16 bf16"; do
        read -r b d l n t <<<"$shape"
        for algo in default sequential; do
          sel=()
          [ "$algo" = sequential ] && sel=(--algo sequential)
          TAIL=3 step "fwd_odd_${algo}_${b}_${d}_${l}_${n}_$t" 40 "$build/ssmtune" bench \
            --batch "$b" --dim "$d" --seqlen "$l" --dstate "$n" --dtype "$t" --with-d --with-z \
            --delta-bias --softplus "${sel[@]}"
        done
      done ;;
    # The few-channel forward warp scan with a channel's states over 1 to 8
    # blocks (state groups), the block's flags, bf16 and fp32.
    fwd_groups)
      fwd_flags=(--with-d --with-z --delta-bias --softplus)
      for shape in "2 4 2048 8 bf16" "2 4 4096 8 fp32" "2 4 4096 8 bf16" "1 4 2048 4 bf16" \
                   "2 32 4096 8 fp32" "2 4 2048 16 bf16" "2 64 2048 16 bf16"; do
        read -r b d l n t <<<"$shape"
        cfgs=()
        for s in 1 2 4 8; do
          [ "$s" -le "$n" ] && cfgs+=("warpscan.K2048.D1.fp32.t512.i4.s$s.fast"
                                      "warpscan.K1024.D1.fp32.t256.i4.s$s.fast")
        done
        TAIL=12 step "fwd_groups_${b}_${d}_${l}_${n}_$t" 90 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${fwd_flags[@]}" --dtype "$t" --all-algorithms \
          --config "${cfgs[@]}"
      done ;;
    # The forward between 64 and 256 channels at dstate 16: the default (split or
    # sequential) against the warp scan over 2 and 4 state groups (8 warps a
    # channel), the block's flags, bf16. Version 20 measured (2,64,2048,16) at
    # 0.0339 ms over 2 groups against the split default's 0.0438.
    fwd_mid_groups)
      fwd_flags=(--with-d --with-z --delta-bias --softplus --dtype bf16)
      for shape in "2 64 1024 16" "2 64 2048 16" "2 64 4096 16" "2 64 8192 16" "1 128 2048 16" \
                   "4 32 2048 16" "2 96 2048 16" "2 128 2048 16"; do
        read -r b d l n <<<"$shape"
        TAIL=6 step "fwd_mid_groups_${b}_${d}_${l}_${n}" 60 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${fwd_flags[@]}" --config \
          warpscan.K1024.D1.fp32.t256.i4.s2.fast warpscan.K1024.D1.fp32.t256.i4.s4.fast \
          warpscan.K2048.D1.fp32.t512.i4.s2.fast
        TAIL=3 step "fwd_mid_default_${b}_${d}_${l}_${n}" 60 "$build/ssmtune" bench --batch "$b" \
          --dim "$d" --seqlen "$l" --dstate "$n" "${fwd_flags[@]}"
      done ;;
    bwd_ab)
      if [ -z "${TPL_OLD:-}" ] || [ ! -d "$TPL_OLD" ]; then
        echo "bwd_ab: set TPL_OLD to a templates folder"
        continue
      fi
      for v in old new; do
        tpl=()
        [ "$v" = old ] && tpl=(env "SSMTUNE_TEMPLATE_DIR=$TPL_OLD")
        TAIL=6 step "bwd_ab_mid_$v" 90 "${tpl[@]}" "$build/ssmtune" bench "${shape_mid[@]}" \
          "${bwd_block[@]}"
        TAIL=6 step "bwd_ab_large_$v" 120 "${tpl[@]}" "$build/ssmtune" bench "${shape_large[@]}" \
          "${bwd_block[@]}"
        TAIL=6 step "bwd_ab_fp32_$v" 90 "${tpl[@]}" "$build/ssmtune" bench "${shape_mid[@]}" \
          --family bwd --saved-states
      done ;;
    *) echo "unknown part $part" ;;
  esac
done
