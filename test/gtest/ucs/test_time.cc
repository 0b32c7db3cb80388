#include <common/test.h>

#include <ucs/time/time.h>

#include <chrono>
#include <cmath>
#include <thread>

class test_time : public ucs::test_base {
};

TEST_F(test_time, monotonic)
{
    ucs_time_t prev = ucs_get_time();

    for (int i = 0; i < 10000; ++i) {
        ucs_time_t now = ucs_get_time();
        ASSERT_GE(now, prev);
        prev = now;
    }
}

TEST_F(test_time, conversions)
{
    EXPECT_EQ(1000000000ull, ucs_time_from_sec(1.0));
    EXPECT_EQ(1500000ull,    ucs_time_from_msec(1.5));
    EXPECT_EQ(2000ull,       ucs_time_from_usec(2.0));
    EXPECT_EQ(0ull,          ucs_time_from_sec(-1.0));
    EXPECT_DOUBLE_EQ(2.5,    ucs_time_to_sec(ucs_time_from_sec(2.5)));
    EXPECT_DOUBLE_EQ(250.0,  ucs_time_to_msec(ucs_time_from_msec(250)));
    EXPECT_DOUBLE_EQ(7.0,    ucs_time_to_usec(ucs_time_from_usec(7)));
}

TEST_F(test_time, clock_matches_sleep)
{
    ucs_time_t start = ucs_get_time();

    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_GE(ucs_time_to_msec(ucs_get_time() - start), 19.0);
}

TEST_F(test_time, deadline)
{
    ucs_time_t deadline = ucs_deadline_after(ucs_time_from_msec(10));

    EXPECT_FALSE(ucs_deadline_expired(deadline));
    EXPECT_GT(ucs_deadline_left(deadline), 0ull);
    EXPECT_LE(ucs_deadline_left(deadline), ucs_time_from_msec(10));

    EXPECT_TRUE(wait_for([&] { return ucs_deadline_expired(deadline); }, 1.0,
                         [] { return std::string("a 10 ms deadline"); }));
    EXPECT_EQ(0ull, ucs_deadline_left(deadline));
}

TEST_F(test_time, huge_durations_saturate)
{
    EXPECT_EQ(UCS_TIME_INFINITY, ucs_time_from_sec(HUGE_VAL));
    EXPECT_EQ(UCS_TIME_INFINITY, ucs_time_from_sec(1e12));
    EXPECT_EQ(0ull, ucs_time_from_sec(-HUGE_VAL));
    EXPECT_LT(ucs_time_from_sec(3600.0), UCS_TIME_INFINITY);
}

TEST_F(test_time, infinite_deadline_never_expires)
{
    ucs_time_t deadline = ucs_deadline_after(UCS_TIME_INFINITY - 1);

    EXPECT_EQ(UCS_TIME_INFINITY, deadline);
    EXPECT_FALSE(ucs_deadline_expired(deadline));
    EXPECT_EQ(UCS_TIME_INFINITY, ucs_deadline_left(deadline));
}
