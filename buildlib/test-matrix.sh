#!/bin/bash
# Build and run the gtest suite three ways, from the source tree:
#   plain     --enable-debug build; then the same binary again as "repeat",
#             REPEAT shuffled iterations in one process, so that a test which
#             leaves state behind (or needs an earlier test's) fails; and as
#             "hwpath", the library on its default glue (rdma-core's calls)
#             with the preload library standing in for the NIC
#   asan      --enable-debug --enable-asan build, LeakSanitizer on,
#             contrib/lsan.supp; then its preload library under
#             contrib/dropin-check.sh as "dropin-asan"
#   valgrind  the plain build's gtest under memcheck, full leak check,
#             contrib/valgrind.supp
#   tsan      --enable-debug --enable-tsan build: data races fail the leg
#             (contrib/tsan.supp, each entry with its proof)
# plus the source checks and, on a release build installed in a prefix of its
# own: install, cmake, dropin (contrib/dropin-check.sh: unmodified
# ibverbs-utils and UCX 1.13.1 on the preload library, Debian's build and
# one without assertions built from Debian's source), upstream
# (contrib/upstream-check.sh: UCX 1.13.1 built stock and with our change,
# UCX's gtest on both), compare (contrib/compare-ucx.sh, a benchmark that
# must run and print its table) and coexist. Ends
# with "N passed, N failed, N skipped" totalled over the legs; exits non-zero
# if anything failed.
#
# Environment: JOBS (make parallelism, default nproc), BUILD_ROOT (default
# <top>/build-matrix), GTEST_FILTER (passed to every leg), REPEAT (iterations
# of the repeat leg, default 30), REPEAT_SEED (its shuffle seed, 1..99999,
# default picked per run and printed, so that a failing order can be re-run).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
build_root=${BUILD_ROOT:-$top/build-matrix}
start=$(date +%s)
repeat=${REPEAT:-30}
repeat_seed=${REPEAT_SEED:-$(( start % 99999 + 1 ))}

total_passed=0
total_failed=0
total_skipped=0
summary=()

log() {
    echo "[matrix $(date +%H:%M:%S)] $*"
}

elapsed() {
    echo $(( $(date +%s) - $1 ))
}

# build NAME CONFIGURE_ARGS...
build() {
    local name=$1; shift
    local dir=$build_root/$name
    local t0=$(date +%s)

    log "$name: configure $*"
    rm -rf "$dir" && mkdir -p "$dir" || return 1
    if ! (cd "$dir" && "$top/configure" "$@" >configure.log 2>&1); then
        tail -30 "$dir/configure.log"
        return 1
    fi
    log "$name: build"
    if ! make -C "$dir" -j"$jobs" >"$dir/build.log" 2>&1 ||
       ! make -C "$dir" -j"$jobs" check TESTS= >>"$dir/build.log" 2>&1; then
        grep -E "error|Error" "$dir/build.log" | head -30
        return 1
    fi
    log "$name: built in $(elapsed $t0) s"
}

# record NAME LOG EXIT_CODE SECONDS: add a leg's counts to the totals
record() {
    local name=$1 logfile=$2 rc=$3 secs=$4
    local line passed=0 failed=0 skipped=0

    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$logfile" | tail -1)
    if [ -n "$line" ]; then
        read -r passed _ failed _ skipped _ <<<"$(echo "$line" | tr -d ',')"
    fi
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        # crashed, leaked or reported memory errors after the tests ran
        failed=1
        log "$name: exit code $rc with no failed test: see $logfile"
        grep -E "ERROR: LeakSanitizer|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|definitely lost|ERROR SUMMARY|watchdog|Segmentation|Aborted" \
            "$logfile" | head -20
        # the first sanitizer report whole, with the test that was running
        awk '/^\[ RUN      \]/ {test = $0}
             /^(WARNING: ThreadSanitizer|==[0-9]+==ERROR: (Address|Leak)Sanitizer)/ && !done {
                 print test; show = 1}
             show {print; if (++n >= 100 || /^SUMMARY: /) {show = 0; done = 1}}' "$logfile"
    fi
    if [ "$failed" -ne 0 ]; then
        grep -E '^\[  FAILED  \]' "$logfile" | sort -u | head -40
    fi

    total_passed=$((total_passed + passed))
    total_failed=$((total_failed + failed))
    total_skipped=$((total_skipped + skipped))
    summary+=("$(printf '%-9s %5d passed, %d failed, %d skipped  (%d s)' \
                 "$name" "$passed" "$failed" "$skipped" "$secs")")
    log "$name: $passed passed, $failed failed, $skipped skipped in $secs s"
}

# run_leg NAME BUILD_DIR [WRAPPER...]: run the gtest binary of BUILD_DIR
run_leg() {
    local name=$1 dir=$2; shift 2
    local logfile=$build_root/$name-gtest.log
    local t0=$(date +%s) rc

    log "$name: running gtest"
    (cd "$dir/test/gtest" &&
     "$dir/libtool" --mode=execute "$@" ./gtest ${GTEST_FILTER:+--gtest_filter=$GTEST_FILTER}) \
        >"$logfile" 2>&1
    rc=$?
    record "$name" "$logfile" "$rc" "$(elapsed $t0)"
}

# c_api_leg BUILD_DIR: install the build, then compile, link and run a C11
# program that sees only the installed headers, through pkg-config ucx-uct
c_api_leg() {
    local dir=$1 dest=$build_root/install-c11
    local prefix libdir

    rm -rf "$dest"
    prefix=$(sed -n 's/^prefix=//p' "$dir/ucx-uct.pc")
    libdir=$dest$(PKG_CONFIG_PATH=$dir pkg-config --variable=libdir ucx-uct)
    if make -C "$dir" install DESTDIR="$dest" >"$build_root/c11-install.log" 2>&1 &&
       PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$libdir/pkgconfig \
       cc -std=c11 -pedantic -Wall -Wextra -Werror \
          "$top/test/gtest/api/c11_headers.c" -o "$build_root/c11_headers" \
          $(PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$libdir/pkgconfig \
            pkg-config --cflags --libs ucx-uct) >>"$build_root/c11-install.log" 2>&1 &&
       LD_LIBRARY_PATH=$libdir "$build_root/c11_headers" >>"$build_root/c11-install.log" 2>&1; then
        total_passed=$((total_passed + 1))
        summary+=("$(printf '%-9s pass (installed headers, pkg-config ucx-uct, prefix %s)' c-api "$prefix")")
    else
        tail -20 "$build_root/c11-install.log"
        fail_leg c-api "C11 program against the installed tree failed"
    fi
}

# fail_leg NAME REASON: a leg that could not run counts as one failure
fail_leg() {
    total_failed=$((total_failed + 1))
    summary+=("$(printf '%-9s could not run: %s' "$1" "$2")")
    log "$1: could not run: $2"
}

# pass_leg NAME DETAIL: a leg that is one check and passed
pass_leg() {
    total_passed=$((total_passed + 1))
    summary+=("$(printf '%-9s pass (%s)' "$1" "$2")")
    log "$1: pass ($2)"
}

# check_fail NAME LOG REASON: a leg that is one check and failed
check_fail() {
    [ -f "$2" ] && tail -30 "$2"
    count_fail "$@"
}

count_fail() {
    total_failed=$((total_failed + 1))
    summary+=("$(printf '%-9s FAILED: %s (log %s)' "$1" "$3" "$2")")
    log "$1: FAILED: $3"
}

# dropin_fail NAME LOG WHAT: each failed check of a dropin-check.sh log with
# the output it showed (the programs' logs), which a tail would cut
dropin_fail() {
    awk '/^dropin: FAILED/ {show = 1; n = 0}
         /^dropin: (ok|SKIPPED)/ || /^[0-9]+ passed,/ {show = 0}
         show && n++ < 120' "$2"
    tail -1 "$2"
    count_fail "$@"
}

# install_leg BUILD_DIR: make install into the build's own prefix, then
# make installcheck (pkg-config modules; the installed example built from its
# installed source with -Wall -Werror -pedantic and run on the emulated device)
install_leg() {
    local dir=$1 logfile=$build_root/install.log

    if make -C "$dir" install >"$logfile" 2>&1 &&
       make -C "$dir" installcheck >>"$logfile" 2>&1; then
        pass_leg install "make install, installcheck: $(grep -c '^installcheck: ok:' "$logfile") checks"
    else
        grep '^installcheck: FAILED' "$logfile"
        check_fail install "$logfile" "make install or installcheck failed"
    fi
}

# cmake_project NAME PREFIX CMAKE_ARGS...: configure and build test/cmake
# against PREFIX into $build_root/cmake-NAME
cmake_project() {
    local name=$1 prefix=$2 dir=$build_root/cmake-$1; shift 2

    rm -rf "$dir"
    cmake -S "$top/test/cmake" -B "$dir" -DCMAKE_PREFIX_PATH="$prefix" "$@" &&
        cmake --build "$dir"
}

# cmake_leg PREFIX: a CMake project finds the installed package, links
# ucx::uct ucx::ucs, sees only the installed headers and runs; an unknown
# component and a newer version are refused; a moved copy of the tree works
cmake_leg() {
    local prefix=$1 logfile=$build_root/cmake.log moved=$build_root/moved-prefix
    local bin=$build_root/cmake-ok/ucx_cmake_test out headers
    local depfile=$build_root/cmake-ok/CMakeFiles/ucx_cmake_test.dir/ucx_cmake_test.c.o.d
    cmake_step_failed() { echo "FAILED: $*"; return 1; }

    {
        echo "== the installed tree, version 0.1"
        cmake_project ok "$prefix" -DUCX_TEST_VERSION=0.1 || cmake_step_failed "configure or build" || return
        out=$(UCX_IB_GLUE=emulated "$bin")
        echo "$out"
        grep -qx "status: success" <<<"$out" || cmake_step_failed "the program failed" || return
        grep -qx "module directory: $prefix/lib/ucx" <<<"$out" ||
            cmake_step_failed "libucs looks for modules elsewhere" || return
        # the compiler's record of the headers it read (CMake >= 3.20)
        [ -s "$depfile" ] || cmake_step_failed "no dependency file $depfile" || return
        headers=$(tr ' \\' '\n\n' <"$depfile" | grep -E '/(ucs|uct)/')
        [ -n "$headers" ] || cmake_step_failed "$depfile lists no ucs/ or uct/ header" || return
        ! grep -v "^$prefix/include/" <<<"$headers" ||
            cmake_step_failed "the headers above are not from $prefix/include" || return
        readelf -d "$bin" | grep -E 'NEEDED|RUNPATH'
        [ "$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(libuc[^]]*\)\]/\1/p' | sort | tr '\n' ' ')" == \
          "libucs-mlx5.so.0 libuct-mlx5.so.0 " ] || cmake_step_failed "NEEDED is not our two SONAMEs" || return

        echo "== an unknown component must be refused"
        ! cmake_project ucp "$prefix" "-DUCX_TEST_COMPONENTS=uct;ucp" >"$build_root/cmake-ucp.log" 2>&1 ||
            cmake_step_failed "COMPONENTS uct ucp accepted" || return
        cat "$build_root/cmake-ucp.log"
        tr -s ' \n' ' ' <"$build_root/cmake-ucp.log" |
            grep -q "component 'ucp' is not part of ucx-mlx5" || cmake_step_failed "not the expected reason" || return

        echo "== a newer version must be refused"
        ! cmake_project newer "$prefix" -DUCX_TEST_VERSION=1.13 \
                -DUCX_TEST_ONLY_PREFIX="$prefix" >"$build_root/cmake-newer.log" 2>&1 ||
            cmake_step_failed "version 1.13 accepted" || return
        cat "$build_root/cmake-newer.log"
        tr -s ' \n' ' ' <"$build_root/cmake-newer.log" |
            grep -q 'compatible with requested version "1.13"' || cmake_step_failed "not the expected reason" || return

        echo "== a moved copy of the installed tree"
        rm -rf "$moved" && cp -a "$prefix" "$moved" || cmake_step_failed "cannot copy $prefix" || return
        cmake_project moved "$moved" -DUCX_TEST_ONLY_PREFIX="$moved" || cmake_step_failed "configure or build" || return
        out=$("$build_root/cmake-moved/ucx_cmake_test")
        echo "$out"
        grep -qx "status: success" <<<"$out" || cmake_step_failed "the program failed" || return
        grep -qx "module directory: $moved/lib/ucx" <<<"$out" ||
            cmake_step_failed "the moved tree's libucs looks for modules elsewhere" || return
    } >"$logfile" 2>&1
}

# coexist_leg PREFIX BUILD_DIR...: nothing of ours is, needs or loads a
# distribution's UCX library (libucs.so.0, libuct.so.0, libucp.so.0,
# libucm.so.0), even with one installed, and no build compiled against a
# distribution's UCX headers (/usr/include/{ucs,uct,ucp,ucm})
coexist_leg() {
    local prefix=$1; shift
    local logfile=$build_root/coexist.log
    local ucx_sonames='^(libucs|libuct|libucp|libucm|libucs_signal)\.so\.[0-9]+$'
    local system_ucx elf files=() bad=0 deps

    system_ucx=$(ldconfig -p | awk '$1 ~ /^libuc[mpst]\.so\.0$/ {print $NF}' | sort | tr '\n' ' ')
    {
        echo "distribution UCX on the loader path: ${system_ucx:-none}"

        # every ELF file installed, and the programs built against the tree
        while IFS= read -r elf; do
            files+=("$elf")
        done < <(find "$prefix" "$build_root/install-build/examples/installcheck" \
                      "$build_root/cmake-ok" -type f \( -perm -u+x -o -name '*.so*' \) |
                 while read -r f; do [ "$(head -c 4 "$f")" == $'\x7fELF' ] && echo "$f"; done)
        echo "== readelf -d and ldd of ${#files[@]} ELF files"
        for elf in "${files[@]}"; do
            local soname needed resolved
            soname=$(readelf -d "$elf" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
            needed=$(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
            echo "$elf: SONAME ${soname:--} NEEDED $needed"
            if grep -Eq "$ucx_sonames" <<<"$soname"; then
                echo "  has UCX's SONAME $soname"; bad=1
            fi
            for lib in $needed; do
                if grep -Eq "$ucx_sonames" <<<"$lib"; then
                    echo "  needs UCX's $lib"; bad=1
                fi
            done
            resolved=$(ldd "$elf" 2>&1 | awk '/=>/ && $1 ~ /^libuc/ {print $1, $3}')
            while read -r lib path; do
                [ -n "$lib" ] || continue
                case $path in
                "$prefix"/*) ;;
                *) echo "  $lib resolves to $path, not under $prefix"; bad=1 ;;
                esac
            done <<<"$resolved"
        done

        # what the programs load at run time, transport and device modules
        # included (dlopen, which ldd cannot see)
        echo "== LD_DEBUG=files: the objects each program initializes"
        # (the CMake program lists components only: no device is opened)
        for run in "$prefix/bin/ucx_info -d" \
                   "$build_root/install-build/examples/installcheck/uct_devices" \
                   "$build_root/cmake-ok/ucx_cmake_test"; do
            local loaded expected=("$prefix/lib/ucx/libuct_ib.so")
            [[ $run == *cmake* ]] || expected+=("$prefix/lib/libucx_mlx5_emu.so")
            loaded=$(UCX_IB_GLUE=emulated LD_DEBUG=files $run 2>&1 >/dev/null |
                     sed -n 's/.*calling init: //p' | grep '/libuc' | sort -u)
            echo "$run:"
            sed 's/^/  /' <<<"$loaded"
            for lib in "${expected[@]}"; do
                if ! grep -qx "$lib" <<<"$loaded"; then
                    echo "  did not load $lib"; bad=1
                fi
            done
            if grep -v "^$prefix/" <<<"$loaded"; then
                echo "  loaded the above from outside $prefix"; bad=1
            fi
        done

        # the compiler's own record of every header each build read
        for dir in "$@"; do
            [ -f "$dir/config.status" ] || continue
            deps=$(find "$dir" -name '*.Po' -o -name '*.Plo' | wc -l)
            echo "== $dir: headers in $deps dependency files"
            if [ "$deps" -eq 0 ]; then
                echo "  no dependency files"; bad=1
            elif find "$dir" \( -name '*.Po' -o -name '*.Plo' \) -print0 |
                     xargs -0 grep -lE '/usr/(local/)?include/(ucs|uct|ucp|ucm)/'; then
                echo "  the files above list a system UCX header"; bad=1
            fi
        done
        [ "$bad" -eq 0 ]
    } >"$logfile" 2>&1
}

cd "$top" || exit 1
if [ ! -x configure ] || [ configure.ac -nt configure ]; then
    log "autogen"
    ./autogen.sh >/dev/null 2>&1 || { echo "autogen.sh failed"; exit 1; }
fi
mkdir -p "$build_root"

# Source checks count as one test each.
for check in buildlib/check-*.sh; do
    [ -x "$check" ] || continue
    name=$(basename "$check" .sh)
    if "$check" >"$build_root/$name.log" 2>&1; then
        total_passed=$((total_passed + 1))
        summary+=("$(printf '%-9s pass' "$name")")
    else
        cat "$build_root/$name.log"
        fail_leg "$name" "source check failed"
    fi
done

if build plain --enable-debug; then
    run_leg plain "$build_root/plain"
    # Every test must leave the process as it found it: run them all again
    # and again in one process, in a new order each iteration. The tests
    # that take seconds (message streams, the source check's self-test, the
    # fabric and ucx_perftest tests, whose state lives in processes they
    # start and reap) ran in the plain leg; the repeat is about state, not
    # volume.
    log "repeat: $repeat iterations, shuffled, seed $repeat_seed"
    repeat_filter=${GTEST_FILTER:-*}
    if [[ $repeat_filter != *-* ]]; then
        repeat_filter+="-*.stream_both_ways_*:test_emu_glue.rdma_core_call_check:*test_fabric*:*test_perftest*"
    fi
    GTEST_FILTER=$repeat_filter GTEST_REPEAT=$repeat GTEST_SHUFFLE=1 \
    GTEST_RANDOM_SEED=$repeat_seed \
        run_leg repeat "$build_root/plain"
    summary[${#summary[@]}-1]+="  seed $repeat_seed"
    # The library on its default glue (rdma-core's calls, as on a cluster),
    # the preload standing in for the NIC, every process it starts a host
    # of the fabric the same way (docs/testing.md, "hwpath")
    UCX_GTEST_GLUE=rdma-core \
    LD_PRELOAD=$build_root/plain/src/emu/frontend/preload/.libs/libucx_mlx5_emu_preload.so \
        run_leg hwpath "$build_root/plain"
    c_api_leg "$build_root/plain"
    run_leg valgrind "$build_root/plain" \
        valgrind --quiet --leak-check=full --show-leak-kinds=definite,indirect,possible \
                 --errors-for-leak-kinds=definite,indirect,possible \
                 --error-exitcode=1 --num-callers=30 \
                 --suppressions="$top/contrib/valgrind.supp"
else
    fail_leg plain "build failed"
    fail_leg valgrind "build failed"
fi

if build asan --enable-debug --enable-asan; then
    ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=1" \
    LSAN_OPTIONS="suppressions=$top/contrib/lsan.supp:print_suppressions=0" \
        run_leg asan "$build_root/asan"
    # the drop-in front-end of this build under ibverbs-utils and UCX 1.13.1
    dropin_asan_log=$build_root/dropin-asan.log
    LSAN_OPTIONS="suppressions=$top/contrib/lsan.supp:print_suppressions=0" \
    DROPIN_ASAN=$build_root/asan \
        "$top/contrib/dropin-check.sh" "$build_root/asan/src/emu/.libs" \
        >"$dropin_asan_log" 2>&1
    case $? in
    0)  pass_leg dropin-asan "the preload library under ASan+LSan: $(grep -c '^dropin: ok:' "$dropin_asan_log") checks, $(grep -c '^dropin: SKIPPED:' "$dropin_asan_log") skipped" ;;
    77) total_skipped=$((total_skipped + 1))
        summary+=("$(printf '%-9s skipped: %s' dropin-asan "$(sed -n 's/^dropin: SKIPPED: //p' "$dropin_asan_log")")")
        log "dropin-asan: skipped" ;;
    *)  dropin_fail dropin-asan "$dropin_asan_log" "the preload library under ASan+LSan" ;;
    esac
else
    fail_leg asan "build failed"
    fail_leg dropin-asan "build failed"
fi

if build tsan --enable-debug --enable-tsan; then
    TSAN_OPTIONS="halt_on_error=0:exitcode=66:second_deadlock_stack=1:suppressions=$top/contrib/tsan.supp" \
        run_leg tsan "$build_root/tsan"
else
    fail_leg tsan "build failed"
fi

# The installed tree: a release build in a prefix of its own, used in place
if build install-build --prefix="$build_root/install-build/prefix"; then
    prefix=$build_root/install-build/prefix
    install_leg "$build_root/install-build"
    if cmake_leg "$prefix"; then
        pass_leg cmake "find_package(UCX COMPONENTS uct ucs), ucx::uct ucx::ucs, refusals, moved tree"
    else
        check_fail cmake "$build_root/cmake.log" "CMake project against the installed tree"
    fi
    # UCX 1.13.1 without assertions and parameter checks, from Debian's
    # source package (upstream/build.sh, UPSTREAM_ONLY=release; cached by
    # the tarball's and steps.sh's hashes): the dropin leg runs it
    release_log=$build_root/release.log
    t0=$(date +%s)
    log "release: UCX 1.13.1 without assertions (upstream/build.sh, UPSTREAM_ONLY=release)"
    if UPSTREAM_ONLY=release UPSTREAM_EMU_PREFIX=$prefix \
            timeout --kill-after=60 5400 setsid "$top/upstream/build.sh" \
            "$build_root/release" </dev/null >"$release_log" 2>&1; then
        release_libdir=$(cat "$build_root/release/release-libdir.txt")
    else
        release_libdir=
        check_fail release "$release_log" "UCX 1.13.1 without assertions did not build"
    fi
    log "release: $(elapsed $t0) s"
    # unmodified ibverbs-utils and Debian's UCX 1.13.1 on the installed
    # preload library, the stale-MAC scenario beside this library
    dropin_log=$build_root/dropin.log
    DROPIN_UCX_RELEASE=$release_libdir "$top/contrib/dropin-check.sh" "$prefix/lib" \
        >"$dropin_log" 2>&1
    case $? in
    0)  pass_leg dropin "ibverbs-utils and UCX 1.13.1 on the preload library: $(grep -c '^dropin: ok:' "$dropin_log") checks, $(grep -c '^dropin: SKIPPED:' "$dropin_log") skipped" ;;
    77) total_skipped=$((total_skipped + 1))
        summary+=("$(printf '%-9s skipped: %s' dropin "$(sed -n 's/^dropin: SKIPPED: //p' "$dropin_log")")")
        log "dropin: skipped" ;;
    *)  dropin_fail dropin "$dropin_log" "ibverbs-utils and UCX 1.13.1 on the preload library" ;;
    esac
    # a benchmark, not a test: contrib/compare-ucx.sh must build and print
    # its table (instructions per operation, UCX 1.13.1, Debian's and the
    # release build, beside this library); its ratios are printed, never
    # asserted
    compare_log=$build_root/compare-ucx.log
    if timeout 1500 "$top/contrib/compare-ucx.sh" "$prefix" $release_libdir \
            >"$compare_log" 2>&1 &&
       grep -q '^add_lat work' "$compare_log"; then
        sed -n '/^work  /,/^add_lat work/p' "$compare_log"
        pass_leg compare "benchmark ran: $(awk '/^(connect \(|progress, nothing|[a-z_]+ work)/ {
            sub(/,$/, "", $1); printf "%s%s %s", sep, $1, $NF; sep = ", "}' "$compare_log") (ours/UCX${release_libdir:+ without assertions})"
    else
        check_fail compare "$compare_log" "contrib/compare-ucx.sh did not run to its table"
    fi
    # UCX 1.13.1 itself, stock and with our change (upstream/build.sh): the
    # patch, and UCX's gtest on both through the installed preload library
    upstream_log=$build_root/upstream.log
    t0=$(date +%s)
    log "upstream: UCX 1.13.1 stock and patched (upstream/build.sh)"
    if "$top/contrib/upstream-check.sh" "$prefix" "$build_root/upstream" \
            >"$upstream_log" 2>&1; then
        pass_leg upstream "$(sed -n 's/^upstream: ok: //p' "$upstream_log")"
    else
        grep -E "^upstream|gtest_run.py|FAILED" "$upstream_log" | tail -40
        count_fail upstream "$upstream_log" "UCX 1.13.1 stock and patched: $(sed -n 's/^upstream: FAILED: //p' "$upstream_log" | head -1)"
    fi
    log "upstream: $(elapsed $t0) s"
    if coexist_leg "$prefix" "$build_root"/*/; then
        system_ucx=$(ldconfig -p | awk '$1 ~ /^libuc[pst]\.so\.0$/ {print $1}' | sort -u | tr '\n' ' ')
        pass_leg coexist "only our libraries and headers, with ${system_ucx:-no distribution UCX (libucx0 libucx-dev) }installed"
    else
        check_fail coexist "$build_root/coexist.log" "a distribution UCX library or header in use"
    fi
else
    fail_leg install "build failed"
    fail_leg cmake "build failed"
    fail_leg coexist "build failed"
    fail_leg dropin "build failed"
    fail_leg compare "build failed"
    fail_leg upstream "build failed"
fi

echo
echo "Test matrix ($(elapsed $start) s wall time):"
for line in "${summary[@]}"; do
    echo "  $line"
done
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ "$total_failed" -eq 0 ]
