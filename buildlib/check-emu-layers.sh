#!/bin/bash
# The emulated NIC's layering (docs/architecture.md, section 7), by its
# #include lines; each broken rule prints the offending file:line.
#  - engine/ includes nothing of frontend/ (the engine never calls back into
#    an entry point);
#  - fabric/ includes nothing of engine/, firmware/ or frontend/ (the engine
#    calls the fabric, not the other way);
#  - firmware/ includes nothing of frontend/;
#  - api/ includes only api/, and model/'s headers only api/ and model/;
#  - nothing outside src/emu/ includes anything of it but emu/api/.
#
# Usage: check-emu-layers.sh [source root, default: the repository]
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root" || exit 2

if [ ! -d src/emu ]; then
    echo "check-emu-layers: no src/emu under $root" >&2
    exit 2
fi

rc=0

# includes FILES...: "file:line:<emu/role/...>" for every emulator include
includes() {
    grep -nHoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]emu/[a-z_]+/' "$@" 2>/dev/null |
        sed -E 's/#[[:space:]]*include[[:space:]]*[<"]//'
}

# forbid WHAT FILES-PATTERN ROLE-REGEX: no file under the pattern includes a
# role matching the regex
forbid() {
    local what=$1 dir=$2 roles=$3 found
    found=$(find $dir -type f \( -name '*.cc' -o -name '*.h' \) 2>/dev/null | sort |
            while read -r f; do includes "$f"; done | grep -E ":emu/($roles)/" || true)
    if [ -n "$found" ]; then
        echo "check-emu-layers: $what:"
        echo "$found" | sed 's/^/  /'
        rc=1
    fi
}

forbid "engine/ includes frontend/" src/emu/engine 'frontend'
forbid "fabric/ includes the engine, firmware or front-end" src/emu/fabric 'engine|firmware|frontend'
forbid "firmware/ includes frontend/" src/emu/firmware 'frontend'
forbid "api/ includes more than api/" src/emu/api 'model|firmware|engine|fabric|frontend'

model_headers=$(find src/emu/model -name '*.h' | sort)
found=$(includes $model_headers | grep -vE ':emu/(api|model)/' || true)
if [ -n "$found" ]; then
    echo "check-emu-layers: a model/ header includes more than api/ and model/:"
    echo "$found" | sed 's/^/  /'
    rc=1
fi

outside=$(find src test examples contrib -type f \( -name '*.c' -o -name '*.cc' -o -name '*.h' \) \
              -not -path 'src/emu/*' 2>/dev/null | sort)
found=$(includes $outside | grep -vE ':emu/api/' || true)
if [ -n "$found" ]; then
    echo "check-emu-layers: outside src/emu/, only emu/api/ may be included:"
    echo "$found" | sed 's/^/  /'
    rc=1
fi

if [ "$rc" -eq 0 ]; then
    echo "check-emu-layers: OK ($(find src/emu -name '*.cc' -o -name '*.h' | wc -l) emulator files, $(echo "$outside" | wc -l) outside)"
fi
exit "$rc"
