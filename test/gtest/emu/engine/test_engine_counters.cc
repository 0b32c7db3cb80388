/*
 * The engine's counters per port: packets sent (on the sender's port),
 * delivered (on the receiver's), dropped by reason, retries, RNR NAKs, error
 * CQEs by syndrome and CQ overruns, both through emu.h and through the plain
 * C entry point ucx_info -d finds with dlsym() (port_stats.h).
 */
#include "emu/engine_test.h"

#include <emu/api/port_stats.h>

#include <dlfcn.h>


namespace {

using namespace emu_test;

class test_emu_engine_counters : public engine_fixture {
protected:
    static uct_ib_emu_port_counters_t port_counters(const std::string &dev)
    {
        uct_ib_emu_port_counters_t c;

        EXPECT_EQ(UCS_OK, uct_ib_emu_port_counters(dev, 1, &c)) << dev;
        return c;
    }

    /* What ucx_info -d reads: the exported C entry point */
    static uct_ib_emu_port_stats_t port_stats(const char *dev_name)
    {
        auto func = reinterpret_cast<uct_ib_emu_query_port_stats_func_t>(
                dlsym(RTLD_DEFAULT, UCT_IB_EMU_PORT_STATS_SYMBOL));
        uct_ib_emu_port_stats_t stats = {};

        EXPECT_NE(nullptr, func) << UCT_IB_EMU_PORT_STATS_SYMBOL;
        if (func != nullptr) {
            stats.version = UCT_IB_EMU_PORT_STATS_VERSION;
            EXPECT_EQ(UCS_OK, func(dev_name, &stats)) << dev_name;
        }
        return stats;
    }

    void send_inline(engine_qp &q, uint64_t value)
    {
        post_send_inline(q, &value, sizeof(value));
    }
};

const uct_ib_emu_mac_t MOVED_MAC = {0x02, 0xc9, 0x00, 0x00, 0x00, 0x43};


TEST_F(test_emu_engine_counters, sent_and_delivered_on_each_side) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> src(3000, 5), dst(3000, 0);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    /* b reads three MTUs of a: one request, three response packets */
    auto wqe = ctrl(m_b, MLX5_OPCODE_RDMA_READ);
    raddr(wqe, src.data(), smr->rkey);
    data(wqe, dst.data(), dst.size(), dmr->lkey);
    post(m_b, wqe);
    uct_ib_emu_engine_run();
    poll_one(m_b, MLX5_CQE_REQ);
    EXPECT_EQ(src, dst);

    uct_ib_emu_port_counters_t a = port_counters("mlx5_0");
    uct_ib_emu_port_counters_t b = port_counters("mlx5_1");
    EXPECT_EQ(1u, b.packets_sent) << "the read request";
    EXPECT_EQ(1u, a.packets_delivered);
    EXPECT_EQ(3u, a.packets_sent) << "three read response packets";
    EXPECT_EQ(3u, b.packets_delivered);
    EXPECT_EQ(0u, port_counters("mlx5_2").packets_sent) << "not involved";

    /* the emulator's totals are the sum of its ports' */
    uct_ib_emu_counters_t total = uct_ib_emu_counters();
    EXPECT_EQ(4u, total.packets_sent);
    EXPECT_EQ(4u, total.packets_delivered);

    uct_ib_emu_counters_reset();
    EXPECT_EQ(0u, port_counters("mlx5_0").packets_sent);
    EXPECT_EQ(0u, port_counters("mlx5_1").packets_delivered);
}

/* The stale-MAC consequence as ucx_info -d shows it on the requester's port */
TEST_F(test_emu_engine_counters, stale_mac_drops_retries_and_error_cqe) {
    qp_params p;
    p.retry_count = 2;
    p.ack_timeout = 1;
    connect_pair(m_a, m_b, p);

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, MOVED_MAC));
    send_inline(m_a, 1);
    for (unsigned i = 0; i <= p.retry_count; ++i) {
        uct_ib_emu_engine_run();
        uct_ib_emu_clock_advance(4096ull << p.ack_timeout);
    }
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));

    uct_ib_emu_port_counters_t a = port_counters("mlx5_0");
    EXPECT_EQ(3u, a.packets_sent);
    EXPECT_EQ(3u, a.drop_count(UCT_IB_EMU_DROP_MAC));
    EXPECT_EQ(2u, a.retries);
    EXPECT_EQ(1u, a.err_cqe_count(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR));
    EXPECT_EQ(0u, port_counters("mlx5_1").packets_delivered);

    uct_ib_emu_port_stats_t stats = port_stats("mlx5_0:1");
    EXPECT_EQ(3u, stats.packets_sent);
    EXPECT_EQ(0u, stats.packets_delivered);
    EXPECT_EQ(3u, stats.packets_dropped);
    EXPECT_EQ(2u, stats.retries);
    EXPECT_EQ(1u, stats.err_cqes);
    ASSERT_EQ(1u, stats.num_drops);
    EXPECT_EQ(3u, stats.drops[0].count);
    EXPECT_STREQ(uct_ib_emu_drop_str(UCT_IB_EMU_DROP_MAC), stats.drops[0].name);
    ASSERT_EQ(1u, stats.num_err_cqes);
    EXPECT_EQ(1u, stats.err_cqe[0].count);
    EXPECT_STREQ("retry count exceeded (0x15)", stats.err_cqe[0].name);
}

TEST_F(test_emu_engine_counters, rnr_naks_on_the_requester_port) {
    qp_params p;
    p.rnr_retry   = 1;
    p.min_rnr_nak = 1; /* 10 us */
    connect_pair(m_a, m_b, p);

    send_inline(m_a, 2);
    uct_ib_emu_engine_run();
    uct_ib_emu_clock_advance(10000);
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));

    EXPECT_EQ(2u, port_counters("mlx5_0").rnr_naks);
    EXPECT_EQ(0u, port_counters("mlx5_1").rnr_naks);
    EXPECT_EQ(2u, port_stats("mlx5_0:1").rnr_naks);
}

TEST_F(test_emu_engine_counters, cq_overrun_on_the_qp_port) {
    connect_pair(m_a, m_b);

    for (uint32_t i = 0; i <= m_a.cq.cqe_cnt; ++i) {
        post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, true));
        uct_ib_emu_engine_run();
    }
    EXPECT_EQ(1u, port_counters("mlx5_0").cq_overruns);
    EXPECT_EQ(1u, port_stats("mlx5_0:1").cq_overruns);
}

TEST_F(test_emu_engine_counters, c_entry_point_checks_its_arguments) {
    auto func = reinterpret_cast<uct_ib_emu_query_port_stats_func_t>(
            dlsym(RTLD_DEFAULT, UCT_IB_EMU_PORT_STATS_SYMBOL));
    uct_ib_emu_port_stats_t stats = {};

    ASSERT_NE(nullptr, func);
    stats.version = UCT_IB_EMU_PORT_STATS_VERSION + 1;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, func("mlx5_0:1", &stats));

    stats.version = UCT_IB_EMU_PORT_STATS_VERSION;
    EXPECT_EQ(UCS_ERR_NO_DEVICE, func("mlx5_0:2", &stats));
    EXPECT_EQ(UCS_ERR_NO_DEVICE, func("mlx5_9:1", &stats));
    EXPECT_EQ(UCS_ERR_NO_DEVICE, func("mlx5_0", &stats));
    EXPECT_EQ(UCS_ERR_NO_DEVICE, func("mlx5_0:1x", &stats));
    EXPECT_EQ(UCS_OK, func("mlx5_2:1", &stats));

    uct_ib_emu_port_counters_t c;
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_port_counters("mlx5_0", 2, &c));
}

} // namespace
