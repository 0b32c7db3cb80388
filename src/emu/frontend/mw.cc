/*
 * Memory windows (ibv_alloc_mw, ibv_bind_mw, ibv_dealloc_mw) as the mlx5
 * provider gives them: a window is a key of the device's mkey space in a
 * PD; a type 1 window is bound by ibv_bind_mw, which posts the bind as a
 * UMR WQE on the QP and takes the window's next key (ibv_inc_rkey), a type 2
 * window by the program's own IBV_WR_BIND_MW; the engine executes the WQE
 * in order (engine/mw.cc).
 */
#include <emu/fabric/host_topology.h>
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>

namespace uct_ib_emu {

struct ibv_mw *mw_alloc(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
    emu_state &s = state();
    guard g(s.lock);
    pd *p = find<pd>(s, ibpd);

    if ((p == nullptr) ||
        ((type != IBV_MW_TYPE_1) && (type != IBV_MW_TYPE_2))) {
        return fail_ptr<struct ibv_mw>(EINVAL);
    }

    auto w         = std::make_unique<mw>(p->ctx);
    w->pd          = p;
    w->index       = alloc_mkey_index(p->ctx->dev);
    w->ibv.context = &p->ctx->ibv;
    w->ibv.pd      = ibpd;
    w->ibv.rkey    = (w->index << 8) | ((w->index * 37) & 0xff);
    w->ibv.handle  = w->index;
    w->ibv.type    = type;
    ++p->refs;
    p->ctx->dev->mws[w->index] = w.get();
    register_handle(s, &w->ibv, kind::MW, w.get());
    return &add_object(p->ctx, std::move(w))->ibv;
}

int mw_dealloc(struct ibv_mw *ibmw)
{
    return with_object<mw>(ibmw, [](emu_state &s, mw *w) {
        mw_destroy_locked(s, w); /* a bound window is invalidated with it */
        return 0;
    });
}

int mw_bind(struct ibv_qp *ibqp, struct ibv_mw *ibmw, struct ibv_mw_bind *bind)
{
    const struct ibv_mw_bind_info *info = &bind->bind_info;
    struct ibv_send_wr wr = {}, *bad = nullptr;
    int ret;

    if ((ibmw->type != IBV_MW_TYPE_1) ||
        ((info->mr == nullptr) && ((info->addr != 0) || (info->length != 0))) ||
        (info->mw_access_flags & IBV_ACCESS_ZERO_BASED)) {
        return EINVAL;
    }
    if ((info->mr != nullptr) && (info->mr->pd != ibmw->pd)) {
        return EPERM;
    }

    wr.wr_id             = bind->wr_id;
    wr.opcode            = IBV_WR_BIND_MW;
    wr.send_flags        = bind->send_flags;
    wr.bind_mw.mw        = ibmw;
    wr.bind_mw.rkey      = ibv_inc_rkey(ibmw->rkey);
    wr.bind_mw.bind_info = *info;
    ret = emu_post_send(ibqp, &wr, &bad);
    if (ret != 0) {
        return ret;
    }
    ibmw->rkey = wr.bind_mw.rkey;
    return 0;
}

} // namespace uct_ib_emu
