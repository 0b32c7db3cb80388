#include "hca_caps.h"
#include "devx.h"
#include "prm.h"

#include <memory>

namespace {

using namespace uct_mlx5_prm;

using cap_out = uct_mlx5_prm_buf<query_hca_cap_out::layout>;

template <typename F>
using general = at<query_hca_cap_out::capability, hca_cap_union::cmd_hca_cap, F>;

template <typename F>
using roce = at<query_hca_cap_out::capability, hca_cap_union::roce_caps, F>;

ucs_status_t query(struct ibv_context *ctx, const char *dev_name,
                   ucs_log_level_t fail_level, uint16_t cap_type,
                   const char *what, cap_out *out)
{
    uct_mlx5_prm_buf<query_hca_cap_in::layout> in;
    uct_ib_mlx5_devx_cmd_desc_t                desc = {dev_name, what,
                                                       UCT_IB_MLX5_DEVX_NO_QPN,
                                                       fail_level};

    uct_mlx5_prm_writer                        w(in.data());

    w.set<query_hca_cap_in::opcode>(UCT_MLX5_CMD_OP_QUERY_HCA_CAP);
    w.set<query_hca_cap_in::op_mod>(uct_mlx5_hca_cap_op_mod(cap_type));
    ucs_assert_always(w.ok()); /* constants */
    return uct_ib_mlx5_devx_general_cmd(ctx, in.data(), in.size(), out->data(),
                                        out->size(), &desc);
}

} // namespace

ucs_status_t uct_ib_mlx5_query_hca_caps(struct ibv_context *ctx,
                                        const char *dev_name,
                                        ucs_log_level_t fail_level,
                                        uct_ib_mlx5_hca_caps_t *caps_p)
{
    auto                   out  = std::make_unique<cap_out>(); /* 4 KiB */
    uct_ib_mlx5_hca_caps_t caps = {};
    ucs_status_t           status;

    status = query(ctx, dev_name, fail_level, UCT_MLX5_HCA_CAP_GENERAL,
                   "QUERY_HCA_CAP general", out.get());
    if (status != UCS_OK) {
        return status;
    }

    const uint32_t *dw = out->data();
    caps.port_type                   = uct_mlx5_prm_get<general<cmd_hca_cap::port_type>>(dw);
    caps.roce                        = uct_mlx5_prm_get<general<cmd_hca_cap::roce>>(dw);
    caps.log_max_msg                 = uct_mlx5_prm_get<general<cmd_hca_cap::log_max_msg>>(dw);
    caps.log_max_qp_sz               = uct_mlx5_prm_get<general<cmd_hca_cap::log_max_qp_sz>>(dw);
    caps.lag_tx_port_affinity        = uct_mlx5_prm_get<general<cmd_hca_cap::lag_tx_port_affinity>>(dw);
    caps.num_lag_ports               = uct_mlx5_prm_get<general<cmd_hca_cap::num_lag_ports>>(dw);
    caps.log_max_ra_req_qp           = uct_mlx5_prm_get<general<cmd_hca_cap::log_max_ra_req_qp>>(dw);
    caps.log_max_ra_res_qp           = uct_mlx5_prm_get<general<cmd_hca_cap::log_max_ra_res_qp>>(dw);
    caps.umr_indirect_mkey           = !uct_mlx5_prm_get<general<cmd_hca_cap::umr_indirect_mkey_disabled>>(dw);
    caps.fl_rc_qp_when_roce_disabled = uct_mlx5_prm_get<general<cmd_hca_cap::fl_rc_qp_when_roce_disabled>>(dw);
    caps.bf                          = uct_mlx5_prm_get<general<cmd_hca_cap::bf>>(dw);
    caps.log_bf_reg_size             = uct_mlx5_prm_get<general<cmd_hca_cap::log_bf_reg_size>>(dw);

    if (caps.port_type == 1) {
        *out   = cap_out();
        status = query(ctx, dev_name, fail_level, UCT_MLX5_HCA_CAP_ROCE,
                       "QUERY_HCA_CAP roce", out.get());
        if (status != UCS_OK) {
            return status;
        }
        caps.fl_rc_qp_when_roce_enabled   = uct_mlx5_prm_get<roce<roce_cap::fl_rc_qp_when_roce_enabled>>(dw);
        caps.fl_rc_qp_when_roce_disabled |= uct_mlx5_prm_get<roce<roce_cap::fl_rc_qp_when_roce_disabled>>(dw);
    }

    *caps_p = caps;
    return UCS_OK;
}

bool uct_ib_mlx5_hca_caps_force_loopback(const uct_ib_mlx5_hca_caps_t *caps)
{
    return caps->roce ? caps->fl_rc_qp_when_roce_enabled :
                        caps->fl_rc_qp_when_roce_disabled;
}
