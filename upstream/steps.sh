#!/bin/bash
# The steps of upstream/build.sh, one a call, each run by build.sh under
# timeout as "bash steps.sh STEP ARGS..." (a shell function cannot be):
# build.sh exports what they need (here, top, cache, work, dl, tarball,
# version, debian_version, jobs, gtest_mode and ccache's variables).
set -uo pipefail

cc_wrap="ccache gcc" cxx_wrap="ccache g++"
# Debian's build has assertions on (the default); gcc 12 stops
# test/gtest/ucm/malloc_hook.cc on -Wuse-after-free under -Werror
configure_args=(--prefix=/opt/ucx-$version --with-verbs --with-mlx5-dv --with-devx
                --with-rc --with-ud --with-dc --enable-gtest --enable-mt
                --without-java --without-go --without-cuda --without-rocm
                --without-knem --without-xpmem --without-ugni --without-fuse3
                --without-gdrcopy --disable-doxygen-doc --disable-examples
                CC="$cc_wrap" CXX="$cxx_wrap"
                CXXFLAGS="-g -O2 -Wno-error=use-after-free")

fetch() {
    local apt=$dl/apt o
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" || return 1
    # A private configuration: its own source list, lists and cache
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
        >"$apt/sources.list"
    o=(-o Dir::Etc::SourceList="$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
       -o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
       -o APT::Sandbox::User=root)
    apt-get "${o[@]}" update || { echo "apt-get update (private sources) failed"; return 1; }
    (cd "$dl" && apt-get "${o[@]}" source --download-only "ucx=$debian_version") ||
        { echo "apt-get source ucx=$debian_version failed"; return 1; }
}

# ---------------------------------------------------------------- unpack
unpack() {
    local t=$work/trees
    rm -rf "$t" && mkdir -p "$t" || return 1
    tar -C "$t" -xf "$tarball" || { echo "cannot unpack $tarball"; return 1; }
    mv "$t/ucx-$version" "$t/pristine" || return 1
    chmod -R a-w "$t/pristine"
    cp -a "$t/pristine" "$t/tests" && chmod -R u+w "$t/tests" &&
        python3 "$here/apply.py" --tree "$t/tests" --ours "$here" --part tests || return 1
    cp -a "$t/tests" "$t/rc" &&
        python3 "$here/apply.py" --tree "$t/rc" --ours "$here" --part fix || return 1
    cp -a "$t/rc" "$t/ud" &&
        python3 "$here/apply.py" --tree "$t/ud" --ours "$here" --part fix-ud || return 1
    cp -a "$t/ud" "$t/patched" &&
        python3 "$here/apply.py" --tree "$t/patched" --ours "$here" --part fix-tm || return 1
}

# ---------------------------------------------------------------- patch
# series_diff OLD NEW OUT: diff -ruN of two trees under $work/trees, as
# diff -u a/... b/... lines
series_diff() {
    (cd "$work/trees" && LC_ALL=C diff -ruN "$1" "$2") >"$3"
    [ $? -eq 1 ] || { echo "diff -ruN $1 $2 found no change"; return 1; }
    sed -i -e "s|^\(---\) $1/\([^\t]*\)|\1 a/\2|" \
           -e "s|^\(+++\) $2/\([^\t]*\)|\1 b/\2|" \
           -e "s|^diff -ruN $1/\(\S*\) $2/\(\S*\)\$|diff -u a/\1 b/\2|" "$3"
}

# The series: $work/diff (our tests and the RC DEVX connect's fix),
# $work/diff-ud (the UD address vector's, on top) and $work/diff-tm (the
# tag-matching command QP's address, on top), checked with patch -p1 on
# a fresh copy of the tarball, which must give the patched tree exactly
make_patch() {
    local check=$work/patch-check
    series_diff pristine rc "$work/diff" && series_diff rc ud "$work/diff-ud" &&
        series_diff ud patched "$work/diff-tm" || return 1
    rm -rf "$check" && mkdir -p "$check" && tar -C "$check" -xf "$tarball" || return 1
    (cd "$check/ucx-$version" && patch -p1 --quiet --forward <"$work/diff" &&
     patch -p1 --quiet --forward <"$work/diff-ud" &&
     patch -p1 --quiet --forward <"$work/diff-tm") ||
        { echo "the series does not apply with patch -p1 to the pristine tree"; return 1; }
    diff -r "$check/ucx-$version" "$work/trees/patched" ||
        { echo "the pristine tree patched differs from the patched tree"; return 1; }
    rm -rf "$check"
}

prepare_src() {
    local s=$work/stock/src
    rm -rf "$work/stock" && mkdir -p "$work/stock" || return 1
    cp -a "$work/trees/tests" "$s" || return 1
    # configure.ac names debian/ files (templates and all) the tarball keeps
    # in debian.upstream/
    mkdir -p "$s/debian" && cp -a "$s"/debian.upstream/. "$s/debian/" || return 1
    if [ "$gtest_mode" = uct ]; then
        python3 "$here/apply.py" --tree "$s" --ours "$here" --part trim-gtest || return 1
    fi
    (cd "$s" && ./autogen.sh) || { echo "autogen.sh failed"; return 1; }
}

# The no-assertion build (UPSTREAM_ONLY=release): the pristine tree as
# Debian's, but with --disable-assertions --disable-params-check and no gtest,
# what a cluster that builds UCX for speed runs; in $work of its own
prepare_release() {
    local s=$work/src
    rm -rf "$work/src" "$work/build" "$work/root" && mkdir -p "$work" || return 1
    tar -C "$work" -xf "$tarball" && mv "$work/ucx-$version" "$s" ||
        { echo "cannot unpack $tarball"; return 1; }
    mkdir -p "$s/debian" && cp -a "$s"/debian.upstream/. "$s/debian/" || return 1
    (cd "$s" && ./autogen.sh) || { echo "autogen.sh failed"; return 1; }
}

configure_release() {
    local args=() a
    for a in "${configure_args[@]}"; do
        [ "$a" = --enable-gtest ] || args+=("$a")
    done
    mkdir -p "$work/build" && cd "$work/build" &&
        ../src/configure "${args[@]}" --disable-assertions --disable-params-check ||
        { echo "configure failed (see $work/build/config.log)"; return 1; }
    grep -q '^#define HAVE_DEVX 1' config.h && grep -q '^#define HAVE_MLX5_DV 1' config.h ||
        { echo "configure found no DevX or no mlx5dv"; return 1; }
    ! grep -q '^#define ENABLE_ASSERT 1' config.h && grep -q '^#define ENABLE_PARAMS_CHECK 0' config.h ||
        { echo "configure left assertions or parameter checks on"; return 1; }
}

build_lib() { # DIR
    make -C "$1" -j"$jobs" || { echo "make in $1 failed"; return 1; }
}

configure_stock() {
    mkdir -p "$work/stock/build" &&
        cd "$work/stock/build" && ../src/configure "${configure_args[@]}" ||
        { echo "configure failed (see $work/stock/build/config.log)"; return 1; }
    grep -q '^#define HAVE_DEVX 1' config.h && grep -q '^#define HAVE_MLX5_DV 1' config.h ||
        { echo "configure found no DevX or no mlx5dv"; return 1; }
}

build_tree() { # DIR
    make -C "$1" -j"$jobs" || { echo "make in $1 failed"; return 1; }
    make -C "$1/test/gtest" -j"$jobs" gtest || { echo "make gtest in $1/test/gtest failed"; return 1; }
}

install_tree() { # DIR DESTDIR
    rm -rf "$2" && make -C "$1" install DESTDIR="$2" ||
        { echo "make install of $1 into $2 failed"; return 1; }
}

# The patched build: a copy of the built stock tree (sources and build),
# paths renamed, the fix applied to the copied sources; make then rebuilds
# what the fix touches and relinks (mtimes are kept, so nothing else is out
# of date)
prepare_patched() {
    rm -rf "$work/patched" && cp -a "$work/stock" "$work/patched" || return 1
    rm -rf "$work/patched/root"
    python3 "$here/apply.py" --rename-build "$work/patched/build" \
        --from "$work/stock/" --to "$work/patched/" || return 1
    python3 "$here/apply.py" --tree "$work/patched/src" --ours "$here" --part fix &&
        python3 "$here/apply.py" --tree "$work/patched/src" --ours "$here" --part fix-ud &&
        python3 "$here/apply.py" --tree "$work/patched/src" --ours "$here" --part fix-tm ||
        return 1
    # every library source the series changes is in the build's sources as
    # in the series' tree (the gtest's Makefile.am is trimmed there)
    local f
    for f in $(sed -n 's|^+++ b/\(src/[^\t]*\).*|\1|p' "$work/diff" "$work/diff-ud" \
               "$work/diff-tm" | sort -u); do
        cmp -s "$work/trees/patched/$f" "$work/patched/src/$f" ||
            { echo "the patched build's $f differs from the series' tree"; return 1; }
    done
}

# check_install NAME ROOT EMU_PREFIX OUTDIR: the installed tree (DESTDIR
# ROOT) on its own: ucx_info -v and -d through the preload, every UCX library
# and module they load (LD_DEBUG=files) from ROOT; UCX finds its modules in
# ucx/ next to the libucs it loaded first, and only then in the configured
# directory (/opt/ucx-$version/lib/ucx, which does not exist: DESTDIR)
check_install() {
    local name=$1 root=$2 emu=$3 o=$4 prefix=$2/opt/ucx-$version fabric=upstream-inst-$$-$1
    local rc=0 env_=()
    mkdir -p "$o" || return 1
    env_=(LD_LIBRARY_PATH="$prefix/lib" LD_PRELOAD="$emu/lib/libucx_mlx5_emu_preload.so"
          UCX_IB_EMU_FABRIC="$fabric" UCX_WARN_UNUSED_ENV_VARS=n)
    env "${env_[@]}" timeout 60 "$prefix/bin/ucx_info" -v >"$o/$name-ucx_info-v.txt" 2>&1 &&
    env "${env_[@]}" LD_DEBUG=files timeout 60 "$prefix/bin/ucx_info" -d \
        >"$o/$name-ucx_info-d.txt" 2>"$o/$name-ld-debug.txt" || {
        echo "$name: ucx_info of $prefix failed"; rc=1; }
    [ -e "/dev/shm/ucx-emu.$(id -u).$fabric" ] &&
        timeout 30 "$emu/bin/ucx_emu" -f "$fabric" destroy --force >/dev/null 2>&1
    rm -f "/dev/shm/ucx-emu.$(id -u).$fabric"
    [ $rc -eq 0 ] || return 1
    grep -oE 'calling init: /\S*/lib(ucs|uct|ucp|ucm)[^/ ]*\.so[.0-9]*' "$o/$name-ld-debug.txt" |
        sed 's/^calling init: //' | sort -u >"$o/$name-loaded.txt"
    # the emulator's own (its libucs-mlx5, in a scope of its own) aside
    if grep -v -e "^$root/" -e "^$emu/" "$o/$name-loaded.txt"; then
        echo "$name: the UCX libraries above come from outside $root"
        return 1
    fi
    grep -q "ucx/libuct_ib.so" "$o/$name-loaded.txt" ||
        { echo "$name: ucx_info did not load $prefix/lib/ucx/libuct_ib.so"; return 1; }
    grep -q "Transport: rc_mlx5" "$o/$name-ucx_info-d.txt" ||
        { echo "$name: ucx_info -d lists no rc_mlx5 on the emulated devices"; return 1; }
    echo "$name: $(wc -l <"$o/$name-loaded.txt") UCX libraries and modules, all from $root"
}

case ${1:-} in
fetch|unpack|make_patch|prepare_src|configure_stock|build_tree|install_tree|prepare_patched|check_install|\
prepare_release|configure_release|build_lib)
    "$@" ;;
*)
    echo "steps.sh: unknown step '${1:-}'" >&2
    exit 2 ;;
esac
