#!/usr/bin/env bash
# Sets up, builds, checks the sources with clang-tidy (after the build: it reads
# the build's compile commands) and runs every test suite. GPU suites (label
# gpu) show as skipped on a machine without a CUDA driver. Ends with ctest's summary, then
# runs both fuzzers at once for a bounded time (FUZZ_SECONDS each, 60 here;
# 0 skips them).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check_format.sh
bash scripts/build.sh
bash scripts/check_tidy.sh
ctest --test-dir "${BUILD_DIR:-build}" -j "$(nproc)" --output-on-failure
if [ "${FUZZ_SECONDS:-60}" != 0 ]; then
  FUZZ_SECONDS="${FUZZ_SECONDS:-60}" FUZZ_JOBS="${FUZZ_JOBS:-2}" bash scripts/fuzz.sh
fi
