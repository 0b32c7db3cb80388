/*
 * The data operations of the ibv_wr_* API on an extended verbs QP (sends,
 * RDMA writes and reads, atomics), as perftest and rdma-core's examples post
 * them by default: each builder opens a work request of the batch, the
 * setters give it its gather list, inline data or UD address, and
 * ibv_wr_complete posts the batch through ibv_post_send's path, so the WQEs,
 * their execution and their completions are the ones ibv_post_send gives.
 *
 * What rdma-core's mlx5 provider answers, and so does this: a builder or a
 * setter outside wr_start/wr_complete, or a setter before any builder, makes
 * wr_complete return EINVAL and post nothing; so does a batch that mixes
 * these operations with the UMR ones of verbs_wr.cc (which this model runs
 * apart). A batch ibv_post_send refuses part of is posted up to that work
 * request, and wr_complete returns the refusal.
 */
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>

#include <cstring>


namespace uct_ib_emu {

namespace {

qp *open_batch(emu_state &s, struct ibv_qp_ex *qpx)
{
    qp *q = find<qp>(s, qpx);

    if ((q == nullptr) || !q->qp_ex) {
        ucs_error("emu: ibv_wr_*(%p): not an extended QP", qpx);
        return nullptr;
    }
    if (!q->wr_open) {
        q->wr_err = EINVAL; /* reported by the next wr_complete */
        return nullptr;
    }
    return q;
}

/* A new work request of opcode @a op with the QP's wr_id and flags */
data_wr *begin(emu_state &s, struct ibv_qp_ex *qpx, enum ibv_wr_opcode op)
{
    qp *q = open_batch(s, qpx);

    if (q == nullptr) {
        return nullptr;
    }

    q->wr_data.emplace_back();
    data_wr &d       = q->wr_data.back();
    d.wr.wr_id       = qpx->wr_id;
    d.wr.send_flags  = qpx->wr_flags;
    d.wr.opcode      = op;
    return &d;
}

/* The work request the last builder opened, for a setter */
data_wr *last(emu_state &s, struct ibv_qp_ex *qpx)
{
    qp *q = open_batch(s, qpx);

    if ((q == nullptr) || q->wr_data.empty()) {
        if (q != nullptr) {
            q->wr_err = (q->wr_err != 0) ? q->wr_err : EINVAL;
        }
        return nullptr;
    }
    return &q->wr_data.back();
}

void wr_send(struct ibv_qp_ex *qpx)
{
    emu_state &s = state();
    guard g(s.lock);

    begin(s, qpx, IBV_WR_SEND);
}

void wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = begin(s, qpx, IBV_WR_SEND_WITH_IMM);

    if (d != nullptr) {
        d->wr.imm_data = imm;
    }
}

void wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = begin(s, qpx, IBV_WR_SEND_WITH_INV);

    if (d != nullptr) {
        d->wr.invalidate_rkey = invalidate_rkey;
    }
}

void rdma(emu_state &s, struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
          uint32_t rkey, uint64_t addr, __be32 imm)
{
    data_wr *d = begin(s, qpx, op);

    if (d != nullptr) {
        d->wr.wr.rdma.rkey        = rkey;
        d->wr.wr.rdma.remote_addr = addr;
        d->wr.imm_data            = imm;
    }
}

void wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
    emu_state &s = state();
    guard g(s.lock);

    rdma(s, qpx, IBV_WR_RDMA_WRITE, rkey, addr, 0);
}

void wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
                       __be32 imm)
{
    emu_state &s = state();
    guard g(s.lock);

    rdma(s, qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr, imm);
}

void wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
    emu_state &s = state();
    guard g(s.lock);

    rdma(s, qpx, IBV_WR_RDMA_READ, rkey, addr, 0);
}

void atomic(emu_state &s, struct ibv_qp_ex *qpx, enum ibv_wr_opcode op,
            uint32_t rkey, uint64_t addr, uint64_t compare_add, uint64_t swap)
{
    data_wr *d = begin(s, qpx, op);

    if (d != nullptr) {
        d->wr.wr.atomic.rkey        = rkey;
        d->wr.wr.atomic.remote_addr = addr;
        d->wr.wr.atomic.compare_add = compare_add;
        d->wr.wr.atomic.swap        = swap;
    }
}

void wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
                       uint64_t compare, uint64_t swap)
{
    emu_state &s = state();
    guard g(s.lock);

    atomic(s, qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare, swap);
}

void wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
                         uint64_t add)
{
    emu_state &s = state();
    guard g(s.lock);

    atomic(s, qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add, 0);
}

void wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr,
                uint32_t length)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = last(s, qpx);

    if (d != nullptr) {
        d->sges.assign(1, ibv_sge{addr, length, lkey});
    }
}

void wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
                     const struct ibv_sge *sg_list)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = last(s, qpx);

    if (d != nullptr) {
        d->sges.assign(sg_list, sg_list + num_sge);
    }
}

void wr_set_inline_data_list(struct ibv_qp_ex *qpx, size_t num_buf,
                             const struct ibv_data_buf *buf_list)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = last(s, qpx);

    if (d == nullptr) {
        return;
    }

    /* copied now, as the provider copies it into the WQE */
    d->inline_data.clear();
    for (size_t i = 0; i < num_buf; ++i) {
        const uint8_t *p = static_cast<const uint8_t*>(buf_list[i].addr);

        d->inline_data.insert(d->inline_data.end(), p, p + buf_list[i].length);
    }
    d->wr.send_flags |= IBV_SEND_INLINE;
}

void wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr, size_t length)
{
    const struct ibv_data_buf buf = {addr, length};

    wr_set_inline_data_list(qpx, 1, &buf);
}

void wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
                    uint32_t remote_qpn, uint32_t remote_qkey)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = last(s, qpx);

    if (d != nullptr) {
        d->wr.wr.ud.ah          = ah;
        d->wr.wr.ud.remote_qpn  = remote_qpn;
        d->wr.wr.ud.remote_qkey = remote_qkey;
    }
}

/* An XRC initiator's request names the target's SRQ */
void wr_set_xrc_srqn(struct ibv_qp_ex *qpx, uint32_t remote_srqn)
{
    emu_state &s = state();
    guard g(s.lock);
    data_wr *d   = last(s, qpx);

    if (d != nullptr) {
        d->wr.qp_type.xrc.remote_srqn = remote_srqn;
    }
}

} // namespace


void qp_setup_data_ops(qp *q, uint64_t ibv_ops)
{
    struct ibv_qp_ex *x = &q->ibv_ex;

    if (ibv_ops & IBV_QP_EX_WITH_SEND) {
        x->wr_send = wr_send;
    }
    if (ibv_ops & IBV_QP_EX_WITH_SEND_WITH_IMM) {
        x->wr_send_imm = wr_send_imm;
    }
    if (ibv_ops & IBV_QP_EX_WITH_SEND_WITH_INV) {
        x->wr_send_inv = wr_send_inv;
    }
    if (ibv_ops & IBV_QP_EX_WITH_RDMA_WRITE) {
        x->wr_rdma_write = wr_rdma_write;
    }
    if (ibv_ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM) {
        x->wr_rdma_write_imm = wr_rdma_write_imm;
    }
    if (ibv_ops & IBV_QP_EX_WITH_RDMA_READ) {
        x->wr_rdma_read = wr_rdma_read;
    }
    if (ibv_ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP) {
        x->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
    }
    if (ibv_ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD) {
        x->wr_atomic_fetch_add = wr_atomic_fetch_add;
    }

    /* the setters, whatever the operations (as rdma-core installs them) */
    x->wr_set_sge              = wr_set_sge;
    x->wr_set_sge_list         = wr_set_sge_list;
    x->wr_set_inline_data      = wr_set_inline_data;
    x->wr_set_inline_data_list = wr_set_inline_data_list;
    if (q->ibv.qp_type == IBV_QPT_UD) {
        x->wr_set_ud_addr = wr_set_ud_addr;
    }
    if (q->ibv.qp_type == IBV_QPT_XRC_SEND) {
        x->wr_set_xrc_srqn = wr_set_xrc_srqn;
    }
}

int post_data_batch(struct ibv_qp *ibqp, std::vector<data_wr> &batch)
{
    struct ibv_send_wr *bad = nullptr;

    if (batch.empty()) {
        return 0;
    }

    for (size_t i = 0; i < batch.size(); ++i) {
        data_wr &d = batch[i];

        if (!d.inline_data.empty()) {
            /* one gather entry over the copy: the WQE takes it inline */
            d.sges.assign(1, ibv_sge{reinterpret_cast<uintptr_t>(
                                             d.inline_data.data()),
                                     uint32_t(d.inline_data.size()), 0});
        }
        d.wr.sg_list = d.sges.data();
        d.wr.num_sge = int(d.sges.size());
        d.wr.next    = (i + 1 < batch.size()) ? &batch[i + 1].wr : nullptr;
    }
    return emu_post_send(ibqp, &batch[0].wr, &bad);
}

} // namespace uct_ib_emu
