#include "rc_mlx5_iface.h"

#include <ucs/debug/log_def.h>

#include <new>

void uct_rc_mlx5_ep_addr_pack(uint32_t qpn, uct_ep_addr_t *addr)
{
    uint8_t *p = reinterpret_cast<uint8_t*>(addr);

    p[0] = qpn & 0xff;
    p[1] = (qpn >> 8) & 0xff;
    p[2] = (qpn >> 16) & 0xff;
}

uint32_t uct_rc_mlx5_ep_addr_unpack(const uct_ep_addr_t *addr)
{
    const uint8_t *p = reinterpret_cast<const uint8_t*>(addr);

    return p[0] | (p[1] << 8) | (p[2] << 16);
}

ucs_status_t uct_rc_mlx5_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    auto           *iface = static_cast<uct_rc_mlx5_iface*>(params->iface);
    uct_rc_mlx5_ep *ep;
    uct_ib_verbs_qp *verbs_qp;
    ucs_status_t   status;

    if (params->field_mask & (UCT_EP_PARAM_FIELD_DEV_ADDR |
                              UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("%s: rc endpoints connect to endpoints, not to interfaces",
                  iface->dev_name.c_str());
        return UCS_ERR_UNSUPPORTED;
    }

    ep = new (std::nothrow) uct_rc_mlx5_ep();
    if (ep == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->iface      = iface;
    ep->path_index = (params->field_mask & UCT_EP_PARAM_FIELD_PATH_INDEX) ?
                     params->path_index : 0;

    if (iface->devx) {
        /* the DevX QP receives from the interface's SRQ */
        status = uct_rc_mlx5_iface_create_devx_qp(iface,
                                                  iface->rc.tx_queue_len *
                                                  UCT_RC_MLX5_TX_BBS_PER_OP,
                                                  0, &ep->devx_qp);
    } else {
        status = uct_ib_verbs_qp::create(*iface->md->dev, iface->port_num,
                                         iface->md->pd, iface->send_cq->cq(),
                                         iface->recv_cq->cq(),
                                         iface->rx->srq(),
                                         iface->rc.tx_queue_len,
                                         iface->max_inline, UCT_RC_MAX_SGE + 2,
                                         &verbs_qp);
        if (status == UCS_OK) {
            ep->verbs_qp.reset(verbs_qp);
            status = verbs_qp->rst2init(0);
        }
    }
    if (status != UCS_OK) {
        delete ep;
        return status;
    }

    status = uct_rc_mlx5_ep_data_init(ep);
    if (status != UCS_OK) {
        delete ep;
        return status;
    }
    *ep_p = ep;
    return UCS_OK;
}

void uct_rc_mlx5_ep_destroy(uct_ep_h tl_ep)
{
    auto *ep = static_cast<uct_rc_mlx5_ep*>(tl_ep);

    uct_rc_mlx5_ep_data_cleanup(ep);
    delete ep;
}

uint32_t uct_rc_mlx5_ep_qpn(uct_ep_h tl_ep)
{
    auto *ep = static_cast<uct_rc_mlx5_ep*>(tl_ep);

    return ep->devx_qp ? ep->devx_qp->qpn() : ep->verbs_qp->qpn();
}

ucs_status_t uct_rc_mlx5_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    uct_rc_mlx5_ep_addr_pack(uct_rc_mlx5_ep_qpn(tl_ep), addr);
    return UCS_OK;
}

int uct_rc_mlx5_ep_is_connected(uct_ep_h tl_ep)
{
    return static_cast<uct_rc_mlx5_ep*>(tl_ep)->connected;
}

ucs_status_t uct_rc_mlx5_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                             const uct_device_addr_t *dev_addr,
                                             const uct_ep_addr_t *ep_addr,
                                             const uct_ep_connect_to_ep_params_t *)
{
    auto               *ep    = static_cast<uct_rc_mlx5_ep*>(tl_ep);
    auto               *iface = static_cast<uct_rc_mlx5_iface*>(ep->iface);
    uint32_t           dest_qpn = uct_rc_mlx5_ep_addr_unpack(ep_addr);
    uint8_t            path_index = ep->path_index;
    struct ibv_ah_attr ah_attr;
    ucs_status_t       status;

    if (uct_ib_iface_check_device_addr(iface, dev_addr) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (ep->connected) {
        ucs_error("%s: qp 0x%x is already connected", iface->dev_name.c_str(),
                  uct_rc_mlx5_ep_qpn(tl_ep));
        return UCS_ERR_ALREADY_EXISTS;
    }

    uct_ib_iface_fill_ah_attr(iface, dev_addr, path_index, &ah_attr);
    if (ep->devx_qp) {
        status = uct_rc_mlx5_iface_common_devx_connect_qp(
                &iface->common, ep->devx_qp.get(), dest_qpn, &ah_attr,
                iface->path_mtu, path_index, iface->rc.max_rd_atomic);
    } else {
        uct_ib_verbs_qp_connect_params_t verbs  = {};
        const uct_rc_mlx5_timers_t       &timers = iface->timers;

        verbs.dest_qp_num   = dest_qpn;
        verbs.ah_attr       = ah_attr;
        verbs.path_mtu      = iface->path_mtu;
        verbs.max_rd_atomic = iface->rc.max_rd_atomic;
        verbs.min_rnr_timer = timers.min_rnr_nak;
        verbs.timeout       = timers.ack_timeout;
        verbs.retry_cnt     = timers.retry_count;
        verbs.rnr_retry     = timers.rnr_retry;
        status = ep->verbs_qp->connect(&verbs);
    }

    ep->connected = (status == UCS_OK);
    ep->dest_qpn  = dest_qpn;
    ep->peer_ah   = ah_attr;
    return status;
}
