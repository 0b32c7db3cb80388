/*
 * The base of every interface on an IB port: the port, its selected GID,
 * the path knobs, the device address and reachability.
 */
#ifndef UCT_IB_IFACE_H_
#define UCT_IB_IFACE_H_

#include "ib_address.h"
#include "ib_md.h"

#include <uct/base/uct_iface.h>

typedef struct uct_ib_iface_config {
    uct_iface_config_t       super;
    unsigned long            gid_index;        /* GID_INDEX */
    ucs_config_names_array_t roce_subnets;     /* ROCE_SUBNETS */
    unsigned                 sl;               /* SL */
    unsigned long            traffic_class;    /* TRAFFIC_CLASS */
    unsigned                 hop_limit;        /* HOP_LIMIT */
    unsigned                 roce_path_factor; /* ROCE_PATH_FACTOR */
    int                      force_global;     /* FORCE_GLOBAL_ADDR */
    unsigned long            path_mtu;         /* PATH_MTU, bytes or auto */
} uct_ib_iface_config_t;

/* Embedded in a transport's table under the "IB_" prefix */
extern ucs_config_field_t uct_ib_iface_config_table[];

struct uct_ib_iface : uct_base_iface_t {
    uct_ib_md                *md;
    uint8_t                  port_num;
    uct_ib_device_gid_info_t gid_info;
    uct_ib_path_params_t     path;
    enum ibv_mtu             path_mtu;
    uct_ib_address_info_t    address;   /* this port, as peers see it */
    std::string              dev_name;  /* "mlx5_0:1" */
};

/**
 * Initialise the IB part of @a iface on the port named by params: select the
 * GID (UCX_IB_GID_INDEX / ROCE_SUBNETS) and fill the path and address.
 */
[[nodiscard]] ucs_status_t
uct_ib_iface_init(uct_ib_iface *iface, const uct_iface_ops_t *ops,
                  uct_md_h md, uct_worker_h worker,
                  const uct_iface_params_t *params,
                  const uct_ib_iface_config_t *config);

void uct_ib_iface_cleanup(uct_ib_iface *iface);

/** Fill what every IB interface reports: address lengths and basics. */
void uct_ib_iface_query(const uct_ib_iface *iface, uct_iface_attr_t *attr);

size_t uct_ib_iface_device_addr_len(const uct_ib_iface *iface);

/* Operation slots shared by the IB transports */
ucs_status_t uct_ib_iface_get_device_address(uct_iface_h tl_iface,
                                             uct_device_addr_t *addr);

int uct_ib_iface_is_reachable_v2(uct_iface_h tl_iface,
                                 const uct_iface_is_reachable_params_t *params);

/** UCS_ERR_INVALID_PARAM (logged) if a connect came without the peer's
 *  device address, which every IB transport needs. */
ucs_status_t uct_ib_iface_check_device_addr(const uct_ib_iface *iface,
                                            const uct_device_addr_t *dev_addr);

/** The AH attributes to reach the peer at @a dev_addr over @a path_index. */
void uct_ib_iface_fill_ah_attr(const uct_ib_iface *iface,
                               const uct_device_addr_t *dev_addr,
                               unsigned path_index,
                               struct ibv_ah_attr *ah_attr);

#endif
