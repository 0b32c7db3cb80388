/*
 * Self-connected and loopback DevX QPs on an HCA with the force-loopback
 * capability for RC QPs, through the public API, over InfiniBand, RoCEv1 and
 * RoCEv2: the rc_mlx5 tag-matching command QP, rc_mlx5 and rc_gda endpoints
 * connected on their own port. On RoCE they loop back with the fl bit and no
 * AH; a connect to another port still resolves the peer through an AH.
 * InfiniBand has no such capability to use: it loops back by its own LID.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <cstdio>
#include <cstring>

using namespace ib_test;

class test_rc_loopback : public rc_api_test {
protected:
    void init() override
    {
        rc_api_test::init();
        set_topology(force_loopback_topology());
    }

    /* Two endpoints of @a tl on one interface of a(), connected to each other */
    void connect_on_own_port(const char *tl, const knobs_t &knobs,
                             ep_address *addr1_p, ep_address *addr2_p)
    {
        uct_iface_h iface = open_iface(tl, a(), knobs);
        ASSERT_NE(nullptr, iface);
        uct_ep_h ep1 = create_ep(iface);
        uct_ep_h ep2 = create_ep(iface);
        ASSERT_TRUE(ep1 && ep2);
        *addr1_p = address(iface, ep1);
        *addr2_p = address(iface, ep2);

        uct_ib_emu_counters_reset();
        ASSERT_EQ(UCS_OK, connect(ep1, *addr2_p));
        ASSERT_EQ(UCS_OK, connect(ep2, *addr1_p));
    }

    void expect_loopback_qpc(uint32_t qpn, uint32_t dest_qpn) const
    {
        if (roce()) {
            expect_fl_qpc(qpn, dest_qpn);
        } else {
            expect_qpc(qpn, a(), a(), dest_qpn);
        }
    }
};

TEST_P(test_rc_loopback, tm_cmd_qp_uses_fl_and_no_ah)
{
    uct_iface_h             iface = nullptr;
    ucs_status_t            status;
    std::vector<ucs::log_line> lines;
    unsigned                qpn = 0, dest_qpn = 0;

    /* Opening an interface probes its GID with an AH on RoCE: the same
     * interface without tag matching tells how many that takes */
    uct_ib_emu_counters_reset();
    ASSERT_NE(nullptr, open_iface("rc_mlx5", a()));
    uint64_t iface_ahs = uct_ib_emu_counters().ah_created;

    uct_ib_emu_counters_reset();
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_DEBUG);
        {
            ucs::scoped_log_level level(UCS_LOG_LEVEL_DEBUG);
            status = try_open_iface("rc_mlx5", a(), {{"TM_ENABLE", "y"}},
                                    &iface);
        }
        ASSERT_EQ(UCS_OK, status);
        lines = capture.lines();
    }

    /* The command QP is no endpoint: its number is in the connect line */
    unsigned found = 0;
    for (const auto &line : lines) {
        const char *p = strstr(line.message.c_str(), ": connected qp 0x");

        if ((p != nullptr) &&
            (sscanf(p, ": connected qp 0x%x to qp 0x%x", &qpn, &dest_qpn) == 2)) {
            ++found;
        }
    }
    ASSERT_EQ(1u, found) << "one QP connected at iface open";
    EXPECT_EQ(qpn, dest_qpn) << "connected to itself";

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(1u, c.cmd_count(op_init2rtr));
    EXPECT_EQ(1u, c.qp_count(qp_state_rts));
    expect_loopback_qpc(qpn, qpn);
    expect_ah(iface_ahs); /* none for the command QP */
}

TEST_P(test_rc_loopback, rc_mlx5_eps_on_own_port)
{
    ep_address addr1, addr2;
    connect_on_own_port("rc_mlx5", {}, &addr1, &addr2);

    expect_loopback_qpc(qpns(addr1).at(0), qpns(addr2).at(0));
    expect_loopback_qpc(qpns(addr2).at(0), qpns(addr1).at(0));
    expect_ah(0);
}

TEST_P(test_rc_loopback, rc_gda_channels_on_own_port)
{
    ep_address addr1, addr2;
    connect_on_own_port("rc_gda", {{"NUM_CHANNELS", "4"}}, &addr1, &addr2);

    std::vector<uint32_t> q1 = qpns(addr1), q2 = qpns(addr2);
    ASSERT_EQ(4u, q1.size());
    ASSERT_EQ(4u, q2.size());
    for (size_t i = 0; i < q1.size(); ++i) {
        SCOPED_TRACE("channel " + std::to_string(i));
        expect_loopback_qpc(q1[i], q2[i]);
        expect_loopback_qpc(q2[i], q1[i]);
    }
    expect_ah(0);
}

TEST_P(test_rc_loopback, other_port_still_resolved_by_ah)
{
    uct_iface_h iface_a = open_iface("rc_mlx5", a());
    uct_iface_h iface_b = open_iface("rc_mlx5", b());
    ASSERT_TRUE(iface_a && iface_b);
    uct_ep_h ep_a = create_ep(iface_a);
    uct_ep_h ep_b = create_ep(iface_b);
    ASSERT_TRUE(ep_a && ep_b);
    ep_address addr_a = address(iface_a, ep_a);
    ep_address addr_b = address(iface_b, ep_b);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, connect(ep_a, addr_b));
    ASSERT_EQ(UCS_OK, connect(ep_b, addr_a));

    /* fl is for the own port only: a peer gets its MAC and GID */
    expect_qpc(qpns(addr_a).at(0), a(), b(), qpns(addr_b).at(0));
    expect_qpc(qpns(addr_b).at(0), b(), a(), qpns(addr_a).at(0));
    expect_ah(roce() ? 2 : 0);
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_loopback);
