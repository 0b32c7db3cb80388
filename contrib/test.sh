#!/bin/bash
# The whole test matrix from a clean clone: install what is missing, then
# build and run gtest plain, under ASan+LSan and under valgrind.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/install-deps.sh"
exec "$top/buildlib/test-matrix.sh" "$@"
