#include "ib_iface.h"
#include "ib_gid.h"

#include <ucs/debug/log_def.h>

#include <cstring>

ucs_config_field_t uct_ib_iface_config_table[] = {
    {"", "", NULL, offsetof(uct_ib_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)},

    {"GID_INDEX", "auto",
     "Port GID table index to use. \"auto\" takes the first operational GID\n"
     "of RoCEv2/IPv4, RoCEv2/IPv6, then RoCEv1; InfiniBand uses index 0.",
     offsetof(uct_ib_iface_config_t, gid_index), UCS_CONFIG_TYPE_ULUNITS},

    {"ROCE_SUBNETS", "",
     "Only RoCE GIDs in these subnets (address/prefix-length, comma separated)\n"
     "are candidates for GID_INDEX=auto. Empty allows every GID.",
     offsetof(uct_ib_iface_config_t, roce_subnets), UCS_CONFIG_TYPE_STRING_ARRAY},

    {"SL", "0",
     "InfiniBand service level (0..15); on RoCE, the Ethernet priority (0..7).\n"
     "A value out of range is refused when the interface opens.",
     offsetof(uct_ib_iface_config_t, sl), UCS_CONFIG_TYPE_UINT},

    {"TRAFFIC_CLASS", "auto",
     "IB traffic class / RoCE DSCP << 2 (0..255). \"auto\" is 0 on InfiniBand\n"
     "and 106 on RoCE. A value out of range is refused when the interface opens.",
     offsetof(uct_ib_iface_config_t, traffic_class), UCS_CONFIG_TYPE_ULUNITS},

    {"HOP_LIMIT", "255",
     "IB hop limit / RoCEv2 IP TTL (0..255). A value out of range is refused\n"
     "when the interface opens.",
     offsetof(uct_ib_iface_config_t, hop_limit), UCS_CONFIG_TYPE_UINT},

    {"ROCE_PATH_FACTOR", "1",
     "Multiplier of the path index in the RoCEv2 UDP source port, which\n"
     "switches and bonded ports use to spread paths.",
     offsetof(uct_ib_iface_config_t, roce_path_factor), UCS_CONFIG_TYPE_UINT},

    {"FORCE_GLOBAL_ADDR", "n",
     "InfiniBand: always use a global route header and exchange the full GID,\n"
     "so peers in other subnets are reachable through routers.",
     offsetof(uct_ib_iface_config_t, force_global), UCS_CONFIG_TYPE_BOOL},

    {"PATH_MTU", "auto",
     "Path MTU in bytes (256..4096); \"auto\" takes the port's active MTU.",
     offsetof(uct_ib_iface_config_t, path_mtu), UCS_CONFIG_TYPE_ULUNITS},

    UCS_CONFIG_EMPTY_FIELD
};

namespace {

constexpr unsigned roce_default_tclass = 106;

ucs_status_t mtu_from_config(const uct_ib_iface *iface, unsigned long bytes,
                             enum ibv_mtu active, enum ibv_mtu *mtu_p)
{
    if (bytes == UCS_ULUNITS_AUTO) {
        *mtu_p = active;
        return UCS_OK;
    }

    for (int mtu = IBV_MTU_256; mtu <= IBV_MTU_4096; ++mtu) {
        if ((128ul << mtu) == bytes) {
            *mtu_p = static_cast<enum ibv_mtu>(std::min<int>(mtu, active));
            return UCS_OK;
        }
    }

    ucs_error("%s: invalid UCX_IB_PATH_MTU %lu (expected 256, 512, 1024, "
              "2048 or 4096)", iface->dev_name.c_str(), bytes);
    return UCS_ERR_INVALID_PARAM;
}

/* The path knobs must fit the address path as given: a service level or
 * priority, traffic class and hop limit that would be truncated are refused */
ucs_status_t check_path_config(const uct_ib_iface *iface, bool roce,
                               const uct_ib_iface_config_t *config)
{
    const unsigned max_sl = roce ? 7 : 15;
    const char     *name  = iface->dev_name.c_str();

    if (config->sl > max_sl) {
        ucs_error("%s: UCX_IB_SL=%u is out of range (0..%u on %s)", name,
                  config->sl, max_sl, roce ? "RoCE, an Ethernet priority" :
                                             "InfiniBand");
        return UCS_ERR_INVALID_PARAM;
    }
    if ((config->traffic_class != UCS_ULUNITS_AUTO) &&
        (config->traffic_class > 255)) {
        ucs_error("%s: UCX_IB_TRAFFIC_CLASS=%lu is out of range (0..255)", name,
                  config->traffic_class);
        return UCS_ERR_INVALID_PARAM;
    }
    if (config->hop_limit > 255) {
        ucs_error("%s: UCX_IB_HOP_LIMIT=%u is out of range (0..255)", name,
                  config->hop_limit);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

void fill_address(uct_ib_iface *iface)
{
    const uct_ib_port    *port = iface->md->dev->port(iface->port_num);
    uct_ib_address_info_t *addr = &iface->address;

    memset(addr, 0, sizeof(*addr));
    addr->gid = iface->gid_info.gid;
    if (iface->md->dev->is_port_roce(iface->port_num)) {
        addr->eth       = true;
        addr->roce_info = iface->gid_info.roce_info;
        return;
    }

    addr->lid        = port->attr.lid;
    addr->has_subnet = (iface->path.subnet_prefix != UCT_IB_LINK_LOCAL_PREFIX) ||
                       iface->path.force_global;
    addr->has_if_id  = iface->path.force_global;
}

} // namespace

ucs_status_t uct_ib_iface_init(uct_ib_iface *iface, const uct_iface_ops_t *ops,
                               uct_md_h md, uct_worker_h worker,
                               const uct_iface_params_t *params,
                               const uct_ib_iface_config_t *config)
{
    uct_ib_md          *ib_md = static_cast<uct_ib_md*>(md);
    const uct_ib_port  *port;
    bool               roce;
    ucs_status_t       status;

    status = uct_base_iface_init(iface, ops, md, worker, params, &config->super);
    if (status != UCS_OK) {
        return status;
    }

    iface->md = ib_md;
    status    = uct_ib_md_parse_port(ib_md, params->mode.device.dev_name,
                                     &iface->port_num);
    if (status != UCS_OK) {
        ucs_error("%s is not a port of %s", params->mode.device.dev_name,
                  ib_md->dev->name());
        uct_base_iface_cleanup(iface);
        return status;
    }

    iface->dev_name = ib_md->dev->port_name(iface->port_num);
    port            = ib_md->dev->port(iface->port_num);
    roce            = ib_md->dev->is_port_roce(iface->port_num);

    status = uct_ib_device_select_gid(*ib_md->dev, iface->port_num, ib_md->pd,
                                      config->gid_index, &config->roce_subnets,
                                      &iface->gid_info);
    if (status != UCS_OK) {
        uct_base_iface_cleanup(iface);
        return status;
    }

    status = mtu_from_config(iface, config->path_mtu, port->attr.active_mtu,
                             &iface->path_mtu);
    if (status != UCS_OK) {
        uct_base_iface_cleanup(iface);
        return status;
    }

    status = check_path_config(iface, roce, config);
    if (status != UCS_OK) {
        uct_base_iface_cleanup(iface);
        return status;
    }

    iface->path                  = {};
    iface->path.port_num         = iface->port_num;
    iface->path.gid_index        = iface->gid_info.gid_index;
    iface->path.sl               = config->sl;
    iface->path.traffic_class    = (config->traffic_class != UCS_ULUNITS_AUTO) ?
                                   config->traffic_class :
                                   (roce ? roce_default_tclass : 0);
    iface->path.hop_limit        = config->hop_limit;
    iface->path.roce_path_factor = config->roce_path_factor;
    iface->path.force_global     = config->force_global;
    iface->path.subnet_prefix    = be64toh(iface->gid_info.gid.global.subnet_prefix);
    fill_address(iface);
    return UCS_OK;
}

void uct_ib_iface_cleanup(uct_ib_iface *iface)
{
    uct_base_iface_cleanup(iface);
}

size_t uct_ib_iface_device_addr_len(const uct_ib_iface *iface)
{
    return uct_ib_address_size(&iface->address);
}

void uct_ib_iface_query(const uct_ib_iface *iface, uct_iface_attr_t *attr)
{
    uct_base_iface_query(iface, attr);
    attr->device_addr_len = uct_ib_iface_device_addr_len(iface);
    attr->dev_num_paths   = 1;
}

ucs_status_t uct_ib_iface_get_device_address(uct_iface_h tl_iface,
                                             uct_device_addr_t *addr)
{
    uct_ib_address_pack(&static_cast<uct_ib_iface*>(tl_iface)->address, addr);
    return UCS_OK;
}

int uct_ib_iface_is_reachable_v2(uct_iface_h tl_iface,
                                 const uct_iface_is_reachable_params_t *params)
{
    const uct_ib_iface    *iface = static_cast<uct_ib_iface*>(tl_iface);
    uct_ib_address_info_t remote;
    std::string           why;

    if (!uct_iface_is_reachable_params_valid(
                params, UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR)) {
        return 0;
    }

    uct_ib_address_unpack(params->device_addr, &remote);
    if (!uct_ib_address_is_reachable(&iface->address, &remote,
                                     iface->path.force_global, &why)) {
        uct_iface_fill_info_str_buf(params, "%s: %s", iface->dev_name.c_str(),
                                    why.c_str());
        return 0;
    }
    return 1;
}

ucs_status_t uct_ib_iface_check_device_addr(const uct_ib_iface *iface,
                                            const uct_device_addr_t *dev_addr)
{
    if (dev_addr == nullptr) {
        ucs_error("%s: connect needs the peer's device address",
                  iface->dev_name.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

void uct_ib_iface_fill_ah_attr(const uct_ib_iface *iface,
                               const uct_device_addr_t *dev_addr,
                               unsigned path_index, struct ibv_ah_attr *ah_attr)
{
    uct_ib_address_info_t remote;

    uct_ib_address_unpack(dev_addr, &remote);
    uct_ib_fill_ah_attr(&iface->path, &remote, path_index, ah_attr);
}
