/*
 * Ordering and pending requests of the RC transports (rc_ep.h): flush (a
 * marker that completes with the last operation posted, or a cancel that
 * fails the endpoint), fence (the next WQE waits for the ones before it)
 * and the pending queue that progress dispatches when the send queue has
 * room again; on an endpoint or on every endpoint of an interface.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_ep.h"

ucs_status_t uct_rc_ep_flush(uct_ep_h tl_ep, unsigned flags,
                             uct_completion_t *comp)
{
    uct_rc_ep   *ep     = uct_rc_ep_of(tl_ep);
    uct_rc_op_t marker  = {};

    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        if (ep->failed == UCS_OK) {
            const uct_rc_iface_ops_t *rc_ops = uct_rc_ep_iface(ep)->rc_ops;

            ep->failed = UCS_ERR_CANCELED;
            uct_rc_ep_update_usable(ep);
            uct_rc_ep_retire_all(ep, UCS_ERR_CANCELED);
            ep->pending.clear();
            if (rc_ops->ep_to_error != nullptr) {
                rc_ops->ep_to_error(ep); /* logged if it fails */
            }
        }
        return UCS_OK;
    }

    if (ep->failed != UCS_OK) {
        return ep->failed;
    }
    if (ep->ci_sn == ep->sn) {
        return UCS_OK;
    }
    if (uct_rc_ep_unsignaled(ep)) {
        /* the last WQE asks for no completion: one that does */
        ucs_status_t status = uct_rc_ep_post_signal(ep);

        if (status != UCS_OK) {
            return status;
        }
    }
    if (comp == nullptr) {
        return UCS_INPROGRESS;
    }
    if (ep->ops.full()) {
        return UCS_ERR_NO_RESOURCE; /* too many flushes waiting */
    }

    /* completes with the last operation posted so far */
    marker.sn   = ep->last_sn;
    marker.comp = comp;
    ep->ops.push_back(marker);
    return UCS_INPROGRESS;
}

ucs_status_t uct_rc_ep_fence(uct_ep_h tl_ep, unsigned)
{
    uct_rc_ep_of(tl_ep)->fence_next = true;
    return UCS_OK;
}

ucs_status_t uct_rc_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req,
                                   unsigned)
{
    uct_rc_ep    *ep    = uct_rc_ep_of(tl_ep);
    uct_rc_iface *iface = uct_rc_ep_iface(ep);

    if (ep->pending.empty() &&
        uct_rc_ep_has_resources(ep, UCT_RC_EP_MAX_WR_COST) &&
        (iface->tx_bufs->num_free() > 0) &&
        (!iface->rc.fc_enable || (ep->fc_wnd > 0))) {
        return UCS_ERR_BUSY;
    }
    ep->pending.push_back(req);
    iface->dispatch_due = true;
    return UCS_OK;
}

void uct_rc_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb,
                             void *arg)
{
    uct_rc_ep *ep = uct_rc_ep_of(tl_ep);

    while (!ep->pending.empty()) {
        uct_pending_req_t *req = ep->pending.front();
        ep->pending.pop_front();
        if (cb != nullptr) {
            cb(req, arg);
        }
    }
}

ucs_status_t uct_rc_iface_flush(uct_iface_h tl_iface, unsigned flags,
                                uct_completion_t *comp)
{
    auto *iface = static_cast<uct_rc_iface*>(tl_iface);
    bool busy   = false;

    if (comp != nullptr) {
        return UCS_ERR_UNSUPPORTED; /* as UCX's RC: poll until UCS_OK */
    }

    iface->eps_by_qpn.for_each([&](uct_rc_ep *ep) {
        if (flags & UCT_FLUSH_FLAG_CANCEL) {
            (void)uct_rc_ep_flush(ep, flags, nullptr);
        } else if ((ep->ci_sn != ep->sn) && (ep->failed == UCS_OK)) {
            busy = true;
            if (uct_rc_ep_unsignaled(ep)) {
                (void)uct_rc_ep_post_signal(ep); /* else the next call */
            }
        }
    });
    return busy ? UCS_INPROGRESS : UCS_OK;
}

ucs_status_t uct_rc_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    auto *iface = static_cast<uct_rc_iface*>(tl_iface);

    iface->eps_by_qpn.for_each([flags](uct_rc_ep *ep) {
        (void)uct_rc_ep_fence(ep, flags);
    });
    return UCS_OK;
}
