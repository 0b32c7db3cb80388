/*
 * Asynchronous contexts: file descriptor handlers and timers dispatched by
 * the progress thread (thread modes) or by ucs_async_poll() (poll mode),
 * kept out of blocked sections and never lost while blocked.
 */
#include <common/test.h>

#include <ucs/async/async.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <string>
#include <thread>

#include <sys/eventfd.h>
#include <unistd.h>

namespace {

/* An eventfd whose callback counts and drains it */
struct event_source {
    int              fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    std::atomic<int> calls{0};
    std::atomic<int> last_events{0};

    ~event_source()
    {
        close(fd);
    }

    void signal() const
    {
        const uint64_t one = 1;
        EXPECT_EQ(ssize_t(sizeof(one)), write(fd, &one, sizeof(one)));
    }

    static void cb(int id, ucs_event_set_types_t events, void *arg)
    {
        auto     *src = static_cast<event_source*>(arg);
        uint64_t count;

        EXPECT_EQ(src->fd, id);
        EXPECT_EQ(ssize_t(sizeof(count)), read(src->fd, &count, sizeof(count)));
        src->last_events = events;
        ++src->calls;
    }
};

void count_cb(int, ucs_event_set_types_t, void *arg)
{
    ++*static_cast<std::atomic<int>*>(arg);
}

void sleep_ms(unsigned ms)
{
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

} // namespace

class test_async : public ucs::test_base,
                   public ::testing::WithParamInterface<ucs_async_mode_t> {
protected:
    void init() override
    {
        ASSERT_EQ(UCS_OK, ucs_async_context_create(GetParam(), &m_async));
    }

    void cleanup() override
    {
        ucs_async_context_destroy(m_async);
    }

    bool polled() const
    {
        return GetParam() == UCS_ASYNC_MODE_POLL;
    }

    /* Wait until @a done; a poll-mode context is polled meanwhile, and the
     * progress thread of the others gets the CPU (valgrind runs one
     * thread at a time) */
    void wait(const std::function<bool()> &done, const std::string &what)
    {
        wait_for(done, 10.0, [&what] { return what; }, [this] {
            if (polled()) {
                ucs_async_poll(m_async);
            } else {
                ucs_async_check_miss(m_async);
                sleep_ms(1);
            }
        });
    }

    /* Call src's callback when it is readable */
    ucs_status_t watch(event_source &src, ucs_async_context_t *async)
    {
        return ucs_async_set_event_handler(GetParam(), src.fd,
                                           UCS_EVENT_SET_EVREAD,
                                           event_source::cb, &src, async);
    }

    ucs_async_context_t *m_async = nullptr;
};

TEST_P(test_async, event_handler_is_called_once_per_event)
{
    event_source src;

    ASSERT_EQ(UCS_OK, watch(src, m_async));
    for (int i = 1; i <= 3; ++i) {
        src.signal();
        wait([&] { return src.calls == i; }, "callback " + std::to_string(i));
        EXPECT_EQ(UCS_EVENT_SET_EVREAD, src.last_events);
    }

    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
    src.signal();
    sleep_ms(30);
    ucs_async_poll(m_async);
    EXPECT_EQ(3, src.calls) << "no callback after the handler is removed";
}

TEST_P(test_async, timer_repeats_until_removed)
{
    std::atomic<int> calls{0};
    int              id;

    ASSERT_EQ(UCS_OK, ucs_async_add_timer(GetParam(), ucs_time_from_msec(2),
                                          count_cb, &calls, m_async, &id));
    wait([&] { return calls >= 3; }, "3 timer expirations");
    ASSERT_EQ(UCS_OK, ucs_async_remove_handler(id, 1));

    const int after_remove = calls;
    sleep_ms(20);
    ucs_async_poll(m_async);
    EXPECT_EQ(after_remove, calls);
}

TEST_P(test_async, blocked_context_misses_nothing)
{
    event_source src;

    ASSERT_EQ(UCS_OK, watch(src, m_async));
    UCS_ASYNC_BLOCK(m_async);
    UCS_ASYNC_BLOCK(m_async); /* recursive */
    src.signal();
    sleep_ms(30);
    EXPECT_EQ(0, src.calls) << "a callback ran inside a blocked section";
    UCS_ASYNC_UNBLOCK(m_async);
    sleep_ms(10);
    EXPECT_EQ(0, src.calls) << "still blocked once";
    UCS_ASYNC_UNBLOCK(m_async);

    wait([&] { return src.calls == 1; }, "the missed event");
    sleep_ms(10);
    ucs_async_check_miss(m_async);
    EXPECT_EQ(1, src.calls) << "a missed event is dispatched once";
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
}

TEST_P(test_async, handler_may_remove_itself)
{
    struct self_remover {
        int              id    = -1;
        std::atomic<int> calls{0};

        static void cb(int id, ucs_event_set_types_t, void *arg)
        {
            auto *s = static_cast<self_remover*>(arg);
            EXPECT_EQ(UCS_OK, ucs_async_remove_handler(id, 1));
            ++s->calls;
        }
    } s;

    ASSERT_EQ(UCS_OK, ucs_async_add_timer(GetParam(), ucs_time_from_msec(1),
                                          self_remover::cb, &s, m_async,
                                          &s.id));
    wait([&] { return s.calls == 1; }, "the timer");
    sleep_ms(10);
    ucs_async_poll(m_async);
    EXPECT_EQ(1, s.calls);
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(s.id, 1));
}

TEST_P(test_async, bad_handlers_are_refused)
{
    event_source src;
    int          id;

    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(12345678, 0));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_async_set_event_handler(GetParam(), -1,
                                              UCS_EVENT_SET_EVREAD,
                                              event_source::cb, &src, m_async));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  ucs_async_add_timer(GetParam(), 0, count_cb, nullptr, m_async,
                                      &id));
        EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                  ucs_async_add_timer(UCS_ASYNC_MODE_SIGNAL, 1000, count_cb,
                                      nullptr, m_async, &id));
        if (polled()) {
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      ucs_async_add_timer(UCS_ASYNC_MODE_THREAD_MUTEX, 1000,
                                          count_cb, nullptr, m_async, &id))
                    << "a thread handler on a poll context";
        }
        EXPECT_EQ(polled() ? 4u : 3u, capture.lines().size()) << capture.dump();
    }

    ASSERT_EQ(UCS_OK, watch(src, m_async));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
        EXPECT_EQ(UCS_ERR_ALREADY_EXISTS,
                  ucs_async_set_event_handler(GetParam(), src.fd,
                                              UCS_EVENT_SET_EVREAD,
                                              event_source::cb, &src, m_async));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "already has"));
    }
    EXPECT_EQ(UCS_OK, ucs_async_remove_handler(src.fd, 1));
}

TEST_P(test_async, destroy_removes_what_is_left_with_a_warning)
{
    event_source        src;
    ucs_async_context_t *other;
    std::atomic<int>    calls{0};
    int                 id;

    ASSERT_EQ(UCS_OK, ucs_async_context_create(GetParam(), &other));
    ASSERT_EQ(UCS_OK, watch(src, other));
    ASSERT_EQ(UCS_OK, ucs_async_add_timer(GetParam(), ucs_time_from_msec(1),
                                          count_cb, &calls, other, &id));
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        ucs_async_context_destroy(other);
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, "2 handlers"))
                << capture.dump();
    }
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(src.fd, 0));
    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_async_remove_handler(id, 0));
}

INSTANTIATE_TEST_SUITE_P(mode, test_async,
                         ::testing::Values(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                           UCS_ASYNC_MODE_THREAD_MUTEX,
                                           UCS_ASYNC_MODE_POLL),
                         [](const ::testing::TestParamInfo<ucs_async_mode_t> &i) {
                             return std::string(ucs_async_mode_names[i.param]);
                         });

class test_async_context : public ucs::test_base {
};

TEST_F(test_async_context, signal_mode_is_not_provided)
{
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
    ucs_async_context_t     *async = nullptr;

    EXPECT_EQ(UCS_ERR_UNSUPPORTED,
              ucs_async_context_create(UCS_ASYNC_MODE_SIGNAL, &async));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_async_context_create(UCS_ASYNC_MODE_LAST, &async));
    EXPECT_EQ(nullptr, async);
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "signal mode is not "
                                                     "supported"));
}
