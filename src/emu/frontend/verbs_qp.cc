/*
 * Verbs RC and UD queue pairs: ibv_create_qp, mlx5dv_create_qp, ibv_modify_qp with
 * the state machine and attribute masks of the IB specification (as the
 * kernel enforces them), ibv_query_qp, ibv_destroy_qp.
 *
 * On RoCE the kernel resolves the destination MAC when the QP moves to RTR,
 * from its neighbour table at that moment.
 *
 * Scatter to CQE stays off on verbs QPs (qpc.cs_req and cs_res 0), as with
 * rdma-core's MLX5_SCATTER_TO_CQE=0: their data always lands in the posted
 * buffers, so the provider's poll_cq never copies out of a CQE. Only DevX
 * QPs, whose creator writes the QPC, turn it on (completer.cc).
 */
#include <emu/fabric/member.h>
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>
#include <emu/model/model.h>

#include <endian.h>
#include <iterator>


namespace uct_ib_emu {

namespace {

constexpr int QP_ACCESS_MODELLED = ACCESS_RDMA;

/* WQE building blocks, in bytes */
constexpr unsigned WQE_BB        = 64;
constexpr unsigned WQE_CTRL_SEG  = 16;
constexpr unsigned WQE_RADDR_SEG = 16;
constexpr unsigned WQE_ATOMIC_SEG = 16;
constexpr unsigned WQE_DATA_SEG  = 16;
constexpr unsigned WQE_DATAGRAM_SEG = 48;
constexpr unsigned WQE_INLINE_HDR = 4;

unsigned align_up(unsigned value, unsigned align)
{
    return (value + align - 1) / align * align;
}

/* One legal RC transition: required and optional attr_mask bits */
struct transition {
    enum ibv_qp_state cur;
    enum ibv_qp_state next;
    int               required;
    int               optional;
};

constexpr transition rc_transitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
     0},
    {IBV_QPS_INIT,  IBV_QPS_INIT,
     0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT,  IBV_QPS_RTR,
     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR,   IBV_QPS_RTS,
     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT,
     IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
     IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE},
    {IBV_QPS_RTS,   IBV_QPS_RTS,
     0,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
     IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER}
};

/* UC: RC without the reliability attributes (IBA 11.2.4.2) */
constexpr transition uc_transitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
     0},
    {IBV_QPS_INIT,  IBV_QPS_INIT,
     0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT,  IBV_QPS_RTR,
     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
     IBV_QP_RQ_PSN,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR,   IBV_QPS_RTS,
     IBV_QP_STATE | IBV_QP_SQ_PSN,
     IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
     IBV_QP_PATH_MIG_STATE},
    {IBV_QPS_RTS,   IBV_QPS_RTS,
     0,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
     IBV_QP_PATH_MIG_STATE}
};

/* XRC (the kernel's tables): an initiator sends only, so it has no
 * responder attributes; a target receives only, so it has no requester's
 * retry attributes */
constexpr transition xrc_ini_transitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
     0},
    {IBV_QPS_INIT,  IBV_QPS_INIT,
     0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT,  IBV_QPS_RTR,
     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
     IBV_QP_RQ_PSN,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR,   IBV_QPS_RTS,
     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |
     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT,
     IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
     IBV_QP_PATH_MIG_STATE},
    {IBV_QPS_RTS,   IBV_QPS_RTS,
     0,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
     IBV_QP_PATH_MIG_STATE}
};

constexpr transition xrc_tgt_transitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
     0},
    {IBV_QPS_INIT,  IBV_QPS_INIT,
     0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT,  IBV_QPS_RTR,
     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR,   IBV_QPS_RTS,
     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_SQ_PSN,
     IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
     IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MIG_STATE},
    {IBV_QPS_RTS,   IBV_QPS_RTS,
     0,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_ALT_PATH |
     IBV_QP_PATH_MIG_STATE | IBV_QP_MIN_RNR_TIMER}
};

constexpr transition ud_transitions[] = {
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
     0},
    {IBV_QPS_INIT,  IBV_QPS_INIT,
     0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY},
    {IBV_QPS_INIT,  IBV_QPS_RTR,
     IBV_QP_STATE,
     IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
    {IBV_QPS_RTR,   IBV_QPS_RTS,
     IBV_QP_STATE | IBV_QP_SQ_PSN,
     IBV_QP_CUR_STATE | IBV_QP_QKEY},
    {IBV_QPS_RTS,   IBV_QPS_RTS,
     0,
     IBV_QP_CUR_STATE | IBV_QP_QKEY},
    {IBV_QPS_SQE,   IBV_QPS_RTS,
     IBV_QP_STATE,
     IBV_QP_CUR_STATE | IBV_QP_QKEY}
};

/* Required/optional masks of cur -> next for a QP of the type, false if
 * the transition is illegal. Any state may go to RESET or ERR with the
 * state alone. */
bool find_transition(enum ibv_qp_type type, enum ibv_qp_state cur,
                     enum ibv_qp_state next, int *required, int *optional)
{
    if ((next == IBV_QPS_RESET) || (next == IBV_QPS_ERR)) {
        *required = IBV_QP_STATE;
        *optional = 0;
        return true;
    }

    /* the state table of the QP's type */
    const transition *table = rc_transitions;
    size_t           count  = std::size(rc_transitions);
    switch (type) {
    case IBV_QPT_UD:
        table = ud_transitions;
        count = std::size(ud_transitions);
        break;
    case IBV_QPT_UC:
        table = uc_transitions;
        count = std::size(uc_transitions);
        break;
    case IBV_QPT_XRC_SEND:
        table = xrc_ini_transitions;
        count = std::size(xrc_ini_transitions);
        break;
    case IBV_QPT_XRC_RECV:
        table = xrc_tgt_transitions;
        count = std::size(xrc_tgt_transitions);
        break;
    default:
        break;
    }

    for (size_t i = 0; i < count; ++i) {
        if ((table[i].cur == cur) && (table[i].next == next)) {
            *required = table[i].required;
            *optional = table[i].optional;
            return true;
        }
    }

    return false;
}

bool mtu_valid(int mtu)
{
    return (mtu >= IBV_MTU_256) && (mtu <= IBV_MTU_4096);
}

/*
 * The address path of a verbs QP, as the kernel programs it into the QPC:
 * on RoCE the MAC is resolved now. 0 or an errno.
 */
int verbs_path(emu_state &s, const device *dev, const struct ibv_ah_attr &ah,
               uint8_t port_num, uct_ib_emu_ads_t *path)
{
    const port *p = dev->get_port(port_num);
    const gid_slot *sgid = nullptr;
    uct_ib_emu_mac_t rmac = {};

    if (p == nullptr) {
        return EINVAL;
    }

    if (p->is_eth() && !ah.is_global) {
        return EINVAL;
    }

    if (ah.is_global) {
        sgid = p->gid(ah.grh.sgid_index);
        if (sgid == nullptr) {
            return EINVAL;
        }
    }

    if (p->is_eth() && !neigh_resolve(s, *p, ah.grh.dgid, &rmac)) {
        uct_ib_emu_debug("modify_qp on %s:%u: no neighbour for %s",
                         dev->name.c_str(), port_num,
                         gid_str(ah.grh.dgid.raw).c_str());
        return EHOSTUNREACH;
    }

    *path               = {};
    path->vhca_port_num = port_num;
    path->stat_rate     = ah.static_rate & 0xf;
    if (p->is_eth()) {
        path->eth_prio  = ah.sl & 0x7;
        path->rmac      = rmac;
        if (sgid->type == IBV_GID_TYPE_ROCE_V2) {
            path->udp_sport = roce_udp_sport(s, ah.grh.flow_label);
            path->dscp      = ah.grh.traffic_class >> 2;
        }
    } else {
        path->rlid      = ah.dlid;
        path->mlid      = ah.src_path_bits & 0x7f;
        path->sl        = ah.sl & 0xf;
        path->grh       = ah.is_global;
    }

    if (ah.is_global) {
        path->src_addr_index = ah.grh.sgid_index;
        path->hop_limit      = ah.grh.hop_limit;
        path->tclass         = ah.grh.traffic_class;
        path->flow_label     = ah.grh.flow_label & 0xfffff;
        memcpy(path->rgid.data(), ah.grh.dgid.raw, path->rgid.size());
    }

    return 0;
}

/* Check every attribute the mask selects; 0 or an errno, nothing applied */
int check_modify(emu_state &s, const qp *q, const struct ibv_qp_attr *attr,
                 int mask, uct_ib_emu_ads_t *path)
{
    const device *dev = q->ctx->dev;
    uint8_t port_num  = (mask & IBV_QP_PORT) ? attr->port_num : q->port;
    const port *p;

    if ((mask & IBV_QP_CUR_STATE) &&
        (attr->cur_qp_state != verbs_qp_state(q->state))) {
        return EINVAL;
    }

    if (mask & IBV_QP_ALT_PATH) {
        return EOPNOTSUPP; /* automatic path migration is not modelled */
    }

    if ((mask & IBV_QP_PATH_MIG_STATE) &&
        (attr->path_mig_state != IBV_MIG_MIGRATED)) {
        return EINVAL;
    }

    p = dev->get_port(port_num);
    if ((mask & (IBV_QP_PORT | IBV_QP_PKEY_INDEX | IBV_QP_PATH_MTU)) &&
        (p == nullptr)) {
        return EINVAL;
    }

    if ((mask & IBV_QP_PKEY_INDEX) && (attr->pkey_index >= p->pkey_tbl_len)) {
        return EINVAL;
    }

    if ((mask & IBV_QP_ACCESS_FLAGS) &&
        (attr->qp_access_flags & ~QP_ACCESS_MODELLED)) {
        return EINVAL;
    }

    if ((mask & IBV_QP_PATH_MTU) &&
        (!mtu_valid(attr->path_mtu) || (attr->path_mtu > p->max_mtu))) {
        return EINVAL;
    }

    if (((mask & IBV_QP_DEST_QPN) && (attr->dest_qp_num > 0xffffff)) ||
        ((mask & IBV_QP_RQ_PSN) && (attr->rq_psn > 0xffffff)) ||
        ((mask & IBV_QP_SQ_PSN) && (attr->sq_psn > 0xffffff))) {
        return EINVAL;
    }

    if (((mask & IBV_QP_MAX_DEST_RD_ATOMIC) &&
         (attr->max_dest_rd_atomic > (1 << LOG_MAX_RA_QP))) ||
        ((mask & IBV_QP_MAX_QP_RD_ATOMIC) &&
         (attr->max_rd_atomic > (1 << LOG_MAX_RA_QP)))) {
        return EINVAL;
    }

    if (((mask & IBV_QP_MIN_RNR_TIMER) && (attr->min_rnr_timer > 31)) ||
        ((mask & IBV_QP_TIMEOUT) && (attr->timeout > 31)) ||
        ((mask & IBV_QP_RETRY_CNT) && (attr->retry_cnt > 7)) ||
        ((mask & IBV_QP_RNR_RETRY) && (attr->rnr_retry > 7))) {
        return EINVAL;
    }

    if (mask & IBV_QP_AV) {
        return verbs_path(s, dev, attr->ah_attr,
                          (attr->ah_attr.port_num != 0) ?
                          attr->ah_attr.port_num : port_num,
                          path);
    }

    return 0;
}

void apply_modify(qp *q, const struct ibv_qp_attr *attr, int mask,
                  enum ibv_qp_state next, const uct_ib_emu_ads_t &path)
{
    if (next == IBV_QPS_RESET) {
        q->reset_connection();
    }

    if (mask & IBV_QP_PORT) {
        q->port = attr->port_num;
    }
    if (mask & IBV_QP_PKEY_INDEX) {
        q->pkey_index      = attr->pkey_index;
        q->path.pkey_index = attr->pkey_index;
    }
    if (mask & IBV_QP_ACCESS_FLAGS) {
        q->access_flags = attr->qp_access_flags;
        q->rwe = !!(attr->qp_access_flags & IBV_ACCESS_REMOTE_WRITE);
        q->rre = !!(attr->qp_access_flags & IBV_ACCESS_REMOTE_READ);
        q->rae = !!(attr->qp_access_flags & IBV_ACCESS_REMOTE_ATOMIC);
    }
    if (mask & IBV_QP_AV) {
        uint16_t pkey_index = q->path.pkey_index;
        uint8_t  timeout    = q->path.ack_timeout;

        q->ah_attr          = attr->ah_attr;
        q->path             = path;
        q->path.pkey_index  = pkey_index;
        q->path.ack_timeout = timeout;
    }
    if (mask & IBV_QP_PATH_MTU) {
        q->mtu         = attr->path_mtu;
        q->log_msg_max = LOG_MAX_MSG; /* the kernel allows the device max */
    }
    if (mask & IBV_QP_DEST_QPN) {
        q->remote_qpn = attr->dest_qp_num;
    }
    if (mask & IBV_QP_QKEY) {
        q->qkey = attr->qkey;
    }
    if (q->is_ud() && (mask & IBV_QP_PORT)) {
        /* a datagram is one packet of at most the port MTU */
        q->mtu = q->ctx->dev->get_port(q->port)->active_mtu;
    }
    if (mask & IBV_QP_RQ_PSN) {
        q->next_rcv_psn = attr->rq_psn;
    }
    if (mask & IBV_QP_SQ_PSN) {
        q->next_send_psn = attr->sq_psn;
    }
    if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
        q->max_dest_rd_atomic = attr->max_dest_rd_atomic;
        q->log_rra_max        = ilog2_ceil(attr->max_dest_rd_atomic);
    }
    if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
        q->max_rd_atomic = attr->max_rd_atomic;
        q->log_sra_max   = ilog2_ceil(attr->max_rd_atomic);
    }
    if (mask & IBV_QP_MIN_RNR_TIMER) {
        q->min_rnr_nak = attr->min_rnr_timer;
    }
    if (mask & IBV_QP_TIMEOUT) {
        q->timeout          = attr->timeout;
        q->path.ack_timeout = attr->timeout;
    }
    if (mask & IBV_QP_RETRY_CNT) {
        q->retry_count = attr->retry_cnt;
    }
    if (mask & IBV_QP_RNR_RETRY) {
        q->rnr_retry = attr->rnr_retry;
    }

    q->state       = prm_qp_state(next);
    q->ibv.state   = next;
    if ((next == IBV_QPS_RTR) && (mask & IBV_QP_AV)) {
        record_connect_locked(state(), q);
    }
}

/* Shared by ibv_create_qp and mlx5dv_create_qp; an XRC target has a domain
 * (x) and no PD, every other QP a PD */
struct ibv_qp *qp_create_locked(emu_state &s, pd *p, xrcd *x,
                                struct ibv_qp_init_attr *attr,
                                uint64_t send_ops_flags)
{
    context *ctx = (p != nullptr) ? p->ctx : x->ctx;
    device *dev  = ctx->dev;
    const bool xrc_send = (attr->qp_type == IBV_QPT_XRC_SEND);
    const bool xrc_recv = (attr->qp_type == IBV_QPT_XRC_RECV);
    std::unique_ptr<qp> q;
    qp_spec spec;
    qp *installed;
    cq *scq, *rcq;
    srq *sq = nullptr;
    unsigned sq_desc, sq_wqe_size, rq_stride, sq_hdrs;
    size_t rq_bytes, sq_bytes;

    if ((attr->qp_type != IBV_QPT_RC) && (attr->qp_type != IBV_QPT_UC) &&
        (attr->qp_type != IBV_QPT_UD) && !xrc_send && !xrc_recv) {
        return fail_ptr<struct ibv_qp>(EOPNOTSUPP); /* not modelled */
    }

    /* an XRC initiator has no receive side, a target neither side: their
     * CQs, SRQ and capacities are ignored, as the kernel ignores them */
    if (xrc_send || xrc_recv) {
        attr->recv_cq          = nullptr;
        attr->srq              = nullptr;
        attr->cap.max_recv_wr  = 0;
        attr->cap.max_recv_sge = 0;
    }
    if (xrc_recv) {
        attr->send_cq             = nullptr;
        attr->cap.max_send_wr     = 0;
        attr->cap.max_send_sge    = 0;
        attr->cap.max_inline_data = 0;
    }

    scq = xrc_recv ? nullptr : find<cq>(s, attr->send_cq);
    rcq = (xrc_send || xrc_recv) ? nullptr : find<cq>(s, attr->recv_cq);
    if ((!xrc_recv && ((scq == nullptr) || (scq->ctx != ctx))) ||
        (!xrc_send && !xrc_recv && ((rcq == nullptr) || (rcq->ctx != ctx)))) {
        return fail_ptr<struct ibv_qp>(EINVAL);
    }

    if (attr->srq != nullptr) {
        sq = find<srq>(s, attr->srq);
        if ((sq == nullptr) || (sq->ctx != ctx)) {
            return fail_ptr<struct ibv_qp>(EINVAL);
        }
    }

    const uint32_t max_wr = 1u << dev->log_max_qp_sz;
    if ((attr->cap.max_send_wr > max_wr) ||
        (attr->cap.max_send_sge > MAX_SGE) ||
        (attr->cap.max_inline_data > MAX_INLINE_DATA) ||
        ((sq == nullptr) && ((attr->cap.max_recv_wr > max_wr) ||
                             (attr->cap.max_recv_sge > MAX_SGE)))) {
        return fail_ptr<struct ibv_qp>(EINVAL);
    }

    if (dev->qps.size() >= (1u << LOG_MAX_QP)) {
        return fail_ptr<struct ibv_qp>(ENOMEM);
    }

    /* Send WQE: control, remote address and atomic (RC), remote address
     * (UC) or the datagram segment (UD), then the scatter list or the
     * inline data, in whole 64-byte basic blocks */
    sq_hdrs     = WQE_CTRL_SEG + ((attr->qp_type == IBV_QPT_UD) ?
                                  WQE_DATAGRAM_SEG :
                                  (attr->qp_type == IBV_QPT_UC) ?
                                  WQE_RADDR_SEG :
                                  WQE_RADDR_SEG + WQE_ATOMIC_SEG) +
                  (xrc_send ? WQE_XRC_SEG : 0);
    sq_desc     = std::max(attr->cap.max_send_sge * WQE_DATA_SEG,
                           (attr->cap.max_inline_data > 0) ?
                           align_up(attr->cap.max_inline_data +
                                    WQE_INLINE_HDR, 16) : 0);
    sq_wqe_size = align_up(sq_hdrs + std::max(sq_desc, WQE_DATA_SEG), WQE_BB);
    if (sq_wqe_size > MAX_WQE_SZ_SQ) {
        return fail_ptr<struct ibv_qp>(EINVAL);
    }

    q                 = std::make_unique<qp>(ctx);
    q->sq_stride      = WQE_BB;
    q->sq_wqe_cnt     = 1u << ilog2_ceil(uint64_t(std::max(
                                attr->cap.max_send_wr, 1u)) *
                                sq_wqe_size / WQE_BB);
    if (sq == nullptr) {
        rq_stride     = 1u << ilog2_ceil(std::max(attr->cap.max_recv_sge, 1u) *
                                         WQE_DATA_SEG);
        q->rq_stride  = rq_stride;
        q->rq_wqe_cnt = 1u << ilog2_ceil(std::max(attr->cap.max_recv_wr, 1u));
    }

    rq_bytes = size_t(q->rq_wqe_cnt) * q->rq_stride;
    sq_bytes = size_t(q->sq_wqe_cnt) * q->sq_stride;
    if (!q->wq_buf.alloc(rq_bytes + sq_bytes) ||
        !q->dbrec.alloc(2 * sizeof(uint32_t), 64)) {
        return fail_ptr<struct ibv_qp>(ENOMEM);
    }

    spec.st            = (attr->qp_type == IBV_QPT_UD) ? UCT_MLX5_QP_ST_UD :
                         (attr->qp_type == IBV_QPT_UC) ? UCT_MLX5_QP_ST_UC :
                         (xrc_send || xrc_recv) ? UCT_MLX5_QP_ST_XRC :
                                                  UCT_MLX5_QP_ST_RC;
    spec.pd            = xrc_recv ? nullptr : p;
    spec.xrcd          = xrc_recv ? x : nullptr;
    spec.send_cq       = scq;
    spec.recv_cq       = rcq;
    spec.srq           = sq;
    spec.log_sq_size   = ilog2_ceil(q->sq_wqe_cnt);
    spec.log_rq_size   = (sq == nullptr) ? ilog2_ceil(q->rq_wqe_cnt) : 0;
    spec.log_rq_stride = (sq == nullptr) ? ilog2_ceil(q->rq_stride / 16) : 0;
    spec.rq_type       = (sq == nullptr) ? 0 : 1;
    spec.uar           = ctx->drv_uar;
    q->sq_sig_all      = attr->sq_sig_all;
    q->send_ops_flags  = send_ops_flags;

    /* What the QP can actually hold, written back like rdma-core does */
    q->cap.max_send_wr     = q->sq_wqe_cnt * WQE_BB / sq_wqe_size;
    q->cap.max_send_sge    = std::min((sq_wqe_size - sq_hdrs) / WQE_DATA_SEG,
                                      MAX_SGE);
    q->cap.max_inline_data = std::min(sq_wqe_size - sq_hdrs - WQE_INLINE_HDR,
                                      MAX_INLINE_DATA);
    q->cap.max_recv_wr     = q->rq_wqe_cnt;
    q->cap.max_recv_sge    = q->rq_stride / WQE_DATA_SEG;
    attr->cap              = q->cap;

    installed = qp_install(std::move(q), spec);
    installed->bf_index       = installed->qpn % UAR_BF_REGS;
    installed->ibv.context    = &ctx->ibv;
    installed->ibv.qp_context = attr->qp_context;
    installed->ibv.pd         = (p != nullptr) ? &p->ibv : nullptr;
    installed->ibv.send_cq    = attr->send_cq;
    installed->ibv.recv_cq    = attr->recv_cq;
    installed->ibv.srq        = attr->srq;
    installed->ibv.handle     = installed->qpn;
    installed->ibv.qp_num     = installed->qpn;
    installed->ibv.state      = IBV_QPS_RESET;
    installed->ibv.qp_type    = attr->qp_type;

    register_handle(s, &installed->ibv, kind::QP, installed);
    uct_ib_emu_debug("%s: created verbs %s qp 0x%x", dev->name.c_str(),
                     installed->is_ud() ? "ud" : installed->is_uc() ? "uc" :
                     installed->is_xrc() ? "xrc" : "rc",
                     installed->qpn);
    return &installed->ibv;
}

} // namespace


struct ibv_qp *emu_create_qp(struct ibv_pd *ibpd, struct ibv_qp_init_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    pd *p = find<pd>(s, ibpd);

    if (p == nullptr) {
        return fail_ptr<struct ibv_qp>(EINVAL);
    }

    if (attr->qp_type == IBV_QPT_XRC_RECV) {
        return fail_ptr<struct ibv_qp>(EINVAL); /* a target needs a domain */
    }
    return qp_create_locked(s, p, nullptr, attr, 0);
}

struct ibv_qp *emu_mlx5dv_create_qp(struct ibv_context *ibctx,
                                    struct ibv_qp_init_attr_ex *attr,
                                    struct mlx5dv_qp_init_attr *mlx5_attr)
{
    constexpr uint64_t dv_mask_known  = MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS |
                                        MLX5DV_QP_INIT_ATTR_MASK_DC |
                                        MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS |
                                        MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
    constexpr uint64_t dv_ops_known   = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                                        MLX5DV_QP_EX_WITH_MR_LIST |
                                        MLX5DV_QP_EX_WITH_MKEY_CONFIGURE |
                                        MLX5DV_QP_EX_WITH_RAW_WQE |
                                        MLX5DV_QP_EX_WITH_MEMCPY;
    constexpr uint64_t dv_ops_rc_only = MLX5DV_QP_EX_WITH_MR_INTERLEAVED |
                                        MLX5DV_QP_EX_WITH_MR_LIST |
                                        MLX5DV_QP_EX_WITH_MKEY_CONFIGURE;
    constexpr uint32_t ex_mask_known  = IBV_QP_INIT_ATTR_PD |
                                        IBV_QP_INIT_ATTR_XRCD |
                                        IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    /* RC send ops; TSO is UD's, memory windows and atomic write are not
     * modelled */
    constexpr uint64_t ibv_ops_rc     = IBV_QP_EX_WITH_RDMA_WRITE |
                                        IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
                                        IBV_QP_EX_WITH_SEND |
                                        IBV_QP_EX_WITH_SEND_WITH_IMM |
                                        IBV_QP_EX_WITH_RDMA_READ |
                                        IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                        IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
                                        IBV_QP_EX_WITH_LOCAL_INV |
                                        IBV_QP_EX_WITH_SEND_WITH_INV;
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    struct ibv_qp_init_attr init_attr = {};
    uint64_t send_ops_flags           = 0;
    struct ibv_qp *ibqp;
    pd *p      = nullptr;
    xrcd *x    = nullptr;
    const bool xrc_recv = (attr->qp_type == IBV_QPT_XRC_RECV);

    if (ctx == nullptr) {
        return fail_ptr<struct ibv_qp>(EOPNOTSUPP); /* not an mlx5 context */
    }

    /* an XRC target is made in a domain, every other QP on a PD */
    if (xrc_recv ? !(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) :
                   !(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
        return fail_ptr<struct ibv_qp>(EINVAL);
    }

    if (attr->comp_mask & ~ex_mask_known) {
        return fail_ptr<struct ibv_qp>(EOPNOTSUPP);
    }

    if (xrc_recv && ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) ||
                     (mlx5_attr != nullptr))) {
        return fail_ptr<struct ibv_qp>(EINVAL); /* a target sends nothing */
    }
    if ((attr->qp_type == IBV_QPT_XRC_SEND) && (mlx5_attr != nullptr)) {
        return fail_ptr<struct ibv_qp>(EOPNOTSUPP); /* no mlx5 ops on XRC */
    }

    if (xrc_recv) {
        x = find<xrcd>(s, attr->xrcd);
        if ((x == nullptr) || (x->ctx != ctx)) {
            return fail_ptr<struct ibv_qp>(EINVAL);
        }
    }

    /* UC has no reads and no atomics */
    constexpr uint64_t ibv_ops_uc     = ibv_ops_rc &
                                        ~uint64_t(IBV_QP_EX_WITH_RDMA_READ |
                                                  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
                                                  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
    if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
        (attr->send_ops_flags &
         ~((attr->qp_type == IBV_QPT_UC) ? ibv_ops_uc : ibv_ops_rc))) {
        return fail_ptr<struct ibv_qp>(EOPNOTSUPP);
    }

    if (!xrc_recv) {
        p = find<pd>(s, attr->pd);
        if ((p == nullptr) || (p->ctx != ctx)) {
            return fail_ptr<struct ibv_qp>(EINVAL);
        }
    }

    if (mlx5_attr != nullptr) {
        if (mlx5_attr->comp_mask & ~dv_mask_known) {
            return fail_ptr<struct ibv_qp>(EINVAL);
        }

        if ((mlx5_attr->comp_mask & (MLX5DV_QP_INIT_ATTR_MASK_DC |
                                     MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)) ||
            ((mlx5_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) &&
             (mlx5_attr->create_flags != 0))) {
            return fail_ptr<struct ibv_qp>(EOPNOTSUPP); /* not modelled */
        }

        if (mlx5_attr->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) {
            send_ops_flags = mlx5_attr->send_ops_flags;
            if (!(attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
                /* mlx5 send ops live on the extended QP */
                return fail_ptr<struct ibv_qp>(EINVAL);
            }
            if ((send_ops_flags & ~dv_ops_known) ||
                ((send_ops_flags & dv_ops_rc_only) &&
                 (attr->qp_type != IBV_QPT_RC)) ||
                (send_ops_flags & (MLX5DV_QP_EX_WITH_RAW_WQE |
                                   MLX5DV_QP_EX_WITH_MEMCPY))) {
                return fail_ptr<struct ibv_qp>(EOPNOTSUPP);
            }
        }
    }

    init_attr.qp_context = attr->qp_context;
    init_attr.send_cq    = attr->send_cq;
    init_attr.recv_cq    = attr->recv_cq;
    init_attr.srq        = attr->srq;
    init_attr.cap        = attr->cap;
    init_attr.qp_type    = attr->qp_type;
    init_attr.sq_sig_all = attr->sq_sig_all;

    ibqp = qp_create_locked(s, p, x, &init_attr, send_ops_flags);
    if (ibqp != nullptr) {
        attr->cap = init_attr.cap;
        if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
            qp_setup_send_ops(s, find<qp>(s, ibqp), attr->send_ops_flags,
                              send_ops_flags);
        }
    }
    return ibqp;
}

int emu_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find<qp>(s, ibqp);
    enum ibv_qp_state cur, next;
    uct_ib_emu_ads_t path = {};
    int required, optional, err;

    if (q == nullptr) {
        return EINVAL;
    }

    /* the kernel ignores, rather than refuses, the attributes an XRC QP's
     * side has not got */
    if (q->ibv.qp_type == IBV_QPT_XRC_SEND) {
        mask &= ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    } else if (q->ibv.qp_type == IBV_QPT_XRC_RECV) {
        mask &= ~(IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_RETRY_CNT |
                  IBV_QP_RNR_RETRY);
    }

    cur  = verbs_qp_state(q->state);
    next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
    if (!find_transition(q->ibv.qp_type, cur, next, &required, &optional) ||
        ((mask & required) != required) ||
        (mask & ~(required | optional | IBV_QP_STATE))) {
        uct_ib_emu_debug("modify_qp 0x%x: illegal %d -> %d with mask 0x%x",
                         q->qpn, cur, next, mask);
        return EINVAL;
    }

    err = check_modify(s, q, attr, mask, &path);
    if (err != 0) {
        return err;
    }

    apply_modify(q, attr, mask, next, path);
    qp_send_state_changed(s, q, next);
    return 0;
}

int emu_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask,
                 struct ibv_qp_init_attr *init_attr)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find<qp>(s, ibqp);

    (void)mask; /* like mlx5, every attribute is returned */
    if (q == nullptr) {
        return EINVAL;
    }

    memset(attr, 0, sizeof(*attr));
    attr->qp_state           = verbs_qp_state(q->state);
    attr->cur_qp_state       = attr->qp_state;
    attr->path_mtu           = static_cast<enum ibv_mtu>(q->mtu);
    attr->path_mig_state     = IBV_MIG_MIGRATED;
    attr->rq_psn             = q->next_rcv_psn;
    attr->sq_psn             = q->next_send_psn;
    attr->dest_qp_num        = q->remote_qpn;
    attr->qkey               = q->qkey;
    attr->qp_access_flags    = q->access_flags;
    attr->cap                = q->cap;
    attr->ah_attr            = q->ah_attr;
    attr->pkey_index         = q->pkey_index;
    attr->max_rd_atomic      = q->max_rd_atomic;
    attr->max_dest_rd_atomic = q->max_dest_rd_atomic;
    attr->min_rnr_timer      = q->min_rnr_nak;
    attr->port_num           = q->port;
    attr->timeout            = q->timeout;
    attr->retry_cnt          = q->retry_count;
    attr->rnr_retry          = q->rnr_retry;

    memset(init_attr, 0, sizeof(*init_attr));
    init_attr->qp_context = q->ibv.qp_context;
    init_attr->send_cq    = q->ibv.send_cq;
    init_attr->recv_cq    = q->ibv.recv_cq;
    init_attr->srq        = q->ibv.srq;
    init_attr->cap        = q->cap;
    init_attr->qp_type    = q->ibv.qp_type;
    init_attr->sq_sig_all = q->sq_sig_all;
    return 0;
}

int emu_destroy_qp(struct ibv_qp *ibqp)
{
    return with_object<qp>(ibqp, [](emu_state &s, qp *q) {
        verbs_qp_destroy_locked(s, q);
        return 0;
    });
}

} // namespace uct_ib_emu
