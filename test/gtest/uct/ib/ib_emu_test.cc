#include "ib_emu_test.h"

namespace ib_test {

const peer eth_a = {"mlx5_0", {0x02, 0x11, 0x22, 0x33, 0x44, 0x01}, 0xc6120a01, 0, 0};
const peer eth_b = {"mlx5_1", {0x02, 0x11, 0x22, 0x33, 0x44, 0x02}, 0xc6120a02, 0, 0};
const peer ib_a  = {"mlx5_2", {}, 0, 0x21, 0x0002c90300aa0021ull};
const peer ib_b  = {"mlx5_3", {}, 0, 0x22, 0x0002c90300aa0022ull};

std::string link_name(const ::testing::TestParamInfo<link_layer> &info)
{
    switch (info.param) {
    case link_layer::ib:      return "ib";
    case link_layer::roce_v1: return "roce_v1";
    default:                  return "roce_v2";
    }
}

union ibv_gid ipv4_gid(uint32_t ipv4)
{
    union ibv_gid gid = {};
    uint32_t      be  = htonl(ipv4);

    gid.raw[10] = 0xff;
    gid.raw[11] = 0xff;
    memcpy(&gid.raw[12], &be, sizeof(be));
    return gid;
}

union ibv_gid link_local_gid(const uct_ib_emu_mac_t &mac)
{
    union ibv_gid gid = {};

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

uint16_t provider_udp_sport(uint32_t fl)
{
    return ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000;
}

void emu_test::init()
{
    set_topology(topology(UCT_IB_EMU_GID_ROCE_V1 | UCT_IB_EMU_GID_ROCE_V2));
    ASSERT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_emu_glue_ops));
}

void emu_test::cleanup()
{
    uct_ib_emu_clear_faults();
    EXPECT_EQ(0u, uct_ib_glue_open_device_count()) << "a device is still open";
    EXPECT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));
}

void emu_test::set_topology(const uct_ib_emu_topology_t &topo)
{
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
}

uct_ib_emu_topology_t emu_test::topology(unsigned roce_gid_types)
{
    uct_ib_emu_topology_t topo;

    for (const peer *p : {&eth_a, &eth_b}) {
        uct_ib_emu_device_spec_t dev;
        uct_ib_emu_port_spec_t   port;

        port.link_layer = IBV_LINK_LAYER_ETHERNET;
        port.fabric     = "eth-test";
        port.mac        = p->mac;
        port.ipv4       = p->ipv4;
        port.gid_types  = roce_gid_types;
        dev.name        = p->dev;
        dev.ports.push_back(port);
        topo.devices.push_back(dev);
    }

    for (const peer *p : {&ib_a, &ib_b}) {
        uct_ib_emu_device_spec_t dev;
        uct_ib_emu_port_spec_t   port;

        port.link_layer = IBV_LINK_LAYER_INFINIBAND;
        port.fabric     = "ib-test";
        port.lid        = p->lid;
        port.sm_lid     = 1;
        port.port_guid  = p->guid;
        port.active_mtu = IBV_MTU_4096;
        dev.name           = p->dev;
        dev.vendor_part_id = 4123;
        dev.ports.push_back(port);
        topo.devices.push_back(dev);
    }
    return topo;
}

void link_test::init()
{
    emu_test::init();
    if (GetParam() == link_layer::roce_v1) {
        set_topology(link_topology()); /* RoCEv1-only ports */
    }
}

uct_ib_emu_topology_t link_test::link_topology() const
{
    return topology((GetParam() == link_layer::roce_v1) ?
                    UCT_IB_EMU_GID_ROCE_V1 :
                    (UCT_IB_EMU_GID_ROCE_V1 | UCT_IB_EMU_GID_ROCE_V2));
}

std::string link_test::port_name(const peer &p) const
{
    return std::string(p.dev) + ":1";
}

unsigned link_test::expected_gid_index() const
{
    switch (GetParam()) {
    case link_layer::ib:      return 0;
    case link_layer::roce_v1: return 2; /* RoCEv1 on IPv4 */
    default:                  return 3; /* RoCEv2 on IPv4 */
    }
}

union ibv_gid link_test::expected_gid(const peer &p) const
{
    union ibv_gid gid = {};
    uint64_t      prefix, guid;

    if (roce()) {
        return ipv4_gid(p.ipv4);
    }

    prefix = htobe64(0xfe80000000000000ull);
    guid   = htobe64(p.guid);
    memcpy(&gid.raw[0], &prefix, 8);
    memcpy(&gid.raw[8], &guid, 8);
    return gid;
}

} // namespace ib_test
