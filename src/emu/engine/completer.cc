/*
 * The completer, as rxe's rxe_comp: it matches the answers (ACKs, NAKs,
 * read and atomic responses) to the requester's WQEs, completes them, and
 * writes the CQEs of both halves.
 *
 * CQEs as the device writes them into a CQ ring: the 64-byte body first,
 * then the ownership byte (opcode << 4 | owner) with release ordering; the
 * owner bit is the pass over the ring, (pi / cqe_cnt) & 1. A ring whose
 * consumer index (the CQ doorbell record) shows no room overruns: nothing is
 * overwritten, the CQ is in error from then on (reported once, as a CQ
 * error asynchronous event of its context) and the QP that completed moves
 * to ERR, as firmware does with overrun checking on.
 *
 * Scatter to CQE (qpc.cs_req, qpc.cs_res of a DevX RC QP): the data of a
 * read or atomic response of a signaled WQE, or of a received SEND, that
 * fits is written into the CQE instead of memory. Up to 32 bytes go into
 * the first 32 bytes of the 64-byte CQE (op_own MLX5_INLINE_SCATTER_32),
 * 33 to 64 bytes into the 64 bytes before it, the first half of a 128-byte
 * CQE (MLX5_INLINE_SCATTER_64); this is where UCX's rc_mlx5 and
 * rdma-core's receive path read them. The "64 bytes" settings (cs_req
 * 0x22, cs_res 2) need 128-byte CQEs, which the kernel asks for only then;
 * with 64-byte CQEs they scatter up to 32 bytes (a choice of the model:
 * nothing lands outside the CQE).
 */
#include <emu/engine/engine.h>


namespace uct_ib_emu {

namespace {

constexpr uint32_t CQ_INDEX_MASK = 0xffffff; /* 24-bit consumer index */

bool cq_room_seen(const cq *c)
{
    return ((c->exec.pi - c->exec.ci_seen) & CQ_INDEX_MASK) < c->cqe_cnt;
}

/* The consumer index only moves on, so an old reading that shows room is
 * right; the doorbell record (a line its user keeps writing) is read again
 * only when the old reading shows the ring full */
bool cq_has_room(cq *c)
{
    const uint32_t *dbrec = static_cast<const uint32_t*>(c->dbrec.get());

    if (cq_room_seen(c)) {
        return true;
    }

    c->exec.ci_seen = dma_load_be32(&dbrec[UCT_MLX5_CQ_DBR_SET_CI]) &
                      CQ_INDEX_MASK;
    return cq_room_seen(c);
}

/* A CQE as it is written into the ring */
union cqe_body {
    struct mlx5_cqe64   ok;
    struct mlx5_err_cqe err;
    uint8_t             raw[CQE_SIZE];
};

static_assert(sizeof(struct mlx5_cqe64) == CQE_SIZE, "a 64-byte CQE");
static_assert(sizeof(struct mlx5_err_cqe) == CQE_SIZE, "a 64-byte error CQE");

constexpr uint32_t SCATTER_32 = 32; /* inside the 64-byte CQE */
constexpr size_t   CQE_STRIDE_INDEX_OFFSET = 20;

/* What a "32" or "64" setting scatters with CQEs of c's size */
uint32_t scatter_max(uint32_t setting, const cq *c)
{
    if (c == nullptr) {
        return 0;
    }
    return (c->cqe_size >= CQE_SIZE + CQE_SCATTER_MAX) ? setting :
           std::min(setting, SCATTER_32);
}

bool signaled(const send_wqe &w)
{
    return w.fm_ce_se & MLX5_WQE_CTRL_CQ_UPDATE;
}


/* The response of w goes into its CQE (scatter to CQE) */
bool response_to_cqe(const qp *q, const send_wqe &w)
{
    return (w.info != nullptr) && (w.info->flags & OP_RESPONSE) &&
           signaled(w) && (w.length > 0) &&
           (w.length <= cqe_scatter_max_req(q));
}

/* Scatter len bytes of a read/atomic response, at offset of the message,
 * into the WQE's local buffers */
void scatter_response(const qp *q, const send_wqe &w, size_t offset,
                      const uint8_t *src, size_t len)
{
    const device *dev = q->ctx->dev;

    for (const sge &e : w.sges) {
        frag_list frags;
        uint32_t take;

        if (offset >= e.length) {
            offset -= e.length;
            continue;
        }

        take = static_cast<uint32_t>(std::min<size_t>(e.length - offset, len));
        /* checked before the request was sent (the keys may have gone
         * since, when the answer comes from another host) */
        if (mem_translate(dev, q->pd, e.lkey, e.addr + offset, take,
                          IBV_ACCESS_LOCAL_WRITE, &frags) != key_check::OK) {
            return;
        }
        frags.write_from(src);
        len   -= take;
        offset = 0;
        if (len == 0) {
            return;
        }
    }
}

void finish_sent(emu_state &s, qp *q, uint8_t syndrome)
{
    send_wqe &w = q->sq_x.wqes.front();

    if (syndrome == 0) {
        complete_wqe(s, q, w, 0);
    } else {
        fail_wqe(s, q, w, syndrome);
    }
    q->sq_x.reads_out -= !!(w.info->flags & OP_RESPONSE);
    q->sq_x.wqes.pop_front();
    --q->sq_x.sent;
}

} // namespace


uint32_t cqe_scatter_max_req(const qp *q)
{
    switch (q->cs_req) {
    case UCT_MLX5_QPC_CS_REQ_UP_TO_32B:
        return scatter_max(SCATTER_32, q->send_cq);
    case UCT_MLX5_QPC_CS_REQ_UP_TO_64B:
        return scatter_max(CQE_SCATTER_MAX, q->send_cq);
    default:
        return 0;
    }
}

uint32_t cqe_scatter_max_res(const qp *q)
{
    switch (q->cs_res) {
    case UCT_MLX5_QPC_CS_RES_UP_TO_32B:
        return scatter_max(SCATTER_32, q->recv_cq);
    case UCT_MLX5_QPC_CS_RES_UP_TO_64B:
        return scatter_max(CQE_SCATTER_MAX, q->recv_cq);
    default:
        return 0;
    }
}

uint8_t vendor_syndrome(uint8_t syndrome)
{
    /* The emulator's own codes: firmware documents none of them, so tests
     * and the library key on the syndrome, never on these */
    switch (syndrome) {
    case MLX5_CQE_SYNDROME_WR_FLUSH_ERR:
        return 0xf9;
    case MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
        return 0x81;
    case MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
        return 0x82;
    default:
        return 0x01;
    }
}

bool cqe_write(emu_state &s, cq *c, const cqe_desc &d)
{
    uint8_t *slot;
    uint8_t owner;
    uint8_t format = 0;

    /* a CQ without overrun checking overwrites what its user did not
     * consume, as the device does with the CQ context's oi bit */
    if (c->exec.in_error || (!c->ignore_overrun && !cq_has_room(c))) {
        if (!c->exec.in_error) {
            uct_ib_emu_debug("%s: cq 0x%x overrun", c->ctx->dev->name.c_str(),
                             c->cqn);
            async_event_cq_error(s, c);
        }
        c->exec.in_error = true;
        ++c->overruns;
        count_cq_overrun(s, c, d.qpn);
        return false;
    }

    slot  = c->buf.bytes() + size_t(c->exec.pi & (c->cqe_cnt - 1)) *
                             c->cqe_size + (c->cqe_size - CQE_SIZE);
    owner = (c->exec.pi & c->cqe_cnt) ? 1 : 0;

    /* The body is built aside and copied in at once: the slot's line is
     * the one its consumer polls, so fewer stores into it mean fewer trips
     * of the line between the two */
    cqe_body body = {};
    if ((d.opcode == MLX5_CQE_REQ_ERR) || (d.opcode == MLX5_CQE_RESP_ERR)) {
        struct mlx5_err_cqe *e = &body.err;

        /* mlx5_err_cqe declares host integers that hold big-endian values */
        e->srqn             = htobe32(d.srqn);
        e->vendor_err_synd  = d.vendor_syndrome;
        e->syndrome         = d.syndrome;
        e->s_wqe_opcode_qpn = htobe32((uint32_t(d.sop) << 24) |
                                      (d.qpn & 0xffffff));
        e->wqe_counter      = htobe16(d.wqe_counter);
        count_err_cqe(s, c, d.qpn, d.syndrome);
    } else {
        struct mlx5_cqe64 *e = &body.ok;

        e->srqn_uidx      = htobe32(d.srqn & 0xffffff);
        e->imm_inval_pkey = d.imm;
        e->byte_cnt       = htobe32(d.byte_cnt);
        e->sop_drop_qpn   = htobe32((uint32_t(d.sop) << 24) |
                                    (d.qpn & 0xffffff));
        e->wqe_counter    = htobe16(d.wqe_counter);
        e->timestamp      = htobe64(hca_clock_ticks(s));
        if (d.ud) {
            e->flags_rqpn = htobe32(d.flags_rqpn);
            e->slid       = htobe16(d.slid);
            e->ml_path    = d.ml_path;
        }
        if (d.app_op != 0) {
            e->app      = UCT_MLX5_CQE_APP_TAG_MATCHING;
            e->app_op   = d.app_op;
            e->app_info = htobe16(d.app_info);
            if (d.tm_hdr != nullptr) {
                memcpy(body.raw, d.tm_hdr, sizeof(struct ibv_tmh));
            }
        }
        if (d.stride_set) {
            /* a striding queue's stride: a big-endian 16-bit index at
             * bytes 20 and 21, reserved in other CQEs */
            const uint16_t stride = htobe16(d.stride_index);

            memcpy(body.raw + CQE_STRIDE_INDEX_OFFSET, &stride,
                   sizeof(stride));
        }

        /* the callers checked that the data fits this CQ's CQEs */
        if ((d.scatter_len > 0) && (d.scatter_len <= SCATTER_32)) {
            memcpy(body.raw, d.scatter, d.scatter_len);
            format = MLX5_INLINE_SCATTER_32;
        } else if (d.scatter_len > 0) {
            uint8_t *before = slot - CQE_SCATTER_MAX;

            ucs_assert((c->cqe_size >= CQE_SIZE + CQE_SCATTER_MAX) &&
                       (d.scatter_len <= CQE_SCATTER_MAX));
            memcpy(before, d.scatter, d.scatter_len);
            memset(before + d.scatter_len, 0,
                   CQE_SCATTER_MAX - d.scatter_len);
            format = MLX5_INLINE_SCATTER_64;
        }
    }
    memcpy(slot, body.raw, CQE_SIZE - 1);

    dma_store_u8(slot + CQE_SIZE - 1,
                 static_cast<uint8_t>((d.opcode << 4) | format | owner));
    ++c->exec.pi;
    if (s.poll_wait.active()) {
        s.poll_wait.written(c); /* a poll may wait for it */
    }
    cq_event_check(s, c, d.solicited || (d.syndrome != 0));
    return true;
}

void qp_to_error(emu_state &, qp *q, const char *why)
{
    if (q->state == UCT_MLX5_QP_STATE_ERR) {
        return;
    }

    uct_ib_emu_debug("%s:%u: qp 0x%x to error: %s",
                     q->ctx->dev->name.c_str(), q->port, q->qpn, why);
    q->state     = UCT_MLX5_QP_STATE_ERR;
    q->ibv.state = IBV_QPS_ERR;
    if (!q->devx) {
        qp_flush_verbs_sends(q);
    }
    devx_events_qp_error(q);
}


/* ------------------------------------------------------------------------
 * The requester's WQEs, completed from their answers (rxe's rxe_comp)
 */

void complete_wqe(emu_state &s, qp *q, const send_wqe &w, uint8_t syndrome)
{
    cqe_desc d = {};

    if (w.device_op != DEVICE_OP_NONE) {
        tm_device_op_done(s, q, w, syndrome); /* not the user's: no CQE */
        return;
    }

    if ((syndrome == 0) && !signaled(w)) {
        return;
    }

    d.sop         = w.opcode;
    d.wqe_counter = w.index;
    d.qpn         = q->qpn;
    d.srqn        = q->user_index; /* CQE version 1: the QP's user index */
    d.byte_cnt    = w.length;
    if (syndrome != 0) {
        d.opcode          = MLX5_CQE_REQ_ERR;
        d.syndrome        = syndrome;
        d.vendor_syndrome = vendor_syndrome(syndrome);
    } else {
        d.opcode          = MLX5_CQE_REQ;
        if (response_to_cqe(q, w)) {
            d.scatter     = w.cqe_data;
            d.scatter_len = w.length;
        }
    }

    if ((q->send_cq == nullptr) || !cqe_write(s, q->send_cq, d)) {
        qp_to_error(s, q, "send CQ overrun");
    }
}

void fail_wqe(emu_state &s, qp *q, const send_wqe &w, uint8_t syndrome)
{
    uct_ib_emu_debug("%s:%u: qp 0x%x wqe 0x%x (%s) failed: syndrome 0x%x",
                     q->ctx->dev->name.c_str(), q->port, q->qpn, w.index,
                     (w.info != nullptr) ? w.info->name : "unknown opcode",
                     syndrome);
    complete_wqe(s, q, w, syndrome);
    if (q->is_ud()) {
        qp_to_sq_error(q, "error completion"); /* receives go on */
    } else {
        qp_to_error(s, q, "error completion");
    }
}


void take_response(const qp *q, send_wqe &w, size_t offset,
                   const uint8_t *src, size_t len)
{
    if (!response_to_cqe(q, w)) {
        scatter_response(q, w, offset, src, len);
    } else if ((w.info->flags & OP_ATOMIC_OP) &&
               (w.atomic_size == sizeof(uint64_t))) {
        /* memory gets an 8-byte atomic's original value in host order
         * (the 8-byte endianness mode); the CQE gets it as the wire
         * carries it, big endian (UCX's rc_mlx5 swaps it back) */
        uint64_t v = 0;

        memcpy(&v, src, sizeof(v));
        v = htobe64(v);
        memcpy(w.cqe_data, &v, sizeof(v));
    } else if (offset < w.length) {
        memcpy(w.cqe_data + offset, src,
               std::min<size_t>(len, w.length - offset));
    }
}

uint8_t nak_syndrome(resp_kind kind)
{
    switch (kind) {
    case resp_kind::NAK_INVALID:
        return MLX5_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR;
    case resp_kind::NAK_ACCESS:
        return MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR;
    default:
        return MLX5_CQE_SYNDROME_REMOTE_OP_ERR;
    }
}



bool rnr_retry_left(emu_state &s, qp *q, send_wqe &w)
{
    count_rnr_nak(s, q);
    if (q->rnr_retry == 7) {
        return true; /* retried forever */
    }
    if (w.rnr_left == 0) {
        return false;
    }
    --w.rnr_left;
    return true;
}

void completer_ack(emu_state &s, qp *q, send_wqe &w, const uint8_t *data,
                   size_t len)
{
    if (w.info->flags & OP_RESPONSE) {
        take_response(q, w, 0, data, len);
    }
    complete_wqe(s, q, w, 0);
}

void completer_response(emu_state &s, qp *q, const wire::resp_hdr &h,
                        const uint8_t *data)
{
    count_delivered(s, q);
    if (q->state != UCT_MLX5_QP_STATE_RTS) {
        return; /* flushed, or reset: nothing waits for it */
    }

    // bounded: each pass retires the oldest sent WQE (finish_sent) or returns
    while (q->sq_x.sent > 0) {
        send_wqe &w   = q->sq_x.wqes.front();
        uint32_t last = (w.first_psn + w.npkts - 1) & 0xffffff;
        resp_kind kind = static_cast<resp_kind>(h.kind);

        if (psn_before(h.psn, w.first_psn)) {
            return; /* the answer to a retransmission we no longer need */
        }

        if (psn_before(last, h.psn)) {
            /* a later answer acknowledges w, but w's own data is missing:
             * it times out and is read again */
            if (w.info->flags & OP_RESPONSE) {
                return;
            }
            finish_sent(s, q, 0);
            continue;
        }

        if (kind == resp_kind::ACK) {
            if (h.psn != last) {
                return;
            }
            if (w.info->flags & OP_RESPONSE) {
                if (h.offset != w.resp_got) {
                    return; /* a lost piece: w times out */
                }
                take_response(q, w, h.offset, data, h.data_len);
                w.resp_got += h.data_len;
                if (w.resp_got < h.total) {
                    /* a long read progresses: it has not timed out */
                    requester_answered(s, q, w);
                    return;
                }
            }
            finish_sent(s, q, 0);
        } else if (kind == resp_kind::RNR_NAK) {
            if (!rnr_retry_left(s, q, w)) {
                finish_sent(s, q, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
                return;
            }
            requester_rewind(q);
            requester_rnr_wait(s, w, h.rnr_timer);
        } else {
            finish_sent(s, q, nak_syndrome(kind));
        }
        return;
    }
}

} // namespace uct_ib_emu
