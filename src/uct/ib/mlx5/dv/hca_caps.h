/*
 * The HCA capabilities the transport reads with QUERY_HCA_CAP.
 */
#ifndef UCT_IB_MLX5_HCA_CAPS_H_
#define UCT_IB_MLX5_HCA_CAPS_H_

#include <uct/api/tools/ib_glue.h>
#include <ucs/debug/log_def.h>
#include <ucs/type/status.h>

typedef struct uct_ib_mlx5_hca_caps {
    unsigned port_type;          /* 0 InfiniBand, 1 Ethernet */
    bool     roce;               /* RoCE enabled */
    unsigned log_max_msg;
    unsigned log_max_qp_sz;      /* WQEs (send) / WQEs (receive) per queue */
    /* LAG: a QP may choose its physical port (1..num_lag_ports) */
    bool     lag_tx_port_affinity;
    unsigned num_lag_ports;
    unsigned log_max_ra_req_qp;
    unsigned log_max_ra_res_qp;
    bool     umr_indirect_mkey;  /* UMR may build indirect mkeys */
    /* force loopback of RC QPs (the address path's fl bit) */
    bool     fl_rc_qp_when_roce_enabled;
    bool     fl_rc_qp_when_roce_disabled;
    /* BlueFlame: UARs may be write-combining, registers of this size */
    bool     bf;
    unsigned log_bf_reg_size;
} uct_ib_mlx5_hca_caps_t;

/** Read the general and, on Ethernet, the RoCE capabilities; a failure is
 *  logged at @a fail_level (a probe may want it quiet). */
[[nodiscard]] ucs_status_t
uct_ib_mlx5_query_hca_caps(struct ibv_context *ctx, const char *dev_name,
                           ucs_log_level_t fail_level,
                           uct_ib_mlx5_hca_caps_t *caps_p);

/** Whether an RC QP may loop back with the fl bit, with no GID or MAC. */
bool uct_ib_mlx5_hca_caps_force_loopback(const uct_ib_mlx5_hca_caps_t *caps);

#endif
