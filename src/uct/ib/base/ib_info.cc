/*
 * Port descriptions for tools, the library's side of the declared interface
 * uct/api/tools/ib_port_info.h.
 */
#include "ib_gid.h"
#include "ib_iface.h"

#include <uct/api/tools/ib_port_info.h>

#include <ucs/debug/log_def.h>

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace {

const char *port_state_str(enum ibv_port_state state)
{
    switch (state) {
    case IBV_PORT_DOWN:         return "down";
    case IBV_PORT_INIT:         return "init";
    case IBV_PORT_ARMED:        return "armed";
    case IBV_PORT_ACTIVE:       return "active";
    case IBV_PORT_ACTIVE_DEFER: return "active-defer";
    default:                    return "unknown";
    }
}

/* The GID an IB interface on the port would select: the "IB_" interface
 * knobs as the environment sets them, and the same selection function. */
void fill_selected_gid(const uct_ib_md *md, uint8_t port_num,
                       uct_ib_port_info_t *info)
{
    uct_ib_iface_config_t    config;
    uct_ib_device_gid_info_t gid_info;
    ucs_status_t             status;

    info->gid_selected = -1;
    memset(&config, 0, sizeof(config));
    status = ucs_config_parser_fill_opts(&config, uct_ib_iface_config_table,
                                         UCS_DEFAULT_ENV_PREFIX,
                                         UCT_IB_CONFIG_PREFIX);
    if (status != UCS_OK) {
        snprintf(info->gid_select_error, sizeof(info->gid_select_error),
                 "cannot read the configuration: %s",
                 ucs_status_string(status));
        return;
    }

    status = uct_ib_device_select_gid(*md->dev, port_num, md->pd,
                                      config.gid_index, &config.roce_subnets,
                                      &gid_info);
    if (status == UCS_OK) {
        info->gid_selected = gid_info.gid_index;
    } else {
        snprintf(info->gid_select_error, sizeof(info->gid_select_error),
                 "%s", ucs_status_string(status));
    }
    ucs_config_parser_release_opts(&config, uct_ib_iface_config_table);
}

} // namespace

extern "C" ucs_status_t
uct_ib_md_query_port_info(uct_md_h tl_md, const char *dev_name,
                          uct_ib_port_info_t *info)
{
    const uct_ib_md   *md;
    const uct_ib_port *port;
    uint8_t           port_num;
    ucs_status_t      status;

    if ((tl_md == nullptr) || (dev_name == nullptr) || (info == nullptr) ||
        (info->version != UCT_IB_PORT_INFO_VERSION) ||
        (tl_md->component != &uct_ib_component)) {
        return UCS_ERR_INVALID_PARAM;
    }

    md     = static_cast<const uct_ib_md*>(tl_md);
    status = uct_ib_md_parse_port(md, dev_name, &port_num);
    if (status != UCS_OK) {
        return status;
    }

    port = md->dev->port(port_num);
    memset(info, 0, sizeof(*info));
    info->version = UCT_IB_PORT_INFO_VERSION;
    snprintf(info->link_layer, sizeof(info->link_layer), "%s",
             md->dev->is_port_roce(port_num) ? "Ethernet" : "InfiniBand");
    snprintf(info->state, sizeof(info->state), "%s",
             port_state_str(port->attr.state));
    info->lid        = port->attr.lid;
    info->active_mtu = 128u << port->attr.active_mtu;
    info->devx       = md->dev->devx();
    info->emulated   = uct_ib_glue->emulated;
    snprintf(info->glue, sizeof(info->glue), "%s", uct_ib_glue->name);

    for (const struct ibv_gid_entry &entry : port->gids) {
        uct_ib_port_gid_t *gid;

        if (info->num_gids == UCT_IB_PORT_INFO_MAX_GIDS) {
            break;
        }

        gid        = &info->gids[info->num_gids++];
        gid->index = entry.gid_index;
        snprintf(gid->address, sizeof(gid->address), "%s",
                 uct_ib_gid_str(&entry.gid).c_str());
        snprintf(gid->type, sizeof(gid->type), "%s",
                 uct_ib_gid_type_str(entry.gid_type));
        if (entry.gid_type != IBV_GID_TYPE_IB) {
            snprintf(gid->family, sizeof(gid->family), "%s",
                     uct_ib_gid_is_ipv4_mapped(&entry.gid) ? "IPv4" : "IPv6");
        }
    }

    fill_selected_gid(md, port_num, info);
    return UCS_OK;
}
