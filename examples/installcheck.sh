#!/bin/bash
# "make installcheck": the installed tree as a user sees it.
#  - the pkg-config modules: versions, whose they are, their requirements,
#    flags, and the transport module they point to;
#  - each installed example, built from its installed source with the
#    installed headers only (C11, -Wall -Wextra -Werror -pedantic, flags from
#    pkg-config), run on the emulated mlx5 device, and its output checked.
#
#   installcheck.sh NAME=VALUE...   (see examples/Makefile.am)
set -euo pipefail

for arg in "$@"; do
    case $arg in
    destdir=*|work=*|cc=*|version=*|package=*|bindir=*|libdir=*|includedir=*|\
    pkgconfigdir=*|moduledir=*|examplesdir=*)
        declare "${arg%%=*}=${arg#*=}" ;;
    *)
        echo "installcheck: unknown argument $arg" >&2
        exit 2 ;;
    esac
done

if [ -n "$destdir" ]; then
    echo "installcheck: runs the installed programs in place; install without DESTDIR" >&2
    exit 2
fi

failures=0
pass() { echo "installcheck: ok: $*"; }
fail() { echo "installcheck: FAILED: $*" >&2; failures=$((failures + 1)); }
# expect WHAT EXPECTED ACTUAL
expect() {
    if [ "$2" == "$3" ]; then
        pass "$1: $3"
    else
        fail "$1: expected '$2', got '$3'"
    fi
}

rm -rf "$work" && mkdir -p "$work"
# Our modules first; the default path may hold a distribution's UCX modules
export PKG_CONFIG_PATH=$pkgconfigdir
pc() { pkg-config "$@"; }

# ---- pkg-config modules
for module in ucx-ucs ucx-uct ucx-ib; do
    expect "$module version" "$version" "$(pc --modversion $module)"
    expect "$module package" "$package" "$(pc --variable=package $module)"
    expect "$module file" "$pkgconfigdir/$module.pc" \
        "$(pc --variable=pcfiledir $module)/$module.pc"
done
expect "ucx-uct requires" "ucx-ucs = $version" "$(pc --print-requires ucx-uct)"
expect "ucx-ib requires" "ucx-uct = $version" "$(pc --print-requires ucx-ib)"
expect "ucx-ucs libs" "-L$libdir -lucs" "$(echo $(pc --libs ucx-ucs))"
expect "ucx-ib libs" "-L$libdir -luct -lucs" "$(echo $(pc --libs ucx-ib))"
expect "ucx-ib cflags" "-I$includedir" "$(echo $(pc --cflags ucx-ib))"
if [ -e "$pkgconfigdir/ucx.pc" ]; then
    fail "$pkgconfigdir/ucx.pc installed: in UCX that module is libucp, which this tree does not ship"
else
    pass "no ucx.pc (UCX's libucp module) installed"
fi
module_dir=$(pc --variable=moduledir ucx-ib)
expect "ucx-ib moduledir" "$moduledir" "$module_dir"
if [ -f "$module_dir/libuct_ib.so" ]; then
    pass "transport module $module_dir/libuct_ib.so"
else
    fail "no transport module $module_dir/libuct_ib.so"
fi

# ---- examples: build from the installed sources
cflags=$(echo $(pc --cflags ucx-ib))
libs=$(echo $(pc --libs ucx-ib))
strict="-std=c11 -pedantic -Wall -Wextra -Werror"

# headers_from SOURCE: every ucs/ and uct/ header SOURCE includes must be
# an installed one (a distribution's UCX has the same names in /usr/include)
headers_from() {
    local deps stray

    deps=$($cc -M $strict $cflags "$1" | tr ' \\' '\n\n' | grep -E '/(ucs|uct)/' || true)
    stray=$(echo "$deps" | grep -v "^$includedir/" || true)
    if [ -z "$deps" ]; then
        fail "$(basename "$1"): cc -M lists no ucs/ or uct/ header"
    elif [ -n "$stray" ]; then
        fail "$(basename "$1"): headers from outside $includedir: $(echo $stray)"
    else
        pass "$(basename "$1"): all $(echo "$deps" | wc -l) ucs/ and uct/ headers from $includedir"
    fi
}

build_example() {
    local name=$1 src=$examplesdir/$1.c

    if [ ! -f "$src" ]; then
        fail "$src not installed"
        return 1
    fi
    headers_from "$src"
    # -rpath: the program finds our libraries without any environment
    if $cc $strict "$src" -o "$work/$name" $cflags $libs -Wl,-rpath,"$libdir" \
            >"$work/$name.build.log" 2>&1; then
        pass "$name built: $cc $strict $name.c $cflags $libs"
    else
        cat "$work/$name.build.log" >&2
        fail "$name does not build against the installed tree"
        return 1
    fi
}

# ---- uct_devices
# triples: "md transport device" lines, sorted
devices_triples() {
    awk '/^memory domain /{md = $3; sub(":$", "", md); next}
         /^    /{print md, $1, $2}' | sort
}
info_triples() {
    awk '/^# Memory domain: /{md = $4; next}
         /^#   Device: /{dev = $3; next}
         /^#      Transport: /{print md, $3, dev}' | sort
}

if build_example uct_devices; then
    run=$work/uct_devices
    if UCX_IB_GLUE=emulated "$run" >"$work/uct_devices.out" 2>"$work/uct_devices.err"; then
        pass "UCX_IB_GLUE=emulated uct_devices exits 0"
    else
        fail "UCX_IB_GLUE=emulated uct_devices exits $?: $(cat "$work/uct_devices.err")"
    fi
    if [ -s "$work/uct_devices.err" ]; then
        fail "uct_devices wrote to stderr: $(cat "$work/uct_devices.err")"
    fi
    sed 's/^/    | /' "$work/uct_devices.out"

    got=$(devices_triples <"$work/uct_devices.out")
    count=$(grep -c . <<<"$got" || true)
    want=$(UCX_IB_GLUE=emulated "$bindir/ucx_info" -d | info_triples)
    if [ -z "$want" ]; then
        fail "installed ucx_info -d lists no transport on the emulated device"
    elif [ "$got" == "$want" ]; then
        pass "uct_devices lists the $count (memory domain, transport, device) of ucx_info -d"
    else
        fail "uct_devices and ucx_info -d differ:
$(diff <(echo "$want") <(echo "$got") | sed 's/^/    /')"
    fi
    if echo "$got" | grep -qx "mlx5_0 rc_mlx5 mlx5_0:1"; then
        pass "uct_devices lists rc_mlx5 on mlx5_0:1"
    else
        fail "uct_devices does not list rc_mlx5 on mlx5_0:1"
    fi
    expect "uct_devices summary" \
        "component ib: $count transports in all" \
        "$(grep '^component ib: .* in all$' "$work/uct_devices.out")"

    # Nothing found: exit status 1 and a message saying so
    UCX_IB_GLUE=emulated UCX_NET_DEVICES=mlx5_9:1 "$run" >"$work/none.out" 2>"$work/none.err" &&
        rc=0 || rc=$?
    expect "uct_devices exit status with no device allowed" 1 "$rc"
    expect "uct_devices message with no device allowed" \
        "component ib: no transport found" "$(tail -1 "$work/none.err")"
    "$run" no_such_component >"$work/nocomp.out" 2>"$work/nocomp.err" && rc=0 || rc=$?
    expect "uct_devices exit status for an unknown component" 1 "$rc"
fi

# ---- ucx_info: the settings explain themselves
info=$bindir/ucx_info
fabric=installcheck-info-$$
UCX_IB_GLUE=emulated UCX_IB_EMU_FABRIC=$fabric UCX_IB_EMU_HOST=host0 \
    UCX_IB_EMU_HOSTS=2 timeout 60 "$info" -d >"$work/info-emu.out" 2>"$work/info-emu.err" &&
    rc=0 || rc=$?
expect "ucx_info -d exit status on an emulated fabric" 0 "$rc"
expect "ucx_info -d 'unused' warnings for the emulator's variables" 0 \
    "$(grep -c 'unused environment variable' "$work/info-emu.err" || true)"
UCX_IB_GLUE=emulated UCX_RC_TX_QUEUE_LEN=abc timeout 60 "$info" -d \
    >/dev/null 2>"$work/info-knob.err" || true
expect "ucx_info -d lines for one bad knob" 1 \
    "$(grep -c "invalid value of UCX_RC_TX_QUEUE_LEN: 'abc'" "$work/info-knob.err" || true)"
UCX_IB_GLUE=emulated UCX_NET_DEVICES=nonexistent:1 timeout 60 "$info" -d \
    >/dev/null 2>"$work/info-none.err" && rc=0 || rc=$?
expect "ucx_info -d exit status when no interface opens" 1 "$rc"
expect "ucx_info -d lines naming UCX_NET_DEVICES=nonexistent:1" 1 \
    "$(grep -c 'UCX_NET_DEVICES=nonexistent:1: no device' "$work/info-none.err" || true)"

# ---- uct_hello: two processes on an emulated fabric of their own, the
# server's MAC moved by the installed ucx_emu while greetings flow
if build_example uct_hello; then
    run=$work/uct_hello
    fabric=installcheck-$$
    port=$(( 20000 + $$ % 20000 ))
    export UCX_IB_GLUE=emulated UCX_IB_EMU_FABRIC=$fabric UCX_RC_TIMEOUT=100ms
    "$bindir/ucx_emu" -f "$fabric" create -n 2 >/dev/null
    UCX_IB_EMU_HOST=host0 timeout 120 "$run" -p "$port" \
        >"$work/hello-server.out" 2>&1 &
    server=$!
    sleep 0.5
    UCX_IB_EMU_HOST=host1 timeout 120 "$run" -p "$port" -n 60 -i 20000 localhost \
        >"$work/hello-client.out" 2>&1 &
    client=$!
    # the server's port moves (a VF re-created with a new MAC) mid-stream
    for _ in $(seq 100); do
        grep -q 'greeting 20 echoed' "$work/hello-client.out" && break
        sleep 0.1
    done
    "$bindir/ucx_emu" -f "$fabric" mac host0 mlx5_0 02:c9:aa:00:00:01 >/dev/null
    wait $client && rc=0 || rc=$?
    wait $server || true
    "$bindir/ucx_emu" -f "$fabric" destroy --force >/dev/null 2>&1 || true
    unset UCX_IB_GLUE UCX_IB_EMU_FABRIC UCX_RC_TIMEOUT
    sed 's/^/    | /' "$work/hello-client.out"
    expect "uct_hello client exit status" 0 "$rc"
    expect "uct_hello summary" \
        "client: 60 greetings echoed, 1 endpoint failure(s), 1 reconnect(s)" \
        "$(grep '^client: [0-9]* greetings echoed' "$work/hello-client.out")"
    expect "uct_hello failure" "endpoint timeout" \
        "$(sed -n 's/^client: greeting [0-9]* failed after [0-9.]* s: \(.*\); reconnecting$/\1/p' \
           "$work/hello-client.out")"
    if [ -e "/dev/shm/ucx-emu.$(id -u).$fabric" ]; then
        fail "uct_hello left /dev/shm/ucx-emu.$(id -u).$fabric behind"
    fi
fi

if [ "$failures" -ne 0 ]; then
    echo "installcheck: $failures check(s) failed" >&2
    exit 1
fi
echo "installcheck: all checks passed"
