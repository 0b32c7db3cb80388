/*
 * The library's side of the declared interface for its tools
 * uct/api/tools/rc_mlx5_connect.h: rc_mlx5's QPs and its connect helper
 * (rc_mlx5_common.h), reached from an interface handle.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_iface.h"

#include <uct/api/tools/rc_mlx5_connect.h>

#include <memory>

namespace {

uct_rc_mlx5_iface *rc_iface(uct_iface_h iface)
{
    return static_cast<uct_rc_mlx5_iface*>(iface);
}

} // namespace

void uct_rc_mlx5_tool_iface_info(uct_iface_h tl_iface,
                                 uct_rc_mlx5_tool_iface_info_t *info)
{
    const uct_rc_mlx5_iface *iface = rc_iface(tl_iface);

    info->pd           = iface->common.pd;
    info->port_num     = iface->common.port_num;
    info->roce         = iface->md->dev->is_port_roce(iface->port_num);
    info->gid_index    = iface->gid_info.gid_index;
    info->roce_version = uct_ib_roce_version_str(
            iface->gid_info.roce_info.ver);
}

ucs_status_t uct_rc_mlx5_tool_qp_create(uct_iface_h iface, unsigned sq_len,
                                        unsigned rq_len,
                                        uct_rc_mlx5_tool_qp_t **qp_p)
{
    std::unique_ptr<uct_ib_mlx5_devx_qp> qp;
    ucs_status_t                         status;

    status = uct_rc_mlx5_iface_create_devx_qp(rc_iface(iface), sq_len, rq_len,
                                              &qp);
    if (status != UCS_OK) {
        return status;
    }

    *qp_p = qp.release();
    return UCS_OK;
}

void uct_rc_mlx5_tool_qp_destroy(uct_rc_mlx5_tool_qp_t *qp)
{
    delete qp;
}

uint32_t uct_rc_mlx5_tool_qp_num(const uct_rc_mlx5_tool_qp_t *qp)
{
    return qp->qpn();
}

uint32_t uct_rc_mlx5_tool_ep_addr_qpn(const uct_ep_addr_t *ep_addr)
{
    return uct_rc_mlx5_ep_addr_unpack(ep_addr);
}

void uct_rc_mlx5_tool_ah_attr(uct_iface_h iface,
                              const uct_device_addr_t *dev_addr,
                              unsigned path_index, struct ibv_ah_attr *ah_attr)
{
    uct_ib_iface_fill_ah_attr(rc_iface(iface), dev_addr, path_index, ah_attr);
}

ucs_status_t
uct_rc_mlx5_tool_connect_qps(uct_iface_h tl_iface,
                             const uct_rc_mlx5_qp_peer_t *peers,
                             unsigned count, const struct ibv_ah_attr *ah_attr)
{
    const uct_rc_mlx5_iface *iface = rc_iface(tl_iface);

    return uct_rc_mlx5_iface_common_devx_connect_qps(&iface->common, peers,
                                                     count, ah_attr,
                                                     iface->path_mtu, 0,
                                                     iface->rc.max_rd_atomic);
}

ucs_status_t
uct_rc_mlx5_tool_connect_qps_av(uct_iface_h tl_iface,
                                const uct_rc_mlx5_qp_peer_t *peers,
                                unsigned count, const struct mlx5_wqe_av *av,
                                uint8_t sl)
{
    const uct_rc_mlx5_iface    *iface = rc_iface(tl_iface);
    uct_ib_mlx5_address_path_t path;

    uct_rc_mlx5_roce_path_from_av(&iface->common, av, sl, &path);
    return uct_rc_mlx5_iface_common_devx_connect_path(&iface->common, peers,
                                                      count, &path,
                                                      iface->path_mtu, 0,
                                                      iface->rc.max_rd_atomic);
}
