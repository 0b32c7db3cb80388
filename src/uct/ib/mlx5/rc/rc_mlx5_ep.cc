/*
 * rc_mlx5's endpoints (rc_mlx5_iface.h): a DevX RC QP each, receiving from
 * the interface's SRQ, connected by the connect helper
 * (rc_mlx5_devx_connect.cc).
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_iface.h"

#include <ucs/debug/log_def.h>

#include <new>

ucs_status_t uct_rc_mlx5_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    auto                *iface = static_cast<uct_rc_mlx5_iface*>(params->iface);
    uct_rc_mlx5_ep      *ep;
    uct_ib_mlx5_devx_qp *qp;
    ucs_status_t        status;

    status = uct_rc_ep_new(params, &ep);
    if (status != UCS_OK) {
        return status;
    }

    /* the DevX QP receives from the interface's SRQ */
    status = uct_rc_mlx5_iface_create_devx_qp(iface,
                                              iface->rc.tx_queue_len *
                                              UCT_RC_MLX5_TX_BBS_PER_OP,
                                              0, &ep->devx_qp);
    if (status != UCS_OK) {
        delete ep;
        return status;
    }

    qp      = ep->devx_qp.get();
    ep->qpn = qp->qpn();
    uct_ib_mlx5_txwq_init(&ep->txwq, *qp, *iface->uar);
    status  = uct_rc_ep_data_init(ep, qp->sq_wqe_cnt(),
                                  qp->sq_wqe_cnt() - 2 * UCT_RC_EP_MAX_WR_COST);
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

    uct_rc_ep_data_cleanup(ep);
    delete ep;
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

    status = uct_rc_ep_connect_check(ep, dev_addr);
    if (status != UCS_OK) {
        return status;
    }

    uct_ib_iface_fill_ah_attr(iface, dev_addr, path_index, &ah_attr);
    status = uct_rc_mlx5_iface_common_devx_connect_qp(
            &iface->common, ep->devx_qp.get(), dest_qpn, &ah_attr,
            iface->path_mtu, path_index, iface->rc.max_rd_atomic);
    return uct_rc_ep_connected(ep, status, dest_qpn, &ah_attr);
}
