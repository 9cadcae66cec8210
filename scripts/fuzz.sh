#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang-14 with address and UB
# sanitizers) in their own build folder and runs each for a bounded time:
# FUZZ_SECONDS each (default 60). The checked-in corpus under fuzz/corpus/
# seeds a working corpus in the build folder, so runs do not change the
# repository. Exits non-zero when a fuzzer finds a crash (its input is left
# in the build folder as crash-*).
#   FUZZ_BUILD_DIR (default build-fuzz), FUZZ_TARGETS (default: both),
#   FUZZ_JOBS (fuzzers run at once, default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
dir="${FUZZ_BUILD_DIR:-build-fuzz}"
targets=(${FUZZ_TARGETS:-import_fuzzer keys_fuzzer})
jobs="${FUZZ_JOBS:-1}"
cxx="$(command -v clang++-14 || command -v clang++ || true)"
if [ -z "$cxx" ]; then
  echo "fuzz: clang++-14 not found (bash scripts/setup.sh installs clang-14 and libclang-rt-14-dev)" >&2
  exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$cxx" \
  -DSSMTUNE_FUZZ=ON -DSSMTUNE_BUILD_TESTS=OFF "${launcher[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"

root="$PWD"
run_one() {
  local t="$1"
  mkdir -p "$dir/fuzz/corpus-$t"
  echo "fuzz: $t for ${seconds}s"
  # -rss_limit_mb bounds memory; -max_len bounds inputs (exports stay small).
  # Crash inputs land in $dir/fuzz (the fuzzer's working directory).
  (cd "$dir/fuzz" && UBSAN_OPTIONS=print_stacktrace=1 "./$t" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -max_len=16384 -timeout=10 -print_final_stats=1 "corpus-$t" \
    "$root/fuzz/corpus/$t" 2>&1 | tail -n 25)
}
status=0
if [ "$jobs" -gt 1 ]; then
  pids=()
  for t in "${targets[@]}"; do run_one "$t" >"$dir/fuzz/$t.log" 2>&1 & pids+=($!); done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "$dir/fuzz/${targets[$i]}.log"
  done
else
  for t in "${targets[@]}"; do run_one "$t" || status=1; done
fi
exit $status
