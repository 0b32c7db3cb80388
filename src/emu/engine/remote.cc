/*
 * The engine's side of the cross-process fabric: frames that arrive are taken
 * apart; a request is checked against the destination QP here, where it lives
 * (the delivery rules of docs/architecture.md, section 7, past the port),
 * executed by the responder, and answered over the responder's own path; an
 * answer goes to the completer of its QP; a datagram goes to UD delivery
 * (ud.cc).
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>


namespace uct_ib_emu {

namespace {

constexpr unsigned RX_BUDGET = 64; /* frames per pass */

/* The QP with this number on one of the host's devices */
qp *find_local_qp(const emu_state &s, uint32_t qpn)
{
    for (const auto &dev : s.devices) {
        auto it = dev->qps.find(qpn);

        if (it != dev->qps.end()) {
            return it->second;
        }
    }
    return nullptr;
}

void drop(emu_state &s, uct_ib_emu_drop_t reason, uint32_t qpn)
{
    ++s.drops[reason];
    uct_ib_emu_debug("packet to qp 0x%x dropped: %s", qpn,
                     uct_ib_emu_drop_str(reason));
}

/* The responder's path back, for an answer of dst: false if the answer is
 * lost (counted) */
bool answer_path(emu_state &s, qp *dst, wire::dest *remote)
{
    qp *back = nullptr;
    uct_ib_emu_drop_t reason;

    reason = deliver(s, dst, &back, remote);
    if ((reason == UCT_IB_EMU_DROP_NONE) && (back != nullptr)) {
        reason = UCT_IB_EMU_DROP_NO_QP; /* the path leads back to this host */
    }
    if (reason != UCT_IB_EMU_DROP_NONE) {
        count_drop(s, dst, reason);
        return false;
    }
    return true;
}

wire::resp_hdr answer_hdr(const qp *dst, const wire::dest &remote,
                          resp_kind kind, uint32_t psn)
{
    wire::resp_hdr h = {};

    h.type    = wire::PKT_RESPONSE;
    h.kind    = static_cast<uint8_t>(kind);
    h.dst_qpn = dst->remote_qpn;
    h.psn     = psn;
    memcpy(h.dmac, remote.dmac.data(), sizeof(h.dmac));
    return h;
}

/* Send the responder's answer (not a read's) back over its QP's path */
void answer(emu_state &s, qp *dst, const response_pkt &resp)
{
    wire::dest remote;
    wire::resp_hdr h;

    count_sent(s, dst);
    if (!answer_path(s, dst, &remote)) {
        return;
    }

    h           = answer_hdr(dst, remote, resp.kind, resp.psn);
    h.rnr_timer = resp.rnr_timer;
    h.total     = static_cast<uint32_t>(resp.data.size());
    h.data_len  = h.total;
    s.fabric->net().add_response(remote.host, h, resp.data.data());
}

/*
 * A read to answer: its data goes back in pieces of RESP_CHUNK bytes, each
 * read from memory as it is sent and only while the link has room, so the
 * responder holds no copy of the read. A retransmitted read replaces what
 * was still being answered from its PSN on. Its first pieces leave at
 * once, so the requester's timer restarts with them.
 */
void answer_read(emu_state &s, qp *dst, const wire::req_hdr &req,
                 const response_pkt &resp)
{
    std::deque<read_answer> &reads = dst->rq_x.reads;
    read_answer r;

    while (!reads.empty() && !psn_before(reads.back().psn, resp.psn)) {
        reads.pop_back();
    }

    r.psn   = resp.psn;
    r.rkey  = req.rkey;
    r.addr  = resp.read_addr;
    r.total = resp.read_len;
    reads.push_back(r);

    count_sent(s, dst);
    if (remote_reads_progress(s, dst) && (r.total > wire::RESP_CHUNK)) {
        s.fabric->net().flush(s);
    }
}

/* A RoCE port takes only the frames addressed to its MAC (as it is now,
 * the registry just synced: a frame sent after a move never gets in) */
bool mac_refused(const port &p, const uint8_t *dmac)
{
    return p.is_eth() && (memcmp(p.mac.data(), dmac, p.mac.size()) != 0);
}

void on_request(emu_state &s, const wire::req_hdr &h, const uint8_t *payload)
{
    const device *dev;
    response_pkt resp;
    request_pkt req;
    qp *dst;

    if (h.dst_dev >= s.devices.size()) {
        drop(s, UCT_IB_EMU_DROP_NO_ROUTE, h.dst_qpn);
        return;
    }

    dev = s.devices[h.dst_dev].get();
    if ((dev->get_port(h.dst_port) == nullptr) ||
        (dev->get_port(h.dst_port)->state != IBV_PORT_ACTIVE)) {
        drop(s, UCT_IB_EMU_DROP_NO_ROUTE, h.dst_qpn);
        return;
    }

    auto it = dev->qps.find(h.dst_qpn);
    if ((it == dev->qps.end()) || (it->second->port != h.dst_port) ||
        it->second->is_ud() || it->second->is_dci() ||
        (it->second->is_uc() != bool(h.flags & wire::REQ_UC)) ||
        (it->second->is_xrc() != bool(h.flags & wire::REQ_XRC)) ||
        (it->second->is_dct() != bool(h.flags & wire::REQ_DC))) {
        drop(s, UCT_IB_EMU_DROP_NO_QP, h.dst_qpn);
        return;
    }

    dst = it->second;
    if (mac_refused(*dev->get_port(h.dst_port), h.dmac)) {
        count_drop(s, dst, UCT_IB_EMU_DROP_MAC);
        return;
    }
    if ((dst->state != UCT_MLX5_QP_STATE_RTR) &&
        (dst->state != UCT_MLX5_QP_STATE_RTS)) {
        count_drop(s, dst, UCT_IB_EMU_DROP_QP_STATE);
        return;
    }
    if (dst->is_dct() && !dc_admit(s, dst, h, &dst)) {
        return; /* a DCT executes a request on its DCI's stream */
    }

    if (h.payload_len > mtu_bytes(dst->mtu)) {
        count_drop(s, dst, UCT_IB_EMU_DROP_MTU);
        return;
    }

    req.hdr        = h;
    req.info       = find_opcode(h.opcode);
    req.payload    = payload;
    req.defer_read = true;
    if (req.info == nullptr) {
        drop(s, UCT_IB_EMU_DROP_NO_ROUTE, h.dst_qpn); /* not ours to send */
        return;
    }

    count_delivered(s, dst);
    responder_receive(s, dst, req, &resp);
    if (dst->is_uc()) {
        return; /* UC answers nothing */
    }
    if (resp.kind == resp_kind::NONE) {
        count_drop(s, dst, UCT_IB_EMU_DROP_PSN);
        return;
    }

    /* the last packet of a message, and any packet refused, is answered */
    if (resp.read) {
        answer_read(s, dst, h, resp);
    } else if (req.last() || (resp.kind != resp_kind::ACK)) {
        answer(s, dst, resp);
    }
}

void on_response(emu_state &s, const wire::resp_hdr &h, const uint8_t *data)
{
    qp *q = find_local_qp(s, h.dst_qpn);
    const port *p;

    if (q == nullptr) {
        drop(s, UCT_IB_EMU_DROP_NO_QP, h.dst_qpn);
        return;
    }
    p = q->ctx->dev->get_port(q->port);
    if ((p != nullptr) && mac_refused(*p, h.dmac)) {
        count_drop(s, q, UCT_IB_EMU_DROP_MAC);
        return;
    }
    completer_response(s, q, h, data);
}

/* A datagram for a port of this host: UD delivery goes on there */
void on_datagram(emu_state &s, const wire::dgram_hdr &h,
                 const uint8_t *payload)
{
    const device *dev;
    const port *p;
    datagram d = {};

    if (h.dst_dev >= s.devices.size()) {
        drop(s, UCT_IB_EMU_DROP_NO_ROUTE, h.dst_qpn);
        return;
    }

    dev = s.devices[h.dst_dev].get();
    p   = dev->get_port(h.dst_port);
    if ((p == nullptr) || (p->state != IBV_PORT_ACTIVE)) {
        drop(s, UCT_IB_EMU_DROP_NO_ROUTE, h.dst_qpn);
        return;
    }
    if (mac_refused(*p, h.dmac)) {
        drop(s, UCT_IB_EMU_DROP_MAC, h.dst_qpn);
        return;
    }

    d.src_qpn     = h.src_qpn;
    d.dst_qpn     = h.dst_qpn;
    d.qkey        = h.qkey;
    d.imm         = h.imm;
    d.has_imm     = h.flags & wire::DGRAM_IMM;
    d.solicited   = h.flags & wire::DGRAM_SOLICITED;
    d.has_grh     = h.flags & wire::DGRAM_GRH;
    d.slid        = h.slid;
    d.dlid_bits   = h.dlid_bits;
    d.sl          = h.sl;
    d.payload     = payload;
    d.payload_len = h.payload_len;
    memcpy(d.grh, h.grh, sizeof(d.grh));
    ud_receive(s, dev, p, d);
}

size_t padded(size_t len)
{
    return (len + 7) & ~size_t(7);
}

/* Take a frame apart; a malformed packet ends it */
void on_frame(emu_state &s, const wire::frame_hdr &fh, const uint8_t *p,
              size_t len)
{
    if (s.fabric->isolated(fh.src_host)) {
        s.drops[UCT_IB_EMU_DROP_ISOLATED] += fh.count;
        return;
    }

    for (uint32_t i = 0; (i < fh.count) && (len > 0); ++i) {
        if (p[0] == wire::PKT_REQUEST) {
            wire::req_hdr h;

            if (len < sizeof(h)) {
                return;
            }
            memcpy(&h, p, sizeof(h));
            if (len < sizeof(h) + padded(h.payload_len)) {
                return;
            }
            on_request(s, h, p + sizeof(h));
            p   += sizeof(h) + padded(h.payload_len);
            len -= sizeof(h) + padded(h.payload_len);
        } else if (p[0] == wire::PKT_RESPONSE) {
            wire::resp_hdr h;

            if (len < sizeof(h)) {
                return;
            }
            memcpy(&h, p, sizeof(h));
            if (len < sizeof(h) + padded(h.data_len)) {
                return;
            }
            on_response(s, h, p + sizeof(h));
            p   += sizeof(h) + padded(h.data_len);
            len -= sizeof(h) + padded(h.data_len);
        } else if (p[0] == wire::PKT_CM) {
            wire::cm_hdr h;

            if (len < sizeof(h)) {
                return;
            }
            memcpy(&h, p, sizeof(h));
            if (len < sizeof(h) + padded(h.len)) {
                return;
            }
            if (s.cm_receive != nullptr) {
                s.cm_receive(s, fh.src_host, p + sizeof(h), h.len);
            }
            p   += sizeof(h) + padded(h.len);
            len -= sizeof(h) + padded(h.len);
        } else if (p[0] == wire::PKT_DATAGRAM) {
            wire::dgram_hdr h;

            if (len < sizeof(h)) {
                return;
            }
            memcpy(&h, p, sizeof(h));
            if (len < sizeof(h) + padded(h.payload_len)) {
                return;
            }
            on_datagram(s, h, p + sizeof(h));
            p   += sizeof(h) + padded(h.payload_len);
            len -= sizeof(h) + padded(h.payload_len);
        } else {
            return;
        }
    }
}

} // namespace


bool engine_receive_locked(emu_state &s)
{
    return s.fabric->net().receive(RX_BUDGET,
                                   [&s](const wire::frame_hdr &fh,
                                        const uint8_t *p, size_t len) {
        /* a port change written before the frame was sent */
        s.fabric->sync_locked(s);
        on_frame(s, fh, p, len);
    }) > 0;
}

bool remote_reads_progress(emu_state &s, qp *dst)
{
    std::deque<read_answer> &reads = dst->rq_x.reads;
    std::vector<uint8_t> &data     = dst->sq_x.payload;
    wire::endpoint &net            = s.fabric->net();
    bool did                       = false;
    wire::dest remote;
    frag_list frags;

    if (reads.empty()) {
        return false;
    }
    if (((dst->state != UCT_MLX5_QP_STATE_RTR) &&
         (dst->state != UCT_MLX5_QP_STATE_RTS)) ||
        !answer_path(s, dst, &remote)) {
        reads.clear(); /* lost: the requester times out and reads again */
        return true;
    }

    while (!reads.empty() && (net.backlog(remote.host) < wire::QUEUE_BACKLOG)) {
        read_answer &r   = reads.front();
        wire::resp_hdr h = answer_hdr(dst, remote, resp_kind::ACK, r.psn);

        h.total    = r.total;
        h.offset   = r.offset;
        h.data_len = static_cast<uint32_t>(
                std::min<size_t>(wire::RESP_CHUNK, r.total - r.offset));
        frags.clear();
        if ((h.data_len > 0) &&
            (mem_translate(dst->ctx->dev, dst->responder_pd(), r.rkey,
                           r.addr + r.offset, h.data_len,
                           IBV_ACCESS_REMOTE_READ, &frags, dst) !=
             key_check::OK)) {
            /* the memory went away under the read */
            h = answer_hdr(dst, remote, resp_kind::NAK_ACCESS, r.psn);
            net.add_response(remote.host, h, nullptr);
            reads.pop_front();
            did = true;
            continue;
        }
        data.clear();
        frags.append_to(&data);
        net.add_response(remote.host, h, data.data());
        r.offset += h.data_len;
        did       = true;
        if (r.offset >= r.total) {
            reads.pop_front();
        }
    }
    return did;
}

bool engine_flush_locked(emu_state &s)
{
    wire::endpoint &net = s.fabric->net();

    return net.queued() && net.flush(s);
}

} // namespace uct_ib_emu
