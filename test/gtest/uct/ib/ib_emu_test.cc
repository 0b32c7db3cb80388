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
    /* on the hwpath, rdma-core's calls, which the preload serves */
    ASSERT_EQ(UCS_OK, uct_ib_glue_install(ucs::hwpath() ?
                                          &uct_ib_glue_rdma_core_ops :
                                          &uct_ib_emu_glue_ops));
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

void link_test::expect_connected_qpc(uint32_t qpn, const peer &from,
                                     const peer &to, uint32_t dest_qpn,
                                     const qpc_expect &e) const
{
    uct_ib_emu_qp_info_t info = {};
    union ibv_gid rgid        = expected_gid(to);

    SCOPED_TRACE(port_name(from) + " qp " + std::to_string(qpn) + " -> " +
                 port_name(to) + " qp " + std::to_string(dest_qpn));
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qpn, &info));
    EXPECT_EQ(from.dev, info.device);
    EXPECT_TRUE(info.devx);
    EXPECT_EQ(0x3, info.state) << "RTS";
    EXPECT_EQ(dest_qpn, info.remote_qpn);
    EXPECT_EQ(e.mtu, info.mtu);
    EXPECT_NE(0, info.log_msg_max);
    EXPECT_EQ(1, info.primary.vhca_port_num);
    EXPECT_EQ(1, info.rre);
    EXPECT_EQ(1, info.rwe);
    EXPECT_EQ(1, info.rae);
    EXPECT_EQ(e.log_rd, info.log_rra_max);
    EXPECT_EQ(e.log_rd, info.log_sra_max);
    EXPECT_EQ(e.min_rnr_nak, info.min_rnr_nak);
    EXPECT_EQ(7, info.retry_count);
    EXPECT_EQ(7, info.rnr_retry);
    EXPECT_EQ(e.ack_timeout, info.ack_timeout);
    EXPECT_EQ(0, info.primary.fl);

    if (!roce()) {
        EXPECT_EQ(to.lid, info.primary.rlid);
        EXPECT_EQ(0, info.primary.mlid);
        EXPECT_EQ(e.sl, info.primary.sl);
        EXPECT_EQ(0, info.primary.grh) << "one subnet: no GRH";
        EXPECT_EQ(uct_ib_emu_mac_t{}, info.primary.rmac);
        return;
    }

    EXPECT_EQ(to.mac, info.primary.rmac);
    EXPECT_EQ(0, memcmp(rgid.raw, info.primary.rgid.data(), 16));
    EXPECT_EQ(e.hop_limit, info.primary.hop_limit);
    EXPECT_EQ(expected_gid_index(), info.primary.src_addr_index);
    EXPECT_EQ(e.sl, info.primary.eth_prio);
    if (GetParam() == link_layer::roce_v2) {
        EXPECT_EQ(e.udp_sport, info.primary.udp_sport);
        EXPECT_EQ(e.tclass >> 2, info.primary.dscp);
    } else {
        EXPECT_EQ(0, info.primary.udp_sport) << "RoCEv1 has no UDP header";
        EXPECT_EQ(0, info.primary.dscp);
    }
}

} // namespace ib_test
