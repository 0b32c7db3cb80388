/*
 * gtest entry point: gtest's own filters (--gtest_filter, GTEST_FILTER), a
 * watchdog per test, and a closing line "N passed, N failed, N skipped"
 * that counts every iteration of --gtest_repeat (gtest's own counters cover
 * only the last one, so a failure in an earlier iteration would be lost).
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

/* Test results summed over the iterations of --gtest_repeat */
class run_totals : public ::testing::EmptyTestEventListener {
public:
    void OnTestIterationEnd(const ::testing::UnitTest &ut, int) override
    {
        passed  += ut.successful_test_count();
        failed  += ut.failed_test_count();
        skipped += ut.skipped_test_count();
    }

    int passed  = 0;
    int failed  = 0;
    int skipped = 0;
};

} // namespace

int main(int argc, char **argv)
{
    ::testing::InitGoogleTest(&argc, argv);
    /* the tests in this process own their emulated devices (topologies,
     * faults, step mode); the fabric tests start processes that join a
     * fabric of their own */
    setenv("UCX_IB_EMU_FABRIC", "none", 1);
    /* fork()-style death tests are unsafe with the watchdog thread */
    GTEST_FLAG_SET(death_test_style, "threadsafe");

    auto *dog       = new ucs::watchdog(watchdog_limit_sec());
    auto *totals    = new run_totals();
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();

    listeners.Append(dog); /* gtest owns its listeners */
    listeners.Append(totals);

    int rc = RUN_ALL_TESTS();

    printf("%d passed, %d failed, %d skipped\n", totals->passed,
           totals->failed, totals->skipped);
    fflush(stdout);
    return rc;
}
