#include "ib_address.h"

#include <endian.h>
#include <cstring>

namespace {

constexpr size_t flags_size  = 1;
constexpr size_t lid_size    = sizeof(uint16_t);
constexpr size_t half_gid    = sizeof(uint64_t);
constexpr size_t gid_size    = sizeof(union ibv_gid);

uint64_t gid_half(const union ibv_gid *gid, unsigned half)
{
    uint64_t value;

    memcpy(&value, &gid->raw[half * half_gid], sizeof(value));
    return be64toh(value);
}

} // namespace

size_t uct_ib_address_size(const uct_ib_address_info_t *info)
{
    if (info->eth) {
        return flags_size + gid_size;
    }
    return flags_size + lid_size + (info->has_subnet ? half_gid : 0) +
           (info->has_if_id ? half_gid : 0);
}

void uct_ib_address_pack(const uct_ib_address_info_t *info, void *buf)
{
    uint8_t  *p = static_cast<uint8_t*>(buf);
    uint16_t lid;

    if (info->eth) {
        *p = UCT_IB_ADDRESS_FLAG_LINK_LAYER_ETH |
             ((info->roce_info.ver == UCT_IB_DEVICE_ROCE_V2) ?
              UCT_IB_ADDRESS_FLAG_ROCE_V2 : 0) |
             ((info->roce_info.addr_family == AF_INET6) ?
              UCT_IB_ADDRESS_FLAG_ROCE_IPV6 : 0);
        memcpy(p + flags_size, info->gid.raw, gid_size);
        return;
    }

    *p  = UCT_IB_ADDRESS_FLAG_LINK_LAYER_IB |
          (info->has_subnet ? UCT_IB_ADDRESS_FLAG_SUBNET64 : 0) |
          (info->has_if_id ? UCT_IB_ADDRESS_FLAG_IF_ID : 0);
    p  += flags_size;
    lid = htobe16(info->lid);
    memcpy(p, &lid, lid_size);
    p  += lid_size;
    if (info->has_subnet) {
        memcpy(p, &info->gid.raw[0], half_gid);
        p += half_gid;
    }
    if (info->has_if_id) {
        memcpy(p, &info->gid.raw[half_gid], half_gid);
    }
}

void uct_ib_address_unpack(const void *buf, uct_ib_address_info_t *info)
{
    const uint8_t *p     = static_cast<const uint8_t*>(buf);
    uint8_t       flags  = *p;
    uint64_t      prefix = htobe64(UCT_IB_LINK_LOCAL_PREFIX);
    uint16_t      lid;

    memset(info, 0, sizeof(*info));
    p += flags_size;

    if (flags & UCT_IB_ADDRESS_FLAG_LINK_LAYER_ETH) {
        info->eth                   = true;
        info->roce_info.ver         = (flags & UCT_IB_ADDRESS_FLAG_ROCE_V2) ?
                                      UCT_IB_DEVICE_ROCE_V2 :
                                      UCT_IB_DEVICE_ROCE_V1;
        info->roce_info.addr_family = (flags & UCT_IB_ADDRESS_FLAG_ROCE_IPV6) ?
                                      AF_INET6 : AF_INET;
        memcpy(info->gid.raw, p, gid_size);
        return;
    }

    memcpy(&lid, p, lid_size);
    info->lid        = be16toh(lid);
    info->has_subnet = flags & UCT_IB_ADDRESS_FLAG_SUBNET64;
    info->has_if_id  = flags & UCT_IB_ADDRESS_FLAG_IF_ID;
    p               += lid_size;

    if (info->has_subnet) {
        memcpy(&info->gid.raw[0], p, half_gid);
        p += half_gid;
    } else {
        memcpy(&info->gid.raw[0], &prefix, half_gid);
    }
    if (info->has_if_id) {
        memcpy(&info->gid.raw[half_gid], p, half_gid);
    }
}

uint64_t uct_ib_address_subnet_prefix(const uct_ib_address_info_t *info)
{
    return info->has_subnet ? gid_half(&info->gid, 0) : UCT_IB_LINK_LOCAL_PREFIX;
}

bool uct_ib_address_is_reachable(const uct_ib_address_info_t *local,
                                 const uct_ib_address_info_t *remote,
                                 bool local_global, std::string *why_p)
{
    std::string why;

    if (local->eth != remote->eth) {
        why = "different link layer";
    } else if (local->eth) {
        if (local->roce_info.ver != remote->roce_info.ver) {
            why = std::string("different RoCE version: ") +
                  uct_ib_roce_version_str(remote->roce_info.ver);
        } else if (local->roce_info.addr_family != remote->roce_info.addr_family) {
            why = (remote->roce_info.addr_family == AF_INET) ?
                  "different address family: IPv4" :
                  "different address family: IPv6";
        }
    } else if ((uct_ib_address_subnet_prefix(local) !=
                uct_ib_address_subnet_prefix(remote)) &&
               (!local_global || !remote->has_if_id)) {
        why = "different IB subnet, and no global routing";
    }

    if (why.empty()) {
        return true;
    }
    if (why_p != nullptr) {
        *why_p = why;
    }
    return false;
}

uint16_t uct_ib_roce_udp_sport(unsigned path_index, unsigned path_factor)
{
    return 0xC000 | ((path_index * path_factor) & 0x3FFF);
}

uint32_t uct_ib_roce_flow_label(uint16_t sport)
{
    /* The provider maps a flow label fl to the port
     * ((fl & 0x3FFF) ^ ((fl & 0xFC000) >> 14)) | 0xC000, and a zero flow
     * label to a random port; 0x4001 is a non-zero label for port 0xC000. */
    uint32_t low = sport & 0x3FFF;

    return (low == 0) ? 0x4001 : low;
}

void uct_ib_fill_ah_attr(const uct_ib_path_params_t *path,
                         const uct_ib_address_info_t *remote,
                         unsigned path_index, struct ibv_ah_attr *ah_attr)
{
    memset(ah_attr, 0, sizeof(*ah_attr));
    ah_attr->port_num = path->port_num;
    ah_attr->sl       = path->sl;

    if (remote->eth) {
        ah_attr->is_global = 1;
        if (remote->roce_info.ver == UCT_IB_DEVICE_ROCE_V2) {
            ah_attr->grh.flow_label = uct_ib_roce_flow_label(
                    uct_ib_roce_udp_sport(path_index, path->roce_path_factor));
        }
    } else {
        ah_attr->dlid      = remote->lid;
        ah_attr->is_global = remote->has_if_id &&
                             (path->force_global ||
                              (uct_ib_address_subnet_prefix(remote) !=
                               path->subnet_prefix));
    }

    if (ah_attr->is_global) {
        ah_attr->grh.dgid          = remote->gid;
        ah_attr->grh.sgid_index    = path->gid_index;
        ah_attr->grh.hop_limit     = path->hop_limit;
        ah_attr->grh.traffic_class = path->traffic_class;
    }
}
