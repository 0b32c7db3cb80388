/*
 * The devices of a fabric host: the default devices of host h (host 0 is
 * the in-process default topology), their shared records, the topology a
 * record describes, and fabric-wide unique QP numbers and memory keys.
 */
#include <emu/fabric/host_topology.h>

#include <algorithm>
#include <cstdio>


namespace uct_ib_emu {

namespace {

constexpr uint64_t IB_SUBNET_PREFIX = 0xfe80000000000000ull;

/* Host h's Ethernet port d (0 or 1): the host in the second-to-last byte of
 * its MAC and IPv4 address */
uct_ib_emu_port_spec_t default_eth_port(unsigned h, unsigned d)
{
    uct_ib_emu_port_spec_t p;
    uint8_t last = static_cast<uint8_t>(d + 1);

    p.link_layer = IBV_LINK_LAYER_ETHERNET;
    p.active_mtu = IBV_MTU_1024;
    p.fabric     = "eth0";
    p.mac        = {0x02, 0xc9, 0x00, 0x00, static_cast<uint8_t>(h), last};
    p.ipv4       = (198u << 24) | (18u << 16) | (h << 8) | last;
    return p;
}

/* Host h's InfiniBand port i: the host in the high byte of the LID; the
 * second port answers to two LIDs (LMC 1) and its subnet routes SL 1
 * adaptively, as a subnet manager configures multipath */
uct_ib_emu_port_spec_t default_ib_port(unsigned h, unsigned i)
{
    uct_ib_emu_port_spec_t p;

    p.link_layer    = IBV_LINK_LAYER_INFINIBAND;
    p.active_mtu    = IBV_MTU_4096;
    p.fabric        = "ib0";
    p.lid           = static_cast<uint16_t>((h << 8) | (0x11 + i));
    p.lmc           = (i == 1) ? 1 : 0;
    p.ooo_sl_mask   = (i == 1) ? 0x2 : 0;
    p.sm_lid        = 0x1;
    p.subnet_prefix = IB_SUBNET_PREFIX;
    p.port_guid     = 0x02c9000000000000ull | p.lid;
    return p;
}

void copy_str(char *dst, size_t size, const std::string &src)
{
    snprintf(dst, size, "%s", src.c_str());
}

uint32_t host_number(const device *dev, uint32_t *counter)
{
    uint32_t local = __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);

    return (uint32_t(dev->host + 1) << fab::HOST_SHIFT) |
           (local & fab::LOCAL_MASK);
}

} // namespace


uct_ib_emu_topology_t host_default_topology(unsigned h)
{
    uct_ib_emu_topology_t topo;
    uct_ib_emu_device_spec_t dev;

    dev.vendor_part_id = 4125; /* ConnectX-6 Dx */
    dev.fw_ver         = "22.39.1002";
    for (unsigned i = 0; i < 2; ++i) {
        dev.name  = "mlx5_" + std::to_string(i);
        dev.ports = {default_eth_port(h, i)};
        topo.devices.push_back(dev);
    }

    dev.vendor_part_id = 4123; /* ConnectX-6 */
    dev.fw_ver         = "20.39.1002";
    for (unsigned i = 0; i < 2; ++i) {
        dev.name  = "mlx5_" + std::to_string(i + 2);
        dev.ports = {default_ib_port(h, i)};
        topo.devices.push_back(dev);
    }

    return topo;
}

void fill_host_devices(fab::host_rec *rec, unsigned h)
{
    uct_ib_emu_topology_t topo = host_default_topology(h);

    static_assert(fab::DEVS_PER_HOST == 4, "the default host has 4 devices");
    for (unsigned d = 0; d < fab::DEVS_PER_HOST; ++d) {
        const uct_ib_emu_device_spec_t &spec = topo.devices[d];
        std::unique_ptr<device> dev;
        fab::dev_rec *out = &rec->devs[d];

        /* the GID tables come from the same derivation as in-process */
        if (build_device(spec, d, &dev) != UCS_OK) {
            continue;
        }

        const port &p      = dev->ports[0];
        fab::port_rec *pr  = &out->port;
        unsigned slot      = 0;

        copy_str(out->name, sizeof(out->name), spec.name);
        copy_str(out->fw_ver, sizeof(out->fw_ver), spec.fw_ver);
        out->vendor_part_id = spec.vendor_part_id;
        out->node_guid      = dev->node_guid;
        pr->link_layer      = p.link_layer;
        pr->state           = p.state;
        pr->max_mtu         = p.max_mtu;
        pr->active_mtu      = p.active_mtu;
        pr->lid             = p.lid;
        pr->lmc             = p.lmc;
        pr->sm_lid          = p.sm_lid;
        pr->ooo_sl_mask     = p.ooo_sl_mask;
        pr->ipv4            = spec.ports[0].ipv4;
        pr->subnet_prefix   = p.subnet_prefix;
        pr->port_guid       = p.port_guid;
        memcpy(pr->mac, p.mac.data(), sizeof(pr->mac));
        copy_str(pr->segment, sizeof(pr->segment), p.fabric);
        for (uint32_t i = 0; (i < p.gids.size()) &&
                             (slot < fab::GIDS_PER_PORT); ++i) {
            if (!p.gids[i].valid) {
                continue;
            }
            memcpy(pr->gids[slot].raw, p.gids[i].gid.raw, 16);
            pr->gids[slot].index = i;
            pr->gids[slot].type  = static_cast<uint8_t>(p.gids[i].type);
            pr->gids[slot].valid = 1;
            ++slot;
        }
    }
}

uct_ib_emu_topology_t host_topology(const fab::host_rec &rec)
{
    uct_ib_emu_topology_t topo;

    for (const fab::dev_rec &d : rec.devs) {
        uct_ib_emu_device_spec_t dev;
        uct_ib_emu_port_spec_t p;
        const fab::port_rec &pr = d.port;

        dev.name           = d.name;
        dev.vendor_part_id = d.vendor_part_id;
        dev.fw_ver         = d.fw_ver;
        p.link_layer       = pr.link_layer;
        p.state            = static_cast<enum ibv_port_state>(pr.state);
        p.max_mtu          = static_cast<enum ibv_mtu>(pr.max_mtu);
        p.active_mtu       = static_cast<enum ibv_mtu>(pr.active_mtu);
        p.fabric           = pr.segment;
        p.lid              = pr.lid;
        p.lmc              = pr.lmc;
        p.sm_lid           = pr.sm_lid;
        p.ooo_sl_mask      = pr.ooo_sl_mask;
        p.subnet_prefix    = pr.subnet_prefix;
        p.port_guid        = pr.port_guid;
        p.ipv4             = pr.ipv4;
        p.drop_roce_v1     = pr.drop_roce_v1;
        p.drop_roce_v2     = pr.drop_roce_v2;
        std::copy(pr.mac, pr.mac + 6, p.mac.begin());
        p.gids             = fab::gid_specs(pr);
        dev.node_guid      = d.node_guid; /* not the moved MAC's */
        dev.ports = {p};
        topo.devices.push_back(dev);
    }

    return topo;
}

namespace fab {

std::vector<uct_ib_emu_gid_spec_t> gid_specs(const port_rec &p)
{
    std::vector<uct_ib_emu_gid_spec_t> specs;

    for (const gid_rec &g : p.gids) {
        uct_ib_emu_gid_spec_t spec;

        if (!g.valid) {
            continue;
        }
        spec.index = g.index;
        spec.type  = static_cast<enum ibv_gid_type>(g.type);
        std::copy(g.raw, g.raw + 16, spec.gid.begin());
        specs.push_back(spec);
    }
    return specs;
}

} // namespace fab

uint32_t alloc_qpn(device *dev)
{
    if (dev->shared == nullptr) {
        return dev->next_qpn++;
    }
    return host_number(dev, &dev->shared->next_qp);
}

uint32_t alloc_mkey_index(device *dev)
{
    if (dev->shared == nullptr) {
        return dev->next_mkey_idx++;
    }
    return host_number(dev, &dev->shared->next_mkey);
}

} // namespace uct_ib_emu
