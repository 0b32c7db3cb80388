/*
 * The one place a DevX RC QP is connected. See docs/architecture.md, section
 * 4: on RoCE the destination MAC is resolved by a transient AH at every
 * connect, or taken from the validated cache only while the kernel's
 * neighbour table confirms it, so a peer whose MAC changed is reached at its
 * new one.
 */
#include "rc_mlx5_common.h"
#include <ucs/sys/math.h>

#include <uct/ib/base/ib_ah.h>
#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstring>
#include <endian.h>
#include <string>

namespace {

/* The QPC holds log2 of the depth: round a depth up, as verbs would, and
 * never past what the device allows (the interface clamped the knob already,
 * with a warning) */
unsigned log_rd_atomic(unsigned max_rd_atomic, unsigned log_max)
{
    return std::min(ucs_ilog2_ceil(max_rd_atomic), log_max);
}

/*
 * The LAG port a QP sends from: with a bonded (LAG) device, consecutive
 * path indices go to consecutive physical ports, 1-based; 0 leaves the
 * choice to the device.
 */
unsigned lag_port_affinity(const uct_rc_mlx5_iface_common_t *iface,
                           uint8_t path_index)
{
    if (!iface->eth || !iface->caps.lag_tx_port_affinity ||
        (iface->caps.num_lag_ports < 2)) {
        return 0;
    }
    return (path_index % iface->caps.num_lag_ports) + 1;
}

unsigned mtu_bytes(enum ibv_mtu mtu)
{
    return 128u << mtu;
}

bool is_own_port(const uct_rc_mlx5_iface_common_t *iface,
                 const struct ibv_ah_attr *ah_attr)
{
    return memcmp(ah_attr->grh.dgid.raw, iface->gid_info.gid.raw,
                  sizeof(iface->gid_info.gid.raw)) == 0;
}

/*
 * RoCE: resolve the destination through a transient AH and copy its AV.
 * Fills all of @a path.
 */
ucs_status_t roce_path(const uct_rc_mlx5_iface_common_t *iface,
                       const struct ibv_ah_attr *ah_attr,
                       uct_ib_mlx5_address_path_t *path)
{
    uct_ib_transient_ah ah(*iface->dev, iface->port_num);
    struct ibv_ah_attr  attr = *ah_attr;
    struct mlx5_wqe_av  *av = nullptr;
    struct mlx5_wqe_av  cached_av;
    ucs_status_t        status;

    if (iface->force_loopback && is_own_port(iface, ah_attr)) {
        *path                = {};
        path->eth            = true;
        path->force_loopback = true;
        path->eth_prio       = ah_attr->sl & 0x7;
        return UCS_OK;
    }

    attr.is_global      = 1;
    attr.port_num       = iface->port_num;
    attr.grh.sgid_index = iface->gid_info.gid_index;

    if (iface->av_cache != nullptr) {
        status = iface->av_cache->resolve(iface->pd, attr, &cached_av,
                                          UCS_LOG_LEVEL_ERROR);
        if (status == UCS_OK) {
            uct_rc_mlx5_roce_path_from_av(iface, &cached_av, ah_attr->sl, path);
        }
        return status;
    }

    status = ah.create(iface->pd, &attr, UCS_LOG_LEVEL_ERROR);
    if (status != UCS_OK) {
        return status;
    }

    status = ah.av(&av);
    if (status != UCS_OK) {
        return status; /* the AH goes with 'ah' */
    }

    uct_rc_mlx5_roce_path_from_av(iface, av, ah_attr->sl, path);
    ah.destroy(); /* now, before any firmware command */
    return UCS_OK;
}

/* InfiniBand: the LID, SL and GRH of @a ah_attr; fills all of @a path. */
void ib_path(const struct ibv_ah_attr *ah_attr, uct_ib_mlx5_address_path_t *path)
{
    *path      = {};
    path->rlid = ah_attr->dlid;
    path->mlid = ah_attr->src_path_bits & 0x7f;
    path->sl   = ah_attr->sl & 0xf;
    path->grh  = ah_attr->is_global;
    if (path->grh) {
        path->src_addr_index = ah_attr->grh.sgid_index;
        path->hop_limit      = ah_attr->grh.hop_limit;
        path->tclass         = ah_attr->grh.traffic_class;
        memcpy(path->rgid, ah_attr->grh.dgid.raw, sizeof(path->rgid));
    }
}

std::string destination(const uct_ib_mlx5_address_path_t *path)
{
    char buf[128];

    if (path->eth && path->force_loopback) {
        return "force-loopback";
    } else if (path->eth) {
        union ibv_gid gid;
        memcpy(gid.raw, path->rgid, sizeof(gid.raw));
        snprintf(buf, sizeof(buf), "%s mac %02x:%02x:%02x:%02x:%02x:%02x%s",
                 uct_ib_gid_str(&gid).c_str(), path->rmac[0], path->rmac[1],
                 path->rmac[2], path->rmac[3], path->rmac[4], path->rmac[5],
                 path->roce_v2 ? "" : " (RoCE v1)");
        if (path->roce_v2) {
            snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
                     " udp sport 0x%x", path->udp_sport);
        }
    } else {
        snprintf(buf, sizeof(buf), "lid %u sl %u%s", path->rlid, path->sl,
                 path->grh ? " with grh" : "");
    }
    return buf;
}

/* INIT to RTS for one QP, with the path already resolved. */
ucs_status_t connect_one(const uct_rc_mlx5_iface_common_t *iface,
                         uct_ib_mlx5_devx_qp *qp, uint32_t dest_qp_num,
                         const uct_ib_mlx5_address_path_t *path,
                         enum ibv_mtu path_mtu, uint8_t path_index,
                         unsigned max_rd_atomic)
{
    uct_ib_mlx5_init2rtr_params_t rtr = {};
    uct_ib_mlx5_rtr2rts_params_t  rts = {};
    uct_ib_mlx5_init2rtr_in_t     rtr_in;
    uct_ib_mlx5_rtr2rts_in_t      rts_in;
    ucs_status_t                  status;

    rtr.qpn                  = qp->qpn();
    rtr.remote_qpn           = dest_qp_num;
    rtr.port_num             = iface->port_num;
    rtr.mtu                  = path_mtu;
    rtr.log_msg_max          = iface->caps.log_max_msg;
    rtr.log_rra_max          = log_rd_atomic(max_rd_atomic,
                                             iface->caps.log_max_ra_res_qp);
    rtr.min_rnr_nak          = iface->timers.min_rnr_nak;
    rtr.lag_tx_port_affinity = lag_port_affinity(iface, path_index);
    rtr.access               = {true, true, true};
    rtr.path                 = *path;
    status = uct_ib_mlx5_build_init2rtr(qp->dev_name(), &rtr, &rtr_in);
    if (status != UCS_OK) {
        return status;
    }

    status = qp->init2rtr(&rtr_in);
    if (status != UCS_OK) {
        return status;
    }

    rts.qpn         = qp->qpn();
    rts.retry_count = iface->timers.retry_count;
    rts.rnr_retry   = iface->timers.rnr_retry;
    rts.ack_timeout = iface->timers.ack_timeout;
    rts.log_sra_max = log_rd_atomic(max_rd_atomic,
                                    iface->caps.log_max_ra_req_qp);
    status = uct_ib_mlx5_build_rtr2rts(qp->dev_name(), &rts, &rts_in);
    if (status != UCS_OK) {
        return status;
    }

    status = qp->rtr2rts(&rts_in);
    if (status != UCS_OK) {
        return status;
    }

    ucs_debug("%s: connected qp 0x%x to qp 0x%x: %s, mtu %u, path %u, "
              "lag port %u", qp->dev_name(), qp->qpn(), dest_qp_num,
              destination(path).c_str(), mtu_bytes(path_mtu), path_index,
              rtr.lag_tx_port_affinity);
    return UCS_OK;
}

ucs_status_t check_init(const uct_rc_mlx5_qp_peer_t *peers, unsigned count)
{
    for (unsigned i = 0; i < count; ++i) {
        if (!peers[i].qp->usable()) {
            ucs_error("%s: cannot connect qp 0x%x: it failed a transition "
                      "and could not be reset; destroy it",
                      peers[i].qp->dev_name(), peers[i].qp->qpn());
            return UCS_ERR_INVALID_PARAM;
        }
        if (peers[i].qp->state() != UCT_MLX5_QP_STATE_INIT) {
            ucs_error("%s: cannot connect qp 0x%x: state %u, not INIT",
                      peers[i].qp->dev_name(), peers[i].qp->qpn(),
                      peers[i].qp->state());
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

/* After a failed connect: every QP the connect moved or broke goes back to
 * INIT, so the caller may retry the whole connect. */
void roll_back(const uct_rc_mlx5_qp_peer_t *peers, unsigned failed)
{
    for (unsigned i = 0; i <= failed; ++i) {
        uct_ib_mlx5_devx_qp *qp = peers[i].qp;

        if (qp->usable() && (qp->state() == UCT_MLX5_QP_STATE_INIT)) {
            continue; /* nothing was sent for it */
        }
        if (qp->reinit() == UCS_OK) {
            ucs_debug("%s: qp 0x%x back in INIT after a failed connect",
                      qp->dev_name(), qp->qpn());
        }
    }
}

/* INIT to RTS for each QP in order; at the first failure, the QPs moved so
 * far are rolled back to INIT. */
ucs_status_t connect_all(const uct_rc_mlx5_iface_common_t *iface,
                         const uct_rc_mlx5_qp_peer_t *peers, unsigned count,
                         const uct_ib_mlx5_address_path_t *path,
                         enum ibv_mtu path_mtu, uint8_t path_index,
                         unsigned max_rd_atomic)
{
    ucs_status_t status;

    for (unsigned i = 0; i < count; ++i) {
        status = connect_one(iface, peers[i].qp, peers[i].dest_qp_num, path,
                             path_mtu, path_index, max_rd_atomic);
        if (status != UCS_OK) {
            roll_back(peers, i);
            return status;
        }
    }
    return UCS_OK;
}

} // namespace

ucs_status_t
uct_rc_mlx5_iface_common_devx_connect_qps(const uct_rc_mlx5_iface_common_t *iface,
                                          const uct_rc_mlx5_qp_peer_t *peers,
                                          unsigned count,
                                          const struct ibv_ah_attr *ah_attr,
                                          enum ibv_mtu path_mtu,
                                          uint8_t path_index,
                                          unsigned max_rd_atomic)
{
    uct_ib_mlx5_address_path_t path;
    ucs_status_t               status;

    status = check_init(peers, count); /* before any AH is made for them */
    if (status != UCS_OK) {
        return status;
    }

    /* One resolution for all the QPs: they share the destination */
    if (iface->eth) {
        status = roce_path(iface, ah_attr, &path);
        if (status != UCS_OK) {
            return status; /* the QPs are still in INIT */
        }
    } else {
        ib_path(ah_attr, &path);
    }

    return connect_all(iface, peers, count, &path, path_mtu, path_index,
                       max_rd_atomic);
}

void uct_rc_mlx5_roce_path_from_av(const uct_rc_mlx5_iface_common_t *iface,
                                   const struct mlx5_wqe_av *av, uint8_t sl,
                                   uct_ib_mlx5_address_path_t *path)
{
    *path                = {};
    path->eth            = true;
    path->eth_prio       = sl & 0x7;
    memcpy(path->rmac, av->rmac, sizeof(path->rmac));
    memcpy(path->rgid, av->rgid, sizeof(path->rgid));
    path->hop_limit      = av->hop_limit;
    path->src_addr_index = (be32toh(av->grh_gid_fl) >> 20) & 0xff;
    path->roce_v2        = (iface->gid_info.roce_info.ver == UCT_IB_DEVICE_ROCE_V2);
    if (path->roce_v2) {
        path->udp_sport = be16toh(av->rlid);
        path->dscp      = av->tclass >> 2;
    }
}

ucs_status_t
uct_rc_mlx5_iface_common_devx_connect_path(const uct_rc_mlx5_iface_common_t *iface,
                                           const uct_rc_mlx5_qp_peer_t *peers,
                                           unsigned count,
                                           const uct_ib_mlx5_address_path_t *path,
                                           enum ibv_mtu path_mtu,
                                           uint8_t path_index,
                                           unsigned max_rd_atomic)
{
    ucs_status_t status;

    status = check_init(peers, count);
    if (status != UCS_OK) {
        return status;
    }

    return connect_all(iface, peers, count, path, path_mtu, path_index,
                       max_rd_atomic);
}

ucs_status_t
uct_rc_mlx5_iface_common_devx_connect_qp(const uct_rc_mlx5_iface_common_t *iface,
                                         uct_ib_mlx5_devx_qp *qp,
                                         uint32_t dest_qp_num,
                                         const struct ibv_ah_attr *ah_attr,
                                         enum ibv_mtu path_mtu,
                                         uint8_t path_index,
                                         unsigned max_rd_atomic)
{
    const uct_rc_mlx5_qp_peer_t peer = {qp, dest_qp_num};

    return uct_rc_mlx5_iface_common_devx_connect_qps(iface, &peer, 1, ah_attr,
                                                     path_mtu, path_index,
                                                     max_rd_atomic);
}
