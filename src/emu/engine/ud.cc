/*
 * UD queue pairs on the engine. A send WQE carries a datagram segment after
 * its control segment: the destination's address vector (16 bytes, or 48
 * with MLX5_EXTENDED_UD_AV in dqp_dct: GRH, remote MAC and GID), its QPN
 * and the Q_Key. The message goes as one packet of at most the port MTU
 * (a larger one completes with a local length error), and nothing answers
 * it: the sender completes at once, whether the datagram arrives or not.
 *
 * At the destination port the UD QP with that number takes it when it is
 * RTR, RTS or SQER, the Q_Key is the QP's, the packet fits the port MTU and
 * a receive WQE is posted; anything else loses the datagram, counted by
 * reason (no RNR on UD).
 *
 * The first 40 bytes of every receive buffer belong to the GRH: on RoCE,
 * and on InfiniBand when the sender used one, the device writes the
 * packet's GRH there (RoCEv2 over IPv4: the IPv4 header in the last 20
 * bytes, the first 20 zero), otherwise it leaves them alone. byte_cnt
 * counts the 40 bytes either way. The receive CQE carries the source QPN,
 * the GRH-present bit (L3 in data) and sl, which on RoCE is the packet
 * type (bit 3 UDP, bits 2:0 the L3 header: 0 GRH, 1 IPv6, 2 IPv4).
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>


namespace uct_ib_emu {

namespace {

constexpr unsigned AV_BASE_LEN     = 16;
constexpr unsigned AV_EXT_LEN      = 48;
constexpr uint32_t QKEY_CONTROLLED = 0x80000000u; /* use the QP's own */
constexpr uint32_t CQE_L3_IN_DATA  = 1u << 28;
constexpr uint16_t DEFAULT_PKEY    = 0xffff;

/* Header bytes after the GRH/IP header: BTH, DETH and the ICRC, and UDP
 * for RoCEv2 */
constexpr unsigned BTH_LEN  = 12;
constexpr unsigned DETH_LEN = 8;
constexpr unsigned ICRC_LEN = 4;
constexpr unsigned IMM_LEN  = 4;
constexpr unsigned UDP_LEN  = 8;
constexpr unsigned IPV4_LEN = 20;

constexpr uint8_t NEXT_HDR_IBA = 0x1b;
constexpr uint8_t IPPROTO_UDP_ = 17;

/* The CQE's sl on RoCE: the packet type */
constexpr uint8_t PKT_ROCE_V1   = 0x0;
constexpr uint8_t PKT_ROCE_IPV6 = 0x8 | 0x1;
constexpr uint8_t PKT_ROCE_IPV4 = 0x8 | 0x2;

struct ud_av {
    struct mlx5_wqe_av raw;
    bool               ext;
    uct_ib_emu_ads_t   path;   /* what route() reads */
    uint32_t           dqpn;
    uint32_t           qkey;
    bool               grh;    /* InfiniBand: the sender adds a GRH */
    uint8_t            sl;
    uint8_t            path_bits;
    uint8_t            sgid_index;
    uint32_t           flow_label;
};

void decode_av(const send_wqe &w, ud_av *av)
{
    uint32_t dqp_dct, grh_gid_fl;

    memcpy(&av->raw, w.av, sizeof(av->raw));
    dqp_dct        = be32toh(av->raw.dqp_dct);
    grh_gid_fl     = be32toh(av->raw.grh_gid_fl);
    av->ext        = dqp_dct & MLX5_EXTENDED_UD_AV;
    av->dqpn       = dqp_dct & 0xffffff;
    av->qkey       = be32toh(av->raw.key.qkey.qkey);
    av->sl         = av->raw.stat_rate_sl & 0xf;
    av->path_bits  = av->raw.fl_mlid & 0x7f;
    av->grh        = av->ext && ((grh_gid_fl >> 30) & 1);
    av->sgid_index = av->ext ? ((grh_gid_fl >> 20) & 0xff) : 0;
    av->flow_label = grh_gid_fl & 0xfffff;

    av_path(av->raw, &av->path);
}

bool gid_is_ipv4_mapped(const uint8_t *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                       0xff, 0xff};

    return memcmp(gid, prefix, sizeof(prefix)) == 0;
}

void put_be16(uint8_t *p, uint16_t v)
{
    v = htobe16(v);
    memcpy(p, &v, sizeof(v));
}

uint16_t ipv4_checksum(const uint8_t *hdr)
{
    uint32_t sum = 0;

    for (unsigned i = 0; i < IPV4_LEN; i += 2) {
        sum += (uint32_t(hdr[i]) << 8) | hdr[i + 1];
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return static_cast<uint16_t>(~sum);
}

/* The 40 bytes the receiver finds before the payload */
void build_grh(const gid_slot &sgid, const ud_av &av, bool eth,
               uint32_t transport_len, uint8_t *out)
{
    bool v2 = eth && (sgid.type == IBV_GID_TYPE_ROCE_V2);

    memset(out, 0, UD_GRH_LEN);
    if (v2 && gid_is_ipv4_mapped(sgid.gid.raw)) {
        uint8_t *ip = out + UD_GRH_LEN - IPV4_LEN;

        ip[0] = 0x45; /* version 4, 5 words */
        ip[1] = av.raw.tclass;
        put_be16(ip + 2, IPV4_LEN + UDP_LEN + transport_len);
        put_be16(ip + 6, 0x4000); /* don't fragment */
        ip[8] = av.raw.hop_limit;
        ip[9] = IPPROTO_UDP_;
        memcpy(ip + 12, sgid.gid.raw + 12, 4);
        memcpy(ip + 16, av.raw.rgid + 12, 4);
        put_be16(ip + 10, ipv4_checksum(ip));
        return;
    }

    uint32_t vtf = htobe32((6u << 28) | (uint32_t(av.raw.tclass) << 20) |
                           av.flow_label);
    memcpy(out, &vtf, sizeof(vtf));
    put_be16(out + 4, (v2 ? UDP_LEN : 0) + transport_len);
    out[6] = v2 ? IPPROTO_UDP_ : NEXT_HDR_IBA;
    out[7] = av.raw.hop_limit;
    memcpy(out + 8, sgid.gid.raw, 16);
    memcpy(out + 24, av.raw.rgid, 16);
}

uint8_t roce_packet_type(const gid_slot &sgid)
{
    if (sgid.type != IBV_GID_TYPE_ROCE_V2) {
        return PKT_ROCE_V1;
    }
    return gid_is_ipv4_mapped(sgid.gid.raw) ? PKT_ROCE_IPV4 : PKT_ROCE_IPV6;
}

void drop_at(emu_state &s, const qp *dst, uct_ib_emu_drop_t reason,
             const datagram &d)
{
    port *p = (dst != nullptr) ? qp_port(dst) : nullptr;

    ++s.drops[reason];
    if (p != nullptr) {
        ++p->counters.drops[reason];
    }
    uct_ib_emu_debug("datagram of qp 0x%x to qp 0x%x dropped: %s", d.src_qpn,
                     d.dst_qpn, uct_ib_emu_drop_str(reason));
}

/* Write len bytes at offset of the receive's scatter list */
uint8_t scatter_at(const qp *dst, const std::vector<sge> &sges,
                   uint32_t offset, const uint8_t *src, uint32_t len)
{
    const device *dev = dst->ctx->dev;

    for (const sge &e : sges) {
        frag_list frags;
        uint32_t take;

        if (len == 0) {
            break;
        }
        if (offset >= e.length) {
            offset -= e.length;
            continue;
        }

        take = std::min(e.length - offset, len);
        if (mem_translate(dev, dst->pd, e.lkey, e.addr + offset, take,
                          IBV_ACCESS_LOCAL_WRITE, &frags) != key_check::OK) {
            return MLX5_CQE_SYNDROME_LOCAL_PROT_ERR;
        }
        frags.write_from(src);
        len   -= take;
        offset = 0;
    }

    return (len == 0) ? 0 : MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
}

uint64_t sges_bytes(const std::vector<sge> &sges)
{
    uint64_t total = 0;

    for (const sge &e : sges) {
        total += e.length;
    }
    return total;
}

} // namespace


void av_path(const struct mlx5_wqe_av &av, uct_ib_emu_ads_t *path)
{
    const uint32_t grh_gid_fl = be32toh(av.grh_gid_fl);
    const bool ext            = be32toh(av.dqp_dct) & MLX5_EXTENDED_UD_AV;

    *path      = {};
    path->rlid = be16toh(av.rlid);
    path->sl   = av.stat_rate_sl & 0xf;
    if (ext) {
        path->grh            = (grh_gid_fl >> 30) & 1;
        path->src_addr_index = (grh_gid_fl >> 20) & 0xff;
        path->flow_label     = grh_gid_fl & 0xfffff;
        path->tclass         = av.tclass;
        path->hop_limit      = av.hop_limit;
        memcpy(path->rmac.data(), av.rmac, path->rmac.size());
        memcpy(path->rgid.data(), av.rgid, path->rgid.size());
    }
}

uint8_t ud_decode_datagram_seg(send_wqe *w, const uint8_t *seg, unsigned left,
                               unsigned *used)
{
    uint32_t dqp_dct;
    unsigned len;

    if (left < AV_BASE_LEN) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }

    memcpy(&dqp_dct, seg + offsetof(struct mlx5_wqe_av, dqp_dct),
           sizeof(dqp_dct));
    len = (be32toh(dqp_dct) & MLX5_EXTENDED_UD_AV) ? AV_EXT_LEN : AV_BASE_LEN;
    if (left < len) {
        return MLX5_CQE_SYNDROME_LOCAL_QP_OP_ERR;
    }

    static_assert(sizeof(w->av) == sizeof(struct mlx5_wqe_av), "an AV");
    static_assert(sizeof(struct mlx5_wqe_datagram_seg) == AV_EXT_LEN,
                  "the datagram segment is the extended AV");
    memset(w->av, 0, sizeof(w->av));
    memcpy(w->av, seg, len);
    *used = len;
    return 0;
}

uint8_t ud_send(emu_state &s, qp *q, const send_wqe &w,
                const std::vector<uint8_t> &payload)
{
    const device *dev  = q->ctx->dev;
    const port *p      = dev->get_port(q->port);
    const device *dst_dev = nullptr;
    const port *dst_port  = nullptr;
    const gid_slot *sgid;
    uct_ib_emu_drop_t reason;
    wire::dest remote;
    datagram d = {};
    ud_av av;

    if ((p == nullptr) || (w.length > mtu_bytes(q->mtu))) {
        return MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    }

    decode_av(w, &av);
    d.src_qpn     = q->qpn;
    d.dst_qpn     = av.dqpn;
    d.qkey        = (av.qkey & QKEY_CONTROLLED) ? q->qkey : av.qkey;
    d.has_imm     = (w.opcode == MLX5_OPCODE_SEND_IMM);
    d.imm         = d.has_imm ? w.imm : 0;
    d.solicited   = w.fm_ce_se & MLX5_WQE_CTRL_SOLICITED;
    d.payload     = payload.data();
    d.payload_len = w.length;

    sgid = p->gid(av.sgid_index);
    if (p->is_eth()) {
        d.has_grh = true;
        d.sl      = (sgid != nullptr) ? roce_packet_type(*sgid) : 0;
    } else {
        d.has_grh = av.grh;
        d.sl      = av.sl;
        d.slid      = static_cast<uint16_t>(
                p->lid | (av.path_bits & ((1u << p->lmc) - 1)));
        d.dlid_bits = av.path.rlid & 0x7f;
    }
    if (d.has_grh && (sgid != nullptr)) {
        build_grh(*sgid, av, p->is_eth(),
                  BTH_LEN + DETH_LEN + (d.has_imm ? IMM_LEN : 0) + w.length +
                  ICRC_LEN, d.grh);
    }

    count_sent(s, q);
    reason = route(s, q, av.path, &dst_dev, &dst_port,
                   (s.fabric != nullptr) ? &remote : nullptr);
    if ((reason == UCT_IB_EMU_DROP_NONE) && d.has_grh && (sgid == nullptr)) {
        reason = UCT_IB_EMU_DROP_NO_ROUTE;
    }
    if (reason != UCT_IB_EMU_DROP_NONE) {
        drop_at(s, q, reason, d);
        return 0; /* lost on the way: the sender does not know */
    }

    if (dst_dev == nullptr) {
        wire::dgram_hdr h = {};

        h.type        = wire::PKT_DATAGRAM;
        h.flags       = (d.has_grh ? wire::DGRAM_GRH : 0) |
                        (d.has_imm ? wire::DGRAM_IMM : 0) |
                        (d.solicited ? wire::DGRAM_SOLICITED : 0);
        h.dst_dev     = remote.dev;
        h.dst_port    = remote.port;
        memcpy(h.dmac, remote.dmac.data(), sizeof(h.dmac));
        h.src_qpn     = d.src_qpn;
        h.dst_qpn     = d.dst_qpn;
        h.qkey        = d.qkey;
        h.imm         = d.imm;
        h.slid        = d.slid;
        h.sl          = d.sl;
        h.dlid_bits   = d.dlid_bits;
        h.payload_len = static_cast<uint16_t>(d.payload_len);
        memcpy(h.grh, d.grh, sizeof(h.grh));
        s.fabric->net().add_datagram(remote.host, h, d.payload);
        return 0;
    }

    ud_receive(s, dst_dev, dst_port, d);
    return 0;
}

void ud_receive(emu_state &s, const device *dev, const port *p,
                const datagram &d)
{
    std::vector<sge> sges;
    cqe_desc c = {};
    uint16_t wqe_index;
    uint8_t syndrome;
    qp *dst;

    auto it = dev->qps.find(d.dst_qpn);
    if ((it == dev->qps.end()) || !it->second->is_ud() ||
        (it->second->port != p->num)) {
        drop_at(s, nullptr, UCT_IB_EMU_DROP_NO_QP, d);
        return;
    }

    dst = it->second;
    if ((dst->state != UCT_MLX5_QP_STATE_RTR) &&
        (dst->state != UCT_MLX5_QP_STATE_RTS) &&
        (dst->state != UCT_MLX5_QP_STATE_SQER)) {
        drop_at(s, dst, UCT_IB_EMU_DROP_QP_STATE, d);
        return;
    }

    if (d.qkey != dst->qkey) {
        drop_at(s, dst, UCT_IB_EMU_DROP_QKEY, d);
        return;
    }

    if (d.payload_len > mtu_bytes(p->active_mtu)) {
        drop_at(s, dst, UCT_IB_EMU_DROP_MTU, d);
        return;
    }

    if (!recv_take(dst, &wqe_index, &sges)) {
        drop_at(s, dst, UCT_IB_EMU_DROP_NO_RECV, d);
        return;
    }

    count_delivered(s, dst);
    if (sges_bytes(sges) < uint64_t(UD_GRH_LEN) + d.payload_len) {
        syndrome = MLX5_CQE_SYNDROME_LOCAL_LENGTH_ERR;
    } else {
        syndrome = d.has_grh ? scatter_at(dst, sges, 0, d.grh, UD_GRH_LEN) : 0;
        if (syndrome == 0) {
            syndrome = scatter_at(dst, sges, UD_GRH_LEN, d.payload,
                                  d.payload_len);
        }
    }

    c.wqe_counter = wqe_index;
    c.qpn         = dst->qpn;
    c.srqn        = (dst->srq != nullptr) ? dst->srq->srqn : 0;
    c.byte_cnt    = UD_GRH_LEN + d.payload_len;
    c.solicited   = d.solicited;
    c.ud          = true;
    c.flags_rqpn  = (d.has_grh ? CQE_L3_IN_DATA : 0) |
                    (uint32_t(d.sl & 0xf) << 24) | (d.src_qpn & 0xffffff);
    c.slid        = d.slid;
    c.ml_path     = d.dlid_bits & ((1u << p->lmc) - 1);
    if (syndrome != 0) {
        c.opcode          = MLX5_CQE_RESP_ERR;
        c.syndrome        = syndrome;
        c.vendor_syndrome = vendor_syndrome(syndrome);
    } else if (d.has_imm) {
        c.opcode = MLX5_CQE_RESP_SEND_IMM;
        c.imm    = d.imm;
    } else {
        c.opcode = MLX5_CQE_RESP_SEND;
        c.imm    = htobe32(DEFAULT_PKEY); /* the packet's P_Key */
    }

    if ((dst->recv_cq == nullptr) || !cqe_write(s, dst->recv_cq, c)) {
        qp_to_error(s, dst, "receive CQ overrun");
    } else if (syndrome != 0) {
        qp_to_error(s, dst, "receive failed");
    }
}

void qp_to_sq_error(qp *q, const char *why)
{
    if (q->state != UCT_MLX5_QP_STATE_RTS) {
        return;
    }

    uct_ib_emu_debug("%s:%u: qp 0x%x to send queue error: %s",
                     q->ctx->dev->name.c_str(), q->port, q->qpn, why);
    q->state     = UCT_MLX5_QP_STATE_SQER;
    q->ibv.state = IBV_QPS_SQE;
}

} // namespace uct_ib_emu
