/*
 * Hardware tag matching on an XRQ with the tag-matching topology
 * (firmware/xrq.cc), as ConnectX executes it:
 *
 *  - List operations are TAG_MATCHING WQEs on a QP served by the XRQ (its
 *    user's command QP). APPEND fills the list's free entry (the XRQ's
 *    append_next_index) with a tag, a mask and the buffer of its data
 *    segment, puts it at the end of the matching order and makes the WQE's
 *    index the next free entry; REMOVE takes the entry it names out of the
 *    list; NOP changes nothing. With SW_CNT an APPEND goes only if its
 *    sw_cnt equals the unexpected messages the XRQ has counted (else the
 *    operation fails, its entry used but not listed: a message its user
 *    has not seen yet might match the new tag); with CQE_REQ the XRQ's CQ gets a NO_PACKET CQE whose app_op
 *    names the operation and whose first dword says whether it succeeded.
 *  - Every SEND that reaches a QP served by the XRQ begins with a 16-byte
 *    tag-matching header (struct ibv_tmh). EAGER and RNDV are matched
 *    against the list, oldest entry first: (tag ^ entry.tag) & entry.mask
 *    == 0. A matched eager message goes, without its header, into the
 *    entry's buffer, and completes with one CONSUMED_MSG CQE that carries
 *    the header; a matched rendezvous request (header, struct ibv_rvh,
 *    user header) completes at once with CONSUMED, then the device reads
 *    the sender's data into the buffer itself (an RDMA READ on the QP the
 *    request came on), completes it with EXPECTED and sends the sender a
 *    FIN with the request's app_ctx. An unmatched message is unexpected:
 *    it takes a receive WQE of the XRQ, header and all, completes with
 *    UNEXPECTED and is counted; NO_TAG and FIN messages take a receive WQE
 *    and complete with NO_TAG. The matched entry leaves the list.
 *
 * A CQE's app_info is the entry's index. The rendezvous read and the FIN
 * are the device's own work on the QP: they take PSNs as its user's
 * messages do and are retried as they are, but write no send CQE.
 */
#include <emu/engine/engine.h>

#include <infiniband/tm_types.h>


namespace uct_ib_emu {

namespace {

constexpr uint32_t TMH_SIZE = sizeof(struct ibv_tmh);
/* byte_cnt of a striding queue's CQE: the stride's bytes in the low 16
 * bits, and the message's last packet flagged */
constexpr uint32_t MP_LAST_PACKET = 1u << 30;
constexpr uint32_t RVH_SIZE = sizeof(struct ibv_rvh);

cq *tm_cq(const srq *x)
{
    return x->xrq_cq;
}

/* The result of a list operation, the first 16 bytes of its CQE */
struct list_result {
    __be32  success;
    __be16  hw_phase_cnt;
    uint8_t reserved[10];
};
static_assert(sizeof(list_result) == TMH_SIZE, "a CQE's first 16 bytes");

uint8_t list_op_app_op(uint8_t op)
{
    switch (op) {
    case UCT_MLX5_TM_OP_APPEND:
        return UCT_MLX5_CQE_APP_OP_TM_APPEND;
    case UCT_MLX5_TM_OP_REMOVE:
        return UCT_MLX5_CQE_APP_OP_TM_REMOVE;
    default:
        return UCT_MLX5_CQE_APP_OP_TM_NOOP;
    }
}

bool list_op_execute(srq *x, const send_wqe &w)
{
    tm_exec &tm = x->tm;

    switch (w.tm.op) {
    case UCT_MLX5_TM_OP_APPEND: {
        tm_entry &e = tm.entries[tm.append_next];

        if ((w.tm.index >= tm.entries.size()) || e.listed ||
            (w.sges.size() != TM_MAX_SGE)) {
            return false;
        }
        /* a stale sw_cnt fails the append, but its entry is used all the
         * same: the next free one is the WQE's, as its user counts them */
        tm.append_next = w.tm.index;
        if ((w.tm.flags & UCT_MLX5_TM_FLAG_SW_CNT) &&
            (w.tm.sw_cnt != tm.unexpected)) {
            return false;
        }
        e.listed       = true;
        e.tag          = w.tm.tag;
        e.mask         = w.tm.mask;
        e.buf          = w.sges.front();
        e.seq          = tm.next_seq++;
        return true;
    }
    case UCT_MLX5_TM_OP_REMOVE:
        if ((w.tm.index >= tm.entries.size()) ||
            !tm.entries[w.tm.index].listed) {
            return false; /* consumed by a message already */
        }
        tm.entries[w.tm.index].listed = false;
        return true;
    default:
        return true;
    }
}

/* The oldest listed entry matching tag, or -1 */
int match(const tm_exec &tm, uint64_t tag)
{
    int best = -1;

    for (size_t i = 0; i < tm.entries.size(); ++i) {
        const tm_entry &e = tm.entries[i];

        if (e.listed && (((tag ^ e.tag) & e.mask) == 0) &&
            ((best < 0) || (e.seq < tm.entries[best].seq))) {
            best = static_cast<int>(i);
        }
    }
    return best;
}

/* A tag-matching CQE on the XRQ's CQ for dst (no data) */
void write_tm_cqe(emu_state &s, qp *dst, srq *x, uint8_t opcode,
                  uint8_t app_op, uint16_t entry, uint32_t byte_cnt,
                  const uint8_t *hdr)
{
    cqe_desc d = {};

    d.opcode   = opcode;
    d.qpn      = dst->qpn;
    d.srqn     = x->srqn;
    d.byte_cnt = byte_cnt;
    d.app_op   = app_op;
    d.app_info = entry;
    d.tm_hdr   = hdr;
    if (!cqe_write(s, tm_cq(x), d)) {
        qp_to_error(s, dst, "tag-matching CQ overrun");
    }
}

/* The device's own WQE on q, after what it has queued already */
send_wqe &queue_device_op(qp *q, uint8_t kind, uint8_t opcode, srq *x,
                          uint16_t entry, const uint8_t *tmh)
{
    q->sq_x.device_ops.emplace_back();
    send_wqe &w = q->sq_x.device_ops.back();

    w.device_op    = kind;
    w.opcode       = opcode;
    w.info         = find_opcode(opcode);
    w.index        = 0;
    w.tm_srqn      = x->srqn;
    w.tm_entry     = entry;
    w.retries_left = q->retry_count;
    w.rnr_left     = q->rnr_retry;
    memcpy(w.tm_hdr, tmh, sizeof(w.tm_hdr));
    return w;
}

} // namespace


uint8_t tm_list_op(emu_state &s, qp *q, const send_wqe &w)
{
    srq *x = tm_srq(q);
    list_result result = {};
    bool ok;

    if ((x == nullptr) || (w.tm.op > UCT_MLX5_TM_OP_REMOVE)) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }

    ok = list_op_execute(x, w);
    uct_ib_emu_debug("%s: xrq 0x%x: tag list %s entry %u by qp 0x%x: %s",
                     q->ctx->dev->name.c_str(), x->srqn,
                     (w.tm.op == UCT_MLX5_TM_OP_APPEND) ? "append" :
                     (w.tm.op == UCT_MLX5_TM_OP_REMOVE) ? "remove" : "nop",
                     w.tm.index, q->qpn, ok ? "done" : "refused");
    if (w.tm.flags & UCT_MLX5_TM_FLAG_CQE_REQ) {
        cqe_desc d = {};

        result.success      = htobe32(ok ? uint32_t(MLX5_TMC_SUCCESS) : 0u);
        result.hw_phase_cnt = htobe16(x->tm.unexpected);
        d.opcode            = MLX5_CQE_NO_PACKET;
        d.sop               = w.opcode;
        d.wqe_counter       = w.index;
        d.qpn               = q->qpn;
        d.srqn              = x->srqn;
        d.app_op            = list_op_app_op(w.tm.op);
        d.app_info          = (w.tm.op == UCT_MLX5_TM_OP_REMOVE) ?
                              w.tm.index : uint16_t(0);
        d.tm_hdr            = reinterpret_cast<const uint8_t*>(&result);
        if (!cqe_write(s, tm_cq(x), d)) {
            qp_to_error(s, q, "tag-matching CQ overrun");
        }
    }
    return 0;
}

bool tm_receive(emu_state &, qp *dst, const request_pkt &req)
{
    srq *x          = tm_srq(dst);
    rq_exec &rx     = dst->rq_x;
    struct ibv_tmh tmh = {};
    int entry       = -1;

    rx.tm_skip = 0;
    if (req.hdr.payload_len >= TMH_SIZE) {
        memcpy(&tmh, req.payload, TMH_SIZE);
    } else {
        tmh.opcode = IBV_TMH_NO_TAG; /* too short to carry a header */
    }

    if ((tmh.opcode == IBV_TMH_EAGER) ||
        ((tmh.opcode == IBV_TMH_RNDV) && x->tm.rndv &&
         (req.hdr.payload_len >= TMH_SIZE + RVH_SIZE))) {
        entry = match(x->tm, tmh.tag);
    }

    uct_ib_emu_debug("%s: xrq 0x%x: a message of %u bytes, header opcode "
                     "%u, to qp 0x%x: %s %d", dst->ctx->dev->name.c_str(),
                     x->srqn, req.hdr.msg_len, tmh.opcode, dst->qpn,
                     (entry >= 0) ? "matched entry" : "no match", entry);
    if (entry >= 0) {
        tm_entry &e = x->tm.entries[entry];

        e.listed     = false;
        rx.tm_entry  = static_cast<uint16_t>(entry);
        memcpy(rx.tm_hdr, &tmh, TMH_SIZE);
        rx.wqe_index = 0;
        rx.sges.clear();
        if (tmh.opcode == IBV_TMH_EAGER) {
            rx.tm_app_op = UCT_MLX5_CQE_APP_OP_TM_CONSUMED_MSG;
            rx.tm_skip   = TMH_SIZE;
            rx.sges.push_back(e.buf);
        } else {
            /* the request itself goes nowhere: the device reads the data */
            struct ibv_rvh rvh;

            memcpy(&rvh, req.payload + TMH_SIZE, RVH_SIZE);
            rx.tm_app_op = UCT_MLX5_CQE_APP_OP_TM_CONSUMED;
            rx.tm_skip   = req.hdr.msg_len;
            rx.tm_rndv   = {be64toh(rvh.va), be32toh(rvh.rkey),
                            be32toh(rvh.len)};
        }
        return true;
    }

    if (x->mp_strides > 0) {
        /* a stride per packet, each completed on its own: all of them
         * must be there before the first is taken */
        const uint32_t mtu   = mtu_bytes(dst->mtu);
        const uint64_t npkts = std::max<uint64_t>(
                1, (uint64_t(req.hdr.msg_len) + mtu - 1) / mtu);

        if (srq_strides_left(x) < npkts) {
            return false;
        }
        rx.tm_strides = true;
        rx.sges.clear();
    } else if (!recv_take(dst, &rx.wqe_index, &rx.sges)) {
        return false;
    }
    if ((tmh.opcode == IBV_TMH_EAGER) || (tmh.opcode == IBV_TMH_RNDV)) {
        rx.tm_app_op = UCT_MLX5_CQE_APP_OP_TM_UNEXPECTED;
        ++x->tm.unexpected;
    } else {
        rx.tm_app_op = UCT_MLX5_CQE_APP_OP_TM_NO_TAG;
    }
    return true;
}

void tm_rndv_arrived(emu_state &s, qp *dst, const request_pkt &)
{
    srq *x       = tm_srq(dst);
    rq_exec &rx  = dst->rq_x;
    const tm_entry &e = x->tm.entries[rx.tm_entry];

    write_tm_cqe(s, dst, x, MLX5_CQE_NO_PACKET,
                 UCT_MLX5_CQE_APP_OP_TM_CONSUMED, rx.tm_entry, 0, rx.tm_hdr);
    uct_ib_emu_debug("%s: qp 0x%x: tag entry %u: reading %u bytes of the "
                     "rendezvous at 0x%" PRIx64 " key 0x%x",
                     dst->ctx->dev->name.c_str(), dst->qpn, rx.tm_entry,
                     rx.tm_rndv.len, rx.tm_rndv.va, rx.tm_rndv.rkey);

    send_wqe &w = queue_device_op(dst, DEVICE_OP_RNDV_READ,
                                  MLX5_OPCODE_RDMA_READ, x, rx.tm_entry,
                                  rx.tm_hdr);
    w.raddr  = rx.tm_rndv.va;
    w.rkey   = rx.tm_rndv.rkey;
    w.length = rx.tm_rndv.len;
    w.sges.push_back({e.buf.lkey, e.buf.addr, rx.tm_rndv.len});
    if (rx.tm_rndv.len > e.buf.length) {
        w.bad_syndrome = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    }
}

uint8_t tm_stride_packet(emu_state &s, qp *dst, const request_pkt &req)
{
    srq *x        = tm_srq(dst);
    const bool last = req.last();
    const uint8_t *src = req.payload;
    cqe_desc d    = {};
    frag_list frags;
    uint16_t wqe, stride;
    sge e;

    if (!srq_take_stride(x, &wqe, &stride, &e) ||
        (req.hdr.payload_len > e.length) ||
        (req.hdr.payload_len > x->mp_stride_bytes)) {
        return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    }
    if (mem_translate(dst->ctx->dev, dst->responder_pd(), e.lkey, e.addr,
                      req.hdr.payload_len, IBV_ACCESS_LOCAL_WRITE,
                      &frags) != key_check::OK) {
        return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
    }
    frags.write_from(src);

    /* the immediate, if any, in the last packet's CQE only */
    d.opcode       = (last && (req.info->flags & OP_IMM)) ?
                     MLX5_CQE_RESP_SEND_IMM : MLX5_CQE_RESP_SEND;
    d.imm          = (d.opcode == MLX5_CQE_RESP_SEND_IMM) ? req.hdr.imm : 0;
    d.qpn          = dst->qpn;
    d.srqn         = x->srqn;
    d.wqe_counter  = wqe;
    d.stride_set   = true;
    d.stride_index = stride;
    d.byte_cnt     = req.hdr.payload_len | (last ? MP_LAST_PACKET : 0);
    d.solicited    = last && req.solicited();
    d.app_op       = dst->rq_x.tm_app_op;
    if (!cqe_write(s, tm_cq(x), d)) {
        qp_to_error(s, dst, "tag-matching CQ overrun");
    }
    return 0;
}

void tm_device_op_done(emu_state &s, qp *q, const send_wqe &w,
                       uint8_t syndrome)
{
    auto it = q->ctx->dev->srqs.find(w.tm_srqn);
    srq *x  = (it != q->ctx->dev->srqs.end()) ? it->second : nullptr;
    struct ibv_tmh fin = {};

    if ((syndrome != 0) || (x == nullptr) ||
        (w.device_op != DEVICE_OP_RNDV_READ)) {
        if (syndrome != 0) {
            uct_ib_emu_debug("%s: qp 0x%x: the device's %s for tag entry %u "
                             "failed: syndrome 0x%x",
                             q->ctx->dev->name.c_str(), q->qpn,
                             (w.device_op == DEVICE_OP_RNDV_READ) ?
                             "rendezvous read" : "rendezvous FIN",
                             w.tm_entry, syndrome);
        }
        return;
    }

    write_tm_cqe(s, q, x, MLX5_CQE_RESP_SEND, UCT_MLX5_CQE_APP_OP_TM_EXPECTED,
                 w.tm_entry, w.length, nullptr);

    memcpy(&fin, w.tm_hdr, TMH_SIZE);
    fin.opcode = IBV_TMH_FIN;
    send_wqe &f = queue_device_op(q, DEVICE_OP_RNDV_FIN, MLX5_OPCODE_SEND, x,
                                  w.tm_entry, w.tm_hdr);
    f.is_inline = true;
    f.inline_data.assign(reinterpret_cast<const uint8_t*>(&fin),
                         reinterpret_cast<const uint8_t*>(&fin) + TMH_SIZE);
    f.length    = TMH_SIZE;
}

} // namespace uct_ib_emu
