/*
 * rc_mlx5's fast paths (rc_mlx5_iface.h): am_short, am_bcopy, put_short,
 * get_bcopy and the 8-byte atomic add
 * written in place into the send ring (rc_mlx5_txq.h). What does not fit
 * before the ring's end, and an endpoint that failed, is not connected or
 * got invalid arguments, goes to the neutral operation (rc/base/rc_ep.h),
 * which builds a uct_rc_wr_t for uct_rc_mlx5_txq_post() or says why not.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_iface.h"
#include "rc_mlx5_txq.h"

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>

namespace {

uct_rc_mlx5_ep *mlx5_ep(uct_ep_h tl_ep)
{
    return static_cast<uct_rc_mlx5_ep*>(tl_ep);
}

uct_rc_mlx5_iface *ep_iface(const uct_rc_mlx5_ep *ep)
{
    return static_cast<uct_rc_mlx5_iface*>(ep->iface);
}

} // namespace

ucs_status_t uct_rc_mlx5_ep_am_short(uct_ep_h tl_ep, uint8_t id,
                                     uint64_t header, const void *payload,
                                     unsigned length)
{
    constexpr size_t  hdr_len = sizeof(uct_rc_am_hdr_t) + sizeof(header);
    uct_rc_mlx5_ep    *ep     = mlx5_ep(tl_ep);
    uct_rc_mlx5_iface *iface  = ep_iface(ep);

    /* a usable endpoint, valid arguments: written in place */
    if (ucs_likely(ep->usable &&
                   (id < UCT_AM_ID_MAX) &&
                   (hdr_len + length <= iface->max_inline))) {
        const unsigned bbs = uct_rc_mlx5_inline_bbs(false, hdr_len + length);
        uint8_t        am_hdr;

        if (!uct_rc_ep_has_resources(ep, bbs) ||
            !uct_rc_ep_am_header(ep, id, &am_hdr)) {
            return UCS_ERR_NO_RESOURCE;
        }
        if (ucs_likely(uct_rc_mlx5_fits(ep, bbs))) {
            uct_rc_mlx5_post_short<true, false>(
                    iface, ep, MLX5_OPCODE_SEND, 0, 0, am_hdr, header, payload,
                    length, bbs);
            uct_rc_ep_am_sent(ep);
            return UCS_OK;
        }
    }

    return uct_rc_ep_am_short(tl_ep, id, header, payload, length);
}

ssize_t uct_rc_mlx5_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                                uct_pack_callback_t pack_cb, void *arg,
                                unsigned flags)
{
    uct_rc_mlx5_ep    *ep    = mlx5_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    uint8_t           *buf;
    size_t            length;

    /* a usable endpoint: a control and a data segment, 1 block */
    if (ucs_likely(ep->usable &&
                   (id < UCT_AM_ID_MAX))) {
        uint8_t hdr;

        if (!uct_rc_ep_has_resources(ep, 1) ||
            !uct_rc_ep_am_header(ep, id, &hdr) ||
            ((buf = static_cast<uint8_t*>(iface->tx_bufs->get())) ==
             nullptr)) {
            return UCS_ERR_NO_RESOURCE;
        }

        buf[0] = hdr;
        length = pack_cb(buf + sizeof(hdr), arg);
        if (ucs_unlikely(sizeof(hdr) + length > iface->seg_size)) {
            ucs_fatal("%s: the pack callback wrote %zu bytes, more than the "
                      "bcopy limit of %zu", iface->dev_name.c_str(), length,
                      iface->seg_size - sizeof(hdr));
        }
        uct_rc_mlx5_post_data<false>(iface, ep, MLX5_OPCODE_SEND, 0, 0, buf,
                                     sizeof(hdr) + length,
                                     iface->tx_bufs->lkey_be());
        uct_rc_ep_am_sent(ep);
        return length;
    }
    return uct_rc_ep_am_bcopy(tl_ep, id, pack_cb, arg, flags);
}

ucs_status_t uct_rc_mlx5_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                      unsigned length, uint64_t remote_addr,
                                      uct_rkey_t rkey)
{
    uct_rc_mlx5_ep    *ep    = mlx5_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);

    /* a usable endpoint, a valid length: written in place */
    if (ucs_likely(ep->usable &&
                   (length <= iface->max_inline))) {
        const unsigned bbs = uct_rc_mlx5_inline_bbs(true, length);

        if (!uct_rc_ep_has_resources(ep, bbs)) {
            return UCS_ERR_NO_RESOURCE;
        }
        if (ucs_likely(uct_rc_mlx5_fits(ep, bbs))) {
            uct_rc_mlx5_post_short<false, true>(iface, ep,
                                                MLX5_OPCODE_RDMA_WRITE,
                                                remote_addr, uct_rc_rkey(rkey),
                                                0, 0, buffer, length, bbs);
            return UCS_OK;
        }
    }

    return uct_rc_ep_put_short(tl_ep, buffer, length, remote_addr, rkey);
}

ucs_status_t uct_rc_mlx5_ep_get_bcopy(uct_ep_h tl_ep,
                                      uct_unpack_callback_t unpack_cb,
                                      void *arg, size_t length,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp)
{
    uct_rc_mlx5_ep    *ep    = mlx5_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);

    /* a usable endpoint, a valid length: control, remote address and data
     * segments, 1 block; the data lands in a bounce buffer, unpacked when
     * the read completes */
    if (ucs_likely(ep->usable &&
                   (length <= iface->seg_size))) {
        void *buf;

        if (!uct_rc_ep_has_resources(ep, 1) ||
            ((buf = iface->tx_bufs->get()) == nullptr)) {
            return UCS_ERR_NO_RESOURCE;
        }

        uct_rc_op_t &op = uct_rc_mlx5_post_data<true>(
                iface, ep, MLX5_OPCODE_RDMA_READ, remote_addr,
                uct_rc_rkey(rkey), buf, length, iface->tx_bufs->lkey_be());
        op.comp   = comp;
        op.unpack = unpack_cb;
        op.arg    = arg;
        op.length = length;
        return UCS_INPROGRESS;
    }
    return uct_rc_ep_get_bcopy(tl_ep, unpack_cb, arg, length, remote_addr,
                               rkey, comp);
}

namespace {

/* An 8-byte fetch-add in one basic block: control, remote address, atomic
 * and data segments; the old value lands in a bounce buffer, copied to
 * @a result (if any) when the answer comes. Else the neutral path, which
 * says why not or takes a masked atomic. */
ucs_status_t atomic64_add(uct_ep_h tl_ep, uint64_t value,
                          uint64_t remote_addr, uct_rkey_t rkey,
                          uint64_t *result, uct_completion_t *comp)
{
    uct_rc_mlx5_ep    *ep    = mlx5_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    void              *buf;

    if (ucs_unlikely(!ep->usable ||
                     (remote_addr % sizeof(uint64_t)))) {
        return (result == nullptr) ?
               uct_rc_ep_atomic64_post(tl_ep, UCT_ATOMIC_OP_ADD, value,
                                       remote_addr, rkey) :
               uct_rc_ep_atomic64_fetch(tl_ep, UCT_ATOMIC_OP_ADD, value,
                                        result, remote_addr, rkey, comp);
    }
    if (!uct_rc_ep_has_resources(ep, 1) ||
        ((buf = iface->tx_bufs->get()) == nullptr)) {
        return UCS_ERR_NO_RESOURCE;
    }

    uct_rc_op_t &op = uct_rc_mlx5_post_data<true, true>(
            iface, ep, MLX5_OPCODE_ATOMIC_FA, remote_addr, uct_rc_rkey(rkey),
            buf, sizeof(uint64_t), iface->tx_bufs->lkey_be(), value, 0);
    op.comp        = comp;
    op.result      = result;
    op.result_size = sizeof(uint64_t);
    return (result != nullptr) ? UCS_INPROGRESS : UCS_OK;
}

} // namespace

ucs_status_t uct_rc_mlx5_ep_atomic64_post(uct_ep_h tl_ep,
                                          uct_atomic_op_t opcode,
                                          uint64_t value,
                                          uint64_t remote_addr,
                                          uct_rkey_t rkey)
{
    if (ucs_likely(opcode == UCT_ATOMIC_OP_ADD)) {
        return atomic64_add(tl_ep, value, remote_addr, rkey, nullptr, nullptr);
    }
    return uct_rc_ep_atomic64_post(tl_ep, opcode, value, remote_addr, rkey);
}

ucs_status_t uct_rc_mlx5_ep_atomic64_fetch(uct_ep_h tl_ep,
                                           uct_atomic_op_t opcode,
                                           uint64_t value, uint64_t *result,
                                           uint64_t remote_addr,
                                           uct_rkey_t rkey,
                                           uct_completion_t *comp)
{
    if (ucs_likely((opcode == UCT_ATOMIC_OP_ADD) && (result != nullptr))) {
        return atomic64_add(tl_ep, value, remote_addr, rkey, result, comp);
    }
    return uct_rc_ep_atomic64_fetch(tl_ep, opcode, value, result,
                                    remote_addr, rkey, comp);
}
