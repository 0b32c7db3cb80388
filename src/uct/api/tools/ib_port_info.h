/*
 * The library's declared interface for its own tools (ucx_info -d), not a
 * public API and not installed: what a tool shows about an IB port beyond
 * the public UCT API: link layer, state, the GID table with each entry's
 * type, and the GID index an interface on the port selects with the
 * current configuration. Implemented in uct/ib/base/ib_info.cc.
 *
 * The function has C linkage and is exported by the libuct_ib module, so a
 * tool that loaded the module through uct_query_components() finds it with
 * dlsym() on the module's handle (UCT_IB_PORT_INFO_SYMBOL) without linking
 * the module. The structure holds plain C types only: the caller needs no
 * rdma-core header.
 */
#ifndef UCT_API_TOOLS_IB_PORT_INFO_H_
#define UCT_API_TOOLS_IB_PORT_INFO_H_

#include <uct/api/uct.h>

BEGIN_C_DECLS

#define UCT_IB_PORT_INFO_VERSION  1
#define UCT_IB_PORT_INFO_SYMBOL   "uct_ib_md_query_port_info"
#define UCT_IB_PORT_INFO_MAX_GIDS 256  /* the largest mlx5 GID table */

/* One populated GID table entry */
typedef struct uct_ib_port_gid {
    unsigned index;
    char     address[48];  /* IPv4 for IPv4-mapped GIDs, IPv6 otherwise */
    char     type[16];     /* "IB", "RoCE v1", "RoCE v2" */
    char     family[8];    /* RoCE: "IPv4" or "IPv6"; IB: "" */
} uct_ib_port_gid_t;

typedef struct uct_ib_port_info {
    unsigned          version;        /* in: UCT_IB_PORT_INFO_VERSION */
    char              link_layer[16]; /* "InfiniBand" or "Ethernet" */
    char              state[16];      /* "active", "down", ... */
    unsigned          lid;            /* InfiniBand */
    unsigned          active_mtu;     /* bytes */
    int               devx;           /* the md's context was opened with DevX */
    int               emulated;       /* the glue table in use is emulated */
    char              glue[32];       /* its name: "rdma-core", "emulated" */

    /* The index UCX_IB_GID_INDEX / UCX_IB_ROCE_SUBNETS select, or -1 with
     * the reason in gid_select_error */
    int               gid_selected;
    char              gid_select_error[64];

    unsigned          num_gids;
    uct_ib_port_gid_t gids[UCT_IB_PORT_INFO_MAX_GIDS];
} uct_ib_port_info_t;

typedef ucs_status_t (*uct_ib_md_query_port_info_func_t)(
        uct_md_h md, const char *dev_name, uct_ib_port_info_t *info);

/**
 * Describe port @a dev_name ("mlx5_0:1") of the ib memory domain @a md.
 *
 * @return UCS_OK; UCS_ERR_INVALID_PARAM if info->version is not
 *         UCT_IB_PORT_INFO_VERSION; UCS_ERR_NO_DEVICE if @a dev_name is not a
 *         port of @a md. A GID selection failure is not an error: it is
 *         reported in the structure.
 */
ucs_status_t uct_ib_md_query_port_info(uct_md_h md, const char *dev_name,
                                       uct_ib_port_info_t *info);

END_C_DECLS

#endif
