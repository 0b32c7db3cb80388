/*
 * DevX RMPs on the emulated device: CREATE_RMP with its checks, the RC QPs
 * receiving from an RMP (rq_type SRQ), the cyclic ring consumed in order
 * with wrap-around, a linked-list RMP following its links, QUERY_RMP and
 * MODIFY_RMP, destroy while in use, reclaim, and LAST_WQE_REACHED of a QP
 * attached to an RMP. Commands are written with the PRM bit positions below,
 * independent of prm.h.
 */
#include "emu/engine_test.h"

#include <emu/api/dropin.h>
#include <emu/api/syndrome.h>

#include <functional>

#include <poll.h>


namespace {

using namespace emu_test;

/* PRM facts of the RMP commands (mlx5_ifc.h: create_rmp_in, rmpc, wq) */
namespace rmp_prm {
constexpr uint16_t CREATE_RMP  = 0x90c;
constexpr uint16_t MODIFY_RMP  = 0x90d;
constexpr uint16_t DESTROY_RMP = 0x90e;
constexpr uint16_t QUERY_RMP   = 0x90f;

constexpr size_t   CMD_BYTES   = 2176 / 8; /* create/modify in, query out */
constexpr unsigned RMPC        = 256;
constexpr unsigned WQ          = RMPC + 384;

constexpr field out_rmpn       {72, 24};   /* create_rmp_out */
constexpr field rmpn           {72, 24};   /* query/modify/destroy in */
constexpr field rmp_state      {64,  4};   /* modify_rmp_in */
constexpr field bitmask        {128, 64};  /* modify_rmp_in */

namespace rmpc {
constexpr field state                {  8,  4};
constexpr field basic_cyclic_rcv_wqe { 32,  1};
} // namespace rmpc

namespace wq {
constexpr field wq_type        {  0,  4};
constexpr field lwm            { 48, 16};
constexpr field pd             { 72, 24};
constexpr field dbr_addr       {128, 64};
constexpr field hw_counter     {192, 32};
constexpr field sw_counter     {224, 32};
constexpr field log_wq_stride  {268,  4};
constexpr field log_wq_sz      {283,  5};
constexpr field dbr_umem_valid {288,  1};
constexpr field wq_umem_valid  {289,  1};
constexpr field dbr_umem_id    {320, 32};
constexpr field wq_umem_id     {352, 32};
constexpr field wq_umem_offset {384, 64};
} // namespace wq

constexpr field log_max_rmp    {899, 5};   /* cmd_hca_cap */

constexpr uint8_t STATE_RDY    = 1;
constexpr uint8_t STATE_ERR    = 3;
constexpr uint8_t LINKED_LIST  = 0;
constexpr uint8_t CYCLIC       = 1;
} // namespace rmp_prm

constexpr uint16_t EVENT_LAST_WQE_REACHED = 0x13;


/* An RMP and the umems of its ring and doorbell record */
struct rmp_t {
    std::vector<uint8_t>    ring;
    struct mlx5dv_devx_umem *ring_umem = nullptr;
    std::vector<uint8_t>    dbr;
    struct mlx5dv_devx_umem *dbr_umem  = nullptr;
    struct mlx5dv_devx_obj  *obj       = nullptr;
    uint32_t                rmpn       = 0;
    unsigned                size       = 0;
    unsigned                stride     = 0;
    uint16_t                posted     = 0;

    uint8_t *wqe(unsigned index)
    {
        return ring.data() + size_t(index) * stride;
    }

    uint32_t *dbrec()
    {
        return reinterpret_cast<uint32_t*>(dbr.data() + 8);
    }
};


class test_emu_rmp : public engine_fixture {
protected:
    static constexpr unsigned LOG_SIZE   = 2; /* 4 WQEs */
    static constexpr unsigned LOG_STRIDE = 5; /* 32 bytes, as UCX 1.13.1 */

    void cleanup() override
    {
        /* the QPs go before the RMPs they receive from */
        for (engine_qp *q : m_qps) {
            if (q->qp.obj != nullptr) {
                EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(q->qp.obj));
                q->qp.obj = nullptr;
            }
        }
        for (rmp_t *r : m_rmps) {
            release(*r);
        }
        m_rmps.clear();
        engine_fixture::cleanup();
    }

    /* Register the ring (with a spare entry's room) and the doorbell page */
    void rmp_mem(rmp_t &r, struct ibv_context *ctx, unsigned log_size,
                 unsigned log_stride)
    {
        r.size   = 1u << log_size;
        r.stride = 1u << log_stride;
        r.ring.assign(size_t(r.size) * r.stride, 0);
        r.dbr.assign(64, 0);
        r.ring_umem = uct_ib_glue->devx_umem_reg(ctx, r.ring.data(),
                                                 r.ring.size(),
                                                 IBV_ACCESS_LOCAL_WRITE);
        r.dbr_umem  = uct_ib_glue->devx_umem_reg(ctx, r.dbr.data(),
                                                 r.dbr.size(),
                                                 IBV_ACCESS_LOCAL_WRITE);
        ASSERT_NE(nullptr, r.ring_umem);
        ASSERT_NE(nullptr, r.dbr_umem);
        m_rmps.push_back(&r);
    }

    /* A valid CREATE_RMP as UCX 1.13.1 writes it: the umem valid bits clear
     * (the kernel sets them), the doorbell record at offset 8 */
    static prm_buf create_cmd(const rmp_t &r, uint32_t pdn, uint8_t type,
                              unsigned log_size, unsigned log_stride)
    {
        using namespace rmp_prm;
        prm_buf in(CMD_BYTES);

        in.set(prm::opcode, CREATE_RMP);
        in.set(RMPC + rmpc::state, STATE_RDY);
        in.set(WQ + wq::wq_type, type);
        in.set(WQ + wq::log_wq_sz, log_size);
        in.set(WQ + wq::log_wq_stride, log_stride);
        in.set(WQ + wq::pd, pdn);
        in.set(WQ + wq::dbr_umem_id, r.dbr_umem->umem_id);
        in.set(WQ + wq::dbr_addr, 8);
        in.set(WQ + wq::wq_umem_id, r.ring_umem->umem_id);
        return in;
    }

    /* Run CREATE_RMP: the object or NULL, *out the output */
    static struct mlx5dv_devx_obj *
    create_raw(struct ibv_context *ctx, prm_buf &in, prm_buf *out)
    {
        return uct_ib_glue->devx_obj_create(ctx, in.data(), in.size(),
                                            out->data(), out->size());
    }

    void make_rmp(rmp_t &r, const devx_env &env, uint8_t type = rmp_prm::CYCLIC,
                  unsigned log_size = LOG_SIZE,
                  unsigned log_stride = LOG_STRIDE)
    {
        rmp_mem(r, env.ctx, log_size, log_stride);
        prm_buf in = create_cmd(r, env.pdn, type, log_size, log_stride);
        prm_buf out(prm::HDR_BYTES);

        r.obj = create_raw(env.ctx, in, &out);
        ASSERT_NE(nullptr, r.obj)
                << "errno " << errno << " syndrome 0x" << std::hex
                << out.get(prm::syndrome);
        r.rmpn = static_cast<uint32_t>(out.get(rmp_prm::out_rmpn));
    }

    void release(rmp_t &r)
    {
        if (r.obj != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(r.obj));
            r.obj = nullptr;
        }
        if (r.dbr_umem != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(r.dbr_umem));
            r.dbr_umem = nullptr;
        }
        if (r.ring_umem != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(r.ring_umem));
            r.ring_umem = nullptr;
        }
    }

    /* A DevX QP of q's env receiving from the RMP */
    void create_on_rmp(engine_qp &q, const rmp_t &r)
    {
        q.cq       = dv_cq(q.env.cq);
        prm_buf in = create_qp_cmd(q.env);
        in.set(prm::QPC + prm::qpc::rq_type, 1);
        in.set(prm::QPC + prm::qpc::srqn, r.rmpn);
        in.set(prm::QPC + prm::qpc::log_rq_size, 0);
        in.set(prm::QPC + prm::qpc::log_rq_stride, 0);
        q.qp = create_qp(q.env, in);
        ASSERT_NE(nullptr, q.qp.obj);
        m_qps.push_back(&q);
    }

    /* m_a on mlx5_0 sends to m_b on mlx5_1, which receives from m_rmp */
    void rmp_pair(uint8_t type = rmp_prm::CYCLIC, unsigned log_size = LOG_SIZE)
    {
        create(m_a, m_ctx0);
        env_init(m_b.env, m_ctx1);
        make_rmp(m_rmp, m_b.env, type, log_size);
        create_on_rmp(m_b, m_rmp);
        connect(m_a, m_b, MAC_MLX5_1, qp_params());
        connect(m_b, m_a, MAC_MLX5_0, qp_params());
    }

    /* Write a receive WQE at ring index: a next segment the device must not
     * read in a cyclic RMP (a pattern and a bogus link), one scatter entry */
    static void write_wqe(rmp_t &r, unsigned index, void *buf, uint32_t len,
                          uint32_t lkey, uint16_t next_index = 0xa5a5)
    {
        auto *next = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                r.wqe(index));
        struct mlx5_wqe_data_seg d = dseg(buf, len, lkey);

        memset(next, 0xa5, sizeof(*next));
        next->next_wqe_index = htobe16(next_index);
        memcpy(next + 1, &d, sizeof(d));
    }

    /* Post one WQE in ring order */
    static void post_cyclic(rmp_t &r, void *buf, uint32_t len, uint32_t lkey)
    {
        write_wqe(r, r.posted & (r.size - 1), buf, len, lkey);
        ++r.posted;
        __atomic_store_n(&r.dbrec()[0], htobe32(r.posted), __ATOMIC_RELEASE);
    }

    void send_u64(uint64_t v)
    {
        post_send_inline(m_a, &v, sizeof(v));
    }

    static int query(const rmp_t &r, prm_buf *out)
    {
        prm_buf in(prm::HDR_BYTES);

        in.set(prm::opcode, rmp_prm::QUERY_RMP);
        in.set(rmp_prm::rmpn, r.rmpn);
        return uct_ib_glue->devx_obj_query(r.obj, in.data(), in.size(),
                                           out->data(), out->size());
    }

    static prm_buf modify_lwm_cmd(const rmp_t &r, uint16_t lwm)
    {
        using namespace rmp_prm;
        prm_buf in(CMD_BYTES);

        in.set(prm::opcode, MODIFY_RMP);
        in.set(rmp_state, STATE_RDY);
        in.set(rmpn, r.rmpn);
        in.set(bitmask, 1);
        in.set(RMPC + rmpc::state, STATE_RDY);
        in.set(WQ + wq::lwm, lwm);
        return in;
    }

    static int modify_rmp(const rmp_t &r, prm_buf &in, prm_buf *out)
    {
        return uct_ib_glue->devx_obj_modify(r.obj, in.data(), in.size(),
                                            out->data(), out->size());
    }

    rmp_t               m_rmp;
    std::vector<rmp_t*> m_rmps;
};


TEST_F(test_emu_rmp, hca_cap_reports_rmps)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    ASSERT_EQ(0, uct_ib_glue->devx_general_cmd(m_ctx0, in.data(), in.size(),
                                                out.data(), out.size()));
    /* UCX creates its RC SRQ as an RMP only when log_max_rmp > 0 */
    EXPECT_EQ(23u, out.get(prm::CAPABILITY + rmp_prm::log_max_rmp));
}

TEST_F(test_emu_rmp, cyclic_in_ring_order_with_wrap_around)
{
    rmp_pair();
    std::vector<uint64_t> bufs(3 * m_rmp.size, 0);
    struct ibv_mr *mr = reg(m_b, bufs.data(), bufs.size() * sizeof(bufs[0]));

    /* two posted: a third send finds nothing and waits (RNR) */
    post_cyclic(m_rmp, &bufs[0], 8, mr->lkey);
    post_cyclic(m_rmp, &bufs[1], 8, mr->lkey);
    for (uint64_t i = 0; i < 3; ++i) {
        send_u64(0x100 + i);
    }
    uct_ib_emu_engine_run();
    std::vector<polled_cqe> cqes = poll_all(m_b);
    ASSERT_EQ(2u, cqes.size()) << counters_str();
    EXPECT_EQ(0u, cqes[0].wqe_counter);
    EXPECT_EQ(1u, cqes[1].wqe_counter);
    EXPECT_EQ(0x100u, bufs[0]);
    EXPECT_EQ(0x101u, bufs[1]);
    EXPECT_GT(uct_ib_emu_counters().rnr_naks, 0u);

    /* the rest, over the ring's end twice, never more posted than the ring
     * holds: the CQE names the ring index */
    for (uint64_t i = 3; i < bufs.size(); ++i) {
        send_u64(0x100 + i);
    }
    for (int pass = 0; (pass < 200) && (cqes.size() < bufs.size()); ++pass) {
        while ((m_rmp.posted < bufs.size()) &&
               (m_rmp.posted - cqes.size() < m_rmp.size)) {
            post_cyclic(m_rmp, &bufs[m_rmp.posted], 8, mr->lkey);
        }
        uct_ib_emu_clock_advance(1000000);
        uct_ib_emu_engine_run();
        for (const polled_cqe &c : poll_all(m_b)) {
            cqes.push_back(c);
        }
    }
    ASSERT_EQ(bufs.size(), cqes.size()) << counters_str();
    for (unsigned i = 0; i < bufs.size(); ++i) {
        EXPECT_EQ(int(MLX5_CQE_RESP_SEND), int(cqes[i].opcode)) << i;
        EXPECT_EQ(m_b.qp.qpn, cqes[i].qpn) << i;
        EXPECT_EQ(i % m_rmp.size, cqes[i].wqe_counter) << i;
        EXPECT_EQ(8u, cqes[i].byte_cnt) << i;
        EXPECT_EQ(0x100u + i, bufs[i]) << i;
    }

    /* the next segments were neither followed nor written */
    for (unsigned i = 0; i < m_rmp.size; ++i) {
        auto *next = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                m_rmp.wqe(i));
        EXPECT_EQ(0xa5a5, be16toh(next->next_wqe_index)) << i;
        EXPECT_EQ(0xa5, next->rsvd0[0]) << i;
    }

    prm_buf out(rmp_prm::CMD_BYTES);
    ASSERT_EQ(0, query(m_rmp, &out));
    EXPECT_EQ(bufs.size(), out.get(rmp_prm::WQ + rmp_prm::wq::hw_counter));
}

TEST_F(test_emu_rmp, scatter_entries_up_to_the_stride)
{
    /* a 64-byte stride: a next segment and three scatter entries */
    create(m_a, m_ctx0);
    env_init(m_b.env, m_ctx1);
    make_rmp(m_rmp, m_b.env, rmp_prm::CYCLIC, LOG_SIZE, 6);
    create_on_rmp(m_b, m_rmp);
    connect(m_a, m_b, MAC_MLX5_1, qp_params());
    connect(m_b, m_a, MAC_MLX5_0, qp_params());

    std::vector<uint8_t> src(48), dst(64, 0xee);
    for (size_t i = 0; i < src.size(); ++i) {
        src[i] = uint8_t(i + 1);
    }
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());

    uint8_t *wqe = m_rmp.wqe(0);
    struct mlx5_wqe_data_seg d[3] = {dseg(&dst[0], 16, dmr->lkey),
                                     dseg(&dst[32], 16, dmr->lkey),
                                     dseg(&dst[48], 16, dmr->lkey)};
    memcpy(wqe + 16, d, sizeof(d));
    __atomic_store_n(&m_rmp.dbrec()[0], htobe32(1), __ATOMIC_RELEASE);

    auto swqe = ctrl(m_a, MLX5_OPCODE_SEND);
    data(swqe, src.data(), src.size(), smr->lkey);
    post(m_a, swqe);
    uct_ib_emu_engine_run();

    polled_cqe c = poll_one(m_b, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(48u, c.byte_cnt);
    EXPECT_EQ(0, memcmp(&dst[0], &src[0], 16));
    EXPECT_EQ(0xee, dst[16]) << "wrote between the entries";
    EXPECT_EQ(0, memcmp(&dst[32], &src[16], 32));
}

/* Scatter to CQE (cs_res 1: up to 32 bytes, 64-byte CQEs) applies to a
 * receive from an RMP: the WQE is consumed, the CQE holds the data, the
 * buffer is not written; a longer message goes to the buffer */
TEST_F(test_emu_rmp, scatter_to_cqe)
{
    create(m_a, m_ctx0);
    env_init(m_b.env, m_ctx1);
    make_rmp(m_rmp, m_b.env);
    m_b.cq     = dv_cq(m_b.env.cq);
    prm_buf in = create_qp_cmd(m_b.env);
    in.set(prm::QPC + prm::qpc::rq_type, 1);
    in.set(prm::QPC + prm::qpc::srqn, m_rmp.rmpn);
    in.set(prm::QPC + prm::qpc::log_rq_size, 0);
    in.set(prm::QPC + prm::qpc::log_rq_stride, 0);
    in.set(prm::QPC + prm::qpc::cs_res, 1);
    m_b.qp = create_qp(m_b.env, in);
    ASSERT_NE(nullptr, m_b.qp.obj);
    m_qps.push_back(&m_b);
    connect(m_a, m_b, MAC_MLX5_1, qp_params());
    connect(m_b, m_a, MAC_MLX5_0, qp_params());

    uint8_t bufs[2][64];
    uint8_t big[40];
    memset(bufs, 0xee, sizeof(bufs));
    for (size_t i = 0; i < sizeof(big); ++i) {
        big[i] = static_cast<uint8_t>(i + 1);
    }
    struct ibv_mr *mr = reg(m_b, bufs, sizeof(bufs));

    post_cyclic(m_rmp, bufs[0], sizeof(bufs[0]), mr->lkey);
    post_cyclic(m_rmp, bufs[1], sizeof(bufs[1]), mr->lkey);
    send_u64(0x0123456789abcdefull);
    post_send_inline(m_a, big, sizeof(big));
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_b);
    ASSERT_EQ(2u, cqes.size()) << counters_str();
    uint8_t op_own = cqes[0].raw[63];
    uint64_t v;
    EXPECT_EQ(MLX5_CQE_RESP_SEND, cqes[0].opcode);
    EXPECT_EQ(MLX5_INLINE_SCATTER_32, op_own & 0x0c);
    EXPECT_EQ(0u, cqes[0].wqe_counter);
    EXPECT_EQ(8u, cqes[0].byte_cnt);
    memcpy(&v, cqes[0].raw, sizeof(v));
    EXPECT_EQ(0x0123456789abcdefull, v);
    EXPECT_EQ(0xee, bufs[0][0]) << "scattered to the CQE and to memory";

    EXPECT_EQ(0, cqes[1].raw[63] & 0x0c);
    EXPECT_EQ(1u, cqes[1].wqe_counter);
    EXPECT_EQ(0, memcmp(bufs[1], big, sizeof(big)));
}

TEST_F(test_emu_rmp, linked_list_follows_links)
{
    rmp_pair(rmp_prm::LINKED_LIST, 3);
    uint64_t bufs[3] = {};
    struct ibv_mr *mr = reg(m_b, bufs, sizeof(bufs));
    const uint16_t order[3] = {0, 6, 3};

    for (unsigned i = 0; i < 3; ++i) {
        write_wqe(m_rmp, order[i], &bufs[i], 8, mr->lkey,
                  (i < 2) ? order[i + 1] : 7);
    }
    __atomic_store_n(&m_rmp.dbrec()[0], htobe32(3), __ATOMIC_RELEASE);
    for (uint64_t i = 0; i < 3; ++i) {
        send_u64(0x200 + i);
    }
    uct_ib_emu_engine_run();

    std::vector<polled_cqe> cqes = poll_all(m_b);
    ASSERT_EQ(3u, cqes.size());
    for (unsigned i = 0; i < 3; ++i) {
        EXPECT_EQ(order[i], cqes[i].wqe_counter);
        EXPECT_EQ(0x200u + i, bufs[i]);
    }
}

TEST_F(test_emu_rmp, create_rejections)
{
    using namespace rmp_prm;
    devx_env &env = m_b.env;
    env_init(env, m_ctx1);
    m_qps.push_back(&m_b);
    rmp_mem(m_rmp, env.ctx, LOG_SIZE, LOG_STRIDE);

    struct bad_case {
        const char                    *what;
        std::function<void(prm_buf&)> mutate;
        uint8_t                       status;
        uint32_t                      syndrome;
    };
    const uint32_t bogus_umem = 0xfffff;
    const std::vector<bad_case> cases = {
        {"op_mod", [](prm_buf &in) { in.set(prm::op_mod, 1); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CMD_BAD_OP_MOD},
        {"state RST", [](prm_buf &in) { in.set(RMPC + rmpc::state, 0); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_BAD_STATE},
        {"state ERR",
         [](prm_buf &in) { in.set(RMPC + rmpc::state, STATE_ERR); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_BAD_STATE},
        {"basic cyclic WQE",
         [](prm_buf &in) { in.set(RMPC + rmpc::basic_cyclic_rcv_wqe, 1); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_BASIC_CYCLIC},
        {"striding", [](prm_buf &in) { in.set(WQ + wq::wq_type, 3); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_BAD_WQ_TYPE},
        {"pd", [](prm_buf &in) { in.set(WQ + wq::pd, 0xabcd); },
         prm::BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_RMP_BAD_PD},
        {"log_wq_sz", [](prm_buf &in) { in.set(WQ + wq::log_wq_sz, 16); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_LOG_WQ_SZ},
        {"stride 16", [](prm_buf &in) { in.set(WQ + wq::log_wq_stride, 4); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_LOG_WQ_STRIDE},
        {"stride 1024",
         [](prm_buf &in) { in.set(WQ + wq::log_wq_stride, 10); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_LOG_WQ_STRIDE},
        {"lwm", [](prm_buf &in) { in.set(WQ + wq::lwm, 1u << LOG_SIZE); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_LWM},
        {"wq umem",
         [=](prm_buf &in) { in.set(WQ + wq::wq_umem_id, bogus_umem); },
         prm::BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_RMP_BAD_WQ_UMEM},
        {"ring beyond umem",
         [](prm_buf &in) { in.set(WQ + wq::log_wq_sz, LOG_SIZE + 1); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_WQ_UMEM_SIZE},
        {"ring offset",
         [](prm_buf &in) { in.set(WQ + wq::wq_umem_offset, 32); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_WQ_UMEM_SIZE},
        {"dbr umem",
         [=](prm_buf &in) { in.set(WQ + wq::dbr_umem_id, bogus_umem); },
         prm::BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_RMP_BAD_DBR_UMEM},
        {"dbr misaligned", [](prm_buf &in) { in.set(WQ + wq::dbr_addr, 12); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_DBR_ADDR},
        {"dbr beyond umem",
         [](prm_buf &in) { in.set(WQ + wq::dbr_addr, 64); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_RMP_DBR_ADDR},
    };

    for (const bad_case &bc : cases) {
        prm_buf in = create_cmd(m_rmp, env.pdn, CYCLIC, LOG_SIZE, LOG_STRIDE);
        prm_buf out(prm::HDR_BYTES);

        bc.mutate(in);
        errno = 0;
        EXPECT_EQ(nullptr, create_raw(env.ctx, in, &out)) << bc.what;
        EXPECT_EQ(EREMOTEIO, errno) << bc.what;
        EXPECT_EQ(bc.status, out.get(prm::status)) << bc.what;
        EXPECT_EQ(bc.syndrome, out.get(prm::syndrome))
                << bc.what << ": "
                << uct_ib_emu_syndrome_str(
                           static_cast<uint32_t>(out.get(prm::syndrome)));
    }
    EXPECT_EQ(cases.size(), uct_ib_emu_counters().cmd_failed_count(CREATE_RMP));

    /* a umem of another context is not this context's */
    struct ibv_context *other = open("mlx5_1");
    std::vector<uint8_t> buf(4096);
    struct mlx5dv_devx_umem *foreign =
            uct_ib_glue->devx_umem_reg(other, buf.data(), buf.size(),
                                       IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, foreign);
    prm_buf in = create_cmd(m_rmp, env.pdn, CYCLIC, LOG_SIZE, LOG_STRIDE);
    prm_buf out(prm::HDR_BYTES);
    in.set(WQ + wq::wq_umem_id, foreign->umem_id);
    EXPECT_EQ(nullptr, create_raw(env.ctx, in, &out));
    EXPECT_EQ(UCT_IB_EMU_SYND_CREATE_RMP_BAD_WQ_UMEM, out.get(prm::syndrome));
    EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(foreign));
    close(other);

    /* short input: the command interface refuses it */
    prm_buf short_in(prm::HDR_BYTES);
    short_in.set(prm::opcode, CREATE_RMP);
    errno = 0;
    EXPECT_EQ(nullptr, create_raw(env.ctx, short_in, &out));
    EXPECT_EQ(EREMOTEIO, errno);
    EXPECT_EQ(UCT_IB_EMU_SYND_CMD_INPUT_LEN, out.get(prm::syndrome));

    /* the valid command, its valid bits clear, is accepted */
    in = create_cmd(m_rmp, env.pdn, CYCLIC, LOG_SIZE, LOG_STRIDE);
    m_rmp.obj = create_raw(env.ctx, in, &out);
    EXPECT_NE(nullptr, m_rmp.obj);
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_count(CREATE_RMP) -
                  uct_ib_emu_counters().cmd_failed_count(CREATE_RMP));
}

TEST_F(test_emu_rmp, query_and_modify)
{
    using namespace rmp_prm;
    env_init(m_b.env, m_ctx1);
    make_rmp(m_rmp, m_b.env);
    create_on_rmp(m_b, m_rmp);

    prm_buf out(CMD_BYTES);
    ASSERT_EQ(0, query(m_rmp, &out));
    EXPECT_EQ(0u, out.get(prm::status));
    EXPECT_EQ(STATE_RDY, out.get(RMPC + rmpc::state));
    EXPECT_EQ(CYCLIC, out.get(WQ + wq::wq_type));
    EXPECT_EQ(LOG_SIZE, out.get(WQ + wq::log_wq_sz));
    EXPECT_EQ(LOG_STRIDE, out.get(WQ + wq::log_wq_stride));
    EXPECT_EQ(m_b.env.pdn, out.get(WQ + wq::pd));
    EXPECT_EQ(8u, out.get(WQ + wq::dbr_addr));
    EXPECT_EQ(1u, out.get(WQ + wq::dbr_umem_valid)) << "set by the kernel";
    EXPECT_EQ(1u, out.get(WQ + wq::wq_umem_valid)) << "set by the kernel";
    EXPECT_EQ(m_rmp.dbr_umem->umem_id, out.get(WQ + wq::dbr_umem_id));
    EXPECT_EQ(m_rmp.ring_umem->umem_id, out.get(WQ + wq::wq_umem_id));
    EXPECT_EQ(0u, out.get(WQ + wq::lwm));

    /* the QP names its RMP */
    uct_ib_emu_qp_info_t info;
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(m_b.qp.qpn, &info));
    EXPECT_EQ(m_rmp.rmpn, info.srqn);

    /* the limit */
    prm_buf hdr(prm::HDR_BYTES);
    prm_buf in = modify_lwm_cmd(m_rmp, 3);
    ASSERT_EQ(0, modify_rmp(m_rmp, in, &hdr));
    ASSERT_EQ(0, query(m_rmp, &out));
    EXPECT_EQ(3u, out.get(WQ + wq::lwm));

    struct bad_case {
        const char                    *what;
        std::function<void(prm_buf&)> mutate;
        uint8_t                       status;
        uint32_t                      syndrome;
    };
    const std::vector<bad_case> cases = {
        {"current state", [](prm_buf &in) { in.set(rmp_state, STATE_ERR); },
         prm::BAD_RES_STATE, UCT_IB_EMU_SYND_MODIFY_RMP_BAD_STATE},
        {"to ERR", [](prm_buf &in) { in.set(RMPC + rmpc::state, STATE_ERR); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_MODIFY_RMP_NEXT_STATE},
        {"bitmask", [](prm_buf &in) { in.set(bitmask, 3); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_MODIFY_RMP_BITMASK},
        {"lwm", [](prm_buf &in) { in.set(WQ + wq::lwm, 4); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_MODIFY_RMP_LWM},
        {"op_mod", [](prm_buf &in) { in.set(prm::op_mod, 2); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CMD_BAD_OP_MOD},
    };
    for (const bad_case &bc : cases) {
        prm_buf bad = modify_lwm_cmd(m_rmp, 1);

        bc.mutate(bad);
        EXPECT_EQ(EREMOTEIO, modify_rmp(m_rmp, bad, &hdr)) << bc.what;
        EXPECT_EQ(bc.status, hdr.get(prm::status)) << bc.what;
        EXPECT_EQ(bc.syndrome, hdr.get(prm::syndrome)) << bc.what;
    }
    ASSERT_EQ(0, query(m_rmp, &out));
    EXPECT_EQ(3u, out.get(WQ + wq::lwm)) << "a failed modify changed it";

    /* the kernel routes a command only to the object it names */
    prm_buf other = modify_lwm_cmd(m_rmp, 1);
    other.set(rmpn, m_rmp.rmpn + 1);
    EXPECT_EQ(EINVAL, modify_rmp(m_rmp, other, &hdr));
    prm_buf qp_query(prm::HDR_BYTES);
    qp_query.set(prm::opcode, prm::QUERY_QP);
    qp_query.set(prm::qpn, m_rmp.rmpn);
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_query(m_rmp.obj, qp_query.data(),
                                                  qp_query.size(), out.data(),
                                                  out.size()));
    prm_buf rmp_query(prm::HDR_BYTES);
    rmp_query.set(prm::opcode, QUERY_RMP);
    rmp_query.set(rmpn, m_b.qp.qpn);
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_query(m_b.qp.obj, rmp_query.data(),
                                                  rmp_query.size(), out.data(),
                                                  out.size()));
}

TEST_F(test_emu_rmp, destroy_in_use_is_refused)
{
    env_init(m_b.env, m_ctx1);
    make_rmp(m_rmp, m_b.env);
    create_on_rmp(m_b, m_rmp);

    /* the QP receives from it, the RMP holds its umems and PD */
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_obj_destroy(m_rmp.obj));
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_failed_count(rmp_prm::DESTROY_RMP));
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_umem_dereg(m_rmp.ring_umem));
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_umem_dereg(m_rmp.dbr_umem));

    prm_buf out(rmp_prm::CMD_BYTES);
    EXPECT_EQ(0, query(m_rmp, &out)) << "a refused destroy keeps the RMP";

    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(m_b.qp.obj));
    m_b.qp.obj = nullptr;
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(m_rmp.obj));
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_count(rmp_prm::DESTROY_RMP));
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_destroy(m_rmp.obj)) << "gone";
    m_rmp.obj = nullptr;

    /* its number is no receive queue any more */
    prm_buf in = create_qp_cmd(m_b.env);
    prm_buf cout(prm::HDR_BYTES);
    in.set(prm::QPC + prm::qpc::rq_type, 1);
    in.set(prm::QPC + prm::qpc::srqn, m_rmp.rmpn);
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_b.env.ctx, in.data(),
                                                    in.size(), cout.data(),
                                                    cout.size()));
    EXPECT_EQ(UCT_IB_EMU_SYND_CREATE_QP_BAD_SRQN, cout.get(prm::syndrome));
}

TEST_F(test_emu_rmp, close_reclaims_qp_before_rmp)
{
    struct ibv_context *ctx = open("mlx5_1");
    engine_qp q;
    rmp_t r;

    env_init(q.env, ctx);
    make_rmp(r, q.env);
    create_on_rmp(q, r);
    m_qps.pop_back();
    m_rmps.pop_back();
    close(ctx);

    /* QP, RMP, two RMP umems, PD, CQ, UAR, two QP umems */
    EXPECT_EQ(9u, uct_ib_emu_counters().objects_reclaimed);
    uct_ib_emu_counters_reset();
}

/* An armed limit (lwm): the receive that leaves fewer posted WQEs than it
 * raises SRQ_LIMIT (0x14) on the channels subscribed to the RMP, once, and
 * disarms it */
TEST_F(test_emu_rmp, limit_raises_srq_limit_once)
{
    rmp_pair();
    const uct_ib_emu_dropin_ops_t &ops = uct_ib_emu_dropin_ops;
    struct mlx5dv_devx_event_channel *ch =
            ops.devx_create_event_channel(m_ctx1, 0);
    ASSERT_NE(nullptr, ch);
    const uint16_t ev     = 0x14;
    const uint64_t cookie = 0x1400000000ull | m_rmp.rmpn;
    ASSERT_EQ(0, ops.devx_subscribe_devx_event(ch, m_rmp.obj, sizeof(ev), &ev,
                                               cookie));

    std::vector<uint64_t> bufs(4, 0);
    struct ibv_mr *mr = reg(m_b, bufs.data(), bufs.size() * sizeof(bufs[0]));
    for (unsigned i = 0; i < 4; ++i) {
        post_cyclic(m_rmp, &bufs[i], 8, mr->lkey);
    }
    prm_buf hdr(prm::HDR_BYTES);
    prm_buf in = modify_lwm_cmd(m_rmp, 3);
    ASSERT_EQ(0, modify_rmp(m_rmp, in, &hdr));

    alignas(uint64_t) uint8_t record[sizeof(uint64_t) + 64] = {};
    auto *evh = reinterpret_cast<struct mlx5dv_devx_async_event_hdr*>(record);
    auto readable = [ch] {
        struct pollfd pfd = {ch->fd, POLLIN, 0};
        return ::poll(&pfd, 1, 0) == 1;
    };
    send_u64(1); /* 3 left: not below the limit */
    uct_ib_emu_engine_run();
    EXPECT_FALSE(readable());

    send_u64(2); /* 2 left */
    uct_ib_emu_engine_run();
    ASSERT_EQ(ssize_t(sizeof(record)), ops.devx_get_event(ch, evh,
                                                          sizeof(record)));
    EXPECT_EQ(cookie, evh->cookie);
    const uint8_t *eqe = record + sizeof(uint64_t);
    EXPECT_EQ(0x14, eqe[1]);
    uint32_t num;
    memcpy(&num, &eqe[0x2c], sizeof(num));
    EXPECT_EQ(m_rmp.rmpn, be32toh(num) & 0xffffff);

    prm_buf out(rmp_prm::CMD_BYTES);
    ASSERT_EQ(0, query(m_rmp, &out));
    EXPECT_EQ(0u, out.get(rmp_prm::WQ + rmp_prm::wq::lwm)) << "disarmed";
    send_u64(3);
    uct_ib_emu_engine_run();
    EXPECT_FALSE(readable()) << "once";
    ops.devx_destroy_event_channel(ch);
}

TEST_F(test_emu_rmp, last_wqe_reached_when_qp_enters_error)
{
    rmp_pair();
    const uct_ib_emu_dropin_ops_t &ops = uct_ib_emu_dropin_ops;
    struct mlx5dv_devx_event_channel *ch =
            ops.devx_create_event_channel(m_ctx1, 0);
    ASSERT_NE(nullptr, ch);
    const uint16_t ev = EVENT_LAST_WQE_REACHED;
    const uint64_t cookie = 0x1300000000ull | m_b.qp.qpn;

    /* the event is the QP's, not the RMP's */
    EXPECT_EQ(EINVAL, ops.devx_subscribe_devx_event(ch, m_rmp.obj,
                                                    sizeof(ev), &ev, cookie));
    ASSERT_EQ(0, ops.devx_subscribe_devx_event(ch, m_b.qp.obj, sizeof(ev),
                                               &ev, cookie));

    /* a receive in use by the QP when it fails is flushed */
    uint64_t buf = 0;
    struct ibv_mr *mr = reg(m_b, &buf, sizeof(buf));
    post_cyclic(m_rmp, &buf, sizeof(buf), mr->lkey);

    prm_buf to_err = modify_cmd(prm::QP_2ERR, m_b.qp.qpn, prm::HDR_BYTES);
    ASSERT_EQ(0, modify(m_b.qp, to_err));

    /* the cookie, then the 64-byte EQE */
    alignas(uint64_t) uint8_t record[sizeof(uint64_t) + 64] = {};
    auto *hdr   = reinterpret_cast<struct mlx5dv_devx_async_event_hdr*>(
            record);
    ssize_t len = ops.devx_get_event(ch, hdr, sizeof(record));
    ASSERT_EQ(ssize_t(sizeof(record)), len) << strerror(errno);
    EXPECT_EQ(cookie, hdr->cookie);
    const uint8_t *eqe = record + sizeof(uint64_t);
    EXPECT_EQ(EVENT_LAST_WQE_REACHED, eqe[1]);
    uint32_t num;
    memcpy(&num, &eqe[0x2c], sizeof(num));
    EXPECT_EQ(m_b.qp.qpn, be32toh(num) & 0xffffff);

    /* the QP in error takes no WQE: the RMP's stays for its other QPs */
    prm_buf out(rmp_prm::CMD_BYTES);
    ASSERT_EQ(0, query(m_rmp, &out));
    EXPECT_EQ(0u, out.get(rmp_prm::WQ + rmp_prm::wq::hw_counter));
    ops.devx_destroy_event_channel(ch);
}

} // namespace
