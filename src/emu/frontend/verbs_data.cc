/*
 * The verbs data path, as the mlx5 provider implements it in user space:
 * ibv_post_send / ibv_post_recv / ibv_post_srq_recv write WQEs into the
 * rings mlx5dv_init_obj hands out and then the doorbell record, and
 * ibv_poll_cq reads the CQEs the engine wrote and updates the consumer
 * index. So a verbs user and an mlx5dv user drive one device.
 *
 * Return conventions (rdma-core-facts.md): post_send EINVAL for an opcode
 * it does not know, ENOMEM for a full queue, too many SGEs, inline data too
 * large or a QP before RTS, with *bad_wr the failing request (the earlier
 * ones are posted); post_recv and post_srq_recv EINVAL for too many SGEs,
 * ENOMEM for a full queue.
 */
#include <emu/engine/engine.h>
#include <emu/frontend/ops.h>


namespace uct_ib_emu {

namespace {

constexpr unsigned SEG = 16;

struct op_map {
    enum ibv_wr_opcode verbs;
    uint8_t            mlx5;
    enum ibv_wc_opcode wc;
};

constexpr op_map send_ops[] = {
    {IBV_WR_SEND,                 MLX5_OPCODE_SEND,           IBV_WC_SEND},
    {IBV_WR_SEND_WITH_IMM,        MLX5_OPCODE_SEND_IMM,       IBV_WC_SEND},
    {IBV_WR_RDMA_WRITE,           MLX5_OPCODE_RDMA_WRITE,     IBV_WC_RDMA_WRITE},
    {IBV_WR_RDMA_WRITE_WITH_IMM,  MLX5_OPCODE_RDMA_WRITE_IMM, IBV_WC_RDMA_WRITE},
    {IBV_WR_RDMA_READ,            MLX5_OPCODE_RDMA_READ,      IBV_WC_RDMA_READ},
    {IBV_WR_ATOMIC_CMP_AND_SWP,   MLX5_OPCODE_ATOMIC_CS,      IBV_WC_COMP_SWAP},
    {IBV_WR_ATOMIC_FETCH_AND_ADD, MLX5_OPCODE_ATOMIC_FA,      IBV_WC_FETCH_ADD},
    {IBV_WR_SEND_WITH_INV,        MLX5_OPCODE_SEND_INVAL,     IBV_WC_SEND},
    /* a memory window's bind and invalidate are both UMR WQEs: their
     * completions' opcodes are kept by slot (verbs_wq::wc_op) */
    {IBV_WR_BIND_MW,              MLX5_OPCODE_UMR,            IBV_WC_BIND_MW},
    {IBV_WR_LOCAL_INV,            MLX5_OPCODE_UMR,            IBV_WC_LOCAL_INV}
};

const op_map *find_send_op(enum ibv_wr_opcode op)
{
    for (const op_map &m : send_ops) {
        if (m.verbs == op) {
            return &m;
        }
    }
    return nullptr;
}

enum ibv_wc_opcode wc_opcode_of(uint8_t mlx5_opcode)
{
    for (const op_map &m : send_ops) {
        if (m.mlx5 == mlx5_opcode) {
            return m.wc;
        }
    }
    return IBV_WC_SEND; /* NOP */
}

/* The one map from CQE syndromes to work completion statuses */
enum ibv_wc_status wc_status_of(uint8_t syndrome)
{
    switch (syndrome) {
    case MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR:
        return IBV_WC_LOC_LEN_ERR;
    case MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR:
        return IBV_WC_LOC_QP_OP_ERR;
    case MLX5_CQE_SYNDROME_LOCAL_PROT_ERR:
        return IBV_WC_LOC_PROT_ERR;
    case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:
        return IBV_WC_WR_FLUSH_ERR;
    case MLX5_CQE_SYNDROME_MW_BIND_ERR:
        return IBV_WC_MW_BIND_ERR;
    case MLX5_CQE_SYNDROME_BAD_RESP_ERR:
        return IBV_WC_BAD_RESP_ERR;
    case MLX5_CQE_SYNDROME_LOCAL_ACCESS_ERR:
        return IBV_WC_LOC_ACCESS_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
        return IBV_WC_REM_INV_REQ_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR:
        return IBV_WC_REM_ACCESS_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_OP_ERR:
        return IBV_WC_REM_OP_ERR;
    case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
        return IBV_WC_RETRY_EXC_ERR;
    case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
        return IBV_WC_RNR_RETRY_EXC_ERR;
    case MLX5_CQE_SYNDROME_REMOTE_ABORTED_ERR:
        return IBV_WC_REM_ABORT_ERR;
    default:
        return IBV_WC_GENERAL_ERR;
    }
}

template <typename T>
void put(std::vector<uint8_t> &wqe, const T &seg)
{
    const uint8_t *p = reinterpret_cast<const uint8_t*>(&seg);
    wqe.insert(wqe.end(), p, p + sizeof(seg));
}

/* The datagram segment of a UD work request: the AH's address vector
 * with the destination QPN and Q_Key, as the mlx5 provider writes it */
int put_datagram_seg(emu_state &s, const qp *q, const struct ibv_send_wr *wr,
                     std::vector<uint8_t> *wqe)
{
    struct mlx5_wqe_datagram_seg seg;
    const ah *a = find<ah>(s, wr->wr.ud.ah);

    if ((a == nullptr) || (a->ctx != q->ctx)) {
        return EINVAL;
    }

    seg.av                  = a->av;
    seg.av.dqp_dct          = htobe32((wr->wr.ud.remote_qpn & 0xffffff) |
                                      MLX5_EXTENDED_UD_AV);
    seg.av.key.qkey.qkey    = htobe32(wr->wr.ud.remote_qkey);
    seg.av.key.qkey.reserved = 0;
    put(*wqe, seg);
    return 0;
}

/* A memory window's bind (IBV_WR_BIND_MW) or invalidate (IBV_WR_LOCAL_INV)
 * as the UMR WQE the mlx5 provider writes: the UMR control segment, the
 * mkey context (the window's range, rights and, for type 2, the QP) and,
 * for a bind, one inline KLM entry naming the MR; the new key in the
 * control segment's immediate. 0 or an errno */
int build_umr_wqe(emu_state &s, const qp *q, const struct ibv_send_wr *wr,
                  struct mlx5_wqe_ctrl_seg *ctrl, std::vector<uint8_t> *wqe)
{
    struct mlx5_wqe_umr_ctrl_seg     uctrl = {};
    struct mlx5_wqe_mkey_context_seg mkey  = {};
    struct mlx5_wqe_umr_klm_seg      klm   = {};
    const bool inval = (wr->opcode == IBV_WR_LOCAL_INV);
    const struct ibv_mw_bind_info *bind = &wr->bind_mw.bind_info;
    uint32_t key;

    if (!q->is_xrc() && (q->ibv.qp_type != IBV_QPT_RC) &&
        (q->ibv.qp_type != IBV_QPT_UC)) {
        return EINVAL; /* binds go on connected QPs */
    }

    if (inval) {
        key        = wr->invalidate_rkey;
        mkey.free  = MLX5_WQE_MKEY_CONTEXT_FREE;
    } else {
        const mw *w = find<mw>(s, wr->bind_mw.mw);

        if ((w == nullptr) || (w->ctx != q->ctx) ||
            (bind->mw_access_flags & ~(IBV_ACCESS_REMOTE_WRITE |
                                       IBV_ACCESS_REMOTE_READ |
                                       IBV_ACCESS_REMOTE_ATOMIC)) ||
            ((bind->mr == nullptr) && (bind->length != 0))) {
            return EINVAL;
        }
        key               = wr->bind_mw.rkey;
        mkey.access_flags =
                ((bind->mw_access_flags & IBV_ACCESS_REMOTE_ATOMIC) ?
                 MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC : 0) |
                ((bind->mw_access_flags & IBV_ACCESS_REMOTE_WRITE) ?
                 MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE : 0) |
                ((bind->mw_access_flags & IBV_ACCESS_REMOTE_READ) ?
                 MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ : 0);
        mkey.qpn_mkey     = htobe32(((w->ibv.type == IBV_MW_TYPE_2) ?
                                     q->qpn : 0xffffff) << 8 | (key & 0xff));
        mkey.start_addr   = htobe64(bind->addr);
        mkey.len          = htobe64(bind->length);
        if (bind->mr != nullptr) {
            klm.byte_count = htobe32(static_cast<uint32_t>(bind->length));
            klm.mkey       = htobe32(bind->mr->lkey);
            klm.address    = htobe64(bind->addr);
        }
    }

    uctrl.flags         = MLX5_WQE_UMR_CTRL_FLAG_INLINE;
    uctrl.klm_octowords = htobe16(inval ? 0 : 1);
    uctrl.mkey_mask     = htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN |
                                  MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR |
                                  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
                                  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
                                  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
                                  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC |
                                  MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE);
    ctrl->imm = htobe32(key);

    wqe->clear();
    put(*wqe, *ctrl);
    put(*wqe, uctrl);
    put(*wqe, mkey);
    if (!inval) {
        put(*wqe, klm);
    }
    ctrl->qpn_ds = htobe32((q->qpn << 8) | (wqe->size() / SEG));
    memcpy(wqe->data(), ctrl, sizeof(*ctrl));
    return 0;
}

/* Build the WQE of one work request; 0 or an errno */
int build_send_wqe(emu_state &s, const qp *q, const struct ibv_send_wr *wr,
                   const op_map *op, std::vector<uint8_t> *wqe)
{
    bool signaled = (wr->send_flags & IBV_SEND_SIGNALED) || q->sq_sig_all;
    struct mlx5_wqe_ctrl_seg ctrl = {};
    uint32_t total = 0;

    if ((wr->num_sge < 0) ||
        (static_cast<uint32_t>(wr->num_sge) > q->cap.max_send_sge)) {
        return ENOMEM;
    }

    ctrl.opmod_idx_opcode = htobe32((uint32_t(q->vsq.pi) << 8) | op->mlx5);
    ctrl.fm_ce_se         = (signaled ? MLX5_WQE_CTRL_CQ_UPDATE : 0) |
                            ((wr->send_flags & IBV_SEND_SOLICITED) ?
                             MLX5_WQE_CTRL_SOLICITED : 0) |
                            ((wr->send_flags & IBV_SEND_FENCE) ?
                             MLX5_WQE_CTRL_FENCE : 0);
    if ((op->verbs == IBV_WR_SEND_WITH_IMM) ||
        (op->verbs == IBV_WR_RDMA_WRITE_WITH_IMM)) {
        ctrl.imm = wr->imm_data; /* already big endian */
    } else if (op->verbs == IBV_WR_SEND_WITH_INV) {
        ctrl.imm = htobe32(wr->invalidate_rkey);
    }

    if (op->mlx5 == MLX5_OPCODE_UMR) {
        return build_umr_wqe(s, q, wr, &ctrl, wqe);
    }

    wqe->clear();
    put(*wqe, ctrl);

    if (q->is_xrc()) { /* an initiator names the target's SRQ */
        uint8_t seg[WQE_XRC_SEG] = {};
        uint32_t srqn = htobe32(wr->qp_type.xrc.remote_srqn & 0xffffff);

        memcpy(seg, &srqn, sizeof(srqn));
        wqe->insert(wqe->end(), seg, seg + sizeof(seg));
    }

    if (q->is_ud()) {
        int err;

        if ((op->verbs != IBV_WR_SEND) && (op->verbs != IBV_WR_SEND_WITH_IMM)) {
            return EINVAL;
        }
        err = put_datagram_seg(s, q, wr, wqe);
        if (err != 0) {
            return err;
        }
    }

    switch (op->verbs) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM:
    case IBV_WR_RDMA_READ: {
        struct mlx5_wqe_raddr_seg r = {};

        r.raddr = htobe64(wr->wr.rdma.remote_addr);
        r.rkey  = htobe32(wr->wr.rdma.rkey);
        put(*wqe, r);
        break;
    }
    case IBV_WR_ATOMIC_CMP_AND_SWP:
    case IBV_WR_ATOMIC_FETCH_AND_ADD: {
        struct mlx5_wqe_raddr_seg r = {};
        struct mlx5_wqe_atomic_seg a = {};

        r.raddr = htobe64(wr->wr.atomic.remote_addr);
        r.rkey  = htobe32(wr->wr.atomic.rkey);
        put(*wqe, r);
        if (op->verbs == IBV_WR_ATOMIC_CMP_AND_SWP) {
            a.swap_add = htobe64(wr->wr.atomic.swap);
            a.compare  = htobe64(wr->wr.atomic.compare_add);
        } else {
            a.swap_add = htobe64(wr->wr.atomic.compare_add);
        }
        put(*wqe, a);
        break;
    }
    default:
        break;
    }

    if ((wr->send_flags & IBV_SEND_INLINE) &&
        ((op->verbs == IBV_WR_SEND) || (op->verbs == IBV_WR_SEND_WITH_IMM) ||
         (op->verbs == IBV_WR_RDMA_WRITE) ||
         (op->verbs == IBV_WR_RDMA_WRITE_WITH_IMM))) {
        for (int i = 0; i < wr->num_sge; ++i) {
            total += wr->sg_list[i].length;
        }
        if (total > q->cap.max_inline_data) {
            return ENOMEM;
        }
        uint32_t hdr = htobe32(total | MLX5_INLINE_SEG);
        put(*wqe, hdr);
        for (int i = 0; i < wr->num_sge; ++i) {
            const uint8_t *p = reinterpret_cast<const uint8_t*>(
                    wr->sg_list[i].addr);
            wqe->insert(wqe->end(), p, p + wr->sg_list[i].length);
        }
        wqe->resize((wqe->size() + SEG - 1) / SEG * SEG, 0);
    } else {
        for (int i = 0; i < wr->num_sge; ++i) {
            struct mlx5_wqe_data_seg d;

            d.byte_count = htobe32(wr->sg_list[i].length);
            d.lkey       = htobe32(wr->sg_list[i].lkey);
            d.addr       = htobe64(wr->sg_list[i].addr);
            put(*wqe, d);
        }
    }

    ctrl.qpn_ds = htobe32((q->qpn << 8) | (wqe->size() / SEG));
    memcpy(wqe->data(), &ctrl, sizeof(ctrl));
    return 0;
}

void write_ring(const ring &r, uint16_t index, const std::vector<uint8_t> &wqe)
{
    size_t size = size_t(r.cnt) * r.stride;
    size_t at   = size_t(index & (r.cnt - 1)) * r.stride;

    for (size_t i = 0; i < wqe.size(); ++i) {
        r.buf[(at + i) % size] = wqe[i];
    }
}

void ensure_slots(verbs_wq &wq, uint32_t cnt, bool with_nbb)
{
    if (wq.wrid.size() != cnt) {
        wq.wrid.assign(cnt, 0);
        if (with_nbb) {
            wq.nbb.assign(cnt, 1);
            wq.wc_op.assign(cnt, -1);
        }
    }
}

void write_recv_segs(uint8_t *wqe, unsigned max_segs,
                     const struct ibv_recv_wr *wr)
{
    for (int i = 0; i < wr->num_sge; ++i) {
        struct mlx5_wqe_data_seg d;

        d.byte_count = htobe32(wr->sg_list[i].length);
        d.lkey       = htobe32(wr->sg_list[i].lkey);
        d.addr       = htobe64(wr->sg_list[i].addr);
        memcpy(wqe + i * SEG, &d, sizeof(d));
    }
    if (static_cast<unsigned>(wr->num_sge) < max_segs) {
        struct mlx5_wqe_data_seg end = {};

        end.lkey = htobe32(MLX5_INVALID_LKEY);
        memcpy(wqe + wr->num_sge * SEG, &end, sizeof(end));
    }
}

uint8_t *srq_wqe(const srq *q, uint16_t index)
{
    return q->buf.bytes() + size_t(index & (q->wqe_cnt - 1)) * q->stride;
}

/* One CQE into a work completion, retiring what it covers */
void to_wc(emu_state &s, cq *c, const uint8_t *raw, struct ibv_wc *wc)
{
    struct mlx5_cqe64 cqe;
    struct mlx5_err_cqe err;
    uint8_t opcode = raw[CQE_SIZE - 1] >> 4;
    uint32_t qpn;
    uint16_t counter;
    qp *q = nullptr;

    memcpy(&cqe, raw, sizeof(cqe));
    memcpy(&err, raw, sizeof(err));
    qpn     = be32toh(cqe.sop_drop_qpn) & 0xffffff;
    counter = be16toh(cqe.wqe_counter);

    auto it = c->ctx->dev->qps.find(qpn);
    if (it != c->ctx->dev->qps.end()) {
        q = it->second;
    }

    memset(wc, 0, sizeof(*wc));
    wc->qp_num = qpn;
    if ((opcode == MLX5_CQE_REQ_ERR) || (opcode == MLX5_CQE_RESP_ERR)) {
        wc->status     = wc_status_of(err.syndrome);
        wc->vendor_err = err.vendor_err_synd;
    } else {
        wc->status     = IBV_WC_SUCCESS;
    }

    if ((opcode == MLX5_CQE_REQ) || (opcode == MLX5_CQE_REQ_ERR)) {
        wc->opcode   = wc_opcode_of(be32toh(cqe.sop_drop_qpn) >> 24);
        wc->byte_len = be32toh(cqe.byte_cnt);
        if ((q != nullptr) && !q->vsq.wrid.empty()) {
            uint32_t slot = counter & (q->sq_wqe_cnt - 1);
            wc->wr_id     = q->vsq.wrid[slot];
            if (q->vsq.wc_op[slot] >= 0) {
                wc->opcode = static_cast<enum ibv_wc_opcode>(q->vsq.wc_op[slot]);
            }
            q->vsq.tail   = counter + q->vsq.nbb[slot];
        }
        return;
    }

    wc->byte_len = be32toh(cqe.byte_cnt);
    wc->src_qp   = (q != nullptr) ? q->remote_qpn : 0;
    if ((q != nullptr) && q->is_ud()) {
        uint32_t flags_rqpn = be32toh(cqe.flags_rqpn);

        wc->src_qp         = flags_rqpn & 0xffffff;
        wc->sl             = (flags_rqpn >> 24) & 0xf;
        wc->wc_flags      |= ((flags_rqpn >> 28) & 3) ? IBV_WC_GRH : 0;
        wc->slid           = be16toh(cqe.slid);
        wc->dlid_path_bits = cqe.ml_path & 0x7f;
        wc->pkey_index     = q->pkey_index;
    }
    wc->opcode   = (opcode == MLX5_CQE_RESP_WR_IMM) ?
                   IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV;
    if ((opcode == MLX5_CQE_RESP_WR_IMM) ||
        (opcode == MLX5_CQE_RESP_SEND_IMM)) {
        wc->wc_flags |= IBV_WC_WITH_IMM;
        wc->imm_data = cqe.imm_inval_pkey;
    } else if (opcode == MLX5_CQE_RESP_SEND_INV) {
        wc->wc_flags          |= IBV_WC_WITH_INV;
        wc->invalidated_rkey   = be32toh(cqe.imm_inval_pkey);
    }

    /* an SRQ's completion names it (an XRC target's QP has none of its own) */
    const uint32_t srqn = be32toh(cqe.srqn_uidx) & 0xffffff;
    auto srq_it         = c->ctx->dev->srqs.find(srqn);
    if ((srqn != 0) && (srq_it != c->ctx->dev->srqs.end())) {
        srq *sq = srq_it->second;
        if (!sq->wrid.empty()) {
            wc->wr_id = sq->wrid[counter & (sq->wqe_cnt - 1)];
            /* back to the free list, behind its tail */
            auto *tail = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                    srq_wqe(sq, sq->exec.tail));
            tail->next_wqe_index = htobe16(counter);
            sq->exec.tail        = counter;
        }
    } else if ((q != nullptr) && !q->vrq.wrid.empty()) {
        wc->wr_id = q->vrq.wrid[q->vrq.tail & (q->rq_wqe_cnt - 1)];
        ++q->vrq.tail;
    }
    (void)s;
}

} // namespace


void srq_init_links(srq *q)
{
    for (uint32_t i = 0; i < q->wqe_cnt; ++i) {
        auto *next = reinterpret_cast<struct mlx5_wqe_srq_next_seg*>(
                srq_wqe(q, static_cast<uint16_t>(i)));
        next->next_wqe_index = htobe16((i + 1) & (q->wqe_cnt - 1));
    }
    q->exec.free_head = 0;
    q->exec.tail      = static_cast<uint16_t>(q->wqe_cnt - 1);
}

void verbs_queues_reset(qp *q)
{
    q->vsq = verbs_wq();
    q->vrq = verbs_wq();
    if (q->dbrec.get() != nullptr) {
        memset(q->dbrec.get(), 0, q->dbrec.size());
    }
}

int poll_ring_cqes(emu_state &s, cq *c, int num, struct ibv_wc *wc,
                   uint64_t *timestamps)
{
    uint32_t *dbrec = static_cast<uint32_t*>(c->dbrec.get());
    int count       = 0;

    while (count < num) {
        const uint8_t *raw = c->buf.bytes() +
                             size_t(c->exec.sw_ci & (c->cqe_cnt - 1)) *
                             c->cqe_size + (c->cqe_size - CQE_SIZE);
        uint8_t op_own     = __atomic_load_n(&raw[CQE_SIZE - 1],
                                             __ATOMIC_ACQUIRE);

        if (((op_own >> 4) == MLX5_CQE_INVALID) ||
            ((op_own & MLX5_CQE_OWNER_MASK) != !!(c->exec.sw_ci &
                                                  c->cqe_cnt))) {
            break;
        }

        to_wc(s, c, raw, &wc[count]);
        if (timestamps != nullptr) { /* an error CQE carries none */
            timestamps[count] = (wc[count].status == IBV_WC_SUCCESS) ?
                    be64toh(reinterpret_cast<const struct mlx5_cqe64*>(raw)
                                    ->timestamp) : 0;
        }
        ++count;
        ++c->exec.sw_ci;
    }

    if (count > 0) {
        dma_store_be32(&dbrec[UCT_MLX5_CQ_DBR_SET_CI],
                       c->exec.sw_ci & 0xffffff);
    }
    return count;
}


int emu_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
                  struct ibv_send_wr **bad_wr)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find<qp>(s, ibqp);
    std::vector<uint8_t> wqe;
    bool posted = false;
    ring r;
    int err = 0;

    if ((q == nullptr) || q->is_xrc_tgt()) { /* a target has no SQ */
        *bad_wr = wr;
        return EINVAL;
    }

    r = sq_ring(q);
    ensure_slots(q->vsq, q->sq_wqe_cnt, true);
    for (; wr != nullptr; wr = wr->next) {
        const op_map *op = find_send_op(wr->opcode);
        unsigned nbb;

        if (op == nullptr) {
            err = EINVAL;
            break;
        }
        if ((q->state != UCT_MLX5_QP_STATE_RTS) &&
            (q->state != UCT_MLX5_QP_STATE_ERR)) {
            err = ENOMEM;
            break;
        }

        err = build_send_wqe(s, q, wr, op, &wqe);
        if (err != 0) {
            break;
        }

        nbb = (wqe.size() + MLX5_SEND_WQE_BB - 1) / MLX5_SEND_WQE_BB;
        if (uint16_t(q->vsq.pi - q->vsq.tail) + nbb > q->sq_wqe_cnt) {
            err = ENOMEM;
            break;
        }

        write_ring(r, q->vsq.pi, wqe);
        q->vsq.wrid[q->vsq.pi & (q->sq_wqe_cnt - 1)] = wr->wr_id;
        q->vsq.nbb[q->vsq.pi & (q->sq_wqe_cnt - 1)]  = nbb;
        q->vsq.wc_op[q->vsq.pi & (q->sq_wqe_cnt - 1)] =
                (op->mlx5 == MLX5_OPCODE_UMR) ? int16_t(op->wc) : -1;
        q->vsq.pi += nbb;
        posted     = true;
    }

    if (posted) {
        dma_store_be32(&qp_dbrec(q)[MLX5_SND_DBR], q->vsq.pi);
    }
    if (err != 0) {
        *bad_wr = wr;
    }
    return err;
}

int emu_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
                  struct ibv_recv_wr **bad_wr)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find<qp>(s, ibqp);
    bool posted = false;
    ring r;
    int err = 0;

    if ((q == nullptr) || (q->srq != nullptr) || q->is_xrc()) {
        *bad_wr = wr;
        return EINVAL; /* receives of an SRQ QP go to the SRQ, XRC's to
                          the XRC SRQs */
    }

    r = rq_ring(q);
    ensure_slots(q->vrq, q->rq_wqe_cnt, false);
    for (; wr != nullptr; wr = wr->next) {
        if ((wr->num_sge < 0) ||
            (static_cast<uint32_t>(wr->num_sge) > q->cap.max_recv_sge)) {
            err = EINVAL;
            break;
        }
        if (uint16_t(q->vrq.pi - q->vrq.tail) >= q->rq_wqe_cnt) {
            err = ENOMEM;
            break;
        }

        write_recv_segs(r.buf + size_t(q->vrq.pi & (r.cnt - 1)) * r.stride,
                        r.stride / SEG, wr);
        q->vrq.wrid[q->vrq.pi & (r.cnt - 1)] = wr->wr_id;
        ++q->vrq.pi;
        posted = true;
    }

    if (posted) {
        dma_store_be32(&qp_dbrec(q)[MLX5_RCV_DBR], q->vrq.pi);
    }
    if (err != 0) {
        *bad_wr = wr;
    }
    return err;
}

int emu_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
                      struct ibv_recv_wr **bad_wr)
{
    emu_state &s = state();
    guard g(s.lock);
    srq *q = find<srq>(s, ibsrq);
    bool posted = false;
    int err = 0;

    if (q == nullptr) {
        *bad_wr = wr;
        return EINVAL;
    }

    if (q->wrid.size() != q->wqe_cnt) {
        q->wrid.assign(q->wqe_cnt, 0);
    }

    for (; wr != nullptr; wr = wr->next) {
        uint8_t *wqe;
        struct mlx5_wqe_srq_next_seg next;

        if ((wr->num_sge < 0) ||
            (static_cast<uint32_t>(wr->num_sge) > q->max_sge)) {
            err = EINVAL;
            break;
        }
        if (q->exec.free_head == q->exec.tail) {
            err = ENOMEM; /* the last free entry stays as the list's end */
            break;
        }

        wqe = srq_wqe(q, q->exec.free_head);
        memcpy(&next, wqe, sizeof(next));
        write_recv_segs(wqe + sizeof(next), q->max_sge, wr);
        q->wrid[q->exec.free_head] = wr->wr_id;
        q->exec.free_head = be16toh(next.next_wqe_index);
        ++q->exec.posted;
        posted = true;
    }

    if (posted) {
        dma_store_be32(q->dbrec.get(), q->exec.posted);
    }
    if (err != 0) {
        *bad_wr = wr;
    }
    return err;
}

} // namespace uct_ib_emu
