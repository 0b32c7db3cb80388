/*
 * The validated AV cache (UCX_IB_AH_CACHE=validated) through the UCT API and
 * the tools' interface, on the emulated device's RoCE ports: a warm cache
 * makes no AH, a MAC move under live traffic reaches the next connect and
 * only for the destination that moved, lost events flush the cache into the
 * transient path with one warning, and a storm of neighbour events during
 * 10,000 connects never lets a stale MAC into a QP.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <uct/api/tools/ib_ah_cache.h>
#include <uct/api/tools/rc_mlx5_connect.h>

#include <algorithm>
#include <functional>
#include <memory>

using namespace ib_test;

class test_ah_cache : public rc_api_test {
protected:
    void init() override
    {
        UCS_SKIP_ON_HWPATH("on the default glue the cache listens to this "
                           "machine's kernel, whose neighbour table is not "
                           "the emulated fabric's");
        rc_api_test::init();
        if (!roce()) {
            UCS_TEST_SKIP_R("InfiniBand connects by LID: no AH to cache");
        }
        m_md_knobs = {{"AH_CACHE", "validated"}};
    }

    /* rc_mlx5 on a and b, the AH counter zeroed after their open (an
     * interface's own self-connected QP may make one) */
    std::pair<uct_iface_h, uct_iface_h> open_two(const knobs_t &knobs_a = {})
    {
        uct_iface_h ia = open_iface("rc_mlx5", a(), knobs_a);
        uct_iface_h ib = open_iface("rc_mlx5", b());

        EXPECT_TRUE(ia && ib);
        uct_ib_emu_counters_reset();
        return {ia, ib};
    }

    static ucs_status_t err_handler(void *arg, uct_ep_h, ucs_status_t status)
    {
        static_cast<std::vector<ucs_status_t>*>(arg)->push_back(status);
        return UCS_OK;
    }

    uct_ib_av_cache_stats_t stats(const peer &p)
    {
        uct_ib_av_cache_stats_t s = {};

        EXPECT_EQ(UCS_OK, uct_ib_md_av_cache_stats(md(p), &s));
        return s;
    }

    static void count_am(void *arg)
    {
        ++*static_cast<unsigned*>(arg);
    }

    static ucs_status_t am_cb(void *arg, void *, size_t, unsigned)
    {
        count_am(arg);
        return UCS_OK;
    }

    void wait_for_progress(uct_iface_h ia, uct_iface_h ib,
                           const std::function<bool()> &done, const char *what)
    {
        const ucs_time_t deadline = ucs_get_time() + ucs::test_timeout(10);

        while (!done()) {
            uct_iface_progress(ia);
            uct_iface_progress(ib);
            ASSERT_LT(ucs_get_time(), deadline) << "waiting for " << what;
        }
    }

    std::pair<uct_ep_h, uct_ep_h> pair_of_eps(uct_iface_h ia, uct_iface_h ib)
    {
        uct_ep_h   ea = create_ep(ia), eb = create_ep(ib);
        ep_address aa = address(ia, ea), ab = address(ib, eb);

        EXPECT_EQ(UCS_OK, connect(ea, ab));
        EXPECT_EQ(UCS_OK, connect(eb, aa));
        return {ea, eb};
    }
};

TEST_P(test_ah_cache, transient_is_the_default)
{
    uct_ib_av_cache_stats_t s;

    m_md_knobs.clear();
    auto [ia, ib] = open_two();
    EXPECT_EQ(UCS_ERR_UNSUPPORTED, uct_ib_md_av_cache_stats(md(a()), &s));

    connect_pair(ia, ib);
    connect_pair(ia, ib);
    expect_ah(4);
}

TEST_P(test_ah_cache, a_warm_cache_makes_no_ah_and_programs_the_same_path)
{
    auto [ia, ib] = open_two();

    connect_pair(ia, ib);
    expect_ah(2);

    uct_ib_emu_counters_reset();
    auto second = connect_pair(ia, ib);
    expect_ah(0);
    expect_qpc(second.first, a(), b(), second.second);
    expect_qpc(second.second, b(), a(), second.first);

    for (const peer *p : {&a(), &b()}) {
        uct_ib_av_cache_stats_t s = stats(*p);
        EXPECT_EQ(2u, s.lookups);
        EXPECT_EQ(1u, s.hits);
        EXPECT_EQ(1u, s.ah_creates);
        EXPECT_EQ(1u, s.entries);
        EXPECT_FALSE(s.transient);
    }
}

TEST_P(test_ah_cache, mac_moved_under_traffic_then_reconnect)
{
    const uct_ib_emu_mac_t    moved = {0x02, 0x11, 0x22, 0x33, 0x44, 0x77};
    unsigned                  received = 0;
    std::vector<ucs_status_t> failures;

    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1e4)); /* retries in ms */
    m_err_handler     = err_handler;
    m_err_handler_arg = &failures;
    uct_iface_h ia = open_iface("rc_mlx5", a(), {{"TIMEOUT", "10ms"},
                                                 {"RETRY_COUNT", "3"}});
    uct_iface_h ib = open_iface("rc_mlx5", b());
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(ib, 0, am_cb, &received, 0));

    auto live = pair_of_eps(ia, ib);
    pair_of_eps(ia, ib); /* warm: both directions cached */
    for (unsigned i = 0; i < 8; ++i) {
        EXPECT_EQ(UCS_OK, uct_ep_am_short(live.first, 0, i, nullptr, 0));
    }
    wait_for_progress(ia, ib, [&] { return received == 8; }, "the traffic");

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, moved));
    {
        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_OK, uct_ep_am_short(live.first, 0, 9, nullptr, 0));
        wait_for_progress(ia, ib, [&] { return !failures.empty(); },
                          "the live connection to fail at the old MAC");
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, failures.at(0));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, "RETRY_EXC"))
                << capture.dump();
    }
    uct_ib_emu_counters_reset();

    auto fresh = pair_of_eps(ia, ib);
    const uint32_t qpn_a = qpns(address(ia, fresh.first)).at(0);
    EXPECT_EQ(moved, qp_info(qpn_a).primary.rmac)
            << "the new connection carries the peer's new MAC";
    expect_ah(1); /* a to b resolved again; b to a did not change */
    EXPECT_EQ(1u, stats(a()).invalidated);
    EXPECT_EQ(0u, stats(b()).invalidated);

    EXPECT_EQ(UCS_OK, uct_ep_am_short(fresh.first, 0, 10, nullptr, 0));
    wait_for_progress(ia, ib, [&] { return received == 9; },
                      "traffic at the new MAC");
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1));
}

TEST_P(test_ah_cache, lost_events_flush_the_cache_with_one_warning)
{
    auto [ia, ib] = open_two();

    connect_pair(ia, ib);
    ASSERT_EQ(1u, stats(a()).entries);

    uct_ib_emu_counters_reset();
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op(UCT_IB_GLUE_OP_neigh_monitor_recv, 1,
                                         ENOBUFS));
    {
        ucs::scoped_log_capture capture;
        connect_pair(ia, ib); /* a's drain loses events; b's does not */
        connect_pair(ia, ib);
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                    "neighbour events were lost"))
                << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, port_name(a())))
                << capture.dump();
    }
    expect_ah(2); /* a resolves through a transient AH every time now */

    uct_ib_av_cache_stats_t s = stats(a());
    EXPECT_TRUE(s.transient);
    EXPECT_EQ(0u, s.entries);
    EXPECT_FALSE(stats(b()).transient);
}

/* A miss whose neighbour the table does not confirm is not cached: here the
 * request the cache sends after the AH is not taken */
TEST_P(test_ah_cache, an_unconfirmed_destination_is_not_cached)
{
    auto [ia, ib] = open_two();

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op(UCT_IB_GLUE_OP_neigh_monitor_request,
                                         1, EAGAIN));
    auto first = connect_pair(ia, ib); /* a's request fails, b's does not */
    uct_ib_av_cache_stats_t s = stats(a());
    EXPECT_EQ(1u, s.uncached);
    EXPECT_EQ(0u, s.entries);
    EXPECT_FALSE(s.transient) << "a request not taken confirms nothing, but "
                                 "the listener is fine";
    EXPECT_EQ(b().mac, qp_info(first.first).primary.rmac);

    connect_pair(ia, ib);
    expect_ah(3); /* a twice (the first not cached), b once */
    EXPECT_EQ(1u, stats(a()).entries);
}

/* The key holds what the AV carries that an interface chooses: interfaces
 * of one md with another traffic class or hop limit get AVs of their own */
TEST_P(test_ah_cache, interfaces_with_other_path_knobs_have_entries_of_their_own)
{
    uct_iface_h ia1 = open_iface("rc_mlx5", a());
    uct_iface_h ia2 = open_iface("rc_mlx5", a(), {{"HOP_LIMIT", "7"},
                                                  {"TRAFFIC_CLASS", "64"}});
    uct_iface_h ib  = open_iface("rc_mlx5", b());
    ASSERT_TRUE(ia1 && ia2 && ib);
    uct_ib_emu_counters_reset();

    auto p1 = connect_pair(ia1, ib);
    auto p2 = connect_pair(ia2, ib);
    auto p3 = connect_pair(ia2, ib); /* warm */
    EXPECT_EQ(2u, stats(a()).entries);
    EXPECT_EQ(1u, stats(a()).hits);

    const uct_ib_emu_qp_info_t q1 = qp_info(p1.first);
    const uct_ib_emu_qp_info_t q3 = qp_info(p3.first);
    EXPECT_EQ(7u, q3.primary.hop_limit) << "the cached AV of ia2's knobs";
    EXPECT_NE(q1.primary.hop_limit, q3.primary.hop_limit);
    if (GetParam() == link_layer::roce_v2) {
        EXPECT_EQ(64u >> 2, q3.primary.dscp);
    }
    (void)p2;
}

TEST_P(test_ah_cache, a_listener_that_cannot_open_leaves_the_cache_transient)
{
    ucs::scoped_log_capture capture;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op(UCT_IB_GLUE_OP_neigh_monitor_open, 1,
                                         EMFILE));
    auto [ia, ib] = open_two();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                "cannot listen to neighbour events"))
            << capture.dump();

    connect_pair(ia, ib);
    connect_pair(ia, ib);
    expect_ah(3); /* a twice, b once */
    EXPECT_TRUE(stats(a()).transient);
}

/*
 * 10,000 connects of one interface to its peer while the peer's MAC moves
 * every few connects and unrelated neighbours change in between: every QP
 * carries the MAC the neighbour table had when it connected, the cache holds
 * one entry, and AHs are made only after moves.
 */
TEST_P(test_ah_cache, storm_of_events_during_10000_connects)
{
    struct qp_deleter {
        void operator()(uct_rc_mlx5_tool_qp_t *qp) const
        {
            uct_rc_mlx5_tool_qp_destroy(qp);
        }
    };
    typedef std::unique_ptr<uct_rc_mlx5_tool_qp_t, qp_deleter> qp_ptr;

    const unsigned connects = (ucs::test_time_multiplier() > 1) ? 2000 : 10000;
    const uct_ib_emu_mac_t macs[3] = {b().mac,
                                      {0x02, 0x11, 0, 0, 0, 0x01},
                                      {0x02, 0x11, 0, 0, 0, 0x02}};
    unsigned moves = 0, current = 0, noise_events = 0;

    auto [ia, ib] = open_two();
    uct_rc_mlx5_tool_qp_t *raw = nullptr;
    ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_qp_create(ib, 4, 4, &raw));
    qp_ptr remote(raw);

    struct ibv_ah_attr   ah_attr;
    std::vector<uint8_t> addr_b = device_address(ib);
    uct_rc_mlx5_tool_ah_attr(ia, reinterpret_cast<uct_device_addr_t*>(
                                     addr_b.data()), 0, &ah_attr);

    uct_ib_emu_counters_reset();
    for (unsigned i = 0; i < connects; ++i) {
        if ((i % 7) == 3) {
            current = (current + 1) % 3;
            ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, macs[current]));
            ++moves;
        }
        if ((i % 3) == 1) { /* a neighbour nobody connects to, on the
                                 segment of both ports */
            uct_ib_emu_mac_t noise = {0x02, 0x22, 0, 0, uint8_t(i >> 8),
                                      uint8_t(i)};
            uct_ib_emu_neigh_set("eth-test", /* the link topology's */
                                 ipv4_gid(0xc6120000 + 100 + (i % 50)),
                                 noise);
            noise_events += 2; /* told on each of the segment's two ports */
        }

        ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_qp_create(ia, 4, 4, &raw));
        qp_ptr qp(raw);
        uct_rc_mlx5_qp_peer_t peer = {qp.get(),
                                      uct_rc_mlx5_tool_qp_num(remote.get())};
        ASSERT_EQ(UCS_OK, uct_rc_mlx5_tool_connect_qps(ia, &peer, 1, &ah_attr));
        ASSERT_EQ(macs[current],
                  qp_info(uct_rc_mlx5_tool_qp_num(qp.get())).primary.rmac)
                << "connect " << i << " after " << moves << " moves";
    }

    uct_ib_av_cache_stats_t s = stats(a());
    EXPECT_GE(s.events, noise_events) << "the noise reached the listener";
    EXPECT_EQ(connects, s.lookups);
    EXPECT_EQ(moves + 1, s.ah_creates) << "one AH after each move, none else";
    EXPECT_EQ(moves, s.invalidated);
    EXPECT_LE(s.entries, 1u) << "one destination, one entry";
    EXPECT_FALSE(s.transient) << "the listener kept up";
    expect_ah(moves + 1);
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, b().mac));
}

UCT_IB_INSTANTIATE_LINK_TEST(test_ah_cache);
