/*
 * rc_verbs' endpoints (rc_verbs.h): a verbs RC QP each, receiving from the
 * interface's SRQ, connected through ibv_modify_qp (the kernel resolves the
 * destination MAC itself).
 *
 * Layer rc/verbs: may include rc/base/, ib/base/, mlx5/dv/ (its CQs),
 * uct/base/ and ucs/; never mlx5/rc/.
 */
#include "rc_verbs.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <new>

ucs_status_t uct_rc_verbs_ep_create(const uct_ep_params_t *params,
                                    uct_ep_h *ep_p)
{
    auto            *iface = static_cast<uct_rc_verbs_iface*>(params->iface);
    uct_rc_verbs_ep *ep;
    uct_ib_verbs_qp *verbs_qp;
    ucs_status_t    status;

    status = uct_rc_ep_new(params, &ep);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_ib_verbs_qp::create(*iface->md->dev, iface->port_num,
                                     iface->md->pd, iface->send_cq->cq(),
                                     iface->recv_cq->cq(), iface->rx->srq(),
                                     iface->rc.tx_queue_len,
                                     iface->max_inline, UCT_RC_MAX_SGE + 2,
                                     &verbs_qp);
    if (status == UCS_OK) {
        ep->verbs_qp.reset(verbs_qp);
        status = verbs_qp->rst2init(0);
    }
    if (status != UCS_OK) {
        delete ep;
        return status;
    }

    ep->qpn = verbs_qp->qpn();
    status  = uct_rc_ep_data_init(ep, ucs_roundup_pow2(iface->rc.tx_queue_len),
                                  iface->rc.tx_queue_len);
    if (status != UCS_OK) {
        delete ep;
        return status;
    }
    *ep_p = ep;
    return UCS_OK;
}

void uct_rc_verbs_ep_destroy(uct_ep_h tl_ep)
{
    auto *ep = static_cast<uct_rc_verbs_ep*>(tl_ep);

    uct_rc_ep_data_cleanup(ep);
    delete ep;
}

ucs_status_t
uct_rc_verbs_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                 const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr,
                                 const uct_ep_connect_to_ep_params_t *)
{
    auto                             *ep     = static_cast<uct_rc_verbs_ep*>(tl_ep);
    auto                             *iface  = uct_rc_ep_iface(ep);
    const uct_rc_timers_t            &timers = iface->timers;
    uct_ib_verbs_qp_connect_params_t verbs   = {};
    struct ibv_ah_attr               ah_attr;
    ucs_status_t                     status;

    status = uct_rc_ep_connect_check(ep, dev_addr);
    if (status != UCS_OK) {
        return status;
    }

    uct_ib_iface_fill_ah_attr(iface, dev_addr, ep->path_index, &ah_attr);
    verbs.dest_qp_num   = uct_rc_ep_addr_unpack(ep_addr);
    verbs.ah_attr       = ah_attr;
    verbs.path_mtu      = iface->path_mtu;
    verbs.max_rd_atomic = iface->rc.max_rd_atomic;
    verbs.min_rnr_timer = timers.min_rnr_nak;
    verbs.timeout       = timers.ack_timeout;
    verbs.retry_cnt     = timers.retry_count;
    verbs.rnr_retry     = timers.rnr_retry;
    status = ep->verbs_qp->connect(&verbs);
    return uct_rc_ep_connected(ep, status, verbs.dest_qp_num, &ah_attr);
}
