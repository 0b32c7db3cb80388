/*
 * DevX on the emulated device: UARs, umems, QUERY_HCA_CAP, and RC QPs
 * through CREATE_QP, the state transitions, QUERY_QP and destroy. Commands
 * are written and read with the PRM bit positions hard-coded in emu_test.h,
 * so the emulator's decoding is checked against the PRM facts.
 */
#include "emu/emu_test.h"

#include <emu/api/dropin.h>

#include <functional>

using namespace emu_test;


class test_emu_devx : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
        env_init(m_env, m_ctx);
    }

    void cleanup() override
    {
        for (const devx_qp &qp : m_qps) {
            EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
        }
        if (m_env.ctx != nullptr) {
            env_cleanup(m_env);
        }
        emu_fixture::cleanup();
    }

    devx_qp new_qp()
    {
        devx_qp qp = create_qp(m_env);

        if (qp.obj != nullptr) {
            m_qps.push_back(qp);
        }
        return qp;
    }

    void destroy(const devx_qp &qp)
    {
        m_qps.erase(std::remove_if(m_qps.begin(), m_qps.end(),
                                   [&](const devx_qp &q) {
                                       return q.obj == qp.obj;
                                   }),
                    m_qps.end());
        EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
    }

    /* QUERY_HCA_CAP of a context: 0 or the errno */
    static int query_cap(struct ibv_context *ctx, unsigned type,
                         prm_buf *out)
    {
        prm_buf in(prm::HDR_BYTES);

        in.set(prm::opcode, prm::QUERY_HCA_CAP);
        in.set(prm::op_mod, (type << 1) | 1);
        return uct_ib_glue->devx_general_cmd(ctx, in.data(), in.size(),
                                             out->data(), out->size());
    }

    /* A QP of this fixture's context moved to INIT */
    devx_qp init_qp()
    {
        devx_qp qp = new_qp();
        prm_buf in = rst2init_cmd(qp.qpn);

        EXPECT_EQ(0, modify(qp, in));
        return qp;
    }

    /* INIT2RTR towards mlx5_1 over RoCEv2 IPv4 */
    static prm_buf init2rtr_to_peer(uint32_t qpn)
    {
        return init2rtr_roce_cmd(qpn, 0x1234, MAC_MLX5_1,
                                 ipv4_gid(198, 18, 0, 2), 3);
    }

    devx_qp rts_qp()
    {
        devx_qp qp     = init_qp();
        prm_buf to_rtr = init2rtr_to_peer(qp.qpn);
        prm_buf to_rts = rtr2rts_cmd(qp.qpn);

        EXPECT_EQ(0, modify(qp, to_rtr));
        EXPECT_EQ(0, modify(qp, to_rts));
        return qp;
    }

    struct ibv_context   *m_ctx = nullptr;
    devx_env             m_env;
    std::vector<devx_qp> m_qps;
};


TEST_F(test_emu_devx, uar_bf_pool_and_nc_singleton)
{
    struct ibv_context *ctx = open("mlx5_1"); /* no UAR allocated yet */
    struct mlx5dv_devx_uar *bf[3], *nc[2];
    uint8_t *base;

    for (auto &u : bf) {
        u = uct_ib_glue->devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_BF);
        ASSERT_NE(nullptr, u);
        EXPECT_NE(nullptr, u->base_addr);
    }

    /* two BlueFlame registers share a page */
    base = static_cast<uint8_t*>(bf[0]->base_addr);
    EXPECT_EQ(bf[0]->page_id, bf[1]->page_id);
    EXPECT_EQ(bf[0]->base_addr, bf[1]->base_addr);
    EXPECT_NE(bf[0]->reg_addr, bf[1]->reg_addr);
    for (auto u : {bf[0], bf[1]}) {
        size_t off = static_cast<uint8_t*>(u->reg_addr) - base;
        EXPECT_TRUE((off == 0x800) || (off == 0xa00)) << std::hex << off;
    }
    EXPECT_NE(bf[0]->page_id, bf[2]->page_id);

    for (auto &u : nc) {
        u = uct_ib_glue->devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
        ASSERT_NE(nullptr, u);
    }
    EXPECT_EQ(nc[0]->page_id, nc[1]->page_id) << "one NC page per context";
    EXPECT_NE(nc[0]->page_id, bf[0]->page_id);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_alloc_uar(ctx, 7));
    EXPECT_EQ(EINVAL, errno);

    for (auto u : {bf[0], bf[1], bf[2], nc[0], nc[1]}) {
        uct_ib_glue->devx_free_uar(u);
    }
}

TEST_F(test_emu_devx, umem)
{
    std::vector<uint8_t> buf(8192);
    struct mlx5dv_devx_umem *u1, *u2;

    u1 = uct_ib_glue->devx_umem_reg(m_ctx, buf.data(), 4096,
                                    IBV_ACCESS_LOCAL_WRITE);
    u2 = uct_ib_glue->devx_umem_reg(m_ctx, buf.data() + 4096, 4096,
                                    IBV_ACCESS_LOCAL_WRITE |
                                    IBV_ACCESS_REMOTE_WRITE);
    ASSERT_NE(nullptr, u1);
    ASSERT_NE(nullptr, u2);
    EXPECT_NE(u1->umem_id, u2->umem_id);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_umem_reg(m_ctx, buf.data(), 0,
                                                  IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(EINVAL, errno);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_umem_reg(m_ctx, buf.data(), 64,
                                                  IBV_ACCESS_REMOTE_WRITE));
    EXPECT_EQ(EINVAL, errno);

    EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(u1));
    EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(u2));
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_umem_dereg(u2)) << "already gone";

    /* the env registered two, this test two more */
    EXPECT_EQ(4u, uct_ib_emu_counters().cmd_count(prm::CREATE_UMEM));
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_count(prm::DESTROY_UMEM));
}

TEST_F(test_emu_devx, query_hca_cap_general)
{
    prm_buf out(prm::HCA_CAP_OUT_BYTES);
    struct ibv_context *ib = open("mlx5_2");
    const unsigned cap     = prm::CAPABILITY;

    ASSERT_EQ(0, query_cap(m_ctx, 0, &out));
    EXPECT_EQ(0u, out.get(prm::status));
    EXPECT_EQ(1u, out.get(cap + prm::cap::port_type)) << "Ethernet";
    EXPECT_EQ(1u, out.get(cap + prm::cap::roce));
    EXPECT_EQ(1u, out.get(cap + prm::cap::num_ports));
    EXPECT_EQ(18u, out.get(cap + prm::cap::log_max_qp));
    EXPECT_EQ(15u, out.get(cap + prm::cap::log_max_qp_sz));
    EXPECT_EQ(15u, out.get(cap + prm::cap::log_max_srq_sz));
    EXPECT_EQ(22u, out.get(cap + prm::cap::log_max_cq_sz));
    EXPECT_EQ(30u, out.get(cap + prm::cap::log_max_msg));
    EXPECT_EQ(4u, out.get(cap + prm::cap::log_max_ra_req_qp));
    EXPECT_EQ(4u, out.get(cap + prm::cap::log_max_ra_res_qp));
    EXPECT_EQ(256u, out.get(cap + prm::cap::gid_table_size));
    EXPECT_EQ(512u, out.get(cap + prm::cap::max_wqe_sz_rq));
    EXPECT_EQ(23u, out.get(cap + prm::cap::log_max_pd));
    EXPECT_EQ(1u, out.get(cap + prm::cap::rc));
    EXPECT_EQ(0u, out.get(cap + prm::cap::fl_rc_qp_when_roce_disabled));

    prm_buf ib_out(prm::HCA_CAP_OUT_BYTES);
    ASSERT_EQ(0, query_cap(ib, 0, &ib_out));
    EXPECT_EQ(0u, ib_out.get(cap + prm::cap::port_type)) << "InfiniBand";
    EXPECT_EQ(0u, ib_out.get(cap + prm::cap::roce));
    EXPECT_EQ(128u, ib_out.get(cap + prm::cap::gid_table_size));
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_count(prm::QUERY_HCA_CAP));
}

TEST_F(test_emu_devx, query_hca_cap_roce)
{
    prm_buf out(prm::HCA_CAP_OUT_BYTES);
    const unsigned cap = prm::CAPABILITY;
    struct ibv_context *ib = open("mlx5_2");

    ASSERT_EQ(0, query_cap(m_ctx, 4, &out));
    EXPECT_EQ(1u, out.get(cap + prm::roce_cap::sw_r_roce_src_udp_port));
    EXPECT_EQ(0u, out.get(cap + prm::roce_cap::fl_rc_qp_when_roce_enabled));
    EXPECT_EQ(0u, out.get(cap + prm::roce_cap::fl_rc_qp_when_roce_disabled));

    prm_buf ib_out(prm::HCA_CAP_OUT_BYTES);
    EXPECT_EQ(EREMOTEIO, query_cap(ib, 4, &ib_out));
    EXPECT_EQ(prm::BAD_PARAM, ib_out.get(prm::status));
    EXPECT_EQ(UCT_IB_EMU_SYND_HCA_CAP_NO_ROCE, ib_out.get(prm::syndrome));
}

TEST_F(test_emu_devx, query_hca_cap_reports_force_loopback)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    prm_buf gen(prm::HCA_CAP_OUT_BYTES), roce(prm::HCA_CAP_OUT_BYTES);
    const unsigned cap = prm::CAPABILITY;
    struct ibv_context *ctx;

    topo.devices[1].fl_rc_qp_when_roce_enabled  = true;
    topo.devices[1].fl_rc_qp_when_roce_disabled = true;
    env_cleanup(m_env);
    close(m_ctx);
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));

    ctx = open("mlx5_1");
    ASSERT_EQ(0, query_cap(ctx, 0, &gen));
    ASSERT_EQ(0, query_cap(ctx, 4, &roce));
    EXPECT_EQ(1u, gen.get(cap + prm::cap::fl_rc_qp_when_roce_disabled));
    EXPECT_EQ(1u, roce.get(cap + prm::roce_cap::fl_rc_qp_when_roce_enabled));
    EXPECT_EQ(1u, roce.get(cap + prm::roce_cap::fl_rc_qp_when_roce_disabled));
}

/* The capability pages UCX and rdma-core query beyond the modelled ones
 * answer as a ConnectX-6 Dx without those features: all zero */
TEST_F(test_emu_devx, query_hca_cap_pages_without_features)
{
    for (unsigned type : {0x2u, 0x7u, 0xcu, 0xdu, 0x1u}) {
        prm_buf out(prm::HCA_CAP_OUT_BYTES);

        ASSERT_EQ(0, query_cap(m_ctx, type, &out)) << "type 0x" << std::hex
                                                    << type;
        for (size_t i = prm::CAPABILITY / 8; i < out.size(); ++i) {
            ASSERT_EQ(0, static_cast<const uint8_t*>(out.data())[i])
                    << "type " << type << " byte " << i;
        }
    }

    struct ibv_context *ib = open("mlx5_2");
    prm_buf out(prm::HCA_CAP_OUT_BYTES);
    EXPECT_EQ(EREMOTEIO, query_cap(ib, 0x1, &out))
            << "no Ethernet offloads on an InfiniBand port";
    close(ib);
}

/* Device memory (MEMIC): what ibv_alloc_dm hands out, 256 KiB in 64-byte
 * units */
TEST_F(test_emu_devx, device_memory_caps)
{
    prm_buf gen(prm::HCA_CAP_OUT_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    ASSERT_EQ(0, query_cap(m_ctx, 0, &gen));
    EXPECT_EQ(1u, gen.get(prm::CAPABILITY + prm::cap::device_memory));
    ASSERT_EQ(0, query_cap(m_ctx, 0xf, &out));
    EXPECT_EQ(1u, out.get(prm::CAPABILITY + prm::device_mem_caps::memic));
    EXPECT_EQ(6u, out.get(prm::CAPABILITY +
                          prm::device_mem_caps::log_min_memic_alloc_size));
    EXPECT_EQ(256u * 1024, out.get(prm::CAPABILITY +
                                   prm::device_mem_caps::max_memic_size));
}

/* Masked (extended) atomics on 4 and 8 bytes, for RC and DC alike */
TEST_F(test_emu_devx, atomic_caps_sizes)
{
    prm_buf out(prm::HCA_CAP_OUT_BYTES);

    ASSERT_EQ(0, query_cap(m_ctx, 3, &out));
    EXPECT_EQ(0xcu, out.get(prm::CAPABILITY + prm::atomic_caps::atomic_size_qp));
    EXPECT_EQ(0xcu, out.get(prm::CAPABILITY + prm::atomic_caps::atomic_size_dc));
    EXPECT_EQ(0xfu, out.get(prm::CAPABILITY +
                            prm::atomic_caps::atomic_operations));
}

TEST_F(test_emu_devx, general_cmd_errors)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);
    prm_buf short_out(prm::HDR_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, (0x9 << 1) | 1); /* the e-switch's: not a VF's */
    EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                       in.size(), out.data(),
                                                       out.size()));
    EXPECT_EQ(prm::BAD_PARAM, out.get(prm::status));
    EXPECT_EQ(UCT_IB_EMU_SYND_HCA_CAP_BAD_TYPE, out.get(prm::syndrome));

    in.set(prm::op_mod, 1);
    in.set(prm::other_function, 1);
    EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                       in.size(), out.data(),
                                                       out.size()));
    EXPECT_EQ(UCT_IB_EMU_SYND_HCA_CAP_OTHER_FUNCTION, out.get(prm::syndrome));

    in.set(prm::other_function, 0);
    EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                       in.size(),
                                                       short_out.data(),
                                                       short_out.size()));
    EXPECT_EQ(prm::BAD_OUTPUT_LEN, short_out.get(prm::status));
    EXPECT_EQ(UCT_IB_EMU_SYND_CMD_OUTPUT_LEN, short_out.get(prm::syndrome));

    in.set(prm::opcode, prm::QUERY_NIC_VPORT_CONTEXT);
    EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                       in.size(), out.data(),
                                                       out.size()));
    EXPECT_EQ(prm::BAD_OP, out.get(prm::status));
    EXPECT_EQ(UCT_IB_EMU_SYND_CMD_BAD_OPCODE, out.get(prm::syndrome));

    /* refused by the kernel before the firmware sees them */
    in.set(prm::opcode, prm::CREATE_QP);
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()))
            << "object commands are not general commands";
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_general_cmd(m_ctx, in.data(), 8,
                                                    out.data(), out.size()))
            << "shorter than the command header";
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(prm::CREATE_QP));
}

TEST_F(test_emu_devx, create_qp)
{
    devx_qp qp = new_qp();
    uct_ib_emu_qp_info_t info;

    ASSERT_NE(nullptr, qp.obj);
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_TRUE(info.devx);
    EXPECT_EQ("mlx5_0", info.device);
    EXPECT_EQ(prm::QP_RST, info.state);
    EXPECT_EQ(m_env.pdn, info.pdn);
    EXPECT_EQ(m_env.cqn, info.cqn_snd);
    EXPECT_EQ(m_env.cqn, info.cqn_rcv);
    EXPECT_EQ(LOG_SQ_SIZE, info.log_sq_size);
    EXPECT_EQ(LOG_RQ_SIZE, info.log_rq_size);
    EXPECT_EQ(LOG_RQ_STRIDE, info.log_rq_stride);
    EXPECT_EQ(m_env.uar->page_id, info.uar_page);
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_count(prm::CREATE_QP));
    EXPECT_EQ(1u, uct_ib_emu_counters().qp_count(prm::QP_RST));

    /* everything it uses is busy */
    EXPECT_EQ(EBUSY, uct_ib_glue->destroy_cq(m_env.cq));
    EXPECT_EQ(EBUSY, uct_ib_glue->dealloc_pd(m_env.pd));
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_umem_dereg(m_env.wq_umem));
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_umem_dereg(m_env.dbr_umem));
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_failed_count(prm::DESTROY_UMEM));

    destroy(qp);
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_count(prm::DESTROY_QP));
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_destroy(qp.obj));
}

TEST_F(test_emu_devx, close_reclaims_devx_objects)
{
    devx_qp qp = new_qp();

    ASSERT_NE(nullptr, qp.obj);
    m_qps.clear();
    close(m_ctx);
    m_env = devx_env();

    /* the QP, the PD, the CQ, the UAR and two umems */
    EXPECT_EQ(6u, uct_ib_emu_counters().objects_reclaimed);
    EXPECT_EQ(0u, uct_ib_emu_counters().qp_count(prm::QP_RST));
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_destroy(qp.obj)) << "gone";
    uct_ib_emu_counters_reset();
}

TEST_F(test_emu_devx, create_qp_with_srq)
{
    struct ibv_srq_init_attr attr = {};
    struct mlx5dv_srq dvsrq       = {};
    struct mlx5dv_obj obj         = {};
    struct ibv_srq *srq;
    devx_qp qp;

    attr.attr.max_wr  = 64;
    attr.attr.max_sge = 1;
    srq               = uct_ib_glue->create_srq(m_env.pd, &attr);
    ASSERT_NE(nullptr, srq);
    obj.srq.in      = srq;
    obj.srq.out     = &dvsrq;
    dvsrq.comp_mask = MLX5DV_SRQ_MASK_SRQN;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_init_obj(&obj, MLX5DV_OBJ_SRQ));

    prm_buf in = create_qp_cmd(m_env);
    in.set(prm::QPC + prm::qpc::rq_type, 1);
    in.set(prm::QPC + prm::qpc::log_rq_size, 0);
    in.set(prm::QPC + prm::qpc::srqn, dvsrq.srqn);
    qp = create_qp(m_env, in);
    ASSERT_NE(nullptr, qp.obj);
    EXPECT_EQ(EBUSY, uct_ib_glue->destroy_srq(srq));

    uct_ib_emu_qp_info_t info;
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(1u, info.rq_type);
    EXPECT_EQ(dvsrq.srqn, info.srqn);

    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
    EXPECT_EQ(0, uct_ib_glue->destroy_srq(srq));
}

/* As mlx5_ib does, the kernel sets the umem valid bits of a DevX create:
 * UCX 1.13.1 leaves them clear */
TEST_F(test_emu_devx, kernel_sets_the_umem_valid_bits)
{
    prm_buf in = create_qp_cmd(m_env);
    devx_qp qp;

    in.set(prm::wq_umem_valid, 0);
    in.set(prm::QPC + prm::qpc::dbr_umem_valid, 0);
    qp = create_qp(m_env, in);
    ASSERT_NE(nullptr, qp.obj);
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
}

TEST_F(test_emu_devx, create_qp_rejections)
{
    using namespace prm;
    struct ibv_context *other = open("mlx5_0"); /* another context */
    struct ibv_pd *other_pd   = uct_ib_glue->alloc_pd(other);
    struct ibv_cq *other_cq   = uct_ib_glue->create_cq(other, 8, nullptr,
                                                       nullptr, 0);
    struct {
        const char                   *what;
        std::function<void(prm_buf&)> mutate;
        uint8_t                      status;
        uint32_t                     syndrome;
    } cases[] = {
        {"service type UC", [](prm_buf &in) { in.set(QPC + qpc::st, 1); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_BAD_ST},
        {"unknown pd", [](prm_buf &in) { in.set(QPC + qpc::pd, 0xabcd); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_PD},
        {"pd of another context",
         [&](prm_buf &in) { in.set(QPC + qpc::pd, pdn_of(other_pd)); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_PD},
        {"unknown send cq",
         [](prm_buf &in) { in.set(QPC + qpc::cqn_snd, 0x7777); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_CQN_SND},
        {"receive cq of another context",
         [&](prm_buf &in) { in.set(QPC + qpc::cqn_rcv, dv_cq(other_cq).cqn); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_CQN_RCV},
        {"send queue larger than the wq umem",
         [](prm_buf &in) { in.set(QPC + qpc::log_sq_size, 15); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_WQ_UMEM_SIZE},
        {"receive queue larger than the wq umem",
         [](prm_buf &in) { in.set(QPC + qpc::log_rq_size, 15); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_WQ_UMEM_SIZE},
        {"receive stride too large",
         [](prm_buf &in) { in.set(QPC + qpc::log_rq_stride, 6); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_LOG_RQ_STRIDE},
        {"rq type 2", [](prm_buf &in) { in.set(QPC + qpc::rq_type, 2); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_BAD_RQ_TYPE},
        {"unknown srq",
         [](prm_buf &in) { in.set(QPC + qpc::rq_type, 1);
                           in.set(QPC + qpc::srqn, 0x99); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_SRQN},
        {"unknown uar page",
         [](prm_buf &in) { in.set(QPC + qpc::uar_page, 0xfffff); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_UAR_PAGE},
        {"unknown wq umem", [](prm_buf &in) { in.set(wq_umem_id, 0x5555); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_WQ_UMEM},
        {"wq past the umem end",
         [](prm_buf &in) { in.set(wq_umem_offset, 64); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_WQ_UMEM_SIZE},
        {"unknown dbr umem",
         [](prm_buf &in) { in.set(QPC + qpc::dbr_umem_id, 0x5555); },
         BAD_RESOURCE, UCT_IB_EMU_SYND_CREATE_QP_BAD_DBR_UMEM},
        {"misaligned dbr", [](prm_buf &in) { in.set(QPC + qpc::dbr_addr, 4); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_DBR_ADDR},
        {"dbr past the umem end",
         [](prm_buf &in) { in.set(QPC + qpc::dbr_addr, 64); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_DBR_ADDR},
        {"cs_req 0x33", [](prm_buf &in) { in.set(QPC + qpc::cs_req, 0x33); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_BAD_CS_REQ},
        {"cs_req 0x02", [](prm_buf &in) { in.set(QPC + qpc::cs_req, 0x02); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_BAD_CS_REQ},
        {"cs_res 0x11", [](prm_buf &in) { in.set(QPC + qpc::cs_res, 0x11); },
         BAD_PARAM, UCT_IB_EMU_SYND_CREATE_QP_BAD_CS_RES},
        {"op_mod", [](prm_buf &in) { in.set(op_mod, 1); },
         BAD_PARAM, UCT_IB_EMU_SYND_CMD_BAD_OP_MOD}
    };

    ASSERT_NE(nullptr, other_pd);
    ASSERT_NE(nullptr, other_cq);
    for (const auto &c : cases) {
        SCOPED_TRACE(c.what);
        prm_buf in = create_qp_cmd(m_env);
        prm_buf out(HDR_BYTES);

        c.mutate(in);
        errno = 0;
        EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx, in.data(),
                                                        in.size(), out.data(),
                                                        out.size()));
        EXPECT_EQ(EREMOTEIO, errno);
        EXPECT_EQ(c.status, out.get(status));
        EXPECT_EQ(c.syndrome, out.get(syndrome));
    }

    /* a command cut short */
    prm_buf in = create_qp_cmd(m_env);
    prm_buf out(HDR_BYTES);
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx, in.data(), 200,
                                                    out.data(), out.size()));
    EXPECT_EQ(BAD_INPUT_LEN, out.get(status));

    EXPECT_EQ(0u, uct_ib_emu_counters().qp_count(QP_RST)) << "no QP created";
    EXPECT_EQ(uct_ib_emu_counters().cmd_count(CREATE_QP),
              uct_ib_emu_counters().cmd_failed_count(CREATE_QP));
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(other_cq));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(other_pd));
}

TEST_F(test_emu_devx, obj_create_kernel_checks)
{
    /* an object the kernel creates, which the device does not model */
    constexpr uint16_t CREATE_XRC_SRQ = 0x705;
    prm_buf in(prm::QP_CMD_BYTES), out(prm::HDR_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()));
    EXPECT_EQ(EINVAL, errno) << "not an object creation";

    in.set(prm::opcode, CREATE_XRC_SRQ);
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()));
    EXPECT_EQ(EREMOTEIO, errno);
    EXPECT_EQ(prm::BAD_OP, out.get(prm::status)) << "not modelled";
}

TEST_F(test_emu_devx, legal_transitions)
{
    devx_qp qp = new_qp();
    prm_buf to_init = rst2init_cmd(qp.qpn);
    prm_buf to_rtr  = init2rtr_to_peer(qp.qpn);
    prm_buf to_rts  = rtr2rts_cmd(qp.qpn);
    prm_buf rts_rts = modify_cmd(prm::RTS2RTS_QP, qp.qpn);
    prm_buf to_err  = modify_cmd(prm::QP_2ERR, qp.qpn, prm::HDR_BYTES);
    prm_buf to_rst  = modify_cmd(prm::QP_2RST, qp.qpn, prm::HDR_BYTES);

    ASSERT_NE(nullptr, qp.obj);
    ASSERT_EQ(0, modify(qp, to_init));
    EXPECT_EQ(prm::QP_INIT, qp_state(qp.qpn));
    ASSERT_EQ(0, modify(qp, to_rtr));
    EXPECT_EQ(prm::QP_RTR, qp_state(qp.qpn));
    ASSERT_EQ(0, modify(qp, to_rts));
    EXPECT_EQ(prm::QP_RTS, qp_state(qp.qpn));
    EXPECT_EQ(1u, uct_ib_emu_counters().qp_count(prm::QP_RTS));

    rts_rts.set(prm::opt_param_mask, prm::OPT_RAE);
    rts_rts.set(prm::QPC + prm::qpc::rae, 1);
    ASSERT_EQ(0, modify(qp, rts_rts));
    uct_ib_emu_qp_info_t info;
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(1, info.rae) << "RTS2RTS applies its optional parameters";

    ASSERT_EQ(0, modify(qp, to_err));
    EXPECT_EQ(prm::QP_ERR, qp_state(qp.qpn));
    ASSERT_EQ(0, modify(qp, to_rst));
    EXPECT_EQ(prm::QP_RST, qp_state(qp.qpn));
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(0u, info.remote_qpn) << "2RST clears the connection";

    /* and around again */
    ASSERT_EQ(0, modify(qp, to_init));
    ASSERT_EQ(0, modify(qp, to_rtr));
    EXPECT_EQ(prm::QP_RTR, qp_state(qp.qpn));
    ASSERT_EQ(0, modify(qp, to_err)) << "2ERR from any state";

    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_count(prm::RST2INIT_QP));
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_count(prm::INIT2RTR_QP));
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_failed_count(prm::INIT2RTR_QP));
}

TEST_F(test_emu_devx, illegal_transitions)
{
    devx_qp rst = new_qp();
    devx_qp ini = init_qp();
    devx_qp rts = rts_qp();
    struct {
        const char *what;
        devx_qp    qp;
        prm_buf    cmd;
        uint32_t   syndrome;
    } cases[] = {
        {"INIT2RTR in RST", rst, init2rtr_to_peer(rst.qpn),
         UCT_IB_EMU_SYND_INIT2RTR_BAD_STATE},
        {"RTR2RTS in RST", rst, rtr2rts_cmd(rst.qpn),
         UCT_IB_EMU_SYND_RTR2RTS_BAD_STATE},
        {"INIT2INIT in RST", rst, modify_cmd(prm::INIT2INIT_QP, rst.qpn),
         UCT_IB_EMU_SYND_INIT2INIT_BAD_STATE},
        {"RST2INIT in INIT", ini, rst2init_cmd(ini.qpn),
         UCT_IB_EMU_SYND_RST2INIT_BAD_STATE},
        {"RTR2RTS in INIT", ini, rtr2rts_cmd(ini.qpn),
         UCT_IB_EMU_SYND_RTR2RTS_BAD_STATE},
        {"RTS2RTS in INIT", ini, modify_cmd(prm::RTS2RTS_QP, ini.qpn),
         UCT_IB_EMU_SYND_RTS2RTS_BAD_STATE},
        {"INIT2RTR in RTS", rts, init2rtr_to_peer(rts.qpn),
         UCT_IB_EMU_SYND_INIT2RTR_BAD_STATE},
        {"RST2INIT in RTS", rts, rst2init_cmd(rts.qpn),
         UCT_IB_EMU_SYND_RST2INIT_BAD_STATE},
        {"SQERR2RTS in RTS", rts, modify_cmd(prm::SQERR2RTS_QP, rts.qpn),
         UCT_IB_EMU_SYND_SQERR2RTS_BAD_STATE},
        {"SQD_RTS in RTS", rts, modify_cmd(prm::SQD_RTS_QP, rts.qpn),
         UCT_IB_EMU_SYND_SQD2RTS_BAD_STATE}
    };

    ASSERT_EQ(prm::QP_RTS, qp_state(rts.qpn));
    for (auto &c : cases) {
        SCOPED_TRACE(c.what);
        expect_fw_failure(c.qp, c.cmd, prm::BAD_RES_STATE, c.syndrome);
    }
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_failed_count(prm::INIT2RTR_QP));
}

TEST_F(test_emu_devx, rst2init_field_checks)
{
    devx_qp qp      = new_qp();
    prm_buf port0   = rst2init_cmd(qp.qpn, 0);
    prm_buf port2   = rst2init_cmd(qp.qpn, 2);
    prm_buf pkey    = rst2init_cmd(qp.qpn);
    prm_buf opt     = rst2init_cmd(qp.qpn);
    prm_buf short_c = rst2init_cmd(qp.qpn);

    pkey.set(prm::QPC + prm::qpc::PRIMARY_PATH + prm::ads::pkey_index, 1);
    opt.set(prm::opt_param_mask, 1u << 4);

    expect_fw_failure(qp, port0, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_RST2INIT_BAD_PORT);
    expect_fw_failure(qp, port2, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_RST2INIT_BAD_PORT);
    expect_fw_failure(qp, pkey, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_RST2INIT_BAD_PKEY_INDEX);
    expect_fw_failure(qp, opt, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_MODIFY_QP_OPT_PARAM);

    prm_buf out(prm::HDR_BYTES);
    EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_obj_modify(qp.obj, short_c.data(),
                                                      prm::HDR_BYTES,
                                                      out.data(), out.size()));
    EXPECT_EQ(prm::BAD_INPUT_LEN, out.get(prm::status));
}

TEST_F(test_emu_devx, init2rtr_roce_field_checks)
{
    using namespace prm;
    devx_qp qp        = init_qp();
    const unsigned pp = QPC + qpc::PRIMARY_PATH;
    const uct_ib_emu_mac_t mcast = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    struct {
        const char                   *what;
        std::function<void(prm_buf&)> mutate;
        uint32_t                     syndrome;
    } cases[] = {
        {"mtu 0", [](prm_buf &in) { in.set(QPC + qpc::mtu, 0); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_MTU},
        {"mtu 6", [](prm_buf &in) { in.set(QPC + qpc::mtu, 6); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_MTU},
        {"log_msg_max 31",
         [](prm_buf &in) { in.set(QPC + qpc::log_msg_max, 31); },
         UCT_IB_EMU_SYND_INIT2RTR_LOG_MSG_MAX},
        {"log_rra_max 5",
         [](prm_buf &in) { in.set(QPC + qpc::log_rra_max, 5); },
         UCT_IB_EMU_SYND_INIT2RTR_LOG_RRA_MAX},
        {"port 2", [&](prm_buf &in) { in.set(pp + ads::vhca_port_num, 2); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_PORT},
        {"port 0", [&](prm_buf &in) { in.set(pp + ads::vhca_port_num, 0); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_PORT},
        {"atomic mode above 8 bytes",
         [](prm_buf &in) { in.set(QPC + qpc::atomic_mode, 4); },
         UCT_IB_EMU_SYND_MODIFY_QP_ATOMIC_MODE},
        {"lag port affinity on a device without LAG",
         [](prm_buf &in) { in.set(opt_param_mask, OPT_RRE | OPT_LAG_TX_AFF);
                           in.set(QPC + qpc::lag_tx_port_affinity, 1); },
         UCT_IB_EMU_SYND_INIT2RTR_NO_LAG},
        {"no rmac",
         [&](prm_buf &in) { in.set(pp + ads::rmac_47_32, 0);
                            in.set(pp + ads::rmac_31_0, 0); },
         UCT_IB_EMU_SYND_INIT2RTR_NO_RMAC},
        {"multicast rmac",
         [&](prm_buf &in) { in.set_bytes(pp + ads::rmac_47_32.offset,
                                          mcast.data(), 6); },
         UCT_IB_EMU_SYND_INIT2RTR_MCAST_RMAC},
        {"no rgid",
         [&](prm_buf &in) { uint8_t zero[16] = {};
                            in.set_bytes(pp + ads::RGID, zero, 16); },
         UCT_IB_EMU_SYND_INIT2RTR_NO_RGID},
        {"empty sgid entry",
         [&](prm_buf &in) { in.set(pp + ads::src_addr_index, 4); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_SGID_INDEX},
        {"force loopback without the capability",
         [&](prm_buf &in) { in.set(pp + ads::fl, 1); },
         UCT_IB_EMU_SYND_INIT2RTR_FL_UNSUPPORTED},
        {"unknown optional parameter",
         [](prm_buf &in) { in.set(opt_param_mask, OPT_RRE | (1u << 4)); },
         UCT_IB_EMU_SYND_MODIFY_QP_OPT_PARAM}
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(c.what);
        prm_buf in = init2rtr_to_peer(qp.qpn);
        c.mutate(in);
        expect_fw_failure(qp, in, BAD_PARAM, c.syndrome);
    }

    /* the same command, unmodified, is accepted */
    prm_buf in = init2rtr_to_peer(qp.qpn);
    EXPECT_EQ(0, modify(qp, in));
}

TEST_F(test_emu_devx, init2rtr_takes_the_atomic_mode)
{
    using namespace prm;
    devx_qp qp = init_qp();
    prm_buf in = init2rtr_to_peer(qp.qpn);
    uct_ib_emu_qp_info_t info;

    in.set(QPC + qpc::atomic_mode, 3);
    ASSERT_EQ(0, modify(qp, in));
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(3u, info.atomic_mode);
    EXPECT_EQ(0u, info.lag_tx_port_affinity);
}

TEST_F(test_emu_devx, init2rtr_decodes_every_path_field)
{
    using namespace prm;
    devx_qp qp         = init_qp();
    const unsigned pp  = QPC + qpc::PRIMARY_PATH;
    union ibv_gid rgid = ipv4_gid(198, 18, 0, 2);
    prm_buf rtr        = init2rtr_roce_cmd(qp.qpn, 0xabcdef, MAC_MLX5_1,
                                           rgid, 3);
    prm_buf rts        = modify_cmd(RTR2RTS_QP, qp.qpn);
    uct_ib_emu_qp_info_t info;

    /* distinct values everywhere, so an overlap between fields shows */
    rtr.set(pp + ads::free_ar, 1);
    rtr.set(pp + ads::grh, 1);
    rtr.set(pp + ads::mlid, 0x55);
    rtr.set(pp + ads::rlid, 0xbeef);
    rtr.set(pp + ads::stat_rate, 0x9);
    rtr.set(pp + ads::hop_limit, 0xa7);
    rtr.set(pp + ads::tclass, 0xb3);
    rtr.set(pp + ads::flow_label, 0xabcde);
    rtr.set(pp + ads::f_dscp, 1);
    rtr.set(pp + ads::f_ecn, 1);
    rtr.set(pp + ads::f_eth_prio, 1);
    rtr.set(pp + ads::ecn, 2);
    rtr.set(pp + ads::dscp, 0x2d);
    rtr.set(pp + ads::udp_sport, 0xd00d);
    rtr.set(pp + ads::dei_cfi, 1);
    rtr.set(pp + ads::eth_prio, 5);
    rtr.set(pp + ads::sl, 0xc);
    rtr.set(QPC + qpc::mtu, 2);
    rtr.set(QPC + qpc::log_msg_max, 29);
    rtr.set(QPC + qpc::log_rra_max, 3);
    rtr.set(QPC + qpc::min_rnr_nak, 0x1b);
    rtr.set(QPC + qpc::next_rcv_psn, 0x123456);
    rtr.set(opt_param_mask, OPT_RRE | OPT_RWE | OPT_RAE);
    rtr.set(QPC + qpc::rre, 0);
    rtr.set(QPC + qpc::rwe, 1);
    rtr.set(QPC + qpc::rae, 1);
    ASSERT_EQ(0, modify(qp, rtr));

    rts.set(QPC + qpc::retry_count, 5);
    rts.set(QPC + qpc::rnr_retry, 6);
    rts.set(QPC + qpc::log_sra_max, 3);
    rts.set(QPC + qpc::next_send_psn, 0x654321);
    rts.set(pp + ads::ack_timeout, 0x13);
    ASSERT_EQ(0, modify(qp, rts));

    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(prm::QP_RTS, info.state);
    EXPECT_EQ(1, info.port);
    EXPECT_EQ(0xabcdefu, info.remote_qpn);
    EXPECT_EQ(2, info.mtu);
    EXPECT_EQ(29, info.log_msg_max);
    EXPECT_EQ(3, info.log_rra_max);
    EXPECT_EQ(0x1b, info.min_rnr_nak);
    EXPECT_EQ(0x123456u, info.next_rcv_psn);
    EXPECT_EQ(0, info.rre);
    EXPECT_EQ(1, info.rwe);
    EXPECT_EQ(1, info.rae);
    EXPECT_EQ(5, info.retry_count);
    EXPECT_EQ(6, info.rnr_retry);
    EXPECT_EQ(3, info.log_sra_max);
    EXPECT_EQ(0x654321u, info.next_send_psn);
    EXPECT_EQ(0x13, info.ack_timeout);

    const uct_ib_emu_ads_t &p = info.primary;
    EXPECT_EQ(0, p.fl);
    EXPECT_EQ(1, p.free_ar);
    EXPECT_EQ(0, p.pkey_index);
    EXPECT_EQ(1, p.grh);
    EXPECT_EQ(0x55, p.mlid);
    EXPECT_EQ(0xbeef, p.rlid);
    EXPECT_EQ(0x13, p.ack_timeout);
    EXPECT_EQ(3, p.src_addr_index);
    EXPECT_EQ(0x9, p.stat_rate);
    EXPECT_EQ(0xa7, p.hop_limit);
    EXPECT_EQ(0xb3, p.tclass);
    EXPECT_EQ(0xabcdeu, p.flow_label);
    EXPECT_EQ(gid_hex(rgid.raw), gid_hex(p.rgid.data()));
    EXPECT_EQ(1, p.f_dscp);
    EXPECT_EQ(1, p.f_ecn);
    EXPECT_EQ(1, p.f_eth_prio);
    EXPECT_EQ(2, p.ecn);
    EXPECT_EQ(0x2d, p.dscp);
    EXPECT_EQ(0xd00d, p.udp_sport);
    EXPECT_EQ(1, p.dei_cfi);
    EXPECT_EQ(5, p.eth_prio);
    EXPECT_EQ(0xc, p.sl);
    EXPECT_EQ(1, p.vhca_port_num);
    EXPECT_EQ(MAC_MLX5_1, p.rmac);

    /* QUERY_QP encodes the same context at the PRM positions */
    prm_buf query = modify_cmd(QUERY_QP, qp.qpn, HDR_BYTES);
    prm_buf out(QP_CMD_BYTES);
    uct_ib_emu_mac_t rmac;
    uint8_t raw_gid[16];

    ASSERT_EQ(0, uct_ib_glue->devx_obj_query(qp.obj, query.data(),
                                             query.size(), out.data(),
                                             out.size()));
    EXPECT_EQ(QP_RTS, out.get(QPC + qpc::state));
    EXPECT_EQ(0u, out.get(QPC + qpc::st));
    EXPECT_EQ(m_env.pdn, out.get(QPC + qpc::pd));
    EXPECT_EQ(2u, out.get(QPC + qpc::mtu));
    EXPECT_EQ(29u, out.get(QPC + qpc::log_msg_max));
    EXPECT_EQ(0xabcdefu, out.get(QPC + qpc::remote_qpn));
    EXPECT_EQ(3u, out.get(QPC + qpc::log_rra_max));
    EXPECT_EQ(3u, out.get(QPC + qpc::log_sra_max));
    EXPECT_EQ(5u, out.get(QPC + qpc::retry_count));
    EXPECT_EQ(6u, out.get(QPC + qpc::rnr_retry));
    EXPECT_EQ(0x1bu, out.get(QPC + qpc::min_rnr_nak));
    EXPECT_EQ(0x654321u, out.get(QPC + qpc::next_send_psn));
    EXPECT_EQ(0x123456u, out.get(QPC + qpc::next_rcv_psn));
    EXPECT_EQ(0u, out.get(QPC + qpc::rre));
    EXPECT_EQ(1u, out.get(QPC + qpc::rwe));
    EXPECT_EQ(1u, out.get(QPC + qpc::rae));
    EXPECT_EQ(m_env.cqn, out.get(QPC + qpc::cqn_snd));
    EXPECT_EQ(m_env.cqn, out.get(QPC + qpc::cqn_rcv));
    EXPECT_EQ(1u, out.get(pp + ads::free_ar));
    EXPECT_EQ(1u, out.get(pp + ads::grh));
    EXPECT_EQ(0x55u, out.get(pp + ads::mlid));
    EXPECT_EQ(0xbeefu, out.get(pp + ads::rlid));
    EXPECT_EQ(0x13u, out.get(pp + ads::ack_timeout));
    EXPECT_EQ(3u, out.get(pp + ads::src_addr_index));
    EXPECT_EQ(0x9u, out.get(pp + ads::stat_rate));
    EXPECT_EQ(0xa7u, out.get(pp + ads::hop_limit));
    EXPECT_EQ(0xb3u, out.get(pp + ads::tclass));
    EXPECT_EQ(0xabcdeu, out.get(pp + ads::flow_label));
    EXPECT_EQ(2u, out.get(pp + ads::ecn));
    EXPECT_EQ(0x2du, out.get(pp + ads::dscp));
    EXPECT_EQ(0xd00du, out.get(pp + ads::udp_sport));
    EXPECT_EQ(5u, out.get(pp + ads::eth_prio));
    EXPECT_EQ(0xcu, out.get(pp + ads::sl));
    EXPECT_EQ(1u, out.get(pp + ads::vhca_port_num));
    out.get_bytes(pp + ads::RGID, raw_gid, 16);
    EXPECT_EQ(gid_hex(rgid.raw), gid_hex(raw_gid));
    out.get_bytes(pp + ads::rmac_47_32.offset, rmac.data(), 6);
    EXPECT_EQ(MAC_MLX5_1, rmac);
    EXPECT_EQ(m_env.dbr_umem->umem_id, out.get(QPC + qpc::dbr_umem_id));
    EXPECT_EQ(1u, out.get(QPC + qpc::dbr_umem_valid));
    EXPECT_EQ(m_env.uar->page_id, out.get(QPC + qpc::uar_page));
    EXPECT_EQ(LOG_SQ_SIZE, out.get(QPC + qpc::log_sq_size));
    EXPECT_EQ(LOG_RQ_SIZE, out.get(QPC + qpc::log_rq_size));
    EXPECT_EQ(LOG_RQ_STRIDE, out.get(QPC + qpc::log_rq_stride));
}

TEST_F(test_emu_devx, rtr2rts_field_checks)
{
    devx_qp qp     = init_qp();
    prm_buf to_rtr = init2rtr_to_peer(qp.qpn);
    prm_buf to_rts = rtr2rts_cmd(qp.qpn);

    ASSERT_EQ(0, modify(qp, to_rtr));
    to_rts.set(prm::QPC + prm::qpc::log_sra_max, 5);
    expect_fw_failure(qp, to_rts, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_RTR2RTS_LOG_SRA_MAX);
}

TEST_F(test_emu_devx, modify_and_query_kernel_checks)
{
    devx_qp qp1 = new_qp();
    devx_qp qp2 = new_qp();
    prm_buf other = rst2init_cmd(qp2.qpn);
    prm_buf query = modify_cmd(prm::QUERY_QP, qp1.qpn, prm::HDR_BYTES);
    prm_buf to_init = rst2init_cmd(qp1.qpn);
    prm_buf out(prm::QP_CMD_BYTES), short_out(prm::HDR_BYTES);

    EXPECT_EQ(EINVAL, modify(qp1, other)) << "names another QP";
    EXPECT_EQ(EINVAL, modify(qp1, query)) << "a query is not a modify";
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_obj_query(qp1.obj, to_init.data(),
                                                  to_init.size(), out.data(),
                                                  out.size()))
            << "a modify is not a query";
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(prm::RST2INIT_QP));

    EXPECT_EQ(EREMOTEIO,
              uct_ib_glue->devx_obj_query(qp1.obj, query.data(),
                                          query.size(), short_out.data(),
                                          short_out.size()));
    EXPECT_EQ(prm::BAD_OUTPUT_LEN, short_out.get(prm::status));
    EXPECT_EQ(prm::QP_RST, qp_state(qp1.qpn));
}

TEST_F(test_emu_devx, query_fresh_qp)
{
    devx_qp qp    = new_qp();
    prm_buf query = modify_cmd(prm::QUERY_QP, qp.qpn, prm::HDR_BYTES);
    prm_buf out(prm::QP_CMD_BYTES);

    ASSERT_EQ(0, uct_ib_glue->devx_obj_query(qp.obj, query.data(),
                                             query.size(), out.data(),
                                             out.size()));
    EXPECT_EQ(0u, out.get(prm::status));
    EXPECT_EQ(prm::QP_RST, out.get(prm::QPC + prm::qpc::state));
    EXPECT_EQ(m_env.pdn, out.get(prm::QPC + prm::qpc::pd));
    EXPECT_EQ(0u, out.get(prm::QPC + prm::qpc::rq_type));
    EXPECT_EQ(0u, out.get(prm::QPC + prm::qpc::remote_qpn));
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_count(prm::QUERY_QP));
}

TEST_F(test_emu_devx, force_loopback_with_capability)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    const unsigned pp          = prm::QPC + prm::qpc::PRIMARY_PATH;
    uct_ib_emu_qp_info_t info;
    devx_qp qp;

    topo.devices[0].fl_rc_qp_when_roce_enabled = true;
    env_cleanup(m_env);
    close(m_ctx);
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
    m_ctx = open("mlx5_0");
    env_init(m_env, m_ctx);

    qp = init_qp();
    prm_buf in = modify_cmd(prm::INIT2RTR_QP, qp.qpn);
    in.set(prm::QPC + prm::qpc::mtu, 3);
    in.set(prm::QPC + prm::qpc::remote_qpn, qp.qpn);
    in.set(pp + prm::ads::fl, 1);
    in.set(pp + prm::ads::vhca_port_num, 1);
    ASSERT_EQ(0, modify(qp, in)) << "no GID and no MAC needed";
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(1, info.primary.fl);
    EXPECT_EQ(qp.qpn, info.remote_qpn);
}

/* The path MTU may exceed the port's active MTU, up to its max MTU */
TEST_F(test_emu_devx, init2rtr_mtu_up_to_the_ports_max)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    uct_ib_emu_qp_info_t info;
    devx_qp qp = init_qp();
    prm_buf in = init2rtr_to_peer(qp.qpn);

    in.set(prm::QPC + prm::qpc::mtu, 5);
    ASSERT_EQ(0, modify(qp, in)) << "4096 on a port of active 1024, max 4096";
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(5, info.mtu);

    topo.devices[0].ports[0].max_mtu = IBV_MTU_2048;
    destroy(qp);
    env_cleanup(m_env);
    close(m_ctx);
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
    m_ctx = open("mlx5_0");
    env_init(m_env, m_ctx);

    qp = init_qp();
    in = init2rtr_to_peer(qp.qpn);
    in.set(prm::QPC + prm::qpc::mtu, 5);
    expect_fw_failure(qp, in, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_INIT2RTR_MTU_ABOVE_PORT);
    in.set(prm::QPC + prm::qpc::mtu, 4);
    EXPECT_EQ(0, modify(qp, in)) << "2048 on a port of max 2048";
}

TEST_F(test_emu_devx, roce_disabled_device)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    const unsigned pp          = prm::QPC + prm::qpc::PRIMARY_PATH;
    prm_buf caps(prm::HCA_CAP_OUT_BYTES);
    devx_qp qp;

    topo.devices[0].roce_enabled                = false;
    topo.devices[0].fl_rc_qp_when_roce_disabled = true;
    env_cleanup(m_env);
    close(m_ctx);
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
    m_ctx = open("mlx5_0");
    env_init(m_env, m_ctx);

    ASSERT_EQ(0, query_cap(m_ctx, 0, &caps));
    EXPECT_EQ(0u, caps.get(prm::CAPABILITY + prm::cap::roce));
    EXPECT_EQ(1u, caps.get(prm::CAPABILITY +
                           prm::cap::fl_rc_qp_when_roce_disabled));

    qp = init_qp();
    prm_buf roce = init2rtr_to_peer(qp.qpn);
    expect_fw_failure(qp, roce, prm::BAD_PARAM,
                      UCT_IB_EMU_SYND_INIT2RTR_ROCE_DISABLED);

    prm_buf loopback = init2rtr_to_peer(qp.qpn);
    loopback.set(pp + prm::ads::fl, 1);
    EXPECT_EQ(0, modify(qp, loopback));
}


/* DevX QPs on an InfiniBand port */
class test_emu_devx_ib : public test_emu_devx {
protected:
    void init() override
    {
        emu_fixture::init();
        m_ctx = open("mlx5_2");
        ASSERT_NE(nullptr, m_ctx);
        env_init(m_env, m_ctx);
    }
};

TEST_F(test_emu_devx_ib, connect)
{
    devx_qp qp     = init_qp();
    prm_buf to_rtr = init2rtr_ib_cmd(qp.qpn, 0x777, LID_MLX5_3);
    prm_buf to_rts = rtr2rts_cmd(qp.qpn);
    uct_ib_emu_qp_info_t info;

    to_rtr.set(prm::QPC + prm::qpc::PRIMARY_PATH + prm::ads::sl, 3);
    ASSERT_EQ(0, modify(qp, to_rtr)) << "4096 MTU on an IB port";
    ASSERT_EQ(0, modify(qp, to_rts));
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(LID_MLX5_3, info.primary.rlid);
    EXPECT_EQ(3, info.primary.sl);
    EXPECT_EQ(5, info.mtu);
    EXPECT_EQ(0x777u, info.remote_qpn);
}

TEST_F(test_emu_devx_ib, init2rtr_field_checks)
{
    using namespace prm;
    devx_qp qp        = init_qp();
    const unsigned pp = QPC + qpc::PRIMARY_PATH;
    union ibv_gid peer = make_gid({0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                   0x02, 0xc9, 0, 0, 0, 0, 0, LID_MLX5_3});
    struct {
        const char                   *what;
        std::function<void(prm_buf&)> mutate;
        uint32_t                     syndrome;
    } cases[] = {
        {"rlid 0", [&](prm_buf &in) { in.set(pp + ads::rlid, 0); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_RLID},
        {"multicast rlid", [&](prm_buf &in) { in.set(pp + ads::rlid, 0xc001); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_RLID},
        {"grh without rgid", [&](prm_buf &in) { in.set(pp + ads::grh, 1); },
         UCT_IB_EMU_SYND_INIT2RTR_NO_RGID},
        {"grh with an empty sgid entry",
         [&](prm_buf &in) { in.set(pp + ads::grh, 1);
                            in.set_bytes(pp + ads::RGID, peer.raw, 16);
                            in.set(pp + ads::src_addr_index, 1); },
         UCT_IB_EMU_SYND_INIT2RTR_BAD_SGID_INDEX},
        {"force loopback without the capability",
         [&](prm_buf &in) { in.set(pp + ads::fl, 1); },
         UCT_IB_EMU_SYND_INIT2RTR_FL_UNSUPPORTED}
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(c.what);
        prm_buf in = init2rtr_ib_cmd(qp.qpn, 0x777, LID_MLX5_3);
        c.mutate(in);
        expect_fw_failure(qp, in, BAD_PARAM, c.syndrome);
    }

    prm_buf global = init2rtr_ib_cmd(qp.qpn, 0x777, LID_MLX5_3);
    global.set(pp + ads::grh, 1);
    global.set_bytes(pp + ads::RGID, peer.raw, 16);
    EXPECT_EQ(0, modify(qp, global)) << "GRH with GID index 0";
}


/* Devices whose limits differ from the default ones */
class test_emu_devx_caps : public test_emu_devx {
protected:
    void init() override
    {
        emu_fixture::init(); /* the test opens mlx5_0 with its topology */
    }

    void open_with(const std::function<void(uct_ib_emu_device_spec_t&)> &change)
    {
        uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();

        for (auto &dev : topo.devices) {
            change(dev);
        }
        ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
        env_init(m_env, m_ctx);
    }
};

TEST_F(test_emu_devx_caps, queue_sizes_above_log_max_qp_sz_are_rejected)
{
    using namespace prm;
    open_with([](uct_ib_emu_device_spec_t &dev) { dev.log_max_qp_sz = 5; });

    /* the command asks for 2^6 of each, which the umem holds */
    for (bool sq : {true, false}) {
        SCOPED_TRACE(sq ? "send queue" : "receive queue");
        prm_buf in = create_qp_cmd(m_env);
        prm_buf out(HDR_BYTES);

        in.set(QPC + (sq ? qpc::log_rq_size : qpc::log_sq_size), 5);
        errno = 0;
        EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx, in.data(),
                                                        in.size(), out.data(),
                                                        out.size()));
        EXPECT_EQ(EREMOTEIO, errno);
        EXPECT_EQ(BAD_PARAM, out.get(status));
        EXPECT_EQ(uint32_t(UCT_IB_EMU_SYND_CREATE_QP_LOG_QUEUE_SIZE),
                  out.get(syndrome));
    }

    /* the caps and the verbs attributes say the same */
    struct ibv_device_attr attr;
    ASSERT_EQ(0, uct_ib_glue->query_device(m_ctx, &attr));
    EXPECT_EQ(32, attr.max_qp_wr);
}

TEST_F(test_emu_devx_caps, lag_port_affinity_within_the_lag_ports)
{
    using namespace prm;
    open_with([](uct_ib_emu_device_spec_t &dev) { dev.num_lag_ports = 2; });

    for (unsigned affinity : {0u, 3u}) {
        SCOPED_TRACE(affinity);
        devx_qp qp = init_qp();
        prm_buf in = init2rtr_to_peer(qp.qpn);

        in.set(opt_param_mask, OPT_RRE | OPT_LAG_TX_AFF);
        in.set(QPC + qpc::lag_tx_port_affinity, affinity);
        expect_fw_failure(qp, in, BAD_PARAM, UCT_IB_EMU_SYND_INIT2RTR_LAG_PORT);
    }

    devx_qp qp = init_qp();
    prm_buf in = init2rtr_to_peer(qp.qpn);
    uct_ib_emu_qp_info_t info;

    in.set(opt_param_mask, OPT_RRE | OPT_LAG_TX_AFF);
    in.set(QPC + qpc::lag_tx_port_affinity, 2);
    ASSERT_EQ(0, modify(qp, in));
    ASSERT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info));
    EXPECT_EQ(2u, info.lag_tx_port_affinity);
}

/* mlx5dv_devx_qp_modify/query, which the drop-in front-end gives UCX: DevX
 * commands on a QP made through verbs, which stays in step with verbs */
TEST_F(test_emu_devx, devx_commands_on_a_verbs_qp)
{
    using namespace prm;
    const uct_ib_emu_dropin_ops_t &ops = uct_ib_emu_dropin_ops;
    struct ibv_qp_init_attr init       = {};
    struct ibv_qp_attr attr            = {};
    struct ibv_qp *qp;

    init.send_cq          = m_env.cq;
    init.recv_cq          = m_env.cq;
    init.qp_type          = IBV_QPT_RC;
    init.cap.max_send_wr  = 16;
    init.cap.max_recv_wr  = 16;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    qp = uct_ib_glue->create_qp(m_env.pd, &init);
    ASSERT_NE(nullptr, qp);

    prm_buf query = modify_cmd(QUERY_QP, qp->qp_num, HDR_BYTES);
    prm_buf out(QP_CMD_BYTES);
    ASSERT_EQ(0, ops.devx_qp_query(qp, query.data(), query.size(), out.data(),
                                   out.size()));
    EXPECT_EQ(QP_RST, out.get(QPC + qpc::state));

    prm_buf in = rst2init_cmd(qp->qp_num);
    prm_buf hdr(HDR_BYTES);
    ASSERT_EQ(0, ops.devx_qp_modify(qp, in.data(), in.size(), hdr.data(),
                                    hdr.size()));
    EXPECT_EQ(QP_INIT, qp_state(qp->qp_num));
    EXPECT_EQ(IBV_QPS_INIT, qp->state);

    prm_buf to_err = modify_cmd(QP_2ERR, qp->qp_num, HDR_BYTES);
    ASSERT_EQ(0, ops.devx_qp_modify(qp, to_err.data(), to_err.size(),
                                    hdr.data(), hdr.size()));
    ASSERT_EQ(0, uct_ib_glue->query_qp(qp, &attr, IBV_QP_STATE, &init));
    EXPECT_EQ(IBV_QPS_ERR, attr.qp_state);

    /* another QP's number, a command of the other kind */
    prm_buf other = modify_cmd(QUERY_QP, qp->qp_num + 1, HDR_BYTES);
    EXPECT_EQ(EINVAL, ops.devx_qp_query(qp, other.data(), other.size(),
                                        out.data(), out.size()));
    EXPECT_EQ(EINVAL, ops.devx_qp_modify(qp, query.data(), query.size(),
                                         out.data(), out.size()));
    /* an illegal transition fails in the firmware */
    prm_buf again = rst2init_cmd(qp->qp_num);
    EXPECT_EQ(EREMOTEIO, ops.devx_qp_modify(qp, again.data(), again.size(),
                                            hdr.data(), hdr.size()));
    EXPECT_NE(0u, hdr.get(status));

    EXPECT_EQ(0, uct_ib_glue->destroy_qp(qp));
}
