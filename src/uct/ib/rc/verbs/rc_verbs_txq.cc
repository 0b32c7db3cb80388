/*
 * rc_verbs' send path: the same work requests as ibv_send_wr through the
 * glue, completions through ibv_poll_cq. The work request id carries the
 * operation's sequence number, as a WQE index does for rc_mlx5.
 *
 * Layer rc/verbs: may include rc/base/, ib/base/, mlx5/dv/ (its CQs),
 * uct/base/ and ucs/; never mlx5/rc/.
 */
#include "rc_verbs.h"

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cerrno>

namespace {

enum ibv_wr_opcode verbs_opcode(uct_rc_opcode_t op)
{
    switch (op) {
    case UCT_RC_OP_RDMA_WRITE: return IBV_WR_RDMA_WRITE;
    case UCT_RC_OP_RDMA_READ:  return IBV_WR_RDMA_READ;
    case UCT_RC_OP_ATOMIC_FA:  return IBV_WR_ATOMIC_FETCH_AND_ADD;
    case UCT_RC_OP_ATOMIC_CS:  return IBV_WR_ATOMIC_CMP_AND_SWP;
    default:                   return IBV_WR_SEND;
    }
}

} // namespace

/* One work request, whatever it holds */
unsigned uct_rc_verbs_txq_wr_cost(const uct_rc_ep *, const uct_rc_wr_t *)
{
    return 1;
}

ucs_status_t uct_rc_verbs_txq_post(uct_rc_ep *rc_ep, const uct_rc_wr_t *wr)
{
    auto               *ep    = static_cast<uct_rc_verbs_ep*>(rc_ep);
    auto               *iface = uct_rc_ep_iface(ep);
    struct ibv_send_wr swr    = {};
    struct ibv_send_wr *bad_wr;
    struct ibv_sge     sge[UCT_RC_MAX_SGE + 3];
    unsigned           n      = 0;
    int                ret;

    if (wr->opcode == UCT_RC_OP_NOP) {
        /* verbs has no NOP: a zero-length write to nowhere needs no key */
        swr.opcode = IBV_WR_RDMA_WRITE;
    } else {
        swr.opcode = verbs_opcode(wr->opcode);
    }

    if (wr->inl_hdr_len > 0) {
        sge[n++] = {reinterpret_cast<uintptr_t>(wr->inl_hdr), wr->inl_hdr_len, 0};
    }
    if (wr->inl_data_len > 0) {
        sge[n++] = {reinterpret_cast<uintptr_t>(wr->inl_data),
                    wr->inl_data_len, 0};
    }
    for (unsigned i = 0; i < wr->num_sge; ++i) {
        sge[n++] = {wr->sge[i].addr, wr->sge[i].length, wr->sge[i].lkey};
    }

    swr.wr_id      = ep->sn;
    swr.sg_list    = sge;
    swr.num_sge    = n;
    swr.send_flags = (wr->signaled ? IBV_SEND_SIGNALED : 0) |
                     (wr->fence ? IBV_SEND_FENCE : 0) |
                     ((wr->inl_hdr_len + wr->inl_data_len > 0) ?
                      IBV_SEND_INLINE : 0);
    if ((wr->opcode == UCT_RC_OP_RDMA_WRITE) ||
        (wr->opcode == UCT_RC_OP_RDMA_READ)) {
        swr.wr.rdma.remote_addr = wr->remote_addr;
        swr.wr.rdma.rkey        = wr->rkey;
    } else if ((wr->opcode == UCT_RC_OP_ATOMIC_FA) ||
               (wr->opcode == UCT_RC_OP_ATOMIC_CS)) {
        swr.wr.atomic.remote_addr = wr->remote_addr;
        swr.wr.atomic.rkey        = wr->rkey;
        swr.wr.atomic.compare_add = (wr->opcode == UCT_RC_OP_ATOMIC_FA) ?
                                    wr->swap_add : wr->compare;
        swr.wr.atomic.swap        = wr->swap_add;
    }

    ret = uct_ib_glue->post_send(ep->verbs_qp->qp(), &swr, &bad_wr);
    if (ret != 0) {
        errno = ret;
        ucs_error("post_send(%s, qp 0x%x) failed: %m", iface->dev_name.c_str(),
                  ep->verbs_qp->qpn());
        return UCS_ERR_IO_ERROR;
    }

    ++ep->sn;
    return UCS_OK;
}

unsigned uct_rc_verbs_txq_poll(uct_rc_verbs_iface *iface,
                               uct_rc_completion_t *comps, unsigned max)
{
    struct ibv_wc wc[16];
    int           count;

    count = uct_ib_glue->poll_cq(iface->send_cq->cq(), std::min(max, 16u), wc);
    if (count < 0) {
        ucs_error("poll_cq(%s, send) failed: %d", iface->dev_name.c_str(),
                  count);
        return 0;
    }

    for (int i = 0; i < count; ++i) {
        comps[i].qpn        = wc[i].qp_num;
        comps[i].sn         = static_cast<uint16_t>(wc[i].wr_id);
        comps[i].status     = wc[i].status;
        comps[i].vendor_err = wc[i].vendor_err;
        comps[i].syndrome   = -1; /* verbs shows only the status */
    }
    return count;
}
