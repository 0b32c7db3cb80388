/*
 * RDMA write and read through a neutral work request (rc_ep.h): all of
 * rc_verbs', and rc_mlx5's but the put_short its fast path writes in place.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_ep.h"

namespace {

ucs_status_t rma_zcopy(uct_ep_h tl_ep, uct_rc_opcode_t opcode,
                       const uct_iov_t *iov, size_t iovcnt,
                       uint64_t remote_addr, uct_rkey_t rkey,
                       uct_completion_t *comp)
{
    uct_rc_ep    *ep = uct_rc_ep_of(tl_ep);
    uct_rc_wr_t  wr  = {};
    uct_rc_op_t  op  = {};
    unsigned     cost;
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_fill_iov(ep, iov, iovcnt, UCT_RC_MAX_SGE,
                                      &wr)) != UCS_OK)) {
        return status;
    }

    wr.opcode      = opcode;
    wr.remote_addr = remote_addr;
    wr.rkey        = uct_rc_rkey(rkey);
    cost           = uct_rc_ep_wr_cost(ep, &wr);
    if (!uct_rc_ep_has_resources(ep, cost)) {
        return UCS_ERR_NO_RESOURCE;
    }

    op.comp = comp;
    status  = uct_rc_ep_post(ep, &wr, op, cost);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}

} // namespace

ucs_status_t uct_rc_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey)
{
    uct_rc_ep    *ep = uct_rc_ep_of(tl_ep);
    uct_rc_wr_t  wr;
    unsigned     cost;
    ucs_status_t status;

    wr = {};

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_check_length(ep, "put_short", length,
                                          uct_rc_ep_iface(ep)->max_inline)) !=
         UCS_OK)) {
        return status;
    }

    wr.opcode       = UCT_RC_OP_RDMA_WRITE;
    wr.inl_data     = buffer;
    wr.inl_data_len = length;
    wr.remote_addr  = remote_addr;
    wr.rkey         = uct_rc_rkey(rkey);
    cost            = uct_rc_ep_wr_cost(ep, &wr);
    if (!uct_rc_ep_has_resources(ep, cost)) {
        return UCS_ERR_NO_RESOURCE;
    }
    return uct_rc_ep_post(ep, &wr, {}, cost);
}

ssize_t uct_rc_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                            void *arg, uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_rc_ep    *ep = uct_rc_ep_of(tl_ep);
    uct_rc_wr_t  wr  = {};
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if (status != UCS_OK) {
        return status;
    }

    wr.opcode      = UCT_RC_OP_RDMA_WRITE;
    wr.remote_addr = remote_addr;
    wr.rkey        = uct_rc_rkey(rkey);
    return uct_rc_ep_post_bcopy(ep, &wr, nullptr, 0, pack_cb, arg);
}

ucs_status_t uct_rc_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    return rma_zcopy(tl_ep, UCT_RC_OP_RDMA_WRITE, iov, iovcnt, remote_addr,
                     rkey, comp);
}

ucs_status_t uct_rc_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    return rma_zcopy(tl_ep, UCT_RC_OP_RDMA_READ, iov, iovcnt, remote_addr,
                     rkey, comp);
}

ucs_status_t uct_rc_ep_get_bcopy(uct_ep_h tl_ep,
                                 uct_unpack_callback_t unpack_cb, void *arg,
                                 size_t length, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_rc_ep    *ep    = uct_rc_ep_of(tl_ep);
    uct_rc_iface *iface = uct_rc_ep_iface(ep);
    uct_rc_wr_t  wr     = {};
    uct_rc_op_t  op     = {};
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_check_length(ep, "get_bcopy", length,
                                          iface->seg_size)) != UCS_OK)) {
        return status;
    }

    if (!uct_rc_ep_has_resources(ep, UCT_RC_EP_MAX_WR_COST)) {
        return UCS_ERR_NO_RESOURCE;
    }
    op.buf = iface->tx_bufs->get();
    if (op.buf == nullptr) {
        return UCS_ERR_NO_RESOURCE;
    }

    wr.opcode      = UCT_RC_OP_RDMA_READ;
    wr.sge[0]      = {reinterpret_cast<uintptr_t>(op.buf),
                      static_cast<uint32_t>(length), iface->tx_bufs->lkey()};
    wr.num_sge     = 1;
    wr.remote_addr = remote_addr;
    wr.rkey        = uct_rc_rkey(rkey);
    op.comp        = comp;
    op.unpack      = unpack_cb;
    op.arg         = arg;
    op.length      = length;
    status         = uct_rc_ep_post(ep, &wr, op, uct_rc_ep_wr_cost(ep, &wr));
    if (status != UCS_OK) {
        iface->tx_bufs->put(op.buf);
        return status;
    }
    return UCS_INPROGRESS;
}
