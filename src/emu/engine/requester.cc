/*
 * The requester half, as rxe's rxe_req: it follows a QP's send doorbell
 * record, takes WQEs from the ring in order (wqe.cc decodes them), turns
 * each into request packets of at most the path MTU, and owns the ack and
 * RNR timers; the completer (completer.cc) matches the answers to the WQEs
 * and completes them:
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
 * queue. A UC QP's messages are sent once and complete when their last
 * packet has left (process_uc); nothing answers them.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>


namespace uct_ib_emu {

namespace {

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

/* Check the local keys; with @a out, gather what is sent into it */
uint8_t check_local(const qp *q, const send_wqe &w, std::vector<uint8_t> *out)
{
    const device *dev = q->ctx->dev;
    int access        = (w.info->flags & OP_RESPONSE) ?
                        IBV_ACCESS_LOCAL_WRITE : 0;
    frag_list frags;

    if (out != nullptr) {
        out->clear();
    }
    for (const sge &e : w.sges) {
        frags.clear();
        if (mem_translate(dev, q->pd, e.lkey, e.addr, e.length, access,
                          &frags) != key_check::OK) {
            return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
        }
        if ((out != nullptr) && !(w.info->flags & OP_RESPONSE)) {
            frags.append_to(out);
        }
    }
    return 0;
}

/* Bytes [offset, offset + len) of w's message (its inline part, then its
 * gather list) into *out, read from memory now, as a NIC reads a packet's
 * data when it sends it; false if a key no longer covers them */
bool gather_range(const qp *q, const send_wqe &w, uint32_t offset,
                  uint32_t len, std::vector<uint8_t> *out)
{
    const size_t inl = w.inline_data.size();
    frag_list frags;

    out->clear();
    if (offset < inl) {
        uint32_t n = std::min<uint32_t>(len, uint32_t(inl - offset));

        out->insert(out->end(), w.inline_data.begin() + offset,
                    w.inline_data.begin() + offset + n);
        len   -= n;
        offset = 0;
    } else {
        offset -= uint32_t(inl);
    }

    for (const sge &e : w.sges) {
        if (len == 0) {
            break;
        }
        if (offset >= e.length) {
            offset -= e.length;
            continue;
        }

        uint32_t n = std::min(len, e.length - offset);
        frags.clear();
        if (mem_translate(q->ctx->dev, q->pd, e.lkey, e.addr + offset, n, 0,
                          &frags) != key_check::OK) {
            return false;
        }
        frags.append_to(out);
        len   -= n;
        offset = 0;
    }
    return len == 0;
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
        complete_wqe(s, q, w, 0);
    } else {
        fail_wqe(s, q, w, syndrome);
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

/* What every packet of w's message carries */
void request_of(const qp *q, const send_wqe &w, request_pkt *pkt)
{
    wire::req_hdr &h = pkt->hdr;

    *pkt          = {};
    pkt->info     = w.info;
    h.type        = wire::PKT_REQUEST;
    h.opcode      = w.opcode;
    h.opmod       = w.opmod;
    h.flags       = ((w.fm_ce_se & MLX5_WQE_CTRL_SOLICITED) ?
                     wire::REQ_SOLICITED : 0) |
                    (q->is_uc() ? wire::REQ_UC : 0) |
                    (q->is_xrc() ? wire::REQ_XRC : 0);
    h.src_qpn     = q->qpn;
    h.dst_qpn     = q->remote_qpn;
    h.msg_len     = w.length;
    h.rkey        = w.rkey;
    h.imm         = w.imm;
    h.xrc_srqn    = w.xrc_srqn;
    h.atomic_size = w.atomic_size;
    h.raddr       = w.raddr;
    memcpy(h.atomic, w.atomic, sizeof(h.atomic));
    if (q->is_dci()) {
        dc_request_fields(q, &h);
    }
}

/*
 * A message's PSNs are taken on its first transmission, whatever became of
 * it (sent to another host, delivered here, or dropped on the way): every
 * retransmission reuses them, and the next message follows them, so a
 * message the link lost never shares its PSNs with the one after it
 */
void assign_psns(qp *q, send_wqe &w, uint32_t npkts)
{
    if (!w.psn_set) {
        w.first_psn      = q->next_send_psn;
        w.psn_set        = true;
        q->next_send_psn = (w.first_psn + npkts) & 0xffffff;
    }
}

/* The frames queued to another host fill its link: no new message goes */
bool link_full(emu_state &s, unsigned host)
{
    return s.fabric->net().backlog(host) >= wire::QUEUE_BACKLOG;
}

/* Some of w's packets are still to be made for its link */
bool streaming(const send_wqe &w)
{
    return (w.remote_host >= 0) && (w.next_pkt < w.npkts);
}

/* Frames still wait to leave for w's host, or w's packets are still to be
 * made: w is not on the wire yet, and its ack timer runs from when they
 * have left (link-level flow control) */
bool on_the_link(emu_state &s, const send_wqe &w)
{
    return (s.fabric != nullptr) && (w.remote_host >= 0) &&
           (streaming(w) ||
            (s.fabric->net().backlog(unsigned(w.remote_host)) > 0));
}

/* Packet k of npkts: its PSN, place in the message and flags */
void packet_of(const send_wqe &w, uint32_t k, uint32_t npkts, uint32_t mtu,
               bool carries, wire::req_hdr *h)
{
    h->psn         = (w.first_psn + k) & 0xffffff;
    h->offset      = k * mtu;
    h->payload_len = carries ? static_cast<uint16_t>(
                             std::min(mtu, w.length - h->offset)) : 0;
    h->flags       = (h->flags & (wire::REQ_SOLICITED | wire::REQ_UC |
                                  wire::REQ_XRC | wire::REQ_DC)) |
                     ((k == 0) ? wire::REQ_FIRST : 0) |
                     ((k == npkts - 1) ? wire::REQ_LAST : 0);
}

/*
 * w's next packets, to remote, while its link has room: each packet's data
 * is read from memory as it is made, so what waits for a link is bounded by
 * the link (QUEUE_BACKLOG frames), not by the message. What the link does
 * not take now is made on a later pass (stream_more). A key that no longer
 * covers the data ends the transmission: its retransmission finds the
 * error and completes with it.
 */
void stream_packets(emu_state &s, qp *q, send_wqe &w, const wire::dest &remote)
{
    uint32_t mtu     = mtu_bytes(q->mtu);
    bool carries     = w.info->flags & (OP_SEND | OP_WRITE);
    std::vector<uint8_t> &data = q->sq_x.payload;
    request_pkt pkt;

    request_of(q, w, &pkt);
    pkt.hdr.dst_dev  = remote.dev;
    pkt.hdr.dst_port = remote.port;
    memcpy(pkt.hdr.dmac, remote.dmac.data(), sizeof(pkt.hdr.dmac));

    while (streaming(w) &&
           ((w.next_pkt == 0) || !link_full(s, remote.host))) {
        packet_of(w, w.next_pkt, w.npkts, mtu, carries, &pkt.hdr);
        if (carries && !gather_range(q, w, pkt.hdr.offset,
                                     pkt.hdr.payload_len, &data)) {
            w.next_pkt = w.npkts;
            return;
        }
        count_sent(s, q);
        s.fabric->net().add_request(remote, pkt.hdr,
                                    carries ? data.data() : nullptr);
        ++w.next_pkt;
    }
}

/*
 * Another host has the destination: the packets of w go to its process,
 * and the answer comes back later (completer_response). The WQE waits for
 * it with the ack timer; the ones behind it may follow before it is
 * answered (pipeline), as on a real link, once all of its packets are made.
 */
void send_remote(emu_state &s, qp *q, send_wqe &w, const wire::dest &remote)
{
    uint32_t mtu = mtu_bytes(q->mtu);
    bool carries = w.info->flags & (OP_SEND | OP_WRITE);

    w.npkts       = (carries && (w.length > mtu)) ?
                    (w.length + mtu - 1) / mtu : 1;
    w.next_pkt    = 0;
    w.resp_got    = 0;
    w.remote_host = static_cast<int>(remote.host);
    assign_psns(q, w, w.npkts);
    stream_packets(s, q, w, remote);

    ++q->sq_x.sent;
    q->sq_x.reads_out += !!(w.info->flags & OP_RESPONSE);
    wait_for(s, w, ack_timeout_ns(q->path.ack_timeout), false);
}

/*
 * The rest of the last message sent, as far as its link takes it now. The
 * path is looked up again, as a NIC reads its QP context for every packet:
 * if it no longer leads to that host, the rest is lost, and the ack timer
 * retransmits the message.
 */
bool stream_more(emu_state &s, qp *q)
{
    send_wqe *w;
    qp *dst = nullptr;
    wire::dest remote;
    uct_ib_emu_drop_t drop;
    uint32_t before;

    if (q->sq_x.sent == 0) {
        return false;
    }
    w = &q->sq_x.wqes.at(q->sq_x.sent - 1);
    if (!streaming(*w) || link_full(s, unsigned(w->remote_host))) {
        return false;
    }

    drop = deliver(s, q, &dst, &remote);
    if ((drop == UCT_IB_EMU_DROP_NONE) &&
        ((dst != nullptr) || (remote.host != unsigned(w->remote_host)))) {
        drop = UCT_IB_EMU_DROP_NO_ROUTE;
    }
    if (drop != UCT_IB_EMU_DROP_NONE) {
        count_drop(s, q, drop);
        w->next_pkt = w->npkts;
        return true;
    }

    before = w->next_pkt;
    stream_packets(s, q, *w, remote);
    return w->next_pkt != before;
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

    if (s.fabric != nullptr) {
        qp *dst = nullptr;
        wire::dest remote;

        if ((deliver(s, q, &dst, &remote) == UCT_IB_EMU_DROP_NONE) &&
            (dst == nullptr)) {
            /* the keys are checked now, the data read packet by packet */
            syndrome = check_local(q, w, nullptr);
            if (syndrome != 0) {
                fail_wqe(s, q, w, syndrome);
                return outcome::DONE;
            }
            if (link_full(s, remote.host)) {
                return outcome::WAIT; /* the link has no room: next pass */
            }
            send_remote(s, q, w, remote);
            return outcome::WAIT_NEW;
        }
    }

    if (!w.sges.empty()) {
        syndrome = check_local(q, w, &q->sq_x.payload);
        if (syndrome != 0) {
            fail_wqe(s, q, w, syndrome);
            return outcome::DONE;
        }
        /* the inline part, if any, goes first */
        q->sq_x.payload.insert(q->sq_x.payload.begin(), w.inline_data.begin(),
                               w.inline_data.end());
    }

    request_of(q, w, &pkt);
    assign_psns(q, w, npkts);

    for (uint32_t k = 0; k < npkts; ++k) {
        qp *dst = nullptr;
        qp *back = nullptr;
        uct_ib_emu_drop_t drop;

        packet_of(w, k, npkts, mtu, carries, &pkt.hdr);
        pkt.payload = carries ? data.data() + pkt.hdr.offset : nullptr;

        count_sent(s, q);
        drop = deliver_packet(s, q, pkt.hdr.payload_len, &dst);
        if (drop != UCT_IB_EMU_DROP_NONE) {
            count_drop(s, q, drop);
            return wait_for(s, w, ack_timeout_ns(q->path.ack_timeout), false);
        }
        if (dst->is_dct() && !dc_admit(s, dst, pkt.hdr, &dst)) {
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
        if (pkt.last() || (resp.kind != resp_kind::ACK)) {
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
            if (!rnr_retry_left(s, q, w)) {
                fail_wqe(s, q, w, MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
                return outcome::DONE;
            }
            return wait_for(s, w, rnr_timer_ns(resp.rnr_timer), true);
        }

        if (resp.kind != resp_kind::ACK) {
            fail_wqe(s, q, w, nak_syndrome(resp.kind));
            return outcome::DONE;
        }
    }

    completer_ack(s, q, w, resp.data.data(), resp.data.size());
    return outcome::DONE;
}

} // namespace


void requester_rewind(qp *q)
{
    for (size_t i = 0; i < q->sq_x.sent; ++i) {
        send_wqe &w = q->sq_x.wqes.at(i);

        w.waiting  = (i == 0) && w.waiting;
        w.next_pkt = w.npkts; /* what was not made is sent again whole */
    }
    q->sq_x.sent      = 0;
    q->sq_x.reads_out = 0;
}

void requester_rnr_wait(emu_state &s, send_wqe &w, uint8_t rnr_timer)
{
    wait_for(s, w, rnr_timer_ns(rnr_timer), true);
}

void requester_answered(emu_state &s, const qp *q, send_wqe &w)
{
    if (w.waiting && !w.rnr_wait) {
        wait_for(s, w, ack_timeout_ns(q->path.ack_timeout), false);
    }
}


namespace {

/*
 * A UC WQE: its packets go once, nothing answers them, and it completes
 * when the last one has left (successfully, whatever became of them: a
 * packet that is dropped, or that the responder refuses, loses its message
 * there). Only sends and writes are UC operations.
 */
outcome process_uc(emu_state &s, qp *q, send_wqe &w)
{
    const unsigned flags = w.info->flags;
    const uint32_t mtu   = mtu_bytes(q->mtu);
    const bool carries   = flags & (OP_SEND | OP_WRITE);
    const uint32_t npkts = (carries && (w.length > mtu)) ?
                           (w.length + mtu - 1) / mtu : 1;
    request_pkt pkt;
    response_pkt resp;
    uint8_t syndrome;

    if (w.waiting) { /* its packets are streaming to another host */
        if (streaming(w)) {
            return outcome::WAIT;
        }
        q->sq_x.sent = 0;
        complete_wqe(s, q, w, 0);
        return outcome::DONE;
    }

    if (!(flags & (OP_SEND | OP_WRITE)) ||
        (flags & (OP_READ | OP_ATOMIC_OP))) {
        fail_wqe(s, q, w, MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR);
        return outcome::DONE;
    }
    if (uint64_t(w.length) > (1ull << q->log_msg_max)) {
        fail_wqe(s, q, w, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
        return outcome::DONE;
    }

    if (s.fabric != nullptr) {
        qp *dst = nullptr;
        wire::dest remote;

        if ((deliver(s, q, &dst, &remote) == UCT_IB_EMU_DROP_NONE) &&
            (dst == nullptr)) {
            syndrome = check_local(q, w, nullptr);
            if (syndrome != 0) {
                fail_wqe(s, q, w, syndrome);
                return outcome::DONE;
            }
            if (link_full(s, remote.host)) {
                return outcome::WAIT;
            }
            send_remote(s, q, w, remote);
            if (streaming(w)) {
                return outcome::WAIT_NEW; /* stream_more sends the rest */
            }
            q->sq_x.sent = 0;
            complete_wqe(s, q, w, 0);
            return outcome::DONE;
        }
    }

    if (!w.sges.empty()) {
        syndrome = check_local(q, w, &q->sq_x.payload);
        if (syndrome != 0) {
            fail_wqe(s, q, w, syndrome);
            return outcome::DONE;
        }
        q->sq_x.payload.insert(q->sq_x.payload.begin(), w.inline_data.begin(),
                               w.inline_data.end());
    }
    const std::vector<uint8_t> &data = w.sges.empty() ? w.inline_data :
                                       q->sq_x.payload;

    request_of(q, w, &pkt);
    assign_psns(q, w, npkts);
    for (uint32_t k = 0; k < npkts; ++k) {
        qp *dst = nullptr;
        uct_ib_emu_drop_t drop;

        packet_of(w, k, npkts, mtu, carries, &pkt.hdr);
        pkt.payload = carries ? data.data() + pkt.hdr.offset : nullptr;
        count_sent(s, q);
        drop = deliver_packet(s, q, pkt.hdr.payload_len, &dst);
        if (drop != UCT_IB_EMU_DROP_NONE) {
            count_drop(s, q, drop);
            continue; /* the responder finds the gap and drops the rest */
        }
        count_delivered(s, dst);
        responder_receive(s, dst, pkt, &resp);
    }

    complete_wqe(s, q, w, 0);
    return outcome::DONE;
}

outcome process(emu_state &s, qp *q, send_wqe &w)
{
    if (w.bad_syndrome != 0) {
        fail_wqe(s, q, w, w.bad_syndrome);
        return outcome::DONE;
    }

    if (w.info->flags & OP_UMR) { /* a memory window's bind or free */
        const uint8_t syndrome = mw_execute(s, q, w);

        if (syndrome != 0) {
            fail_wqe(s, q, w, syndrome);
        } else {
            complete_wqe(s, q, w, 0);
        }
        return outcome::DONE;
    }

    if (w.info->flags & OP_TM) { /* a tag-matching list operation */
        const uint8_t syndrome = tm_list_op(s, q, w);

        if (syndrome != 0) {
            fail_wqe(s, q, w, syndrome);
        } else {
            complete_wqe(s, q, w, 0);
        }
        return outcome::DONE;
    }

    if (w.info->flags & OP_LOCAL) {
        complete_wqe(s, q, w, 0); /* NOP */
        return outcome::DONE;
    }

    if (q->is_ud()) {
        process_ud(s, q, w);
        return outcome::DONE;
    }

    if (q->is_uc()) {
        return process_uc(s, q, w);
    }

    if (w.waiting) {
        if ((w.deadline == NEVER) || (engine_now(s) < w.deadline)) {
            return outcome::WAIT;
        }
        if (!w.rnr_wait && on_the_link(s, w)) {
            /* its packets have not all left: the timer starts again */
            w.deadline = engine_now(s) + ack_timeout_ns(q->path.ack_timeout);
            return outcome::WAIT;
        }
        if (!w.rnr_wait) {
            if (w.retries_left == 0) {
                fail_wqe(s, q, w, MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
                return outcome::DONE;
            }
            --w.retries_left;
            count_retry(s, q);
        }
        w.waiting = false;
        requester_rewind(q);
    }

    if ((w.length > 0) &&
        (uint64_t(w.length) > (1ull << q->log_msg_max))) {
        fail_wqe(s, q, w, MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR);
        return outcome::DONE;
    }

    if (q->is_dci()) {
        dc_connect(s, q, w); /* the oldest: nothing before it is in flight */
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
/*
 * After a reset, whether the doorbell record's count is a post: it is once
 * it has moved, or once the ring holds a WQE of this QP at the index the
 * device takes next (UCX posts again from index 0 after resetting a DCI,
 * so the record may take the same count again; it clears its ring when it
 * resets it, so what was there before is no WQE)
 */
bool posted_since_reset(qp *q, const ring &r, uint16_t producer)
{
    const struct mlx5_wqe_ctrl_seg *ctrl;
    uint32_t qpn_ds, opmod_idx_opcode;

    if (!q->sq_x.dbrec_stale) {
        return true;
    }
    if (producer == q->sq_x.dbrec_at_reset) {
        ctrl = reinterpret_cast<const struct mlx5_wqe_ctrl_seg*>(
                r.buf + size_t(q->sq_x.fetch & (r.cnt - 1)) * r.stride);
        qpn_ds           = dma_load_be32(&ctrl->qpn_ds);
        opmod_idx_opcode = dma_load_be32(&ctrl->opmod_idx_opcode);
        if (((qpn_ds >> 8) != q->qpn) || ((qpn_ds & 0x3f) == 0) ||
            (((opmod_idx_opcode >> 8) & 0xffff) != q->sq_x.fetch)) {
            return false;
        }
    }
    q->sq_x.dbrec_stale = false;
    return true;
}

uint16_t sq_producer_seen(qp *q, const ring &r)
{
    if (q->sq_x.fetch == q->sq_x.producer_seen) {
        q->sq_x.producer_seen = sq_producer(q);
        if (!posted_since_reset(q, r, q->sq_x.producer_seen)) {
            q->sq_x.producer_seen = q->sq_x.fetch;
        }
    }
    return q->sq_x.producer_seen;
}

/* The QP is in ERR: everything posted completes with WR_FLUSH_ERR */
bool flush(emu_state &s, qp *q, const ring &r)
{
    uint16_t producer = (r.buf != nullptr) ? sq_producer(q) : q->sq_x.fetch;
    bool did          = false;

    if ((r.buf != nullptr) && !posted_since_reset(q, r, producer)) {
        producer = q->sq_x.fetch; /* nothing posted since the reset */
    }

    q->sq_x.sent      = 0;
    q->sq_x.reads_out = 0;
    q->sq_x.device_ops.clear();
    while (!q->sq_x.wqes.empty()) {
        complete_wqe(s, q, q->sq_x.wqes.front(),
                     MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
        q->sq_x.wqes.pop_front();
        did = true;
    }

    while (q->sq_x.fetch != producer) {
        send_wqe w;

        wqe_decode(q, r, q->sq_x.fetch, &w);
        q->sq_x.fetch += w.nbb;
        complete_wqe(s, q, w, MLX5_CQE_SYNDROME_WR_FLUSH_ERR);
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
 * in order. A message goes only once all packets of the one before it are
 * made, so the link carries them in PSN order.
 */
bool pipeline(emu_state &s, qp *q)
{
    bool did = false;

    if (q->is_uc()) {
        return false; /* a UC message completes before the next goes */
    }

    while ((q->sq_x.sent > 0) && (q->sq_x.sent < q->sq_x.wqes.size()) &&
           (q->sq_x.sent < PIPELINE_MAX) &&
           !streaming(q->sq_x.wqes.at(q->sq_x.sent - 1))) {
        send_wqe &w = q->sq_x.wqes.at(q->sq_x.sent);
        qp *dst     = nullptr;
        wire::dest remote;

        if ((w.bad_syndrome != 0) || (w.info->flags & OP_LOCAL) ||
            w.waiting || fenced(w) ||
            (q->is_dci() && !dc_same_target(q, w)) ||
            ((w.info->flags & OP_RESPONSE) &&
             (q->sq_x.reads_out >= (1u << q->log_sra_max))) ||
            (uint64_t(w.length) > (1ull << q->log_msg_max)) ||
            (deliver(s, q, &dst, &remote) != UCT_IB_EMU_DROP_NONE) ||
            (dst != nullptr) || link_full(s, remote.host)) {
            break;
        }

        if (check_local(q, w, nullptr) != 0) {
            break;
        }

        send_remote(s, q, w, remote);
        did = true;
    }

    return did;
}

} // namespace



bool requester_progress(emu_state &s, qp *q)
{
    ring r = sq_ring(q);
    bool did = false;
    uint16_t producer;
    unsigned taken;


    /* a QP without a send queue of its own still carries the device's
     * work (a tag-matching QP's rendezvous reads) */
    if ((r.buf == nullptr) && q->sq_x.wqes.empty() &&
        q->sq_x.device_ops.empty()) {
        return false;
    }

    if ((q->state == UCT_MLX5_QP_STATE_ERR) ||
        (q->state == UCT_MLX5_QP_STATE_SQER)) {
        return flush(s, q, r);
    }

    if (q->state != UCT_MLX5_QP_STATE_RTS) {
        return false; /* posted WQEs wait for RTS */
    }

    did |= stream_more(s, q);

    /* the device's own work (tag matching's rendezvous) goes before what
     * its user posts from now on */
    for (send_wqe &op : q->sq_x.device_ops) {
        q->sq_x.wqes.push_back() = std::move(op);
        did = true;
    }
    q->sq_x.device_ops.clear();

    producer = (r.buf != nullptr) ? sq_producer_seen(q, r) : q->sq_x.fetch;
    for (taken = 0; (q->sq_x.fetch != producer) && (taken < FETCH_BUDGET);
         ++taken) {
        send_wqe &w = q->sq_x.wqes.push_back();

        wqe_decode(q, r, q->sq_x.fetch, &w);
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
