/*
 * The IB memory domain: one opened device, its protection domain, memory
 * registration and remote keys. Transports of the ib component open their
 * interfaces on its ports.
 */
#ifndef UCT_IB_MD_H_
#define UCT_IB_MD_H_

#include "ib_device.h"

#include <uct/base/uct_md.h>
#include <ucs/config/types.h>

#define UCT_IB_CONFIG_PREFIX "IB_"

typedef struct uct_ib_md_config {
    uct_md_config_t          super;
    ucs_config_names_array_t net_devices; /* NET_DEVICES: "all" or dev:port */
    int                      devx;        /* MLX5_DEVX: try DevX contexts */
} uct_ib_md_config_t;

extern ucs_config_field_t uct_ib_md_config_table[];

struct uct_ib_md : uct_md {
    uct_ib_device       *dev;
    struct ibv_pd       *pd;
    uct_ib_md_config_t  config;   /* a private copy */
};

/* A registration: the verbs MR. */
typedef struct uct_ib_mem {
    struct ibv_mr *mr;
} uct_ib_mem_t;

extern uct_component_t uct_ib_component;

/**
 * The active ports of @a md that UCX_NET_DEVICES allows and @a accept takes
 * (e.g. "any link layer" or "Ethernet with DevX"), as "mlx5_0:1" devices.
 */
ucs_status_t uct_ib_md_query_tl_devices(uct_md_h md,
                                        bool (*accept)(const uct_ib_md *md,
                                                       uint8_t port_num),
                                        uct_tl_device_resource_t **devices_p,
                                        unsigned *num_devices_p);

/** The port of "mlx5_0:1" in @a md; UCS_ERR_NO_DEVICE if not one of it. */
ucs_status_t uct_ib_md_parse_port(const uct_ib_md *md, const char *dev_name,
                                  uint8_t *port_num_p);

/** Packed remote key: the MR's rkey, twice (access and atomic key). */
uint64_t uct_ib_md_pack_rkey(uint32_t rkey);

#endif
