/*
 * Log dispatch: formats a line once, with "%m" taken from the caller's errno,
 * and hands it to the handler stack, newest first, then to the printer.
 */
#include <ucs/debug/log_def.h>
#include <ucs/debug/assert.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <sys/time.h>
#include <unistd.h>
#include <utility>
#include <vector>

ucs_log_level_t ucs_global_log_level = UCS_LOG_LEVEL_WARN;

const char *ucs_log_level_names[] = {
    "fatal", "error", "warn", "diag", "info", "debug", "trace", nullptr
};

namespace {

struct log_state {
    /* Recursive: a handler may itself log. */
    std::recursive_mutex                               lock;
    std::vector<std::pair<ucs_log_func_t, void*>>      handlers;
};

log_state &state()
{
    static log_state *s = new log_state(); /* outlives every static dtor */
    return *s;
}

/* Copy @a format with every "%m" replaced by the text of @a err. */
std::string expand_errno(const char *format, int err)
{
    char        buf[128];
    std::string out;
    const char  *text = nullptr;

    for (const char *p = format; *p != '\0'; ++p) {
        if (p[0] == '%' && p[1] == '%') {
            out += "%%";
            ++p;
        } else if (p[0] == '%' && p[1] == 'm') {
            if (text == nullptr) {
                text = strerror_r(err, buf, sizeof(buf));
            }
            for (const char *t = text; *t != '\0'; ++t) {
                out += (*t == '%') ? std::string("%%") : std::string(1, *t);
            }
            ++p;
        } else {
            out += *p;
        }
    }
    return out;
}

const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return (slash == nullptr) ? path : slash + 1;
}

void print_line(const char *file, unsigned line, ucs_log_level_t level,
                const char *message)
{
    char           host[64];
    struct timeval tv;
    const char     *name = (level == UCS_LOG_LEVEL_PRINT) ? "print" :
                           ucs_log_level_name(level);

    gethostname(host, sizeof(host));
    host[sizeof(host) - 1] = '\0';

    if (ucs_log_get_level() >= UCS_LOG_LEVEL_DEBUG) {
        gettimeofday(&tv, nullptr);
        fprintf(stderr, "[%lu.%06lu] [%s:%d] %s:%u UCX %s %s\n",
                (unsigned long)tv.tv_sec, (unsigned long)tv.tv_usec, host,
                getpid(), basename_of(file), line, name, message);
    } else {
        fprintf(stderr, "[%s:%d] UCX %s %s\n", host, getpid(), name, message);
    }
}

void deliver(const char *file, unsigned line, const char *function,
             ucs_log_level_t level, const char *message)
{
    log_state                            &s = state();
    std::lock_guard<std::recursive_mutex> guard(s.lock);

    for (auto it = s.handlers.rbegin(); it != s.handlers.rend(); ++it) {
        if (it->first(file, line, function, level, message, it->second) ==
            UCS_LOG_FUNC_RC_STOP) {
            return;
        }
    }
    print_line(file, line, level, message);
}

std::string vformat(const char *format, int err, va_list ap)
{
    std::string fmt = expand_errno(format, err);
    char        buf[1024];

    vsnprintf(buf, sizeof(buf), fmt.c_str(), ap);
    return buf;
}

} // namespace

void ucs_log_dispatch(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level, const char *format, ...)
{
    int     saved_errno = errno;
    va_list ap;

    va_start(ap, format);
    std::string message = vformat(format, saved_errno, ap);
    va_end(ap);

    deliver(file, line, function, level, message.c_str());
    errno = saved_errno;
}

void ucs_fatal_error_format(const char *file, unsigned line,
                            const char *function, const char *format, ...)
{
    int     saved_errno = errno;
    va_list ap;

    va_start(ap, format);
    std::string message = vformat(format, saved_errno, ap);
    va_end(ap);

    deliver(file, line, function, UCS_LOG_LEVEL_FATAL, message.c_str());
    fprintf(stderr, "%s:%u: %s: %s\n", basename_of(file), line, function,
            message.c_str());
    fflush(stderr);
    abort();
}

void ucs_log_push_handler(ucs_log_func_t handler, void *arg)
{
    log_state                            &s = state();
    std::lock_guard<std::recursive_mutex> guard(s.lock);

    s.handlers.emplace_back(handler, arg);
}

void ucs_log_pop_handler(void)
{
    log_state                            &s = state();
    std::lock_guard<std::recursive_mutex> guard(s.lock);

    ucs_assert_always(!s.handlers.empty());
    s.handlers.pop_back();
}

void ucs_log_set_level(ucs_log_level_t level)
{
    __atomic_store(&ucs_global_log_level, &level, __ATOMIC_RELAXED);
}

const char *ucs_log_level_name(ucs_log_level_t level)
{
    if ((unsigned)level < (unsigned)UCS_LOG_LEVEL_LAST) {
        return ucs_log_level_names[level];
    }
    return (level == UCS_LOG_LEVEL_PRINT) ? "print" : "unknown";
}
