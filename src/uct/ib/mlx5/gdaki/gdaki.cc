/*
 * rc_gda: multi-channel RC endpoints, in the style of UCX's device-initiated
 * (GDAKI) transport. An endpoint owns NUM_CHANNELS DevX RC QPs that all go to
 * the same peer endpoint; a device-side user picks a channel per thread or
 * warp. Here only the control path exists: create, address, connect.
 *
 * Endpoint address: the QP numbers of the channels in order, 24 bits each,
 * least significant byte first (the rc_mlx5 encoding, repeated).
 *
 * Connect: every channel goes to the same destination, so the destination is
 * resolved once, by one transient AH on RoCE, and the N QPs are connected
 * with it through uct_rc_mlx5_iface_common_devx_connect_qps().
 */
#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>
#include <ucs/sys/math.h>

#include <ucs/debug/log_def.h>

#include <memory>
#include <new>
#include <vector>

namespace {

constexpr unsigned max_channels = 256;

typedef struct uct_rc_gdaki_iface_config {
    uct_ib_iface_config_t super;        /* "IB_" */
    uct_rc_iface_config_t rc;           /* "RC_" */
    unsigned              num_channels; /* NUM_CHANNELS */
} uct_rc_gdaki_iface_config_t;

ucs_config_field_t uct_rc_gdaki_iface_config_table[] = {
    {UCT_IB_CONFIG_PREFIX, "", "IB interface configuration",
     offsetof(uct_rc_gdaki_iface_config_t, super),
     UCS_CONFIG_TYPE_TABLE(uct_ib_iface_config_table)},

    {"RC_", "", "RC configuration",
     offsetof(uct_rc_gdaki_iface_config_t, rc),
     UCS_CONFIG_TYPE_TABLE(uct_rc_iface_config_table)},

    {"NUM_CHANNELS", "1",
     "RC QPs per endpoint, all connected to the same peer endpoint (1..256,\n"
     "rounded up to a power of two).",
     offsetof(uct_rc_gdaki_iface_config_t, num_channels), UCS_CONFIG_TYPE_UINT},

    UCS_CONFIG_EMPTY_FIELD
};

struct uct_rc_gdaki_iface : uct_rc_mlx5_iface {
    unsigned num_channels = 1;
};

struct uct_rc_gdaki_ep : uct_ep {
    std::vector<std::unique_ptr<uct_ib_mlx5_devx_qp>> channels;
    uint8_t                                           path_index = 0;
    bool                                              connected = false;
};

uct_rc_gdaki_iface *gdaki_iface(uct_iface_h tl_iface)
{
    return static_cast<uct_rc_gdaki_iface*>(tl_iface);
}

size_t ep_addr_len(const uct_rc_gdaki_iface *iface)
{
    return UCT_RC_MLX5_EP_ADDR_LEN * iface->num_channels;
}

ucs_status_t ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    uct_rc_gdaki_iface                   *iface = gdaki_iface(params->iface);
    std::unique_ptr<uct_ib_mlx5_devx_qp> qp;
    ucs_status_t                         status;

    if (params->field_mask & (UCT_EP_PARAM_FIELD_DEV_ADDR |
                              UCT_EP_PARAM_FIELD_IFACE_ADDR)) {
        ucs_error("%s: rc_gda endpoints connect to endpoints, not to "
                  "interfaces", iface->dev_name.c_str());
        return UCS_ERR_UNSUPPORTED;
    }

    std::unique_ptr<uct_rc_gdaki_ep> ep(new (std::nothrow) uct_rc_gdaki_ep());
    if (ep == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    ep->iface      = iface;
    ep->path_index = (params->field_mask & UCT_EP_PARAM_FIELD_PATH_INDEX) ?
                     params->path_index : 0;

    try {
        ep->channels.reserve(iface->num_channels);
    } catch (const std::bad_alloc&) {
        return UCS_ERR_NO_MEMORY;
    }

    /* Device-initiated channels only write and read remote memory: no
     * receive queue */
    for (unsigned i = 0; i < iface->num_channels; ++i) {
        status = uct_rc_mlx5_iface_create_devx_qp(iface, iface->rc.tx_queue_len,
                                                  0, &qp);
        if (status != UCS_OK) {
            return status; /* the channels created so far go with 'ep' */
        }
        ep->channels.push_back(std::move(qp)); /* reserved: cannot throw */
    }

    *ep_p = ep.release();
    return UCS_OK;
}

void ep_destroy(uct_ep_h tl_ep)
{
    delete static_cast<uct_rc_gdaki_ep*>(tl_ep);
}

ucs_status_t ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr)
{
    auto    *ep = static_cast<uct_rc_gdaki_ep*>(tl_ep);
    uint8_t *p  = reinterpret_cast<uint8_t*>(addr);

    for (const auto &qp : ep->channels) {
        uct_rc_mlx5_ep_addr_pack(qp->qpn(), reinterpret_cast<uct_ep_addr_t*>(p));
        p += UCT_RC_MLX5_EP_ADDR_LEN;
    }
    return UCS_OK;
}

ucs_status_t ep_connect_to_ep_v2(uct_ep_h tl_ep, const uct_device_addr_t *dev_addr,
                                 const uct_ep_addr_t *ep_addr,
                                 const uct_ep_connect_to_ep_params_t *params)
{
    auto                               *ep    = static_cast<uct_rc_gdaki_ep*>(tl_ep);
    uct_rc_gdaki_iface                 *iface = gdaki_iface(ep->iface);
    const uint8_t                      *p     = reinterpret_cast<const uint8_t*>(ep_addr);
    std::vector<uct_rc_mlx5_qp_peer_t> peers;
    struct ibv_ah_attr                 ah_attr;
    ucs_status_t                       status;

    if (uct_ib_iface_check_device_addr(iface, dev_addr) != UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }

    if (ep->connected) {
        ucs_error("%s: rc_gda endpoint with qp 0x%x is already connected",
                  iface->dev_name.c_str(), ep->channels.front()->qpn());
        return UCS_ERR_ALREADY_EXISTS;
    }

    if ((params->field_mask & UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH) &&
        (params->ep_addr_length != ep_addr_len(iface))) {
        ucs_error("%s: rc_gda endpoint address of %zu bytes, expected %zu "
                  "(%u channels)", iface->dev_name.c_str(),
                  params->ep_addr_length, ep_addr_len(iface),
                  iface->num_channels);
        return UCS_ERR_INVALID_PARAM;
    }

    try {
        peers.reserve(ep->channels.size());
    } catch (const std::bad_alloc&) {
        return UCS_ERR_NO_MEMORY;
    }

    /* Channel i goes to the peer's channel i */
    for (const auto &qp : ep->channels) {
        peers.push_back({qp.get(), uct_rc_mlx5_ep_addr_unpack(
                                 reinterpret_cast<const uct_ep_addr_t*>(p))});
        p += UCT_RC_MLX5_EP_ADDR_LEN;
    }

    uct_ib_iface_fill_ah_attr(iface, dev_addr, ep->path_index, &ah_attr);
    status = uct_rc_mlx5_iface_common_devx_connect_qps(&iface->common,
                                                       peers.data(),
                                                       peers.size(), &ah_attr,
                                                       iface->path_mtu,
                                                       ep->path_index,
                                                       iface->rc.max_rd_atomic);
    if (status != UCS_OK) {
        return status;
    }

    ucs_debug("%s: rc_gda endpoint connected %zu channels, qp 0x%x to qp 0x%x "
              "first", iface->dev_name.c_str(), peers.size(),
              peers.front().qp->qpn(), peers.front().dest_qp_num);
    ep->connected = true;
    return UCS_OK;
}

void iface_close(uct_iface_h tl_iface)
{
    uct_rc_gdaki_iface *iface = gdaki_iface(tl_iface);

    uct_rc_mlx5_iface_cleanup(iface);
    delete iface;
}

ucs_status_t iface_query(uct_iface_h tl_iface, uct_iface_attr_t *attr)
{
    uct_rc_gdaki_iface *iface = gdaki_iface(tl_iface);

    uct_rc_mlx5_iface_query(iface, attr);
    attr->ep_addr_len = ep_addr_len(iface);
    return UCS_OK;
}

const uct_iface_ops_t uct_rc_gdaki_iface_ops = {
    .ep_create                = ep_create,
    .ep_destroy               = ep_destroy,
    .ep_get_address           = ep_get_address,
    .ep_connect_to_ep_v2      = ep_connect_to_ep_v2,
    .iface_close              = iface_close,
    .iface_query              = iface_query,
    .iface_get_device_address = uct_ib_iface_get_device_address,
    .iface_get_address        = uct_iface_get_address_empty,
    .iface_is_reachable_v2    = uct_ib_iface_is_reachable_v2,
    .iface_progress_enable    = uct_base_iface_progress_enable,
    .iface_progress_disable   = uct_base_iface_progress_disable,
    .iface_progress           = uct_iface_progress_nop,
    UCT_IFACE_OPS_NO_DATA_PATH
};

ucs_status_t iface_open(uct_md_h md, uct_worker_h worker,
                        const uct_iface_params_t *params,
                        const uct_iface_config_t *tl_config,
                        uct_iface_h *iface_p)
{
    auto               *config = reinterpret_cast<const uct_rc_gdaki_iface_config_t*>(tl_config);
    uct_rc_gdaki_iface *iface;
    ucs_status_t       status;

    if ((config->num_channels == 0) || (config->num_channels > max_channels)) {
        ucs_error("%s: invalid UCX_RC_GDA_NUM_CHANNELS %u (expected 1..%u)",
                  params->mode.device.dev_name, config->num_channels,
                  max_channels);
        return UCS_ERR_INVALID_PARAM;
    }

    iface = new (std::nothrow) uct_rc_gdaki_iface();
    if (iface == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    status = uct_rc_mlx5_iface_init(iface, &uct_rc_gdaki_iface_ops, "rc_gda",
                                    md, worker, params, &config->super,
                                    &config->rc);
    if (status != UCS_OK) {
        delete iface;
        return status;
    }

    iface->num_channels = ucs_roundup_pow2(config->num_channels);
    if (iface->num_channels != config->num_channels) {
        ucs_debug("%s: rc_gda uses %u channels per endpoint (%u rounded up)",
                  iface->dev_name.c_str(), iface->num_channels,
                  config->num_channels);
    }

    *iface_p = iface;
    return UCS_OK;
}

uct_tl_t uct_rc_gdaki_tl = {
    .name          = "rc_gda",
    .query_devices = uct_rc_mlx5_query_devx_devices,
    .iface_open    = iface_open,
    .config        = {"RC_GDA transport", "RC_GDA_",
                      uct_rc_gdaki_iface_config_table,
                      sizeof(uct_rc_gdaki_iface_config_t)},
    .next          = nullptr
};
UCT_TL_REGISTER(&uct_rc_gdaki_tl, &uct_ib_component)

} // namespace
