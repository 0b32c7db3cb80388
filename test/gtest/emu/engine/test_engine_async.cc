/*
 * A CQ overrun as firmware reports it: the CQE is not written, the QP moves
 * to ERR, and the CQ's context gets one IBV_EVENT_CQ_ERR asynchronous event,
 * readable on its async_fd and taken with get_async_event / acked with
 * ack_async_event.
 */
#include "emu/engine_test.h"

#include <fcntl.h>
#include <poll.h>


namespace {

using namespace emu_test;

class test_emu_engine_async : public engine_fixture {
protected:
    /* Fill q's CQ without consuming it, then complete one NOP more */
    void overrun(engine_qp &q)
    {
        for (uint32_t i = 0; i <= q.cq.cqe_cnt; ++i) {
            post(q, ctrl(q, MLX5_OPCODE_NOP, true));
            uct_ib_emu_engine_run();
        }
    }

    /* Whether the context's async_fd is readable now (never waits) */
    static bool async_readable(struct ibv_context *ctx)
    {
        struct pollfd pfd = {ctx->async_fd, POLLIN, 0};

        EXPECT_LE(0, ::poll(&pfd, 1, 0)) << strerror(errno);
        return pfd.revents & POLLIN;
    }

    /* get_async_event that fails instead of blocking when nothing waits */
    static int get_event(struct ibv_context *ctx, struct ibv_async_event *ev)
    {
        int flags = fcntl(ctx->async_fd, F_GETFL);

        EXPECT_EQ(0, fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK));
        int ret = uct_ib_glue->get_async_event(ctx, ev);
        EXPECT_EQ(0, fcntl(ctx->async_fd, F_SETFL, flags));
        return ret;
    }
};


TEST_F(test_emu_engine_async, context_has_a_real_async_fd) {
    struct ibv_async_event ev;

    ASSERT_LE(0, m_ctx0->async_fd);
    EXPECT_NE(m_ctx0->async_fd, m_ctx1->async_fd);
    EXPECT_FALSE(async_readable(m_ctx0));
    errno = 0;
    EXPECT_EQ(-1, get_event(m_ctx0, &ev));
    EXPECT_EQ(EAGAIN, errno) << "no event: a non-blocking read fails";
}

TEST_F(test_emu_engine_async, cq_overrun_raises_cq_error_event) {
    connect_pair(m_a, m_b);
    struct ibv_async_event ev = {};

    EXPECT_FALSE(async_readable(m_ctx0));
    overrun(m_a);
    EXPECT_EQ(prm::QP_ERR, qp_state(m_a.qp.qpn));
    EXPECT_EQ(1u, uct_ib_emu_counters().cq_overruns);

    ASSERT_TRUE(async_readable(m_ctx0)) << "the CQ's context has the event";
    EXPECT_FALSE(async_readable(m_ctx1));
    ASSERT_EQ(0, get_event(m_ctx0, &ev));
    EXPECT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);
    EXPECT_EQ(m_a.env.cq, ev.element.cq);
    EXPECT_FALSE(async_readable(m_ctx0)) << "one event";

    /* the CQ stays in error: later completions are lost without a second
     * event */
    post(m_a, ctrl(m_a, MLX5_OPCODE_NOP, true));
    uct_ib_emu_engine_run();
    EXPECT_FALSE(async_readable(m_ctx0));
    EXPECT_EQ(0u, m_a.env.cq->async_events_completed);
    uct_ib_glue->ack_async_event(&ev);
    EXPECT_EQ(1u, m_a.env.cq->async_events_completed);

    /* the CQEs written before the overrun are intact */
    EXPECT_EQ(m_a.cq.cqe_cnt, poll_all(m_a).size());
}

TEST_F(test_emu_engine_async, cq_with_an_unacked_event_is_busy) {
    connect_pair(m_a, m_b);
    struct ibv_async_event ev = {};

    overrun(m_a);
    ASSERT_EQ(0, get_event(m_ctx0, &ev));
    ASSERT_EQ(IBV_EVENT_CQ_ERR, ev.event_type);

    ASSERT_EQ(0, uct_ib_glue->devx_obj_destroy(m_a.qp.obj));
    m_a.qp.obj = nullptr;
    EXPECT_EQ(EBUSY, uct_ib_glue->destroy_cq(m_a.env.cq))
            << "rdma-core would wait for the ack";
    uct_ib_glue->ack_async_event(&ev);
    /* cleanup destroys it now */
}

TEST_F(test_emu_engine_async, queued_event_leaves_with_its_cq) {
    connect_pair(m_a, m_b);
    struct ibv_async_event ev;

    overrun(m_a);
    ASSERT_TRUE(async_readable(m_ctx0));
    destroy(m_a); /* its CQ included: the event was never got */
    EXPECT_FALSE(async_readable(m_ctx0));
    errno = 0;
    EXPECT_EQ(-1, get_event(m_ctx0, &ev));
    EXPECT_EQ(EAGAIN, errno);
}

/* A CQ created with IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN has no overrun
 * checking: the device writes over what its user did not consume, and
 * neither the QP nor the CQ goes to error */
TEST_F(test_emu_engine_async, cq_without_overrun_checking_overwrites) {
    dv_cq_spec cq;

    cq.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
    create(m_a, m_ctx0, nullptr, &cq);
    create(m_b, m_ctx1);
    connect(m_a, m_b, MAC_MLX5_1, qp_params());
    connect(m_b, m_a, MAC_MLX5_0, qp_params());

    overrun(m_a);
    EXPECT_EQ(prm::QP_RTS, qp_state(m_a.qp.qpn));
    EXPECT_EQ(0u, uct_ib_emu_counters().cq_overruns);
    EXPECT_FALSE(async_readable(m_ctx0));

    /* the ring's first entry was written again, on the second pass */
    const uint8_t *first = static_cast<const uint8_t*>(m_a.cq.buf);
    uint8_t op_own       = first[m_a.cq.cqe_size - 1];
    EXPECT_EQ(int(MLX5_CQE_REQ), op_own >> 4);
    EXPECT_EQ(1, op_own & 1) << "the owner bit of the second pass";
}

} // namespace
