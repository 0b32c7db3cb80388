/*
 * The rc_mlx5 transport: the neutral RC interface and endpoints (rc/base/)
 * over DevX RC QPs, whose send rings, SRQ and CQs the library writes and
 * polls itself through the mlx5 common layer (mlx5/ib_mlx5.h). rc_gda
 * (gdaki/) and gga_mlx5 (gga/) build their interfaces on it too.
 *
 * mlx5/rc/ may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#ifndef UCT_RC_MLX5_IFACE_H_
#define UCT_RC_MLX5_IFACE_H_

#include "rc_mlx5_common.h"
#include "rc_mlx5_rx.h"

#include <uct/ib/base/ib_iface.h>
#include <uct/ib/mlx5/ib_mlx5.h>
#include <uct/ib/rc/base/rc_ep.h>
#include <uct/ib/rc/base/rc_iface.h>

#include <memory>

struct uct_rc_mlx5_iface : uct_rc_iface {
    uct_rc_mlx5_iface_common_t           common;   /* for the connect helper */
    std::unique_ptr<uct_ib_mlx5_cq>      send_cq;
    std::unique_ptr<uct_ib_mlx5_cq>      recv_cq;
    std::unique_ptr<uct_ib_mlx5_devx_uar> uar;
    uint32_t                             pdn;
    std::unique_ptr<uct_ib_mlx5_devx_qp> tm_cmd_qp; /* UCX_RC_MLX5_TM_ENABLE */

    /* Data path */
    std::unique_ptr<uct_rc_mlx5_rx>      rx;       /* the SRQ */
    uct_ib_mlx5_poll_cq                  tx_cq;    /* polled by the library */
    uct_ib_mlx5_poll_cq                  rx_cq;    /* so is this one */
};

/* An endpoint owns one DevX QP */
struct uct_rc_mlx5_ep : uct_rc_ep {
    std::unique_ptr<uct_ib_mlx5_devx_qp> devx_qp;
    uct_ib_mlx5_txwq_t                   txwq = {}; /* as the fast path
                                                       writes it */
};

/* rc_mlx5's endpoint address is the RC one: the QP number, 24 bits */
#define UCT_RC_MLX5_EP_ADDR_LEN UCT_RC_EP_ADDR_LEN

static inline void uct_rc_mlx5_ep_addr_pack(uint32_t qpn, uct_ep_addr_t *addr)
{
    uct_rc_ep_addr_pack(qpn, addr);
}

static inline uint32_t uct_rc_mlx5_ep_addr_unpack(const uct_ep_addr_t *addr)
{
    return uct_rc_ep_addr_unpack(addr);
}

/* Send queue basic blocks per TX_QUEUE_LEN entry of a DevX QP: a short or
 * bcopy operation takes one or two, and the ring keeps two WQEs' room */
#define UCT_RC_MLX5_TX_BBS_PER_OP 2

/**
 * Initialise the part of an interface every transport built on this one
 * shares (rc_mlx5, rc_gda, gga_mlx5): the RC interface on the port
 * @a params names, the send and receive CQs, the state of the connect
 * helper, the PD number and the UAR. The data path and tag matching are
 * the caller's. @a tl_name only names the transport in the log.
 *
 * On failure everything is released again; the caller only frees @a iface.
 */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_init(uct_rc_mlx5_iface *iface, const uct_iface_ops_t *ops,
                       const char *tl_name, uct_md_h md, uct_worker_h worker,
                       const uct_iface_params_t *params,
                       const uct_ib_iface_config_t *ib_config,
                       const uct_rc_iface_config_t *rc_config);

/** Undo uct_rc_mlx5_iface_init(), and the data path and the TM command QP
 *  if there are. */
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

/* Endpoint slots (rc_mlx5_ep.cc) */
ucs_status_t uct_rc_mlx5_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);
void uct_rc_mlx5_ep_destroy(uct_ep_h tl_ep);
ucs_status_t uct_rc_mlx5_ep_connect_to_ep_v2(uct_ep_h tl_ep,
                                             const uct_device_addr_t *dev_addr,
                                             const uct_ep_addr_t *ep_addr,
                                             const uct_ep_connect_to_ep_params_t *params);

/* The operations written in place into the send ring (rc_mlx5_ep_data.cc);
 * the others are the neutral ones (rc/base/rc_ep.h) */
ucs_status_t uct_rc_mlx5_ep_am_short(uct_ep_h ep, uint8_t id, uint64_t header,
                                     const void *payload, unsigned length);
ssize_t      uct_rc_mlx5_ep_am_bcopy(uct_ep_h ep, uint8_t id,
                                     uct_pack_callback_t pack_cb, void *arg,
                                     unsigned flags);
ucs_status_t uct_rc_mlx5_ep_put_short(uct_ep_h ep, const void *buffer,
                                      unsigned length, uint64_t remote_addr,
                                      uct_rkey_t rkey);
ucs_status_t uct_rc_mlx5_ep_get_bcopy(uct_ep_h ep,
                                      uct_unpack_callback_t unpack_cb,
                                      void *arg, size_t length,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_mlx5_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                          uint64_t value, uint64_t remote_addr,
                                          uct_rkey_t rkey);
ucs_status_t uct_rc_mlx5_ep_atomic64_fetch(uct_ep_h ep,
                                           uct_atomic_op_t opcode,
                                           uint64_t value, uint64_t *result,
                                           uint64_t remote_addr,
                                           uct_rkey_t rkey,
                                           uct_completion_t *comp);

/* The data path's resources and progress (rc_mlx5_progress.cc) */
[[nodiscard]] ucs_status_t uct_rc_mlx5_iface_data_init(uct_rc_mlx5_iface *iface);
unsigned     uct_rc_mlx5_iface_progress(uct_iface_h tl_iface);

/* The send path (rc_mlx5_txq.cc) */
unsigned     uct_rc_mlx5_txq_wqe_bbs(const uct_rc_wr_t *wr);
unsigned     uct_rc_mlx5_txq_wr_cost(const uct_rc_ep *ep, const uct_rc_wr_t *wr);
void         uct_rc_mlx5_txq_post(uct_rc_mlx5_ep *ep, const uct_rc_wr_t *wr);
ucs_status_t uct_rc_mlx5_txq_post_wr(uct_rc_ep *ep, const uct_rc_wr_t *wr);

#endif
