/*
 * The responder half: a request packet that reached its destination QP is
 * validated and executed against that QP and its device's memory only, and
 * answered with an ACK, a NAK or a read/atomic response.
 *
 * The checks, in order: the message fits 2^log_msg_max (else invalid
 * request); a SEND or WRITE_IMM needs a receive WQE at its first packet
 * (else RNR NAK with the QP's min_rnr_nak); the QP's remote access enables
 * (rwe/rre/rae) and the rkey's rights and bounds (else remote access error);
 * an atomic must be naturally aligned (else invalid request); a receive
 * buffer too small or a bad lkey in the receive WQE completes the receive
 * with a local length or protection error. Every error but RNR moves the QP
 * to ERR (class C of the IB specification), and the receive in progress, if
 * any, completes with the error.
 *
 * With scatter to CQE (qpc.cs_res), a SEND whose whole message fits (one
 * packet: at most 64 bytes) goes into the receive CQE instead of the
 * receive buffer, whichever queue (RQ, SRQ, RMP) the WQE came from; the
 * WQE is consumed and its buffer must still be large enough, but memory
 * is not touched.
 *
 * PSNs: a request at the expected PSN executes; one behind it is a
 * retransmission whose response was lost (acknowledged again without
 * executing, an atomic's result replayed, a read read again); one ahead of
 * it is discarded without a response.
 *
 * Atomics operate on memory in host order (atomic_req_8B_endianness_mode 1,
 * host endianness, which the kernel sets where the device supports it, and
 * with which verbs reports IBV_ATOMIC_HCA); the original value goes back
 * as the requester's memory takes it: in host order for every 8-byte
 * atomic, standard or masked (the mode is of 8-byte requests, as UCX
 * 1.13.1 reads it: its extended 8-byte results are host order unless the
 * mode is big endian), and big endian for the 4-byte masked ones.
 */
#include <emu/engine/engine.h>


namespace uct_ib_emu {

namespace {

constexpr uint32_t PSN_MASK   = 0xffffff;
constexpr uint32_t PSN_WINDOW = 0x800000; /* half the PSN space */

void store_be(uint8_t *p, unsigned size, uint64_t v)
{
    for (unsigned i = size; i-- > 0;) {
        p[i] = static_cast<uint8_t>(v);
        v  >>= 8;
    }
}

uint64_t load_host(const uint8_t *p, unsigned size)
{
    if (size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, p, sizeof(v));
        return v;
    }

    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}

void store_host(uint8_t *p, unsigned size, uint64_t v)
{
    if (size == sizeof(uint32_t)) {
        const uint32_t v32 = static_cast<uint32_t>(v);
        memcpy(p, &v32, sizeof(v32));
    } else {
        memcpy(p, &v, sizeof(v));
    }
}

/* The original value an atomic answers with, as the requester's memory
 * takes it: host order on 8 bytes, big endian on 4 */
void atomic_response(const request_pkt &req, uint64_t orig,
                     response_pkt *resp)
{
    resp->data.resize(req.hdr.atomic_size);
    if (req.hdr.atomic_size == sizeof(uint64_t)) {
        store_host(resp->data.data(), req.hdr.atomic_size, orig);
    } else {
        store_be(resp->data.data(), req.hdr.atomic_size, orig);
    }
}

/* Add with carries stopped above every bit set in boundary */
uint64_t masked_add(uint64_t a, uint64_t b, uint64_t boundary, unsigned bits)
{
    uint64_t result = 0;
    unsigned carry  = 0;

    for (unsigned i = 0; i < bits; ++i) {
        unsigned sum = ((a >> i) & 1) + ((b >> i) & 1) + carry;

        result |= uint64_t(sum & 1) << i;
        carry   = ((boundary >> i) & 1) ? 0 : (sum >> 1);
    }
    return result;
}

uint64_t atomic_result(const request_pkt &req, uint64_t orig)
{
    unsigned bits  = req.hdr.atomic_size * 8;
    uint64_t mask  = (bits == 64) ? ~0ull : ((1ull << bits) - 1);

    switch (req.info->opcode) {
    case MLX5_OPCODE_ATOMIC_CS:
        return (orig == req.hdr.atomic[1]) ? req.hdr.atomic[0] : orig;
    case MLX5_OPCODE_ATOMIC_FA:
        return orig + req.hdr.atomic[0];
    case MLX5_OPCODE_ATOMIC_MASKED_CS:
        /* operands: swap, compare, swap_mask, compare_mask */
        if (((orig ^ req.hdr.atomic[1]) & req.hdr.atomic[3]) != 0) {
            return orig;
        }
        return ((orig & ~req.hdr.atomic[2]) |
                (req.hdr.atomic[0] & req.hdr.atomic[2])) &
               mask;
    case MLX5_OPCODE_ATOMIC_MASKED_FA:
        /* operands: add, field_boundary */
        return masked_add(orig, req.hdr.atomic[0], req.hdr.atomic[1], bits);
    default:
        return orig;
    }
}

/* Scatter the packet's payload into the receive in progress */
uint8_t scatter(qp *dst, const request_pkt &req)
{
    const device *dev = dst->ctx->dev;
    const uint8_t *src = req.payload;
    uint32_t left      = req.hdr.payload_len;
    uint32_t skip      = dst->rq_x.offset;
    uint32_t dropped   = std::min(left, dst->rq_x.tm_skip);

    /* what tag matching keeps out of the buffer (a matched header) */
    src                += dropped;
    left               -= dropped;
    dst->rq_x.tm_skip  -= dropped;

    if (req.first() && req.last() && (req.hdr.msg_len > 0) &&
        (req.hdr.msg_len <= cqe_scatter_max_res(dst)) &&
        (dropped == 0)) {
        uint64_t room = 0;

        for (const sge &e : dst->rq_x.sges) {
            room += e.length;
        }
        if (room < req.hdr.payload_len) {
            return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
        }
        memcpy(dst->rq_x.cqe_data, src, left);
        dst->rq_x.cqe_len = left;
        dst->rq_x.offset += left;
        return 0;
    }

    for (const sge &e : dst->rq_x.sges) {
        frag_list frags;
        uint32_t take;

        if (left == 0) {
            break;
        }
        if (skip >= e.length) {
            skip -= e.length;
            continue;
        }

        take = std::min(e.length - skip, left);
        if (mem_translate(dev, dst->responder_pd(), e.lkey, e.addr + skip, take,
                          IBV_ACCESS_LOCAL_WRITE, &frags) != key_check::OK) {
            return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
        }
        frags.write_from(src);
        left -= take;
        skip  = 0;
    }

    if (left > 0) {
        return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    }

    dst->rq_x.offset += req.hdr.payload_len - dropped;
    return 0;
}

void recv_complete(emu_state &s, qp *dst, const request_pkt &req,
                   uint8_t syndrome)
{
    /* an XRC target's receives are its SRQ's, on the SRQ's CQ, and an
     * XRQ's on its own */
    const srq *sq = dst->is_xrc_tgt() ? dst->xrc_srq : dst->srq;
    cq *rcq       = dst->is_xrc_tgt() ? dst->xrc_srq->xrc_cq :
                    ((sq != nullptr) && sq->xrq) ? sq->xrq_cq : dst->recv_cq;
    const uint8_t app_op = dst->rq_x.tm_app_op;
    cqe_desc d    = {};

    if ((syndrome == 0) && (app_op == UCT_MLX5_CQE_APP_OP_TM_CONSUMED)) {
        dst->rq_x.in_send = false;
        tm_rndv_arrived(s, dst, req); /* the device fetches the data */
        return;
    }

    d.wqe_counter = dst->rq_x.wqe_index;
    d.qpn         = dst->qpn;
    d.srqn        = (sq != nullptr) ? sq->srqn : 0;
    d.byte_cnt    = req.hdr.msg_len;
    d.solicited   = req.solicited();
    if (dst->stream_of != nullptr) {
        /* DC: who sent it, as a DCT's CQE says (UCX answers a DC flow
         * control request to this LID) */
        d.ud         = true;
        d.flags_rqpn = req.hdr.src_qpn & 0xffffff;
        d.slid       = req.hdr.dc_slid;
    }
    if ((syndrome == 0) && (app_op != 0)) {
        d.app_op   = app_op;
        d.app_info = dst->rq_x.tm_entry;
        if (app_op == UCT_MLX5_CQE_APP_OP_TM_CONSUMED_MSG) {
            d.tm_hdr    = dst->rq_x.tm_hdr;
            d.byte_cnt -= sizeof(dst->rq_x.tm_hdr);
        }
    }
    if (syndrome != 0) {
        d.opcode          = MLX5_CQE_RESP_ERR;
        d.syndrome        = syndrome;
        d.vendor_syndrome = vendor_syndrome(syndrome);
    } else if (req.info->flags & OP_WRITE) {
        d.opcode = MLX5_CQE_RESP_WR_IMM;
        d.imm    = req.hdr.imm;
    } else if (req.info->flags & OP_IMM) {
        d.opcode = MLX5_CQE_RESP_SEND_IMM;
        d.imm    = req.hdr.imm;
    } else if (req.info->flags & OP_INVAL) {
        d.opcode = MLX5_CQE_RESP_SEND_INV;
        d.imm    = req.hdr.imm; /* the invalidated key */
    } else {
        d.opcode = MLX5_CQE_RESP_SEND;
    }
    if ((syndrome == 0) && (dst->rq_x.cqe_len > 0)) {
        d.scatter     = dst->rq_x.cqe_data;
        d.scatter_len = dst->rq_x.cqe_len;
    }

    dst->rq_x.in_send = false;
    dst->rq_x.cqe_len = 0;
    dst->rq_x.sges.clear();
    if (rcq != nullptr) {
        if (!cqe_write(s, rcq, d)) {
            qp_to_error(s, dst, "receive CQ overrun");
        }
    }
}

/* A NAK that moves the responder to ERR, completing its receive */
void fail(emu_state &s, qp *dst, const request_pkt &req, response_pkt *resp,
          resp_kind kind, uint8_t recv_syndrome, const char *why)
{
    if (dst->rq_x.in_send) {
        recv_complete(s, dst, req, recv_syndrome);
    }

    resp->kind = kind;
    qp_to_error(s, dst, why);
}

bool remote_translate(qp *dst, const request_pkt &req, uint64_t addr,
                      uint64_t len, int access, frag_list *frags)
{
    return mem_translate(dst->ctx->dev, dst->responder_pd(), req.hdr.rkey,
                         addr, len, access, frags, dst) == key_check::OK;
}

/*
 * UC (IBA 9.7.5.2, 9.8.3): nothing is answered, and what RC would NAK is
 * dropped without a word. A packet out of sequence is dropped with the rest
 * of its message, unless it begins a message, which starts afresh there; a
 * message that could not be taken (no receive WQE, a write the keys refuse)
 * is dropped whole. A receive WQE a dropped message had begun to fill is
 * filled again by the next one. Only a receive that cannot hold its message
 * completes in error (and the QP with it), as on RC.
 */
void receive_uc(emu_state &s, qp *dst, const request_pkt &req)
{
    const unsigned flags = req.info->flags;
    frag_list frags;
    uint8_t syndrome;

    if (req.hdr.psn != dst->next_rcv_psn) {
        if (!req.first()) {
            dst->rq_x.discarding = true;
            return;
        }
        dst->rq_x.discarding = false; /* a new message: in sequence again */
    } else if (req.first()) {
        dst->rq_x.discarding = false;
    }
    dst->next_rcv_psn = (req.hdr.psn + 1) & PSN_MASK;
    if (dst->rq_x.discarding) {
        return;
    }

    if (req.first() &&
        (uint64_t(req.hdr.msg_len) > (1ull << dst->log_msg_max))) {
        dst->rq_x.discarding = !req.last();
        return;
    }

    if ((flags & OP_SEND) && req.first()) {
        /* a WQE a dropped message had begun to fill is taken again */
        if (!dst->rq_x.in_send &&
            !recv_take(dst, &dst->rq_x.wqe_index, &dst->rq_x.sges)) {
            dst->rq_x.discarding = !req.last();
            return;
        }
        dst->rq_x.in_send = true;
        dst->rq_x.offset  = 0;
        dst->rq_x.cqe_len = 0;
    }

    if (flags & OP_WRITE) {
        if (!dst->rwe ||
            ((req.hdr.msg_len > 0) &&
             !remote_translate(dst, req, req.hdr.raddr + req.hdr.offset,
                               req.hdr.payload_len, IBV_ACCESS_REMOTE_WRITE,
                               &frags))) {
            dst->rq_x.discarding = !req.last();
            return;
        }
        const uint8_t *src = req.payload;
        frags.write_from(src);
    } else if (flags & OP_SEND) {
        syndrome = scatter(dst, req);
        if (syndrome != 0) {
            recv_complete(s, dst, req, syndrome);
            qp_to_error(s, dst, "receive failed");
            return;
        }
    }

    if ((flags & OP_SEND) && req.last()) {
        recv_complete(s, dst, req, 0);
    }
}

/*
 * An XRC target takes each packet's memory rights and receive WQEs from the
 * XRC SRQ its XRCETH names, which must be of the target's domain; a packet
 * that names another is refused as an invalid request (IBA 9.8.3.1.2).
 */
bool xrc_bind_srq(qp *dst, const request_pkt &req)
{
    auto it = dst->ctx->dev->srqs.find(req.hdr.xrc_srqn);

    if ((it == dst->ctx->dev->srqs.end()) || (it->second->xrcd == nullptr) ||
        (it->second->xrcd->domain != dst->xrcd->domain)) {
        return false;
    }
    if (dst->rq_x.in_send && (it->second != dst->xrc_srq)) {
        return false; /* a message's packets name one SRQ */
    }
    dst->xrc_srq = it->second;
    return true;
}

} // namespace


void responder_receive(emu_state &s, qp *dst, const request_pkt &req,
                       response_pkt *resp)
{
    if (dst->is_xrc_tgt() && !xrc_bind_srq(dst, req)) {
        resp->kind = resp_kind::NAK_INVALID;
        resp->psn  = req.hdr.psn;
        resp->read = false;
        resp->data.clear();
        qp_to_error(s, dst, "XRC SRQ of another domain");
        return;
    }

    if (dst->is_uc()) {
        resp->kind = resp_kind::NONE;
        resp->data.clear();
        receive_uc(s, dst, req);
        return;
    }

    unsigned flags = req.info->flags;
    frag_list frags;
    uint8_t syndrome;

    uint32_t ahead = (req.hdr.psn - dst->next_rcv_psn) & PSN_MASK;
    bool duplicate = ahead >= PSN_WINDOW; /* behind the expected PSN */

    resp->kind = resp_kind::ACK;
    resp->psn  = req.hdr.psn;
    resp->read = false;
    resp->data.clear();

    if ((ahead != 0) && !duplicate) {
        resp->kind = resp_kind::NONE; /* out of sequence: discarded */
        return;
    }

    if (duplicate) {
        /* a retransmission of what was executed, its response lost: SENDs
         * and writes are acknowledged again, an atomic replays its result,
         * a read reads again */
        if (flags & OP_ATOMIC_OP) {
            if (req.hdr.psn != dst->rq_x.atomic_psn) {
                resp->kind = resp_kind::NONE;
                return;
            }
            atomic_response(req, dst->rq_x.atomic_orig, resp);
            return;
        }
        if (!(flags & OP_READ)) {
            return;
        }
    } else {
        dst->next_rcv_psn = (req.hdr.psn + 1) & PSN_MASK;
    }

    if (!duplicate && req.first() &&
        (uint64_t(req.hdr.msg_len) > (1ull << dst->log_msg_max))) {
        fail(s, dst, req, resp, resp_kind::NAK_INVALID, 0,
             "message above log_msg_max");
        return;
    }

    if ((flags & OP_SEND) && req.first()) {
        dst->rq_x.tm_app_op  = 0;
        dst->rq_x.tm_skip    = 0;
        dst->rq_x.tm_strides = false;
        if ((tm_srq(dst) != nullptr) ? !tm_receive(s, dst, req) :
            !recv_take(dst, &dst->rq_x.wqe_index, &dst->rq_x.sges)) {
            resp->kind      = resp_kind::RNR_NAK;
            resp->rnr_timer = dst->min_rnr_nak;
            dst->next_rcv_psn = req.hdr.psn; /* the packet was not accepted */
            return;
        }
        dst->rq_x.in_send = true;
        dst->rq_x.offset  = 0;
        dst->rq_x.cqe_len = 0;
    }

    /* a zero-length RDMA WRITE or READ carries no address or R_Key to
     * check (IBA C9-88): only the QP's access enables apply */
    if (flags & OP_WRITE) {
        if (!dst->rwe ||
            ((req.hdr.msg_len > 0) &&
             !remote_translate(dst, req, req.hdr.raddr + req.hdr.offset,
                               req.hdr.payload_len, IBV_ACCESS_REMOTE_WRITE,
                               &frags))) {
            fail(s, dst, req, resp, resp_kind::NAK_ACCESS,
                 MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR, "remote write denied");
            return;
        }
        const uint8_t *src = req.payload;
        frags.write_from(src);
    } else if (flags & OP_SEND) {
        syndrome = dst->rq_x.tm_strides ? tm_stride_packet(s, dst, req) :
                                          scatter(dst, req);
        if (syndrome != 0) {
            fail(s, dst, req, resp,
                 (syndrome == MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR) ?
                 resp_kind::NAK_INVALID : resp_kind::NAK_OPERATION,
                 syndrome, "receive failed");
            return;
        }
    } else if (flags & OP_READ) {
        if (!dst->rre ||
            ((req.hdr.msg_len > 0) &&
             !remote_translate(dst, req, req.hdr.raddr, req.hdr.msg_len,
                               IBV_ACCESS_REMOTE_READ, &frags))) {
            fail(s, dst, req, resp, resp_kind::NAK_ACCESS, 0,
                 "remote read denied");
            return;
        }
        if (req.defer_read) {
            resp->read      = true;
            resp->read_addr = req.hdr.raddr;
            resp->read_len  = req.hdr.msg_len;
        } else {
            resp->data.reserve(req.hdr.msg_len);
            frags.append_to(&resp->data);
        }
    } else if (flags & OP_ATOMIC_OP) {
        if (req.hdr.raddr % req.hdr.atomic_size) {
            fail(s, dst, req, resp, resp_kind::NAK_INVALID, 0,
                 "misaligned atomic");
            return;
        }
        if (!dst->rae || !remote_translate(dst, req, req.hdr.raddr,
                                           req.hdr.atomic_size,
                                           IBV_ACCESS_REMOTE_ATOMIC, &frags) ||
            (frags.size() != 1)) {
            fail(s, dst, req, resp, resp_kind::NAK_ACCESS, 0,
                 "remote atomic denied");
            return;
        }
        uint8_t target[sizeof(uint64_t)];
        (void)dma_user_read(target, frags[0].ptr, req.hdr.atomic_size);
        uint64_t orig = load_host(target, req.hdr.atomic_size);
        store_host(target, req.hdr.atomic_size, atomic_result(req, orig));
        (void)dma_user_write(frags[0].ptr, target, req.hdr.atomic_size);
        dst->rq_x.atomic_psn  = req.hdr.psn;
        dst->rq_x.atomic_orig = orig;
        atomic_response(req, orig, resp);
    }

    if ((flags & OP_INVAL) && req.last() &&
        !mw_invalidate_remote(s, dst, be32toh(req.hdr.imm))) {
        fail(s, dst, req, resp, resp_kind::NAK_OPERATION,
             MLX5_CQE_SYNDROME_REMOTE_OP_ERR, "no window to invalidate");
        return;
    }

    if ((flags & OP_SEND) && req.last()) {
        if (dst->rq_x.tm_strides) {
            dst->rq_x.in_send = false; /* each packet had its CQE */
        } else {
            recv_complete(s, dst, req, 0);
        }
    }
}

} // namespace uct_ib_emu
