/*
 * Hardware tag matching on the emulated device: CREATE_XRQ with its
 * checks, the HCA caps that advertise it, the TAG_MATCHING list operations
 * (APPEND, REMOVE, NOP, the sw_cnt check), eager messages matched and
 * unexpected, untagged messages, and a matched rendezvous request, whose
 * data the device reads itself on a QP without a send queue and answers
 * with a FIN. m_a on mlx5_0 sends to m_b on mlx5_1, which receives from
 * the XRQ; m_c, on the XRQ too and connected to itself, posts the list
 * operations as UCX's command QP does. Commands are written with the PRM
 * bit positions below, independent of prm.h.
 */
#include "emu/engine_test.h"

#include <emu/api/syndrome.h>

#include <infiniband/tm_types.h>

#include <functional>


namespace {

using namespace emu_test;

/* PRM facts of the XRQ commands (mlx5_ifc.h: create_xrq_in, xrqc) */
namespace xrq_prm {
constexpr uint16_t CREATE_XRQ  = 0x717;
constexpr uint16_t DESTROY_XRQ = 0x718;

constexpr size_t   CMD_BYTES   = 2688 / 8;
constexpr unsigned XRQC        = 128;
constexpr unsigned WQ          = XRQC + 1024;

constexpr field out_xrqn       {72, 24};   /* create_xrq_out */

namespace xrqc {
constexpr field topology             {  20,  4};
constexpr field offload              {  28,  4};
constexpr field cqn                  {  72, 24};
constexpr field dc                   { 127,  1};
constexpr field log_matching_list_sz { 256,  4};
} // namespace xrqc

namespace wq {
constexpr field wq_type        {  0,  4};
constexpr field log_wqe_num_of_strides {308, 4};
constexpr field log_wqe_stride_size    {317, 3};
constexpr field pd             { 72, 24};
constexpr field log_wq_stride  {268,  4};
constexpr field log_wq_sz      {283,  5};
constexpr field dbr_umem_id    {320, 32};
constexpr field wq_umem_id     {352, 32};
} // namespace wq

/* cmd_hca_cap */
constexpr field tag_matching             {1520, 1};
constexpr field rndv_offload_rc          {1521, 1};
constexpr field rndv_offload_dc          {1522, 1};
constexpr field log_tag_matching_list_sz {1523, 5};
constexpr field log_max_xrq              {1531, 5};
constexpr field ext_stride_num_range     { 928, 1};

constexpr uint8_t TOPOLOGY_TM   = 1;
constexpr uint8_t OFFLOAD_RNDV  = 1;
constexpr uint8_t CYCLIC        = 1;
constexpr uint8_t CYCLIC_STRIDING = 3;
} // namespace xrq_prm

/* The tag-matching segment's operations and flags, and the CQE's app_op
 * codes (PRM; what UCX 1.13.1 posts and reads) */
constexpr uint8_t TM_NOP     = 0, TM_APPEND = 1, TM_REMOVE = 2;
constexpr uint8_t TM_SW_CNT  = 1 << 6, TM_CQE_REQ = 1 << 7;
constexpr uint8_t APP_TM     = 1;
constexpr uint8_t OP_CONSUMED = 0x1, OP_EXPECTED = 0x2, OP_UNEXPECTED = 0x3,
                  OP_NO_TAG = 0x4, OP_APPEND = 0x5, OP_REMOVE = 0x6,
                  OP_NOOP = 0x7, OP_CONSUMED_MSG = 0xa;


/* An XRQ and the umems of its ring and doorbell record */
struct xrq_t {
    std::vector<uint8_t>    ring;
    struct mlx5dv_devx_umem *ring_umem = nullptr;
    std::vector<uint8_t>    dbr;
    struct mlx5dv_devx_umem *dbr_umem  = nullptr;
    struct mlx5dv_devx_obj  *obj       = nullptr;
    uint32_t                xrqn       = 0;
    unsigned                size       = 0;
    unsigned                stride     = 0;
    uint16_t                posted     = 0;
};

/* A tag-matching CQE's fields */
struct tm_cqe {
    polled_cqe     c;
    uint8_t        app;
    uint8_t        app_op;
    uint16_t       app_info;
    struct ibv_tmh tmh;     /* the CQE's first 16 bytes, as a header */
    uint32_t       success; /* the same bytes, as a list operation's */
};

tm_cqe decode(const polled_cqe &c)
{
    struct mlx5_cqe64 cqe;
    tm_cqe t;

    memcpy(&cqe, c.raw, sizeof(cqe));
    t.c        = c;
    t.app      = cqe.app;
    t.app_op   = cqe.app_op;
    t.app_info = be16toh(cqe.app_info);
    memcpy(&t.tmh, c.raw, sizeof(t.tmh));
    t.success  = be32toh(cqe.tm_cqe.success);
    return t;
}


class test_emu_tag_matching : public engine_fixture {
protected:
    static constexpr unsigned LOG_SIZE   = 3; /* 8 WQEs */
    static constexpr unsigned LOG_STRIDE = 5; /* 32 bytes, as UCX 1.13.1 */
    static constexpr unsigned LOG_LIST   = 3; /* 8 entries */
    /* striding: a next segment and 8 data segments, 144 bytes, in 256 */
    static constexpr unsigned LOG_MP_STRIDE = 8;
    static constexpr unsigned MP_STRIDES    = 8;

    void cleanup() override
    {
        for (engine_qp *q : m_qps) {
            if (q->qp.obj != nullptr) {
                EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(q->qp.obj));
                q->qp.obj = nullptr;
            }
        }
        if (m_xrq.obj != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(m_xrq.obj));
        }
        if (m_xrq.dbr_umem != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(m_xrq.dbr_umem));
        }
        if (m_xrq.ring_umem != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(m_xrq.ring_umem));
        }
        m_xrq = xrq_t();
        engine_fixture::cleanup();
    }

    void xrq_mem(struct ibv_context *ctx)
    {
        m_xrq.size   = 1u << LOG_SIZE;
        m_xrq.stride = 1u << (m_striding ? LOG_MP_STRIDE : LOG_STRIDE);
        m_xrq.ring.assign(size_t(m_xrq.size) * m_xrq.stride, 0);
        m_xrq.dbr.assign(64, 0);
        m_xrq.ring_umem = uct_ib_glue->devx_umem_reg(ctx, m_xrq.ring.data(),
                                                     m_xrq.ring.size(),
                                                     IBV_ACCESS_LOCAL_WRITE);
        m_xrq.dbr_umem  = uct_ib_glue->devx_umem_reg(ctx, m_xrq.dbr.data(),
                                                     m_xrq.dbr.size(),
                                                     IBV_ACCESS_LOCAL_WRITE);
        ASSERT_NE(nullptr, m_xrq.ring_umem);
        ASSERT_NE(nullptr, m_xrq.dbr_umem);
    }

    /* A CREATE_XRQ as UCX 1.13.1 writes it: tag matching with rendezvous
     * offload, a cyclic ring, the doorbell record at offset 8; striding,
     * 8 strides of 1024 bytes a WQE (a data segment each) */
    prm_buf create_cmd(const devx_env &env) const
    {
        using namespace xrq_prm;
        prm_buf in(CMD_BYTES);

        in.set(prm::opcode, CREATE_XRQ);
        in.set(XRQC + xrqc::topology, TOPOLOGY_TM);
        in.set(XRQC + xrqc::offload, OFFLOAD_RNDV);
        in.set(XRQC + xrqc::log_matching_list_sz, LOG_LIST);
        in.set(XRQC + xrqc::cqn, env.cqn);
        in.set(WQ + wq::wq_type, m_striding ? CYCLIC_STRIDING : CYCLIC);
        in.set(WQ + wq::log_wq_sz, LOG_SIZE);
        in.set(WQ + wq::log_wq_stride, m_striding ? LOG_MP_STRIDE : LOG_STRIDE);
        if (m_striding) {
            in.set(WQ + wq::log_wqe_num_of_strides, (3 - 9) & 0xf);
            in.set(WQ + wq::log_wqe_stride_size, 10 - 6);
        }
        in.set(WQ + wq::pd, env.pdn);
        in.set(WQ + wq::dbr_umem_id, m_xrq.dbr_umem->umem_id);
        in.set(WQ + field{128, 64}, 8); /* wq.dbr_addr */
        in.set(WQ + wq::wq_umem_id, m_xrq.ring_umem->umem_id);
        return in;
    }

    void make_xrq(const devx_env &env)
    {
        if (m_xrq.ring_umem == nullptr) {
            xrq_mem(env.ctx);
        }
        prm_buf in = create_cmd(env);
        prm_buf out(prm::HDR_BYTES);

        m_xrq.obj = uct_ib_glue->devx_obj_create(env.ctx, in.data(), in.size(),
                                                 out.data(), out.size());
        ASSERT_NE(nullptr, m_xrq.obj)
                << "errno " << errno << " syndrome 0x" << std::hex
                << out.get(prm::syndrome);
        m_xrq.xrqn = static_cast<uint32_t>(out.get(xrq_prm::out_xrqn));
    }

    /* A QP of q's env receiving from the XRQ; no send queue if asked */
    void create_qp_on(engine_qp &q, bool no_sq)
    {
        q.cq       = dv_cq(q.env.cq);
        prm_buf in = create_qp_cmd(q.env);
        in.set(prm::QPC + prm::qpc::rq_type, 1);
        in.set(prm::QPC + prm::qpc::srqn, m_xrq.xrqn);
        in.set(prm::QPC + prm::qpc::log_rq_size, 0);
        in.set(prm::QPC + prm::qpc::log_rq_stride, 0);
        if (no_sq) {
            in.set(prm::QPC + prm::qpc::no_sq, 1);
            in.set(prm::QPC + prm::qpc::log_sq_size, 0);
        }
        q.qp = create_qp(q.env, in);
        ASSERT_NE(nullptr, q.qp.obj);
    }

    /*
     * m_a (mlx5_0) sends to m_b (mlx5_1), which receives from the XRQ and,
     * with no_sq, has no send queue; m_c is the command QP, on the XRQ,
     * connected to itself. All their CQEs land on m_b's CQ (the XRQ's).
     */
    void tm_setup(bool b_no_sq)
    {
        create(m_a, m_ctx0);
        env_init(m_b.env, m_ctx1);
        m_qps.push_back(&m_b);
        make_xrq(m_b.env);
        create_qp_on(m_b, b_no_sq);
        connect(m_a, m_b, MAC_MLX5_1, qp_params());
        connect(m_b, m_a, MAC_MLX5_0, qp_params());

        /* m_c on a set-up of its own on the same device: its list
         * operations complete on the XRQ's CQ, m_b's */
        env_init(m_c.env, m_ctx1);
        m_qps.push_back(&m_c);
        create_qp_on(m_c, false);
        connect(m_c, m_c, MAC_MLX5_1, qp_params());
    }

    /* A TAG_MATCHING WQE on the command QP */
    void list_op(uint8_t op, uint8_t flags, uint16_t index, uint16_t sw_cnt,
                 uint64_t tag = 0, uint64_t mask = 0, const void *buf = nullptr,
                 uint32_t len = 0, uint32_t lkey = 0)
    {
        auto wqe = ctrl(m_c, MLX5_OPCODE_TAG_MATCHING, false);
        struct mlx5_wqe_tm_seg tm = {};

        tm.opcode      = uint8_t(op << 4);
        tm.flags       = flags;
        tm.index       = htobe16(index);
        tm.sw_cnt      = htobe16(sw_cnt);
        tm.append_tag  = tag;
        tm.append_mask = mask;
        append(wqe, tm);
        if (op == TM_APPEND) {
            data(wqe, buf, len, lkey);
        }
        finish(wqe, m_c);

        /* a QP on a shared receive queue has no RQ: its SQ begins the
         * WQ umem (engine_qp::sq_buf assumes an RQ before it) */
        size_t at = size_t(m_c.sq_pi % engine_qp::SQ_BBS) * MLX5_SEND_WQE_BB;
        memcpy(m_c.env.wq_buf.data() + at, wqe.data(), wqe.size());
        m_c.sq_pi += (wqe.size() + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
        ring_sq(m_c);
    }

    /* Post one receive WQE to the XRQ in ring order */
    void post_xrq(void *buf, uint32_t len, uint32_t lkey)
    {
        uint8_t *wqe = m_xrq.ring.data() +
                       size_t(m_xrq.posted & (m_xrq.size - 1)) * m_xrq.stride;
        struct mlx5_wqe_data_seg d = dseg(buf, len, lkey);

        memset(wqe, 0, m_xrq.stride);
        memcpy(wqe + 16, &d, sizeof(d));
        ++m_xrq.posted;
        __atomic_store_n(reinterpret_cast<uint32_t*>(m_xrq.dbr.data() + 8),
                         htobe32(m_xrq.posted), __ATOMIC_RELEASE);
    }

    /* A message from m_a: a tag-matching header, then payload */
    void send_tmh(uint8_t opcode, uint32_t app_ctx, uint64_t tag,
                  const void *payload, uint32_t len)
    {
        std::vector<uint8_t> msg(sizeof(struct ibv_tmh) + len);
        struct ibv_tmh tmh = {};

        tmh.opcode  = opcode;
        tmh.app_ctx = htobe32(app_ctx);
        tmh.tag     = tag;
        memcpy(msg.data(), &tmh, sizeof(tmh));
        memcpy(msg.data() + sizeof(tmh), payload, len);
        post_send_inline(m_a, msg.data(), uint32_t(msg.size()));
    }

    std::vector<tm_cqe> run_and_poll(engine_qp &q)
    {
        std::vector<tm_cqe> out;

        uct_ib_emu_engine_run();
        for (const polled_cqe &c : poll_all(q)) {
            out.push_back(decode(c));
        }
        return out;
    }

    /* Post one striding WQE: a data segment per stride */
    void post_xrq_strides(const std::vector<void*> &bufs, uint32_t len,
                          uint32_t lkey)
    {
        uint8_t *wqe = m_xrq.ring.data() +
                       size_t(m_xrq.posted & (m_xrq.size - 1)) * m_xrq.stride;

        memset(wqe, 0, m_xrq.stride);
        for (size_t i = 0; i < bufs.size(); ++i) {
            struct mlx5_wqe_data_seg d = dseg(bufs[i], len, lkey);
            memcpy(wqe + 16 * (i + 1), &d, sizeof(d));
        }
        ++m_xrq.posted;
        __atomic_store_n(reinterpret_cast<uint32_t*>(m_xrq.dbr.data() + 8),
                         htobe32(m_xrq.posted), __ATOMIC_RELEASE);
    }

    xrq_t m_xrq;
    bool  m_striding = false;
};


TEST_F(test_emu_tag_matching, hca_caps_report_tag_matching)
{
    using namespace xrq_prm;
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    ASSERT_EQ(0, uct_ib_glue->devx_general_cmd(m_ctx0, in.data(), in.size(),
                                                out.data(), out.size()));
    EXPECT_EQ(1u, out.get(prm::CAPABILITY + tag_matching));
    EXPECT_EQ(1u, out.get(prm::CAPABILITY + rndv_offload_rc));
    EXPECT_EQ(0u, out.get(prm::CAPABILITY + rndv_offload_dc));
    EXPECT_EQ(10u, out.get(prm::CAPABILITY + log_tag_matching_list_sz));
    EXPECT_GT(out.get(prm::CAPABILITY + log_max_xrq), 0u);
    EXPECT_EQ(1u, out.get(prm::CAPABILITY + ext_stride_num_range));
}

TEST_F(test_emu_tag_matching, create_rejections)
{
    using namespace xrq_prm;
    env_init(m_b.env, m_ctx1);
    m_qps.push_back(&m_b);
    xrq_mem(m_b.env.ctx);

    struct bad_case {
        const char                    *what;
        std::function<void(prm_buf&)> mutate;
        uint8_t                       status;
        uint32_t                      syndrome;
    } cases[] = {
        {"topology 2", [](prm_buf &in) { in.set(XRQC + xrqc::topology, 2); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_TOPOLOGY},
        {"rendezvous without tag matching", [](prm_buf &in) {
             in.set(XRQC + xrqc::topology, 0);
         }, prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_OFFLOAD},
        {"DC", [](prm_buf &in) { in.set(XRQC + xrqc::dc, 1); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_DC},
        {"empty list", [](prm_buf &in) {
             in.set(XRQC + xrqc::log_matching_list_sz, 0);
         }, prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_LIST_SZ},
        {"list above the cap", [](prm_buf &in) {
             in.set(XRQC + xrqc::log_matching_list_sz, 11);
         }, prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_LIST_SZ},
        {"no such CQ", [](prm_buf &in) { in.set(XRQC + xrqc::cqn, 0xfffff); },
         prm::BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_XRQ_BAD_CQ},
        {"no such ring type", [](prm_buf &in) { in.set(WQ + wq::wq_type, 4); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_BAD_WQ_TYPE},
        {"no such PD", [](prm_buf &in) { in.set(WQ + wq::pd, 0xfffff); },
         prm::BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_XRQ_BAD_PD},
        {"ring too large", [](prm_buf &in) { in.set(WQ + wq::log_wq_sz, 16); },
         prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_LOG_WQ_SZ},
        {"ring beyond its umem", [](prm_buf &in) {
             in.set(WQ + wq::log_wq_sz, LOG_SIZE + 1);
         }, prm::BAD_PARAM, UCT_IB_EMU_SYND_CREATE_XRQ_WQ_UMEM_SIZE},
    };

    for (const bad_case &c : cases) {
        prm_buf in = create_cmd(m_b.env);
        prm_buf out(prm::HDR_BYTES);

        c.mutate(in);
        EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_b.env.ctx, in.data(),
                                                        in.size(), out.data(),
                                                        out.size()))
                << c.what;
        EXPECT_EQ(EREMOTEIO, errno) << c.what;
        EXPECT_EQ(c.status, out.get(prm::status)) << c.what;
        EXPECT_EQ(c.syndrome, out.get(prm::syndrome)) << c.what;
    }
    EXPECT_EQ(sizeof(cases) / sizeof(cases[0]),
              uct_ib_emu_counters().cmd_failed_count(CREATE_XRQ));

    /* the valid command, and its destroy: refused while a QP uses it */
    make_xrq(m_b.env);
    create_qp_on(m_b, false);
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_obj_destroy(m_xrq.obj));
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_failed_count(DESTROY_XRQ));
}

TEST_F(test_emu_tag_matching, eager_matched_unexpected_and_untagged)
{
    tm_setup(false);
    std::vector<uint64_t> tagged(4, 0), rx(8 * 4, 0);
    struct ibv_mr *tmr = reg(m_b, tagged.data(), tagged.size() * 8);
    struct ibv_mr *rmr = reg(m_b, rx.data(), rx.size() * 8);
    const uint64_t tag = 0x1122334455667788ull;
    const uint64_t v1 = 0xabcdef0123456789ull, v2 = 0x42, v3 = 0x77;

    for (unsigned i = 0; i < 4; ++i) {
        post_xrq(&rx[i * 4], 32, rmr->lkey);
    }

    /* APPEND fills entry 0 (the XRQ's first free one), next free 1 */
    list_op(TM_APPEND, TM_CQE_REQ | TM_SW_CNT, 1, 0, tag, ~0ull,
            tagged.data(), 32, tmr->lkey);
    std::vector<tm_cqe> cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(int(MLX5_CQE_NO_PACKET), int(cqes[0].c.opcode));
    EXPECT_EQ(APP_TM, cqes[0].app);
    EXPECT_EQ(OP_APPEND, cqes[0].app_op);
    EXPECT_EQ(uint32_t(MLX5_TMC_SUCCESS), cqes[0].success);
    EXPECT_EQ(m_c.qp.qpn, cqes[0].c.qpn);

    /* a matching eager message goes, without its header, to the tagged
     * buffer: one CONSUMED_MSG CQE with the header */
    send_tmh(IBV_TMH_EAGER, 0x5150, tag, &v1, sizeof(v1));
    cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(int(MLX5_CQE_RESP_SEND), int(cqes[0].c.opcode));
    EXPECT_EQ(OP_CONSUMED_MSG, cqes[0].app_op);
    EXPECT_EQ(0u, cqes[0].app_info);
    EXPECT_EQ(sizeof(v1), cqes[0].c.byte_cnt);
    EXPECT_EQ(IBV_TMH_EAGER, cqes[0].tmh.opcode);
    EXPECT_EQ(0x5150u, be32toh(cqes[0].tmh.app_ctx));
    EXPECT_EQ(tag, cqes[0].tmh.tag);
    EXPECT_EQ(v1, tagged[0]);
    EXPECT_EQ(0u, rx[0]) << "no receive WQE taken";

    /* the entry is gone: the same tag again is unexpected, header and all,
     * in the next receive WQE, and counted */
    send_tmh(IBV_TMH_EAGER, 0x5151, tag, &v2, sizeof(v2));
    cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_UNEXPECTED, cqes[0].app_op);
    EXPECT_EQ(0u, cqes[0].c.wqe_counter);
    EXPECT_EQ(16u + sizeof(v2), cqes[0].c.byte_cnt);
    EXPECT_EQ(v2, rx[2]);

    /* an APPEND whose sw_cnt misses that message is refused, its entry
     * (1) used all the same; with the count the next one goes (entry 2) */
    list_op(TM_APPEND, TM_CQE_REQ | TM_SW_CNT, 2, 0, 0x10, 0xff,
            &tagged[2], 16, tmr->lkey);
    list_op(TM_APPEND, TM_CQE_REQ | TM_SW_CNT, 3, 1, 0x10, 0xff,
            &tagged[2], 16, tmr->lkey);
    cqes = run_and_poll(m_b);
    ASSERT_EQ(2u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_APPEND, cqes[0].app_op);
    EXPECT_EQ(0u, cqes[0].success) << "stale sw_cnt";
    EXPECT_EQ(1u, be16toh(*reinterpret_cast<const uint16_t*>(
                          cqes[0].c.raw + 4))) << "hw_phase_cnt";
    EXPECT_EQ(uint32_t(MLX5_TMC_SUCCESS), cqes[1].success);

    /* the mask: tag 0x1234510 matches 0x10 under 0xff */
    send_tmh(IBV_TMH_EAGER, 1, 0x1234510, &v3, sizeof(v3));
    cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_CONSUMED_MSG, cqes[0].app_op);
    EXPECT_EQ(2u, cqes[0].app_info);
    EXPECT_EQ(v3, tagged[2]);

    /* untagged messages take a receive WQE: NO_TAG and FIN alike */
    send_tmh(IBV_TMH_NO_TAG, 0, 0, &v1, sizeof(v1));
    send_tmh(IBV_TMH_FIN, 9, 0, nullptr, 0);
    cqes = run_and_poll(m_b);
    ASSERT_EQ(2u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_NO_TAG, cqes[0].app_op);
    EXPECT_EQ(1u, cqes[0].c.wqe_counter);
    EXPECT_EQ(v1, rx[6]);
    EXPECT_EQ(OP_NO_TAG, cqes[1].app_op);
    EXPECT_EQ(2u, cqes[1].c.wqe_counter);

    /* REMOVE of a listed entry (3), of one no longer listed, of the one
     * the refused APPEND used (1), and a NOP */
    list_op(TM_APPEND, TM_CQE_REQ, 4, 0, 0x99, ~0ull, &tagged[3], 8,
            tmr->lkey);
    list_op(TM_REMOVE, TM_CQE_REQ, 3, 0);
    list_op(TM_REMOVE, TM_CQE_REQ, 3, 0);
    list_op(TM_REMOVE, TM_CQE_REQ, 1, 0);
    list_op(TM_NOP, TM_CQE_REQ | TM_SW_CNT, 0, 1);
    cqes = run_and_poll(m_b);
    ASSERT_EQ(5u, cqes.size()) << counters_str();
    EXPECT_EQ(uint32_t(MLX5_TMC_SUCCESS), cqes[0].success);
    EXPECT_EQ(OP_REMOVE, cqes[1].app_op);
    EXPECT_EQ(3u, cqes[1].app_info);
    EXPECT_EQ(uint32_t(MLX5_TMC_SUCCESS), cqes[1].success);
    EXPECT_EQ(0u, cqes[2].success) << "already removed";
    EXPECT_EQ(0u, cqes[3].success) << "never listed";
    EXPECT_EQ(OP_NOOP, cqes[4].app_op);

    /* the removed tag no longer matches */
    send_tmh(IBV_TMH_EAGER, 2, 0x99, &v2, sizeof(v2));
    cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_UNEXPECTED, cqes[0].app_op);
    EXPECT_EQ(0u, tagged[3]);
}

TEST_F(test_emu_tag_matching, oldest_matching_entry_wins)
{
    tm_setup(false);
    std::vector<uint64_t> tagged(3, 0);
    struct ibv_mr *tmr = reg(m_b, tagged.data(), tagged.size() * 8);
    const uint64_t v = 0x600d;

    /* entries 0, 1, 2 in append order; 0 does not match, 1 and 2 do */
    list_op(TM_APPEND, 0, 1, 0, 0x1, ~0ull, &tagged[0], 8, tmr->lkey);
    list_op(TM_APPEND, 0, 2, 0, 0x2, 0x0f, &tagged[1], 8, tmr->lkey);
    list_op(TM_APPEND, 0, 3, 0, 0x2, ~0ull, &tagged[2], 8, tmr->lkey);
    EXPECT_TRUE(run_and_poll(m_b).empty()) << "no CQE asked for";

    send_tmh(IBV_TMH_EAGER, 0, 0x2, &v, sizeof(v));
    std::vector<tm_cqe> cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(1u, cqes[0].app_info);
    EXPECT_EQ(v, tagged[1]);
    EXPECT_EQ(0u, tagged[2]);
}

TEST_F(test_emu_tag_matching, rendezvous_read_by_the_device_and_fin)
{
    tm_setup(true); /* m_b has no send queue, as UCX's tag-matching QP */
    const size_t len = 5000; /* several packets of the 1024-byte MTU */
    std::vector<uint8_t> src(len), dst(len, 0);
    std::vector<uint8_t> fin_buf(64, 0);
    struct ibv_mr *smr = reg(m_a, src.data(), src.size());
    struct ibv_mr *fmr = reg(m_a, fin_buf.data(), fin_buf.size());
    struct ibv_mr *dmr = reg(m_b, dst.data(), dst.size());
    const uint64_t tag = 0xfeed;
    struct ibv_rvh rvh;

    for (size_t i = 0; i < len; ++i) {
        src[i] = uint8_t(i * 7 + 3);
    }
    post_recv(m_a, {dseg(fin_buf.data(), 64, fmr->lkey)});
    list_op(TM_APPEND, 0, 1, 0, tag, ~0ull, dst.data(), uint32_t(len),
            dmr->lkey);
    EXPECT_TRUE(run_and_poll(m_b).empty()) << "no CQE asked for";

    rvh.va   = htobe64(reinterpret_cast<uintptr_t>(src.data()));
    rvh.rkey = htobe32(smr->rkey);
    rvh.len  = htobe32(uint32_t(len));
    send_tmh(IBV_TMH_RNDV, 0xc0ffee, tag, &rvh, sizeof(rvh));

    std::vector<tm_cqe> cqes;
    for (int pass = 0; (pass < 100) && (cqes.size() < 2); ++pass) {
        for (const tm_cqe &c : run_and_poll(m_b)) {
            cqes.push_back(c);
        }
    }
    ASSERT_EQ(2u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_CONSUMED, cqes[0].app_op);
    EXPECT_EQ(0u, cqes[0].app_info);
    EXPECT_EQ(IBV_TMH_RNDV, cqes[0].tmh.opcode);
    EXPECT_EQ(0xc0ffeeu, be32toh(cqes[0].tmh.app_ctx));
    EXPECT_EQ(OP_EXPECTED, cqes[1].app_op);
    EXPECT_EQ(0u, cqes[1].app_info);
    EXPECT_EQ(len, cqes[1].c.byte_cnt);
    EXPECT_EQ(m_b.qp.qpn, cqes[1].c.qpn);
    EXPECT_TRUE(src == dst) << "the device read the sender's data";

    /* the FIN reaches the sender with the request's app_ctx; the sender's
     * own SEND completed as any other, the read and the FIN wrote no CQE
     * on the QP without a send queue */
    std::vector<polled_cqe> a_cqes;
    for (int pass = 0; (pass < 100) && (a_cqes.size() < 2); ++pass) {
        uct_ib_emu_engine_run();
        for (const polled_cqe &c : poll_all(m_a)) {
            a_cqes.push_back(c);
        }
    }
    ASSERT_EQ(2u, a_cqes.size()) << counters_str();
    EXPECT_EQ(int(MLX5_CQE_REQ), int(a_cqes[0].opcode));
    EXPECT_EQ(int(MLX5_CQE_RESP_SEND), int(a_cqes[1].opcode));
    EXPECT_EQ(sizeof(struct ibv_tmh), a_cqes[1].byte_cnt);
    struct ibv_tmh fin;
    memcpy(&fin, fin_buf.data(), sizeof(fin));
    EXPECT_EQ(IBV_TMH_FIN, fin.opcode);
    EXPECT_EQ(0xc0ffeeu, be32toh(fin.app_ctx));
    EXPECT_TRUE(run_and_poll(m_b).empty());
}

} // namespace

namespace {

TEST_F(test_emu_tag_matching, striding_a_stride_and_a_cqe_per_packet)
{
    m_striding = true;
    tm_setup(false);
    const unsigned mtu = 1024;
    std::vector<uint8_t> strides(2 * MP_STRIDES * mtu, 0);
    struct ibv_mr *smr = reg(m_b, strides.data(), strides.size());
    std::vector<uint8_t> msg(2 * mtu + 100); /* 3 packets */
    std::vector<void*> wqe0, wqe1;

    for (unsigned i = 0; i < MP_STRIDES; ++i) {
        wqe0.push_back(&strides[i * mtu]);
        wqe1.push_back(&strides[(MP_STRIDES + i) * mtu]);
    }
    for (size_t i = 0; i < msg.size(); ++i) {
        msg[i] = uint8_t(i * 13 + 1);
    }
    struct ibv_tmh tmh = {};
    tmh.opcode = IBV_TMH_EAGER;
    tmh.tag    = 0x77;
    memcpy(msg.data(), &tmh, sizeof(tmh));
    struct ibv_mr *mmr = reg(m_a, msg.data(), msg.size());

    /* unexpected, 3 packets: no WQE posted, so it waits (RNR) */
    post_send(m_a, msg.data(), uint32_t(msg.size()), mmr->lkey);
    EXPECT_TRUE(run_and_poll(m_b).empty());
    EXPECT_GT(uct_ib_emu_counters().rnr_naks, 0u);

    /* two WQEs of 8 strides: 3 strides of the first, a CQE each */
    post_xrq_strides(wqe0, mtu, smr->lkey);
    post_xrq_strides(wqe1, mtu, smr->lkey);
    std::vector<tm_cqe> cqes;
    for (int pass = 0; (pass < 100) && (cqes.size() < 3); ++pass) {
        uct_ib_emu_clock_advance(1000000);
        for (const tm_cqe &c : run_and_poll(m_b)) {
            cqes.push_back(c);
        }
    }
    ASSERT_EQ(3u, cqes.size()) << counters_str();
    for (unsigned i = 0; i < 3; ++i) {
        uint16_t stride;
        memcpy(&stride, cqes[i].c.raw + 20, sizeof(stride));
        EXPECT_EQ(OP_UNEXPECTED, cqes[i].app_op) << i;
        EXPECT_EQ(0u, cqes[i].c.wqe_counter) << i;
        EXPECT_EQ(i, be16toh(stride)) << i;
        EXPECT_EQ((i < 2) ? mtu : 100u, cqes[i].c.byte_cnt & 0xffff) << i;
        EXPECT_EQ(i == 2, !!(cqes[i].c.byte_cnt & (1u << 30))) << i;
        EXPECT_EQ(0, memcmp(&strides[i * mtu], &msg[i * mtu],
                            cqes[i].c.byte_cnt & 0xffff)) << i;
    }

    /* the next message goes on in the same WQE, then the next WQE: 8
     * packets take strides 3..7 of WQE 0 and 0..2 of WQE 1 */
    std::vector<uint8_t> big(8 * mtu);
    memcpy(big.data(), &tmh, sizeof(tmh));
    struct ibv_mr *bmr = reg(m_a, big.data(), big.size());
    post_send(m_a, big.data(), uint32_t(big.size()), bmr->lkey);
    cqes = run_and_poll(m_b);
    ASSERT_EQ(8u, cqes.size()) << counters_str();
    for (unsigned i = 0; i < 8; ++i) {
        uint16_t stride;
        memcpy(&stride, cqes[i].c.raw + 20, sizeof(stride));
        EXPECT_EQ((i < 5) ? 0u : 1u, cqes[i].c.wqe_counter) << i;
        EXPECT_EQ((i < 5) ? (3 + i) : (i - 5), be16toh(stride)) << i;
        EXPECT_EQ(i == 7, !!(cqes[i].c.byte_cnt & (1u << 30))) << i;
    }

    /* a matched message still goes whole to its tagged buffer */
    std::vector<uint8_t> tagged(4 * mtu, 0);
    struct ibv_mr *tmr = reg(m_b, tagged.data(), tagged.size());
    list_op(TM_APPEND, 0, 1, 0, 0x77, ~0ull, tagged.data(),
            uint32_t(tagged.size()), tmr->lkey);
    EXPECT_TRUE(run_and_poll(m_b).empty());
    post_send(m_a, msg.data(), uint32_t(msg.size()), mmr->lkey);
    cqes = run_and_poll(m_b);
    ASSERT_EQ(1u, cqes.size()) << counters_str();
    EXPECT_EQ(OP_CONSUMED_MSG, cqes[0].app_op);
    EXPECT_EQ(msg.size() - 16, cqes[0].c.byte_cnt);
    EXPECT_EQ(0, memcmp(tagged.data(), msg.data() + 16, msg.size() - 16));
}

TEST_F(test_emu_tag_matching, striding_create_rejections)
{
    using namespace xrq_prm;
    m_striding = true;
    env_init(m_b.env, m_ctx1);
    m_qps.push_back(&m_b);
    xrq_mem(m_b.env.ctx);

    prm_buf in = create_cmd(m_b.env), out(prm::HDR_BYTES);
    in.set(WQ + wq::log_wqe_num_of_strides, (2 - 9) & 0xf); /* 4 */
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_b.env.ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()));
    EXPECT_EQ(UCT_IB_EMU_SYND_CREATE_XRQ_STRIDES, out.get(prm::syndrome));

    in = create_cmd(m_b.env);
    in.set(WQ + wq::log_wqe_num_of_strides, (4 - 9) & 0xf); /* 16 */
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_b.env.ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()))
            << "16 data segments do not fit a 256-byte WQE";
    EXPECT_EQ(UCT_IB_EMU_SYND_CREATE_XRQ_STRIDES, out.get(prm::syndrome));
}

} // namespace
