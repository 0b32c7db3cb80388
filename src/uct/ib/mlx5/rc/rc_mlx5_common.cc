/*
 * The state every DevX RC QP connect of an interface needs
 * (rc_mlx5_common.h), filled once per interface.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_common.h"

#include <ucs/debug/log_def.h>

ucs_status_t
uct_rc_mlx5_iface_common_init(uct_rc_mlx5_iface_common_t *iface,
                              const uct_ib_device *dev, uint8_t port_num,
                              struct ibv_pd *pd,
                              const uct_ib_device_gid_info_t *gid_info,
                              const uct_ib_path_params_t *path,
                              const uct_rc_timer_config_t *config)
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
    iface->timers         = uct_rc_encode_timers(config);
    iface->av_cache       = nullptr;
    return UCS_OK;
}
