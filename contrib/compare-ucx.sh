#!/bin/bash
# UCX 1.13.1 (Debian's libucx0, ucx-utils, libucx-dev) and this library side
# by side on the emulated mlx5 device and fabric, in one run: the
# instructions each spends in its own objects per endpoint connect and per
# ucx_perftest operation (am_lat, put_bw, am_bw, 8-byte short messages),
# counted with callgrind, and their ratio. A benchmark, not a test.
#
#   contrib/compare-ucx.sh PREFIX
#
# PREFIX is an installation of this tree (make install). UCX runs on it
# through LD_PRELOAD=PREFIX/lib/libucx_mlx5_emu_preload.so, ours with
# UCX_IB_GLUE=emulated; every process joins one private fabric as a host.
#
# How it counts (README, "Side by side with UCX 1.13.1"): each measurement
# is two callgrind runs that differ in one count, so setup cancels; only the
# library's own objects count (UCX: lib{ucs,uct,ucm,ucp}* and ucx/ of its
# libdir; ours: lib{ucs,uct}* and ucx/ of PREFIX/lib), never the emulator,
# the preload library, libc or the programs.
#   connect  contrib/compare-ucx/uct_connect_bench.c (public API only, built
#            against each library): N endpoint pairs of one rc_mlx5 iface
#            connected to each other, for two N
#   poll     the same program's uct_worker_progress with nothing to do, for
#            two counts: the cost of a progress call that finds nothing
#   perftest ucx_perftest server natively, client under callgrind, -w 0 and
#            two -n. Under valgrind the client's emulated NIC (a thread of
#            the client) runs only when the client's thread gives up
#            valgrind's lock, so the client polls empty CQs for most of the
#            run; each progress call is charged its idle cost (the poll row)
#            and the rest is the operation's: (I2 - I1 - (P2 - P1) * poll) /
#            (n2 - n1), I the library's instructions, P its progress calls.
#
# Environment: COMPARE_N1, COMPARE_N2 (perftest iterations, default 500 and
# 2500), COMPARE_TIMEOUT (seconds per program, default 900).
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(realpath "${1:?usage: compare-ucx.sh PREFIX}")
n1=${COMPARE_N1:-500}
n2=${COMPARE_N2:-2500}
limit=${COMPARE_TIMEOUT:-900}
pairs1=20   pairs2=120
polls1=1000 polls2=21000
dev=mlx5_0:1
tl=rc_mlx5

ucx_perftest=/usr/bin/ucx_perftest
our_perftest=$prefix/bin/ucx_perftest
ucx_emu=$prefix/bin/ucx_emu
preload=$prefix/lib/libucx_mlx5_emu_preload.so
fabric=compare-ucx-$$
port=$((20000 + $$ % 20000))
work=$(mktemp -d "${TMPDIR:-/tmp}/compare-ucx.XXXXXX")
pids=()

cleanup() {
    local pid

    for pid in "${pids[@]}"; do
        kill "$pid" 2>/dev/null
    done
    wait 2>/dev/null
    [ -x "$ucx_emu" ] && timeout 20 "$ucx_emu" -f "$fabric" destroy --force >/dev/null 2>&1
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

die() {
    echo "compare-ucx: $*" >&2
    exit 1
}

for f in "$ucx_perftest" "$our_perftest" "$ucx_emu" "$preload"; do
    [ -e "$f" ] || die "$f not found (ucx-utils, and an installation of this tree)"
done
for prog in valgrind cc ss; do
    command -v $prog >/dev/null || die "$prog not found"
done
[ -e /usr/include/uct/api/uct.h ] || die "UCX's headers not found (libucx-dev)"

ucx_libdir=$(dirname "$(realpath "$(ldd "$ucx_perftest" | awk '/libucs\.so/ {print $3}')")")
[ -d "$ucx_libdir" ] || die "cannot find the libucs ucx_perftest uses"

# The library's own objects, as callgrind names them (real paths)
declare -A objects=(
    [ucx]="^$ucx_libdir/(ucx/)?libuc[mpst][-_.]"
    [ours]="^$prefix/lib/(ucx/)?libuc[st][-_.]"
)
declare -A envs=(
    [ucx]="LD_PRELOAD=$preload UCX_RC_MLX5_TIMEOUT=10s"
    [ours]="UCX_IB_GLUE=emulated UCX_RC_TIMEOUT=10s"
)
declare -A perftests=([ucx]=$ucx_perftest [ours]=$our_perftest)
declare -A benches=([ucx]=$work/bench-ucx [ours]=$work/bench-ours)

export UCX_IB_EMU_FABRIC=$fabric

# run LIB CMD...: CMD with LIB's environment, bounded in time
run() {
    local lib=$1
    shift
    # shellcheck disable=SC2086
    timeout "$limit" env ${envs[$lib]} "$@"
}

# grind LIB TAG CMD...: CMD under callgrind; output in $work/TAG.out
grind() {
    local lib=$1 tag=$2
    shift 2
    run "$lib" valgrind --tool=callgrind --dump-instr=no \
        --callgrind-out-file="$work/cg.$tag" "$@" >"$work/$tag.out" 2>&1
}

# count LIB TAG EXE: "instructions progress-calls" of the run TAG, the
# progress calls those from EXE into the function named in $work/progress.LIB
count() {
    local lib=$1 tag=$2 exe=$3 key= dumps

    [ -e "$work/progress.$lib" ] && key=$(cat "$work/progress.$lib")
    # a program that dumps on its own (ours under callgrind) leaves parts
    dumps=$(compgen -G "$work/cg.$tag*")
    # shellcheck disable=SC2086
    awk -v exe="$(realpath "$exe")" -f "$top/contrib/compare-ucx/cg-objects.awk" \
        $dumps >"$work/$tag.costs"
    awk -v re="${objects[$lib]}" -v key="$key" '
        $1 == "total"  { total = $2 }
        $1 == "object" { all += $3; if ($2 ~ re) lib += $3 }
        $1 == "calls" && ($2 " " $3) == key { calls = $4 }
        END {
            if (total == 0 || all != total) exit 1
            printf "%.0f %.0f\n", lib, calls
        }' "$work/$tag.costs"
}

# per A B COUNT: (B - A) / COUNT
per() {
    awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f\n", (b - a) / n }'
}

build_benches() {
    local src=$top/contrib/compare-ucx/uct_connect_bench.c
    local flags="-std=c11 -O2 -Wall -Werror -pedantic"

    # shellcheck disable=SC2086
    cc $flags "$src" -o "${benches[ucx]}" -luct -lucs ||
        die "uct_connect_bench does not build against UCX"
    # shellcheck disable=SC2086
    cc $flags -I"$prefix/include" "$src" -o "${benches[ours]}" \
        -L"$prefix/lib" -Wl,-rpath,"$prefix/lib" -luct -lucs ||
        die "uct_connect_bench does not build against $prefix"
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

# perftest LIB TEST N: the client's run of N iterations under callgrind
perftest() {
    local lib=$1 test=$2 n=$3 tag=$1-$2-$3 bin=${perftests[$1]} server i

    port=$((port + 1))
    run "$lib" "$bin" -p $port >"$work/$tag.server" 2>&1 &
    server=$!
    pids+=("$server")
    for ((i = 0; i < 100; i++)); do
        [ -n "$(ss -Hltn "sport = :$port")" ] && break
        sleep 0.1
    done
    grind "$lib" "$tag" "$bin" localhost -p $port -t "$test" -x $tl -d $dev \
        -s 8 -n "$n" -w 0
    for ((i = 0; i < 100; i++)); do
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
    if ! grep -q '^Final:' "$work/$tag.out"; then
        echo "compare-ucx: $lib: ucx_perftest -t $test -n $n did not finish:" >&2
        grep -v '^==' "$work/$tag.out" | grep -v '^\[thread' | tail -8 >&2
        return 1
    fi
}

# measure LIB TEST: the TEST row of LIB
measure() {
    local lib=$1 test=$2 bin=${perftests[$1]} i1 p1 i2 p2

    perftest "$lib" "$test" "$n1" && perftest "$lib" "$test" "$n2" &&
    read -r i1 p1 < <(count "$lib" "$lib-$test-$n1" "$bin") &&
    read -r i2 p2 < <(count "$lib" "$lib-$test-$n2" "$bin") || return 1
    result[$lib:$test]=$(awk -v i1="$i1" -v i2="$i2" -v p1="$p1" -v p2="$p2" \
        -v e="${result[$lib:poll]}" -v n=$((n2 - n1)) \
        'BEGIN {
            r = (i2 - i1 - (p2 - p1) * e) / n
            charge = (p2 - p1) * e / n
            charge = (charge < 0) ? -charge : charge
            # the idle cost is not exact to the instruction (the async
            # thread, another idle path): past this, polling decides the row
            if (r <= 0 || charge > r) print "polling-bound"
            else printf "%.1f\n", r
        }')
    polls[$lib:$test]=$(per "$p1" "$p2" $((n2 - n1)))
}

declare -A result polls
rows="connect poll am_lat put_bw am_bw"
build_benches
for lib in ucx ours; do
    calibrate $lib || continue
    for test in am_lat put_bw am_bw; do
        measure $lib $test
    done
done

echo
echo "UCX 1.13.1 ($ucx_libdir) and ucx-mlx5 ($prefix), $tl on $dev of the"
echo "EMULATED mlx5 device and fabric; library instructions (callgrind, own objects)"
echo
{
    echo "work|UCX 1.13.1 instr/op|ours instr/op|ratio (UCX/ours)"
    for row in $rows; do
        u=${result[ucx:$row]:-failed} o=${result[ours:$row]:-failed}
        case $row in
            connect) name="connect (endpoint pair)" ;;
            poll)    name="progress, nothing to do" ;;
            *)       name="$row (8 B, short)" ;;
        esac
        ratio=$(awk -v u="$u" -v o="$o" 'BEGIN { if (u + 0 > 0 && o + 0 > 0) printf "%.2f", u / o; else print "-" }')
        echo "$name|$u|$o|$ratio"
    done
} | awk -F'|' '{ printf "%-26s %20s %16s %17s\n", $1, $2, $3, $4 }'
echo
echo "perftest rows: each progress call charged at the poll row's cost; progress"
echo "calls per operation (UCX / ours): am_lat ${polls[ucx:am_lat]:--} / ${polls[ours:am_lat]:--}," \
     "put_bw ${polls[ucx:put_bw]:--} / ${polls[ours:put_bw]:--}," \
     "am_bw ${polls[ucx:am_bw]:--} / ${polls[ours:am_bw]:--}; -n $n1 and $n2, -w 0"
echo "polling-bound: under valgrind the client's emulated NIC runs only when the"
echo "client yields valgrind's lock; UCX's perftest never does, so its idle polls"
echo "outweigh the operation beyond what the poll row's precision can take out"
