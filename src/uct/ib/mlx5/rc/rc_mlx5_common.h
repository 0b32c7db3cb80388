/*
 * What every DevX RC QP connect of an interface needs: the device and port,
 * the PD, the selected GID, the path knobs and the transport timers.
 * Filled once per interface by uct_rc_mlx5_iface_common_init().
 */
#ifndef UCT_RC_MLX5_COMMON_H_
#define UCT_RC_MLX5_COMMON_H_

#include <uct/api/tools/rc_mlx5_connect.h>
#include <uct/ib/base/ib_address.h>
#include <uct/ib/base/ib_device.h>
#include <uct/ib/base/ib_av_cache.h>
#include <uct/ib/mlx5/dv/devx_qp.h>
#include <uct/ib/mlx5/dv/hca_caps.h>
#include <uct/ib/rc/base/rc_timers.h>

typedef struct uct_rc_mlx5_iface_common {
    const uct_ib_device      *dev;
    uint8_t                  port_num;
    struct ibv_pd            *pd;
    uct_ib_device_gid_info_t gid_info;       /* the interface's GID */
    uct_ib_path_params_t     path;           /* sl, tclass, hop limit, ... */
    uct_ib_mlx5_hca_caps_t   caps;
    bool                     eth;            /* RoCE port */
    bool                     force_loopback; /* RoCE self-connect with fl */
    uct_rc_timers_t          timers;
    uct_ib_av_cache          *av_cache;      /* NULL: transient AHs only */
} uct_rc_mlx5_iface_common_t;

/**
 * Fill @a iface for @a dev:@a port_num: query the HCA caps, take the GID
 * selected by the caller and encode the timers. No AV cache: the caller
 * sets av_cache to its md's (UCX_IB_AH_CACHE=validated).
 */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_common_init(uct_rc_mlx5_iface_common_t *iface,
                              const uct_ib_device *dev, uint8_t port_num,
                              struct ibv_pd *pd,
                              const uct_ib_device_gid_info_t *gid_info,
                              const uct_ib_path_params_t *path,
                              const uct_rc_timer_config_t *config);

/**
 * Move a DevX RC QP from INIT to RTS, connected to @a dest_qp_num.
 *
 * RoCE: a transient AH from @a ah_attr (global, with the interface's GID
 * index) resolves the destination MAC now; its address vector is copied
 * into the INIT2RTR primary address path and the AH is destroyed at once.
 * With an AV cache (av_cache), the AV comes from it: cached only while the
 * neighbour table confirms its MAC (ib_av_cache.h).
 * With force-loopback support, a QP connected to its own port uses the fl
 * bit instead and no AH. InfiniBand: no AH; LID, SL and the GRH come from
 * @a ah_attr.
 *
 * @a path_index selects, on a bonded (LAG) RoCE device, the physical port
 * the QP sends from (qpc.lag_tx_port_affinity = path_index % ports + 1); the
 * RoCEv2 UDP source port of the path is the caller's, in the flow label of
 * @a ah_attr (uct_ib_iface_fill_ah_attr() spreads it by path index).
 *
 * Errors: an AH that cannot be created leaves the QP in INIT; after a
 * firmware failure of either modify the QP is reset to INIT (2RST and
 * RST2INIT), so the connect may be retried; a QP that cannot be reset is
 * unusable and refused by later connects before any AH is made. No AH
 * survives the call.
 */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_common_devx_connect_qp(const uct_rc_mlx5_iface_common_t *iface,
                                         uct_ib_mlx5_devx_qp *qp,
                                         uint32_t dest_qp_num,
                                         const struct ibv_ah_attr *ah_attr,
                                         enum ibv_mtu path_mtu,
                                         uint8_t path_index,
                                         unsigned max_rd_atomic);

/* A QP and the remote QP it connects to: uct_rc_mlx5_qp_peer_t, declared
 * with the tools' interface to the helper, uct/api/tools/rc_mlx5_connect.h */

/**
 * The same for @a count QPs that go to the same destination (multi-channel
 * endpoints): the destination is resolved once, by one transient AH, and the
 * QPs are connected in order. At the first failure, every QP it had moved
 * (and the failed one) is rolled back to INIT, so the whole connect can be
 * retried.
 */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_common_devx_connect_qps(const uct_rc_mlx5_iface_common_t *iface,
                                          const uct_rc_mlx5_qp_peer_t *peers,
                                          unsigned count,
                                          const struct ibv_ah_attr *ah_attr,
                                          enum ibv_mtu path_mtu,
                                          uint8_t path_index,
                                          unsigned max_rd_atomic);

/*
 * The two halves of the connect, for callers that resolve the destination
 * another way. The library itself always resolves through a transient AH;
 * the connect benchmark uses these to measure a cached AH next to it.
 */

/** The RoCE address path an mlx5 address vector describes (all of it). */
void uct_rc_mlx5_roce_path_from_av(const uct_rc_mlx5_iface_common_t *iface,
                                   const struct mlx5_wqe_av *av, uint8_t sl,
                                   uct_ib_mlx5_address_path_t *path);

/** INIT2RTR and RTR2RTS of @a count QPs over an already resolved @a path. */
[[nodiscard]] ucs_status_t
uct_rc_mlx5_iface_common_devx_connect_path(const uct_rc_mlx5_iface_common_t *iface,
                                           const uct_rc_mlx5_qp_peer_t *peers,
                                           unsigned count,
                                           const uct_ib_mlx5_address_path_t *path,
                                           enum ibv_mtu path_mtu,
                                           uint8_t path_index,
                                           unsigned max_rd_atomic);

#endif
