/*
 * The hot part of rc_mlx5's send path, inline: a short operation (control
 * segment, an optional remote address segment, inline data) written in
 * place into the send ring, the doorbell, and the bookkeeping every post
 * shares. Everything else builds a uct_rc_wr_t for uct_rc_mlx5_txq_post().
 */
#ifndef UCT_RC_MLX5_TXQ_H_
#define UCT_RC_MLX5_TXQ_H_

#include "rc_mlx5_iface.h"

#include <ucs/sys/compiler_def.h>

#include <cstring>
#include <endian.h>

/* The largest WQE written: control, remote address, atomic (32 bytes),
 * 512 bytes inline and 5 data segments fit 11 basic blocks */
#define UCT_RC_MLX5_MAX_WQE_BBS 16

/** What an error (or unexpected) send CQE reports. */
void uct_rc_mlx5_txq_error(const struct mlx5_cqe64 *cqe,
                           uct_rc_completion_t *c);

/** The WQE at @a wqe is complete, the ring's producer index is @a sn:
 *  publish it in the doorbell record, then ring the UAR with its first
 *  8 bytes. */
static inline void uct_rc_mlx5_ring_doorbell(uct_rc_mlx5_ep *ep,
                                             const uint8_t *wqe, uint16_t sn)
{
    uint64_t doorbell;

    ep->sn = sn;
    /* the WQE before the record, the record before the UAR */
    __atomic_store_n(ep->sq_dbrec, htobe32(sn), __ATOMIC_RELEASE);
    memcpy(&doorbell, wqe, sizeof(doorbell));
    __atomic_store_n(ep->uar_reg, doorbell, __ATOMIC_RELEASE);
}

/** A WQE of @a cost that started at @a sn was posted on @a ep. */
static inline void uct_rc_mlx5_ep_posted(uct_rc_mlx5_iface *iface,
                                         uct_rc_mlx5_ep *ep, uint16_t sn,
                                         unsigned cost)
{
    ep->wqe_cost[sn & ep->sq_mask] = static_cast<uint16_t>(cost);
    ep->last_sn    = sn;
    ep->fence_next = false;
    ep->sq_avail  -= cost;
    ++ep->cq_inflight;
    --iface->tx_cq_avail; /* one CQE per WQE: every WQE is signalled */
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

/* A few bytes, without a call for the common small sizes */
static inline void uct_rc_mlx5_copy(uint8_t *dst, const void *src,
                                    unsigned length)
{
    auto *s = static_cast<const uint8_t*>(src);

    if (length > 32) {
        memcpy(dst, s, length);
        return;
    }
    for (; length >= 8; length -= 8, dst += 8, s += 8) {
        memcpy(dst, s, 8);
    }
    for (; length > 0; --length) {
        *dst++ = *s++;
    }
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
    uint8_t            *wqe = ep->sq_buf + (sn & ep->sq_mask) *
                                           MLX5_SEND_WQE_BB;
    uint8_t            *p   = wqe + sizeof(struct mlx5_wqe_ctrl_seg);
    auto               *ctrl = reinterpret_cast<struct mlx5_wqe_ctrl_seg*>(wqe);
    unsigned           ds;

    if (Raddr) {
        auto *seg = reinterpret_cast<struct mlx5_wqe_raddr_seg*>(p);

        seg->raddr    = htobe64(raddr);
        seg->rkey     = htobe32(rkey);
        seg->reserved = 0;
        p            += sizeof(*seg);
    }

    /* a host integer holding a big-endian value, as mlx5dv.h declares */
    reinterpret_cast<struct mlx5_wqe_inl_data_seg*>(p)->byte_count =
            htobe32((HdrLen + length) | MLX5_INLINE_SEG);
    p += sizeof(struct mlx5_wqe_inl_data_seg);
    if (Am) {
        p[0] = am_hdr;
        memcpy(p + 1, &header, sizeof(header));
    }
    uct_rc_mlx5_copy(p + HdrLen, data, length);
    ds = (p + HdrLen + length - wqe + 15) / 16;

    ctrl->opmod_idx_opcode = htobe32((uint32_t(sn) << 8) | opcode);
    ctrl->qpn_ds           = htobe32(ep->qpn_ds | ds);
    ctrl->signature             = 0;
    ctrl->dci_stream_channel_id = 0;
    ctrl->fm_ce_se              = MLX5_WQE_CTRL_CQ_UPDATE |
                                  (ep->fence_next ? MLX5_WQE_CTRL_FENCE : 0);
    ctrl->imm                   = 0;

    uct_rc_mlx5_ring_doorbell(ep, wqe, sn + bbs);
    uct_rc_mlx5_ep_posted(iface, ep, sn, bbs);
}

/**
 * Write and post a WQE of one basic block: @a opcode, with @a raddr/@a rkey
 * for RDMA, and one data segment of @a length bytes at @a buf (its key
 * @a lkey_be, big endian) of the bounce buffers, which the completion gives
 * back.
 */
template <bool Raddr>
static inline void
uct_rc_mlx5_post_data(uct_rc_mlx5_iface *iface, uct_rc_mlx5_ep *ep,
                      uint8_t opcode, uint64_t raddr, uint32_t rkey,
                      void *buf, uint32_t length, uint32_t lkey_be)
{
    const uint16_t sn   = ep->sn;
    uint8_t        *wqe = ep->sq_buf + (sn & ep->sq_mask) * MLX5_SEND_WQE_BB;
    auto           *ctrl = reinterpret_cast<struct mlx5_wqe_ctrl_seg*>(wqe);
    uint8_t        *p    = wqe + sizeof(*ctrl);
    uct_rc_op_t    *op;

    static_assert(sizeof(struct mlx5_wqe_ctrl_seg) +
                  sizeof(struct mlx5_wqe_raddr_seg) +
                  sizeof(struct mlx5_wqe_data_seg) <= MLX5_SEND_WQE_BB,
                  "one basic block, so it never wraps");

    if (Raddr) {
        auto *seg = reinterpret_cast<struct mlx5_wqe_raddr_seg*>(p);

        seg->raddr    = htobe64(raddr);
        seg->rkey     = htobe32(rkey);
        seg->reserved = 0;
        p            += sizeof(*seg);
    }

    auto *dseg       = reinterpret_cast<struct mlx5_wqe_data_seg*>(p);
    dseg->byte_count = htobe32(length);
    dseg->lkey       = lkey_be;
    dseg->addr       = htobe64(reinterpret_cast<uintptr_t>(buf));

    ctrl->opmod_idx_opcode      = htobe32((uint32_t(sn) << 8) | opcode);
    ctrl->qpn_ds                = htobe32(ep->qpn_ds |
                                          ((p + sizeof(*dseg) - wqe) / 16));
    ctrl->signature             = 0;
    ctrl->dci_stream_channel_id = 0;
    ctrl->fm_ce_se              = MLX5_WQE_CTRL_CQ_UPDATE |
                                  (ep->fence_next ? MLX5_WQE_CTRL_FENCE : 0);
    ctrl->imm                   = 0;

    uct_rc_mlx5_ring_doorbell(ep, wqe, sn + 1);
    uct_rc_mlx5_ep_posted(iface, ep, sn, 1);

    /* its completion gives the buffer back */
    op      = &ep->ops.push_back();
    *op     = {};
    op->sn  = sn;
    op->buf = buf;
    ep->wqe_cost[sn & ep->sq_mask] |= UCT_RC_WQE_RETIRES;
}

#endif
