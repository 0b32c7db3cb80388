#!/bin/bash
# The fix in UCX itself (issue 23), as a leg of the test matrix:
# upstream/build.sh builds Debian's UCX 1.13.1 stock and with our change,
# writes the patch and runs UCX's own gtest on both through PREFIX's
# drop-in preload library.
#
#   upstream-check.sh PREFIX OUTDIR
#
# PREFIX  an installed tree of this project (its preload library and ucx_emu)
# OUTDIR  build.sh's outputs: the patch, times.txt, gtest/ (per test results,
#         the comparison), logs/
# Environment: UPSTREAM_SUITES (default here "transient_ah,ib,tag": our new
# tests, the ib suite and rc_mlx5's hardware tag-matching tests, about two
# minutes; "rc_mlx5,ib,ud_mlx5,transient_ah" is the whole comparison, which
# takes about 45 minutes on 2 cores), UPSTREAM_CHECK_TIMEOUT
# (seconds for all of it, default 2400), UCX_UPSTREAM_CACHE (build.sh's
# cache of builds).
# Then contrib/mpi-check.sh on the patched install (Open MPI pml/osc ucx,
# OpenSHMEM spml ucx, MPICH ch4:ucx; UPSTREAM_MPI=0 leaves it out).
# Prints build.sh's output, then "upstream: ok: ..." or "upstream: FAILED:
# ..."; exit status 0 if build.sh and the MPI checks passed, 1 if not.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
prefix=${1:?usage: upstream-check.sh PREFIX OUTDIR}
out=${2:?usage: upstream-check.sh PREFIX OUTDIR}
limit=${UPSTREAM_CHECK_TIMEOUT:-2400}
export UPSTREAM_SUITES=${UPSTREAM_SUITES:-transient_ah,ib,tag}
export UPSTREAM_EMU_PREFIX=$prefix

mkdir -p "$out" || { echo "upstream: FAILED: cannot create $out"; exit 1; }

# upstream_fabrics: this user's fabrics of gtest_run.py in /dev/shm
upstream_fabrics() {
    ls /dev/shm 2>/dev/null | grep -E "^ucx-emu\.$(id -u)\.upstream-" || true
}

# a fabric of an earlier run that was killed (its gtest_run.py, whose pid
# the name carries, is gone) is that run's leftover: removed, and said
for f in $(upstream_fabrics); do
    pid=$(echo "$f" | sed -n 's/^ucx-emu\.[0-9]*\.upstream-gt-\([0-9]*\)-.*/\1/p')
    if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then
        echo "upstream: removed /dev/shm/$f, left by an earlier run (pid $pid is gone)"
        rm -f "/dev/shm/$f"
    fi
done
before=$(upstream_fabrics)
t0=$(date +%s)
# its own process group, so that a timeout ends everything it started
timeout --kill-after=60 "$limit" setsid "$top/upstream/build.sh" "$out" </dev/null
rc=$?
secs=$(( $(date +%s) - t0 ))

# nothing of it may be left: no process of the build trees, no fabric
left=$(pgrep -f "$out/|ucx-mlx5-upstream/build-" 2>/dev/null | grep -vx $$ || true)
if [ -n "$left" ]; then
    echo "upstream: FAILED: processes left behind: $(echo $left)"
    rc=1
fi
shm=$(upstream_fabrics | grep -vxF "$before" || true)
if [ -n "$shm" ]; then
    echo "upstream: FAILED: fabrics left in /dev/shm: $(echo $shm)"
    rc=1
fi

# MPI and OpenSHMEM on the patched UCX (contrib/mpi-check.sh), each rank a
# host of the emulated fabric
mpi=
if [ $rc -eq 0 ] && [ "${UPSTREAM_MPI:-1}" = 1 ]; then
    pkgs=(openmpi-bin libopenmpi-dev mpich libmpich-dev netpipe-openmpi netpipe-mpich2)
    dpkg -s "${pkgs[@]}" >/dev/null 2>&1 ||
        timeout 900 apt-get install -y --no-install-recommends "${pkgs[@]}" \
            >"$out/logs/apt-mpi.log" 2>&1 ||
        echo "upstream: cannot install ${pkgs[*]} (see $out/logs/apt-mpi.log)"
    "$top/contrib/mpi-check.sh" "$prefix" "$(cat "$out/patched-libdir.txt")" \
        "$out/mpi" 2>&1 | tee "$out/mpi.log"
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
        mpi=", MPI and OpenSHMEM on the patched UCX: $(tail -1 "$out/mpi.log")"
    else
        rc=200
    fi
fi

# a UCP client reconnecting to a server whose MAC moved: the patched UCX
# delivers, the stock one does not (contrib/ucp-reconnect-check.sh)
reconnect=
if [ $rc -eq 0 ]; then
    "$top/contrib/ucp-reconnect-check.sh" "$prefix" \
        "$(dirname "$(cat "$out/stock-libdir.txt")")" \
        "$(dirname "$(cat "$out/patched-libdir.txt")")" "$out/ucp-reconnect" 2>&1 |
        tee "$out/ucp-reconnect.log"
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
        reconnect=", UCP reconnect after a MAC move: patched delivers, stock does not"
    else
        rc=201
    fi
fi

# UCP with hardware tag matching: the patched UCX runs on RoCE and
# InfiniBand, the stock one aborts on RoCEv2 (contrib/ucp-tag-offload-check.sh)
tagoff=
if [ $rc -eq 0 ]; then
    "$top/contrib/ucp-tag-offload-check.sh" "$prefix" \
        "$(dirname "$(cat "$out/stock-libdir.txt")")" \
        "$(dirname "$(cat "$out/patched-libdir.txt")")" "$out/ucp-tag-offload" 2>&1 |
        tee "$out/ucp-tag-offload.log"
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
        tagoff=", UCP tag offload: patched runs on RoCE and InfiniBand, stock aborts on RoCEv2"
    else
        rc=202
    fi
fi

# the same bug over DC: the patched UCX's DC endpoints take the UD helper's
# fresh address vector, the stock ones the AH cache's
# (contrib/dc-mac-move-check.sh)
dcmac=
if [ $rc -eq 0 ]; then
    "$top/contrib/dc-mac-move-check.sh" "$prefix" \
        "$(dirname "$(cat "$out/patched-libdir.txt")")" "$out/dc-mac-move" 2>&1 |
        tee "$out/dc-mac-move.log"
    if [ "${PIPESTATUS[0]}" -eq 0 ]; then
        dcmac=", a MAC move under DC: patched reconnects with the new MAC, stock keeps the old"
    else
        rc=203
    fi
fi

case $rc in
0)   echo "upstream: ok: UCX 1.13.1 stock and patched, $(grep -c . "$out/gtest/summary.txt") suites compared ($UPSTREAM_SUITES), patches $(tail -1 "$out/diffstat.txt" | sed 's/^ *//'), $(tail -1 "$out/diffstat-ud.txt" | sed 's/^ *//') and $(tail -1 "$out/diffstat-tm.txt" | sed 's/^ *//'), in $secs s$mpi$reconnect$tagoff$dcmac" ;;
124) echo "upstream: FAILED: timed out after $limit s" ;;
200) echo "upstream: FAILED: MPI and OpenSHMEM on the patched UCX: $(tail -1 "$out/mpi.log") (see $out/mpi.log)" ;;
203) echo "upstream: FAILED: DC MAC move: $(grep FAILED "$out/dc-mac-move.log" | head -1) (see $out/dc-mac-move.log)" ;;
202) echo "upstream: FAILED: UCP tag offload: $(grep FAILED "$out/ucp-tag-offload.log" | head -1) (see $out/ucp-tag-offload.log)" ;;
201) echo "upstream: FAILED: UCP reconnect: $(grep FAILED "$out/ucp-reconnect.log" | head -1) (see $out/ucp-reconnect.log)" ;;
*)   echo "upstream: FAILED: build.sh exit $rc after $secs s (see $out/logs)" ;;
esac
[ $rc -eq 0 ]
