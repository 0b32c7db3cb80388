/*
 * rc_mlx5's interface (rc_mlx5_iface.h): the neutral RC interface with the
 * DevX state (HCA caps and the connect helper's state, PD number, UAR),
 * CQs the library polls and arms itself, and the transport's registration
 * on the ports of devices with DevX.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_iface.h"

#include <uct/ib/mlx5/ib_mlx5.inl>
#include <ucs/sys/math.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <new>

namespace {

/* Each send may take UCT_RC_MLX5_TX_BBS_PER_OP basic blocks */
ucs_status_t query_limits(uct_rc_iface *iface, uct_rc_iface_limits_t *limits)
{
    uct_ib_mlx5_hca_caps_t caps;
    ucs_status_t           status;

    status = uct_ib_mlx5_query_hca_caps(iface->md->dev->context(),
                                        iface->dev_name.c_str(),
                                        UCS_LOG_LEVEL_ERROR, &caps);
    if (status != UCS_OK) {
        return status;
    }

    limits->max_tx_queue_len = (1u << std::min(caps.log_max_qp_sz, 31u)) /
                               UCT_RC_MLX5_TX_BBS_PER_OP;
    limits->max_rd_atomic    = 1u << std::min({caps.log_max_ra_req_qp,
                                               caps.log_max_ra_res_qp, 31u});
    return UCS_OK;
}

uct_rc_mlx5_iface *mlx5_iface(uct_rc_iface *iface)
{
    return static_cast<uct_rc_mlx5_iface*>(iface);
}

/* The device fired the arm: the next one has a new sequence */
void cq_event(uct_rc_iface *rc_iface, struct ibv_cq *cq)
{
    uct_rc_mlx5_iface *iface = mlx5_iface(rc_iface);

    if (cq == iface->send_cq->cq()) {
        ++iface->tx_cq.arm_sn;
    } else if (cq == iface->recv_cq->cq()) {
        ++iface->rx_cq.arm_sn;
    }
}

/* With the CQ's own consumer index: the library polls it */
ucs_status_t arm_cq(uct_rc_iface *rc_iface, bool send, bool solicited)
{
    uct_rc_mlx5_iface         *iface = mlx5_iface(rc_iface);
    const uct_ib_mlx5_poll_cq &cq    = send ? iface->tx_cq : iface->rx_cq;

    if (cq.peek() != nullptr) {
        return UCS_ERR_BUSY; /* a completion to poll first */
    }
    cq.arm(solicited);
    return UCS_OK;
}

void ep_to_error(uct_rc_ep *ep)
{
    (void)static_cast<uct_rc_mlx5_ep*>(ep)->devx_qp->to_error(); /* logged if
                                                                    it fails */
}

const uct_rc_iface_ops_t uct_rc_mlx5_iface_rc_ops = {
    .query_limits = query_limits,
    .wr_cost      = uct_rc_mlx5_txq_wr_cost,
    .post_wr      = uct_rc_mlx5_txq_post_wr,
    .ep_to_error  = ep_to_error,
    .cq_event     = cq_event,
    .arm_cq       = arm_cq
};

void iface_close(uct_iface_h tl_iface)
{
    auto *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);

    uct_rc_mlx5_iface_cleanup(iface);
    delete iface;
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr)
{
    auto *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);

    uct_rc_mlx5_iface_query(iface, attr);
    uct_rc_iface_data_query(iface, attr);
    return UCS_OK;
}

const uct_iface_ops_t uct_rc_mlx5_iface_ops =
        UCT_RC_IFACE_OPS(uct_rc_mlx5_ep_create, uct_rc_mlx5_ep_destroy,
                         uct_rc_mlx5_ep_connect_to_ep_v2, iface_close,
                         iface_query, uct_rc_mlx5_iface_progress,
                         uct_rc_mlx5_ep_am_short, uct_rc_mlx5_ep_am_bcopy,
                         uct_rc_mlx5_ep_put_short, uct_rc_mlx5_ep_get_bcopy,
                         uct_rc_mlx5_ep_atomic64_post,
                         uct_rc_mlx5_ep_atomic64_fetch);

ucs_status_t devx_init(uct_rc_mlx5_iface *iface)
{
    const uct_ib_device         &dev   = *iface->md->dev;
    const uct_rc_timer_config_t timers = {iface->rc.timeout,
                                          iface->rc.retry_count,
                                          iface->rc.rnr_timeout,
                                          iface->rc.rnr_retry_count};
    uct_ib_mlx5_devx_uar        *uar;
    ucs_status_t                status;

    status = uct_rc_mlx5_iface_common_init(&iface->common, &dev, iface->port_num,
                                           iface->md->pd, &iface->gid_info,
                                           &iface->path, &timers);
    if (status != UCS_OK) {
        return status;
    }
    iface->common.av_cache = iface->md->av_cache;

    status = uct_ib_mlx5_get_pdn(dev, iface->port_num, iface->md->pd,
                                 &iface->pdn);
    if (status != UCS_OK) {
        return status;
    }

    const uct_ib_mlx5_hca_caps_t &caps = iface->common.caps;

    status = uct_ib_mlx5_devx_uar::create(dev, iface->port_num,
                                          caps.bf ? (1u << caps.log_bf_reg_size) :
                                                    0,
                                          &uar);
    if (status != UCS_OK) {
        return status;
    }
    iface->uar.reset(uar);
    return UCS_OK;
}

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *tl_config,
                        uct_iface_h *iface_p)
{
    auto              *config = reinterpret_cast<const uct_rc_iface_common_config_t*>(tl_config);
    uct_rc_mlx5_iface *iface;
    ucs_status_t      status;

    iface = new (std::nothrow) uct_rc_mlx5_iface();
    if (iface == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_rc_mlx5_iface_init(iface, &uct_rc_mlx5_iface_ops, "rc_mlx5",
                                    md, worker, params, &config->super,
                                    &config->rc);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }

    status = uct_rc_mlx5_iface_data_init(iface);
    if (status != UCS_OK) {
        iface_close(iface);
        return status;
    }

    if (config->tm_enable) {
        status = uct_rc_mlx5_iface_tm_init(iface);
        if (status != UCS_OK) {
            iface_close(iface);
            return status;
        }
    }

    *iface_p = iface;
    return UCS_OK;
}

uct_tl_t uct_rc_mlx5_tl = {
    .name          = "rc_mlx5",
    .query_devices = uct_rc_mlx5_query_devx_devices,
    .iface_open    = iface_open,
    .config        = {"RC_MLX5 transport", "RC_MLX5_",
                      uct_rc_iface_common_config_table,
                      sizeof(uct_rc_iface_common_config_t)},
    .next          = nullptr
};
UCT_TL_REGISTER(&uct_rc_mlx5_tl, &uct_ib_component)

bool port_has_devx(const uct_ib_md *md, uint8_t)
{
    return md->dev->devx();
}

} // namespace

ucs_status_t
uct_rc_mlx5_iface_create_devx_qp(uct_rc_mlx5_iface *iface, unsigned sq_len,
                                 unsigned rq_len,
                                 std::unique_ptr<uct_ib_mlx5_devx_qp> *qp_p)
{
    uct_ib_mlx5_devx_qp_attr_t attr = {};
    uct_ib_mlx5_rdma_access_t  access = {true, true, true};
    uct_ib_mlx5_devx_qp        *qp;
    ucs_status_t               status;

    attr.pdn        = iface->pdn;
    attr.cqn_snd    = iface->send_cq->cqn();
    attr.cqn_rcv    = iface->recv_cq->cqn();
    attr.uar_page   = iface->uar->page_id();
    attr.sq_wqe_cnt = ucs_roundup_pow2(sq_len);
    attr.rq_wqe_cnt = (rq_len == 0) ? 0 : ucs_roundup_pow2(rq_len);
    attr.srqn       = ((rq_len == 0) && (iface->rx != nullptr)) ?
                      iface->rx->srqn() : 0;

    status = uct_ib_mlx5_devx_qp::create(*iface->md->dev, iface->port_num,
                                         &attr, &qp);
    if (status != UCS_OK) {
        return status;
    }

    std::unique_ptr<uct_ib_mlx5_devx_qp> owner(qp);
    status = qp->rst2init(0, &access);
    if (status != UCS_OK) {
        return status;
    }

    *qp_p = std::move(owner);
    return UCS_OK;
}

ucs_status_t uct_rc_mlx5_iface_init(uct_rc_mlx5_iface *iface,
                                    const uct_iface_ops_t *ops,
                                    const char *tl_name, uct_md_h md,
                                    uct_worker_h worker,
                                    const uct_iface_params_t *params,
                                    const uct_ib_iface_config_t *ib_config,
                                    const uct_rc_iface_config_t *rc_config)
{
    ucs_status_t status;

    status = uct_rc_iface_init(iface, ops, &uct_rc_mlx5_iface_rc_ops, md,
                               worker, params, ib_config, rc_config);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_rc_iface_create_cqs(iface, &iface->send_cq, &iface->recv_cq);
    if (status != UCS_OK) {
        uct_rc_mlx5_iface_cleanup(iface);
        return status;
    }
    /* rc_mlx5 polls both itself */
    iface->tx_cq.init(*iface->send_cq);
    iface->rx_cq.init(*iface->recv_cq);

    status = devx_init(iface);
    if (status != UCS_OK) {
        uct_rc_mlx5_iface_cleanup(iface);
        return status;
    }

    /* what its WQEs can do */
    iface->masked_atomics  = true;
    iface->inline_with_sge = true;
    iface->log_max_msg     = iface->common.caps.log_max_msg;

    uct_rc_iface_opened(iface, tl_name);
    return UCS_OK;
}

void uct_rc_mlx5_iface_cleanup(uct_rc_mlx5_iface *iface)
{
    /* QPs before the SRQ, CQs and UAR they use */
    iface->tm_cmd_qp.reset();
    iface->rx.reset();
    uct_rc_iface_data_cleanup(iface);
    iface->uar.reset();
    iface->recv_cq.reset();
    iface->send_cq.reset();
    uct_rc_iface_cleanup(iface);
}

void uct_rc_mlx5_iface_query(const uct_rc_mlx5_iface *iface,
                             uct_iface_attr_t *attr)
{
    uct_rc_iface_query(iface, attr);
    if (iface->common.eth && iface->common.caps.lag_tx_port_affinity &&
        (iface->common.caps.num_lag_ports > 1)) {
        attr->dev_num_paths = iface->common.caps.num_lag_ports; /* LAG ports */
    }
}

ucs_status_t uct_rc_mlx5_query_devx_devices(uct_md_h md,
                                            uct_tl_device_resource_t **devices_p,
                                            unsigned *num_devices_p)
{
    return uct_ib_md_query_tl_devices(md, port_has_devx, devices_p,
                                      num_devices_p);
}
