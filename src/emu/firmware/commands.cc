/*
 * The firmware executes a command: it is counted, an armed fault for its
 * opcode (uct_ib_emu_fail_cmd) replaces the execution, it goes to the one
 * handler of its opcode, and a failure fills the output header. Which
 * commands reach it, and through which DevX method, is the kernel's side
 * (frontend/devx.cc).
 */
#include <emu/firmware/devx.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/*
 * The firmware executes one command: it is counted, an armed fault for its
 * opcode replaces the execution, and a failure fills the output header.
 */
template <typename Handler>
fw_result fw_exec(emu_state &s, const context *ctx, uint16_t opcode,
                  mailbox *out, Handler &&handler)
{
    auto fault = s.cmd_faults.find(opcode);
    fw_result result;

    ++s.cmds[opcode];
    if ((fault != s.cmd_faults.end()) && (fault->second.skip > 0)) {
        --fault->second.skip;
        result = handler();
    } else if ((fault != s.cmd_faults.end()) && (fault->second.count > 0)) {
        --fault->second.count;
        result = {fault->second.status, fault->second.syndrome};
    } else {
        result = handler();
    }

    if (result.status != UCT_IB_EMU_FW_OK) {
        const char *what = uct_ib_emu_syndrome_str(result.syndrome);

        ++s.cmds_failed[opcode];
        uct_ib_emu_debug("%s: command 0x%x failed: status 0x%x syndrome 0x%x "
                         "(%s)", ctx->dev->name.c_str(), opcode,
                         result.status, result.syndrome,
                         (what != nullptr) ? what : "injected");
        if (out != nullptr) {
            out->clear();
            put<prm::mbox_out::status>(out->dw(), result.status);
            put<prm::mbox_out::syndrome>(out->dw(), result.syndrome);
        }
    }

    return result;
}

/* The command the kernel saved at creation to destroy an object */
uint16_t destroy_opcode(const devx_obj *obj)
{
    if (obj->rmp != nullptr) {
        return obj->rmp->xrq ? UCT_MLX5_CMD_OP_DESTROY_XRQ :
                               UCT_MLX5_CMD_OP_DESTROY_RMP;
    }
    if (obj->mkey != nullptr) {
        return UCT_MLX5_CMD_OP_DESTROY_MKEY;
    }
    return obj->qp->is_dct() ? UCT_MLX5_CMD_OP_DESTROY_DCT :
                               UCT_MLX5_CMD_OP_DESTROY_QP;
}

} // namespace


fw_result fw_general_cmd(emu_state &s, context *ctx, const mailbox &in,
                         mailbox &out)
{
    return fw_exec(s, ctx, in.opcode(), &out, [&] {
        switch (in.opcode()) {
        case UCT_MLX5_CMD_OP_QUERY_HCA_CAP:
            return query_hca_cap_cmd(ctx, in, out);
        case UCT_MLX5_CMD_OP_QUERY_HCA_VPORT_CONTEXT:
            return query_hca_vport_context_cmd(ctx, in, out);
        default:
            return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OPCODE);
        }
    });
}

fw_result fw_create_cmd(emu_state &s, context *ctx, const mailbox &in,
                        mailbox &out, qp **qp_p, srq **rmp_p, mkey **mkey_p)
{
    return fw_exec(s, ctx, in.opcode(), &out, [&] {
        switch (in.opcode()) {
        case UCT_MLX5_CMD_OP_CREATE_QP:
            return qp_create_cmd(ctx, in, out, qp_p);
        case UCT_MLX5_CMD_OP_CREATE_RMP:
            return rmp_create_cmd(ctx, in, out, rmp_p);
        case UCT_MLX5_CMD_OP_CREATE_XRQ:
            return xrq_create_cmd(ctx, in, out, rmp_p);
        case UCT_MLX5_CMD_OP_CREATE_MKEY:
            return mkey_create_cmd(ctx, in, out, mkey_p);
        case UCT_MLX5_CMD_OP_CREATE_DCT:
            return dct_create_cmd(ctx, in, out, qp_p);
        default:
            return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OPCODE); /* not modelled */
        }
    });
}

fw_result fw_object_cmd(emu_state &s, const context *ctx, qp *q, srq *rmp,
                        bool modify, const mailbox &in, mailbox &out)
{
    return fw_exec(s, ctx, in.opcode(), &out, [&] {
        if (rmp != nullptr) {
            return modify ? rmp_modify_cmd(rmp, in) :
                            rmp_query_cmd(rmp, in, out);
        }
        if (q->is_dct()) {
            return modify ? dct_drain_cmd(q, in, out) :
                            dct_query_cmd(q, in, out);
        }
        return modify ? qp_modify_cmd(q, in) : qp_query_cmd(q, in, out);
    });
}

fw_result fw_destroy_cmd(emu_state &s, const devx_obj *obj)
{
    return fw_exec(s, obj->ctx, destroy_opcode(obj), nullptr, [obj] {
        if (obj->rmp == nullptr) {
            return FW_OK;
        }
        return obj->rmp->xrq ? xrq_destroy_cmd(obj->rmp) :
                               rmp_destroy_cmd(obj->rmp);
    });
}

fw_result fw_umem_create_cmd(emu_state &s, const context *ctx)
{
    return fw_exec(s, ctx, CMD_OP_CREATE_UMEM, nullptr, [] { return FW_OK; });
}

fw_result fw_umem_destroy_cmd(emu_state &s, const umem *u)
{
    return fw_exec(s, u->ctx, CMD_OP_DESTROY_UMEM, nullptr, [u] {
        return (u->refs > 0) ? fw_fail(UCT_IB_EMU_SYND_DESTROY_UMEM_IN_USE) :
                               FW_OK;
    });
}

} // namespace uct_ib_emu
