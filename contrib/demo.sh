#!/bin/bash
# Build the tree, install it into a prefix inside the build directory, and run
# the tools on the emulated mlx5 device the way a user would: ucx_info -d and
# ucx_connect_bench (connect rate, address handles, DevX commands, the stale
# MAC scenario, and the transient/cached instruction ratio under callgrind).
# Ends with a short report of the numbers.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build-demo}
prefix=$build/install
out=$build/demo
jobs=${JOBS:-$(nproc)}

"$top/contrib/install-deps.sh"
cd "$top"
[ -x configure ] || ./autogen.sh >/dev/null
mkdir -p "$build" "$out"
cd "$build"
if ! { [ -f Makefile ] && grep -qx "prefix = $prefix" Makefile; }; then
    "$top/configure" --prefix="$prefix" >configure.log
fi
echo "== building in $build, installing into $prefix"
{ make -j"$jobs" && make install; } >build.log 2>&1 || { tail -40 build.log; exit 1; }

bin=$prefix/bin
# The installed tools find libucs through their run path, the transport
# modules in $prefix/lib/ucx next to it, and the emulated device library
# (UCX_IB_GLUE=emulated) in $prefix/lib.
export UCX_IB_GLUE=emulated

echo
echo "== ucx_info -v"
"$bin/ucx_info" -v
echo
echo "== ucx_info -c: $("$bin/ucx_info" -c | grep -c '^UCX_') configuration knobs (run it to see them with their documentation)"

echo
echo "== UCX_IB_GLUE=emulated ucx_info -d"
"$bin/ucx_info" -d | tee "$out/info.txt"

run_bench() {
    local name=$1
    shift
    echo
    echo "== ucx_connect_bench $*"
    "$bin/ucx_connect_bench" "$@" | tee "$out/$name.txt"
}

# 5000 endpoints per side, connected both ways: 10,000 RC connects
run_bench rc    -e -n 5000
run_bench k1    -e -n 1000 -k 1
run_bench k4    -e -n 1000 -k 4 -m
run_bench k16   -e -n 1000 -k 16
run_bench base  -e -n 1000 -b -m

for tl in rc_mlx5 rc_verbs; do
    echo
    echo "== ucx_rc_data_bench -e -t $tl"
    "$bin/ucx_rc_data_bench" -e -t $tl | tee "$out/data-$tl.txt"
done

echo
echo "== valgrind --tool=callgrind --collect-atstart=no ucx_connect_bench -e -b -n 500"
mkdir -p "$out/callgrind"
(cd "$out/callgrind" && rm -f callgrind.out.* &&
 valgrind --tool=callgrind --collect-atstart=no --log-file=valgrind.log \
     "$bin/ucx_connect_bench" -e -b -n 500) | tee "$out/callgrind.txt"

# ---- the report ----
value() { # file, label: the number after the label on its first line
    sed -n "s/^ *$2 *\([0-9][0-9,.]*\).*/\1/p" "$1" | head -n 1
}
ah_pairs() { # file: AHs created + destroyed per endpoint
    echo "$(value "$1" 'AH creates per endpoint') + $(value "$1" 'AH destroys per endpoint')"
}
after_change() { # file, which (head/tail): the QPs connected after the MAC change
    sed -n 's/^ *QPs after the change *//p' "$1" | "$2" -n 1
}

echo
echo "== report: $(sed -n 's/^ucx_connect_bench: //p' "$out/rc.txt")"
row() { printf '  %-50s %s\n' "$1" "$2"; }
row "ports in ucx_info -d" \
    "$(grep -c '^#   Device: .*(emulated)' "$out/info.txt"), each marked (emulated)"
row "connect rate, rc_mlx5 eps through the public API" \
    "$(value "$out/rc.txt" 'connect rate') QP/s"
row "AHs created + destroyed per endpoint, K = 1" "$(ah_pairs "$out/k1.txt")"
row "AHs created + destroyed per endpoint, K = 4" "$(ah_pairs "$out/k4.txt")"
row "AHs created + destroyed per endpoint, K = 16" "$(ah_pairs "$out/k16.txt")"
row "DevX commands per RC connect (creation excluded)" \
    "$(value "$out/rc.txt" 'DevX commands per QP')"
row "AHs alive after 10,000 connects" "$(value "$out/rc.txt" 'AHs alive at the end')"
row "QPs after the peer's MAC moved: transient AH" "$(after_change "$out/k4.txt" head)"
row "QPs after the peer's MAC moved: cached AH" "$(after_change "$out/base.txt" tail)"
row "instructions per connect, transient vs cached" \
    "$(sed -n 's/^ *instructions *\([0-9,]* vs [0-9,]* (ratio [0-9.]*)\)/\1/p' "$out/callgrind.txt")"
row "  the same, the cache's lookup counted as free" \
    "$(sed -n 's/^ *with a free AH lookup *\([0-9,]* vs [0-9,]* (ratio [0-9.]*)\).*/\1/p' "$out/callgrind.txt")"
row "message rate, 8-byte active messages, rc_mlx5" \
    "$(sed -n 's/^message rate, am_short 8 B: //p' "$out/data-rc_mlx5.txt")"
row "message rate, 8-byte active messages, rc_verbs" \
    "$(sed -n 's/^message rate, am_short 8 B: //p' "$out/data-rc_verbs.txt")"
echo "  (full outputs in $out)"
