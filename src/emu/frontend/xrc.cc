/*
 * XRC domains and XRC SRQs (ibv_open_xrcd, ibv_close_xrcd,
 * ibv_create_srq_ex, ibv_get_srq_num), as the mlx5 provider and the kernel
 * give them. A domain opened on a file is shared by every open of that file
 * on the device (O_CREAT makes it, O_EXCL refuses one that exists); without
 * a file each open is a domain of its own. The processes of one machine
 * would share a file's domain; here each process is a host of its own, so
 * the sharing is within a process. An XRC SRQ belongs to a domain and
 * completes its receives on a CQ of its own; XRC target QPs of the same
 * domain take their messages' WQEs from it (engine/responder.cc).
 */
#include <emu/frontend/frontend.h>

#include <fcntl.h>
#include <sys/stat.h>

namespace uct_ib_emu {

namespace {

/* The domain of an open file on the device, or 0 */
uint64_t file_domain(const emu_state &s, const device *dev, dev_t fdev,
                     ino_t ino)
{
    for (const auto &h : s.handles) {
        if (h.second.type != kind::XRCD) {
            continue;
        }
        const xrcd *x = static_cast<const xrcd*>(h.second.obj);
        if ((x->ctx->dev == dev) && (x->file_ino == ino) &&
            (x->file_dev == fdev) && (ino != 0)) {
            return x->domain;
        }
    }
    return 0;
}

} // namespace

struct ibv_xrcd *xrcd_open(struct ibv_context *ibctx,
                           struct ibv_xrcd_init_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);

    if ((ctx == nullptr) || (attr == nullptr) ||
        (attr->comp_mask & ~uint32_t(IBV_XRCD_INIT_ATTR_FD |
                                     IBV_XRCD_INIT_ATTR_OFLAGS |
                                     IBV_XRCD_INIT_ATTR_RESERVED))) {
        return fail_ptr<struct ibv_xrcd>(EINVAL);
    }
    auto x         = std::make_unique<xrcd>(ctx);
    x->ibv.context = ibctx;

    if ((attr->comp_mask & IBV_XRCD_INIT_ATTR_FD) && (attr->fd != -1)) {
        const int oflags = (attr->comp_mask & IBV_XRCD_INIT_ATTR_OFLAGS) ?
                           attr->oflags : 0;
        struct stat st;

        if (fstat(attr->fd, &st) != 0) {
            return fail_ptr<struct ibv_xrcd>(EBADF);
        }
        x->file_dev = st.st_dev;
        x->file_ino = st.st_ino;
        x->domain   = file_domain(s, ctx->dev, st.st_dev, st.st_ino);
        if ((x->domain != 0) && (oflags & O_EXCL)) {
            return fail_ptr<struct ibv_xrcd>(EEXIST);
        }
        if ((x->domain == 0) && !(oflags & O_CREAT)) {
            return fail_ptr<struct ibv_xrcd>(ENOENT);
        }
    }
    if (x->domain == 0) {
        x->domain = ctx->dev->next_xrc_domain++;
    }
    register_handle(s, &x->ibv, kind::XRCD, x.get());
    return &add_object(ctx, std::move(x))->ibv;
}

int xrcd_close(struct ibv_xrcd *ibxrcd)
{
    return with_object<xrcd>(ibxrcd, [](emu_state &s, xrcd *x) {
        if (x->refs > 0) {
            return EBUSY; /* SRQs or target QPs in it */
        }
        xrcd_destroy_locked(s, x);
        return 0;
    });
}

struct ibv_srq *srq_create_ex(struct ibv_context *ibctx,
                              struct ibv_srq_init_attr_ex *attr)
{
    constexpr uint32_t known = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
                               IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
    constexpr uint32_t xrc   = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
                               IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    struct ibv_srq_init_attr basic = {};
    enum ibv_srq_type type         = IBV_SRQT_BASIC;
    xrcd *x                        = nullptr;
    cq *c                          = nullptr;
    pd *p;
    srq *q;

    if ((ctx == nullptr) || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD)) {
        return fail_ptr<struct ibv_srq>(EINVAL);
    }
    if (attr->comp_mask & ~known) {
        return fail_ptr<struct ibv_srq>(EOPNOTSUPP); /* tag matching */
    }
    if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) {
        type = attr->srq_type;
    }
    if (type == IBV_SRQT_XRC) {
        if ((attr->comp_mask & xrc) != xrc) {
            return fail_ptr<struct ibv_srq>(EINVAL);
        }
        x = find<xrcd>(s, attr->xrcd);
        c = find<cq>(s, attr->cq);
        if ((x == nullptr) || (c == nullptr) || (x->ctx != ctx) ||
            (c->ctx != ctx)) {
            return fail_ptr<struct ibv_srq>(EINVAL);
        }
    } else if (type != IBV_SRQT_BASIC) {
        return fail_ptr<struct ibv_srq>(EOPNOTSUPP);
    }

    p = find<pd>(s, attr->pd);
    if ((p == nullptr) || (p->ctx != ctx)) {
        return fail_ptr<struct ibv_srq>(EINVAL);
    }

    basic.srq_context = attr->srq_context;
    basic.attr        = attr->attr;
    q = srq_create_locked(s, p, &basic);
    if (q == nullptr) {
        return nullptr;
    }
    attr->attr = basic.attr;
    if (x != nullptr) {
        q->xrcd   = x;
        q->xrc_cq = c;
        c->receives = true;
        ++x->refs;
        ++c->refs;
    }
    return &q->ibv;
}

int srq_get_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
    return with_object<srq>(ibsrq, [&](emu_state &, srq *q) {
        if (q->xrcd == nullptr) {
            return EOPNOTSUPP; /* only an XRC SRQ is named by its number */
        }
        *srq_num = q->srqn;
        return 0;
    });
}

} // namespace uct_ib_emu
