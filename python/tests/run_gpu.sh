#!/usr/bin/env bash
# The Python GPU suite for ctest: exit 77 (skipped) without torch or a GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null || {
  echo "SKIPPED: no torch with CUDA"; exit 77; }
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q tests/test_gpu.py tests/test_gpu_op.py \
  tests/test_gpu_bwd.py tests/test_gpu_bwd_mamba.py tests/test_gpu_tune.py tests/test_gpu_mamba_lm.py \
  tests/test_gpu_step.py "$@"
