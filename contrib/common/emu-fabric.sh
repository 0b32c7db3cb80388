# A private emulated fabric and the process groups run on it, for the
# contrib scripts that start servers and clients (sourced). The script sets
# emu (the ucx_emu tool), fabric (its name) and appends each process group
# it starts to pids; fabric_cleanup kills them, waits, and removes the
# fabric, on every path (trap fabric_cleanup EXIT).

pids=()
fabric_cleanup() {
    local p
    for p in "${pids[@]}"; do
        kill -KILL -- -"$p" 2>/dev/null
    done
    wait 2>/dev/null
    pids=()
    [ -e "/dev/shm/ucx-emu.$(id -u).$fabric" ] &&
        timeout 30 "$emu" -f "$fabric" destroy --force >/dev/null 2>&1
    rm -f "/dev/shm/ucx-emu.$(id -u).$fabric"
}
