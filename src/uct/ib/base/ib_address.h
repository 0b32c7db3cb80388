/*
 * Device addresses of IB ports, as exchanged between peers, reachability
 * between two of them, and the ibv_ah_attr that reaches a remote one.
 *
 * Wire format: one flags byte, then
 *   InfiniBand: LID (16 bits, big endian), [subnet prefix (64)], [interface id (64)]
 *   RoCE:       GID (128)
 */
#ifndef UCT_IB_ADDRESS_H_
#define UCT_IB_ADDRESS_H_

#include "ib_device.h"

#include <ucs/sys/compiler_def.h>

#include <string>

enum {
    UCT_IB_ADDRESS_FLAG_LINK_LAYER_IB  = UCS_BIT(0),
    UCT_IB_ADDRESS_FLAG_LINK_LAYER_ETH = UCS_BIT(1),
    UCT_IB_ADDRESS_FLAG_SUBNET64       = UCS_BIT(2), /* IB: subnet prefix */
    UCT_IB_ADDRESS_FLAG_IF_ID          = UCS_BIT(3), /* IB: interface id */
    UCT_IB_ADDRESS_FLAG_ROCE_V2        = UCS_BIT(4),
    UCT_IB_ADDRESS_FLAG_ROCE_IPV6      = UCS_BIT(5)
};

#define UCT_IB_LINK_LOCAL_PREFIX 0xfe80000000000000ull

/* An unpacked device address. */
typedef struct uct_ib_address_info {
    bool                       eth;
    uint16_t                   lid;           /* IB */
    bool                       has_subnet;    /* IB */
    bool                       has_if_id;     /* IB */
    union ibv_gid              gid;           /* RoCE; IB: subnet + if id */
    uct_ib_roce_version_info_t roce_info;     /* RoCE */
} uct_ib_address_info_t;

/** Bytes the packed form of @a info takes. */
size_t uct_ib_address_size(const uct_ib_address_info_t *info);

void uct_ib_address_pack(const uct_ib_address_info_t *info, void *buf);

void uct_ib_address_unpack(const void *buf, uct_ib_address_info_t *info);

/** Subnet prefix of an IB address, host order (link-local if absent). */
uint64_t uct_ib_address_subnet_prefix(const uct_ib_address_info_t *info);

/**
 * Whether @a remote can be reached from @a local: the same link layer; on
 * RoCE the same version and address family; on InfiniBand the same subnet,
 * or another one when @a local_global (routing needs a GRH).
 * If not, @a why_p (optional) says why.
 */
bool uct_ib_address_is_reachable(const uct_ib_address_info_t *local,
                                 const uct_ib_address_info_t *remote,
                                 bool local_global, std::string *why_p);

/* How an interface addresses its paths (from its configuration). */
typedef struct uct_ib_path_params {
    uint8_t  port_num;
    uint8_t  gid_index;
    uint8_t  sl;
    uint8_t  traffic_class;
    uint8_t  hop_limit;
    unsigned roce_path_factor;
    bool     force_global;        /* IB: always use a GRH */
    uint64_t subnet_prefix;       /* IB: local subnet, host order */
} uct_ib_path_params_t;

/** RoCEv2 UDP source port of path @a path_index: 0xC000..0xFFFF. */
uint16_t uct_ib_roce_udp_sport(unsigned path_index, unsigned path_factor);

/** A flow label from which the mlx5 provider derives exactly @a sport. */
uint32_t uct_ib_roce_flow_label(uint16_t sport);

/** The attributes of an AH from @a path to @a remote over @a path_index. */
void uct_ib_fill_ah_attr(const uct_ib_path_params_t *path,
                         const uct_ib_address_info_t *remote,
                         unsigned path_index, struct ibv_ah_attr *ah_attr);

#endif
