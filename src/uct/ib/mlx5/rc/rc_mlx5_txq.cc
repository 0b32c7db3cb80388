/*
 * rc_mlx5's send path on the hardware formats of infiniband/mlx5dv.h: WQEs
 * written into the DevX QP's send ring (64-byte basic blocks, segments of
 * 16 bytes, wrapping at the ring's end), the doorbell record then the UAR,
 * and CQE64s polled from the send CQ's ring.
 */
#include "rc_mlx5_iface.h"

#include "rc_mlx5_txq.h"

#include <uct/ib/mlx5/dv/wqe_ext.h>
#include <ucs/sys/math.h>

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>

#include <cstring>
#include <endian.h>

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

/* The one table of requester syndromes (mlx5_err_cqe) to verbs statuses */
enum ibv_wc_status wc_status(uint8_t syndrome)
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

bool has_raddr(uct_rc_opcode_t op)
{
    return op != UCT_RC_OP_SEND && op != UCT_RC_OP_NOP;
}

/* The atomic segment(s) of @a wr into @a seg; their length */
size_t atomic_segment(const uct_rc_wr_t *wr, uint8_t *seg)
{
    switch (wr->opcode) {
    case UCT_RC_OP_ATOMIC_FA:
    case UCT_RC_OP_ATOMIC_CS: {
        struct mlx5_wqe_atomic_seg a;

        a.swap_add = htobe64(wr->swap_add);
        a.compare  = htobe64(wr->compare);
        memcpy(seg, &a, sizeof(a));
        return sizeof(a);
    }
    case UCT_RC_OP_MASKED_CS:
        if (wr->atomic_size == 4) {
            struct uct_mlx5_masked_cs32_seg a;

            a.swap         = htobe32(wr->swap_add);
            a.compare      = htobe32(wr->compare);
            a.swap_mask    = htobe32(wr->swap_mask);
            a.compare_mask = htobe32(wr->compare_mask);
            memcpy(seg, &a, sizeof(a));
            return sizeof(a);
        } else {
            struct uct_mlx5_masked_cs64_seg a;

            a.swap         = htobe64(wr->swap_add);
            a.compare      = htobe64(wr->compare);
            a.swap_mask    = htobe64(wr->swap_mask);
            a.compare_mask = htobe64(wr->compare_mask);
            memcpy(seg, &a, sizeof(a));
            return sizeof(a);
        }
    case UCT_RC_OP_MASKED_FA:
        if (wr->atomic_size == 4) {
            struct uct_mlx5_masked_fa32_seg a = {};

            a.add            = htobe32(wr->swap_add);
            a.field_boundary = htobe32(wr->compare_mask);
            memcpy(seg, &a, sizeof(a));
            return sizeof(a);
        } else {
            struct uct_mlx5_masked_fa64_seg a;

            a.add            = htobe64(wr->swap_add);
            a.field_boundary = htobe64(wr->compare_mask);
            memcpy(seg, &a, sizeof(a));
            return sizeof(a);
        }
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
        return (wr->atomic_size == 4) ? sizeof(struct uct_mlx5_masked_cs32_seg) :
                                        sizeof(struct uct_mlx5_masked_cs64_seg);
    case UCT_RC_OP_MASKED_FA:
        return (wr->atomic_size == 4) ? sizeof(struct uct_mlx5_masked_fa32_seg) :
                                        sizeof(struct uct_mlx5_masked_fa64_seg);
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

/* Written in place when the WQE fits before the ring's end; else built
 * aside and copied in two pieces around the end */
void uct_rc_mlx5_txq_post(uct_rc_mlx5_ep *ep, const uct_rc_wr_t *wr)
{
    const uint16_t            pi    = ep->sn;
    const size_t              size  = wqe_size(wr);
    const unsigned            bbs   = ucs_align_up(size, wqebb) / wqebb;
    const size_t              slot  = pi & ep->sq_mask;
    const size_t              room  = (ep->sq_mask + 1 - slot) * wqebb;
    uint8_t                   *wqe  = ep->sq_buf + slot * wqebb;
    alignas(64) uint8_t       aside[UCT_RC_MLX5_MAX_WQE_BBS * wqebb];
    uint8_t                   *base = (bbs * wqebb <= room) ? wqe : aside;
    struct mlx5_wqe_ctrl_seg  ctrl  = {};
    size_t                    off   = sizeof(ctrl);
    uint8_t                   opmod = 0;

    ucs_assertv(bbs <= UCT_RC_MLX5_MAX_WQE_BBS, "a WQE of %u blocks", bbs);

    if (has_raddr(wr->opcode)) {
        struct mlx5_wqe_raddr_seg raddr = {};

        raddr.raddr = htobe64(wr->remote_addr);
        raddr.rkey  = htobe32(wr->rkey);
        memcpy(base + off, &raddr, sizeof(raddr));
        off += sizeof(raddr);
    }

    if (atomic_segment_size(wr) > 0) {
        off += atomic_segment(wr, base + off);
        if ((wr->opcode == UCT_RC_OP_MASKED_FA) ||
            (wr->opcode == UCT_RC_OP_MASKED_CS)) {
            opmod = UCT_MLX5_OPMOD_EXT_ATOMIC(
                    (wr->atomic_size == 4) ? 2 : 3);
        }
    }

    if (wr->inl_hdr_len + wr->inl_data_len > 0) {
        struct mlx5_wqe_inl_data_seg inl;
        const uint32_t               len = wr->inl_hdr_len + wr->inl_data_len;

        /* a host integer holding a big-endian value, as mlx5dv.h declares */
        inl.byte_count = htobe32(len | MLX5_INLINE_SEG);
        memcpy(base + off, &inl, sizeof(inl));
        memcpy(base + off + sizeof(inl), wr->inl_hdr, wr->inl_hdr_len);
        memcpy(base + off + sizeof(inl) + wr->inl_hdr_len, wr->inl_data,
               wr->inl_data_len);
        off += ucs_align_up(sizeof(inl) + len, dsize);
    }

    for (unsigned i = 0; i < wr->num_sge; ++i) {
        auto *dseg = reinterpret_cast<struct mlx5_wqe_data_seg*>(base + off);

        dseg->byte_count = htobe32(wr->sge[i].length);
        dseg->lkey       = htobe32(wr->sge[i].lkey);
        dseg->addr       = htobe64(wr->sge[i].addr);
        off += sizeof(*dseg);
    }

    ctrl.opmod_idx_opcode = htobe32((uint32_t(opmod) << 24) |
                                    (uint32_t(pi) << 8) |
                                    mlx5_opcode(wr->opcode));
    ctrl.qpn_ds           = htobe32(ep->qpn_ds | (off / dsize));
    ctrl.fm_ce_se         = (wr->signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
                            (wr->fence ? MLX5_WQE_CTRL_FENCE : 0);
    memcpy(base, &ctrl, sizeof(ctrl));

    if (base == aside) {
        memcpy(wqe, aside, room);
        memcpy(ep->sq_buf, aside + room, bbs * wqebb - room);
    }
    uct_rc_mlx5_ring_doorbell(ep, wqe, pi + bbs);
}

void uct_rc_mlx5_txq_error(const struct mlx5_cqe64 *cqe, uct_rc_completion_t *c)
{
    const uint8_t opcode = cqe->op_own >> 4;

    c->qpn        = be32toh(cqe->sop_drop_qpn) & 0xffffff;
    c->sn         = be16toh(cqe->wqe_counter);
    c->status     = IBV_WC_GENERAL_ERR;
    c->vendor_err = 0;
    c->syndrome   = 0;
    if (opcode == MLX5_CQE_REQ_ERR) {
        auto *ecqe    = reinterpret_cast<const struct mlx5_err_cqe*>(cqe);
        c->status     = wc_status(ecqe->syndrome);
        c->vendor_err = ecqe->vendor_err_synd;
        c->syndrome   = ecqe->syndrome;
    }
}
