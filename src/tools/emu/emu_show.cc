/*
 * ucx_emu show (emu_show.h).
 */
#include "emu_show.h"
#include "emu_args.h"

#include <algorithm>
#include <string>
#include <vector>


namespace ucx_emu {

namespace {

/* Columns padded to their widest cell; numbers aligned right */
class table {
public:
    table(std::vector<std::string> header, std::vector<bool> right) :
        m_header(std::move(header)), m_right(std::move(right))
    {
    }

    void add(std::vector<std::string> row)
    {
        m_rows.push_back(std::move(row));
    }

    void print(FILE *out, const char *indent) const
    {
        std::vector<size_t> width(m_header.size());

        for (size_t c = 0; c < m_header.size(); ++c) {
            width[c] = m_header[c].size();
            for (const auto &row : m_rows) {
                width[c] = std::max(width[c], row[c].size());
            }
        }

        print_row(out, indent, m_header, width);
        for (const auto &row : m_rows) {
            print_row(out, indent, row, width);
        }
    }

private:
    void print_row(FILE *out, const char *indent,
                   const std::vector<std::string> &row,
                   const std::vector<size_t> &width) const
    {
        std::string line = indent;

        for (size_t c = 0; c < row.size(); ++c) {
            std::string pad(width[c] - row[c].size(), ' ');

            line += (c > 0) ? "  " : "";
            line += m_right[c] ? (pad + row[c]) : (row[c] + pad);
        }
        line.erase(line.find_last_not_of(' ') + 1);
        fprintf(out, "%s\n", line.c_str());
    }

    std::vector<std::string>              m_header;
    std::vector<bool>                     m_right;
    std::vector<std::vector<std::string>> m_rows;
};

std::string num(uint64_t value)
{
    return std::to_string(value);
}

std::string hex(unsigned value)
{
    char buf[16];

    snprintf(buf, sizeof(buf), "0x%x", value);
    return buf;
}

/* "LID 0x12", or with an LMC the range: "LID 0x12-0x13" */
std::string lid_str(const uct_ib_emu_fabric_port_t &p)
{
    const unsigned last = p.lid + (1u << p.lmc) - 1;

    return "LID " + hex(p.lid) + ((p.lmc > 0) ? "-" + hex(last) : "");
}

const char *state_str(enum ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_DOWN:
        return "DOWN";
    case IBV_PORT_INIT:
        return "INIT";
    case IBV_PORT_ARMED:
        return "ARMED";
    case IBV_PORT_ACTIVE:
        return "ACTIVE";
    case IBV_PORT_ACTIVE_DEFER:
        return "ACTIVE_DEFER";
    default:
        return "NOP";
    }
}

std::string mtu_str(enum ibv_mtu mtu)
{
    return ((mtu >= IBV_MTU_256) && (mtu <= IBV_MTU_4096)) ?
           num(128u << mtu) : "?";
}

const char *gid_type_str(enum ibv_gid_type type)
{
    switch (type) {
    case IBV_GID_TYPE_IB:
        return "IB";
    case IBV_GID_TYPE_ROCE_V1:
        return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2:
        return "RoCE v2";
    default:
        return "?";
    }
}

bool is_eth(const uct_ib_emu_fabric_port_t &p)
{
    return p.link_layer == IBV_LINK_LAYER_ETHERNET;
}

std::string port_name(const uct_ib_emu_fabric_port_t &p)
{
    return p.device + ":" + std::to_string(p.port);
}

std::string drop_flags(const uct_ib_emu_fabric_port_t &p)
{
    if (p.drop_roce_v1 && p.drop_roce_v2) {
        return "RoCE v1+v2";
    } else if (p.drop_roce_v1) {
        return "RoCE v1";
    } else if (p.drop_roce_v2) {
        return "RoCE v2";
    }
    return "-";
}

uint64_t total_drops(const uct_ib_emu_fabric_host_t &h)
{
    uint64_t total = 0;

    for (size_t r = 0; r < h.drops.size(); ++r) {
        total += (r == UCT_IB_EMU_DROP_NONE) ? 0 : h.drops[r];
    }
    return total;
}

std::string host_state(const uct_ib_emu_fabric_host_t &h)
{
    return h.alive ? ("alive, pid " + std::to_string(h.pid)) : "dead";
}

void print_summary(FILE *out, const uct_ib_emu_fabric_info_t &info)
{
    table t({"HOST", "STATE", "ISOLATED", "QPS", "SENT", "DELIVERED",
             "RETRIES", "RNR NAKS", "ERROR CQES", "DROPPED"},
            {false, false, false, true, true, true, true, true, true, true});

    for (const auto &h : info.hosts) {
        t.add({h.name, host_state(h), h.isolated ? "yes" : "no",
               num(h.qps_alive), num(h.packets_sent),
               num(h.packets_delivered), num(h.retries), num(h.rnr_naks),
               num(h.err_cqes), num(total_drops(h))});
    }
    t.print(out, "");
}

void print_ports(FILE *out, const uct_ib_emu_fabric_host_t &h)
{
    table t({"PORT", "LINK", "STATE", "MTU", "LID/MAC", "SEGMENT", "DROP",
             "GID", "TYPE", "ADDRESS"},
            {false, false, false, true, false, false, false, true, false,
             false});

    for (const auto &p : h.ports) {
        std::vector<std::string> row = {
            port_name(p), is_eth(p) ? "Ethernet" : "IB", state_str(p.state),
            mtu_str(p.active_mtu), is_eth(p) ? mac_str(p.mac) : lid_str(p),
            p.segment, is_eth(p) ? drop_flags(p) : "-", "", "", ""
        };

        if (p.gids.empty()) {
            row[7] = "-";
            t.add(row);
        }
        for (const auto &g : p.gids) {
            row[7] = num(g.index);
            row[8] = gid_type_str(g.type);
            row[9] = gid_str(g.gid);
            t.add(row);
            /* the port's own columns only on its first line */
            std::fill(row.begin(), row.begin() + 7, "");
        }
    }
    t.print(out, "  ");
}

void print_drops(FILE *out, const uct_ib_emu_fabric_host_t &h)
{
    std::string line;

    for (size_t r = 0; r < h.drops.size(); ++r) {
        if ((r == UCT_IB_EMU_DROP_NONE) || (h.drops[r] == 0)) {
            continue;
        }
        line += line.empty() ? "" : ", ";
        line += uct_ib_emu_drop_str(static_cast<uct_ib_emu_drop_t>(r));
        line += " " + num(h.drops[r]);
    }
    fprintf(out, "  drops: %s\n", line.empty() ? "none" : line.c_str());
}

void print_host(FILE *out, const uct_ib_emu_fabric_host_t &h)
{
    fprintf(out, "\n%s: %s%s, %llu QP%s alive\n", h.name.c_str(),
            host_state(h).c_str(), h.isolated ? ", ISOLATED" : "",
            static_cast<unsigned long long>(h.qps_alive),
            (h.qps_alive == 1) ? "" : "s");
    print_ports(out, h);
    print_drops(out, h);
}

/* The port that owns a neighbour entry's GID on its segment, or NULL */
struct owner {
    const uct_ib_emu_fabric_host_t *host;
    const uct_ib_emu_fabric_port_t *port;
};

owner find_owner(const uct_ib_emu_fabric_info_t &info,
                 const std::string &segment, const uct_ib_emu_gid_t &gid)
{
    for (const auto &h : info.hosts) {
        for (const auto &p : h.ports) {
            if (!is_eth(p) || (p.segment != segment)) {
                continue;
            }
            for (const auto &g : p.gids) {
                if (g.gid == gid) {
                    return {&h, &p};
                }
            }
        }
    }
    return {nullptr, nullptr};
}

/* The InfiniBand port that answers to LID @a lid on @a subnet */
owner find_lid_owner(const uct_ib_emu_fabric_info_t &info,
                     const std::string &subnet, uint16_t lid)
{
    for (const auto &h : info.hosts) {
        for (const auto &p : h.ports) {
            if (!is_eth(p) && (p.segment == subnet) && (p.lid != 0) &&
                ((lid >> p.lmc) == (p.lid >> p.lmc))) {
                return {&h, &p};
            }
        }
    }
    return {nullptr, nullptr};
}

/* What is wrong with an entry ("" if nothing); *stale_p: its MAC is not
 * the current MAC of the port that owns its GID */
std::string neigh_flag(const uct_ib_emu_fabric_info_t &info,
                       const uct_ib_emu_fabric_neigh_t &n, bool *stale_p)
{
    owner o = find_owner(info, n.segment, n.gid);

    *stale_p = (o.port != nullptr) && (o.port->mac != n.mac);
    if (o.port == nullptr) {
        return "no port of the segment has this GID";
    } else if (*stale_p) {
        return "stale: " + o.host->name + " " + port_name(*o.port) + " is " +
               mac_str(o.port->mac);
    }
    return "";
}

void print_neigh(FILE *out, const uct_ib_emu_fabric_info_t &info,
                 bool all_neigh)
{
    table t({"HOST", "ENTRIES", "STALE", "GID", "SEGMENT", "MAC", ""},
            {false, true, true, false, false, false, false});

    for (const auto &h : info.hosts) {
        std::vector<std::vector<std::string>> listed;
        unsigned stale = 0;

        for (const auto &n : h.neigh) {
            bool is_stale;
            std::string flag = neigh_flag(info, n, &is_stale);

            stale += is_stale;
            if (all_neigh || !flag.empty()) {
                listed.push_back({"", "", "", gid_str(n.gid), n.segment,
                                  mac_str(n.mac), flag});
            }
        }

        t.add({h.name, num(h.neigh.size()), num(stale), "", "", "", ""});
        for (auto &row : listed) {
            t.add(std::move(row));
        }
    }

    fprintf(out, "\nneighbour tables (%s):\n",
            all_neigh ? "every entry" : "only the entries that differ "
                                        "from the port's current MAC");
    t.print(out, "  ");
}

const uct_ib_emu_fabric_port_t *
find_port(const uct_ib_emu_fabric_host_t &h, const std::string &device)
{
    for (const auto &p : h.ports) {
        if (p.device == device) {
            return &p;
        }
    }
    return nullptr;
}

/* A connection's row: where its INIT2RTR points, and whether the MAC it
 * carries is still the peer port's */
std::vector<std::string> conn_row(const uct_ib_emu_fabric_info_t &info,
                                  const uct_ib_emu_fabric_host_t &h,
                                  const uct_ib_emu_fabric_conn_t &c)
{
    const uct_ib_emu_fabric_port_t *p = find_port(h, c.device);
    std::vector<std::string> row = {
        h.name, hex(c.qpn), c.device + ":" + num(c.port),
        c.devx ? "devx" : "verbs", hex(c.remote_qpn), "", "", "", ""
    };
    owner o;

    if ((p != nullptr) && is_eth(*p)) {
        o      = find_owner(info, p->segment, c.rgid);
        row[5] = gid_str(c.rgid);
        row[7] = mac_str(c.rmac);
        if (o.port == nullptr) {
            row[8] = "no port of the segment has this GID";
        } else if (o.port->mac != c.rmac) {
            row[8] = "STALE: the port is " + mac_str(o.port->mac);
        } else {
            row[8] = "current";
        }
    } else {
        o      = find_lid_owner(info, (p != nullptr) ? p->segment : "",
                                c.rlid);
        row[5] = "LID " + hex(c.rlid);
        row[7] = "-";
        row[8] = (o.port == nullptr) ? "no port of the subnet has this LID" :
                                       "";
    }
    row[6] = (o.port == nullptr) ? "?" : o.host->name + " " +
                                         port_name(*o.port);
    return row;
}

} // namespace

void print_connections(FILE *out, const uct_ib_emu_fabric_info_t &info,
                       const std::string &host)
{
    table t({"HOST", "QP", "DEVICE", "VIA", "PEER QP", "DESTINATION",
             "PEER PORT", "MAC", ""},
            {false, true, false, false, true, false, false, false, false});
    size_t rows = 0;

    for (const auto &h : info.hosts) {
        if (!host.empty() && (h.name != host)) {
            continue;
        }
        for (const auto &c : h.conns) {
            t.add(conn_row(info, h, c));
            ++rows;
        }
    }

    if (rows == 0) {
        fprintf(out, "no connections recorded\n");
        return;
    }
    t.print(out, "");
}

void print_fabric(FILE *out, const uct_ib_emu_fabric_info_t &info,
                  bool all_neigh)
{
    unsigned alive = 0;

    for (const auto &h : info.hosts) {
        alive += h.alive;
    }

    fprintf(out, "fabric %s: %zu host%s, %u alive; shared memory /dev/shm%s, "
            "layout %u%s\n\n", info.name.c_str(), info.hosts.size(),
            (info.hosts.size() == 1) ? "" : "s", alive, info.shm_name.c_str(),
            info.version, info.persistent ? ", kept until destroyed" : "");
    print_summary(out, info);
    for (const auto &h : info.hosts) {
        print_host(out, h);
    }
    print_neigh(out, info, all_neigh);
}

} // namespace ucx_emu
