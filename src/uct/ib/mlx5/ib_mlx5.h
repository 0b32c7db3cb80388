/*
 * The mlx5 common layer: what a transport that drives mlx5 queues itself
 * shares with any other (rc_mlx5 today; a UD or DC transport would too), in
 * the hardware formats of infiniband/mlx5dv.h and dv/wqe_ext.h: a CQ polled
 * as a ring of CQE64s, a send work queue written WQE by WQE then published
 * through its doorbell record and UAR, WQE segments, and what the syndrome
 * of an error CQE means. It holds no transport state.
 *
 * The inline functions, which the data path calls, are in ib_mlx5.inl.
 *
 * May include mlx5/dv/, ib/base/, ucs/ and rdma-core's headers; never
 * uct/ib/rc/ nor a transport of mlx5/ (rc/, gdaki/, gga/).
 */
#ifndef UCT_IB_MLX5_H_
#define UCT_IB_MLX5_H_

#include <uct/ib/mlx5/dv/devx_qp.h>
#include <uct/ib/mlx5/dv/dv_obj.h>
#include <uct/ib/mlx5/dv/wqe_ext.h>

#include <stdint.h>

/*
 * A CQ the library polls itself, as on hardware: CQE64s read from the ring
 * (pre-filled so that an entry is new when its owner bit matches the pass
 * over the ring), the consumer index written to the doorbell record once
 * per batch, and armed for an event by writing the arm dword of the record
 * and ringing the CQ doorbell.
 */
struct uct_ib_mlx5_poll_cq {
    uint8_t  *next      = nullptr; /* the CQE64 at the consumer index */
    uint8_t  *cqe64     = nullptr; /* the CQE64 of the first entry */
    uint32_t *dbrec     = nullptr;
    void     *uar       = nullptr; /* the CQ doorbell page */
    uint32_t cqn        = 0;
    uint32_t cqe_cnt    = 0;       /* a power of two */
    uint32_t cqe_size   = 0;       /* 64 or 128: the CQE64 is at the end */
    uint32_t mask       = 0;       /* cqe_cnt - 1 */
    uint32_t ci         = 0;       /* entries consumed */
    uint32_t arm_sn     = 0;       /* events received, 2 bits used */
    uint8_t  owner      = 0;       /* of a new entry at ci: the pass's parity */

    /**
     * Take over the fresh @a cq: every entry becomes INVALID with owner 1,
     * so an entry is new exactly when its owner bit is the parity of the
     * pass over the ring (the device writes 0 on the first pass).
     */
    void init(const uct_ib_mlx5_cq &cq);

    /** Whether the device wrote the entry at the consumer index; its body
     *  may be read once this says so. */
    inline bool ready() const;

    inline struct mlx5_cqe64 *cqe() const;

    /** The entry at the consumer index is consumed. */
    inline void advance();

    /** The entry at the consumer index if the device wrote it, else NULL. */
    inline struct mlx5_cqe64 *peek() const;

    /** Give the entries consumed so far back to the device. */
    inline void update_ci() const;

    /** Ask for one event on the next completion (@a solicited: the next
     *  solicited or error one) past the consumer index. */
    inline void arm(bool solicited) const;
};

/* A send work queue as the data path writes it; the producer index and
 * the ring's mask are the transport's */
typedef struct uct_ib_mlx5_txwq {
    uint8_t  *buf;      /* the first basic block of the ring */
    uint32_t *dbrec;    /* the send counter of the doorbell record */
    uct_ib_mlx5_bf_reg_t *reg; /* the UAR register doorbells go to */
    uint32_t qpn_ds;    /* the QP number, where a control segment has it */
} uct_ib_mlx5_txwq_t;

/** The send queue of @a qp, rung through @a uar. */
void uct_ib_mlx5_txwq_init(uct_ib_mlx5_txwq_t *txwq,
                           const uct_ib_mlx5_devx_qp &qp,
                           uct_ib_mlx5_devx_uar &uar);

/** The verbs status that the @a syndrome of an error CQE (mlx5_err_cqe)
 *  stands for; IBV_WC_GENERAL_ERR for one it does not know. */
enum ibv_wc_status uct_ib_mlx5_wc_status(uint8_t syndrome);

#endif
