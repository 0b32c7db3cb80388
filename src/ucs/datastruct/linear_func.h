/*
 * f(x) = c + m * x, the shape of every cost estimate (latency per endpoint
 * count, registration time per byte).
 */
#ifndef UCS_DATASTRUCT_LINEAR_FUNC_H_
#define UCS_DATASTRUCT_LINEAR_FUNC_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

typedef struct {
    double c; /**< constant term */
    double m; /**< slope */
} ucs_linear_func_t;

static inline ucs_linear_func_t ucs_linear_func_make(double c, double m)
{
    ucs_linear_func_t func;

    func.c = c;
    func.m = m;
    return func;
}

static inline double ucs_linear_func_apply(ucs_linear_func_t func, double x)
{
    return func.c + (func.m * x);
}

END_C_DECLS

#endif
