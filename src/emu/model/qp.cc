/*
 * Queue pairs: the one constructor that CREATE_QP (firmware/devx_qp.cc) and
 * ibv_create_qp (frontend/verbs_qp.cc) share, the reset of a connection,
 * the references a QP gives back when it goes, and the completions of a
 * verbs QP's work requests (frontend/verbs_wr.cc), which the engine flushes
 * too when it moves the QP to ERR.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/host_topology.h>


namespace uct_ib_emu {

qp *qp_install(std::unique_ptr<qp> q, const qp_spec &spec)
{
    context *ctx = q->ctx;
    device *dev  = ctx->dev;

    q->devx           = spec.devx;
    q->st             = spec.st;
    q->qpn            = alloc_qpn(dev);
    q->state          = UCT_MLX5_QP_STATE_RST;
    q->pd             = spec.pd;
    q->send_cq        = spec.send_cq;
    q->recv_cq        = spec.recv_cq;
    if (q->recv_cq != nullptr) {
        q->recv_cq->receives = true;
    }
    q->srq            = spec.srq;
    q->xrcd           = spec.xrcd;
    q->no_sq          = spec.no_sq;
    q->log_sq_size    = spec.log_sq_size;
    q->log_rq_size    = spec.log_rq_size;
    q->log_rq_stride  = spec.log_rq_stride;
    q->rq_type        = spec.rq_type;
    q->wq_umem        = spec.wq_umem;
    q->wq_umem_offset = spec.wq_umem_offset;
    q->dbr_umem       = spec.dbr_umem;
    q->dbr_offset     = spec.dbr_offset;
    q->uar            = spec.uar;

    /* every reference qp_release_resources() gives back */
    if (q->pd != nullptr) {
        ++q->pd->refs;
    }
    if (q->xrcd != nullptr) {
        ++q->xrcd->refs;
    }
    for (cq *c : {q->send_cq, q->recv_cq}) {
        if (c != nullptr) {
            ++c->refs;
        }
    }
    if (q->srq != nullptr) {
        ++q->srq->refs;
    }
    for (umem *u : {q->wq_umem, q->dbr_umem}) {
        if (u != nullptr) {
            ++u->refs;
        }
    }
    if (q->uar != nullptr) {
        ++q->uar->refs;
    }

    dev->qps[q->qpn] = q.get();
    return add_object(ctx, std::move(q));
}

void qp::reset_connection()
{
    sq_x          = sq_exec();
    rq_x          = rq_exec();
    port          = 0;
    remote_qpn    = 0;
    qkey          = 0;
    mtu           = 0;
    log_msg_max   = 0;
    rre           = 0;
    rwe           = 0;
    rae           = 0;
    atomic_mode   = 0;
    log_rra_max   = 0;
    log_sra_max   = 0;
    min_rnr_nak   = 0;
    retry_count   = 0;
    rnr_retry     = 0;
    pm_state      = 0;
    next_send_psn = 0;
    next_rcv_psn  = 0;
    path          = {};
    access_flags  = 0;
    pkey_index    = 0;
    max_rd_atomic = 0;
    max_dest_rd_atomic = 0;
    timeout       = 0;
    ah_attr       = {};
    dc_connected  = false; /* a DCI connects anew; dc_gen only goes on */
}

void qp_release_resources(emu_state &s, qp *q)
{
    device *dev = q->ctx->dev;

    if (q->uar != nullptr) {
        doorbell_check_page(s, dev, q->uar);
    }
    dev->qps.erase(q->qpn);
    if (q->pd != nullptr) {
        --q->pd->refs;
    }
    if (q->xrcd != nullptr) {
        --q->xrcd->refs;
    }
    if (q->send_cq != nullptr) {
        --q->send_cq->refs;
    }
    if (q->recv_cq != nullptr) {
        --q->recv_cq->refs;
    }
    if (q->srq != nullptr) {
        --q->srq->refs;
    }
    if (q->wq_umem != nullptr) {
        --q->wq_umem->refs;
    }
    if (q->dbr_umem != nullptr) {
        --q->dbr_umem->refs;
    }
    if (q->uar != nullptr) {
        uar_page_put(q->uar);
    }
}

void qp_push_verbs_cqe(qp *q, const send_wr &wr, enum ibv_wc_status status,
                       uint32_t vendor_err)
{
    cq *c       = q->send_cq;
    verbs_cqe e = {};

    e.wc.wr_id      = wr.wr_id;
    e.wc.status     = status;
    e.wc.vendor_err = vendor_err;
    e.wc.opcode = (wr.op == send_wr::MR_LIST) ?
                  static_cast<enum ibv_wc_opcode>(MLX5DV_WC_UMR) :
                  IBV_WC_LOCAL_INV;
    e.wc.qp_num = q->qpn;
    e.retires   = 1 + q->unsignaled;
    q->unsignaled = 0;

    if (c->verbs_cqes.size() >= static_cast<size_t>(c->ibv.cqe)) {
        ++c->overruns;
        uct_ib_emu_debug("cq 0x%x overrun: completion of qp 0x%x lost",
                         c->cqn, q->qpn);
        return;
    }

    c->verbs_cqes.push_back(e);
}

void qp_flush_verbs_sends(qp *q)
{
    for (const send_wr &wr : q->stuck) {
        qp_push_verbs_cqe(q, wr, IBV_WC_WR_FLUSH_ERR);
    }

    q->stuck.clear();
    q->stalled = false;
}

struct pd *qp::responder_pd() const
{
    if (is_xrc_tgt()) {
        return (xrc_srq != nullptr) ? xrc_srq->pd : nullptr;
    }
    return pd;
}

} // namespace uct_ib_emu
