/*
 * The transport-neutral part of an RC endpoint: its send queue room and
 * sequence numbers, the operations waiting for their completion, flow
 * control, pending requests and failure. The neutral endpoint operations
 * (rc_ep_am.cc, rc_ep_rma.cc, rc_ep_atomic.cc, rc_ep_flush.cc, on what
 * rc_ep.cc shares) build a uct_rc_wr_t and post it through the transport
 * (uct_rc_iface_ops_t); a transport's fast paths use the inline helpers
 * here and write their WQEs themselves.
 *
 * A WQE asks for a completion once in TX_CQ_MODERATION WQEs of its
 * endpoint (at most an eighth of its send queue: WQEs of the largest cost
 * without a completion never hold more than half of it), or when it has an
 * operation to retire (a completion, a bounce buffer or a result to
 * deliver: a short operation leaves nothing), or when its interface's send
 * CQ credits are half gone (what idle endpoints hold without a completion
 * never starves a busy one). A completion gives back the send queue room of its
 * WQE and of every WQE before it, and retires the operations up to its
 * sequence number. The send CQ has one credit per posted WQE, returned
 * when a completion covers it (also by a failed endpoint's flushed WQEs,
 * each of which completes), so the CQ can never overrun.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_EP_H_
#define UCT_RC_EP_H_

#include "rc_iface.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

#include <climits>
#include <deque>
#include <memory>
#include <new>

/* The room the largest work request takes (4 basic blocks of rc_mlx5):
 * what a bcopy, an atomic or a pending request checks for */
constexpr unsigned UCT_RC_EP_MAX_WR_COST = 4;

/* Inline bytes at most, header included (fit UCT_RC_EP_MAX_WR_COST) */
constexpr unsigned UCT_RC_EP_MAX_INLINE = 512;

/* What an endpoint keeps of a WQE, by the slot of its first basic block:
 * the send queue room it takes, and its ordinal among the endpoint's WQEs,
 * so that a completion gives back the room and the send CQ credits of
 * every WQE it covers at once */
struct uct_rc_wqe_slot {
    uint16_t cost;
    uint16_t ord;
};

/* An RC endpoint's address: its QP number, 24 bits */
#define UCT_RC_EP_ADDR_LEN 3

/* The window of an endpoint without flow control */
constexpr int UCT_RC_EP_FC_UNBOUNDED = INT_MAX;

/* An endpoint owns one QP, which its transport adds */
struct uct_rc_ep : uct_ep {
    uint32_t                       qpn        = 0;
    uint8_t                        path_index = 0; /* UCT_EP_PARAM */
    bool                           connected  = false;
    bool                           usable     = false; /* connected, not
                                                          failed: the fast
                                                          paths' one test */

    /* Data path: operations waiting for their WQE's completion, in the
     * order posted (only those with something to do then); the next WQE
     * index (rc_mlx5) or request number, the last one posted, and each
     * WQE's room and ordinal, by the slot of its first basic block */
    uct_rc_op_ring                 ops;
    uint16_t                       sn = 0;
    uint16_t                       last_sn = 0;
    unsigned                       sq_avail = 0; /* BBs, or WRs */
    std::unique_ptr<uct_rc_wqe_slot[]> wqes;
    uint32_t                       sq_mask = 0;
    bool                           fence_next = false;
    int                            fc_wnd = 0;    /* AM credits */
    bool                           fc_grant_due = false; /* to send */
    ucs_status_t                   failed = UCS_OK; /* once failed */
    std::deque<uct_pending_req_t*> pending;
    unsigned                       moderation  = 1; /* a CQE per */
    unsigned                       signal_in   = 1; /* WQEs until one asks */
    uint16_t                       ci_sn       = 0; /* oldest not completed:
                                                       at sn when none is */
    uint16_t                       wqe_ord     = 0; /* the next WQE's */
    uint16_t                       ci_ord      = 0; /* ci_sn's WQE's */
    uint32_t                       dest_qpn = 0;    /* once connected */
    struct ibv_ah_attr             peer_ah  = {};   /* its address */
};

static inline void uct_rc_ep_addr_pack(uint32_t qpn, uct_ep_addr_t *addr)
{
    uint8_t *p = reinterpret_cast<uint8_t*>(addr);

    p[0] = qpn & 0xff;
    p[1] = (qpn >> 8) & 0xff;
    p[2] = (qpn >> 16) & 0xff;
}

static inline uint32_t uct_rc_ep_addr_unpack(const uct_ep_addr_t *addr)
{
    const uint8_t *p = reinterpret_cast<const uint8_t*>(addr);

    return p[0] | (p[1] << 8) | (p[2] << 16);
}

static inline uct_rc_iface *uct_rc_ep_iface(const uct_rc_ep *ep)
{
    return static_cast<uct_rc_iface*>(ep->iface);
}

/** After a change of @a ep's connected or failed */
static inline void uct_rc_ep_update_usable(uct_rc_ep *ep)
{
    ep->usable = ep->connected && (ep->failed == UCS_OK);
}

static inline uct_rc_ep *uct_rc_ep_of(uct_ep_h tl_ep)
{
    return static_cast<uct_rc_ep*>(tl_ep);
}

/** Whether the QP can take one more WQE of @a cost, and the send CQ its
 *  completion */
static inline bool uct_rc_ep_has_resources(const uct_rc_ep *ep, unsigned cost)
{
    return (ep->sq_avail >= cost) && (uct_rc_ep_iface(ep)->tx_cq_avail > 0);
}

/** The send queue room @a wr takes on @a ep's transport */
static inline unsigned uct_rc_ep_wr_cost(const uct_rc_ep *ep,
                                         const uct_rc_wr_t *wr)
{
    return uct_rc_ep_iface(ep)->rc_ops->wr_cost(ep, wr);
}

/** An active message's header: its id, and flow control. Takes a credit;
 *  false when the window is empty. Without flow control the window is
 *  unbounded and both thresholds 0, so one comparison serves both */
static inline bool uct_rc_ep_am_header(uct_rc_ep *ep, uint8_t id,
                                       uint8_t *hdr_p)
{
    const uct_rc_iface *iface = uct_rc_ep_iface(ep);
    uint8_t            hdr    = id |
                                (ep->fc_grant_due ? UCT_RC_FC_GRANT : 0);

    if (ucs_unlikely(ep->fc_wnd <= iface->fc_soft_thresh)) {
        if (!iface->rc.fc_enable) {
            ep->fc_wnd = UCT_RC_EP_FC_UNBOUNDED;
        } else if (ep->fc_wnd <= 0) {
            return false;
        } else if (ep->fc_wnd == iface->fc_soft_thresh) {
            hdr |= UCT_RC_FC_SOFT_REQ;
        } else if (ep->fc_wnd == iface->fc_hard_thresh) {
            hdr |= UCT_RC_FC_HARD_REQ;
        }
    }
    *hdr_p = hdr;
    return true;
}

/** The message with uct_rc_ep_am_header()'s header was posted: its credit
 *  taken, the grant it carried if one was due no longer due */
static inline void uct_rc_ep_am_sent(uct_rc_ep *ep)
{
    --ep->fc_wnd;
    ep->fc_grant_due = false;
}

/** Whether the next WQE on @a ep asks for a completion (one with
 *  operations to retire always does): once in its moderation; while half
 *  the send CQ's credits are held, once in an eighth of it, and always when
 *  it takes the last credit, so that the unsignalled WQEs' credits come
 *  back soon and a stream that never progresses until refused does not
 *  ask for a completion per WQE */
static inline bool uct_rc_ep_signal_next(const uct_rc_iface *iface,
                                         const uct_rc_ep *ep)
{
    return (ep->signal_in == 1) ||
           ((iface->tx_cq_avail <= iface->tx_cq_low) &&
            (((ep->moderation - ep->signal_in + 1) * 8 >= ep->moderation) ||
             (iface->tx_cq_avail == 1)));
}

/** Whether WQEs were posted on @a ep since the last that asked for a
 *  completion */
static inline bool uct_rc_ep_unsignaled(const uct_rc_ep *ep)
{
    return ep->signal_in != ep->moderation;
}

/** A WQE of @a cost that started at @a sn was posted on @a ep, asking for
 *  a completion or not. */
static inline void uct_rc_ep_posted(uct_rc_iface *iface, uct_rc_ep *ep,
                                    uint16_t sn, unsigned cost, bool signaled)
{
    uct_rc_wqe_slot &slot = ep->wqes[sn & ep->sq_mask];

    slot.cost      = static_cast<uint16_t>(cost);
    slot.ord       = ep->wqe_ord++;
    ep->last_sn    = sn;
    ep->fence_next = false;
    ep->sq_avail  -= cost;
    --iface->tx_cq_avail; /* a credit per WQE, signalled or not */
    ep->signal_in  = signaled ? ep->moderation : ep->signal_in - 1;
}

/** The operations up to @a sn are done */
__attribute__((noinline)) void uct_rc_ep_retire_upto(uct_rc_ep *ep,
                                                     uint16_t sn);

/** A completion of the WQE at @a sn: its room and credit back, and those of
 *  every WQE before it; whether operations are due to retire. A completion
 *  of a WQE an earlier one covered changes nothing. */
static inline bool uct_rc_ep_reclaim(uct_rc_iface *iface, uct_rc_ep *ep,
                                     uint16_t sn)
{
    if (ucs_unlikely(static_cast<int16_t>(sn - ep->ci_sn) < 0)) {
        return false;
    }

    const uct_rc_wqe_slot &slot = ep->wqes[sn & ep->sq_mask];
    const uint16_t        end   = sn + slot.cost;
    const uint16_t        ord   = slot.ord + 1;

    ep->sq_avail       += static_cast<uint16_t>(end - ep->ci_sn);
    iface->tx_cq_avail += static_cast<uint16_t>(ord - ep->ci_ord);
    ep->ci_sn           = end;
    ep->ci_ord          = ord;
    return !ep->ops.empty() &&
           (static_cast<int16_t>(ep->ops.front().sn - sn) <= 0);
}

/** The WQE at @a sn completed: the room of it and of those before it back,
 *  and the operations up to it retired */
static inline void uct_rc_ep_completed(uct_rc_iface *iface, uct_rc_ep *ep,
                                       uint16_t sn)
{
    if (ucs_unlikely(uct_rc_ep_reclaim(iface, ep, sn))) {
        uct_rc_ep_retire_upto(ep, sn);
    }
}

/* ------------------------------------------------------------------------
 * What the operations share (rc_ep.cc)
 */

/** Checks every operation shares: UCS_OK, or the status to return */
static inline ucs_status_t uct_rc_ep_check(const uct_rc_ep *ep)
{
    if (ucs_unlikely(ep->failed != UCS_OK)) {
        return ep->failed;
    }
    if (ucs_unlikely(!ep->connected)) {
        ucs_error("%s: qp 0x%x: operation on an endpoint that is not "
                  "connected", uct_rc_ep_iface(ep)->dev_name.c_str(), ep->qpn);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

static inline ucs_status_t uct_rc_ep_check_am_id(const uct_rc_ep *ep,
                                                 uint8_t id)
{
    if (ucs_unlikely(id >= UCT_AM_ID_MAX)) {
        ucs_error("%s: active message id %u out of range (0..%u)",
                  uct_rc_ep_iface(ep)->dev_name.c_str(), id,
                  unsigned(UCT_AM_ID_MAX - 1));
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

static inline ucs_status_t uct_rc_ep_check_length(const uct_rc_ep *ep,
                                                  const char *what,
                                                  size_t length, size_t max)
{
    if (ucs_unlikely(length > max)) {
        ucs_error("%s: %s of %zu bytes exceeds the limit of %zu",
                  uct_rc_ep_iface(ep)->dev_name.c_str(), what, length, max);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

static inline uint32_t uct_rc_rkey(uct_rkey_t rkey)
{
    return static_cast<uint32_t>(rkey);
}

/** A NOP that asks for a completion, so that the WQEs before it complete;
 *  UCS_ERR_NO_RESOURCE when it does not fit now */
ucs_status_t uct_rc_ep_post_signal(uct_rc_ep *ep);

/** Post @a wr of @a cost for @a op: the caller checked the resources */
ucs_status_t uct_rc_ep_post(uct_rc_ep *ep, uct_rc_wr_t *wr, uct_rc_op_t op,
                            unsigned cost);

/** Every operation waiting, retired with @a status */
void uct_rc_ep_retire_all(uct_rc_ep *ep, ucs_status_t status);

/** The gather/scatter list of @a iov into @a wr; sizes and keys checked */
ucs_status_t uct_rc_ep_fill_iov(const uct_rc_ep *ep, const uct_iov_t *iov,
                                size_t iovcnt, size_t max_iov,
                                uct_rc_wr_t *wr);

/** A bcopy operation: pack into a bounce buffer, post it as @a wr's data
 *  after @a hdr_len bytes of @a hdr; the bytes packed, or an error */
ssize_t uct_rc_ep_post_bcopy(uct_rc_ep *ep, uct_rc_wr_t *wr,
                             const uint8_t *hdr, size_t hdr_len,
                             uct_pack_callback_t pack_cb, void *arg);

/* ------------------------------------------------------------------------
 * Endpoints of the neutral code
 */

/** The data path of @a ep, whose QP has @a slots send queue entries (basic
 *  blocks, or work requests) of which @a sq_avail are for operations; the
 *  endpoint is then found by its QP number (ep->qpn). */
[[nodiscard]] ucs_status_t uct_rc_ep_data_init(uct_rc_ep *ep, unsigned slots,
                                               unsigned sq_avail);
void uct_rc_ep_data_cleanup(uct_rc_ep *ep);

/** The parameters of an RC endpoint of @a iface: UCS_ERR_UNSUPPORTED
 *  (logged) for one that would connect to an interface (uct_rc_ep_new()) */
ucs_status_t uct_rc_ep_check_params(const uct_rc_iface *iface,
                                    const uct_ep_params_t *params);

/** What every RC endpoint takes of @a params */
void uct_rc_ep_init(uct_rc_ep *ep, const uct_ep_params_t *params);

/** A second connect of @a ep: logged, UCS_ERR_ALREADY_EXISTS */
ucs_status_t uct_rc_ep_connect_refused(const uct_rc_ep *ep);

/** Whether @a ep may connect now (logged if not): to a peer's device
 *  address, once. Inline, as the transports' connects were before the
 *  common RC layer took it (a call each costs a connect 14 instructions) */
static inline ucs_status_t
uct_rc_ep_connect_check(const uct_rc_ep *ep, const uct_device_addr_t *dev_addr)
{
    if (uct_ib_iface_check_device_addr(uct_rc_ep_iface(ep), dev_addr) !=
        UCS_OK) {
        return UCS_ERR_INVALID_PARAM;
    }
    return ep->connected ? uct_rc_ep_connect_refused(ep) : UCS_OK;
}

/** A connect to @a dest_qpn through @a ah_attr ended with @a status;
 *  returns it */
static inline ucs_status_t
uct_rc_ep_connected(uct_rc_ep *ep, ucs_status_t status, uint32_t dest_qpn,
                    const struct ibv_ah_attr *ah_attr)
{
    ep->connected = (status == UCS_OK);
    uct_rc_ep_update_usable(ep);
    ep->dest_qpn  = dest_qpn;
    ep->peer_ah   = *ah_attr;
    return status;
}

/** Flow control bits @a fc arrived on the QP @a qpn of @a iface */
void uct_rc_ep_fc_received(uct_rc_iface *iface, uint32_t qpn, uint8_t fc);

/** Whether the endpoint's QP reached RTS. */
int uct_rc_ep_is_connected(uct_ep_h tl_ep);

/** The QP number of an RC endpoint. */
uint32_t uct_rc_ep_qpn(uct_ep_h tl_ep);

/* Endpoint slots: the neutral operations (rc_ep*.cc) */
ucs_status_t uct_rc_ep_get_address(uct_ep_h tl_ep, uct_ep_addr_t *addr);
ucs_status_t uct_rc_ep_am_short(uct_ep_h ep, uint8_t id, uint64_t header,
                                const void *payload, unsigned length);
ucs_status_t uct_rc_ep_am_short_iov(uct_ep_h ep, uint8_t id,
                                    const uct_iov_t *iov, size_t iovcnt);
ssize_t      uct_rc_ep_am_bcopy(uct_ep_h ep, uint8_t id,
                                uct_pack_callback_t pack_cb, void *arg,
                                unsigned flags);
ucs_status_t uct_rc_ep_am_zcopy(uct_ep_h ep, uint8_t id, const void *header,
                                unsigned header_length, const uct_iov_t *iov,
                                size_t iovcnt, unsigned flags,
                                uct_completion_t *comp);
ucs_status_t uct_rc_ep_put_short(uct_ep_h ep, const void *buffer,
                                 unsigned length, uint64_t remote_addr,
                                 uct_rkey_t rkey);
ssize_t      uct_rc_ep_put_bcopy(uct_ep_h ep, uct_pack_callback_t pack_cb,
                                 void *arg, uint64_t remote_addr,
                                 uct_rkey_t rkey);
ucs_status_t uct_rc_ep_put_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_ep_get_bcopy(uct_ep_h ep, uct_unpack_callback_t unpack_cb,
                                 void *arg, size_t length,
                                 uint64_t remote_addr, uct_rkey_t rkey,
                                 uct_completion_t *comp);
ucs_status_t uct_rc_ep_get_zcopy(uct_ep_h ep, const uct_iov_t *iov,
                                 size_t iovcnt, uint64_t remote_addr,
                                 uct_rkey_t rkey, uct_completion_t *comp);
ucs_status_t uct_rc_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare,
                                      uint64_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint64_t *result,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare,
                                      uint32_t swap, uint64_t remote_addr,
                                      uct_rkey_t rkey, uint32_t *result,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint64_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey);
ucs_status_t uct_rc_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                     uint32_t value, uint64_t remote_addr,
                                     uct_rkey_t rkey);
ucs_status_t uct_rc_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint64_t value, uint64_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                      uint32_t value, uint32_t *result,
                                      uint64_t remote_addr, uct_rkey_t rkey,
                                      uct_completion_t *comp);
ucs_status_t uct_rc_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                   unsigned flags);
void         uct_rc_ep_pending_purge(uct_ep_h ep,
                                     uct_pending_purge_callback_t cb,
                                     void *arg);
ucs_status_t uct_rc_ep_flush(uct_ep_h ep, unsigned flags,
                             uct_completion_t *comp);
ucs_status_t uct_rc_ep_fence(uct_ep_h ep, unsigned flags);

/*
 * The operations of an RC transport with a data path: the neutral ones,
 * but for its endpoints' life cycle, its interface's close, query and
 * progress, and the operations it has fast paths for (am_short, am_bcopy,
 * put_short, get_bcopy, 8-byte atomics; the neutral ones where it has
 * none).
 */
#define UCT_RC_IFACE_OPS(_ep_create, _ep_destroy, _ep_connect_to_ep_v2, \
                         _iface_close, _iface_query, _iface_progress, \
                         _ep_am_short, _ep_am_bcopy, _ep_put_short, \
                         _ep_get_bcopy, _ep_atomic64_post, \
                         _ep_atomic64_fetch) \
    { \
        .ep_create                = _ep_create, \
        .ep_destroy               = _ep_destroy, \
        .ep_get_address           = uct_rc_ep_get_address, \
        .ep_connect_to_ep_v2      = _ep_connect_to_ep_v2, \
        .iface_close              = _iface_close, \
        .iface_query              = _iface_query, \
        .iface_get_device_address = uct_ib_iface_get_device_address, \
        .iface_get_address        = uct_iface_get_address_empty, \
        .iface_is_reachable_v2    = uct_ib_iface_is_reachable_v2, \
        .iface_progress_enable    = uct_base_iface_progress_enable, \
        .iface_progress_disable   = uct_base_iface_progress_disable, \
        .iface_progress           = _iface_progress, \
        .ep_am_short              = _ep_am_short, \
        .ep_am_short_iov          = uct_rc_ep_am_short_iov, \
        .ep_am_bcopy              = _ep_am_bcopy, \
        .ep_am_zcopy              = uct_rc_ep_am_zcopy, \
        .ep_put_short             = _ep_put_short, \
        .ep_put_bcopy             = uct_rc_ep_put_bcopy, \
        .ep_put_zcopy             = uct_rc_ep_put_zcopy, \
        .ep_get_short             = uct_ep_get_short_unsupported, \
        .ep_get_bcopy             = _ep_get_bcopy, \
        .ep_get_zcopy             = uct_rc_ep_get_zcopy, \
        .ep_atomic_cswap64        = uct_rc_ep_atomic_cswap64, \
        .ep_atomic_cswap32        = uct_rc_ep_atomic_cswap32, \
        .ep_atomic32_post         = uct_rc_ep_atomic32_post, \
        .ep_atomic64_post         = _ep_atomic64_post, \
        .ep_atomic32_fetch        = uct_rc_ep_atomic32_fetch, \
        .ep_atomic64_fetch        = _ep_atomic64_fetch, \
        .ep_pending_add           = uct_rc_ep_pending_add, \
        .ep_pending_purge         = uct_rc_ep_pending_purge, \
        .ep_flush                 = uct_rc_ep_flush, \
        .ep_fence                 = uct_rc_ep_fence, \
        .ep_check                 = uct_ep_check_unsupported, \
        .iface_flush              = uct_rc_iface_flush, \
        .iface_fence              = uct_rc_iface_fence, \
        .iface_event_fd_get       = uct_rc_iface_event_fd_get, \
        .iface_event_arm          = uct_rc_iface_event_arm \
    }

/**
 * A new endpoint of the transport's class @a Ep for @a params, with its
 * neutral part set: an RC endpoint connects to an endpoint, not to an
 * interface (UCS_ERR_UNSUPPORTED, logged).
 */
template <typename Ep>
[[nodiscard]] ucs_status_t uct_rc_ep_new(const uct_ep_params_t *params,
                                         Ep **ep_p)
{
    ucs_status_t status;
    Ep           *ep;

    status = uct_rc_ep_check_params(static_cast<uct_rc_iface*>(params->iface),
                                    params);
    if (status != UCS_OK) {
        return status;
    }

    ep = new (std::nothrow) Ep();
    if (ep == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    uct_rc_ep_init(ep, params);
    *ep_p = ep;
    return UCS_OK;
}

#endif
