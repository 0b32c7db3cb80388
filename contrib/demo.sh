#!/bin/bash
# Build the tree and run the demonstration: ucx_info on this build.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-demo}

"$top/contrib/install-deps.sh"
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p "$build"
cd "$build"
[ -f Makefile ] || "$top/configure" >configure.log
make -j"$(nproc)" >build.log 2>&1 || { tail -40 build.log; exit 1; }

echo "== ucx_info -v: version and build configuration"
./src/tools/info/ucx_info -v
echo
echo "== ucx_info -c: every configuration knob"
./src/tools/info/ucx_info -c
