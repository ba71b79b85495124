#!/usr/bin/env bash
# The bad-input fuzz tests with many more examples than the suite's (40 command lines per test there):
#   bench/fuzz_command_lines.sh [EXAMPLES]    (default 1000; about a second each on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
TUI_EVAL_FUZZ_EXAMPLES="${1:-1000}" exec python -m pytest -q -p no:cacheprovider tests/e2e/test_fuzz_command_lines.py
