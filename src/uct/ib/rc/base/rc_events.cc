/*
 * Completion events of the RC transports: both CQs of an interface report
 * to one completion channel, whose fd uct_iface_event_fd_get() gives;
 * uct_iface_event_arm() asks for one event on the next send completion
 * and/or received message, so a program may poll() the fd and sleep. As in
 * UCX, arming fails with UCS_ERR_BUSY while something is already there to
 * progress (an event not taken yet, a completion not polled yet): the
 * program progresses, then arms again.
 *
 * How a CQ is armed is the transport's (uct_rc_iface_ops_t::arm_cq):
 * rc_mlx5 polls its CQs itself, so it arms them itself too, with its own
 * consumer index (mlx5/ib_mlx5.h); rc_verbs arms through
 * ibv_req_notify_cq.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_iface.h"

#include <ucs/debug/log_def.h>

namespace {

constexpr unsigned supported_events = UCT_EVENT_SEND_COMP | UCT_EVENT_RECV |
                                      UCT_EVENT_RECV_SIG;

/* Take the events the channel holds; how many there were */
unsigned drain_events(uct_rc_iface *iface)
{
    unsigned      count = 0;
    struct ibv_cq *cq;

    while ((cq = iface->channel->get_event()) != nullptr) {
        if (iface->rc_ops->cq_event != nullptr) {
            iface->rc_ops->cq_event(iface, cq);
        }
        ++count;
    }
    return count;
}

} // namespace

ucs_status_t uct_rc_iface_event_fd_get(uct_iface_h tl_iface, int *fd_p)
{
    auto *iface = static_cast<uct_rc_iface*>(tl_iface);

    *fd_p = iface->channel->fd();
    return UCS_OK;
}

ucs_status_t uct_rc_iface_event_arm(uct_iface_h tl_iface, unsigned events)
{
    auto         *iface = static_cast<uct_rc_iface*>(tl_iface);
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
        status = iface->rc_ops->arm_cq(iface, true, false);
        if (status != UCS_OK) {
            return status;
        }
    }

    if (events & (UCT_EVENT_RECV | UCT_EVENT_RECV_SIG)) {
        status = iface->rc_ops->arm_cq(iface, false, !(events & UCT_EVENT_RECV));
        if (status != UCS_OK) {
            return status;
        }
    }

    /* a verbs CQ armed over completions it holds fires at once */
    return (drain_events(iface) > 0) ? UCS_ERR_BUSY : UCS_OK;
}
