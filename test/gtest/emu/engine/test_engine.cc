/*
 * The emulated device's engine against raw WQEs and CQEs: every opcode,
 * inline and gather/scatter, wrap-around, ownership over several passes,
 * SRQ, RNR, remote and local errors, flush, CQ overrun, ordering, a message
 * of several MTUs and the stale-MAC consequence. Step mode, except where
 * the thread is the point.
 */
#include "emu/engine_test.h"

#include <numeric>


namespace {

using namespace emu_test;

class test_emu_engine : public engine_fixture {
};

const uct_ib_emu_mac_t MOVED_MAC = {0x02, 0xc9, 0x00, 0x00, 0x00, 0x42};


TEST_F(test_emu_engine, send_inline) {
    connect_pair(m_a, m_b);
    uint64_t rbuf = 0;
    struct ibv_mr *mr = reg(m_b, &rbuf, sizeof(rbuf));
    const char msg[8] = {'e', 'n', 'g', 'i', 'n', 'e', '!', '\0'};

    post_recv(m_b, {dseg(&rbuf, sizeof(rbuf), mr->lkey)});
    post_send_inline(m_a, msg, sizeof(msg));

    EXPECT_GT(uct_ib_emu_engine_run(), 0u);

    polled_cqe req = poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(m_a.qp.qpn, req.qpn);
    EXPECT_EQ(0u, req.wqe_counter);
    EXPECT_EQ(int(MLX5_OPCODE_SEND), int(req.sop));

    polled_cqe resp = poll_one(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(m_b.qp.qpn, resp.qpn);
    EXPECT_EQ(8u, resp.byte_cnt);
    EXPECT_EQ(0u, resp.wqe_counter);
    EXPECT_EQ(0, memcmp(&rbuf, msg, sizeof(msg)));

    uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(2u, c.packets_sent) << "the request and its ACK";
    EXPECT_EQ(2u, c.packets_delivered);
}

TEST_F(test_emu_engine, send_imm_gather_scatter) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> src(300), dst(400, 0xee);
    std::iota(src.begin(), src.end(), 1);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    /* 100 + 200 bytes gathered, scattered to 50 + 350 */
    post_recv(m_b, {dseg(&dst[0], 50, dmr->lkey),
                    dseg(&dst[50], 350, dmr->lkey)});
    auto wqe = ctrl(m_a, MLX5_OPCODE_SEND_IMM, true, 0x11223344);
    data(wqe, &src[0], 100, smr->lkey);
    data(wqe, &src[100], 200, smr->lkey);
    post(m_a, wqe);
    uct_ib_emu_engine_run();

    poll_one(m_a, MLX5_CQE_REQ);
    polled_cqe resp = poll_one(m_b, MLX5_CQE_RESP_SEND_IMM);
    EXPECT_EQ(300u, resp.byte_cnt);
    EXPECT_EQ(0x11223344u, resp.imm);
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));
    EXPECT_EQ(0xee, dst[300]) << "wrote past the message";
}

TEST_F(test_emu_engine, rdma_write_and_write_imm) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> src(64, 0x5a), dst(128, 0);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    auto w1 = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(w1, &dst[0], dmr->rkey);
    data(w1, src.data(), 64, smr->lkey);
    post(m_a, w1);
    uct_ib_emu_engine_run();
    poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_TRUE(poll_all(m_b).empty()) << "a plain write consumes nothing";
    EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));

    post_recv(m_b, {});
    auto w2 = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE_IMM, true, 0xcafe);
    raddr(w2, &dst[64], dmr->rkey);
    inline_data(w2, "0123456789", 10);
    post(m_a, w2);
    uct_ib_emu_engine_run();
    poll_one(m_a, MLX5_CQE_REQ);
    polled_cqe resp = poll_one(m_b, MLX5_CQE_RESP_WR_IMM);
    EXPECT_EQ(0xcafeu, resp.imm);
    EXPECT_EQ(10u, resp.byte_cnt);
    EXPECT_EQ(0, memcmp(&dst[64], "0123456789", 10));
}

TEST_F(test_emu_engine, rdma_read) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> remote(3000), local(3000, 0);
    std::iota(remote.begin(), remote.end(), 7);
    struct ibv_mr *lmr = reg(m_a, local.data(), local.size());
    struct ibv_mr *rmr = reg(m_b, remote.data(), remote.size());

    auto wqe = ctrl(m_a, MLX5_OPCODE_RDMA_READ);
    raddr(wqe, remote.data(), rmr->rkey);
    data(wqe, &local[0], 1000, lmr->lkey);
    data(wqe, &local[1000], 2000, lmr->lkey);
    post(m_a, wqe);
    uct_ib_emu_engine_run();

    polled_cqe c = poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(3000u, c.byte_cnt);
    EXPECT_EQ(int(MLX5_OPCODE_RDMA_READ), int(c.sop));
    EXPECT_EQ(remote, local);
    /* one request, three response packets of at most 1024 bytes */
    EXPECT_EQ(4u, uct_ib_emu_counters().packets_sent);
}

/* Memory in host order (host endianness mode); 8-byte atomics, standard
 * and masked, answer in host order, 4-byte masked ones big endian */
TEST_F(test_emu_engine, atomics) {
    connect_pair(m_a, m_b);
    uint64_t remote = 100, result = 0;
    struct ibv_mr *lmr = reg(m_a, &result, sizeof(result));
    struct ibv_mr *rmr = reg(m_b, &remote, sizeof(remote));
    auto atomic = [&](uint8_t opcode, uint64_t swap_add, uint64_t compare) {
        struct mlx5_wqe_atomic_seg a;
        auto wqe = ctrl(m_a, opcode);

        raddr(wqe, &remote, rmr->rkey);
        a.swap_add = htobe64(swap_add);
        a.compare  = htobe64(compare);
        append(wqe, a);
        data(wqe, &result, 8, lmr->lkey);
        post(m_a, wqe);
        uct_ib_emu_engine_run();
        poll_one(m_a, MLX5_CQE_REQ);
        return result;
    };

    EXPECT_EQ(100u, atomic(MLX5_OPCODE_ATOMIC_FA, 5, 0));
    EXPECT_EQ(105u, remote);
    EXPECT_EQ(105u, atomic(MLX5_OPCODE_ATOMIC_CS, 7, 104)); /* no match */
    EXPECT_EQ(105u, remote);
    EXPECT_EQ(105u, atomic(MLX5_OPCODE_ATOMIC_CS, 7, 105));
    EXPECT_EQ(7u, remote);
}

TEST_F(test_emu_engine, masked_atomics) {
    connect_pair(m_a, m_b);
    uint64_t remote64 = 0x00ff00ff00ff00ffull, result64 = 0;
    uint32_t remote32 = 0x000000ff, result32 = 0;
    struct ibv_mr *l64 = reg(m_a, &result64, 8);
    struct ibv_mr *l32 = reg(m_a, &result32, 4);
    struct ibv_mr *r64 = reg(m_b, &remote64, 8);
    struct ibv_mr *r32 = reg(m_b, &remote32, 4);

    /* 4-byte masked fetch-add of 1 to each byte: carries stop at bytes */
    {
        struct uct_mlx5_masked_fa32_seg a = {};
        auto wqe = ctrl(m_a, MLX5_OPCODE_ATOMIC_MASKED_FA, true, 0,
                        UCT_MLX5_OPMOD_EXT_ATOMIC(2));
        raddr(wqe, &remote32, r32->rkey);
        a.add            = htobe32(0x01010101);
        a.field_boundary = htobe32(0x80808080);
        append(wqe, a);
        data(wqe, &result32, 4, l32->lkey);
        post(m_a, wqe);
    }
    /* 8-byte masked compare-swap: compare the low byte, swap the high one */
    {
        struct uct_mlx5_masked_cs64_seg a = {};
        auto wqe = ctrl(m_a, MLX5_OPCODE_ATOMIC_MASKED_CS, true, 0,
                        UCT_MLX5_OPMOD_EXT_ATOMIC(3));
        raddr(wqe, &remote64, r64->rkey);
        a.swap         = htobe64(0xab00000000000000ull);
        a.compare      = htobe64(0x00000000000000ffull);
        a.swap_mask    = htobe64(0xff00000000000000ull);
        a.compare_mask = htobe64(0x00000000000000ffull);
        append(wqe, a);
        data(wqe, &result64, 8, l64->lkey);
        post(m_a, wqe);
    }
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(2u, cqes.size());
    EXPECT_EQ(int(MLX5_CQE_REQ), int(cqes[0].opcode));
    EXPECT_EQ(int(MLX5_CQE_REQ), int(cqes[1].opcode));
    EXPECT_EQ(0x000000ffu, be32toh(result32));
    EXPECT_EQ(0x01010100u, remote32);
    EXPECT_EQ(0x00ff00ff00ff00ffull, result64) << "host order";
    EXPECT_EQ(0xabff00ff00ff00ffull, remote64);
}

TEST_F(test_emu_engine, nop_and_unsignaled) {
    connect_pair(m_a, m_b);

    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, false));
    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, false));
    uct_ib_emu_engine_run();
    EXPECT_TRUE(poll_all(m_a).empty()) << "unsignaled WQEs completed";

    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, true));
    uct_ib_emu_engine_run();
    polled_cqe c = poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(2u, c.wqe_counter);
    EXPECT_EQ(0u, uct_ib_emu_counters().packets_sent) << "a NOP is local";
}

TEST_F(test_emu_engine, unknown_opcode_is_local_qp_op_error) {
    connect_pair(m_a, m_b);

    post(m_a, ctrl(m_a, MLX5_OPCODE_TSO)); /* not an RC opcode */
    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, false));
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(2u, cqes.size());
    EXPECT_EQ(int(MLX5_CQE_REQ_ERR), int(cqes[0].opcode));
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR), int(cqes[0].syndrome));
    EXPECT_EQ(0u, cqes[0].wqe_counter);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_WR_FLUSH_ERR), int(cqes[1].syndrome))
            << "the unsignaled WQE behind the error is flushed";
    EXPECT_EQ(1u, cqes[1].wqe_counter);
    EXPECT_EQ(prm::QP_ERR, qp_state(m_a.qp.qpn));
}

TEST_F(test_emu_engine, wqe_with_wrong_index_is_rejected) {
    connect_pair(m_a, m_b);
    auto wqe = ctrl(m_a, MLX5_OPCODE_NOP);

    wqe[2] = 0x05; /* at slot 0, the control segment claims index 5 */
    post(m_a, wqe);
    uct_ib_emu_engine_run();
    polled_cqe c = poll_one(m_a, MLX5_CQE_REQ_ERR);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR), int(c.syndrome));
}

TEST_F(test_emu_engine, wrap_around_and_owner_bit) {
    connect_pair(m_a, m_b);
    constexpr unsigned count = 700; /* 2.7 passes over the 256-entry CQ */
    std::vector<uint8_t> rbuf(128 * 64, 0);
    struct ibv_mr *mr = reg(m_b, rbuf.data(), rbuf.size());
    unsigned req = 0, resp = 0;

    for (unsigned i = 0; i < count; ++i) {
        uint8_t payload[100];
        memset(payload, static_cast<uint8_t>(i), sizeof(payload));

        post_recv(m_b, {dseg(&rbuf[(i % 64) * 128], 128, mr->lkey)});
        /* 100 inline bytes: ds 8, two basic blocks, some across the end */
        post_send_inline(m_a, payload, i % 2 ? sizeof(payload) : 8);
        uct_ib_emu_engine_run();

        std::vector<polled_cqe> a = poll_all(m_a);
        std::vector<polled_cqe> b = poll_all(m_b);
        ASSERT_EQ(1u, a.size()) << "send " << i;
        ASSERT_EQ(1u, b.size()) << "send " << i;
        EXPECT_EQ(int(MLX5_CQE_REQ), int(a[0].opcode));
        EXPECT_EQ(int(MLX5_CQE_RESP_SEND), int(b[0].opcode));
        EXPECT_EQ(uint16_t(i), b[0].wqe_counter) << "the 16-bit counter";
        EXPECT_EQ(payload[0], rbuf[(i % 64) * 128]);
        EXPECT_EQ(payload[0], rbuf[(i % 64) * 128 + b[0].byte_cnt - 1]);
        req  += a.size();
        resp += b.size();
    }

    EXPECT_EQ(count, req);
    EXPECT_EQ(count, resp);
    EXPECT_GT(m_a.cq_ci, 2 * m_a.cq.cqe_cnt) << "the owner bit flipped twice";
    EXPECT_GT(m_a.sq_pi, 10 * engine_qp::SQ_BBS);
}

TEST_F(test_emu_engine, srq_follows_next_links) {
    /* the responder's receives come from an SRQ */
    struct ibv_srq_init_attr sattr = {};
    sattr.attr.max_wr  = 15;
    sattr.attr.max_sge = 1;

    create(m_a, m_ctx0);
    env_init(m_b.env, m_ctx1);
    struct ibv_srq *srq = uct_ib_glue->create_srq(m_b.env.pd, &sattr);
    ASSERT_NE(nullptr, srq);
    struct mlx5dv_srq dsrq = {};
    struct mlx5dv_obj obj  = {};
    dsrq.comp_mask = MLX5DV_SRQ_MASK_SRQN;
    obj.srq.in     = srq;
    obj.srq.out    = &dsrq;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ));

    m_b.cq = dv_cq(m_b.env.cq);
    prm_buf in = create_qp_cmd(m_b.env);
    in.set(prm::QPC + prm::qpc::rq_type, 1);
    in.set(prm::QPC + prm::qpc::srqn, dsrq.srqn);
    in.set(prm::QPC + prm::qpc::log_rq_size, 0);
    in.set(prm::QPC + prm::qpc::log_rq_stride, 0);
    m_b.qp = create_qp(m_b.env, in);
    ASSERT_NE(nullptr, m_b.qp.obj);
    m_qps.push_back(&m_b);
    connect(m_a, m_b, MAC_MLX5_1, qp_params());
    connect(m_b, m_a, MAC_MLX5_0, qp_params());

    uint8_t *ring = static_cast<uint8_t*>(dsrq.buf);
    uint64_t bufs[3] = {};
    struct ibv_mr *mr = reg(m_b, bufs, sizeof(bufs));

    /* the user links entry 0 -> 5 -> 2, keeps a pattern in the reserved
     * bytes, and posts three */
    const uint16_t order[3] = {0, 5, 2};
    for (unsigned i = 0; i < 3; ++i) {
        auto *next = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                ring + order[i] * dsrq.stride);
        memset(next, 0xa5, sizeof(*next));
        next->next_wqe_index = htobe16((i < 2) ? order[i + 1] : 7);
        struct mlx5_wqe_data_seg d = dseg(&bufs[i], 8, mr->lkey);
        memcpy(next + 1, &d, sizeof(d));
    }
    __atomic_store_n(&dsrq.dbrec[0], htobe32(3), __ATOMIC_RELEASE);

    for (uint64_t i = 0; i < 3; ++i) {
        uint64_t v = 0x1000 + i;
        post_send_inline(m_a, &v, 8);
    }
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_b);
    ASSERT_EQ(3u, cqes.size());
    for (unsigned i = 0; i < 3; ++i) {
        EXPECT_EQ(int(MLX5_CQE_RESP_SEND), int(cqes[i].opcode));
        EXPECT_EQ(order[i], cqes[i].wqe_counter);
        EXPECT_EQ(0x1000u + i, bufs[i]);
        auto *next = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                ring + order[i] * dsrq.stride);
        EXPECT_EQ(0xa5, next->rsvd0[0]) << "the device wrote a reserved byte";
        EXPECT_EQ(0xa5, next->rsvd1[10]) << "the device wrote a reserved byte";
    }
    EXPECT_EQ(3u, poll_all(m_a).size());

    /* the SRQ goes after its QP and before the PD */
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(m_b.qp.obj));
    m_b.qp.obj = nullptr;
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
    m_mrs.pop_back();
    EXPECT_EQ(0, uct_ib_glue->destroy_srq(srq));
    destroy(m_b);
    m_qps.pop_back();
}

TEST_F(test_emu_engine, rnr_then_success) {
    qp_params p;
    p.rnr_retry   = 3;
    p.min_rnr_nak = 12; /* 0.64 ms */
    connect_pair(m_a, m_b, p);
    uint64_t rbuf = 0, v = 42;
    struct ibv_mr *mr = reg(m_b, &rbuf, sizeof(rbuf));

    post_send_inline(m_a, &v, 8);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, uct_ib_emu_counters().rnr_naks);
    EXPECT_TRUE(poll_all(m_a).empty());

    /* the RNR timer has not expired: nothing is resent */
    post_recv(m_b, {dseg(&rbuf, 8, mr->lkey)});
    uct_ib_emu_clock_advance(600000);
    uct_ib_emu_engine_run();
    EXPECT_EQ(2u, uct_ib_emu_counters().packets_sent) << "request, RNR NAK";

    uct_ib_emu_clock_advance(40000);
    uct_ib_emu_engine_run();
    poll_one(m_a, MLX5_CQE_REQ);
    poll_one(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(42u, rbuf);
    EXPECT_EQ(1u, uct_ib_emu_counters().rnr_naks);
}

TEST_F(test_emu_engine, rnr_retry_exceeded) {
    qp_params p;
    p.rnr_retry   = 2;
    p.min_rnr_nak = 1; /* 10 us */
    connect_pair(m_a, m_b, p);

    post(m_a, ctrl(m_a, MLX5_OPCODE_SEND));
    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, false));
    for (int i = 0; i < 10; ++i) {
        uct_ib_emu_engine_run();
        uct_ib_emu_clock_advance(10000);
    }

    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(2u, cqes.size());
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR), int(cqes[0].syndrome));
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_WR_FLUSH_ERR), int(cqes[1].syndrome));
    EXPECT_EQ(3u, uct_ib_emu_counters().rnr_naks) << "first try + 2 retries";
    EXPECT_EQ(1u, uct_ib_emu_counters().err_cqe_count(
                          MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR));
}

TEST_F(test_emu_engine, bad_rkey_is_remote_access_error) {
    connect_pair(m_a, m_b);
    uint64_t src = 1, dst = 0;
    struct ibv_mr *smr = reg(m_a, &src, 8);
    struct ibv_mr *dmr = reg(m_b, &dst, 8);

    auto wqe = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(wqe, &dst, dmr->rkey ^ 0x1);
    data(wqe, &src, 8, smr->lkey);
    post(m_a, wqe);
    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, false));
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(2u, cqes.size());
    EXPECT_EQ(int(MLX5_CQE_REQ_ERR), int(cqes[0].opcode));
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR), int(cqes[0].syndrome));
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_WR_FLUSH_ERR), int(cqes[1].syndrome));
    EXPECT_EQ(0u, dst);
    EXPECT_EQ(prm::QP_ERR, qp_state(m_a.qp.qpn));
    EXPECT_EQ(prm::QP_ERR, qp_state(m_b.qp.qpn)) << "class C: responder too";
}

/* IBA C9-88: a zero-length RDMA WRITE or READ names no memory, so its
 * R_Key and address are not checked (UCX's flush and keepalive post such
 * writes with rkey 0 or 0xffffffff) */
TEST_F(test_emu_engine, zero_length_rdma_is_not_checked_against_its_rkey) {
    connect_pair(m_a, m_b);
    uint64_t dst = 0x1234;

    for (uint32_t rkey : {0u, 0xffffffffu}) {
        auto wr = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
        raddr(wr, nullptr, rkey);
        post(m_a, wr);
        auto rd = ctrl(m_a, MLX5_OPCODE_RDMA_READ);
        raddr(rd, nullptr, rkey);
        post(m_a, rd);
    }
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(4u, cqes.size());
    for (const polled_cqe &c : cqes) {
        EXPECT_EQ(int(MLX5_CQE_REQ), int(c.opcode));
        EXPECT_EQ(0u, c.byte_cnt);
    }
    EXPECT_EQ(0x1234u, dst);
    EXPECT_EQ(prm::QP_RTS, qp_state(m_a.qp.qpn));
    EXPECT_EQ(prm::QP_RTS, qp_state(m_b.qp.qpn));

    /* a nonzero write with the same key is refused */
    auto bad = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(bad, &dst, 0xffffffffu);
    inline_data(bad, &dst, 8);
    post(m_a, bad);
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));
}

TEST_F(test_emu_engine, write_beyond_mr_and_without_right) {
    connect_pair(m_a, m_b);
    uint64_t src[2] = {1, 2}, dst[2] = {};
    struct ibv_mr *smr = reg(m_a, src, sizeof(src));
    struct ibv_mr *dmr = reg(m_b, dst, 8); /* only the first word */

    auto wqe = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE);
    raddr(wqe, dst, dmr->rkey);
    data(wqe, src, 16, smr->lkey);
    post(m_a, wqe);
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));

    /* an MR without remote read, on a fresh pair */
    connect_pair(m_c, m_d);
    struct ibv_mr *lmr = reg(m_c, src, sizeof(src));
    struct ibv_mr *wmr = reg(m_d, dst, sizeof(dst), IBV_ACCESS_LOCAL_WRITE);
    auto rd = ctrl(m_c, MLX5_OPCODE_RDMA_READ);
    raddr(rd, dst, wmr->rkey);
    data(rd, src, 8, lmr->lkey);
    post(m_c, rd);
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR),
              int(poll_one(m_c, MLX5_CQE_REQ_ERR).syndrome));
}

TEST_F(test_emu_engine, bad_lkey_is_local_protection_error) {
    connect_pair(m_a, m_b);
    uint64_t src = 1, rbuf = 0;
    struct ibv_mr *smr = reg(m_a, &src, 8);
    struct ibv_mr *rmr = reg(m_b, &rbuf, 8);

    post_recv(m_b, {dseg(&rbuf, 8, rmr->lkey)});
    auto wqe = ctrl(m_a, MLX5_OPCODE_SEND, false); /* errors always complete */
    data(wqe, &src, 8, smr->lkey + 0x100);
    post(m_a, wqe);
    uct_ib_emu_engine_run();

    polled_cqe c = poll_one(m_a, MLX5_CQE_REQ_ERR);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_LOCAL_PROT_ERR), int(c.syndrome));
    EXPECT_EQ(0u, uct_ib_emu_counters().packets_sent);
    EXPECT_EQ(0u, rbuf);
    EXPECT_EQ(prm::QP_RTS, qp_state(m_b.qp.qpn)) << "the peer saw nothing";
}

TEST_F(test_emu_engine, flush_after_error_and_after_2err) {
    connect_pair(m_a, m_b);
    uint64_t rbuf = 0;
    struct ibv_mr *rmr = reg(m_b, &rbuf, 8);

    post_recv(m_b, {dseg(&rbuf, 8, rmr->lkey)});
    post_recv(m_b, {dseg(&rbuf, 8, rmr->lkey)});

    /* the user moves b to ERR: its posted receives flush */
    prm_buf err_b = modify_cmd(prm::QP_2ERR, m_b.qp.qpn);
    ASSERT_EQ(0, modify(m_b.qp, err_b));
    uct_ib_emu_engine_run();
    std::vector<polled_cqe> b = poll_all(m_b);
    ASSERT_EQ(2u, b.size());
    for (unsigned i = 0; i < 2; ++i) {
        EXPECT_EQ(int(MLX5_CQE_RESP_ERR), int(b[i].opcode));
        EXPECT_EQ(int(MLX5_CQE_SYNDROME_WR_FLUSH_ERR), int(b[i].syndrome));
        EXPECT_EQ(i, b[i].wqe_counter);
    }

    /* WQEs posted to a QP in ERR flush too, signaled or not, in order */
    prm_buf err_a = modify_cmd(prm::QP_2ERR, m_a.qp.qpn);
    ASSERT_EQ(0, modify(m_a.qp, err_a));
    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, false));
    post(m_a, ctrl(m_a, MLX5_OPCODE_SEND, true));
    uct_ib_emu_engine_run();
    std::vector<polled_cqe> a = poll_all(m_a);
    ASSERT_EQ(2u, a.size());
    for (unsigned i = 0; i < 2; ++i) {
        EXPECT_EQ(int(MLX5_CQE_REQ_ERR), int(a[i].opcode));
        EXPECT_EQ(int(MLX5_CQE_SYNDROME_WR_FLUSH_ERR), int(a[i].syndrome));
        EXPECT_EQ(i, a[i].wqe_counter);
        EXPECT_EQ(m_a.qp.qpn, a[i].qpn);
    }
    EXPECT_EQ(0u, uct_ib_emu_counters().packets_sent);
}

TEST_F(test_emu_engine, cq_overrun_moves_qp_to_error) {
    connect_pair(m_a, m_b);
    const uint32_t n = m_a.cq.cqe_cnt;

    /* fill the CQ without consuming, then one more */
    for (uint32_t i = 0; i < n + 1; ++i) {
        post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, true));
        uct_ib_emu_engine_run(); /* executed: its ring slot is free */
    }

    EXPECT_EQ(prm::QP_ERR, qp_state(m_a.qp.qpn));
    EXPECT_EQ(1u, uct_ib_emu_counters().cq_overruns);

    /* the n CQEs are intact, nothing overwrote the oldest */
    std::vector<polled_cqe> cqes = poll_all(m_a);
    ASSERT_EQ(n, cqes.size());
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(int(MLX5_CQE_REQ), int(cqes[i].opcode));
        EXPECT_EQ(uint16_t(i), cqes[i].wqe_counter);
    }
}

TEST_F(test_emu_engine, write_then_send_arrive_in_order) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> src(2048, 0x3c), dst(2048, 0);
    uint64_t rbuf = 0, flag = 1;
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());
    struct ibv_mr *rmr = reg(m_b, &rbuf, 8);

    post_recv(m_b, {dseg(&rbuf, 8, rmr->lkey)});
    auto w = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE, false);
    raddr(w, dst.data(), dmr->rkey);
    data(w, src.data(), src.size(), smr->lkey);
    post(m_a, w);
    auto s = ctrl(m_a, MLX5_OPCODE_SEND, true);
    inline_data(s, &flag, 8);
    post(m_a, s);

    /* one pass: by the time the SEND's receive completes, the write landed */
    EXPECT_TRUE(uct_ib_emu_engine_step());
    polled_cqe c = poll_one(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(0u, c.wqe_counter);
    EXPECT_EQ(src, dst);
    polled_cqe r = poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(1u, r.wqe_counter) << "the write is one basic block";
}

TEST_F(test_emu_engine, message_of_several_mtus) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> src(5000), dst(5000, 0);
    std::iota(src.begin(), src.end(), 3);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    post_recv(m_b, {dseg(dst.data(), dst.size(), dmr->lkey)});
    post_send(m_a, src.data(), src.size(), smr->lkey);
    uct_ib_emu_engine_run();

    poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(5000u, poll_one(m_b, MLX5_CQE_RESP_SEND).byte_cnt);
    EXPECT_EQ(src, dst);
    EXPECT_EQ(6u, uct_ib_emu_counters().packets_sent)
            << "five 1024-byte packets, one ACK";
}

TEST_F(test_emu_engine, receive_too_small_is_length_error) {
    connect_pair(m_a, m_b);
    std::vector<uint8_t> src(64, 1), dst(32, 0);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    post_recv(m_b, {dseg(dst.data(), dst.size(), dmr->lkey)});
    post_send(m_a, src.data(), src.size(), smr->lkey);
    uct_ib_emu_engine_run();

    EXPECT_EQ(int(MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR),
              int(poll_one(m_b, MLX5_CQE_RESP_ERR).syndrome));
}

TEST_F(test_emu_engine, stale_mac_ends_in_retry_exceeded) {
    qp_params p;
    p.retry_count = 3;
    p.ack_timeout = 10; /* 4.096 us * 1024 */
    const uint64_t timeout_ns = 4096ull << 10;
    connect_pair(m_a, m_b, p);
    uint64_t v = 7;

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, MOVED_MAC));
    uct_ib_emu_counters_reset();

    post_send_inline(m_a, &v, 8);
    uct_ib_emu_engine_run();
    EXPECT_EQ(1u, uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_MAC));

    for (unsigned i = 1; i <= p.retry_count; ++i) {
        uct_ib_emu_clock_advance(timeout_ns - 1);
        uct_ib_emu_engine_run();
        EXPECT_EQ(i - 1, uct_ib_emu_counters().retries) << "retried early";
        uct_ib_emu_clock_advance(1);
        uct_ib_emu_engine_run();
        EXPECT_EQ(i, uct_ib_emu_counters().retries);
        EXPECT_TRUE(poll_all(m_a).empty());
    }

    uct_ib_emu_clock_advance(timeout_ns);
    uct_ib_emu_engine_run();
    polled_cqe c = poll_one(m_a, MLX5_CQE_REQ_ERR);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR), int(c.syndrome));

    uct_ib_emu_counters_t cnt = uct_ib_emu_counters();
    EXPECT_EQ(uint64_t(p.retry_count), cnt.retries);
    EXPECT_EQ(uint64_t(p.retry_count) + 1,
              cnt.drop_count(UCT_IB_EMU_DROP_MAC));
    EXPECT_EQ(0u, cnt.packets_delivered);
    EXPECT_EQ(prm::QP_ERR, qp_state(m_a.qp.qpn));

    /* a QP connected after the move, towards the new MAC, works */
    uint64_t rbuf = 0;
    create(m_c, m_ctx0);
    create(m_d, m_ctx1);
    connect(m_c, m_d, MOVED_MAC, p);
    connect(m_d, m_c, MAC_MLX5_0, p);
    struct ibv_mr *mr = reg(m_d, &rbuf, 8);
    post_recv(m_d, {dseg(&rbuf, 8, mr->lkey)});
    auto wqe2 = ctrl(m_c, MLX5_OPCODE_SEND);
    inline_data(wqe2, &v, 8);
    post(m_c, wqe2);
    uct_ib_emu_engine_run();
    poll_one(m_c, MLX5_CQE_REQ);
    poll_one(m_d, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(7u, rbuf);
}

/* Every delivery rule ends the same way for the requester: retries, then
 * RETRY_EXC_ERR; the drop is counted under its own reason */
TEST_F(test_emu_engine, each_drop_reason_is_counted) {
    qp_params p;
    p.retry_count = 1;
    p.ack_timeout = 1;
    auto expect_retry_exceeded = [&](engine_qp &q, uct_ib_emu_drop_t reason) {
        uct_ib_emu_counters_reset();
        post(q, ctrl(q, MLX5_OPCODE_SEND));
        for (int i = 0; i < 3; ++i) {
            uct_ib_emu_engine_run();
            uct_ib_emu_clock_advance(4096ull << p.ack_timeout);
        }
        EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR),
                  int(poll_one(q, MLX5_CQE_REQ_ERR).syndrome))
                << uct_ib_emu_drop_str(reason);
        EXPECT_EQ(2u, uct_ib_emu_counters().drop_count(reason))
                << uct_ib_emu_drop_str(reason);
        EXPECT_EQ(1u, uct_ib_emu_counters().retries);
    };

    /* the destination port drops RoCEv2 */
    connect_pair(m_a, m_b, p);
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop("mlx5_1", 1, false, true));
    expect_retry_exceeded(m_a, UCT_IB_EMU_DROP_ROCE_V2);
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop("mlx5_1", 1, false, false));

    /* the remote QP is not ready to receive (still in INIT) */
    create(m_c, m_ctx0);
    create(m_d, m_ctx1);
    prm_buf d_init = rst2init_cmd(m_d.qp.qpn);
    ASSERT_EQ(0, modify(m_d.qp, d_init));
    connect(m_c, m_d, MAC_MLX5_1, p);
    expect_retry_exceeded(m_c, UCT_IB_EMU_DROP_QP_STATE);

    /* no QP has the remote QPN */
    destroy(m_a);
    m_a = engine_qp();
    create(m_a, m_ctx0);
    prm_buf init = rst2init_cmd(m_a.qp.qpn);
    ASSERT_EQ(0, modify(m_a.qp, init));
    prm_buf rtr = init2rtr_roce_cmd(m_a.qp.qpn, 0xfffff0, MAC_MLX5_1,
                                    gid_of(m_ctx1, 1, 1), 1);
    ASSERT_EQ(0, modify(m_a.qp, rtr));
    prm_buf rts = rtr2rts_cmd(m_a.qp.qpn);
    rts.set(prm::QPC + prm::qpc::retry_count, p.retry_count);
    rts.set(prm::QPC + prm::qpc::PRIMARY_PATH + prm::ads::ack_timeout,
            p.ack_timeout);
    ASSERT_EQ(0, modify(m_a.qp, rts));
    expect_retry_exceeded(m_a, UCT_IB_EMU_DROP_NO_QP);
}

/* The requester's own MAC moved: requests arrive, responses do not. The
 * retransmissions are duplicates to the responder: a SEND is not received
 * twice and an atomic is not executed twice */
TEST_F(test_emu_engine, lost_responses_are_retried_without_executing_twice) {
    qp_params p;
    p.retry_count = 3;
    p.ack_timeout = 10;
    const uint64_t timeout_ns = 4096ull << 10;
    connect_pair(m_a, m_b, p);
    uint64_t rbuf[2] = {}, remote = 100, result = 0, v = 5;
    struct ibv_mr *rmr = reg(m_b, rbuf, sizeof(rbuf));
    struct ibv_mr *amr = reg(m_b, &remote, 8);
    struct ibv_mr *lmr = reg(m_a, &result, 8);

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1, MOVED_MAC));
    uct_ib_emu_counters_reset();

    /* a fetch-and-add whose response is lost twice, then arrives */
    struct mlx5_wqe_atomic_seg a = {};
    a.swap_add = htobe64(1);
    auto fa = ctrl(m_a, MLX5_OPCODE_ATOMIC_FA);
    raddr(fa, &remote, amr->rkey);
    append(fa, a);
    data(fa, &result, 8, lmr->lkey);
    post(m_a, fa);
    uct_ib_emu_engine_run();
    uct_ib_emu_clock_advance(timeout_ns);
    uct_ib_emu_engine_run();
    EXPECT_TRUE(poll_all(m_a).empty());
    EXPECT_EQ(101u, remote) << "executed once";
    EXPECT_EQ(2u, uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_MAC));

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1, MAC_MLX5_0));
    uct_ib_emu_clock_advance(timeout_ns);
    uct_ib_emu_engine_run();
    poll_one(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(100u, result) << "the duplicate replays the result";
    EXPECT_EQ(101u, remote) << "and does not execute again";
    EXPECT_EQ(2u, uct_ib_emu_counters().retries);

    /* a SEND whose ACKs are all lost: received once, then retry-exceeded */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1, MOVED_MAC));
    post_recv(m_b, {dseg(&rbuf[0], 8, rmr->lkey)});
    post_recv(m_b, {dseg(&rbuf[1], 8, rmr->lkey)});
    auto s = ctrl(m_a, MLX5_OPCODE_SEND);
    inline_data(s, &v, 8);
    post(m_a, s);
    for (unsigned i = 0; i <= p.retry_count; ++i) {
        uct_ib_emu_engine_run();
        uct_ib_emu_clock_advance(timeout_ns);
    }
    uct_ib_emu_engine_run();
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));
    polled_cqe r = poll_one(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(0u, r.wqe_counter);
    EXPECT_EQ(5u, rbuf[0]);
    EXPECT_EQ(0u, rbuf[1]) << "the retransmissions were not received";
}

TEST_F(test_emu_engine, ack_timeout_zero_never_times_out) {
    qp_params p;
    p.retry_count = 1;
    p.ack_timeout = 0;
    connect_pair(m_a, m_b, p);

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, MOVED_MAC));
    post(m_a, ctrl(m_a, MLX5_OPCODE_SEND));
    uct_ib_emu_engine_run();
    uct_ib_emu_clock_advance(3600ull * 1000000000ull);
    uct_ib_emu_engine_run();
    EXPECT_TRUE(poll_all(m_a).empty());
    EXPECT_EQ(0u, uct_ib_emu_counters().retries);
}

TEST_F(test_emu_engine, mtu_larger_than_responders_is_dropped) {
    qp_params p;
    p.retry_count = 0;
    p.ack_timeout = 1;
    create(m_a, m_ctx0);
    create(m_b, m_ctx1);
    connect(m_a, m_b, MAC_MLX5_1, p);
    p.mtu = 1; /* the responder takes 256-byte packets only */
    connect(m_b, m_a, MAC_MLX5_0, p);
    std::vector<uint8_t> src(512, 1), dst(512, 0);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    post_recv(m_b, {dseg(dst.data(), dst.size(), dmr->lkey)});
    post_send(m_a, src.data(), src.size(), smr->lkey);
    uct_ib_emu_engine_run();
    uct_ib_emu_clock_advance(4096ull << 1);
    uct_ib_emu_engine_run();

    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));
    EXPECT_EQ(1u, uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_MTU));
}

/* Raw bytes, worked out by hand from the layouts of mlx5dv.h: a SEND of 8
 * inline bytes at index 0, its requester and responder CQEs, and the error
 * CQE of a bad lkey */
TEST_F(test_emu_engine, golden_wqe_and_cqes) {
    connect_pair(m_a, m_b);
    uint64_t rbuf = 0;
    struct ibv_mr *mr = reg(m_b, &rbuf, 8);
    const uint32_t qa = m_a.qp.qpn, qb = m_b.qp.qpn;
    auto b3 = [](uint32_t v, int shift) {
        return static_cast<uint8_t>(v >> shift);
    };

    const std::vector<uint8_t> golden_wqe = {
        /* ctrl: opmod 0, wqe index 0x0000, opcode SEND 0x0a */
        0x00, 0x00, 0x00, 0x0a,
        /* qpn (24 bits), ds 2 */
        b3(qa, 16), b3(qa, 8), b3(qa, 0), 0x02,
        /* signature, dci stream, fm_ce_se = CQ_UPDATE (8) */
        0x00, 0x00, 0x00, 0x08,
        /* immediate 0x11223344, big endian */
        0x11, 0x22, 0x33, 0x44,
        /* inline: byte count 8 | MLX5_INLINE_SEG (bit 31) */
        0x80, 0x00, 0x00, 0x08,
        'g', 'o', 'l', 'd', 'e', 'n', '!', '!',
        0x00, 0x00, 0x00, 0x00
    };
    auto built = ctrl(m_a, MLX5_OPCODE_SEND_IMM, true, 0x11223344);
    inline_data(built, "golden!!", 8);
    built[3] = MLX5_OPCODE_SEND; /* the golden WQE is a SEND */
    EXPECT_EQ(golden_wqe, finish(built, m_a)) << "the test's builders";

    post_recv(m_b, {dseg(&rbuf, 8, mr->lkey)});
    post_raw(m_a, golden_wqe);
    ring_sq(m_a);
    uct_ib_emu_engine_run();

    polled_cqe req  = poll_one(m_a, MLX5_CQE_REQ);
    polled_cqe resp = poll_one(m_b, MLX5_CQE_RESP_SEND);
    /* both written in this pass, stamped with the device clock: 156.25
     * MHz, ns * 5 / 32 of the engine's clock, big endian at byte 48 */
    const uint64_t ticks = uct_ib_emu_clock_now() * 5 / 32;
    uint8_t golden_req[64] = {};
    golden_req[47] = 0x08;                    /* byte_cnt 8, big endian */
    for (int i = 0; i < 8; ++i) {
        golden_req[48 + i] = static_cast<uint8_t>(ticks >> (56 - 8 * i));
    }
    golden_req[56] = MLX5_OPCODE_SEND;        /* sop_drop_qpn: opcode ... */
    golden_req[57] = b3(qa, 16);              /* ... and qpn */
    golden_req[58] = b3(qa, 8);
    golden_req[59] = b3(qa, 0);
    golden_req[63] = 0x00;                    /* op_own: REQ, owner 0 */
    EXPECT_EQ(0, memcmp(golden_req, req.raw, 64));

    uint8_t golden_resp[64] = {};
    golden_resp[47] = 0x08;
    memcpy(&golden_resp[48], &golden_req[48], 8); /* the same pass */
    golden_resp[57] = b3(qb, 16);
    golden_resp[58] = b3(qb, 8);
    golden_resp[59] = b3(qb, 0);
    golden_resp[63] = 0x20;                   /* RESP_SEND << 4, owner 0 */
    EXPECT_EQ(0, memcmp(golden_resp, resp.raw, 64));
    EXPECT_EQ(0, memcmp(&rbuf, "golden!!", 8));

    /* a bad lkey at index 1 */
    auto bad = ctrl(m_a, MLX5_OPCODE_SEND);
    data(bad, &rbuf, 8, 0xdead00);
    post(m_a, bad);
    uct_ib_emu_engine_run();
    polled_cqe err = poll_one(m_a, MLX5_CQE_REQ_ERR);
    uint8_t golden_err[64] = {};
    golden_err[54] = err.raw[54];             /* vendor syndrome: ours */
    golden_err[55] = 0x04;                    /* LOCAL_PROT_ERR */
    golden_err[56] = MLX5_OPCODE_SEND;
    golden_err[57] = b3(qa, 16);
    golden_err[58] = b3(qa, 8);
    golden_err[59] = b3(qa, 0);
    golden_err[60] = 0x00;                    /* wqe_counter 1 */
    golden_err[61] = 0x01;
    golden_err[63] = 0xd0;                    /* REQ_ERR (13) << 4, owner 0 */
    EXPECT_EQ(0, memcmp(golden_err, err.raw, 64));
}


/* The engine on its own thread: the doorbell is noticed without any call */
class test_emu_engine_thread : public engine_fixture {
protected:
    void init() override
    {
        engine_fixture::init();
        ASSERT_EQ(UCS_OK, uct_ib_emu_engine_set_step_mode(false));
    }
};

TEST_F(test_emu_engine_thread, doorbell_is_noticed) {
    connect_pair(m_a, m_b);
    constexpr unsigned count = 300;
    std::vector<uint64_t> rbuf(64, 0);
    struct ibv_mr *mr = reg(m_b, rbuf.data(), rbuf.size() * 8);
    unsigned req = 0, resp = 0;

    for (unsigned i = 0; i < count; ++i) {
        uint64_t v = i;
        polled_cqe c;

        post_recv(m_b, {dseg(&rbuf[i % 64], 8, mr->lkey)});
        post_send_inline(m_a, &v, 8);
        ASSERT_TRUE(wait_for([&] {
            // bounded: the CQ holds at most its size; wait_for's 10 s bound
            while (poll(m_a, &c)) {
                EXPECT_EQ(int(MLX5_CQE_REQ), int(c.opcode));
                ++req;
            }
            // bounded: likewise, the responder's CQ
            while (poll(m_b, &c)) {
                EXPECT_EQ(int(MLX5_CQE_RESP_SEND), int(c.opcode));
                EXPECT_EQ(uint64_t(resp), rbuf[resp % 64]);
                ++resp;
            }
            return (req == i + 1) && (resp == i + 1);
        }, 10.0, [&] {
            return "send " + std::to_string(i) + ": " + counters_str();
        }));
    }
}

TEST_F(test_emu_engine_thread, retry_exceeded_on_a_fast_clock) {
    qp_params p;
    p.retry_count = 7;
    p.ack_timeout = 14; /* 67 ms of emulated time each */
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(10000.0));
    connect_pair(m_a, m_b, p);
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, MOVED_MAC));

    post(m_a, ctrl(m_a, MLX5_OPCODE_SEND));
    polled_cqe c = {};
    ASSERT_TRUE(wait_for([&] { return poll(m_a, &c); }, 10.0,
                         [] { return "no CQE: " + counters_str(); }));
    EXPECT_EQ(int(MLX5_CQE_REQ_ERR), int(c.opcode));
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR), int(c.syndrome));
    EXPECT_EQ(7u, uct_ib_emu_counters().retries);
}

} // namespace
