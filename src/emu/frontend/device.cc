/*
 * Devices, contexts, ports and GID tables: ibv_get_device_list and friends,
 * ibv_open_device / mlx5dv_open_device, ibv_close_device, the queries.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>
#include <emu/model/events.h>

#include <endian.h>

#include <cstdio>


namespace uct_ib_emu {

namespace {

context *context_create_locked(emu_state &s, device *dev, bool devx)
{
    auto ctx = std::make_unique<context>();
    context *raw;

    ctx->dev                  = dev;
    ctx->devx                 = devx;
    ctx->ibv.device           = &dev->ibdev;
    ctx->ibv.cmd_fd           = -1;
    ctx->ibv.async_fd         = -1;
    ctx->ibv.num_comp_vectors = NUM_COMP_VECTORS;

    if (!async_events_init(ctx.get())) {
        return nullptr; /* errno from eventfd */
    }
    ctx->ibv.async_fd = ctx->async.fd;

    ctx->drv_uar = uar_page_alloc(ctx.get(), false);
    if (ctx->drv_uar == nullptr) {
        return fail_ptr<context>(ENOMEM);
    }
    ctx->drv_uar->refs = 1;
    provider_context_init(ctx.get()); /* cannot fail: last */

    raw = ctx.get();
    s.contexts.emplace(raw, std::move(ctx));
    register_handle(s, &raw->ibv, kind::CONTEXT, raw);

    uct_ib_emu_debug("opened %s%s", dev->name.c_str(),
                     devx ? " with DevX" : "");
    return raw;
}

} // namespace



struct ibv_device **emu_get_device_list(int *num_devices)
{
    emu_state &s = state();
    guard g(s.lock);
    struct ibv_device **list;
    size_t i;

    if (num_devices != nullptr) {
        *num_devices = 0;
    }

    list = static_cast<struct ibv_device**>(
            calloc(s.devices.size() + 1, sizeof(*list)));
    if (list == nullptr) {
        return fail_ptr<struct ibv_device*>(ENOMEM);
    }

    for (i = 0; i < s.devices.size(); ++i) {
        list[i] = &s.devices[i]->ibdev;
    }

    s.device_lists.insert(list);
    if (num_devices != nullptr) {
        *num_devices = static_cast<int>(s.devices.size());
    }
    return list;
}

void emu_free_device_list(struct ibv_device **list)
{
    emu_state &s = state();
    guard g(s.lock);

    if (s.device_lists.erase(list) == 0) {
        ucs_error("emu: ibv_free_device_list(%p): not a device list", list);
        return;
    }

    free(list);
}

const char *emu_get_device_name(struct ibv_device *ibdev)
{
    emu_state &s = state();
    guard g(s.lock);

    if (find<device>(s, ibdev) == nullptr) {
        return nullptr;
    }

    return ibdev->name;
}

namespace {

struct ibv_context *open_device(struct ibv_device *ibdev)
{
    emu_state &s = state();
    guard g(s.lock);
    device *dev = find<device>(s, ibdev);
    context *ctx;

    if (dev == nullptr) {
        return fail_ptr<struct ibv_context>(ENODEV);
    }

    /* The mlx5 provider asks for DevX and silently retries without */
    ctx = context_create_locked(s, dev, dev->devx);
    return (ctx != nullptr) ? &ctx->ibv : nullptr;
}

struct ibv_context *dv_open_device(struct ibv_device *ibdev,
                                   struct mlx5dv_context_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    device *dev = find<device>(s, ibdev);
    bool want_devx;
    context *ctx;

    if (dev == nullptr) {
        return fail_ptr<struct ibv_context>(ENODEV);
    }

    if ((attr != nullptr) &&
        ((attr->comp_mask != 0) ||
         (attr->flags & ~uint32_t(MLX5DV_CONTEXT_FLAGS_DEVX)))) {
        return fail_ptr<struct ibv_context>(EINVAL);
    }

    want_devx = (attr != nullptr) && (attr->flags & MLX5DV_CONTEXT_FLAGS_DEVX);
    if (want_devx && !dev->devx) {
        /* Explicit DevX has no fallback */
        return fail_ptr<struct ibv_context>(EOPNOTSUPP);
    }

    ctx = context_create_locked(s, dev, dev->devx);
    return (ctx != nullptr) ? &ctx->ibv : nullptr;
}

int close_device(struct ibv_context *ibctx)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);

    if (ctx == nullptr) {
        errno = EINVAL;
        return -1;
    }

    if (!ctx->objects.empty()) {
        uct_ib_emu_debug("closing %s with objects still alive",
                         ctx->dev->name.c_str());
    }

    context_destroy_locked(s, ctx);
    return 0;
}

} // namespace

/* The engine runs while a context is open */
struct ibv_context *emu_open_device(struct ibv_device *ibdev)
{
    struct ibv_context *ctx = open_device(ibdev);

    if (ctx != nullptr) {
        engine_context_opened();
    }
    return ctx;
}

struct ibv_context *emu_mlx5dv_open_device(struct ibv_device *ibdev,
                                           struct mlx5dv_context_attr *attr)
{
    struct ibv_context *ctx = dv_open_device(ibdev, attr);

    if (ctx != nullptr) {
        engine_context_opened();
    }
    return ctx;
}

int emu_close_device(struct ibv_context *ibctx)
{
    int ret = close_device(ibctx);

    engine_context_closed();
    return ret;
}

int emu_query_device(struct ibv_context *ibctx, struct ibv_device_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    device *dev;

    if (ctx == nullptr) {
        return EINVAL;
    }

    dev = ctx->dev;
    memset(attr, 0, sizeof(*attr));
    snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%s", dev->fw_ver.c_str());
    attr->node_guid           = htobe64(dev->node_guid);
    attr->sys_image_guid      = htobe64(dev->node_guid);
    attr->max_mr_size         = MAX_MR_SIZE;
    attr->page_size_cap       = ~(HW_PAGE_SIZE - 1);
    attr->vendor_id           = VENDOR_ID;
    attr->vendor_part_id      = dev->vendor_part_id;
    attr->hw_ver              = dev->hw_ver;
    attr->max_qp              = 1 << LOG_MAX_QP;
    attr->max_qp_wr           = 1 << dev->log_max_qp_sz;
    attr->device_cap_flags    = IBV_DEVICE_BAD_PKEY_CNTR |
                                IBV_DEVICE_BAD_QKEY_CNTR |
                                IBV_DEVICE_AUTO_PATH_MIG |
                                IBV_DEVICE_CHANGE_PHY_PORT |
                                IBV_DEVICE_PORT_ACTIVE_EVENT |
                                IBV_DEVICE_SYS_IMAGE_GUID |
                                IBV_DEVICE_RC_RNR_NAK_GEN |
                                IBV_DEVICE_MEM_MGT_EXTENSIONS |
                                IBV_DEVICE_XRC |
                                IBV_DEVICE_MEM_WINDOW |
                                IBV_DEVICE_MEM_WINDOW_TYPE_2B;
    /* multicast is not modelled: the device answers as one without it, so
     * programs do not try it */
    attr->max_sge             = MAX_SGE;
    attr->max_sge_rd          = MAX_SGE;
    attr->max_cq              = 1 << LOG_MAX_CQ;
    attr->max_cqe             = MAX_CQE;
    attr->max_mr              = 1 << LOG_MAX_MKEY;
    attr->max_pd              = 1 << LOG_MAX_PD;
    attr->max_qp_rd_atom      = 1 << LOG_MAX_RA_QP;
    attr->max_res_rd_atom     = (1 << LOG_MAX_RA_QP) << LOG_MAX_QP;
    attr->max_qp_init_rd_atom = 1 << LOG_MAX_RA_QP;
    attr->atomic_cap          = IBV_ATOMIC_HCA;
    attr->max_mw              = 1 << LOG_MAX_MKEY; /* one key space */
    attr->max_mcast_grp       = 0;
    attr->max_mcast_qp_attach = 0;
    attr->max_total_mcast_qp_attach = 0;
    attr->max_ah              = INT32_MAX;
    attr->max_srq             = 1 << LOG_MAX_SRQ;
    attr->max_srq_wr          = MAX_SRQ_WR;
    attr->max_srq_sge         = MAX_SRQ_SGE;
    attr->max_pkeys           = dev->is_eth() ? ETH_PKEY_TABLE_LEN :
                                                IB_PKEY_TABLE_LEN;
    attr->local_ca_ack_delay  = 16;
    attr->phys_port_cnt       = static_cast<uint8_t>(dev->ports.size());
    return 0;
}

int emu_query_port(struct ibv_context *ibctx, uint8_t port_num,
                   struct ibv_port_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    const port *p;

    if (ctx == nullptr) {
        return EINVAL;
    }

    p = ctx->dev->get_port(port_num);
    if (p == nullptr) {
        return EINVAL;
    }

    memset(attr, 0, sizeof(*attr));
    attr->state          = p->state;
    attr->max_mtu        = p->max_mtu;
    attr->active_mtu     = p->active_mtu;
    attr->gid_tbl_len    = static_cast<int>(p->gids.size());
    attr->max_msg_sz     = 1u << LOG_MAX_MSG;
    attr->pkey_tbl_len   = p->pkey_tbl_len;
    attr->lid            = p->lid;
    attr->sm_lid         = p->sm_lid;
    attr->lmc            = p->lmc;
    attr->max_vl_num     = p->is_eth() ? 0 : 4;
    attr->subnet_timeout = p->is_eth() ? 0 : 18;
    attr->active_width   = 2;                       /* 4X */
    attr->active_speed   = p->is_eth() ? 32 : 64;   /* 25G / 50G per lane */
    attr->phys_state     = (p->state == IBV_PORT_ACTIVE) ? 5 : 3;
    attr->link_layer     = p->link_layer;
    if (p->is_eth()) {
        attr->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
        attr->flags          = IBV_QPF_GRH_REQUIRED;
    } else {
        attr->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_DEVICE_MGMT_SUP |
                               IBV_PORT_VENDOR_CLASS_SUP;
    }
    return 0;
}

int emu_query_gid_ex(struct ibv_context *ibctx, uint32_t port_num,
                     uint32_t gid_index, struct ibv_gid_entry *entry,
                     uint32_t flags)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    const gid_slot *slot;
    const port *p;

    if ((ctx == nullptr) || (flags != 0)) {
        return EINVAL;
    }

    p = ctx->dev->get_port(port_num);
    if ((p == nullptr) || (gid_index >= p->gids.size())) {
        return EINVAL;
    }

    slot = p->gid(gid_index);
    if (slot == nullptr) {
        return ENODATA;
    }

    memset(entry, 0, sizeof(*entry));
    entry->gid          = slot->gid;
    entry->gid_index    = gid_index;
    entry->port_num     = port_num;
    entry->gid_type     = slot->type;
    entry->ndev_ifindex = p->ifindex;
    return 0;
}

bool emu_mlx5dv_is_supported(struct ibv_device *ibdev)
{
    emu_state &s = state();
    guard g(s.lock);

    return find<device>(s, ibdev) != nullptr;
}

int emu_mlx5dv_query_device(struct ibv_context *ibctx,
                            struct mlx5dv_context *attrs)
{
    emu_state &s = state();
    guard g(s.lock);

    if (find_context(s, ibctx) == nullptr) {
        return EOPNOTSUPP;
    }

    /* No extended capability is modelled: every comp_mask bit is cleared */
    attrs->version   = 0;
    attrs->flags     = MLX5DV_CONTEXT_FLAGS_CQE_V1;
    attrs->comp_mask = 0;
    return 0;
}

} // namespace uct_ib_emu
