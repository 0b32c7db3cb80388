#!/bin/bash
# Build the tree, install it into a prefix inside the build directory, and run
# the tools on the emulated mlx5 device the way a user would: ucx_info -d,
# ucx_connect_bench (connect rate, address handles, DevX commands, the stale
# MAC scenario, and the transient/cached instruction ratio under callgrind),
# the data path's message rate, and the stale-MAC bug side by side: the
# uct_hello example on Debian's UCX 1.13.1 and on UCX 1.13.1 with our series
# (when upstream/build.sh has built it), both through the drop-in preload
# library, and on this library on its default glue with the same preload,
# as hosts of one emulated fabric, the servers' MACs moved by ucx_emu.
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

# The stale-MAC bug side by side, on four hosts of one emulated fabric: the
# installed uct_hello example, built unchanged against Debian's UCX 1.13.1
# (run through the drop-in preload library) and against this library; each
# server's MAC moves mid-stream (contrib/mac-move-run.sh)
echo
echo "== the stale MAC side by side: uct_hello on UCX 1.13.1 stock and patched and on this library, one fabric, the servers' MACs moved by ucx_emu"
# UCX 1.13.1 with our series, if upstream/build.sh has built it (its cache)
patched_root=
for d in $(ls -dt "${UCX_UPSTREAM_CACHE:-/var/cache/ucx-mlx5-upstream}"/build-* 2>/dev/null); do
    if [ -f "$d/.done-patched" ] && [ -f "$d/patched/root/opt/ucx-1.13.1/include/uct/api/uct.h" ]; then
        patched_root=$d/patched/root/opt/ucx-1.13.1
        break
    fi
done
fabric=demo-$$
"$bin/ucx_emu" -f "$fabric" create -n 6
side_by_side=yes
for lib in ucx-1.13.1 ucx-1.13.1-patched ours; do
    case $lib in
    ucx-1.13.1)         hosts="host0 host1" ;;
    ucx-1.13.1-patched) hosts="host2 host3" ;;
    ours)               hosts="host4 host5" ;;
    esac
    if [ $lib = ucx-1.13.1 ] && [ ! -f /usr/include/uct/api/uct.h ]; then
        echo "UCX 1.13.1: Debian's libucx-dev is not installed" | tee "$out/mac-$lib.txt"
        side_by_side=no
        continue
    fi
    if [ $lib = ucx-1.13.1-patched ] && [ -z "$patched_root" ]; then
        echo "UCX 1.13.1 patched: not built here (upstream/build.sh builds it, about 10 minutes)" |
            tee "$out/mac-$lib.txt"
        continue
    fi
    # shellcheck disable=SC2086 # two host names
    UCX_PATCHED_ROOT=$patched_root \
    "$top/contrib/mac-move-run.sh" $lib "$prefix" "$fabric" $hosts "$out" \
        >"$out/mac-$lib.txt" || side_by_side=no
    echo "-- $lib (client):"
    cat "$out/$lib-client.txt"
done
"$bin/ucx_emu" -f "$fabric" qps | tee "$out/fabric-qps.txt"
"$bin/ucx_emu" -f "$fabric" show >"$out/fabric-show.txt"
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
row "QPs after the peer's MAC moved: validated AV cache" \
    "$(sed -n 's/^ *QPs after the change *//p' "$out/base.txt" | sed -n 2p)"
row "QPs after the peer's MAC moved: cached AH" "$(after_change "$out/base.txt" tail)"
row "AH creates per connect: transient, validated, cached" \
    "$(sed -n 's/^ *AH creates  *\([0-9.]* vs [0-9.]* vs [0-9.]*\).*/\1/p' "$out/base.txt")"
row "instructions per connect: transient, validated, cached" \
    "$(sed -n 's/^ *instructions *\([0-9,]* vs [0-9,]* vs [0-9,]*\).*/\1/p' "$out/callgrind.txt")"
row "instructions per connect, transient vs cached" \
    "$(sed -n 's/^ *instructions *\([0-9,]* vs [0-9,]* (ratio [0-9.]*)\)/\1/p' "$out/callgrind.txt")"
row "  the same, the cache's lookup counted as free" \
    "$(sed -n 's/^ *with a free AH lookup *\([0-9,]* vs [0-9,]* (ratio [0-9.]*)\).*/\1/p' "$out/callgrind.txt")"
row "message rate, 8-byte active messages, rc_mlx5" \
    "$(sed -n 's/^message rate, am_short 8 B: //p' "$out/data-rc_mlx5.txt")"
row "message rate, 8-byte active messages, rc_verbs" \
    "$(sed -n 's/^message rate, am_short 8 B: //p' "$out/data-rc_verbs.txt")"

# key=value of contrib/mac-move-run.sh
mm() { sed -n "s/^$2=//p" "$out/mac-$1.txt"; }
reconnects() {
    local r f
    r=$(mm "$1" reconnects) f=$(mm "$1" failures)
    [ -n "$r" ] || return 0
    if [ "$f" -gt "$r" ]; then echo "$r, all failed"; else echo "$r, first try"; fi
}
echo
echo "== the stale MAC side by side (two hosts each, one fabric, same steps: 60 greetings, the server's MAC moved after 20)"
side() { printf '  %-34s %-28s %-28s %s\n' "$1" "$2" "$3" "$4"; }
side "" "UCX 1.13.1 (Debian's libucx0)" "UCX 1.13.1 + our series" "this library (default glue)"
[ -n "$patched_root" ] || side "" "" "(not built: upstream/build.sh)" ""
side "greetings echoed, of 60" "$(mm ucx-1.13.1 echoed)" "$(mm ucx-1.13.1-patched echoed)" "$(mm ours echoed)"
side "the live endpoint" "$(mm ucx-1.13.1 live)" "$(mm ucx-1.13.1-patched live)" "$(mm ours live)"
side "reconnects" "$(reconnects ucx-1.13.1)" "$(reconnects ucx-1.13.1-patched)" "$(reconnects ours)"
side "MAC in the newest QP's INIT2RTR" "$(mm ucx-1.13.1 reconnect_mac)" "$(mm ucx-1.13.1-patched reconnect_mac)" "$(mm ours reconnect_mac)"
side "the server's port's MAC now" "$(mm ucx-1.13.1 server_mac)" "$(mm ucx-1.13.1-patched server_mac)" "$(mm ours server_mac)"
[ "$side_by_side" = yes ] || echo "  (a run did not complete: see $out/mac-*.txt)"
echo "  (full outputs in $out)"
