/*
 * Completion events of rc_mlx5 and rc_verbs through the UCT API: a program
 * arms the interface, sleeps in poll() on its event fd (every sleep
 * bounded) and wakes when a message arrives or a send completes; arming
 * while something waits to be progressed fails with UCS_ERR_BUSY.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include <string>

using namespace ib_test;

namespace {

const char *const rc_transports[] = {"rc_mlx5", "rc_verbs"};

} // namespace

class test_rc_events : public rc_api_test {
protected:
    void connect_ab(const char *tl)
    {
        m_ia = open_iface(tl, a());
        m_ib = open_iface(tl, b());
        ASSERT_TRUE(m_ia && m_ib);
        m_ea = create_ep(m_ia);
        m_eb = create_ep(m_ib);
        ep_address aa = address(m_ia, m_ea), ab = address(m_ib, m_eb);
        ASSERT_EQ(UCS_OK, connect(m_ea, ab));
        ASSERT_EQ(UCS_OK, connect(m_eb, aa));
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, count_am,
                                                   &m_received, 0));
    }

    static int event_fd(uct_iface_h iface)
    {
        int fd = -1;

        EXPECT_EQ(UCS_OK, uct_iface_event_fd_get(iface, &fd));
        EXPECT_GE(fd, 0);
        return fd;
    }

    /* Whether the fd of @a iface becomes readable within @a timeout_ms
     * (scaled): the caller sleeps in poll() meanwhile */
    static bool sleep_on(uct_iface_h iface, double timeout_sec)
    {
        struct pollfd pfd = {event_fd(iface), POLLIN, 0};
        const int     ms  = static_cast<int>(
                ucs_time_to_msec(ucs::test_timeout(timeout_sec)));
        int           ret;

        do {
            ret = poll(&pfd, 1, ms);
        } while ((ret < 0) && (errno == EINTR));
        EXPECT_GE(ret, 0) << strerror(errno);
        return (ret > 0) && (pfd.revents & POLLIN);
    }

    /* Progress @a iface until it has nothing more to do, then arm it for
     * @a events; the status of the last arm */
    ucs_status_t progress_and_arm(uct_iface_h iface, unsigned events)
    {
        ucs_status_t status = UCS_ERR_BUSY;

        wait_for([&] {
            uct_iface_progress(iface);
            status = uct_iface_event_arm(iface, events);
            return status != UCS_ERR_BUSY;
        }, 10.0, [] { return std::string("an arm that is not busy"); });
        return status;
    }

    static ucs_status_t count_am(void *arg, void*, size_t, unsigned)
    {
        ++*static_cast<unsigned*>(arg);
        return UCS_OK;
    }

    uct_iface_h m_ia = nullptr, m_ib = nullptr;
    uct_ep_h    m_ea = nullptr, m_eb = nullptr;
    unsigned    m_received = 0;
};

TEST_P(test_rc_events, capabilities)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        uct_iface_h iface = open_iface(tl, a());
        ASSERT_NE(nullptr, iface);

        const uint64_t flags = query(iface).cap.event_flags;
        EXPECT_TRUE(flags & UCT_IFACE_FLAG_EVENT_SEND_COMP);
        EXPECT_TRUE(flags & UCT_IFACE_FLAG_EVENT_RECV);
        EXPECT_TRUE(flags & UCT_IFACE_FLAG_EVENT_FD);
        (void)event_fd(iface);
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, [&] {
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
            return uct_iface_event_arm(iface, UCS_BIT(7));
        }());
    }
}

/* The receiver sleeps on its fd and wakes for a message */
TEST_P(test_rc_events, receiver_wakes_for_a_message)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        m_received = 0;
        connect_ab(tl);

        ASSERT_EQ(UCS_OK, progress_and_arm(m_ib, UCT_EVENT_RECV));
        EXPECT_FALSE(sleep_on(m_ib, 0.05)) << "nothing arrived yet";

        ASSERT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 1, nullptr, 0));
        ASSERT_TRUE(sleep_on(m_ib, 10.0)) << "woken by the message";
        EXPECT_EQ(UCS_ERR_BUSY, uct_iface_event_arm(m_ib, UCT_EVENT_RECV))
                << "the event is there: progress first";
        EXPECT_FALSE(sleep_on(m_ib, 0)) << "arming took the event";

        wait_for([&] { return m_received == 1; }, 10.0,
                 [] { return std::string("the message"); },
                 [&] { uct_iface_progress(m_ib); });

        /* again, with the next message */
        ASSERT_EQ(UCS_OK, progress_and_arm(m_ib, UCT_EVENT_RECV));
        ASSERT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 2, nullptr, 0));
        ASSERT_TRUE(sleep_on(m_ib, 10.0)) << "woken by the second message";
        wait_for([&] { return m_received == 2; }, 10.0,
                 [] { return std::string("the second message"); },
                 [&] { uct_iface_progress(m_ib); });
    }
}

/* The sender sleeps on its fd and wakes when its send completes; a
 * completion not yet polled makes the arm busy */
TEST_P(test_rc_events, sender_wakes_for_a_send_completion)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        m_received = 0;
        connect_ab(tl);

        ASSERT_EQ(UCS_OK, progress_and_arm(m_ia, UCT_EVENT_SEND_COMP));
        EXPECT_FALSE(sleep_on(m_ia, 0.05)) << "nothing was sent yet";

        /* a short send completes at once; what a sender waits for is the
         * completion of an operation that returned UCS_INPROGRESS (its
         * WQE asks for a CQE whatever the moderation) */
        uct_completion_t comp = {};
        comp.func  = [](uct_completion_t *) {};
        comp.count = 1;
        ASSERT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 1, nullptr, 0));
        ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(m_ea, 0, &comp));
        ASSERT_TRUE(sleep_on(m_ia, 10.0)) << "woken by the send completion";
        EXPECT_EQ(UCS_ERR_BUSY, uct_iface_event_arm(m_ia, UCT_EVENT_SEND_COMP));

        /* a completion the device wrote but nobody polled */
        comp.count = 1;
        ASSERT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 2, nullptr, 0));
        ASSERT_EQ(UCS_INPROGRESS, uct_ep_flush(m_ea, 0, &comp));
        wait_for([&] {
            return uct_iface_event_arm(m_ia, UCT_EVENT_SEND_COMP) ==
                   UCS_ERR_BUSY;
        }, 10.0, [] { return std::string("the busy arm"); });

        /* everything polled: flush completes, arming succeeds again */
        wait_for([&] {
            uct_iface_progress(m_ia);
            uct_iface_progress(m_ib);
            return uct_ep_flush(m_ea, 0, nullptr) == UCS_OK;
        }, 10.0, [] { return std::string("the flush"); });
        ASSERT_EQ(UCS_OK, progress_and_arm(m_ia, UCT_EVENT_SEND_COMP));
        EXPECT_FALSE(sleep_on(m_ia, 0.05)) << "nothing more to complete";
        wait_for([&] { return m_received == 2; }, 10.0,
                 [] { return std::string("both messages"); },
                 [&] { uct_iface_progress(m_ib); });
    }
}

/* Sending and receiving: both events armed on both sides, a ping-pong
 * driven only by wake-ups */
TEST_P(test_rc_events, ping_pong_on_events)
{
    constexpr unsigned rounds = 20;

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        unsigned a_received = 0;

        m_received = 0;
        connect_ab(tl);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ia, 0, count_am,
                                                   &a_received, 0));

        for (unsigned i = 0; i < rounds; ++i) {
            const unsigned events = UCT_EVENT_SEND_COMP | UCT_EVENT_RECV;

            ASSERT_EQ(UCS_OK, progress_and_arm(m_ib, events));
            ASSERT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, i, nullptr, 0));
            while (m_received == i) {
                ASSERT_TRUE(sleep_on(m_ib, 10.0)) << "ping " << i;
                ASSERT_EQ(UCS_OK, progress_and_arm(m_ib, events));
            }

            ASSERT_EQ(UCS_OK, progress_and_arm(m_ia, events));
            ASSERT_EQ(UCS_OK, uct_ep_am_short(m_eb, 0, i, nullptr, 0));
            while (a_received == i) {
                ASSERT_TRUE(sleep_on(m_ia, 10.0)) << "pong " << i;
                ASSERT_EQ(UCS_OK, progress_and_arm(m_ia, events));
            }
        }
        EXPECT_EQ(rounds, m_received);
        EXPECT_EQ(rounds, a_received);
    }
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_events);
