/*
 * The events the device raises and where they wait for their reader: a
 * CQ's completion event on its channel (an eventfd counting the queued
 * events), a context's asynchronous events (its async_fd, likewise), and
 * DevX events on the channels subscribed to them. The engine raises them;
 * the front-ends hand them out (frontend/events.cc, async.cc,
 * devx_events.cc). Includes only model/.
 */
#ifndef UCT_IB_EMU_MODEL_EVENTS_H_
#define UCT_IB_EMU_MODEL_EVENTS_H_

#include <emu/model/model.h>

#include <uct/ib/mlx5/dv/wqe_ext.h>


namespace uct_ib_emu {

/* A CQ is armed through the arm dword of its doorbell record
 * (UCT_MLX5_CQ_DBR_ARM: sn << 28 | cmd << 24 | ci) */
constexpr uint32_t CQ_ARM_NONE      = 0xffffffffu; /* written at creation */
constexpr uint32_t CQ_ARM_CMD_SOL   = 1u << 24;
constexpr uint32_t CQ_ARM_CMD_MASK  = 7u << 24;
constexpr uint32_t CQ_ARM_INDEX_MASK = 0xffffff;

uint32_t *cq_arm_dword(const cq *c);

/* The PRM event types of the affiliated events the model raises through
 * DevX: a QP's last WQE reached, an RMP's limit */
constexpr uint16_t DEVX_EVENT_LAST_WQE_REACHED = 0x13;
constexpr uint16_t DEVX_EVENT_SRQ_LIMIT        = 0x14;

/* Add n (> 0) to the count of an eventfd, or take n away (the count is at
 * least n, so the read does not block); a failure is logged, naming what
 * the fd is and the device */
void eventfd_add(int fd, uint64_t n, const char *what, const device *dev);
void eventfd_take(int fd, uint64_t n, const char *what, const device *dev);

/* Completion events: a new CQ's arm record (nothing armed); whether an
 * armed CQ has an event to deliver now, after a CQE (solicited: the CQE was
 * solicited or an error) or at any pass; a CQ about to be destroyed leaves
 * its channel with its queued events */
void cq_events_init(cq *c);
void cq_event_check(emu_state &s, cq *c, bool solicited);
void cq_events_release(cq *c);

/* Asynchronous events: a new context's async_fd (false with errno if it
 * cannot be made), a CQ error event (CQ overrun), a verbs SRQ's limit
 * event (its WQEs fell below the armed limit, which it disarms), and a CQ
 * or SRQ about to be destroyed, whose queued events are dropped */
bool async_events_init(context *ctx);
inline bool is_cq_event(enum ibv_event_type type)
{
    return type == IBV_EVENT_CQ_ERR; /* the one the device raises */
}
inline bool is_srq_event(enum ibv_event_type type)
{
    return type == IBV_EVENT_SRQ_LIMIT_REACHED;
}
void async_event_cq_error(emu_state &s, cq *c);
void async_event_srq_limit(srq *sq);
void async_events_release_cq(cq *c);
void async_events_release_srq(srq *sq);

/* DevX events: subscriptions to an object end when it is destroyed; a QP
 * entered the error state: its affiliated events */
void devx_events_release_obj(const devx_obj *obj);
void devx_events_qp_error(const qp *q);

/* An RMP whose WQEs fell below its armed limit (lwm): SRQ_LIMIT to the
 * channels subscribed to it (the caller disarms the limit) */
void devx_events_rmp_limit(const srq *rmp);

} // namespace uct_ib_emu

#endif
