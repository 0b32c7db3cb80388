/*
 * Scatter to CQE on the emulated device: DevX RC QPs created with
 * qpc.cs_req (0x11: up to 32 bytes, 0x22: up to 64) and qpc.cs_res (1, 2),
 * as UCX 1.13.1 creates them (0x22 and 2 with 128-byte CQEs). Read and
 * atomic responses of signaled WQEs, and received SENDs, that fit go into
 * the CQE instead of memory: up to 32 bytes at the start of the 64-byte CQE
 * (op_own MLX5_INLINE_SCATTER_32), up to 64 in the 64 bytes before it
 * (MLX5_INLINE_SCATTER_64), where UCX's rc_mlx5 reads them. Checked: the
 * op_own bits, the CQE bytes, memory left alone, the boundaries (8, 32, 33,
 * 64, 65 bytes), unsignaled reads, the settings off and on 64-byte CQEs,
 * and QUERY_QP.
 */
#include "emu/engine_test.h"

#include <emu/api/dropin.h>

#include <numeric>


namespace {

using namespace emu_test;

constexpr uint8_t CS_REQ_32 = 0x11;
constexpr uint8_t CS_REQ_64 = 0x22;
constexpr uint8_t CS_RES_32 = 0x1;
constexpr uint8_t CS_RES_64 = 0x2;
constexpr uint8_t FORMAT_MASK = 0x0c; /* op_own bits 2..3 */
constexpr uint8_t FILL        = 0xee;

/* A CQE entry as polled: all of its bytes (64 or 128); the CQE64 ends it */
struct entry {
    std::vector<uint8_t> raw;
    uint8_t              op_own = 0;

    const uint8_t *cqe64() const
    {
        return raw.data() + raw.size() - 64;
    }

    uint8_t opcode() const
    {
        return op_own >> 4;
    }

    uint8_t format() const
    {
        return op_own & FORMAT_MASK;
    }

    uint32_t byte_cnt() const
    {
        struct mlx5_cqe64 c;
        memcpy(&c, cqe64(), sizeof(c));
        return be32toh(c.byte_cnt);
    }

    uint32_t imm() const
    {
        struct mlx5_cqe64 c;
        memcpy(&c, cqe64(), sizeof(c));
        return be32toh(c.imm_inval_pkey);
    }

    uint8_t sop() const
    {
        struct mlx5_cqe64 c;
        memcpy(&c, cqe64(), sizeof(c));
        return be32toh(c.sop_drop_qpn) >> 24;
    }

    uint8_t syndrome() const
    {
        struct mlx5_err_cqe e;
        memcpy(&e, cqe64(), sizeof(e));
        return e.syndrome;
    }

    /* Where UCX 1.13.1 (uct_rc_mlx5_txqp_process_tx_cqe) and rdma-core's
     * receive path read inline-scattered data: NULL if there is none */
    const uint8_t *data() const
    {
        if (op_own & MLX5_INLINE_SCATTER_32) {
            return cqe64();
        } else if (op_own & MLX5_INLINE_SCATTER_64) {
            return cqe64() - 64;
        }
        return nullptr;
    }
};

class test_emu_scatter_cqe : public engine_fixture {
protected:
    /* A QP of ctx with one CQ of cqe_size-byte CQEs and the given scatter
     * settings, in RST */
    void create_cs(engine_qp &q, struct ibv_context *ctx, unsigned cqe_size,
                   uint8_t cs_req, uint8_t cs_res)
    {
        dv_cq_spec cq;

        cq.cqe_size = cqe_size;
        create(q, ctx, [&](prm_buf &in) {
                   in.set(prm::QPC + prm::qpc::cs_req, cs_req);
                   in.set(prm::QPC + prm::qpc::cs_res, cs_res);
               }, (cqe_size != 64) ? &cq : nullptr);
        ASSERT_EQ(cqe_size, q.cq.cqe_size);
    }

    /* a on mlx5_0 and b on mlx5_1, connected, with the same settings */
    void cs_pair(unsigned cqe_size, uint8_t cs_req, uint8_t cs_res)
    {
        create_cs(m_a, m_ctx0, cqe_size, cs_req, cs_res);
        create_cs(m_b, m_ctx1, cqe_size, cs_req, cs_res);
        connect(m_a, m_b, MAC_MLX5_1, qp_params());
        connect(m_b, m_a, MAC_MLX5_0, qp_params());
    }

    /* The next CQE entry of q's CQ, stride cq.cqe_size */
    static bool poll_entry(engine_qp &q, entry *e)
    {
        uint32_t n    = q.cq.cqe_cnt;
        unsigned size = q.cq.cqe_size;
        uint8_t *slot = static_cast<uint8_t*>(q.cq.buf) +
                        size_t(q.cq_ci & (n - 1)) * size;
        uint8_t op_own = __atomic_load_n(slot + size - 1, __ATOMIC_ACQUIRE);

        if (((op_own >> 4) == MLX5_CQE_INVALID) ||
            ((op_own & MLX5_CQE_OWNER_MASK) != !!(q.cq_ci & n))) {
            return false;
        }

        e->raw.assign(slot, slot + size);
        e->op_own = op_own;
        ++q.cq_ci;
        __atomic_store_n(&static_cast<uint32_t*>(
                                 static_cast<void*>(q.cq.dbrec))[0],
                         htobe32(q.cq_ci & 0xffffff), __ATOMIC_RELEASE);
        return true;
    }

    /* Exactly one entry, of this opcode */
    static entry poll_single(engine_qp &q, uint8_t opcode)
    {
        entry e, extra;

        EXPECT_TRUE(poll_entry(q, &e)) << "no CQE";
        EXPECT_EQ(int(opcode), int(e.opcode()))
                << "syndrome 0x" << std::hex << int(e.syndrome());
        EXPECT_FALSE(poll_entry(q, &extra)) << "more than one CQE";
        return e;
    }

    /* A signaled (or not) read of len bytes of remote into local */
    void post_read(const uint8_t *remote, uint32_t rkey, uint8_t *local,
                   uint32_t len, uint32_t lkey, bool signaled = true)
    {
        auto wqe = ctrl(m_a, MLX5_OPCODE_RDMA_READ, signaled);

        raddr(wqe, remote, rkey);
        data(wqe, local, len, lkey);
        post(m_a, wqe);
    }

    /* Read len bytes; the expected format: 0 (memory), 32 or 64 */
    void check_read(uint32_t len, uint8_t format)
    {
        SCOPED_TRACE("read of " + std::to_string(len) + " bytes");
        std::vector<uint8_t> remote(len), local(len + 16, FILL);
        std::iota(remote.begin(), remote.end(), uint8_t(len));
        struct ibv_mr *lmr = reg(m_a, local.data(), local.size());
        struct ibv_mr *rmr = reg(m_b, remote.data(), remote.size());

        post_read(remote.data(), rmr->rkey, local.data(), len, lmr->lkey);
        uct_ib_emu_engine_run();

        entry e = poll_single(m_a, MLX5_CQE_REQ);
        EXPECT_EQ(len, e.byte_cnt());
        EXPECT_EQ(int(MLX5_OPCODE_RDMA_READ), int(e.sop()));
        EXPECT_EQ(int(format), int(e.format()));
        if (format == 0) {
            EXPECT_TRUE(std::equal(remote.begin(), remote.end(),
                                   local.begin()));
        } else {
            ASSERT_NE(nullptr, e.data());
            EXPECT_EQ(0, memcmp(e.data(), remote.data(), len));
            EXPECT_TRUE(std::all_of(local.begin(), local.end(),
                                    [](uint8_t b) { return b == FILL; }))
                    << "scattered to the CQE, and written to memory too";
        }
        EXPECT_EQ(FILL, local[len]) << "wrote past the read";
    }

    /* b receives a SEND of len bytes (gathered from memory) into a buffer
     * of room bytes; the expected format: 0, 32 or 64 */
    void check_send(uint32_t len, uint8_t format, bool imm = false)
    {
        SCOPED_TRACE("send of " + std::to_string(len) + " bytes");
        std::vector<uint8_t> src(len), dst(len + 64, FILL);
        std::iota(src.begin(), src.end(), uint8_t(3 * len));
        struct ibv_mr *smr = reg(m_a, src.data(), src.size());
        struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

        post_recv(m_b, {dseg(dst.data(), dst.size(), dmr->lkey)});
        auto wqe = ctrl(m_a, imm ? MLX5_OPCODE_SEND_IMM : MLX5_OPCODE_SEND,
                        true, 0xabcd0123);
        data(wqe, src.data(), len, smr->lkey);
        post(m_a, wqe);
        uct_ib_emu_engine_run();

        entry req = poll_single(m_a, MLX5_CQE_REQ);
        EXPECT_EQ(0, req.format()) << "a SEND's requester CQE carries no data";

        entry e = poll_single(m_b, imm ? MLX5_CQE_RESP_SEND_IMM :
                                         MLX5_CQE_RESP_SEND);
        EXPECT_EQ(len, e.byte_cnt());
        EXPECT_EQ(int(format), int(e.format()));
        if (imm) {
            EXPECT_EQ(0xabcd0123u, e.imm());
        }
        if (format == 0) {
            EXPECT_TRUE(std::equal(src.begin(), src.end(), dst.begin()));
            EXPECT_EQ(FILL, dst[len]);
        } else {
            ASSERT_NE(nullptr, e.data());
            EXPECT_EQ(0, memcmp(e.data(), src.data(), len));
            EXPECT_TRUE(std::all_of(dst.begin(), dst.end(),
                                    [](uint8_t b) { return b == FILL; }))
                    << "scattered to the CQE, and written to memory too";
        }
    }
};


/* UCX 1.13.1's settings: cs_req 0x22, cs_res 2, 128-byte CQEs */
TEST_F(test_emu_scatter_cqe, read_boundaries_64)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    check_read(8,  MLX5_INLINE_SCATTER_32);
    check_read(32, MLX5_INLINE_SCATTER_32);
    check_read(33, MLX5_INLINE_SCATTER_64);
    check_read(64, MLX5_INLINE_SCATTER_64);
    check_read(65, 0);
    check_read(3000, 0);
}

TEST_F(test_emu_scatter_cqe, read_boundaries_32)
{
    cs_pair(64, CS_REQ_32, CS_RES_32);
    check_read(8,  MLX5_INLINE_SCATTER_32);
    check_read(32, MLX5_INLINE_SCATTER_32);
    check_read(33, 0);
    check_read(64, 0);
}

/* The 64-byte settings scatter what a 64-byte CQE holds: 32 bytes */
TEST_F(test_emu_scatter_cqe, settings_64_with_64_byte_cqes)
{
    cs_pair(64, CS_REQ_64, CS_RES_64);
    check_read(32, MLX5_INLINE_SCATTER_32);
    check_read(33, 0);
    check_send(32, MLX5_INLINE_SCATTER_32);
    check_send(33, 0);
}

TEST_F(test_emu_scatter_cqe, off_with_128_byte_cqes)
{
    cs_pair(128, 0, 0);
    check_read(8, 0);
    check_read(64, 0);
    check_send(8, 0);
    check_send(64, 0);
}

/* The 32-byte data overlays the start of the CQE64; the fields a CQE
 * reports (byte_cnt, qpn, wqe_counter, opcode) stay where they are */
TEST_F(test_emu_scatter_cqe, read_cqe_layout)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    uint8_t remote[32], local[32];
    memset(remote, 0x77, sizeof(remote));
    memset(local, FILL, sizeof(local));
    struct ibv_mr *lmr = reg(m_a, local, sizeof(local));
    struct ibv_mr *rmr = reg(m_b, remote, sizeof(remote));

    post_read(remote, rmr->rkey, local, sizeof(remote), lmr->lkey);
    uct_ib_emu_engine_run();
    entry e = poll_single(m_a, MLX5_CQE_REQ);
    struct mlx5_cqe64 c;
    memcpy(&c, e.cqe64(), sizeof(c));

    EXPECT_EQ(0, memcmp(e.cqe64(), remote, 32));
    EXPECT_EQ(m_a.qp.qpn, be32toh(c.sop_drop_qpn) & 0xffffff);
    EXPECT_EQ(0u, be16toh(c.wqe_counter));
    EXPECT_EQ(32u, be32toh(c.byte_cnt));
    EXPECT_EQ(MLX5_CQE_REQ << 4 | MLX5_INLINE_SCATTER_32, e.op_own & ~1);
}

/* An unsignaled read writes no CQE, so its data goes to memory; a
 * signaled read behind it is scattered to its own CQE */
TEST_F(test_emu_scatter_cqe, unsignaled_read_goes_to_memory)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    uint64_t remote[2] = {0x1111222233334444ull, 0x5555666677778888ull};
    uint64_t local[2]  = {0, 0};
    struct ibv_mr *lmr = reg(m_a, local, sizeof(local));
    struct ibv_mr *rmr = reg(m_b, remote, sizeof(remote));

    post_read(reinterpret_cast<uint8_t*>(&remote[0]), rmr->rkey,
              reinterpret_cast<uint8_t*>(&local[0]), 8, lmr->lkey, false);
    post_read(reinterpret_cast<uint8_t*>(&remote[1]), rmr->rkey,
              reinterpret_cast<uint8_t*>(&local[1]), 8, lmr->lkey, true);
    uct_ib_emu_engine_run();

    entry e = poll_single(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(MLX5_INLINE_SCATTER_32, e.format());
    EXPECT_EQ(0, memcmp(e.data(), &remote[1], 8));
    EXPECT_EQ(remote[0], local[0]) << "the unsignaled read's data is lost";
    EXPECT_EQ(0u, local[1]) << "the signaled read wrote memory";
}

/* Atomics answer with 8 bytes: always in the CQE, big endian as on the
 * wire, where memory receives them in host order (the 8-byte endianness
 * mode); UCX 1.13.1's rc_mlx5 swaps CQE atomic results for that reason */
TEST_F(test_emu_scatter_cqe, atomics)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    uint64_t remote = 100, result = 0xdeadbeefull;
    struct ibv_mr *lmr = reg(m_a, &result, sizeof(result));
    struct ibv_mr *rmr = reg(m_b, &remote, sizeof(remote));
    auto atomic = [&](uint8_t opcode, uint64_t swap_add, uint64_t compare) {
        struct mlx5_wqe_atomic_seg a;
        auto wqe = ctrl(m_a, opcode);
        uint64_t orig = 0;

        raddr(wqe, &remote, rmr->rkey);
        a.swap_add = htobe64(swap_add);
        a.compare  = htobe64(compare);
        append(wqe, a);
        data(wqe, &result, 8, lmr->lkey);
        post(m_a, wqe);
        uct_ib_emu_engine_run();

        entry e = poll_single(m_a, MLX5_CQE_REQ);
        EXPECT_EQ(MLX5_INLINE_SCATTER_32, e.format());
        EXPECT_EQ(int(opcode), int(e.sop()));
        if (e.data() != nullptr) {
            memcpy(&orig, e.data(), sizeof(orig));
        }
        return be64toh(orig);
    };

    EXPECT_EQ(100u, atomic(MLX5_OPCODE_ATOMIC_FA, 5, 0));
    EXPECT_EQ(105u, remote);
    EXPECT_EQ(105u, atomic(MLX5_OPCODE_ATOMIC_CS, 7, 105));
    EXPECT_EQ(7u, remote);
    EXPECT_EQ(0xdeadbeefull, result) << "the local buffer was written";
}

/* The same atomic without scatter to CQE: host order in memory */
TEST_F(test_emu_scatter_cqe, atomic_to_memory_is_host_order)
{
    cs_pair(128, 0, 0);
    uint64_t remote = 0x1122334455667788ull, result = 0;
    struct ibv_mr *lmr = reg(m_a, &result, sizeof(result));
    struct ibv_mr *rmr = reg(m_b, &remote, sizeof(remote));
    struct mlx5_wqe_atomic_seg a = {};
    auto wqe = ctrl(m_a, MLX5_OPCODE_ATOMIC_FA);

    raddr(wqe, &remote, rmr->rkey);
    a.swap_add = htobe64(1);
    append(wqe, a);
    data(wqe, &result, 8, lmr->lkey);
    post(m_a, wqe);
    uct_ib_emu_engine_run();

    entry e = poll_single(m_a, MLX5_CQE_REQ);
    EXPECT_EQ(0, e.format());
    EXPECT_EQ(0x1122334455667788ull, result);
    EXPECT_EQ(0x1122334455667789ull, remote);
}

TEST_F(test_emu_scatter_cqe, send_boundaries_64)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    check_send(1,  MLX5_INLINE_SCATTER_32);
    check_send(8,  MLX5_INLINE_SCATTER_32);
    check_send(32, MLX5_INLINE_SCATTER_32);
    check_send(33, MLX5_INLINE_SCATTER_64);
    check_send(64, MLX5_INLINE_SCATTER_64);
    check_send(65, 0);
    check_send(2000, 0);
    check_send(16, MLX5_INLINE_SCATTER_32, true);
    check_send(48, MLX5_INLINE_SCATTER_64, true);
}

TEST_F(test_emu_scatter_cqe, send_boundaries_32)
{
    cs_pair(64, CS_REQ_32, CS_RES_32);
    check_send(8,  MLX5_INLINE_SCATTER_32);
    check_send(32, MLX5_INLINE_SCATTER_32);
    check_send(33, 0);
}

/* An inline SEND (as UCX's am_short posts it) is scattered like any other */
TEST_F(test_emu_scatter_cqe, inline_send)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    uint8_t rbuf[256];
    memset(rbuf, FILL, sizeof(rbuf));
    struct ibv_mr *mr = reg(m_b, rbuf, sizeof(rbuf));
    const char msg[] = "scatter to cqe, inline";

    post_recv(m_b, {dseg(rbuf, sizeof(rbuf), mr->lkey)});
    post_send_inline(m_a, msg, sizeof(msg));
    uct_ib_emu_engine_run();

    poll_single(m_a, MLX5_CQE_REQ);
    entry e = poll_single(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(sizeof(msg), e.byte_cnt());
    ASSERT_EQ(MLX5_INLINE_SCATTER_32, e.format());
    EXPECT_EQ(0, memcmp(e.data(), msg, sizeof(msg)));
    EXPECT_EQ(FILL, rbuf[0]);
}

/* The receive WQE is consumed and must be large enough, even though the
 * data does not go there */
TEST_F(test_emu_scatter_cqe, receive_too_small)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    uint8_t small[8], src[16] = {1, 2, 3};
    struct ibv_mr *smr = reg(m_a, src, sizeof(src));
    struct ibv_mr *dmr = reg(m_b, small, sizeof(small));

    post_recv(m_b, {dseg(small, sizeof(small), dmr->lkey)});
    post_send(m_a, src, sizeof(src), smr->lkey);
    uct_ib_emu_engine_run();

    entry req = poll_single(m_a, MLX5_CQE_REQ_ERR);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR), int(req.syndrome()));
    entry resp = poll_single(m_b, MLX5_CQE_RESP_ERR);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR), int(resp.syndrome()));
    EXPECT_EQ(0, resp.format());
}

/* RDMA_WRITE_IMM consumes a receive but carries no data to it */
TEST_F(test_emu_scatter_cqe, write_imm_not_scattered)
{
    cs_pair(128, CS_REQ_64, CS_RES_64);
    uint8_t dst[16] = {};
    struct ibv_mr *mr = reg(m_b, dst, sizeof(dst));

    post_recv(m_b, {});
    auto wqe = ctrl(m_a, MLX5_OPCODE_RDMA_WRITE_IMM, true, 0x55);
    raddr(wqe, dst, mr->rkey);
    inline_data(wqe, "0123456789", 10);
    post(m_a, wqe);
    uct_ib_emu_engine_run();

    poll_single(m_a, MLX5_CQE_REQ);
    entry e = poll_single(m_b, MLX5_CQE_RESP_WR_IMM);
    EXPECT_EQ(0, e.format());
    EXPECT_EQ(0, memcmp(dst, "0123456789", 10));
}

TEST_F(test_emu_scatter_cqe, query_qp_reports_settings)
{
    create_cs(m_a, m_ctx0, 128, CS_REQ_64, CS_RES_64);
    create_cs(m_b, m_ctx0, 64, CS_REQ_32, 0);

    for (engine_qp *q : {&m_a, &m_b}) {
        prm_buf query = modify_cmd(prm::QUERY_QP, q->qp.qpn, prm::HDR_BYTES);
        prm_buf out(prm::QP_CMD_BYTES);

        ASSERT_EQ(0, uct_ib_glue->devx_obj_query(q->qp.obj, query.data(),
                                                 query.size(), out.data(),
                                                 out.size()));
        EXPECT_EQ((q == &m_a) ? CS_REQ_64 : CS_REQ_32,
                  out.get(prm::QPC + prm::qpc::cs_req));
        EXPECT_EQ((q == &m_a) ? CS_RES_64 : 0,
                  out.get(prm::QPC + prm::qpc::cs_res));
    }
}

} // namespace
