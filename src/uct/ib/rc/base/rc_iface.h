/*
 * The transport-neutral part of an RC interface, on which rc_mlx5
 * (mlx5/rc/) and rc_verbs (rc/verbs/) build theirs: the RC knobs and their
 * check, the timers they encode, the completion channel and the event
 * protocol, and the data path state every RC transport keeps alike (bounce
 * buffers, endpoints by QP number, send CQ credits, flow control
 * thresholds). What differs between the transports the neutral code asks
 * through uct_rc_iface_ops_t: the device's limits, what a work request
 * costs the send queue and how it is posted, how the CQs are armed.
 *
 * rc/base/ may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_IFACE_H_
#define UCT_RC_IFACE_H_

#include "rc_buf_pool.h"
#include "rc_data.h"
#include "rc_ep_table.h"
#include "rc_timers.h"

#include <uct/ib/base/ib_comp_channel.h>
#include <uct/ib/base/ib_iface.h>

#include <memory>
#include <utility>

/* RC knobs shared by the RC transports (prefix "RC_") */
typedef struct uct_rc_iface_config {
    double   timeout;          /* TIMEOUT */
    unsigned retry_count;      /* RETRY_COUNT */
    double   rnr_timeout;      /* RNR_TIMEOUT */
    unsigned rnr_retry_count;  /* RNR_RETRY_COUNT */
    unsigned max_rd_atomic;    /* MAX_RD_ATOMIC */
    unsigned tx_queue_len;     /* TX_QUEUE_LEN */
    unsigned rx_queue_len;     /* RX_QUEUE_LEN */
    int      fc_enable;        /* FC_ENABLE */
    unsigned long fc_wnd_size; /* FC_WND_SIZE (auto: RX_QUEUE_LEN) */
    unsigned tx_cq_moderation; /* TX_CQ_MODERATION */
} uct_rc_iface_config_t;

extern ucs_config_field_t uct_rc_iface_config_table[];

/* The table of rc_mlx5 and rc_verbs; tag matching needs DevX, rc_verbs
 * accepts the knob and runs without it */
typedef struct uct_rc_iface_common_config {
    uct_ib_iface_config_t super;      /* "IB_" */
    uct_rc_iface_config_t rc;         /* "RC_" */
    int                   tm_enable;  /* TM_ENABLE */
} uct_rc_iface_common_config_t;

extern ucs_config_field_t uct_rc_iface_common_config_table[];

/* What the device allows the RC knobs to ask for (the receive queue is an
 * SRQ on every transport: uct_rc_iface_init() fills its limit) */
typedef struct uct_rc_iface_limits {
    unsigned max_tx_queue_len; /* sends per QP, a power of two */
    unsigned max_rx_queue_len; /* receives per SRQ, a power of two */
    unsigned max_rd_atomic;    /* outstanding reads/atomics, both directions */
} uct_rc_iface_limits_t;

/**
 * Check @a config against the QP context and @a limits: queue lengths are
 * rounded up to powers of two and, like MAX_RD_ATOMIC, TIMEOUT and
 * RNR_TIMEOUT, clamped with one warning each to what can be honoured; zero
 * queue lengths or depths and retry counts above 7 are refused
 * (UCS_ERR_INVALID_PARAM). The result goes to @a checked_p.
 */
[[nodiscard]] ucs_status_t
uct_rc_iface_check_config(const char *dev_name,
                          const uct_rc_iface_limits_t *limits,
                          const uct_rc_iface_config_t *config,
                          uct_rc_iface_config_t *checked_p);

/* The largest bcopy segment: every send and receive queue entry has a
 * buffer of this size, so a larger message goes zcopy */
#define UCT_RC_IFACE_MAX_SEG_SIZE (1ul << 20)

/**
 * Check UCX_IB_MAX_BCOPY (@a max_bcopy): more than @a min_seg_size (an active
 * message's header) and at most UCT_RC_IFACE_MAX_SEG_SIZE, else refused
 * (UCS_ERR_INVALID_PARAM) with one error naming the knob and its value.
 */
[[nodiscard]] ucs_status_t
uct_rc_iface_check_max_bcopy(const char *dev_name, size_t max_bcopy,
                             size_t min_seg_size);

struct uct_rc_iface;
struct uct_rc_ep;

/* What an RC transport does for the neutral code */
typedef struct uct_rc_iface_ops {
    /* What the device allows for sends and reads; called once the IB
     * interface is open */
    ucs_status_t (*query_limits)(uct_rc_iface *iface,
                                 uct_rc_iface_limits_t *limits);
    /* The send queue room @a wr takes (basic blocks, or work requests) */
    unsigned     (*wr_cost)(const uct_rc_ep *ep, const uct_rc_wr_t *wr);
    /* Post @a wr at ep->sn and advance ep->sn; the caller checked room */
    ucs_status_t (*post_wr)(uct_rc_ep *ep, const uct_rc_wr_t *wr);
    /* Move the endpoint's QP to the error state (a canceling flush); NULL
     * if the transport leaves it */
    void         (*ep_to_error)(uct_rc_ep *ep);
    /* The completion channel reported an event of @a cq; may be NULL */
    void         (*cq_event)(uct_rc_iface *iface, struct ibv_cq *cq);
    /* Arm the send CQ, or the receive CQ (for solicited completions only
     * with @a solicited), for one event; UCS_ERR_BUSY if a completion is
     * there to be polled first */
    ucs_status_t (*arm_cq)(uct_rc_iface *iface, bool send, bool solicited);
} uct_rc_iface_ops_t;

struct uct_rc_iface : uct_ib_iface {
    const uct_rc_iface_ops_t             *rc_ops = nullptr;
    uct_rc_iface_config_t                rc;       /* checked knobs */
    uct_rc_timers_t                      timers;   /* rc's timers, encoded */
    std::unique_ptr<uct_ib_comp_channel> channel;  /* events of both CQs */

    /* What the transport's work requests can do */
    bool                                 masked_atomics = false; /* 4-byte
                                                      and logical atomics */
    bool                                 inline_with_sge = false; /* inline
                                                      data and a gather list
                                                      in one request */
    unsigned                             log_max_msg = 0; /* 0: unknown */

    /* Data path */
    std::unique_ptr<uct_rc_buf_pool>     tx_bufs;  /* bcopy bounce buffers */
    uct_rc_ep_table                      eps_by_qpn;
    bool                                 dispatch_due = false; /* pending
                                                      requests or grants */
    size_t                               seg_size = 0; /* bcopy, header incl. */
    unsigned                             max_inline = 0;
    unsigned                             tx_cq_avail = 0; /* send CQ room */
    unsigned                             tx_cq_low = 0;   /* half of it */
    int                                  fc_soft_thresh = 0; /* window left: */
    int                                  fc_hard_thresh = 0; /* ask a grant */
};

/* Completions polled per progress call */
constexpr unsigned UCT_RC_IFACE_PROGRESS_BATCH = 16;

/**
 * Initialise the RC part of @a iface: the IB interface on the port
 * @a params names, the RC knobs checked against the limits the transport
 * (@a rc_ops) reports, the timers they encode and the completion channel.
 * On failure everything is released again; the caller only frees @a iface.
 */
[[nodiscard]] ucs_status_t
uct_rc_iface_init(uct_rc_iface *iface, const uct_iface_ops_t *ops,
                  const uct_rc_iface_ops_t *rc_ops, uct_md_h md,
                  uct_worker_h worker, const uct_iface_params_t *params,
                  const uct_ib_iface_config_t *ib_config,
                  const uct_rc_iface_config_t *rc_config);

/**
 * The send and the receive CQ of @a iface, reporting to its channel, made
 * by the transport's CQ class: the send CQ holds twice the send credits (a
 * completion of an endpoint destroyed meanwhile, whose credits came back
 * then, still fits), the receive CQ a completion per receive.
 */
template <typename Cq>
[[nodiscard]] ucs_status_t
uct_rc_iface_create_cqs(uct_rc_iface *iface, std::unique_ptr<Cq> *send_cq_p,
                        std::unique_ptr<Cq> *recv_cq_p)
{
    const std::pair<std::unique_ptr<Cq>*, unsigned> cqs[] = {
        {send_cq_p, 2 * iface->rc.tx_queue_len},
        {recv_cq_p, iface->rc.rx_queue_len}
    };
    Cq           *cq;
    ucs_status_t status;

    for (const auto &slot : cqs) {
        status = Cq::create(*iface->md->dev, iface->port_num, slot.second, &cq,
                            iface->channel.get());
        if (status != UCS_OK) {
            return status;
        }
        slot.first->reset(cq);
    }
    return UCS_OK;
}

/** Undo uct_rc_iface_init(), once the CQs reporting to the channel are
 *  gone. */
void uct_rc_iface_cleanup(uct_rc_iface *iface);

/** The debug line of an interface of @a tl_name that opened. */
void uct_rc_iface_opened(const uct_rc_iface *iface, const char *tl_name);

/** What every RC interface reports; a transport adjusts it. */
void uct_rc_iface_query(const uct_rc_iface *iface, uct_iface_attr_t *attr);

/** The data path's resources every RC transport has: the bounce buffers
 *  and the credits; the transport adds its receive side. */
[[nodiscard]] ucs_status_t uct_rc_iface_data_init(uct_rc_iface *iface);
void uct_rc_iface_data_cleanup(uct_rc_iface *iface);

/** The data path's capabilities, and its completion events. */
void uct_rc_iface_data_query(const uct_rc_iface *iface,
                             uct_iface_attr_t *attr);

/** A completion @a c of the send queue, as a transport reports one it did
 *  not take itself (an error, or every one of rc_verbs): its endpoint's
 *  room back, its operations retired or the endpoint failed. */
void uct_rc_iface_complete(uct_rc_iface *iface, const uct_rc_completion_t &c);

/** Grants and pending requests of every endpoint that has some. */
void uct_rc_iface_dispatch_pending(uct_rc_iface *iface);

/* Interface slots (rc_events.cc, rc_ep_flush.cc) */
ucs_status_t uct_rc_iface_event_fd_get(uct_iface_h iface, int *fd_p);
ucs_status_t uct_rc_iface_event_arm(uct_iface_h iface, unsigned events);
ucs_status_t uct_rc_iface_flush(uct_iface_h iface, unsigned flags,
                                uct_completion_t *comp);
ucs_status_t uct_rc_iface_fence(uct_iface_h iface, unsigned flags);

#endif
