/*
 * The hot part of rc_mlx5's send path, inline: a short operation (control
 * segment, an optional remote address segment, inline data) or one data
 * segment written in place into the send ring with the mlx5 common layer's
 * segment builders, then the doorbell. Everything else builds a uct_rc_wr_t
 * for uct_rc_mlx5_txq_post().
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#ifndef UCT_RC_MLX5_TXQ_H_
#define UCT_RC_MLX5_TXQ_H_

#include "rc_mlx5_iface.h"

#include <uct/ib/mlx5/ib_mlx5.inl>
#include <ucs/sys/compiler_def.h>

/* The largest WQE written: control, remote address, atomic (32 bytes),
 * 512 bytes inline and 5 data segments fit 11 basic blocks */
#define UCT_RC_MLX5_MAX_WQE_BBS 16

/** What an error (or unexpected) send CQE reports. */
void uct_rc_mlx5_txq_error(const struct mlx5_cqe64 *cqe,
                           uct_rc_completion_t *c);

/** The WQE of @a bbs basic blocks at @a wqe is complete, the ring's
 *  producer index is @a sn: ring the doorbell. */
static inline void uct_rc_mlx5_ring_doorbell(uct_rc_mlx5_ep *ep,
                                             const uint8_t *wqe, uint16_t sn,
                                             unsigned bbs)
{
    ep->sn = sn;
    uct_ib_mlx5_ring_doorbell(&ep->txwq, wqe, sn, bbs);
}

/** Basic blocks of a short WQE: control [+ remote address] + @a length
 *  bytes inline. */
static inline unsigned uct_rc_mlx5_inline_bbs(bool raddr, unsigned length)
{
    const unsigned size = sizeof(struct mlx5_wqe_ctrl_seg) +
                          (raddr ? sizeof(struct mlx5_wqe_raddr_seg) : 0) +
                          ((sizeof(struct mlx5_wqe_inl_data_seg) + length +
                            15) & ~15u);

    return (size + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
}

/** Whether @a bbs blocks from the producer index fit before the ring's
 *  end (else the WQE wraps: uct_rc_mlx5_txq_post() writes it). */
static inline bool uct_rc_mlx5_fits(const uct_rc_mlx5_ep *ep, unsigned bbs)
{
    return (ep->sn & ep->sq_mask) + bbs <= ep->sq_mask + 1;
}

/**
 * Write and post a short WQE of @a bbs blocks (it fits before the ring's
 * end): @a opcode, with @a raddr/@a rkey for RDMA, and inline the active
 * message header (@a am_hdr, then the 8 bytes of @a header) if @a Am, then
 * @a length bytes of @a data.
 */
template <bool Am, bool Raddr>
static inline void
uct_rc_mlx5_post_short(uct_rc_mlx5_iface *iface, uct_rc_mlx5_ep *ep,
                       uint8_t opcode, uint64_t raddr, uint32_t rkey,
                       uint8_t am_hdr, uint64_t header, const void *data,
                       unsigned length, unsigned bbs)
{
    constexpr unsigned HdrLen = Am ? 1 + sizeof(header) : 0;
    const uint16_t     sn   = ep->sn;
    uint8_t            *wqe = ep->txwq.buf + (sn & ep->sq_mask) *
                                             MLX5_SEND_WQE_BB;
    uint8_t            *p   = wqe + sizeof(struct mlx5_wqe_ctrl_seg);
    unsigned           ds;

    if (Raddr) {
        p = uct_ib_mlx5_set_raddr_seg(p, raddr, rkey);
    }

    p = uct_ib_mlx5_set_inl_seg(p, HdrLen + length);
    if (Am) {
        p[0] = am_hdr;
        memcpy(p + 1, &header, sizeof(header));
    }
    if (!Am || (length > 0)) { /* an active message may be its header */
        uct_ib_mlx5_inline_copy(p + HdrLen, data, length);
    }
    ds = (sizeof(struct mlx5_wqe_ctrl_seg) +
          (Raddr ? sizeof(struct mlx5_wqe_raddr_seg) : 0) +
          sizeof(struct mlx5_wqe_inl_data_seg) + HdrLen + length + 15) / 16;

    auto *ctrl = reinterpret_cast<struct mlx5_wqe_ctrl_seg*>(wqe);
    const bool signaled = uct_rc_ep_signal_next(iface, ep);
    uct_ib_mlx5_set_ctrl_seg(ctrl, &ep->txwq, sn, opcode, 0, ds,
                             (signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
                             (ep->fence_next ? MLX5_WQE_CTRL_FENCE : 0));

    uct_rc_mlx5_ring_doorbell(ep, wqe, sn + bbs, bbs);
    uct_rc_ep_posted(iface, ep, sn, bbs, signaled);
}

/**
 * Write and post a WQE of one basic block: @a opcode, with @a raddr/@a rkey
 * for RDMA, a standard atomic segment (@a swap_add, @a compare) if
 * @a Atomic, and one data segment of @a length bytes at @a buf (its key
 * @a lkey_be, big endian) of the bounce buffers, which the completion gives
 * back; the operation it retires, to which the caller may add.
 */
template <bool Raddr, bool Atomic = false>
static inline uct_rc_op_t &
uct_rc_mlx5_post_data(uct_rc_mlx5_iface *iface, uct_rc_mlx5_ep *ep,
                      uint8_t opcode, uint64_t raddr, uint32_t rkey,
                      void *buf, uint32_t length, uint32_t lkey_be,
                      uint64_t swap_add = 0, uint64_t compare = 0)
{
    const uint16_t sn   = ep->sn;
    uint8_t        *wqe = ep->txwq.buf + (sn & ep->sq_mask) * MLX5_SEND_WQE_BB;
    auto           *ctrl = reinterpret_cast<struct mlx5_wqe_ctrl_seg*>(wqe);
    uint8_t        *p    = wqe + sizeof(*ctrl);
    uct_rc_op_t    *op;

    static_assert(sizeof(struct mlx5_wqe_ctrl_seg) +
                  sizeof(struct mlx5_wqe_raddr_seg) +
                  sizeof(struct mlx5_wqe_atomic_seg) +
                  sizeof(struct mlx5_wqe_data_seg) <= MLX5_SEND_WQE_BB,
                  "one basic block, so it never wraps");

    if (Raddr) {
        p = uct_ib_mlx5_set_raddr_seg(p, raddr, rkey);
    }
    if (Atomic) {
        p += uct_ib_mlx5_set_atomic_seg(p, swap_add, compare);
    }

    uct_ib_mlx5_set_data_seg(reinterpret_cast<struct mlx5_wqe_data_seg*>(p),
                             reinterpret_cast<uintptr_t>(buf), htobe32(length),
                             lkey_be);
    p += sizeof(struct mlx5_wqe_data_seg);

    uct_ib_mlx5_set_ctrl_seg(ctrl, &ep->txwq, sn, opcode, 0, (p - wqe) / 16,
                             MLX5_WQE_CTRL_CQ_UPDATE |
                             (ep->fence_next ? MLX5_WQE_CTRL_FENCE : 0));

    uct_rc_mlx5_ring_doorbell(ep, wqe, sn + 1, 1);
    uct_rc_ep_posted(iface, ep, sn, 1, true); /* it has a buffer to give back */

    /* its completion gives the buffer back */
    op      = &ep->ops.push_back();
    *op     = {};
    op->sn  = sn;
    op->buf = buf;
    return *op;
}

#endif
