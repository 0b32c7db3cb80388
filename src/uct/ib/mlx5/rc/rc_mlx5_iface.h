/*
 * The rc_mlx5 transport (DevX RC QPs) and rc_verbs (verbs RC QPs, for
 * devices without DevX): one interface implementation, two transports.
 * rc_gda (gdaki/) and gga_mlx5 (gga/) build their interfaces on it too.
 */
#ifndef UCT_RC_MLX5_IFACE_H_
#define UCT_RC_MLX5_IFACE_H_

#include "rc_cq.h"
#include "rc_data.h"
#include "rc_ep_table.h"
#include "rc_mlx5_common.h"

#include <uct/ib/base/ib_iface.h>
#include <uct/ib/base/ib_verbs_qp.h>
#include <uct/ib/mlx5/dv/dv_obj.h>

#include <deque>
#include <memory>

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
    unsigned fc_wnd_size;      /* FC_WND_SIZE */
} uct_rc_iface_config_t;

extern ucs_config_field_t uct_rc_iface_config_table[];

/* What the device allows the RC knobs to ask for */
typedef struct uct_rc_mlx5_limits {
    unsigned max_tx_queue_len; /* sends per QP, a power of two */
    unsigned max_rx_queue_len; /* receives per SRQ, a power of two */
    unsigned max_rd_atomic;    /* outstanding reads/atomics, both directions */
} uct_rc_mlx5_limits_t;

/**
 * Check @a config against the QP context and @a limits: queue lengths are
 * rounded up to powers of two and, like MAX_RD_ATOMIC, TIMEOUT and
 * RNR_TIMEOUT, clamped with one warning each to what can be honoured; zero
 * queue lengths or depths and retry counts above 7 are refused
 * (UCS_ERR_INVALID_PARAM). The result goes to @a checked_p.
 */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_check_config(const char *dev_name, const uct_rc_mlx5_limits_t *limits,
                         const uct_rc_iface_config_t *config,
                         uct_rc_iface_config_t *checked_p);

typedef struct uct_rc_mlx5_iface_config {
    uct_ib_iface_config_t super;   /* "IB_" */
    uct_rc_iface_config_t rc;      /* "RC_" */
    int                   tm_enable;  /* TM_ENABLE */
} uct_rc_mlx5_iface_config_t;

extern ucs_config_field_t uct_rc_mlx5_iface_config_table[];

struct uct_rc_mlx5_iface : uct_ib_iface {
    bool                                 devx;     /* rc_mlx5, else rc_verbs */
    uct_rc_mlx5_iface_common_t           common;   /* for the connect helper */
    uct_rc_iface_config_t                rc;       /* checked knobs */
    uct_rc_mlx5_timers_t                 timers;   /* rc's timers, encoded */
    std::unique_ptr<uct_ib_comp_channel> channel;  /* events of both CQs */
    std::unique_ptr<uct_ib_mlx5_cq>      send_cq;
    std::unique_ptr<uct_ib_mlx5_cq>      recv_cq;
    std::unique_ptr<uct_ib_mlx5_devx_uar> uar;     /* DevX only */
    uint32_t                             pdn;      /* DevX only */
    std::unique_ptr<uct_ib_mlx5_devx_qp> tm_cmd_qp; /* UCX_RC_MLX5_TM_ENABLE */

    /* Data path (rc_data.h) */
    std::unique_ptr<uct_rc_rx>           rx;       /* the SRQ */
    std::unique_ptr<uct_rc_buf_pool>     tx_bufs;  /* bcopy bounce buffers */
    uct_rc_ep_table                      eps_by_qpn;
    bool                                 dispatch_due = false; /* pending
                                                      requests or grants */
    size_t                               seg_size = 0; /* bcopy, header incl. */
    unsigned                             max_inline = 0;
    unsigned                             tx_cq_avail = 0; /* send CQ room */
    int                                  fc_soft_thresh = 0; /* window left: */
    int                                  fc_hard_thresh = 0; /* ask a grant */
    uct_rc_mlx5_poll_cq                  tx_cq;    /* rc_mlx5 polls it */
    uct_rc_mlx5_poll_cq                  rx_cq;    /* when rx_direct */
    bool                                 rx_direct = false;
};

/* An endpoint owns one QP, DevX or verbs as its interface says */
struct uct_rc_mlx5_ep : uct_ep {
    std::unique_ptr<uct_ib_mlx5_devx_qp> devx_qp;
    std::unique_ptr<uct_ib_verbs_qp>     verbs_qp;
    uint8_t                              path_index = 0; /* UCT_EP_PARAM */
    bool                                 connected = false;

    /* Data path: operations waiting for their WQE's completion, in the
     * order posted (only those with something to do then); the next WQE
     * index (rc_mlx5) or request number, the last one posted, and the
     * room each WQE takes, by the slot of its first basic block */
    uct_rc_op_ring                       ops;
    uint16_t                             sn = 0;
    uint16_t                             last_sn = 0;
    unsigned                             sq_avail = 0; /* BBs, or WRs */
    std::unique_ptr<uint16_t[]>          wqe_cost;
    uint32_t                             sq_mask = 0;
    /* rc_mlx5: the send ring as the fast path writes it */
    uint8_t                              *sq_buf = nullptr;
    uint32_t                             *sq_dbrec = nullptr;
    uint64_t                             *uar_reg = nullptr;
    uint32_t                             qpn_ds = 0;   /* qpn << 8 */
    bool                                 fence_next = false;
    int                                  fc_wnd = 0;    /* AM credits */
    bool                                 fc_grant_due = false; /* to send */
    ucs_status_t                         failed = UCS_OK; /* once failed */
    std::deque<uct_pending_req_t*>       pending;
    unsigned                             cq_inflight = 0; /* CQEs to come */
    uint32_t                             dest_qpn = 0;    /* once connected */
    struct ibv_ah_attr                   peer_ah  = {};   /* its address */

};

#define UCT_RC_MLX5_EP_ADDR_LEN 3 /* the QP number, 24 bits */

/* In uct_rc_mlx5_ep::wqe_cost: the completion of this WQE retires
 * operations (the rest of the entry is its send queue room) */
constexpr uint16_t UCT_RC_WQE_RETIRES = 0x8000;

/* Send queue basic blocks per TX_QUEUE_LEN entry of a DevX QP: a short or
 * bcopy operation takes one or two, and the ring keeps two WQEs' room */
#define UCT_RC_MLX5_TX_BBS_PER_OP 2

/**
 * Initialise the part of an interface every transport built on this one
 * shares (rc_mlx5, rc_verbs, rc_gda, gga_mlx5): the IB interface on the port
 * @a params names, the send and receive CQs and, with @a devx, the state of
 * the connect helper, the PD number and the UAR. Tag matching is the
 * caller's. @a tl_name only names the transport in the log.
 *
 * On failure everything is released again; the caller only frees @a iface.
 */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_init(uct_rc_mlx5_iface *iface, const uct_iface_ops_t *ops,
                       const char *tl_name, uct_md_h md, uct_worker_h worker,
                       const uct_iface_params_t *params,
                       const uct_ib_iface_config_t *ib_config,
                       const uct_rc_iface_config_t *rc_config, bool devx);

/** Undo uct_rc_mlx5_iface_init() (and the TM command QP, if any). */
void uct_rc_mlx5_iface_cleanup(uct_rc_mlx5_iface *iface);

/** What an rc_mlx5 interface reports; other transports adjust it. */
void uct_rc_mlx5_iface_query(const uct_rc_mlx5_iface *iface,
                             uct_iface_attr_t *attr);

/** A DevX RC QP of @a iface in INIT, ready to be connected. */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_create_devx_qp(uct_rc_mlx5_iface *iface, unsigned sq_len,
                                 unsigned rq_len,
                                 std::unique_ptr<uct_ib_mlx5_devx_qp> *qp_p);

/** The ports of @a md's device if it has DevX (rc_mlx5, rc_gda, gga_mlx5). */
ucs_status_t uct_rc_mlx5_query_devx_devices(uct_md_h md,
                                            uct_tl_device_resource_t **devices_p,
                                            unsigned *num_devices_p);

/** Create and self-connect the tag-matching command QP. */
[[nodiscard]] ucs_status_t uct_rc_mlx5_iface_tm_init(uct_rc_mlx5_iface *iface);

void uct_rc_mlx5_ep_addr_pack(uint32_t qpn, uct_ep_addr_t *addr);
uint32_t uct_rc_mlx5_ep_addr_unpack(const uct_ep_addr_t *addr);

/* Endpoint slots */
ucs_status_t uct_rc_mlx5_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_rc_mlx5_ep_destroy(uct_ep_h tl_ep);
ucs_status_t uct_rc_mlx5_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_rc_mlx5_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                             const uct_device_addr_t *dev_addr,
                                             const uct_ep_addr_t *ep_addr,
                                             const uct_ep_connect_to_ep_params_t *params);

/* Data path (rc_ep_data.cc, rc_mlx5_txq.cc, rc_verbs_txq.cc) */
ucs_status_t uct_rc_mlx5_ep_am_short(uct_ep_h ep, uint8_t id, uint64_t header,
                                     const void *payload, unsigned length);
ucs_status_t uct_rc_mlx5_ep_am_short_iov(uct_ep_h ep, uint8_t id,
                                         const uct_iov_t *iov, size_t iovcnt);
ssize_t      uct_rc_mlx5_ep_am_bcopy(uct_ep_h ep, uint8_t id,
                                     uct_pack_callback_t pack_cb, void *arg,
                                     unsigned flags);
ucs_status_t uct_rc_mlx5_ep_am_zcopy(uct_ep_h ep, uint8_t id,
                                     const void *header, unsigned header_length,
                                     const uct_iov_t *iov, size_t iovcnt,
                                     unsigned flags, uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_put_short(uct_ep_h ep, const void *buffer,
                                      unsigned length, uint64_t remote_addr,
                                      uct_rkey_t rkey);
ssize_t      uct_rc_mlx5_ep_put_bcopy(uct_ep_h ep, uct_pack_callback_t pack_cb,
                                      void *arg, uint64_t remote_addr,
                                      uct_rkey_t rkey);
ucs_status_t uct_rc_mlx5_ep_put_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                      size_t iovcnt, uint64_t remote_addr,
                                      uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_get_bcopy(uct_ep_h ep, uct_unpack_callback_t unpack_cb,
                                      void *arg, size_t length,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_get_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                      size_t iovcnt, uint64_t remote_addr,
                                      uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                           uint64_t swap, uint64_t remote_addr,
                                           uct_rkey_t rkey, uint64_t *result,
                                           uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                           uint32_t swap, uint64_t remote_addr,
                                           uct_rkey_t rkey, uint32_t *result,
                                           uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                          uint64_t value, uint64_t remote_addr,
                                          uct_rkey_t rkey);
ucs_status_t uct_rc_mlx5_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                          uint32_t value, uint64_t remote_addr,
                                          uct_rkey_t rkey);
ucs_status_t uct_rc_mlx5_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                           uint64_t value, uint64_t *result,
                                           uint64_t remote_addr, uct_rkey_t rkey,
                                           uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                           uint32_t value, uint32_t *result,
                                           uint64_t remote_addr, uct_rkey_t rkey,
                                           uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                        unsigned flags);
void         uct_rc_mlx5_ep_pending_purge(uct_ep_h ep,
                                          uct_pending_purge_callback_t cb,
                                          void *arg);
ucs_status_t uct_rc_mlx5_ep_flush(uct_ep_h ep, unsigned flags,
                                  uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_fence(uct_ep_h ep, unsigned flags);
ucs_status_t uct_rc_mlx5_iface_flush(uct_iface_h iface, unsigned flags,
                                     uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_iface_fence(uct_iface_h iface, unsigned flags);
ucs_status_t uct_rc_mlx5_iface_data_init(uct_rc_mlx5_iface *iface);
void         uct_rc_mlx5_iface_data_cleanup(uct_rc_mlx5_iface *iface);
unsigned     uct_rc_mlx5_iface_data_progress(uct_iface_h tl_iface);
void         uct_rc_mlx5_iface_data_query(const uct_rc_mlx5_iface *iface,
                                          uct_iface_attr_t *attr);
[[nodiscard]] ucs_status_t uct_rc_mlx5_ep_data_init(uct_rc_mlx5_ep *ep);
/** Flow control bits @a fc arrived on the QP @a qpn of @a iface */
void         uct_rc_mlx5_ep_fc_received(uct_rc_mlx5_iface *iface, uint32_t qpn,
                                        uint8_t fc);
void         uct_rc_mlx5_ep_data_cleanup(uct_rc_mlx5_ep *ep);

unsigned uct_rc_mlx5_txq_wqe_bbs(const uct_rc_wr_t *wr);
void     uct_rc_mlx5_txq_post(uct_rc_mlx5_ep *ep, const uct_rc_wr_t *wr);
unsigned uct_rc_mlx5_txq_poll(uct_rc_mlx5_iface *iface,
                              uct_rc_completion_t *comps, unsigned max);
ucs_status_t uct_rc_verbs_txq_post(uct_rc_mlx5_ep *ep, const uct_rc_wr_t *wr);
unsigned uct_rc_verbs_txq_poll(uct_rc_mlx5_iface *iface,
                               uct_rc_completion_t *comps, unsigned max);

/* Completion events (rc_events.cc) */
ucs_status_t uct_rc_mlx5_iface_event_fd_get(uct_iface_h iface, int *fd_p);
ucs_status_t uct_rc_mlx5_iface_event_arm(uct_iface_h iface, unsigned events);

/** Whether the endpoint's QP reached RTS. */
int uct_rc_mlx5_ep_is_connected(uct_ep_h tl_ep);

/** The QP number of an rc_mlx5/rc_verbs endpoint. */
uint32_t uct_rc_mlx5_ep_qpn(uct_ep_h tl_ep);

#endif
