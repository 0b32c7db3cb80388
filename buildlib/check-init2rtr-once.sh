#!/bin/bash
# docs/architecture.md, section 4: one helper connects every DevX RC QP. So
# in the library
#  - the INIT2RTR command is laid out only by its builder (dv/qp_cmd.*), and
#  - the builder is called only by the connect helper (rc_mlx5_devx_connect.cc).
# The emulated device decodes the command and prm.h defines it: not callers.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1

sources() {
    grep -rnE "$1" src --include='*.cc' --include='*.h' |
        grep -vE '^src/(emu/|uct/ib/mlx5/dv/prm\.h:)'
}

rc=0
layout=$(sources 'UCT_MLX5_CMD_OP_INIT2RTR_QP|init2rtr_qp_in::')
layout_files=$(echo "$layout" | cut -d: -f1 | sort -u | tr '\n' ' ')
if [ "$layout_files" != "src/uct/ib/mlx5/dv/qp_cmd.cc src/uct/ib/mlx5/dv/qp_cmd.h " ]; then
    echo "the INIT2RTR layout is used outside dv/qp_cmd.*:"
    echo "$layout"
    rc=1
fi

callers=$(sources 'uct_ib_mlx5_build_init2rtr\(' | grep -vE '^src/uct/ib/mlx5/dv/qp_cmd\.(h|cc):')
caller_files=$(echo "$callers" | cut -d: -f1 | sort -u)
if [ "$caller_files" != "src/uct/ib/mlx5/rc/rc_mlx5_devx_connect.cc" ] ||
   [ "$(echo "$callers" | wc -l)" -ne 1 ]; then
    echo "uct_ib_mlx5_build_init2rtr() must have one caller, the connect helper:"
    echo "$callers"
    rc=1
fi

[ $rc -eq 0 ] && echo "OK: INIT2RTR is built in one place, called from $caller_files"
exit $rc
