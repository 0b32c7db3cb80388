/*
 * DevX DCTs as the firmware executes them: CREATE_DCT, DRAIN_DCT,
 * QUERY_DCT and DESTROY_DCT. A DCT is the responder of the DC transport: it
 * has a number in the QP number space, an access key every DC request must
 * carry, a PD, a receive CQ and a shared receive queue (SRQ, RMP or XRQ),
 * and is active from its creation (no state transitions). The device keeps
 * it as a qp with st QP_ST_DCT (model.h); what reaches it is executed on a
 * stream per DCI (engine/dc.cc). DC tag matching (offload_type) is not
 * modelled, as cmd_hca_cap.rndv_offload_dc says.
 */
#include <emu/firmware/devx.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/* The largest atomic_mode: as for QPs, atomics up to 8 bytes */
constexpr unsigned ATOMIC_MODE_MAX = 3;

template <typename F>
uint64_t get(const uint32_t *buf)
{
    return uct_mlx5_prm_get<F>(buf);
}

size_t count_dcts(const device *dev)
{
    size_t n = 0;

    for (const auto &entry : dev->qps) {
        n += entry.second->is_dct();
    }
    return n;
}

bool cs_res_valid(unsigned cs_res)
{
    return (cs_res == UCT_MLX5_QPC_CS_RES_DISABLE) ||
           (cs_res == UCT_MLX5_QPC_CS_RES_UP_TO_32B) ||
           (cs_res == UCT_MLX5_QPC_CS_RES_UP_TO_64B);
}

/* The port-dependent fields of a DCT context */
fw_result check_port_fields(const device *dev, const uint32_t *dctc,
                            const port **port_p)
{
    const port *p = dev->get_port(get<prm::dctc::port>(dctc));
    unsigned mtu  = get<prm::dctc::mtu>(dctc);

    if (p == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_PORT);
    }
    if ((mtu < UCT_MLX5_MTU_256) || (mtu > UCT_MLX5_MTU_4096) ||
        (mtu > static_cast<unsigned>(p->max_mtu))) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_MTU);
    }
    if ((p->is_eth() || get<prm::dctc::my_addr_index>(dctc) != 0) &&
        (p->gid(get<prm::dctc::my_addr_index>(dctc)) == nullptr)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_ADDR_INDEX);
    }
    if (get<prm::dctc::pkey_index>(dctc) >= p->pkey_tbl_len) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_PKEY_INDEX);
    }

    *port_p = p;
    return FW_OK;
}

} // namespace


fw_result dct_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         qp **dct_p)
{
    device *dev = ctx->dev;
    const uint32_t *dctc;
    std::unique_ptr<qp> q;
    const port *p = nullptr;
    qp_spec spec;
    fw_result result;
    qp *dct;

    result = check_mailboxes<prm::create_dct_in::layout,
                             prm::create_dct_out::layout>(in, out);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    dctc         = sub<prm::create_dct_in::dct_context_entry>(in.dw());
    spec.st      = QP_ST_DCT;
    spec.devx    = true;
    spec.no_sq   = 1;
    spec.rq_type = 1; /* an SRQ */
    spec.pd      = lookup(dev->pds, get<prm::dctc::pd>(dctc), ctx);
    if (spec.pd == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_PD);
    }
    spec.recv_cq = lookup(dev->cqs, get<prm::dctc::cqn>(dctc), ctx);
    if (spec.recv_cq == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_CQ);
    }
    spec.srq = lookup(dev->srqs, get<prm::dctc::srqn_xrqn>(dctc), ctx);
    if (spec.srq == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_SRQ);
    }
    if (get<prm::dctc::offload_type>(dctc) != 0) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_OFFLOAD);
    }
    result = check_port_fields(dev, dctc, &p);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }
    if (get<prm::dctc::atomic_mode>(dctc) > ATOMIC_MODE_MAX) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_ATOMIC_MODE);
    }
    if (!cs_res_valid(get<prm::dctc::cs_res>(dctc))) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_BAD_CS_RES);
    }
    if (count_dcts(dev) >= (1u << LOG_MAX_DCT)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_DCT_LIMIT);
    }

    q = std::make_unique<qp>(ctx);
    q->user_index          = get<prm::dctc::user_index>(dctc);
    q->cs_res              = get<prm::dctc::cs_res>(dctc);
    q->dc_key              = get<prm::dctc::dc_access_key>(dctc);
    q->rre                 = get<prm::dctc::rre>(dctc);
    q->rwe                 = get<prm::dctc::rwe>(dctc);
    q->rae                 = get<prm::dctc::rae>(dctc);
    q->atomic_mode         = get<prm::dctc::atomic_mode>(dctc);
    q->min_rnr_nak         = get<prm::dctc::min_rnr_nak>(dctc);
    q->mtu                 = get<prm::dctc::mtu>(dctc);
    q->log_msg_max         = LOG_MAX_MSG;
    q->log_rra_max         = LOG_MAX_RA_DC;
    q->counter_set_id      = get<prm::dctc::counter_set_id>(dctc);
    q->port                = p->num;
    q->path.vhca_port_num  = p->num;
    q->path.pkey_index     = get<prm::dctc::pkey_index>(dctc);
    q->path.src_addr_index = get<prm::dctc::my_addr_index>(dctc);
    q->path.hop_limit      = get<prm::dctc::hop_limit>(dctc);
    q->path.tclass         = get<prm::dctc::tclass>(dctc);
    q->path.flow_label     = get<prm::dctc::flow_label>(dctc);
    q->path.dscp           = get<prm::dctc::dscp>(dctc);
    q->path.eth_prio       = get<prm::dctc::eth_prio>(dctc);
    dct = qp_install(std::move(q), spec);
    /* active from its creation: the engine takes its requests */
    dct->state     = UCT_MLX5_QP_STATE_RTR;
    dct->dct_state = UCT_MLX5_DCT_STATE_ACTIVE;

    put<prm::create_dct_out::dctn>(out.dw(), dct->qpn);
    uct_ib_emu_debug("%s: created DevX dct 0x%x on port %u: srq 0x%x, cq "
                     "0x%x, key 0x%llx", dev->name.c_str(), dct->qpn,
                     dct->port, dct->srq->srqn, dct->recv_cq->cqn,
                     static_cast<unsigned long long>(dct->dc_key));
    *dct_p = dct;
    return FW_OK;
}

uint32_t dct_cmd_dctn(const mailbox &in)
{
    return static_cast<uint32_t>(get<prm::destroy_dct_in::dctn>(in.dw()));
}

fw_result dct_drain_cmd(qp *dct, const mailbox &in, mailbox &out)
{
    fw_result result = check_mailboxes<prm::destroy_dct_in::layout,
                                       prm::mbox_out::layout>(in, out);

    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }
    if (dct->dct_state != UCT_MLX5_DCT_STATE_ACTIVE) {
        return fw_fail(UCT_IB_EMU_SYND_DRAIN_DCT_BAD_STATE);
    }

    /* nothing is kept in flight past a request's execution: drained at
     * once, and nothing more is taken */
    dct->dct_state = UCT_MLX5_DCT_STATE_DRAINED;
    dct->state     = UCT_MLX5_QP_STATE_ERR;
    dct->dc_streams.clear();
    return FW_OK;
}

fw_result dct_query_cmd(const qp *dct, const mailbox &in, mailbox &out)
{
    uint32_t *dctc;
    fw_result result = query_output<prm::destroy_dct_in::layout,
                                    prm::query_dct_out::layout,
                                    prm::query_dct_out::dct_context_entry>(
                               in, out, &dctc);

    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    put<prm::dctc::state>(dctc, dct->dct_state);
    put<prm::dctc::user_index>(dctc, dct->user_index);
    put<prm::dctc::cqn>(dctc, dct->recv_cq->cqn);
    put<prm::dctc::atomic_mode>(dctc, dct->atomic_mode);
    put<prm::dctc::rre>(dctc, dct->rre);
    put<prm::dctc::rwe>(dctc, dct->rwe);
    put<prm::dctc::rae>(dctc, dct->rae);
    put<prm::dctc::cs_res>(dctc, dct->cs_res);
    put<prm::dctc::min_rnr_nak>(dctc, dct->min_rnr_nak);
    put<prm::dctc::srqn_xrqn>(dctc, dct->srq->srqn);
    put<prm::dctc::pd>(dctc, dct->pd->pdn);
    put<prm::dctc::tclass>(dctc, dct->path.tclass);
    put<prm::dctc::flow_label>(dctc, dct->path.flow_label);
    put<prm::dctc::dc_access_key>(dctc, dct->dc_key);
    put<prm::dctc::mtu>(dctc, dct->mtu);
    put<prm::dctc::port>(dctc, dct->port);
    put<prm::dctc::pkey_index>(dctc, dct->path.pkey_index);
    put<prm::dctc::my_addr_index>(dctc, dct->path.src_addr_index);
    put<prm::dctc::hop_limit>(dctc, dct->path.hop_limit);
    put<prm::dctc::dc_access_key_violation_count>(dctc,
                                                  dct->dc_key_violations);
    put<prm::dctc::dscp>(dctc, dct->path.dscp);
    put<prm::dctc::eth_prio>(dctc, dct->path.eth_prio);
    return FW_OK;
}

} // namespace uct_ib_emu
