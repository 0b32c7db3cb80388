/*
 * gtest entry point: gtest's own filters (--gtest_filter, GTEST_FILTER), a
 * watchdog per test, and a closing line "N passed, N failed, N skipped".
 *
 * UCS_GTEST_TIMEOUT sets the per-test limit in seconds before scaling
 * (default 60); it is scaled by 20 under valgrind and 3 under ASan.
 */
#include "test.h"
#include "watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace {

double watchdog_limit_sec()
{
    const char *env  = getenv("UCS_GTEST_TIMEOUT");
    double     limit = (env != nullptr) ? atof(env) : 0.0;

    return ((limit > 0) ? limit : 60.0) * ucs::test_time_multiplier();
}

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    /* fork()-style death tests are unsafe with the watchdog thread */
    GTEST_FLAG_SET(death_test_style, "threadsafe");

    auto *dog = new ucs::watchdog(watchdog_limit_sec());
    ::testing::UnitTest::GetInstance()->listeners().Append(dog); /* owns it */

    int rc = RUN_ALL_TESTS();

    const ::testing::UnitTest *ut = ::testing::UnitTest::GetInstance();
    printf("%d passed, %d failed, %d skipped\n", ut->successful_test_count(),
           ut->failed_test_count(), ut->skipped_test_count());
    fflush(stdout);
    return rc;
}
