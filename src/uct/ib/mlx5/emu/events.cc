/*
 * Completion events: completion channels (an fd that becomes readable),
 * CQ arming and ibv_get_cq_event / ibv_ack_cq_events.
 *
 * A CQ is armed through the arm dword of its doorbell record
 * (UCT_MLX5_CQ_DBR_ARM: sn << 28 | cmd << 24 | ci), which ibv_req_notify_cq
 * writes as the mlx5 provider does and which an mlx5dv user writes itself.
 * The device fires once per arm: when a CQE lies past the armed consumer
 * index (any CQE for "next", a solicited or error one for "solicited"), and
 * the arm differs from the one it last fired on (an arm with an unchanged
 * sequence number is a duplicate). A fired event is queued on the CQ's
 * channel, whose eventfd counts the queued events.
 *
 * Unlike rdma-core, destroying a CQ with events not yet acked fails with
 * EBUSY instead of waiting for the acks (nothing here waits forever).
 */
#include "engine.h"
#include "ops.h"

#include <sys/eventfd.h>
#include <unistd.h>


namespace uct_ib_emu {

namespace {

constexpr uint32_t ARM_NONE      = 0xffffffffu; /* written at creation */
constexpr uint32_t ARM_CMD_SOL   = 1u << 24;
constexpr uint32_t ARM_CMD_MASK  = 7u << 24;
constexpr uint32_t CQ_INDEX_MASK = 0xffffff;

uint32_t *arm_dword(const cq *c)
{
    return &static_cast<uint32_t*>(c->dbrec.get())[UCT_MLX5_CQ_DBR_ARM];
}

/* Add n (> 0) to the channel's eventfd, or take n away */
void fd_add(const comp_channel *ch, uint64_t n)
{
    if (write(ch->ibv.fd, &n, sizeof(n)) != sizeof(n)) {
        ucs_error("emu: write(completion channel fd %d) failed on %s: %m",
                  ch->ibv.fd, ch->ctx->dev->name.c_str());
    }
}

void fd_take(const comp_channel *ch, uint64_t n)
{
    uint64_t value = 0;

    /* the count is at least n, so the read does not block */
    if (read(ch->ibv.fd, &value, sizeof(value)) != sizeof(value)) {
        ucs_error("emu: read(completion channel fd %d) failed on %s: %m",
                  ch->ibv.fd, ch->ctx->dev->name.c_str());
        return;
    }
    if (value > n) {
        fd_add(ch, value - n);
    }
}

} // namespace


comp_channel::~comp_channel()
{
    if ((ibv.fd >= 0) && (::close(ibv.fd) != 0)) {
        ucs_warn("emu: close(completion channel fd %d) failed on %s: %m",
                 ibv.fd, ctx->dev->name.c_str());
    }
}

void cq_events_init(cq *c)
{
    dma_store_be32(arm_dword(c), ARM_NONE);
    c->arm_fired = ARM_NONE;
}

void cq_event_check(emu_state &s, cq *c, bool solicited)
{
    uint32_t arm;

    (void)s;
    if (c->channel == nullptr) {
        return;
    }

    arm = dma_load_be32(arm_dword(c));
    if ((arm == c->arm_fired) || (arm == ARM_NONE) ||
        (((c->exec.pi - arm) & CQ_INDEX_MASK) == 0) ||
        (((arm & ARM_CMD_MASK) == ARM_CMD_SOL) && !solicited)) {
        return;
    }

    c->arm_fired = arm;
    c->channel->events.push_back(c);
    fd_add(c->channel, 1);
}

void comp_channel_destroy_locked(emu_state &s, comp_channel *ch)
{
    unregister_handle(s, &ch->ibv);
    remove_object(ch->ctx, ch);
}


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
    emu_state &s = state();
    guard g(s.lock);
    comp_channel *ch = find<comp_channel>(s, channel);

    if (ch == nullptr) {
        return EINVAL;
    }
    if (ch->refs > 0) {
        return EBUSY;
    }

    comp_channel_destroy_locked(s, ch);
    return 0;
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
    dma_store_be32(arm_dword(c), ((c->arm_sn & 3) << 28) |
                                 (solicited_only ? ARM_CMD_SOL : 0) |
                                 (c->exec.sw_ci & CQ_INDEX_MASK));
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
        fd_add(ch, value - 1);
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
        fd_take(ch, removed);
    }
    --ch->refs;
    c->channel = nullptr;
}

} // namespace uct_ib_emu
