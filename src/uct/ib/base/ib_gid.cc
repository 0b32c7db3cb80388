#include "ib_gid.h"
#include "ib_ah.h"

#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>

#include <arpa/inet.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

enum class gid_class { ipv4, ipv6_global, ipv6_link_local };

gid_class class_of(const union ibv_gid *gid)
{
    if (uct_ib_gid_is_ipv4_mapped(gid)) {
        return gid_class::ipv4;
    }
    return uct_ib_gid_is_link_local(gid) ? gid_class::ipv6_link_local :
                                           gid_class::ipv6_global;
}

bool is_roce_type(uint32_t gid_type)
{
    return (gid_type == IBV_GID_TYPE_ROCE_V1) ||
           (gid_type == IBV_GID_TYPE_ROCE_V2);
}

void fill_gid_info(const struct ibv_gid_entry &entry,
                   uct_ib_device_gid_info_t *gid_info)
{
    gid_info->gid       = entry.gid;
    gid_info->gid_index = entry.gid_index;
    gid_info->roce_info = uct_ib_gid_roce_info(&entry);
}

bool passes_filter(const struct ibv_gid_entry &entry,
                   const std::vector<uct_ib_subnet_t> &subnets)
{
    if (subnets.empty()) {
        return true;
    }
    for (const uct_ib_subnet_t &subnet : subnets) {
        if (uct_ib_gid_in_subnet(&entry.gid, &subnet)) {
            return true;
        }
    }
    return false;
}

/* A transient AH to the port's own GID proves the GID is usable. */
bool is_operational(const uct_ib_device &dev, uint8_t port_num,
                    struct ibv_pd *pd, const struct ibv_gid_entry &entry)
{
    uct_ib_transient_ah ah(dev, port_num);
    struct ibv_ah_attr  attr = {};

    attr.is_global      = 1;
    attr.port_num       = port_num;
    attr.grh.dgid       = entry.gid;
    attr.grh.sgid_index = entry.gid_index;
    attr.grh.hop_limit  = 1;
    return ah.create(pd, &attr, UCS_LOG_LEVEL_DEBUG) == UCS_OK;
}

ucs_status_t select_configured(const uct_ib_device &dev, uint8_t port_num,
                               unsigned long index, bool roce,
                               uct_ib_device_gid_info_t *gid_info_p)
{
    const std::string          port = dev.port_name(port_num);
    const struct ibv_gid_entry *entry;
    char                       text[160];

    if (index == UCS_ULUNITS_INF) {
        /* one line per process: every interface of every port reads it */
        if (ucs_config_parser_first_report("UCX_IB_GID_INDEX=inf")) {
            ucs_error("UCX_IB_GID_INDEX=inf: a GID index is a number or "
                      "\"auto\"");
        }
        return UCS_ERR_INVALID_PARAM;
    }

    entry = dev.gid_entry(port_num, index);
    if (entry == nullptr) {
        snprintf(text, sizeof(text), "%s: UCX_IB_GID_INDEX=%lu: the port has "
                 "no such GID index", port.c_str(), index);
    } else if (roce && !is_roce_type(entry->gid_type)) {
        snprintf(text, sizeof(text), "%s: UCX_IB_GID_INDEX=%lu: the GID has "
                 "type %s, not RoCE", port.c_str(), index,
                 uct_ib_gid_type_str(entry->gid_type));
    } else {
        fill_gid_info(*entry, gid_info_p);
        return UCS_OK;
    }

    if (ucs_config_parser_first_report(text)) {
        ucs_error("%s", text);
    }
    return UCS_ERR_INVALID_PARAM;
}

} // namespace

const char *uct_ib_gid_type_str(uint32_t gid_type)
{
    switch (gid_type) {
    case IBV_GID_TYPE_IB:      return "IB";
    case IBV_GID_TYPE_ROCE_V1: return "RoCE v1";
    case IBV_GID_TYPE_ROCE_V2: return "RoCE v2";
    default:                   return "unknown";
    }
}

bool uct_ib_subnet_parse(const char *spec, uct_ib_subnet_t *subnet)
{
    std::string   text(spec);
    size_t        slash = text.find('/');
    char          *end;
    unsigned long len;
    unsigned      max_len;

    if ((slash == std::string::npos) || (slash + 1 == text.size())) {
        return false;
    }

    std::string ip = text.substr(0, slash);
    len = strtoul(text.c_str() + slash + 1, &end, 10);
    if (*end != '\0') {
        return false;
    }

    if (inet_pton(AF_INET, ip.c_str(), subnet->addr) == 1) {
        subnet->family = AF_INET;
        max_len        = 32;
    } else if (inet_pton(AF_INET6, ip.c_str(), subnet->addr) == 1) {
        subnet->family = AF_INET6;
        max_len        = 128;
    } else {
        return false;
    }

    subnet->prefix_len = len;
    return len <= max_len;
}

bool uct_ib_gid_in_subnet(const union ibv_gid *gid, const uct_ib_subnet_t *subnet)
{
    const uint8_t *bytes;

    if ((subnet->family == AF_INET) != uct_ib_gid_is_ipv4_mapped(gid)) {
        return false;
    }

    bytes = (subnet->family == AF_INET) ? &gid->raw[12] : gid->raw;
    for (unsigned bit = 0; bit < subnet->prefix_len; ++bit) {
        uint8_t mask = 0x80 >> (bit % 8);
        if ((subnet->addr[bit / 8] & mask) != (bytes[bit / 8] & mask)) {
            return false;
        }
    }
    return true;
}

ucs_status_t uct_ib_device_select_gid(const uct_ib_device &dev, uint8_t port_num,
                                      struct ibv_pd *pd,
                                      unsigned long cfg_gid_index,
                                      const ucs_config_names_array_t *subnets,
                                      uct_ib_device_gid_info_t *gid_info_p)
{
    static const uint32_t  versions[] = {IBV_GID_TYPE_ROCE_V2,
                                         IBV_GID_TYPE_ROCE_V1};
    static const gid_class classes[]  = {gid_class::ipv4, gid_class::ipv6_global,
                                         gid_class::ipv6_link_local};
    const uct_ib_port      *port      = dev.port(port_num);
    std::vector<uct_ib_subnet_t> filter;

    if (port == nullptr) {
        ucs_error("%s: no such port", dev.port_name(port_num).c_str());
        return UCS_ERR_NO_DEVICE;
    }

    if ((subnets != nullptr) && (subnets->count > 0)) {
        if (cfg_gid_index != UCS_ULUNITS_AUTO) {
            ucs_error("%s: UCX_IB_ROCE_SUBNETS cannot be used together with "
                      "UCX_IB_GID_INDEX", dev.port_name(port_num).c_str());
            return UCS_ERR_INVALID_PARAM;
        }
        filter.resize(subnets->count);
        for (unsigned i = 0; i < subnets->count; ++i) {
            if (!uct_ib_subnet_parse(subnets->names[i], &filter[i])) {
                ucs_error("%s: invalid subnet '%s' in UCX_IB_ROCE_SUBNETS "
                          "(expected address/prefix-length)",
                          dev.port_name(port_num).c_str(), subnets->names[i]);
                return UCS_ERR_INVALID_PARAM;
            }
        }
    }

    if (!dev.is_port_roce(port_num)) {
        return select_configured(dev, port_num,
                                 (cfg_gid_index == UCS_ULUNITS_AUTO) ? 0 :
                                 cfg_gid_index, false, gid_info_p);
    }

    if (cfg_gid_index != UCS_ULUNITS_AUTO) {
        return select_configured(dev, port_num, cfg_gid_index, true, gid_info_p);
    }

    for (uint32_t version : versions) {
        for (gid_class cls : classes) {
            for (const struct ibv_gid_entry &entry : port->gids) {
                if ((entry.gid_type != version) ||
                    (class_of(&entry.gid) != cls) ||
                    !passes_filter(entry, filter)) {
                    continue;
                }
                if (!is_operational(dev, port_num, pd, entry)) {
                    ucs_debug("%s: GID index %u (%s %s) is not operational",
                              dev.port_name(port_num).c_str(), entry.gid_index,
                              uct_ib_gid_type_str(entry.gid_type),
                              uct_ib_gid_str(&entry.gid).c_str());
                    continue;
                }
                fill_gid_info(entry, gid_info_p);
                ucs_debug("%s: selected GID index %u (%s %s)",
                          dev.port_name(port_num).c_str(), entry.gid_index,
                          uct_ib_gid_type_str(entry.gid_type),
                          uct_ib_gid_str(&entry.gid).c_str());
                return UCS_OK;
            }
        }
    }

    ucs_error("%s: no operational RoCE GID%s",
              dev.port_name(port_num).c_str(),
              !filter.empty() ?
              " in UCX_IB_ROCE_SUBNETS" : "");
    return UCS_ERR_NO_DEVICE;
}
