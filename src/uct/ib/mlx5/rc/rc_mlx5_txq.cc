/*
 * rc_mlx5's send path on the hardware formats of infiniband/mlx5dv.h: WQEs
 * written into the DevX QP's send ring (64-byte basic blocks, segments of
 * 16 bytes, wrapping at the ring's end), the doorbell record then the UAR,
 * and CQE64s polled from the send CQ's ring.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_iface.h"

#include "rc_mlx5_txq.h"

#include <ucs/sys/math.h>

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>

namespace {

constexpr size_t wqebb  = MLX5_SEND_WQE_BB;   /* 64 */
constexpr size_t dsize  = 16;                 /* a WQE segment unit */

uint8_t mlx5_opcode(uct_rc_opcode_t op)
{
    switch (op) {
    case UCT_RC_OP_SEND:       return MLX5_OPCODE_SEND;
    case UCT_RC_OP_RDMA_WRITE: return MLX5_OPCODE_RDMA_WRITE;
    case UCT_RC_OP_RDMA_READ:  return MLX5_OPCODE_RDMA_READ;
    case UCT_RC_OP_ATOMIC_FA:  return MLX5_OPCODE_ATOMIC_FA;
    case UCT_RC_OP_ATOMIC_CS:  return MLX5_OPCODE_ATOMIC_CS;
    case UCT_RC_OP_MASKED_FA:  return MLX5_OPCODE_ATOMIC_MASKED_FA;
    case UCT_RC_OP_MASKED_CS:  return MLX5_OPCODE_ATOMIC_MASKED_CS;
    default:                   return MLX5_OPCODE_NOP;
    }
}

bool has_raddr(uct_rc_opcode_t op)
{
    return op != UCT_RC_OP_SEND && op != UCT_RC_OP_NOP;
}

bool is_masked(uct_rc_opcode_t op)
{
    return (op == UCT_RC_OP_MASKED_FA) || (op == UCT_RC_OP_MASKED_CS);
}

/* The atomic segment(s) of @a wr into @a seg; their length */
size_t atomic_segment(const uct_rc_wr_t *wr, uint8_t *seg)
{
    switch (wr->opcode) {
    case UCT_RC_OP_ATOMIC_FA:
    case UCT_RC_OP_ATOMIC_CS:
        return uct_ib_mlx5_set_atomic_seg(seg, wr->swap_add, wr->compare);
    case UCT_RC_OP_MASKED_CS:
        return uct_ib_mlx5_set_masked_cs_seg(seg, wr->atomic_size,
                                             wr->swap_add, wr->compare,
                                             wr->swap_mask, wr->compare_mask);
    case UCT_RC_OP_MASKED_FA:
        return uct_ib_mlx5_set_masked_fa_seg(seg, wr->atomic_size,
                                             wr->swap_add, wr->compare_mask);
    default:
        return 0;
    }
}

/* The bytes of the atomic segment(s) of @a wr */
size_t atomic_segment_size(const uct_rc_wr_t *wr)
{
    switch (wr->opcode) {
    case UCT_RC_OP_ATOMIC_FA:
    case UCT_RC_OP_ATOMIC_CS:
        return sizeof(struct mlx5_wqe_atomic_seg);
    case UCT_RC_OP_MASKED_CS:
    case UCT_RC_OP_MASKED_FA:
        return uct_ib_mlx5_masked_atomic_seg_size(
                wr->opcode == UCT_RC_OP_MASKED_CS, wr->atomic_size);
    default:
        return 0;
    }
}

/* The bytes of the WQE of @a wr, a multiple of 16 */
size_t wqe_size(const uct_rc_wr_t *wr)
{
    size_t bytes = sizeof(struct mlx5_wqe_ctrl_seg);

    if (has_raddr(wr->opcode)) {
        bytes += sizeof(struct mlx5_wqe_raddr_seg);
    }
    bytes += atomic_segment_size(wr);
    if (wr->inl_hdr_len + wr->inl_data_len > 0) {
        bytes += ucs_align_up(sizeof(struct mlx5_wqe_inl_data_seg) +
                              wr->inl_hdr_len + wr->inl_data_len, dsize);
    }
    return bytes + wr->num_sge * sizeof(struct mlx5_wqe_data_seg);
}

} // namespace

unsigned uct_rc_mlx5_txq_wqe_bbs(const uct_rc_wr_t *wr)
{
    return ucs_align_up(wqe_size(wr), wqebb) / wqebb;
}

unsigned uct_rc_mlx5_txq_wr_cost(const uct_rc_ep *, const uct_rc_wr_t *wr)
{
    return uct_rc_mlx5_txq_wqe_bbs(wr);
}

/* Written in place when the WQE fits before the ring's end; else built
 * aside and copied in two pieces around the end */
void uct_rc_mlx5_txq_post(uct_rc_mlx5_ep *ep, const uct_rc_wr_t *wr)
{
    const uint16_t      pi    = ep->sn;
    const size_t        size  = wqe_size(wr);
    const unsigned      bbs   = ucs_align_up(size, wqebb) / wqebb;
    const size_t        slot  = pi & ep->sq_mask;
    const size_t        room  = (ep->sq_mask + 1 - slot) * wqebb;
    uint8_t             *wqe  = ep->txwq.buf + slot * wqebb;
    alignas(64) uint8_t aside[UCT_RC_MLX5_MAX_WQE_BBS * wqebb];
    uint8_t             *base = (bbs * wqebb <= room) ? wqe : aside;
    uint8_t             *p    = base + sizeof(struct mlx5_wqe_ctrl_seg);
    uint8_t             opmod = 0;
    struct mlx5_wqe_ctrl_seg *ctrl;

    ucs_assertv(bbs <= UCT_RC_MLX5_MAX_WQE_BBS, "a WQE of %u blocks", bbs);

    if (has_raddr(wr->opcode)) {
        p = uct_ib_mlx5_set_raddr_seg(p, wr->remote_addr, wr->rkey);
    }

    if (atomic_segment_size(wr) > 0) {
        p += atomic_segment(wr, p);
        if (is_masked(wr->opcode)) {
            opmod = UCT_MLX5_OPMOD_EXT_ATOMIC(
                    (wr->atomic_size == 4) ? 2 : 3);
        }
    }

    if (wr->inl_hdr_len + wr->inl_data_len > 0) {
        const uint32_t len  = wr->inl_hdr_len + wr->inl_data_len;
        uint8_t        *inl = uct_ib_mlx5_set_inl_seg(p, len);

        memcpy(inl, wr->inl_hdr, wr->inl_hdr_len);
        memcpy(inl + wr->inl_hdr_len, wr->inl_data, wr->inl_data_len);
        p += ucs_align_up(sizeof(struct mlx5_wqe_inl_data_seg) + len, dsize);
    }

    for (unsigned i = 0; i < wr->num_sge; ++i) {
        uct_ib_mlx5_set_data_seg(reinterpret_cast<struct mlx5_wqe_data_seg*>(p),
                                 wr->sge[i].addr, htobe32(wr->sge[i].length),
                                 htobe32(wr->sge[i].lkey));
        p += sizeof(struct mlx5_wqe_data_seg);
    }

    ctrl = reinterpret_cast<struct mlx5_wqe_ctrl_seg*>(base);
    uct_ib_mlx5_set_ctrl_seg(ctrl, &ep->txwq, pi, mlx5_opcode(wr->opcode),
                             opmod, (p - base) / dsize,
                             (wr->signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
                             (wr->fence ? MLX5_WQE_CTRL_FENCE : 0));

    if (base == aside) {
        memcpy(wqe, aside, room);
        memcpy(ep->txwq.buf, aside + room, bbs * wqebb - room);
    }
    uct_rc_mlx5_ring_doorbell(ep, wqe, pi + bbs, bbs);
}

ucs_status_t uct_rc_mlx5_txq_post_wr(uct_rc_ep *ep, const uct_rc_wr_t *wr)
{
    uct_rc_mlx5_txq_post(static_cast<uct_rc_mlx5_ep*>(ep), wr);
    return UCS_OK;
}

void uct_rc_mlx5_txq_error(const struct mlx5_cqe64 *cqe, uct_rc_completion_t *c)
{
    const uint8_t opcode = cqe->op_own >> 4;

    c->qpn        = uct_ib_mlx5_cqe_qpn(cqe);
    c->sn         = be16toh(cqe->wqe_counter);
    c->status     = IBV_WC_GENERAL_ERR;
    c->vendor_err = 0;
    c->syndrome   = 0;
    if (opcode == MLX5_CQE_REQ_ERR) {
        auto *ecqe    = reinterpret_cast<const struct mlx5_err_cqe*>(cqe);
        c->status     = uct_ib_mlx5_wc_status(ecqe->syndrome);
        c->vendor_err = ecqe->vendor_err_synd;
        c->syndrome   = ecqe->syndrome;
    }
}
