#!/bin/bash
# A UCP client reconnecting to a server whose MAC moved, on UCX 1.13.1
# stock and patched (issue 23): contrib/ucp-reconnect/ucp_reconnect.c,
# built against each install, runs as two hosts of a private emulated
# fabric through PREFIX's drop-in preload library; after 20 messages the
# server's RoCE port moves to another MAC (ucx_emu mac). The live
# endpoint fails either way; the patched UCX's new endpoint carries the
# new MAC and the client delivers all 60 messages, the stock one's new
# endpoints keep the cached AH's old MAC and every reconnect fails (UCX
# 1.13.1 stock, assertions on, may abort the client when the failed
# wireup is purged: the server's count and the QP's MAC tell the result).
#
#   ucp-reconnect-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR
#
# PREFIX       an installed tree of this project (the preload, ucx_emu)
# *_ROOT       UCX installs (upstream/build.sh's .../root/opt/ucx-1.13.1)
# UCX_TLS=rc_x: the data lane is rc_mlx5, UCP's wireup goes over ud_mlx5,
# so the reconnect needs both patches of the series (the RC DEVX connect's
# AV and the UD endpoint's). Prints "ucp-reconnect: ok: ..." or "ucp-reconnect: FAILED:
# ..." per build, then "N passed, N failed, N skipped"; exit status 0 if
# the patched UCX reconnected and the stock one did not.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:?usage: ucp-reconnect-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR}
stock_root=${2:?usage: ucp-reconnect-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR}
patched_root=${3:?usage: ucp-reconnect-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR}
out=${4:?usage: ucp-reconnect-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR}
emu=$prefix/bin/ucx_emu
count=60
limit=${UCP_RECONNECT_TIMEOUT:-90}
fabric=ucp-reconnect-$$
passed=0 failed=0
. "$top/contrib/common/tcp-ports.sh"

mkdir -p "$out" || { echo "ucp-reconnect: FAILED: cannot create $out"; exit 1; }

. "$top/contrib/common/emu-fabric.sh"
trap fabric_cleanup EXIT

ok()   { echo "ucp-reconnect: ok: $*"; passed=$((passed + 1)); }
fail() { echo "ucp-reconnect: FAILED: $*"; failed=$((failed + 1)); }

# run NAME ROOT: the scenario on the UCX in ROOT; sets sent, reconnects,
# failures, distinct, errors and newest (the client's newest QP's MAC
# state), or why it could not run
run() {
    local name=$1 root=$2 bin=$out/ucp_reconnect-$1 port spid cpid
    local slog=$out/$1-server.txt clog=$out/$1-client.txt

    sent= reconnects= failures= distinct= errors= newest= client_end=
    rm -f "$out/$name-ld-debug".*
    cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Werror -I"$root/include" \
        "$top/contrib/ucp-reconnect/ucp_reconnect.c" -o "$bin" \
        -L"$root/lib" -lucp -lucs -Wl,-rpath,"$root/lib" 2>"$out/$name-build.log" ||
        { why="cannot build against $root (see $out/$name-build.log)"; return 1; }
    fabric_cleanup
    "$emu" -f "$fabric" create -n 2 >/dev/null ||
        { why="cannot create fabric $fabric"; return 1; }
    tcp_next_port
    port=$tcp_port
    local env=(LD_LIBRARY_PATH="$root/lib" LD_DEBUG=files
               LD_DEBUG_OUTPUT="$out/$name-ld-debug"
               LD_PRELOAD="$prefix/lib/libucx_mlx5_emu_preload.so"
               UCX_IB_EMU_FABRIC="$fabric" UCX_WARN_UNUSED_ENV_VARS=n
               UCX_TLS=${UCP_RECONNECT_TLS:-rc_x} UCX_NET_DEVICES=mlx5_0:1
               UCX_RC_TIMEOUT=100ms UCX_RC_RETRY_COUNT=3)

    setsid env "${env[@]}" UCX_IB_EMU_HOST=host1 timeout -k 5 "$limit" \
        "$bin" server "$port" "$count" >"$slog" 2>&1 </dev/null &
    spid=$!
    pids=("$spid")
    for _ in $(seq 100); do
        tcp_listening "$port" && break
        sleep 0.1
    done
    setsid env "${env[@]}" UCX_IB_EMU_HOST=host0 timeout -k 5 "$limit" \
        "$bin" client "$port" "$count" 3 50 >"$clog" 2>&1 </dev/null &
    cpid=$!
    pids+=("$cpid")
    for _ in $(seq 300); do
        grep -q '^client: sent 20$' "$clog" && break
        kill -0 "$cpid" 2>/dev/null || break
        sleep 0.1
    done
    grep -q '^client: sent 20$' "$clog" ||
        { why="the client did not reach message 20 (see $clog)"; return 1; }
    "$emu" -f "$fabric" mac host1 mlx5_0 02:c9:aa:00:01:01 >/dev/null ||
        { why="ucx_emu mac failed"; return 1; }
    wait "$cpid"
    client_rc=$?
    wait "$spid"
    pids=()
    "$emu" -f "$fabric" qps host0 >"$out/$name-qps.txt" 2>&1
    # every UCX library both processes ran is ROOT's
    local libs
    libs=$(cat "$out/$name-ld-debug".* 2>/dev/null | sed -n 's/.*calling init: //p' |
           grep -E '/libuc[pst]\.so|/libuct_' | sort -u)
    rm -f "$out/$name-ld-debug".*
    if [ -z "$libs" ] || grep -qv "^$root/lib/" <<<"$libs"; then
        why="UCX libraries from outside $root/lib: $(grep -v "^$root/lib/" <<<"$libs" | tr '\n' ' ')"
        return 1
    fi

    read -r sent failures reconnects <<<"$(sed -n \
        's/^client: \([0-9]*\) of [0-9]* sent, \([0-9]*\) endpoint failure(s), \([0-9]*\) reconnect(s)$/\1 \2 \3/p' "$clog")"
    read -r distinct errors <<<"$(sed -n \
        's/^server: [0-9]* messages, \([0-9]*\) of [0-9]* distinct, \([0-9]*\) data errors$/\1 \2/p' "$slog")"
    newest=$(awk 'NR > 1 {s = $10} END {sub(":", "", s); print s}' "$out/$name-qps.txt")
    [ -n "$distinct" ] || { why="no summary from the server (see $slog)"; return 1; }
    if [ -z "$sent" ]; then
        # the client died on its way: how, in its own words
        client_end="the client ended with status $client_rc: $(grep -m1 -E 'Assertion|Caught signal|error' "$clog" |
                     sed 's/^\[[^]]*\] *//' | cut -c1-160)"
    fi
}

describe() {
    if [ -n "$sent" ]; then
        echo "$sent of $count sent, $distinct distinct at the server ($errors data errors), $failures endpoint failure(s), $reconnects reconnect(s), the newest QP's MAC $newest"
    else
        echo "$distinct of $count at the server ($errors data errors), the newest QP's MAC $newest; $client_end"
    fi
}

if run patched "$patched_root"; then
    if [ "${sent:-0}" -eq $count ] && [ "$distinct" -eq $count ] &&
       [ "$errors" -eq 0 ] && [ "$newest" = current ]; then
        ok "patched: reconnected: $(describe)"
    else
        fail "patched: $(describe) (expected: all delivered, the newest QP current)"
    fi
else
    fail "patched: $why"
fi

if run stock "$stock_root"; then
    if [ "$distinct" -lt $count ] && [ "$newest" = STALE ]; then
        ok "stock: the bug: $(describe)"
    else
        fail "stock: $(describe) (expected: the reconnects fail, the newest QP STALE)"
    fi
else
    fail "stock: $why"
fi

echo "$passed passed, $failed failed, 0 skipped"
[ $failed -eq 0 ]
