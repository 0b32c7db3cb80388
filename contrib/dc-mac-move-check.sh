#!/bin/bash
# The stale-MAC scenario over DC (issue 27) with UCX 1.13.1 stock and
# patched: examples/uct_hello.c over dc_mlx5 (endpoints to the peer's
# interface), the server's RoCE port moved to another MAC after greeting 20
# (contrib/mac-move-run.sh). A DC endpoint takes its address vector from
# the UD helper the series' second patch changes, so the patched UCX's
# reconnect carries the new MAC and echoes all 60; the stock one takes it
# from the AH cache, and its DCI keeps the old MAC through all three
# reconnects (ucx_emu qps: STALE).
#
#   dc-mac-move-check.sh PREFIX PATCHED_ROOT OUTDIR
#
# PREFIX        an installed tree of this project (preload, ucx_emu)
# PATCHED_ROOT  the patched UCX 1.13.1 install (upstream/build.sh); stock
#               is Debian's libucx-dev, built from the same source
# Prints "dc-mac-move: ok: ..." or "... FAILED: ..." per library, then
# "N passed, N failed, N skipped"; exit status 0 if both went as expected.
# Leaves no process or fabric behind.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: dc-mac-move-check.sh PREFIX PATCHED_ROOT OUTDIR"
prefix=${1:?$usage}
patched_root=${2:?$usage}
out=${3:?$usage}
emu=$prefix/bin/ucx_emu
fabric=dc-mac-move-$$
passed=0 failed=0

mkdir -p "$out" || { echo "dc-mac-move: FAILED: cannot create $out"; exit 1; }

. "$top/contrib/common/emu-fabric.sh"
trap fabric_cleanup EXIT

ok()   { echo "dc-mac-move: ok: $*"; passed=$((passed + 1)); }
fail() { echo "dc-mac-move: FAILED: $*"; failed=$((failed + 1)); }

# check LIB SERVER CLIENT WANT: one run, its key=value lines against WANT
check() {
    local lib=$1 server=$2 client=$3 want=$4 log=$out/$1.txt got

    if ! MAC_MOVE_TL=dc_mlx5 UCX_PATCHED_ROOT=$patched_root \
            "$top/contrib/mac-move-run.sh" "$lib" "$prefix" "$fabric" \
            "$server" "$client" "$out" >"$log" 2>&1; then
        fail "$lib over dc_mlx5: the scenario did not run (see $log)"
        return
    fi
    got=$(grep -E '^(echoed|failures|reconnects|reconnect_mac)=' "$log" | paste -sd ' ')
    if [[ "$got" =~ ^$want$ ]]; then
        ok "$lib over dc_mlx5: $(paste -sd ' ' "$log")"
    else
        fail "$lib over dc_mlx5: got \"$got\", expected \"$want\" (see $out/$lib-client.txt)"
    fi
}

if ! "$emu" -f "$fabric" create -n 4 >/dev/null; then
    fail "ucx_emu create -n 4"
else
    # stock: the live endpoint and all 3 reconnects fail, the DCI still
    # carries the server's first MAC
    check ucx-1.13.1 host0 host1 \
        "echoed=[0-9]+ failures=4 reconnects=3 reconnect_mac=02:c9:00:00:00:01 STALE"
    # patched: one failure, one reconnect, with the MAC the port moved to
    check ucx-1.13.1-patched host2 host3 \
        "echoed=60 failures=1 reconnects=1 reconnect_mac=02:c9:aa:00:02:01 current"
fi

echo "$passed passed, $failed failed, 0 skipped"
[ $failed -eq 0 ]
