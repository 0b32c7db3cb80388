/*
 * Asynchronous events of a context: ibv_get_async_event / ibv_ack_async_event
 * and the context's async_fd, an eventfd that counts the queued events, so
 * it is readable (poll, epoll) exactly while an event waits, and a blocking
 * get_async_event sleeps on it as on the kernel's file.
 *
 * Events the device raises: IBV_EVENT_CQ_ERR when a CQ overruns (once per
 * CQ; the CQ stays in error). As rdma-core counts them, an event a user got
 * must be acked before its object is destroyed; unlike rdma-core, which
 * waits for the ack, destroying a CQ with an unacked event fails with EBUSY
 * (nothing here waits forever). Events still queued for a destroyed CQ are
 * dropped, as the kernel does.
 */
#include "model.h"
#include "ops.h"

#include <sys/eventfd.h>
#include <unistd.h>


namespace uct_ib_emu {

namespace {

void fd_add(const context *ctx, uint64_t n)
{
    if (write(ctx->async.fd, &n, sizeof(n)) != sizeof(n)) {
        ucs_error("emu: write(async fd %d) failed on %s: %m", ctx->async.fd,
                  ctx->dev->name.c_str());
    }
}

/* Take n (> 0) away from the count, which is at least n */
void fd_take(const context *ctx, uint64_t n)
{
    uint64_t value = 0;

    if (read(ctx->async.fd, &value, sizeof(value)) != sizeof(value)) {
        ucs_error("emu: read(async fd %d) failed on %s: %m", ctx->async.fd,
                  ctx->dev->name.c_str());
        return;
    }
    if (value > n) {
        fd_add(ctx, value - n);
    }
}

bool is_cq_event(enum ibv_event_type type)
{
    return type == IBV_EVENT_CQ_ERR;
}

} // namespace


async_queue::~async_queue()
{
    if ((fd >= 0) && (::close(fd) != 0)) {
        ucs_warn("emu: close(async fd %d) failed: %m", fd);
    }
}

bool async_events_init(context *ctx)
{
    ctx->async.fd = eventfd(0, EFD_CLOEXEC);
    return ctx->async.fd >= 0;
}

void async_event_cq_error(emu_state &s, cq *c)
{
    struct ibv_async_event event = {};

    (void)s;
    event.element.cq = &c->ibv;
    event.event_type = IBV_EVENT_CQ_ERR;
    c->ctx->async.events.push_back(event);
    fd_add(c->ctx, 1);
    uct_ib_emu_debug("%s: cq 0x%x error event", c->ctx->dev->name.c_str(),
                     c->cqn);
}

void async_events_release_cq(cq *c)
{
    std::deque<struct ibv_async_event> &events = c->ctx->async.events;
    uint64_t removed = 0;

    for (auto it = events.begin(); it != events.end();) {
        if (is_cq_event(it->event_type) && (it->element.cq == &c->ibv)) {
            it = events.erase(it);
            ++removed;
        } else {
            ++it;
        }
    }
    if (removed > 0) {
        fd_take(c->ctx, removed);
    }
}


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
        fd_add(ctx, value - 1);
    }

    *event = ctx->async.events.front();
    ctx->async.events.pop_front();
    if (is_cq_event(event->event_type)) {
        /* queued events of a CQ leave with it: the CQ exists */
        cq *c = find<cq>(s, event->element.cq);
        ++c->async_got;
    }
    return 0;
}

void emu_ack_async_event(struct ibv_async_event *event)
{
    emu_state &s = state();
    guard g(s.lock);
    cq *c;

    if (!is_cq_event(event->event_type)) {
        return; /* the device raises no other events */
    }

    c = find<cq>(s, event->element.cq);
    if ((c == nullptr) || (c->async_acked >= c->async_got)) {
        ucs_error("emu: ibv_ack_async_event(%p): no such event got",
                  event->element.cq);
        return;
    }
    ++c->async_acked;
}

} // namespace uct_ib_emu
