/*
 * Asynchronous events of a context: ibv_get_async_event / ibv_ack_async_event
 * and the context's async_fd, an eventfd that counts the queued events, so
 * it is readable (poll, epoll) exactly while an event waits, and a blocking
 * get_async_event sleeps on it as on the kernel's file.
 *
 * The device raises its events in model/events.cc. As rdma-core counts them,
 * an event a user got must be acked before its object is destroyed; unlike
 * rdma-core, which waits for the ack, destroying a CQ with an unacked event
 * fails with EBUSY (nothing here waits forever). Events still queued for a
 * destroyed CQ are dropped, as the kernel does.
 */
#include <emu/model/events.h>
#include <emu/frontend/ops.h>

#include <sys/eventfd.h>
#include <unistd.h>


namespace uct_ib_emu {




int emu_get_async_event(struct ibv_context *ibctx,
                        struct ibv_async_event *event)
{
    emu_state &s   = state();
    uint64_t value = 0;
    int fd;

    {
        guard g(s.lock);
        context *ctx = find_context(s, ibctx);

        if (ctx == nullptr) {
            errno = EINVAL;
            return -1;
        }
        fd = ctx->async.fd;
    }

    /* blocks until an event, unless the user made the fd non-blocking */
    if (read(fd, &value, sizeof(value)) != sizeof(value)) {
        return -1;
    }

    guard g(s.lock);
    context *ctx = find_context(s, ibctx);

    if ((ctx == nullptr) || ctx->async.events.empty()) {
        errno = EAGAIN; /* another thread took it */
        return -1;
    }
    if (value > 1) {
        eventfd_add(ctx->async.fd, value - 1, "async", ctx->dev);
    }

    *event = ctx->async.events.front();
    ctx->async.events.pop_front();
    /* queued events of a CQ or an SRQ leave with it: it exists */
    if (is_cq_event(event->event_type)) {
        ++find<cq>(s, event->element.cq)->async_got;
    } else if (is_srq_event(event->event_type)) {
        ++find<srq>(s, event->element.srq)->async_got;
    }
    return 0;
}

namespace {

/* One more of @a obj's events acked, as libibverbs counts them in
 * @a completed for its destroy to wait on */
template <typename T, typename V>
void ack_one(T *obj, V *verbs_obj, uint32_t *completed)
{
    ++obj->async_acked;
    pthread_mutex_lock(&verbs_obj->mutex);
    ++*completed;
    pthread_cond_signal(&verbs_obj->cond);
    pthread_mutex_unlock(&verbs_obj->mutex);
}

} // namespace

void emu_ack_async_event(struct ibv_async_event *event)
{
    emu_state &s = state();
    guard g(s.lock);

    if (is_cq_event(event->event_type)) {
        cq *c = find<cq>(s, event->element.cq);

        if ((c != nullptr) && (c->async_acked < c->async_got)) {
            ack_one(c, &c->ibv, &c->ibv.async_events_completed);
            return;
        }
    } else if (is_srq_event(event->event_type)) {
        srq *sq = find<srq>(s, event->element.srq);

        if ((sq != nullptr) && (sq->async_acked < sq->async_got)) {
            ack_one(sq, &sq->ibv, &sq->ibv.events_completed);
            return;
        }
    } else {
        return; /* the device raises no other events */
    }

    ucs_error("emu: ibv_ack_async_event(%p): no such event got",
              event->element.cq);
}

} // namespace uct_ib_emu
