/*
 * DevX RMPs (receive memory pools) as the firmware executes them:
 * CREATE_RMP, MODIFY_RMP (the limit, lwm), QUERY_RMP and DESTROY_RMP. An
 * RMP is the shared receive queue of the QPs created with rq_type SRQ and
 * its number in qpc.srqn_rmpn_xrqn; it shares the SRQs' number space and
 * their model object (model.h: srq), with its ring and doorbell record in
 * its user's umems.
 *
 * Its WQEs are those of an SRQ: a 16-byte next segment, then scatter
 * entries up to the stride, ended early by an invalid lkey. A linked-list
 * RMP follows the next-WQE links as a verbs SRQ does; a cyclic one takes its
 * WQEs in ring order (index = counter & (size - 1)) and ignores the next
 * segment, which its user may use for its own bookkeeping. Either way the
 * doorbell record's first dword counts the WQEs posted.
 */
#include <emu/firmware/devx.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

/* A receive WQE: the next segment and at least one scatter entry */
constexpr unsigned RMP_MIN_STRIDE = sizeof(struct mlx5_wqe_srq_next_seg) +
                                    sizeof(struct mlx5_wqe_data_seg);
constexpr unsigned RMP_DBREC_SIZE  = sizeof(uint32_t);
constexpr unsigned RMP_DBREC_ALIGN = 2 * sizeof(uint32_t);

template <typename F>
uint64_t get(const uint32_t *buf)
{
    return uct_mlx5_prm_get<F>(buf);
}

template <typename F>
using wq_f = prm::at<prm::rmpc::wq, F>;

bool in_umem(const umem *u, uint64_t offset, uint64_t len)
{
    return (offset <= u->size) && (len <= u->size - offset);
}

} // namespace


uint32_t rmp_cmd_rmpn(const mailbox &in)
{
    static_assert((prm::query_rmp_in::rmpn::offset ==
                   prm::destroy_rmp_in::rmpn::offset) &&
                  (prm::modify_rmp_in::rmpn::offset ==
                   prm::destroy_rmp_in::rmpn::offset),
                  "rmpn is at the same offset in every RMP command");

    return static_cast<uint32_t>(get<prm::destroy_rmp_in::rmpn>(in.dw()));
}

fw_result wq_srq_create(context *ctx, const uint32_t *wqc,
                        const wq_syndromes &syn, std::unique_ptr<srq> *q_p)
{
    device *dev = ctx->dev;
    unsigned log_wq_sz, stride, wq_type;
    int log_strides = 0;
    bool striding;
    uint64_t wq_offset, dbr_addr, lwm;
    umem *wq_umem, *dbr_umem;
    std::unique_ptr<srq> q;
    pd *p;

    wq_type = get<prm::wq::wq_type>(wqc);
    striding = (wq_type == UCT_MLX5_WQ_TYPE_LINKED_LIST_STRIDING) ||
               (wq_type == UCT_MLX5_WQ_TYPE_CYCLIC_STRIDING);
    if (((wq_type != UCT_MLX5_WQ_TYPE_LINKED_LIST) &&
         (wq_type != UCT_MLX5_WQ_TYPE_CYCLIC) && !striding) ||
        (striding && (syn.strides == 0))) {
        return fw_fail(syn.wq_type);
    }

    p = lookup(dev->pds, get<prm::wq::pd>(wqc), ctx);
    if (p == nullptr) {
        return fw_fail(syn.pd);
    }

    log_wq_sz = get<prm::wq::log_wq_sz>(wqc);
    if (log_wq_sz > LOG_MAX_SRQ_SZ) {
        return fw_fail(syn.log_wq_sz);
    }

    stride = 1u << get<prm::wq::log_wq_stride>(wqc);
    if ((stride < RMP_MIN_STRIDE) || (stride > MAX_WQE_SZ_RQ)) {
        return fw_fail(syn.log_wq_stride);
    }

    if (striding) {
        /* 2^(9 + n) strides, n a 4-bit two's complement number
         * (ext_stride_num_range: 8 strides and more), each of
         * 2^(6 + m) bytes; a WQE holds a data segment per stride */
        int n = static_cast<int>(
                get<prm::wq::single_wqe_log_num_of_strides>(wqc));

        log_strides = 9 + ((n >= 8) ? (n - 16) : n);
        if ((log_strides < 3) ||
            (stride < sizeof(struct mlx5_wqe_srq_next_seg) +
                      (sizeof(struct mlx5_wqe_data_seg) << log_strides))) {
            return fw_fail(syn.strides);
        }
    }

    lwm = get<prm::wq::lwm>(wqc);
    if (lwm >= (1u << log_wq_sz)) {
        return fw_fail(syn.lwm);
    }

    /* The ring and the doorbell record are in umems (the kernel has set
     * wq_umem_valid and dbr_umem_valid) */
    wq_umem = lookup(dev->umems, get<prm::wq::wq_umem_id>(wqc), ctx);
    if (wq_umem == nullptr) {
        return fw_fail(syn.wq_umem);
    }
    wq_offset = get<prm::wq::wq_umem_offset>(wqc);
    if (!in_umem(wq_umem, wq_offset, uint64_t(stride) << log_wq_sz)) {
        return fw_fail(syn.wq_umem_size);
    }

    dbr_umem = lookup(dev->umems, get<prm::wq::dbr_umem_id>(wqc), ctx);
    if (dbr_umem == nullptr) {
        return fw_fail(syn.dbr_umem);
    }
    dbr_addr = get<prm::wq::dbr_addr>(wqc);
    if ((dbr_addr % RMP_DBREC_ALIGN) ||
        !in_umem(dbr_umem, dbr_addr, RMP_DBREC_SIZE)) {
        return fw_fail(syn.dbr_addr);
    }

    if (dev->srqs.size() >= (1u << LOG_MAX_RMP)) {
        return fw_fail(syn.limit);
    }

    q                 = std::make_unique<srq>(ctx);
    q->devx           = true;
    q->pd             = p;
    q->srqn           = dev->next_srqn++;
    /* a striding queue takes its WQEs as its plain kind does */
    if (wq_type == UCT_MLX5_WQ_TYPE_CYCLIC_STRIDING) {
        wq_type = UCT_MLX5_WQ_TYPE_CYCLIC;
    } else if (wq_type == UCT_MLX5_WQ_TYPE_LINKED_LIST_STRIDING) {
        wq_type = UCT_MLX5_WQ_TYPE_LINKED_LIST;
    }
    q->wq_type        = static_cast<uint8_t>(wq_type);
    if (striding) {
        q->mp_strides      = 1u << log_strides;
        q->mp_stride_bytes = 1u << (6 + get<prm::wq::
                                         single_stride_log_num_of_bytes>(wqc));
    }
    q->wqe_cnt        = 1u << log_wq_sz;
    q->stride         = stride;
    q->max_sge        = (stride - sizeof(struct mlx5_wqe_srq_next_seg)) /
                        sizeof(struct mlx5_wqe_data_seg);
    q->lwm            = static_cast<uint16_t>(lwm);
    q->wq_umem        = wq_umem;
    q->wq_umem_offset = wq_offset;
    q->dbr_umem       = dbr_umem;
    q->dbr_offset     = dbr_addr;
    *q_p              = std::move(q);
    return FW_OK;
}

void wq_srq_install(srq *q)
{
    ++q->pd->refs;
    ++q->wq_umem->refs;
    ++q->dbr_umem->refs;
    q->ctx->dev->srqs[q->srqn] = q;
}

fw_result rmp_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         srq **rmp_p)
{
    static const wq_syndromes syn = {
        UCT_IB_EMU_SYND_CREATE_RMP_BAD_WQ_TYPE,
        UCT_IB_EMU_SYND_CREATE_RMP_BAD_PD,
        UCT_IB_EMU_SYND_CREATE_RMP_LOG_WQ_SZ,
        UCT_IB_EMU_SYND_CREATE_RMP_LOG_WQ_STRIDE,
        UCT_IB_EMU_SYND_CREATE_RMP_LWM,
        UCT_IB_EMU_SYND_CREATE_RMP_BAD_WQ_UMEM,
        UCT_IB_EMU_SYND_CREATE_RMP_WQ_UMEM_SIZE,
        UCT_IB_EMU_SYND_CREATE_RMP_BAD_DBR_UMEM,
        UCT_IB_EMU_SYND_CREATE_RMP_DBR_ADDR,
        UCT_IB_EMU_SYND_CREATE_RMP_LIMIT,
        uct_ib_emu_syndrome_t(0) /* no striding RMPs */
    };
    const uint32_t *rmpc;
    std::unique_ptr<srq> q;
    fw_result result;

    result = check_mailboxes<prm::create_rmp_in::layout,
                             prm::create_rmp_out::layout>(in, out);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    rmpc = sub<prm::create_rmp_in::rmp_context>(in.dw());
    if (get<prm::rmpc::state>(rmpc) != UCT_MLX5_RMPC_STATE_RDY) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_RMP_BAD_STATE);
    }
    if (get<prm::rmpc::basic_cyclic_rcv_wqe>(rmpc)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_RMP_BASIC_CYCLIC);
    }

    result = wq_srq_create(ctx, sub<prm::rmpc::wq>(rmpc), syn, &q);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    wq_srq_install(q.get());
    put<prm::create_rmp_out::rmpn>(out.dw(), q->srqn);
    uct_ib_emu_debug("%s: created DevX rmp 0x%x: %s, %u WQEs of %u bytes",
                     ctx->dev->name.c_str(), q->srqn,
                     (q->wq_type == UCT_MLX5_WQ_TYPE_CYCLIC) ? "cyclic" :
                                                               "linked list",
                     q->wqe_cnt, q->stride);
    *rmp_p = add_object(ctx, std::move(q));
    return FW_OK;
}

fw_result rmp_modify_cmd(srq *rmp, const mailbox &in)
{
    namespace mri = prm::modify_rmp_in;
    const uint32_t *rmpc;
    uint64_t bitmask, lwm;

    if (!in.fits<mri::layout>()) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_INPUT_LEN);
    }
    if (in.op_mod() != 0) {
        return fw_fail(UCT_IB_EMU_SYND_CMD_BAD_OP_MOD);
    }
    if (get<mri::rmp_state>(in.dw()) != rmp->rmp_state) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_RMP_BAD_STATE);
    }

    rmpc = sub<mri::ctx>(in.dw());
    if (get<prm::rmpc::state>(rmpc) != UCT_MLX5_RMPC_STATE_RDY) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_RMP_NEXT_STATE);
    }

    bitmask = get<mri::bitmask>(in.dw());
    if (bitmask & ~uint64_t(UCT_MLX5_RMP_BITMASK_LWM)) {
        return fw_fail(UCT_IB_EMU_SYND_MODIFY_RMP_BITMASK);
    }

    if (bitmask & UCT_MLX5_RMP_BITMASK_LWM) {
        lwm = get<wq_f<prm::wq::lwm>>(rmpc);
        if (lwm >= rmp->wqe_cnt) {
            return fw_fail(UCT_IB_EMU_SYND_MODIFY_RMP_LWM);
        }
        rmp->lwm = static_cast<uint16_t>(lwm);
    }
    return FW_OK;
}

fw_result rmp_query_cmd(const srq *rmp, const mailbox &in, mailbox &out)
{
    uint32_t *rmpc;
    fw_result result = query_output<prm::query_rmp_in::layout,
                                    prm::query_rmp_out::layout,
                                    prm::query_rmp_out::rmp_context>(
                               in, out, &rmpc);

    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    put<prm::rmpc::state>(rmpc, rmp->rmp_state);
    put<wq_f<prm::wq::wq_type>>(rmpc, rmp->wq_type);
    put<wq_f<prm::wq::lwm>>(rmpc, rmp->lwm);
    put<wq_f<prm::wq::pd>>(rmpc, rmp->pd->pdn);
    put<wq_f<prm::wq::dbr_addr>>(rmpc, rmp->dbr_offset);
    put<wq_f<prm::wq::hw_counter>>(rmpc, rmp->exec.consumed);
    put<wq_f<prm::wq::sw_counter>>(rmpc, rmp->exec.producer_seen);
    put<wq_f<prm::wq::log_wq_stride>>(rmpc, ilog2_ceil(rmp->stride));
    put<wq_f<prm::wq::log_wq_sz>>(rmpc, ilog2_ceil(rmp->wqe_cnt));
    put<wq_f<prm::wq::dbr_umem_valid>>(rmpc, 1);
    put<wq_f<prm::wq::wq_umem_valid>>(rmpc, 1);
    put<wq_f<prm::wq::dbr_umem_id>>(rmpc, rmp->dbr_umem->dv.umem_id);
    put<wq_f<prm::wq::wq_umem_id>>(rmpc, rmp->wq_umem->dv.umem_id);
    put<wq_f<prm::wq::wq_umem_offset>>(rmpc, rmp->wq_umem_offset);
    return FW_OK;
}

fw_result rmp_destroy_cmd(const srq *rmp)
{
    return (rmp->refs > 0) ? fw_fail(UCT_IB_EMU_SYND_DESTROY_RMP_IN_USE) :
                             FW_OK;
}

} // namespace uct_ib_emu
