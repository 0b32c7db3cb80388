/*
 * The send path of verbs QPs created with send ops (the md's UMR QP):
 * indirect mkeys, the ibv_qp_ex / mlx5dv_qp_ex views, the work-request
 * builders (mlx5dv_wr_mr_list, ibv_wr_local_inv) between ibv_wr_start and
 * ibv_wr_complete, and their completions through ibv_poll_cq.
 *
 * What rdma-core checks when the batch is completed, wr_complete returns
 * (and then nothing of the batch is posted): EOPNOTSUPP for a builder the QP
 * was not created for or an MR list without IBV_SEND_INLINE, ENOMEM for a
 * list longer than the mkey or the QP's WQE can hold or a full send queue,
 * EINVAL for a bad argument or a builder outside wr_start/wr_complete. A QP
 * that is not in RTS (or ERR) takes no work: ENOMEM, as ibv_post_send.
 *
 * What the device checks, when the work request executes: it is a packet the
 * QP sends to itself (engine/delivery.cc); a dropped one stays queued, with
 * everything behind it, and is retried whenever its CQ is polled; once the QP
 * is moved to ERR they complete with IBV_WC_WR_FLUSH_ERR. A delivered one
 * binds or invalidates the mkey (firmware/umr.cc): a key that is not an
 * indirect mkey of the QP's PD, or an MR list entry outside its MR, completes
 * with IBV_WC_LOC_PROT_ERR, binding an mkey that is already bound with
 * IBV_WC_MW_BIND_ERR, and the QP moves to ERR. A successful work request
 * gives a completion if it was signaled (opcode MLX5DV_WC_UMR for an MR list,
 * IBV_WC_LOCAL_INV); an error one always does. One armed to fail
 * (uct_ib_emu_fail_wr) completes with the armed status instead of executing,
 * as an error one.
 *
 * Send queue entries are freed when the completion that covers them is
 * polled (an unsignaled one by the next completion of its QP), so a QP that
 * never asks for a completion fills up.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/host_topology.h>
#include <emu/firmware/umr.h>
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>

#include <algorithm>


namespace uct_ib_emu {

namespace {

constexpr uint32_t MKEY_FLAGS_MODELLED = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT;
constexpr uint16_t MKEY_MAX_ENTRIES    = 0xfffc;
constexpr uint32_t UMR_ACCESS_KNOWN    = ACCESS_RDMA;
/* An MR list of up to 4 entries fits any UMR WQE; a longer one needs the
 * room max_inline_data gave the WQE (16 bytes per entry after a 4-byte
 * inline header) */
constexpr unsigned UMR_MIN_KLMS        = 4;
constexpr unsigned KLM_SIZE            = 16;
constexpr unsigned INLINE_HDR_SIZE     = 4;

unsigned umr_max_klms(const qp *q)
{
    return std::max(UMR_MIN_KLMS,
                    (q->cap.max_inline_data + INLINE_HDR_SIZE) / KLM_SIZE);
}

qp *find_qp_ex(emu_state &s, struct ibv_qp_ex *qpx)
{
    qp *q = find<qp>(s, qpx);

    return ((q != nullptr) && q->qp_ex) ? q : nullptr;
}

/* Record the first error of the open batch */
void batch_fail(qp *q, int err)
{
    if (q->wr_err == 0) {
        q->wr_err = err;
    }
}

void complete(qp *q, const send_wr &wr, enum ibv_wc_status status,
              uint32_t vendor_err)
{
    bool signaled = (wr.flags & IBV_SEND_SIGNALED) || q->sq_sig_all;

    if ((status == IBV_WC_SUCCESS) && !signaled) {
        ++q->unsignaled;
        return;
    }

    qp_push_verbs_cqe(q, wr, status, vendor_err);
}

void move_to_err(qp *q)
{
    q->state     = UCT_MLX5_QP_STATE_ERR;
    q->ibv.state = IBV_QPS_ERR;
    qp_flush_verbs_sends(q);
}

/* One work request reaches the QP's send queue */
void process(emu_state &s, qp *q, const send_wr &wr)
{
    enum ibv_wc_status status;
    uint32_t           vendor_err;
    uct_ib_emu_drop_t drop;
    qp *dst = nullptr;

    if (q->state == UCT_MLX5_QP_STATE_ERR) {
        qp_push_verbs_cqe(q, wr, IBV_WC_WR_FLUSH_ERR);
        return;
    }

    if (q->stalled) {
        q->stuck.push_back(wr); /* in order, behind the dropped one */
        return;
    }

    drop = deliver(s, q, &dst);
    if ((drop == UCT_IB_EMU_DROP_NONE) && (dst != q)) {
        drop = UCT_IB_EMU_DROP_NOT_LOOPBACK;
    }

    if (drop != UCT_IB_EMU_DROP_NONE) {
        count_drop(s, q, drop);
        q->stalled = true;
        q->stuck.push_back(wr);
        return;
    }

    wr_fault fault;
    if (take_wr_fault(s, &fault)) {
        status     = fault.status;
        vendor_err = fault.vendor_err;
    } else {
        status     = umr_execute(q, wr);
        vendor_err = 0;
    }
    complete(q, wr, status, vendor_err);
    if (status != IBV_WC_SUCCESS) {
        uct_ib_emu_debug("qp 0x%x: work request 0x%lx failed: status %d",
                         q->qpn, static_cast<unsigned long>(wr.wr_id), status);
        move_to_err(q);
    }
}

/* A stalled QP retries what it is stuck on */
void retry_stalled(emu_state &s, qp *q)
{
    std::deque<send_wr> stuck;
    qp *dst = nullptr;
    uct_ib_emu_drop_t drop;

    drop = deliver(s, q, &dst);
    if ((drop != UCT_IB_EMU_DROP_NONE) || (dst != q)) {
        return; /* still dropped; counted once, when first sent */
    }

    stuck.swap(q->stuck);
    q->stalled = false;
    for (const send_wr &wr : stuck) {
        process(s, q, wr);
    }
}

/* The function pointers of the extended QP views, as rdma-core fills them
 * for the send ops the QP was created with: they reach the same model */
void qpx_wr_start(struct ibv_qp_ex *qpx)
{
    emu_wr_start(qpx);
}

int qpx_wr_complete(struct ibv_qp_ex *qpx)
{
    return emu_wr_complete(qpx);
}

void qpx_wr_abort(struct ibv_qp_ex *qpx)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find_qp_ex(s, qpx);

    if (q != nullptr) {
        q->wr_open = false;
        q->wr_err  = 0;
        q->wr_batch.clear();
        q->wr_data.clear();
    }
}

void qpx_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t rkey)
{
    emu_wr_local_inv(qpx, rkey);
}

void dvx_wr_mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *mk,
                    uint32_t access, uint16_t num_sges, struct ibv_sge *sge)
{
    emu_wr_mr_list(mqp, mk, access, num_sges, sge);
}

} // namespace


void qp_setup_send_ops(emu_state &s, qp *q, uint64_t ibv_ops, uint64_t dv_ops)
{
    q->qp_ex                 = true;
    q->ibv_send_ops          = ibv_ops;
    q->ibv_ex.wr_start       = qpx_wr_start;
    q->ibv_ex.wr_complete    = qpx_wr_complete;
    q->ibv_ex.wr_abort       = qpx_wr_abort;
    qp_setup_data_ops(q, ibv_ops);
    if (ibv_ops & IBV_QP_EX_WITH_LOCAL_INV) {
        q->ibv_ex.wr_local_inv = qpx_wr_local_inv;
    }
    if (dv_ops & MLX5DV_QP_EX_WITH_MR_LIST) {
        q->dv_ex.wr_mr_list  = dvx_wr_mr_list;
    }

    register_handle(s, &q->dv_ex, kind::QP_DV_EX, q);
}

void qp_send_state_changed(emu_state &s, qp *q, enum ibv_qp_state next)
{
    (void)s;
    if (next == IBV_QPS_ERR) {
        qp_flush_verbs_sends(q);
    } else if (next == IBV_QPS_RESET) {
        /* rdma-core cleans the QP's completions and resets its queues */
        q->stuck.clear();
        q->stalled     = false;
        q->sq_inflight = 0;
        q->unsignaled  = 0;
        q->wr_open     = false;
        q->wr_batch.clear();
        verbs_queues_reset(q);
        cq_remove_verbs_cqes(q->send_cq, q->qpn);
        cq_remove_verbs_cqes(q->recv_cq, q->qpn);
    }
}

int poll_verbs_cqes(emu_state &s, cq *c, int num, struct ibv_wc *wc)
{
    device *dev = c->ctx->dev;
    int count   = 0;

    for (const auto &entry : dev->qps) {
        qp *q = entry.second;
        if (!q->devx && (q->send_cq == c) && q->stalled &&
            (q->state != UCT_MLX5_QP_STATE_ERR)) {
            retry_stalled(s, q);
        }
    }

    while ((count < num) && !c->verbs_cqes.empty()) {
        const verbs_cqe &e = c->verbs_cqes.front();
        auto it            = dev->qps.find(e.wc.qp_num);

        if (it != dev->qps.end()) {
            qp *q          = it->second;
            q->sq_inflight = (q->sq_inflight > e.retires) ?
                             (q->sq_inflight - e.retires) : 0;
        }

        wc[count++] = e.wc;
        c->verbs_cqes.pop_front();
    }

    return count;
}


struct ibv_qp_ex *emu_qp_to_qp_ex(struct ibv_qp *ibqp)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find<qp>(s, ibqp);

    if (q == nullptr) {
        return fail_ptr<struct ibv_qp_ex>(EINVAL);
    }

    /* Like rdma-core: NULL without errno for a QP created without send ops */
    return q->qp_ex ? &q->ibv_ex : nullptr;
}

struct mlx5dv_qp_ex *emu_mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qpx)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find_qp_ex(s, qpx);

    return (q != nullptr) ? &q->dv_ex : fail_ptr<struct mlx5dv_qp_ex>(EINVAL);
}

struct mlx5dv_mkey *emu_mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    std::unique_ptr<mkey> m;
    uint32_t index, key;
    pd *p;

    p = find<pd>(s, attr->pd);
    if (p == nullptr) {
        return fail_ptr<struct mlx5dv_mkey>(EINVAL);
    }

    if (!p->ctx->devx) {
        return fail_ptr<struct mlx5dv_mkey>(EOPNOTSUPP); /* DevX only */
    }

    if (attr->create_flags != MKEY_FLAGS_MODELLED) {
        /* not indirect, or signature/crypto/tag/remote invalidate offloads
         * that are not modelled */
        return fail_ptr<struct mlx5dv_mkey>(EOPNOTSUPP);
    }

    if ((attr->max_entries == 0) || (attr->max_entries > MKEY_MAX_ENTRIES)) {
        return fail_ptr<struct mlx5dv_mkey>(EINVAL);
    }

    /* The translation list is allocated in 64-byte units of 4 entries */
    ++s.cmds[UCT_MLX5_CMD_OP_CREATE_MKEY];
    index = alloc_mkey_index(p->ctx->dev);
    key   = (index << 8) | ((index * 53) & 0xff);

    m              = std::make_unique<mkey>(p->ctx);
    m->pd          = p;
    m->max_entries = static_cast<uint16_t>((attr->max_entries + 3) & ~3u);
    m->dv.lkey     = key;
    m->dv.rkey     = key;
    attr->max_entries = m->max_entries;

    ++p->refs;
    p->ctx->dev->mkeys[index] = m.get();
    register_handle(s, &m->dv, kind::MKEY, m.get());
    uct_ib_emu_debug("%s: created indirect mkey 0x%x (%u entries)",
                     p->ctx->dev->name.c_str(), key, m->max_entries);
    return &add_object(p->ctx, std::move(m))->dv;
}

int emu_mlx5dv_destroy_mkey(struct mlx5dv_mkey *dv_mkey)
{
    return with_object<mkey>(dv_mkey, [](emu_state &s, mkey *m) {
        ++s.cmds[UCT_MLX5_CMD_OP_DESTROY_MKEY];
        mkey_destroy_locked(s, m);
        return 0;
    });
}

void emu_wr_start(struct ibv_qp_ex *qpx)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find_qp_ex(s, qpx);

    if (q == nullptr) {
        ucs_error("emu: ibv_wr_start(%p): not an extended QP", qpx);
        return;
    }

    q->wr_open = true;
    q->wr_err  = 0;
    q->wr_batch.clear();
    q->wr_data.clear();
}

void emu_wr_mr_list(struct mlx5dv_qp_ex *mqp, struct mlx5dv_mkey *dv_mkey,
                    uint32_t access_flags, uint16_t num_sges,
                    struct ibv_sge *sge)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q   = static_cast<qp*>(find_handle(s, mqp, kind::QP_DV_EX));
    mkey *m = find<mkey>(s, dv_mkey);
    send_wr wr;

    if (q == nullptr) {
        ucs_error("emu: mlx5dv_wr_mr_list(%p): not an extended QP", mqp);
        return;
    }

    if (!q->wr_open) {
        q->wr_err = EINVAL; /* reported by the next wr_complete */
        return;
    }

    if (!(q->send_ops_flags & MLX5DV_QP_EX_WITH_MR_LIST) ||
        !(q->ibv_ex.wr_flags & IBV_SEND_INLINE)) {
        batch_fail(q, EOPNOTSUPP);
        return;
    }

    if ((m == nullptr) || (num_sges == 0) || (sge == nullptr) ||
        (access_flags & ~UMR_ACCESS_KNOWN) ||
        ((access_flags & (IBV_ACCESS_REMOTE_WRITE |
                          IBV_ACCESS_REMOTE_ATOMIC)) &&
         !(access_flags & IBV_ACCESS_LOCAL_WRITE))) {
        batch_fail(q, EINVAL);
        return;
    }

    if ((num_sges > m->max_entries) || (num_sges > umr_max_klms(q))) {
        batch_fail(q, ENOMEM);
        return;
    }

    wr.op     = send_wr::MR_LIST;
    wr.wr_id  = q->ibv_ex.wr_id;
    wr.flags  = q->ibv_ex.wr_flags;
    wr.key    = m->dv.lkey;
    wr.access = access_flags;
    for (uint16_t i = 0; i < num_sges; ++i) {
        wr.sges.push_back(klm{sge[i].lkey, sge[i].addr, sge[i].length});
    }
    q->wr_batch.push_back(std::move(wr));
}

void emu_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
    emu_state &s = state();
    guard g(s.lock);
    qp *q = find_qp_ex(s, qpx);
    send_wr wr;

    if (q == nullptr) {
        ucs_error("emu: ibv_wr_local_inv(%p): not an extended QP", qpx);
        return;
    }

    if (!q->wr_open) {
        q->wr_err = EINVAL;
        return;
    }

    if (!(q->ibv_send_ops & IBV_QP_EX_WITH_LOCAL_INV)) {
        batch_fail(q, EOPNOTSUPP);
        return;
    }

    wr.op     = send_wr::LOCAL_INV;
    wr.wr_id  = q->ibv_ex.wr_id;
    wr.flags  = q->ibv_ex.wr_flags;
    wr.key    = invalidate_rkey;
    wr.access = 0;
    q->wr_batch.push_back(std::move(wr));
}

namespace {

/* wr_complete of a batch of UMR work (MR lists, local invalidations) */
int complete_umr_batch(emu_state &s, qp *q)
{
    std::vector<send_wr> batch;
    int err;

    if (!q->wr_open) {
        err       = (q->wr_err != 0) ? q->wr_err : EINVAL;
        q->wr_err = 0;
        return err;
    }

    batch.swap(q->wr_batch);
    err        = q->wr_err;
    q->wr_open = false;
    q->wr_err  = 0;
    if (err != 0) {
        return err; /* nothing of the batch is posted */
    }

    if ((q->state != UCT_MLX5_QP_STATE_RTS) &&
        (q->state != UCT_MLX5_QP_STATE_ERR)) {
        return ENOMEM;
    }

    if (q->sq_inflight + batch.size() > q->cap.max_send_wr) {
        return ENOMEM;
    }

    for (const send_wr &wr : batch) {
        ++q->sq_inflight;
        process(s, q, wr);
    }

    return 0;
}

} // namespace

int emu_wr_complete(struct ibv_qp_ex *qpx)
{
    emu_state &s = state();
    std::vector<data_wr> data;
    int err;

    {
        guard g(s.lock);
        qp *q = find_qp_ex(s, qpx);

        if (q == nullptr) {
            return EINVAL;
        }
        if (q->wr_data.empty()) {
            return complete_umr_batch(s, q);
        }

        data.swap(q->wr_data);
        err        = (!q->wr_open || !q->wr_batch.empty()) ? EINVAL :
                     q->wr_err; /* mixed with UMR work: not modelled */
        q->wr_open = false;
        q->wr_err  = 0;
        q->wr_batch.clear();
        if (err != 0) {
            return err; /* nothing of the batch is posted */
        }
    }

    /* ibv_post_send's path takes the lock itself */
    return post_data_batch(&qpx->qp_base, data);
}


} // namespace uct_ib_emu


using namespace uct_ib_emu;
