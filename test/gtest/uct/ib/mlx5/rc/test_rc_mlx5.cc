/*
 * rc_mlx5 and rc_verbs endpoints through the UCT API on the emulated device,
 * and the tag-matching command QP: every DevX connect goes through the
 * transient-AH helper.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <ucs/config/parser.h>
#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>

#include <cerrno>
#include <cstring>

using namespace ib_test;

class test_rc_mlx5 : public rc_api_test {
};

TEST_P(test_rc_mlx5, iface_attributes)
{
    uct_iface_attr_t attr = query(open_iface("rc_mlx5", a()));

    EXPECT_TRUE(attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP);
    EXPECT_EQ(3u, attr.ep_addr_len);
    EXPECT_EQ(0u, attr.iface_addr_len);
    EXPECT_EQ(roce() ? 17u : 3u, attr.device_addr_len);
}

TEST_P(test_rc_mlx5, connect_to_ep)
{
    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());

    uct_ib_emu_counters_reset();
    auto qpn = connect_pair(ia, ib);
    expect_qpc(qpn.first, a(), b(), qpn.second);
    expect_qpc(qpn.second, b(), a(), qpn.first);
    expect_ah(roce() ? 2 : 0);
}

TEST_P(test_rc_mlx5, connect_twice_is_refused)
{
    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());
    uct_ep_h    ea = create_ep(ia), eb = create_ep(ib);
    ep_address  ab = address(ib, eb);

    ASSERT_EQ(UCS_OK, connect(ea, ab));
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, connect(ea, ab));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "already connected"));
}

TEST_P(test_rc_mlx5, connect_needs_device_address)
{
    uct_iface_h                   ia     = open_iface("rc_mlx5", a());
    uct_iface_h                   ib     = open_iface("rc_mlx5", b());
    uct_ep_h                      ea     = create_ep(ia);
    ep_address                    ab     = address(ib, create_ep(ib));
    uct_ep_connect_to_ep_params_t params = {};

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ep_connect_to_ep_v2(ea, nullptr,
                                      reinterpret_cast<const uct_ep_addr_t*>(
                                              ab.ep.data()), &params));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "connect needs the peer's device address"));
}

TEST_P(test_rc_mlx5, rd_atomic_depth_rounds_up_and_is_bounded)
{
    const struct {
        const char *value;
        unsigned   log_depth;
        bool       clamped;
    } cases[] = {
        {"3", 2, false},           /* rounded up to 4 */
        {"1", 0, false},
        {"16", 4, false},
        {"1024", 4, true},         /* the emulated HCA's log_max_ra_*_qp */
        {"3000000000", 4, true}    /* above 2^31: no power of two fits */
    };

    for (const char *tl : {"rc_mlx5", "rc_verbs"}) {
        ucs_config_parser_forget_reported_values(); /* a process per tl */
        for (const auto &c : cases) {
            SCOPED_TRACE(std::string(tl) + " " + c.value);
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
            uct_iface_h ia   = open_iface(tl, a(), {{"MAX_RD_ATOMIC", c.value}});
            uct_iface_h ib   = open_iface(tl, b());
            auto        qpn  = connect_pair(ia, ib);
            auto        info = qp_info(qpn.first);

            EXPECT_EQ(c.log_depth, info.log_rra_max);
            EXPECT_EQ(c.log_depth, info.log_sra_max);
            EXPECT_EQ(c.clamped ? 1u : 0u,
                      capture.count(UCS_LOG_LEVEL_WARN,
                                    "UCX_RC_MAX_RD_ATOMIC=")) << capture.dump();
            EXPECT_EQ(c.clamped ? 1u : 0u,
                      capture.count(UCS_LOG_LEVEL_WARN, "using 16"))
                    << capture.dump();
        }
    }
}

/* The failed call's errno reaches the log and the status, whatever the
 * error path does before it logs */
TEST_P(test_rc_mlx5, cq_failure_names_its_errno)
{
    for (int err : {ENOMEM, EINVAL}) {
        SCOPED_TRACE(err);
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        uct_iface_h             iface = nullptr;

        ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_cq", 1, err));
        EXPECT_EQ((err == ENOMEM) ? UCS_ERR_NO_MEMORY : UCS_ERR_IO_ERROR,
                  try_open_iface("rc_mlx5", a(), {}, &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    "create_cq(" + port_name(a()) + ", cqe 512) "
                                    "failed: " + strerror(err)))
                << capture.dump();
    }
}

TEST_P(test_rc_mlx5, stale_mac_through_uct_api)
{
    const uct_ib_emu_mac_t moved = {0x02, 0x11, 0x22, 0x33, 0x44, 0x77};

    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand routes by LID: there is no MAC to go stale");
    }

    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());

    auto first = connect_pair(ia, ib);
    EXPECT_EQ(b().mac, qp_info(first.first).primary.rmac);

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, moved));
    auto second = connect_pair(ia, ib);
    EXPECT_EQ(moved, qp_info(second.first).primary.rmac)
            << "a new connection carries the peer's current MAC";
    EXPECT_EQ(b().mac, qp_info(first.first).primary.rmac);
}

TEST_P(test_rc_mlx5, verbs_fallback_connects)
{
    uct_iface_h ia = open_iface("rc_verbs", a());
    uct_iface_h ib = open_iface("rc_verbs", b());

    uct_ib_emu_counters_reset();
    auto                 qpn  = connect_pair(ia, ib);
    uct_ib_emu_qp_info_t info = qp_info(qpn.first);

    EXPECT_FALSE(info.devx);
    EXPECT_EQ(qp_state_rts, info.state);
    EXPECT_EQ(qpn.second, info.remote_qpn);
    if (roce()) {
        EXPECT_EQ(b().mac, info.primary.rmac) << "resolved by the kernel at RTR";
    }

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(0u, c.ah_created) << "the verbs path needs no AH";
    EXPECT_EQ(0u, c.cmd_count(op_init2rtr)) << "and no DevX command";
}

TEST_P(test_rc_mlx5, tm_command_qp_uses_iface_gid)
{
    if (GetParam() == link_layer::roce_v2) {
        /* the network drops RoCEv1: GID index 0 would never work here */
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop(a().dev, 1, true, false));
    }

    uct_ib_emu_counters_reset();
    uct_iface_h ia = open_iface("rc_mlx5", a(), {{"TM_ENABLE", "y"}});
    ASSERT_NE(nullptr, ia);

    auto *iface = static_cast<uct_rc_mlx5_iface*>(ia);
    ASSERT_TRUE(iface->tm_cmd_qp);
    uint32_t             qpn  = iface->tm_cmd_qp->qpn();
    uct_ib_emu_qp_info_t info = qp_info(qpn);
    union ibv_gid        own  = expected_gid(a());

    EXPECT_EQ(qp_state_rts, info.state);
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
