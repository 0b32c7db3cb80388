/*
 * What the neutral endpoint operations share (rc_ep.h): posting through the
 * transport, completion by sequence number, endpoint failure, flow control
 * grants and pending requests, and the endpoint's data path resources.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_ep.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <endian.h>
#include <string>

namespace {

uint32_t lkey_of(uct_mem_h memh)
{
    return static_cast<const uct_ib_mem_t*>(memh)->mr->lkey;
}

ucs_status_t status_of(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_WR_FLUSH_ERR:
        return UCS_ERR_CANCELED;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
        return UCS_ERR_CONNECTION_RESET;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_REM_ABORT_ERR:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

/* Who the endpoint talks to, for the failure line */
std::string peer_of(const uct_rc_ep *ep)
{
    char qpn[16];

    snprintf(qpn, sizeof(qpn), "qp 0x%x", ep->dest_qpn);
    if (ep->peer_ah.is_global) {
        return std::string(qpn) + " gid " +
               uct_ib_gid_str(&ep->peer_ah.grh.dgid);
    }
    return std::string(qpn) + " lid " + std::to_string(ep->peer_ah.dlid);
}

/* The endpoint failed: once, whatever else completes with an error after.
 * One line says so, at UCX_FAILURE's level when the error handler takes
 * care of it, else as an error */
void fail(uct_rc_ep *ep, const uct_rc_completion_t &c)
{
    uct_rc_iface *iface  = uct_rc_ep_iface(ep);
    ucs_status_t status  = status_of(c.status);
    char         syndrome[48];

    if (ep->failed != UCS_OK) {
        return;
    }

    ep->failed = status;
    uct_rc_ep_update_usable(ep);
    if (c.syndrome >= 0) {
        snprintf(syndrome, sizeof(syndrome),
                 "syndrome 0x%x vendor syndrome 0x%x", c.syndrome,
                 c.vendor_err);
    } else {
        snprintf(syndrome, sizeof(syndrome), "vendor syndrome 0x%x",
                 c.vendor_err);
    }
    ucs_log((iface->err_handler != nullptr) ? iface->config.failure_level :
                                              UCS_LOG_LEVEL_ERROR,
            "%s: qp 0x%x to peer %s failed: %s (%s): %s",
            iface->dev_name.c_str(), c.qpn, peer_of(ep).c_str(),
            uct_ib_wc_status_name(c.status), syndrome,
            ucs_status_string(status));

    uct_rc_ep_retire_all(ep, status);
    ep->pending.clear(); /* the user purges them with uct_ep_pending_purge */

    if (iface->err_handler != nullptr) {
        iface->err_handler(iface->err_handler_arg, ep, status);
    }
}

/* A grant the peer asked for: exempt from flow control, retried from
 * progress while the send queue is full */
void send_grant(uct_rc_ep *ep)
{
    const uint8_t hdr = UCT_RC_FC_PURE_GRANT;
    uct_rc_wr_t   wr  = {};
    unsigned      cost;

    wr.opcode      = UCT_RC_OP_SEND;
    wr.inl_hdr     = &hdr;
    wr.inl_hdr_len = sizeof(hdr);
    if (ep->failed == UCS_OK) {
        cost = uct_rc_ep_wr_cost(ep, &wr);
        if (uct_rc_ep_has_resources(ep, cost) &&
            (uct_rc_ep_post(ep, &wr, {}, cost) == UCS_OK)) {
            ep->fc_grant_due = false;
            return;
        }
    }
    uct_rc_ep_iface(ep)->dispatch_due = true; /* progress tries again */
}

} // namespace

ucs_status_t uct_rc_ep_post(uct_rc_ep *ep, uct_rc_wr_t *wr, uct_rc_op_t op,
                            unsigned cost)
{
    uct_rc_iface   *iface  = uct_rc_ep_iface(ep);
    const uint16_t sn      = ep->sn;
    const bool     retires = (op.comp != nullptr) || (op.buf != nullptr);
    ucs_status_t   status;

    wr->signaled = retires || (wr->opcode == UCT_RC_OP_NOP) ||
                   uct_rc_ep_signal_next(iface, ep);
    wr->fence    = ep->fence_next;
    op.sn        = sn;
    op.cost      = static_cast<uint16_t>(cost);
    status       = iface->rc_ops->post_wr(ep, wr);
    if (status != UCS_OK) {
        return status;
    }

    uct_rc_ep_posted(iface, ep, sn, cost, wr->signaled);
    if (retires) {
        ep->ops.push_back(op); /* room: at most one per WQE, see data_init */
    }
    return UCS_OK;
}

ucs_status_t uct_rc_ep_post_signal(uct_rc_ep *ep)
{
    uct_rc_wr_t wr = {};
    unsigned    cost;

    wr.opcode = UCT_RC_OP_NOP;
    cost      = uct_rc_ep_wr_cost(ep, &wr);
    if (!uct_rc_ep_has_resources(ep, cost)) {
        return UCS_ERR_NO_RESOURCE;
    }
    return uct_rc_ep_post(ep, &wr, {}, cost);
}

/* Deliver what @a op waited for, with @a status; inline in the two loops
 * that retire, the completion's the hot one */
__attribute__((always_inline)) static inline void
uct_rc_ep_retire(uct_rc_ep *ep, const uct_rc_op_t &op, ucs_status_t status)
{
    uct_rc_iface *iface = uct_rc_ep_iface(ep);

    if ((op.unpack != nullptr) && (status == UCS_OK)) {
        op.unpack(op.arg, op.buf, op.length);
    }
    if ((op.result != nullptr) && (status == UCS_OK)) {
        if (op.result_size == sizeof(uint32_t)) {
            uint32_t v;
            memcpy(&v, op.buf, sizeof(v));
            v = op.result_be ? be32toh(v) : v;
            memcpy(op.result, &v, sizeof(v));
        } else {
            uint64_t v;
            memcpy(&v, op.buf, sizeof(v));
            v = op.result_be ? be64toh(v) : v;
            memcpy(op.result, &v, sizeof(v));
        }
    }
    if (op.buf != nullptr) {
        iface->tx_bufs->put(op.buf);
    }
    if (op.comp != nullptr) {
        uct_invoke_completion(op.comp, status);
    }
}

void uct_rc_ep_retire_all(uct_rc_ep *ep, ucs_status_t status)
{
    while (!ep->ops.empty()) {
        uct_rc_op_t op = ep->ops.front();
        ep->ops.pop_front();
        uct_rc_ep_retire(ep, op, status);
    }
}

void uct_rc_ep_retire_upto(uct_rc_ep *ep, uint16_t sn)
{
    while (!ep->ops.empty() &&
           (static_cast<int16_t>(ep->ops.front().sn - sn) <= 0)) {
        uct_rc_op_t op = ep->ops.front();
        ep->ops.pop_front();
        uct_rc_ep_retire(ep, op, UCS_OK);
    }
}

void uct_rc_iface_complete(uct_rc_iface *iface, const uct_rc_completion_t &c)
{
    uct_rc_ep *ep = iface->eps_by_qpn.find(c.qpn);

    /* the send CQ holds twice the credits: a completion of an endpoint
     * destroyed meanwhile (whose credits came back then) still fits */
    if (ep == nullptr) {
        return;
    }

    if (c.status != IBV_WC_SUCCESS) {
        /* every WQE completes once the QP failed: what is left retires
         * with the endpoint's failure */
        (void)uct_rc_ep_reclaim(iface, ep, c.sn);
        fail(ep, c);
        return;
    }
    uct_rc_ep_completed(iface, ep, c.sn);
}

void uct_rc_iface_dispatch_pending(uct_rc_iface *iface)
{
    bool due = false;

    iface->dispatch_due = false;
    iface->eps_by_qpn.for_each([&due](uct_rc_ep *ep) {
        if (ep->fc_grant_due) {
            send_grant(ep);
        }

        while (!ep->pending.empty() &&
               uct_rc_ep_has_resources(ep, UCT_RC_EP_MAX_WR_COST)) {
            uct_pending_req_t *req = ep->pending.front();
            ep->pending.pop_front();
            if (req->func(req) == UCS_ERR_NO_RESOURCE) {
                ep->pending.push_front(req);
                break;
            }
        }
        due |= ep->fc_grant_due || !ep->pending.empty();
    });
    iface->dispatch_due |= due;
}

ucs_status_t uct_rc_ep_fill_iov(const uct_rc_ep *ep, const uct_iov_t *iov,
                                size_t iovcnt, size_t max_iov,
                                uct_rc_wr_t *wr)
{
    if (ucs_unlikely(iovcnt > max_iov)) {
        ucs_error("%s: %zu iov entries exceed the limit of %zu",
                  uct_rc_ep_iface(ep)->dev_name.c_str(), iovcnt, max_iov);
        return UCS_ERR_INVALID_PARAM;
    }

    wr->num_sge = 0;
    for (size_t i = 0; i < iovcnt; ++i) {
        const size_t length = iov[i].length * std::max(iov[i].count, 1u);

        if (length == 0) {
            continue;
        }
        if (ucs_unlikely((iov[i].memh == UCT_MEM_HANDLE_NULL) ||
                         ((iov[i].count > 1) &&
                          (iov[i].stride != iov[i].length)))) {
            ucs_error("%s: zero-copy iov entry %zu needs a memory handle and "
                      "contiguous data", uct_rc_ep_iface(ep)->dev_name.c_str(),
                      i);
            return UCS_ERR_INVALID_PARAM;
        }
        wr->sge[wr->num_sge++] = {reinterpret_cast<uintptr_t>(iov[i].buffer),
                                  static_cast<uint32_t>(length),
                                  lkey_of(iov[i].memh)};
    }
    return UCS_OK;
}

ssize_t uct_rc_ep_post_bcopy(uct_rc_ep *ep, uct_rc_wr_t *wr,
                             const uint8_t *hdr, size_t hdr_len,
                             uct_pack_callback_t pack_cb, void *arg)
{
    uct_rc_iface *iface = uct_rc_ep_iface(ep);
    uct_rc_op_t  op     = {};
    uint8_t      *buf;
    size_t       length;
    ucs_status_t status;

    if (!uct_rc_ep_has_resources(ep, UCT_RC_EP_MAX_WR_COST)) {
        return UCS_ERR_NO_RESOURCE;
    }
    buf = static_cast<uint8_t*>(iface->tx_bufs->get());
    if (buf == nullptr) {
        return UCS_ERR_NO_RESOURCE;
    }

    memcpy(buf, hdr, hdr_len);
    length = pack_cb(buf + hdr_len, arg);
    if (ucs_unlikely(hdr_len + length > iface->seg_size)) {
        ucs_fatal("%s: the pack callback wrote %zu bytes, more than the bcopy "
                  "limit of %zu", iface->dev_name.c_str(), length,
                  iface->seg_size - hdr_len);
    }

    wr->sge[0]  = {reinterpret_cast<uintptr_t>(buf),
                   static_cast<uint32_t>(hdr_len + length),
                   iface->tx_bufs->lkey()};
    wr->num_sge = 1;
    op.buf      = buf;
    status      = uct_rc_ep_post(ep, wr, op, uct_rc_ep_wr_cost(ep, wr));
    if (status != UCS_OK) {
        iface->tx_bufs->put(buf);
        return status;
    }
    return length;
}

void uct_rc_ep_fc_received(uct_rc_iface *iface, uint32_t qpn, uint8_t fc)
{
    uct_rc_ep *ep = iface->eps_by_qpn.find(qpn);

    if (ep == nullptr) {
        return; /* destroyed meanwhile */
    }

    if (fc & UCT_RC_FC_GRANT) {
        ep->fc_wnd = iface->rc.fc_wnd_size; /* a full window again */
        if (!ep->pending.empty()) {
            iface->dispatch_due = true;
        }
    }
    if ((fc != UCT_RC_FC_PURE_GRANT) &&
        (fc & (UCT_RC_FC_SOFT_REQ | UCT_RC_FC_HARD_REQ))) {
        ep->fc_grant_due = true;
        send_grant(ep);
    }
}

ucs_status_t uct_rc_ep_data_init(uct_rc_ep *ep, unsigned slots,
                                 unsigned sq_avail)
{
    uct_rc_iface *iface = uct_rc_ep_iface(ep);
    ucs_status_t status;

    ep->fc_wnd     = iface->rc.fc_enable ? int(iface->rc.fc_wnd_size) :
                                           UCT_RC_EP_FC_UNBOUNDED;
    ep->sq_avail   = sq_avail;
    ep->sq_mask    = slots - 1;
    ep->ci_sn      = ep->sn;
    ep->ci_ord     = ep->wqe_ord;
    ep->moderation = std::max(1u, std::min(iface->rc.tx_cq_moderation,
                                           sq_avail /
                                           (2 * UCT_RC_EP_MAX_WR_COST)));
    ep->signal_in  = ep->moderation;

    /* one operation per WQE at most, and as many flushes waiting */
    status = ep->ops.init(2 * slots);
    if (status != UCS_OK) {
        return status;
    }
    ep->wqes.reset(new (std::nothrow) uct_rc_wqe_slot[slots]);
    if (ep->wqes == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    /* one memset, not a loop of stores */
    memset(ep->wqes.get(), 0, slots * sizeof(uct_rc_wqe_slot));
    return iface->eps_by_qpn.insert(ep->qpn, ep);
}

void uct_rc_ep_data_cleanup(uct_rc_ep *ep)
{
    uct_rc_iface *iface = uct_rc_ep_iface(ep);

    if (ep->wqes == nullptr) {
        return; /* data_init did not get far */
    }
    iface->eps_by_qpn.erase(ep->qpn);
    /* what is still outstanding completes as canceled */
    uct_rc_ep_retire_all(ep, UCS_ERR_CANCELED);
    /* CQEs of its WQEs, if any are still to be polled, find no endpoint:
     * the credits of those no completion covered come back now */
    iface->tx_cq_avail += static_cast<uint16_t>(ep->wqe_ord - ep->ci_ord);
    ep->ci_sn           = ep->sn;
    ep->ci_ord          = ep->wqe_ord;
}

ucs_status_t uct_rc_ep_check_params(const uct_rc_iface *iface,
                                    const uct_ep_params_t *params)
{
    if (params->field_mask & (UCT_EP_PARAM_FIELD_DEV_ADDR |
                              UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("%s: rc endpoints connect to endpoints, not to interfaces",
                  iface->dev_name.c_str());
        return UCS_ERR_UNSUPPORTED;
    }
    return UCS_OK;
}

void uct_rc_ep_init(uct_rc_ep *ep, const uct_ep_params_t *params)
{
    ep->iface      = params->iface;
    ep->path_index = (params->field_mask & UCT_EP_PARAM_FIELD_PATH_INDEX) ?
                     params->path_index : 0;
}

ucs_status_t uct_rc_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_rc_ep_addr_pack(uct_rc_ep_qpn(tl_ep), addr);
    return UCS_OK;
}

ucs_status_t uct_rc_ep_connect_refused(const uct_rc_ep *ep)
{
    ucs_error("%s: qp 0x%x is already connected",
              uct_rc_ep_iface(ep)->dev_name.c_str(), ep->qpn);
    return UCS_ERR_ALREADY_EXISTS;
}

int uct_rc_ep_is_connected(uct_ep_h tl_ep)
{
    return uct_rc_ep_of(tl_ep)->connected;
}

uint32_t uct_rc_ep_qpn(uct_ep_h tl_ep)
{
    return uct_rc_ep_of(tl_ep)->qpn;
}
