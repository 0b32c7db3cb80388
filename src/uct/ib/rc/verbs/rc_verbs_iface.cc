/*
 * rc_verbs' interface (rc_verbs.h): the neutral RC interface with CQs
 * polled and armed through the glue, its progress, and the transport's
 * registration on every port of the ib component.
 *
 * Layer rc/verbs: may include rc/base/, ib/base/, mlx5/dv/ (its CQs),
 * uct/base/ and ucs/; never mlx5/rc/.
 */
#include "rc_verbs.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <algorithm>
#include <cerrno>
#include <new>

namespace {

uct_rc_verbs_iface *verbs_iface(uct_iface_h tl_iface)
{
    return static_cast<uct_rc_verbs_iface*>(tl_iface);
}

/* A power of two of send requests at most max_qp_wr, and the device's
 * depth of reads and atomics */
ucs_status_t query_limits(uct_rc_iface *iface, uct_rc_iface_limits_t *limits)
{
    const ibv_device_attr &attr = iface->md->dev->attr();

    limits->max_tx_queue_len = 1u << ucs_ilog2(std::max(attr.max_qp_wr, 1));
    limits->max_rd_atomic    = std::max(std::min(attr.max_qp_rd_atom,
                                                 attr.max_qp_init_rd_atom), 1);
    return UCS_OK;
}

ucs_status_t arm_cq(uct_rc_iface *rc_iface, bool send, bool solicited)
{
    auto                 *iface = static_cast<uct_rc_verbs_iface*>(rc_iface);
    const uct_ib_mlx5_cq &cq    = send ? *iface->send_cq : *iface->recv_cq;
    int                  ret;

    ret = uct_ib_glue->req_notify_cq(cq.cq(), solicited);
    if (ret != 0) {
        errno = ret;
        ucs_error("req_notify_cq(%s, %s cq 0x%x) failed: %m",
                  iface->dev_name.c_str(), send ? "send" : "receive",
                  cq.cqn());
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

const uct_rc_iface_ops_t uct_rc_verbs_iface_rc_ops = {
    .query_limits = query_limits,
    .wr_cost      = uct_rc_verbs_txq_wr_cost,
    .post_wr      = uct_rc_verbs_txq_post,
    .ep_to_error  = nullptr, /* its QP stays as it is */
    .cq_event     = nullptr,
    .arm_cq       = arm_cq
};

/* The send completions, in batches */
unsigned txq_progress(uct_rc_verbs_iface *iface)
{
    uct_rc_completion_t comps[UCT_RC_IFACE_PROGRESS_BATCH];
    unsigned            count;

    count = uct_rc_verbs_txq_poll(iface, comps, UCT_RC_IFACE_PROGRESS_BATCH);
    for (unsigned i = 0; i < count; ++i) {
        uct_rc_iface_complete(iface, comps[i]);
    }
    return count;
}

/* Receives first, as UCX's RC does; then send completions, also after
 * receives once half the send CQ's credits are held (as rc_mlx5) */
unsigned iface_progress(uct_iface_h tl_iface)
{
    uct_rc_verbs_iface  *iface = verbs_iface(tl_iface);
    unsigned            count;

    count = iface->rx->progress(UCT_RC_IFACE_PROGRESS_BATCH);
    if (count > 0) {
        if (ucs_unlikely(iface->tx_cq_avail <= iface->tx_cq_low)) {
            count += txq_progress(iface);
        }
        if (iface->dispatch_due) {
            uct_rc_iface_dispatch_pending(iface); /* a grant may have opened
                                                     a window */
        }
        return count;
    }

    count = txq_progress(iface);
    if ((count > 0) && iface->dispatch_due) {
        uct_rc_iface_dispatch_pending(iface);
    }
    return count;
}

void iface_cleanup(uct_rc_verbs_iface *iface)
{
    /* QPs (the endpoints') before the SRQ and the CQs they use */
    iface->rx.reset();
    uct_rc_iface_data_cleanup(iface);
    iface->recv_cq.reset();
    iface->send_cq.reset();
    uct_rc_iface_cleanup(iface);
}

void iface_close(uct_iface_h tl_iface)
{
    uct_rc_verbs_iface *iface = verbs_iface(tl_iface);

    iface_cleanup(iface);
    delete iface;
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr)
{
    uct_rc_verbs_iface *iface = verbs_iface(tl_iface);

    uct_rc_iface_query(iface, attr);
    uct_rc_iface_data_query(iface, attr);
    return UCS_OK;
}

const uct_iface_ops_t uct_rc_verbs_iface_ops =
        UCT_RC_IFACE_OPS(uct_rc_verbs_ep_create, uct_rc_verbs_ep_destroy,
                         uct_rc_verbs_ep_connect_to_ep_v2, iface_close,
                         iface_query, iface_progress, uct_rc_ep_am_short,
                         uct_rc_ep_am_bcopy, uct_rc_ep_put_short,
                         uct_rc_ep_get_bcopy, uct_rc_ep_atomic64_post,
                         uct_rc_ep_atomic64_fetch);

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *tl_config,
                        uct_iface_h *iface_p)
{
    auto               *config = reinterpret_cast<const uct_rc_iface_common_config_t*>(tl_config);
    uct_rc_verbs_iface *iface;
    uct_rc_verbs_rx    *rx;
    ucs_status_t       status;

    iface = new (std::nothrow) uct_rc_verbs_iface();
    if (iface == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_rc_iface_init(iface, &uct_rc_verbs_iface_ops,
                               &uct_rc_verbs_iface_rc_ops, md, worker, params,
                               &config->super, &config->rc);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }

    status = uct_rc_iface_create_cqs(iface, &iface->send_cq, &iface->recv_cq);
    if (status != UCS_OK) {
        iface_close(iface);
        return status;
    }
    uct_rc_iface_opened(iface, "rc_verbs");

    status = uct_rc_iface_data_init(iface);
    if (status == UCS_OK) {
        status = uct_rc_verbs_rx::create(iface, iface->rc.rx_queue_len,
                                         iface->seg_size, &rx);
    }
    if (status != UCS_OK) {
        iface_close(iface);
        return status;
    }
    iface->rx.reset(rx);

    if (config->tm_enable) {
        ucs_debug("%s: tag matching needs DevX; rc_verbs runs without it",
                  iface->dev_name.c_str());
    }

    *iface_p = iface;
    return UCS_OK;
}

bool any_port(const uct_ib_md *, uint8_t)
{
    return true;
}

ucs_status_t query_devices(uct_md_h md, uct_tl_device_resource_t **devices_p,
                           unsigned *num_devices_p)
{
    return uct_ib_md_query_tl_devices(md, any_port, devices_p, num_devices_p);
}

uct_tl_t uct_rc_verbs_tl = {
    .name          = "rc_verbs",
    .query_devices = query_devices,
    .iface_open    = iface_open,
    .config        = {"RC_VERBS transport", "RC_VERBS_",
                      uct_rc_iface_common_config_table,
                      sizeof(uct_rc_iface_common_config_t)},
    .next          = nullptr
};
UCT_TL_REGISTER(&uct_rc_verbs_tl, &uct_ib_component)

} // namespace
