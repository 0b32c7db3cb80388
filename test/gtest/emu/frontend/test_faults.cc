/*
 * Fault injection of the emulated device: glue operations failing with a
 * chosen errno in their own convention, and firmware commands failing with
 * a chosen status and syndrome.
 */
#include "emu/emu_test.h"

using namespace emu_test;


class test_emu_faults : public emu_fixture {
protected:
    void init() override
    {
        emu_fixture::init();
        m_ctx = open("mlx5_0");
        ASSERT_NE(nullptr, m_ctx);
    }

    static struct ibv_ah_attr peer_attr()
    {
        struct ibv_ah_attr attr = {};

        attr.is_global      = 1;
        attr.port_num       = 1;
        attr.grh.dgid       = ipv4_gid(198, 18, 0, 2);
        attr.grh.sgid_index = 3;
        attr.grh.hop_limit  = 64;
        return attr;
    }

    struct ibv_context *m_ctx = nullptr;
};

TEST_F(test_emu_faults, arming)
{
    const uct_ib_glue_conv_t conv[] = {
#define TEST_EMU_OP_CONV(_name, _conv, _ret, _args) UCT_IB_GLUE_CONV_##_conv,
        UCT_IB_GLUE_FOREACH_OP(TEST_EMU_OP_CONV)
#undef TEST_EMU_OP_CONV
    };
    const char *name[] = {
#define TEST_EMU_OP_NAME(_name, _conv, _ret, _args) #_name,
        UCT_IB_GLUE_FOREACH_OP(TEST_EMU_OP_NAME)
#undef TEST_EMU_OP_NAME
    };
    unsigned armed = 0;

    /* every operation that can fail can be made to fail, by enum or name */
    for (int op = 0; op < UCT_IB_GLUE_OP_LAST; ++op) {
        bool can_fail = (conv[op] != UCT_IB_GLUE_CONV_VOID) &&
                        (conv[op] != UCT_IB_GLUE_CONV_NAME);
        ucs_status_t expected = can_fail ? UCS_OK : UCS_ERR_INVALID_PARAM;

        SCOPED_TRACE(name[op]);
        EXPECT_EQ(expected, uct_ib_emu_fail_op(
                                    static_cast<uct_ib_glue_op_t>(op), 1, EIO));
        EXPECT_EQ(expected, uct_ib_emu_fail_op(name[op], 2, EIO));
        armed += can_fail ? 2 : 0;
    }
    EXPECT_EQ(armed, uct_ib_emu_pending_faults());

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_fail_op("no_such_op", 1, EIO));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_fail_op("create_ah", 1, 0));
    EXPECT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", 0, 0)) << "disarm";
    EXPECT_EQ(armed - 2, uct_ib_emu_pending_faults());
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_fail_cmd(prm::CREATE_QP, 1,
                                                         0, 0x1));

    uct_ib_emu_clear_faults();
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
}

/* The text UCX_IB_EMU_FAIL_OP takes (armed when a process's model starts,
 * for programs on the drop-in front-end): all or nothing */
TEST_F(test_emu_faults, arming_by_text)
{
    struct ibv_pd *pd = uct_ib_glue->alloc_pd(m_ctx);
    struct ibv_ah_attr attr = peer_attr();
    struct ibv_ah *ah;
    std::string error;

    ASSERT_NE(nullptr, pd);
    ah = uct_ib_glue->create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah);

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_ops("destroy_ah:1:EIO,create_ah:2:12",
                                          &error)) << error;
    EXPECT_EQ(3u, uct_ib_emu_pending_faults());
    EXPECT_EQ(EIO, uct_ib_glue->destroy_ah(ah)) << "errno by name";
    EXPECT_EQ(0, uct_ib_glue->destroy_ah(ah)) << "once";
    for (int i = 0; i < 2; ++i) {
        errno = 0;
        EXPECT_EQ(nullptr, uct_ib_glue->create_ah(pd, &attr));
        EXPECT_EQ(ENOMEM, errno) << "errno by number";
    }
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());

    const char *bad[] = {
        "", "destroy_ah", "destroy_ah:1", "no_such_op:1:EIO",
        "destroy_ah:0:EIO", "destroy_ah:x:EIO", "destroy_ah:1:ENOSUCH",
        "destroy_ah:1:0", "destroy_ah:1:EIO,bogus"
    };
    for (const char *spec : bad) {
        error.clear();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_fail_ops(spec, &error))
                << "'" << spec << "'";
        EXPECT_FALSE(error.empty()) << "'" << spec << "' says what is wrong";
        EXPECT_EQ(0u, uct_ib_emu_pending_faults()) << "'" << spec << "' arms "
                                                      "nothing";
    }

    /* the C entry point a program finds with dlsym */
    {
        log_capture log;
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_fail_ops_c("destroy_ah:1"));
        EXPECT_EQ(1u, log.count("fault text 'destroy_ah:1'")) << log.dump();
    }
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_ops_c("destroy_ah:1:EBUSY"));
    ah = uct_ib_glue->create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah);
    EXPECT_EQ(EBUSY, uct_ib_glue->destroy_ah(ah));
    EXPECT_EQ(0, uct_ib_glue->destroy_ah(ah));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd));
}

TEST_F(test_emu_faults, pointer_convention)
{
    struct ibv_pd *pd = uct_ib_glue->alloc_pd(m_ctx);
    struct ibv_ah_attr attr = peer_attr();
    struct ibv_ah *ah;

    ASSERT_NE(nullptr, pd);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", 2, ENOMEM));
    for (int i = 0; i < 2; ++i) {
        errno = 0;
        EXPECT_EQ(nullptr, uct_ib_glue->create_ah(pd, &attr));
        EXPECT_EQ(ENOMEM, errno);
    }
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
    EXPECT_EQ(0u, uct_ib_emu_counters().ah_created) << "nothing was created";

    ah = uct_ib_glue->create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah) << "the third call succeeds";
    EXPECT_EQ(0, uct_ib_glue->destroy_ah(ah));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd));
}

TEST_F(test_emu_faults, errno_convention)
{
    struct ibv_pd *pd = uct_ib_glue->alloc_pd(m_ctx);
    struct ibv_ah_attr attr = peer_attr();
    struct ibv_gid_entry entry;
    struct ibv_ah *ah;

    ASSERT_NE(nullptr, pd);
    ah = uct_ib_glue->create_ah(pd, &attr);
    ASSERT_NE(nullptr, ah);

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("destroy_ah", 1, EIO));
    EXPECT_EQ(EIO, uct_ib_glue->destroy_ah(ah));
    EXPECT_EQ(1u, uct_ib_emu_counters().ah_alive) << "a failed destroy keeps "
                                                     "the AH";
    EXPECT_EQ(0, uct_ib_glue->destroy_ah(ah));
    EXPECT_EQ(0u, uct_ib_emu_counters().ah_alive);

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op(UCT_IB_GLUE_OP_query_gid_ex, 1,
                                         EINVAL));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_gid_ex(m_ctx, 1, 0, &entry, 0));
    EXPECT_EQ(0, uct_ib_glue->query_gid_ex(m_ctx, 1, 0, &entry, 0));
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd));
}

TEST_F(test_emu_faults, minus_one_convention)
{
    struct ibv_device_attr attr;
    log_capture log;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("close_device", 1, EIO));
    EXPECT_EQ(UCS_ERR_IO_ERROR, uct_ib_glue_close_device(m_ctx));
    EXPECT_EQ(1u, log.count("ibv_close_device(mlx5_0) failed")) << log.dump();
    EXPECT_EQ(1u, uct_ib_glue_open_device_count()) << "still open";
    EXPECT_EQ(0, uct_ib_glue->query_device(m_ctx, &attr)) << "still usable";

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("close_device", 1, EBADF));
    errno = 0;
    EXPECT_EQ(-1, uct_ib_glue->close_device(m_ctx));
    EXPECT_EQ(EBADF, errno);
}

TEST_F(test_emu_faults, count_convention)
{
    struct ibv_cq *cq = uct_ib_glue->create_cq(m_ctx, 8, nullptr, nullptr, 0);
    struct ibv_wc wc;

    ASSERT_NE(nullptr, cq);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("poll_cq", 1, EIO));
    errno = 0;
    EXPECT_LT(uct_ib_glue->poll_cq(cq, 1, &wc), 0);
    EXPECT_EQ(EIO, errno);
    EXPECT_EQ(0, uct_ib_glue->poll_cq(cq, 1, &wc));
    EXPECT_EQ(0, uct_ib_glue->destroy_cq(cq));
}

TEST_F(test_emu_faults, bool_convention)
{
    struct ibv_device *dev = device("mlx5_1");
    struct ibv_context *ctx;
    int devx = -1;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("mlx5dv_is_supported", 1, ENODEV));
    EXPECT_FALSE(uct_ib_glue->mlx5dv_is_supported(dev));
    EXPECT_TRUE(uct_ib_glue->mlx5dv_is_supported(dev));

    /* not an mlx5 device: the library opens it without asking for DevX */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("mlx5dv_is_supported", 1, ENODEV));
    ctx = open("mlx5_1", true, &devx);
    ASSERT_NE(nullptr, ctx);
    EXPECT_EQ(0, devx);
}

TEST_F(test_emu_faults, open_device_failures)
{
    struct ibv_context *ctx = nullptr;
    struct ibv_device *dev  = device("mlx5_1");
    int devx                = -1;
    log_capture log;

    /* DevX refused: the plain context is the fallback */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("mlx5dv_open_device", 1,
                                         EOPNOTSUPP));
    ctx = open("mlx5_1", true, &devx);
    ASSERT_NE(nullptr, ctx);
    EXPECT_EQ(0, devx);

    /* both refused: an error naming the device */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("mlx5dv_open_device", 1, EPERM));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("open_device", 1, ENOSYS));
    ctx = nullptr;
    EXPECT_EQ(UCS_ERR_IO_ERROR,
              uct_ib_glue_open_device(dev, 1, &ctx, &devx));
    EXPECT_EQ(nullptr, ctx);
    EXPECT_EQ(1u, log.count("ibv_open_device(mlx5_1) failed")) << log.dump();
    EXPECT_EQ(2u, uct_ib_glue_open_device_count());

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("get_device_list", 1, ENOSYS));
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->get_device_list(nullptr));
    EXPECT_EQ(ENOSYS, errno) << "no kernel support";
}

TEST_F(test_emu_faults, op_fault_skips_the_firmware)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    out.set(prm::status, 0xee);

    /* an older kernel: a mapped errno and no mailbox */
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("devx_general_cmd", 1, EINVAL));
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()));
    EXPECT_EQ(0xeeu, out.get(prm::status)) << "the outbox is untouched";
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(prm::QUERY_HCA_CAP));
}


/* Firmware command faults */
class test_emu_cmd_faults : public test_emu_faults {
protected:
    void init() override
    {
        test_emu_faults::init();
        env_init(m_env, m_ctx);
    }

    void cleanup() override
    {
        env_cleanup(m_env);
        test_emu_faults::cleanup();
    }

    devx_env m_env;
};

TEST_F(test_emu_cmd_faults, general_cmd)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::QUERY_HCA_CAP, 2, 0x1,
                                          0x7e57));
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_general_cmd(m_ctx, in.data(),
                                                           in.size(),
                                                           out.data(),
                                                           out.size()));
        EXPECT_EQ(0x1u, out.get(prm::status));
        EXPECT_EQ(0x7e57u, out.get(prm::syndrome));
    }
    EXPECT_EQ(0, uct_ib_glue->devx_general_cmd(m_ctx, in.data(), in.size(),
                                               out.data(), out.size()));
    EXPECT_EQ(0u, out.get(prm::status));
    EXPECT_EQ(3u, uct_ib_emu_counters().cmd_count(prm::QUERY_HCA_CAP));
    EXPECT_EQ(2u, uct_ib_emu_counters().cmd_failed_count(prm::QUERY_HCA_CAP));
}

TEST_F(test_emu_cmd_faults, create_qp)
{
    prm_buf in = create_qp_cmd(m_env);
    prm_buf out(prm::HDR_BYTES);
    devx_qp qp;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::CREATE_QP, 1,
                                          prm::EXCEED_LIM, 0x51a7));
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(m_ctx, in.data(),
                                                    in.size(), out.data(),
                                                    out.size()));
    EXPECT_EQ(EREMOTEIO, errno);
    EXPECT_EQ(prm::EXCEED_LIM, out.get(prm::status));
    EXPECT_EQ(0x51a7u, out.get(prm::syndrome));
    EXPECT_EQ(0u, uct_ib_emu_counters().qp_count(prm::QP_RST));

    qp = create_qp(m_env, in);
    ASSERT_NE(nullptr, qp.obj);
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
}

TEST_F(test_emu_cmd_faults, modify_and_query)
{
    devx_qp qp      = create_qp(m_env);
    prm_buf to_init = rst2init_cmd(qp.qpn);
    prm_buf to_rtr  = init2rtr_roce_cmd(qp.qpn, 1, MAC_MLX5_1,
                                        ipv4_gid(198, 18, 0, 2), 3);
    prm_buf to_rts  = rtr2rts_cmd(qp.qpn);
    prm_buf query   = modify_cmd(prm::QUERY_QP, qp.qpn, prm::HDR_BYTES);
    prm_buf qout(prm::QP_CMD_BYTES);

    ASSERT_NE(nullptr, qp.obj);
    ASSERT_EQ(0, modify(qp, to_init));

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::INIT2RTR_QP, 1,
                                          prm::BAD_PARAM, 0x1d2b));
    expect_fw_failure(qp, to_rtr, prm::BAD_PARAM, 0x1d2b);
    ASSERT_EQ(0, modify(qp, to_rtr));

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::RTR2RTS_QP, 1,
                                          prm::BAD_RES_STATE, 0x2a2b));
    expect_fw_failure(qp, to_rts, prm::BAD_RES_STATE, 0x2a2b);
    ASSERT_EQ(0, modify(qp, to_rts));

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::QUERY_QP, 1, 0x1, 0x9));
    EXPECT_EQ(EREMOTEIO, uct_ib_glue->devx_obj_query(qp.obj, query.data(),
                                                     query.size(),
                                                     qout.data(),
                                                     qout.size()));
    EXPECT_EQ(0x9u, qout.get(prm::syndrome));
    EXPECT_EQ(0u, qout.get(prm::QPC + prm::qpc::state))
            << "a failed command returns no QPC";

    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_failed_count(prm::INIT2RTR_QP));
    EXPECT_EQ(1u, uct_ib_emu_counters().cmd_failed_count(prm::RTR2RTS_QP));
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
}

TEST_F(test_emu_cmd_faults, destroy_keeps_the_handle)
{
    devx_qp qp = create_qp(m_env);
    uct_ib_emu_qp_info_t info;

    ASSERT_NE(nullptr, qp.obj);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::DESTROY_QP, 1,
                                          prm::RESOURCE_BUSY, 0x44));
    EXPECT_EQ(EBUSY, uct_ib_glue->devx_obj_destroy(qp.obj))
            << "the kernel maps the status of a destroy";
    EXPECT_EQ(UCS_OK, uct_ib_emu_qp_info(qp.qpn, &info)) << "still there";
    EXPECT_EQ(0, uct_ib_glue->devx_obj_destroy(qp.obj));
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_qp_info(qp.qpn, &info));
}

TEST_F(test_emu_cmd_faults, umem_commands)
{
    std::vector<uint8_t> buf(4096);
    struct mlx5dv_devx_umem *umem;

    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::CREATE_UMEM, 1,
                                          prm::EXCEED_LIM, 0x1));
    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_umem_reg(m_ctx, buf.data(),
                                                  buf.size(),
                                                  IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(ENOMEM, errno);

    umem = uct_ib_glue->devx_umem_reg(m_ctx, buf.data(), buf.size(),
                                      IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, umem);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::DESTROY_UMEM, 1, 0x1, 0x2));
    EXPECT_EQ(EIO, uct_ib_glue->devx_umem_dereg(umem));
    EXPECT_EQ(0, uct_ib_glue->devx_umem_dereg(umem)) << "handle kept";
}

TEST_F(test_emu_cmd_faults, clear)
{
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(prm::QUERY_HCA_CAP, 5, 0x1, 0x1));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("alloc_pd", 5, ENOMEM));
    EXPECT_EQ(10u, uct_ib_emu_pending_faults());

    uct_ib_emu_clear_faults();
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
    EXPECT_EQ(0, uct_ib_glue->devx_general_cmd(m_ctx, in.data(), in.size(),
                                               out.data(), out.size()));
    struct ibv_pd *pd = uct_ib_glue->alloc_pd(m_ctx);
    ASSERT_NE(nullptr, pd);
    EXPECT_EQ(0, uct_ib_glue->dealloc_pd(pd));
}
