/*
 * The emulated device seen through the glue table: device list, contexts,
 * device/port/GID queries, topologies, and DevX availability.
 */
#include "emu/emu_test.h"

using namespace emu_test;


class test_emu_device : public emu_fixture {
};

TEST_F(test_emu_device, device_list)
{
    int num                  = -1;
    struct ibv_device **list = uct_ib_glue->get_device_list(&num);
    std::vector<std::string> names;

    ASSERT_NE(nullptr, list);
    ASSERT_EQ(4, num);
    for (int i = 0; i < num; ++i) {
        ASSERT_NE(nullptr, list[i]);
        names.push_back(uct_ib_glue->get_device_name(list[i]));
        EXPECT_TRUE(uct_ib_glue->mlx5dv_is_supported(list[i]));
    }
    EXPECT_EQ(nullptr, list[num]) << "the list is NULL-terminated";
    EXPECT_EQ((std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2",
                                        "mlx5_3"}), names);
    uct_ib_glue->free_device_list(list);
}

TEST_F(test_emu_device, empty_topology_gives_empty_list)
{
    int num = -1;
    struct ibv_device **list;

    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(uct_ib_emu_topology_t()));

    list = uct_ib_glue->get_device_list(&num);
    ASSERT_NE(nullptr, list) << "no device is an empty list, not NULL";
    EXPECT_EQ(0, num);
    EXPECT_EQ(nullptr, list[0]);
    uct_ib_glue->free_device_list(list);
}

TEST_F(test_emu_device, query_device)
{
    struct ibv_context *eth = open("mlx5_0");
    struct ibv_context *ib  = open("mlx5_2");
    struct ibv_device_attr attr;

    ASSERT_EQ(0, uct_ib_glue->query_device(eth, &attr));
    EXPECT_EQ(0x02c9u, attr.vendor_id);
    EXPECT_EQ(4125u, attr.vendor_part_id);
    EXPECT_EQ(1, attr.phys_port_cnt);
    EXPECT_NE(0u, attr.node_guid);
    EXPECT_NE(0u, strlen(attr.fw_ver));
    EXPECT_EQ(1 << 18, attr.max_qp);
    EXPECT_EQ(1 << 15, attr.max_qp_wr);
    EXPECT_EQ(16, attr.max_qp_rd_atom);
    EXPECT_EQ((1 << 22) - 1, attr.max_cqe);
    EXPECT_EQ(IBV_ATOMIC_HCA, attr.atomic_cap);
    /* XRC and memory windows (type 1 and 2B, as mlx5) are modelled;
     * what is not (multicast, type 2A windows) is not advertised */
    EXPECT_EQ(uint64_t(IBV_DEVICE_XRC | IBV_DEVICE_MEM_WINDOW |
                       IBV_DEVICE_MEM_WINDOW_TYPE_2B),
              attr.device_cap_flags & (IBV_DEVICE_XRC |
                                       IBV_DEVICE_MEM_WINDOW |
                                       IBV_DEVICE_MEM_WINDOW_TYPE_2A |
                                       IBV_DEVICE_MEM_WINDOW_TYPE_2B));
    EXPECT_LT(0, attr.max_mw);
    EXPECT_EQ(0, attr.max_mcast_grp);

    ASSERT_EQ(0, uct_ib_glue->query_device(ib, &attr));
    EXPECT_EQ(0x02c9u, attr.vendor_id);
    EXPECT_EQ(4123u, attr.vendor_part_id);
    EXPECT_EQ(be64toh(attr.node_guid), 0x02c9000000000000ull | LID_MLX5_2)
            << "an IB node GUID is its first port's GUID";
}

TEST_F(test_emu_device, query_port_ethernet)
{
    struct ibv_context *ctx = open("mlx5_0");
    struct ibv_port_attr attr;

    ASSERT_EQ(0, uct_ib_glue->query_port(ctx, 1, &attr));
    EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, attr.link_layer);
    EXPECT_EQ(IBV_PORT_ACTIVE, attr.state);
    EXPECT_EQ(IBV_MTU_1024, attr.active_mtu);
    EXPECT_EQ(IBV_MTU_4096, attr.max_mtu);
    EXPECT_EQ(256, attr.gid_tbl_len);
    EXPECT_EQ(0, attr.lid);
    EXPECT_TRUE(attr.flags & IBV_QPF_GRH_REQUIRED);

    EXPECT_EQ(EINVAL, uct_ib_glue->query_port(ctx, 0, &attr));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_port(ctx, 2, &attr));
}

TEST_F(test_emu_device, query_port_infiniband)
{
    struct ibv_context *ctx = open("mlx5_3");
    struct ibv_port_attr attr;

    ASSERT_EQ(0, uct_ib_glue->query_port(ctx, 1, &attr));
    EXPECT_EQ(IBV_LINK_LAYER_INFINIBAND, attr.link_layer);
    EXPECT_EQ(IBV_PORT_ACTIVE, attr.state);
    EXPECT_EQ(IBV_MTU_4096, attr.active_mtu);
    EXPECT_EQ(LID_MLX5_3, attr.lid);
    EXPECT_EQ(1, attr.lmc) << "two LIDs, for two paths";
    EXPECT_EQ(1, attr.sm_lid);
    EXPECT_EQ(128, attr.gid_tbl_len);
    EXPECT_FALSE(attr.flags & IBV_QPF_GRH_REQUIRED);
}

TEST_F(test_emu_device, gid_table_ethernet)
{
    struct ibv_context *ctx = open("mlx5_1");
    const struct {
        uint32_t          index;
        union ibv_gid     gid;
        enum ibv_gid_type type;
    } expected[] = {
        {0, link_local_gid(MAC_MLX5_1), IBV_GID_TYPE_ROCE_V1},
        {1, link_local_gid(MAC_MLX5_1), IBV_GID_TYPE_ROCE_V2},
        {2, ipv4_gid(198, 18, 0, 2),    IBV_GID_TYPE_ROCE_V1},
        {3, ipv4_gid(198, 18, 0, 2),    IBV_GID_TYPE_ROCE_V2}
    };
    struct ibv_gid_entry entry;

    for (const auto &e : expected) {
        SCOPED_TRACE("gid index " + std::to_string(e.index));
        memset(&entry, 0xff, sizeof(entry));
        ASSERT_EQ(0, uct_ib_glue->query_gid_ex(ctx, 1, e.index, &entry, 0));
        EXPECT_EQ(gid_hex(e.gid.raw), gid_hex(entry.gid.raw));
        EXPECT_EQ(e.index, entry.gid_index);
        EXPECT_EQ(1u, entry.port_num);
        EXPECT_EQ(uint32_t(e.type), entry.gid_type);
        EXPECT_NE(0u, entry.ndev_ifindex);
    }

    EXPECT_EQ(ENODATA, uct_ib_glue->query_gid_ex(ctx, 1, 4, &entry, 0));
    EXPECT_EQ(ENODATA, uct_ib_glue->query_gid_ex(ctx, 1, 255, &entry, 0));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_gid_ex(ctx, 1, 256, &entry, 0));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_gid_ex(ctx, 0, 0, &entry, 0));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_gid_ex(ctx, 2, 0, &entry, 0));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_gid_ex(ctx, 1, 0, &entry, 1))
            << "flags must be 0";
}

TEST_F(test_emu_device, gid_table_infiniband)
{
    struct ibv_context *ctx = open("mlx5_2");
    union ibv_gid expected  = make_gid({0xfe, 0x80, 0, 0, 0, 0, 0, 0,
                                        0x02, 0xc9, 0, 0, 0, 0, 0,
                                        LID_MLX5_2});
    struct ibv_gid_entry entry;

    ASSERT_EQ(0, uct_ib_glue->query_gid_ex(ctx, 1, 0, &entry, 0));
    EXPECT_EQ(gid_hex(expected.raw), gid_hex(entry.gid.raw));
    EXPECT_EQ(uint32_t(IBV_GID_TYPE_IB), entry.gid_type);
    EXPECT_EQ(0u, entry.ndev_ifindex);
    EXPECT_EQ(ENODATA, uct_ib_glue->query_gid_ex(ctx, 1, 1, &entry, 0));
    EXPECT_EQ(EINVAL, uct_ib_glue->query_gid_ex(ctx, 1, 128, &entry, 0));
}

TEST_F(test_emu_device, roce_v2_only_port)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    struct ibv_gid_entry entry;
    struct ibv_context *ctx;

    topo.devices[0].ports[0].gid_types = UCT_IB_EMU_GID_ROCE_V2;
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));

    ctx = open("mlx5_0");
    EXPECT_EQ(ENODATA, uct_ib_glue->query_gid_ex(ctx, 1, 0, &entry, 0));
    EXPECT_EQ(ENODATA, uct_ib_glue->query_gid_ex(ctx, 1, 2, &entry, 0));
    ASSERT_EQ(0, uct_ib_glue->query_gid_ex(ctx, 1, 1, &entry, 0));
    EXPECT_EQ(uint32_t(IBV_GID_TYPE_ROCE_V2), entry.gid_type);
    ASSERT_EQ(0, uct_ib_glue->query_gid_ex(ctx, 1, 3, &entry, 0));
    EXPECT_EQ(gid_hex(ipv4_gid(198, 18, 0, 1).raw), gid_hex(entry.gid.raw));
}

TEST_F(test_emu_device, custom_topology)
{
    uct_ib_emu_topology_t topo;
    uct_ib_emu_device_spec_t dev;
    uct_ib_emu_port_spec_t port;
    struct ibv_port_attr attr;
    struct ibv_context *ctx;

    port.link_layer    = IBV_LINK_LAYER_INFINIBAND;
    port.active_mtu    = IBV_MTU_2048;
    port.lid           = 0x42;
    port.sm_lid        = 0x7;
    port.fabric        = "subnet-a";
    dev.name           = "mlx5_7";
    dev.vendor_part_id = 4129;
    dev.ports          = {port, port};
    dev.ports[1].lid   = 0x43;
    topo.devices       = {dev};
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));

    ctx = open("mlx5_7");
    ASSERT_EQ(0, uct_ib_glue->query_port(ctx, 2, &attr));
    EXPECT_EQ(0x43, attr.lid);
    EXPECT_EQ(0x7, attr.sm_lid);
    EXPECT_EQ(IBV_MTU_2048, attr.active_mtu);
    EXPECT_EQ(EINVAL, uct_ib_glue->query_port(ctx, 3, &attr));
}

TEST_F(test_emu_device, inconsistent_topologies_are_refused)
{
    uct_ib_emu_topology_t base = uct_ib_emu_default_topology();
    std::vector<uct_ib_emu_topology_t> bad(10, base);
    log_capture log;

    bad[0].devices[1].name = "mlx5_0";                       /* name twice */
    bad[1].devices[0].ports.push_back(base.devices[2].ports[0]); /* mixed */
    bad[2].devices[0].ports[0].active_mtu = IBV_MTU_4096;
    bad[2].devices[0].ports[0].max_mtu    = IBV_MTU_2048;
    bad[3].devices[3].ports[0].lid = LID_MLX5_2;             /* LID twice */
    bad[3].devices[3].ports[0].lmc = 0;
    bad[4].devices[1].ports[0].mac = MAC_MLX5_0;             /* MAC twice */
    bad[5].devices[0].ports.clear();
    bad[6].devices[3].ports[0].lmc = 8;                      /* 3 bits */
    bad[7].devices[3].ports[0].lid = LID_MLX5_3 + 1;         /* unaligned */
    bad[8].devices[2].ports[0].lid = LID_MLX5_3 + 1;         /* in a range */
    bad[9].devices[0].ports[0].fabric = std::string(32, 's'); /* too long */

    for (size_t i = 0; i < bad.size(); ++i) {
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_set_topology(bad[i]))
                << "topology " << i;
    }
    EXPECT_EQ(bad.size(), log.count("emu:")) << log.dump();

    /* the valid topology is still in place */
    EXPECT_NE(nullptr, device("mlx5_3"));
}

TEST_F(test_emu_device, topology_change_refused_while_in_use)
{
    int num;
    struct ibv_device **list = uct_ib_glue->get_device_list(&num);
    struct ibv_context *ctx;
    log_capture log;

    ASSERT_NE(nullptr, list);
    EXPECT_EQ(UCS_ERR_BUSY, uct_ib_emu_reset()) << "a device list is out";
    uct_ib_glue->free_device_list(list);

    ctx = open("mlx5_1");
    EXPECT_EQ(UCS_ERR_BUSY, uct_ib_emu_reset()) << "a device is open";
    close(ctx);
    EXPECT_EQ(UCS_OK, uct_ib_emu_reset());
    EXPECT_EQ(2u, log.count("cannot change the topology")) << log.dump();
}

/* A reset disarms faults of every kind, as clear_faults does */
TEST_F(test_emu_device, reset_disarms_every_kind_of_fault)
{
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_op("create_ah", 1, EIO));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(0x500 /* CREATE_QP */, 1, 0x3, 0x1));
    ASSERT_EQ(UCS_OK, uct_ib_emu_fail_wr(1, IBV_WC_GENERAL_ERR, 0));
    EXPECT_EQ(3u, uct_ib_emu_pending_faults());

    ASSERT_EQ(UCS_OK, uct_ib_emu_reset());
    EXPECT_EQ(0u, uct_ib_emu_pending_faults());
}

TEST_F(test_emu_device, open_with_and_without_devx)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    struct mlx5dv_context_attr dv_attr = {};
    int devx                   = -1;

    topo.devices[1].devx = false;
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));

    EXPECT_NE(nullptr, open("mlx5_0", true, &devx));
    EXPECT_EQ(1, devx);
    EXPECT_NE(nullptr, open("mlx5_1", true, &devx));
    EXPECT_EQ(0, devx) << "falls back to a plain context";
    EXPECT_NE(nullptr, open("mlx5_0", false, &devx));
    EXPECT_EQ(0, devx);
    EXPECT_EQ(3u, uct_ib_glue_open_device_count());

    /* mlx5dv_open_device itself: DevX has no fallback; flags are checked */
    dv_attr.flags = MLX5DV_CONTEXT_FLAGS_DEVX;
    errno         = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_open_device(device("mlx5_1"),
                                                       &dv_attr));
    EXPECT_EQ(EOPNOTSUPP, errno);

    dv_attr.flags = 0x80;
    errno         = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_open_device(device("mlx5_0"),
                                                       &dv_attr));
    EXPECT_EQ(EINVAL, errno);

    dv_attr           = {};
    dv_attr.comp_mask = 1;
    errno             = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->mlx5dv_open_device(device("mlx5_0"),
                                                       &dv_attr));
    EXPECT_EQ(EINVAL, errno);
}

TEST_F(test_emu_device, devx_refused_on_non_devx_context)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();
    prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);
    std::vector<uint8_t> buf(4096);
    struct ibv_context *ctx;
    uint32_t eqn;
    int devx;

    topo.devices[0].devx = false;
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));
    ctx = open("mlx5_0", true, &devx);
    ASSERT_EQ(0, devx);

    in.set(prm::opcode, prm::QUERY_HCA_CAP);
    in.set(prm::op_mod, 1);
    EXPECT_EQ(EOPNOTSUPP, uct_ib_glue->devx_general_cmd(ctx, in.data(),
                                                        in.size(), out.data(),
                                                        out.size()));

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_obj_create(ctx, in.data(), in.size(),
                                                    out.data(), out.size()));
    EXPECT_EQ(EOPNOTSUPP, errno);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_umem_reg(ctx, buf.data(), buf.size(),
                                                  IBV_ACCESS_LOCAL_WRITE));
    EXPECT_EQ(EOPNOTSUPP, errno);

    errno = 0;
    EXPECT_EQ(nullptr, uct_ib_glue->devx_alloc_uar(ctx,
                                                   MLX5DV_UAR_ALLOC_TYPE_BF));
    EXPECT_EQ(EOPNOTSUPP, errno);

    EXPECT_EQ(EOPNOTSUPP, uct_ib_glue->devx_query_eqn(ctx, 0, &eqn));
    EXPECT_EQ(0u, uct_ib_emu_counters().cmd_count(prm::QUERY_HCA_CAP))
            << "nothing reached the firmware";
}

TEST_F(test_emu_device, mlx5dv_query_device)
{
    struct ibv_context *ctx = open("mlx5_0");
    struct mlx5dv_context dv;

    memset(&dv, 0xff, sizeof(dv));
    dv.comp_mask = MLX5DV_CONTEXT_MASK_STRIDING_RQ;
    ASSERT_EQ(0, uct_ib_glue->mlx5dv_query_device(ctx, &dv));
    EXPECT_TRUE(dv.flags & MLX5DV_CONTEXT_FLAGS_CQE_V1);
    EXPECT_EQ(0u, dv.comp_mask) << "extended capabilities are not claimed";
}

TEST_F(test_emu_device, query_eqn)
{
    struct ibv_context *ctx = open("mlx5_0");
    uint32_t eqn0 = 0, eqn1 = 0;

    ASSERT_EQ(0, uct_ib_glue->devx_query_eqn(ctx, 0, &eqn0));
    ASSERT_EQ(0, uct_ib_glue->devx_query_eqn(ctx, 1, &eqn1));
    EXPECT_NE(eqn0, eqn1);
    EXPECT_EQ(EINVAL, uct_ib_glue->devx_query_eqn(ctx, ctx->num_comp_vectors,
                                                  &eqn0));
}

TEST_F(test_emu_device, close_reclaims_leftovers)
{
    struct ibv_context *ctx = open("mlx5_0");
    struct ibv_pd *pd       = uct_ib_glue->alloc_pd(ctx);
    struct ibv_cq *cq       = uct_ib_glue->create_cq(ctx, 16, nullptr,
                                                     nullptr, 0);
    std::vector<uint8_t> buf(64);
    struct ibv_mr *mr;

    ASSERT_NE(nullptr, pd);
    ASSERT_NE(nullptr, cq);
    mr = uct_ib_glue->reg_mr(pd, buf.data(), buf.size(),
                             IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(nullptr, mr);

    /* Like the kernel closing the file: it succeeds and frees everything */
    close(ctx);
    EXPECT_EQ(3u, uct_ib_emu_counters().objects_reclaimed);
    uct_ib_emu_counters_reset();
}

TEST_F(test_emu_device, stale_handles_are_rejected)
{
    struct ibv_context *ctx = open("mlx5_0");
    struct ibv_pd *pd       = uct_ib_glue->alloc_pd(ctx);

    ASSERT_NE(nullptr, pd);
    ASSERT_EQ(0, uct_ib_glue->dealloc_pd(pd));
    EXPECT_EQ(EINVAL, uct_ib_glue->dealloc_pd(pd)) << "double free";
}

TEST_F(test_emu_device, fabric_controls)
{
    const uct_ib_emu_mac_t mac   = {0x02, 0xc9, 0x00, 0x00, 0x0c, 0x01};
    const uct_ib_emu_mac_t mcast = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
    struct ibv_context *ctx;

    EXPECT_EQ(UCS_OK, uct_ib_emu_port_set_drop("mlx5_0", 1, true, false));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ib_emu_port_set_drop("mlx5_2", 1, true, false))
            << "InfiniBand ports carry no RoCE";
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_port_set_drop("mlx5_0", 2, true,
                                                        true));
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_port_set_drop("mlx5_9", 1, true,
                                                        true));

    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              uct_ib_emu_port_set_mac("mlx5_0", 1, mcast));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_emu_port_set_mac("mlx5_3", 1, mac));
    EXPECT_EQ(UCS_ERR_NO_ELEM, uct_ib_emu_port_set_mac("mlx5_0", 0, mac));

    /* a new MAC keeps the port's addresses: GIDs are configured on it */
    ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac("mlx5_0", 1, mac));
    ctx = open("mlx5_0");
    EXPECT_EQ(gid_hex(link_local_gid(MAC_MLX5_0).raw),
              gid_hex(gid_of(ctx, 1, 0).raw));
}
