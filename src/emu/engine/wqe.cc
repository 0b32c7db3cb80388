/*
 * Send WQEs as the device reads them from a QP's ring: 64-byte basic
 * blocks, wrapping around, a control segment whose ds counts the WQE's
 * 16-byte units, then the segments its opcode carries (opcodes.cc): a UD
 * QP's datagram segment (ud.cc), the remote address, the atomic operands,
 * and inline data or data segments. What does not decode completes with a
 * local QP operation or length error.
 */
#include <emu/engine/engine.h>


namespace uct_ib_emu {

namespace {

constexpr unsigned SEG_SIZE = 16;

/* Copy len bytes of the ring starting at byte offset, wrapping at its end */
void ring_copy(const ring &r, size_t offset, size_t len, uint8_t *dst)
{
    size_t size = size_t(r.cnt) * r.stride;

    while (len > 0) {
        size_t at   = offset & (size - 1); /* a power of two */
        size_t take = std::min(len, size - at);

        memcpy(dst, r.buf + at, take);
        dst    += take;
        offset += take;
        len    -= take;
    }
}

unsigned atomic_seg_size(const send_wqe &w)
{
    if (!(w.info->flags & OP_MASKED)) {
        return sizeof(struct mlx5_wqe_atomic_seg);
    }
    if ((w.opcode == MLX5_OPCODE_ATOMIC_MASKED_CS) && (w.atomic_size == 8)) {
        return sizeof(struct uct_mlx5_masked_cs64_seg);
    }
    return SEG_SIZE;
}

void decode_atomic(send_wqe *w, const uint8_t *seg)
{
    if (!(w->info->flags & OP_MASKED)) {
        struct mlx5_wqe_atomic_seg a;

        memcpy(&a, seg, sizeof(a));
        w->atomic[0] = be64toh(a.swap_add);
        w->atomic[1] = be64toh(a.compare);
    } else if (w->opcode == MLX5_OPCODE_ATOMIC_MASKED_CS) {
        if (w->atomic_size == 4) {
            struct uct_mlx5_masked_cs32_seg a;

            memcpy(&a, seg, sizeof(a));
            w->atomic[0] = be32toh(a.swap);
            w->atomic[1] = be32toh(a.compare);
            w->atomic[2] = be32toh(a.swap_mask);
            w->atomic[3] = be32toh(a.compare_mask);
        } else {
            struct uct_mlx5_masked_cs64_seg a;

            memcpy(&a, seg, sizeof(a));
            w->atomic[0] = be64toh(a.swap);
            w->atomic[1] = be64toh(a.compare);
            w->atomic[2] = be64toh(a.swap_mask);
            w->atomic[3] = be64toh(a.compare_mask);
        }
    } else if (w->atomic_size == 4) {
        struct uct_mlx5_masked_fa32_seg a;

        memcpy(&a, seg, sizeof(a));
        w->atomic[0] = be32toh(a.add);
        w->atomic[1] = be32toh(a.field_boundary);
    } else {
        struct uct_mlx5_masked_fa64_seg a;

        memcpy(&a, seg, sizeof(a));
        w->atomic[0] = be64toh(a.add);
        w->atomic[1] = be64toh(a.field_boundary);
    }
}

/* A UMR WQE that binds or frees a memory window: the UMR control segment,
 * the mkey context and, for a bind, one inline KLM entry */
uint8_t decode_umr(send_wqe *w, const uint8_t *wqe, unsigned size)
{
    unsigned pos = sizeof(struct mlx5_wqe_ctrl_seg);
    struct mlx5_wqe_umr_ctrl_seg ctrl;
    struct mlx5_wqe_mkey_context_seg mkey;
    struct mlx5_wqe_umr_klm_seg klm;

    if (pos + sizeof(ctrl) + sizeof(mkey) > size) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }
    memcpy(&ctrl, wqe + pos, sizeof(ctrl));
    pos += sizeof(ctrl);
    memcpy(&mkey, wqe + pos, sizeof(mkey));
    pos += sizeof(mkey);

    w->umr.free   = (mkey.free & MLX5_WQE_MKEY_CONTEXT_FREE) != 0;
    w->umr.access = mkey.access_flags;
    w->umr.qpn    = be32toh(mkey.qpn_mkey) >> 8;
    w->umr.start  = be64toh(mkey.start_addr);
    w->umr.length = be64toh(mkey.len);
    if (w->umr.free) {
        return 0;
    }
    if (!(ctrl.flags & MLX5_WQE_UMR_CTRL_FLAG_INLINE) ||
        (be16toh(ctrl.klm_octowords) == 0) || (pos + sizeof(klm) > size)) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }
    memcpy(&klm, wqe + pos, sizeof(klm));
    w->umr.mr_lkey = be32toh(klm.mkey);
    return 0;
}

/* A TAG_MATCHING WQE: the tag-matching segment; an APPEND's buffer
 * follows in one data segment */
uint8_t decode_tm(send_wqe *w, const uint8_t *wqe, unsigned *pos,
                  unsigned size)
{
    struct mlx5_wqe_tm_seg tm;

    if (*pos + sizeof(tm) > size) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }
    memcpy(&tm, wqe + *pos, sizeof(tm));
    *pos       += sizeof(tm);
    w->tm.op     = tm.opcode >> 4;
    w->tm.flags  = tm.flags;
    w->tm.index  = be16toh(tm.index);
    w->tm.sw_cnt = be16toh(tm.sw_cnt);
    w->tm.tag    = tm.append_tag;
    w->tm.mask   = tm.append_mask;
    return 0;
}

/* The segments after the control segment; a UD QP's WQE (ud) has a
 * datagram segment and sends only, a DCI's (dc) one before the segments of
 * any operation */
uint8_t decode_segments(send_wqe *w, const uint8_t *wqe, unsigned size,
                        bool ud, bool dc, bool xrc)
{
    unsigned pos = sizeof(struct mlx5_wqe_ctrl_seg);

    if (w->info->flags & OP_UMR) {
        return decode_umr(w, wqe, size);
    }

    if (w->info->flags & OP_TM) {
        const uint8_t syndrome = decode_tm(w, wqe, &pos, size);

        if (syndrome != 0) {
            return syndrome;
        }
    }

    /* XRC: the remote SRQ, right after the control segment */
    if (xrc && !(w->info->flags & OP_LOCAL)) {
        uint32_t srqn;

        if (pos + WQE_XRC_SEG > size) {
            return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
        }
        memcpy(&srqn, wqe + pos, sizeof(srqn));
        w->xrc_srqn = be32toh(srqn) & 0xffffff;
        pos        += WQE_XRC_SEG;
    }

    if ((ud || dc) && !(w->info->flags & OP_LOCAL)) {
        unsigned used;
        uint8_t syndrome;

        if (ud && (!(w->info->flags & OP_SEND) ||
                   (w->info->flags & (OP_RADDR | OP_WRITE)))) {
            return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
        }
        syndrome = ud_decode_datagram_seg(w, wqe + pos, size - pos, &used);
        if (syndrome != 0) {
            return syndrome;
        }
        pos += used;
    }

    if (w->info->flags & OP_RADDR) {
        struct mlx5_wqe_raddr_seg r;

        if (pos + sizeof(r) > size) {
            return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
        }
        memcpy(&r, wqe + pos, sizeof(r));
        w->raddr = be64toh(r.raddr);
        w->rkey  = be32toh(r.rkey);
        pos     += sizeof(r);
    }

    if (w->info->flags & OP_ATOMIC) {
        if (w->info->flags & OP_MASKED) {
            if (w->opmod == UCT_MLX5_OPMOD_EXT_ATOMIC(2)) {
                w->atomic_size = 4;
            } else if (w->opmod == UCT_MLX5_OPMOD_EXT_ATOMIC(3)) {
                w->atomic_size = 8;
            } else {
                return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
            }
        } else {
            w->atomic_size = 8;
        }
        if (pos + atomic_seg_size(*w) > size) {
            return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
        }
        decode_atomic(w, wqe + pos);
        pos += atomic_seg_size(*w);
    }

    while (pos < size) {
        uint32_t bc;

        memcpy(&bc, wqe + pos, sizeof(bc));
        bc = be32toh(bc);
        if (bc & MLX5_INLINE_SEG) {
            uint32_t len = bc & ~uint32_t(MLX5_INLINE_SEG);

            if (!w->sges.empty() || (pos + 4 + len > size)) {
                return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
            }
            w->is_inline = true;
            w->inline_data.insert(w->inline_data.end(), wqe + pos + 4,
                                  wqe + pos + 4 + len);
            w->length += len;
            pos       += (4 + len + SEG_SIZE - 1) / SEG_SIZE * SEG_SIZE;
        } else {
            struct mlx5_wqe_data_seg d;

            /* data segments may follow an inline one (an inline header
             * before gathered data), as hardware allows */
            if (pos + sizeof(d) > size) {
                return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
            }
            memcpy(&d, wqe + pos, sizeof(d));
            w->sges.push_back({be32toh(d.lkey), be64toh(d.addr), bc});
            w->length += bc;
            pos       += sizeof(d);
        }
    }

    if ((w->info->flags & OP_RESPONSE) && w->is_inline) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR; /* nowhere to put data */
    }
    if ((w->info->flags & OP_ATOMIC_OP) && (w->length != w->atomic_size)) {
        return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    }
    return 0;
}

} // namespace


void wqe_decode(const qp *q, const ring &r, uint16_t index, send_wqe *w)
{
    uint8_t buf[64 * SEG_SIZE];
    struct mlx5_wqe_ctrl_seg ctrl;
    uint32_t opmod_idx_opcode, qpn_ds;
    unsigned ds;

    ring_copy(r, size_t(index & (r.cnt - 1)) * r.stride, sizeof(ctrl),
              reinterpret_cast<uint8_t*>(&ctrl));
    opmod_idx_opcode = be32toh(ctrl.opmod_idx_opcode);
    qpn_ds           = be32toh(ctrl.qpn_ds);
    ds               = qpn_ds & 0x3f;

    w->index    = index;
    w->opcode   = opmod_idx_opcode & 0xff;
    w->opmod    = opmod_idx_opcode >> 24;
    w->fm_ce_se = ctrl.fm_ce_se;
    w->imm      = ctrl.imm;
    w->info     = find_opcode(w->opcode);
    w->nbb      = std::max(1u, (ds * SEG_SIZE + MLX5_SEND_WQE_BB - 1) /
                               MLX5_SEND_WQE_BB);

    if ((ds == 0) || (w->nbb > r.cnt) || ((qpn_ds >> 8) != q->qpn) ||
        (((opmod_idx_opcode >> 8) & 0xffff) != index) ||
        (w->info == nullptr)) {
        w->bad_syndrome = MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
        return;
    }

    ring_copy(r, size_t(index & (r.cnt - 1)) * r.stride, ds * SEG_SIZE, buf);
    w->bad_syndrome = decode_segments(w, buf, ds * SEG_SIZE, q->is_ud(),
                                      q->is_dci(), q->is_xrc());
    w->retries_left = q->retry_count;
    w->rnr_left     = q->rnr_retry;
}

} // namespace uct_ib_emu
