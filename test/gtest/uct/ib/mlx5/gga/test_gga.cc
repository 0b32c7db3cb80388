/*
 * gga_mlx5, the loopback RC transport, through the public API on the
 * emulated device over InfiniBand, RoCEv1 and RoCEv2: its QPs connect to
 * QPs of the same device only; to their own port they loop back with the fl
 * bit where the HCA can force loopback, and go to the interface's own GID
 * (RoCE) or LID (InfiniBand) where it cannot.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <algorithm>
#include <cstring>

using namespace ib_test;

class test_gga_mlx5 : public rc_api_test {
protected:
    /* Two endpoints on one interface of a(), connected to each other */
    void connect_loopback_pair(std::vector<uint32_t> *qpns_p)
    {
        uct_iface_h iface = open_iface("gga_mlx5", a());
        ASSERT_NE(nullptr, iface);
        uct_ep_h ep1 = create_ep(iface);
        uct_ep_h ep2 = create_ep(iface);
        ASSERT_TRUE(ep1 && ep2);
        ep_address addr1 = address(iface, ep1);
        ep_address addr2 = address(iface, ep2);

        uct_ib_emu_counters_reset();
        ASSERT_EQ(UCS_OK, connect(ep1, addr2));
        ASSERT_EQ(UCS_OK, connect(ep2, addr1));
        *qpns_p = {qpns(addr1).at(0), qpns(addr2).at(0)};
    }

    static int is_reachable(uct_iface_h iface, const ep_address &remote,
                            std::string *info_p)
    {
        uct_iface_is_reachable_params_t params = {};
        char                            info[256];

        params.field_mask         = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR |
                                    UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR |
                                    UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING |
                                    UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH;
        params.device_addr        = reinterpret_cast<const uct_device_addr_t*>(
                                            remote.dev.data());
        params.iface_addr         = reinterpret_cast<const uct_iface_addr_t*>(
                                            remote.iface.data());
        params.info_string        = info;
        params.info_string_length = sizeof(info);

        int result = uct_iface_is_reachable_v2(iface, &params);
        *info_p    = info;
        return result;
    }
};

TEST_P(test_gga_mlx5, listed_on_devx_ports)
{
    std::vector<std::string> res = tl_resources(a());

    EXPECT_EQ(1, std::count(res.begin(), res.end(), "gga_mlx5/" + port_name(a())));
}

TEST_P(test_gga_mlx5, iface_attr)
{
    uct_iface_h iface = open_iface("gga_mlx5", a());
    ASSERT_NE(nullptr, iface);

    uct_iface_attr_t attr = query(iface);
    EXPECT_EQ(3u, attr.ep_addr_len);
    EXPECT_EQ(8u, attr.iface_addr_len) << "the system image GUID";
    EXPECT_EQ(roce() ? 17u : 3u, attr.device_addr_len);
    EXPECT_TRUE(attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP);
    EXPECT_FALSE(attr.cap.flags & UCT_IFACE_FLAG_INTER_NODE)
            << "it reaches its own device only";
}

TEST_P(test_gga_mlx5, loopback_goes_to_own_address_without_fl)
{
    std::vector<uint32_t> q;
    connect_loopback_pair(&q);
    ASSERT_EQ(2u, q.size());

    /* To the own port like to any peer: own MAC, own GID, one AH each */
    expect_qpc(q[0], a(), a(), q[1]);
    expect_qpc(q[1], a(), a(), q[0]);
    expect_ah(roce() ? 2 : 0);
}

TEST_P(test_gga_mlx5, qp_connected_to_itself)
{
    uct_iface_h iface = open_iface("gga_mlx5", a());
    ASSERT_NE(nullptr, iface);
    uct_ep_h ep = create_ep(iface);
    ASSERT_NE(nullptr, ep);
    ep_address addr = address(iface, ep);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, connect(ep, addr));
    expect_qpc(qpns(addr).at(0), a(), a(), qpns(addr).at(0));
    expect_ah(roce() ? 1 : 0);
}

TEST_P(test_gga_mlx5, unreachable_from_another_device)
{
    uct_iface_h iface_a = open_iface("gga_mlx5", a());
    uct_iface_h iface_b = open_iface("gga_mlx5", b());
    ASSERT_TRUE(iface_a && iface_b);
    uct_ep_h ep_a = create_ep(iface_a);
    uct_ep_h ep_b = create_ep(iface_b);
    ASSERT_TRUE(ep_a && ep_b);
    ep_address addr_a = address(iface_a, ep_a);
    ep_address addr_b = address(iface_b, ep_b);
    std::string info;

    EXPECT_EQ(1, is_reachable(iface_a, addr_a, &info)) << info;
    EXPECT_EQ(0, is_reachable(iface_a, addr_b, &info));
    EXPECT_NE(std::string::npos, info.find("another device")) << info;
    EXPECT_EQ(0, is_reachable(iface_b, addr_a, &info));

    /* The other device's device address with this device's GUID: still no */
    ep_address forged = addr_b;
    forged.iface      = addr_a.iface;
    EXPECT_EQ(0, is_reachable(iface_a, forged, &info));
    EXPECT_NE(std::string::npos, info.find("not an address of")) << info;

    /* And a connect to it is refused before any command or AH */
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    uct_ib_emu_counters_reset();
    EXPECT_EQ(UCS_ERR_UNREACHABLE, connect(ep_a, addr_b));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                port_name(a()) + ": gga_mlx5 connects only "
                                "within " + a().dev)) << capture.dump();
    EXPECT_EQ(qp_state_init, qp_info(qpns(addr_a).at(0)).state);
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(op_init2rtr));
    expect_ah(0);
}

TEST_P(test_gga_mlx5, needs_iface_address_to_tell_the_device)
{
    uct_iface_h iface = open_iface("gga_mlx5", a());
    ASSERT_NE(nullptr, iface);
    uct_ep_h ep = create_ep(iface);
    ASSERT_NE(nullptr, ep);
    ep_address addr = address(iface, ep);

    EXPECT_EQ(0, uct_iface_is_reachable(
                      iface, reinterpret_cast<const uct_device_addr_t*>(
                                     addr.dev.data()), nullptr));
    EXPECT_NE(0, uct_iface_is_reachable(
                      iface, reinterpret_cast<const uct_device_addr_t*>(
                                     addr.dev.data()),
                      reinterpret_cast<const uct_iface_addr_t*>(
                              addr.iface.data())));
}

UCT_IB_INSTANTIATE_LINK_TEST(test_gga_mlx5);


/* The same device with the force-loopback capability */
class test_gga_mlx5_fl : public test_gga_mlx5 {
protected:
    void init() override
    {
        test_gga_mlx5::init();
        set_topology(force_loopback_topology());
    }
};

TEST_P(test_gga_mlx5_fl, loopback_uses_fl_and_no_ah)
{
    std::vector<uint32_t> q;
    connect_loopback_pair(&q);
    ASSERT_EQ(2u, q.size());

    if (!roce()) {
        /* The capability is RoCE's: InfiniBand loops back by its LID */
        expect_qpc(q[0], a(), a(), q[1]);
        expect_qpc(q[1], a(), a(), q[0]);
    } else {
        expect_fl_qpc(q[0], q[1]);
        expect_fl_qpc(q[1], q[0]);
    }
    expect_ah(0);
}

TEST_P(test_gga_mlx5_fl, qp_connected_to_itself)
{
    uct_iface_h iface = open_iface("gga_mlx5", a());
    ASSERT_NE(nullptr, iface);
    uct_ep_h ep = create_ep(iface);
    ASSERT_NE(nullptr, ep);
    ep_address addr = address(iface, ep);
    uint32_t   qpn  = qpns(addr).at(0);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, connect(ep, addr));
    if (roce()) {
        expect_fl_qpc(qpn, qpn);
    } else {
        expect_qpc(qpn, a(), a(), qpn);
    }
    expect_ah(0);
}

UCT_IB_INSTANTIATE_LINK_TEST(test_gga_mlx5_fl);
