/*
 * The engine's thread and a program that polls the device in memory on a
 * loaded machine: the program's threads that opened a device give way to
 * the engine (UCX_IB_EMU_USER_NICE), each once; the others keep their nice
 * value.
 */
#include "emu/emu_test.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>


namespace {

using namespace emu_test;

class test_emu_engine_sched : public emu_fixture {
};

int nice_of(pid_t tid)
{
    errno = 0;
    const int nice = getpriority(PRIO_PROCESS, tid);
    EXPECT_EQ(0, errno) << "thread " << tid;
    return nice;
}

TEST_F(test_emu_engine_sched, starved_engine_lowers_the_device_openers)
{
    constexpr auto          limit      = std::chrono::seconds(10);
    const int               main_nice  = nice_of(gettid());
    struct ibv_device       *dev       = device("mlx5_0");
    std::mutex              lock;
    std::condition_variable cond;
    bool                    opened     = false;
    bool                    checked    = false;
    int                     nice_before = 0, nice_after = 0;
    ucs_status_t            open_status = UCS_ERR_NO_PROGRESS;

    ASSERT_NE(nullptr, dev);
    std::thread poller([&] {
        struct ibv_context *ctx = nullptr;
        std::unique_lock<std::mutex> g(lock);

        nice_before = nice_of(gettid());
        open_status = uct_ib_glue_open_device(dev, true, &ctx, nullptr);
        opened      = true;
        cond.notify_all();
        cond.wait_for(g, limit, [&] { return checked; });
        nice_after  = nice_of(gettid());
        if (ctx != nullptr) {
            EXPECT_EQ(UCS_OK, uct_ib_glue_close_device(ctx));
        }
    });

    unsigned lowered = 0, again = 0;
    {
        std::unique_lock<std::mutex> g(lock);
        const bool woke = cond.wait_for(g, limit, [&] { return opened; });
        g.unlock();
        if (woke) {
            /* the engine's thread may have found itself starved already */
            lowered = uct_ib_emu_engine_starved();
            again   = uct_ib_emu_engine_starved();
        }
        g.lock();
        checked = true;
        cond.notify_all();
        EXPECT_TRUE(woke) << "the thread opened no device in time";
    }
    poller.join();

    ASSERT_EQ(UCS_OK, open_status);
    EXPECT_LE(lowered, 1u);
    EXPECT_EQ(0u, again) << "once per thread";
    EXPECT_EQ(std::min(19, nice_before + 10), nice_after)
            << "the thread that opened a device gives way by "
               "UCX_IB_EMU_USER_NICE";
    EXPECT_EQ(main_nice, nice_of(gettid())) << "a thread that opened none";
}

} // namespace
