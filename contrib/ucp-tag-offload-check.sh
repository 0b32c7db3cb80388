#!/bin/bash
# UCP with hardware tag matching (UCX_RC_MLX5_TM_ENABLE=y) on UCX 1.13.1
# stock and patched (issue 23): each install's ucx_perftest, tag_bw with
# 64 KiB messages (a rendezvous the device reads itself when its tag is
# posted) and tag_lat with 4 KiB (eager, above UCP's offload threshold),
# over rc_mlx5 (UCX_TLS=rc_x) between two hosts of a private emulated
# fabric, through PREFIX's drop-in preload library, on a RoCE port (mlx5_0)
# and an InfiniBand port (mlx5_2).
# The receiver's log (the emulator's debug messages) must show tags matched
# by the device and rendezvous data it read.
#
# Stock UCX 1.13.1 connects its tag-matching command QP with the port's LID
# as the address, 0 on RoCE, and asserts in the RC DevX connect when it
# opens the interface on RoCEv2: it must abort there, and run on
# InfiniBand. The patched UCX (the series' third patch) must run on both.
#
#   ucp-tag-offload-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR
#
# Prints a line per run ("ucp-tag-offload: ok: ..." or "... FAILED: ..."),
# then "N passed, N failed, N skipped"; exit status 0 if every run went as
# expected. Each run is bounded (UCP_TAG_OFFLOAD_TIMEOUT, default 90 s) and
# leaves no process or fabric behind.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: ucp-tag-offload-check.sh PREFIX STOCK_ROOT PATCHED_ROOT OUTDIR"
prefix=${1:?$usage}
stock_root=${2:?$usage}
patched_root=${3:?$usage}
out=${4:?$usage}
emu=$prefix/bin/ucx_emu
limit=${UCP_TAG_OFFLOAD_TIMEOUT:-90}
fabric=ucp-tag-offload-$$
passed=0 failed=0
. "$top/contrib/common/tcp-ports.sh"

mkdir -p "$out" || { echo "ucp-tag-offload: FAILED: cannot create $out"; exit 1; }

. "$top/contrib/common/emu-fabric.sh"
trap fabric_cleanup EXIT

ok()   { echo "ucp-tag-offload: ok: $*"; passed=$((passed + 1)); }
fail() { echo "ucp-tag-offload: FAILED: $*"; failed=$((failed + 1)); }

# run NAME ROOT DEV TEST ARGS...: ucx_perftest of ROOT as server (host1)
# and client (host0); sets src, crc, slog and clog
run() {
    local name=$1 root=$2 dev=$3 test=$4 spid cpid
    shift 4
    slog=$out/$name-$test-${dev%:*}-server.txt
    clog=$out/$name-$test-${dev%:*}-client.txt
    fabric_cleanup
    "$emu" -f "$fabric" create -n 2 >/dev/null ||
        { echo "cannot create fabric $fabric" >"$clog"; src=1 crc=1; return; }
    tcp_next_port
    local env=(LD_LIBRARY_PATH="$root/lib"
               LD_PRELOAD="$prefix/lib/libucx_mlx5_emu_preload.so"
               UCX_IB_EMU_FABRIC="$fabric" UCX_WARN_UNUSED_ENV_VARS=n
               UCX_TLS=rc_x UCX_NET_DEVICES="$dev" UCX_RC_MLX5_TM_ENABLE=y)

    setsid env "${env[@]}" UCX_IB_EMU_HOST=host1 UCX_LOG_LEVEL=debug \
        timeout -k 5 "$limit" "$root/bin/ucx_perftest" -t "$test" "$@" \
        -p "$tcp_port" >"$slog" 2>&1 </dev/null &
    spid=$!
    pids=("$spid")
    for _ in $(seq 100); do
        tcp_listening "$tcp_port" && break
        kill -0 "$spid" 2>/dev/null || break
        sleep 0.1
    done
    setsid env "${env[@]}" UCX_IB_EMU_HOST=host0 UCX_LOG_LEVEL=info \
        timeout -k 5 "$limit" "$root/bin/ucx_perftest" -t "$test" "$@" \
        -p "$tcp_port" localhost >"$clog" 2>&1 </dev/null &
    cpid=$!
    pids+=("$cpid")
    wait "$cpid"
    crc=$?
    wait "$spid"
    src=$?
    pids=()
}

# what the device did for the receiver
device_work() {
    echo "$(grep -c 'matched entry' "$slog") tags matched, $(grep -c 'of the rendezvous at' "$slog") rendezvous read by the device, $(grep -c 'no match' "$slog") unexpected"
}

# expect_runs NAME ROOT DEV TEST ARGS...: the run completes, the device
# matched tags (and, for a rendezvous, read data)
expect_runs() {
    local name=$1 root=$2 dev=$3 test=$4 what
    shift 4
    what="$name: ucx_perftest -t $test $* over rc_mlx5/$dev, UCX_RC_MLX5_TM_ENABLE=y"
    run "$name" "$root" "$dev" "$test" "$@"
    if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -q '^Final:' "$clog" &&
       grep -q "ep_cfg\[0\]: tag(rc_mlx5/$dev)" "$clog" &&
       grep -q 'created DevX xrq .* rendezvous offload' "$slog" &&
       [ "$(grep -c 'matched entry' "$slog")" -gt 0 ] &&
       { [ "$test" != tag_bw ] || [ "$(grep -c 'of the rendezvous at' "$slog")" -gt 0 ]; } &&
       ! grep -qE 'Assertion|UCX  ERROR' "$slog" "$clog"; then
        ok "$what: $(grep -h '^Final:' "$clog" | tr -s ' '); $(device_work)"
    else
        fail "$what: server $src, client $crc: $(grep -hm1 -E 'Assertion|ERROR|Final:' "$slog" "$clog" |
              sed 's/^\[[^]]*\] *//' | cut -c1-160) (see $slog, $clog)"
    fi
}

# expect_abort NAME ROOT DEV TEST ARGS...: UCX asserts in the command QP's
# RoCEv2 connect, both sides
expect_abort() {
    local name=$1 root=$2 dev=$3 test=$4 what
    shift 4
    what="$name: ucx_perftest -t $test $* over rc_mlx5/$dev, UCX_RC_MLX5_TM_ENABLE=y"
    run "$name" "$root" "$dev" "$test" "$@"
    if [ $src -ne 0 ] &&
       grep -q "Assertion \`ah_attr->dlid >= 0xC000' failed" "$slog"; then
        ok "$what: aborts as expected (server status $src): $(grep -hm1 'Assertion' "$slog" | sed 's/^\[[^]]*\] *//')"
    else
        fail "$what: expected the command QP's assertion, got server $src, client $crc (see $slog)"
    fi
}

for dev in mlx5_0:1 mlx5_2:1; do
    expect_runs patched "$patched_root" "$dev" tag_bw -s 65536 -n 200
    expect_runs patched "$patched_root" "$dev" tag_lat -s 4096 -n 200
done
expect_runs stock "$stock_root" mlx5_2:1 tag_bw -s 65536 -n 200
expect_abort stock "$stock_root" mlx5_0:1 tag_lat -s 4096 -n 200

echo "$passed passed, $failed failed, 0 skipped"
[ $failed -eq 0 ]
