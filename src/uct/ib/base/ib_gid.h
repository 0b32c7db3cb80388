/*
 * GID selection for a port.
 *
 * InfiniBand: the configured index, or 0.
 * RoCE, configured index: it must exist and be a RoCE GID.
 * RoCE, auto: the first operational GID in this order: RoCEv2 on IPv4,
 * RoCEv2 on a global IPv6 address, RoCEv2 on an IPv6 link-local address,
 * then the same three for RoCEv1; lower indexes first within a class.
 * "Operational" means a transient AH through it can be created.
 */
#ifndef UCT_IB_GID_H_
#define UCT_IB_GID_H_

#include "ib_device.h"

#include <ucs/config/types.h>

/**
 * @param cfg_gid_index  UCS_ULUNITS_AUTO or an index (UCX_IB_GID_INDEX).
 * @param subnets        Optional RoCE subnet filter (UCX_IB_ROCE_SUBNETS):
 *                       "a.b.c.d/len" or "ipv6/len" entries; an empty list
 *                       allows every GID. Only with an auto index.
 */
ucs_status_t uct_ib_device_select_gid(const uct_ib_device &dev, uint8_t port_num,
                                      struct ibv_pd *pd,
                                      unsigned long cfg_gid_index,
                                      const ucs_config_names_array_t *subnets,
                                      uct_ib_device_gid_info_t *gid_info_p);

/** "IB", "RoCE v1" or "RoCE v2" for an ibv_gid_type */
const char *uct_ib_gid_type_str(uint32_t gid_type);

typedef struct uct_ib_subnet {
    int      family;     /* AF_INET or AF_INET6 */
    uint8_t  addr[16];
    unsigned prefix_len;
} uct_ib_subnet_t;

/** Parse "a.b.c.d/len" or "ipv6/len"; false on a bad spec. */
bool uct_ib_subnet_parse(const char *spec, uct_ib_subnet_t *subnet);

/** Whether @a gid lies in @a subnet (IPv4 subnets match IPv4-mapped GIDs). */
bool uct_ib_gid_in_subnet(const union ibv_gid *gid, const uct_ib_subnet_t *subnet);

#endif
