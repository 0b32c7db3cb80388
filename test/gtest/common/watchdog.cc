#include "watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace ucs {

watchdog::watchdog(double limit_sec) :
    m_limit_sec(limit_sec), m_thread(&watchdog::run, this)
{
}

watchdog::~watchdog()
{
    {
        std::lock_guard<std::mutex> guard(m_lock);
        m_stop = true;
    }
    m_cond.notify_one();
    m_thread.join();
}

void watchdog::OnTestStart(const ::testing::TestInfo &info)
{
    std::lock_guard<std::mutex> guard(m_lock);

    m_test     = std::string(info.test_suite_name()) + "." + info.name();
    m_deadline = std::chrono::steady_clock::now() +
                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(m_limit_sec));
    m_cond.notify_one();
}

void watchdog::OnTestEnd(const ::testing::TestInfo &)
{
    std::lock_guard<std::mutex> guard(m_lock);

    m_test.clear();
    m_cond.notify_one();
}

void watchdog::run()
{
    std::unique_lock<std::mutex> lock(m_lock);

    while (!m_stop) {
        if (m_test.empty()) {
            m_cond.wait(lock);
            continue;
        }

        if (m_cond.wait_until(lock, m_deadline) == std::cv_status::timeout &&
            !m_test.empty() &&
            (std::chrono::steady_clock::now() >= m_deadline)) {
            fprintf(stderr, "\n*** watchdog: test %s did not finish within "
                    "%.0f s, aborting\n", m_test.c_str(), m_limit_sec);
            fflush(stderr);
            abort();
        }
    }
}

} // namespace ucs
