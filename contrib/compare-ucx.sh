#!/bin/bash
# UCX 1.13.1 (Debian's libucx0, libucx-dev) and this library side by side
# on the emulated mlx5 device, in one run: the instructions each spends in
# its own objects per endpoint connect and per operation of ucx_perftest's
# am_lat, put_bw and am_bw (8-byte short messages), counted with callgrind,
# and their ratio. A benchmark, not a test.
#
#   contrib/compare-ucx.sh PREFIX
#
# PREFIX is an installation of this tree (make install). UCX runs on it
# through LD_PRELOAD=PREFIX/lib/libucx_mlx5_emu_preload.so, ours with
# UCX_IB_GLUE=emulated.
#
# How it counts (README, "Side by side with UCX 1.13.1"): only the library's
# own objects count (UCX: lib{ucs,uct,ucm,ucp}* and ucx/ of its libdir; ours:
# lib{ucs,uct}* and ucx/ of PREFIX/lib), never the emulator, the preload
# library, libc or the programs; each number is the difference of two runs
# that differ in one count, so setup cancels. Both programs use the public
# API only and are built against each library.
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
prefix=$(realpath "${1:?usage: compare-ucx.sh PREFIX}")
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

declare -A envs=(
    [ucx]="LD_PRELOAD=$preload UCX_RC_MLX5_TIMEOUT=10s"
    [ours]="UCX_IB_GLUE=emulated UCX_RC_TIMEOUT=10s"
)
declare -A benches=([ucx]=$work/bench-ucx [ours]=$work/bench-ours)
declare -A opbenches=([ucx]=$work/opbench-ucx [ours]=$work/opbench-ours)

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

# count LIB TAG EXE: "instructions progress-calls other" of the run TAG, the
# progress calls those from EXE into the function named in $work/progress.LIB,
# other the instructions in objects neither LIB's nor EXE (libc, ...)
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
        $1 == "object" { all += $3; if ($2 ~ re) lib += $3; else if ($2 != exe) other += $3 }
        $1 == "calls" && ($2 " " $3) == key { calls = $4 }
        END {
            if (total == 0 || all != total) exit 1
            printf "%.0f %.0f %.0f\n", lib, calls, other
        }' "$work/$tag.costs"
}

# per A B COUNT: (B - A) / COUNT
per() {
    awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f\n", (b - a) / n }'
}

build_benches() {
    local flags="-std=c11 -O2 -Wall -Werror -pedantic" src lib
    declare -A srcs=([benches]=uct_connect_bench.c [opbenches]=uct_op_bench.c)

    for src in benches opbenches; do
        declare -n out=$src
        # shellcheck disable=SC2086
        cc $flags "$top/contrib/compare-ucx/${srcs[$src]}" -o "${out[ucx]}" \
            -luct -lucs || die "${srcs[$src]} does not build against UCX"
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

    read -r a _ < <(count "$lib" "$lib-base" "$bench") &&
    read -r b _ < <(count "$lib" "$lib-pairs" "$bench") &&
    read -r c _ < <(count "$lib" "$lib-polls" "$bench") || return 1
    result[$lib:connect]=$(per "$a" "$b" $((pairs2 - pairs1)))
    result[$lib:poll]=$(per "$a" "$c" $((polls2 - polls1)))
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
    read -r i1 _ o1 < <(count "$lib" "$lib-$test-$n1" "$bench") &&
    read -r i2 _ o2 < <(count "$lib" "$lib-$test-$n2" "$bench") || return 1
    result[$lib:$test]=$(per "$i1" "$i2" $((n2 - n1)))
    other[$lib:$test]=$(per "$o1" "$o2" $((n2 - n1)))
    calls[$lib:$test]=$(awk -v a="${progress[$n1]}" -v b="${progress[$n2]}" -v n=$((n2 - n1)) \
        'BEGIN { printf "%.2f", (b - a) / n }')
    empties[$lib:$test]=$((empty[$n1] + empty[$n2]))
    busies[$lib:$test]=$((busy[$n1] + busy[$n2]))
}

declare -A result other calls empties busies objects
rows="connect poll am_lat put_bw am_bw"
build_benches

ucx_libdir=$(dirname "$(realpath "$(ldd "${benches[ucx]}" | awk '/libucs\.so/ {print $3}')")")
[ -d "$ucx_libdir" ] || die "cannot find the libucs UCX's build of uct_connect_bench uses"
# The library's own objects, as callgrind names them (real paths)
objects=(
    [ucx]="^$ucx_libdir/(ucx/)?libuc[mpst][-_.]"
    [ours]="^$prefix/lib/(ucx/)?libuc[st][-_.]"
)

for lib in ucx ours; do
    calibrate $lib
    for test in am_lat put_bw am_bw; do
        opwork $lib $test
    done
done

echo
echo "UCX 1.13.1 ($ucx_libdir) and ucx-mlx5 ($prefix), $tl of the"
echo "EMULATED mlx5 device; library instructions (callgrind, own objects)"
echo
{
    echo "work|UCX 1.13.1 instr/op|ours instr/op|ratio (UCX/ours)"
    for row in $rows; do
        u=${result[ucx:$row]:-failed} o=${result[ours:$row]:-failed}
        case $row in
            connect) name="connect (endpoint pair)" ;;
            poll)    name="progress, nothing to do" ;;
            *)       name="$row work (8 B, short)" ;;
        esac
        ratio=$(awk -v u="$u" -v o="$o" 'BEGIN { if (u + 0 > 0 && o + 0 > 0) printf "%.2f", u / o; else print "-" }')
        echo "$name|$u|$o|$ratio"
    done
} | awk -F'|' '{ printf "%-26s %20s %16s %17s\n", $1, $2, $3, $4 }'
echo
echo "work rows: uct_op_bench, the operations of perftest's am_lat, put_bw and"
echo "am_bw, both sides counted, per message (am_lat: half a round trip), -n $n1"
echo "and $n2 (UCX / ours): progress calls per message; those that found nothing"
echo "(should be 0) and posts refused for resources, in both runs; instructions"
echo "per message in other objects (libc, ...), not counted above"
for test in am_lat put_bw am_bw; do
    printf '  %-7s progress %s / %s, empty %s / %s, busy %s / %s, other %s / %s\n' "$test" \
        "${calls[ucx:$test]:--}" "${calls[ours:$test]:--}" \
        "${empties[ucx:$test]:--}" "${empties[ours:$test]:--}" \
        "${busies[ucx:$test]:--}" "${busies[ours:$test]:--}" \
        "${other[ucx:$test]:--}" "${other[ours:$test]:--}"
done
