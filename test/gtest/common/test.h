/*
 * Fixture base of every test: init()/cleanup() hooks, failure on unexpected
 * warnings and errors, scoped capture of expected log lines, and bounded
 * waits whose deadlines scale under valgrind and sanitizers.
 */
#ifndef UCS_GTEST_TEST_H_
#define UCS_GTEST_TEST_H_

#include <ucs/debug/log_def.h>
#include <ucs/time/time.h>

#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace ucs {

struct log_line {
    ucs_log_level_t level;
    std::string     message;
};

/** How much slower this build runs than a plain one (valgrind, ASan). */
double test_time_multiplier();

/** @a seconds scaled by test_time_multiplier(). */
ucs_time_t test_timeout(double seconds);

/**
 * Captures log lines at @a level and more severe while it lives, newest
 * capture first. Captured lines do not reach stderr and do not fail the test.
 */
class scoped_log_capture {
public:
    explicit scoped_log_capture(ucs_log_level_t level = UCS_LOG_LEVEL_WARN);
    ~scoped_log_capture();

    scoped_log_capture(const scoped_log_capture&)            = delete;
    scoped_log_capture &operator=(const scoped_log_capture&) = delete;

    std::vector<log_line> lines() const;

    /** Lines of exactly @a level whose text contains @a text. */
    size_t count(ucs_log_level_t level, const std::string &text = "") const;

    /** Lines of any captured level whose text contains @a text. */
    size_t count(const std::string &text) const;

    /** All captured lines, one per row, for failure messages. */
    std::string dump() const;

private:
    static ucs_log_func_rc_t handler(const char *file, unsigned line,
                                     const char *function,
                                     ucs_log_level_t level,
                                     const char *message, void *arg);

    ucs_log_level_t       m_level;
    mutable std::mutex    m_lock;
    std::vector<log_line> m_lines;
};

/** Sets the log level while it lives, then restores the one it found
 * (through ucs_log_set_level(): other threads read the level as it
 * changes). */
class scoped_log_level {
public:
    explicit scoped_log_level(ucs_log_level_t level) :
        m_saved(ucs_log_get_level())
    {
        ucs_log_set_level(level);
    }

    ~scoped_log_level()
    {
        ucs_log_set_level(m_saved);
    }

    scoped_log_level(const scoped_log_level&)            = delete;
    scoped_log_level &operator=(const scoped_log_level&) = delete;

private:
    ucs_log_level_t m_saved;
};

/** Sets an environment variable while it lives, then restores it. */
class scoped_setenv {
public:
    scoped_setenv(const char *name, const char *value);
    ~scoped_setenv();

    scoped_setenv(const scoped_setenv&)            = delete;
    scoped_setenv &operator=(const scoped_setenv&) = delete;

private:
    std::string m_name;
    bool        m_had_value;
    std::string m_old_value;
};

class test_base : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;

    /* Per-test setup and teardown; run inside SetUp/TearDown. */
    virtual void init() {}
    virtual void cleanup() {}

    /**
     * Poll @a done until it holds or @a timeout_sec (scaled) passes. On
     * timeout the test fails with @a pending() describing what is missing.
     * @a progress, if given, runs between polls.
     */
    bool wait_for(const std::function<bool()> &done, double timeout_sec,
                  const std::function<std::string()> &pending,
                  const std::function<void()> &progress = nullptr);

    /** Warnings and errors nobody captured so far in this test. */
    std::vector<log_line> unexpected_lines() const;

private:
    static ucs_log_func_rc_t handler(const char *file, unsigned line,
                                     const char *function,
                                     ucs_log_level_t level,
                                     const char *message, void *arg);

    mutable std::mutex    m_lock;
    std::vector<log_line> m_unexpected;
};

/* Skips always say why. */
#define UCS_TEST_SKIP_R(_reason) GTEST_SKIP() << "skipped: " << (_reason)

} // namespace ucs

#endif
