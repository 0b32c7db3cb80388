/*
 * Completion events of rc_mlx5 and rc_verbs: both CQs of an interface
 * report to one completion channel, whose fd uct_iface_event_fd_get()
 * gives; uct_iface_event_arm() asks for one event on the next send
 * completion and/or received message, so a program may poll() the fd and
 * sleep. As in UCX, arming fails with UCS_ERR_BUSY while something is
 * already there to progress (an event not taken yet, a completion not
 * polled yet): the program progresses, then arms again.
 *
 * rc_mlx5 polls its send CQ itself, so it arms that CQ itself too, with
 * its own consumer index (rc_cq.h); rc_verbs, and any CQ polled through
 * ibv_poll_cq, arms through ibv_req_notify_cq.
 */
#include "rc_mlx5_iface.h"

#include <ucs/debug/log_def.h>

#include <cerrno>

namespace {

constexpr unsigned supported_events = UCT_EVENT_SEND_COMP | UCT_EVENT_RECV |
                                      UCT_EVENT_RECV_SIG;

/* Take the events the channel holds; how many there were */
unsigned drain_events(uct_rc_mlx5_iface *iface)
{
    unsigned      count = 0;
    struct ibv_cq *cq;

    while ((cq = iface->channel->get_event()) != nullptr) {
        /* the device fired the arm: the next one has a new sequence */
        if (cq == iface->send_cq->cq()) {
            ++iface->tx_cq.arm_sn;
        } else if (cq == iface->recv_cq->cq()) {
            ++iface->rx_cq.arm_sn;
        }
        ++count;
    }
    return count;
}

/* Arm @a cq, polled by the library (@a poll_cq) or through verbs */
ucs_status_t arm_cq(uct_rc_mlx5_iface *iface, const char *what,
                    const uct_ib_mlx5_cq &cq, uct_rc_mlx5_poll_cq *poll_cq,
                    bool solicited)
{
    int ret;

    if (poll_cq != nullptr) {
        if (poll_cq->peek() != nullptr) {
            return UCS_ERR_BUSY; /* a completion to poll first */
        }
        poll_cq->arm(solicited);
        return UCS_OK;
    }

    ret = uct_ib_glue->req_notify_cq(cq.cq(), solicited);
    if (ret != 0) {
        errno = ret;
        ucs_error("req_notify_cq(%s, %s cq 0x%x) failed: %m",
                  iface->dev_name.c_str(), what, cq.cqn());
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

} // namespace

ucs_status_t uct_rc_mlx5_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    auto *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);

    *fd_p = iface->channel->fd();
    return UCS_OK;
}

ucs_status_t uct_rc_mlx5_iface_event_arm(uct_iface_h tl_iface, unsigned events)
{
    auto         *iface = static_cast<uct_rc_mlx5_iface*>(tl_iface);
    ucs_status_t status;

    if (ucs_unlikely(events & ~supported_events)) {
        ucs_error("%s: uct_iface_event_arm: unknown events 0x%x",
                  iface->dev_name.c_str(), events & ~supported_events);
        return UCS_ERR_INVALID_PARAM;
    }

    if (drain_events(iface) > 0) {
        return UCS_ERR_BUSY;
    }

    if (events & UCT_EVENT_SEND_COMP) {
        status = arm_cq(iface, "send", *iface->send_cq,
                        iface->devx ? &iface->tx_cq : nullptr, false);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG)) {
        status = arm_cq(iface, "receive", *iface->recv_cq,
                        iface->rx_direct ? &iface->rx_cq : nullptr,
                        !(events & UCT_EVENT_RECV));
        if (status != UCS_OK) {
            return status;
        }
    }

    /* a verbs CQ armed over completions it holds fires at once */
    return (drain_events(iface) > 0) ? UCS_ERR_BUSY : UCS_OK;
}
