/*
 * Where the rings of a QP are (a DevX QP's umem, or the buffer a verbs QP's
 * mlx5dv_init_obj hands out) and how the device takes receive WQEs from a
 * regular RQ (data segments, ended by MLX5_INVALID_LKEY or the stride) or
 * from an SRQ (a next segment, then data segments; the device follows the
 * next-index links from its head, or takes a cyclic RMP's entries in order,
 * and never writes the entries).
 */
#include <emu/engine/engine.h>
#include <emu/model/events.h>


namespace uct_ib_emu {

namespace {

constexpr unsigned DATA_SEG_SIZE = sizeof(struct mlx5_wqe_data_seg);
constexpr uint8_t  RQ_TYPE_REGULAR = 0x0;

void read_data_segs(const uint8_t *wqe, unsigned max_segs,
                    std::vector<sge> *sges)
{
    sges->clear();
    for (unsigned i = 0; i < max_segs; ++i) {
        struct mlx5_wqe_data_seg seg;

        memcpy(&seg, wqe + i * DATA_SEG_SIZE, sizeof(seg));
        if (be32toh(seg.lkey) == MLX5_INVALID_LKEY) {
            break;
        }
        sges->push_back({be32toh(seg.lkey), be64toh(seg.addr),
                         be32toh(seg.byte_count)});
    }
}

uint16_t rq_producer(const qp *q)
{
    return static_cast<uint16_t>(dma_load_be32(&qp_dbrec(q)[MLX5_RCV_DBR]));
}

/* Whether a receive WQE is posted past consumed: the doorbell record (a
 * line its user keeps writing) is read again only when the last reading
 * has been used up, as it only moves on */
bool rq_has_wqe(qp *q)
{
    if (q->rq_x.producer_seen == q->rq_x.consumed) {
        q->rq_x.producer_seen = rq_producer(q);
    }
    return q->rq_x.producer_seen != q->rq_x.consumed;
}

bool srq_has_wqe(srq *sq)
{
    if (sq->exec.producer_seen == sq->exec.consumed) {
        sq->exec.producer_seen = static_cast<uint16_t>(
                dma_load_be32(&srq_dbrec(sq)[0]));
    }
    return sq->exec.producer_seen != sq->exec.consumed;
}

/* An SRQ whose posted WQEs fell below its armed limit raises its limit
 * event and disarms it, as the IB spec has it: a verbs SRQ on the
 * context's async_fd, a DevX RMP as SRQ_LIMIT on the DevX event channels
 * subscribed to it */
void srq_limit_check(srq *sq)
{
    const uint16_t left = sq->exec.producer_seen - sq->exec.consumed;

    if ((sq->lwm > 0) && (left < sq->lwm)) {
        sq->lwm = 0;
        if (sq->devx) {
            devx_events_rmp_limit(sq);
        } else {
            async_event_srq_limit(sq);
        }
    }
}

/* A linked-list SRQ hands out the entry at its head and moves to the entry
 * it links to; a cyclic RMP its entries in ring order, its next segments
 * unread. The CQE names the entry by its index in the ring. */
bool srq_take(srq *sq, uint16_t *wqe_index, std::vector<sge> *sges)
{
    const size_t next_size = sizeof(struct mlx5_wqe_srq_next_seg);
    const uint8_t *wqe;
    struct mlx5_wqe_srq_next_seg next;

    if (!srq_has_wqe(sq)) {
        return false;
    }

    if (sq->wq_type == UCT_MLX5_WQ_TYPE_CYCLIC) {
        *wqe_index = sq->exec.consumed & (sq->wqe_cnt - 1);
        wqe        = srq_ring(sq) + size_t(*wqe_index) * sq->stride;
    } else {
        *wqe_index = sq->exec.head;
        wqe        = srq_ring(sq) +
                     size_t(sq->exec.head & (sq->wqe_cnt - 1)) * sq->stride;
        memcpy(&next, wqe, sizeof(next));
        sq->exec.head = be16toh(next.next_wqe_index);
    }

    read_data_segs(wqe + next_size, (sq->stride - next_size) / DATA_SEG_SIZE,
                   sges);
    ++sq->exec.consumed;
    srq_limit_check(sq);
    return true;
}

} // namespace


uint32_t *qp_dbrec(const qp *q)
{
    if (q->devx) {
        return reinterpret_cast<uint32_t*>(
                static_cast<uint8_t*>(q->dbr_umem->addr) + q->dbr_offset);
    }

    return static_cast<uint32_t*>(q->dbrec.get());
}

ring rq_ring(const qp *q)
{
    ring r = {};

    if (q->devx) {
        if (q->rq_type == RQ_TYPE_REGULAR) {
            r.buf    = static_cast<uint8_t*>(q->wq_umem->addr) +
                       q->wq_umem_offset;
            r.cnt    = 1u << q->log_rq_size;
            r.stride = 16u << q->log_rq_stride;
        }
    } else if (q->srq == nullptr) {
        r.buf    = q->wq_buf.bytes();
        r.cnt    = q->rq_wqe_cnt;
        r.stride = q->rq_stride;
    }
    return r;
}

ring sq_ring(const qp *q)
{
    ring rq = rq_ring(q);
    ring r  = {};

    if (q->devx) {
        if (!q->no_sq) {
            r.buf = static_cast<uint8_t*>(q->wq_umem->addr) +
                    q->wq_umem_offset + size_t(rq.cnt) * rq.stride;
            r.cnt = 1u << q->log_sq_size;
        }
    } else {
        r.buf = q->wq_buf.bytes() + size_t(rq.cnt) * rq.stride;
        r.cnt = q->sq_wqe_cnt;
    }
    r.stride = MLX5_SEND_WQE_BB;
    return r;
}

uint64_t srq_strides_left(srq *sq)
{
    (void)srq_has_wqe(sq); /* the doorbell record read again if used up */
    return uint64_t(uint16_t(sq->exec.producer_seen - sq->exec.consumed)) *
           sq->mp_strides +
           (sq->exec.mp_sges.size() - sq->exec.mp_used);
}

bool srq_take_stride(srq *sq, uint16_t *wqe_index, uint16_t *stride,
                     sge *out)
{
    srq_exec &x = sq->exec;

    if (x.mp_used >= x.mp_sges.size()) {
        x.mp_sges.clear();
        x.mp_used = 0;
        if (!srq_take(sq, &x.mp_wqe, &x.mp_sges) || x.mp_sges.empty()) {
            return false;
        }
        /* a data segment per stride: those beyond the strides are not */
        x.mp_sges.resize(std::min<size_t>(x.mp_sges.size(), sq->mp_strides));
    }
    *wqe_index = x.mp_wqe;
    *stride    = static_cast<uint16_t>(x.mp_used);
    *out       = x.mp_sges[x.mp_used++];
    return true;
}

bool recv_take(qp *q, uint16_t *wqe_index, std::vector<sge> *sges)
{
    srq *sq = q->is_xrc_tgt() ? q->xrc_srq : q->srq;

    if (sq != nullptr) {
        return srq_take(sq, wqe_index, sges);
    }

    ring r = rq_ring(q);
    if ((r.buf == nullptr) || !rq_has_wqe(q)) {
        return false;
    }

    *wqe_index = q->rq_x.consumed;
    read_data_segs(r.buf + size_t(q->rq_x.consumed & (r.cnt - 1)) * r.stride,
                   r.stride / DATA_SEG_SIZE, sges);
    ++q->rq_x.consumed;
    return true;
}

bool recv_flush(emu_state &s, qp *q)
{
    bool did = false;
    cqe_desc d = {};

    if (q->recv_cq == nullptr) {
        return false;
    }

    d.opcode          = MLX5_CQE_RESP_ERR;
    d.qpn             = q->qpn;
    d.syndrome        = MLX5_CQE_SYNDROME_WR_FLUSH_ERR;
    d.vendor_syndrome = vendor_syndrome(d.syndrome);
    d.srqn            = (q->srq != nullptr) ? q->srq->srqn : 0;

    if (q->rq_x.in_send) {
        d.wqe_counter   = q->rq_x.wqe_index;
        q->rq_x.in_send = false;
        cqe_write(s, q->recv_cq, d);
        did = true;
    }

    if (q->srq != nullptr) {
        return did; /* an SRQ's WQEs stay for its other QPs */
    }

    ring r = rq_ring(q);
    if (r.buf == nullptr) {
        return did;
    }

    while (rq_producer(q) != q->rq_x.consumed) {
        d.wqe_counter = q->rq_x.consumed++;
        cqe_write(s, q->recv_cq, d);
        did = true;
    }
    q->rq_x.producer_seen = q->rq_x.consumed;
    return did;
}

} // namespace uct_ib_emu
