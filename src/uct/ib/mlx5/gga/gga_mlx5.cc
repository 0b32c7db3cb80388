/*
 * gga_mlx5: the loopback RC transport of UCX's GGA (the HCA's memory-to-
 * memory copy engine). Its endpoints are DevX RC QPs connected, through the
 * connect helper, to a peer QP on the same device. Only the control path
 * exists here: create, address, connect; no copy is posted.
 *
 * Addresses: the device address is the IB one; the interface address is the
 * device's system image GUID (8 bytes, network order), which tells whether
 * a peer is on this device; the endpoint address is the rc_mlx5 one (the QP
 * number).
 *
 * A QP connected to its own port loops back inside the HCA: with the HCA's
 * force-loopback capability (RoCE) the helper sets the fl bit and uses no
 * GID, MAC or AH; otherwise it goes to the interface's own GID (RoCE) or LID
 * (InfiniBand) like any peer.
 *
 * Unlike UCX, where GGA is a component of its own ("gga") with its own memory
 * domain, the transport belongs to the ib component and its memory domain.
 */
#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>

#include <ucs/debug/log_def.h>

#include <cstring>
#include <endian.h>
#include <new>
#include <string>

namespace {

typedef struct uct_gga_mlx5_iface_config {
    uct_ib_iface_config_t super;  /* "IB_" */
    uct_rc_iface_config_t rc;     /* "RC_" */
} uct_gga_mlx5_iface_config_t;

ucs_config_field_t uct_gga_mlx5_iface_config_table[] = {
    {UCT_IB_CONFIG_PREFIX, "", "IB interface configuration",
     offsetof(uct_gga_mlx5_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},

    {"RC_", "", "RC configuration",
     offsetof(uct_gga_mlx5_iface_config_t, rc),
     UCS_CONFIG_TYPE_TABLE(uct_rc_iface_config_table)},

    UCS_CONFIG_EMPTY_FIELD
};

/* The interface address: which device the interface is on */
typedef struct uct_gga_mlx5_iface_addr {
    uint64_t be_sys_image_guid;
} uct_gga_mlx5_iface_addr_t;

uct_rc_mlx5_iface *rc_iface(uct_iface_h tl_iface)
{
    return static_cast<uct_rc_mlx5_iface*>(tl_iface);
}

uint64_t be_sys_image_guid(const uct_ib_iface *iface)
{
    return iface->md->dev->attr().sys_image_guid; /* as the device gives it */
}

/* Whether @a remote is the address of a port of this interface's device */
bool is_own_device(const uct_ib_iface *iface, const uct_ib_address_info_t *remote)
{
    const uct_ib_device &dev = *iface->md->dev;

    for (const uct_ib_port &port : dev.ports()) {
        if (remote->eth != dev.is_port_roce(port.port_num)) {
            continue;
        }

        if (!remote->eth) {
            if (port.attr.lid == remote->lid) {
                return true;
            }
            continue;
        }

        for (const struct ibv_gid_entry &entry : port.gids) {
            if (memcmp(entry.gid.raw, remote->gid.raw, sizeof(entry.gid.raw)) == 0) {
                return true;
            }
        }
    }
    return false;
}

ucs_status_t ep_connect_to_ep_v2(uct_ep_h tl_ep, const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr,
                                 const uct_ep_connect_to_ep_params_t *params)
{
    uct_rc_mlx5_iface     *iface = rc_iface(tl_ep->iface);
    uct_ib_address_info_t remote;

    if (uct_ib_iface_check_device_addr(iface, dev_addr) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    uct_ib_address_unpack(dev_addr, &remote);
    if (!is_own_device(iface, &remote)) {
        std::string peer = remote.eth ? uct_ib_gid_str(&remote.gid) :
                                        "lid " + std::to_string(remote.lid);

        ucs_error("%s: gga_mlx5 connects only within %s, not to %s",
                  iface->dev_name.c_str(), iface->md->dev->name(),
                  peer.c_str());
        return UCS_ERR_UNREACHABLE;
    }

    return uct_rc_mlx5_ep_connect_to_ep_v2(tl_ep, dev_addr, ep_addr, params);
}

void iface_close(uct_iface_h tl_iface)
{
    uct_rc_mlx5_iface *iface = rc_iface(tl_iface);

    uct_rc_mlx5_iface_cleanup(iface);
    delete iface;
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr)
{
    uct_rc_mlx5_iface_query(rc_iface(tl_iface), attr);
    attr->cap.flags      = UCT_IFACE_FLAG_CONNECT_TO_EP; /* this device only */
    attr->iface_addr_len = sizeof(uct_gga_mlx5_iface_addr_t);
    return UCS_OK;
}

ucs_status_t iface_get_address(uct_iface_h tl_iface, uct_iface_addr_t *addr)
{
    uct_gga_mlx5_iface_addr_t gga_addr;

    gga_addr.be_sys_image_guid = be_sys_image_guid(rc_iface(tl_iface));
    memcpy(addr, &gga_addr, sizeof(gga_addr));
    return UCS_OK;
}

int iface_is_reachable_v2(uct_iface_h tl_iface,
                          const uct_iface_is_reachable_params_t *params)
{
    uct_rc_mlx5_iface         *iface = rc_iface(tl_iface);
    uct_gga_mlx5_iface_addr_t remote_addr;
    uct_ib_address_info_t     remote;

    if (!uct_iface_is_reachable_params_valid(
                params, UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR)) {
        return 0;
    }

    if (!(params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR) ||
        (params->iface_addr == nullptr)) {
        uct_iface_fill_info_str_buf(params, "%s: no interface address",
                                    iface->dev_name.c_str());
        return 0;
    }

    memcpy(&remote_addr, params->iface_addr, sizeof(remote_addr));
    if (remote_addr.be_sys_image_guid != be_sys_image_guid(iface)) {
        uct_iface_fill_info_str_buf(
                params, "%s: another device, system image guid 0x%llx "
                "(local 0x%llx)", iface->dev_name.c_str(),
                (unsigned long long)be64toh(remote_addr.be_sys_image_guid),
                (unsigned long long)be64toh(be_sys_image_guid(iface)));
        return 0;
    }

    uct_ib_address_unpack(params->device_addr, &remote);
    if (!is_own_device(iface, &remote)) {
        uct_iface_fill_info_str_buf(params, "%s: not an address of %s",
                                    iface->dev_name.c_str(),
                                    iface->md->dev->name());
        return 0;
    }

    return uct_ib_iface_is_reachable_v2(tl_iface, params);
}

const uct_iface_ops_t uct_gga_mlx5_iface_ops = {
    .ep_create                = uct_rc_mlx5_ep_create,
    .ep_destroy               = uct_rc_mlx5_ep_destroy,
    .ep_get_address           = uct_rc_ep_get_address,
    .ep_connect_to_ep_v2      = ep_connect_to_ep_v2,
    .iface_close              = iface_close,
    .iface_query              = iface_query,
    .iface_get_device_address = uct_ib_iface_get_device_address,
    .iface_get_address        = iface_get_address,
    .iface_is_reachable_v2    = iface_is_reachable_v2,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_iface_progress_nop,
    UCT_IFACE_OPS_NO_DATA_PATH
};

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *tl_config,
                        uct_iface_h *iface_p)
{
    auto              *config = reinterpret_cast<const uct_gga_mlx5_iface_config_t*>(tl_config);
    uct_rc_mlx5_iface *iface;
    ucs_status_t      status;

    iface = new (std::nothrow) uct_rc_mlx5_iface();
    if (iface == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_rc_mlx5_iface_init(iface, &uct_gga_mlx5_iface_ops, "gga_mlx5",
                                    md, worker, params, &config->super,
                                    &config->rc);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }

    *iface_p = iface;
    return UCS_OK;
}

uct_tl_t uct_gga_mlx5_tl = {
    .name          = "gga_mlx5",
    .query_devices = uct_rc_mlx5_query_devx_devices,
    .iface_open    = iface_open,
    .config        = {"GGA_MLX5 transport", "GGA_MLX5_",
                      uct_gga_mlx5_iface_config_table,
                      sizeof(uct_gga_mlx5_iface_config_t)},
    .next          = nullptr
};
UCT_TL_REGISTER(&uct_gga_mlx5_tl, &uct_ib_component)

} // namespace
