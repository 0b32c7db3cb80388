/*
 * Public data path calls: a direct call through the interface's operation
 * table, without checks, locks or exception guards (the transport's
 * operation checks what it must), and the stubs of transports that move no
 * data.
 */
#include <uct/base/uct_iface.h>

ucs_status_t uct_ep_am_short(uct_ep_h ep, uint8_t id, uint64_t header,
                             const void *payload, unsigned length)
{
    return ep->iface->ops->ep_am_short(ep, id, header, payload, length);
}

ucs_status_t uct_ep_am_short_iov(uct_ep_h ep, uint8_t id, const uct_iov_t *iov,
                                 size_t iovcnt)
{
    return ep->iface->ops->ep_am_short_iov(ep, id, iov, iovcnt);
}

ssize_t uct_ep_am_bcopy(uct_ep_h ep, uint8_t id, uct_pack_callback_t pack_cb,
                        void *arg, unsigned flags)
{
    return ep->iface->ops->ep_am_bcopy(ep, id, pack_cb, arg, flags);
}

ucs_status_t uct_ep_am_zcopy(uct_ep_h ep, uint8_t id, const void *header,
                             unsigned header_length, const uct_iov_t *iov,
                             size_t iovcnt, unsigned flags,
                             uct_completion_t *comp)
{
    return ep->iface->ops->ep_am_zcopy(ep, id, header, header_length, iov, iovcnt, flags, comp);
}

ucs_status_t uct_ep_put_short(uct_ep_h ep, const void *buffer, unsigned length,
                              uint64_t remote_addr, uct_rkey_t rkey)
{
    return ep->iface->ops->ep_put_short(ep, buffer, length, remote_addr, rkey);
}

ssize_t uct_ep_put_bcopy(uct_ep_h ep, uct_pack_callback_t pack_cb, void *arg,
                         uint64_t remote_addr, uct_rkey_t rkey)
{
    return ep->iface->ops->ep_put_bcopy(ep, pack_cb, arg, remote_addr, rkey);
}

ucs_status_t uct_ep_put_zcopy(uct_ep_h ep, const uct_iov_t *iov, size_t iovcnt,
                              uint64_t remote_addr, uct_rkey_t rkey,
                              uct_completion_t *comp)
{
    return ep->iface->ops->ep_put_zcopy(ep, iov, iovcnt, remote_addr, rkey, comp);
}

ucs_status_t uct_ep_get_short(uct_ep_h ep, void *buffer, unsigned length,
                              uint64_t remote_addr, uct_rkey_t rkey)
{
    return ep->iface->ops->ep_get_short(ep, buffer, length, remote_addr, rkey);
}

ucs_status_t uct_ep_get_bcopy(uct_ep_h ep, uct_unpack_callback_t unpack_cb,
                              void *arg, size_t length, uint64_t remote_addr,
                              uct_rkey_t rkey, uct_completion_t *comp)
{
    return ep->iface->ops->ep_get_bcopy(ep, unpack_cb, arg, length, remote_addr, rkey, comp);
}

ucs_status_t uct_ep_get_zcopy(uct_ep_h ep, const uct_iov_t *iov, size_t iovcnt,
                              uint64_t remote_addr, uct_rkey_t rkey,
                              uct_completion_t *comp)
{
    return ep->iface->ops->ep_get_zcopy(ep, iov, iovcnt, remote_addr, rkey, comp);
}

ucs_status_t uct_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare, uint64_t swap,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uint64_t *result, uct_completion_t *comp)
{
    return ep->iface->ops->ep_atomic_cswap64(ep, compare, swap, remote_addr, rkey, result, comp);
}

ucs_status_t uct_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare, uint32_t swap,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uint32_t *result, uct_completion_t *comp)
{
    return ep->iface->ops->ep_atomic_cswap32(ep, compare, swap, remote_addr, rkey, result, comp);
}

ucs_status_t uct_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                  uint32_t value, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    return ep->iface->ops->ep_atomic32_post(ep, opcode, value, remote_addr, rkey);
}

ucs_status_t uct_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                  uint64_t value, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    return ep->iface->ops->ep_atomic64_post(ep, opcode, value, remote_addr, rkey);
}

ucs_status_t uct_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                   uint32_t value, uint32_t *result,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp)
{
    return ep->iface->ops->ep_atomic32_fetch(ep, opcode, value, result, remote_addr, rkey, comp);
}

ucs_status_t uct_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                   uint64_t value, uint64_t *result,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp)
{
    return ep->iface->ops->ep_atomic64_fetch(ep, opcode, value, result, remote_addr, rkey, comp);
}

ucs_status_t uct_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                unsigned flags)
{
    return ep->iface->ops->ep_pending_add(ep, req, flags);
}

void uct_ep_pending_purge(uct_ep_h ep, uct_pending_purge_callback_t cb,
                          void *arg)
{
    ep->iface->ops->ep_pending_purge(ep, cb, arg);
}

ucs_status_t uct_ep_flush(uct_ep_h ep, unsigned flags, uct_completion_t *comp)
{
    return ep->iface->ops->ep_flush(ep, flags, comp);
}

ucs_status_t uct_ep_fence(uct_ep_h ep, unsigned flags)
{
    return ep->iface->ops->ep_fence(ep, flags);
}

ucs_status_t uct_ep_check(const uct_ep_h ep, unsigned flags,
                          uct_completion_t *comp)
{
    return ep->iface->ops->ep_check(ep, flags, comp);
}

ucs_status_t uct_iface_flush(uct_iface_h iface, unsigned flags,
                             uct_completion_t *comp)
{
    return iface->ops->iface_flush(iface, flags, comp);
}

ucs_status_t uct_iface_fence(uct_iface_h iface, unsigned flags)
{
    return iface->ops->iface_fence(iface, flags);
}

ucs_status_t uct_iface_event_fd_get(uct_iface_h iface, int *fd_p)
{
    return iface->ops->iface_event_fd_get(iface, fd_p);
}

ucs_status_t uct_iface_event_arm(uct_iface_h iface, unsigned events)
{
    return iface->ops->iface_event_arm(iface, events);
}


ucs_status_t uct_ep_am_short_unsupported(uct_ep_h, uint8_t, uint64_t,
        const void*, unsigned)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_am_short_iov_unsupported(uct_ep_h, uint8_t,
        const uct_iov_t*, size_t)
{
    return UCS_ERR_UNSUPPORTED;
}

ssize_t uct_ep_am_bcopy_unsupported(uct_ep_h, uint8_t, uct_pack_callback_t,
        void*, unsigned)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_am_zcopy_unsupported(uct_ep_h, uint8_t, const void*,
        unsigned, const uct_iov_t*, size_t, unsigned, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_put_short_unsupported(uct_ep_h, const void*, unsigned,
        uint64_t, uct_rkey_t)
{
    return UCS_ERR_UNSUPPORTED;
}

ssize_t uct_ep_put_bcopy_unsupported(uct_ep_h, uct_pack_callback_t, void*,
        uint64_t, uct_rkey_t)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_put_zcopy_unsupported(uct_ep_h, const uct_iov_t*, size_t,
        uint64_t, uct_rkey_t, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_get_short_unsupported(uct_ep_h, void*, unsigned, uint64_t,
        uct_rkey_t)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_get_bcopy_unsupported(uct_ep_h, uct_unpack_callback_t,
        void*, size_t, uint64_t, uct_rkey_t, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_get_zcopy_unsupported(uct_ep_h, const uct_iov_t*, size_t,
        uint64_t, uct_rkey_t, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_atomic_cswap64_unsupported(uct_ep_h, uint64_t, uint64_t,
        uint64_t, uct_rkey_t, uint64_t*, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_atomic_cswap32_unsupported(uct_ep_h, uint32_t, uint32_t,
        uint64_t, uct_rkey_t, uint32_t*, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_atomic32_post_unsupported(uct_ep_h, uct_atomic_op_t,
        uint32_t, uint64_t, uct_rkey_t)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_atomic64_post_unsupported(uct_ep_h, uct_atomic_op_t,
        uint64_t, uint64_t, uct_rkey_t)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_atomic32_fetch_unsupported(uct_ep_h, uct_atomic_op_t,
        uint32_t, uint32_t*, uint64_t, uct_rkey_t, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_atomic64_fetch_unsupported(uct_ep_h, uct_atomic_op_t,
        uint64_t, uint64_t*, uint64_t, uct_rkey_t, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_pending_add_unsupported(uct_ep_h, uct_pending_req_t*,
        unsigned)
{
    return UCS_ERR_UNSUPPORTED;
}

void uct_ep_pending_purge_unsupported(uct_ep_h, uct_pending_purge_callback_t,
        void*)
{
}

ucs_status_t uct_ep_flush_unsupported(uct_ep_h, unsigned, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_fence_unsupported(uct_ep_h, unsigned)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_check_unsupported(uct_ep_h, unsigned, uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_iface_flush_unsupported(uct_iface_h, unsigned,
        uct_completion_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_iface_fence_unsupported(uct_iface_h, unsigned)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_iface_event_fd_get_unsupported(uct_iface_h, int*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_iface_event_arm_unsupported(uct_iface_h, unsigned)
{
    return UCS_ERR_UNSUPPORTED;
}
