#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy, every finding an error) over each
# translation unit of the build that is a project source: the libraries, the
# CLI, the Python extension and the tests, not generated files. Needs the
# build's compile_commands.json (scripts/build.sh writes it). TIDY_JOBS
# parallel runs (default: the CPU count).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${BUILD_DIR:-build}"
db="$build/compile_commands.json"
if [ ! -f "$db" ]; then
  echo "tidy: $db not found (run scripts/build.sh first)" >&2
  exit 2
fi
tidy="$(command -v clang-tidy || command -v clang-tidy-14 || true)"
if [ -z "$tidy" ]; then
  echo "tidy: clang-tidy not found (scripts/setup.sh installs it)" >&2
  exit 2
fi
root="$(pwd)"
mapfile -t files < <(python3 - "$db" "$root" <<'PY'
import json, sys
db, root = sys.argv[1], sys.argv[2]
dirs = ("core/", "jit/", "cache/", "runtime/", "tuner/", "cli/", "report/", "python/ext/",
        "bench/", "tests/")
seen = set()
for entry in json.load(open(db)):
    f = entry["file"]
    rel = f[len(root) + 1:] if f.startswith(root + "/") else None
    if rel and rel.startswith(dirs) and rel not in seen:
        seen.add(rel)
        print(rel)
PY
)
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# The build uses GCC's flags; clang-tidy (clang) does not know some of them.
if ! printf '%s\n' "${files[@]}" |
  xargs -r -P "${TIDY_JOBS:-$(nproc)}" -n 4 "$tidy" -p "$build" --quiet \
    --extra-arg=-Wno-unknown-warning-option >"$log" 2>&1; then
  grep -E "(error|warning):" "$log" | sort -u
  echo "tidy: findings above (${#files[@]} translation units checked)"
  exit 1
fi
echo "tidy: ${#files[@]} translation units clean"
