/*
 * rc_mlx5's receive path (rc_mlx5_rx.h), inline: into the interface's
 * progress (rc_mlx5_progress.cc), which polls the receive CQ on every call,
 * and into the rest of the receive side (rc_mlx5_rx.cc).
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#ifndef UCT_RC_MLX5_RX_INL_
#define UCT_RC_MLX5_RX_INL_

#include "rc_mlx5_rx.h"

#include <uct/ib/mlx5/ib_mlx5.inl>

/* Post @a buf in the next slot in ring order, if the device consumed
 * that slot already; false if it did not */
inline bool uct_rc_mlx5_rx::post_slot(uint8_t *buf)
{
    const uint32_t slot = m_srq_pi & m_srq_mask;

    if (ucs_unlikely(m_slots[slot] != nullptr)) {
        return false; /* completed out of order: its turn comes */
    }

    auto *dseg = reinterpret_cast<struct mlx5_wqe_data_seg*>(
            m_srq_buf + slot * m_srq_stride +
            sizeof(struct mlx5_wqe_srq_next_seg));
    uct_ib_mlx5_set_data_seg(dseg, reinterpret_cast<uintptr_t>(recv_addr(buf)),
                             m_dseg_len, m_dseg_lkey);
    if (ucs_unlikely(m_srq_stride > sizeof(struct mlx5_wqe_srq_next_seg) +
                                    sizeof(*dseg))) {
        /* the list's end */
        uct_ib_mlx5_set_data_seg(&dseg[1], 0, 0, htobe32(MLX5_INVALID_LKEY));
    }
    m_slots[slot] = buf;
    ++m_srq_pi;
    return true;
}

/* The WQEs before the count that lets the device take them */
inline void uct_rc_mlx5_rx::publish()
{
    uct_ib_mlx5_update_dbrec(m_srq_dbrec, m_srq_pi);
}

__attribute__((always_inline)) inline unsigned
uct_rc_mlx5_rx::progress(unsigned max)
{
    unsigned count = 0;

    do {
        const struct mlx5_cqe64 *cqe    = m_cq->cqe();
        const uint32_t          slot    = be16toh(cqe->wqe_counter) &
                                          m_srq_mask;
        uint8_t                 *buf    = m_slots[slot];
        const uint8_t           opcode  = cqe->op_own >> 4;

        m_cq->advance();
        ++count;
        m_slots[slot] = nullptr;
        /* a send arrived: RESP_SEND, or with immediate or invalidation */
        if (ucs_unlikely((uint8_t(opcode - MLX5_CQE_RESP_SEND) > 2) ||
                         (buf == nullptr))) {
            --m_posted;
            rx_error(cqe, buf, slot);
        } else if (!dispatch(buf, be32toh(cqe->byte_cnt),
                             uct_ib_mlx5_cqe_qpn(cqe))) {
            --m_posted; /* kept: a buffer of the pool takes its place */
        } else if (ucs_unlikely(!post_slot(buf))) {
            --m_posted; /* back in the slot it came from, when it may */
            m_bufs->put(buf);
        }
    } while ((count < max) && m_cq->ready());

    m_cq->update_ci();
    if (ucs_unlikely(m_posted < m_queue_len)) {
        refill();
    } else {
        publish();
    }
    return count;
}

#endif
