#!/usr/bin/env bash
# The install test for ctest (label install): builds the wheel and installs it
# into a fresh venv; exit 77 (skipped) unless SSMTUNE_TEST_INSTALL=1.
set -uo pipefail
[ "${SSMTUNE_TEST_INSTALL:-}" = 1 ] || { echo "SKIPPED: set SSMTUNE_TEST_INSTALL=1"; exit 77; }
exec "${1:-python3}" -m pytest -q -p no:cacheprovider "$(dirname "$0")/test_install.py"
