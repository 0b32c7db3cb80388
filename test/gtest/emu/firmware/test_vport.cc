/*
 * QUERY_HCA_VPORT_CONTEXT on the emulated device: an InfiniBand port's
 * PortInfo and the SLs its subnet routes adaptively, which UCX reads to
 * choose an SL (UCX_IB_AR_ENABLE), and the ooo_sl_mask capability that
 * says the context carries them; the refusals of other vports, ports that
 * do not exist and Ethernet ports.
 */
#include "emu/emu_test.h"

using namespace emu_test;


class test_emu_vport : public emu_fixture {
protected:
    /* QUERY_HCA_VPORT_CONTEXT of port_num: 0 or the errno */
    static int query(struct ibv_context *ctx, unsigned port_num,
                     prm_buf *out, bool other_vport = false)
    {
        prm_buf in(prm::HDR_BYTES);

        in.set(prm::opcode, prm::QUERY_HCA_VPORT_CONTEXT);
        in.set(prm::vport_port_num, port_num);
        in.set(prm::other_vport, other_vport);
        return uct_ib_glue->devx_general_cmd(ctx, in.data(), in.size(),
                                             out->data(), out->size());
    }

    static uint64_t get(const prm_buf &out, field f)
    {
        return out.get({prm::VPORT_CONTEXT + f.offset, f.width});
    }

    static uint64_t ooo_sl_cap(struct ibv_context *ctx)
    {
        prm_buf in(prm::HDR_BYTES), out(prm::HCA_CAP_OUT_BYTES);

        in.set(prm::opcode, prm::QUERY_HCA_CAP);
        in.set(prm::op_mod, 1); /* general, current */
        EXPECT_EQ(0, uct_ib_glue->devx_general_cmd(ctx, in.data(), in.size(),
                                                   out.data(), out.size()));
        return out.get({prm::CAPABILITY + prm::cap::ooo_sl_mask.offset,
                        prm::cap::ooo_sl_mask.width});
    }
};


TEST_F(test_emu_vport, infiniband_ports_answer_with_their_port_info)
{
    struct ibv_context *ctx2 = open("mlx5_2");
    struct ibv_context *ctx3 = open("mlx5_3");
    prm_buf out2(prm::VPORT_OUT_BYTES), out3(prm::VPORT_OUT_BYTES);

    ASSERT_NE(nullptr, ctx2);
    ASSERT_NE(nullptr, ctx3);
    EXPECT_EQ(1u, ooo_sl_cap(ctx2));
    EXPECT_EQ(1u, ooo_sl_cap(ctx3));

    ASSERT_EQ(0, query(ctx2, 1, &out2));
    ASSERT_EQ(0, query(ctx3, 1, &out3));
    EXPECT_EQ(0u, out3.get(prm::status));

    EXPECT_EQ(LID_MLX5_2, get(out2, prm::vport::lid));
    EXPECT_EQ(0u, get(out2, prm::vport::lmc));
    EXPECT_EQ(0u, get(out2, prm::vport::ooo_sl_mask)) << "no adaptive SL";
    EXPECT_EQ(LID_MLX5_3, get(out3, prm::vport::lid));
    EXPECT_EQ(1u, get(out3, prm::vport::lmc));
    EXPECT_EQ(0x2u, get(out3, prm::vport::ooo_sl_mask)) << "SL 1 adaptive";
    EXPECT_EQ(0x1u, get(out3, prm::vport::sm_lid));
    EXPECT_EQ(0x02c9000000000012ull, get(out3, prm::vport::port_guid));
    EXPECT_EQ(unsigned(IBV_PORT_ACTIVE), get(out3, prm::vport::port_state));
    EXPECT_EQ(unsigned(IBV_PORT_ACTIVE), get(out3, prm::vport::vport_state));

    /* an output that ends before the reserved tail, as UCX 1.13.1's
     * layout of the context does (32 bits short of the PRM's) */
    prm_buf ucx_out(prm::VPORT_OUT_BYTES - 4);
    ASSERT_EQ(0, query(ctx3, 1, &ucx_out));
    EXPECT_EQ(0x2u, get(ucx_out, prm::vport::ooo_sl_mask));

    /* port_num 0: the only port of a single-port function */
    prm_buf out0(prm::VPORT_OUT_BYTES);
    ASSERT_EQ(0, query(ctx3, 0, &out0));
    EXPECT_EQ(0x2u, get(out0, prm::vport::ooo_sl_mask));
}

TEST_F(test_emu_vport, a_port_down_says_so)
{
    uct_ib_emu_topology_t topo = uct_ib_emu_default_topology();

    topo.devices.at(2).ports.at(0).state = IBV_PORT_DOWN;
    ASSERT_EQ(UCS_OK, uct_ib_emu_set_topology(topo));

    struct ibv_context *ctx = open("mlx5_2");
    prm_buf out(prm::VPORT_OUT_BYTES);

    ASSERT_NE(nullptr, ctx);
    ASSERT_EQ(0, query(ctx, 1, &out));
    EXPECT_EQ(unsigned(IBV_PORT_DOWN), get(out, prm::vport::port_state));
}

TEST_F(test_emu_vport, refusals)
{
    struct ibv_context *eth = open("mlx5_0");
    struct ibv_context *ib  = open("mlx5_2");
    prm_buf out(prm::VPORT_OUT_BYTES), short_out(prm::HDR_BYTES);

    ASSERT_NE(nullptr, eth);
    ASSERT_NE(nullptr, ib);
    EXPECT_EQ(0u, ooo_sl_cap(eth)) << "no InfiniBand port";

    EXPECT_EQ(EREMOTEIO, query(eth, 1, &out));
    EXPECT_EQ(prm::BAD_PARAM, out.get(prm::status));
    EXPECT_EQ(UCT_IB_EMU_SYND_VPORT_NOT_IB, out.get(prm::syndrome));

    EXPECT_EQ(EREMOTEIO, query(ib, 2, &out));
    EXPECT_EQ(UCT_IB_EMU_SYND_VPORT_BAD_PORT, out.get(prm::syndrome));

    EXPECT_EQ(EREMOTEIO, query(ib, 1, &out, true));
    EXPECT_EQ(UCT_IB_EMU_SYND_VPORT_OTHER_VPORT, out.get(prm::syndrome));

    EXPECT_EQ(EREMOTEIO, query(ib, 1, &short_out));
    EXPECT_EQ(prm::BAD_OUTPUT_LEN, short_out.get(prm::status));

    EXPECT_EQ(4u, uct_ib_emu_counters().cmd_failed_count(
                          prm::QUERY_HCA_VPORT_CONTEXT))
            << "each refusal is counted";
}
