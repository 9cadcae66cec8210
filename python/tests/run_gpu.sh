#!/usr/bin/env bash
# The Python GPU suite for ctest: exit 77 (skipped) without torch or a GPU.
# SSMTUNE_GPU_PY_TESTS="test_gpu_bwd.py test_gpu_step.py" runs those files of the suite only (a
# run split over several device calls); other arguments go to pytest.
set -uo pipefail
cd "$(dirname "$0")/.."
suite=(test_gpu.py test_gpu_op.py test_gpu_bwd.py test_gpu_bwd_mamba.py test_gpu_tune.py
  test_gpu_mamba_lm.py test_gpu_step.py)
files=()
for f in ${SSMTUNE_GPU_PY_TESTS:-${suite[*]}}; do
  [[ " ${suite[*]} " == *" $f "* ]] || {
    echo "run_gpu.sh: '$f' is not a file of the suite (${suite[*]})" >&2; exit 2; }
  files+=("tests/$f")
done
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null || {
  echo "SKIPPED: no torch with CUDA"; exit 77; }
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q "${files[@]}" "$@"
