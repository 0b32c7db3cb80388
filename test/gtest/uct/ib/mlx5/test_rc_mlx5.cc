/*
 * rc_mlx5 and rc_verbs endpoints through the UCT API on the emulated device,
 * and the tag-matching command QP: every DevX connect goes through the
 * transient-AH helper.
 */
#include <uct/ib/ib_uct_test.h>

#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>

#include <cstring>

namespace {

using namespace ib_test;

uint32_t ep_qpn(uct_ep_h ep)
{
    return uct_rc_mlx5_ep_qpn(ep);
}

} // namespace

class test_rc_mlx5 : public link_test {
protected:
    void connect_pair(uct_port &pa, uct_port &pb, uct_ep_h *ea, uct_ep_h *eb)
    {
        *ea = pa.create_ep();
        *eb = pb.create_ep();
        ASSERT_TRUE(*ea && *eb);
        ASSERT_EQ(UCS_OK, pa.connect(*ea, pb, *eb));
        ASSERT_EQ(UCS_OK, pb.connect(*eb, pa, *ea));
        EXPECT_TRUE(uct_rc_mlx5_ep_is_connected(*ea));
        EXPECT_TRUE(uct_rc_mlx5_ep_is_connected(*eb));
    }

    void expect_qpc(uct_ep_h ep, const peer &to, uct_ep_h remote_ep,
                    const uct_ib_emu_mac_t &mac)
    {
        uct_ib_emu_qp_info_t info = {};
        union ibv_gid        rgid = expected_gid(to);

        ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(ep_qpn(ep), &info));
        EXPECT_EQ(0x3, info.state);
        EXPECT_EQ(ep_qpn(remote_ep), info.remote_qpn);
        EXPECT_EQ(roce() ? IBV_MTU_1024 : IBV_MTU_4096, info.mtu);
        if (roce()) {
            EXPECT_EQ(mac, info.primary.rmac);
            EXPECT_EQ(0, memcmp(rgid.raw, info.primary.rgid.data(), 16));
            EXPECT_EQ(expected_gid_index(), info.primary.src_addr_index);
            EXPECT_EQ(255, info.primary.hop_limit);
            if (GetParam() == link_layer::roce_v2) {
                EXPECT_EQ(0xC000, info.primary.udp_sport);
                EXPECT_EQ(106 >> 2, info.primary.dscp);
            }
        } else {
            EXPECT_EQ(to.lid, info.primary.rlid);
            EXPECT_EQ(0, info.primary.grh);
        }
    }
};

TEST_P(test_rc_mlx5, iface_attributes)
{
    uct_port pa(a().dev, "rc_mlx5");

    ASSERT_EQ(UCS_OK, pa.open());
    uct_iface_attr_t attr = pa.attr();
    EXPECT_TRUE(attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP);
    EXPECT_EQ(3u, attr.ep_addr_len);
    EXPECT_EQ(0u, attr.iface_addr_len);
    EXPECT_EQ(roce() ? 17u : 3u, attr.device_addr_len);
}

TEST_P(test_rc_mlx5, connect_to_ep)
{
    uct_port pa(a().dev, "rc_mlx5"), pb(b().dev, "rc_mlx5");
    uct_ep_h ea, eb;

    ASSERT_EQ(UCS_OK, pa.open());
    ASSERT_EQ(UCS_OK, pb.open());
    uct_ib_emu_counters_reset();
    connect_pair(pa, pb, &ea, &eb);

    expect_qpc(ea, b(), eb, b().mac);
    expect_qpc(eb, a(), ea, a().mac);

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(roce() ? 2u : 0u, c.ah_created);
    EXPECT_EQ(c.ah_created, c.ah_destroyed);
    EXPECT_EQ(0u, c.ah_alive);

    /* connecting twice is refused, without touching the QP */
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, pa.connect(ea, pb, eb));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "already connected"));
}

TEST_P(test_rc_mlx5, stale_mac_through_uct_api)
{
    const uct_ib_emu_mac_t moved = {0x02, 0x11, 0x22, 0x33, 0x44, 0x77};
    uct_port               pa(a().dev, "rc_mlx5"), pb(b().dev, "rc_mlx5");
    uct_ep_h               ea1, eb1, ea2, eb2;

    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand routes by LID: there is no MAC to go stale");
    }

    ASSERT_EQ(UCS_OK, pa.open());
    ASSERT_EQ(UCS_OK, pb.open());
    connect_pair(pa, pb, &ea1, &eb1);
    expect_qpc(ea1, b(), eb1, b().mac);

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, moved));
    connect_pair(pa, pb, &ea2, &eb2);
    expect_qpc(ea2, b(), eb2, moved);
}

TEST_P(test_rc_mlx5, verbs_fallback_connects)
{
    uct_port             pa(a().dev, "rc_verbs"), pb(b().dev, "rc_verbs");
    uct_ep_h             ea, eb;
    uct_ib_emu_qp_info_t info = {};

    ASSERT_EQ(UCS_OK, pa.open());
    ASSERT_EQ(UCS_OK, pb.open());
    uct_ib_emu_counters_reset();
    connect_pair(pa, pb, &ea, &eb);

    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(ep_qpn(ea), &info));
    EXPECT_FALSE(info.devx);
    EXPECT_EQ(0x3, info.state);
    EXPECT_EQ(ep_qpn(eb), info.remote_qpn);
    if (roce()) {
        EXPECT_EQ(b().mac, info.primary.rmac) << "resolved by the kernel at RTR";
    }

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(0u, c.ah_created) << "the verbs path needs no AH";
    EXPECT_EQ(0u, c.cmd_count(0x503)) << "and no DevX command";
}

TEST_P(test_rc_mlx5, tm_command_qp_uses_iface_gid)
{
    ucs::scoped_setenv env("UCX_RC_MLX5_TM_ENABLE", "y");
    uct_port           pa(a().dev, "rc_mlx5");

    if (GetParam() == link_layer::roce_v2) {
        /* the network drops RoCEv1: GID index 0 would never work here */
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop(a().dev, 1, true, false));
    }

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, pa.open());

    auto *iface = static_cast<uct_rc_mlx5_iface*>(pa.iface());
    ASSERT_TRUE(iface->tm_cmd_qp);
    uint32_t             qpn  = iface->tm_cmd_qp->qpn();
    uct_ib_emu_qp_info_t info = {};
    union ibv_gid        own  = expected_gid(a());

    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qpn, &info));
    EXPECT_EQ(0x3, info.state);
    EXPECT_EQ(qpn, info.remote_qpn) << "connected to itself";
    EXPECT_EQ(0, info.primary.fl) << "no force-loopback capability here";
    if (roce()) {
        EXPECT_EQ(expected_gid_index(), info.primary.src_addr_index)
                << "the interface's GID, not index 0";
        EXPECT_EQ(a().mac, info.primary.rmac);
        EXPECT_EQ(0, memcmp(own.raw, info.primary.rgid.data(), 16));
        if (GetParam() == link_layer::roce_v2) {
            EXPECT_EQ(0xC000, info.primary.udp_sport);
        }
    } else {
        EXPECT_EQ(a().lid, info.primary.rlid);
    }

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(c.ah_created, c.ah_destroyed);
    EXPECT_EQ(0u, c.ah_alive);
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_mlx5);
