/*
 * The DC transport on the emulated device: CREATE_DCT with its checks,
 * QUERY_DCT and DRAIN_DCT, DCIs made by CREATE_QP as UCX 1.13.1 makes them
 * (qpc.st DCI, no address path at INIT2RTR), and DC traffic: each WQE's
 * address vector names a DCT, its access key and the path, a RoCE MAC among
 * it. A DCI on mlx5_0 (m_a) sends to DCTs on mlx5_1 and mlx5_0; a DCI on
 * mlx5_1 (m_b) sends back. Commands are written with the PRM bit positions
 * below, independent of prm.h.
 */
#include "emu/engine_test.h"

#include <emu/api/syndrome.h>

#include <functional>


namespace {

using namespace emu_test;

/* PRM facts of the DCT commands (mlx5_ifc.h: create_dct_in, dctc) */
namespace dct_prm {
constexpr uint16_t CREATE_DCT  = 0x710;
constexpr uint16_t DRAIN_DCT   = 0x712;
constexpr uint16_t QUERY_DCT   = 0x713;

constexpr size_t   CMD_BYTES   = 1024 / 8;
constexpr unsigned DCTC        = 128;

constexpr field dctn           {72, 24};  /* create_dct_out, the others' in */

namespace dctc {
constexpr field state          {  4,  4};
constexpr field offload_type   { 24,  4};
constexpr field user_index     { 40, 24};
constexpr field cqn            { 72, 24};
constexpr field atomic_mode    {104,  4};
constexpr field rre            {108,  1};
constexpr field rwe            {109,  1};
constexpr field rae            {110,  1};
constexpr field cs_res         {136,  8};
constexpr field min_rnr_nak    {147,  5};
constexpr field srqn_xrqn      {168, 24};
constexpr field pd             {200, 24};
constexpr field dc_access_key  {256, 64};
constexpr field mtu            {325,  3};
constexpr field port           {328,  8};
constexpr field my_addr_index  {360,  8};
constexpr field hop_limit      {376,  8};
constexpr field key_violations {384, 32};
} // namespace dctc

constexpr uint8_t STATE_ACTIVE  = 1;
constexpr uint8_t STATE_DRAINED = 3;

/* cmd_hca_cap */
constexpr field dct                {538, 1};
constexpr field log_max_ra_req_dc  {298, 6};
constexpr field log_max_ra_res_dc  {314, 6};

constexpr uint8_t ST_DCI = 5;
} // namespace dct_prm

constexpr uint64_t DC_KEY = 0x1ee7a330; /* what UCX 1.13.1 uses */

/* A DCT with its receive side: a verbs SRQ whose ring the test fills */
struct dct_t {
    engine_qp         q;        /* env, CQ; q.qp the DCT's object */
    struct ibv_srq    *srq      = nullptr;
    struct mlx5dv_srq dsrq      = {};
    uint16_t          posted    = 0;
};


class test_emu_dc : public engine_fixture {
protected:
    void cleanup() override
    {
        /* a DCT goes before its SRQ, and the SRQ before the PD */
        for (dct_t *d : m_dcts) {
            if (d->q.qp.obj != nullptr) {
                EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(d->q.qp.obj));
                d->q.qp.obj = nullptr;
            }
            if (d->srq != nullptr) {
                EXPECT_EQ(0, uct_ib_glue->destroy_srq(d->srq));
                d->srq = nullptr;
            }
        }
        engine_fixture::cleanup();
    }

    /* What the DCT on ctx is made with: its own PD, CQ and SRQ */
    void dct_env(dct_t &d, struct ibv_context *ctx)
    {
        struct ibv_srq_init_attr sattr = {};
        struct mlx5dv_obj obj          = {};

        env_init(d.q.env, ctx);
        m_qps.push_back(&d.q);
        m_dcts.push_back(&d);
        d.q.cq             = dv_cq(d.q.env.cq);
        sattr.attr.max_wr  = 15;
        sattr.attr.max_sge = 1;
        d.srq = uct_ib_glue->create_srq(d.q.env.pd, &sattr);
        ASSERT_NE(nullptr, d.srq);
        d.dsrq.comp_mask = MLX5DV_SRQ_MASK_SRQN;
        obj.srq.in       = d.srq;
        obj.srq.out      = &d.dsrq;
        ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ));
    }

    /* A CREATE_DCT as UCX 1.13.1 writes it */
    static prm_buf create_dct_cmd(const dct_t &d, uint8_t sgid_index = 1)
    {
        using namespace dct_prm;
        prm_buf in(CMD_BYTES);

        in.set(prm::opcode, CREATE_DCT);
        in.set(DCTC + dctc::pd, d.q.env.pdn);
        in.set(DCTC + dctc::srqn_xrqn, d.dsrq.srqn);
        in.set(DCTC + dctc::cqn, d.q.env.cqn);
        in.set(DCTC + dctc::dc_access_key, DC_KEY);
        in.set(DCTC + dctc::rre, 1);
        in.set(DCTC + dctc::rwe, 1);
        in.set(DCTC + dctc::rae, 1);
        in.set(DCTC + dctc::atomic_mode, 3);
        in.set(DCTC + dctc::port, 1);
        in.set(DCTC + dctc::min_rnr_nak, 12);
        in.set(DCTC + dctc::mtu, 3);
        in.set(DCTC + dctc::my_addr_index, sgid_index);
        in.set(DCTC + dctc::hop_limit, 64);
        return in;
    }

    void make_dct(dct_t &d, struct ibv_context *ctx, uint8_t sgid_index = 1)
    {
        prm_buf out(prm::HDR_BYTES);

        dct_env(d, ctx);
        prm_buf in = create_dct_cmd(d, sgid_index);
        d.q.qp.obj = uct_ib_glue->devx_obj_create(ctx, in.data(), in.size(),
                                                  out.data(), out.size());
        ASSERT_NE(nullptr, d.q.qp.obj)
                << "errno " << errno << " syndrome 0x" << std::hex
                << out.get(prm::syndrome);
        d.q.qp.qpn = static_cast<uint32_t>(out.get(dct_prm::dctn));
    }

    /* QUERY_DCT: the DCT's context */
    static prm_buf query_dct(const dct_t &d)
    {
        prm_buf in(prm::HDR_BYTES), out(dct_prm::CMD_BYTES);

        in.set(prm::opcode, dct_prm::QUERY_DCT);
        in.set(dct_prm::dctn, d.q.qp.qpn);
        EXPECT_EQ(0, uct_ib_glue->devx_obj_query(d.q.qp.obj, in.data(),
                                                 in.size(), out.data(),
                                                 out.size()));
        return out;
    }

    static int drain_dct(const dct_t &d, prm_buf *out)
    {
        prm_buf in(prm::HDR_BYTES);

        in.set(prm::opcode, dct_prm::DRAIN_DCT);
        in.set(dct_prm::dctn, d.q.qp.qpn);
        return uct_ib_glue->devx_obj_modify(d.q.qp.obj, in.data(), in.size(),
                                            out->data(), out->size());
    }

    /* Receive WQEs of one data segment each, linked in order */
    static void post_srq(dct_t &d, void *buf, uint32_t len, uint32_t lkey)
    {
        uint8_t *ring = static_cast<uint8_t*>(d.dsrq.buf);
        auto *next    = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                ring + size_t(d.posted % 16) * d.dsrq.stride);
        struct mlx5_wqe_data_seg seg = dseg(buf, len, lkey);

        next->next_wqe_index = htobe16((d.posted + 1) % 16);
        memcpy(next + 1, &seg, sizeof(seg));
        ++d.posted;
        __atomic_store_n(&d.dsrq.dbrec[0], htobe32(d.posted),
                         __ATOMIC_RELEASE);
    }

    /* A DCI on ctx, as UCX 1.13.1 creates and connects it: no receive
     * queue of its own, RST2INIT with the port, INIT2RTR without a path,
     * RTR2RTS with the retry counts; @a params its retry and timeout */
    void make_dci(engine_qp &q, struct ibv_context *ctx,
                  const qp_params &p = qp_params())
    {
        create(q, ctx, [](prm_buf &in) {
            in.set(prm::QPC + prm::qpc::st, dct_prm::ST_DCI);
            in.set(prm::QPC + prm::qpc::rq_type, 3); /* zero size */
            in.set(prm::QPC + prm::qpc::log_rq_size, 0);
            in.set(prm::QPC + prm::qpc::log_rq_stride, 0);
            /* the send queue where engine_qp keeps it, after the space of
             * a receive queue this QP does not have */
            in.set(prm::wq_umem_offset, engine_qp::RQ_BYTES);
        });
        connect_dci(q, p);
    }

    static void connect_dci(engine_qp &q, const qp_params &p = qp_params())
    {
        prm_buf init = rst2init_cmd(q.qp.qpn);
        init.set(prm::QPC + prm::qpc::rae, 1);
        ASSERT_EQ(0, modify(q.qp, init));

        prm_buf rtr = modify_cmd(prm::INIT2RTR_QP, q.qp.qpn);
        rtr.set(prm::QPC + prm::qpc::mtu, p.mtu);
        rtr.set(prm::QPC + prm::qpc::log_msg_max, 30);
        ASSERT_EQ(0, modify(q.qp, rtr));

        prm_buf rts = rtr2rts_cmd(q.qp.qpn);
        rts.set(prm::QPC + prm::qpc::retry_count, p.retry_count);
        rts.set(prm::QPC + prm::qpc::rnr_retry, p.rnr_retry);
        rts.set(prm::QPC + prm::qpc::PRIMARY_PATH + prm::ads::ack_timeout,
                p.ack_timeout);
        ASSERT_EQ(0, modify(q.qp, rts));
    }

    /* The address vector of a DC WQE to d on RoCE: the extended AV with
     * the GRH, the destination's MAC and GID (RoCEv2, GID index 1) */
    static struct mlx5_wqe_av roce_av(const dct_t &d,
                                      const uct_ib_emu_mac_t &mac,
                                      uint64_t key = DC_KEY)
    {
        struct mlx5_wqe_av av = {};
        union ibv_gid gid     = gid_of(d.q.env.ctx, 1, 1);

        av.key.dc_key = htobe64(key);
        av.dqp_dct    = htobe32(d.q.qp.qpn | MLX5_EXTENDED_UD_AV);
        av.rlid       = htobe16(0xc000); /* RoCEv2: the UDP source port */
        memcpy(av.rmac, mac.data(), sizeof(av.rmac));
        av.hop_limit  = 64;
        av.grh_gid_fl = htobe32((1u << 30) | (1u << 20));
        memcpy(av.rgid, gid.raw, sizeof(av.rgid));
        return av;
    }

    /* A DC WQE: control segment, address vector (48 bytes, or the 16 of a
     * compact one) and the operation's segments */
    static std::vector<uint8_t> dc_ctrl(const engine_qp &q, uint8_t opcode,
                                        const struct mlx5_wqe_av &av,
                                        bool compact = false)
    {
        auto wqe = ctrl(q, opcode);
        const uint8_t *p = reinterpret_cast<const uint8_t*>(&av);

        wqe.insert(wqe.end(), p, p + (compact ? 16 : sizeof(av)));
        return wqe;
    }

    void send_inline(engine_qp &q, const struct mlx5_wqe_av &av,
                     const void *src, uint32_t len, bool compact = false)
    {
        auto wqe = dc_ctrl(q, MLX5_OPCODE_SEND, av, compact);

        inline_data(wqe, src, len);
        post(q, wqe);
    }

    /* Run the engine through n ack timeouts */
    static void run_timeouts(unsigned n, uint8_t ack_timeout)
    {
        for (unsigned i = 0; i < n; ++i) {
            uct_ib_emu_engine_run();
            uct_ib_emu_clock_advance(4096ull << ack_timeout);
        }
        uct_ib_emu_engine_run();
    }

    std::vector<dct_t*> m_dcts;
    dct_t               m_dct1, m_dct2;
};


TEST_F(test_emu_dc, hca_caps_report_dc)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    ASSERT_EQ(0, uct_ib_glue->devx_general_cmd(m_ctx0, in.data(), in.size(),
                                                out.data(), out.size()));
    EXPECT_EQ(1u, out.get(prm::CAPABILITY + dct_prm::dct));
    EXPECT_EQ(4u, out.get(prm::CAPABILITY + dct_prm::log_max_ra_req_dc));
    EXPECT_EQ(4u, out.get(prm::CAPABILITY + dct_prm::log_max_ra_res_dc));
}

TEST_F(test_emu_dc, create_dct_rejections)
{
    using namespace dct_prm;
    dct_env(m_dct1, m_ctx1);

    struct bad_case {
        const char                    *what;
        std::function<void(prm_buf&)> mutate;
        uint32_t                      syndrome;
    } cases[] = {
        {"pd", [](prm_buf &in) { in.set(DCTC + dctc::pd, 0xfffff); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_PD},
        {"cqn", [](prm_buf &in) { in.set(DCTC + dctc::cqn, 0xfffff); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_CQ},
        {"srqn", [](prm_buf &in) { in.set(DCTC + dctc::srqn_xrqn, 0xfffff); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_SRQ},
        {"offload_type",
         [](prm_buf &in) { in.set(DCTC + dctc::offload_type, 1); },
         UCT_IB_EMU_SYND_CREATE_DCT_OFFLOAD},
        {"port 2", [](prm_buf &in) { in.set(DCTC + dctc::port, 2); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_PORT},
        {"mtu 0", [](prm_buf &in) { in.set(DCTC + dctc::mtu, 0); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_MTU},
        {"my_addr_index 200",
         [](prm_buf &in) { in.set(DCTC + dctc::my_addr_index, 200); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_ADDR_INDEX},
        {"atomic_mode 4",
         [](prm_buf &in) { in.set(DCTC + dctc::atomic_mode, 4); },
         UCT_IB_EMU_SYND_CREATE_DCT_ATOMIC_MODE},
        {"cs_res 3", [](prm_buf &in) { in.set(DCTC + dctc::cs_res, 3); },
         UCT_IB_EMU_SYND_CREATE_DCT_BAD_CS_RES},
    };

    for (const bad_case &c : cases) {
        prm_buf in = create_dct_cmd(m_dct1);
        prm_buf out(prm::HDR_BYTES);

        c.mutate(in);
        errno = 0;
        EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx1, in.data(),
                                                        in.size(), out.data(),
                                                        out.size()))
                << c.what;
        EXPECT_EQ(EREMOTEIO, errno) << c.what;
        EXPECT_EQ(uct_ib_emu_syndrome_status(
                          static_cast<uct_ib_emu_syndrome_t>(c.syndrome)),
                  out.get(prm::status)) << c.what;
        EXPECT_EQ(c.syndrome, out.get(prm::syndrome)) << c.what;
    }
}

TEST_F(test_emu_dc, query_and_drain_dct)
{
    using namespace dct_prm;
    make_dct(m_dct1, m_ctx1);

    prm_buf q = query_dct(m_dct1);
    EXPECT_EQ(STATE_ACTIVE, q.get(DCTC + dctc::state));
    EXPECT_EQ(DC_KEY, q.get(DCTC + dctc::dc_access_key));
    EXPECT_EQ(m_dct1.dsrq.srqn, q.get(DCTC + dctc::srqn_xrqn));
    EXPECT_EQ(m_dct1.q.env.cqn, q.get(DCTC + dctc::cqn));
    EXPECT_EQ(m_dct1.q.env.pdn, q.get(DCTC + dctc::pd));
    EXPECT_EQ(3u, q.get(DCTC + dctc::mtu));
    EXPECT_EQ(1u, q.get(DCTC + dctc::port));
    EXPECT_EQ(1u, q.get(DCTC + dctc::my_addr_index));
    EXPECT_EQ(64u, q.get(DCTC + dctc::hop_limit));
    EXPECT_EQ(12u, q.get(DCTC + dctc::min_rnr_nak));
    EXPECT_EQ(1u, q.get(DCTC + dctc::rwe));

    /* a QP command on the DCT's object is not the DCT's */
    prm_buf init = rst2init_cmd(m_dct1.q.qp.qpn);
    EXPECT_EQ(EINVAL, modify(m_dct1.q.qp, init));

    prm_buf out(prm::HDR_BYTES);
    EXPECT_EQ(0, drain_dct(m_dct1, &out));
    EXPECT_EQ(STATE_DRAINED, query_dct(m_dct1).get(DCTC + dctc::state));
    EXPECT_EQ(EREMOTEIO, drain_dct(m_dct1, &out));
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_DRAIN_DCT_BAD_STATE),
              out.get(prm::syndrome));
}

TEST_F(test_emu_dc, dci_with_a_receive_queue_is_refused)
{
    env_init(m_a.env, m_ctx0);
    m_qps.push_back(&m_a);

    prm_buf in = create_qp_cmd(m_a.env); /* a regular RQ */
    in.set(prm::QPC + prm::qpc::st, dct_prm::ST_DCI);
    prm_buf out(prm::HDR_BYTES);
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx0, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()));
    EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_DCI_RQ), out.get(prm::syndrome));
}

/* SEND, RDMA WRITE, RDMA READ and a fetch-and-add from a DCI to a DCT, and
 * a SEND back from a DCI on the other side, each with its data */
TEST_F(test_emu_dc, traffic_both_ways)
{
    make_dct(m_dct1, m_ctx1);
    make_dct(m_dct2, m_ctx0);
    make_dci(m_a, m_ctx0);
    make_dci(m_b, m_ctx1);

    uint8_t rbuf[64] = {}, back[64] = {};
    uint64_t target[2] = {0x1111, 40}, readback = 0, fetched = 0;
    struct ibv_mr *rmr = reg(m_dct1.q, rbuf, sizeof(rbuf));
    struct ibv_mr *tmr = reg(m_dct1.q, target, sizeof(target));
    struct ibv_mr *lmr = reg(m_a, &readback, sizeof(readback));
    struct ibv_mr *fmr = reg(m_a, &fetched, sizeof(fetched));
    struct ibv_mr *bmr = reg(m_dct2.q, back, sizeof(back));
    const struct mlx5_wqe_av to1 = roce_av(m_dct1, MAC_MLX5_1);
    const struct mlx5_wqe_av to2 = roce_av(m_dct2, MAC_MLX5_0);
    const char hello[] = "over a DCI";
    const char reply[] = "and back";
    const uint64_t written = 0x2222333344445555ull;

    post_srq(m_dct1, rbuf, sizeof(rbuf), rmr->lkey);
    post_srq(m_dct2, back, sizeof(back), bmr->lkey);
    send_inline(m_a, to1, hello, sizeof(hello));

    auto w = dc_ctrl(m_a, MLX5_OPCODE_RDMA_WRITE, to1);
    raddr(w, &target[0], tmr->rkey);
    inline_data(w, &written, sizeof(written));
    post(m_a, w);

    auto r = dc_ctrl(m_a, MLX5_OPCODE_RDMA_READ, to1);
    raddr(r, &target[0], tmr->rkey);
    data(r, &readback, sizeof(readback), lmr->lkey);
    post(m_a, r);

    auto f = dc_ctrl(m_a, MLX5_OPCODE_ATOMIC_FA, to1);
    raddr(f, &target[1], tmr->rkey);
    struct mlx5_wqe_atomic_seg a = {};
    a.swap_add = htobe64(2);
    append(f, a);
    data(f, &fetched, sizeof(fetched), fmr->lkey);
    post(m_a, f);

    send_inline(m_b, to2, reply, sizeof(reply));
    uct_ib_emu_engine_run();

    /* at the DCT: the SEND in its SRQ's buffer, a CQE naming the DCT, the
     * DCI that sent it and the sender's LID field */
    polled_cqe c = poll_one(m_dct1.q, MLX5_CQE_RESP_SEND);
    struct mlx5_cqe64 cqe;
    memcpy(&cqe, c.raw, sizeof(cqe));
    EXPECT_EQ(m_dct1.q.qp.qpn, c.qpn);
    EXPECT_EQ(m_a.qp.qpn, be32toh(cqe.flags_rqpn) & 0xffffff);
    EXPECT_EQ(sizeof(hello), c.byte_cnt);
    EXPECT_STREQ(hello, reinterpret_cast<char*>(rbuf));

    EXPECT_EQ(written, target[0]);
    EXPECT_EQ(written, readback);
    EXPECT_EQ(40u, fetched) << "the original";
    EXPECT_EQ(42u, target[1]);
    std::vector<polled_cqe> sent = poll_all(m_a);
    ASSERT_EQ(4u, sent.size()) << counters_str();
    for (const polled_cqe &s : sent) {
        EXPECT_EQ(int(MLX5_CQE_REQ), int(s.opcode));
        EXPECT_EQ(m_a.qp.qpn, s.qpn);
    }

    poll_one(m_dct2.q, MLX5_CQE_RESP_SEND);
    EXPECT_STREQ(reply, reinterpret_cast<char*>(back));
    poll_one(m_b, MLX5_CQE_REQ);
}

/* One DCI, WQEs to two DCTs in turn: the DCI connects anew at each change
 * of target (after everything before it completed), each message arrives
 * once and in order, and each DCT's stream starts at the connection's
 * first PSN */
TEST_F(test_emu_dc, one_dci_reaches_several_dcts)
{
    make_dct(m_dct1, m_ctx1);
    make_dct(m_dct2, m_ctx0);
    make_dci(m_a, m_ctx0);

    constexpr unsigned N = 6;
    uint64_t buf1[N] = {}, buf2[N] = {};
    struct ibv_mr *mr1 = reg(m_dct1.q, buf1, sizeof(buf1));
    struct ibv_mr *mr2 = reg(m_dct2.q, buf2, sizeof(buf2));
    const struct mlx5_wqe_av to1 = roce_av(m_dct1, MAC_MLX5_1);
    const struct mlx5_wqe_av to2 = roce_av(m_dct2, MAC_MLX5_0);

    for (unsigned i = 0; i < N; ++i) {
        post_srq(m_dct1, &buf1[i], sizeof(buf1[i]), mr1->lkey);
        post_srq(m_dct2, &buf2[i], sizeof(buf2[i]), mr2->lkey);
    }
    /* 1 1 2 1 2 2 2 1 1 1 2 2: runs of one target and changes */
    const int order[2 * N] = {1, 1, 2, 1, 2, 2, 2, 1, 1, 1, 2, 2};
    unsigned n1 = 0, n2 = 0;
    for (int t : order) {
        uint64_t v = (t == 1) ? (0x100 + n1++) : (0x200 + n2++);
        send_inline(m_a, (t == 1) ? to1 : to2, &v, sizeof(v));
    }
    uct_ib_emu_engine_run();

    EXPECT_EQ(2 * N, poll_all(m_a).size()) << counters_str();
    EXPECT_EQ(N, poll_all(m_dct1.q).size());
    EXPECT_EQ(N, poll_all(m_dct2.q).size());
    for (unsigned i = 0; i < N; ++i) {
        EXPECT_EQ(0x100 + i, buf1[i]) << i;
        EXPECT_EQ(0x200 + i, buf2[i]) << i;
    }
    EXPECT_EQ(0u, uct_ib_emu_counters().retries);
}

/* A WQE with another access key: the DCT drops it and counts a violation,
 * and the DCI completes with retry exceeded */
TEST_F(test_emu_dc, wrong_access_key_is_dropped_and_counted)
{
    qp_params p;
    p.retry_count = 1;
    p.ack_timeout = 1;

    make_dct(m_dct1, m_ctx1);
    make_dci(m_a, m_ctx0, p);

    const uint64_t v = 7;
    uct_ib_emu_counters_reset();
    send_inline(m_a, roce_av(m_dct1, MAC_MLX5_1, DC_KEY + 1), &v, sizeof(v));
    run_timeouts(3, p.ack_timeout);
    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));
    EXPECT_EQ(2u, uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_DC_KEY));
    EXPECT_EQ(0u, poll_all(m_dct1.q).size());
    EXPECT_EQ(2u, query_dct(m_dct1).get(dct_prm::DCTC +
                                        dct_prm::dctc::key_violations));
}

/* The stale-MAC bug's second home: a DC address vector with a MAC the
 * destination port no longer has is dropped there, as for an RC QP, until
 * the DCI's retries run out */
TEST_F(test_emu_dc, stale_mac_in_the_address_vector_is_dropped)
{
    qp_params p;
    p.retry_count = 2;
    p.ack_timeout = 1;

    make_dct(m_dct1, m_ctx1);
    make_dci(m_a, m_ctx0, p);

    const uct_ib_emu_mac_t stale = {0x02, 0xc9, 0xaa, 0x00, 0x00, 0x02};
    const uint64_t v = 7;
    uct_ib_emu_counters_reset();
    send_inline(m_a, roce_av(m_dct1, stale), &v, sizeof(v));
    run_timeouts(4, p.ack_timeout);

    EXPECT_EQ(int(MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR),
              int(poll_one(m_a, MLX5_CQE_REQ_ERR).syndrome));
    EXPECT_EQ(3u, uct_ib_emu_counters().drop_count(UCT_IB_EMU_DROP_MAC));
    EXPECT_EQ(0u, poll_all(m_dct1.q).size());
}

/* UCX 1.13.1 resets a DCI after an error and posts again from index 0, so
 * its doorbell record may take the count it had before the reset: the
 * device sends what is posted after the reset, and nothing that was in the
 * ring before it */
TEST_F(test_emu_dc, dci_reset_and_reused)
{
    qp_params p;
    p.retry_count = 0;
    p.ack_timeout = 1;

    make_dct(m_dct1, m_ctx1);
    make_dci(m_a, m_ctx0, p);

    uint64_t bufs[2] = {};
    struct ibv_mr *mr = reg(m_dct1.q, bufs, sizeof(bufs));
    post_srq(m_dct1, &bufs[0], 8, mr->lkey);
    post_srq(m_dct1, &bufs[1], 8, mr->lkey);

    const uct_ib_emu_mac_t stale = {0x02, 0xc9, 0xaa, 0x00, 0x00, 0x02};
    const uint64_t first = 0xbad, second = 0x600d;
    send_inline(m_a, roce_av(m_dct1, stale), &first, sizeof(first));
    run_timeouts(2, p.ack_timeout);
    poll_one(m_a, MLX5_CQE_REQ_ERR);

    /* reset as UCX does: 2RST, the ring cleared, connected again, the
     * record left at its count until the next post writes it */
    const uint16_t count_before = m_a.sq_pi;
    prm_buf rst = modify_cmd(prm::QP_2RST, m_a.qp.qpn);
    ASSERT_EQ(0, modify(m_a.qp, rst));
    memset(m_a.sq_buf(), 0, engine_qp::SQ_BBS * MLX5_SEND_WQE_BB);
    m_a.sq_pi = 0;
    connect_dci(m_a, p);
    uct_ib_emu_engine_run();
    EXPECT_EQ(0u, poll_all(m_a).size()) << "a stale record was sent";
    EXPECT_EQ(0u, bufs[0]);

    send_inline(m_a, roce_av(m_dct1, MAC_MLX5_1), &second, sizeof(second));
    ASSERT_EQ(count_before, m_a.sq_pi) << "the record has its old count";
    uct_ib_emu_engine_run();
    poll_one(m_a, MLX5_CQE_REQ);
    poll_one(m_dct1.q, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(second, bufs[0]);
}

/* DCT reliability is RC's: a SEND that finds no receive WQE in the DCT's
 * SRQ is RNR NAKed and retried, and lands once one is posted */
TEST_F(test_emu_dc, rnr_until_the_srq_has_a_wqe)
{
    qp_params p;
    p.rnr_retry = 7; /* forever */

    make_dct(m_dct1, m_ctx1);
    make_dci(m_a, m_ctx0, p);

    uint64_t buf = 0;
    struct ibv_mr *mr = reg(m_dct1.q, &buf, sizeof(buf));
    const uint64_t v  = 0x7e57;
    uct_ib_emu_counters_reset();
    send_inline(m_a, roce_av(m_dct1, MAC_MLX5_1), &v, sizeof(v));
    run_timeouts(2, 1);
    EXPECT_EQ(0u, poll_all(m_a).size());
    EXPECT_GE(uct_ib_emu_counters().rnr_naks, 1u);

    post_srq(m_dct1, &buf, sizeof(buf), mr->lkey);
    size_t done = 0;
    for (int i = 0; (i < 50) && (done == 0); ++i) {
        uct_ib_emu_clock_advance(1000000); /* past the RNR timer */
        uct_ib_emu_engine_run();
        done = poll_all(m_a).size();
    }
    EXPECT_EQ(1u, done) << counters_str();
    poll_one(m_dct1.q, MLX5_CQE_RESP_SEND);
    EXPECT_EQ(v, buf);
}

/* InfiniBand: the compact 16-byte address vector, routed by LID; the DCT
 * answers to the sender's LID */
TEST_F(test_emu_dc, infiniband_with_a_compact_address_vector)
{
    struct ibv_context *ctx2 = open("mlx5_2");
    struct ibv_context *ctx3 = open("mlx5_3");
    ASSERT_NE(nullptr, ctx2);
    ASSERT_NE(nullptr, ctx3);

    make_dct(m_dct1, ctx3, 0);
    make_dci(m_a, ctx2);

    uint64_t buf = 0;
    struct ibv_mr *mr = reg(m_dct1.q, &buf, sizeof(buf));
    post_srq(m_dct1, &buf, sizeof(buf), mr->lkey);

    struct mlx5_wqe_av av = {};
    av.key.dc_key = htobe64(DC_KEY);
    av.dqp_dct    = htobe32(m_dct1.q.qp.qpn); /* compact */
    av.rlid       = htobe16(LID_MLX5_3);
    const uint64_t v = 0x1b;
    send_inline(m_a, av, &v, sizeof(v), true);
    uct_ib_emu_engine_run();

    poll_one(m_a, MLX5_CQE_REQ);
    polled_cqe c = poll_one(m_dct1.q, MLX5_CQE_RESP_SEND);
    struct mlx5_cqe64 cqe;
    memcpy(&cqe, c.raw, sizeof(cqe));
    EXPECT_EQ(LID_MLX5_2, be16toh(cqe.slid));
    EXPECT_EQ(0x1bu, buf);
}

} // namespace
