/*
 * Active messages through a neutral work request (rc_ep.h): all of
 * rc_verbs', and rc_mlx5's when its fast path (a WQE written in place)
 * does not apply. The header byte, id and flow control bits, goes first.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_ep.h"

#include <algorithm>
#include <cstring>

namespace {

/* Post the short active message @a wr whose first inline byte *@a hdr is
 * the header of @a id, if the queue and the window have room */
ucs_status_t post_am_short(uct_rc_ep *ep, uct_rc_wr_t *wr, uint8_t id,
                           uint8_t *hdr)
{
    const unsigned cost = uct_rc_ep_wr_cost(ep, wr);
    ucs_status_t   status;

    if (!uct_rc_ep_has_resources(ep, cost) ||
        !uct_rc_ep_am_header(ep, id, hdr)) {
        return UCS_ERR_NO_RESOURCE;
    }

    status = uct_rc_ep_post(ep, wr, {}, cost);
    if (status == UCS_OK) {
        uct_rc_ep_am_sent(ep);
    }
    return status;
}

} // namespace

ucs_status_t uct_rc_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length)
{
    uct_rc_ep    *ep = uct_rc_ep_of(tl_ep);
    uint8_t      hdr[sizeof(uct_rc_am_hdr_t) + sizeof(header)];
    uct_rc_wr_t  wr;
    ucs_status_t status;

    wr = {};

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_check_am_id(ep, id)) != UCS_OK) ||
        ((status = uct_rc_ep_check_length(
                  ep, "am_short", sizeof(header) + length,
                  uct_rc_ep_iface(ep)->max_inline - sizeof(hdr[0]))) !=
         UCS_OK)) {
        return status;
    }

    memcpy(hdr + 1, &header, sizeof(header));
    wr.opcode       = UCT_RC_OP_SEND;
    wr.inl_hdr      = hdr;
    wr.inl_hdr_len  = sizeof(hdr);
    wr.inl_data     = payload;
    wr.inl_data_len = length;
    return post_am_short(ep, &wr, id, &hdr[0]);
}

ucs_status_t uct_rc_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt)
{
    uct_rc_ep    *ep    = uct_rc_ep_of(tl_ep);
    const size_t max    = uct_rc_ep_iface(ep)->max_inline -
                          sizeof(uct_rc_am_hdr_t);
    uint8_t      buf[UCT_RC_EP_MAX_INLINE];
    size_t       length = 0;
    uct_rc_wr_t  wr     = {};
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_check_am_id(ep, id)) != UCS_OK)) {
        return status;
    }

    buf[0] = id;
    for (size_t i = 0; i < iovcnt; ++i) {
        const size_t len = iov[i].length * std::max(iov[i].count, 1u);

        status = uct_rc_ep_check_length(ep, "am_short_iov", length + len, max);
        if (status != UCS_OK) {
            return status;
        }
        memcpy(buf + 1 + length, iov[i].buffer, len);
        length += len;
    }

    wr.opcode      = UCT_RC_OP_SEND;
    wr.inl_hdr     = buf;
    wr.inl_hdr_len = 1 + length;
    return post_am_short(ep, &wr, id, &buf[0]);
}

ssize_t uct_rc_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id,
                           uct_pack_callback_t pack_cb, void *arg, unsigned)
{
    uct_rc_ep    *ep = uct_rc_ep_of(tl_ep);
    uint8_t      hdr;
    uct_rc_wr_t  wr  = {};
    ssize_t      length;
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_check_am_id(ep, id)) != UCS_OK)) {
        return status;
    }
    if (!uct_rc_ep_am_header(ep, id, &hdr)) {
        return UCS_ERR_NO_RESOURCE;
    }

    wr.opcode = UCT_RC_OP_SEND;
    length    = uct_rc_ep_post_bcopy(ep, &wr, &hdr, sizeof(hdr), pack_cb, arg);
    if (length >= 0) {
        uct_rc_ep_am_sent(ep);
    }
    return length;
}

ucs_status_t uct_rc_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                                unsigned header_length, const uct_iov_t *iov,
                                size_t iovcnt, unsigned,
                                uct_completion_t *comp)
{
    uct_rc_ep    *ep    = uct_rc_ep_of(tl_ep);
    uct_rc_iface *iface = uct_rc_ep_iface(ep);
    const size_t max    = iface->max_inline - sizeof(uct_rc_am_hdr_t);
    uint8_t      hdr[UCT_RC_EP_MAX_INLINE];
    uct_rc_wr_t  wr     = {};
    uct_rc_op_t  op     = {};
    unsigned     cost;
    ucs_status_t status;

    status = uct_rc_ep_check(ep);
    if ((status != UCS_OK) ||
        ((status = uct_rc_ep_check_am_id(ep, id)) != UCS_OK) ||
        ((status = uct_rc_ep_check_length(ep, "am_zcopy header",
                                          header_length, max)) != UCS_OK) ||
        ((status = uct_rc_ep_fill_iov(ep, iov, iovcnt, UCT_RC_MAX_SGE,
                                      &wr)) != UCS_OK)) {
        return status;
    }

    memcpy(hdr + 1, header, header_length);
    wr.opcode      = UCT_RC_OP_SEND;
    wr.inl_hdr     = hdr;
    wr.inl_hdr_len = 1 + header_length;
    cost           = uct_rc_ep_wr_cost(ep, &wr);
    if (!uct_rc_ep_has_resources(ep, cost) ||
        !uct_rc_ep_am_header(ep, id, &hdr[0])) {
        return UCS_ERR_NO_RESOURCE;
    }

    if (!iface->inline_with_sge) {
        /* the transport inlines all of a request or nothing: the header goes
         * first in the gather list, from a bounce buffer */
        op.buf = iface->tx_bufs->get();
        if (op.buf == nullptr) {
            return UCS_ERR_NO_RESOURCE;
        }
        memcpy(op.buf, hdr, wr.inl_hdr_len);
        memmove(&wr.sge[1], &wr.sge[0], wr.num_sge * sizeof(wr.sge[0]));
        wr.sge[0]      = {reinterpret_cast<uintptr_t>(op.buf), wr.inl_hdr_len,
                          iface->tx_bufs->lkey()};
        ++wr.num_sge;
        wr.inl_hdr_len = 0;
    }

    op.comp = comp;
    status  = uct_rc_ep_post(ep, &wr, op, cost);
    if (status != UCS_OK) {
        if (op.buf != nullptr) {
            iface->tx_bufs->put(op.buf);
        }
        return status;
    }
    uct_rc_ep_am_sent(ep);
    return UCS_INPROGRESS;
}
