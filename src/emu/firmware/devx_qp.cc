/*
 * DevX RC QP commands as the firmware executes them: CREATE_QP, the state
 * transitions (RST2INIT, INIT2INIT, INIT2RTR, RTR2RTS, RTS2RTS, SQERR2RTS,
 * SQD_RTS, 2ERR, 2RST), QUERY_QP and DESTROY_QP. Everything is decoded from
 * the PRM bytes with the layouts of uct/ib/mlx5/dv/prm.h; every rejection
 * carries its own syndrome (syndrome.h).
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>
#include <emu/firmware/devx.h>
#include <emu/model/events.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/* Optional parameters every transition with a QPC accepts */
constexpr uint32_t QP_OPTPAR_ALLOWED = UCT_MLX5_QP_OPTPAR_RRE |
                                       UCT_MLX5_QP_OPTPAR_RAE |
                                       UCT_MLX5_QP_OPTPAR_RWE;

/* The largest qpc.atomic_mode: the device executes atomics up to 8 bytes */
constexpr unsigned ATOMIC_MODE_MAX = UCT_MLX5_ATOMIC_MODE_UP_TO_8B;

/* qpc.rq_type */
constexpr uint8_t RQ_TYPE_REGULAR   = 0x0;
constexpr uint8_t RQ_TYPE_SRQ       = 0x1;
constexpr uint8_t RQ_TYPE_ZERO_SIZE = 0x3;

constexpr unsigned SQ_WQE_BB        = 64;
constexpr unsigned RQ_STRIDE_UNIT   = 16;
constexpr unsigned DBREC_SIZE       = 2 * sizeof(uint32_t);

/* The QP commands share their header: qpn at the same place in each */
static_assert((prm::rst2init_qp_in::qpn::offset  == prm::destroy_qp_in::qpn::offset) &&
              (prm::init2init_qp_in::qpn::offset == prm::destroy_qp_in::qpn::offset) &&
              (prm::init2rtr_qp_in::qpn::offset  == prm::destroy_qp_in::qpn::offset) &&
              (prm::rtr2rts_qp_in::qpn::offset   == prm::destroy_qp_in::qpn::offset) &&
              (prm::rts2rts_qp_in::qpn::offset   == prm::destroy_qp_in::qpn::offset) &&
              (prm::qp_2err_in::qpn::offset      == prm::destroy_qp_in::qpn::offset) &&
              (prm::qp_2rst_in::qpn::offset      == prm::destroy_qp_in::qpn::offset) &&
              (prm::query_qp_in::qpn::offset     == prm::destroy_qp_in::qpn::offset),
              "qpn is at the same offset in every QP command");

/* ... and their QPC, opt_param_mask */
static_assert((prm::rst2init_qp_in::qpc::offset  == prm::rtr2rts_qp_in::qpc::offset) &&
              (prm::init2init_qp_in::qpc::offset == prm::rtr2rts_qp_in::qpc::offset) &&
              (prm::init2rtr_qp_in::qpc::offset  == prm::rtr2rts_qp_in::qpc::offset) &&
              (prm::rts2rts_qp_in::qpc::offset   == prm::rtr2rts_qp_in::qpc::offset) &&
              (prm::rst2init_qp_in::opt_param_mask::offset ==
               prm::rtr2rts_qp_in::opt_param_mask::offset) &&
              (prm::init2init_qp_in::opt_param_mask::offset ==
               prm::rtr2rts_qp_in::opt_param_mask::offset) &&
              (prm::init2rtr_qp_in::opt_param_mask::offset ==
               prm::rtr2rts_qp_in::opt_param_mask::offset) &&
              (prm::rts2rts_qp_in::opt_param_mask::offset ==
               prm::rtr2rts_qp_in::opt_param_mask::offset),
              "every transition carries its QPC at the same place");


template <typename F>
uint32_t get(const uint32_t *buf)
{
    return static_cast<uint32_t>(uct_mlx5_prm_get<F>(buf));
}

template <typename F>
void set(uint32_t *buf, uint64_t value)
{
    put<F>(buf, value);
}

/* A field of the QPC's primary address path, relative to the QPC */
template <typename F>
using path_f = prm::at<prm::qpc::primary_address_path, F>;

void ads_decode(const uint32_t *qpc, uct_ib_emu_ads_t *a)
{
    a->fl             = get<path_f<prm::ads::fl>>(qpc);
    a->free_ar        = get<path_f<prm::ads::free_ar>>(qpc);
    a->pkey_index     = get<path_f<prm::ads::pkey_index>>(qpc);
    a->grh            = get<path_f<prm::ads::grh>>(qpc);
    a->mlid           = get<path_f<prm::ads::mlid>>(qpc);
    a->rlid           = get<path_f<prm::ads::rlid>>(qpc);
    a->ack_timeout    = get<path_f<prm::ads::ack_timeout>>(qpc);
    a->src_addr_index = get<path_f<prm::ads::src_addr_index>>(qpc);
    a->stat_rate      = get<path_f<prm::ads::stat_rate>>(qpc);
    a->hop_limit      = get<path_f<prm::ads::hop_limit>>(qpc);
    a->tclass         = get<path_f<prm::ads::tclass>>(qpc);
    a->flow_label     = get<path_f<prm::ads::flow_label>>(qpc);
    a->f_dscp         = get<path_f<prm::ads::f_dscp>>(qpc);
    a->f_ecn          = get<path_f<prm::ads::f_ecn>>(qpc);
    a->f_eth_prio     = get<path_f<prm::ads::f_eth_prio>>(qpc);
    a->ecn            = get<path_f<prm::ads::ecn>>(qpc);
    a->dscp           = get<path_f<prm::ads::dscp>>(qpc);
    a->udp_sport      = get<path_f<prm::ads::udp_sport>>(qpc);
    a->dei_cfi        = get<path_f<prm::ads::dei_cfi>>(qpc);
    a->eth_prio       = get<path_f<prm::ads::eth_prio>>(qpc);
    a->sl             = get<path_f<prm::ads::sl>>(qpc);
    a->vhca_port_num  = get<path_f<prm::ads::vhca_port_num>>(qpc);
    uct_mlx5_prm_get_bytes<path_f<prm::ads::rgid_rip>>(qpc, a->rgid.data());
    uct_mlx5_prm_get_bytes<path_f<prm::ads::rmac>>(qpc, a->rmac.data());
}

void ads_encode(const uct_ib_emu_ads_t &a, uint32_t *qpc)
{
    set<path_f<prm::ads::fl>>(qpc, a.fl);
    set<path_f<prm::ads::free_ar>>(qpc, a.free_ar);
    set<path_f<prm::ads::pkey_index>>(qpc, a.pkey_index);
    set<path_f<prm::ads::grh>>(qpc, a.grh);
    set<path_f<prm::ads::mlid>>(qpc, a.mlid);
    set<path_f<prm::ads::rlid>>(qpc, a.rlid);
    set<path_f<prm::ads::ack_timeout>>(qpc, a.ack_timeout);
    set<path_f<prm::ads::src_addr_index>>(qpc, a.src_addr_index);
    set<path_f<prm::ads::stat_rate>>(qpc, a.stat_rate);
    set<path_f<prm::ads::hop_limit>>(qpc, a.hop_limit);
    set<path_f<prm::ads::tclass>>(qpc, a.tclass);
    set<path_f<prm::ads::flow_label>>(qpc, a.flow_label);
    set<path_f<prm::ads::f_dscp>>(qpc, a.f_dscp);
    set<path_f<prm::ads::f_ecn>>(qpc, a.f_ecn);
    set<path_f<prm::ads::f_eth_prio>>(qpc, a.f_eth_prio);
    set<path_f<prm::ads::ecn>>(qpc, a.ecn);
    set<path_f<prm::ads::dscp>>(qpc, a.dscp);
    set<path_f<prm::ads::udp_sport>>(qpc, a.udp_sport);
    set<path_f<prm::ads::dei_cfi>>(qpc, a.dei_cfi);
    set<path_f<prm::ads::eth_prio>>(qpc, a.eth_prio);
    set<path_f<prm::ads::sl>>(qpc, a.sl);
    set<path_f<prm::ads::vhca_port_num>>(qpc, a.vhca_port_num);
    uct_mlx5_prm_set_bytes<path_f<prm::ads::rgid_rip>>(qpc, a.rgid.data());
    uct_mlx5_prm_set_bytes<path_f<prm::ads::rmac>>(qpc, a.rmac.data());
}

bool mac_is_zero(const uct_ib_emu_mac_t &mac)
{
    return std::all_of(mac.begin(), mac.end(), [](uint8_t b) { return b == 0; });
}

void apply_optional(qp *q, const uint32_t *qpc, uint32_t opt)
{
    if (opt & UCT_MLX5_QP_OPTPAR_RRE) {
        q->rre = get<prm::qpc::rre>(qpc);
    }
    if (opt & UCT_MLX5_QP_OPTPAR_RWE) {
        q->rwe = get<prm::qpc::rwe>(qpc);
    }
    if (opt & UCT_MLX5_QP_OPTPAR_RAE) {
        q->rae = get<prm::qpc::rae>(qpc);
    }
}


fw_result rst2init(qp *q, const uint32_t *qpc, uint32_t opt)
{
    unsigned port_num = get<path_f<prm::ads::vhca_port_num>>(qpc);
    const port *p     = q->ctx->dev->get_port(port_num);
    unsigned pkey_index;

    if (q->state != UCT_MLX5_QP_STATE_RST) {
        return fw_fail(UCT_IB_EMU_SYND_RST2INIT_BAD_STATE);
    }

    if (opt & ~QP_OPTPAR_ALLOWED) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_QP_OPT_PARAM);
    }

    if (p == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_RST2INIT_BAD_PORT);
    }

    if (get<prm::qpc::atomic_mode>(qpc) > ATOMIC_MODE_MAX) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_QP_ATOMIC_MODE);
    }

    pkey_index = get<path_f<prm::ads::pkey_index>>(qpc);
    if (pkey_index >= p->pkey_tbl_len) {
        return fw_fail(UCT_IB_EMU_SYND_RST2INIT_BAD_PKEY_INDEX);
    }

    q->port               = static_cast<uint8_t>(port_num);
    q->path.vhca_port_num = static_cast<uint8_t>(port_num);
    q->path.pkey_index    = static_cast<uint16_t>(pkey_index);
    q->rre                = get<prm::qpc::rre>(qpc);
    q->rwe                = get<prm::qpc::rwe>(qpc);
    q->rae                = get<prm::qpc::rae>(qpc);
    q->atomic_mode        = get<prm::qpc::atomic_mode>(qpc);
    q->pm_state           = get<prm::qpc::pm_state>(qpc);
    q->counter_set_id     = get<prm::qpc::counter_set_id>(qpc);
    q->state              = UCT_MLX5_QP_STATE_INIT;
    return FW_OK;
}

/* Whether the device lets an RC QP on port p use force loopback */
bool fl_allowed(const device *dev, const port *p)
{
    if (p->is_eth() && dev->roce_enabled) {
        return dev->fl_rc_qp_when_roce_enabled;
    }

    return dev->fl_rc_qp_when_roce_disabled;
}

fw_result init2rtr_check_path(const device *dev, const port *p,
                              const uct_ib_emu_ads_t &path)
{
    if (path.fl) {
        /* Looped back inside the port: no GID, MAC or LID is used */
        return fl_allowed(dev, p) ? FW_OK :
               fw_fail(UCT_IB_EMU_SYND_INIT2RTR_FL_UNSUPPORTED);
    }

    if (p->is_eth()) {
        if (!dev->roce_enabled) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_ROCE_DISABLED);
        }
        if (p->gid(path.src_addr_index) == nullptr) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_BAD_SGID_INDEX);
        }
        if (mac_is_zero(path.rmac)) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_NO_RMAC);
        }
        if (path.rmac[0] & 1) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_MCAST_RMAC);
        }
        if (gid_is_zero(path.rgid.data())) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_NO_RGID);
        }
    } else {
        if ((path.rlid == 0) || (path.rlid >= 0xc000)) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_BAD_RLID);
        }
        if (path.grh) {
            if (p->gid(path.src_addr_index) == nullptr) {
                return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_BAD_SGID_INDEX);
            }
            if (gid_is_zero(path.rgid.data())) {
                return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_NO_RGID);
            }
        }
    }

    return FW_OK;
}

fw_result init2rtr(qp *q, const uint32_t *qpc, uint32_t opt)
{
    const device *dev = q->ctx->dev;
    uct_ib_emu_ads_t path;
    unsigned mtu, log_msg_max, log_rra_max;
    const port *p;
    fw_result result;

    if (q->state != UCT_MLX5_QP_STATE_INIT) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_BAD_STATE);
    }

    if (opt & ~(QP_OPTPAR_ALLOWED | UCT_MLX5_QP_OPTPAR_LAG_TX_AFF)) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_QP_OPT_PARAM);
    }

    ads_decode(qpc, &path);
    if (q->is_dci() && (path.vhca_port_num == 0)) {
        path.vhca_port_num = q->port; /* a DCI's path: RST2INIT's port */
    }
    if (dev->get_port(path.vhca_port_num) == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_BAD_PORT);
    }
    if (path.vhca_port_num != q->port) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_PORT_MISMATCH);
    }

    if (get<prm::qpc::atomic_mode>(qpc) > ATOMIC_MODE_MAX) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_QP_ATOMIC_MODE);
    }

    if (opt & UCT_MLX5_QP_OPTPAR_LAG_TX_AFF) {
        unsigned affinity = get<prm::qpc::lag_tx_port_affinity>(qpc);

        if (dev->num_lag_ports < 2) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_NO_LAG);
        }
        if ((affinity == 0) || (affinity > dev->num_lag_ports)) {
            return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_LAG_PORT);
        }
        q->lag_tx_port_affinity = static_cast<uint8_t>(affinity);
    }

    p   = dev->get_port(q->port);
    mtu = get<prm::qpc::mtu>(qpc);
    if ((mtu < UCT_MLX5_MTU_256) || (mtu > UCT_MLX5_MTU_4096)) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_BAD_MTU);
    }
    /* as the kernel's soft RoCE and ConnectX take it: up to what the port
     * can carry (UCX's own tests connect at 4096 over 1500-byte Ethernet) */
    if (mtu > static_cast<unsigned>(p->max_mtu)) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_MTU_ABOVE_PORT);
    }

    log_msg_max = get<prm::qpc::log_msg_max>(qpc);
    if (log_msg_max > LOG_MAX_MSG) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_LOG_MSG_MAX);
    }

    log_rra_max = get<prm::qpc::log_rra_max>(qpc);
    if (log_rra_max > LOG_MAX_RA_QP) {
        return fw_fail(UCT_IB_EMU_SYND_INIT2RTR_LOG_RRA_MAX);
    }

    /* a DCI has no remote: each WQE's address vector names one */
    result = q->is_dci() ? FW_OK : init2rtr_check_path(dev, p, path);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    /* The address path is taken as given, except what other transitions own */
    path.vhca_port_num = q->port;
    path.pkey_index    = q->path.pkey_index;
    path.ack_timeout   = q->path.ack_timeout;
    q->path            = path;
    q->mtu             = static_cast<uint8_t>(mtu);
    q->log_msg_max     = static_cast<uint8_t>(log_msg_max);
    q->log_rra_max     = static_cast<uint8_t>(log_rra_max);
    q->remote_qpn      = q->is_dci() ? 0 : get<prm::qpc::remote_qpn>(qpc);
    q->min_rnr_nak     = get<prm::qpc::min_rnr_nak>(qpc);
    q->next_rcv_psn    = get<prm::qpc::next_rcv_psn>(qpc);
    q->atomic_mode     = get<prm::qpc::atomic_mode>(qpc);
    apply_optional(q, qpc, opt);
    q->state           = UCT_MLX5_QP_STATE_RTR;
    if (!q->is_dci()) {
        record_connect_locked(state(), q); /* a DCI's: each connect's */
    }
    return FW_OK;
}

fw_result rtr2rts(qp *q, const uint32_t *qpc, uint32_t opt)
{
    unsigned log_sra_max;

    if (q->state != UCT_MLX5_QP_STATE_RTR) {
        return fw_fail(UCT_IB_EMU_SYND_RTR2RTS_BAD_STATE);
    }

    if (opt & ~QP_OPTPAR_ALLOWED) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_QP_OPT_PARAM);
    }

    log_sra_max = get<prm::qpc::log_sra_max>(qpc);
    if (log_sra_max > LOG_MAX_RA_QP) {
        return fw_fail(UCT_IB_EMU_SYND_RTR2RTS_LOG_SRA_MAX);
    }

    q->log_sra_max      = static_cast<uint8_t>(log_sra_max);
    q->retry_count      = get<prm::qpc::retry_count>(qpc);
    q->rnr_retry        = get<prm::qpc::rnr_retry>(qpc);
    q->path.ack_timeout = get<path_f<prm::ads::ack_timeout>>(qpc);
    q->next_send_psn    = get<prm::qpc::next_send_psn>(qpc);
    apply_optional(q, qpc, opt);
    q->state            = UCT_MLX5_QP_STATE_RTS;
    return FW_OK;
}

/* A transition that only takes optional parameters */
fw_result modify_optional(qp *q, const uint32_t *qpc, uint32_t opt,
                          uint8_t from, uint8_t to,
                          uct_ib_emu_syndrome_t bad_state)
{
    if (q->state != from) {
        return fw_fail(bad_state);
    }

    if (opt & ~QP_OPTPAR_ALLOWED) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_QP_OPT_PARAM);
    }

    apply_optional(q, qpc, opt);
    q->state = to;
    return FW_OK;
}

} // namespace


bool is_qp_modify_opcode(uint16_t opcode)
{
    switch (opcode) {
    case UCT_MLX5_CMD_OP_RST2INIT_QP:
    case UCT_MLX5_CMD_OP_INIT2INIT_QP:
    case UCT_MLX5_CMD_OP_INIT2RTR_QP:
    case UCT_MLX5_CMD_OP_RTR2RTS_QP:
    case UCT_MLX5_CMD_OP_RTS2RTS_QP:
    case UCT_MLX5_CMD_OP_SQERR2RTS_QP:
    case UCT_MLX5_CMD_OP_SQD_RTS_QP:
    case UCT_MLX5_CMD_OP_2ERR_QP:
    case UCT_MLX5_CMD_OP_2RST_QP:
        return true;
    default:
        return false;
    }
}

uint32_t qp_cmd_qpn(const mailbox &in)
{
    return get<prm::destroy_qp_in::qpn>(in.dw());
}

fw_result qp_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                        qp **qp_p)
{
    namespace cqi = prm::create_qp_in;
    device *dev   = ctx->dev;
    const uint32_t *qpc;
    uint8_t rq_type, no_sq, log_sq_size, log_rq_size, log_rq_stride;
    uint64_t wq_umem_offset, dbr_addr, wq_bytes;
    unsigned cs_req, cs_res;
    cq *send_cq = nullptr, *recv_cq = nullptr;
    umem *wq_umem, *dbr_umem;
    srq *sq = nullptr;
    std::unique_ptr<qp> q;
    qp_spec spec;
    qp *installed;
    uar_page *uar;
    pd *p;
    fw_result result;

    result = check_mailboxes<cqi::layout,
                             prm::create_qp_out::layout>(in, out);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    qpc = sub<cqi::qpc>(in.dw());
    if ((get<prm::qpc::st>(qpc) != UCT_MLX5_QP_ST_RC) &&
        (get<prm::qpc::st>(qpc) != UCT_MLX5_QP_ST_DCI)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_ST);
    }

    p = lookup(dev->pds, get<prm::qpc::pd>(qpc), ctx);
    if (p == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_PD);
    }

    /* Queue geometry */
    no_sq         = get<prm::qpc::no_sq>(qpc);
    log_sq_size   = get<prm::qpc::log_sq_size>(qpc);
    log_rq_size   = get<prm::qpc::log_rq_size>(qpc);
    log_rq_stride = get<prm::qpc::log_rq_stride>(qpc);
    rq_type       = get<prm::qpc::rq_type>(qpc);
    if ((rq_type != RQ_TYPE_REGULAR) && (rq_type != RQ_TYPE_SRQ) &&
        (rq_type != RQ_TYPE_ZERO_SIZE)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_RQ_TYPE);
    }
    if ((get<prm::qpc::st>(qpc) == UCT_MLX5_QP_ST_DCI) &&
        (rq_type == RQ_TYPE_REGULAR)) {
        return fw_fail(UCT_IB_EMU_SYND_DCI_RQ);
    }
    if ((!no_sq && (log_sq_size > dev->log_max_qp_sz)) ||
        ((rq_type == RQ_TYPE_REGULAR) && (log_rq_size > dev->log_max_qp_sz))) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_LOG_QUEUE_SIZE);
    }
    if ((rq_type == RQ_TYPE_REGULAR) &&
        ((RQ_STRIDE_UNIT << log_rq_stride) > MAX_WQE_SZ_RQ)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_LOG_RQ_STRIDE);
    }

    /* Completion and receive queues */
    if (!no_sq) {
        send_cq = lookup(dev->cqs, get<prm::qpc::cqn_snd>(qpc), ctx);
        if (send_cq == nullptr) {
            return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_CQN_SND);
        }
    }
    if (rq_type != RQ_TYPE_ZERO_SIZE) {
        recv_cq = lookup(dev->cqs, get<prm::qpc::cqn_rcv>(qpc), ctx);
        if (recv_cq == nullptr) {
            return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_CQN_RCV);
        }
    }
    if (rq_type == RQ_TYPE_SRQ) {
        sq = lookup(dev->srqs, get<prm::qpc::srqn_rmpn_xrqn>(qpc), ctx);
        if (sq == nullptr) {
            return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_SRQN);
        }
    }

    cs_req = get<prm::qpc::cs_req>(qpc);
    if ((cs_req != UCT_MLX5_QPC_CS_REQ_DISABLE) &&
        (cs_req != UCT_MLX5_QPC_CS_REQ_UP_TO_32B) &&
        (cs_req != UCT_MLX5_QPC_CS_REQ_UP_TO_64B)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_CS_REQ);
    }
    cs_res = get<prm::qpc::cs_res>(qpc);
    if ((cs_res != UCT_MLX5_QPC_CS_RES_DISABLE) &&
        (cs_res != UCT_MLX5_QPC_CS_RES_UP_TO_32B) &&
        (cs_res != UCT_MLX5_QPC_CS_RES_UP_TO_64B)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_CS_RES);
    }

    uar = lookup(dev->uar_pages, get<prm::qpc::uar_page>(qpc), ctx);
    if (uar == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_UAR_PAGE);
    }

    /* Work queue buffer: receive queue first, then the send queue (the
     * kernel has set wq_umem_valid and dbr_umem_valid) */
    wq_umem = lookup(dev->umems, get<cqi::wq_umem_id>(in.dw()), ctx);
    if (wq_umem == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_WQ_UMEM);
    }
    wq_umem_offset = uct_mlx5_prm_get<cqi::wq_umem_offset>(in.dw());
    wq_bytes       = (no_sq ? 0 : (uint64_t(SQ_WQE_BB) << log_sq_size)) +
                     ((rq_type == RQ_TYPE_REGULAR) ?
                      (uint64_t(RQ_STRIDE_UNIT << log_rq_stride) <<
                       log_rq_size) : 0);
    if ((wq_umem_offset > wq_umem->size) ||
        (wq_bytes > wq_umem->size - wq_umem_offset)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_WQ_UMEM_SIZE);
    }

    /* Doorbell record: 8 bytes inside a umem */
    dbr_umem = lookup(dev->umems, get<prm::qpc::dbr_umem_id>(qpc), ctx);
    if (dbr_umem == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_BAD_DBR_UMEM);
    }
    dbr_addr = uct_mlx5_prm_get<prm::qpc::dbr_addr>(qpc);
    if ((dbr_addr % DBREC_SIZE) || (dbr_addr > dbr_umem->size) ||
        (DBREC_SIZE > dbr_umem->size - dbr_addr)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_DBR_ADDR);
    }

    if (dev->qps.size() >= (1u << LOG_MAX_QP)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_QP_LIMIT);
    }

    spec.devx           = true;
    spec.st             = static_cast<uint8_t>(get<prm::qpc::st>(qpc));
    spec.pd             = p;
    spec.send_cq        = send_cq;
    spec.recv_cq        = recv_cq;
    spec.srq            = sq;
    spec.no_sq          = no_sq;
    spec.log_sq_size    = log_sq_size;
    spec.log_rq_size    = (rq_type == RQ_TYPE_REGULAR) ? log_rq_size : 0;
    spec.log_rq_stride  = (rq_type == RQ_TYPE_REGULAR) ? log_rq_stride : 0;
    spec.rq_type        = rq_type;
    spec.wq_umem        = wq_umem;
    spec.wq_umem_offset = wq_umem_offset;
    spec.dbr_umem       = dbr_umem;
    spec.dbr_offset     = dbr_addr;
    spec.uar            = uar;

    q             = std::make_unique<qp>(ctx);
    q->user_index = get<prm::qpc::user_index>(qpc);
    q->cs_req     = static_cast<uint8_t>(cs_req);
    q->cs_res     = static_cast<uint8_t>(cs_res);
    installed     = qp_install(std::move(q), spec);

    set<prm::create_qp_out::qpn>(out.dw(), installed->qpn);
    uct_ib_emu_debug("%s: created DevX qp 0x%x", dev->name.c_str(),
                     installed->qpn);
    *qp_p = installed;
    return FW_OK;
}

fw_result qp_modify_cmd(qp *q, const mailbox &in)
{
    uint16_t opcode = in.opcode();
    const uint32_t *qpc;
    uint32_t opt;

    if (in.op_mod() != 0) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OP_MOD);
    }

    switch (opcode) {
    case UCT_MLX5_CMD_OP_2ERR_QP:
        if (!in.fits<prm::qp_2err_in::layout>()) {
            return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
        }
        if (q->state != UCT_MLX5_QP_STATE_ERR) {
            q->state = UCT_MLX5_QP_STATE_ERR;
            devx_events_qp_error(q);
        }
        return FW_OK;
    case UCT_MLX5_CMD_OP_2RST_QP:
        if (!in.fits<prm::qp_2rst_in::layout>()) {
            return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
        }
        q->reset_connection();
        q->state = UCT_MLX5_QP_STATE_RST;
        if (!q->no_sq) {
            q->sq_x.dbrec_stale    = true;
            q->sq_x.dbrec_at_reset = static_cast<uint16_t>(
                    dma_load_be32(&qp_dbrec(q)[MLX5_SND_DBR]));
        }
        return FW_OK;
    default:
        break;
    }

    /* Every other transition carries opt_param_mask and a QPC (SQERR2RTS
     * and SQD_RTS have the shape of RTR2RTS); RTS2RTS and INIT2INIT may
     * append a QPC extension */
    if (!in.fits<prm::rtr2rts_qp_in::layout>() ||
        (((opcode == UCT_MLX5_CMD_OP_RTS2RTS_QP) ||
          (opcode == UCT_MLX5_CMD_OP_INIT2INIT_QP)) &&
         get<prm::rts2rts_qp_in::qpc_ext>(in.dw()) &&
         !in.fits<prm::rts2rts_qp_in::layout>())) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
    }

    qpc = sub<prm::rtr2rts_qp_in::qpc>(in.dw());
    opt = get<prm::rtr2rts_qp_in::opt_param_mask>(in.dw());
    switch (opcode) {
    case UCT_MLX5_CMD_OP_RST2INIT_QP:
        return rst2init(q, qpc, opt);
    case UCT_MLX5_CMD_OP_INIT2INIT_QP:
        return modify_optional(q, qpc, opt, UCT_MLX5_QP_STATE_INIT,
                               UCT_MLX5_QP_STATE_INIT,
                               UCT_IB_EMU_SYND_INIT2INIT_BAD_STATE);
    case UCT_MLX5_CMD_OP_INIT2RTR_QP:
        return init2rtr(q, qpc, opt);
    case UCT_MLX5_CMD_OP_RTR2RTS_QP:
        return rtr2rts(q, qpc, opt);
    case UCT_MLX5_CMD_OP_RTS2RTS_QP:
        return modify_optional(q, qpc, opt, UCT_MLX5_QP_STATE_RTS,
                               UCT_MLX5_QP_STATE_RTS,
                               UCT_IB_EMU_SYND_RTS2RTS_BAD_STATE);
    case UCT_MLX5_CMD_OP_SQERR2RTS_QP:
        return modify_optional(q, qpc, opt, UCT_MLX5_QP_STATE_SQER,
                               UCT_MLX5_QP_STATE_RTS,
                               UCT_IB_EMU_SYND_SQERR2RTS_BAD_STATE);
    case UCT_MLX5_CMD_OP_SQD_RTS_QP:
        return modify_optional(q, qpc, opt, UCT_MLX5_QP_STATE_SQD,
                               UCT_MLX5_QP_STATE_RTS,
                               UCT_IB_EMU_SYND_SQD2RTS_BAD_STATE);
    default:
        return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OPCODE);
    }
}

fw_result qp_query_cmd(const qp *q, const mailbox &in, mailbox &out)
{
    uint32_t *qpc;
    fw_result result = query_output<prm::query_qp_in::layout,
                                    prm::query_qp_out::layout,
                                    prm::query_qp_out::qpc>(in, out, &qpc);

    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    set<prm::qpc::state>(qpc, q->state);
    set<prm::qpc::st>(qpc, q->st);
    set<prm::qpc::pm_state>(qpc, q->pm_state);
    set<prm::qpc::pd>(qpc, q->pd->pdn);
    set<prm::qpc::mtu>(qpc, q->mtu);
    set<prm::qpc::log_msg_max>(qpc, q->log_msg_max);
    set<prm::qpc::log_rq_size>(qpc, q->log_rq_size);
    set<prm::qpc::log_rq_stride>(qpc, q->log_rq_stride);
    set<prm::qpc::no_sq>(qpc, q->no_sq);
    set<prm::qpc::log_sq_size>(qpc, q->log_sq_size);
    set<prm::qpc::counter_set_id>(qpc, q->counter_set_id);
    set<prm::qpc::uar_page>(qpc, (q->uar != nullptr) ? q->uar->page_id : 0);
    set<prm::qpc::user_index>(qpc, q->user_index);
    set<prm::qpc::cs_req>(qpc, q->cs_req);
    set<prm::qpc::cs_res>(qpc, q->cs_res);
    set<prm::qpc::remote_qpn>(qpc, q->remote_qpn);
    ads_encode(q->path, qpc);
    set<prm::qpc::log_sra_max>(qpc, q->log_sra_max);
    set<prm::qpc::retry_count>(qpc, q->retry_count);
    set<prm::qpc::rnr_retry>(qpc, q->rnr_retry);
    set<prm::qpc::next_send_psn>(qpc, q->next_send_psn);
    set<prm::qpc::cqn_snd>(qpc, (q->send_cq != nullptr) ? q->send_cq->cqn : 0);
    set<prm::qpc::log_rra_max>(qpc, q->log_rra_max);
    set<prm::qpc::atomic_mode>(qpc, q->atomic_mode);
    set<prm::qpc::rre>(qpc, q->rre);
    set<prm::qpc::rwe>(qpc, q->rwe);
    set<prm::qpc::rae>(qpc, q->rae);
    set<prm::qpc::min_rnr_nak>(qpc, q->min_rnr_nak);
    set<prm::qpc::next_rcv_psn>(qpc, q->next_rcv_psn);
    set<prm::qpc::cqn_rcv>(qpc, (q->recv_cq != nullptr) ? q->recv_cq->cqn : 0);
    set<prm::qpc::dbr_addr>(qpc, q->dbr_offset);
    set<prm::qpc::rq_type>(qpc, q->rq_type);
    set<prm::qpc::srqn_rmpn_xrqn>(qpc, (q->srq != nullptr) ? q->srq->srqn : 0);
    if (q->dbr_umem != nullptr) { /* a verbs QP's record is the kernel's */
        set<prm::qpc::dbr_umem_valid>(qpc, 1);
        set<prm::qpc::dbr_umem_id>(qpc, q->dbr_umem->dv.umem_id);
    }
    return FW_OK;
}

} // namespace uct_ib_emu
