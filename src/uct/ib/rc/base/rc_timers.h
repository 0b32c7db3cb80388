/*
 * The RC transport timers: the knobs (UCX_RC_TIMEOUT, ...) in UCX's units,
 * and the same in the IB encodings a QP context or an ibv_qp_attr takes.
 * Every RC transport connects its QPs with them.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#ifndef UCT_RC_TIMERS_H_
#define UCT_RC_TIMERS_H_

#include <stdint.h>

typedef struct uct_rc_timer_config {
    double   timeout;          /* UCX_RC_TIMEOUT, seconds */
    unsigned retry_count;      /* UCX_RC_RETRY_COUNT */
    double   rnr_timeout;      /* UCX_RC_RNR_TIMEOUT, seconds */
    unsigned rnr_retry_count;  /* UCX_RC_RNR_RETRY_COUNT */
} uct_rc_timer_config_t;

typedef struct uct_rc_timers {
    uint8_t ack_timeout;   /* 4.096 us * 2^n */
    uint8_t min_rnr_nak;   /* IB RNR timer code */
    uint8_t retry_count;
    uint8_t rnr_retry;
} uct_rc_timers_t;

uct_rc_timers_t uct_rc_encode_timers(const uct_rc_timer_config_t *config);

/** The QP context's ack timeout for @a timeout seconds: 0 for an infinite
 *  timeout (never time out), else the smallest t in 1..31 with
 *  4.096 us * 2^t >= @a timeout (31 for anything longer). */
uint8_t uct_rc_ack_timeout_exp(double timeout);

/** IB RNR timer code for the smallest delay >= @a rnr_timeout. */
uint8_t uct_rc_rnr_timer_code(double rnr_timeout);

#endif
