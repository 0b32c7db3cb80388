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

/* Send the responder's answer back over its QP's path */
void answer(emu_state &s, qp *dst, const response_pkt &resp)
{
    wire::resp_hdr h = {};
    qp *back         = nullptr;
    wire::dest remote;
    uct_ib_emu_drop_t reason;
    size_t offset = 0;

    count_sent(s, dst);
    reason = deliver(s, dst, &back, &remote);
    if ((reason == UCT_IB_EMU_DROP_NONE) && (back != nullptr)) {
        reason = UCT_IB_EMU_DROP_NO_QP; /* the path leads back to this host */
    }
    if (reason != UCT_IB_EMU_DROP_NONE) {
        count_drop(s, dst, reason);
        return;
    }

    h.type      = wire::PKT_RESPONSE;
    h.kind      = static_cast<uint8_t>(resp.kind);
    h.rnr_timer = resp.rnr_timer;
    h.dst_qpn   = dst->remote_qpn;
    h.psn       = resp.psn;
    h.total     = static_cast<uint32_t>(resp.data.size());
    memcpy(h.dmac, remote.dmac.data(), sizeof(h.dmac));
    do {
        h.offset   = static_cast<uint32_t>(offset);
        h.data_len = static_cast<uint32_t>(std::min(wire::RESP_CHUNK,
                                                    resp.data.size() - offset));
        s.fabric->net().add_response(remote.host, h,
                                     resp.data.data() + offset);
        /* a long answer streams: its first pieces leave now (the
         * requester's timer restarts with each), and what the link does
         * not take waits in the queue */
        if (((offset == 0) && (resp.data.size() > wire::RESP_CHUNK)) ||
            (s.fabric->net().backlog(remote.host) >= wire::QUEUE_BACKLOG)) {
            s.fabric->net().flush(s);
        }
        offset += h.data_len;
    } while (offset < resp.data.size());
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
        it->second->is_ud()) {
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

    if (h.payload_len > mtu_bytes(dst->mtu)) {
        count_drop(s, dst, UCT_IB_EMU_DROP_MTU);
        return;
    }

    req.hdr     = h;
    req.info    = find_opcode(h.opcode);
    req.payload = payload;
    if (req.info == nullptr) {
        drop(s, UCT_IB_EMU_DROP_NO_ROUTE, h.dst_qpn); /* not ours to send */
        return;
    }

    count_delivered(s, dst);
    responder_receive(s, dst, req, &resp);
    if (resp.kind == resp_kind::NONE) {
        count_drop(s, dst, UCT_IB_EMU_DROP_PSN);
        return;
    }

    /* the last packet of a message, and any packet refused, is answered */
    if (req.last() || (resp.kind != resp_kind::ACK)) {
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

bool engine_flush_locked(emu_state &s)
{
    wire::endpoint &net = s.fabric->net();

    return net.queued() && net.flush(s);
}

} // namespace uct_ib_emu
