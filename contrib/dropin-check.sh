#!/bin/bash
# The drop-in front-end (docs/architecture.md, section 9) with unmodified
# programs: Debian's ibverbs-utils run on the emulated devices and fabric
# through LD_PRELOAD=<libdir>/libucx_mlx5_emu_preload.so.
#
#   dropin-check.sh LIBDIR
#
# LIBDIR is an installed tree's libdir (it holds the preload library and
# libucx_mlx5_emu.so). Checks, each bounded with timeout and judged on the
# programs' output, not only their exit codes:
#   bindings  every ibv_* symbol ibv_rc_pingpong imports binds to the preload
#             library, none to the system's libibverbs
#   entry points  every libibverbs and libmlx5 entry point a program may
#             call is the preload's (but the provider interface and what
#             the system library answers without a provider: rate
#             conversions, fork ranges, sysfs paths); contrib/verbs-check/
#             verbs_entry_points.c calls those our library does not use:
#             the GID table, fork state, P_Key index, data in order, a
#             umem with a page size bitmap, and the refusals (EOPNOTSUPP)
#             of what the model has not got
#   devices   ibv_devices lists mlx5_0..mlx5_3 with their node GUIDs
#   sysfs     readlink of each device's class entry, its device and the
#             device's driver (mlx5_core), as Open MPI reads it
#   devinfo   ibv_devinfo -v: every device and port, link layers, the RoCE
#             GID table with types (v1 and v2), the InfiniBand port GID
#   pingpong  ibv_rc_pingpong server and client (given localhost) in two
#             processes, two hosts of one fabric: RoCEv2 (-d mlx5_0 -g 3)
#             and InfiniBand (-d mlx5_2), each with polling and with
#             completion events (-e), and RoCEv2 with -t (an extended CQ
#             polled with ibv_start_poll, its CQEs' device timestamps:
#             "timestamps"), and with -j -c (buffers in device memory,
#             the data checked); ibv_xsrq_pingpong (XRC, RoCEv2 and
#             InfiniBand with events: "xrc"); ibv_uc_pingpong (UC QPs, multi-packet
#             messages, RoCEv2 and InfiniBand); ibv_ud_pingpong likewise (UD QPs,
#             address handles, the GRH area of every receive), with -c
#             checking the received data
#   valgrind  ibv_devinfo, ibv_rc_pingpong -e (RoCEv2) and ibv_ud_pingpong
#             (InfiniBand) under valgrind: no memory error, no definite leak
#   ucx_info  UCX 1.13.1's ucx_info -d (Debian's ucx-utils): the DevX md opens
#             on every device, rc_mlx5 and rc_verbs are listed with their
#             capabilities on all four ports, and so are ud_mlx5 and
#             ud_verbs (their ifaces open: UD QPs) and dc_mlx5 (a DCT and
#             DCIs), the RoCE port uses GID index 3 (RoCEv2)
#   perftest  UCX 1.13.1's ucx_perftest between two processes: -t am_lat
#             on ud_verbs and ud_mlx5, RoCEv2 (mlx5_0:1) and InfiniBand
#             (mlx5_2:1), and -t am_lat, put_bw, get (8 and 64 bytes)
#             and fadd on rc_mlx5 over RoCEv2 with DevX, and am_lat,
#             put_bw, get and fadd on dc_mlx5 (RoCEv2 and InfiniBand): both
#             sides finish with a "Final:" line of all iterations
#   scatter   UCX 1.13.1's rc_mlx5 with scatter to CQE (its default) and
#             without: contrib/scatter-check/uct_scatter_check.c checks the
#             data of gets, atomics and active messages byte by byte
#   ibperf    rdma-core's perftest in its default mode (the ibv_wr_* API):
#             ib_send_lat, ib_write_bw, ib_read_lat and ib_atomic_bw on
#             RoCEv2 (mlx5_0, GID index 3) and InfiniBand (mlx5_2), the
#             four over XRC and sends and writes over UC (RoCEv2)
#   ucp       UCX 1.13.1's UCP (ucx_perftest -t tag_lat) between two
#             processes over rc_mlx5 on the RoCE port, with ud_mlx5 wireup,
#             and over dc_mlx5 (UCX_TLS=dc_x)
#   ucp atomics  UCP's ucp_add, ucp_fadd and ucp_cswap with
#             UCX_ATOMIC_MODE=device: device atomics on rc_mlx5, no fallback
#   rdmacm    librdmacm's programs on the preload's connection manager,
#             server on host0 (198.18.0.1, mlx5_0) and client on host1 of
#             a fabric of two: rping (RC, RDMA read and write, 10 pings),
#             udaddy (UD, SIDR), rdma_server/rdma_client (the synchronous
#             interface, rdma_create_ep), ucmatose (4 connections); UCX
#             1.13.1's ucx_info lists the rdmacm connection manager, and
#             its ucp_client_server example (built against libucx-dev)
#             connects over it with no TCP transport (UCX_TLS=rc_x,ud_x,
#             UCX_SOCKADDR_TLS_PRIORITY=rdmacm)
#   stale MAC the upstream bug side by side (contrib/mac-move-run.sh): the
#             same uct_hello.c built against Debian's UCX 1.13.1 and against
#             this library, the server's MAC moved by ucx_emu mid-stream:
#             UCX 1.13.1's three reconnects all fail and its newest QP
#             carries the old MAC (ucx_emu qps: STALE); this library
#             reconnects at the first try with the new MAC and echoes all 60;
#             and the same with UCX 1.13.1 over dc_mlx5 (uct_hello -x
#             dc_mlx5): each DC address vector comes from its AH cache, so
#             its DCI keeps the old MAC through all three reconnects
# Prints "dropin: ok: ..." or "dropin: FAILED: ..." per check, then
# "N passed, N failed, N skipped". Exit status 0 if all passed, 1 if any
# failed, 77 (skipped, with the reason) if ibverbs-utils is absent and
# cannot be installed.
#
# Environment: DROPIN_ITERS (ping-pong iterations, default 200),
# DROPIN_PERF_ITERS (ucx_perftest iterations, default 50), DROPIN_TIMEOUT
# (seconds per program, default 60). DROPIN_ASAN=<build dir>: the preload
# library and the model of that ASan build tree (preloaded after libasan),
# with LeakSanitizer on; the checks that need an installed tree (stale MAC)
# or valgrind are left out.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/contrib/common/tcp-ports.sh"
libdir=${1:?usage: dropin-check.sh LIBDIR}
iters=${DROPIN_ITERS:-200}
perf_iters=${DROPIN_PERF_ITERS:-50}
limit=${DROPIN_TIMEOUT:-60}
preload_lib=$libdir/libucx_mlx5_emu_preload.so
preload=$preload_lib # what LD_PRELOAD is
asan=${DROPIN_ASAN:-}
if [ -n "$asan" ]; then
    # a sanitizer report makes the program exit non-zero, which fails it
    preload_lib=$asan/src/emu/frontend/preload/.libs/libucx_mlx5_emu_preload.so
    preload="$(cc -print-file-name=libasan.so) $preload_lib"
    LD_LIBRARY_PATH=$(find "$asan/src" -name .libs -type d | paste -sd:)
    export LD_LIBRARY_PATH ASAN_OPTIONS=detect_leaks=1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/dropin-check.XXXXXX")
fabric=dropin-check-$$
passed=0
skipped=0
failed=0
wrap=() # a command the programs run under (valgrind)

# a private fabric, so that other runs' hosts are not seen
export UCX_IB_EMU_FABRIC=$fabric

cleanup() {
    local emu=$libdir/../bin/ucx_emu
    if [ -x "$emu" ]; then
        timeout 20 "$emu" -f "$fabric" destroy --force >/dev/null 2>&1
        timeout 20 "$emu" -f "$fabric-mac" destroy --force >/dev/null 2>&1
    else
        # a build tree (DROPIN_ASAN) has no ucx_emu; every member is gone
        rm -f "/dev/shm/ucx-emu.$(id -u).$fabric"
    fi
    rm -rf "$work"
}
trap cleanup EXIT

ok() {
    echo "dropin: ok: $*"
    passed=$((passed + 1))
}

fail() {
    echo "dropin: FAILED: $*"
    failed=$((failed + 1))
}

skip() {
    echo "dropin: SKIPPED: $*"
    skipped=$((skipped + 1))
}

# show FILE: a program's output, indented, for a failure's context
show() {
    sed 's/^/    | /' "$1" | head -40
}

# fail_pair WHAT SLOG CLOG: a server/client pair (pair()) failed
fail_pair() {
    fail "$1 (server exit $src, client exit $crc)"
    echo "    server:"; show "$2"
    echo "    client:"; show "$3"
}

if ! command -v ibv_rc_pingpong >/dev/null || ! command -v ibv_ud_pingpong >/dev/null ||
   ! command -v ibv_devinfo >/dev/null; then
    echo "dropin: ibverbs-utils missing: trying contrib/install-deps.sh"
    "$top/contrib/install-deps.sh" >"$work/install-deps.log" 2>&1 || show "$work/install-deps.log"
fi
for prog in ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong; do
    if ! command -v $prog >/dev/null; then
        echo "dropin: SKIPPED: $prog not found and Debian's ibverbs-utils could not be installed"
        echo "0 passed, 0 failed, 1 skipped"
        exit 77
    fi
done
if [ ! -f "$preload_lib" ]; then
    fail "no $preload_lib"
    echo "$passed passed, $failed failed, 0 skipped"
    exit 1
fi

# run NAME ARGS...: a program with the preload, output in $work/NAME.log
run() {
    local name=$1; shift
    LD_PRELOAD=$preload timeout "$limit" "$@" >"$work/$name.log" 2>&1
}

# --- bindings: BIND_NOW resolves every import at start; -h exits at once
LD_PRELOAD=$preload LD_DEBUG=bindings timeout "$limit" ibv_rc_pingpong -h \
    >/dev/null 2>"$work/bindings.log"
imports=$(nm -D --undefined-only "$(command -v ibv_rc_pingpong)" | awk '$2 ~ /^ibv_/ {sub(/@.*/, "", $2); print $2}' | sort -u)
bad=0
for sym in $imports; do
    if ! grep -q "to $preload_lib \[0\]: normal symbol \`$sym'" "$work/bindings.log"; then
        echo "    $sym: $(grep "symbol \`$sym'" "$work/bindings.log" | head -1 | sed 's/.*binding //')"
        bad=1
    fi
done
if [ -z "$imports" ]; then
    fail "bindings: no ibv_* import found in ibv_rc_pingpong"
elif [ $bad -eq 0 ]; then
    ok "bindings: the $(wc -w <<<"$imports") ibv_* imports of ibv_rc_pingpong bind to the preload library"
else
    fail "bindings: the imports above do not bind to $preload"
fi

# --- entry points: what the system's libibverbs would run itself is only
# what needs no provider; anything else would reach the unfilled private
# part of the model's contexts and crash
provider_free='^(ibv_cmd_|verbs_|_verbs_|__|IBVERBS_|execute_ioctl$|ibv_copy_.*_kern$|ibv_register_driver$|ibv_resolve_eth_l2_from_gid$|ibv_rate_to_|mbps_to_ibv_rate$|mult_to_ibv_rate$|ibv_dofork_range$|ibv_dontfork_range$|ibv_get_sysfs_path$|ibv_read_ibdev_sysfs_file$)'
for lib in libibverbs libmlx5; do
    system_lib=$(ldconfig -p | awk -v l="$lib.so.1" '$1 == l && /x86-64/ {print $NF; exit}')
    if [ -z "$system_lib" ] || [ ! -f "$system_lib" ]; then
        skip "entry points: the system's $lib.so.1 is not found"
        continue
    fi
    missing=$(comm -23 <(nm -D --defined-only "$system_lib" | awk '{sub(/@.*/, "", $3); print $3}' | sort -u) \
                       <(nm -D --defined-only "$preload_lib" | awk '{sub(/@.*/, "", $3); print $3}' | sort -u) |
              grep -Ev "$provider_free|^MLX5_")
    if [ -z "$missing" ]; then
        ok "entry points: every $lib entry point that needs a provider is the preload's"
    else
        fail "entry points: left to the system's $lib (a crash): $(paste -sd ' ' <<<"$missing")"
    fi
done
if ! command -v cc >/dev/null; then
    skip "entry points: cc not installed"
elif ! cc -std=c11 -O2 -Wall -Werror -pedantic \
        "$top/contrib/verbs-check/verbs_entry_points.c" \
        -o "$work/verbs_entry_points" -libverbs -lmlx5 >"$work/verbs-cc.txt" 2>&1; then
    fail "entry points: verbs_entry_points.c does not build"
    show "$work/verbs-cc.txt"
elif run verbs-entry-points "$work/verbs_entry_points" &&
     grep -q '^checked [0-9]* entry points, 0 failed' "$work/verbs-entry-points.log"; then
    ok "entry points: $(tail -1 "$work/verbs-entry-points.log")"
else
    fail "entry points: verbs_entry_points"; show "$work/verbs-entry-points.log"
fi

# --- devices
if run devices ibv_devices &&
   [ "$(grep -cE '^\s+mlx5_[0-3]\s+[0-9a-f]{16}$' "$work/devices.log")" -eq 4 ]; then
    ok "devices: ibv_devices lists mlx5_0..mlx5_3 with node GUIDs"
else
    fail "devices: ibv_devices (exit $?)"; show "$work/devices.log"
fi

# --- sysfs links: the driver Open MPI and UCX read to know the device's
# kind, and where the class entry and its "device" point
links_check() {
    local dev slot
    for dev in mlx5_0 mlx5_1 mlx5_2 mlx5_3; do
        [ "$(LD_PRELOAD=$preload readlink "/sys/class/infiniband/$dev/device/driver")" = \
          ../../../bus/pci/drivers/mlx5_core ] ||
            { echo "    $dev: device/driver is not mlx5_core"; return 1; }
        slot=$(LD_PRELOAD=$preload readlink "/sys/class/infiniband/$dev/device")
        [[ $slot =~ ^\.\./\.\./\.\./0000:e0:[0-9a-f]{2}\.[0-7]$ ]] ||
            { echo "    $dev: device -> '$slot'"; return 1; }
        [ "$(LD_PRELOAD=$preload readlink "/sys/class/infiniband/$dev")" = \
          "../../devices/pci0000:e0/${slot#../../../}/infiniband/$dev" ] ||
            { echo "    $dev: the class entry's link"; return 1; }
    done
}
if links_check >"$work/links.log" 2>&1; then
    ok "sysfs: readlink of each device's class entry, device and device/driver (mlx5_core)"
else
    fail "sysfs: readlink of the device links"; show "$work/links.log"
fi

# --- devinfo -v: per device, its port's link layer and GIDs with types
devinfo_check() {
    local log=$work/devinfo.log dev
    local -A layer=([mlx5_0]=Ethernet [mlx5_1]=Ethernet
                    [mlx5_2]=InfiniBand [mlx5_3]=InfiniBand)

    for dev in mlx5_0 mlx5_1 mlx5_2 mlx5_3; do
        # the device's section: from its hca_id to the next one
        awk -v d="$dev" '/^hca_id:/ {on = ($2 == d)} on' "$log" >"$work/$dev.txt"
        if ! grep -qE "link_layer:\s+${layer[$dev]}$" "$work/$dev.txt" ||
           ! grep -qE 'state:\s+PORT_ACTIVE \(4\)' "$work/$dev.txt" ||
           ! grep -qE 'vendor_part_id:\s+412[35]$' "$work/$dev.txt" ||
           ! grep -qE 'phys_port_cnt:\s+1$' "$work/$dev.txt"; then
            echo "    $dev: port attributes missing"; return 1
        fi
        if [ "${layer[$dev]}" = Ethernet ]; then
            # RoCE v1 and v2 of the link-local and the IPv4-mapped address
            grep -qE 'GID\[  0\]:\s+fe80(:[0-9a-f]{4}){7}, RoCE v1$' "$work/$dev.txt" &&
            grep -qE 'GID\[  1\]:\s+fe80::.*, RoCE v2$' "$work/$dev.txt" &&
            grep -qE 'GID\[  2\]:\s+0000:0000:0000:0000:0000:ffff:[0-9a-f]{4}:[0-9a-f]{4}, RoCE v1$' "$work/$dev.txt" &&
            grep -qE 'GID\[  3\]:\s+::ffff:198\.18\.[0-9]+\.[0-9]+, RoCE v2$' "$work/$dev.txt" ||
                { echo "    $dev: RoCE GID table"; return 1; }
        else
            grep -qE 'GID\[  0\]:\s+fe80:0000:0000:0000(:[0-9a-f]{4}){4}$' "$work/$dev.txt" &&
            grep -qE 'port_lid:\s+[1-9][0-9]*$' "$work/$dev.txt" &&
            grep -qE 'sm_lid:\s+[1-9][0-9]*$' "$work/$dev.txt" ||
                { echo "    $dev: InfiniBand port GID or LIDs"; return 1; }
        fi
    done
}
if run devinfo ibv_devinfo -v && [ "$(grep -c '^hca_id:' "$work/devinfo.log")" -eq 4 ] &&
   devinfo_check; then
    ok "devinfo: ibv_devinfo -v shows 4 devices, their ports, link layers and typed GIDs"
else
    fail "devinfo: ibv_devinfo -v"; show "$work/devinfo.log"
fi

# pair SLOG CLOG CMD...: "CMD -p PORT" as the server and, once it listens,
# "CMD -p PORT localhost" as the client, on a new port; their exit statuses
# in $src and $crc
pair() {
    local slog=$1 clog=$2 spid i
    shift 2

    tcp_next_port
    port=$tcp_port
    LD_PRELOAD=$preload timeout "$limit" "$@" -p $port >"$slog" 2>&1 &
    spid=$!
    # until the server listens (its output is buffered: watch the socket)
    for ((i = 0; i < 100; i++)); do
        tcp_listening $port && break
        kill -0 $spid 2>/dev/null || break
        sleep 0.1
    done
    LD_PRELOAD=$preload timeout "$limit" "$@" -p $port localhost >"$clog" 2>&1
    crc=$?
    wait $spid
    src=$?
}

# --- pingpong PROGRAM NAME ARGS...: server and client on one port of each
# host
pingpong() {
    local prog=$1 name=$2; shift 2
    local slog=$work/$name-server.log clog=$work/$name-client.log
    local expect_addr

    pair "$slog" "$clog" "${wrap[@]}" $prog "$@" -n "$iters"

    # RoCE: the peers' RoCEv2 GIDs; InfiniBand: their LIDs
    case " $* " in
    *" -g "*) expect_addr='LID 0x0000, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::ffff:198\.18\.' ;;
    *)        expect_addr='LID 0x0*[1-9a-f][0-9a-f]*, QPN 0x[0-9a-f]{6}, PSN 0x[0-9a-f]{6}, GID ::$' ;;
    esac
    if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
       grep -q "^$iters iters in " "$slog" && grep -q "^$iters iters in " "$clog" &&
       grep -qE "remote address: +$expect_addr" "$slog" &&
       grep -qE "remote address: +$expect_addr" "$clog" &&
       ! grep -qi "failed" "$slog" "$clog"; then
        ok "pingpong $name: ${wrap[*]:+${wrap[0]} }$prog $* -n $iters: $(grep -h 'iters in' "$clog")"
    else
        fail_pair "pingpong $name: $prog $*" "$slog" "$clog"
    fi
}

pingpong ibv_rc_pingpong roce-v2        -d mlx5_0 -g 3
pingpong ibv_rc_pingpong roce-v2-events -d mlx5_0 -g 3 -e
pingpong ibv_rc_pingpong ib             -d mlx5_2
# -t: an extended CQ polled with ibv_start_poll, each receive's CQE timestamp
pingpong ibv_rc_pingpong roce-v2-timestamps -d mlx5_0 -g 3 -t
if grep -qE '^Average receive completion clock cycles = [0-9.]+$' \
        "$work/roce-v2-timestamps-client.log"; then
    ok "timestamps: ibv_rc_pingpong -t: $(grep -h '^Min receive' "$work/roce-v2-timestamps-client.log")"
else
    fail "timestamps: ibv_rc_pingpong -t printed no completion clock cycles"
fi
pingpong ibv_rc_pingpong ib-events      -d mlx5_2 -e
# -j: the buffers in device memory (ibv_alloc_dm, a zero-based MR on it),
# -c: the received data checked (through ibv_memcpy_from_dm)
pingpong ibv_rc_pingpong roce-v2-dm     -d mlx5_0 -g 3 -j -c
pingpong ibv_rc_pingpong ib-dm          -d mlx5_2 -j -c -s 65536
# UC: RC's wire without acknowledgements; 8 KiB messages of several packets
pingpong ibv_uc_pingpong uc-roce-v2        -d mlx5_0 -g 3 -s 8192
pingpong ibv_uc_pingpong uc-ib-events      -d mlx5_2 -e
# --- xsrq NAME ARGS...: ibv_xsrq_pingpong, XRC: a domain opened on
# /tmp/xrc_domain (the program's; removed afterwards unless it was there),
# an XRC SRQ, initiator and target QPs on each side
xsrq() {
    local name=$1; shift
    local slog=$work/$name-server.log clog=$work/$name-client.log
    local had_domain=no

    [ -e /tmp/xrc_domain ] && had_domain=yes
    pair "$slog" "$clog" ibv_xsrq_pingpong "$@" -n 50
    [ $had_domain = yes ] || rm -f /tmp/xrc_domain
    if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
       grep -qx success "$slog" && grep -qx success "$clog"; then
        ok "xrc $name: ibv_xsrq_pingpong $* -n 50: success on both sides"
    else
        fail_pair "xrc $name: ibv_xsrq_pingpong $*" "$slog" "$clog"
    fi
}
xsrq xrc-roce-v2    -d mlx5_0 -g 3
xsrq xrc-ib-events  -d mlx5_2 -e

# UD: a datagram is at most the port MTU (1024 on the emulated Ethernet ports)
pingpong ibv_ud_pingpong ud-roce-v2        -d mlx5_0 -g 3 -s 1024 -c
pingpong ibv_ud_pingpong ud-roce-v2-events -d mlx5_0 -g 3 -s 1024 -c -e
pingpong ibv_ud_pingpong ud-ib             -d mlx5_2 -c
pingpong ibv_ud_pingpong ud-ib-events      -d mlx5_2 -c -e

# --- the same programs under valgrind: the preload library and the model
# make no memory error and leak nothing in them
if [ -z "$asan" ] && command -v valgrind >/dev/null; then
    wrap=(valgrind --error-exitcode=99 --leak-check=full
          --errors-for-leak-kinds=definite -q)
    if run devinfo-valgrind "${wrap[@]}" ibv_devinfo -v &&
       [ "$(grep -c '^hca_id:' "$work/devinfo-valgrind.log")" -eq 4 ]; then
        ok "devinfo: valgrind ibv_devinfo -v: 4 devices, no error, no leak"
    else
        fail "devinfo: valgrind ibv_devinfo -v"; show "$work/devinfo-valgrind.log"
    fi
    saved_iters=$iters
    iters=50
    pingpong ibv_rc_pingpong valgrind-roce-v2 -d mlx5_0 -g 3 -e
    pingpong ibv_ud_pingpong valgrind-ud-ib   -d mlx5_2 -c
    iters=$saved_iters
    wrap=()
fi

# --- ucx_info: UCX 1.13.1 on the emulated devices
# (ucx_info runs under stdbuf -oL: its output into a file is written in
# blocks, and one may end inside a line, where the model's debug messages on
# stderr would land)
ucx_info_check() {
    local log=${1:-$work/ucx_info.log} dev tl

    for dev in mlx5_0 mlx5_1 mlx5_2 mlx5_3; do
        grep -q "$dev: opened DEVX md" "$log" ||
            { echo "    $dev: no DevX md"; return 1; }
        for tl in rc_mlx5 rc_verbs ud_mlx5 ud_verbs dc_mlx5; do
            # the transport's section has its capabilities
            awk -v t="$tl" -v d="$dev:1" '
                /Transport:/ {on = ($3 == t)}
                on && /Device:/ {dev_ok = ($3 == d)}
                on && dev_ok && /bandwidth:/ {found = 1}
                END {exit !found}' "$log" ||
                { echo "    $tl on $dev:1: not listed with capabilities"; return 1; }
        done
    done
    grep -q "mlx5_0:1 using gid_index 3" "$log" ||
        { echo "    mlx5_0:1: the RoCEv2 GID (index 3) not selected"; return 1; }
}
if ! command -v ucx_info >/dev/null || ! ucx_info -v 2>/dev/null | grep -q "Version 1\.13\."; then
    skip "ucx_info: Debian's ucx-utils (UCX 1.13) not installed"
elif UCX_LOG_LEVEL=debug run ucx_info stdbuf -oL ucx_info -d &&
     ucx_info_check; then
    ok "ucx_info: UCX 1.13.1 ucx_info -d: DevX md, rc_mlx5, rc_verbs, ud_mlx5, ud_verbs and dc_mlx5 on 4 ports, RoCEv2 GID index 3"
else
    fail "ucx_info: ucx_info -d"; grep -E "Transport:|Device:|ERROR|Assertion" "$work/ucx_info.log" | show /dev/stdin
fi

# --- perftest TL DEV TEST [ARGS...]: UCX 1.13.1's ucx_perftest server and
# client, both finishing with a "Final:" line of all iterations
# (ucx_perftest is the program, with its environment: the no-assertion
# build's below)
ucx_perftest=(ucx_perftest) perf_label=perftest
perftest() {
    local tl=$1 dev=$2 test=$3
    shift 3
    local what="ucx_perftest -x $tl -d $dev -t $test $* -n $perf_iters"
    local name=$perf_label-$tl-$dev-$test
    local slog=$work/perf-$name-server.log clog=$work/perf-$name-client.log

    pair "$slog" "$clog" "${ucx_perftest[@]}" -d "$dev" -x "$tl" -t "$test" "$@" \
        -n "$perf_iters"

    if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
       grep -qE "^Final: +$perf_iters " "$clog" &&
       ! grep -qE "ERROR|Assertion" "$slog" "$clog"; then
        ok "$perf_label: $what: $(grep -h '^Final:' "$clog" | tr -s ' ')"
    else
        fail_pair "$perf_label: $what" "$slog" "$clog"
    fi
}
if ! command -v ucx_perftest >/dev/null; then
    skip "perftest: Debian's ucx-utils (ucx_perftest) not installed"
else
    for tl in ud_verbs ud_mlx5; do
        for dev in mlx5_0:1 mlx5_2:1; do
            perftest $tl $dev am_lat
        done
    done
    # rc_mlx5 over RoCE with DevX: 8-byte messages (UCX 1.13.1 calls the
    # get test "get"; 8 bytes are read into a bounce buffer)
    perftest rc_mlx5 mlx5_0:1 am_lat -s 8
    perftest rc_mlx5 mlx5_0:1 put_bw -s 8
    perftest rc_mlx5 mlx5_0:1 get -s 8 -D bcopy
    # read responses and atomic results in the 128-byte CQE (scatter to
    # CQE: up to 32 bytes in the CQE, 33..64 in the 64 bytes before it)
    perftest rc_mlx5 mlx5_0:1 get -s 64 -D bcopy
    perftest rc_mlx5 mlx5_0:1 fadd
    # dc_mlx5: DCIs and a DCT made through DevX, each WQE's address vector
    # taken from UCX's AH cache; messages of several packets; InfiniBand
    # with LIDs
    perftest dc_mlx5 mlx5_0:1 am_lat -s 8
    perftest dc_mlx5 mlx5_0:1 put_bw -s 100000 -D zcopy
    perftest dc_mlx5 mlx5_0:1 get -s 8 -D bcopy
    perftest dc_mlx5 mlx5_0:1 get -s 100000 -D zcopy
    perftest dc_mlx5 mlx5_0:1 fadd
    perftest dc_mlx5 mlx5_2:1 am_lat -s 8
    perftest dc_mlx5 mlx5_2:1 put_bw -s 8
fi

# --- ibperf NAME PROGRAM ARGS...: rdma-core's perftest (Debian's perftest)
# in its default mode, which posts with the ibv_wr_* API on an extended QP,
# server and client on two hosts; the client's result row has every
# iteration
ibperf() {
    local name=$1 prog=$2; shift 2
    local slog=$work/ibperf-$name-server.log clog=$work/ibperf-$name-client.log
    local row="^ +[0-9]+ +$iters "

    pair "$slog" "$clog" "$prog" "$@" -n "$iters"
    if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -qE "$row" "$clog"; then
        ok "ibperf $name: $prog $* -n $iters: $(grep -E "$row" "$clog" | tr -s ' \t' ' ' | head -1)"
    else
        fail_pair "ibperf $name: $prog $*" "$slog" "$clog"
    fi
}
if ! command -v ib_write_bw >/dev/null; then
    skip "ibperf: Debian's perftest not installed"
elif [ -n "$asan" ]; then
    # perftest frees little at exit: its own allocations are not ours to
    # judge under LeakSanitizer; the plain dropin leg runs these
    skip "ibperf: not under LeakSanitizer (perftest's own leaks)"
else
    for prog in ib_send_lat ib_write_bw ib_read_lat ib_atomic_bw; do
        ibperf "${prog#ib_}-roce-v2" $prog -d mlx5_0 -x 3
        ibperf "${prog#ib_}-ib" $prog -d mlx5_2
    done
    # the other connection types on RoCEv2: XRC (perftest opens its domains
    # on /tmp/xrc_domain_server and _client: removed unless they were
    # there) and UC (sends and writes only)
    had_domains=$(ls /tmp/xrc_domain_server /tmp/xrc_domain_client 2>/dev/null)
    for prog in ib_send_lat ib_write_bw ib_read_lat ib_atomic_bw; do
        ibperf "${prog#ib_}-xrc" $prog -d mlx5_0 -x 3 -c XRC
    done
    [ -n "$had_domains" ] || rm -f /tmp/xrc_domain_server /tmp/xrc_domain_client
    for prog in ib_send_lat ib_write_bw; do
        ibperf "${prog#ib_}-uc" $prog -d mlx5_0 -x 3 -c UC
    done
fi

# --- scatter to CQE: UCX 1.13.1's rc_mlx5 QPs ask for it (cs_req 0x22,
# cs_res 2, 128-byte CQEs); contrib/scatter-check/uct_scatter_check.c checks
# the data of get_bcopy (1..80 bytes), get_zcopy, fetch-add, compare-swap
# and active messages byte by byte, with scatter to CQE and without it
# (UCX_IB_TX_INLINE_RESP=0, UCX_IB_RX_INLINE=0)
scatter_check() {
    local what=$1 log=$work/scatter-$2.txt
    shift 2

    if env "$@" LD_PRELOAD="$preload" timeout "$limit" "$work/uct_scatter_check" \
            -d mlx5_0:1 -x rc_mlx5 >"$log" 2>&1 &&
       grep -q '^checked [0-9]* operations' "$log"; then
        ok "scatter: $what: $(paste -sd ' ' "$log")"
    else
        fail "scatter: $what"; show "$log"
    fi
}
if [ ! -f /usr/include/uct/api/uct.h ] || ! command -v cc >/dev/null; then
    skip "scatter: Debian's libucx-dev (UCX 1.13.1 headers) or cc not installed"
elif ! cc -std=c11 -O2 -Wall -Werror -pedantic \
        "$top/contrib/scatter-check/uct_scatter_check.c" \
        -o "$work/uct_scatter_check" -luct -lucs >"$work/scatter-cc.txt" 2>&1; then
    fail "scatter: uct_scatter_check.c does not build against UCX 1.13.1"
    show "$work/scatter-cc.txt"
else
    scatter_check "rc_mlx5 with scatter to CQE" cqe
    scatter_check "rc_mlx5 without scatter to CQE" mem \
        UCX_IB_TX_INLINE_RESP=0 UCX_IB_RX_INLINE=0
fi

# --- ucp: UCX 1.13.1's UCP over the emulated NIC (UCX_TLS=rc_x: rc_mlx5,
# with ud_mlx5 for the wireup), on RoCE only, so not over shared memory:
# the client's endpoint configuration must name rc_mlx5 on mlx5_0:1
ucp_check() {
    local tls=${1:-rc_x} tl=${2:-rc_mlx5}
    local slog=$work/$perf_label-ucp-$tl-server.log clog=$work/$perf_label-ucp-$tl-client.log
    local label=ucp
    [ "$perf_label" = perftest ] || label="$perf_label: ucp"

    UCX_TLS=$tls UCX_NET_DEVICES=mlx5_0:1 UCX_LOG_LEVEL=info \
        UCX_WARN_UNUSED_ENV_VARS=n \
        pair "$slog" "$clog" "${ucx_perftest[@]}" -t tag_lat -n "$perf_iters"
    if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
       grep -qE "^Final: +$perf_iters " "$clog" &&
       grep -q "ep_cfg\[0\]: tag($tl/mlx5_0:1)" "$clog" &&
       ! grep -qE "ERROR|Assertion" "$slog" "$clog"; then
        ok "$label: ucx_perftest -t tag_lat over $tl/mlx5_0:1 (UCX_TLS=$tls): $(grep -h '^Final:' "$clog" | tr -s ' ')"
    else
        fail_pair "$label: ucx_perftest -t tag_lat, UCX_TLS=$tls" "$slog" "$clog"
    fi
}
# --- ucp atomics: UCP's atomic add and fetch-add with UCX_ATOMIC_MODE=device
# (no fallback to atomics over active messages): the worker takes the
# device's atomics and the endpoint's atomic lane is rc_mlx5
ucp_atomic_check() {
    local test=$1 slog=$work/ucp-$1-server.log clog=$work/ucp-$1-client.log

    UCX_TLS=rc_x UCX_NET_DEVICES=mlx5_0:1 UCX_ATOMIC_MODE=device \
        UCX_LOG_LEVEL=debug UCX_WARN_UNUSED_ENV_VARS=n \
        pair "$slog" "$clog" ucx_perftest -t "$test" -n "$perf_iters"
    if [ $src -eq 0 ] && [ $crc -eq 0 ] &&
       grep -qE "^Final: +$perf_iters " "$clog" &&
       grep -q "using device atomics" "$clog" &&
       grep -q "ep_cfg\[0\]: amo(rc_mlx5/mlx5_0:1)" "$clog" &&
       ! grep -qE "ERROR|Assertion" "$slog" "$clog"; then
        ok "ucp atomics: ucx_perftest -t $test, UCX_ATOMIC_MODE=device: device atomics on rc_mlx5/mlx5_0:1: $(grep -h '^Final:' "$clog" | tr -s ' ')"
    else
        fail_pair "ucp atomics: ucx_perftest -t $test, UCX_ATOMIC_MODE=device" "$slog" "$clog"
    fi
}
if command -v ucx_perftest >/dev/null; then
    ucp_check
    ucp_check dc_x dc_mlx5
    ucp_atomic_check ucp_add
    ucp_atomic_check ucp_fadd
    ucp_atomic_check ucp_cswap
fi

# --- rdmacm: cm_pair NAME SERVER_CMD CLIENT_CMD: a server on host0 and a
# client on host1 of a fabric of their own, the server first (its host
# alive, then a moment to listen); sets src and crc (the server is killed
# once the client is done, if it still runs: some serve forever)
cm_fabric=$fabric-cm
cm_pair() {
    local name=$1 scmd=$2 ccmd=$3 spid i
    local slog=$work/cm-$name-server.log clog=$work/cm-$name-client.log
    "$libdir/../bin/ucx_emu" -f "$cm_fabric" create -n 2 >/dev/null ||
        { src=1 crc=1; return; }
    UCX_IB_EMU_FABRIC=$cm_fabric UCX_IB_EMU_HOST=host0 LD_PRELOAD=$preload \
        timeout "$limit" $scmd >"$slog" 2>&1 &
    spid=$!
    for ((i = 0; i < 100; i++)); do
        "$libdir/../bin/ucx_emu" -f "$cm_fabric" show 2>/dev/null |
            grep -q '^host0 *alive' && break
        sleep 0.1
    done
    sleep 0.5
    UCX_IB_EMU_FABRIC=$cm_fabric UCX_IB_EMU_HOST=host1 LD_PRELOAD=$preload \
        timeout "$limit" $ccmd >"$clog" 2>&1
    crc=$?
    for ((i = 0; i < 50; i++)); do
        kill -0 $spid 2>/dev/null || break
        sleep 0.1
    done
    kill $spid 2>/dev/null
    wait $spid
    src=$?
    timeout 20 "$libdir/../bin/ucx_emu" -f "$cm_fabric" destroy --force >/dev/null 2>&1
}
# cm_check NAME SERVER_CMD CLIENT_CMD SERVER_RE CLIENT_RE: both exit 0 and
# say what they must
cm_check() {
    local name=$1 slog=$work/cm-$1-server.log clog=$work/cm-$1-client.log
    cm_pair "$1" "$2" "$3"
    if [ $src -eq 0 ] && [ $crc -eq 0 ] && grep -qE "$4" "$slog" &&
       grep -qE "$5" "$clog"; then
        ok "rdmacm: $name: server '$2', client '$3'"
    else
        fail_pair "rdmacm: $name" "$slog" "$clog"
    fi
}
if [ -n "$asan" ]; then
    : # needs ucx_emu, of an installed tree
elif ! command -v rping >/dev/null || ! command -v udaddy >/dev/null; then
    skip "rdmacm: rdmacm-utils (rping, udaddy, rdma_server) not installed"
else
    cm_check rping "rping -s -a 198.18.0.1 -p 7471 -C 10 -v" \
        "rping -c -a 198.18.0.1 -p 7471 -C 10 -v" \
        "server ping data: rdma-ping-9:" "^ping data: rdma-ping-9:"
    cm_check udaddy "udaddy" "udaddy -s 198.18.0.1" \
        "return status 0" "return status 0"
    cm_check rdma_server-client "rdma_server -s 198.18.0.1 -p 7472" \
        "rdma_client -s 198.18.0.1 -p 7472" "rdma_server: end 0" \
        "rdma_client: end 0"
    cm_check ucmatose "ucmatose -b 198.18.0.1 -c 4 -C 10" \
        "ucmatose -s 198.18.0.1 -c 4 -C 10" "return status 0" \
        "return status 0"
    # the server's process dies mid-stream: the client's id is
    # DISCONNECTED, its QP flushed, and rping ends
    "$libdir/../bin/ucx_emu" -f "$cm_fabric" create -n 2 >/dev/null
    UCX_IB_EMU_FABRIC=$cm_fabric UCX_IB_EMU_HOST=host0 LD_PRELOAD=$preload \
        timeout "$limit" rping -s -a 198.18.0.1 -p 7473 >"$work/cm-death-server.log" 2>&1 &
    dpid=$!
    sleep 1
    UCX_IB_EMU_FABRIC=$cm_fabric UCX_IB_EMU_HOST=host1 LD_PRELOAD=$preload \
        timeout "$limit" rping -c -a 198.18.0.1 -p 7473 -d >"$work/cm-death-client.log" 2>&1 &
    cpid=$!
    sleep 2
    pkill -KILL -f "^rping -s -a 198.18.0.1 -p 7473"
    wait $cpid
    crc=$?
    wait $dpid 2>/dev/null
    timeout 20 "$libdir/../bin/ucx_emu" -f "$cm_fabric" destroy --force >/dev/null 2>&1
    if [ $crc -eq 0 ] &&
       grep -q "cma_event type RDMA_CM_EVENT_DISCONNECTED" "$work/cm-death-client.log"; then
        ok "rdmacm: peer death: rping's server killed mid-stream, the client's id DISCONNECTED and rping ends"
    else
        fail "rdmacm: peer death: rping client exit $crc"; show "$work/cm-death-client.log"
    fi
fi
# UCX 1.13.1 over the CM: its connection manager listed, and a UCP client
# and server connecting by IP address without TCP
if [ -n "$asan" ]; then
    : # needs ucx_emu, of an installed tree
elif ! command -v ucx_info >/dev/null || [ ! -f /usr/include/ucp/api/ucp.h ]; then
    skip "rdmacm: ucp: Debian's ucx-utils and libucx-dev not installed"
elif ! grep -q "^# Connection manager: rdmacm" "$work/ucx_info.log"; then
    fail "rdmacm: ucx_info -d lists no rdmacm connection manager"
elif ! cc -O2 -I/usr/share/doc/libucx-dev/examples -o "$work/ucp_client_server" \
        /usr/share/doc/libucx-dev/examples/ucp_client_server.c -lucp -lucs \
        >"$work/ucp_client_server-build.log" 2>&1; then
    fail "rdmacm: ucp_client_server.c does not build"; show "$work/ucp_client_server-build.log"
else
    # the server serves one client after another: it is stopped afterwards
    UCX_TLS=rc_x,ud_x,self UCX_NET_DEVICES=mlx5_0:1 UCX_WARN_UNUSED_ENV_VARS=n \
    UCX_SOCKADDR_TLS_PRIORITY=rdmacm UCX_LOG_LEVEL=debug \
        cm_pair ucp "stdbuf -oL $work/ucp_client_server -c tag -i 3 -p 13401" \
            "$work/ucp_client_server -a 198.18.0.1 -c tag -i 3 -p 13401"
    slog=$work/cm-ucp-server.log clog=$work/cm-ucp-client.log
    if [ $crc -eq 0 ] && grep -q "client created ep .* on cm rdmacm" "$clog" &&
       grep -q '^Server: iteration #3' "$slog" &&
       grep -q '^Client: iteration #3' "$clog" &&
       ! grep -qE "Assertion|failed on iteration" "$slog" "$clog"; then
        ok "rdmacm: ucp: UCX 1.13.1's ucp_client_server, 3 tag messages over rc_mlx5, connected by the rdmacm CM (UCX_SOCKADDR_TLS_PRIORITY=rdmacm, no tcp)"
    else
        fail_pair "rdmacm: ucp: ucp_client_server over the rdmacm CM" "$slog" "$clog"
    fi
fi

# --- stale MAC: the same scenario with UCX 1.13.1 and with this library, on
# one fabric (contrib/mac-move-run.sh): UCX 1.13.1 keeps reusing the AV of
# its AH cache, so its reconnects fail and their QPs carry the old MAC; this
# library reconnects at the first try with the new one
prefix=$(cd "$libdir/.." && pwd)
stale_mac_check() {
    local lib=$1 server=$2 client=$3 tl=${4:-rc_mlx5}
    local log=$work/mac-move-$lib-$tl.txt out=$work/mac-move-$tl

    if ! MAC_MOVE_TL=$tl "$top/contrib/mac-move-run.sh" "$lib" "$prefix" \
            "$fabric-mac" "$server" "$client" "$out" >"$log" 2>&1; then
        fail "stale MAC: $lib over $tl: the scenario did not run"; show "$log"
        return
    fi
    local got want
    got=$(grep -E '^(echoed|failures|reconnects|reconnect_mac)=' "$log" | paste -sd ' ')
    if [ "$lib" = ours ]; then
        want="echoed=60 failures=1 reconnects=1 reconnect_mac=$(sed -n 's/^server_mac=//p' "$log") current"
    else
        # the live endpoint and all 3 reconnects fail; the newest QP still
        # carries the server's first MAC
        want="echoed=[0-9]+ failures=4 reconnects=3 reconnect_mac=02:c9:00:00:0${server#host}:01 STALE"
    fi
    if [[ "$got" =~ ^$want$ ]]; then
        ok "stale MAC: $lib over $tl: $(paste -sd ' ' "$log")"
    else
        fail "stale MAC: $lib over $tl: got \"$got\", expected \"$want\""
        show "$out/$lib-client.txt"
    fi
}
if [ -n "$asan" ]; then
    : # needs an installed tree
elif [ ! -f /usr/include/uct/api/uct.h ] || ! command -v cc >/dev/null; then
    skip "stale MAC: Debian's libucx-dev (UCX 1.13.1 headers) or cc not installed"
elif "$libdir/../bin/ucx_emu" -f "$fabric-mac" create -n 6 >/dev/null; then
    stale_mac_check ucx-1.13.1 host0 host1
    stale_mac_check ours host2 host3
    # DC: the same bug in its second home, each WQE's address vector
    stale_mac_check ucx-1.13.1 host4 host5 dc_mlx5
    "$libdir/../bin/ucx_emu" -f "$fabric-mac" destroy >/dev/null
else
    fail "stale MAC: ucx_emu create -n 6"
fi

# --- release: UCX 1.13.1 as a cluster builds it for speed, without
# assertions and parameter checks (upstream/build.sh with
# UPSTREAM_ONLY=release; DROPIN_UCX_RELEASE is its libdir): such a build
# asks for CQs that ignore overruns, and its ucx_info, rc_mlx5 (RoCEv2 and
# InfiniBand) and UCP run on the emulated NIC as Debian's do
release=${DROPIN_UCX_RELEASE:-}
if [ -z "$release" ]; then
    skip "release: no UCX 1.13.1 built without assertions given (DROPIN_UCX_RELEASE)"
elif [ ! -x "$release/../bin/ucx_perftest" ]; then
    fail "release: no $release/../bin/ucx_perftest"
else
    # its modules are found in ucx/ next to the libucs it loads
    rel_env=(env LD_LIBRARY_PATH="$release" UCX_WARN_UNUSED_ENV_VARS=n)
    if ! "${rel_env[@]}" "$release/../bin/ucx_info" -b >"$work/release-b.log" 2>&1 ||
       grep -qE '^#define (ENABLE_ASSERT|ENABLE_PARAMS_CHECK) +1' "$work/release-b.log" ||
       ! grep -qE '^#define ENABLE_PARAMS_CHECK +0' "$work/release-b.log"; then
        fail "release: ucx_info -b of $release does not say a build without assertions and parameter checks"
        grep -E 'ENABLE_|VERSION' "$work/release-b.log" | show /dev/stdin
    elif UCX_LOG_LEVEL=debug run release-ucx_info "${rel_env[@]}" stdbuf -oL "$release/../bin/ucx_info" -d &&
         ucx_info_check "$work/release-ucx_info.log" >"$work/release-ucx_info-check.log" 2>&1 &&
         ! grep -qE "ERROR|Assertion" "$work/release-ucx_info.log"; then
        ok "release: UCX 1.13.1 without assertions and parameter checks (ucx_info -b): ucx_info -d: DevX md, rc_mlx5, rc_verbs, ud_mlx5, ud_verbs and dc_mlx5 on 4 ports"
    else
        fail "release: ucx_info -d of the build without assertions"
        cat "$work/release-ucx_info-check.log"
        grep -E "Transport:|Device:|ERROR|Assertion|overrun" "$work/release-ucx_info.log" | show /dev/stdin
    fi
    ucx_perftest=("${rel_env[@]}" "$release/../bin/ucx_perftest") perf_label=release
    perftest rc_mlx5 mlx5_0:1 am_lat -s 8
    perftest rc_mlx5 mlx5_0:1 put_bw -s 8
    perftest rc_mlx5 mlx5_0:1 am_bw -s 8
    perftest rc_mlx5 mlx5_2:1 am_lat -s 8
    perftest rc_mlx5 mlx5_0:1 get -s 64 -D bcopy
    ucp_check
    ucx_perftest=(ucx_perftest) perf_label=perftest
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
