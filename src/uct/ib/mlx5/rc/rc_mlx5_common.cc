#include "rc_mlx5_common.h"

#include <ucs/debug/log_def.h>

#include <cmath>

namespace {

/* IB RNR NAK timer values (table 45 of the IB spec), in milliseconds,
 * indexed by code; code 0 is the longest. */
constexpr double rnr_timer_ms[32] = {
    655.36, 0.01,  0.02,  0.03,  0.04,  0.06,  0.08,   0.12,
    0.16,   0.24,  0.32,  0.48,  0.64,  0.96,  1.28,   1.92,
    2.56,   3.84,  5.12,  7.68,  10.24, 15.36, 20.48,  30.72,
    40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52
};

} // namespace

uint8_t uct_rc_mlx5_ack_timeout_exp(double timeout)
{
    constexpr double unit = 4.096e-6;
    uint8_t          exp  = 1; /* 0 means "never time out" */

    if (std::isinf(timeout)) {
        return 0;
    }

    while ((exp < 31) && (unit * std::ldexp(1.0, exp) < timeout)) {
        ++exp;
    }
    return exp;
}

uint8_t uct_rc_mlx5_rnr_timer_code(double rnr_timeout)
{
    double ms = rnr_timeout * 1e3;

    for (uint8_t code = 1; code < 32; ++code) {
        if (rnr_timer_ms[code] >= ms) {
            return code;
        }
    }
    return 0; /* 655.36 ms, the longest */
}

uct_rc_mlx5_timers_t
uct_rc_mlx5_encode_timers(const uct_rc_mlx5_connect_config_t *config)
{
    uct_rc_mlx5_timers_t timers;

    timers.ack_timeout = uct_rc_mlx5_ack_timeout_exp(config->timeout);
    timers.min_rnr_nak = uct_rc_mlx5_rnr_timer_code(config->rnr_timeout);
    /* checked to fit by uct_rc_mlx5_check_config(); a builder refuses
     * anything wider */
    timers.retry_count = config->retry_count;
    timers.rnr_retry   = config->rnr_retry_count;
    return timers;
}

ucs_status_t
uct_rc_mlx5_iface_common_init(uct_rc_mlx5_iface_common_t *iface,
                              const uct_ib_device *dev, uint8_t port_num,
                              struct ibv_pd *pd,
                              const uct_ib_device_gid_info_t *gid_info,
                              const uct_ib_path_params_t *path,
                              const uct_rc_mlx5_connect_config_t *config)
{
    ucs_status_t status;

    status = uct_ib_mlx5_query_hca_caps(dev->context(),
                                        dev->port_name(port_num).c_str(),
                                        UCS_LOG_LEVEL_ERROR, &iface->caps);
    if (status != UCS_OK) {
        return status;
    }

    iface->dev            = dev;
    iface->port_num       = port_num;
    iface->pd             = pd;
    iface->gid_info       = *gid_info;
    iface->path           = *path;
    iface->eth            = dev->is_port_roce(port_num);
    iface->force_loopback = iface->eth &&
                            uct_ib_mlx5_hca_caps_force_loopback(&iface->caps);
    iface->timers         = uct_rc_mlx5_encode_timers(config);
    return UCS_OK;
}
