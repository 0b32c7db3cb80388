/*
 * Device memory (ibv_alloc_dm and what goes with it), as the mlx5 provider
 * gives it: allocations of the device's memory (DEVICE_MEMORY_SIZE in all,
 * in DEVICE_MEMORY_ALIGN units), reached by the program only through
 * memcpy_to_dm/memcpy_from_dm, and MRs on it, which are zero-based
 * (IBV_ACCESS_ZERO_BASED is required, as libibverbs requires it).
 */
#include <emu/frontend/frontend.h>

#include <cstring>

namespace uct_ib_emu {

namespace {

/* The rights an MR on device memory may have (mlx5's) */
constexpr unsigned DM_MR_ACCESS = IBV_ACCESS_LOCAL_WRITE |
                                  IBV_ACCESS_REMOTE_WRITE |
                                  IBV_ACCESS_REMOTE_READ |
                                  IBV_ACCESS_REMOTE_ATOMIC |
                                  IBV_ACCESS_ZERO_BASED;

int memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset, const void *host,
                 size_t length)
{
    return with_object<dm>(ibdm, [&](emu_state &, dm *d) {
        if ((dm_offset > d->length) || (length > d->length - dm_offset)) {
            return EFAULT;
        }
        memcpy(d->buf.bytes() + dm_offset, host, length);
        return 0;
    });
}

int memcpy_from_dm(void *host, struct ibv_dm *ibdm, uint64_t dm_offset,
                   size_t length)
{
    return with_object<dm>(ibdm, [&](emu_state &, dm *d) {
        if ((dm_offset > d->length) || (length > d->length - dm_offset)) {
            return EFAULT;
        }
        memcpy(host, d->buf.bytes() + dm_offset, length);
        return 0;
    });
}

} // namespace

struct ibv_dm *dm_alloc(struct ibv_context *ibctx, struct ibv_alloc_dm_attr *attr)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    uint64_t size;

    if ((ctx == nullptr) || (attr == nullptr) || (attr->comp_mask != 0) ||
        (attr->length == 0) ||
        ((uint64_t(1) << std::min(attr->log_align_req, 63u)) >
         DEVICE_MEMORY_ALIGN)) {
        return fail_ptr<struct ibv_dm>(EINVAL);
    }

    size = (attr->length + DEVICE_MEMORY_ALIGN - 1) & ~(DEVICE_MEMORY_ALIGN - 1);
    if ((attr->length > DEVICE_MEMORY_SIZE) ||
        (size > DEVICE_MEMORY_SIZE - ctx->dev->dm_allocated)) {
        return fail_ptr<struct ibv_dm>(ENOMEM); /* the device has no more */
    }

    auto d = std::make_unique<dm>(ctx);
    if (!d->buf.alloc(size, DEVICE_MEMORY_ALIGN)) {
        return fail_ptr<struct ibv_dm>(ENOMEM);
    }
    memset(d->buf.get(), 0, size);
    d->length             = attr->length;
    d->ibv.context        = ibctx;
    d->ibv.memcpy_to_dm   = memcpy_to_dm;
    d->ibv.memcpy_from_dm = memcpy_from_dm;
    ctx->dev->dm_allocated += size;
    register_handle(s, &d->ibv, kind::DM, d.get());
    return &add_object(ctx, std::move(d))->ibv;
}

int dm_free(struct ibv_dm *ibdm)
{
    return with_object<dm>(ibdm, [](emu_state &s, dm *d) {
        if (d->refs > 0) {
            return EBUSY; /* MRs on it */
        }
        dm_destroy_locked(s, d);
        return 0;
    });
}

struct ibv_mr *dm_reg_mr(struct ibv_pd *ibpd, struct ibv_dm *ibdm,
                         uint64_t dm_offset, size_t length, unsigned int access)
{
    emu_state &s = state();
    guard g(s.lock);
    pd *p = find<pd>(s, ibpd);
    dm *d = find<dm>(s, ibdm);
    int err;

    if ((p == nullptr) || (d == nullptr) || (p->ctx != d->ctx) ||
        !(access & IBV_ACCESS_ZERO_BASED) || (access & ~DM_MR_ACCESS) ||
        (length == 0) || (dm_offset > d->length) ||
        (length > d->length - dm_offset)) {
        return fail_ptr<struct ibv_mr>(EINVAL);
    }
    err = check_access_flags(int(access & ~IBV_ACCESS_ZERO_BASED));
    if (err != 0) {
        return fail_ptr<struct ibv_mr>(err);
    }

    mr *m = mr_create_locked(s, p, nullptr, length,
                             int(access & ~IBV_ACCESS_ZERO_BASED));
    m->on_dm   = d;
    m->dm_base = d->buf.bytes() + dm_offset;
    ++d->refs;
    return &m->ibv;
}

} // namespace uct_ib_emu
