#include "qp_cmd.h"

#include <ucs/debug/log_def.h>

#include <cinttypes>

using namespace uct_mlx5_prm;

namespace {

template <typename F>
using create_qpc = at<create_qp_in::qpc, F>;
template <typename F>
using rst2init_qpc = at<rst2init_qp_in::qpc, F>;
template <typename F>
using init2rtr_qpc = at<init2rtr_qp_in::qpc, F>;
template <typename F>
using init2rtr_path = at<init2rtr_qp_in::qpc, qpc::primary_address_path, F>;
template <typename F>
using rtr2rts_qpc = at<rtr2rts_qp_in::qpc, F>;
template <typename F>
using rtr2rts_path = at<rtr2rts_qp_in::qpc, qpc::primary_address_path, F>;

constexpr unsigned pm_state_migrated = 0x3;
constexpr unsigned rq_type_regular   = 0x0;
constexpr unsigned rq_type_srq       = 0x1;
constexpr unsigned rq_type_zero_len  = 0x3;

/* The status of a built command: a field that could not hold its value
 * fails the command here, before it reaches firmware. */
ucs_status_t check(const uct_mlx5_prm_writer &w, const char *dev_name,
                   const char *command, uint32_t qpn)
{
    if (w.ok()) {
        return UCS_OK;
    }

    ucs_error("%s: %s qp 0x%x not sent: %s %" PRIu64 " does not fit in %u bits",
              dev_name, command, qpn, w.bad_field(), w.bad_value(),
              w.bad_width());
    return UCS_ERR_INVALID_PARAM;
}

} // namespace

ucs_status_t uct_ib_mlx5_build_create_qp(const char *dev_name,
                                         const uct_ib_mlx5_create_qp_params_t *params,
                                         uct_ib_mlx5_create_qp_in_t *in)
{
    uct_mlx5_prm_writer w(in->data());

    w.set<create_qp_in::opcode>(UCT_MLX5_CMD_OP_CREATE_QP);
    w.set<create_qpc<qpc::st>>(UCT_MLX5_QP_ST_RC);
    w.set<create_qpc<qpc::pm_state>>(pm_state_migrated);
    w.set<create_qpc<qpc::pd>>(params->pdn);
    w.set<create_qpc<qpc::uar_page>>(params->uar_page);
    w.set<create_qpc<qpc::cqn_snd>>(params->cqn_snd);
    w.set<create_qpc<qpc::cqn_rcv>>(params->cqn_rcv);
    w.set<create_qpc<qpc::log_sq_size>>(params->log_sq_size);
    if (params->has_rq) {
        w.set<create_qpc<qpc::rq_type>>(rq_type_regular);
        w.set<create_qpc<qpc::log_rq_size>>(params->log_rq_size);
        w.set<create_qpc<qpc::log_rq_stride>>(params->log_rq_stride);
    } else if (params->srqn != 0) {
        w.set<create_qpc<qpc::rq_type>>(rq_type_srq);
        w.set<create_qpc<qpc::srqn_rmpn_xrqn>>(params->srqn);
    } else {
        w.set<create_qpc<qpc::rq_type>>(rq_type_zero_len);
    }
    w.set<create_qpc<qpc::dbr_umem_valid>>(1);
    w.set<create_qpc<qpc::dbr_umem_id>>(params->umem_id);
    w.set<create_qpc<qpc::dbr_addr>>(params->dbr_offset);
    w.set<create_qp_in::wq_umem_valid>(1);
    w.set<create_qp_in::wq_umem_id>(params->umem_id);
    w.set<create_qp_in::wq_umem_offset>(0);
    return check(w, dev_name, "CREATE_QP", 0);
}

ucs_status_t uct_ib_mlx5_build_rst2init(const char *dev_name, uint32_t qpn,
                                        uint8_t port_num, uint16_t pkey_index,
                                        const uct_ib_mlx5_rdma_access_t *access,
                                        uct_ib_mlx5_rst2init_in_t *in)
{
    uct_mlx5_prm_writer w(in->data());

    w.set<rst2init_qp_in::opcode>(UCT_MLX5_CMD_OP_RST2INIT_QP);
    w.set<rst2init_qp_in::qpn>(qpn);
    w.set<rst2init_qpc<qpc::pm_state>>(pm_state_migrated);
    w.set<at<rst2init_qp_in::qpc, qpc::primary_address_path,
                        ads::vhca_port_num>>(port_num);
    w.set<at<rst2init_qp_in::qpc, qpc::primary_address_path,
                        ads::pkey_index>>(pkey_index);
    w.set<rst2init_qpc<qpc::rre>>(access->read);
    w.set<rst2init_qpc<qpc::rwe>>(access->write);
    w.set<rst2init_qpc<qpc::rae>>(access->atomic);
    return check(w, dev_name, "RST2INIT", qpn);
}

ucs_status_t uct_ib_mlx5_build_init2rtr(const char *dev_name,
                                        const uct_ib_mlx5_init2rtr_params_t *params,
                                        uct_ib_mlx5_init2rtr_in_t *in)
{
    const uct_ib_mlx5_address_path_t *path = &params->path;
    uct_mlx5_prm_writer              w(in->data());

    uint32_t                         opt  = UCT_MLX5_QP_OPTPAR_RRE |
                                                UCT_MLX5_QP_OPTPAR_RWE |
                                                UCT_MLX5_QP_OPTPAR_RAE;

    w.set<init2rtr_qp_in::opcode>(UCT_MLX5_CMD_OP_INIT2RTR_QP);
    w.set<init2rtr_qp_in::qpn>(params->qpn);
    if (params->lag_tx_port_affinity != 0) {
        w.set<init2rtr_qpc<qpc::lag_tx_port_affinity>>(
                params->lag_tx_port_affinity);
        opt |= UCT_MLX5_QP_OPTPAR_LAG_TX_AFF;
    }
    w.set<init2rtr_qp_in::opt_param_mask>(opt);

    w.set<init2rtr_qpc<qpc::mtu>>(params->mtu);
    w.set<init2rtr_qpc<qpc::log_msg_max>>(params->log_msg_max);
    w.set<init2rtr_qpc<qpc::remote_qpn>>(params->remote_qpn);
    w.set<init2rtr_qpc<qpc::rre>>(params->access.read);
    w.set<init2rtr_qpc<qpc::rwe>>(params->access.write);
    w.set<init2rtr_qpc<qpc::rae>>(params->access.atomic);
    if (params->access.atomic) {
        w.set<init2rtr_qpc<qpc::atomic_mode>>(UCT_MLX5_ATOMIC_MODE_UP_TO_8B);
    }
    w.set<init2rtr_qpc<qpc::log_rra_max>>(params->log_rra_max);
    w.set<init2rtr_qpc<qpc::min_rnr_nak>>(params->min_rnr_nak);
    w.set<init2rtr_path<ads::vhca_port_num>>(params->port_num);

    if (path->eth) {
        w.set<init2rtr_path<ads::eth_prio>>(path->eth_prio);
        if (path->force_loopback) {
            w.set<init2rtr_path<ads::fl>>(1);
            return check(w, dev_name, "INIT2RTR", params->qpn);
        }
        w.set_bytes<init2rtr_path<ads::rmac>>(path->rmac);
        w.set_bytes<init2rtr_path<ads::rgid_rip>>(path->rgid);
        w.set<init2rtr_path<ads::hop_limit>>(path->hop_limit);
        w.set<init2rtr_path<ads::src_addr_index>>(path->src_addr_index);
        if (path->roce_v2) {
            w.set<init2rtr_path<ads::udp_sport>>(path->udp_sport);
            w.set<init2rtr_path<ads::dscp>>(path->dscp);
        }
    } else {
        w.set<init2rtr_path<ads::rlid>>(path->rlid);
        w.set<init2rtr_path<ads::mlid>>(path->mlid);
        w.set<init2rtr_path<ads::sl>>(path->sl);
        if (path->grh) {
            w.set<init2rtr_path<ads::grh>>(1);
            w.set<init2rtr_path<ads::src_addr_index>>(path->src_addr_index);
            w.set<init2rtr_path<ads::hop_limit>>(path->hop_limit);
            w.set_bytes<init2rtr_path<ads::rgid_rip>>(path->rgid);
            w.set<init2rtr_path<ads::tclass>>(path->tclass);
        }
    }
    return check(w, dev_name, "INIT2RTR", params->qpn);
}

ucs_status_t uct_ib_mlx5_build_rtr2rts(const char *dev_name,
                                       const uct_ib_mlx5_rtr2rts_params_t *params,
                                       uct_ib_mlx5_rtr2rts_in_t *in)
{
    uct_mlx5_prm_writer w(in->data());

    w.set<rtr2rts_qp_in::opcode>(UCT_MLX5_CMD_OP_RTR2RTS_QP);
    w.set<rtr2rts_qp_in::qpn>(params->qpn);
    w.set<rtr2rts_qpc<qpc::retry_count>>(params->retry_count);
    w.set<rtr2rts_qpc<qpc::rnr_retry>>(params->rnr_retry);
    w.set<rtr2rts_qpc<qpc::log_sra_max>>(params->log_sra_max);
    w.set<rtr2rts_path<ads::ack_timeout>>(params->ack_timeout);
    return check(w, dev_name, "RTR2RTS", params->qpn);
}

ucs_status_t uct_ib_mlx5_build_2rst(const char *dev_name, uint32_t qpn,
                                    uct_ib_mlx5_2rst_in_t *in)
{
    uct_mlx5_prm_writer w(in->data());

    w.set<qp_2rst_in::opcode>(UCT_MLX5_CMD_OP_2RST_QP);
    w.set<qp_2rst_in::qpn>(qpn);
    return check(w, dev_name, "2RST", qpn);
}

ucs_status_t uct_ib_mlx5_build_2err(const char *dev_name, uint32_t qpn,
                                    uct_ib_mlx5_2err_in_t *in)
{
    uct_mlx5_prm_writer w(in->data());

    w.set<qp_2err_in::opcode>(UCT_MLX5_CMD_OP_2ERR_QP);
    w.set<qp_2err_in::qpn>(qpn);
    return check(w, dev_name, "2ERR", qpn);
}

ucs_status_t uct_ib_mlx5_build_query_qp(const char *dev_name, uint32_t qpn,
                                        uct_ib_mlx5_query_qp_in_t *in)
{
    uct_mlx5_prm_writer w(in->data());

    w.set<query_qp_in::opcode>(UCT_MLX5_CMD_OP_QUERY_QP);
    w.set<query_qp_in::qpn>(qpn);
    return check(w, dev_name, "QUERY_QP", qpn);
}
