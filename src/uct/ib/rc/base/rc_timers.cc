/*
 * The RC transport timers in the IB encodings a QP context (or an
 * ibv_qp_attr) takes: the ack timeout exponent and the RNR timer code.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_timers.h"

#include <cmath>

namespace {

/* IB RNR NAK timer values (table 45 of the IB spec), in milliseconds,
 * indexed by code; code 0 is the longest. */
constexpr double rnr_timer_ms[32] = {
    655.36, 0.01,  0.02,  0.03,  0.04,  0.06,  0.08,   0.12,
    0.16,   0.24,  0.32,  0.48,  0.64,  0.96,  1.28,   1.92,
    2.56,   3.84,  5.12,  7.68,  10.24, 15.36, 20.48,  30.72,
    40.96,  61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52
};

} // namespace

uint8_t uct_rc_ack_timeout_exp(double timeout)
{
    constexpr double unit = 4.096e-6;
    uint8_t          exp  = 1; /* 0 means "never time out" */

    if (std::isinf(timeout)) {
        return 0;
    }

    while ((exp < 31) && (unit * std::ldexp(1.0, exp) < timeout)) {
        ++exp;
    }
    return exp;
}

uint8_t uct_rc_rnr_timer_code(double rnr_timeout)
{
    double ms = rnr_timeout * 1e3;

    for (uint8_t code = 1; code < 32; ++code) {
        if (rnr_timer_ms[code] >= ms) {
            return code;
        }
    }
    return 0; /* 655.36 ms, the longest */
}

uct_rc_timers_t uct_rc_encode_timers(const uct_rc_timer_config_t *config)
{
    uct_rc_timers_t timers;

    timers.ack_timeout = uct_rc_ack_timeout_exp(config->timeout);
    timers.min_rnr_nak = uct_rc_rnr_timer_code(config->rnr_timeout);
    /* checked to fit by uct_rc_iface_check_config(); a builder refuses
     * anything wider */
    timers.retry_count = config->retry_count;
    timers.rnr_retry   = config->rnr_retry_count;
    return timers;
}
