#!/bin/bash
# Build the tree, install it into a prefix inside the build directory, and run
# the tools on the emulated mlx5 device the way a user would: ucx_info -d,
# ucx_connect_bench (connect rate, address handles, DevX commands, the stale
# MAC scenario, and the transient/cached instruction ratio under callgrind),
# the data path's message rate, and two processes as two hosts of an
# emulated fabric (uct_hello) with the server's MAC moved by ucx_emu.
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

# Two hosts of an emulated fabric: the installed uct_hello example, built as
# a user builds it, as server and client; the server's MAC moves mid-stream
echo
echo "== two processes on the emulated fabric: uct_hello, the server's MAC moved by ucx_emu"
cc -std=c11 -pedantic -Wall -Werror "$prefix/share/ucx/examples/uct_hello.c" \
    -o "$out/uct_hello" \
    $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags --libs ucx-ib) \
    -Wl,-rpath,"$prefix/lib"
fabric=demo-$$
port=$(( 20000 + $$ % 20000 ))
"$bin/ucx_emu" -f "$fabric" create -n 2
(
    export UCX_IB_EMU_FABRIC=$fabric UCX_RC_TIMEOUT=100ms
    UCX_IB_EMU_HOST=host0 timeout 120 "$out/uct_hello" -p "$port" \
        >"$out/hello-server.txt" 2>&1 &
    sleep 0.5
    UCX_IB_EMU_HOST=host1 timeout 120 "$out/uct_hello" -p "$port" -n 60 \
        -i 20000 localhost >"$out/hello-client.txt" 2>&1 &
    client=$!
    for _ in $(seq 100); do
        grep -q 'greeting 20 echoed' "$out/hello-client.txt" && break
        sleep 0.1
    done
    "$bin/ucx_emu" -f "$fabric" mac host0 mlx5_0 02:c9:aa:00:00:01
    wait $client
    wait
)
cat "$out/hello-client.txt"
"$bin/ucx_emu" -f "$fabric" show | tee "$out/fabric-show.txt"
"$bin/ucx_emu" -f "$fabric" destroy

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
row "two hosts, uct_hello (server MAC moved mid-stream)" \
    "$(sed -n 's/^client: //p' "$out/hello-client.txt" | tail -n 1)"
row "  the live endpoint" \
    "$(sed -n 's/^client: greeting \([0-9]*\) failed after \([0-9.]* s: [a-z ]*\);.*/greeting \1 failed after \2, then one reconnect/p' "$out/hello-client.txt")"
row "  packets dropped on the fabric" \
    "$(sed -n 's/^ *drops: //p' "$out/fabric-show.txt" | grep -v '^none$' | paste -sd ';')"
echo "  (full outputs in $out)"
