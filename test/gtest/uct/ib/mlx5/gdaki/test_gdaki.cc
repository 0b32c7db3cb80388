/*
 * rc_gda, the multi-channel RC endpoint, through the public API on the
 * emulated device over InfiniBand, RoCEv1 and RoCEv2: every channel connects
 * to the peer's channel of the same index, and an endpoint connect resolves
 * the destination with exactly one transient AH however many channels it has.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <algorithm>
#include <cerrno>

using namespace ib_test;

class test_rc_gda : public rc_api_test {
protected:
    static knobs_t channels(unsigned n)
    {
        return {{"NUM_CHANNELS", std::to_string(n)}};
    }

    /* An endpoint on a and one on b, each with @a n channels, not connected */
    struct pair {
        uct_iface_h iface_a, iface_b;
        uct_ep_h    ep_a, ep_b;
        ep_address  addr_a, addr_b;
    };

    bool create_pair(unsigned n, pair *p)
    {
        p->iface_a = open_iface("rc_gda", a(), channels(n));
        p->iface_b = open_iface("rc_gda", b(), channels(n));
        if ((p->iface_a == nullptr) || (p->iface_b == nullptr)) {
            return false;
        }
        p->ep_a = create_ep(p->iface_a);
        p->ep_b = create_ep(p->iface_b);
        if ((p->ep_a == nullptr) || (p->ep_b == nullptr)) {
            return false;
        }
        p->addr_a = address(p->iface_a, p->ep_a);
        p->addr_b = address(p->iface_b, p->ep_b);
        return true;
    }

    void expect_channels(const ep_address &from_addr, const peer &from,
                         const ep_address &to_addr, const peer &to) const
    {
        std::vector<uint32_t> from_qpns = qpns(from_addr);
        std::vector<uint32_t> to_qpns   = qpns(to_addr);

        ASSERT_EQ(from_qpns.size(), to_qpns.size());
        for (size_t i = 0; i < from_qpns.size(); ++i) {
            SCOPED_TRACE("channel " + std::to_string(i));
            expect_qpc(from_qpns[i], from, to, to_qpns[i]);
        }
    }
};

TEST_P(test_rc_gda, listed_on_devx_ports)
{
    std::vector<std::string> res = tl_resources(a());

    EXPECT_EQ(1, std::count(res.begin(), res.end(), "rc_gda/" + port_name(a())));
}

TEST_P(test_rc_gda, iface_attr)
{
    for (unsigned n : {1u, 4u, 16u}) {
        SCOPED_TRACE(std::to_string(n) + " channels");
        uct_iface_h iface = open_iface("rc_gda", a(), channels(n));
        ASSERT_NE(nullptr, iface);

        uct_iface_attr_t attr = query(iface);
        EXPECT_EQ(3u * n, attr.ep_addr_len) << "a 24-bit QP number per channel";
        EXPECT_EQ(0u, attr.iface_addr_len);
        EXPECT_EQ(roce() ? 17u : 3u, attr.device_addr_len);
        EXPECT_TRUE(attr.cap.flags & UCT_IFACE_FLAG_CONNECT_TO_EP);
    }
}

TEST_P(test_rc_gda, channels_rounded_up_to_power_of_two)
{
    uct_iface_h iface = open_iface("rc_gda", a(), channels(3));
    ASSERT_NE(nullptr, iface);
    EXPECT_EQ(3u * 4, query(iface).ep_addr_len);
}

TEST_P(test_rc_gda, invalid_num_channels)
{
    for (unsigned n : {0u, 257u}) {
        SCOPED_TRACE(std::to_string(n) + " channels");
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
        uct_iface_h             iface;

        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  try_open_iface("rc_gda", a(), channels(n), &iface));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    port_name(a()) +
                                    ": invalid UCX_RC_GDA_NUM_CHANNELS " +
                                    std::to_string(n))) << capture.dump();
    }
}

TEST_P(test_rc_gda, every_channel_connects_with_one_ah)
{
    for (unsigned n : {1u, 4u, 16u}) {
        SCOPED_TRACE(std::to_string(n) + " channels");
        pair p;
        ASSERT_TRUE(create_pair(n, &p));

        std::vector<uint32_t> qa = qpns(p.addr_a), qb = qpns(p.addr_b);
        ASSERT_EQ(n, qa.size());
        ASSERT_EQ(n, qb.size());
        for (uint32_t qpn : qa) {
            EXPECT_EQ(qp_state_init, qp_info(qpn).state) << "qp " << qpn;
        }

        uct_ib_emu_counters_reset();
        ASSERT_EQ(UCS_OK, connect(p.ep_a, p.addr_b));
        uct_ib_emu_counters_t c = uct_ib_emu_counters();
        EXPECT_EQ(roce() ? 1u : 0u, c.ah_created) << "one AH per ep connect";
        EXPECT_EQ(c.ah_created, c.ah_destroyed);
        EXPECT_EQ(0u, c.ah_alive);
        EXPECT_EQ(n, c.cmd_count(op_init2rtr));
        EXPECT_EQ(n, c.cmd_count(op_rtr2rts));

        ASSERT_EQ(UCS_OK, connect(p.ep_b, p.addr_a));
        expect_ah(roce() ? 2 : 0);

        expect_channels(p.addr_a, a(), p.addr_b, b());
        expect_channels(p.addr_b, b(), p.addr_a, a());
    }
}

TEST_P(test_rc_gda, connect_twice_fails)
{
    pair p;
    ASSERT_TRUE(create_pair(4, &p));
    ASSERT_EQ(UCS_OK, connect(p.ep_a, p.addr_b));

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    uct_ib_emu_counters_reset();
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS, connect(p.ep_a, p.addr_b));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "already connected"))
            << capture.dump();
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(op_init2rtr));
    expect_ah(0);
}

TEST_P(test_rc_gda, peer_with_other_channel_count_is_refused)
{
    uct_iface_h iface_a = open_iface("rc_gda", a(), channels(4));
    uct_iface_h iface_b = open_iface("rc_gda", b(), channels(8));
    ASSERT_TRUE(iface_a && iface_b);
    uct_ep_h ep_a = create_ep(iface_a);
    uct_ep_h ep_b = create_ep(iface_b);
    ASSERT_TRUE(ep_a && ep_b);

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    uct_ib_emu_counters_reset();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, connect(ep_a, address(iface_b, ep_b)));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "expected 12 (4 channels)"))
            << capture.dump();
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(op_init2rtr));
    expect_ah(0);
}

TEST_P(test_rc_gda, ah_failure_leaves_every_channel_in_init)
{
    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand connects without an AH");
    }

    pair p;
    ASSERT_TRUE(create_pair(4, &p));

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", 1, EHOSTUNREACH));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
        EXPECT_EQ(UCS_ERR_UNREACHABLE, connect(p.ep_a, p.addr_b));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "create_ah("))
                << capture.dump();
    }
    for (uint32_t qpn : qpns(p.addr_a)) {
        EXPECT_EQ(qp_state_init, qp_info(qpn).state) << "qp " << qpn;
    }
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(op_init2rtr));
    expect_ah(0);

    /* nothing was spoiled: the same endpoint connects once the fault is gone */
    ASSERT_EQ(UCS_OK, connect(p.ep_a, p.addr_b));
    expect_channels(p.addr_a, a(), p.addr_b, b());
    expect_ah(1);
}

/* A connect that fails part-way (channel 2 of 4, at either transition)
 * leaves no channel behind: every one is back in INIT and the same
 * endpoint connects at the next try. */
TEST_P(test_rc_gda, failure_part_way_rolls_every_channel_back)
{
    for (uint16_t opcode : {op_init2rtr, op_rtr2rts}) {
        SCOPED_TRACE(opcode == op_init2rtr ? "INIT2RTR" : "RTR2RTS");
        pair p;
        ASSERT_TRUE(create_pair(4, &p));

        ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(opcode, 1, 0x3, 0x5a5a10, 2));
        {
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
            EXPECT_EQ(UCS_ERR_INVALID_PARAM, connect(p.ep_a, p.addr_b));
            EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "syndrome 0x5a5a10"))
                    << capture.dump();
        }
        EXPECT_EQ(0u, uct_ib_emu_pending_faults());
        for (uint32_t qpn : qpns(p.addr_a)) {
            EXPECT_EQ(qp_state_init, qp_info(qpn).state) << "qp " << qpn;
        }

        ASSERT_EQ(UCS_OK, connect(p.ep_a, p.addr_b));
        ASSERT_EQ(UCS_OK, connect(p.ep_b, p.addr_a));
        expect_channels(p.addr_a, a(), p.addr_b, b());
    }
}

TEST_P(test_rc_gda, stale_mac_is_never_reused)
{
    const uct_ib_emu_mac_t moved = {0x02, 0x11, 0x22, 0x33, 0x44, 0x99};
    constexpr unsigned     n     = 4;

    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand routes by LID: there is no MAC to go stale");
    }

    pair first;
    ASSERT_TRUE(create_pair(n, &first));
    ASSERT_EQ(UCS_OK, connect(first.ep_a, first.addr_b));
    for (uint32_t qpn : qpns(first.addr_a)) {
        EXPECT_EQ(b().mac, qp_info(qpn).primary.rmac) << "qp " << qpn;
    }

    /* The peer moves: same GID, new MAC (bond fail-over, VF moved, ...) */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, moved));

    /* A new endpoint to the same peer interface, through the same ifaces */
    uct_ep_h   ep_a2   = create_ep(first.iface_a);
    uct_ep_h   ep_b2   = create_ep(first.iface_b);
    ASSERT_TRUE(ep_a2 && ep_b2);
    ep_address addr_a2 = address(first.iface_a, ep_a2);
    ep_address addr_b2 = address(first.iface_b, ep_b2);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, connect(ep_a2, addr_b2));
    expect_ah(1);

    std::vector<uint32_t> qa2 = qpns(addr_a2), qb2 = qpns(addr_b2);
    ASSERT_EQ(n, qa2.size());
    for (size_t i = 0; i < n; ++i) {
        SCOPED_TRACE("channel " + std::to_string(i));
        uct_ib_emu_qp_info_t info = qp_info(qa2[i]);
        EXPECT_EQ(moved, info.primary.rmac)
                << "the new connection must carry the peer's current MAC";
        EXPECT_EQ(qb2[i], info.remote_qpn);
    }
    for (uint32_t qpn : qpns(first.addr_a)) {
        EXPECT_EQ(b().mac, qp_info(qpn).primary.rmac)
                << "an existing connection keeps what it was given";
    }
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_gda);
