#!/usr/bin/env bash
# On the GPU machine: runs the GPU suites (label gpu) from a build folder
# made elsewhere, so nothing needs building there. Usage:
#   bash scripts/gpu_test.sh [build-dir] [ctest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
shift || true
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
ctest --test-dir "$build" -L gpu --output-on-failure "$@"
