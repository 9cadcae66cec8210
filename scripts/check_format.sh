#!/usr/bin/env bash
# Fails when any C++ or CUDA source differs from what clang-format makes of it: the tracked
# ones and the new ones git does not ignore (a file not yet added is checked before its commit).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.cpp' '*.h' '*.cuh' 2>/dev/null ||
  find . -name '*.cpp' -o -name '*.h' -o -name '*.cuh')
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # tracked, deleted in the work tree
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "format: $f differs from clang-format (run: clang-format -i $f)"
    bad=1
  fi
done
[ "$bad" -eq 0 ] && echo "format: ${#files[@]} files clean"
exit "$bad"
