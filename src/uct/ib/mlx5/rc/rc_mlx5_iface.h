/*
 * The rc_mlx5 transport (DevX RC QPs) and rc_verbs (verbs RC QPs, for
 * devices without DevX): one interface implementation, two transports.
 * rc_gda (gdaki/) and gga_mlx5 (gga/) build their interfaces on it too.
 */
#ifndef UCT_RC_MLX5_IFACE_H_
#define UCT_RC_MLX5_IFACE_H_

#include "rc_mlx5_common.h"

#include <uct/ib/base/ib_iface.h>
#include <uct/ib/base/ib_verbs_qp.h>
#include <uct/ib/mlx5/dv/dv_obj.h>

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
} uct_rc_iface_config_t;

extern ucs_config_field_t uct_rc_iface_config_table[];

/* What the device allows the RC knobs to ask for */
typedef struct uct_rc_mlx5_limits {
    unsigned max_qp_wr;        /* WQEs per queue, a power of two */
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
    std::unique_ptr<uct_ib_mlx5_cq>      send_cq;
    std::unique_ptr<uct_ib_mlx5_cq>      recv_cq;
    std::unique_ptr<uct_ib_mlx5_devx_uar> uar;     /* DevX only */
    uint32_t                             pdn;      /* DevX only */
    std::unique_ptr<uct_ib_mlx5_devx_qp> tm_cmd_qp; /* UCX_RC_MLX5_TM_ENABLE */
};

/* An endpoint owns one QP, DevX or verbs as its interface says */
struct uct_rc_mlx5_ep : uct_ep {
    std::unique_ptr<uct_ib_mlx5_devx_qp> devx_qp;
    std::unique_ptr<uct_ib_verbs_qp>     verbs_qp;
    uint8_t                              path_index = 0; /* UCT_EP_PARAM */
    bool                                 connected = false;
};

#define UCT_RC_MLX5_EP_ADDR_LEN 3 /* the QP number, 24 bits */

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

/** Whether the endpoint's QP reached RTS. */
int uct_rc_mlx5_ep_is_connected(uct_ep_h tl_ep);

/** The QP number of an rc_mlx5/rc_verbs endpoint. */
uint32_t uct_rc_mlx5_ep_qpn(uct_ep_h tl_ep);

#endif
