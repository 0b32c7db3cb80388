#!/bin/bash
# MPI and OpenSHMEM over a UCX 1.13.1 install on the emulated fabric, each
# rank its own host (UCX_IB_EMU_HOST=auto) of a private fabric, through
# PREFIX's drop-in preload library. Debian's Open MPI 4.1.4 and MPICH 4.0.2
# are used unmodified; LD_LIBRARY_PATH puts UCXLIB's libucp/libucs/libuct
# in place of Debian's libucx0 (same sonames), and UCX then loads the
# modules of that install (ucx/ next to its libucs).
#
#   mpi-check.sh PREFIX UCXLIB OUTDIR
#
# PREFIX  an installed tree of this project (the preload library, ucx_emu)
# UCXLIB  the lib directory of the UCX to run (upstream/build.sh's patched
#         install: <cache>/build-*/patched/root/opt/ucx-1.13.1/lib)
# Checks, each two ranks, bounded by MPI_CHECK_TIMEOUT seconds (default 180),
# judged on the program's own data check and on where libucp came from:
#   ompi     mpirun.openmpi --mca pml ucx --mca osc ucx: ping-pong 1 B..64 KiB
#            with data checks, MPI_Put/MPI_Get in a window, 100
#            MPI_Fetch_and_op and 2 MPI_Compare_and_swap, each checked
#   ompi-rc_verbs  the same with UCX_TLS=rc_v,self: RC over verbs QPs,
#            through MPI_Finalize
#   ompi-dc_x  the same with UCX_TLS=dc_x,self: DC (DCIs and DCTs made
#            through DevX), UCP's lanes on dc_mlx5 (its info log says so)
#   ompi-dc_x-fanout  3 ranks, each with one DCI (UCX_DC_MLX5_NUM_DCI=1):
#            all-to-all and a ring, every byte checked (mpi_fanout.c); a
#            DCI connected to the DCTs of two other hosts (ucx_emu qps)
#   oshmem   oshrun --mca spml ucx --mca pml ucx: a put/flag ping-pong 1 B..64
#            KiB, shmem_putmem/getmem, an atomic add, 200 fetch-adds (each
#            old value seen once), 10 compare-swap rounds (one winner each);
#            its MPI layer needs pml ucx too: only btl self
#   mpich    mpirun.mpich (ch4:ucx, MPIR_CVAR_NOLOCAL=1): the same ping-pong,
#            one-sided put/get and atomics
#   netpipe-ompi, netpipe-mpich  NetPIPE 1 B..64 KiB over each (latency and
#            bandwidth reported; libucp from UCXLIB)
# Prints "mpi: ok: ..." or "mpi: FAILED: ..." per check, then
# "N passed, N failed, N skipped". Exit status 0 if all passed.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:?usage: mpi-check.sh PREFIX UCXLIB OUTDIR}
ucxlib=${2:?usage: mpi-check.sh PREFIX UCXLIB OUTDIR}
out=${3:?usage: mpi-check.sh PREFIX UCXLIB OUTDIR}
limit=${MPI_CHECK_TIMEOUT:-180}
size=${MPI_CHECK_SIZE:-65536}
src=$top/contrib/mpi-check
passed=0 failed=0 skipped=0
fabric=mpi-check-$$

mkdir -p "$out" || { echo "mpi: FAILED: cannot create $out"; exit 1; }

cleanup() {
    [ -e "/dev/shm/ucx-emu.$(id -u).$fabric" ] &&
        timeout 30 "$prefix/bin/ucx_emu" -f "$fabric" destroy --force >/dev/null 2>&1
    rm -f "/dev/shm/ucx-emu.$(id -u).$fabric"
}
trap cleanup EXIT

ok()   { echo "mpi: ok: $*"; passed=$((passed + 1)); }
fail() { echo "mpi: FAILED: $*"; failed=$((failed + 1)); }

# run NAME LOG COMMAND...: in a process group of its own, bounded; every
# process of it is gone afterwards, and so is the fabric
run() {
    local name=$1 logfile=$2 pid rc
    shift 2
    cleanup
    "$prefix/bin/ucx_emu" -f "$fabric" create -n 4 >/dev/null ||
        { echo "$name: cannot create fabric $fabric" >"$logfile"; return 1; }
    setsid timeout -k 10 "$limit" "$@" >"$logfile" 2>&1 </dev/null &
    pid=$!
    wait $pid
    rc=$?
    kill -KILL -- -$pid 2>/dev/null      # what the launcher left
    "$prefix/bin/ucx_emu" -f "$fabric" qps >"$logfile.qps" 2>&1
    cleanup
    return $rc
}

# the launcher's ranks must not outlive it
left_behind() {
    pgrep -f "$out/(mpi|shmem)_(check|fanout)" >/dev/null
}

ucx_env=(LD_LIBRARY_PATH="$ucxlib"
         LD_PRELOAD="$prefix/lib/libucx_mlx5_emu_preload.so"
         UCX_IB_EMU_FABRIC="$fabric" UCX_WARN_UNUSED_ENV_VARS=n
         UCX_NET_DEVICES=mlx5_0:1 UCX_TLS=rc_x,ud_x,self
         UCX_RC_TIMEOUT=${MPI_CHECK_RC_TIMEOUT:-1s}
         LD_DEBUG=files LD_DEBUG_OUTPUT="$out/ld-debug")

# ucp_libs: every libucp the last run's processes initialized (ld.so's
# trace), and the trace removed
ucp_libs() {
    cat "$out"/ld-debug.* 2>/dev/null | sed -n 's/.*calling init: //p' |
        grep '/libucp\.so' | sort -u
    rm -f "$out"/ld-debug.*
}

# ucp_from_ucxlib LIBS: every rank ran UCXLIB's libucp, none another's
ucp_from_ucxlib() {
    [ -n "$1" ] && ! grep -qv "^$ucxlib/" <<<"$1"
}

# the check of one run: its data check line, its ranks' UCX from UCXLIB
judge() { # NAME LOG PATTERN
    local name=$1 logfile=$2 pattern=$3 libs
    libs=$(ucp_libs)
    if ! grep -q "$pattern" "$logfile"; then
        fail "$name: no '$pattern' (log $logfile)"
        tail -20 "$logfile"
    elif ! ucp_from_ucxlib "$libs"; then
        fail "$name: libucp came from ${libs:-nowhere}, not $ucxlib"
    elif left_behind; then
        fail "$name: ranks left behind"
        pkill -KILL -f "$out/(mpi|shmem)_(check|fanout)"
    else
        ok "$name: $(grep -h "$pattern" "$logfile" | head -1) (libucp from $ucxlib; QPs: $(grep -c ' devx ' "$logfile.qps") DevX, $(grep -c ' verbs ' "$logfile.qps") verbs)"
    fi
}

# Open MPI passes each variable to its ranks with -x; xs_tls TLS: the same
# with UCX_TLS=TLS, in the array xs_tls
xs=()
for v in "${ucx_env[@]}"; do xs+=(-x "$v"); done
xs_tls() {
    local v
    xs_tls=()
    for v in "${ucx_env[@]}"; do
        case $v in UCX_TLS=*) v=UCX_TLS=$1 ;; esac
        xs_tls+=(-x "$v")
    done
}

# Open MPI: pml ucx and osc ucx (Debian's openmpi-mca-params.conf disables
# both by default)
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    if mpicc.openmpi -O2 -o "$out/mpi_check_ompi" "$src/mpi_check.c" 2>"$out/ompi-build.log"; then
        run ompi "$out/ompi.log" mpirun.openmpi --allow-run-as-root --oversubscribe \
            -np 2 --mca pml ucx --mca osc ucx --mca btl self "${xs[@]}" \
            "$out/mpi_check_ompi" "$size"
        judge ompi "$out/ompi.log" " 0 data errors"
        # the same over rc_verbs (verbs RC QPs; wireup over ud_verbs)
        xs_tls rc_v,self
        run ompi-rc_verbs "$out/ompi-rc_verbs.log" mpirun.openmpi --allow-run-as-root \
            --oversubscribe -np 2 --mca pml ucx --mca osc ucx --mca btl self \
            "${xs_tls[@]}" "$out/mpi_check_ompi" "$size"
        if grep -q devx "$out/ompi-rc_verbs.log.qps"; then
            fail "ompi-rc_verbs: DevX QPs made with UCX_TLS=rc_v (log $out/ompi-rc_verbs.log.qps)"
            ucp_libs >/dev/null
        else
            judge ompi-rc_verbs "$out/ompi-rc_verbs.log" " 0 data errors"
        fi
        # the same over DC, which UCX and Open MPI pick at scale
        xs_tls dc_x,self
        run ompi-dc_x "$out/ompi-dc_x.log" mpirun.openmpi --allow-run-as-root \
            --oversubscribe -np 2 --mca pml ucx --mca osc ucx --mca btl self \
            -x UCX_LOG_LEVEL=info "${xs_tls[@]}" "$out/mpi_check_ompi" "$size"
        if ! grep -q "tag(dc_mlx5/mlx5_0:1)" "$out/ompi-dc_x.log"; then
            fail "ompi-dc_x: UCP's lanes are not on dc_mlx5 (log $out/ompi-dc_x.log)"
            ucp_libs >/dev/null
        else
            judge ompi-dc_x "$out/ompi-dc_x.log" " 0 data errors"
        fi
        # one DCI per rank reaching the DCTs of two other hosts
        if mpicc.openmpi -O2 -o "$out/mpi_fanout" "$src/mpi_fanout.c" \
                2>"$out/fanout-build.log"; then
            run ompi-dc_x-fanout "$out/ompi-dc_x-fanout.log" mpirun.openmpi \
                --allow-run-as-root --oversubscribe -np 3 --mca pml ucx \
                --mca osc ucx --mca btl self -x UCX_DC_MLX5_NUM_DCI=1 \
                "${xs_tls[@]}" "$out/mpi_fanout"
            # a DCI's connections (ucx_emu qps: host, QP, ... peer host)
            # to more than one host
            if ! awk 'NR > 1 && !seen[$1 " " $2 " " $7]++ {n[$1 " " $2]++}
                      END {for (q in n) if (n[q] > 1) found = 1
                           exit !found}' "$out/ompi-dc_x-fanout.log.qps"; then
                fail "ompi-dc_x-fanout: no DCI reached two hosts (log $out/ompi-dc_x-fanout.log.qps)"
                ucp_libs >/dev/null
            else
                judge ompi-dc_x-fanout "$out/ompi-dc_x-fanout.log" " 0 data errors"
            fi
        else
            fail "ompi-dc_x-fanout: mpicc.openmpi failed (log $out/fanout-build.log)"
        fi
    else
        fail "ompi: mpicc.openmpi failed (log $out/ompi-build.log)"
    fi
    if command -v oshcc >/dev/null && command -v oshrun >/dev/null &&
       oshcc -O2 -o "$out/shmem_check" "$src/shmem_check.c" 2>"$out/oshmem-build.log"; then
        run oshmem "$out/oshmem.log" oshrun --allow-run-as-root --oversubscribe \
            -np 2 --mca spml ucx --mca pml ucx --mca btl self "${xs[@]}" "$out/shmem_check"
        judge oshmem "$out/oshmem.log" " 0 data errors"
    else
        fail "oshmem: oshcc or oshrun missing or failed (log $out/oshmem-build.log)"
    fi
else
    echo "mpi: SKIPPED: ompi, ompi-rc_verbs, ompi-dc_x, ompi-dc_x-fanout, oshmem: no Open MPI (openmpi-bin, libopenmpi-dev)"
    skipped=$((skipped + 5))
fi

# MPICH ch4:ucx; NOLOCAL: on-node traffic through UCX, not shared memory
if command -v mpicc.mpich >/dev/null && command -v mpirun.mpich >/dev/null; then
    if mpicc.mpich -O2 -o "$out/mpi_check_mpich" "$src/mpi_check.c" 2>"$out/mpich-build.log"; then
        run mpich "$out/mpich.log" env "${ucx_env[@]}" MPIR_CVAR_NOLOCAL=1 \
            mpirun.mpich -np 2 -bind-to core "$out/mpi_check_mpich" "$size"
        judge mpich "$out/mpich.log" " 0 data errors"
    else
        fail "mpich: mpicc.mpich failed (log $out/mpich-build.log)"
    fi
else
    echo "mpi: SKIPPED: mpich: no MPICH (mpich, libmpich-dev)"
    skipped=$((skipped + 1))
fi

# NetPIPE (Debian's netpipe-openmpi and netpipe-mpich2), 1 B to 64 KiB,
# 10 round trips a size: it completes, and its first and last lines are
# reported (NetPIPE checks no data; the checks above do)
netpipe() { # NAME LOG: judge a NetPIPE run
    local name=$1 logfile=$2 first last libs
    libs=$(ucp_libs)
    first=$(grep -m1 -E '^ *[0-9]+: +1 bytes' "$logfile" | sed 's/^ *[0-9]*: *//')
    last=$(grep -E '^ *[0-9]+: +65536 bytes' "$logfile" | tail -1 | sed 's/^ *[0-9]*: *//')
    if [ -z "$first" ] || [ -z "$last" ]; then
        fail "$name: NetPIPE did not reach 64 KiB (log $logfile)"
        tail -20 "$logfile"
    elif ! ucp_from_ucxlib "$libs"; then
        fail "$name: libucp came from ${libs:-nowhere}, not $ucxlib"
    else
        ok "$name: $first; $last (libucp from $ucxlib)"
    fi
}
np_args=(-u 65536 -n 10 -p 0)
if command -v NPopenmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
    run netpipe-ompi "$out/netpipe-ompi.log" mpirun.openmpi --allow-run-as-root \
        --oversubscribe -np 2 --mca pml ucx --mca btl self "${xs[@]}" \
        NPopenmpi "${np_args[@]}" -o "$out/netpipe-ompi.out"
    netpipe netpipe-ompi "$out/netpipe-ompi.log"
else
    echo "mpi: SKIPPED: netpipe-ompi: no NetPIPE for Open MPI (netpipe-openmpi)"
    skipped=$((skipped + 1))
fi
if command -v NPmpich2 >/dev/null && command -v mpirun.mpich >/dev/null; then
    run netpipe-mpich "$out/netpipe-mpich.log" env "${ucx_env[@]}" MPIR_CVAR_NOLOCAL=1 \
        mpirun.mpich -np 2 NPmpich2 "${np_args[@]}" -o "$out/netpipe-mpich.out"
    netpipe netpipe-mpich "$out/netpipe-mpich.log"
else
    echo "mpi: SKIPPED: netpipe-mpich: no NetPIPE for MPICH (netpipe-mpich2)"
    skipped=$((skipped + 1))
fi
rm -f "$out"/ld-debug.*

echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
