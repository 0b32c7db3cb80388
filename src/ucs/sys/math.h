/*
 * Integer helpers for queue and buffer sizes.
 */
#ifndef UCS_SYS_MATH_H_
#define UCS_SYS_MATH_H_

#include <ucs/sys/compiler_def.h>

#include <stddef.h>

/** floor(log2(n)), 0 for n <= 1 */
static inline unsigned ucs_ilog2(unsigned n)
{
    return (n <= 1) ? 0 : 31 - (unsigned)__builtin_clz(n);
}

static inline int ucs_is_pow2(unsigned n)
{
    return (n != 0) && ((n & (n - 1)) == 0);
}

/** ceil(log2(n)), 0 for n <= 1; 32 for n above 2^31 */
static inline unsigned ucs_ilog2_ceil(unsigned n)
{
    return (n <= 1) ? 0 : ucs_ilog2(n - 1) + 1;
}

/** The smallest power of two >= n (1 for n = 0); 0 when no unsigned power
 *  of two is >= n (n above 2^31) */
static inline unsigned ucs_roundup_pow2(unsigned n)
{
    unsigned log = ucs_ilog2_ceil(n);

    return (log >= 32) ? 0 : 1u << log;
}

/** n rounded up to a multiple of a (a > 0) */
static inline size_t ucs_align_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

#endif
