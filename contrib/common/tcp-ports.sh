# TCP ports for the server/client pairs of the contrib scripts (sourced).
#
# A pair's port must be free, and below the kernel's ephemeral range: a
# client elsewhere on the machine whose local port is the chosen one makes
# the server's bind fail ("Couldn't listen to port").

read -r tcp_ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null ||
    tcp_ephemeral_low=32768
tcp_port_base=$(( tcp_ephemeral_low > 12000 ? 10000 : 1024 ))
tcp_port_span=$(( tcp_ephemeral_low - tcp_port_base - 1 ))
tcp_port=$(( tcp_port_base + $$ % tcp_port_span ))

# tcp_sockets STATE_RE PORT: a TCP socket whose state matches STATE_RE
# (hex, as /proc/net/tcp prints it) has PORT as its local port
tcp_sockets() {
    awk -v p="$(printf ':%04X' "$2")" -v s="$1" '$4 ~ s && $2 ~ p"$" {found = 1}
        END {exit !found}' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# tcp_listening PORT: a socket listens on PORT (any address)
tcp_listening() {
    tcp_sockets '^0A$' "$1"
}

# tcp_next_port: move $tcp_port to the next port no socket uses
tcp_next_port() {
    local i
    for ((i = 0; i < 1000; i++)); do
        tcp_port=$(( tcp_port_base + (tcp_port - tcp_port_base + 1) % tcp_port_span ))
        tcp_sockets . "$tcp_port" || return 0
    done
}
