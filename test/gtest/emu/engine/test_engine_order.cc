/*
 * Reads and atomics in flight: a WQE beyond the initiator depth
 * (2^log_sra_max outstanding reads/atomics) and a fenced WQE
 * (MLX5_WQE_CTRL_FENCE) both wait until the reads/atomics before them have
 * completed. The responses are lost on the way back (the requester's MAC
 * moved), so the earlier atomic stays outstanding for as long as the test
 * wants, and what reached the responder shows in its memory.
 *
 * Today's requester has one WQE in flight at a time, so these hold by
 * construction; they pin the rules for a requester that keeps several in
 * flight (responses that come back later, from another process).
 */
#include "emu/engine_test.h"


namespace {

using namespace emu_test;

class test_emu_engine_order : public engine_fixture {
protected:
    static constexpr uint64_t TIMEOUT_NS = 4096ull << 10;

    static qp_params params(uint8_t log_sra_max)
    {
        qp_params p;

        p.retry_count = 7;
        p.ack_timeout = 10;
        p.log_sra_max = log_sra_max;
        return p;
    }

    /* A fetch-and-add of add at remote, its original value to *result */
    void post_fadd(engine_qp &q, uint64_t *remote, uint32_t rkey,
                   uint64_t *result, uint32_t lkey, uint64_t add,
                   uint8_t fence = 0)
    {
        struct mlx5_wqe_atomic_seg a = {};
        a.swap_add = htobe64(add);
        auto wqe   = ctrl(q, MLX5_OPCODE_ATOMIC_FA);
        wqe[11]   |= fence;
        raddr(wqe, remote, rkey);
        append(wqe, a);
        data(wqe, result, 8, lkey);
        post(q, wqe);
    }

    /* The responses of mlx5_0's QPs are lost until restore_responses() */
    static void lose_responses()
    {
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1, MOVED_MAC));
    }

    static void restore_responses()
    {
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1, MAC_MLX5_0));
    }

    /* Let the requester time out and retry a few times */
    static void retry_a_while()
    {
        for (int i = 0; i < 3; ++i) {
            uct_ib_emu_engine_run();
            uct_ib_emu_clock_advance(TIMEOUT_NS);
        }
        uct_ib_emu_engine_run();
    }

    static const uct_ib_emu_mac_t MOVED_MAC;
};

const uct_ib_emu_mac_t test_emu_engine_order::MOVED_MAC =
        {0x02, 0xc9, 0x00, 0x00, 0x00, 0x44};


/* Depth 1: the second atomic is not sent while the first is outstanding */
TEST_F(test_emu_engine_order, atomic_beyond_initiator_depth_waits) {
    connect_pair(m_a, m_b, params(0));
    uint64_t remote = 100, result[2] = {};
    struct ibv_mr *rmr = reg(m_b, &remote, 8);
    struct ibv_mr *lmr = reg(m_a, result, sizeof(result));

    lose_responses();
    post_fadd(m_a, &remote, rmr->rkey, &result[0], lmr->lkey, 1);
    post_fadd(m_a, &remote, rmr->rkey, &result[1], lmr->lkey, 10);
    retry_a_while();
    EXPECT_EQ(101u, remote) << "only the first atomic reached the responder";
    EXPECT_TRUE(poll_all(m_a).empty());

    restore_responses();
    uct_ib_emu_clock_advance(TIMEOUT_NS);
    uct_ib_emu_engine_run();
    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(2u, cqes.size());
    EXPECT_EQ(int(MLX5_CQE_REQ), int(cqes[0].opcode));
    EXPECT_EQ(int(MLX5_CQE_REQ), int(cqes[1].opcode));
    EXPECT_EQ(100u, result[0]);
    EXPECT_EQ(101u, result[1]);
    EXPECT_EQ(111u, remote);
}

/* A fenced SEND waits for the atomic before it, within the depth */
TEST_F(test_emu_engine_order, fenced_send_waits_for_outstanding_atomic) {
    connect_pair(m_a, m_b, params(2));
    uint64_t remote = 7, result = 0, rbuf = 0, v = 42;
    struct ibv_mr *rmr = reg(m_b, &remote, 8);
    struct ibv_mr *bmr = reg(m_b, &rbuf, 8);
    struct ibv_mr *lmr = reg(m_a, &result, 8);

    post_recv(m_b, {dseg(&rbuf, 8, bmr->lkey)});
    lose_responses();
    post_fadd(m_a, &remote, rmr->rkey, &result, lmr->lkey, 1);
    auto send = ctrl(m_a, MLX5_OPCODE_SEND);
    send[11] |= MLX5_WQE_CTRL_FENCE;
    inline_data(send, &v, 8);
    post(m_a, send);

    retry_a_while();
    EXPECT_EQ(8u, remote);
    EXPECT_TRUE(poll_all(m_b).empty()) << "the fenced SEND was not received";
    EXPECT_EQ(0u, rbuf);

    restore_responses();
    uct_ib_emu_clock_advance(TIMEOUT_NS);
    uct_ib_emu_engine_run();
    EXPECT_EQ(2u, poll_all(m_a).size());
    poll_one(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(42u, rbuf);
    EXPECT_EQ(7u, result);
}

/* A fenced atomic behind a read, on a QP whose depth would allow both */
TEST_F(test_emu_engine_order, fenced_atomic_waits_for_outstanding_read) {
    connect_pair(m_a, m_b, params(2));
    uint64_t remote = 3, src = 0x1122, dst = 0, result = 0;
    struct ibv_mr *rmr = reg(m_b, &remote, 8);
    struct ibv_mr *smr = reg(m_b, &src, 8);
    struct ibv_mr *lmr = reg(m_a, &result, 8);
    struct ibv_mr *dmr = reg(m_a, &dst, 8);

    lose_responses();
    auto rd = ctrl(m_a, MLX5_OPCODE_RDMA_READ);
    raddr(rd, &src, smr->rkey);
    data(rd, &dst, 8, dmr->lkey);
    post(m_a, rd);
    post_fadd(m_a, &remote, rmr->rkey, &result, lmr->lkey, 1,
              MLX5_WQE_CTRL_FENCE);

    retry_a_while();
    EXPECT_EQ(3u, remote) << "the fenced atomic did not execute";

    restore_responses();
    uct_ib_emu_clock_advance(TIMEOUT_NS);
    uct_ib_emu_engine_run();
    EXPECT_EQ(2u, poll_all(m_a).size());
    EXPECT_EQ(0x1122u, dst);
    EXPECT_EQ(3u, result);
    EXPECT_EQ(4u, remote);
}

} // namespace
