/*
 * The requester half: it follows a QP's send doorbell record, takes WQEs
 * from the ring in order (64-byte basic blocks, wrap-around, ds in 16-byte
 * units), turns each into request packets of at most the path MTU, and
 * completes it from the responses:
 *
 *  - a packet that is not delivered (delivery.cc names why), or whose
 *    response is not (the response obeys the same rules), is retried
 *    retry_count times, one ack timeout (4.096 us * 2^ack_timeout) apart,
 *    then the WQE completes with TRANSPORT_RETRY_EXC_ERR; ack_timeout 0
 *    never times out;
 *  - an RNR NAK is retried rnr_retry times (7: forever) after the RNR timer
 *    the responder asked for, then RNR_RETRY_EXC_ERR;
 *  - a NAK completes with the remote error it names; a bad lkey with a
 *    local protection error; a message above 2^log_msg_max with a local
 *    length error; an opcode the device does not model, or a WQE whose
 *    control segment does not match its QP and index, with a local QP
 *    operation error.
 *
 * The response of a read or atomic goes to the WQE's scatter list or, with
 * scatter to CQE (qpc.cs_req) and when the WQE is signaled and the response
 * fits, into its CQE only (completer.cc); an unsignaled WQE writes no CQE,
 * so its response goes to memory. The scatter list is checked either way.
 * A standard atomic's original value is big endian in the CQE, host order
 * in memory.
 *
 * A WQE completes with a CQE only if it asked for one (CQ_UPDATE), or with
 * an error; after an error the QP is in ERR and every WQE still posted, and
 * any posted later, completes with WR_FLUSH_ERR.
 *
 * A UD QP's WQEs are datagrams (ud.cc): each completes as soon as it is
 * sent; a local error moves the QP to SQER, which flushes only its send
 * queue.
 */
#include "engine.h"
#include "member.h"


namespace uct_ib_emu {

namespace {

constexpr unsigned SEG_SIZE      = 16;
constexpr unsigned FETCH_BUDGET  = 256; /* WQEs taken per pass */
constexpr size_t   PIPELINE_MAX  = 256; /* messages in flight to a host */
constexpr uint64_t NEVER         = UINT64_MAX;

uint64_t ack_timeout_ns(uint8_t ack_timeout)
{
    return (ack_timeout == 0) ? NEVER : (4096ull << ack_timeout);
}

/* The RNR timer encodings of the IB specification, in units of 10 us */
uint64_t rnr_timer_ns(uint8_t code)
{
    static const uint32_t units[32] = {
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
        256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
        12288, 16384, 24576, 32768, 49152
    };

    return uint64_t(units[code & 31]) * 10000;
}

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

/* The segments after the control segment; a UD QP's WQE has a datagram
 * segment and sends only */
uint8_t decode_segments(send_wqe *w, const uint8_t *wqe, unsigned size,
                        bool ud)
{
    unsigned pos = sizeof(struct mlx5_wqe_ctrl_seg);

    if (ud && !(w->info->flags & OP_LOCAL)) {
        unsigned used;
        uint8_t syndrome;

        if (!(w->info->flags & OP_SEND) ||
            (w->info->flags & (OP_RADDR | OP_WRITE))) {
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

/* Decode the WQE at basic block index of q's ring */
void decode(const qp *q, const ring &r, uint16_t index, send_wqe *w)
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
    w->bad_syndrome = decode_segments(w, buf, ds * SEG_SIZE, q->is_ud());
    w->retries_left = q->retry_count;
    w->rnr_left     = q->rnr_retry;
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

void complete(emu_state &s, qp *q, const send_wqe &w, uint8_t syndrome)
{
    cqe_desc d = {};

    if ((syndrome == 0) && !signaled(w)) {
        return;
    }

    d.sop         = w.opcode;
    d.wqe_counter = w.index;
    d.qpn         = q->qpn;
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

void complete_error(emu_state &s, qp *q, const send_wqe &w, uint8_t syndrome)
{
    uct_ib_emu_debug("%s:%u: qp 0x%x wqe 0x%x (%s) failed: syndrome 0x%x",
                     q->ctx->dev->name.c_str(), q->port, q->qpn, w.index,
                     (w.info != nullptr) ? w.info->name : "unknown opcode",
                     syndrome);
    complete(s, q, w, syndrome);
    if (q->is_ud()) {
        qp_to_sq_error(q, "error completion"); /* receives go on */
    } else {
        qp_to_error(s, q, "error completion");
    }
}

/* Check the local keys; gather what is sent into *out */
uint8_t check_local(const qp *q, const send_wqe &w, std::vector<uint8_t> *out)
{
    const device *dev = q->ctx->dev;
    int access        = (w.info->flags & OP_RESPONSE) ?
                        IBV_ACCESS_LOCAL_WRITE : 0;
    frag_list frags;

    out->clear();
    for (const sge &e : w.sges) {
        frags.clear();
        if (mem_translate(dev, q->pd, e.lkey, e.addr, e.length, access,
                          &frags) != key_check::OK) {
            return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
        }
        if (!(w.info->flags & OP_RESPONSE)) {
            frags.for_each([out](const mem_frag &f) {
                out->insert(out->end(), f.ptr, f.ptr + f.len);
            });
        }
    }
    return 0;
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
        frags.for_each([&src](const mem_frag &f) {
            memcpy(f.ptr, src, f.len);
            src += f.len;
        });
        len   -= take;
        offset = 0;
        if (len == 0) {
            return;
        }
    }
}

/* len bytes of w's response, at offset of the message: into its CQE or
 * its local buffers */
void take_response(const qp *q, send_wqe &w, size_t offset,
                   const uint8_t *src, size_t len)
{
    if (!response_to_cqe(q, w)) {
        scatter_response(q, w, offset, src, len);
    } else if ((w.info->flags & OP_ATOMIC_OP) && !(w.info->flags & OP_MASKED)) {
        /* memory gets a standard atomic's original value in host order
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

/* A UD WQE: one datagram, complete at once */
void process_ud(emu_state &s, qp *q, send_wqe &w)
{
    uint8_t syndrome = 0;

    if (!w.sges.empty()) {
        syndrome = check_local(q, w, &q->sq_x.payload);
        q->sq_x.payload.insert(q->sq_x.payload.begin(), w.inline_data.begin(),
                               w.inline_data.end());
    }
    if (syndrome == 0) {
        syndrome = ud_send(s, q, w, w.sges.empty() ? w.inline_data :
                                                     q->sq_x.payload);
    }

    if (syndrome == 0) {
        complete(s, q, w, 0);
    } else {
        complete_error(s, q, w, syndrome);
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

/* Read data comes back at most one MTU a packet */
uint64_t response_packets(const response_pkt &resp, uint32_t mtu)
{
    return std::max<uint64_t>(1, (resp.data.size() + mtu - 1) / mtu);
}

enum class outcome {
    DONE,        /* completed (successfully or not): pop it */
    WAIT_NEW,    /* now waiting on a timer */
    WAIT         /* still waiting, nothing changed */
};

outcome wait_for(emu_state &s, send_wqe &w, uint64_t delay, bool rnr)
{
    w.waiting  = true;
    w.rnr_wait = rnr;
    w.deadline = (delay == NEVER) ? NEVER : (engine_now(s) + delay);
    return outcome::WAIT_NEW;
}

void request_of(const qp *q, const send_wqe &w, request_pkt *pkt)
{
    *pkt             = {};
    pkt->src_qpn     = q->qpn;
    pkt->dst_qpn     = q->remote_qpn;
    pkt->info        = w.info;
    pkt->opmod       = w.opmod;
    pkt->solicited   = w.fm_ce_se & MLX5_WQE_CTRL_SOLICITED;
    pkt->msg_len     = w.length;
    pkt->raddr       = w.raddr;
    pkt->rkey        = w.rkey;
    pkt->imm         = w.imm;
    pkt->atomic_size = w.atomic_size;
    memcpy(pkt->atomic, w.atomic, sizeof(pkt->atomic));
}

/*
 * Another host has the destination: the packets of w go to its process,
 * and the answer comes back later (requester_response). The WQE waits for
 * it with the ack timer; the ones behind it may follow before it is
 * answered (pipeline), as on a real link.
 */
void send_remote(emu_state &s, qp *q, send_wqe &w, request_pkt *pkt,
                 const std::vector<uint8_t> &data, const wire::dest &remote)
{
    unsigned flags = w.info->flags;
    uint32_t mtu   = mtu_bytes(q->mtu);
    bool carries   = flags & (OP_SEND | OP_WRITE);
    wire::req_hdr h = {};

    w.npkts    = (carries && (w.length > mtu)) ? (w.length + mtu - 1) / mtu :
                                                 1;
    w.resp_got = 0;
    if (!w.psn_set) {
        w.first_psn      = q->next_send_psn;
        w.psn_set        = true;
        q->next_send_psn = (w.first_psn + w.npkts) & 0xffffff;
    }

    h.type        = wire::PKT_REQUEST;
    h.opcode      = w.opcode;
    h.opmod       = pkt->opmod;
    h.dst_dev     = remote.dev;
    h.dst_port    = remote.port;
    memcpy(h.dmac, remote.dmac.data(), sizeof(h.dmac));
    h.src_qpn     = q->qpn;
    h.dst_qpn     = q->remote_qpn;
    h.msg_len     = w.length;
    h.rkey        = w.rkey;
    h.imm         = w.imm;
    h.atomic_size = w.atomic_size;
    h.raddr       = w.raddr;
    memcpy(h.atomic, w.atomic, sizeof(h.atomic));

    for (uint32_t k = 0; k < w.npkts; ++k) {
        h.psn         = (w.first_psn + k) & 0xffffff;
        h.offset      = k * mtu;
        h.payload_len = carries ? static_cast<uint16_t>(
                                std::min(mtu, w.length - h.offset)) : 0;
        h.flags       = ((k == 0) ? wire::REQ_FIRST : 0) |
                        ((k == w.npkts - 1) ? wire::REQ_LAST : 0) |
                        (pkt->solicited ? wire::REQ_SOLICITED : 0);
        count_sent(s, q);
        s.fabric->net().add_request(remote, h, carries ?
                                    data.data() + h.offset : nullptr);
    }

    ++q->sq_x.sent;
    q->sq_x.reads_out += !!(w.info->flags & OP_RESPONSE);
    wait_for(s, w, ack_timeout_ns(q->path.ack_timeout), false);
}

/* Send the message of w as packets; the outcome of its responses */
outcome transmit(emu_state &s, qp *q, send_wqe &w)
{
    const std::vector<uint8_t> &data = w.sges.empty() ? w.inline_data :
                                       q->sq_x.payload;
    unsigned flags  = w.info->flags;
    uint32_t mtu    = mtu_bytes(q->mtu);
    bool carries    = flags & (OP_SEND | OP_WRITE);
    uint32_t npkts  = (carries && (w.length > mtu)) ?
                      (w.length + mtu - 1) / mtu : 1;
    response_pkt resp;
    request_pkt pkt;
    uint8_t syndrome;

    if (!w.sges.empty()) {
        syndrome = check_local(q, w, &q->sq_x.payload);
        if (syndrome != 0) {
            complete_error(s, q, w, syndrome);
            return outcome::DONE;
        }
        /* the inline part, if any, goes first */
        q->sq_x.payload.insert(q->sq_x.payload.begin(), w.inline_data.begin(),
                               w.inline_data.end());
    }

    request_of(q, w, &pkt);
    if (s.fabric != nullptr) {
        qp *dst = nullptr;
        wire::dest remote;

        if ((deliver(s, q, &dst, &remote) == UCT_IB_EMU_DROP_NONE) &&
            (dst == nullptr)) {
            send_remote(s, q, w, &pkt, data, remote);
            return outcome::WAIT_NEW;
        }
    }

    if (!w.psn_set) {
        /* a retransmission reuses the PSNs of the first transmission */
        w.first_psn = q->next_send_psn;
        w.psn_set   = true;
    }

    for (uint32_t k = 0; k < npkts; ++k) {
        qp *dst = nullptr;
        qp *back = nullptr;
        uct_ib_emu_drop_t drop;

        pkt.psn         = (w.first_psn + k) & 0xffffff;
        pkt.first       = (k == 0);
        pkt.last        = (k == npkts - 1);
        pkt.offset      = k * mtu;
        pkt.payload     = carries ? data.data() + pkt.offset : nullptr;
        pkt.payload_len = carries ? std::min(mtu, w.length - pkt.offset) : 0;

        count_sent(s, q);
        drop = deliver_packet(s, q, pkt.payload_len, &dst);
        if (drop != UCT_IB_EMU_DROP_NONE) {
            count_drop(s, q, drop);
            return wait_for(s, w, ack_timeout_ns(q->path.ack_timeout), false);
        }

        count_delivered(s, dst);
        responder_receive(s, dst, pkt, &resp);
        if (resp.kind == resp_kind::NONE) {
            count_drop(s, q, UCT_IB_EMU_DROP_PSN);
            return wait_for(s, w, ack_timeout_ns(q->path.ack_timeout), false);
        }

        /* the responder answers a message's last packet (coalescing the
         * ACKs of the others) and any packet it NAKs; the answer travels
         * back under the same rules */
        if (pkt.last || (resp.kind != resp_kind::ACK)) {
            count_sent(s, dst, response_packets(resp, mtu));
            drop = deliver(s, dst, &back);
            if ((drop == UCT_IB_EMU_DROP_NONE) && (back != q)) {
                drop = UCT_IB_EMU_DROP_NO_QP;
            }
            if (drop != UCT_IB_EMU_DROP_NONE) {
                count_drop(s, dst, drop);
                return wait_for(s, w, ack_timeout_ns(q->path.ack_timeout),
                                false);
            }
            count_delivered(s, q, response_packets(resp, mtu));
        }

        if (resp.kind == resp_kind::RNR_NAK) {
            count_rnr_nak(s, q);
            if (q->rnr_retry != 7) {
                if (w.rnr_left == 0) {
                    complete_error(s, q, w,
                                   MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
                    return outcome::DONE;
                }
                --w.rnr_left;
            }
            return wait_for(s, w, rnr_timer_ns(resp.rnr_timer), true);
        }

        if (resp.kind != resp_kind::ACK) {
            complete_error(s, q, w, nak_syndrome(resp.kind));
            return outcome::DONE;
        }
    }

    q->next_send_psn = (w.first_psn + npkts) & 0xffffff;
    if (flags & OP_RESPONSE) {
        take_response(q, w, 0, resp.data.data(), resp.data.size());
    }

    complete(s, q, w, 0);
    return outcome::DONE;
}

/* Go back to the oldest WQE sent to another host: everything after it
 * is sent again (with the same PSNs) */
void unsend(qp *q)
{
    for (size_t i = 0; i < q->sq_x.sent; ++i) {
        q->sq_x.wqes.at(i).waiting = (i == 0) && q->sq_x.wqes.at(0).waiting;
    }
    q->sq_x.sent      = 0;
    q->sq_x.reads_out = 0;
}

outcome process(emu_state &s, qp *q, send_wqe &w)
{
    if (w.bad_syndrome != 0) {
        complete_error(s, q, w, w.bad_syndrome);
        return outcome::DONE;
    }

    if (w.info->flags & OP_LOCAL) {
        complete(s, q, w, 0); /* NOP */
        return outcome::DONE;
    }

    if (q->is_ud()) {
        process_ud(s, q, w);
        return outcome::DONE;
    }

    if (w.waiting) {
        if ((w.deadline == NEVER) || (engine_now(s) < w.deadline)) {
            return outcome::WAIT;
        }
        if (!w.rnr_wait) {
            if (w.retries_left == 0) {
                complete_error(s, q, w,
                               MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
                return outcome::DONE;
            }
            --w.retries_left;
            count_retry(s, q);
        }
        w.waiting = false;
        unsend(q);
    }

    if ((w.length > 0) &&
        (uint64_t(w.length) > (1ull << q->log_msg_max))) {
        complete_error(s, q, w, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
        return outcome::DONE;
    }

    return transmit(s, q, w);
}

uint16_t sq_producer(const qp *q)
{
    return static_cast<uint16_t>(dma_load_be32(&qp_dbrec(q)[MLX5_SND_DBR]));
}

/* The producer counter as last read: the doorbell record (a line its user
 * keeps writing) is read again only once what the last reading showed has
 * been taken, as it only moves on */
uint16_t sq_producer_seen(qp *q)
{
    if (q->sq_x.fetch == q->sq_x.producer_seen) {
        q->sq_x.producer_seen = sq_producer(q);
    }
    return q->sq_x.producer_seen;
}

/* The QP is in ERR: everything posted completes with WR_FLUSH_ERR */
bool flush(emu_state &s, qp *q, const ring &r)
{
    uint16_t producer = sq_producer(q);
    bool did          = false;

    q->sq_x.sent      = 0;
    q->sq_x.reads_out = 0;
    while (!q->sq_x.wqes.empty()) {
        complete(s, q, q->sq_x.wqes.front(), MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
        q->sq_x.wqes.pop_front();
        did = true;
    }

    while (q->sq_x.fetch != producer) {
        send_wqe w;

        decode(q, r, q->sq_x.fetch, &w);
        q->sq_x.fetch += w.nbb;
        complete(s, q, w, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
        did = true;
    }
    q->sq_x.producer_seen = q->sq_x.fetch;

    return did;
}

/* A fenced WQE waits for everything before it (it goes when it is the
 * oldest) */
bool fenced(const send_wqe &w)
{
    return (w.fm_ce_se & (MLX5_WQE_CTRL_FENCE |
                          MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE)) != 0;
}

/*
 * Behind a WQE waiting for another host's answer, send the next ones
 * without waiting (at most PIPELINE_MAX messages in flight, and at most
 * 2^log_sra_max reads and atomics, the QP's initiator depth). Only plain
 * requests go ahead; anything else (a local operation, a fenced WQE, an
 * error found locally) waits until it is the oldest, so completions stay
 * in order.
 */
bool pipeline(emu_state &s, qp *q)
{
    bool did = false;
    request_pkt pkt;

    while ((q->sq_x.sent > 0) && (q->sq_x.sent < q->sq_x.wqes.size()) &&
           (q->sq_x.sent < PIPELINE_MAX)) {
        send_wqe &w = q->sq_x.wqes.at(q->sq_x.sent);
        qp *dst     = nullptr;
        wire::dest remote;

        if ((w.bad_syndrome != 0) || (w.info->flags & OP_LOCAL) ||
            w.waiting || fenced(w) ||
            ((w.info->flags & OP_RESPONSE) &&
             (q->sq_x.reads_out >= (1u << q->log_sra_max))) ||
            (uint64_t(w.length) > (1ull << q->log_msg_max)) ||
            (deliver(s, q, &dst, &remote) != UCT_IB_EMU_DROP_NONE) ||
            (dst != nullptr)) {
            break;
        }

        if (!w.sges.empty()) {
            if (check_local(q, w, &q->sq_x.payload) != 0) {
                break;
            }
            q->sq_x.payload.insert(q->sq_x.payload.begin(),
                                   w.inline_data.begin(), w.inline_data.end());
        }

        request_of(q, w, &pkt);
        send_remote(s, q, w, &pkt,
                    w.sges.empty() ? w.inline_data : q->sq_x.payload, remote);
        did = true;
    }

    return did;
}

void finish_sent(emu_state &s, qp *q, uint8_t syndrome)
{
    send_wqe &w = q->sq_x.wqes.front();

    if (syndrome == 0) {
        complete(s, q, w, 0);
    } else {
        complete_error(s, q, w, syndrome);
    }
    q->sq_x.reads_out -= !!(w.info->flags & OP_RESPONSE);
    q->sq_x.wqes.pop_front();
    --q->sq_x.sent;
}

bool psn_before(uint32_t a, uint32_t b)
{
    uint32_t d = (b - a) & 0xffffff;

    return (d != 0) && (d < 0x800000);
}

} // namespace


void requester_response(emu_state &s, qp *q, const wire::resp_hdr &h,
                        const uint8_t *data)
{
    count_delivered(s, q);
    if (q->state != UCT_MLX5_QP_STATE_RTS) {
        return; /* flushed, or reset: nothing waits for it */
    }

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
                    return;
                }
            }
            finish_sent(s, q, 0);
        } else if (kind == resp_kind::RNR_NAK) {
            count_rnr_nak(s, q);
            if (q->rnr_retry != 7) {
                if (w.rnr_left == 0) {
                    finish_sent(s, q, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
                    return;
                }
                --w.rnr_left;
            }
            unsend(q);
            wait_for(s, w, rnr_timer_ns(h.rnr_timer), true);
        } else {
            finish_sent(s, q, nak_syndrome(kind));
        }
        return;
    }
}


bool requester_progress(emu_state &s, qp *q)
{
    ring r = sq_ring(q);
    bool did = false;
    uint16_t producer;
    unsigned taken;

    if (r.buf == nullptr) {
        return false;
    }

    if ((q->state == UCT_MLX5_QP_STATE_ERR) ||
        (q->state == UCT_MLX5_QP_STATE_SQER)) {
        return flush(s, q, r);
    }

    if (q->state != UCT_MLX5_QP_STATE_RTS) {
        return false; /* posted WQEs wait for RTS */
    }

    producer = sq_producer_seen(q);
    for (taken = 0; (q->sq_x.fetch != producer) && (taken < FETCH_BUDGET);
         ++taken) {
        send_wqe &w = q->sq_x.wqes.push_back();

        decode(q, r, q->sq_x.fetch, &w);
        q->sq_x.fetch += w.nbb;
        did = true;
    }

    while (!q->sq_x.wqes.empty()) {
        outcome o = process(s, q, q->sq_x.wqes.front());

        if (o == outcome::WAIT) {
            break;
        }
        did = true;
        if (o == outcome::WAIT_NEW) {
            break;
        }
        q->sq_x.wqes.pop_front();
        if ((q->state == UCT_MLX5_QP_STATE_ERR) ||
            (q->state == UCT_MLX5_QP_STATE_SQER)) {
            flush(s, q, r);
            break;
        }
    }

    if (q->sq_x.sent > 0) {
        did |= pipeline(s, q);
    }
    return did;
}

uint64_t requester_next_timer(const qp *q)
{
    if (q->sq_x.wqes.empty() || !q->sq_x.wqes.front().waiting) {
        return NEVER;
    }

    return q->sq_x.wqes.front().deadline;
}

} // namespace uct_ib_emu
