/*
 * The events the device raises (events.h). Completion and asynchronous
 * events are counted by eventfds; a DevX event is one record written into
 * the device's end of its channel's SOCK_SEQPACKET pair, never waiting: an
 * event that does not fit is dropped, as the kernel drops the events of a
 * channel nobody reads (a debug message says so).
 */
#include <emu/model/events.h>

#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>


namespace uct_ib_emu {

namespace {

/* The PRM event queue entry (mlx5_eqe) as a DevX channel delivers it */
constexpr size_t   EQE_SIZE             = 64;
constexpr size_t   EQE_TYPE_OFFSET      = 0x01;
constexpr size_t   EQE_DATA_OFFSET      = 0x20;
/* The data of a QP/SRQ event: the object type, then its 24-bit number */
constexpr size_t   EQE_QP_SRQ_TYPE      = EQE_DATA_OFFSET + 0x05;
constexpr size_t   EQE_QP_SRQ_NUM       = EQE_DATA_OFFSET + 0x0c;
constexpr uint8_t  EQE_QP_SRQ_TYPE_QP   = 0;


/* An affiliated event of the QP or RMP @a q or @a rmp (one of them) to
 * every channel of ctx subscribed to it */
void devx_event(const context *ctx, const qp *q, const srq *rmp,
                uint16_t event, uint32_t num)
{
    uint8_t record[sizeof(uint64_t) + EQE_SIZE];
    uint32_t num_be = htobe32(num & 0xffffff);

    for (const auto &entry : ctx->objects) {
        auto *ch = dynamic_cast<devx_event_channel*>(entry.second.get());

        if (ch == nullptr) {
            continue;
        }
        for (const auto &sub : ch->subscriptions) {
            if ((sub.obj == nullptr) || (sub.event != event) ||
                ((q != nullptr) ? (sub.obj->qp != q) : (sub.obj->rmp != rmp))) {
                continue;
            }

            memset(record, 0, sizeof(record));
            memcpy(record, &sub.cookie, sizeof(sub.cookie));
            record[sizeof(uint64_t) + EQE_TYPE_OFFSET] = uint8_t(event);
            record[sizeof(uint64_t) + EQE_QP_SRQ_TYPE] = EQE_QP_SRQ_TYPE_QP;
            memcpy(record + sizeof(uint64_t) + EQE_QP_SRQ_NUM, &num_be,
                   sizeof(num_be));
            if (send(ch->device_fd, record,
                     ch->omit_data ? sizeof(uint64_t) : sizeof(record),
                     MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
                uct_ib_emu_debug("%s: object 0x%x event 0x%x dropped: %m",
                                 ctx->dev->name.c_str(), num, event);
            } else {
                uct_ib_emu_debug("%s: object 0x%x event 0x%x",
                                 ctx->dev->name.c_str(), num, event);
            }
        }
    }
}

void devx_event_qp(const qp *q, uint16_t event)
{
    devx_event(q->ctx, q, nullptr, event, q->qpn);
}

} // namespace


uint32_t *cq_arm_dword(const cq *c)
{
    return &static_cast<uint32_t*>(c->dbrec.get())[UCT_MLX5_CQ_DBR_ARM];
}

void eventfd_add(int fd, uint64_t n, const char *what, const device *dev)
{
    if (write(fd, &n, sizeof(n)) != sizeof(n)) {
        ucs_error("emu: write(%s fd %d) failed on %s: %m", what, fd,
                  dev->name.c_str());
    }
}

void eventfd_take(int fd, uint64_t n, const char *what, const device *dev)
{
    uint64_t value = 0;

    if (read(fd, &value, sizeof(value)) != sizeof(value)) {
        ucs_error("emu: read(%s fd %d) failed on %s: %m", what, fd,
                  dev->name.c_str());
        return;
    }
    if (value > n) {
        eventfd_add(fd, value - n, what, dev);
    }
}


/* ------------------------------------------------------------------------
 * Completion events: the device fires once per arm, when a CQE lies past
 * the armed consumer index (any CQE for "next", a solicited or error one
 * for "solicited"), and the arm differs from the one it last fired on (an
 * arm with an unchanged sequence number is a duplicate)
 */

comp_channel::~comp_channel()
{
    if ((ibv.fd >= 0) && (::close(ibv.fd) != 0)) {
        ucs_warn("emu: close(completion channel fd %d) failed on %s: %m",
                 ibv.fd, ctx->dev->name.c_str());
    }
}

void cq_events_init(cq *c)
{
    dma_store_be32(cq_arm_dword(c), CQ_ARM_NONE);
    c->arm_fired = CQ_ARM_NONE;
}

void cq_event_check(emu_state &s, cq *c, bool solicited)
{
    uint32_t arm;

    (void)s;
    if (c->channel == nullptr) {
        return;
    }

    arm = dma_load_be32(cq_arm_dword(c));
    if ((arm == c->arm_fired) || (arm == CQ_ARM_NONE) ||
        (((c->exec.pi - arm) & CQ_ARM_INDEX_MASK) == 0) ||
        (((arm & CQ_ARM_CMD_MASK) == CQ_ARM_CMD_SOL) && !solicited)) {
        return;
    }

    c->arm_fired = arm;
    c->channel->events.push_back(c);
    eventfd_add(c->channel->ibv.fd, 1, "completion channel", c->ctx->dev);
}

/* A destroyed CQ's queued events leave its channel */
void cq_events_release(cq *c)
{
    comp_channel *ch = c->channel;
    uint64_t removed = 0;

    if (ch == nullptr) {
        return;
    }

    for (auto it = ch->events.begin(); it != ch->events.end();) {
        if (*it == c) {
            it = ch->events.erase(it);
            ++removed;
        } else {
            ++it;
        }
    }
    if (removed > 0) {
        eventfd_take(ch->ibv.fd, removed, "completion channel", c->ctx->dev);
    }
    --ch->refs;
    c->channel = nullptr;
}


/* ------------------------------------------------------------------------
 * Asynchronous events: IBV_EVENT_CQ_ERR when a CQ overruns (once per CQ;
 * the CQ stays in error), IBV_EVENT_SRQ_LIMIT_REACHED when a verbs SRQ's
 * WQEs fall below its armed limit (once per arming)
 */

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
    eventfd_add(c->ctx->async.fd, 1, "async", c->ctx->dev);
    uct_ib_emu_debug("%s: cq 0x%x error event", c->ctx->dev->name.c_str(),
                     c->cqn);
}

void async_event_srq_limit(srq *sq)
{
    struct ibv_async_event event = {};

    event.element.srq = &sq->ibv;
    event.event_type  = IBV_EVENT_SRQ_LIMIT_REACHED;
    sq->ctx->async.events.push_back(event);
    eventfd_add(sq->ctx->async.fd, 1, "async", sq->ctx->dev);
    uct_ib_emu_debug("%s: srq 0x%x limit event", sq->ctx->dev->name.c_str(),
                     sq->srqn);
}

namespace {

/* Drop the queued events of @a ctx that @a match names */
template <typename Match>
void async_events_release(context *ctx, Match match)
{
    std::deque<struct ibv_async_event> &events = ctx->async.events;
    uint64_t removed = 0;

    for (auto it = events.begin(); it != events.end();) {
        if (match(*it)) {
            it = events.erase(it);
            ++removed;
        } else {
            ++it;
        }
    }
    if (removed > 0) {
        eventfd_take(ctx->async.fd, removed, "async", ctx->dev);
    }
}

} // namespace

void async_events_release_cq(cq *c)
{
    async_events_release(c->ctx, [c](const struct ibv_async_event &e) {
        return is_cq_event(e.event_type) && (e.element.cq == &c->ibv);
    });
}

void async_events_release_srq(srq *sq)
{
    async_events_release(sq->ctx, [sq](const struct ibv_async_event &e) {
        return is_srq_event(e.event_type) && (e.element.srq == &sq->ibv);
    });
}


/* ------------------------------------------------------------------------
 * DevX events: LAST_WQE_REACHED for a QP with a shared receive queue, when
 * it enters the error state (the model consumes no receive WQE of a QP in
 * error, so its last one is reached at that moment)
 */

devx_event_channel::~devx_event_channel()
{
    if ((ibv.fd >= 0) && (::close(ibv.fd) != 0)) {
        ucs_warn("emu: close(event channel fd %d) failed: %m", ibv.fd);
    }
    if ((device_fd >= 0) && (::close(device_fd) != 0)) {
        ucs_warn("emu: close(event channel fd %d) failed: %m", device_fd);
    }
}

void devx_events_release_obj(const devx_obj *obj)
{
    for (const auto &entry : obj->ctx->objects) {
        auto *ch = dynamic_cast<devx_event_channel*>(entry.second.get());

        if (ch == nullptr) {
            continue;
        }
        auto &subs = ch->subscriptions;
        subs.erase(std::remove_if(subs.begin(), subs.end(),
                                  [obj](const devx_event_channel::subscription
                                                &sub) {
                                      return sub.obj == obj;
                                  }),
                   subs.end());
    }
}


void devx_events_qp_error(const qp *q)
{
    if (q->srq != nullptr) {
        devx_event_qp(q, DEVX_EVENT_LAST_WQE_REACHED);
    }
}

void devx_events_rmp_limit(const srq *rmp)
{
    devx_event(rmp->ctx, nullptr, rmp, DEVX_EVENT_SRQ_LIMIT, rmp->srqn);
}

} // namespace uct_ib_emu
