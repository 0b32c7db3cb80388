/*
 * fabric_peer's baseline (--baseline): an rc_mlx5 endpoint connected the
 * way connects resolved a RoCE destination before the fix, with the
 * address vector of an AH cached per destination (the connect benchmark's
 * baseline_ah_cache), so that a peer whose MAC moved is reached with the
 * MAC its first AH froze. It lives in the test program only, never in the
 * library.
 */
#include "fabric_peer_baseline.h"

#include <tools/perf/baseline_ah_cache.h>
#include <uct/ib/base/ib_iface.h>
#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>

#include <cstdio>
#include <map>
#include <memory>

namespace {

/* One cache per interface, kept across the endpoints' connects */
std::map<uct_iface_h, std::unique_ptr<bench::baseline_ah_cache>> g_caches;

} // namespace

ucs_status_t fabric_peer_baseline_connect(uct_ep_h tl_ep,
                                          const uct_device_addr_t *dev_addr,
                                          const uct_ep_addr_t *ep_addr)
{
    auto *ep    = static_cast<uct_rc_mlx5_ep*>(tl_ep);
    auto *iface = static_cast<uct_rc_mlx5_iface*>(ep->iface);
    const uct_rc_mlx5_iface_common_t *common = &iface->common;
    struct ibv_ah_attr attr, key;
    struct mlx5_wqe_av av;
    uct_ib_mlx5_address_path_t path;
    uct_rc_mlx5_qp_peer_t peer;
    ucs_status_t status;

    if (!ep->devx_qp) {
        fprintf(stderr, "fabric_peer: the baseline needs rc_mlx5 with DevX\n");
        return UCS_ERR_UNSUPPORTED;
    }

    auto &cache = g_caches[ep->iface];
    if (!cache) {
        cache.reset(new bench::baseline_ah_cache(common->pd, iface->dev_name));
    }

    uct_ib_iface_fill_ah_attr(iface, dev_addr, ep->path_index, &attr);
    key                = attr;
    key.is_global      = 1;
    key.port_num       = common->port_num;
    key.grh.sgid_index = common->gid_info.gid_index;
    if (!cache->get_av(key, &av)) {
        return UCS_ERR_IO_ERROR;
    }

    uct_rc_mlx5_roce_path_from_av(common, &av, attr.sl, &path);
    peer.qp          = ep->devx_qp.get();
    peer.dest_qp_num = uct_rc_mlx5_ep_addr_unpack(ep_addr);
    status = uct_rc_mlx5_iface_common_devx_connect_path(
            common, &peer, 1, &path, iface->path_mtu, ep->path_index,
            iface->rc.max_rd_atomic);
    ep->connected = (status == UCS_OK);
    ep->dest_qpn  = peer.dest_qp_num;
    return status;
}

void fabric_peer_baseline_cleanup()
{
    g_caches.clear();
}
