/*
 * Builders of the QP commands: one function per PRM command, each writing a
 * zeroed command buffer. The only code that lays out QP commands.
 *
 * A builder refuses a parameter its PRM field cannot hold (in every build):
 * it logs the device, command and field, and returns UCS_ERR_INVALID_PARAM;
 * the command must not be sent then.
 */
#ifndef UCT_IB_MLX5_QP_CMD_H_
#define UCT_IB_MLX5_QP_CMD_H_

#include "prm.h"

#include <ucs/type/status.h>

#include <cstdint>

using uct_ib_mlx5_create_qp_in_t   = uct_mlx5_prm_buf<uct_mlx5_prm::create_qp_in::layout>;
using uct_ib_mlx5_create_qp_out_t  = uct_mlx5_prm_buf<uct_mlx5_prm::create_qp_out::layout>;
using uct_ib_mlx5_rst2init_in_t    = uct_mlx5_prm_buf<uct_mlx5_prm::rst2init_qp_in::layout>;
using uct_ib_mlx5_init2rtr_in_t    = uct_mlx5_prm_buf<uct_mlx5_prm::init2rtr_qp_in::layout>;
using uct_ib_mlx5_rtr2rts_in_t     = uct_mlx5_prm_buf<uct_mlx5_prm::rtr2rts_qp_in::layout>;
using uct_ib_mlx5_2err_in_t        = uct_mlx5_prm_buf<uct_mlx5_prm::qp_2err_in::layout>;
using uct_ib_mlx5_2rst_in_t        = uct_mlx5_prm_buf<uct_mlx5_prm::qp_2rst_in::layout>;
using uct_ib_mlx5_query_qp_in_t    = uct_mlx5_prm_buf<uct_mlx5_prm::query_qp_in::layout>;
using uct_ib_mlx5_query_qp_out_t   = uct_mlx5_prm_buf<uct_mlx5_prm::query_qp_out::layout>;
/* Every modify command answers with the common output header */
using uct_ib_mlx5_modify_qp_out_t  = uct_mlx5_prm_buf<uct_mlx5_prm::init2rtr_qp_out::layout>;

typedef struct uct_ib_mlx5_create_qp_params {
    uint32_t pdn;
    uint32_t cqn_snd;
    uint32_t cqn_rcv;
    uint32_t uar_page;
    unsigned log_sq_size;      /* WQEBBs */
    unsigned log_rq_size;      /* receive WQEs; ignored without an RQ */
    unsigned log_rq_stride;    /* log2(stride / 16) */
    bool     has_rq;           /* false: zero-length RQ, or the SRQ below */
    uint32_t srqn;             /* without an RQ: receive from this SRQ, if
                                  not 0 */
    uint32_t umem_id;          /* WQ buffer: RQ first, then SQ */
    uint64_t dbr_offset;       /* doorbell record, in the same umem */
} uct_ib_mlx5_create_qp_params_t;

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_create_qp(const char *dev_name,
                            const uct_ib_mlx5_create_qp_params_t *params,
                            uct_ib_mlx5_create_qp_in_t *in);

typedef struct uct_ib_mlx5_rdma_access {
    bool read;
    bool write;
    bool atomic;
} uct_ib_mlx5_rdma_access_t;

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_rst2init(const char *dev_name, uint32_t qpn, uint8_t port_num,
                           uint16_t pkey_index,
                           const uct_ib_mlx5_rdma_access_t *access,
                           uct_ib_mlx5_rst2init_in_t *in);

/* The primary address path of an RC QP, as INIT2RTR programs it. */
typedef struct uct_ib_mlx5_address_path {
    bool     eth;              /* RoCE; else InfiniBand */
    bool     force_loopback;   /* RoCE: the fl bit, no GID and no MAC */
    /* RoCE */
    uint8_t  rmac[6];
    bool     roce_v2;
    uint16_t udp_sport;        /* RoCEv2 */
    uint8_t  dscp;             /* RoCEv2 */
    uint8_t  eth_prio;
    /* InfiniBand */
    uint16_t rlid;
    uint8_t  mlid;             /* source path bits */
    uint8_t  sl;
    bool     grh;
    /* with a GRH, and always on RoCE (unless force_loopback) */
    uint8_t  rgid[16];
    uint8_t  src_addr_index;
    uint8_t  hop_limit;
    uint8_t  tclass;
} uct_ib_mlx5_address_path_t;

typedef struct uct_ib_mlx5_init2rtr_params {
    uint32_t                   qpn;
    uint32_t                   remote_qpn;
    uint8_t                    port_num;
    unsigned                   mtu;          /* UCT_MLX5_MTU_* */
    unsigned                   log_msg_max;
    unsigned                   log_rra_max;  /* responder read/atomic depth */
    unsigned                   min_rnr_nak;
    /* LAG port the QP sends from (1..num_lag_ports); 0: no affinity */
    unsigned                   lag_tx_port_affinity;
    /* remote atomics also set qpc.atomic_mode (extended, up to 8 bytes) */
    uct_ib_mlx5_rdma_access_t  access;
    uct_ib_mlx5_address_path_t path;
} uct_ib_mlx5_init2rtr_params_t;

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_init2rtr(const char *dev_name,
                           const uct_ib_mlx5_init2rtr_params_t *params,
                           uct_ib_mlx5_init2rtr_in_t *in);

typedef struct uct_ib_mlx5_rtr2rts_params {
    uint32_t qpn;
    unsigned retry_count;
    unsigned rnr_retry;
    unsigned ack_timeout;      /* 4.096 us * 2^timeout */
    unsigned log_sra_max;      /* requester read/atomic depth */
} uct_ib_mlx5_rtr2rts_params_t;

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_rtr2rts(const char *dev_name,
                          const uct_ib_mlx5_rtr2rts_params_t *params,
                          uct_ib_mlx5_rtr2rts_in_t *in);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_2rst(const char *dev_name, uint32_t qpn,
                       uct_ib_mlx5_2rst_in_t *in);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_2err(const char *dev_name, uint32_t qpn,
                       uct_ib_mlx5_2err_in_t *in);

[[nodiscard]] ucs_status_t
uct_ib_mlx5_build_query_qp(const char *dev_name, uint32_t qpn,
                           uct_ib_mlx5_query_qp_in_t *in);

#endif
