/*
 * The library's declared interface for its own tools (ucx_connect_bench),
 * not a public API and not installed: what a tool drives of an rc_mlx5
 * interface below the public UCT API. DevX RC QPs of the interface, made
 * and connected by the library's connect helper with one destination
 * resolution (a transient AH) per call, and the helper's two halves for a
 * tool that resolves the destination another way (the benchmark's cached
 * AH baseline). Implemented in uct/ib/mlx5/rc/rc_mlx5_tools.cc; a tool
 * using it links libuct_ib.
 *
 * Every function takes an interface the "rc_mlx5" transport opened. C++:
 * the QPs are the library's objects, opaque here, and the peers the
 * connect helper takes are the ones declared here, so that a connect costs
 * the tool's call what it costs the library's own.
 */
#ifndef UCT_API_TOOLS_RC_MLX5_CONNECT_H_
#define UCT_API_TOOLS_RC_MLX5_CONNECT_H_

#include <uct/api/uct.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include <stdint.h>

/* A DevX RC QP of an interface, owned by the tool */
class uct_ib_mlx5_devx_qp;
typedef uct_ib_mlx5_devx_qp uct_rc_mlx5_tool_qp_t;

/* What a tool needs to know of the interface's port */
typedef struct uct_rc_mlx5_tool_iface_info {
    struct ibv_pd *pd;            /* the interface's protection domain */
    uint8_t       port_num;
    int           roce;           /* an Ethernet (RoCE) port */
    unsigned      gid_index;      /* the GID the interface selected */
    const char    *roce_version;  /* of that GID, "RoCE v2" etc.; RoCE only */
} uct_rc_mlx5_tool_iface_info_t;

/* A QP and the remote QP it connects to (the connect helper's, too:
 * mlx5/rc/rc_mlx5_common.h) */
typedef struct uct_rc_mlx5_qp_peer {
    uct_ib_mlx5_devx_qp *qp;
    uint32_t            dest_qp_num;
} uct_rc_mlx5_qp_peer_t;

void uct_rc_mlx5_tool_iface_info(uct_iface_h iface,
                                 uct_rc_mlx5_tool_iface_info_t *info);

/** A QP of @a iface with @a sq_len sends and @a rq_len receives (0: it
 *  receives from the interface's SRQ, if there is one), in INIT. */
ucs_status_t uct_rc_mlx5_tool_qp_create(uct_iface_h iface, unsigned sq_len,
                                        unsigned rq_len,
                                        uct_rc_mlx5_tool_qp_t **qp_p);

void uct_rc_mlx5_tool_qp_destroy(uct_rc_mlx5_tool_qp_t *qp);

uint32_t uct_rc_mlx5_tool_qp_num(const uct_rc_mlx5_tool_qp_t *qp);

/** The QP number an rc_mlx5 endpoint address (uct_ep_get_address) holds */
uint32_t uct_rc_mlx5_tool_ep_addr_qpn(const uct_ep_addr_t *ep_addr);

/** The AH attributes with which @a iface reaches the peer at @a dev_addr
 *  over @a path_index. */
void uct_rc_mlx5_tool_ah_attr(uct_iface_h iface,
                              const uct_device_addr_t *dev_addr,
                              unsigned path_index, struct ibv_ah_attr *ah_attr);

/**
 * Connect @a count QPs of @a iface that go to the same destination, as the
 * library connects a multi-channel endpoint: the destination of @a ah_attr
 * resolved once, by a transient AH on RoCE, then INIT to RTS, path index 0,
 * the interface's MTU and MAX_RD_ATOMIC; rolled back to INIT on failure.
 */
ucs_status_t
uct_rc_mlx5_tool_connect_qps(uct_iface_h iface,
                             const uct_rc_mlx5_qp_peer_t *peers,
                             unsigned count, const struct ibv_ah_attr *ah_attr);

/**
 * The same, the destination resolved by the caller: the RoCE address path
 * of the address vector @a av (with service level @a sl), then INIT to RTS
 * of the @a count QPs over it.
 */
ucs_status_t
uct_rc_mlx5_tool_connect_qps_av(uct_iface_h iface,
                                const uct_rc_mlx5_qp_peer_t *peers,
                                unsigned count, const struct mlx5_wqe_av *av,
                                uint8_t sl);

#endif
