/*
 * rc_mlx5's data path resources and progress (rc_mlx5_iface.h): receive
 * CQEs first, as UCX's RC does, then send CQEs, straight from the CQ rings;
 * and what a grant they brought may let go.
 *
 * Layer mlx5/rc: may include rc/base/, the mlx5 common layer, mlx5/dv/,
 * ib/base/, uct/base/ and ucs/; never rc/verbs/.
 */
#include "rc_mlx5_iface.h"
#include "rc_mlx5_rx.inl"
#include "rc_mlx5_txq.h"

#include <uct/ib/mlx5/ib_mlx5.inl>

namespace {

/* An error CQE (or one of an unexpected opcode) on the send CQ */
__attribute__((noinline)) void txq_error(uct_rc_mlx5_iface *iface,
                                         const struct mlx5_cqe64 *cqe)
{
    uct_rc_completion_t c;

    uct_rc_mlx5_txq_error(cqe, &c);
    uct_rc_iface_complete(iface, c); /* may call the error handler */
}

/* A completion of a QP other than the last one's */
__attribute__((noinline)) void completed_other(uct_rc_mlx5_iface *iface,
                                               uint32_t qpn, uint16_t sn)
{
    uct_rc_ep *ep = iface->eps_by_qpn.find(qpn);

    if (ep != nullptr) {
        uct_rc_ep_completed(iface, ep, sn);
    }
}

/* The send completions, once the CQ has one: all there are (no more than
 * the CQ credits handed out) */
__attribute__((noinline)) unsigned txq_poll(uct_rc_mlx5_iface *iface)
{
    uct_ib_mlx5_poll_cq &cq    = iface->tx_cq;
    unsigned            count  = 0;

    do {
        const struct mlx5_cqe64 *cqe = cq.cqe();
        const uint32_t          qpn  = uct_ib_mlx5_cqe_qpn(cqe);
        const uint16_t          sn   = be16toh(cqe->wqe_counter);
        const uint8_t           op   = cqe->op_own >> 4;

        cq.advance();
        ++count;
        if (ucs_unlikely(op != MLX5_CQE_REQ)) {
            txq_error(iface, cqe);
        } else if (ucs_likely(qpn == iface->eps_by_qpn.last_qpn())) {
            uct_rc_ep_completed(iface, iface->eps_by_qpn.last_ep(), sn);
        } else {
            completed_other(iface, qpn, sn);
        }
    } while (cq.ready());

    cq.update_ci();
    return count;
}

/* The send completions when no message arrived, and what their credits
 * let go */
__attribute__((noinline)) unsigned txq_only_poll(uct_rc_mlx5_iface *iface)
{
    const unsigned count = txq_poll(iface);

    if (ucs_unlikely(iface->dispatch_due)) {
        uct_rc_iface_dispatch_pending(iface);
    }
    return count;
}

/* The send completions; the check inline, so that a call that finds none
 * stays short */
inline unsigned txq_progress(uct_rc_mlx5_iface *iface)
{
    return iface->tx_cq.ready() ? txq_poll(iface) : 0;
}

/* A message arrived: the receives first, as UCX's RC does; the send
 * completions too once half the send CQ's credits are held, else a receive
 * on every call (a ping-pong) would leave them unpolled until the credits
 * run out, with every WQE asking for a completion on the way there */
__attribute__((noinline)) unsigned rx_progress(uct_rc_mlx5_iface *iface)
{
    unsigned count = iface->rx->progress(UCT_RC_IFACE_PROGRESS_BATCH);

    if (ucs_unlikely(iface->tx_cq_avail <= iface->tx_cq_low)) {
        count += txq_progress(iface);
    }
    if (ucs_unlikely(iface->dispatch_due)) {
        uct_rc_iface_dispatch_pending(iface); /* a grant may have opened
                                                 a window */
    }
    return count;
}

__attribute__((always_inline)) inline unsigned
iface_progress(uct_rc_mlx5_iface *iface)
{
    /* tail calls, so that a call that finds nothing saves no registers */
    if (iface->rx_cq.ready()) {
        return rx_progress(iface);
    }
    return iface->tx_cq.ready() ? txq_only_poll(iface) : 0;
}

/* The worker's callback: the progress itself, one call less than through
 * the interface's ops */
unsigned progress_cb(void *arg)
{
    return iface_progress(static_cast<uct_rc_mlx5_iface*>(
            static_cast<uct_base_iface_t*>(arg)));
}

} // namespace

unsigned uct_rc_mlx5_iface_progress(uct_iface_h tl_iface)
{
    return iface_progress(static_cast<uct_rc_mlx5_iface*>(tl_iface));
}

ucs_status_t uct_rc_mlx5_iface_data_init(uct_rc_mlx5_iface *iface)
{
    uct_rc_mlx5_rx *rx;
    ucs_status_t   status;

    status = uct_rc_iface_data_init(iface);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_rc_mlx5_rx::create(iface, iface->rc.rx_queue_len,
                                    iface->seg_size, &rx);
    if (status != UCS_OK) {
        return status;
    }
    iface->rx.reset(rx);
    iface->progress_cb = progress_cb;
    return UCS_OK;
}
