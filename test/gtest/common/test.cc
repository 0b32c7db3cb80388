#include "test.h"

#include <ucs/config/parser.h>

#ifdef HAVE_VALGRIND_H
#  include <valgrind/valgrind.h>
#endif

#include <chrono>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace ucs {

double test_time_multiplier()
{
    double factor = 1.0;

#ifdef HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND) {
        factor *= 20.0;
    }
#endif
#ifdef UCS_ENABLE_ASAN
    factor *= 3.0;
#endif
#ifdef UCS_ENABLE_TSAN
    factor *= 5.0;
#endif
    return factor;
}

ucs_time_t test_timeout(double seconds)
{
    return ucs_time_from_sec(seconds * test_time_multiplier());
}

scoped_log_capture::scoped_log_capture(ucs_log_level_t level) : m_level(level)
{
    ucs_log_push_handler(handler, this);
}

scoped_log_capture::~scoped_log_capture()
{
    ucs_log_pop_handler();
}

ucs_log_func_rc_t scoped_log_capture::handler(const char *, unsigned,
                                              const char *,
                                              ucs_log_level_t level,
                                              const char *message, void *arg)
{
    auto *self = static_cast<scoped_log_capture*>(arg);

    if (level > self->m_level) {
        return UCS_LOG_FUNC_RC_CONTINUE;
    }

    std::lock_guard<std::mutex> guard(self->m_lock);
    self->m_lines.push_back({level, message});
    return UCS_LOG_FUNC_RC_STOP;
}

std::vector<log_line> scoped_log_capture::lines() const
{
    std::lock_guard<std::mutex> guard(m_lock);
    return m_lines;
}

size_t scoped_log_capture::count(ucs_log_level_t level,
                                 const std::string &text) const
{
    std::lock_guard<std::mutex> guard(m_lock);
    size_t                      n = 0;

    for (const log_line &l : m_lines) {
        n += (l.level == level) && (l.message.find(text) != std::string::npos);
    }
    return n;
}

size_t scoped_log_capture::count(const std::string &text) const
{
    std::lock_guard<std::mutex> guard(m_lock);
    size_t                      n = 0;

    for (const log_line &l : m_lines) {
        n += (l.message.find(text) != std::string::npos);
    }
    return n;
}

std::string scoped_log_capture::dump() const
{
    std::ostringstream          os;
    std::lock_guard<std::mutex> guard(m_lock);

    for (const log_line &l : m_lines) {
        os << "  [" << ucs_log_level_name(l.level) << "] " << l.message << "\n";
    }
    return os.str();
}

scoped_setenv::scoped_setenv(const char *name, const char *value) :
    m_name(name), m_had_value(getenv(name) != nullptr)
{
    if (m_had_value) {
        m_old_value = getenv(name);
    }
    setenv(name, value, 1);
}

scoped_setenv::~scoped_setenv()
{
    if (m_had_value) {
        setenv(m_name.c_str(), m_old_value.c_str(), 1);
    } else {
        unsetenv(m_name.c_str());
    }
}

void test_base::SetUp()
{
    /* a knob's report is made once per process: each test sees its own */
    ucs_config_parser_forget_reported_values();
    ucs_log_push_handler(handler, this);
    init();
}

void test_base::TearDown()
{
    cleanup();
    ucs_log_pop_handler();

    for (const log_line &l : unexpected_lines()) {
        ADD_FAILURE() << "unexpected " << ucs_log_level_name(l.level)
                      << ": " << l.message;
    }
}

ucs_log_func_rc_t test_base::handler(const char *, unsigned, const char *,
                                     ucs_log_level_t level, const char *message,
                                     void *arg)
{
    auto *self = static_cast<test_base*>(arg);

    if (level <= UCS_LOG_LEVEL_WARN) {
        std::lock_guard<std::mutex> guard(self->m_lock);
        self->m_unexpected.push_back({level, message});
    }
    return UCS_LOG_FUNC_RC_CONTINUE; /* still printed */
}

std::vector<log_line> test_base::unexpected_lines() const
{
    std::lock_guard<std::mutex> guard(m_lock);
    return m_unexpected;
}

bool test_base::wait_for(const std::function<bool()> &done, double timeout_sec,
                         const std::function<std::string()> &pending,
                         const std::function<void()> &progress)
{
    ucs_time_t deadline = ucs_deadline_after(test_timeout(timeout_sec));

    while (!done()) {
        if (ucs_deadline_expired(deadline)) {
            ADD_FAILURE() << "timed out after " << timeout_sec << " s (x"
                          << test_time_multiplier() << ") waiting for: "
                          << pending();
            return false;
        }
        if (progress) {
            progress();
            std::this_thread::yield(); /* let the threads that do the work run */
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }
    return true;
}

} // namespace ucs
