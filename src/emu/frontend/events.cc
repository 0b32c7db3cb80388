/*
 * Completion events: completion channels (an fd that becomes readable),
 * CQ arming and ibv_get_cq_event / ibv_ack_cq_events.
 *
 * A CQ is armed through the arm dword of its doorbell record, which
 * ibv_req_notify_cq writes as the mlx5 provider does and which an mlx5dv
 * user writes itself; the device fires its events (model/events.cc) onto
 * the CQ's channel, whose eventfd counts the queued events.
 *
 * Unlike rdma-core, destroying a CQ with events not yet acked fails with
 * EBUSY instead of waiting for the acks (nothing here waits forever).
 */
#include <emu/model/events.h>
#include <emu/frontend/ops.h>

#include <sys/eventfd.h>
#include <unistd.h>


namespace uct_ib_emu {




struct ibv_comp_channel *emu_create_comp_channel(struct ibv_context *ibctx)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    std::unique_ptr<comp_channel> ch;

    if (ctx == nullptr) {
        return fail_ptr<struct ibv_comp_channel>(EINVAL);
    }

    ch              = std::make_unique<comp_channel>(ctx);
    ch->ibv.context = ibctx;
    ch->ibv.fd      = eventfd(0, EFD_CLOEXEC);
    if (ch->ibv.fd < 0) {
        return nullptr; /* errno from eventfd */
    }

    register_handle(s, &ch->ibv, kind::COMP_CHANNEL, ch.get());
    return &add_object(ctx, std::move(ch))->ibv;
}

int emu_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    return with_object<comp_channel>(channel,
                                     [](emu_state &s, comp_channel *ch) {
        if (ch->refs > 0) {
            return EBUSY;
        }
        comp_channel_destroy_locked(s, ch);
        return 0;
    });
}

int emu_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
    emu_state &s = state();
    guard g(s.lock);
    cq *c = find<cq>(s, ibcq);

    if (c == nullptr) {
        return EINVAL;
    }

    /* as the provider: sequence number, command, consumer index */
    dma_store_be32(cq_arm_dword(c), ((c->arm_sn & 3) << 28) |
                                 (solicited_only ? CQ_ARM_CMD_SOL : 0) |
                                 (c->exec.sw_ci & CQ_ARM_INDEX_MASK));
    cq_event_check(s, c, false);
    return 0;
}

int emu_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq_p,
                     void **cq_context)
{
    emu_state &s = state();
    uint64_t value = 0;
    int fd;

    {
        guard g(s.lock);
        comp_channel *ch = find<comp_channel>(s, channel);

        if (ch == nullptr) {
            errno = EINVAL;
            return -1;
        }
        fd = ch->ibv.fd;
    }

    /* blocks until an event, unless the user made the fd non-blocking */
    if (read(fd, &value, sizeof(value)) != sizeof(value)) {
        return -1;
    }

    guard g(s.lock);
    comp_channel *ch = find<comp_channel>(s, channel);

    if ((ch == nullptr) || ch->events.empty()) {
        errno = EAGAIN; /* another thread took it */
        return -1;
    }
    if (value > 1) {
        eventfd_add(ch->ibv.fd, value - 1, "completion channel", ch->ctx->dev);
    }

    cq *c = ch->events.front();
    ch->events.pop_front();
    ++c->events_got;
    ++c->arm_sn;
    *cq_p       = &c->ibv;
    *cq_context = c->ibv.cq_context;
    return 0;
}

void emu_ack_cq_events(struct ibv_cq *ibcq, unsigned int nevents)
{
    emu_state &s = state();
    guard g(s.lock);
    cq *c = find<cq>(s, ibcq);

    if (c == nullptr) {
        ucs_error("emu: ibv_ack_cq_events(%p): not a CQ", ibcq);
        return;
    }

    c->events_acked += nevents;
    /* as libibverbs counts them, for a user that reads the CQ's count */
    pthread_mutex_lock(&c->ibv.mutex);
    c->ibv.comp_events_completed += nevents;
    pthread_cond_signal(&c->ibv.cond);
    pthread_mutex_unlock(&c->ibv.mutex);
}

} // namespace uct_ib_emu
