/*
 * QUERY_HCA_VPORT_CONTEXT: an InfiniBand port as the function's own vport
 * sees it, the PortInfo a subnet manager gave it (state, LID and LMC, SM)
 * and the SLs the subnet routes adaptively (ooo_sl_mask), which UCX reads
 * to choose an SL with or without adaptive routing.
 */
#include <emu/firmware/devx.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/* PortInfo's PortPhysicalState */
constexpr unsigned PHYS_STATE_POLLING = 2;
constexpr unsigned PHYS_STATE_LINK_UP = 5;

/* The subnet timeout of the emulated subnet manager (4.096 us * 2^18) */
constexpr unsigned SUBNET_TIMEOUT = 18;

/* PortInfo's CapabilityMask bits an SM-managed CA port has: IsTrapSupported
 * (bit 5), IsAutomaticMigrationSupported (9), IsSLMappingSupported (10) */
constexpr uint32_t CAP_MASK1 = (1u << 5) | (1u << 9) | (1u << 10);

template <typename F>
using vport_ctx = prm::at<prm::query_hca_vport_context_out::hca_vport_context,
                          F>;

/* The output must reach the last field the PRM defines; what follows is
 * reserved, and UCX 1.13.1's layout of the context ends 32 bits before
 * the PRM's, so an output that stops there is answered in full */
constexpr size_t OUT_MIN_BYTES =
        (vport_ctx<prm::hca_vport_context::pkey_violation_counter>::offset +
         prm::hca_vport_context::pkey_violation_counter::width) / 8;

} // namespace

fw_result query_hca_vport_context_cmd(const context *ctx, const mailbox &in,
                                      mailbox &out)
{
    namespace v = prm::hca_vport_context;
    const device *dev = ctx->dev;
    unsigned port_num;
    const port *p;

    if (!in.fits<prm::query_hca_vport_context_in::layout>()) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
    }
    if (out.size() < OUT_MIN_BYTES) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_OUTPUT_LEN);
    }
    if (in.op_mod() != 0) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OP_MOD);
    }

    if (uct_mlx5_prm_get<prm::query_hca_vport_context_in::other_vport>(
                in.dw())) {
        return fw_fail(UCT_IB_EMU_SYND_VPORT_OTHER_VPORT);
    }

    /* port_num 0 is the port of a single-port function */
    port_num = uct_mlx5_prm_get<prm::query_hca_vport_context_in::port_num>(
            in.dw());
    if ((port_num == 0) && (dev->ports.size() == 1)) {
        port_num = 1;
    }
    p = dev->get_port(port_num);
    if (p == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_VPORT_BAD_PORT);
    }
    if (p->is_eth()) {
        return fw_fail(UCT_IB_EMU_SYND_VPORT_NOT_IB);
    }

    mailbox full(prm::query_hca_vport_context_out::layout::size_bits / 8);
    uint32_t *o = full.dw();
    const bool active = (p->state == IBV_PORT_ACTIVE);

    put<vport_ctx<v::has_smi>>(o, 1);
    put<vport_ctx<v::port_physical_state>>(
            o, active ? PHYS_STATE_LINK_UP : PHYS_STATE_POLLING);
    put<vport_ctx<v::port_state>>(o, p->state);
    put<vport_ctx<v::vport_state>>(o, p->state);
    put<vport_ctx<v::system_image_guid>>(o, dev->node_guid);
    put<vport_ctx<v::port_guid>>(o, p->port_guid);
    put<vport_ctx<v::node_guid>>(o, dev->node_guid);
    put<vport_ctx<v::cap_mask1>>(o, CAP_MASK1);
    put<vport_ctx<v::ooo_sl_mask>>(o, p->ooo_sl_mask);
    put<vport_ctx<v::lid>>(o, p->lid);
    put<vport_ctx<v::lmc>>(o, p->lmc);
    put<vport_ctx<v::subnet_timeout>>(o, SUBNET_TIMEOUT);
    put<vport_ctx<v::sm_lid>>(o, p->sm_lid);
    full.copy_to(out.dw(), out.size());
    return FW_OK;
}

} // namespace uct_ib_emu
