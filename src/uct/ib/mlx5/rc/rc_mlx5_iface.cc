#include "rc_mlx5_iface.h"
#include <ucs/sys/math.h>

#include <uct/ib/mlx5/dv/dv_obj.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <new>

ucs_config_field_t uct_rc_iface_config_table[] = {
    {"TIMEOUT", "1.0s",
     "Transport timeout: how long a send waits for its acknowledgement before\n"
     "it is retried (rounded up to 4.096 us * 2^n, n 1..31; \"inf\" never times\n"
     "out). Values outside 8.192 us .. 8796 s are clamped with a warning.",
     offsetof(uct_rc_iface_config_t, timeout), UCS_CONFIG_TYPE_TIME},

    {"RETRY_COUNT", "7",
     "How many times a send is retried after a transport timeout (0..7;\n"
     "anything larger is refused).",
     offsetof(uct_rc_iface_config_t, retry_count), UCS_CONFIG_TYPE_UINT},

    {"RNR_TIMEOUT", "1ms",
     "How long a sender waits after a receiver-not-ready NAK (rounded up to an\n"
     "IB RNR timer value; above 655.36 ms clamped with a warning).",
     offsetof(uct_rc_iface_config_t, rnr_timeout), UCS_CONFIG_TYPE_TIME},

    {"RNR_RETRY_COUNT", "7",
     "How many receiver-not-ready NAKs a send survives (0..7, 7: without\n"
     "limit; anything larger is refused).",
     offsetof(uct_rc_iface_config_t, rnr_retry_count), UCS_CONFIG_TYPE_UINT},

    {"MAX_RD_ATOMIC", "4",
     "Outstanding RDMA reads and atomics per QP, as requester and responder\n"
     "(rounded up to a power of two; above the device's limit clamped with a\n"
     "warning; 0 is refused).",
     offsetof(uct_rc_iface_config_t, max_rd_atomic), UCS_CONFIG_TYPE_UINT},

    {"TX_QUEUE_LEN", "256",
     "Send queue length of each QP (rounded up to a power of two; above the\n"
     "device's queue size clamped with a warning; 0 is refused).",
     offsetof(uct_rc_iface_config_t, tx_queue_len), UCS_CONFIG_TYPE_UINT},

    {"FC_ENABLE", "y",
     "Flow control of active messages: a sender has a window of messages the\n"
     "receiver grants again as it consumes them, so a fast sender gets\n"
     "UCS_ERR_NO_RESOURCE instead of flooding a slow receiver with RNR NAKs.",
     offsetof(uct_rc_iface_config_t, fc_enable), UCS_CONFIG_TYPE_BOOL},

    {"FC_WND_SIZE", "512",
     "Active messages a sender may have outstanding before a grant (at most\n"
     "RX_QUEUE_LEN, which every sender shares; 0 is refused).",
     offsetof(uct_rc_iface_config_t, fc_wnd_size), UCS_CONFIG_TYPE_UINT},

    {"RX_QUEUE_LEN", "256",
     "Receive queue length of each QP (rounded up to a power of two; above the\n"
     "device's queue size clamped with a warning; 0 is refused).",
     offsetof(uct_rc_iface_config_t, rx_queue_len), UCS_CONFIG_TYPE_UINT},

    UCS_CONFIG_EMPTY_FIELD
};

ucs_config_field_t uct_rc_mlx5_iface_config_table[] = {
    {UCT_IB_CONFIG_PREFIX, "", "IB interface configuration",
     offsetof(uct_rc_mlx5_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},

    {"RC_", "", "RC configuration",
     offsetof(uct_rc_mlx5_iface_config_t, rc),
     UCS_CONFIG_TYPE_TABLE(uct_rc_iface_config_table)},

    {"TM_ENABLE", "n",
     "Enable hardware tag matching: create the tag-matching command QP, which\n"
     "connects to itself with the interface's GID (DevX only).",
     offsetof(uct_rc_mlx5_iface_config_t, tm_enable), UCS_CONFIG_TYPE_BOOL},

    UCS_CONFIG_EMPTY_FIELD
};

namespace {

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
    uct_rc_mlx5_iface_data_query(iface, attr);
    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_SEND_COMP |
                            UCT_IFACE_FLAG_EVENT_RECV |
                            UCT_IFACE_FLAG_EVENT_FD;
    return UCS_OK;
}

const uct_iface_ops_t uct_rc_mlx5_iface_ops = {
    .ep_create                = uct_rc_mlx5_ep_create,
    .ep_destroy               = uct_rc_mlx5_ep_destroy,
    .ep_get_address           = uct_rc_mlx5_ep_get_address,
    .ep_connect_to_ep_v2      = uct_rc_mlx5_ep_connect_to_ep_v2,
    .iface_close              = iface_close,
    .iface_query              = iface_query,
    .iface_get_device_address = uct_ib_iface_get_device_address,
    .iface_get_address        = uct_iface_get_address_empty,
    .iface_is_reachable_v2    = uct_ib_iface_is_reachable_v2,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_rc_mlx5_iface_data_progress,
    .ep_am_short              = uct_rc_mlx5_ep_am_short,
    .ep_am_short_iov          = uct_rc_mlx5_ep_am_short_iov,
    .ep_am_bcopy              = uct_rc_mlx5_ep_am_bcopy,
    .ep_am_zcopy              = uct_rc_mlx5_ep_am_zcopy,
    .ep_put_short             = uct_rc_mlx5_ep_put_short,
    .ep_put_bcopy             = uct_rc_mlx5_ep_put_bcopy,
    .ep_put_zcopy             = uct_rc_mlx5_ep_put_zcopy,
    .ep_get_short             = uct_ep_get_short_unsupported,
    .ep_get_bcopy             = uct_rc_mlx5_ep_get_bcopy,
    .ep_get_zcopy             = uct_rc_mlx5_ep_get_zcopy,
    .ep_atomic_cswap64        = uct_rc_mlx5_ep_atomic_cswap64,
    .ep_atomic_cswap32        = uct_rc_mlx5_ep_atomic_cswap32,
    .ep_atomic32_post         = uct_rc_mlx5_ep_atomic32_post,
    .ep_atomic64_post         = uct_rc_mlx5_ep_atomic64_post,
    .ep_atomic32_fetch        = uct_rc_mlx5_ep_atomic32_fetch,
    .ep_atomic64_fetch        = uct_rc_mlx5_ep_atomic64_fetch,
    .ep_pending_add           = uct_rc_mlx5_ep_pending_add,
    .ep_pending_purge         = uct_rc_mlx5_ep_pending_purge,
    .ep_flush                 = uct_rc_mlx5_ep_flush,
    .ep_fence                 = uct_rc_mlx5_ep_fence,
    .ep_check                 = uct_ep_check_unsupported,
    .iface_flush              = uct_rc_mlx5_iface_flush,
    .iface_fence              = uct_rc_mlx5_iface_fence,
    .iface_event_fd_get       = uct_rc_mlx5_iface_event_fd_get,
    .iface_event_arm          = uct_rc_mlx5_iface_event_arm
};

ucs_status_t devx_init(uct_rc_mlx5_iface *iface, const uct_rc_iface_config_t *rc)
{
    const uct_ib_device          &dev  = *iface->md->dev;
    uct_rc_mlx5_connect_config_t timers = {rc->timeout, rc->retry_count,
                                           rc->rnr_timeout,
                                           rc->rnr_retry_count};
    uct_ib_mlx5_devx_uar         *uar;
    ucs_status_t                 status;

    status = uct_rc_mlx5_iface_common_init(&iface->common, &dev, iface->port_num,
                                           iface->md->pd, &iface->gid_info,
                                           &iface->path, &timers);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_ib_mlx5_get_pdn(dev, iface->port_num, iface->md->pd,
                                 &iface->pdn);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_ib_mlx5_devx_uar::create(dev, iface->port_num, &uar);
    if (status != UCS_OK) {
        return status;
    }
    iface->uar.reset(uar);
    return UCS_OK;
}

/* The RC knobs, checked against the device (HCA caps with DevX) */
ucs_status_t check_config(uct_rc_mlx5_iface *iface,
                          const uct_rc_iface_config_t *rc_config)
{
    const uct_ib_device  &dev  = *iface->md->dev;
    const ibv_device_attr &attr = dev.attr();
    uct_rc_mlx5_limits_t limits;
    ucs_status_t         status;

    if (iface->devx) {
        uct_ib_mlx5_hca_caps_t caps;

        status = uct_ib_mlx5_query_hca_caps(dev.context(),
                                            iface->dev_name.c_str(),
                                            UCS_LOG_LEVEL_ERROR, &caps);
        if (status != UCS_OK) {
            return status;
        }
        /* each send may take UCT_RC_MLX5_TX_BBS_PER_OP basic blocks */
        limits.max_tx_queue_len = (1u << std::min(caps.log_max_qp_sz, 31u)) /
                                  UCT_RC_MLX5_TX_BBS_PER_OP;
        limits.max_rd_atomic = 1u << std::min({caps.log_max_ra_req_qp,
                                               caps.log_max_ra_res_qp, 31u});
    } else {
        /* a power of two at most max_qp_wr */
        limits.max_tx_queue_len = 1u << ucs_ilog2(std::max(attr.max_qp_wr, 1));
        limits.max_rd_atomic = std::max(std::min(attr.max_qp_rd_atom,
                                                 attr.max_qp_init_rd_atom), 1);
    }

    /* both receive from an SRQ */
    limits.max_rx_queue_len = 1u << ucs_ilog2(std::max(attr.max_srq_wr, 1));

    status = uct_rc_mlx5_check_config(iface->dev_name.c_str(), &limits,
                                      rc_config, &iface->rc);
    if (status != UCS_OK) {
        return status;
    }

    const uct_rc_mlx5_connect_config_t timers = {iface->rc.timeout,
                                                 iface->rc.retry_count,
                                                 iface->rc.rnr_timeout,
                                                 iface->rc.rnr_retry_count};
    iface->timers = uct_rc_mlx5_encode_timers(&timers);
    return UCS_OK;
}

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *tl_config, bool devx,
                        uct_iface_h *iface_p)
{
    auto              *config = reinterpret_cast<const uct_rc_mlx5_iface_config_t*>(tl_config);
    uct_rc_mlx5_iface *iface;
    ucs_status_t      status;

    iface = new (std::nothrow) uct_rc_mlx5_iface();
    if (iface == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_rc_mlx5_iface_init(iface, &uct_rc_mlx5_iface_ops,
                                    devx ? "rc_mlx5" : "rc_verbs", md, worker,
                                    params, &config->super, &config->rc, devx);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }

    status = uct_rc_mlx5_iface_data_init(iface);
    if (status != UCS_OK) {
        iface_close(iface);
        return status;
    }

    if (devx && config->tm_enable) {
        status = uct_rc_mlx5_iface_tm_init(iface);
        if (status != UCS_OK) {
            iface_close(iface);
            return status;
        }
    } else if (config->tm_enable) {
        ucs_debug("%s: tag matching needs DevX; rc_verbs runs without it",
                  iface->dev_name.c_str());
    }

    *iface_p = iface;
    return UCS_OK;
}

ucs_status_t rc_mlx5_iface_open(uct_md_h md, uct_worker_h worker,
                                const uct_iface_params_t *params,
                                const uct_iface_config_t *config,
                                uct_iface_h *iface_p)
{
    return iface_open(md, worker, params, config, true, iface_p);
}

ucs_status_t rc_verbs_iface_open(uct_md_h md, uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *config,
                                 uct_iface_h *iface_p)
{
    return iface_open(md, worker, params, config, false, iface_p);
}

bool any_port(const uct_ib_md *, uint8_t)
{
    return true;
}

ucs_status_t rc_verbs_query_devices(uct_md_h md, uct_tl_device_resource_t **devices_p,
                                    unsigned *num_devices_p)
{
    return uct_ib_md_query_tl_devices(md, any_port, devices_p, num_devices_p);
}

uct_tl_t uct_rc_mlx5_tl = {
    .name          = "rc_mlx5",
    .query_devices = uct_rc_mlx5_query_devx_devices,
    .iface_open    = rc_mlx5_iface_open,
    .config        = {"RC_MLX5 transport", "RC_MLX5_",
                      uct_rc_mlx5_iface_config_table,
                      sizeof(uct_rc_mlx5_iface_config_t)},
    .next          = nullptr
};
UCT_TL_REGISTER(&uct_rc_mlx5_tl, &uct_ib_component)

uct_tl_t uct_rc_verbs_tl = {
    .name          = "rc_verbs",
    .query_devices = rc_verbs_query_devices,
    .iface_open    = rc_verbs_iface_open,
    .config        = {"RC_VERBS transport", "RC_VERBS_",
                      uct_rc_mlx5_iface_config_table,
                      sizeof(uct_rc_mlx5_iface_config_t)},
    .next          = nullptr
};
UCT_TL_REGISTER(&uct_rc_verbs_tl, &uct_ib_component)

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
                                    const uct_rc_iface_config_t *rc_config,
                                    bool devx)
{
    uct_ib_mlx5_cq      *cq;
    uct_ib_comp_channel *channel;
    ucs_status_t        status;

    status = uct_ib_iface_init(iface, ops, md, worker, params, ib_config);
    if (status != UCS_OK) {
        return status;
    }

    iface->devx = devx;
    status      = check_config(iface, rc_config);
    if (status != UCS_OK) {
        uct_ib_iface_cleanup(iface);
        return status;
    }

    status = uct_ib_comp_channel::create(*iface->md->dev, iface->port_num,
                                         &channel);
    if (status != UCS_OK) {
        uct_rc_mlx5_iface_cleanup(iface);
        return status;
    }
    iface->channel.reset(channel);

    const std::pair<std::unique_ptr<uct_ib_mlx5_cq>*, unsigned> cqs[] = {
        /* twice the send credits: see rc_ep_data.cc */
        {&iface->send_cq, 2 * iface->rc.tx_queue_len},
        {&iface->recv_cq, iface->rc.rx_queue_len}
    };
    for (const auto &slot : cqs) {
        status = uct_ib_mlx5_cq::create(*iface->md->dev, iface->port_num,
                                        slot.second, &cq, channel);
        if (status != UCS_OK) {
            uct_rc_mlx5_iface_cleanup(iface);
            return status;
        }
        slot.first->reset(cq);
    }
    if (devx) {
        /* rc_mlx5 polls both itself */
        iface->tx_cq.init(*iface->send_cq);
        iface->rx_cq.init(*iface->recv_cq);
    }

    if (devx) {
        status = devx_init(iface, &iface->rc);
        if (status != UCS_OK) {
            uct_rc_mlx5_iface_cleanup(iface);
            return status;
        }
    }

    ucs_debug("%s: opened %s iface, GID index %u (%s), mtu %u",
              iface->dev_name.c_str(), tl_name, iface->gid_info.gid_index,
              iface->md->dev->is_port_roce(iface->port_num) ?
              uct_ib_roce_version_str(iface->gid_info.roce_info.ver) : "IB",
              128u << iface->path_mtu);
    return UCS_OK;
}

void uct_rc_mlx5_iface_cleanup(uct_rc_mlx5_iface *iface)
{
    /* QPs before the SRQ, CQs and UAR they use */
    iface->tm_cmd_qp.reset();
    uct_rc_mlx5_iface_data_cleanup(iface);
    iface->uar.reset();
    iface->recv_cq.reset();
    iface->send_cq.reset();
    iface->channel.reset(); /* after the CQs reporting to it */
    uct_ib_iface_cleanup(iface);
}

void uct_rc_mlx5_iface_query(const uct_rc_mlx5_iface *iface,
                             uct_iface_attr_t *attr)
{
    uct_ib_iface_query(iface, attr);
    if (iface->devx && iface->common.eth &&
        iface->common.caps.lag_tx_port_affinity &&
        (iface->common.caps.num_lag_ports > 1)) {
        attr->dev_num_paths = iface->common.caps.num_lag_ports; /* LAG ports */
    }
    attr->cap.flags      = UCT_IFACE_FLAG_CONNECT_TO_EP |
                           UCT_IFACE_FLAG_INTER_NODE;
    attr->ep_addr_len    = UCT_RC_MLX5_EP_ADDR_LEN;
    attr->iface_addr_len = 0;
    attr->latency.c      = 600e-9;
    attr->bandwidth.shared = 0;
    attr->bandwidth.dedicated = (128ul << iface->path_mtu) * 1e6; /* nominal */
    attr->overhead       = 75e-9;
    attr->priority       = 0;
}

static bool uct_rc_mlx5_port_has_devx(const uct_ib_md *md, uint8_t)
{
    return md->dev->devx();
}

ucs_status_t uct_rc_mlx5_query_devx_devices(uct_md_h md,
                                            uct_tl_device_resource_t **devices_p,
                                            unsigned *num_devices_p)
{
    return uct_ib_md_query_tl_devices(md, uct_rc_mlx5_port_has_devx, devices_p,
                                      num_devices_p);
}
