/*
 * DevX XRQs as the firmware executes them: CREATE_XRQ and DESTROY_XRQ. An
 * XRQ is a shared receive queue (its work queue as an RMP's, rmp.cc) whose
 * receives and list operations complete on a CQ of its own (xrqc.cqn). With
 * the tag-matching topology it keeps a matching list of
 * 2^log_matching_list_sz tagged buffers, which the TAG_MATCHING WQEs of a QP
 * served by it change and incoming messages consume
 * (engine/tag_matching.cc); rendezvous offload lets the device read a
 * matched rendezvous's data itself. The device advertises tag matching and
 * rendezvous offload on RC only. A striding (multi-packet) XRQ takes a
 * stride per packet of what it receives into its WQEs, each WQE a data
 * segment per stride (ext_stride_num_range: 8 strides and more).
 */
#include <emu/firmware/devx.h>


namespace uct_ib_emu {

namespace prm = uct_mlx5_prm;

namespace {

template <typename F>
uint64_t get(const uint32_t *buf)
{
    return uct_mlx5_prm_get<F>(buf);
}

size_t count_xrqs(const device *dev)
{
    size_t n = 0;

    for (const auto &entry : dev->srqs) {
        n += entry.second->xrq;
    }
    return n;
}

} // namespace


fw_result xrq_create_cmd(context *ctx, const mailbox &in, mailbox &out,
                         srq **xrq_p)
{
    static const wq_syndromes syn = {
        UCT_IB_EMU_SYND_CREATE_XRQ_BAD_WQ_TYPE,
        UCT_IB_EMU_SYND_CREATE_XRQ_BAD_PD,
        UCT_IB_EMU_SYND_CREATE_XRQ_LOG_WQ_SZ,
        UCT_IB_EMU_SYND_CREATE_XRQ_LOG_WQ_STRIDE,
        UCT_IB_EMU_SYND_CREATE_XRQ_LWM,
        UCT_IB_EMU_SYND_CREATE_XRQ_BAD_WQ_UMEM,
        UCT_IB_EMU_SYND_CREATE_XRQ_WQ_UMEM_SIZE,
        UCT_IB_EMU_SYND_CREATE_XRQ_BAD_DBR_UMEM,
        UCT_IB_EMU_SYND_CREATE_XRQ_DBR_ADDR,
        UCT_IB_EMU_SYND_CREATE_XRQ_LIMIT,
        UCT_IB_EMU_SYND_CREATE_XRQ_STRIDES
    };
    device *dev = ctx->dev;
    const uint32_t *xrqc;
    unsigned topology, offload, log_list;
    std::unique_ptr<srq> q;
    fw_result result;
    cq *c;

    result = check_mailboxes<prm::create_xrq_in::layout,
                             prm::create_xrq_out::layout>(in, out);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    xrqc     = sub<prm::create_xrq_in::xrq_context>(in.dw());
    topology = get<prm::xrqc::topology>(xrqc);
    offload  = get<prm::xrqc::offload>(xrqc);
    log_list = get<prm::xrqc::log_matching_list_sz>(xrqc);
    if ((topology != UCT_MLX5_XRQC_TOPOLOGY_NO_SPECIAL) &&
        (topology != UCT_MLX5_XRQC_TOPOLOGY_TAG_MATCHING)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_TOPOLOGY);
    }
    if (((offload != 0) && (offload != UCT_MLX5_XRQC_OFFLOAD_RNDV)) ||
        ((offload != 0) &&
         (topology != UCT_MLX5_XRQC_TOPOLOGY_TAG_MATCHING))) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_OFFLOAD);
    }
    if (get<prm::xrqc::dc>(xrqc)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_DC);
    }
    if ((topology == UCT_MLX5_XRQC_TOPOLOGY_TAG_MATCHING) &&
        ((log_list == 0) || (log_list > LOG_TAG_MATCHING_LIST_SZ))) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_LIST_SZ);
    }
    c = lookup(dev->cqs, get<prm::xrqc::cqn>(xrqc), ctx);
    if (c == nullptr) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_BAD_CQ);
    }
    if (count_xrqs(dev) >= (1u << LOG_MAX_XRQ)) {
        return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_LIMIT);
    }

    result = wq_srq_create(ctx, sub<prm::xrqc::wq>(xrqc), syn, &q);
    if (result.status != UCT_IB_EMU_FW_OK) {
        return result;
    }

    q->xrq          = true;
    q->xrq_cq       = c;
    q->tag_matching = (topology == UCT_MLX5_XRQC_TOPOLOGY_TAG_MATCHING);
    if (q->tag_matching) {
        q->tm.entries.resize(size_t(1) << log_list);
        q->tm.append_next = static_cast<uint16_t>(
                get<prm::xrqc::append_next_index>(xrqc));
        q->tm.rndv        = (offload == UCT_MLX5_XRQC_OFFLOAD_RNDV);
        if (q->tm.append_next >= q->tm.entries.size()) {
            return fw_fail(UCT_IB_EMU_SYND_CREATE_XRQ_LIST_SZ);
        }
    }
    c->receives = true;
    ++c->refs;
    wq_srq_install(q.get());

    put<prm::create_xrq_out::xrqn>(out.dw(), q->srqn);
    uct_ib_emu_debug("%s: created DevX xrq 0x%x: %s, %u WQEs of %u bytes "
                     "(%u strides of %u bytes), cq 0x%x, %zu tags%s",
                     dev->name.c_str(), q->srqn,
                     (q->wq_type == UCT_MLX5_WQ_TYPE_CYCLIC) ? "cyclic" :
                                                               "linked list",
                     q->wqe_cnt, q->stride, q->mp_strides, q->mp_stride_bytes,
                     c->cqn, q->tm.entries.size(),
                     q->tm.rndv ? ", rendezvous offload" : "");
    *xrq_p = add_object(ctx, std::move(q));
    return FW_OK;
}

fw_result xrq_destroy_cmd(const srq *xrq)
{
    return (xrq->refs > 0) ? fw_fail(UCT_IB_EMU_SYND_DESTROY_XRQ_IN_USE) :
                             FW_OK;
}

} // namespace uct_ib_emu
