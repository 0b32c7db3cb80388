/*
 * Monotonic time in nanoseconds, unit conversions and deadlines.
 */
#ifndef UCS_TIME_H_
#define UCS_TIME_H_

#include <ucs/sys/compiler_def.h>
#include <stdint.h>

BEGIN_C_DECLS

/* Nanoseconds on the monotonic clock. */
typedef uint64_t ucs_time_t;

#define UCS_TIME_INFINITY ((ucs_time_t)-1)

/** Now, on the monotonic clock. */
ucs_time_t ucs_get_time(void);

/** Saturates: a huge or infinite duration is UCS_TIME_INFINITY. */
static inline ucs_time_t ucs_time_from_sec(double sec)
{
    if (!(sec > 0)) {
        return 0;
    } else if (!(sec < 1.8e10)) { /* ~570 years; also catches inf */
        return UCS_TIME_INFINITY;
    }
    return (ucs_time_t)(sec * 1e9 + 0.5);
}

static inline ucs_time_t ucs_time_from_msec(double msec)
{
    return ucs_time_from_sec(msec / 1e3);
}

static inline ucs_time_t ucs_time_from_usec(double usec)
{
    return ucs_time_from_sec(usec / 1e6);
}

static inline double ucs_time_to_sec(ucs_time_t t)
{
    return (double)t / 1e9;
}

static inline double ucs_time_to_msec(ucs_time_t t)
{
    return (double)t / 1e6;
}

static inline double ucs_time_to_usec(ucs_time_t t)
{
    return (double)t / 1e3;
}

/** A deadline @a timeout from now; an infinite timeout never expires. */
static inline ucs_time_t ucs_deadline_after(ucs_time_t timeout)
{
    ucs_time_t now = ucs_get_time();

    return (timeout >= UCS_TIME_INFINITY - now) ? UCS_TIME_INFINITY :
                                                  now + timeout;
}

static inline int ucs_deadline_expired(ucs_time_t deadline)
{
    return (deadline != UCS_TIME_INFINITY) && (ucs_get_time() >= deadline);
}

/** Time left until @a deadline, 0 when it has passed. */
static inline ucs_time_t ucs_deadline_left(ucs_time_t deadline)
{
    ucs_time_t now;

    if (deadline == UCS_TIME_INFINITY) {
        return UCS_TIME_INFINITY;
    }

    now = ucs_get_time();
    return (deadline > now) ? (deadline - now) : 0;
}

END_C_DECLS

#endif
