/*
 * Packet delivery (docs/architecture.md, section 7): a packet reaches its
 * responder only if the destination exists on the requester's fabric, on
 * Ethernet the destination MAC the requester's address path carries is the
 * destination port's current MAC and the port accepts the packet's RoCE
 * version, and the remote QPN exists there in RTR or RTS. Anything else is
 * dropped, counted by reason.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>


namespace uct_ib_emu {

namespace {

bool eth_port_has(const port &p, const std::string &fabric, uint32_t index,
                  const uct_ib_emu_gid_t &gid, enum ibv_gid_type type)
{
    const gid_slot *slot = p.gid(index);

    return p.is_eth() && (p.state == IBV_PORT_ACTIVE) &&
           (p.fabric == fabric) && (slot != nullptr) && (slot->type == type) &&
           (gid_key(slot->gid) == gid);
}

/*
 * The active Ethernet port of fabric that has gid with the given type. The
 * requester's hint (where the GID was last found) is checked first: GID
 * tables change only with the topology, which outlives no QP, so a hint
 * that still matches is the answer a full search would give.
 */
const port *find_eth_port(const emu_state &s, const qp *q,
                          const std::string &fabric,
                          const uct_ib_emu_gid_t &gid, enum ibv_gid_type type,
                          const device **dev_p)
{
    route_hint &hint = q->route;

    if ((hint.dev != nullptr) &&
        eth_port_has(hint.dev->ports[hint.port - 1], fabric, hint.gid_index,
                     gid, type)) {
        *dev_p = hint.dev;
        return &hint.dev->ports[hint.port - 1];
    }

    for (const auto *devs : {&s.devices, &s.peers}) {
        for (const auto &dev : *devs) {
            for (const port &p : dev->ports) {
                for (uint32_t i = 0; i < p.gids.size(); ++i) {
                    if (eth_port_has(p, fabric, i, gid, type)) {
                        hint   = {dev.get(), p.num, i};
                        *dev_p = dev.get();
                        return &p;
                    }
                }
            }
        }
    }

    return nullptr;
}

/* The active InfiniBand port of subnet fabric with this LID */
const port *find_ib_port(const emu_state &s, const std::string &fabric,
                         uint16_t lid, const device **dev_p)
{
    for (const auto *devs : {&s.devices, &s.peers}) {
        for (const auto &dev : *devs) {
            for (const port &p : dev->ports) {
                if (!p.is_eth() && (p.fabric == fabric) && p.has_lid(lid) &&
                    (p.state == IBV_PORT_ACTIVE)) {
                    *dev_p = dev.get();
                    return &p;
                }
            }
        }
    }

    return nullptr;
}

/* Whether a packet of from's transport is for QP to: the same transport,
 * a DCI's for a DCT, a DCT's answer for a DCI */
bool same_transport(const qp *from, const qp *to)
{
    if (from->is_dci()) {
        return to->is_dct();
    }
    if (from->is_dct()) {
        return to->is_dci();
    }
    return from->st == to->st;
}

} // namespace


uct_ib_emu_drop_t route(const emu_state &s, const qp *q,
                        const uct_ib_emu_ads_t &path, const device **dev_p,
                        const port **port_p, wire::dest *remote)
{
    const device *src_dev = q->ctx->dev;
    const port *src_port  = src_dev->get_port(q->port);
    const device *dst_dev = nullptr;
    const port *dst_port;
    const gid_slot *sgid;

    if ((src_port == nullptr) || (src_port->state != IBV_PORT_ACTIVE)) {
        return UCT_IB_EMU_DROP_NO_ROUTE;
    }

    if (src_port->is_eth()) {
        /* RoCE: the source GID's type is the packet's version */
        sgid = src_port->gid(path.src_addr_index);
        if (sgid == nullptr) {
            return UCT_IB_EMU_DROP_NO_ROUTE;
        }

        dst_port = find_eth_port(s, q, src_port->fabric, path.rgid,
                                 sgid->type, &dst_dev);
        if (dst_port == nullptr) {
            return UCT_IB_EMU_DROP_NO_ROUTE;
        }

        if (path.rmac != dst_port->mac) {
            return UCT_IB_EMU_DROP_MAC;
        }

        if ((sgid->type == IBV_GID_TYPE_ROCE_V1) && dst_port->drop_roce_v1) {
            return UCT_IB_EMU_DROP_ROCE_V1;
        }

        if ((sgid->type == IBV_GID_TYPE_ROCE_V2) && dst_port->drop_roce_v2) {
            return UCT_IB_EMU_DROP_ROCE_V2;
        }
    } else {
        /* InfiniBand: the subnet routes by LID */
        dst_port = find_ib_port(s, src_port->fabric, path.rlid, &dst_dev);
        if (dst_port == nullptr) {
            return UCT_IB_EMU_DROP_NO_ROUTE;
        }
    }

    if (dst_dev->peer) {
        /* another host: its process checks the QP */
        if ((remote == nullptr) ||
            s.fabric->isolated(static_cast<unsigned>(dst_dev->host))) {
            return (remote == nullptr) ? UCT_IB_EMU_DROP_NO_QP :
                                         UCT_IB_EMU_DROP_ISOLATED;
        }
        *dev_p         = nullptr;
        remote->host   = static_cast<unsigned>(dst_dev->host);
        remote->dev    = static_cast<uint8_t>(dst_dev->index);
        remote->port   = dst_port->num;
        /* that host's port filters on it: this view of its MAC may be
         * older than the frame */
        remote->dmac   = src_port->is_eth() ? path.rmac : uct_ib_emu_mac_t{};
        return UCT_IB_EMU_DROP_NONE;
    }

    *dev_p  = dst_dev;
    *port_p = dst_port;
    return UCT_IB_EMU_DROP_NONE;
}

uct_ib_emu_drop_t deliver(const emu_state &s, const qp *q, qp **dst_p,
                          wire::dest *remote)
{
    const device *dst_dev = nullptr;
    const port *dst_port  = nullptr;
    uct_ib_emu_drop_t reason;
    qp *dst;

    reason = route(s, q, q->path, &dst_dev, &dst_port, remote);
    if (reason != UCT_IB_EMU_DROP_NONE) {
        return reason;
    }

    if (dst_dev == nullptr) {
        *dst_p = nullptr; /* another host */
        return UCT_IB_EMU_DROP_NONE;
    }

    /* a QP of another transport (RC, UC) takes none of its packets */
    auto it = dst_dev->qps.find(q->remote_qpn);
    if ((it == dst_dev->qps.end()) || (it->second->port != dst_port->num) ||
        !same_transport(q, it->second)) {
        return UCT_IB_EMU_DROP_NO_QP;
    }

    dst = it->second;
    if ((dst->state != UCT_MLX5_QP_STATE_RTR) &&
        (dst->state != UCT_MLX5_QP_STATE_RTS)) {
        return UCT_IB_EMU_DROP_QP_STATE;
    }

    *dst_p = dst;
    return UCT_IB_EMU_DROP_NONE;
}

uct_ib_emu_drop_t deliver_packet(const emu_state &s, const qp *q,
                                 uint32_t payload_len, qp **dst_p,
                                 wire::dest *remote)
{
    uct_ib_emu_drop_t reason = deliver(s, q, dst_p, remote);

    if ((reason == UCT_IB_EMU_DROP_NONE) && (*dst_p != nullptr) &&
        (payload_len > mtu_bytes((*dst_p)->mtu))) {
        return UCT_IB_EMU_DROP_MTU;
    }

    return reason;
}

uint32_t mtu_bytes(uint8_t mtu)
{
    /* IB encoding: 1 = 256 ... 5 = 4096 */
    return ((mtu >= 1) && (mtu <= 5)) ? (128u << mtu) : 0;
}

void count_drop(emu_state &s, const qp *q, uct_ib_emu_drop_t reason)
{
    port *p = qp_port(q);

    ++s.drops[reason];
    if (p != nullptr) {
        ++p->counters.drops[reason];
    }
    uct_ib_emu_debug("%s:%u: packet of qp 0x%x to qp 0x%x dropped: %s",
                     q->ctx->dev->name.c_str(), q->port, q->qpn,
                     q->remote_qpn, uct_ib_emu_drop_str(reason));
}

} // namespace uct_ib_emu


const char *uct_ib_emu_drop_str(uct_ib_emu_drop_t reason)
{
    switch (reason) {
    case UCT_IB_EMU_DROP_NONE:
        return "delivered";
    case UCT_IB_EMU_DROP_NO_ROUTE:
        return "no route to the destination";
    case UCT_IB_EMU_DROP_MAC:
        return "destination MAC mismatch";
    case UCT_IB_EMU_DROP_ROCE_V1:
        return "port drops RoCEv1";
    case UCT_IB_EMU_DROP_ROCE_V2:
        return "port drops RoCEv2";
    case UCT_IB_EMU_DROP_NO_QP:
        return "no such remote QP";
    case UCT_IB_EMU_DROP_QP_STATE:
        return "remote QP not ready to receive";
    case UCT_IB_EMU_DROP_NOT_LOOPBACK:
        return "memory registration on a QP not connected to itself";
    case UCT_IB_EMU_DROP_MTU:
        return "packet larger than the responder's path MTU";
    case UCT_IB_EMU_DROP_PSN:
        return "request out of sequence";
    case UCT_IB_EMU_DROP_HOST_DOWN:
        return "destination host not running";
    case UCT_IB_EMU_DROP_ISOLATED:
        return "host traffic killed";
    case UCT_IB_EMU_DROP_CONGESTION:
        return "destination host congested";
    case UCT_IB_EMU_DROP_QKEY:
        return "datagram Q_Key mismatch";
    case UCT_IB_EMU_DROP_NO_RECV:
        return "datagram found no receive WQE";
    case UCT_IB_EMU_DROP_DC_KEY:
        return "DC access key mismatch";
    default:
        return "unknown";
    }
}
