/*
 * Logging API: levels, the ucs_error()..ucs_trace() macros and pluggable
 * handlers. C-compatible so that every layer, C or C++, logs the same way.
 */
#ifndef UCS_LOG_DEF_H_
#define UCS_LOG_DEF_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

typedef enum {
    UCS_LOG_LEVEL_FATAL,  /* the process cannot continue */
    UCS_LOG_LEVEL_ERROR,  /* an operation failed */
    UCS_LOG_LEVEL_WARN,   /* something is wrong, the operation went on */
    UCS_LOG_LEVEL_DIAG,   /* diagnostics a user may want to see */
    UCS_LOG_LEVEL_INFO,
    UCS_LOG_LEVEL_DEBUG,
    UCS_LOG_LEVEL_TRACE,
    UCS_LOG_LEVEL_LAST,
    UCS_LOG_LEVEL_PRINT   /* always printed, whatever the level */
} ucs_log_level_t;

typedef enum {
    UCS_LOG_FUNC_RC_STOP,     /* the line was consumed */
    UCS_LOG_FUNC_RC_CONTINUE  /* pass the line on to the next handler */
} ucs_log_func_rc_t;

/**
 * A log handler gets the fully formatted message (with %m already expanded
 * from the errno of the logging call site).
 */
typedef ucs_log_func_rc_t (*ucs_log_func_t)(const char *file, unsigned line,
                                            const char *function,
                                            ucs_log_level_t level,
                                            const char *message, void *arg);

/* Current level; set from UCX_LOG_LEVEL when libucs loads, changed only
 * through ucs_log_set_level(). Every thread reads it on every log call, so
 * it is accessed atomically (relaxed: a plain load and store on the CPU). */
extern ucs_log_level_t ucs_global_log_level;

static inline ucs_log_level_t ucs_log_get_level(void)
{
    ucs_log_level_t level;

    __atomic_load(&ucs_global_log_level, &level, __ATOMIC_RELAXED);
    return level;
}

#define ucs_log_is_enabled(_level) \
    ucs_unlikely((int)(_level) <= (int)ucs_log_get_level())

#define ucs_log(_level, _fmt, ...) \
    do { \
        if (ucs_log_is_enabled(_level)) { \
            ucs_log_dispatch(__FILE__, __LINE__, __func__, (_level), \
                             _fmt, ## __VA_ARGS__); \
        } \
    } while (0)

#define ucs_error(_fmt, ...) ucs_log(UCS_LOG_LEVEL_ERROR, _fmt, ## __VA_ARGS__)
#define ucs_warn(_fmt, ...)  ucs_log(UCS_LOG_LEVEL_WARN,  _fmt, ## __VA_ARGS__)
#define ucs_diag(_fmt, ...)  ucs_log(UCS_LOG_LEVEL_DIAG,  _fmt, ## __VA_ARGS__)
#define ucs_info(_fmt, ...)  ucs_log(UCS_LOG_LEVEL_INFO,  _fmt, ## __VA_ARGS__)
#define ucs_debug(_fmt, ...) ucs_log(UCS_LOG_LEVEL_DEBUG, _fmt, ## __VA_ARGS__)
#define ucs_trace(_fmt, ...) ucs_log(UCS_LOG_LEVEL_TRACE, _fmt, ## __VA_ARGS__)

/**
 * Format and deliver one line to the handler stack. errno is the same on
 * return as on entry, and "%m" expands to the entry errno's text.
 */
void ucs_log_dispatch(const char *file, unsigned line, const char *function,
                      ucs_log_level_t level, const char *format, ...)
    UCS_F_PRINTF(5, 6);

/* Handlers run newest first; the built-in printer to stderr runs last. */
void ucs_log_push_handler(ucs_log_func_t handler, void *arg);
void ucs_log_pop_handler(void);

void ucs_log_set_level(ucs_log_level_t level);
const char *ucs_log_level_name(ucs_log_level_t level);

/* Names of the levels in order, NULL-terminated (for the config parser). */
extern const char *ucs_log_level_names[];

END_C_DECLS

#endif
