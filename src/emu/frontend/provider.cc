/*
 * The operations of an emulated context, as an rdma-core provider installs
 * them in its verbs_context: the inline functions of verbs.h (ibv_post_send,
 * ibv_poll_cq, ibv_req_notify_cq, ibv_query_port, ibv_query_device_ex, ...)
 * call through them. Each one is the glue table's slot, so a program that
 * reaches the model this way (the drop-in front-end) and our library, which
 * calls the glue table, run the same code, fault injection included.
 */
#include <emu/api/dropin.h>
#include <emu/frontend/frontend.h>

#include <algorithm>
#include <cstddef>



namespace uct_ib_emu {

namespace {

/* The compat ibv_port_attr of the query_port symbol ends at flags */
constexpr size_t COMPAT_PORT_ATTR_SIZE =
        offsetof(struct ibv_port_attr, flags) +
        sizeof(((struct ibv_port_attr*)nullptr)->flags);

static_assert(offsetof(struct verbs_context, context) + sizeof(ibv_context) ==
              sizeof(struct verbs_context),
              "verbs.h requires the ibv_context to be the last member");

int query_port_sized(struct ibv_context *ibctx, uint8_t port_num,
                     struct ibv_port_attr *attr, size_t attr_len)
{
    struct ibv_port_attr full;
    int ret;

    ret = uct_ib_emu_glue_ops.query_port(ibctx, port_num, &full);
    if (ret == 0) {
        memcpy(attr, &full, std::min(attr_len, sizeof(full)));
    }
    return ret;
}

int compat_query_port(struct ibv_context *ibctx, uint8_t port_num,
                      struct _compat_ibv_port_attr *attr)
{
    return query_port_sized(ibctx, port_num,
                            reinterpret_cast<struct ibv_port_attr*>(attr),
                            COMPAT_PORT_ATTR_SIZE);
}

int query_device_ex(struct ibv_context *ibctx,
                    const struct ibv_query_device_ex_input *input,
                    struct ibv_device_attr_ex *attr, size_t attr_size)
{
    struct ibv_device_attr_ex full = {};
    int ret;

    if (((input != nullptr) && (input->comp_mask != 0)) ||
        (attr_size < sizeof(full.orig_attr))) {
        return EINVAL;
    }

    ret = uct_ib_emu_glue_ops.query_device(ibctx, &full.orig_attr);
    if (ret != 0) {
        return ret;
    }

    /* Beyond the classic attributes: completion timestamps, device memory
     * and tag matching on RC (as the kernel derives it from the HCA caps:
     * one entry of the list is always the free one); no on-demand paging,
     * TSO or RSS */
    full.device_cap_flags_ex        = full.orig_attr.device_cap_flags;
    full.phys_port_cnt_ex           = full.orig_attr.phys_port_cnt;
    full.completion_timestamp_mask  = HCA_TIMESTAMP_MASK;
    full.hca_core_clock             = HCA_CORE_CLOCK_KHZ;
    full.max_dm_size                = DEVICE_MEMORY_SIZE;
    full.tm_caps.max_rndv_hdr_size  = TM_MAX_RNDV_HDR_SIZE;
    full.tm_caps.max_num_tags       = (1u << LOG_TAG_MATCHING_LIST_SZ) - 1;
    full.tm_caps.flags              = IBV_TM_CAP_RC;
    full.tm_caps.max_ops            = 1u << LOG_MAX_QP_SZ;
    full.tm_caps.max_sge            = TM_MAX_SGE;
    memcpy(attr, &full, std::min(attr_size, sizeof(full)));
    return 0;
}

/* ibv_create_qp_ex with more than a PD: the mlx5dv path without DV
 * attributes, as the mlx5 provider's own create_qp_ex */
struct ibv_qp *create_qp_ex(struct ibv_context *ibctx,
                            struct ibv_qp_init_attr_ex *attr)
{
    return uct_ib_emu_glue_ops.mlx5dv_create_qp(ibctx, attr, nullptr);
}

/* ibv_create_cq_ex: the mlx5dv path without DV attributes */
struct ibv_cq_ex *create_cq_ex(struct ibv_context *ibctx,
                               struct ibv_cq_init_attr_ex *attr)
{
    return uct_ib_emu_dropin_ops.create_cq(ibctx, attr, nullptr);
}

} // namespace


void provider_context_init(context *ctx)
{
    struct verbs_context *vctx = &ctx->vctx;
    struct ibv_context_ops *ops = &vctx->context.ops;

    /* The _compat_* slots without a prototype are ABI padding: nothing in
     * verbs.h calls them */
    ops->_compat_query_device = uct_ib_emu_glue_ops.query_device;
    ops->_compat_query_port   = compat_query_port;
    ops->alloc_mw             = mw_alloc;
    ops->bind_mw              = mw_bind;
    ops->dealloc_mw           = mw_dealloc;
    ops->poll_cq              = uct_ib_emu_glue_ops.poll_cq;
    ops->req_notify_cq        = uct_ib_emu_glue_ops.req_notify_cq;
    ops->post_srq_recv        = uct_ib_emu_glue_ops.post_srq_recv;
    ops->post_send            = uct_ib_emu_glue_ops.post_send;
    ops->post_recv            = uct_ib_emu_glue_ops.post_recv;

    /* Extended operations: an absent one stays NULL, which verbs.h reads
     * as "not supported" */
    vctx->query_port      = query_port_sized;
    vctx->query_device_ex = query_device_ex;
    vctx->create_qp_ex    = create_qp_ex;
    vctx->create_cq_ex    = create_cq_ex;
    vctx->alloc_dm        = dm_alloc;
    vctx->free_dm         = dm_free;
    vctx->reg_dm_mr       = dm_reg_mr;
    vctx->open_xrcd       = xrcd_open;
    vctx->close_xrcd      = xrcd_close;
    vctx->create_srq_ex   = srq_create_ex;
    vctx->get_srq_num     = srq_get_num;
    vctx->sz              = sizeof(*vctx);
    vctx->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
}


} // namespace uct_ib_emu
