/*
 * Aborts the process, naming the test, when one test runs longer than its
 * limit: a hung test must fail loudly, well inside CI's time budget.
 */
#ifndef UCS_GTEST_WATCHDOG_H_
#define UCS_GTEST_WATCHDOG_H_

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ucs {

class watchdog : public ::testing::EmptyTestEventListener {
public:
    /** @a limit_sec is per test, already scaled for valgrind/ASan. */
    explicit watchdog(double limit_sec);
    ~watchdog() override;

    void OnTestStart(const ::testing::TestInfo &info) override;
    void OnTestEnd(const ::testing::TestInfo &info) override;

    double limit_sec() const { return m_limit_sec; }

private:
    void run();

    const double                          m_limit_sec;
    std::mutex                            m_lock;
    std::condition_variable               m_cond;
    std::string                           m_test;     /* "" = between tests */
    std::chrono::steady_clock::time_point m_deadline;
    bool                                  m_stop = false;
    std::thread                           m_thread;
};

} // namespace ucs

#endif
