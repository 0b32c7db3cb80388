/*
 * Verbs objects of the emulated device: PD, MR, CQ, SRQ, mlx5dv_init_obj,
 * and verbs RC QPs with their state machine and RTR-time MAC resolution.
 */
#include "emu/emu_test.h"

using namespace emu_test;


class test_emu_verbs : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
        m_pd = uct_ib_glue->alloc_pd(m_ctx);
        ASSERT_NE(nullptr, m_pd);
    }

    void cleanup() override
    {
        EXPECT_EQ(0, uct_ib_glue->dealloc_pd(m_pd));
        emu_fixture::cleanup();
    }

    struct ibv_context *m_ctx = nullptr;
    struct ibv_pd      *m_pd  = nullptr;
};

TEST_F(test_emu_verbs, pd_numbers)
{
    struct ibv_pd *pd2 = uct_ib_glue->alloc_pd(m_ctx);

    ASSERT_NE(nullptr, pd2);
    EXPECT_EQ(m_ctx, pd2->context);
    EXPECT_NE(pdn_of(m_pd), pdn_of(pd2));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd2));
}

TEST_F(test_emu_verbs, mr_access_rules)
{
    std::vector<uint8_t> buf(4096);
    struct {
        int access;
        int err;
    } cases[] = {
        {IBV_ACCESS_LOCAL_WRITE,                                          0},
        {IBV_ACCESS_REMOTE_READ,                                          0},
        {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
         IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,               0},
        {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING,            0},
        {IBV_ACCESS_REMOTE_WRITE,                                    EINVAL},
        {IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ,          EINVAL},
        {IBV_ACCESS_LOCAL_WRITE | (1 << 15),                         EINVAL},
        {IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND,          EOPNOTSUPP}
    };

    for (const auto &c : cases) {
        SCOPED_TRACE("access 0x" + std::to_string(c.access));
        errno             = 0;
        struct ibv_mr *mr = uct_ib_glue->reg_mr(m_pd, buf.data(), buf.size(),
                                                c.access);
        if (c.err == 0) {
            ASSERT_NE(nullptr, mr);
            EXPECT_EQ(buf.data(), mr->addr);
            EXPECT_EQ(buf.size(), mr->length);
            EXPECT_EQ(mr->lkey, mr->rkey);
            EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
        } else {
            EXPECT_EQ(nullptr, mr);
            EXPECT_EQ(c.err, errno);
        }
    }
}

TEST_F(test_emu_verbs, mr_bounds)
{
    std::vector<uint8_t> buf(64);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->reg_mr(m_pd, buf.data(), 0,
                                           IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(EINVAL, errno);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->reg_mr(m_pd,
                                           reinterpret_cast<void*>(~0x0fful),
                                           0x1000, IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(EINVAL, errno) << "address range wraps around";
}

TEST_F(test_emu_verbs, pd_busy_while_in_use)
{
    std::vector<uint8_t> buf(64);
    struct ibv_mr *mr = uct_ib_glue->reg_mr(m_pd, buf.data(), buf.size(),
                                            IBV_ACCESS_LOCAL_WRITE);
    struct ibv_mr *mr2;

    ASSERT_NE(nullptr, mr);
    mr2 = uct_ib_glue->reg_mr(m_pd, buf.data(), buf.size(),
                              IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, mr2);
    EXPECT_NE(mr->lkey, mr2->lkey);
    EXPECT_EQ(EBUSY, uct_ib_glue->dealloc_pd(m_pd));
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr2));
}

TEST_F(test_emu_verbs, cq_ring)
{
    const struct {
        int      cqe;
        uint32_t ring;
    } cases[] = {{1, 2}, {100, 128}, {127, 128}, {128, 256}};
    int tag;

    for (const auto &c : cases) {
        SCOPED_TRACE("cqe " + std::to_string(c.cqe));
        struct ibv_cq *cq = uct_ib_glue->create_cq(m_ctx, c.cqe, &tag,
                                                   nullptr, 0);
        ASSERT_NE(nullptr, cq);
        EXPECT_EQ(int(c.ring - 1), cq->cqe);
        EXPECT_EQ(&tag, cq->cq_context);

        struct mlx5dv_cq dv = dv_cq(cq);
        EXPECT_EQ(c.ring, dv.cqe_cnt);
        EXPECT_EQ(64u, dv.cqe_size);
        EXPECT_NE(nullptr, dv.dbrec);
        EXPECT_NE(nullptr, dv.cq_uar);
        ASSERT_NE(nullptr, dv.buf);
        for (uint32_t i = 0; i < dv.cqe_cnt; ++i) {
            ASSERT_EQ(0xf0, static_cast<uint8_t*>(dv.buf)[i * 64 + 63])
                    << "cqe " << i;
        }
        EXPECT_EQ(0, uct_ib_glue->destroy_cq(cq));
    }
}

TEST_F(test_emu_verbs, cq_errors)
{
    struct ibv_comp_channel *channel =
            reinterpret_cast<struct ibv_comp_channel*>(&m_ctx);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_cq(m_ctx, 0, nullptr, nullptr, 0));
    EXPECT_EQ(EINVAL, errno);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_cq(m_ctx, 1 << 22, nullptr,
                                              nullptr, 0));
    EXPECT_EQ(EINVAL, errno) << "above max_cqe";

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_cq(m_ctx, 8, nullptr, nullptr,
                                              m_ctx->num_comp_vectors));
    EXPECT_EQ(EINVAL, errno);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_cq(m_ctx, 8, nullptr, channel, 0));
    EXPECT_EQ(EINVAL, errno) << "not a completion channel of the device";
}

TEST_F(test_emu_verbs, cq_numbers_and_poll)
{
    struct ibv_cq *cq1 = uct_ib_glue->create_cq(m_ctx, 8, nullptr, nullptr, 0);
    struct ibv_cq *cq2 = uct_ib_glue->create_cq(m_ctx, 8, nullptr, nullptr, 1);
    struct ibv_wc wc[4];

    ASSERT_NE(nullptr, cq1);
    ASSERT_NE(nullptr, cq2);
    EXPECT_NE(dv_cq(cq1).cqn, dv_cq(cq2).cqn);
    EXPECT_EQ(0, uct_ib_glue->poll_cq(cq1, 4, wc)) << "nothing completed";
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(cq1));
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(cq2));
}

TEST_F(test_emu_verbs, srq)
{
    struct ibv_srq_init_attr attr = {};
    struct mlx5dv_srq dvsrq       = {};
    struct mlx5dv_obj obj         = {};
    struct ibv_srq *srq;

    attr.attr.max_wr  = 100;
    attr.attr.max_sge = 2;
    srq               = uct_ib_glue->create_srq(m_pd, &attr);
    ASSERT_NE(nullptr, srq);
    EXPECT_GE(attr.attr.max_wr, 100u) << "rewritten with the actual size";
    EXPECT_GE(attr.attr.max_sge, 2u);
    EXPECT_EQ(EBUSY, uct_ib_glue->dealloc_pd(m_pd));

    obj.srq.in       = srq;
    obj.srq.out      = &dvsrq;
    dvsrq.comp_mask  = MLX5DV_SRQ_MASK_SRQN;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ));
    EXPECT_NE(nullptr, dvsrq.buf);
    EXPECT_NE(0u, dvsrq.srqn);
    EXPECT_TRUE(dvsrq.comp_mask & MLX5DV_SRQ_MASK_SRQN);
    EXPECT_EQ(0, uct_ib_glue->destroy_srq(srq));

    attr.attr.max_wr = 1 << 20;
    errno            = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_srq(m_pd, &attr));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(test_emu_verbs, init_obj_errors)
{
    struct mlx5dv_obj obj = {};
    struct mlx5dv_pd dvpd = {};

    EXPECT_EQ(EINVAL, uct_ib_glue->mlx5dv_init_obj(&obj, 0));
    EXPECT_EQ(EINVAL, uct_ib_glue->mlx5dv_init_obj(&obj, 1ull << 40))
            << "no known object bit";

    obj.pd.in  = reinterpret_cast<struct ibv_pd*>(&dvpd);
    obj.pd.out = &dvpd;
    EXPECT_EQ(EINVAL, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_PD))
            << "not a PD of the device";
    obj.dm.in  = reinterpret_cast<struct ibv_dm*>(&dvpd);
    EXPECT_EQ(EINVAL, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_DM))
            << "not device memory of the device";
    EXPECT_EQ(EOPNOTSUPP, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_RWQ))
            << "work queues are not modelled";
}


/* Verbs RC QPs */
class test_emu_verbs_qp : public test_emu_verbs {
protected:
    void init() override
    {
        test_emu_verbs::init();
        m_cq = uct_ib_glue->create_cq(m_ctx, 64, nullptr, nullptr, 0);
        ASSERT_NE(nullptr, m_cq);
    }

    void cleanup() override
    {
        for (struct ibv_qp *qp : m_qps) {
            EXPECT_EQ(0, uct_ib_glue->destroy_qp(qp));
        }
        EXPECT_EQ(0, uct_ib_glue->destroy_cq(m_cq));
        test_emu_verbs::cleanup();
    }

    struct ibv_qp *create_qp()
    {
        struct ibv_qp_init_attr attr = {};

        attr.send_cq          = m_cq;
        attr.recv_cq          = m_cq;
        attr.qp_type          = IBV_QPT_RC;
        attr.cap.max_send_wr  = 100;
        attr.cap.max_recv_wr  = 50;
        attr.cap.max_send_sge = 2;
        attr.cap.max_recv_sge = 3;

        struct ibv_qp *qp = uct_ib_glue->create_qp(m_pd, &attr);
        EXPECT_NE(nullptr, qp);
        if (qp != nullptr) {
            m_qps.push_back(qp);
            EXPECT_GE(attr.cap.max_send_wr, 100u);
            EXPECT_GE(attr.cap.max_recv_wr, 50u);
            EXPECT_GE(attr.cap.max_send_sge, 2u);
            EXPECT_GE(attr.cap.max_recv_sge, 3u);
        }
        return qp;
    }

    static int to_init(struct ibv_qp *qp, int mask = 0x39)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state        = IBV_QPS_INIT;
        attr.pkey_index      = 0;
        attr.port_num        = 1;
        attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
                               IBV_ACCESS_REMOTE_READ;
        return uct_ib_glue->modify_qp(qp, &attr, mask);
    }

    static struct ibv_qp_attr rtr_attr(const union ibv_gid &dgid,
                                       uint32_t dest_qpn)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state              = IBV_QPS_RTR;
        attr.path_mtu              = IBV_MTU_1024;
        attr.dest_qp_num           = dest_qpn;
        attr.rq_psn                = 0x123;
        attr.max_dest_rd_atomic    = 4;
        attr.min_rnr_timer         = 12;
        attr.ah_attr.is_global     = 1;
        attr.ah_attr.port_num      = 1;
        attr.ah_attr.grh.dgid      = dgid;
        attr.ah_attr.grh.sgid_index = 3;
        attr.ah_attr.grh.hop_limit = 64;
        return attr;
    }

    static int to_rtr(struct ibv_qp *qp, const union ibv_gid &dgid,
                      int mask = 0x129181)
    {
        struct ibv_qp_attr attr = rtr_attr(dgid, 0x4242);
        return uct_ib_glue->modify_qp(qp, &attr, mask);
    }

    static int to_rts(struct ibv_qp *qp, int mask = 0x12e01)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state      = IBV_QPS_RTS;
        attr.sq_psn        = 0x456;
        attr.max_rd_atomic = 4;
        attr.retry_cnt     = 7;
        attr.rnr_retry     = 7;
        attr.timeout       = 14;
        return uct_ib_glue->modify_qp(qp, &attr, mask);
    }

    static uct_ib_emu_qp_info_t info(struct ibv_qp *qp)
    {
        uct_ib_emu_qp_info_t i;

        EXPECT_EQ(UCS_OK, uct_ib_emu_qp_info(qp->qp_num, &i));
        return i;
    }

    struct ibv_cq               *m_cq = nullptr;
    std::vector<struct ibv_qp*> m_qps;
};

TEST_F(test_emu_verbs_qp, create_and_init_obj)
{
    struct ibv_qp *qp = create_qp();
    struct mlx5dv_qp dvqp;
    struct mlx5dv_obj obj = {};

    ASSERT_NE(nullptr, qp);
    EXPECT_EQ(IBV_QPS_RESET, qp->state);
    EXPECT_NE(0u, qp->qp_num);
    EXPECT_EQ(EBUSY, uct_ib_glue->destroy_cq(m_cq));

    obj.qp.in  = qp;
    obj.qp.out = &dvqp;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
    EXPECT_NE(nullptr, dvqp.dbrec);
    EXPECT_EQ(64u, dvqp.sq.stride);
    EXPECT_GE(dvqp.sq.wqe_cnt, 100u);
    EXPECT_GE(dvqp.rq.wqe_cnt, 50u);
    EXPECT_EQ(static_cast<uint8_t*>(dvqp.rq.buf) +
              dvqp.rq.wqe_cnt * dvqp.rq.stride,
              dvqp.sq.buf) << "the send queue follows the receive queue";
    EXPECT_NE(nullptr, dvqp.bf.reg);
    EXPECT_EQ(256u, dvqp.bf.size);
}

TEST_F(test_emu_verbs_qp, raw_packet_qps_are_not_modelled)
{
    struct ibv_qp_init_attr attr = {};

    attr.send_cq = m_cq;
    attr.recv_cq = m_cq;
    attr.qp_type = IBV_QPT_RAW_PACKET;
    errno        = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_qp(m_pd, &attr));
    EXPECT_EQ(EOPNOTSUPP, errno);
    attr.qp_type = IBV_QPT_XRC_RECV;
    EXPECT_EQ(nullptr, uct_ib_glue->create_qp(m_pd, &attr));
    EXPECT_EQ(EINVAL, errno) << "an XRC target is made in a domain";

    attr.qp_type          = IBV_QPT_RC;
    attr.cap.max_send_sge = 31;
    errno                 = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->create_qp(m_pd, &attr));
    EXPECT_EQ(EINVAL, errno) << "above max_sge";
}

TEST_F(test_emu_verbs_qp, legal_transitions)
{
    struct ibv_qp *qp  = create_qp();
    union ibv_gid peer = ipv4_gid(198, 18, 0, 2);
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init_attr;

    ASSERT_NE(nullptr, qp);
    ASSERT_EQ(0, to_init(qp));
    EXPECT_EQ(IBV_QPS_INIT, qp->state);
    ASSERT_EQ(0, to_rtr(qp, peer));
    ASSERT_EQ(0, to_rts(qp));
    EXPECT_EQ(IBV_QPS_RTS, qp->state);
    EXPECT_EQ(prm::QP_RTS, info(qp).state);

    ASSERT_EQ(0, uct_ib_glue->query_qp(qp, &attr, IBV_QP_STATE, &init_attr));
    EXPECT_EQ(IBV_QPS_RTS, attr.qp_state);
    EXPECT_EQ(0x4242u, attr.dest_qp_num);
    EXPECT_EQ(IBV_MTU_1024, attr.path_mtu);
    EXPECT_EQ(1, attr.port_num);
    EXPECT_EQ(m_cq, init_attr.send_cq);

    attr          = {};
    attr.qp_state = IBV_QPS_ERR;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE));
    EXPECT_EQ(prm::QP_ERR, info(qp).state);
    attr.qp_state = IBV_QPS_RESET;
    ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE));
    EXPECT_EQ(prm::QP_RST, info(qp).state);
    EXPECT_EQ(0u, info(qp).remote_qpn) << "RESET drops the connection";
}

TEST_F(test_emu_verbs_qp, illegal_transitions_and_masks)
{
    struct ibv_qp *qp  = create_qp();
    union ibv_gid peer = ipv4_gid(198, 18, 0, 2);

    ASSERT_NE(nullptr, qp);
    EXPECT_EQ(EINVAL, to_rtr(qp, peer)) << "RESET -> RTR";
    EXPECT_EQ(EINVAL, to_rts(qp)) << "RESET -> RTS";
    EXPECT_EQ(EINVAL, to_init(qp, 0x39 & ~IBV_QP_PORT)) << "missing PORT";
    EXPECT_EQ(EINVAL, to_init(qp, 0x39 | IBV_QP_QKEY)) << "QKEY is UD's";
    EXPECT_EQ(IBV_QPS_RESET, qp->state);

    ASSERT_EQ(0, to_init(qp));
    EXPECT_EQ(EINVAL, to_rtr(qp, peer, 0x129181 & ~IBV_QP_MIN_RNR_TIMER));
    EXPECT_EQ(EINVAL, to_rtr(qp, peer, 0x129181 & ~IBV_QP_AV));
    EXPECT_EQ(EINVAL, to_rts(qp)) << "INIT -> RTS";
    EXPECT_EQ(IBV_QPS_INIT, qp->state);

    ASSERT_EQ(0, to_rtr(qp, peer));
    EXPECT_EQ(EINVAL, to_rts(qp, 0x12e01 & ~IBV_QP_SQ_PSN));
    EXPECT_EQ(IBV_QPS_RTR, qp->state);
}

TEST_F(test_emu_verbs_qp, attribute_checks)
{
    struct ibv_qp *qp  = create_qp();
    union ibv_gid peer = ipv4_gid(198, 18, 0, 2);
    struct ibv_qp_attr attr;

    ASSERT_NE(nullptr, qp);
    ASSERT_EQ(0, to_init(qp));

    attr          = rtr_attr(peer, 1);
    attr.path_mtu = static_cast<enum ibv_mtu>(IBV_MTU_4096 + 1);
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, 0x129181))
            << "path MTU above the port's max MTU";

    attr                   = rtr_attr(peer, 1);
    attr.ah_attr.is_global = 0;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, 0x129181))
            << "RoCE needs a GRH";

    attr                        = rtr_attr(peer, 1);
    attr.ah_attr.grh.sgid_index = 4;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, 0x129181))
            << "empty source GID entry";

    attr                    = rtr_attr(peer, 1);
    attr.max_dest_rd_atomic = 17;
    EXPECT_EQ(EINVAL, uct_ib_glue->modify_qp(qp, &attr, 0x129181));

    attr = rtr_attr(ipv4_gid(198, 18, 9, 9), 1);
    EXPECT_EQ(EHOSTUNREACH, uct_ib_glue->modify_qp(qp, &attr, 0x129181))
            << "no neighbour";

    EXPECT_EQ(IBV_QPS_INIT, qp->state) << "failed modifies change nothing";
}

TEST_F(test_emu_verbs_qp, mac_resolved_at_rtr)
{
    const uct_ib_emu_mac_t new_mac = {0x02, 0xc9, 0x00, 0x00, 0x0f, 0x02};
    union ibv_gid peer             = ipv4_gid(198, 18, 0, 2);
    struct ibv_qp *qp1             = create_qp();
    struct ibv_qp *qp2             = create_qp();

    ASSERT_NE(nullptr, qp2);
    ASSERT_EQ(0, to_init(qp1));
    ASSERT_EQ(0, to_init(qp2));

    ASSERT_EQ(0, to_rtr(qp1, peer));
    EXPECT_EQ(MAC_MLX5_1, info(qp1).primary.rmac);

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_1", 1, new_mac));
    ASSERT_EQ(0, to_rtr(qp2, peer));
    EXPECT_EQ(new_mac, info(qp2).primary.rmac);
    EXPECT_EQ(MAC_MLX5_1, info(qp1).primary.rmac)
            << "an RTR QP keeps what it resolved";
}

TEST_F(test_emu_verbs_qp, qp_counters_by_state)
{
    struct ibv_qp *qp1 = create_qp();
    struct ibv_qp *qp2 = create_qp();
    uct_ib_emu_counters_t counters;

    ASSERT_NE(nullptr, qp2);
    ASSERT_EQ(0, to_init(qp1));
    counters = uct_ib_emu_counters();
    EXPECT_EQ(1u, counters.qp_count(prm::QP_RST));
    EXPECT_EQ(1u, counters.qp_count(prm::QP_INIT));
    EXPECT_EQ(0u, counters.qp_count(prm::QP_RTS));
}

TEST_F(test_emu_verbs_qp, post_before_rts_and_bad_requests)
{
    struct ibv_qp *qp        = create_qp();
    struct ibv_send_wr wr    = {};
    struct ibv_send_wr wr2   = {};
    struct ibv_recv_wr rwr   = {};
    struct ibv_sge sge[8]    = {};
    struct ibv_qp_attr attr  = {};
    struct ibv_qp_init_attr init = {};
    struct ibv_send_wr *bad  = nullptr;
    struct ibv_recv_wr *rbad = nullptr;

    ASSERT_NE(nullptr, qp);
    wr.opcode = IBV_WR_SEND;
    EXPECT_EQ(ENOMEM, uct_ib_glue->post_send(qp, &wr, &bad))
            << "a QP before RTS takes no send";
    EXPECT_EQ(&wr, bad);

    /* a receive may be posted before RTR; more SGEs than created for not */
    ASSERT_EQ(0, uct_ib_glue->query_qp(qp, &attr, 0, &init));
    rwr.sg_list = sge;
    rwr.num_sge = static_cast<int>(init.cap.max_recv_sge);
    EXPECT_EQ(0, uct_ib_glue->post_recv(qp, &rwr, &rbad));
    rwr.num_sge = static_cast<int>(init.cap.max_recv_sge) + 1;
    EXPECT_EQ(EINVAL, uct_ib_glue->post_recv(qp, &rwr, &rbad));
    EXPECT_EQ(&rwr, rbad);

    wr2.opcode = static_cast<enum ibv_wr_opcode>(0x7f);
    bad        = nullptr;
    EXPECT_EQ(EINVAL, uct_ib_glue->post_send(qp, &wr2, &bad))
            << "an opcode the provider does not know";
    EXPECT_EQ(&wr2, bad);
}

TEST_F(test_emu_verbs_qp, mlx5dv_create_qp_send_ops)
{
    struct ibv_qp_init_attr_ex attr = {};
    struct mlx5dv_qp_init_attr dv   = {};
    struct ibv_qp *qp;

    attr.comp_mask        = IBV_QP_INIT_ATTR_PD |
                            IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    attr.pd               = m_pd;
    attr.send_cq          = m_cq;
    attr.recv_cq          = m_cq;
    attr.qp_type          = IBV_QPT_RC;
    attr.cap.max_send_wr  = 16;
    attr.cap.max_send_sge = 1;
    attr.send_ops_flags   = IBV_QP_EX_WITH_SEND;
    dv.comp_mask          = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
    dv.send_ops_flags     = MLX5DV_QP_EX_WITH_MR_LIST;

    qp = uct_ib_glue->mlx5dv_create_qp(m_ctx, &attr, &dv);
    ASSERT_NE(nullptr, qp);
    m_qps.push_back(qp);

    dv.send_ops_flags = MLX5DV_QP_EX_WITH_MEMCPY;
    errno             = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_qp(m_ctx, &attr, &dv));
    EXPECT_EQ(EOPNOTSUPP, errno);

    dv.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST;
    dv.comp_mask      = 1u << 10;
    errno             = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_qp(m_ctx, &attr, &dv));
    EXPECT_EQ(EINVAL, errno) << "unknown comp_mask";

    dv.comp_mask   = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
    attr.comp_mask = IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    errno          = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_qp(m_ctx, &attr, &dv));
    EXPECT_EQ(EINVAL, errno) << "no PD";
}
