/*
 * The DC transport on the engine. A DCI is a requester without a fixed
 * remote: each WQE carries an address vector (its datagram segment: the
 * DCT's number, the access key, and the path, a RoCE destination MAC among
 * it). The DCI sends as an RC QP does, to the target of its oldest message:
 * when a message names another target, the DCI waits until everything
 * before it has completed, then connects anew (a DC connect: its connection
 * generation goes up and starts at the message's first PSN). A message to
 * the current target follows without waiting. So a MAC in the address
 * vector is used for every packet to that target, and a stale one is
 * dropped by the destination port exactly as an RC QP's.
 *
 * A DCT takes requests that carry its access key (others are dropped and
 * counted as key violations) and executes them on a stream per DCI: a
 * responder context of its own (PSNs, a SEND in progress, read and atomic
 * replay), made on first contact and started again by a newer connection
 * of its DCI; a request of an older connection is dropped. A stream answers
 * to the address the request came from, as a DCT answers to the packet's
 * source. Everything else (ACKs, NAKs, RNR, retries, errors) is RC's.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>

#include <ctime>


namespace uct_ib_emu {

namespace {

/* Connection generations come from the system's monotonic clock, in
 * microseconds, so that a DCI made later with a reused number still starts
 * above the streams of the one before it, in any process of the fabric */
uint32_t next_generation(uint32_t last)
{
    struct timespec ts;
    uint32_t now;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = static_cast<uint32_t>(uint64_t(ts.tv_sec) * 1000000 +
                                uint64_t(ts.tv_nsec) / 1000);
    return (int32_t(now - last) > 0) ? now : (last + 1);
}

/* What a DCI fills in of the wire header for its DCI's address */
void initiator_address(const qp *dci, wire::req_hdr *h)
{
    const port *p      = dci->ctx->dev->get_port(dci->port);
    const gid_slot *g  = (p != nullptr) ?
                         p->gid(dci->path.src_addr_index) : nullptr;

    if (p == nullptr) {
        return;
    }
    if (g != nullptr) {
        memcpy(h->dc_sgid, g->gid.raw, sizeof(h->dc_sgid));
    }
    memcpy(h->dc_smac, p->mac.data(), sizeof(h->dc_smac));
    h->dc_slid = p->lid;
}

} // namespace


bool dc_same_target(const qp *dci, const send_wqe &w)
{
    return dci->dc_connected && (memcmp(dci->dc_av, w.av, sizeof(w.av)) == 0);
}

void dc_connect(emu_state &s, qp *dci, const send_wqe &w)
{
    struct mlx5_wqe_av av;
    uct_ib_emu_ads_t path;

    if (dc_same_target(dci, w)) {
        return;
    }

    memcpy(&av, w.av, sizeof(av));
    av_path(av, &path);
    /* the QP's own part of the path stays */
    path.vhca_port_num = dci->path.vhca_port_num;
    path.pkey_index    = dci->path.pkey_index;
    path.ack_timeout   = dci->path.ack_timeout;
    path.eth_prio      = dci->path.eth_prio;
    dci->path          = path;
    dci->remote_qpn    = be32toh(av.dqp_dct) & 0xffffff;
    dci->dc_key        = be64toh(av.key.dc_key);
    dci->dc_gen        = next_generation(dci->dc_gen);
    dci->dc_start_psn  = dci->next_send_psn;
    dci->dc_connected  = true;
    memcpy(dci->dc_av, w.av, sizeof(dci->dc_av));
    record_connect_locked(s, dci);
    uct_ib_emu_debug("%s:%u: dci 0x%x connects to dct 0x%x (generation %u, "
                     "psn 0x%x)", dci->ctx->dev->name.c_str(), dci->port,
                     dci->qpn, dci->remote_qpn, dci->dc_gen,
                     dci->dc_start_psn);
}

void dc_request_fields(const qp *dci, wire::req_hdr *h)
{
    h->flags       |= wire::REQ_DC;
    h->dc_key       = dci->dc_key;
    h->dc_gen       = dci->dc_gen;
    h->dc_start_psn = dci->dc_start_psn;
    initiator_address(dci, h);
}

qp *dc_stream(qp *dct, const wire::req_hdr &h)
{
    std::unique_ptr<qp> &slot = dct->dc_streams[h.src_qpn];
    qp *st;

    if (slot == nullptr) {
        slot = std::make_unique<qp>(dct->ctx);
        st   = slot.get();
        /* the DCT's responder side, as CREATE_DCT set it */
        st->devx        = true;
        st->st          = QP_ST_DCT;
        st->qpn         = dct->qpn;
        st->state       = UCT_MLX5_QP_STATE_RTR;
        st->pd          = dct->pd;
        st->recv_cq     = dct->recv_cq;
        st->srq         = dct->srq;
        st->rq_type     = dct->rq_type;
        st->no_sq       = 1;
        st->port        = dct->port;
        st->mtu         = dct->mtu;
        st->log_msg_max = dct->log_msg_max;
        st->log_rra_max = dct->log_rra_max;
        st->rre         = dct->rre;
        st->rwe         = dct->rwe;
        st->rae         = dct->rae;
        st->atomic_mode = dct->atomic_mode;
        st->min_rnr_nak = dct->min_rnr_nak;
        st->cs_res      = dct->cs_res;
        st->user_index  = dct->user_index;
        st->dc_key      = dct->dc_key;
        st->remote_qpn  = h.src_qpn;
        st->stream_of   = dct;
    }

    /* the answers go where this request came from */
    st = slot.get();
    st->path                = dct->path;
    st->path.rlid           = h.dc_slid;
    st->path.grh            = 1;
    memcpy(st->path.rgid.data(), h.dc_sgid, st->path.rgid.size());
    memcpy(st->path.rmac.data(), h.dc_smac, st->path.rmac.size());
    return st;
}

bool dc_admit(emu_state &s, qp *dct, const wire::req_hdr &h, qp **stream_p)
{
    qp *st;

    if (!(h.flags & wire::REQ_DC) || (h.dc_key != dct->dc_key)) {
        ++dct->dc_key_violations;
        count_drop(s, dct, UCT_IB_EMU_DROP_DC_KEY);
        return false;
    }

    st = dc_stream(dct, h);
    if (!st->dc_connected || (int32_t(h.dc_gen - st->dc_gen) > 0)) {
        /* a new connection of this DCI: the stream starts again */
        st->rq_x         = rq_exec();
        st->next_rcv_psn = h.dc_start_psn;
        st->dc_gen       = h.dc_gen;
        st->dc_connected = true;
    } else if (h.dc_gen != st->dc_gen) {
        count_drop(s, dct, UCT_IB_EMU_DROP_PSN); /* a replaced connection */
        return false;
    }

    *stream_p = st;
    return true;
}

} // namespace uct_ib_emu
