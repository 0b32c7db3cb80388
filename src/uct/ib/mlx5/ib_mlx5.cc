/*
 * The out-of-line part of the mlx5 common layer (ib_mlx5.h): taking over a
 * CQ's ring and a QP's send queue, and the table of error syndromes.
 *
 * Layer: the mlx5 common layer (ib_mlx5.h says what it may include).
 */
#include "ib_mlx5.h"

void uct_ib_mlx5_poll_cq::init(const uct_ib_mlx5_cq &cq)
{
    const struct mlx5dv_cq &dv = cq.dv();

    dbrec    = reinterpret_cast<uint32_t*>(dv.dbrec);
    uar      = dv.cq_uar;
    cqn      = dv.cqn;
    cqe_cnt  = dv.cqe_cnt;
    cqe_size = dv.cqe_size;
    mask     = cqe_cnt - 1;
    cqe64    = static_cast<uint8_t*>(dv.buf) + cqe_size -
               sizeof(struct mlx5_cqe64);
    next     = cqe64;
    for (uint32_t i = 0; i < cqe_cnt; ++i) {
        reinterpret_cast<struct mlx5_cqe64*>(cqe64 + i * cqe_size)->op_own =
                (MLX5_CQE_INVALID << 4) | MLX5_CQE_OWNER_MASK;
    }
}

void uct_ib_mlx5_txwq_init(uct_ib_mlx5_txwq_t *txwq,
                           const uct_ib_mlx5_devx_qp &qp,
                           uct_ib_mlx5_devx_uar &uar)
{
    txwq->buf    = static_cast<uint8_t*>(qp.sq_buf());
    txwq->dbrec  = &qp.dbrec()[MLX5_SND_DBR];
    txwq->reg    = uar.reg();
    txwq->qpn_ds = qp.qpn() << 8;
}

/* The one table of requester syndromes (mlx5_err_cqe) to verbs statuses */
enum ibv_wc_status uct_ib_mlx5_wc_status(uint8_t syndrome)
{
    switch (syndrome) {
    case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:       return IBV_WC_LOC_LEN_ERR;
    case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:        return IBV_WC_LOC_QP_OP_ERR;
    case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:         return IBV_WC_LOC_PROT_ERR;
    case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:           return IBV_WC_WR_FLUSH_ERR;
    case MLX5_CQE_SYNDROME_MW_BIND_ERR:            return IBV_WC_MW_BIND_ERR;
    case MLX5_CQE_SYNDROME_BAD_RESP_ERR:           return IBV_WC_BAD_RESP_ERR;
    case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:       return IBV_WC_LOC_ACCESS_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:   return IBV_WC_REM_INV_REQ_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:      return IBV_WC_REM_ACCESS_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_OP_ERR:          return IBV_WC_REM_OP_ERR;
    case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR: return IBV_WC_RETRY_EXC_ERR;
    case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:      return IBV_WC_RNR_RETRY_EXC_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:     return IBV_WC_REM_ABORT_ERR;
    default:                                       return IBV_WC_GENERAL_ERR;
    }
}
