/*
 * Lifecycles: every object's destroy, once its destroy entry point's checks
 * passed (the entry points are the front-end's and the firmware's) or when
 * a closed context's objects are reclaimed, and the close of a context and
 * of the whole emulator. Where an SRQ's ring and doorbell record are, and
 * the verbs completions a QP leaves in its CQs.
 */
#include <emu/fabric/member.h>
#include <emu/model/events.h>


namespace uct_ib_emu {

namespace {

void devx_qp_destroy(emu_state &s, qp *q)
{
    qp_release_resources(s, q);
    remove_object(q->ctx, q);
}

void devx_rmp_destroy(srq *rmp)
{
    device *dev = rmp->ctx->dev;

    dev->srqs.erase(rmp->srqn);
    --rmp->pd->refs;
    --rmp->wq_umem->refs;
    --rmp->dbr_umem->refs;
    if (rmp->xrq_cq != nullptr) {
        --rmp->xrq_cq->refs;
    }
    uct_ib_emu_debug("%s: destroyed DevX %s 0x%x", dev->name.c_str(),
                     rmp->xrq ? "xrq" : "rmp", rmp->srqn);
    remove_object(rmp->ctx, rmp);
}

void devx_mkey_destroy(mkey *m)
{
    m->ctx->dev->mkeys.erase(m->dv.lkey >> 8);
    --m->pd->refs;
    remove_object(m->ctx, m);
}

/* Every object of type T the context still owns */
template <typename T>
std::vector<T*> objects_of(context *ctx)
{
    std::vector<T*> result;

    for (const auto &entry : ctx->objects) {
        T *obj = dynamic_cast<T*>(entry.first);
        if (obj != nullptr) {
            result.push_back(obj);
        }
    }
    return result;
}

template <typename T>
void reclaim(emu_state &s, context *ctx, void (*destroy)(emu_state&, T*))
{
    for (T *obj : objects_of<T>(ctx)) {
        ++s.objects_reclaimed;
        destroy(s, obj);
    }
}

void verbs_or_devx_qp_reclaim(emu_state &s, context *ctx)
{
    /* DevX QPs go with their DevX object, verbs QPs on their own; DevX RMPs
     * after the QPs receiving from them */
    for (devx_obj *obj : objects_of<devx_obj>(ctx)) {
        if (obj->qp != nullptr) {
            ++s.objects_reclaimed;
            devx_obj_destroy_locked(s, obj);
        }
    }
    reclaim<devx_obj>(s, ctx, devx_obj_destroy_locked);
    reclaim<qp>(s, ctx, verbs_qp_destroy_locked);
}

void ah_reclaim(emu_state &s, context *ctx)
{
    for (ah *a : objects_of<ah>(ctx)) {
        ++s.objects_reclaimed;
        ++s.ah_reclaimed;
        ah_destroy_locked(s, a);
    }
}

} // namespace


uint8_t *srq_ring(const srq *q)
{
    if (q->devx) {
        return static_cast<uint8_t*>(q->wq_umem->addr) + q->wq_umem_offset;
    }

    return q->buf.bytes();
}

const uint32_t *srq_dbrec(const srq *q)
{
    if (q->devx) {
        return reinterpret_cast<const uint32_t*>(
                static_cast<const uint8_t*>(q->dbr_umem->addr) +
                q->dbr_offset);
    }

    return static_cast<const uint32_t*>(q->dbrec.get());
}

void cq_remove_verbs_cqes(cq *c, uint32_t qpn)
{
    if (c == nullptr) {
        return;
    }

    for (auto it = c->verbs_cqes.begin(); it != c->verbs_cqes.end();) {
        it = (it->wc.qp_num == qpn) ? c->verbs_cqes.erase(it) : std::next(it);
    }
}

void verbs_qp_destroy_locked(emu_state &s, qp *q)
{
    if (q->qp_ex) {
        unregister_handle(s, &q->dv_ex);
    }
    cq_remove_verbs_cqes(q->send_cq, q->qpn);
    cq_remove_verbs_cqes(q->recv_cq, q->qpn);
    unregister_handle(s, &q->ibv);
    qp_release_resources(s, q);
    remove_object(q->ctx, q);
}

void devx_obj_destroy_locked(emu_state &s, devx_obj *obj)
{
    devx_events_release_obj(obj);
    if (obj->rmp != nullptr) {
        devx_rmp_destroy(obj->rmp);
    } else if (obj->mkey != nullptr) {
        devx_mkey_destroy(obj->mkey);
    } else {
        devx_qp_destroy(s, obj->qp);
    }
    unregister_handle(s, obj);
    remove_object(obj->ctx, obj);
}

void ah_destroy_locked(emu_state &s, ah *a)
{
    unregister_handle(s, &a->ibv);
    --a->pd->refs;
    remove_object(a->ctx, a);
}

void mr_destroy_locked(emu_state &s, mr *m)
{
    unregister_handle(s, &m->ibv);
    m->ctx->dev->mrs.erase(m->ibv.lkey >> 8);
    --m->pd->refs;
    if (m->on_dm != nullptr) {
        --m->on_dm->refs;
    }
    remove_object(m->ctx, m);
}

void mw_destroy_locked(emu_state &s, mw *w)
{
    if (w->target != nullptr) {
        --w->target->mw_refs;
    }
    unregister_handle(s, &w->ibv);
    w->ctx->dev->mws.erase(w->index);
    --w->pd->refs;
    remove_object(w->ctx, w);
}

void dm_destroy_locked(emu_state &s, dm *d)
{
    unregister_handle(s, &d->ibv);
    d->ctx->dev->dm_allocated -= d->buf.size();
    remove_object(d->ctx, d);
}

void mkey_destroy_locked(emu_state &s, mkey *m)
{
    unregister_handle(s, &m->dv);
    m->ctx->dev->mkeys.erase(m->dv.lkey >> 8);
    --m->pd->refs;
    remove_object(m->ctx, m);
}

void srq_destroy_locked(emu_state &s, srq *q)
{
    async_events_release_srq(q);
    unregister_handle(s, &q->ibv);
    q->ctx->dev->srqs.erase(q->srqn);
    --q->pd->refs;
    if (q->xrcd != nullptr) {
        --q->xrcd->refs;
        --q->xrc_cq->refs;
    }
    remove_object(q->ctx, q);
}

void xrcd_destroy_locked(emu_state &s, xrcd *x)
{
    unregister_handle(s, &x->ibv);
    remove_object(x->ctx, x);
}

void cq_destroy_locked(emu_state &s, cq *c)
{
    s.poll_wait.forget(c);
    cq_events_release(c);
    async_events_release_cq(c);
    unregister_handle(s, &c->ibv);
    c->ctx->dev->cqs.erase(c->cqn);
    remove_object(c->ctx, c);
}

void comp_channel_destroy_locked(emu_state &s, comp_channel *ch)
{
    unregister_handle(s, &ch->ibv);
    remove_object(ch->ctx, ch);
}

void uar_destroy_locked(emu_state &s, uar *u)
{
    if (!u->page->nc) {
        u->page->bf_used &= ~(1u << u->bf_index);
    }

    unregister_handle(s, &u->dv);
    uar_page_put(u->page);
    remove_object(u->ctx, u);
}

void umem_destroy_locked(emu_state &s, umem *u)
{
    unregister_handle(s, &u->dv);
    u->ctx->dev->umems.erase(u->dv.umem_id);
    remove_object(u->ctx, u);
}

void pd_destroy_locked(emu_state &s, pd *p)
{
    unregister_handle(s, &p->ibv);
    p->ctx->dev->pds.erase(p->pdn);
    remove_object(p->ctx, p);
}

context *find_context(emu_state &s, struct ibv_context *ibctx)
{
    return find<context>(s, ibctx);
}

void context_destroy_locked(emu_state &s, context *ctx)
{
    /* Users before what they use, as the kernel cleans up a closed file */
    verbs_or_devx_qp_reclaim(s, ctx);
    ah_reclaim(s, ctx);
    reclaim<mkey>(s, ctx, mkey_destroy_locked);
    reclaim<mw>(s, ctx, mw_destroy_locked);
    reclaim<mr>(s, ctx, mr_destroy_locked);
    reclaim<dm>(s, ctx, dm_destroy_locked);
    reclaim<srq>(s, ctx, srq_destroy_locked);
    reclaim<xrcd>(s, ctx, xrcd_destroy_locked);
    reclaim<cq>(s, ctx, cq_destroy_locked);
    reclaim<comp_channel>(s, ctx, comp_channel_destroy_locked);
    reclaim<uar>(s, ctx, uar_destroy_locked);
    reclaim<umem>(s, ctx, umem_destroy_locked);
    reclaim<pd>(s, ctx, pd_destroy_locked);
    uar_page_put(ctx->drv_uar);
    for (auto it = s.neigh_listeners.begin(); it != s.neigh_listeners.end();) {
        if (it->second.ctx == ctx) {
            ++s.objects_reclaimed;
            it = s.neigh_listeners.erase(it);
        } else {
            ++it;
        }
    }

    ucs_assertv(ctx->objects.empty(), "%zu objects left",
                ctx->objects.size());
    unregister_handle(s, &ctx->ibv);
    s.contexts.erase(ctx);
}

emu_state::~emu_state()
{
    while (!contexts.empty()) {
        context_destroy_locked(*this, contexts.begin()->first);
    }

    for (struct ibv_device **list : device_lists) {
        free(list);
    }

    fabric.reset(); /* leave the fabric last: QPs are gone */
}

} // namespace uct_ib_emu
