#!/bin/bash
# UCX 1.13.1 and this library side by side on the emulated mlx5 device, in
# one run: the instructions each spends in its own objects and libc per
# endpoint connect and per operation of ucx_perftest's am_lat, put_bw,
# am_bw, get_bw and add_lat (8 bytes), counted with callgrind, and their
# ratios. A benchmark, not a test.
#
#   contrib/compare-ucx.sh PREFIX [RELEASE_LIBDIR]
#
# PREFIX is an installation of this tree (make install). UCX 1.13.1 is
# Debian's (libucx0, libucx-dev: built with assertions and parameter checks)
# and, given RELEASE_LIBDIR, also the one upstream/build.sh builds from
# Debian's source with --disable-assertions --disable-params-check
# (UPSTREAM_ONLY=release: what a cluster builds for speed). UCX runs on the
# device through LD_PRELOAD=PREFIX/lib/libucx_mlx5_emu_preload.so, ours
# with UCX_IB_GLUE=emulated.
#
# How it counts (docs/performance.md): the library's own objects (UCX:
# lib{ucs,uct,ucm,ucp}* and ucx/ of its libdir; ours: lib{ucs,uct}* and ucx/
# of PREFIX/lib), the code of its API headers inlined into the program
# (UCX's worker progress dispatch; callgrind tells it by source file, from
# the program's debug information) and libc (UCX calls memcpy there where
# ours copies inline), never the emulator, the preload library or the
# program's own code; each number is
# the difference of two runs that differ in one count, so setup cancels.
# Both programs use the public API only and are built against each library.
#   connect  contrib/compare-ucx/uct_connect_bench.c: N endpoint pairs of
#            one rc_mlx5 iface connected to each other, for two N; every
#            process a host of one private fabric
#   poll     the same program's uct_worker_progress with nothing to do, for
#            two counts: the cost of a progress call that finds nothing
#   work     contrib/compare-ucx/uct_op_bench.c: perftest's operations
#            between two ports of one process (devices private to it), for
#            two operation counts, with callgrind collecting only the posting
#            calls and the progress calls made after a nap, which find the
#            completion or message (--collect-atstart=no); it reports the
#            progress calls that found nothing ("empty", should be 0)
#
# Environment: COMPARE_N1, COMPARE_N2 (operations, default 1000 and 3000),
# COMPARE_NAP (uct_op_bench -u, microseconds), COMPARE_TIMEOUT (seconds per
# program, default 900).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(realpath "${1:?usage: compare-ucx.sh PREFIX [RELEASE_LIBDIR]}")
release=${2:+$(realpath "$2")}
n1=${COMPARE_N1:-1000}
n2=${COMPARE_N2:-3000}
nap=${COMPARE_NAP:-}
limit=${COMPARE_TIMEOUT:-900}
pairs1=20   pairs2=120
polls1=1000 polls2=21000
dev=mlx5_0:1 peer=mlx5_1:1
tl=rc_mlx5

ucx_emu=$prefix/bin/ucx_emu
preload=$prefix/lib/libucx_mlx5_emu_preload.so
fabric=compare-ucx-$$
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-ucx.XXXXXX")

cleanup() {
    [ -x "$ucx_emu" ] && timeout 20 "$ucx_emu" -f "$fabric" destroy --force >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

die() {
    echo "compare-ucx: $*" >&2
    exit 1
}

for f in "$ucx_emu" "$preload"; do
    [ -e "$f" ] || die "$f not found (an installation of this tree)"
done
for prog in valgrind cc; do
    command -v $prog >/dev/null || die "$prog not found"
done
[ -e /usr/include/uct/api/uct.h ] || die "UCX's headers not found (libucx-dev)"
[ -e /usr/include/valgrind/callgrind.h ] || die "valgrind's headers not found (valgrind)"
(( n1 % 2 == 0 && n2 % 2 == 0 && n2 > n1 )) || die "COMPARE_N1, COMPARE_N2: even, N1 < N2"
if [ -n "$release" ]; then
    [ -e "$release/libuct.so" ] && [ -e "$release/../include/uct/api/uct.h" ] ||
        die "$release: not the libdir of an installed UCX (no libuct.so, ../include)"
fi

# the libraries compared: Debian's UCX, the release build if given, ours
libs="ucx${release:+ rel} ours"
declare -A envs=(
    [ucx]="LD_PRELOAD=$preload UCX_RC_MLX5_TIMEOUT=10s"
    [rel]="LD_PRELOAD=$preload UCX_RC_MLX5_TIMEOUT=10s"
    [ours]="UCX_IB_GLUE=emulated UCX_RC_TIMEOUT=10s"
)
declare -A names=([ucx]="UCX 1.13.1 (Debian)" [rel]="UCX 1.13.1 (release)"
                  [ours]=ucx-mlx5)
declare -A benches opbenches
for lib in $libs; do
    benches[$lib]=$work/bench-$lib
    opbenches[$lib]=$work/opbench-$lib
done

export UCX_IB_EMU_FABRIC=$fabric

# run LIB CMD...: CMD with LIB's environment, bounded in time
run() {
    local lib=$1
    shift
    # shellcheck disable=SC2086
    timeout "$limit" env ${envs[$lib]} "$@"
}

# grind LIB TAG [VALGRIND-OPTION...] CMD...: CMD under callgrind; output in
# $work/TAG.out
grind() {
    local lib=$1 tag=$2
    shift 2
    run "$lib" valgrind --tool=callgrind --dump-instr=no \
        --callgrind-out-file="$work/cg.$tag" "$@" >"$work/$tag.out" 2>&1
}

# count LIB TAG EXE: "instructions progress-calls other libc" of the run
# TAG: instructions in LIB's objects and of its API headers' code inlined
# into EXE, the progress calls those from
# EXE into the function named in $work/progress.LIB, other the instructions
# in objects neither LIB's nor libc nor EXE, libc libc's share
count() {
    local lib=$1 tag=$2 exe=$3 key='' dumps

    [ -e "$work/progress.$lib" ] && key=$(cat "$work/progress.$lib")
    # a program that dumps on its own leaves parts
    dumps=$(compgen -G "$work/cg.$tag*")
    # shellcheck disable=SC2086
    awk -v exe="$(realpath "$exe")" -f "$top/contrib/compare-ucx/cg-objects.awk" \
        $dumps >"$work/$tag.costs"
    awk -v re="${objects[$lib]}" -v key="$key" -v exe="$(realpath "$exe")" '
        $1 == "total"  { total = $2 }
        $1 == "object" {
            all += $3
            if ($2 ~ re) lib += $3
            else if ($2 ~ /\/libc\.so[.0-9]*$/) libc += $3
            else if ($2 != exe) other += $3
        }
        $1 == "calls" && ($2 " " $3) == key { calls = $4 }
        # the library API headers inline into the program (UCX: its worker
        # progress dispatch, uct_ep_* calls through the ops)
        $1 == "inline" && $2 ~ /\/include\/(ucs|uct)\// { lib += $3 }
        END {
            if (total == 0 || all != total) exit 1
            printf "%.0f %.0f %.0f %.0f\n", lib, calls, other, libc
        }' "$work/$tag.costs"
}

# per A B COUNT: (B - A) / COUNT
per() {
    awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f\n", (b - a) / n }'
}

build_benches() {
    local flags="-std=c11 -O2 -g -Wall -Werror -pedantic" src lib
    declare -A srcs=([benches]=uct_connect_bench.c [opbenches]=uct_op_bench.c)

    for src in benches opbenches; do
        declare -n out=$src
        # shellcheck disable=SC2086
        cc $flags "$top/contrib/compare-ucx/${srcs[$src]}" -o "${out[ucx]}" \
            -luct -lucs || die "${srcs[$src]} does not build against UCX"
        if [ -n "$release" ]; then
            # shellcheck disable=SC2086
            cc $flags -I"$release/../include" "$top/contrib/compare-ucx/${srcs[$src]}" \
                -o "${out[rel]}" -L"$release" -Wl,-rpath,"$release" \
                -luct -lucs || die "${srcs[$src]} does not build against $release"
        fi
        # shellcheck disable=SC2086
        cc $flags -I"$prefix/include" "$top/contrib/compare-ucx/${srcs[$src]}" \
            -o "${out[ours]}" -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" \
            -luct -lucs || die "${srcs[$src]} does not build against $prefix"
        unset -n out
    done
}

# calibrate LIB: connect and poll rows; names LIB's progress function
calibrate() {
    local lib=$1 bench=${benches[$1]} tag a b c

    for tag in base:$pairs1:$polls1 pairs:$pairs2:$polls1 polls:$pairs1:$polls2; do
        IFS=: read -r tag a b <<<"$tag"
        if ! grind "$lib" "$lib-$tag" "$bench" -d $dev -x $tl -n "$a" -k "$b" ||
           ! grep -q '^connected' "$work/$lib-$tag.out"; then
            echo "compare-ucx: $lib: uct_connect_bench -n $a -k $b failed:" >&2
            grep -v '^==' "$work/$lib-$tag.out" | head -20 >&2
            return 1
        fi
    done

    # the function the program calls once per uct_worker_progress
    awk -v d=$((polls2 - polls1)) '
        FNR == 1 { f++ }
        $1 == "calls" { if (f == 1) base[$2 " " $3] = $4; else if ($4 - base[$2 " " $3] == d) print $2, $3 }
        ' <(awk -v exe="$(realpath "$bench")" -f "$top/contrib/compare-ucx/cg-objects.awk" "$work/cg.$lib-base") \
        <(awk -v exe="$(realpath "$bench")" -f "$top/contrib/compare-ucx/cg-objects.awk" "$work/cg.$lib-polls") |
        awk -v re="${objects[$lib]}" '$1 ~ re' | head -1 >"$work/progress.$lib"
    [ -s "$work/progress.$lib" ] || { echo "compare-ucx: $lib: no progress function found" >&2; return 1; }

    # a connect's libc is mostly the emulated device's own (its queues'
    # memory, in the calling thread): the connect row counts the library's
    # objects only; the idle progress call counts libc as the work rows do
    local la lc
    read -r a _ _ la < <(count "$lib" "$lib-base" "$bench") &&
    read -r b _ < <(count "$lib" "$lib-pairs" "$bench") &&
    read -r c _ _ lc < <(count "$lib" "$lib-polls" "$bench") || return 1
    result[$lib:connect]=$(per "$a" "$b" $((pairs2 - pairs1)))
    result[$lib:poll]=$(per $((a + la)) $((c + lc)) $((polls2 - polls1)))
}

# opwork LIB TEST: the "TEST work" row of LIB, from uct_op_bench at -n n1, n2
opwork() {
    local lib=$1 test=$2 bench=${opbenches[$1]} n tag i1 i2 o1 o2
    local -A progress empty busy

    for n in $n1 $n2; do
        tag=$lib-$test-$n
        # shellcheck disable=SC2086
        if ! UCX_IB_EMU_FABRIC=none grind "$lib" "$tag" --collect-atstart=no \
                "$bench" -t "$test" -d $dev -D $peer -x $tl -n "$n" ${nap:+-u "$nap"} ||
           ! grep -q '^done' "$work/$tag.out"; then
            echo "compare-ucx: $lib: uct_op_bench -t $test -n $n failed:" >&2
            grep -v '^==' "$work/$tag.out" | tail -8 >&2
            return 1
        fi
        read -r _ _ _ _ _ progress["$n"] _ empty["$n"] _ busy["$n"] _ < <(grep '^done' "$work/$tag.out")
    done
    read -r i1 _ o1 c1 < <(count "$lib" "$lib-$test-$n1" "$bench") &&
    read -r i2 _ o2 c2 < <(count "$lib" "$lib-$test-$n2" "$bench") || return 1
    result[$lib:$test]=$(per $((i1 + c1)) $((i2 + c2)) $((n2 - n1)))
    other[$lib:$test]=$(per "$o1" "$o2" $((n2 - n1)))
    libcs[$lib:$test]=$(per "$c1" "$c2" $((n2 - n1)))
    calls[$lib:$test]=$(awk -v a="${progress[$n1]}" -v b="${progress[$n2]}" -v n=$((n2 - n1)) \
        'BEGIN { printf "%.2f", (b - a) / n }')
    empties[$lib:$test]=$((empty[$n1] + empty[$n2]))
    busies[$lib:$test]=$((busy[$n1] + busy[$n2]))
}

declare -A result other libcs calls empties busies objects
tests="am_lat put_bw am_bw get_bw add_lat"
rows="connect poll $tests"
build_benches

ucx_libdir=$(dirname "$(realpath "$(ldd "${benches[ucx]}" | awk '/libucs\.so/ {print $3}')")")
[ -d "$ucx_libdir" ] || die "cannot find the libucs UCX's build of uct_connect_bench uses"
# The library's own objects, as callgrind names them (real paths)
objects=(
    [ucx]="^$ucx_libdir/(ucx/)?libuc[mpst][-_.]"
    [rel]="^$release/(ucx/)?libuc[mpst][-_.]"
    [ours]="^$prefix/lib/(ucx/)?libuc[st][-_.]"
)

for lib in $libs; do
    calibrate $lib
    for test in $tests; do
        opwork $lib $test
    done
done

# fields ARRAY [TEST]: ARRAY[LIB:TEST] (ARRAY[LIB] without TEST) of each
# library, / separated
fields() {
    local key=$1 test=${2:-} lib sep='' out=''
    declare -n arr=$key
    for lib in $libs; do out+="$sep${arr[$lib${test:+:$test}]:--}"; sep=' / '; done
    echo "$out"
}

# ratio A B: A / B to two places, or "-"
ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'
}

echo
echo "UCX 1.13.1: Debian's ($ucx_libdir)${release:+ and without assertions and parameter checks ($release)};"
echo "ucx-mlx5: $prefix. $tl of the EMULATED mlx5 device; instructions in"
echo "each library's own objects and its API headers' inline code (callgrind)"
echo "per unit of work, and in libc for the progress and work rows"
echo
{
    printf 'work'
    for lib in $libs; do printf '|%s' "${names[$lib]}"; done
    printf '|ours/Debian'
    [ -n "$release" ] && printf '|ours/release'
    echo
    for row in $rows; do
        case $row in
            connect) name="connect (endpoint pair)" ;;
            poll)    name="progress, nothing to do" ;;
            *)       name="$row work (8 B)" ;;
        esac
        printf '%s' "$name"
        for lib in $libs; do printf '|%s' "${result[$lib:$row]:-failed}"; done
        printf '|%s' "$(ratio "${result[ours:$row]:-}" "${result[ucx:$row]:-}")"
        [ -n "$release" ] && printf '|%s' "$(ratio "${result[ours:$row]:-}" "${result[rel:$row]:-}")"
        echo
    done
} | awk -F'|' -v nl="$(wc -w <<<"$libs")" '{
    printf "%-24s", $1
    for (i = 2; i <= NF; i++) printf " %*s", (i <= nl + 1) ? 20 : 12, $i
    printf "\n" }'
echo
echo "ratios: ours / UCX, instructions (below 1: ours spends fewer)"
echo "work rows: uct_op_bench, the operations of perftest's tests, both sides"
echo "counted, per message (am_lat, add_lat: half a round trip), -n $n1 and $n2"
echo "($(fields names)):"
echo "progress calls per message; those that found nothing (should be 0) and"
echo "posts refused for resources, in both runs; instructions per message in"
echo "libc (counted above) and in other objects (not counted)"
for test in $tests; do
    printf '  %-7s progress %s, empty %s, busy %s, libc %s, other %s\n' "$test" \
        "$(fields calls "$test")" "$(fields empties "$test")" \
        "$(fields busies "$test")" "$(fields libcs "$test")" "$(fields other "$test")"
done
