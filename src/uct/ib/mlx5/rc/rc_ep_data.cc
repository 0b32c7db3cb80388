/*
 * The endpoint operations of rc_mlx5 and rc_verbs (rc_data.h): argument and
 * resource checks, one work request per operation, completion by sequence
 * number, flush, fence, pending requests and endpoint failure; and the
 * interface's progress, capabilities and data path resources.
 *
 * Every WQE asks for a completion, which gives back the send queue room of
 * its WQE and retires the operations up to its sequence number (those with
 * a completion, a bounce buffer or a result to deliver: a short operation
 * leaves nothing to retire). The send CQ has one credit per posted WQE, returned by
 * each completion polled (also of a failed endpoint's flushed WQEs), so the
 * CQ can never overrun.
 */
#include "rc_mlx5_iface.h"
#include "rc_mlx5_txq.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <algorithm>
#include <cinttypes>
#include <endian.h>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr unsigned tx_batch        = 16;  /* completions per poll */
constexpr unsigned max_wqe_bbs     = 4;   /* the largest WQE we write */
constexpr unsigned max_inline_devx = 512; /* fits max_wqe_bbs */

uct_rc_mlx5_iface *ep_iface(const uct_rc_mlx5_ep *ep)
{
    return static_cast<uct_rc_mlx5_iface*>(ep->iface);
}

uint32_t rkey_of(uct_rkey_t rkey)
{
    return static_cast<uint32_t>(rkey);
}

uint32_t lkey_of(uct_mem_h memh)
{
    return static_cast<const uct_ib_mem_t*>(memh)->mr->lkey;
}

/* What the QP needs to take one more WQE of @a cost */
unsigned wr_cost(const uct_rc_mlx5_ep *ep, const uct_rc_wr_t *wr)
{
    return ep->devx_qp ? uct_rc_mlx5_txq_wqe_bbs(wr) : 1;
}

bool has_resources(const uct_rc_mlx5_ep *ep, unsigned cost)
{
    return (ep->sq_avail >= cost) && (ep_iface(ep)->tx_cq_avail > 0);
}

/* An active message's header: its id, and flow control. Takes a credit;
 * false when the window is empty */
bool am_header(uct_rc_mlx5_ep *ep, uint8_t id, uint8_t *hdr_p)
{
    const uct_rc_mlx5_iface *iface = ep_iface(ep);
    uint8_t                 hdr    = id;

    if (iface->rc.fc_enable) {
        if (ep->fc_wnd <= 0) {
            return false;
        }
        if (ucs_unlikely(ep->fc_wnd == iface->fc_soft_thresh)) {
            hdr |= UCT_RC_FC_SOFT_REQ;
        } else if (ucs_unlikely(ep->fc_wnd == iface->fc_hard_thresh)) {
            hdr |= UCT_RC_FC_HARD_REQ;
        }
    }
    if (ep->fc_grant_due) {
        hdr |= UCT_RC_FC_GRANT; /* piggybacked: no grant of its own needed */
    }
    *hdr_p = hdr;
    return true;
}

/* The message with that header was posted */
void am_sent(uct_rc_mlx5_ep *ep, uint8_t hdr)
{
    if (ep_iface(ep)->rc.fc_enable) {
        --ep->fc_wnd;
    }
    if (hdr & UCT_RC_FC_GRANT) {
        ep->fc_grant_due = false;
    }
}

ucs_status_t post(uct_rc_mlx5_ep *ep, uct_rc_wr_t *wr, uct_rc_op_t op);

/* Post the short active message @a wr whose first inline byte *@a hdr is
 * the header of @a id, if the queue and the window have room */
ucs_status_t post_am_short(uct_rc_mlx5_ep *ep, uct_rc_wr_t *wr, uint8_t id,
                           uint8_t *hdr)
{
    ucs_status_t status;

    if (!has_resources(ep, wr_cost(ep, wr)) || !am_header(ep, id, hdr)) {
        return UCS_ERR_NO_RESOURCE;
    }

    status = post(ep, wr, {});
    if (status == UCS_OK) {
        am_sent(ep, *hdr);
    }
    return status;
}

/* Post @a wr for @a op: the caller checked the resources */
ucs_status_t post(uct_rc_mlx5_ep *ep, uct_rc_wr_t *wr, uct_rc_op_t op)
{
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    const unsigned    cost   = wr_cost(ep, wr);
    ucs_status_t      status = UCS_OK;

    const uint16_t    sn     = ep->sn;

    wr->signaled   = true;
    wr->fence      = ep->fence_next;
    op.sn          = sn;
    op.cost        = static_cast<uint16_t>(cost);
    if (ep->devx_qp) {
        uct_rc_mlx5_txq_post(ep, wr);
    } else {
        status = uct_rc_verbs_txq_post(ep, wr);
        if (status != UCS_OK) {
            return status;
        }
    }

    uct_rc_mlx5_ep_posted(iface, ep, sn, cost);
    if ((op.comp != nullptr) || (op.buf != nullptr)) {
        ep->ops.push_back(op); /* room: at most one per WQE, see data_init */
        ep->wqe_cost[sn & ep->sq_mask] |= UCT_RC_WQE_RETIRES;
    }
    return UCS_OK;
}

void retire(uct_rc_mlx5_ep *ep, const uct_rc_op_t &op, ucs_status_t status)
{
    uct_rc_mlx5_iface *iface = ep_iface(ep);

    if ((op.unpack != nullptr) && (status == UCS_OK)) {
        op.unpack(op.arg, op.buf, op.length);
    }
    if ((op.result != nullptr) && (status == UCS_OK)) {
        if (op.result_size == sizeof(uint32_t)) {
            uint32_t v;
            memcpy(&v, op.buf, sizeof(v));
            v = op.result_be ? be32toh(v) : v;
            memcpy(op.result, &v, sizeof(v));
        } else {
            uint64_t v;
            memcpy(&v, op.buf, sizeof(v));
            v = op.result_be ? be64toh(v) : v;
            memcpy(op.result, &v, sizeof(v));
        }
    }
    if (op.buf != nullptr) {
        iface->tx_bufs->put(op.buf);
    }
    if (op.comp != nullptr) {
        uct_invoke_completion(op.comp, status);
    }
}

ucs_status_t status_of(enum ibv_wc_status status)
{
    switch (status) {
    case IBV_WC_WR_FLUSH_ERR:
        return UCS_ERR_CANCELED;
    case IBV_WC_REM_ACCESS_ERR:
    case IBV_WC_REM_OP_ERR:
    case IBV_WC_REM_INV_REQ_ERR:
        return UCS_ERR_CONNECTION_RESET;
    case IBV_WC_RETRY_EXC_ERR:
    case IBV_WC_RNR_RETRY_EXC_ERR:
    case IBV_WC_REM_ABORT_ERR:
        return UCS_ERR_ENDPOINT_TIMEOUT;
    default:
        return UCS_ERR_IO_ERROR;
    }
}

/* Who the endpoint talks to, for the failure line */
std::string peer_of(const uct_rc_mlx5_ep *ep)
{
    char qpn[16];

    snprintf(qpn, sizeof(qpn), "qp 0x%x", ep->dest_qpn);
    if (ep->peer_ah.is_global) {
        return std::string(qpn) + " gid " +
               uct_ib_gid_str(&ep->peer_ah.grh.dgid);
    }
    return std::string(qpn) + " lid " + std::to_string(ep->peer_ah.dlid);
}

/* The endpoint failed: once, whatever else completes with an error after.
 * One line says so, at UCX_FAILURE's level when the error handler takes
 * care of it, else as an error */
void fail(uct_rc_mlx5_ep *ep, const uct_rc_completion_t &c)
{
    uct_rc_mlx5_iface *iface  = ep_iface(ep);
    ucs_status_t      status  = status_of(c.status);
    char              syndrome[48];

    if (ep->failed != UCS_OK) {
        return;
    }

    ep->failed = status;
    if (c.syndrome >= 0) {
        snprintf(syndrome, sizeof(syndrome),
                 "syndrome 0x%x vendor syndrome 0x%x", c.syndrome,
                 c.vendor_err);
    } else {
        snprintf(syndrome, sizeof(syndrome), "vendor syndrome 0x%x",
                 c.vendor_err);
    }
    ucs_log((iface->err_handler != nullptr) ? iface->config.failure_level :
                                              UCS_LOG_LEVEL_ERROR,
            "%s: qp 0x%x to peer %s failed: %s (%s): %s",
            iface->dev_name.c_str(), c.qpn, peer_of(ep).c_str(),
            uct_ib_wc_status_name(c.status), syndrome,
            ucs_status_string(status));

    while (!ep->ops.empty()) {
        uct_rc_op_t op = ep->ops.front();
        ep->ops.pop_front();
        retire(ep, op, status);
    }
    ep->pending.clear(); /* the user purges them with uct_ep_pending_purge */

    if (iface->err_handler != nullptr) {
        iface->err_handler(iface->err_handler_arg, ep, status);
    }
}

/* The operations up to @a sn are done */
__attribute__((noinline)) void retire_upto(uct_rc_mlx5_ep *ep, uint16_t sn)
{
    while (!ep->ops.empty() &&
           (static_cast<int16_t>(ep->ops.front().sn - sn) <= 0)) {
        uct_rc_op_t op = ep->ops.front();
        ep->ops.pop_front();
        retire(ep, op, UCS_OK);
    }
}

/* Send queue room back, and the operations up to @a sn retired */
inline void completed(uct_rc_mlx5_iface *iface, uct_rc_mlx5_ep *ep,
                      uint16_t sn)
{
    const uint16_t cost = ep->wqe_cost[sn & ep->sq_mask];

    ++iface->tx_cq_avail;
    --ep->cq_inflight;
    ep->sq_avail += cost & ~UCT_RC_WQE_RETIRES;
    if (ucs_unlikely(cost & UCT_RC_WQE_RETIRES)) {
        retire_upto(ep, sn);
    }
}

void complete(uct_rc_mlx5_iface *iface, const uct_rc_completion_t &c)
{
    uct_rc_mlx5_ep *ep = iface->eps_by_qpn.find(c.qpn);

    /* the send CQ holds twice the credits: a completion of an endpoint
     * destroyed meanwhile (whose credits came back then) still fits */
    if (ep == nullptr) {
        return;
    }

    if (c.status != IBV_WC_SUCCESS) {
        ++iface->tx_cq_avail;
        --ep->cq_inflight;
        ep->sq_avail += ep->wqe_cost[c.sn & ep->sq_mask] &
                        ~UCT_RC_WQE_RETIRES;
        fail(ep, c);
        return;
    }
    completed(iface, ep, c.sn);
}

/* A grant the peer asked for: exempt from flow control, retried from
 * progress while the send queue is full */
void send_grant(uct_rc_mlx5_ep *ep)
{
    const uint8_t hdr = UCT_RC_FC_PURE_GRANT;
    uct_rc_wr_t   wr  = {};

    wr.opcode      = UCT_RC_OP_SEND;
    wr.inl_hdr     = &hdr;
    wr.inl_hdr_len = sizeof(hdr);
    if ((ep->failed == UCS_OK) && has_resources(ep, wr_cost(ep, &wr)) &&
        (post(ep, &wr, {}) == UCS_OK)) {
        ep->fc_grant_due = false;
    } else {
        ep_iface(ep)->dispatch_due = true; /* progress tries again */
    }
}

/* Grants and pending requests of every endpoint that has some */
void dispatch_pending(uct_rc_mlx5_iface *iface)
{
    bool due = false;

    iface->dispatch_due = false;
    iface->eps_by_qpn.for_each([&due](uct_rc_mlx5_ep *ep) {
        if (ep->fc_grant_due) {
            send_grant(ep);
        }

        while (!ep->pending.empty() && has_resources(ep, max_wqe_bbs)) {
            uct_pending_req_t *req = ep->pending.front();
            ep->pending.pop_front();
            if (req->func(req) == UCS_ERR_NO_RESOURCE) {
                ep->pending.push_front(req);
                break;
            }
        }
        due |= ep->fc_grant_due || !ep->pending.empty();
    });
    iface->dispatch_due |= due;
}

/* Checks every operation shares */
ucs_status_t check_ep(const uct_rc_mlx5_ep *ep)
{
    if (ucs_unlikely(ep->failed != UCS_OK)) {
        return ep->failed;
    }
    if (ucs_unlikely(!ep->connected)) {
        ucs_error("%s: qp 0x%x: operation on an endpoint that is not "
                  "connected", ep_iface(ep)->dev_name.c_str(),
                  uct_rc_mlx5_ep_qpn(const_cast<uct_rc_mlx5_ep*>(ep)));
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t check_am_id(const uct_rc_mlx5_ep *ep, uint8_t id)
{
    if (ucs_unlikely(id >= UCT_AM_ID_MAX)) {
        ucs_error("%s: active message id %u out of range (0..%u)",
                  ep_iface(ep)->dev_name.c_str(), id,
                  unsigned(UCT_AM_ID_MAX - 1));
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

ucs_status_t check_length(const uct_rc_mlx5_ep *ep, const char *what,
                          size_t length, size_t max)
{
    if (ucs_unlikely(length > max)) {
        ucs_error("%s: %s of %zu bytes exceeds the limit of %zu",
                  ep_iface(ep)->dev_name.c_str(), what, length, max);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* The gather/scatter list of @a iov into @a wr; sizes and keys checked */
ucs_status_t fill_iov(const uct_rc_mlx5_ep *ep, const uct_iov_t *iov,
                      size_t iovcnt, size_t max_iov, uct_rc_wr_t *wr)
{
    if (ucs_unlikely(iovcnt > max_iov)) {
        ucs_error("%s: %zu iov entries exceed the limit of %zu",
                  ep_iface(ep)->dev_name.c_str(), iovcnt, max_iov);
        return UCS_ERR_INVALID_PARAM;
    }

    wr->num_sge = 0;
    for (size_t i = 0; i < iovcnt; ++i) {
        const size_t length = iov[i].length * std::max(iov[i].count, 1u);

        if (length == 0) {
            continue;
        }
        if (ucs_unlikely((iov[i].memh == UCT_MEM_HANDLE_NULL) ||
                         ((iov[i].count > 1) &&
                          (iov[i].stride != iov[i].length)))) {
            ucs_error("%s: zero-copy iov entry %zu needs a memory handle and "
                      "contiguous data", ep_iface(ep)->dev_name.c_str(), i);
            return UCS_ERR_INVALID_PARAM;
        }
        wr->sge[wr->num_sge++] = {reinterpret_cast<uintptr_t>(iov[i].buffer),
                                  static_cast<uint32_t>(length),
                                  lkey_of(iov[i].memh)};
    }
    return UCS_OK;
}

uct_rc_mlx5_ep *rc_ep(uct_ep_h tl_ep)
{
    return static_cast<uct_rc_mlx5_ep*>(tl_ep);
}

/* A bcopy operation: pack into a bounce buffer, post it as @a wr's data */
ssize_t post_bcopy(uct_rc_mlx5_ep *ep, uct_rc_wr_t *wr, const uint8_t *hdr,
                   size_t hdr_len, uct_pack_callback_t pack_cb, void *arg)
{
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    uct_rc_op_t       op     = {};
    uint8_t           *buf;
    size_t            length;
    ucs_status_t      status;

    if (!has_resources(ep, max_wqe_bbs)) {
        return UCS_ERR_NO_RESOURCE;
    }
    buf = static_cast<uint8_t*>(iface->tx_bufs->get());
    if (buf == nullptr) {
        return UCS_ERR_NO_RESOURCE;
    }

    memcpy(buf, hdr, hdr_len);
    length = pack_cb(buf + hdr_len, arg);
    if (ucs_unlikely(hdr_len + length > iface->seg_size)) {
        ucs_fatal("%s: the pack callback wrote %zu bytes, more than the bcopy "
                  "limit of %zu", iface->dev_name.c_str(), length,
                  iface->seg_size - hdr_len);
    }

    wr->sge[0]  = {reinterpret_cast<uintptr_t>(buf),
                   static_cast<uint32_t>(hdr_len + length),
                   iface->tx_bufs->lkey()};
    wr->num_sge = 1;
    op.buf      = buf;
    status      = post(ep, wr, op);
    if (status != UCS_OK) {
        iface->tx_bufs->put(buf);
        return status;
    }
    return length;
}

} // namespace

/* ------------------------------------------------------------------------
 * Active messages
 */

namespace {

/* am_short through a uct_rc_wr_t: rc_verbs, a WQE that wraps, an error */
__attribute__((noinline)) ucs_status_t
am_short_slow(uct_ep_h tl_ep, uint8_t id, uint64_t header, const void *payload,
              unsigned length)
{
    uct_rc_mlx5_ep    *ep    = rc_ep(tl_ep);
    uint8_t           hdr[sizeof(uct_rc_am_hdr_t) + sizeof(header)];
    uct_rc_wr_t       wr;
    ucs_status_t      status;

    wr = {};

    status = check_ep(ep);
    if ((status != UCS_OK) || ((status = check_am_id(ep, id)) != UCS_OK) ||
        ((status = check_length(ep, "am_short", sizeof(header) + length,
                                ep_iface(ep)->max_inline - sizeof(hdr[0]))) !=
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

} // namespace

ucs_status_t uct_rc_mlx5_ep_am_short(uct_ep_h tl_ep, uint8_t id, uint64_t header,
                      const void *payload, unsigned length)
{
    constexpr size_t  hdr_len = sizeof(uct_rc_am_hdr_t) + sizeof(header);
    uct_rc_mlx5_ep    *ep     = rc_ep(tl_ep);
    uct_rc_mlx5_iface *iface  = ep_iface(ep);

    /* rc_mlx5, a usable endpoint, valid arguments: written in place */
    if (ucs_likely((ep->sq_buf != nullptr) && (ep->failed == UCS_OK) &&
                   ep->connected && (id < UCT_AM_ID_MAX) &&
                   (hdr_len + length <= iface->max_inline))) {
        const unsigned bbs = uct_rc_mlx5_inline_bbs(false, hdr_len + length);
        uint8_t        am_hdr;

        if (!has_resources(ep, bbs) || !am_header(ep, id, &am_hdr)) {
            return UCS_ERR_NO_RESOURCE;
        }
        if (ucs_likely(uct_rc_mlx5_fits(ep, bbs))) {
            uct_rc_mlx5_post_short<true, false>(
                    iface, ep, MLX5_OPCODE_SEND, 0, 0, am_hdr, header, payload,
                    length, bbs);
            am_sent(ep, am_hdr);
            return UCS_OK;
        }
    }

    return am_short_slow(tl_ep, id, header, payload, length);
}

ucs_status_t uct_rc_mlx5_ep_am_short_iov(uct_ep_h tl_ep, uint8_t id, const uct_iov_t *iov,
                          size_t iovcnt)
{
    uct_rc_mlx5_ep *ep     = rc_ep(tl_ep);
    const size_t   max     = ep_iface(ep)->max_inline - sizeof(uct_rc_am_hdr_t);
    uint8_t        buf[max_inline_devx];
    size_t         length  = 0;
    uct_rc_wr_t    wr      = {};
    ucs_status_t   status;

    status = check_ep(ep);
    if ((status != UCS_OK) || ((status = check_am_id(ep, id)) != UCS_OK)) {
        return status;
    }

    buf[0] = id;
    for (size_t i = 0; i < iovcnt; ++i) {
        const size_t len = iov[i].length * std::max(iov[i].count, 1u);

        status = check_length(ep, "am_short_iov", length + len, max);
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

namespace {

/* am_bcopy through a uct_rc_wr_t: rc_verbs, an error */
__attribute__((noinline)) ssize_t
am_bcopy_slow(uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
              void *arg)
{
    uct_rc_mlx5_ep *ep  = rc_ep(tl_ep);
    uint8_t        hdr;
    uct_rc_wr_t    wr   = {};
    ssize_t        length;
    ucs_status_t   status;

    status = check_ep(ep);
    if ((status != UCS_OK) || ((status = check_am_id(ep, id)) != UCS_OK)) {
        return status;
    }
    if (!am_header(ep, id, &hdr)) {
        return UCS_ERR_NO_RESOURCE;
    }

    wr.opcode = UCT_RC_OP_SEND;
    length    = post_bcopy(ep, &wr, &hdr, sizeof(hdr), pack_cb, arg);
    if (length >= 0) {
        am_sent(ep, hdr);
    }
    return length;
}

} // namespace

ssize_t uct_rc_mlx5_ep_am_bcopy(uct_ep_h tl_ep, uint8_t id, uct_pack_callback_t pack_cb,
                 void *arg, unsigned)
{
    uct_rc_mlx5_ep    *ep    = rc_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    uint8_t           *buf;
    size_t            length;

    /* rc_mlx5, a usable endpoint: a control and a data segment, 1 block */
    if (ucs_likely((ep->sq_buf != nullptr) && (ep->failed == UCS_OK) &&
                   ep->connected && (id < UCT_AM_ID_MAX))) {
        uint8_t hdr;

        if (!has_resources(ep, 1) || !am_header(ep, id, &hdr) ||
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
        am_sent(ep, hdr);
        return length;
    }
    return am_bcopy_slow(tl_ep, id, pack_cb, arg);
}

ucs_status_t uct_rc_mlx5_ep_am_zcopy(uct_ep_h tl_ep, uint8_t id, const void *header,
                      unsigned header_length, const uct_iov_t *iov,
                      size_t iovcnt, unsigned, uct_completion_t *comp)
{
    uct_rc_mlx5_ep *ep    = rc_ep(tl_ep);
    const size_t   max    = ep_iface(ep)->max_inline - sizeof(uct_rc_am_hdr_t);
    uint8_t        hdr[max_inline_devx];
    uct_rc_wr_t    wr     = {};
    uct_rc_op_t    op     = {};
    ucs_status_t   status;

    status = check_ep(ep);
    if ((status != UCS_OK) || ((status = check_am_id(ep, id)) != UCS_OK) ||
        ((status = check_length(ep, "am_zcopy header", header_length, max)) !=
         UCS_OK) ||
        ((status = fill_iov(ep, iov, iovcnt, UCT_RC_MAX_SGE, &wr)) != UCS_OK)) {
        return status;
    }

    memcpy(hdr + 1, header, header_length);
    wr.opcode      = UCT_RC_OP_SEND;
    wr.inl_hdr     = hdr;
    wr.inl_hdr_len = 1 + header_length;
    if (!has_resources(ep, wr_cost(ep, &wr)) || !am_header(ep, id, &hdr[0])) {
        return UCS_ERR_NO_RESOURCE;
    }

    if (!ep->devx_qp) {
        /* verbs inlines all of a request or nothing: the header goes first
         * in the gather list, from a bounce buffer */
        uct_rc_mlx5_iface *iface = ep_iface(ep);

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
    status  = post(ep, &wr, op);
    if (status != UCS_OK) {
        if (op.buf != nullptr) {
            ep_iface(ep)->tx_bufs->put(op.buf);
        }
        return status;
    }
    am_sent(ep, hdr[0]);
    return UCS_INPROGRESS;
}

/* ------------------------------------------------------------------------
 * RMA
 */

namespace {

/* put_short through a uct_rc_wr_t: rc_verbs, a WQE that wraps, an error */
__attribute__((noinline)) ucs_status_t
put_short_slow(uct_ep_h tl_ep, const void *buffer, unsigned length,
               uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_rc_mlx5_ep    *ep    = rc_ep(tl_ep);
    uct_rc_wr_t       wr;
    ucs_status_t      status;

    wr = {};

    status = check_ep(ep);
    if ((status != UCS_OK) ||
        ((status = check_length(ep, "put_short", length,
                                ep_iface(ep)->max_inline)) != UCS_OK)) {
        return status;
    }

    wr.opcode       = UCT_RC_OP_RDMA_WRITE;
    wr.inl_data     = buffer;
    wr.inl_data_len = length;
    wr.remote_addr  = remote_addr;
    wr.rkey         = rkey_of(rkey);
    if (!has_resources(ep, wr_cost(ep, &wr))) {
        return UCS_ERR_NO_RESOURCE;
    }
    return post(ep, &wr, {});
}

} // namespace

ucs_status_t uct_rc_mlx5_ep_put_short(uct_ep_h tl_ep, const void *buffer, unsigned length,
                       uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_rc_mlx5_ep    *ep    = rc_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);

    /* rc_mlx5, a usable endpoint, a valid length: written in place */
    if (ucs_likely((ep->sq_buf != nullptr) && (ep->failed == UCS_OK) &&
                   ep->connected && (length <= iface->max_inline))) {
        const unsigned bbs = uct_rc_mlx5_inline_bbs(true, length);

        if (!has_resources(ep, bbs)) {
            return UCS_ERR_NO_RESOURCE;
        }
        if (ucs_likely(uct_rc_mlx5_fits(ep, bbs))) {
            uct_rc_mlx5_post_short<false, true>(iface, ep,
                                                MLX5_OPCODE_RDMA_WRITE,
                                                remote_addr, rkey_of(rkey), 0,
                                                0, buffer, length, bbs);
            return UCS_OK;
        }
    }

    return put_short_slow(tl_ep, buffer, length, remote_addr, rkey);
}

ssize_t uct_rc_mlx5_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb, void *arg,
                  uint64_t remote_addr, uct_rkey_t rkey)
{
    uct_rc_mlx5_ep *ep = rc_ep(tl_ep);
    uct_rc_wr_t    wr  = {};
    ucs_status_t   status;

    status = check_ep(ep);
    if (status != UCS_OK) {
        return status;
    }

    wr.opcode      = UCT_RC_OP_RDMA_WRITE;
    wr.remote_addr = remote_addr;
    wr.rkey        = rkey_of(rkey);
    return post_bcopy(ep, &wr, nullptr, 0, pack_cb, arg);
}

static ucs_status_t rma_zcopy(uct_ep_h tl_ep, uct_rc_opcode_t opcode,
                       const uct_iov_t *iov, size_t iovcnt,
                       uint64_t remote_addr, uct_rkey_t rkey,
                       uct_completion_t *comp)
{
    uct_rc_mlx5_ep *ep = rc_ep(tl_ep);
    uct_rc_wr_t    wr  = {};
    uct_rc_op_t    op  = {};
    ucs_status_t   status;

    status = check_ep(ep);
    if ((status != UCS_OK) ||
        ((status = fill_iov(ep, iov, iovcnt, UCT_RC_MAX_SGE, &wr)) != UCS_OK)) {
        return status;
    }

    wr.opcode      = opcode;
    wr.remote_addr = remote_addr;
    wr.rkey        = rkey_of(rkey);
    if (!has_resources(ep, wr_cost(ep, &wr))) {
        return UCS_ERR_NO_RESOURCE;
    }

    op.comp = comp;
    status  = post(ep, &wr, op);
    return (status == UCS_OK) ? UCS_INPROGRESS : status;
}

ucs_status_t uct_rc_mlx5_ep_put_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                       uint64_t remote_addr, uct_rkey_t rkey,
                       uct_completion_t *comp)
{
    return rma_zcopy(tl_ep, UCT_RC_OP_RDMA_WRITE, iov, iovcnt, remote_addr,
                     rkey, comp);
}

ucs_status_t uct_rc_mlx5_ep_get_zcopy(uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                       uint64_t remote_addr, uct_rkey_t rkey,
                       uct_completion_t *comp)
{
    return rma_zcopy(tl_ep, UCT_RC_OP_RDMA_READ, iov, iovcnt, remote_addr,
                     rkey, comp);
}

ucs_status_t uct_rc_mlx5_ep_get_bcopy(uct_ep_h tl_ep, uct_unpack_callback_t unpack_cb,
                       void *arg, size_t length, uint64_t remote_addr,
                       uct_rkey_t rkey, uct_completion_t *comp)
{
    uct_rc_mlx5_ep    *ep    = rc_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    uct_rc_wr_t       wr     = {};
    uct_rc_op_t       op     = {};
    ucs_status_t      status;

    status = check_ep(ep);
    if ((status != UCS_OK) ||
        ((status = check_length(ep, "get_bcopy", length, iface->seg_size)) !=
         UCS_OK)) {
        return status;
    }

    if (!has_resources(ep, max_wqe_bbs)) {
        return UCS_ERR_NO_RESOURCE;
    }
    op.buf = iface->tx_bufs->get();
    if (op.buf == nullptr) {
        return UCS_ERR_NO_RESOURCE;
    }

    wr.opcode      = UCT_RC_OP_RDMA_READ;
    wr.sge[0]      = {reinterpret_cast<uintptr_t>(op.buf),
                      static_cast<uint32_t>(length), iface->tx_bufs->lkey()};
    wr.num_sge     = 1;
    wr.remote_addr = remote_addr;
    wr.rkey        = rkey_of(rkey);
    op.comp        = comp;
    op.unpack      = unpack_cb;
    op.arg         = arg;
    op.length      = length;
    status         = post(ep, &wr, op);
    if (status != UCS_OK) {
        iface->tx_bufs->put(op.buf);
        return status;
    }
    return UCS_INPROGRESS;
}

/* ------------------------------------------------------------------------
 * Atomics. Standard 8-byte fetch-add and compare-swap on both transports;
 * rc_mlx5 does the rest with masked (extended) atomics on 4 and 8 bytes:
 *   add  masked fetch-add, no field boundary    xor  every bit its own field
 *   and  masked swap of the bits value clears   or   of the bits value sets
 *   swap masked swap of every bit               cswap32  masked on every bit
 * Remote memory holds host-order values (the device works in host
 * endianness, as the kernel configures it); a standard atomic answers in
 * host order, a masked one big endian.
 */

namespace {

/* Build @a wr for @a op on @a size bytes; false if the transport lacks it */
bool atomic_wr(const uct_rc_mlx5_ep *ep, uct_atomic_op_t op, unsigned size,
               uint64_t value, uint64_t compare, uct_rc_wr_t *wr)
{
    const uint64_t all = (size == 4) ? UINT32_MAX : UINT64_MAX;
    const bool     std_ok = (size == 8);

    wr->atomic_size = size;
    wr->swap_add    = value;
    switch (op) {
    case UCT_ATOMIC_OP_ADD:
        wr->opcode = std_ok ? UCT_RC_OP_ATOMIC_FA : UCT_RC_OP_MASKED_FA;
        break;
    case UCT_ATOMIC_OP_CSWAP:
        wr->opcode       = std_ok ? UCT_RC_OP_ATOMIC_CS : UCT_RC_OP_MASKED_CS;
        wr->compare      = compare;
        wr->swap_mask    = all;
        wr->compare_mask = all;
        break;
    case UCT_ATOMIC_OP_XOR:
        wr->opcode       = UCT_RC_OP_MASKED_FA;
        wr->compare_mask = all; /* the field boundary: no carries */
        break;
    case UCT_ATOMIC_OP_AND:
        wr->opcode    = UCT_RC_OP_MASKED_CS;
        wr->swap_add  = 0;
        wr->swap_mask = ~value & all;
        break;
    case UCT_ATOMIC_OP_OR:
        wr->opcode    = UCT_RC_OP_MASKED_CS;
        wr->swap_mask = value;
        break;
    case UCT_ATOMIC_OP_SWAP:
        wr->opcode    = UCT_RC_OP_MASKED_CS;
        wr->swap_mask = all;
        break;
    default:
        return false;
    }

    return ep->devx_qp || (wr->opcode == UCT_RC_OP_ATOMIC_FA) ||
           (wr->opcode == UCT_RC_OP_ATOMIC_CS);
}

ucs_status_t post_atomic(uct_ep_h tl_ep, uct_atomic_op_t opcode, unsigned size,
                         uint64_t value, uint64_t compare, uint64_t remote_addr,
                         uct_rkey_t rkey, void *result, uct_completion_t *comp)
{
    uct_rc_mlx5_ep    *ep    = rc_ep(tl_ep);
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    uct_rc_wr_t       wr     = {};
    uct_rc_op_t       op     = {};
    ucs_status_t      status;

    status = check_ep(ep);
    if (status != UCS_OK) {
        return status;
    }
    if (!atomic_wr(ep, opcode, size, value, compare, &wr)) {
        return UCS_ERR_UNSUPPORTED;
    }
    if (ucs_unlikely(remote_addr % size)) {
        ucs_error("%s: atomic on %u bytes at unaligned address 0x%" PRIx64,
                  iface->dev_name.c_str(), size, remote_addr);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!has_resources(ep, max_wqe_bbs)) {
        return UCS_ERR_NO_RESOURCE;
    }

    op.buf = iface->tx_bufs->get(); /* the device writes the old value here */
    if (op.buf == nullptr) {
        return UCS_ERR_NO_RESOURCE;
    }

    wr.sge[0]      = {reinterpret_cast<uintptr_t>(op.buf), size,
                      iface->tx_bufs->lkey()};
    wr.num_sge     = 1;
    wr.remote_addr = remote_addr;
    wr.rkey        = rkey_of(rkey);
    op.comp        = comp;
    op.result      = result;
    op.result_size = size;
    op.result_be   = (wr.opcode == UCT_RC_OP_MASKED_FA) ||
                     (wr.opcode == UCT_RC_OP_MASKED_CS);
    status         = post(ep, &wr, op);
    if (status != UCS_OK) {
        iface->tx_bufs->put(op.buf);
        return status;
    }
    return (result != nullptr) ? UCS_INPROGRESS : UCS_OK;
}

} // namespace

ucs_status_t uct_rc_mlx5_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                           uint64_t swap, uint64_t remote_addr,
                                           uct_rkey_t rkey, uint64_t *result,
                                           uct_completion_t *comp)
{
    return post_atomic(ep, UCT_ATOMIC_OP_CSWAP, 8, swap, compare, remote_addr,
                       rkey, result, comp);
}

ucs_status_t uct_rc_mlx5_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                           uint32_t swap, uint64_t remote_addr,
                                           uct_rkey_t rkey, uint32_t *result,
                                           uct_completion_t *comp)
{
    return post_atomic(ep, UCT_ATOMIC_OP_CSWAP, 4, swap, compare, remote_addr,
                       rkey, result, comp);
}

ucs_status_t uct_rc_mlx5_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                          uint64_t value, uint64_t remote_addr,
                                          uct_rkey_t rkey)
{
    return post_atomic(ep, opcode, 8, value, 0, remote_addr, rkey, nullptr,
                       nullptr);
}

ucs_status_t uct_rc_mlx5_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                          uint32_t value, uint64_t remote_addr,
                                          uct_rkey_t rkey)
{
    return post_atomic(ep, opcode, 4, value, 0, remote_addr, rkey, nullptr,
                       nullptr);
}

ucs_status_t uct_rc_mlx5_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                           uint64_t value, uint64_t *result,
                                           uint64_t remote_addr, uct_rkey_t rkey,
                                           uct_completion_t *comp)
{
    return post_atomic(ep, opcode, 8, value, 0, remote_addr, rkey, result,
                       comp);
}

ucs_status_t uct_rc_mlx5_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                           uint32_t value, uint32_t *result,
                                           uint64_t remote_addr, uct_rkey_t rkey,
                                           uct_completion_t *comp)
{
    return post_atomic(ep, opcode, 4, value, 0, remote_addr, rkey, result,
                       comp);
}

/* ------------------------------------------------------------------------
 * Ordering, pending
 */

ucs_status_t uct_rc_mlx5_ep_flush(uct_ep_h tl_ep, unsigned flags, uct_completion_t *comp)
{
    uct_rc_mlx5_ep *ep = rc_ep(tl_ep);
    uct_rc_op_t    marker = {};

    if (flags & UCT_FLUSH_FLAG_CANCEL) {
        if (ep->failed == UCS_OK) {
            ep->failed = UCS_ERR_CANCELED;
            while (!ep->ops.empty()) {
                uct_rc_op_t op = ep->ops.front();
                ep->ops.pop_front();
                retire(ep, op, UCS_ERR_CANCELED);
            }
            ep->pending.clear();
            if (ep->devx_qp) {
                (void)ep->devx_qp->to_error(); /* logged if it fails */
            }
        }
        return UCS_OK;
    }

    if (ep->failed != UCS_OK) {
        return ep->failed;
    }
    if (ep->cq_inflight == 0) {
        return UCS_OK;
    }
    if (comp == nullptr) {
        return UCS_INPROGRESS;
    }
    if (ep->ops.full()) {
        return UCS_ERR_NO_RESOURCE; /* too many flushes waiting */
    }

    /* completes with the last operation posted so far */
    marker.sn   = ep->last_sn;
    marker.comp = comp;
    ep->ops.push_back(marker);
    ep->wqe_cost[ep->last_sn & ep->sq_mask] |= UCT_RC_WQE_RETIRES;
    return UCS_INPROGRESS;
}

ucs_status_t uct_rc_mlx5_ep_fence(uct_ep_h tl_ep, unsigned)
{
    rc_ep(tl_ep)->fence_next = true;
    return UCS_OK;
}

ucs_status_t uct_rc_mlx5_ep_pending_add(uct_ep_h tl_ep, uct_pending_req_t *req, unsigned)
{
    uct_rc_mlx5_ep *ep = rc_ep(tl_ep);

    if (ep->pending.empty() && has_resources(ep, max_wqe_bbs) &&
        (ep_iface(ep)->tx_bufs->num_free() > 0) &&
        (!ep_iface(ep)->rc.fc_enable || (ep->fc_wnd > 0))) {
        return UCS_ERR_BUSY;
    }
    ep->pending.push_back(req);
    ep_iface(ep)->dispatch_due = true;
    return UCS_OK;
}

void uct_rc_mlx5_ep_pending_purge(uct_ep_h tl_ep, uct_pending_purge_callback_t cb, void *arg)
{
    uct_rc_mlx5_ep *ep = rc_ep(tl_ep);

    while (!ep->pending.empty()) {
        uct_pending_req_t *req = ep->pending.front();
        ep->pending.pop_front();
        if (cb != nullptr) {
            cb(req, arg);
        }
    }
}

ucs_status_t uct_rc_mlx5_iface_flush(uct_iface_h tl_iface, unsigned flags,
                         uct_completion_t *comp)
{
    auto *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);

    if (comp != nullptr) {
        return UCS_ERR_UNSUPPORTED; /* as UCX's RC: poll until UCS_OK */
    }

    bool busy = false;

    iface->eps_by_qpn.for_each([&](uct_rc_mlx5_ep *ep) {
        if (flags & UCT_FLUSH_FLAG_CANCEL) {
            (void)uct_rc_mlx5_ep_flush(ep, flags, nullptr);
        } else if ((ep->cq_inflight > 0) && (ep->failed == UCS_OK)) {
            busy = true;
        }
    });
    return busy ? UCS_INPROGRESS : UCS_OK;
}

ucs_status_t uct_rc_mlx5_iface_fence(uct_iface_h tl_iface, unsigned flags)
{
    auto *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);

    iface->eps_by_qpn.for_each([flags](uct_rc_mlx5_ep *ep) {
        (void)uct_rc_mlx5_ep_fence(ep, flags);
    });
    return UCS_OK;
}


/* rc_mlx5's send completions, straight from the CQ ring */
namespace {

/* An error CQE (or one of an unexpected opcode) on the send CQ */
__attribute__((noinline)) void txq_error(uct_rc_mlx5_iface *iface,
                                         const struct mlx5_cqe64 *cqe)
{
    uct_rc_completion_t c;

    uct_rc_mlx5_txq_error(cqe, &c);
    complete(iface, c); /* may call the error handler */
}

/* rc_mlx5's send completions, straight from the CQ ring */
/* A completion of a QP other than the last one's */
__attribute__((noinline)) void completed_other(uct_rc_mlx5_iface *iface,
                                               uint32_t qpn, uint16_t sn)
{
    uct_rc_mlx5_ep *ep = iface->eps_by_qpn.find(qpn);

    if (ep != nullptr) {
        completed(iface, ep, sn);
    }
}

/* rc_mlx5's send completions, straight from the CQ ring: all there are
 * (no more than the CQ credits handed out) */
inline unsigned txq_progress_devx(uct_rc_mlx5_iface *iface)
{
    uct_rc_mlx5_poll_cq &cq    = iface->tx_cq;
    unsigned            count  = 0;

    if (!cq.ready()) {
        return 0;
    }

    do {
        const struct mlx5_cqe64 *cqe = cq.cqe();
        const uint32_t          qpn  = be32toh(cqe->sop_drop_qpn) & 0xffffff;
        const uint16_t          sn   = be16toh(cqe->wqe_counter);
        const uint8_t           op   = cqe->op_own >> 4;

        cq.advance();
        ++count;
        if (ucs_unlikely(op != MLX5_CQE_REQ)) {
            txq_error(iface, cqe);
        } else if (ucs_likely(qpn == iface->eps_by_qpn.last_qpn())) {
            completed(iface, iface->eps_by_qpn.last_ep(), sn);
        } else {
            completed_other(iface, qpn, sn);
        }
    } while (cq.ready());

    cq.update_ci();
    return count;
}

/* Receives, and what a grant they brought may let go */
__attribute__((noinline)) unsigned rx_progress(uct_rc_mlx5_iface *iface)
{
    const unsigned count = iface->rx->progress(tx_batch);

    if ((count > 0) && iface->dispatch_due) {
        dispatch_pending(iface); /* a grant may have opened a window */
    }
    return count;
}

/* rc_verbs: completions through the glue */
__attribute__((noinline)) unsigned verbs_progress(uct_rc_mlx5_iface *iface)
{
    uct_rc_completion_t comps[tx_batch];
    unsigned            count;

    count = rx_progress(iface);
    if (count > 0) {
        return count; /* receives first, as UCX's RC does */
    }

    count = uct_rc_verbs_txq_poll(iface, comps, tx_batch);
    for (unsigned i = 0; i < count; ++i) {
        complete(iface, comps[i]);
    }
    if ((count > 0) && iface->dispatch_due) {
        dispatch_pending(iface);
    }
    return count;
}

} // namespace

unsigned uct_rc_mlx5_iface_data_progress(uct_iface_h tl_iface)
{
    auto     *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);
    unsigned count;

    if (ucs_unlikely(!iface->rx_direct)) {
        return verbs_progress(iface);
    }

    /* rc_mlx5: receives first, as UCX's RC does */
    if (iface->rx_cq.ready()) {
        count = iface->rx->progress_direct(tx_batch);
        if (ucs_unlikely(iface->dispatch_due)) {
            dispatch_pending(iface); /* a grant may have opened a window */
        }
        return count;
    }

    count = txq_progress_devx(iface);
    if (ucs_unlikely(iface->dispatch_due) && (count > 0)) {
        dispatch_pending(iface);
    }
    return count;
}

ucs_status_t uct_rc_mlx5_iface_data_init(uct_rc_mlx5_iface *iface)
{
    uct_rc_buf_pool *bufs;
    uct_rc_rx       *rx;
    ucs_status_t    status;

    iface->seg_size    = iface->config.max_bcopy;
    iface->max_inline  = std::min<size_t>(iface->config.max_short,
                                          max_inline_devx);
    iface->tx_cq_avail = iface->rc.tx_queue_len;
    iface->fc_soft_thresh = iface->rc.fc_wnd_size / 2;
    iface->fc_hard_thresh = iface->rc.fc_wnd_size / 4;

    status = uct_rc_buf_pool::create(*iface->md->dev, iface->port_num,
                                     iface->md->pd, iface->seg_size,
                                     iface->rc.tx_queue_len, &bufs);
    if (status != UCS_OK) {
        return status;
    }
    iface->tx_bufs.reset(bufs);

    status = uct_rc_rx::create(iface, iface->rc.rx_queue_len,
                               iface->seg_size, &rx);
    if (status != UCS_OK) {
        return status;
    }
    iface->rx.reset(rx);
    return UCS_OK;
}

void uct_rc_mlx5_iface_data_cleanup(uct_rc_mlx5_iface *iface)
{
    iface->rx.reset();
    iface->tx_bufs.reset();
}

void uct_rc_mlx5_iface_data_query(const uct_rc_mlx5_iface *iface,
                                  uct_iface_attr_t *attr)
{
    const size_t max_zcopy = size_t(1) << std::min(iface->common.caps.log_max_msg
                                                   ? iface->common.caps.log_max_msg
                                                   : 30u, 30u);

    attr->cap.flags |= UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                       UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                       UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                       UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                       UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC |
                       UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;

    attr->cap.am.max_short  = iface->max_inline - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.max_bcopy  = iface->seg_size - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.min_zcopy  = 0;
    attr->cap.am.max_zcopy  = iface->seg_size - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.max_hdr    = iface->max_inline - sizeof(uct_rc_am_hdr_t);
    attr->cap.am.max_iov    = UCT_RC_MAX_SGE;
    attr->cap.am.opt_zcopy_align = 1;
    attr->cap.am.align_mtu  = 128u << iface->path_mtu;

    attr->cap.put.max_short = iface->max_inline;
    attr->cap.put.max_bcopy = iface->seg_size;
    attr->cap.put.min_zcopy = 0;
    attr->cap.put.max_zcopy = max_zcopy;
    attr->cap.put.max_iov   = UCT_RC_MAX_SGE;
    attr->cap.put.opt_zcopy_align = 1;
    attr->cap.put.align_mtu = 128u << iface->path_mtu;

    /* the atomics UCX's RC transports advertise, as they do them */
    const uint64_t ops_post  = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                               UCS_BIT(UCT_ATOMIC_OP_AND) |
                               UCS_BIT(UCT_ATOMIC_OP_OR) |
                               UCS_BIT(UCT_ATOMIC_OP_XOR);
    const uint64_t ops_fetch = ops_post | UCS_BIT(UCT_ATOMIC_OP_SWAP) |
                               UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    attr->cap.flags |= UCT_IFACE_FLAG_ATOMIC_DEVICE;
    if (iface->devx) {
        attr->cap.atomic32.op_flags  = ops_post;
        attr->cap.atomic32.fop_flags = ops_fetch;
        attr->cap.atomic64.op_flags  = ops_post;
        attr->cap.atomic64.fop_flags = ops_fetch;
    } else {
        attr->cap.atomic64.op_flags  = UCS_BIT(UCT_ATOMIC_OP_ADD);
        attr->cap.atomic64.fop_flags = UCS_BIT(UCT_ATOMIC_OP_ADD) |
                                       UCS_BIT(UCT_ATOMIC_OP_CSWAP);
    }

    attr->cap.get.max_bcopy = iface->seg_size;
    attr->cap.get.min_zcopy = 0;
    attr->cap.get.max_zcopy = max_zcopy;
    attr->cap.get.max_iov   = UCT_RC_MAX_SGE;
    attr->cap.get.opt_zcopy_align = 1;
    attr->cap.get.align_mtu = 128u << iface->path_mtu;
}

void uct_rc_mlx5_ep_fc_received(uct_rc_mlx5_iface *iface, uint32_t qpn,
                                uint8_t fc)
{
    uct_rc_mlx5_ep *ep = iface->eps_by_qpn.find(qpn);

    if (ep == nullptr) {
        return; /* destroyed meanwhile */
    }

    if (fc & UCT_RC_FC_GRANT) {
        ep->fc_wnd = iface->rc.fc_wnd_size; /* a full window again */
        if (!ep->pending.empty()) {
            iface->dispatch_due = true;
        }
    }
    if ((fc != UCT_RC_FC_PURE_GRANT) &&
        (fc & (UCT_RC_FC_SOFT_REQ | UCT_RC_FC_HARD_REQ))) {
        ep->fc_grant_due = true;
        send_grant(ep);
    }
}

ucs_status_t uct_rc_mlx5_ep_data_init(uct_rc_mlx5_ep *ep)
{
    uct_rc_mlx5_iface *iface = ep_iface(ep);
    const uint32_t    qpn    = uct_rc_mlx5_ep_qpn(ep);
    unsigned          slots;
    ucs_status_t      status;

    ep->fc_wnd = iface->rc.fc_wnd_size;
    if (ep->devx_qp) {
        uct_ib_mlx5_devx_qp *qp = ep->devx_qp.get();

        slots        = qp->sq_wqe_cnt();
        ep->sq_avail = slots - 2 * max_wqe_bbs;
        ep->sq_buf   = static_cast<uint8_t*>(qp->sq_buf());
        ep->sq_dbrec = &qp->dbrec()[MLX5_SND_DBR];
        ep->uar_reg  = static_cast<uint64_t*>(iface->uar->reg_addr());
        ep->qpn_ds   = qpn << 8;
    } else {
        slots        = ucs_roundup_pow2(iface->rc.tx_queue_len);
        ep->sq_avail = iface->rc.tx_queue_len;
    }
    ep->sq_mask = slots - 1;

    /* one operation per WQE at most, and as many flushes waiting */
    status = ep->ops.init(2 * slots);
    if (status != UCS_OK) {
        return status;
    }
    ep->wqe_cost.reset(new (std::nothrow) uint16_t[slots]());
    if (ep->wqe_cost == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    return iface->eps_by_qpn.insert(qpn, ep);
}

void uct_rc_mlx5_ep_data_cleanup(uct_rc_mlx5_ep *ep)
{
    uct_rc_mlx5_iface *iface = ep_iface(ep);

    if (ep->wqe_cost == nullptr) {
        return; /* data_init did not get far */
    }
    ep_iface(ep)->eps_by_qpn.erase(uct_rc_mlx5_ep_qpn(ep));
    /* what is still outstanding completes as canceled */
    while (!ep->ops.empty()) {
        uct_rc_op_t op = ep->ops.front();
        ep->ops.pop_front();
        retire(ep, op, UCS_ERR_CANCELED);
    }
    /* CQEs of its WQEs, if any are still to be polled, find no endpoint */
    iface->tx_cq_avail += ep->cq_inflight;
    ep->cq_inflight     = 0;
}
