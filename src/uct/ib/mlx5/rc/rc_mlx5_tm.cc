/*
 * The tag-matching command QP: posting tag-list operations to the hardware
 * goes through a QP connected to itself. It is connected by the same helper
 * as every other DevX QP, with the interface's GID index and RoCE version:
 * a hard-coded GID index 0 is RoCEv1, which a RoCEv2-only network drops.
 */
#include "rc_mlx5_iface.h"

#include <ucs/debug/log_def.h>

ucs_status_t uct_rc_mlx5_iface_tm_init(uct_rc_mlx5_iface *iface)
{
    std::unique_ptr<uct_ib_mlx5_devx_qp> qp;
    struct ibv_ah_attr                   ah_attr;
    ucs_status_t                         status;

    status = uct_rc_mlx5_iface_create_devx_qp(iface, 16, 0, &qp);
    if (status != UCS_OK) {
        return status;
    }

    uct_ib_fill_ah_attr(&iface->path, &iface->address, 0, &ah_attr);
    status = uct_rc_mlx5_iface_common_devx_connect_qp(&iface->common, qp.get(),
                                                      qp->qpn(), &ah_attr,
                                                      iface->path_mtu, 0,
                                                      iface->rc.max_rd_atomic);
    if (status != UCS_OK) {
        return status;
    }

    ucs_debug("%s: tag-matching command qp 0x%x connected to itself",
              iface->dev_name.c_str(), qp->qpn());
    iface->tm_cmd_qp = std::move(qp);
    return UCS_OK;
}
