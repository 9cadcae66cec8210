#!/usr/bin/env bash
# Installs what ssmtune needs to build and test on Debian 12 (the CUDA
# toolkit itself is expected at /usr/local/cuda). Idempotent: skips apt when
# every package is already present.
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libsqlite3-dev catch2 libcli11-dev nlohmann-json3-dev
          clang-format clang-tidy python3 python3-pytest python3-dev python3-venv python3-pip
          python3-setuptools python3-wheel chromium clang-14 libclang-rt-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ ! -f /usr/local/cuda/include/nvrtc.h ] && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup: the CUDA toolkit (NVRTC) was not found at /usr/local/cuda; install it or set CUDAToolkit_ROOT" >&2
  exit 1
fi
