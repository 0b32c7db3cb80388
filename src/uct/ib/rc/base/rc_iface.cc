/*
 * The neutral part of an RC interface (rc_iface.h): the RC knobs' table,
 * the interface's RC state opened and closed around the transport's, what
 * every RC interface reports, and the data path resources the transports
 * share.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_iface.h"
#include "rc_ep.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

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

    {"FC_WND_SIZE", "auto",
     "Active messages a sender may have outstanding before a grant: at most\n"
     "RX_QUEUE_LEN, which every sender shares (above it clamped with a\n"
     "warning; \"auto\": RX_QUEUE_LEN; 0 is refused).",
     offsetof(uct_rc_iface_config_t, fc_wnd_size), UCS_CONFIG_TYPE_ULUNITS},

    {"TX_CQ_MODERATION", "32",
     "Ask for a send completion once in this many WQEs of an endpoint (at\n"
     "most an eighth of its send queue; 1: every WQE). A WQE with an\n"
     "operation to complete always asks; while half the send CQ's credits\n"
     "are held, one in an eighth of this many does, and the one that takes\n"
     "the last credit; 0 is refused.",
     offsetof(uct_rc_iface_config_t, tx_cq_moderation), UCS_CONFIG_TYPE_UINT},

    {"RX_QUEUE_LEN", "256",
     "Receive queue length of each QP (rounded up to a power of two; above the\n"
     "device's queue size clamped with a warning; 0 is refused).",
     offsetof(uct_rc_iface_config_t, rx_queue_len), UCS_CONFIG_TYPE_UINT},

    UCS_CONFIG_EMPTY_FIELD
};

ucs_config_field_t uct_rc_iface_common_config_table[] = {
    {UCT_IB_CONFIG_PREFIX, "", "IB interface configuration",
     offsetof(uct_rc_iface_common_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},

    {"RC_", "", "RC configuration",
     offsetof(uct_rc_iface_common_config_t, rc),
     UCS_CONFIG_TYPE_TABLE(uct_rc_iface_config_table)},

    {"TM_ENABLE", "n",
     "Enable hardware tag matching: create the tag-matching command QP, which\n"
     "connects to itself with the interface's GID (DevX only).",
     offsetof(uct_rc_iface_common_config_t, tm_enable), UCS_CONFIG_TYPE_BOOL},

    UCS_CONFIG_EMPTY_FIELD
};

ucs_status_t uct_rc_iface_init(uct_rc_iface *iface, const uct_iface_ops_t *ops,
                               const uct_rc_iface_ops_t *rc_ops, uct_md_h md,
                               uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_ib_iface_config_t *ib_config,
                               const uct_rc_iface_config_t *rc_config)
{
    uct_rc_iface_limits_t limits;
    uct_ib_comp_channel   *channel;
    ucs_status_t          status;

    status = uct_ib_iface_init(iface, ops, md, worker, params, ib_config);
    if (status != UCS_OK) {
        return status;
    }

    /* the RC knobs, checked against the device; every RC transport
     * receives from an SRQ */
    iface->rc_ops           = rc_ops;
    limits.max_rx_queue_len = 1u << ucs_ilog2(
                                      std::max(iface->md->dev->attr().max_srq_wr,
                                               1));
    status                  = rc_ops->query_limits(iface, &limits);
    if (status == UCS_OK) {
        status = uct_rc_iface_check_config(iface->dev_name.c_str(), &limits,
                                           rc_config, &iface->rc);
    }
    if (status == UCS_OK) {
        status = uct_rc_iface_check_max_bcopy(iface->dev_name.c_str(),
                                              iface->config.max_bcopy,
                                              sizeof(uct_rc_am_hdr_t));
    }
    if (status != UCS_OK) {
        uct_ib_iface_cleanup(iface);
        return status;
    }

    const uct_rc_timer_config_t timers = {iface->rc.timeout,
                                          iface->rc.retry_count,
                                          iface->rc.rnr_timeout,
                                          iface->rc.rnr_retry_count};
    iface->timers = uct_rc_encode_timers(&timers);

    status = uct_ib_comp_channel::create(*iface->md->dev, iface->port_num,
                                         &channel);
    if (status != UCS_OK) {
        uct_rc_iface_cleanup(iface);
        return status;
    }
    iface->channel.reset(channel);
    return UCS_OK;
}

void uct_rc_iface_cleanup(uct_rc_iface *iface)
{
    iface->channel.reset(); /* after the CQs reporting to it */
    uct_ib_iface_cleanup(iface);
}

void uct_rc_iface_opened(const uct_rc_iface *iface, const char *tl_name)
{
    ucs_debug("%s: opened %s iface, GID index %u (%s), mtu %u",
              iface->dev_name.c_str(), tl_name, iface->gid_info.gid_index,
              iface->md->dev->is_port_roce(iface->port_num) ?
              uct_ib_roce_version_str(iface->gid_info.roce_info.ver) : "IB",
              128u << iface->path_mtu);
}

void uct_rc_iface_query(const uct_rc_iface *iface, uct_iface_attr_t *attr)
{
    uct_ib_iface_query(iface, attr);
    attr->cap.flags      = UCT_IFACE_FLAG_CONNECT_TO_EP |
                           UCT_IFACE_FLAG_INTER_NODE;
    attr->ep_addr_len    = UCT_RC_EP_ADDR_LEN;
    attr->iface_addr_len = 0;
    attr->latency.c      = 600e-9;
    attr->bandwidth.shared = 0;
    attr->bandwidth.dedicated = (128ul << iface->path_mtu) * 1e6; /* nominal */
    attr->overhead       = 75e-9;
    attr->priority       = 0;
}

ucs_status_t uct_rc_iface_data_init(uct_rc_iface *iface)
{
    uct_rc_buf_pool *bufs;
    ucs_status_t    status;

    iface->seg_size    = iface->config.max_bcopy;
    iface->max_inline  = std::min<size_t>(iface->config.max_short,
                                          UCT_RC_EP_MAX_INLINE);
    iface->tx_cq_avail = iface->rc.tx_queue_len;
    iface->tx_cq_low   = iface->rc.tx_queue_len / 2;
    if (iface->rc.fc_enable) {
        /* a window of 1 asks for its grant too */
        iface->fc_soft_thresh = std::max(1, int(iface->rc.fc_wnd_size / 2));
        iface->fc_hard_thresh = int(iface->rc.fc_wnd_size / 4);
    }

    status = uct_rc_buf_pool::create(*iface->md->dev, iface->port_num,
                                     iface->md->pd, iface->seg_size,
                                     iface->rc.tx_queue_len, &bufs);
    if (status != UCS_OK) {
        return status;
    }
    iface->tx_bufs.reset(bufs);
    return UCS_OK;
}

void uct_rc_iface_data_cleanup(uct_rc_iface *iface)
{
    iface->tx_bufs.reset();
}

void uct_rc_iface_data_query(const uct_rc_iface *iface, uct_iface_attr_t *attr)
{
    const size_t max_zcopy = size_t(1) << std::min(iface->log_max_msg ?
                                                   iface->log_max_msg : 30u,
                                                   30u);

    attr->cap.flags |= UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                       UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                       UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                       UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                       UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC |
                       UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;

    attr->cap.am.max_short  = iface->max_inline - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.max_bcopy  = iface->seg_size - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.min_zcopy  = 0;
    attr->cap.am.max_zcopy  = iface->seg_size - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.max_hdr    = iface->max_inline - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.max_iov    = UCT_RC_MAX_SGE;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu  = 128u << iface->path_mtu;

    attr->cap.put.max_short = iface->max_inline;
    attr->cap.put.max_bcopy = iface->seg_size;
    attr->cap.put.min_zcopy = 0;
    attr->cap.put.max_zcopy = max_zcopy;
    attr->cap.put.max_iov   = UCT_RC_MAX_SGE;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu = 128u << iface->path_mtu;

    /* the atomics UCX's RC transports advertise, as they do them */
    const uint64_t ops_post  = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                               UCS_BIT(UCT_ATOMIC_OP_AND) |
                               UCS_BIT(UCT_ATOMIC_OP_OR) |
                               UCS_BIT(UCT_ATOMIC_OP_XOR);
    const uint64_t ops_fetch = ops_post | UCS_BIT(UCT_ATOMIC_OP_SWAP) |
                               UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    attr->cap.flags |= UCT_IFACE_FLAG_ATOMIC_DEVICE;
    if (iface->masked_atomics) {
        attr->cap.atomic32.op_flags  = ops_post;
        attr->cap.atomic32.fop_flags = ops_fetch;
        attr->cap.atomic64.op_flags  = ops_post;
        attr->cap.atomic64.fop_flags = ops_fetch;
    } else {
        attr->cap.atomic64.op_flags  = UCS_BIT(UCT_ATOMIC_OP_ADD);
        attr->cap.atomic64.fop_flags = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                                       UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    }

    attr->cap.get.max_bcopy = iface->seg_size;
    attr->cap.get.min_zcopy = 0;
    attr->cap.get.max_zcopy = max_zcopy;
    attr->cap.get.max_iov   = UCT_RC_MAX_SGE;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu = 128u << iface->path_mtu;

    attr->cap.event_flags = UCT_IFACE_FLAG_EVENT_SEND_COMP |
                            UCT_IFACE_FLAG_EVENT_RECV |
                            UCT_IFACE_FLAG_EVENT_FD;
}
