/*
 * Memory windows as the device executes their UMR WQEs, in order with the
 * QP's other work: a bind gives the window a range of an MR (which must
 * allow binds and lie in the QP's PD), its remote rights and a new key; a
 * free (LOCAL_INV of a type 2 window) and a SEND_INVAL from the peer take
 * it back. A type 2 window serves only the QP it was bound on. What the
 * PRM calls a bind error completes with MW_BIND_ERR.
 */
#include <emu/engine/engine.h>

namespace uct_ib_emu {

namespace {

void unbind(mw *w)
{
    if (w->target != nullptr) {
        --w->target->mw_refs;
    }
    w->bound  = false;
    w->target = nullptr;
}

int remote_rights(uint8_t access_flags)
{
    return ((access_flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE) ?
            IBV_ACCESS_REMOTE_WRITE : 0) |
           ((access_flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ) ?
            IBV_ACCESS_REMOTE_READ : 0) |
           ((access_flags & MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC) ?
            IBV_ACCESS_REMOTE_ATOMIC : 0);
}

} // namespace

uint8_t mw_execute(emu_state &, qp *q, const send_wqe &wqe)
{
    device *dev     = q->ctx->dev;
    const uint32_t key = be32toh(wqe.imm);
    auto it         = dev->mws.find(key >> 8);
    mw *w;

    if (it == dev->mws.end()) {
        return MLX5_CQE_SYNDROME_MW_BIND_ERR;
    }
    w = it->second;
    if (w->pd != q->pd) {
        return MLX5_CQE_SYNDROME_MW_BIND_ERR;
    }

    if (wqe.umr.free) { /* LOCAL_INV of a type 2 window by its key */
        if ((w->ibv.type != IBV_MW_TYPE_2) || !w->bound || (w->key != key)) {
            return MLX5_CQE_SYNDROME_MW_BIND_ERR;
        }
        unbind(w);
        return 0;
    }

    /* a type 2 window is invalidated before it is bound again */
    if ((w->ibv.type == IBV_MW_TYPE_2) && w->bound) {
        return MLX5_CQE_SYNDROME_MW_BIND_ERR;
    }

    if (wqe.umr.length == 0) { /* a type 1 window's unbind */
        unbind(w);
        w->key = key;
        return 0;
    }

    const mr *m = find_mr_by_key(dev, wqe.umr.mr_lkey);
    const int rights = remote_rights(wqe.umr.access);
    if ((m == nullptr) || (m->pd != q->pd) ||
        !(m->access & IBV_ACCESS_MW_BIND) || (m->on_dm != nullptr)) {
        return MLX5_CQE_SYNDROME_MW_BIND_ERR;
    }
    const uint64_t start = reinterpret_cast<uintptr_t>(m->ibv.addr);
    if ((wqe.umr.start < start) ||
        (wqe.umr.start - start > m->ibv.length) ||
        (wqe.umr.length > m->ibv.length - (wqe.umr.start - start)) ||
        ((rights & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
         !(m->access & IBV_ACCESS_LOCAL_WRITE))) {
        return MLX5_CQE_SYNDROME_MW_BIND_ERR;
    }

    unbind(w);
    w->bound  = true;
    w->key    = key;
    w->target = const_cast<mr*>(m);
    w->start  = wqe.umr.start;
    w->length = wqe.umr.length;
    w->access = rights;
    w->qpn    = (w->ibv.type == IBV_MW_TYPE_2) ? q->qpn : 0;
    ++w->target->mw_refs;
    return 0;
}

bool mw_invalidate_remote(emu_state &, qp *dst, uint32_t rkey)
{
    auto it = dst->ctx->dev->mws.find(rkey >> 8);

    if ((it == dst->ctx->dev->mws.end()) ||
        (it->second->ibv.type != IBV_MW_TYPE_2) || !it->second->bound ||
        (it->second->key != rkey) || (it->second->qpn != dst->qpn)) {
        return false;
    }
    unbind(it->second);
    return true;
}

} // namespace uct_ib_emu
