/*
 * The result table; see perftest_report.h.
 */
#include "perftest_report.h"

#include <algorithm>
#include <cstdio>

namespace perftest {

namespace {

constexpr double MB = 1024.0 * 1024.0;

double usec(reporter::clock::duration d)
{
    return std::chrono::duration<double, std::micro>(d).count();
}

const char rule[]  = "+--------------+---------+---------+---------+"
                     "----------+----------+-----------+-----------+";
const char rule0[] = "+--------------+-----------------------------+"
                     "---------------------+-----------------------+";

} // namespace

reporter::reporter(size_t msg_size, double latency_factor,
                   bool progress_lines) :
    m_size(msg_size), m_factor(latency_factor), m_progress(progress_lines)
{
    m_samples.reserve(max_samples);
}

void reporter::print_header() const
{
    printf("%s\n", rule0);
    printf("|              |       latency (usec)        |"
           "   bandwidth (MB/s)  |  message rate (msg/s) |\n");
    printf("%s\n", rule);
    printf("| # iterations | typical | average | overall |"
           "  average |  overall |   average |   overall |\n");
    printf("%s\n", rule);
    fflush(stdout);
}

void reporter::start(clock::time_point now)
{
    m_start          = now;
    m_last           = now;
    m_interval_start = now;
    m_iters          = 0;
    m_interval_iters = 0;
    m_samples.clear();
}

bool reporter::iteration(clock::time_point now)
{
    if (m_samples.size() < max_samples) {
        m_samples.push_back(usec(now - m_last));
    }
    m_last = now;
    ++m_iters;
    ++m_interval_iters;

    if (now - m_interval_start < std::chrono::seconds(1)) {
        return false;
    }
    if (m_progress) {
        print_line("", now);
    }
    m_interval_start = now;
    m_interval_iters = 0;
    m_samples.clear();
    return true;
}

void reporter::finish(clock::time_point now)
{
    if (m_interval_iters == 0) {
        /* the interval just ended: report the whole run as the average */
        m_interval_start = m_start;
        m_interval_iters = m_iters;
    }
    print_line("Final:", now);
}

void reporter::print_line(const char *label, clock::time_point now)
{
    const double total_us    = usec(now - m_start);
    const double interval_us = usec(now - m_interval_start);
    double       typical     = 0;

    if (!m_samples.empty()) {
        auto mid = m_samples.begin() + m_samples.size() / 2;
        std::nth_element(m_samples.begin(), mid, m_samples.end());
        typical = *mid;
    }

    auto lat  = [&](double us, uint64_t n) {
        return (n > 0) ? us / double(n) / m_factor : 0.0;
    };
    auto bw   = [&](double us, uint64_t n) {
        return (us > 0) ? double(n) * m_size / MB / (us / 1e6) : 0.0;
    };
    auto rate = [&](double us, uint64_t n) {
        return (us > 0) ? double(n) / (us / 1e6) : 0.0;
    };

    printf("%-6s%9llu %9.3f %9.3f %9.3f %10.2f %10.2f %11.0f %11.0f\n",
           label, (unsigned long long)m_iters, typical / m_factor,
           lat(interval_us, m_interval_iters), lat(total_us, m_iters),
           bw(interval_us, m_interval_iters), bw(total_us, m_iters),
           rate(interval_us, m_interval_iters), rate(total_us, m_iters));
    fflush(stdout);
}

} // namespace perftest
