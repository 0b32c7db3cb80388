/*
 * DevX event channels (mlx5dv_devx_create_event_channel and friends): a
 * user subscribes a channel to event types of a DevX object (or to
 * unaffiliated events, without an object) with a cookie, and reads each
 * event from the channel's fd as one record: the cookie, then, unless the
 * channel omits event data, the 64-byte event queue entry as the firmware
 * writes it.
 *
 * The fd is one end of a SOCK_SEQPACKET socket pair: every read returns
 * exactly one record, it is readable (poll, epoll) exactly while an event
 * waits, a blocking read sleeps as on the kernel's file, and O_NONBLOCK
 * works. The device writes into the other end without ever waiting: an
 * event that does not fit is dropped, as the kernel drops
 * events of a channel nobody reads (a debug message says so).
 *
 * The device raises its events in model/events.cc; a subscription ends
 * when its object is destroyed, as in the kernel.
 */
#include <emu/model/events.h>

#include <sys/socket.h>

#include <algorithm>
#include <unistd.h>


namespace uct_ib_emu {

namespace {

constexpr uint32_t CHANNEL_FLAGS_KNOWN  =
        MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA;

/* The events a channel may subscribe to an object for: the QP affiliated
 * events the model can raise */
/* The affiliated events of the object's type the model raises */
bool event_known(const devx_obj *obj, uint16_t event)
{
    return (obj->qp != nullptr) ? (event == DEVX_EVENT_LAST_WQE_REACHED) :
                                  (event == DEVX_EVENT_SRQ_LIMIT);
}

} // namespace


struct mlx5dv_devx_event_channel *
devx_create_event_channel(struct ibv_context *ibctx, uint32_t flags)
{
    emu_state &s = state();
    guard g(s.lock);
    context *ctx = find_context(s, ibctx);
    std::unique_ptr<devx_event_channel> ch;
    int fds[2];

    if (ctx == nullptr) {
        return fail_ptr<struct mlx5dv_devx_event_channel>(EINVAL);
    } else if (!ctx->devx) {
        return fail_ptr<struct mlx5dv_devx_event_channel>(EOPNOTSUPP);
    } else if (flags & ~CHANNEL_FLAGS_KNOWN) {
        return fail_ptr<struct mlx5dv_devx_event_channel>(EINVAL);
    }

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
        return nullptr; /* errno from socketpair */
    }

    ch            = std::make_unique<devx_event_channel>(ctx);
    ch->ibv.fd    = fds[0];
    ch->device_fd = fds[1];
    ch->omit_data = flags & MLX5DV_DEVX_CREATE_EVENT_CHANNEL_FLAGS_OMIT_EV_DATA;
    if (shutdown(ch->ibv.fd, SHUT_WR) != 0) {
        return nullptr; /* the user's end only reads */
    }

    register_handle(s, &ch->ibv, kind::DEVX_EVENT_CHANNEL, ch.get());
    return &add_object(ctx, std::move(ch))->ibv;
}

void devx_destroy_event_channel(struct mlx5dv_devx_event_channel *handle)
{
    emu_state &s = state();
    guard g(s.lock);
    devx_event_channel *ch = find<devx_event_channel>(s, handle);

    if (ch == nullptr) {
        return; /* as rdma-core, which cannot fail here */
    }

    unregister_handle(s, &ch->ibv);
    remove_object(ch->ctx, ch);
}

int devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *handle,
                              struct mlx5dv_devx_obj *obj_handle,
                              uint16_t events_sz, const uint16_t *events_num,
                              uint64_t cookie)
{
    emu_state &s = state();
    guard g(s.lock);
    devx_event_channel *ch = find<devx_event_channel>(s, handle);
    const devx_obj *obj    = nullptr;
    size_t count           = events_sz / sizeof(uint16_t);
    size_t i;

    if ((ch == nullptr) || (count == 0) || (events_sz % sizeof(uint16_t)) ||
        (events_num == nullptr)) {
        return EINVAL;
    }

    if (obj_handle != nullptr) {
        obj = find<devx_obj>(s, obj_handle);
        if ((obj == nullptr) || (obj->ctx != ch->ctx) ||
            ((obj->qp == nullptr) && (obj->rmp == nullptr))) {
            return EINVAL;
        }
    }

    /* The kernel checks every event number against the object type first:
     * nothing is subscribed unless all are valid */
    for (i = 0; i < count; ++i) {
        if ((obj == nullptr) || !event_known(obj, events_num[i])) {
            return EINVAL;
        }
    }

    for (i = 0; i < count; ++i) {
        ch->subscriptions.push_back({obj, events_num[i], cookie});
    }
    return 0;
}

ssize_t devx_get_event(struct mlx5dv_devx_event_channel *handle,
                       struct mlx5dv_devx_async_event_hdr *event_data,
                       size_t event_resp_len)
{
    int fd;

    {
        emu_state &s = state();
        guard g(s.lock);
        devx_event_channel *ch = find<devx_event_channel>(s, handle);

        if (ch == nullptr) {
            errno = EINVAL;
            return -1;
        }
        fd = ch->ibv.fd;
    }

    /* Outside the lock: a blocking channel sleeps here, as on the kernel's
     * file; a record longer than the buffer is truncated, as read() of a
     * datagram */
    return read(fd, event_data, event_resp_len);
}

namespace {

} // namespace

} // namespace uct_ib_emu
