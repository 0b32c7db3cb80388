#include "qp_cmd.h"

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
constexpr unsigned rq_type_zero_len  = 0x3;

} // namespace

void uct_ib_mlx5_build_create_qp(const uct_ib_mlx5_create_qp_params_t *params,
                                 uct_ib_mlx5_create_qp_in_t *in)
{
    uint32_t *dw = in->data();

    uct_mlx5_prm_set<create_qp_in::opcode>(dw, UCT_MLX5_CMD_OP_CREATE_QP);
    uct_mlx5_prm_set<create_qpc<qpc::st>>(dw, UCT_MLX5_QP_ST_RC);
    uct_mlx5_prm_set<create_qpc<qpc::pm_state>>(dw, pm_state_migrated);
    uct_mlx5_prm_set<create_qpc<qpc::pd>>(dw, params->pdn);
    uct_mlx5_prm_set<create_qpc<qpc::uar_page>>(dw, params->uar_page);
    uct_mlx5_prm_set<create_qpc<qpc::cqn_snd>>(dw, params->cqn_snd);
    uct_mlx5_prm_set<create_qpc<qpc::cqn_rcv>>(dw, params->cqn_rcv);
    uct_mlx5_prm_set<create_qpc<qpc::log_sq_size>>(dw, params->log_sq_size);
    if (params->has_rq) {
        uct_mlx5_prm_set<create_qpc<qpc::rq_type>>(dw, rq_type_regular);
        uct_mlx5_prm_set<create_qpc<qpc::log_rq_size>>(dw, params->log_rq_size);
        uct_mlx5_prm_set<create_qpc<qpc::log_rq_stride>>(dw, params->log_rq_stride);
    } else {
        uct_mlx5_prm_set<create_qpc<qpc::rq_type>>(dw, rq_type_zero_len);
    }
    uct_mlx5_prm_set<create_qpc<qpc::dbr_umem_valid>>(dw, 1);
    uct_mlx5_prm_set<create_qpc<qpc::dbr_umem_id>>(dw, params->umem_id);
    uct_mlx5_prm_set<create_qpc<qpc::dbr_addr>>(dw, params->dbr_offset);
    uct_mlx5_prm_set<create_qp_in::wq_umem_valid>(dw, 1);
    uct_mlx5_prm_set<create_qp_in::wq_umem_id>(dw, params->umem_id);
    uct_mlx5_prm_set<create_qp_in::wq_umem_offset>(dw, 0);
}

void uct_ib_mlx5_build_rst2init(uint32_t qpn, uint8_t port_num,
                                uint16_t pkey_index,
                                const uct_ib_mlx5_rdma_access_t *access,
                                uct_ib_mlx5_rst2init_in_t *in)
{
    uint32_t *dw = in->data();

    uct_mlx5_prm_set<rst2init_qp_in::opcode>(dw, UCT_MLX5_CMD_OP_RST2INIT_QP);
    uct_mlx5_prm_set<rst2init_qp_in::qpn>(dw, qpn);
    uct_mlx5_prm_set<rst2init_qpc<qpc::pm_state>>(dw, pm_state_migrated);
    uct_mlx5_prm_set<at<rst2init_qp_in::qpc, qpc::primary_address_path,
                        ads::vhca_port_num>>(dw, port_num);
    uct_mlx5_prm_set<at<rst2init_qp_in::qpc, qpc::primary_address_path,
                        ads::pkey_index>>(dw, pkey_index);
    uct_mlx5_prm_set<rst2init_qpc<qpc::rre>>(dw, access->read);
    uct_mlx5_prm_set<rst2init_qpc<qpc::rwe>>(dw, access->write);
    uct_mlx5_prm_set<rst2init_qpc<qpc::rae>>(dw, access->atomic);
}

void uct_ib_mlx5_build_init2rtr(const uct_ib_mlx5_init2rtr_params_t *params,
                                uct_ib_mlx5_init2rtr_in_t *in)
{
    const uct_ib_mlx5_address_path_t *path = &params->path;
    uint32_t                         *dw   = in->data();

    uct_mlx5_prm_set<init2rtr_qp_in::opcode>(dw, UCT_MLX5_CMD_OP_INIT2RTR_QP);
    uct_mlx5_prm_set<init2rtr_qp_in::qpn>(dw, params->qpn);
    uct_mlx5_prm_set<init2rtr_qp_in::opt_param_mask>(
            dw, UCT_MLX5_QP_OPTPAR_RRE | UCT_MLX5_QP_OPTPAR_RWE |
                UCT_MLX5_QP_OPTPAR_RAE);

    uct_mlx5_prm_set<init2rtr_qpc<qpc::mtu>>(dw, params->mtu);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::log_msg_max>>(dw, params->log_msg_max);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::remote_qpn>>(dw, params->remote_qpn);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::rre>>(dw, params->access.read);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::rwe>>(dw, params->access.write);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::rae>>(dw, params->access.atomic);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::log_rra_max>>(dw, params->log_rra_max);
    uct_mlx5_prm_set<init2rtr_qpc<qpc::min_rnr_nak>>(dw, params->min_rnr_nak);
    uct_mlx5_prm_set<init2rtr_path<ads::vhca_port_num>>(dw, params->port_num);

    if (path->eth) {
        uct_mlx5_prm_set<init2rtr_path<ads::eth_prio>>(dw, path->eth_prio);
        if (path->force_loopback) {
            uct_mlx5_prm_set<init2rtr_path<ads::fl>>(dw, 1);
            return;
        }
        uct_mlx5_prm_set_bytes<init2rtr_path<ads::rmac>>(dw, path->rmac);
        uct_mlx5_prm_set_bytes<init2rtr_path<ads::rgid_rip>>(dw, path->rgid);
        uct_mlx5_prm_set<init2rtr_path<ads::hop_limit>>(dw, path->hop_limit);
        uct_mlx5_prm_set<init2rtr_path<ads::src_addr_index>>(dw,
                                                             path->src_addr_index);
        if (path->roce_v2) {
            uct_mlx5_prm_set<init2rtr_path<ads::udp_sport>>(dw, path->udp_sport);
            uct_mlx5_prm_set<init2rtr_path<ads::dscp>>(dw, path->dscp);
        }
    } else {
        uct_mlx5_prm_set<init2rtr_path<ads::rlid>>(dw, path->rlid);
        uct_mlx5_prm_set<init2rtr_path<ads::mlid>>(dw, path->mlid);
        uct_mlx5_prm_set<init2rtr_path<ads::sl>>(dw, path->sl);
        if (path->grh) {
            uct_mlx5_prm_set<init2rtr_path<ads::grh>>(dw, 1);
            uct_mlx5_prm_set<init2rtr_path<ads::src_addr_index>>(dw,
                                                                 path->src_addr_index);
            uct_mlx5_prm_set<init2rtr_path<ads::hop_limit>>(dw, path->hop_limit);
            uct_mlx5_prm_set_bytes<init2rtr_path<ads::rgid_rip>>(dw, path->rgid);
            uct_mlx5_prm_set<init2rtr_path<ads::tclass>>(dw, path->tclass);
        }
    }
}

void uct_ib_mlx5_build_rtr2rts(const uct_ib_mlx5_rtr2rts_params_t *params,
                               uct_ib_mlx5_rtr2rts_in_t *in)
{
    uint32_t *dw = in->data();

    uct_mlx5_prm_set<rtr2rts_qp_in::opcode>(dw, UCT_MLX5_CMD_OP_RTR2RTS_QP);
    uct_mlx5_prm_set<rtr2rts_qp_in::qpn>(dw, params->qpn);
    uct_mlx5_prm_set<rtr2rts_qpc<qpc::retry_count>>(dw, params->retry_count);
    uct_mlx5_prm_set<rtr2rts_qpc<qpc::rnr_retry>>(dw, params->rnr_retry);
    uct_mlx5_prm_set<rtr2rts_qpc<qpc::log_sra_max>>(dw, params->log_sra_max);
    uct_mlx5_prm_set<rtr2rts_path<ads::ack_timeout>>(dw, params->ack_timeout);
}

void uct_ib_mlx5_build_2err(uint32_t qpn, uct_ib_mlx5_2err_in_t *in)
{
    uct_mlx5_prm_set<qp_2err_in::opcode>(in->data(), UCT_MLX5_CMD_OP_2ERR_QP);
    uct_mlx5_prm_set<qp_2err_in::qpn>(in->data(), qpn);
}

void uct_ib_mlx5_build_query_qp(uint32_t qpn, uct_ib_mlx5_query_qp_in_t *in)
{
    uct_mlx5_prm_set<query_qp_in::opcode>(in->data(), UCT_MLX5_CMD_OP_QUERY_QP);
    uct_mlx5_prm_set<query_qp_in::qpn>(in->data(), qpn);
}
