/*
 * DevX entry points, the kernel's side: what it checks before a command
 * reaches the firmware (DevX context, command kind, object id; the
 * firmware executes it, firmware/commands.cc), UAR allocation, umem
 * registration and EQ numbers.
 *
 * A command the firmware rejects returns EREMOTEIO (NULL with errno for
 * obj_create) with status and syndrome in the output mailbox; a destroy
 * returns the errno the kernel maps the status to, and keeps the handle.
 */
#include <emu/firmware/devx.h>
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/* How the kernel routes a command (its DevX method accepts only its kind) */
enum class cmd_kind {
    GENERAL,
    OBJ_CREATE,
    OBJ_MODIFY,
    OBJ_QUERY,
    OBJ_DESTROY
};

cmd_kind classify(uint16_t opcode)
{
    switch (opcode) {
    case UCT_MLX5_CMD_OP_CREATE_QP:
    case UCT_MLX5_CMD_OP_CREATE_MKEY:
    case UCT_MLX5_CMD_OP_CREATE_SRQ:
    case UCT_MLX5_CMD_OP_CREATE_XRC_SRQ:
    case UCT_MLX5_CMD_OP_CREATE_XRQ:
    case UCT_MLX5_CMD_OP_CREATE_RMP:
    case UCT_MLX5_CMD_OP_ALLOC_PD:
    case UCT_MLX5_CMD_OP_CREATE_DCT:
        return cmd_kind::OBJ_CREATE;
    case UCT_MLX5_CMD_OP_QUERY_QP:
    case UCT_MLX5_CMD_OP_QUERY_RMP:
    case UCT_MLX5_CMD_OP_QUERY_DCT:
        return cmd_kind::OBJ_QUERY;
    case UCT_MLX5_CMD_OP_MODIFY_RMP:
    case UCT_MLX5_CMD_OP_DRAIN_DCT:
        return cmd_kind::OBJ_MODIFY;
    case UCT_MLX5_CMD_OP_DESTROY_QP:
    case UCT_MLX5_CMD_OP_DESTROY_MKEY:
    case UCT_MLX5_CMD_OP_DESTROY_SRQ:
    case UCT_MLX5_CMD_OP_DESTROY_XRC_SRQ:
    case UCT_MLX5_CMD_OP_DESTROY_XRQ:
    case UCT_MLX5_CMD_OP_DESTROY_RMP:
    case UCT_MLX5_CMD_OP_DESTROY_DCT:
    case UCT_MLX5_CMD_OP_DEALLOC_PD:
        return cmd_kind::OBJ_DESTROY;
    default:
        return is_qp_modify_opcode(opcode) ? cmd_kind::OBJ_MODIFY :
                                             cmd_kind::GENERAL;
    }
}

/* mlx5_ib sets the umem valid bits of a DevX create itself before the
 * command reaches the firmware: a user process can back its queues and
 * doorbell records only by umems, whatever its mailbox says */
void kernel_set_umem_valid(mailbox &in)
{
    namespace cqi = prm::create_qp_in;
    using rmp_wq  = prm::at<prm::create_rmp_in::rmp_context, prm::rmpc::wq>;
    using xrq_wq  = prm::at<prm::create_xrq_in::xrq_context, prm::xrqc::wq>;

    if ((in.opcode() == UCT_MLX5_CMD_OP_CREATE_QP) &&
        in.fits<cqi::layout>()) {
        put<cqi::wq_umem_valid>(in.dw(), 1);
        put<prm::qpc::dbr_umem_valid>(sub<cqi::qpc>(in.dw()), 1);
    } else if ((in.opcode() == UCT_MLX5_CMD_OP_CREATE_RMP) &&
               in.fits<prm::create_rmp_in::layout>()) {
        put<prm::at<rmp_wq, prm::wq::wq_umem_valid>>(in.dw(), 1);
        put<prm::at<rmp_wq, prm::wq::dbr_umem_valid>>(in.dw(), 1);
    } else if ((in.opcode() == UCT_MLX5_CMD_OP_CREATE_XRQ) &&
               in.fits<prm::create_xrq_in::layout>()) {
        put<prm::at<xrq_wq, prm::wq::wq_umem_valid>>(in.dw(), 1);
        put<prm::at<xrq_wq, prm::wq::dbr_umem_valid>>(in.dw(), 1);
    }
}

/* Whether a modify or query command is for this object: the kernel checks
 * the object type the opcode acts on and the number the command names */
bool cmd_names_obj(const mailbox &in, const devx_obj *obj)
{
    switch (in.opcode()) {
    case UCT_MLX5_CMD_OP_QUERY_RMP:
    case UCT_MLX5_CMD_OP_MODIFY_RMP:
        return (obj->rmp != nullptr) && !obj->rmp->xrq &&
               (rmp_cmd_rmpn(in) == obj->rmp->srqn);
    case UCT_MLX5_CMD_OP_QUERY_DCT:
    case UCT_MLX5_CMD_OP_DRAIN_DCT:
        return (obj->qp != nullptr) && obj->qp->is_dct() &&
               (dct_cmd_dctn(in) == obj->qp->qpn);
    default:
        return (obj->qp != nullptr) && !obj->qp->is_dct() &&
               (qp_cmd_qpn(in) == obj->qp->qpn);
    }
}

/* The DevX context behind a handle: EOPNOTSUPP if it is not an emulated
 * mlx5 context or was opened without DevX */
int devx_context(emu_state &s, struct ibv_context *ibctx, context **ctx_p)
{
    context *ctx = find_context(s, ibctx);

    if ((ctx == nullptr) || !ctx->devx) {
        return EOPNOTSUPP;
    }

    *ctx_p = ctx;
    return 0;
}

bool mailbox_sizes_valid(size_t inlen, size_t outlen)
{
    return (inlen >= MBOX_HDR_SIZE) && (outlen >= MBOX_HDR_SIZE);
}

} // namespace


int emu_devx_general_cmd(struct ibv_context *ibctx, const void *in,
                         size_t inlen, void *out, size_t outlen)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx;
    fw_result result;
    int err;

    err = devx_context(s, ibctx, &ctx);
    if (err != 0) {
        return err;
    }

    if (!mailbox_sizes_valid(inlen, outlen)) {
        return EINVAL;
    }

    mailbox inbox(in, inlen), outbox(outlen);
    if (classify(inbox.opcode()) != cmd_kind::GENERAL) {
        return EINVAL; /* object commands go through their object methods */
    }

    result = fw_general_cmd(s, ctx, inbox, outbox);

    outbox.copy_to(out, outlen);
    return (result.status == UCT_IB_EMU_FW_OK) ? 0 : EREMOTEIO;
}

struct mlx5dv_devx_obj *emu_devx_obj_create(struct ibv_context *ibctx,
                                            const void *in, size_t inlen,
                                            void *out, size_t outlen)
{
    emu_state &s = state();
    guard g(s.lock);
    std::unique_ptr<devx_obj> obj;
    qp *q      = nullptr;
    srq *rmp   = nullptr;
    mkey *mk   = nullptr;
    fw_result result;
    context *ctx;
    int err;

    err = devx_context(s, ibctx, &ctx);
    if (err != 0) {
        return fail_ptr<struct mlx5dv_devx_obj>(err);
    }

    if (!mailbox_sizes_valid(inlen, outlen)) {
        return fail_ptr<struct mlx5dv_devx_obj>(EINVAL);
    }

    mailbox inbox(in, inlen), outbox(outlen);
    if (classify(inbox.opcode()) != cmd_kind::OBJ_CREATE) {
        return fail_ptr<struct mlx5dv_devx_obj>(EINVAL);
    }
    kernel_set_umem_valid(inbox);

    result = fw_create_cmd(s, ctx, inbox, outbox, &q, &rmp, &mk);

    outbox.copy_to(out, outlen);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return fail_ptr<struct mlx5dv_devx_obj>(EREMOTEIO);
    }

    obj       = std::make_unique<devx_obj>(ctx);
    obj->qp   = q;
    obj->rmp  = rmp;
    obj->mkey = mk;
    register_handle(s, obj.get(), kind::DEVX_OBJ, obj.get());
    return reinterpret_cast<struct mlx5dv_devx_obj*>(
            add_object(ctx, std::move(obj)));
}

namespace {

/* obj_modify and obj_query: the command must be of the method's kind and
 * name the object it is sent to */
int devx_obj_cmd(struct mlx5dv_devx_obj *handle, cmd_kind expected,
                 const void *in, size_t inlen, void *out, size_t outlen)
{
    emu_state &s = state();
    guard g(s.lock);
    devx_obj *obj = find<devx_obj>(s, handle);
    fw_result result;

    if (obj == nullptr) {
        return EINVAL;
    }

    if (!mailbox_sizes_valid(inlen, outlen)) {
        return EINVAL;
    }

    mailbox inbox(in, inlen), outbox(outlen);
    if ((classify(inbox.opcode()) != expected) ||
        !cmd_names_obj(inbox, obj)) {
        return EINVAL;
    }

    result = fw_object_cmd(s, obj->ctx, obj->qp, obj->rmp,
                           expected == cmd_kind::OBJ_MODIFY, inbox, outbox);

    outbox.copy_to(out, outlen);
    return (result.status == UCT_IB_EMU_FW_OK) ? 0 : EREMOTEIO;
}

/* mlx5dv_devx_qp_modify/query: a DevX command on a QP made through verbs,
 * which stays a verbs QP in the verbs state the command leaves */
int devx_qp_cmd(struct ibv_qp *ibqp, cmd_kind expected, const void *in,
                size_t inlen, void *out, size_t outlen)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find<qp>(s, ibqp);
    fw_result result;
    context *ctx;
    int err;

    if ((q == nullptr) || q->devx) {
        return EINVAL;
    }

    err = devx_context(s, ibqp->context, &ctx);
    if (err != 0) {
        return err;
    }

    if (!mailbox_sizes_valid(inlen, outlen)) {
        return EINVAL;
    }

    mailbox inbox(in, inlen), outbox(outlen);
    if ((classify(inbox.opcode()) != expected) ||
        (qp_cmd_qpn(inbox) != q->qpn)) {
        return EINVAL;
    }

    result = fw_object_cmd(s, ctx, q, nullptr,
                           expected == cmd_kind::OBJ_MODIFY, inbox, outbox);
    q->ibv.state = verbs_qp_state(q->state);

    outbox.copy_to(out, outlen);
    return (result.status == UCT_IB_EMU_FW_OK) ? 0 : EREMOTEIO;
}

} // namespace

int emu_devx_qp_modify(struct ibv_qp *qp, const void *in, size_t inlen,
                       void *out, size_t outlen)
{
    return devx_qp_cmd(qp, cmd_kind::OBJ_MODIFY, in, inlen, out, outlen);
}

int emu_devx_qp_query(struct ibv_qp *qp, const void *in, size_t inlen,
                      void *out, size_t outlen)
{
    return devx_qp_cmd(qp, cmd_kind::OBJ_QUERY, in, inlen, out, outlen);
}

int emu_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in,
                        size_t inlen, void *out, size_t outlen)
{
    return devx_obj_cmd(obj, cmd_kind::OBJ_MODIFY, in, inlen, out, outlen);
}

int emu_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in,
                       size_t inlen, void *out, size_t outlen)
{
    return devx_obj_cmd(obj, cmd_kind::OBJ_QUERY, in, inlen, out, outlen);
}

int emu_devx_obj_destroy(struct mlx5dv_devx_obj *handle)
{
    return with_object<devx_obj>(handle, [](emu_state &s, devx_obj *obj) {
        /* The kernel issues the destroy command it saved at creation */
        fw_result result = fw_destroy_cmd(s, obj);

        if (result.status != UCT_IB_EMU_FW_OK) {
            return uct_ib_emu_fw_status_errno(result.status);
        }
        devx_obj_destroy_locked(s, obj);
        return 0;
    });
}


/* ------------------------------------------------------------------------
 * umem
 */

struct mlx5dv_devx_umem *emu_devx_umem_reg(struct ibv_context *ibctx,
                                           void *addr, size_t size,
                                           uint32_t access)
{
    emu_state &s = state();
    guard g(s.lock);
    std::unique_ptr<umem> u;
    fw_result result;
    context *ctx;
    int err;

    err = devx_context(s, ibctx, &ctx);
    if (err != 0) {
        return fail_ptr<struct mlx5dv_devx_umem>(err);
    }

    if ((size == 0) || (reinterpret_cast<uintptr_t>(addr) + size <
                        reinterpret_cast<uintptr_t>(addr))) {
        return fail_ptr<struct mlx5dv_devx_umem>(EINVAL);
    }

    if (addr == nullptr) {
        return fail_ptr<struct mlx5dv_devx_umem>(EFAULT);
    }

    err = check_access_flags(static_cast<int>(access));
    if (err != 0) {
        return fail_ptr<struct mlx5dv_devx_umem>(err);
    }

    result = fw_umem_create_cmd(s, ctx);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return fail_ptr<struct mlx5dv_devx_umem>(
                uct_ib_emu_fw_status_errno(result.status));
    }

    u             = std::make_unique<umem>(ctx);
    u->dv.umem_id = ctx->dev->next_umem_id++;
    u->addr       = addr;
    u->size       = size;
    u->access     = access;

    ctx->dev->umems[u->dv.umem_id] = u.get();
    register_handle(s, &u->dv, kind::UMEM, u.get());
    return &add_object(ctx, std::move(u))->dv;
}

int emu_devx_umem_dereg(struct mlx5dv_devx_umem *handle)
{
    return with_object<umem>(handle, [](emu_state &s, umem *u) {
        fw_result result = fw_umem_destroy_cmd(s, u);

        if (result.status != UCT_IB_EMU_FW_OK) {
            return uct_ib_emu_fw_status_errno(result.status);
        }
        umem_destroy_locked(s, u);
        return 0;
    });
}


/* ------------------------------------------------------------------------
 * UAR: BlueFlame registers are handed out from shared pages (two per page),
 * the non-cached page is one per context
 */

namespace {

uar_page *uar_find_page(context *ctx, bool nc)
{
    for (const auto &entry : ctx->objects) {
        uar_page *page = dynamic_cast<uar_page*>(entry.first);

        if ((page == nullptr) || (page == ctx->drv_uar) || (page->nc != nc)) {
            continue;
        }

        if (nc || (page->bf_used != (1u << UAR_BF_REGS) - 1)) {
            return page;
        }
    }

    return nullptr;
}

} // namespace

struct mlx5dv_devx_uar *emu_devx_alloc_uar(struct ibv_context *ibctx,
                                           uint32_t flags)
{
    emu_state &s = state();
    guard g(s.lock);
    std::unique_ptr<uar> u;
    uar_page *page;
    context *ctx;
    bool nc;
    int err;

    err = devx_context(s, ibctx, &ctx);
    if (err != 0) {
        return fail_ptr<struct mlx5dv_devx_uar>(err);
    }

    if ((flags != MLX5DV_UAR_ALLOC_TYPE_BF) &&
        (flags != MLX5DV_UAR_ALLOC_TYPE_NC)) {
        return fail_ptr<struct mlx5dv_devx_uar>(EINVAL);
    }

    nc   = (flags == MLX5DV_UAR_ALLOC_TYPE_NC);
    page = uar_find_page(ctx, nc);
    if (page == nullptr) {
        page = uar_page_alloc(ctx, nc);
        if (page == nullptr) {
            return fail_ptr<struct mlx5dv_devx_uar>(ENOMEM);
        }
    }

    u       = std::make_unique<uar>(ctx);
    u->page = page;
    if (!nc) {
        while (page->bf_used & (1u << u->bf_index)) {
            ++u->bf_index;
        }
        page->bf_used |= 1u << u->bf_index;
    }
    ++page->refs;

    u->dv.reg_addr  = page->mem.bytes() + UAR_BF_OFFSET +
                      u->bf_index * UAR_BF_REG_SIZE;
    u->dv.base_addr = page->mem.get();
    u->dv.page_id   = page->page_id;
    u->dv.mmap_off  = static_cast<off_t>(page->page_id) * HW_PAGE_SIZE;
    u->dv.comp_mask = 0;

    register_handle(s, &u->dv, kind::UAR, u.get());
    return &add_object(ctx, std::move(u))->dv;
}

void emu_devx_free_uar(struct mlx5dv_devx_uar *handle)
{
    emu_state &s = state();
    guard g(s.lock);
    uar *u = find<uar>(s, handle);

    if (u == nullptr) {
        ucs_error("emu: mlx5dv_devx_free_uar(%p): not a UAR", handle);
        return;
    }

    uar_destroy_locked(s, u);
}


int emu_devx_query_eqn(struct ibv_context *ibctx, uint32_t vector,
                       uint32_t *eqn)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx;
    int err;

    err = devx_context(s, ibctx, &ctx);
    if (err != 0) {
        return err;
    }

    if (vector >= static_cast<uint32_t>(ctx->ibv.num_comp_vectors)) {
        return EINVAL;
    }

    /* Completion EQs follow the device's async and command EQs */
    *eqn = 0x7 + vector;
    return 0;
}

} // namespace uct_ib_emu
