/*
 * The result table of ucx_perftest, in the shape of UCX's: a header with
 * the columns, a line every second while the test runs, and a final line.
 * Per line: iterations done; latency (usec) typical (the median of the
 * interval's iterations), average (of the interval) and overall (since the
 * start); bandwidth (MB/s, 2^20 bytes) and message rate (msg/s), average
 * and overall. Ping-pong tests report half of each round trip as latency.
 */
#ifndef UCX_PERFTEST_REPORT_H_
#define UCX_PERFTEST_REPORT_H_

#include <chrono>
#include <cstdint>
#include <vector>

namespace perftest {

class reporter {
public:
    using clock = std::chrono::steady_clock;

    /* @a latency_factor: 2 for ping-pongs (half round trips), else 1 */
    reporter(size_t msg_size, double latency_factor, bool progress_lines);

    void print_header() const;

    /* The measurement starts now */
    void start(clock::time_point now);

    /* One more iteration ended at @a now; a progress line once a second.
     * True when a line was printed (a second went by). */
    bool iteration(clock::time_point now);

    /* The measurement ended at @a now: the final line */
    void finish(clock::time_point now);

    uint64_t iterations() const
    {
        return m_iters;
    }

private:
    void print_line(const char *label, clock::time_point now);

    static constexpr size_t max_samples = 1 << 16;

    size_t              m_size;
    double              m_factor;
    bool                m_progress;
    clock::time_point   m_start, m_last, m_interval_start;
    uint64_t            m_iters          = 0;
    uint64_t            m_interval_iters = 0;
    std::vector<double> m_samples;   /* usec of the interval's iterations */
};

} // namespace perftest

#endif
