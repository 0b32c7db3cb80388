/*
 * Compiler helpers shared by the C API and the C++ implementation.
 */
#ifndef UCS_COMPILER_DEF_H_
#define UCS_COMPILER_DEF_H_

#include <stddef.h>

#ifdef __cplusplus
#  define BEGIN_C_DECLS extern "C" {
#  define END_C_DECLS   }
#else
#  define BEGIN_C_DECLS
#  define END_C_DECLS
#endif

#define UCS_BIT(i)               (1ul << (i))
#define UCS_MASK(i)              (UCS_BIT(i) - 1)
#define ucs_static_array_size(a) (sizeof(a) / sizeof((a)[0]))
#define ucs_likely(x)            __builtin_expect(!!(x), 1)
#define ucs_unlikely(x)          __builtin_expect(!!(x), 0)
#define ucs_min(a, b)            ((a) < (b) ? (a) : (b))
#define ucs_max(a, b)            ((a) > (b) ? (a) : (b))
#define UCS_F_PRINTF(f, a)       __attribute__((format(printf, f, a)))
#define UCS_F_NORETURN           __attribute__((noreturn))
#define UCS_F_MAYBE_UNUSED       __attribute__((unused))

#define UCS_PP_QUOTE_(x)         #x
#define UCS_PP_QUOTE(x)          UCS_PP_QUOTE_(x)

#endif
