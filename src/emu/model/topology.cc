/*
 * The topology: the devices, ports and GID tables a topology describes, the
 * neighbour tables of their L2 segments, and the control API's calls that
 * set them (api/emu.h); joined to a fabric, those calls edit the fabric's
 * registry instead.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/host_topology.h>
#include <emu/fabric/member.h>

#include <arpa/inet.h>
#include <endian.h>

#include <algorithm>
#include <cstdio>


namespace uct_ib_emu {



uct_ib_emu_gid_t gid_key(const union ibv_gid &gid)
{
    uct_ib_emu_gid_t key;

    memcpy(key.data(), gid.raw, key.size());
    return key;
}

bool gid_is_zero(const uint8_t *raw)
{
    return std::all_of(raw, raw + 16, [](uint8_t b) { return b == 0; });
}

std::string gid_str(const uint8_t *raw)
{
    char buf[INET6_ADDRSTRLEN];

    if (inet_ntop(AF_INET6, raw, buf, sizeof(buf)) == nullptr) {
        return "<invalid gid>";
    }
    return buf;
}

bool neigh_resolve(const emu_state &s, const port &from,
                   const union ibv_gid &gid, uct_ib_emu_mac_t *mac)
{
    auto table = s.neigh.find(from.fabric);

    if (table == s.neigh.end()) {
        return false;
    }

    auto it = table->second.find(gid_key(gid));
    if (it == table->second.end()) {
        return false;
    }

    *mac = it->second;
    return true;
}

uint16_t roce_udp_sport(emu_state &s, uint32_t flow_label)
{
    std::uniform_int_distribution<unsigned> dist(ROCE_UDP_SPORT_MIN,
                                                 ROCE_UDP_SPORT_MAX);

    flow_label &= 0xfffff;
    if (flow_label == 0) {
        return static_cast<uint16_t>(dist(s.rng));
    }

    return static_cast<uint16_t>(((flow_label & 0x3fff) ^
                                  ((flow_label & 0xfc000) >> 14)) |
                                 ROCE_UDP_SPORT_MIN);
}



namespace {

union ibv_gid gid_link_local(const uct_ib_emu_mac_t &mac)
{
    union ibv_gid gid = {};

    /* fe80::/64 with the modified EUI-64 interface id of the MAC */
    gid.raw[0]  = 0xfe;
    gid.raw[1]  = 0x80;
    gid.raw[8]  = mac[0] ^ 0x02;
    gid.raw[9]  = mac[1];
    gid.raw[10] = mac[2];
    gid.raw[11] = 0xff;
    gid.raw[12] = 0xfe;
    gid.raw[13] = mac[3];
    gid.raw[14] = mac[4];
    gid.raw[15] = mac[5];
    return gid;
}

union ibv_gid gid_ipv4_mapped(uint32_t ipv4)
{
    union ibv_gid gid = {};
    uint32_t be       = htobe32(ipv4);

    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    memcpy(&gid.raw[12], &be, sizeof(be));
    return gid;
}

union ibv_gid gid_ib(uint64_t subnet_prefix, uint64_t guid)
{
    union ibv_gid gid;

    gid.global.subnet_prefix = htobe64(subnet_prefix);
    gid.global.interface_id  = htobe64(guid);
    return gid;
}

bool mac_is_zero(const uct_ib_emu_mac_t &mac)
{
    return std::all_of(mac.begin(), mac.end(), [](uint8_t b) { return b == 0; });
}

bool mtu_valid(enum ibv_mtu mtu)
{
    return (mtu >= IBV_MTU_256) && (mtu <= IBV_MTU_4096);
}

void set_gid(port &p, uint32_t index, const union ibv_gid &gid,
             enum ibv_gid_type type)
{
    p.gids[index].valid = true;
    p.gids[index].gid   = gid;
    p.gids[index].type  = type;
}

ucs_status_t build_port(const device &dev, uint8_t num,
                        const uct_ib_emu_port_spec_t &spec, port *p)
{
    bool eth = (spec.link_layer == IBV_LINK_LAYER_ETHERNET);

    if (!eth && (spec.link_layer != IBV_LINK_LAYER_INFINIBAND)) {
        ucs_error("emu: %s:%u: unknown link layer %u", dev.name.c_str(), num,
                  spec.link_layer);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!mtu_valid(spec.max_mtu) || !mtu_valid(spec.active_mtu) ||
        (spec.active_mtu > spec.max_mtu)) {
        ucs_error("emu: %s:%u: invalid MTUs: active %d max %d",
                  dev.name.c_str(), num, spec.active_mtu, spec.max_mtu);
        return UCS_ERR_INVALID_PARAM;
    }

    p->num           = num;
    p->link_layer    = spec.link_layer;
    p->state         = spec.state;
    p->max_mtu       = spec.max_mtu;
    p->active_mtu    = spec.active_mtu;
    p->fabric        = spec.fabric.empty() ?
                       dev.name + ":" + std::to_string(num) : spec.fabric;
    p->lid           = eth ? 0 : spec.lid;
    p->lmc           = eth ? 0 : spec.lmc;
    p->sm_lid        = eth ? 0 : spec.sm_lid;
    p->ooo_sl_mask   = eth ? 0 : spec.ooo_sl_mask;
    p->subnet_prefix = spec.subnet_prefix;
    p->port_guid     = (spec.port_guid != 0) ? spec.port_guid :
                       (0x02c9000000000000ull | (dev.index << 8) | num);
    p->mac           = eth ? spec.mac : uct_ib_emu_mac_t{};
    p->ifindex       = eth ? (10 + dev.index * 8 + num) : 0;
    p->pkey_tbl_len  = eth ? ETH_PKEY_TABLE_LEN : IB_PKEY_TABLE_LEN;
    p->drop_roce_v1  = eth && spec.drop_roce_v1;
    p->drop_roce_v2  = eth && spec.drop_roce_v2;
    p->gids.assign(eth ? ETH_GID_TABLE_LEN : IB_GID_TABLE_LEN, gid_slot());

    if (eth && (mac_is_zero(p->mac) || (p->mac[0] & 1))) {
        ucs_error("emu: %s:%u: an Ethernet port needs a unicast MAC",
                  dev.name.c_str(), num);
        return UCS_ERR_INVALID_PARAM;
    }

    /* the name travels in neighbour events (and fabric records) whole */
    if (p->fabric.size() >= NEIGH_SEGMENT_LEN) {
        ucs_error("emu: %s:%u: L2 segment or subnet name '%s' is longer than "
                  "%u characters", dev.name.c_str(), num, p->fabric.c_str(),
                  NEIGH_SEGMENT_LEN - 1);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!eth && (spec.state == IBV_PORT_ACTIVE) &&
        ((p->lid == 0) || (p->lid >= 0xc000))) {
        ucs_error("emu: %s:%u: an active InfiniBand port needs a unicast LID",
                  dev.name.c_str(), num);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!eth && ((spec.lmc > MAX_LMC) ||
                 ((p->lid & ((1u << spec.lmc) - 1)) != 0) ||
                 ((p->lid != 0) &&
                  (p->lid + (1u << spec.lmc) - 1 >= 0xc000)))) {
        ucs_error("emu: %s:%u: LMC %u does not fit LID 0x%x (at most %u, "
                  "the LID aligned to the 2^LMC unicast LIDs it starts)",
                  dev.name.c_str(), num, spec.lmc, p->lid, MAX_LMC);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!spec.gids.empty()) {
        for (const auto &g : spec.gids) {
            bool type_ok = eth ? ((g.type == IBV_GID_TYPE_ROCE_V1) ||
                                  (g.type == IBV_GID_TYPE_ROCE_V2)) :
                                 (g.type == IBV_GID_TYPE_IB);
            union ibv_gid gid;

            if ((g.index >= p->gids.size()) || p->gids[g.index].valid ||
                !type_ok || gid_is_zero(g.gid.data())) {
                ucs_error("emu: %s:%u: invalid GID entry %u",
                          dev.name.c_str(), num, g.index);
                return UCS_ERR_INVALID_PARAM;
            }

            memcpy(gid.raw, g.gid.data(), sizeof(gid.raw));
            set_gid(*p, g.index, gid, g.type);
        }
    } else if (eth) {
        if (spec.gid_types & UCT_IB_EMU_GID_ROCE_V1) {
            set_gid(*p, 0, gid_link_local(p->mac), IBV_GID_TYPE_ROCE_V1);
        }
        if (spec.gid_types & UCT_IB_EMU_GID_ROCE_V2) {
            set_gid(*p, 1, gid_link_local(p->mac), IBV_GID_TYPE_ROCE_V2);
        }
        if ((spec.ipv4 != 0) && (spec.gid_types & UCT_IB_EMU_GID_ROCE_V1)) {
            set_gid(*p, 2, gid_ipv4_mapped(spec.ipv4), IBV_GID_TYPE_ROCE_V1);
        }
        if ((spec.ipv4 != 0) && (spec.gid_types & UCT_IB_EMU_GID_ROCE_V2)) {
            set_gid(*p, 3, gid_ipv4_mapped(spec.ipv4), IBV_GID_TYPE_ROCE_V2);
        }
    } else {
        set_gid(*p, 0, gid_ib(p->subnet_prefix, p->port_guid),
                IBV_GID_TYPE_IB);
    }

    return UCS_OK;
}

} // namespace


ucs_status_t build_device(const uct_ib_emu_device_spec_t &spec,
                          unsigned index, std::unique_ptr<device> *dev_p)
{
    auto dev = std::make_unique<device>();
    ucs_status_t status;

    if (spec.name.empty() || (spec.name.size() >= IBV_SYSFS_NAME_MAX)) {
        ucs_error("emu: invalid device name '%s'", spec.name.c_str());
        return UCS_ERR_INVALID_PARAM;
    }

    if (spec.ports.empty() || (spec.ports.size() > 255)) {
        ucs_error("emu: %s: a device has 1..255 ports, not %zu",
                  spec.name.c_str(), spec.ports.size());
        return UCS_ERR_INVALID_PARAM;
    }

    dev->index                       = index;
    dev->name                        = spec.name;
    dev->vendor_part_id              = spec.vendor_part_id;
    dev->hw_ver                      = spec.hw_ver;
    dev->fw_ver                      = spec.fw_ver;
    dev->devx                        = spec.devx;
    dev->fl_rc_qp_when_roce_enabled  = spec.fl_rc_qp_when_roce_enabled;
    dev->fl_rc_qp_when_roce_disabled = spec.fl_rc_qp_when_roce_disabled;
    dev->log_max_qp_sz               = std::min(spec.log_max_qp_sz,
                                                LOG_MAX_QP_SZ);
    dev->num_lag_ports               = spec.num_lag_ports;
    dev->next_qpn                    = (index << 16) | 0x100;

    dev->ports.resize(spec.ports.size());
    for (size_t i = 0; i < spec.ports.size(); ++i) {
        status = build_port(*dev, static_cast<uint8_t>(i + 1), spec.ports[i],
                            &dev->ports[i]);
        if (status != UCS_OK) {
            return status;
        }

        if (dev->ports[i].link_layer != dev->ports[0].link_layer) {
            ucs_error("emu: %s: all ports of a device must have the same "
                      "link layer", spec.name.c_str());
            return UCS_ERR_INVALID_PARAM;
        }
    }

    dev->roce_enabled = dev->is_eth() && spec.roce_enabled;
    if (spec.node_guid != 0) {
        dev->node_guid = spec.node_guid;
    } else if (dev->is_eth()) {
        const uct_ib_emu_mac_t &mac = dev->ports[0].mac;

        dev->node_guid = (uint64_t(mac[0]) << 56) | (uint64_t(mac[1]) << 48) |
                         (uint64_t(mac[2]) << 40) | (uint64_t(0x03) << 32) |
                         (uint64_t(mac[3]) << 16) | (uint64_t(mac[4]) << 8) |
                         mac[5];
    } else {
        dev->node_guid = dev->ports[0].port_guid;
    }

    /* What rdma-core's sysfs scan fills in */
    dev->ibdev.node_type      = IBV_NODE_CA;
    dev->ibdev.transport_type = IBV_TRANSPORT_IB;
    snprintf(dev->ibdev.name, sizeof(dev->ibdev.name), "%s",
             spec.name.c_str());
    snprintf(dev->ibdev.dev_name, sizeof(dev->ibdev.dev_name), "uverbs%u",
             index);
    snprintf(dev->ibdev.dev_path, sizeof(dev->ibdev.dev_path),
             "/sys/class/infiniband_verbs/uverbs%u", index);
    snprintf(dev->ibdev.ibdev_path, sizeof(dev->ibdev.ibdev_path),
             "/sys/class/infiniband/%s", spec.name.c_str());

    *dev_p = std::move(dev);
    return UCS_OK;
}


namespace {

/* Everything that must be unique across the topology */
ucs_status_t check_fabric(const std::vector<std::unique_ptr<device>> &devices)
{
    std::set<std::string> names;
    std::set<std::pair<std::string, uint16_t>> lids;
    std::set<std::pair<std::string, uct_ib_emu_mac_t>> macs;
    std::set<uct_ib_emu_gid_t> gids;

    for (const auto &dev : devices) {
        if (!names.insert(dev->name).second) {
            ucs_error("emu: duplicate device name %s", dev->name.c_str());
            return UCS_ERR_INVALID_PARAM;
        }

        for (const port &p : dev->ports) {
            for (unsigned i = 0; !p.is_eth() && (p.lid != 0) &&
                                 (i < (1u << p.lmc)); ++i) {
                const uint16_t lid = static_cast<uint16_t>(p.lid + i);

                if (!lids.insert({p.fabric, lid}).second) {
                    ucs_error("emu: %s:%u: LID 0x%x is already used in "
                              "subnet %s", dev->name.c_str(), p.num, lid,
                              p.fabric.c_str());
                    return UCS_ERR_INVALID_PARAM;
                }
            }

            if (p.is_eth() && !macs.insert({p.fabric, p.mac}).second) {
                ucs_error("emu: %s:%u: MAC already used in segment %s",
                          dev->name.c_str(), p.num, p.fabric.c_str());
                return UCS_ERR_INVALID_PARAM;
            }

            /* A RoCEv1 and a RoCEv2 entry share an address: one neighbour */
            std::set<uct_ib_emu_gid_t> port_gids;
            for (const gid_slot &slot : p.gids) {
                if (slot.valid) {
                    port_gids.insert(gid_key(slot.gid));
                }
            }
            for (const auto &key : port_gids) {
                if (!gids.insert(key).second) {
                    ucs_error("emu: %s:%u: GID %s is already assigned to "
                              "another port", dev->name.c_str(), p.num,
                              gid_str(key.data()).c_str());
                    return UCS_ERR_INVALID_PARAM;
                }
            }
        }
    }

    return UCS_OK;
}

bool busy_locked(const emu_state &s)
{
    if (!s.contexts.empty()) {
        ucs_error("emu: cannot change the topology: %zu device context(s) "
                  "are open", s.contexts.size());
        return true;
    }

    if (!s.device_lists.empty()) {
        ucs_error("emu: cannot change the topology: %zu device list(s) are "
                  "not freed", s.device_lists.size());
        return true;
    }

    return false;
}

} // namespace


ucs_status_t apply_topology(emu_state &s, const uct_ib_emu_topology_t &topo)
{
    std::vector<std::unique_ptr<device>> devices;
    ucs_status_t status;

    for (size_t i = 0; i < topo.devices.size(); ++i) {
        std::unique_ptr<device> dev;

        status = build_device(topo.devices[i], static_cast<unsigned>(i), &dev);
        if (status != UCS_OK) {
            return status;
        }
        devices.push_back(std::move(dev));
    }

    status = check_fabric(devices);
    if (status != UCS_OK) {
        return status;
    }

    for (const auto &dev : s.devices) {
        unregister_handle(s, &dev->ibdev);
    }

    s.devices = std::move(devices);
    s.neigh.clear();
    for (const auto &dev : s.devices) {
        register_handle(s, &dev->ibdev, kind::DEVICE, dev.get());
        for (const port &p : dev->ports) {
            if (!p.is_eth()) {
                continue;
            }
            for (const gid_slot &slot : p.gids) {
                if (slot.valid) {
                    s.neigh[p.fabric][gid_key(slot.gid)] = p.mac;
                }
            }
        }
    }

    counters_reset_locked(s);
    engine_clock_reset_locked(s);
    clear_faults_locked(s);
    s.rng.seed(0x5eed);
    return UCS_OK;
}


ucs_status_t apply_host_topology(emu_state &s, unsigned host,
                                 const uct_ib_emu_topology_t &own,
                                 const std::vector<uct_ib_emu_topology_t> &all)
{
    ucs_status_t status = apply_topology(s, own);

    if (status != UCS_OK) {
        return status;
    }

    for (const auto &dev : s.devices) {
        dev->host = static_cast<int>(host);
    }

    s.peers.clear();
    for (unsigned h = 0; h < all.size(); ++h) {
        if (h == host) {
            continue;
        }
        for (size_t i = 0; i < all[h].devices.size(); ++i) {
            std::unique_ptr<device> dev;

            status = build_device(all[h].devices[i], static_cast<unsigned>(i),
                                  &dev);
            if (status != UCS_OK) {
                s.peers.clear();
                return status;
            }
            dev->host = static_cast<int>(h);
            dev->peer = true;
            s.peers.push_back(std::move(dev));
        }
    }

    return UCS_OK;
}


namespace {

/* Joined to a fabric: change one of the host's own ports in the registry */
template <typename F>
ucs_status_t edit_own_port(emu_state &s, const std::string &device,
                           uint8_t port_num, F fn)
{
    return s.fabric->edit_locked(s, [&](fab::fabric_rec *rec) {
        fab::port_rec *pr;
        unsigned h;
        ucs_status_t status = fab::find_port(rec,
                                             std::to_string(s.fabric->host()),
                                             device, port_num, &h, &pr);

        return (status == UCS_OK) ? fn(rec, pr) : status;
    });
}

port *find_port_locked(emu_state &s, const std::string &dev_name,
                       uint8_t port_num)
{
    for (auto &dev : s.devices) {
        if ((dev->name == dev_name) && (port_num >= 1) &&
            (port_num <= dev->ports.size())) {
            return &dev->ports[port_num - 1];
        }
    }

    return nullptr;
}

} // namespace



} // namespace uct_ib_emu


using namespace uct_ib_emu;

uct_ib_emu_topology_t uct_ib_emu_default_topology()
{
    return host_default_topology(0);
}

ucs_status_t uct_ib_emu_set_topology(const uct_ib_emu_topology_t &topology)
{
    emu_state &s = state();
    guard g(s.lock);

    if (s.fabric != nullptr) {
        ucs_error("emu: the topology of fabric %s is shared: it is made by "
                  "`ucx_emu create`, not changed in a process",
                  s.fabric->name().c_str());
        return UCS_ERR_UNSUPPORTED;
    }

    if (busy_locked(s)) {
        return UCS_ERR_BUSY;
    }

    return apply_topology(s, topology);
}

ucs_status_t uct_ib_emu_reset()
{
    return uct_ib_emu_set_topology(uct_ib_emu_default_topology());
}

void uct_ib_emu_neigh_set(const std::string &segment, const union ibv_gid &gid,
                          const uct_ib_emu_mac_t &mac)
{
    emu_state &s = state();
    guard g(s.lock);

    if (s.fabric != nullptr) {
        s.fabric->edit_locked(s, [&](fab::fabric_rec *rec) {
            fab::neigh_set(&rec->hosts[s.fabric->host()], segment.c_str(),
                           gid.raw, mac.data());
            return UCS_OK;
        });
        return;
    }

    uct_ib_emu_mac_t &entry = s.neigh[segment][gid_key(gid)];
    if (entry != mac) {
        entry = mac;
        neigh_event_post(s.neigh_events.get(), NEIGH_EVENT_NEW,
                         segment.c_str(), gid.raw, mac.data());
    }
}

ucs_status_t uct_ib_emu_neigh_del(const std::string &segment,
                                  const union ibv_gid &gid)
{
    emu_state &s = state();
    guard g(s.lock);
    auto table   = s.neigh.find(segment);

    if (s.fabric != nullptr) {
        return s.fabric->edit_locked(s, [&](fab::fabric_rec *rec) {
            return fab::neigh_del(&rec->hosts[s.fabric->host()],
                                  segment.c_str(), gid.raw) ?
                   UCS_OK : UCS_ERR_NO_ELEM;
        });
    }

    if (table == s.neigh.end()) {
        return UCS_ERR_NO_ELEM;
    }
    auto entry = table->second.find(gid_key(gid));
    if (entry == table->second.end()) {
        return UCS_ERR_NO_ELEM;
    }
    neigh_event_post(s.neigh_events.get(), NEIGH_EVENT_DEL, segment.c_str(),
                     gid.raw, entry->second.data());
    table->second.erase(entry);
    return UCS_OK;
}

ucs_status_t uct_ib_emu_port_set_mac(const std::string &device, uint8_t port,
                                     const uct_ib_emu_mac_t &mac,
                                     bool update_neigh)
{
    emu_state &s = state();
    guard g(s.lock);
    struct port *p = find_port_locked(s, device, port);

    if (p == nullptr) {
        return UCS_ERR_NO_ELEM;
    }

    if (!p->is_eth() || mac_is_zero(mac) || (mac[0] & 1)) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (s.fabric != nullptr) {
        return edit_own_port(s, device, port, [&](fab::fabric_rec *rec,
                                                  fab::port_rec *pr) {
            /* a test may give two ports one MAC on purpose */
            return fab::edit_mac(rec, pr, mac.data(), update_neigh, true);
        });
    }

    p->mac = mac;
    if (update_neigh) {
        for (const gid_slot &slot : p->gids) {
            if (!slot.valid) {
                continue;
            }
            uct_ib_emu_mac_t &entry = s.neigh[p->fabric][gid_key(slot.gid)];
            if (entry != mac) { /* a RoCEv1 and v2 slot share an address */
                entry = mac;
                neigh_event_post(s.neigh_events.get(), NEIGH_EVENT_NEW,
                                 p->fabric.c_str(), slot.gid.raw, mac.data());
            }
        }
    }

    return UCS_OK;
}

ucs_status_t uct_ib_emu_port_set_drop(const std::string &device, uint8_t port,
                                      bool drop_roce_v1, bool drop_roce_v2)
{
    emu_state &s = state();
    guard g(s.lock);
    struct port *p = find_port_locked(s, device, port);

    if (p == nullptr) {
        return UCS_ERR_NO_ELEM;
    }

    if (!p->is_eth()) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (s.fabric != nullptr) {
        return edit_own_port(s, device, port, [&](fab::fabric_rec *rec,
                                                  fab::port_rec *pr) {
            return fab::edit_drop(rec, pr, drop_roce_v1, drop_roce_v2);
        });
    }

    p->drop_roce_v1 = drop_roce_v1;
    p->drop_roce_v2 = drop_roce_v2;
    return UCS_OK;
}
