/*
 * The emulated device's verbs send path for the UMR QP: extended QPs from
 * mlx5dv_create_qp, indirect mkeys, MR-list binds and local invalidates that
 * complete through ibv_poll_cq, and the delivery rules their loopback obeys.
 */
#include "emu/emu_test.h"

using namespace emu_test;


class test_emu_umr : public emu_fixture {
protected:
    static constexpr unsigned SQ_LEN = 8;

    void init() override
    {
        emu_fixture::init();
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
        m_pd = uct_ib_glue->alloc_pd(m_ctx);
        ASSERT_NE(nullptr, m_pd);
        m_cq = uct_ib_glue->create_cq(m_ctx, 64, nullptr, nullptr, 0);
        ASSERT_NE(nullptr, m_cq);
        m_mr = uct_ib_glue->reg_mr(m_pd, m_buf, sizeof(m_buf),
                                   IBV_ACCESS_LOCAL_WRITE |
                                   IBV_ACCESS_REMOTE_READ |
                                   IBV_ACCESS_REMOTE_WRITE);
        ASSERT_NE(nullptr, m_mr);
    }

    void cleanup() override
    {
        for (struct ibv_qp *qp : m_qps) {
            EXPECT_EQ(0, uct_ib_glue->destroy_qp(qp));
        }
        for (struct mlx5dv_mkey *mkey : m_mkeys) {
            EXPECT_EQ(0, uct_ib_glue->mlx5dv_destroy_mkey(mkey));
        }
        if (m_mr != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->dereg_mr(m_mr));
        }
        if (m_cq != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->destroy_cq(m_cq));
        }
        if (m_pd != nullptr) {
            EXPECT_EQ(0, uct_ib_glue->dealloc_pd(m_pd));
        }
        emu_fixture::cleanup();
    }

    /* mlx5dv_create_qp as the UMR QP: RC, MR list and local invalidate */
    struct ibv_qp *create_qp(uint64_t ibv_ops = IBV_QP_EX_WITH_LOCAL_INV,
                             uint64_t dv_ops = MLX5DV_QP_EX_WITH_MR_LIST,
                             enum ibv_qp_type type = IBV_QPT_RC,
                             struct ibv_pd *pd = nullptr)
    {
        struct ibv_qp *qp = create_umr_qp(m_ctx, (pd != nullptr) ? pd : m_pd,
                                          m_cq, SQ_LEN, ibv_ops, dv_ops, type);

        if (qp != nullptr) {
            m_qps.push_back(qp);
        }
        return qp;
    }

    void destroy_qp(struct ibv_qp *qp)
    {
        m_qps.erase(std::remove(m_qps.begin(), m_qps.end(), qp), m_qps.end());
        EXPECT_EQ(0, uct_ib_glue->destroy_qp(qp));
    }

    struct mlx5dv_mkey *create_mkey(uint16_t entries = 4)
    {
        struct mlx5dv_mkey_init_attr attr = {};
        struct mlx5dv_mkey *mkey;

        attr.pd           = m_pd;
        attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
        attr.max_entries  = entries;
        mkey              = uct_ib_glue->mlx5dv_create_mkey(&attr);
        EXPECT_NE(nullptr, mkey) << "errno " << errno;
        if (mkey != nullptr) {
            m_mkeys.push_back(mkey);
        }
        return mkey;
    }

    static int modify(struct ibv_qp *qp, enum ibv_qp_state state)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state = state;
        return uct_ib_glue->modify_qp(qp, &attr, IBV_QP_STATE);
    }

    /* RESET -> RTS towards dest_qpn: RoCE through gid_index, InfiniBand to
     * dlid */
    static void connect(struct ibv_qp *qp, uint32_t dest_qpn,
                        const union ibv_gid &dgid, uint8_t gid_index,
                        uint16_t dlid = 0)
    {
        struct ibv_qp_attr attr = {};

        attr.qp_state        = IBV_QPS_INIT;
        attr.port_num        = 1;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr,
                                            IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                                            IBV_QP_PORT |
                                            IBV_QP_ACCESS_FLAGS));

        attr                        = {};
        attr.qp_state               = IBV_QPS_RTR;
        attr.path_mtu               = IBV_MTU_1024;
        attr.dest_qp_num            = dest_qpn;
        attr.max_dest_rd_atomic     = 1;
        attr.min_rnr_timer          = 12;
        attr.ah_attr.port_num       = 1;
        attr.ah_attr.dlid           = dlid;
        attr.ah_attr.is_global      = (dlid == 0);
        attr.ah_attr.grh.dgid       = dgid;
        attr.ah_attr.grh.sgid_index = gid_index;
        attr.ah_attr.grh.hop_limit  = 1;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, 0x129181));

        attr               = {};
        attr.qp_state      = IBV_QPS_RTS;
        attr.max_rd_atomic = 1;
        attr.timeout       = 14;
        attr.retry_cnt     = 7;
        attr.rnr_retry     = 7;
        ASSERT_EQ(0, uct_ib_glue->modify_qp(qp, &attr, 0x12e01));
    }

    /* Connected to itself through GID gid_index of mlx5_0 */
    void connect_self(struct ibv_qp *qp, uint8_t gid_index)
    {
        connect(qp, qp->qp_num, gid_of(m_ctx, 1, gid_index), gid_index);
    }

    static struct ibv_qp_ex *qpx(struct ibv_qp *qp)
    {
        return uct_ib_glue->qp_to_qp_ex(qp);
    }

    /* One MR-list bind of the whole buffer; the wr_complete result */
    int post_bind(struct ibv_qp *qp, struct mlx5dv_mkey *mkey, uint64_t wr_id,
                  unsigned flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
                  uint16_t num_sges = 1, uint64_t offset = 0)
    {
        struct ibv_qp_ex *x     = qpx(qp);
        struct mlx5dv_qp_ex *mx = uct_ib_glue->mlx5dv_qp_ex_from_ibv_qp_ex(x);
        std::vector<struct ibv_sge> sges(num_sges);

        for (auto &sge : sges) {
            sge.addr   = reinterpret_cast<uintptr_t>(m_buf) + offset;
            sge.length = sizeof(m_buf) / 2;
            sge.lkey   = m_mr->lkey;
        }

        uct_ib_glue->wr_start(x);
        x->wr_id    = wr_id;
        x->wr_flags = flags;
        uct_ib_glue->wr_mr_list(mx, mkey, IBV_ACCESS_LOCAL_WRITE |
                                          IBV_ACCESS_REMOTE_READ, num_sges,
                                sges.data());
        return uct_ib_glue->wr_complete(x);
    }

    static int post_inv(struct ibv_qp *qp, uint32_t rkey, uint64_t wr_id,
                        unsigned flags = IBV_SEND_SIGNALED)
    {
        struct ibv_qp_ex *x = qpx(qp);

        uct_ib_glue->wr_start(x);
        x->wr_id    = wr_id;
        x->wr_flags = flags;
        uct_ib_glue->wr_local_inv(x, rkey);
        return uct_ib_glue->wr_complete(x);
    }

    std::vector<struct ibv_wc> poll()
    {
        std::vector<struct ibv_wc> all;
        struct ibv_wc wc[4];
        int n;

        while ((n = uct_ib_glue->poll_cq(m_cq, 4, wc)) > 0) {
            all.insert(all.end(), wc, wc + n);
        }
        EXPECT_EQ(0, n);
        return all;
    }

    static uct_ib_emu_mkey_info_t mkey_info(uint32_t key)
    {
        uct_ib_emu_mkey_info_t info = {};

        EXPECT_EQ(UCS_OK, uct_ib_emu_mkey_info(key, &info));
        return info;
    }

    static uint64_t drops(uct_ib_emu_drop_t reason)
    {
        return uct_ib_emu_counters().drop_count(reason);
    }

    alignas(64) uint8_t              m_buf[256] = {};
    struct ibv_context               *m_ctx     = nullptr;
    struct ibv_pd                    *m_pd      = nullptr;
    struct ibv_cq                    *m_cq      = nullptr;
    struct ibv_mr                    *m_mr      = nullptr;
    std::vector<struct ibv_qp*>      m_qps;
    std::vector<struct mlx5dv_mkey*> m_mkeys;
};


TEST_F(test_emu_umr, extended_qp_views)
{
    struct ibv_qp *qp = create_qp();
    struct ibv_qp_ex *x;
    struct ibv_qp_init_attr attr = {};
    struct ibv_qp *plain;

    ASSERT_NE(nullptr, qp);
    x = qpx(qp);
    ASSERT_NE(nullptr, x);
    EXPECT_EQ(qp, &x->qp_base) << "the extended view wraps the same QP";
    EXPECT_NE(nullptr, uct_ib_glue->mlx5dv_qp_ex_from_ibv_qp_ex(x));
    EXPECT_NE(nullptr, x->wr_start) << "rdma-core fills the builders";
    EXPECT_NE(nullptr, x->wr_local_inv);
    EXPECT_NE(nullptr, uct_ib_glue->mlx5dv_qp_ex_from_ibv_qp_ex(x)->wr_mr_list);

    attr.send_cq = m_cq;
    attr.recv_cq = m_cq;
    attr.qp_type = IBV_QPT_RC;
    plain        = uct_ib_glue->create_qp(m_pd, &attr);
    ASSERT_NE(nullptr, plain);
    m_qps.push_back(plain);
    EXPECT_EQ(nullptr, qpx(plain)) << "no send ops, no extended view";
}

TEST_F(test_emu_umr, create_qp_send_ops_rules)
{
    struct ibv_qp_init_attr_ex attr    = {};
    struct mlx5dv_qp_init_attr dv_attr = {};

    errno = 0;
    EXPECT_EQ(nullptr, create_qp(IBV_QP_EX_WITH_LOCAL_INV,
                                 MLX5DV_QP_EX_WITH_MR_LIST, IBV_QPT_UD));
    EXPECT_EQ(EOPNOTSUPP, errno) << "MR list is RC only";

    errno = 0;
    EXPECT_EQ(nullptr, create_qp(IBV_QP_EX_WITH_TSO));
    EXPECT_EQ(EOPNOTSUPP, errno) << "TSO is not an RC send op";

    /* mlx5 send ops without the extended QP's send ops mask */
    attr.qp_type           = IBV_QPT_RC;
    attr.send_cq           = m_cq;
    attr.recv_cq           = m_cq;
    attr.pd                = m_pd;
    attr.comp_mask         = IBV_QP_INIT_ATTR_PD;
    dv_attr.comp_mask      = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
    dv_attr.send_ops_flags = MLX5DV_QP_EX_WITH_MR_LIST;
    errno                  = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_qp(m_ctx, &attr, &dv_attr));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(test_emu_umr, indirect_mkeys)
{
    struct mlx5dv_mkey_init_attr attr = {};
    struct mlx5dv_mkey *mkey;

    attr.pd           = m_pd;
    attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    attr.max_entries  = 5;
    mkey              = uct_ib_glue->mlx5dv_create_mkey(&attr);
    ASSERT_NE(nullptr, mkey);
    m_mkeys.push_back(mkey);
    EXPECT_EQ(8u, attr.max_entries) << "rounded up to whole 64-byte units";
    EXPECT_EQ(mkey->lkey, mkey->rkey);
    EXPECT_NE(m_mr->lkey, mkey->lkey);
    EXPECT_TRUE(mkey_info(mkey->rkey).indirect);
    EXPECT_FALSE(mkey_info(mkey->rkey).bound);
    EXPECT_FALSE(mkey_info(m_mr->rkey).indirect);
    EXPECT_EQ(1u, uct_ib_emu_counters().mkeys_alive);
    EXPECT_EQ(EBUSY, uct_ib_glue->dealloc_pd(m_pd)) << "the mkey uses the PD";

    attr.max_entries  = 0;
    errno             = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_mkey(&attr));
    EXPECT_EQ(EINVAL, errno);

    attr.max_entries  = 4;
    attr.create_flags = 0;
    errno             = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_mkey(&attr));
    EXPECT_EQ(EOPNOTSUPP, errno) << "only indirect mkeys";

}

/* A device without DevX: its contexts cannot create indirect mkeys */
class test_emu_umr_no_devx : public emu_fixture {
};

TEST_F(test_emu_umr_no_devx, mkeys_need_devx)
{
    uct_ib_emu_topology_t topo       = uct_ib_emu_default_topology();
    struct mlx5dv_mkey_init_attr attr = {};
    struct ibv_context *ctx;
    int devx = 1;

    topo.devices[1].devx = false;
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
    ctx = open("mlx5_1", true, &devx);
    ASSERT_NE(nullptr, ctx);
    EXPECT_EQ(0, devx);

    attr.pd           = uct_ib_glue->alloc_pd(ctx);
    attr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    attr.max_entries  = 4;
    ASSERT_NE(nullptr, attr.pd);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_create_mkey(&attr));
    EXPECT_EQ(EOPNOTSUPP, errno);
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(attr.pd));
}

TEST_F(test_emu_umr, bind_and_invalidate_complete)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    std::vector<struct ibv_wc> wcs;
    uct_ib_emu_mkey_info_t info;

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3); /* RoCEv2 on IPv4 */

    ASSERT_EQ(0, post_bind(qp, mkey, 0x1001));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(0x1001u, wcs[0].wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(MLX5DV_WC_UMR, static_cast<int>(wcs[0].opcode));
    EXPECT_EQ(qp->qp_num, wcs[0].qp_num);

    info = mkey_info(mkey->rkey);
    EXPECT_TRUE(info.bound);
    EXPECT_EQ(qp->qp_num, info.bound_by_qpn);
    EXPECT_EQ(sizeof(m_buf) / 2, info.length) << "zero-based, the list's sum";
    ASSERT_EQ(1u, info.entries.size());
    EXPECT_EQ(m_mr->lkey, info.entries[0].lkey);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(m_buf), info.entries[0].addr);
    EXPECT_EQ(uint32_t(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
              info.access);

    ASSERT_EQ(0, post_inv(qp, mkey->rkey, 0x1002));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(0x1002u, wcs[0].wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(IBV_WC_LOCAL_INV, wcs[0].opcode);
    EXPECT_FALSE(mkey_info(mkey->rkey).bound);

    /* free again: it binds again */
    ASSERT_EQ(0, post_bind(qp, mkey, 0x1003));
    EXPECT_EQ(1u, poll().size());
    EXPECT_TRUE(mkey_info(mkey->rkey).bound);
    EXPECT_EQ(0u, drops(UCT_IB_EMU_DROP_ROCE_V1) + drops(UCT_IB_EMU_DROP_MAC));
}

TEST_F(test_emu_umr, infiniband_loopback)
{
    struct ibv_context *ib_ctx = open("mlx5_2");
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_mr *mr;
    struct ibv_qp *qp;
    struct ibv_qp_ex *x;
    struct mlx5dv_mkey *mkey;
    struct mlx5dv_mkey_init_attr mattr = {};
    struct ibv_sge sge;
    struct ibv_wc wc;

    ASSERT_NE(nullptr, ib_ctx);
    pd = uct_ib_glue->alloc_pd(ib_ctx);
    ASSERT_NE(nullptr, pd);
    cq = uct_ib_glue->create_cq(ib_ctx, 8, nullptr, nullptr, 0);
    ASSERT_NE(nullptr, cq);
    mr = uct_ib_glue->reg_mr(pd, m_buf, sizeof(m_buf), IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, mr);

    qp = create_umr_qp(ib_ctx, pd, cq);
    ASSERT_NE(nullptr, qp);
    connect(qp, qp->qp_num, {}, 0, LID_MLX5_2);

    mattr.pd           = pd;
    mattr.create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
    mattr.max_entries  = 1;
    mkey               = uct_ib_glue->mlx5dv_create_mkey(&mattr);
    ASSERT_NE(nullptr, mkey);

    x          = qpx(qp);
    sge.addr   = reinterpret_cast<uintptr_t>(m_buf);
    sge.length = sizeof(m_buf);
    sge.lkey   = mr->lkey;
    uct_ib_glue->wr_start(x);
    x->wr_id    = 7;
    x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
    uct_ib_glue->wr_mr_list(uct_ib_glue->mlx5dv_qp_ex_from_ibv_qp_ex(x), mkey,
                            IBV_ACCESS_LOCAL_WRITE, 1, &sge);
    ASSERT_EQ(0, uct_ib_glue->wr_complete(x));
    ASSERT_EQ(1, uct_ib_glue->poll_cq(cq, 1, &wc));
    EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
    EXPECT_EQ(7u, wc.wr_id);
    EXPECT_TRUE(mkey_info(mkey->rkey).bound);

    EXPECT_EQ(0, uct_ib_glue->destroy_qp(qp));
    EXPECT_EQ(0, uct_ib_glue->mlx5dv_destroy_mkey(mkey));
    EXPECT_EQ(0, uct_ib_glue->dereg_mr(mr));
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(cq));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd));
}

TEST_F(test_emu_umr, builder_errors_post_nothing)
{
    struct ibv_qp *qp        = create_qp();
    struct ibv_qp *no_inv    = create_qp(0);
    struct mlx5dv_mkey *mkey = create_mkey(4);

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, no_inv);
    ASSERT_NE(nullptr, mkey);

    EXPECT_EQ(ENOMEM, post_bind(qp, mkey, 1)) << "QP in RESET takes no work";
    connect_self(qp, 3);
    connect_self(no_inv, 3);

    EXPECT_EQ(EOPNOTSUPP, post_bind(qp, mkey, 2, IBV_SEND_SIGNALED))
            << "an MR list must be inline";
    EXPECT_EQ(ENOMEM, post_bind(qp, mkey, 3, IBV_SEND_SIGNALED |
                                             IBV_SEND_INLINE, 5))
            << "more entries than the mkey holds";
    EXPECT_EQ(EOPNOTSUPP, post_inv(no_inv, mkey->rkey, 4))
            << "created without local invalidate";
    EXPECT_TRUE(poll().empty());
    EXPECT_FALSE(mkey_info(mkey->rkey).bound);

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("wr_complete", 1, EIO));
    EXPECT_EQ(EIO, post_bind(qp, mkey, 5)) << "injected";
    EXPECT_TRUE(poll().empty());
}

TEST_F(test_emu_umr, roce_v1_loopback_dropped_until_flushed)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    std::vector<struct ibv_wc> wcs;

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop("mlx5_0", 1, true, false));
    connect_self(qp, 0); /* RoCEv1: the GID-0 habit */

    ASSERT_EQ(0, post_bind(qp, mkey, 0x10)) << "posted, as on hardware";
    ASSERT_EQ(0, post_inv(qp, mkey->rkey, 0x11));
    for (int i = 0; i < 10; ++i) {
        EXPECT_TRUE(poll().empty()) << "a dropped packet never completes";
    }
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_ROCE_V1)) << "one packet, retried";
    EXPECT_FALSE(mkey_info(mkey->rkey).bound);

    ASSERT_EQ(0, modify(qp, IBV_QPS_ERR));
    wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    EXPECT_EQ(0x10u, wcs[0].wr_id);
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[0].status);
    EXPECT_EQ(0x11u, wcs[1].wr_id);
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[1].status);

    /* the same port takes RoCEv2 */
    struct ibv_qp *qp_v2 = create_qp();
    ASSERT_NE(nullptr, qp_v2);
    connect_self(qp_v2, 1);
    ASSERT_EQ(0, post_bind(qp_v2, mkey, 0x12));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
}

TEST_F(test_emu_umr, dropped_work_completes_once_the_port_accepts_it)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    std::vector<struct ibv_wc> wcs;

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3);
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop("mlx5_0", 1, false, true));
    ASSERT_EQ(0, post_bind(qp, mkey, 0x20));
    EXPECT_TRUE(poll().empty());
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_ROCE_V2));

    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_drop("mlx5_0", 1, false, false));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size()) << "the QP retried";
    EXPECT_EQ(0x20u, wcs[0].wr_id);
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
}

TEST_F(test_emu_umr, stale_mac_is_dropped)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3); /* the MAC is resolved now */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1,
                                              {0x02, 0xc9, 0, 0, 0, 0x77}));
    ASSERT_EQ(0, post_bind(qp, mkey, 0x30));
    EXPECT_TRUE(poll().empty());
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_MAC));
}

TEST_F(test_emu_umr, loopback_needs_its_own_qp)
{
    struct ibv_qp *qp        = create_qp();
    struct ibv_qp *other     = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    union ibv_gid gid        = gid_of(m_ctx, 1, 3);

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, other);
    ASSERT_NE(nullptr, mkey);
    connect(qp, other->qp_num, gid, 3);
    connect(other, qp->qp_num, gid, 3);
    ASSERT_EQ(0, post_bind(qp, mkey, 0x40));
    EXPECT_TRUE(poll().empty());
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_NOT_LOOPBACK));

    /* a remote QPN that does not exist */
    struct ibv_qp *lost = create_qp();
    ASSERT_NE(nullptr, lost);
    connect(lost, 0xabcdef, gid, 3);
    ASSERT_EQ(0, post_bind(lost, mkey, 0x41));
    EXPECT_TRUE(poll().empty());
    EXPECT_EQ(1u, drops(UCT_IB_EMU_DROP_NO_QP));
}

TEST_F(test_emu_umr, device_errors_move_the_qp_to_error)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    std::vector<struct ibv_wc> wcs;

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3);

    /* the second half of the buffer and beyond: outside the MR */
    ASSERT_EQ(0, post_bind(qp, mkey, 0x50, IBV_SEND_SIGNALED | IBV_SEND_INLINE,
                           1, sizeof(m_buf) / 2 + 64));
    ASSERT_EQ(0, post_inv(qp, mkey->rkey, 0x51));
    wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    EXPECT_EQ(IBV_WC_LOC_PROT_ERR, wcs[0].status);
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[1].status) << "behind the error";
    EXPECT_EQ(IBV_QPS_ERR, qp->state);

    /* binding a bound mkey */
    struct ibv_qp *qp2 = create_qp();
    ASSERT_NE(nullptr, qp2);
    connect_self(qp2, 3);
    ASSERT_EQ(0, post_bind(qp2, mkey, 0x52));
    ASSERT_EQ(0, post_bind(qp2, mkey, 0x53));
    wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_EQ(IBV_WC_MW_BIND_ERR, wcs[1].status);
}

TEST_F(test_emu_umr, injected_completion_error)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    std::vector<struct ibv_wc> wcs;

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_fail_wr(1, IBV_WC_SUCCESS, 0));

    /* armed for the first one only, which does not even ask for a
     * completion: an error one always completes */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_wr(1, IBV_WC_GENERAL_ERR, 0x32));
    EXPECT_EQ(1u, uct_ib_emu_pending_faults());
    ASSERT_EQ(0, post_bind(qp, mkey, 0x60, IBV_SEND_INLINE));
    ASSERT_EQ(0, post_inv(qp, mkey->rkey, 0x61));
    wcs = poll();
    ASSERT_EQ(2u, wcs.size());
    EXPECT_EQ(0x60u, wcs[0].wr_id);
    EXPECT_EQ(IBV_WC_GENERAL_ERR, wcs[0].status);
    EXPECT_EQ(0x32u, wcs[0].vendor_err);
    EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wcs[1].status) << "behind the error";
    EXPECT_EQ(0u, wcs[1].vendor_err);
    EXPECT_EQ(IBV_QPS_ERR, qp->state);
    EXPECT_FALSE(mkey_info(mkey->rkey).bound) << "the bind did not happen";
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());

    /* used up: the next QP binds */
    struct ibv_qp *qp2 = create_qp();
    ASSERT_NE(nullptr, qp2);
    connect_self(qp2, 3);
    ASSERT_EQ(0, post_bind(qp2, mkey, 0x62));
    wcs = poll();
    ASSERT_EQ(1u, wcs.size());
    EXPECT_EQ(IBV_WC_SUCCESS, wcs[0].status);
    EXPECT_TRUE(mkey_info(mkey->rkey).bound);

    /* disarmed by clear_faults */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_wr(1, IBV_WC_GENERAL_ERR, 0));
    EXPECT_EQ(1u, uct_ib_emu_pending_faults());
    uct_ib_emu_clear_faults();
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
}

TEST_F(test_emu_umr, unsignaled_work_fills_the_send_queue)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();
    struct ibv_qp_init_attr init_attr;
    struct ibv_qp_attr attr;
    unsigned i;

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3);
    ASSERT_EQ(0, uct_ib_glue->query_qp(qp, &attr, 0, &init_attr));

    for (i = 0; i < attr.cap.max_send_wr; ++i) {
        ASSERT_EQ(0, post_inv(qp, mkey->rkey, i, 0)) << i;
    }
    EXPECT_TRUE(poll().empty()) << "nothing asked for a completion";
    EXPECT_EQ(ENOMEM, post_inv(qp, mkey->rkey, i, IBV_SEND_SIGNALED))
            << "the send queue is full until a completion is polled";
}

TEST_F(test_emu_umr, reset_and_destroy_clean_the_cq)
{
    struct ibv_qp *qp        = create_qp();
    struct mlx5dv_mkey *mkey = create_mkey();

    ASSERT_NE(nullptr, qp);
    ASSERT_NE(nullptr, mkey);
    connect_self(qp, 3);
    ASSERT_EQ(0, post_inv(qp, mkey->rkey, 1));
    ASSERT_EQ(0, modify(qp, IBV_QPS_RESET));
    EXPECT_TRUE(poll().empty());

    connect_self(qp, 3);
    ASSERT_EQ(0, post_inv(qp, mkey->rkey, 2));
    destroy_qp(qp);
    EXPECT_TRUE(poll().empty());
}
