#!/bin/bash
# The fix in UCX itself (issue 23): Debian's UCX 1.13.1 built twice, stock
# and with our change, and UCX's own gtest run on both through the
# emulated device's drop-in preload library.
#
#   upstream/build.sh OUTDIR
#
# Steps (each bounded in time, each timed into OUTDIR/times.txt):
#   fetch     ucx=1.13.1-1 from Debian's source package with a private apt
#             configuration (the machine's apt sources are never touched);
#             the orig tarball's SHA-256 is checked against the .dsc
#   unpack    the pristine tree, and from it by program (upstream/apply.py):
#             "tests"   pristine + our gtest cases (the stock build's tree,
#                       so the new tests run against stock UCX too)
#             "rc"      pristine + our gtest cases + the RC DEVX connect's fix
#             "ud"      rc + the UD address vector's fix
#             "patched" ud + the tag-matching command QP's address
#   patch     the series, each headed by its commit message:
#             OUTDIR/ucx-1.13.1-transient-ah.patch (pristine to rc),
#             OUTDIR/ucx-1.13.1-transient-ah-ud.patch (rc to ud) and
#             OUTDIR/ucx-1.13.1-tm-cmd-qp-address.patch (ud to patched);
#             checked with patch -p1 on a fresh pristine copy, which must
#             give the patched tree
#   stock     autogen, configure (verbs, mlx5-dv, DevX, gtest), make, gtest,
#             install into its own prefix
#   patched   the stock build tree copied, the series applied to its sources,
#             make again: only what the fix touches is rebuilt
#   gtest     upstream/gtest-run.sh on both builds (the suites, one process
#             per chunk, each a host of a private emulated fabric) and the
#             comparison, test by test
# Ends with one line per suite:
#   <suite>: stock P passed F failed S skipped, patched P passed F failed S skipped
#
# The builds are kept in a cache directory keyed by the tarball's SHA-256 and
# the hash of upstream/ (UCX_UPSTREAM_CACHE, default
# /var/cache/ucx-mlx5-upstream): a second run with the same inputs reuses
# them and only runs the tests. Stale keys are removed (UPSTREAM_KEEP_KEYS,
# default 1, keys kept besides the current one).
#
# Environment:
#   UPSTREAM_EMU_PREFIX  an installed tree of this project (its
#                        lib/libucx_mlx5_emu_preload.so and bin/ucx_emu);
#                        default <top>/build-rel/prefix
#   UPSTREAM_JOBS        make parallelism (default: nproc)
#   UPSTREAM_GTEST       "uct" (default): the gtest binary is built from the
#                        sources the suites need (common/, uct/, uct/ib/);
#                        "full": all of UCX's gtest
#   UPSTREAM_SUITES      which suites to run (default: all of them, see
#                        gtest-run.sh)
#   UPSTREAM_SKIP_GTEST  1: build and write the patch, run no test
#   UPSTREAM_ONLY        "release": build only UCX 1.13.1 without assertions
#                        and parameter checks (the pristine tree, no gtest),
#                        as a cluster builds it for speed; its libdir in
#                        OUTDIR/release-libdir.txt
# Exit status: 0 if everything built, the patch applies, the stock and
# patched pass sets are identical (but for our new tests) and the new tests
# fail on stock and pass patched; 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
out=${1:?usage: upstream/build.sh OUTDIR}
mkdir -p "$out" || { echo "upstream: cannot create $out" >&2; exit 1; }
out=$(cd "$out" && pwd)
cache=${UCX_UPSTREAM_CACHE:-/var/cache/ucx-mlx5-upstream}
jobs=${UPSTREAM_JOBS:-$(nproc)}
gtest_mode=${UPSTREAM_GTEST:-uct}
emu_prefix=${UPSTREAM_EMU_PREFIX:-$top/build-rel/prefix}
version=1.13.1
debian_version=1.13.1-1
patch_name=ucx-$version-transient-ah.patch
patch_ud_name=ucx-$version-transient-ah-ud.patch
patch_tm_name=ucx-$version-tm-cmd-qp-address.patch
times=$out/times.txt

log() {
    echo "[upstream $(date +%H:%M:%S)] $*"
}

die() {
    echo "upstream: $*" >&2
    exit 1
}

# step NAME LIMIT STEP ARGS...: run upstream/steps.sh STEP ARGS bounded by
# LIMIT seconds (timeout kills it, and 30 s later its children), its
# output in OUTDIR/logs/NAME.log; records the time it took
step() {
    local name=$1 limit=$2 t0 rc
    shift 2
    t0=$(date +%s)
    log "$name"
    timeout --kill-after=30 "$limit" bash "$here/steps.sh" "$@" \
        >"$out/logs/$name.log" 2>&1
    rc=$?
    printf '%-24s %5d s%s\n' "$name" $(( $(date +%s) - t0 )) \
        "$([ $rc -eq 0 ] || echo " (exit $rc)")" >>"$times"
    if [ $rc -ne 0 ]; then
        echo "upstream: step '$name' failed (exit $rc$([ $rc -eq 124 ] && echo ", timed out after $limit s")); the end of $out/logs/$name.log:" >&2
        tail -n 40 "$out/logs/$name.log" >&2
        return 1
    fi
}

need() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    log "installing ${missing[*]}"
    timeout 900 apt-get install -y --no-install-recommends "${missing[@]}" \
        >"$out/logs/apt-install.log" 2>&1 ||
        { (timeout 300 apt-get update && timeout 900 apt-get install -y \
            --no-install-recommends "${missing[@]}") \
            >>"$out/logs/apt-install.log" 2>&1; } ||
        die "cannot install ${missing[*]} (see $out/logs/apt-install.log)"
}

export here top out cache jobs gtest_mode version debian_version
mkdir -p "$out/logs" "$cache" || die "cannot create $out/logs and $cache"
: >"$times"
t_start=$(date +%s)

[ -f "$emu_prefix/lib/libucx_mlx5_emu_preload.so" ] && [ -x "$emu_prefix/bin/ucx_emu" ] ||
    die "no installed tree of this project in $emu_prefix (UPSTREAM_EMU_PREFIX): build and install it first"
need autoconf automake libtool make g++ pkg-config python3 patch xz-utils \
     libibverbs-dev librdmacm-dev dpkg-dev debian-archive-keyring

# ---------------------------------------------------------------- fetch
dl=$cache/download
tarball=$dl/ucx_$version.orig.tar.xz
export dl tarball
dsc=$dl/ucx_$debian_version.dsc
mkdir -p "$dl" || die "cannot create $dl"
if [ ! -f "$tarball" ] || [ ! -f "$dsc" ]; then
    step fetch 600 fetch || exit 1
fi
# the orig tarball against the .dsc's Checksums-Sha256 (apt checked the .dsc
# against the signed Sources index)
want=$(awk '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0}
            s && $3 == "ucx_'$version'.orig.tar.xz" {print $1}' "$dsc")
have=$(sha256sum "$tarball" | cut -d' ' -f1)
[ -n "$want" ] || die "$dsc names no SHA-256 for ucx_$version.orig.tar.xz"
if [ "$want" != "$have" ]; then
    rm -f "$tarball" "$dsc"
    die "ucx_$version.orig.tar.xz: SHA-256 $have, the .dsc says $want (removed; run again to fetch anew)"
fi
echo "orig tarball SHA-256 $have (matches $(basename "$dsc"))" >"$out/source.txt"
log "source verified: SHA-256 $have"

# ---------------------------------------------------------------- release
# UPSTREAM_ONLY=release: only the no-assertion build of the pristine tree
# (--disable-assertions --disable-params-check, no gtest), in a cache
# directory of its own keyed by the tarball and steps.sh (our change is not
# in it); its libdir into OUTDIR/release-libdir.txt
if [ "${UPSTREAM_ONLY:-}" = release ]; then
    need ccache
    work=$cache/release-${have:0:16}-$(sha256sum "$here/steps.sh" | cut -c1-16)
    export work CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}
    log "release build $work"
    ls -dt "$cache"/release-* 2>/dev/null | grep -vxF "$work" |
        tail -n +$(( ${UPSTREAM_KEEP_KEYS:-1} + 1 )) | xargs -r rm -rf
    if [ ! -f "$work/.done-release" ]; then
        step release-autogen 900 prepare_release &&
            step release-configure 900 configure_release &&
            step release-build 5400 build_lib "$work/build" &&
            step release-install 900 install_tree "$work/build" "$work/root" ||
            exit 1
        touch "$work/.done-release"
    fi
    step release-install-check 300 check_install release "$work/root" "$emu_prefix" "$out/installs" ||
        exit 1
    cat "$out/logs/release-install-check.log"
    echo "$work/root/opt/ucx-$version/lib" >"$out/release-libdir.txt"
    cat "$times"
    exit 0
fi

# ---------------------------------------------------------------- the key
# what the builds depend on: the tarball, our change and tests (ucx/), the
# tool that applies them and the build steps, and the gtest mode (not the
# runner or the commit message: they change no build)
ours_hash=$(cd "$here" && find apply.py steps.sh ucx -type f -print0 |
            LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16)
key=${have:0:16}-$ours_hash-$gtest_mode
work=$cache/build-$key
export work
log "build key $key ($work)"
# drop stale keys, keeping the newest UPSTREAM_KEEP_KEYS (default 1)
ls -dt "$cache"/build-* 2>/dev/null | grep -vxF "$work" |
    tail -n +$(( ${UPSTREAM_KEEP_KEYS:-1} + 1 )) | xargs -r rm -rf
mkdir -p "$work" || die "cannot create $work"
stamp() { [ -f "$work/.done-$1" ]; }
done_() { touch "$work/.done-$1"; }

if ! stamp unpack; then
    step unpack 300 unpack && done_ unpack || exit 1
fi

step patch 300 make_patch || exit 1
need git
(cd "$work" && git apply --stat <"$work/diff") >"$out/diffstat.txt" &&
    (cd "$work" && git apply --stat <"$work/diff-ud") >"$out/diffstat-ud.txt" &&
    (cd "$work" && git apply --stat <"$work/diff-tm") >"$out/diffstat-tm.txt" ||
    die "git apply --stat of the series failed"

# ---------------------------------------------------------------- builds
# ccache for both builds' compilers: the patched build copies the stock one
# and rebuilds little, and a rerun after a change in our files is fast
need ccache
export CCACHE_DIR=$cache/ccache CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=1
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-3G}





if ! stamp stock; then
    step stock-autogen 900 prepare_src || exit 1
    step stock-configure 900 configure_stock || exit 1
    step stock-build 5400 build_tree "$work/stock/build" || exit 1
    step stock-install 900 install_tree "$work/stock/build" "$work/stock/root" || exit 1
    done_ stock
fi

if ! stamp patched; then
    step patched-copy 900 prepare_patched || exit 1
    step patched-build 5400 build_tree "$work/patched/build" || exit 1
    step patched-install 900 install_tree "$work/patched/build" "$work/patched/root" || exit 1
    done_ patched
fi

# both installs side by side, each on its own
step stock-install-check 300 check_install stock "$work/stock/root" "$emu_prefix" "$out/installs" &&
    step patched-install-check 300 check_install patched "$work/patched/root" "$emu_prefix" "$out/installs" ||
    exit 1
cat "$out/logs/stock-install-check.log" "$out/logs/patched-install-check.log"

# where each install's libraries are, for the checks that run on them
echo "$work/stock/root/opt/ucx-$version/lib" >"$out/stock-libdir.txt"
echo "$work/patched/root/opt/ucx-$version/lib" >"$out/patched-libdir.txt"

# what the patched build rebuilt (its object files newer than the copy)
(cd "$work/patched/build" && find . -name '*.o' -newer "$work/.done-stock" | sort) \
    >"$out/patched-rebuilt.txt"

# ---------------------------------------------------------------- the patch file
# write_one MESSAGE DIFFSTAT DIFF FILE RESULTS: the commit message (its
# @RESULTS@ line replaced by the gtest comparison), the diffstat, the diff
write_one() {
    {
        awk -v results="$5" '
            $0 == "@RESULTS@" {
                while ((getline line < results) > 0) print "    " line
                next
            }
            {print}' "$1"
        echo "---"
        cat "$2"
        echo
        cat "$3"
    } >"$4.tmp" && mv "$4.tmp" "$4"
}

# write_patch RESULTS: the series, the RC DEVX connect's patch (our tests
# with it), the UD address vector's and the command QP's address on top
write_patch() {
    write_one "$here/commit-message.txt" "$out/diffstat.txt" "$work/diff" \
        "$out/$patch_name" "$1" &&
    write_one "$here/commit-message-ud.txt" "$out/diffstat-ud.txt" "$work/diff-ud" \
        "$out/$patch_ud_name" "$1" &&
    write_one "$here/commit-message-tm.txt" "$out/diffstat-tm.txt" "$work/diff-tm" \
        "$out/$patch_tm_name" "$1"
}

if [ "${UPSTREAM_SKIP_GTEST:-0}" = 1 ]; then
    write_patch /dev/null || die "cannot write $out/$patch_name"
    log "wrote $out/$patch_name, $out/$patch_ud_name and $out/$patch_tm_name (no gtest run: UPSTREAM_SKIP_GTEST=1)"
    cat "$times"
    exit 0
fi

# ---------------------------------------------------------------- gtest
rc=0
log "gtest: suites ${UPSTREAM_SUITES:-all} (logs in $out/gtest)"
t0=$(date +%s)
timeout --kill-after=60 "${UPSTREAM_GTEST_LIMIT:-10800}" \
    python3 "$here/gtest_run.py" --build stock="$work/stock/build" \
        --build patched="$work/patched/build" --emu-prefix "$emu_prefix" \
        --out "$out/gtest" ${UPSTREAM_SUITES:+--suites "$UPSTREAM_SUITES"} \
        2>&1 | tee "$out/logs/gtest.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "upstream: the gtest comparison failed (see $out/logs/gtest.log)" >&2; rc=1; }
printf '%-24s %5d s\n' gtest $(( $(date +%s) - t0 )) >>"$times"
write_patch "$out/gtest/summary.txt" || die "cannot write $out/$patch_name"
log "wrote $out/$patch_name, $out/$patch_ud_name and $out/$patch_tm_name"
echo
cat "$times"
echo
cat "$out/gtest/summary.txt" 2>/dev/null || { echo "upstream: no gtest summary" >&2; rc=1; }
cat "$out/gtest/classes.txt" 2>/dev/null
printf '%-24s %5d s\n' total $(( $(date +%s) - t_start )) >>"$times"
exit $rc
