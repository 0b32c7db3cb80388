/*
 * A CQ that rc_mlx5 polls itself, as on hardware: CQE64s read from the
 * ring (pre-filled so that an entry is new when its owner bit matches the
 * pass over the ring), the consumer index written to the doorbell record
 * once per batch, and armed for an event by writing the
 * arm dword of the record and ringing the CQ doorbell.
 *
 * Inline: the poll loop runs on every progress call.
 */
#ifndef UCT_RC_CQ_H_
#define UCT_RC_CQ_H_

#include <uct/ib/mlx5/dv/dv_obj.h>
#include <uct/ib/mlx5/dv/wqe_ext.h>

#include <ucs/sys/compiler_def.h>

#include <endian.h>
#include <stdint.h>

struct uct_rc_mlx5_poll_cq {
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
    void init(const uct_ib_mlx5_cq &cq)
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

    /** Whether the device wrote the entry at the consumer index; its body
     *  may be read once this says so. */
    bool ready() const
    {
        const uint8_t op_own = __atomic_load_n(&cqe()->op_own,
                                               __ATOMIC_ACQUIRE);

        return ((op_own ^ owner) & MLX5_CQE_OWNER_MASK) == 0;
    }

    struct mlx5_cqe64 *cqe() const
    {
        return reinterpret_cast<struct mlx5_cqe64*>(next);
    }

    /** The entry at the consumer index is consumed. */
    void advance()
    {
        ++ci;
        next += cqe_size;
        if (ucs_unlikely((ci & mask) == 0)) {
            next   = cqe64;
            owner ^= MLX5_CQE_OWNER_MASK;
        }
    }

    /** The entry at the consumer index if the device wrote it, else NULL. */
    struct mlx5_cqe64 *peek() const
    {
        return ready() ? cqe() : nullptr;
    }

    /** Give the entries consumed so far back to the device. */
    void update_ci() const
    {
        __atomic_store_n(&dbrec[UCT_MLX5_CQ_DBR_SET_CI],
                         htobe32(ci & 0xffffff), __ATOMIC_RELEASE);
    }

    /** Ask for one event on the next completion (@a solicited: the next
     *  solicited or error one) past the consumer index. */
    void arm(bool solicited) const
    {
        const uint32_t cmd = solicited ? MLX5_CQ_DB_REQ_NOT_SOL :
                                         MLX5_CQ_DB_REQ_NOT;
        const uint32_t val = ((arm_sn & 3) << 28) | cmd | (ci & 0xffffff);
        const uint64_t doorbell = (uint64_t(val) << 32) | cqn;

        /* the record before the doorbell that makes the device read it */
        __atomic_store_n(&dbrec[UCT_MLX5_CQ_DBR_ARM], htobe32(val),
                         __ATOMIC_RELEASE);
        __atomic_store_n(reinterpret_cast<uint64_t*>(
                                 static_cast<uint8_t*>(uar) + MLX5_CQ_DOORBELL),
                         htobe64(doorbell), __ATOMIC_RELEASE);
    }
};

#endif
