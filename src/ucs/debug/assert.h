/*
 * Assertions and fatal errors.
 * ucs_assert() is checked only in builds configured with --enable-debug;
 * ucs_assert_always() and ucs_fatal() are always active.
 */
#ifndef UCS_ASSERT_H_
#define UCS_ASSERT_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

void ucs_fatal_error_format(const char *file, unsigned line,
                            const char *function, const char *format, ...)
    UCS_F_PRINTF(4, 5) UCS_F_NORETURN;

#define ucs_fatal(_fmt, ...) \
    ucs_fatal_error_format(__FILE__, __LINE__, __func__, "fatal: " _fmt, \
                           ## __VA_ARGS__)

#define ucs_assert_always(_expr) \
    do { \
        if (ucs_unlikely(!(_expr))) { \
            ucs_fatal_error_format(__FILE__, __LINE__, __func__, \
                                   "assertion failure: %s", #_expr); \
        } \
    } while (0)

#define ucs_assertv_always(_expr, _fmt, ...) \
    do { \
        if (ucs_unlikely(!(_expr))) { \
            ucs_fatal_error_format(__FILE__, __LINE__, __func__, \
                                   "assertion failure: %s: " _fmt, #_expr, \
                                   ## __VA_ARGS__); \
        } \
    } while (0)

#ifdef UCS_ENABLE_ASSERT
#  define ucs_assert(_expr)               ucs_assert_always(_expr)
#  define ucs_assertv(_expr, _fmt, ...)   ucs_assertv_always(_expr, _fmt, \
                                                             ## __VA_ARGS__)
#else
/* Not evaluated, but still compiled so that it cannot rot. */
#  define ucs_assert(_expr)               do { if (0) { (void)(_expr); } } while (0)
#  define ucs_assertv(_expr, _fmt, ...)   ucs_assert(_expr)
#endif

END_C_DECLS

#endif
