#!/usr/bin/env bash
# Sets up, builds and runs every test suite. GPU suites (label gpu) show as
# skipped on a machine without a CUDA driver. Ends with ctest's summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/check_format.sh
bash scripts/build.sh
ctest --test-dir "${BUILD_DIR:-build}" -j "$(nproc)" --output-on-failure
