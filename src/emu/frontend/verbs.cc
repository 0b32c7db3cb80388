/*
 * Verbs objects other than QPs: protection domains, memory regions,
 * completion queues, shared receive queues, address handles, and
 * mlx5dv_init_obj. The data path is verbs_data.cc.
 */
#include <emu/fabric/host_topology.h>
#include <emu/fabric/member.h>
#include <emu/frontend/frontend.h>
#include <emu/frontend/ops.h>
#include <emu/model/events.h>
#include <emu/model/model.h>

#include <endian.h>
#include <sched.h>


namespace uct_ib_emu {




/* ------------------------------------------------------------------------
 * Protection domains
 */

struct ibv_pd *emu_alloc_pd(struct ibv_context *ibctx)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find<context>(s, ibctx);
    std::unique_ptr<pd> p;

    if (ctx == nullptr) {
        return fail_ptr<struct ibv_pd>(EINVAL);
    }

    p              = std::make_unique<pd>(ctx);
    p->pdn         = ctx->dev->next_pdn++;
    p->ibv.context = ibctx;
    p->ibv.handle  = p->pdn;

    ctx->dev->pds[p->pdn] = p.get();
    register_handle(s, &p->ibv, kind::PD, p.get());
    return &add_object(ctx, std::move(p))->ibv;
}

int emu_dealloc_pd(struct ibv_pd *ibpd)
{
    return with_object<pd>(ibpd, [](emu_state &s, pd *p) {
        if (p->refs > 0) {
            return EBUSY;
        }
        pd_destroy_locked(s, p);
        return 0;
    });
}


/* ------------------------------------------------------------------------
 * Memory regions
 */

struct ibv_mr *emu_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
                          int access)
{
    emu_state &s = state();
    guard g(s.lock);
    pd *p = find<pd>(s, ibpd);
    int err;

    if (p == nullptr) {
        return fail_ptr<struct ibv_mr>(EINVAL);
    }

    err = check_access_flags(access);
    if (err != 0) {
        return fail_ptr<struct ibv_mr>(err);
    }

    if ((length == 0) || (reinterpret_cast<uintptr_t>(addr) + length <
                          reinterpret_cast<uintptr_t>(addr))) {
        return fail_ptr<struct ibv_mr>(EINVAL);
    }

    if (addr == nullptr) {
        return fail_ptr<struct ibv_mr>(EFAULT); /* page 0 cannot be pinned */
    }

    return &mr_create_locked(s, p, addr, length, access)->ibv;
}

mr *mr_create_locked(emu_state &s, pd *p, void *addr, size_t length,
                     int access)
{
    /* mlx5 mkey: 24-bit index and an 8-bit variant; lkey == rkey */
    const uint32_t index = alloc_mkey_index(p->ctx->dev);
    const uint32_t mkey  = (index << 8) | ((index * 37) & 0xff);
    auto           m     = std::make_unique<mr>(p->ctx);

    m->pd          = p;
    m->access      = access;
    m->ibv.context = &p->ctx->ibv;
    m->ibv.pd      = &p->ibv;
    m->ibv.addr    = addr;
    m->ibv.length  = length;
    m->ibv.handle  = index;
    m->ibv.lkey    = mkey;
    m->ibv.rkey    = mkey;

    ++p->refs;
    p->ctx->dev->mrs[index] = m.get();
    register_handle(s, &m->ibv, kind::MR, m.get());
    return add_object(p->ctx, std::move(m));
}

/*
 * A registration moved, to another PD or other rights, in place: the keys
 * stay (the mlx5 driver may keep the mkey), work requests that reach the MR
 * from now on see its new range. Checked as libibverbs and the driver
 * check, all before anything changes.
 */
int emu_rereg_mr(struct ibv_mr *ibmr, int flags, struct ibv_pd *ibpd,
                 void *addr, size_t length, int access)
{
    emu_state &s = state();
    guard g(s.lock);
    mr *m = find<mr>(s, ibmr);
    pd *p = nullptr;
    int err;

    auto input_error = [](int e) {
        errno = e;
        return int(IBV_REREG_MR_ERR_INPUT);
    };

    if ((m == nullptr) || (flags == 0) ||
        (flags & ~int(IBV_REREG_MR_FLAGS_SUPPORTED))) {
        return input_error(EINVAL);
    }
    if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
        if ((m->on_dm != nullptr) || (addr == nullptr) || (length == 0) ||
            (reinterpret_cast<uintptr_t>(addr) + length <
             reinterpret_cast<uintptr_t>(addr))) {
            return input_error(EINVAL);
        }
    }
    if (flags & IBV_REREG_MR_CHANGE_PD) {
        p = find<pd>(s, ibpd);
        if ((p == nullptr) || (p->ctx != m->pd->ctx)) {
            return input_error(EINVAL);
        }
    }
    if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
        err = check_access_flags(access);
        if (err != 0) {
            errno = err;
            return IBV_REREG_MR_ERR_CMD; /* the driver refused the rights */
        }
    }

    if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
        m->ibv.addr   = addr;
        m->ibv.length = length;
    }
    if (flags & IBV_REREG_MR_CHANGE_PD) {
        --m->pd->refs;
        ++p->refs;
        m->pd     = p;
        m->ibv.pd = ibpd;
    }
    if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
        m->access = access;
    }
    return 0;
}

int emu_dereg_mr(struct ibv_mr *ibmr)
{
    return with_object<mr>(ibmr, [](emu_state &s, mr *m) {
        if (m->mw_refs > 0) {
            return EBUSY; /* memory windows are bound to it */
        }
        mr_destroy_locked(s, m);
        return 0;
    });
}


/* ------------------------------------------------------------------------
 * Completion queues
 */

struct ibv_cq *emu_create_cq(struct ibv_context *ibctx, int cqe,
                             void *cq_context,
                             struct ibv_comp_channel *channel,
                             int comp_vector)
{
    return cq_create(ibctx, cqe, cq_context, channel, comp_vector, CQE_SIZE);
}

struct ibv_cq *cq_create(struct ibv_context *ibctx, int cqe, void *cq_context,
                         struct ibv_comp_channel *channel, int comp_vector,
                         uint32_t cqe_size, bool ignore_overrun)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find<context>(s, ibctx);
    std::unique_ptr<cq> c;
    uint32_t i;

    if (ctx == nullptr) {
        return fail_ptr<struct ibv_cq>(EINVAL);
    }

    if ((cqe <= 0) || (cqe > MAX_CQE) || (comp_vector < 0) ||
        (comp_vector >= ibctx->num_comp_vectors)) {
        return fail_ptr<struct ibv_cq>(EINVAL);
    }

    comp_channel *ch = nullptr;
    if (channel != nullptr) {
        ch = find<comp_channel>(s, channel);
        if ((ch == nullptr) || (ch->ctx != ctx)) {
            return fail_ptr<struct ibv_cq>(EINVAL);
        }
    }

    c           = std::make_unique<cq>(ctx);
    c->cqe_cnt        = 1u << ilog2_ceil(static_cast<uint64_t>(cqe) + 1);
    c->cqe_size       = cqe_size;
    c->ignore_overrun = ignore_overrun;
    if (!c->buf.alloc(size_t(c->cqe_cnt) * cqe_size) ||
        !c->dbrec.alloc(2 * sizeof(uint32_t), 64)) {
        return fail_ptr<struct ibv_cq>(ENOMEM);
    }

    /* Hardware owns every entry: invalid opcode, owner bit 0 */
    for (i = 0; i < c->cqe_cnt; ++i) {
        c->buf.bytes()[(i + 1) * cqe_size - 1] = CQE_INVALID_OP_OWN;
    }

    cq_events_init(c.get());
    if (ch != nullptr) {
        c->channel = ch;
        ++ch->refs;
    }

    c->cqn            = ctx->dev->next_cqn++;
    c->ibv.context    = ibctx;
    c->ibv.cq_context = cq_context;
    c->ibv.handle     = c->cqn;
    c->ibv.cqe        = static_cast<int>(c->cqe_cnt - 1);
    c->ibv.channel    = channel;

    ctx->dev->cqs[c->cqn] = c.get();
    register_handle(s, &c->ibv, kind::CQ, c.get());
    return &add_object(ctx, std::move(c))->ibv;
}

int emu_resize_cq(struct ibv_cq *ibcq, int cqe)
{
    return with_object<cq>(ibcq, [cqe](emu_state &s, cq *c) {
        const uint32_t *dbrec = static_cast<uint32_t*>(c->dbrec.get());
        const uint32_t pi     = c->exec.pi;
        /* the consumer's index: the 24 bits of its doorbell record */
        const uint32_t ci     = pi - ((pi - dma_load_be32(
                &dbrec[UCT_MLX5_CQ_DBR_SET_CI])) & 0xffffff);
        dma_ring buf;
        uint32_t cnt;

        if ((cqe <= 0) || (cqe > MAX_CQE)) {
            return EINVAL;
        }
        cnt = 1u << ilog2_ceil(static_cast<uint64_t>(cqe) + 1);
        if ((cnt == c->cqe_cnt) && (ci == c->exec.sw_ci)) {
            return 0;
        }
        if (pi - ci > cnt) {
            return EINVAL; /* the entries not yet polled do not fit */
        }
        if (!buf.alloc(size_t(cnt) * c->cqe_size)) {
            return ENOMEM;
        }

        for (uint32_t i = 0; i < cnt; ++i) {
            buf.bytes()[(i + 1) * c->cqe_size - 1] = CQE_INVALID_OP_OWN;
        }
        /* the entries not yet polled keep their index; their owner bit is
         * the pass over the new ring */
        for (uint32_t i = ci; i != pi; ++i) {
            uint8_t *to = buf.bytes() + size_t(i & (cnt - 1)) * c->cqe_size;
            uint8_t &op_own = to[c->cqe_size - 1];

            memcpy(to, c->buf.bytes() +
                       size_t(i & (c->cqe_cnt - 1)) * c->cqe_size,
                   c->cqe_size);
            op_own = (op_own & ~MLX5_CQE_OWNER_MASK) | ((i & cnt) ? 1 : 0);
        }

        s.poll_wait.forget(c);
        c->buf        = std::move(buf);
        c->cqe_cnt    = cnt;
        c->exec.sw_ci = ci;
        c->ibv.cqe    = static_cast<int>(cnt - 1);
        return 0;
    });
}

int emu_destroy_cq(struct ibv_cq *ibcq)
{
    return with_object<cq>(ibcq, [](emu_state &s, cq *c) {
        if ((c->refs > 0) || (c->events_got > c->events_acked) ||
            (c->async_got > c->async_acked)) {
            return EBUSY; /* QPs use it, or events are not acked */
        }
        cq_destroy_locked(s, c);
        return 0;
    });
}

namespace {

int poll_cq_locked(emu_state &s, struct ibv_cq *ibcq, int num_entries,
                   struct ibv_wc *wc)
{
    cq *c = find<cq>(s, ibcq);

    if ((c == nullptr) || (num_entries < 0)) {
        errno = EINVAL;
        return -1;
    }

    /* The ring (the engine's CQEs), then the UMR send path's (umr.cc) */
    int count = poll_ring_cqes(s, c, num_entries, wc);
    return count + poll_verbs_cqes(s, c, num_entries - count, wc + count);
}

} // namespace

int emu_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
    emu_state &s = state();
    int count;

    {
        guard g(s.lock);
        count = poll_cq_locked(s, ibcq, num_entries, wc);
    }

    /* A program polling an empty CQ in a tight loop would otherwise keep
     * the model's lock from the engine that fills the CQ (the mutex is not
     * fair): let it run */
    if (count == 0) {
        sched_yield();
    }
    return count;
}


/* ------------------------------------------------------------------------
 * Shared receive queues
 */

struct ibv_srq *emu_create_srq(struct ibv_pd *ibpd,
                               struct ibv_srq_init_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    pd *p = find<pd>(s, ibpd);
    srq *q;

    if (p == nullptr) {
        return fail_ptr<struct ibv_srq>(EINVAL);
    }

    q = srq_create_locked(s, p, attr);
    return (q != nullptr) ? &q->ibv : nullptr;
}

srq *srq_create_locked(emu_state &s, pd *p, struct ibv_srq_init_attr *attr)
{
    std::unique_ptr<srq> q;

    if ((attr->attr.max_wr > uint32_t(MAX_SRQ_WR)) ||
        (attr->attr.max_sge > MAX_SRQ_SGE) ||
        (attr->attr.srq_limit > attr->attr.max_wr)) {
        return fail_ptr<srq>(EINVAL);
    }

    q          = std::make_unique<srq>(p->ctx);
    q->pd      = p;
    /* A WQE is a 16-byte next segment and the scatter list */
    q->stride  = 1u << ilog2_ceil(16 + 16 * std::max(attr->attr.max_sge, 1u));
    q->wqe_cnt = 1u << ilog2_ceil(uint64_t(attr->attr.max_wr) + 1);
    q->max_sge = (q->stride - 16) / 16;
    if (!q->buf.alloc(size_t(q->wqe_cnt) * q->stride) ||
        !q->dbrec.alloc(2 * sizeof(uint32_t), 64)) {
        return fail_ptr<srq>(ENOMEM);
    }

    srq_init_links(q.get());
    q->srqn            = p->ctx->dev->next_srqn++;
    q->ibv.context     = &p->ctx->ibv;
    q->ibv.srq_context = attr->srq_context;
    q->ibv.pd          = &p->ibv;
    q->ibv.handle      = q->srqn;

    attr->attr.max_wr  = q->wqe_cnt - 1;
    attr->attr.max_sge = q->max_sge;

    ++p->refs;
    p->ctx->dev->srqs[q->srqn] = q.get();
    register_handle(s, &q->ibv, kind::SRQ, q.get());
    return add_object(p->ctx, std::move(q));
}

int emu_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
                   int attr_mask)
{
    return with_object<srq>(ibsrq, [&](emu_state &, srq *q) {
        if (attr_mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)) {
            return EINVAL;
        }
        if (attr_mask & IBV_SRQ_MAX_WR) {
            return EINVAL; /* mlx5 cannot resize an SRQ */
        }
        if (attr_mask & IBV_SRQ_LIMIT) {
            if (attr->srq_limit > q->wqe_cnt - 1) {
                return EINVAL;
            }
            q->lwm = static_cast<uint16_t>(attr->srq_limit);
        }
        return 0;
    });
}

int emu_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
    return with_object<srq>(ibsrq, [&](emu_state &, srq *q) {
        attr->max_wr    = q->wqe_cnt - 1;
        attr->max_sge   = q->max_sge;
        attr->srq_limit = q->lwm;
        return 0;
    });
}

int emu_destroy_srq(struct ibv_srq *ibsrq)
{
    return with_object<srq>(ibsrq, [](emu_state &s, srq *q) {
        if ((q->refs > 0) || (q->async_got > q->async_acked)) {
            return EBUSY; /* QPs use it, or events are not acked */
        }
        srq_destroy_locked(s, q);
        return 0;
    });
}


/* ------------------------------------------------------------------------
 * Address handles: the mlx5 provider fills the AV in user space, and for
 * Ethernet asks the kernel, which resolves the destination MAC from its
 * neighbour table at this moment and never again.
 */

struct ibv_ah *emu_create_ah(struct ibv_pd *ibpd, struct ibv_ah_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    pd *p = find<pd>(s, ibpd);
    struct mlx5_wqe_av av = {};
    uct_ib_emu_mac_t rmac;
    const gid_slot *sgid;
    std::unique_ptr<ah> a;
    const port *prt;
    uint8_t rate;
    unsigned grh;

    if (p == nullptr) {
        return fail_ptr<struct ibv_ah>(EINVAL);
    }

    prt = p->ctx->dev->get_port(attr->port_num);
    if (prt == nullptr) {
        return nullptr; /* like mlx5: no errno for a bad port number */
    }

    /* RoCE packets always carry a GRH */
    if (!attr->is_global && prt->is_eth()) {
        return fail_ptr<struct ibv_ah>(EINVAL);
    }

    rate = static_cast<uint8_t>(attr->static_rate << 4);
    if (prt->is_eth()) {
        sgid = prt->gid(attr->grh.sgid_index);
        if (sgid == nullptr) {
            return fail_ptr<struct ibv_ah>(EINVAL);
        }

        if (sgid->type == IBV_GID_TYPE_ROCE_V2) {
            av.rlid = htobe16(roce_udp_sport(s, attr->grh.flow_label));
        }

        av.stat_rate_sl = rate | ((attr->sl & 0x7) << 1);
        grh             = 0; /* reserved on RoCE */
    } else {
        av.fl_mlid      = attr->src_path_bits & 0x7f;
        av.rlid         = htobe16(attr->dlid);
        av.stat_rate_sl = rate | (attr->sl & 0xf);
        grh             = 1;
    }

    if (attr->is_global) {
        av.tclass     = attr->grh.traffic_class;
        av.hop_limit  = attr->grh.hop_limit;
        av.grh_gid_fl = htobe32((grh << 30) |
                                ((attr->grh.sgid_index & 0xffu) << 20) |
                                (attr->grh.flow_label & 0xfffff));
        memcpy(av.rgid, attr->grh.dgid.raw, sizeof(av.rgid));
    }

    if (prt->is_eth()) {
        /* the table as it is now: a MAC moved on the fabric (ucx_emu mac)
         * is seen at once, not at the engine's next pass */
        if (s.fabric != nullptr) {
            s.fabric->sync_locked(s);
        }
        if (!neigh_resolve(s, *prt, attr->grh.dgid, &rmac)) {
            uct_ib_emu_debug("create_ah on %s:%u: no neighbour for %s",
                             p->ctx->dev->name.c_str(), prt->num,
                             gid_str(attr->grh.dgid.raw).c_str());
            return fail_ptr<struct ibv_ah>(EHOSTUNREACH);
        }
        memcpy(av.rmac, rmac.data(), sizeof(av.rmac));
    }

    a              = std::make_unique<ah>(p->ctx);
    a->pd          = p;
    a->av          = av;
    a->ibv.context = &p->ctx->ibv;
    a->ibv.pd      = ibpd;
    a->ibv.handle  = static_cast<uint32_t>(s.ah_created);

    ++p->refs;
    ++s.ah_created;
    register_handle(s, &a->ibv, kind::AH, a.get());
    return &add_object(p->ctx, std::move(a))->ibv;
}

int emu_destroy_ah(struct ibv_ah *ibah)
{
    return with_object<ah>(ibah, [](emu_state &s, ah *a) {
        ++s.ah_destroyed;
        ah_destroy_locked(s, a);
        return 0;
    });
}


/* ------------------------------------------------------------------------
 * mlx5dv_init_obj
 */

namespace {

void init_obj_qp(const qp *q, struct mlx5dv_qp *out)
{
    size_t rq_bytes = size_t(q->rq_wqe_cnt) * q->rq_stride;

    memset(out, 0, sizeof(*out));
    out->dbrec      = static_cast<__be32*>(q->dbrec.get());
    out->rq.buf     = q->wq_buf.get();
    out->rq.wqe_cnt = q->rq_wqe_cnt;
    out->rq.stride  = q->rq_stride;
    out->sq.buf     = q->wq_buf.bytes() + rq_bytes;
    out->sq.wqe_cnt = q->sq_wqe_cnt;
    out->sq.stride  = q->sq_stride;
    out->bf.reg     = q->uar->mem.bytes() + UAR_BF_OFFSET +
                      q->bf_index * UAR_BF_REG_SIZE;
    out->bf.size    = BF_BUF_SIZE;
    out->comp_mask  = 0; /* none of the optional outputs is modelled */
}

void init_obj_cq(const cq *c, struct mlx5dv_cq *out)
{
    out->buf       = c->buf.user();
    out->dbrec     = static_cast<__be32*>(c->dbrec.get());
    out->cqe_cnt   = c->cqe_cnt;
    out->cqe_size  = c->cqe_size;
    out->cq_uar    = c->ctx->drv_uar->mem.get();
    out->cqn       = c->cqn;
    out->comp_mask = 0;
}

void init_obj_srq(const srq *q, struct mlx5dv_srq *out)
{
    bool want_srqn = out->comp_mask & MLX5DV_SRQ_MASK_SRQN;

    out->buf       = q->buf.get();
    out->dbrec     = static_cast<__be32*>(q->dbrec.get());
    out->stride    = q->stride;
    out->head      = 0;
    out->tail      = q->wqe_cnt - 1;
    out->comp_mask = 0;
    if (want_srqn) {
        out->srqn       = q->srqn;
        out->comp_mask |= MLX5DV_SRQ_MASK_SRQN;
    }
}

} // namespace

int emu_mlx5dv_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)
{
    constexpr uint64_t known = MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ |
                               MLX5DV_OBJ_RWQ | MLX5DV_OBJ_DM | MLX5DV_OBJ_AH |
                               MLX5DV_OBJ_PD;
    emu_state &s = state();
    guard g(s.lock);

    if (!(obj_type & known)) {
        return EINVAL;
    }

    if (obj_type & MLX5DV_OBJ_QP) {
        qp *q = find<qp>(s, obj->qp.in);
        if (q == nullptr) {
            return EINVAL;
        }
        init_obj_qp(q, obj->qp.out);
    }

    if (obj_type & MLX5DV_OBJ_CQ) {
        cq *c = find<cq>(s, obj->cq.in);
        if (c == nullptr) {
            return EINVAL;
        }
        init_obj_cq(c, obj->cq.out);
        c->polled_in_memory = true;
    }

    if (obj_type & MLX5DV_OBJ_SRQ) {
        srq *q = find<srq>(s, obj->srq.in);
        if (q == nullptr) {
            return EINVAL;
        }
        init_obj_srq(q, obj->srq.out);
    }

    if (obj_type & MLX5DV_OBJ_RWQ) {
        return EOPNOTSUPP; /* work queues are not modelled */
    }

    if (obj_type & MLX5DV_OBJ_DM) {
        /* the device memory as mapped into the program (the BAR on
         * hardware): here the model's memory itself */
        dm *d = find<dm>(s, obj->dm.in);
        if (d == nullptr) {
            return EINVAL;
        }
        obj->dm.out->buf       = d->buf.get();
        obj->dm.out->length    = d->length;
        obj->dm.out->comp_mask = 0;
    }

    if (obj_type & MLX5DV_OBJ_AH) {
        ah *a = find<ah>(s, obj->ah.in);
        if (a == nullptr) {
            return EINVAL;
        }
        obj->ah.out->av        = &a->av;
        obj->ah.out->comp_mask = 0;
    }

    if (obj_type & MLX5DV_OBJ_PD) {
        pd *p = find<pd>(s, obj->pd.in);
        if (p == nullptr) {
            return EINVAL;
        }
        obj->pd.out->pdn       = p->pdn;
        obj->pd.out->comp_mask = 0;
    }

    return 0;
}


} // namespace uct_ib_emu
