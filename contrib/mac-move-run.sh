#!/bin/bash
# The stale-MAC scenario with one library, on two hosts of an emulated
# fabric: examples/uct_hello.c, built unchanged against that library, runs
# as a server and a client; after greeting 20 the server's RoCE port
# (mlx5_0) moves to another MAC with ucx_emu; the client's live endpoint
# fails and it reconnects (at most 3 times). Then ucx_emu qps reads back
# the MAC each of the client's QPs was given at INIT2RTR.
#
#   mac-move-run.sh LIB PREFIX FABRIC SERVER CLIENT OUTDIR
#
# LIB     "ucx-1.13.1": Debian's UCX (libucx-dev), on the emulated device
#                       through PREFIX's drop-in preload library
#         "ucx-1.13.1-patched": UCX 1.13.1 built from Debian's source with
#                       our series (upstream/build.sh), installed in
#                       $UCX_PATCHED_ROOT, through the same preload
#         "ours":       this library, installed in PREFIX, on its default
#                       glue (rdma-core's calls, as on a cluster) with the
#                       same preload standing in for the NIC
# PREFIX  an installed tree of this project (its ucx_emu operates the fabric)
# FABRIC  an existing fabric (ucx_emu create); SERVER and CLIENT are two of
#         its hosts (host0, host1, ...)
# OUTDIR  the programs' outputs go to OUTDIR/LIB-*.txt
# MAC_MOVE_TL (environment): the transport, rc_mlx5 unless set (dc_mlx5:
#         endpoints to the peer's interface, a DCI's connection per target)
#
# Prints key=value lines:
#   echoed         greetings echoed, of 60
#   failures       endpoint failures
#   reconnects     reconnects made
#   live           how the live endpoint failed ("Endpoint timeout after 1.08 s")
#   reconnect_mac  the MAC of the client's newest QP, with "current" or
#                  "STALE" (the server port's MAC is another one)
#   server_mac     the MAC the server's port moved to
# Exit status 0 if the scenario ran (whatever the library did), 1 if not.
set -uo pipefail

lib=${1:?usage: mac-move-run.sh LIB PREFIX FABRIC SERVER CLIENT OUTDIR}
prefix=$2 fabric=$3 server=$4 client=$5 out=$6
tl=${MAC_MOVE_TL:-rc_mlx5}
top=$(cd "$(dirname "$0")/.." && pwd)
emu=$prefix/bin/ucx_emu
src=$prefix/share/ucx/examples/uct_hello.c  # as installed
[ -f "$src" ] || src=$top/examples/uct_hello.c
hello=$out/uct_hello-$lib
slog=$out/$lib-server.txt clog=$out/$lib-client.txt
. "$top/contrib/common/tcp-ports.sh"
tcp_next_port
port=$tcp_port
limit=90
new_mac=$(printf "02:c9:aa:00:%02x:01" "${server#host}")

mkdir -p "$out"
case $lib in
ucx-1.13.1)
    [ -f /usr/include/uct/api/uct.h ] ||
        { echo "mac-move-run: Debian's libucx-dev is not installed" >&2; exit 1; }
    cc -std=c11 -O2 -o "$hello" "$src" -luct -lucs || exit 1
    # UCX 1.13.1 would warn of the emulator's UCX_IB_EMU_* variables
    run_env=(LD_PRELOAD="$prefix/lib/libucx_mlx5_emu_preload.so"
             UCX_WARN_UNUSED_ENV_VARS=n)
    ;;
ucx-1.13.1-patched)
    root=${UCX_PATCHED_ROOT:?UCX_PATCHED_ROOT: the patched UCX 1.13.1 install}
    [ -f "$root/include/uct/api/uct.h" ] ||
        { echo "mac-move-run: no UCX install in $root" >&2; exit 1; }
    cc -std=c11 -O2 -I"$root/include" -o "$hello" "$src" -L"$root/lib" \
        -luct -lucs -Wl,-rpath,"$root/lib" || exit 1
    run_env=(LD_LIBRARY_PATH="$root/lib"
             LD_PRELOAD="$prefix/lib/libucx_mlx5_emu_preload.so"
             UCX_WARN_UNUSED_ENV_VARS=n)
    ;;
ours)
    # only this tree's headers: none from a distribution's UCX
    if cc -M -std=c11 -I"$prefix/include" "$src" | grep -qE '/usr/include/(ucs|uct)/'; then
        echo "mac-move-run: uct_hello.c finds a ucs/ or uct/ header outside $prefix" >&2
        exit 1
    fi
    cc -std=c11 -O2 -I"$prefix/include" -o "$hello" "$src" -L"$prefix/lib" \
        -luct -lucs -Wl,-rpath,"$prefix/lib" || exit 1
    run_env=(LD_PRELOAD="$prefix/lib/libucx_mlx5_emu_preload.so")
    ;;
*)
    echo "mac-move-run: unknown library '$lib'" >&2
    exit 1
    ;;
esac

spid=
cpid=
cleanup() {
    [ -n "$cpid" ] && kill "$cpid" 2>/dev/null
    [ -n "$spid" ] && kill "$spid" 2>/dev/null
    wait 2>/dev/null
}
trap cleanup EXIT

common=(UCX_IB_EMU_FABRIC="$fabric" UCX_RC_TIMEOUT=100ms "${run_env[@]}")
env -u UCX_IB_GLUE "${common[@]}" UCX_IB_EMU_HOST="$server" timeout $limit "$hello" \
    -x "$tl" -p $port >"$slog" 2>&1 &
spid=$!
for _ in $(seq 100); do
    tcp_listening $port && break
    sleep 0.1
done
env -u UCX_IB_GLUE "${common[@]}" UCX_IB_EMU_HOST="$client" timeout $limit "$hello" \
    -x "$tl" -p $port -n 60 -i 20000 -r 3 localhost >"$clog" 2>&1 &
cpid=$!
for _ in $(seq 300); do
    grep -q 'greeting 20 echoed' "$clog" && break
    kill -0 $cpid 2>/dev/null || break
    sleep 0.1
done
grep -q 'greeting 20 echoed' "$clog" ||
    { echo "mac-move-run: $lib: the client did not reach greeting 20" >&2; cat "$clog" >&2; exit 1; }
"$emu" -f "$fabric" mac "$server" mlx5_0 "$new_mac" >/dev/null || exit 1
wait $cpid
cpid=
wait $spid
spid=
"$emu" -f "$fabric" qps "$client" >"$out/$lib-qps.txt" || exit 1

summary=$(sed -n 's/^client: \([0-9]*\) greetings echoed, \([0-9]*\) endpoint failure(s), \([0-9]*\) reconnect(s)$/\1 \2 \3/p' "$clog")
[ -n "$summary" ] ||
    { echo "mac-move-run: $lib: no summary from the client" >&2; cat "$clog" >&2; exit 1; }
read -r echoed failures reconnects <<<"$summary"
echo "echoed=$echoed"
echo "failures=$failures"
echo "reconnects=$reconnects"
echo "live=$(sed -n 's/^client: greeting [0-9]* failed after \([0-9.]*\) s: \([^;]*\);.*/\2 after \1 s/p' "$clog" | head -n 1)"
echo "reconnect_mac=$(awk 'NR > 1 {m = $9; s = $10} END {sub(":", "", s); print m, s}' "$out/$lib-qps.txt")"
echo "server_mac=$new_mac"
