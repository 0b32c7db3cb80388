/*
 * The RC knobs checked against what the QP context can hold and what the
 * device allows, once, when an interface opens. A value that cannot be
 * honoured is clamped with one warning naming the knob, the value used and
 * why, or refused with an error; never silently masked later.
 *
 * Layer rc/base: may include ib/base/, uct/base/ and ucs/; never mlx5/ nor
 * rc/verbs/.
 */
#include "rc_iface.h"

#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/math.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr double   ack_timeout_unit = 4.096e-6; /* s, 2^0 of qpc ack_timeout */
constexpr unsigned ack_timeout_max  = 31;       /* 5-bit field, 31 is max */
constexpr unsigned max_retry        = 7;        /* 3-bit retry counters */
constexpr double   rnr_timeout_max  = 655.36e-3; /* IB RNR timer code 0 */

/*
 * One line per process for each knob value: every interface of every device
 * checks its configuration, and the first device's line says it for all.
 */
void report(ucs_log_level_t level, const char *dev_name, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

void report(ucs_log_level_t level, const char *dev_name, const char *fmt, ...)
{
    char    text[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);

    if (ucs_config_parser_first_report(text)) {
        ucs_log(level, "%s: %s", dev_name, text);
    }
}

void warn_clamped(const char *dev_name, const char *knob, const char *value,
                  const char *used, const char *why)
{
    report(UCS_LOG_LEVEL_WARN, dev_name,
           "UCX_RC_%s=%s cannot be honoured (%s); using %s", knob, value, why,
           used);
}

std::string time_str(double seconds)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%gus", seconds * 1e6);
    return buf;
}

/* A queue length: at least 1, a power of two, at most what the device has */
ucs_status_t check_queue_len(const char *dev_name, const char *knob,
                             unsigned value, unsigned max, unsigned *len_p)
{
    unsigned len;

    if (value == 0) {
        report(UCS_LOG_LEVEL_ERROR, dev_name,
               "UCX_RC_%s=0: a queue needs at least one entry", knob);
        return UCS_ERR_INVALID_PARAM;
    }

    len = ucs_roundup_pow2(value);
    if ((len == 0) || (len > max)) {
        len = max;
        warn_clamped(dev_name, knob, std::to_string(value).c_str(),
                     std::to_string(len).c_str(),
                     "above the device's queue size limit");
    }

    *len_p = len;
    return UCS_OK;
}

ucs_status_t check_retry(const char *dev_name, const char *knob,
                         unsigned value)
{
    if (value > max_retry) {
        report(UCS_LOG_LEVEL_ERROR, dev_name,
               "UCX_RC_%s=%u is out of range (0..%u)", knob, value, max_retry);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

/* The ack timeout the QP context can express: 0 is "never" (inf), so the
 * smallest finite one is 4.096 us * 2^1 and the largest 4.096 us * 2^31 */
double check_timeout(const char *dev_name, double timeout)
{
    const double min = ack_timeout_unit * 2;
    const double max = std::ldexp(ack_timeout_unit, ack_timeout_max);

    if (std::isinf(timeout)) {
        return timeout;
    } else if (timeout < min) {
        warn_clamped(dev_name, "TIMEOUT", time_str(timeout).c_str(),
                     time_str(min).c_str(),
                     "the shortest finite ack timeout is 4.096 us * 2^1; "
                     "use inf to never time out");
        return min;
    } else if (timeout > max) {
        warn_clamped(dev_name, "TIMEOUT", time_str(timeout).c_str(),
                     time_str(max).c_str(),
                     "the longest finite ack timeout is 4.096 us * 2^31");
        return max;
    }
    return timeout;
}

} // namespace

ucs_status_t uct_rc_iface_check_config(const char *dev_name,
                                       const uct_rc_iface_limits_t *limits,
                                       const uct_rc_iface_config_t *config,
                                       uct_rc_iface_config_t *checked_p)
{
    uct_rc_iface_config_t checked = *config;
    ucs_status_t          status;

    status = check_queue_len(dev_name, "TX_QUEUE_LEN", config->tx_queue_len,
                             limits->max_tx_queue_len, &checked.tx_queue_len);
    if (status != UCS_OK) {
        return status;
    }

    status = check_queue_len(dev_name, "RX_QUEUE_LEN", config->rx_queue_len,
                             limits->max_rx_queue_len, &checked.rx_queue_len);
    if (status != UCS_OK) {
        return status;
    }

    status = check_retry(dev_name, "RETRY_COUNT", config->retry_count);
    if (status != UCS_OK) {
        return status;
    }

    status = check_retry(dev_name, "RNR_RETRY_COUNT", config->rnr_retry_count);
    if (status != UCS_OK) {
        return status;
    }

    if (config->max_rd_atomic == 0) {
        report(UCS_LOG_LEVEL_ERROR, dev_name,
               "UCX_RC_MAX_RD_ATOMIC=0: RDMA reads and atomics need a depth "
               "of at least 1");
        return UCS_ERR_INVALID_PARAM;
    } else if (config->max_rd_atomic > limits->max_rd_atomic) {
        checked.max_rd_atomic = limits->max_rd_atomic;
        warn_clamped(dev_name, "MAX_RD_ATOMIC",
                     std::to_string(config->max_rd_atomic).c_str(),
                     std::to_string(checked.max_rd_atomic).c_str(),
                     "above the device's outstanding read/atomic limit");
    }

    if (config->rnr_timeout > rnr_timeout_max) {
        checked.rnr_timeout = rnr_timeout_max;
        warn_clamped(dev_name, "RNR_TIMEOUT",
                     time_str(config->rnr_timeout).c_str(),
                     time_str(rnr_timeout_max).c_str(),
                     "the longest RNR timer is 655.36 ms");
    }

    if (config->fc_enable && (config->fc_wnd_size == 0)) {
        report(UCS_LOG_LEVEL_ERROR, dev_name,
               "UCX_RC_FC_WND_SIZE=0: flow control needs a window of at "
               "least 1 message");
        return UCS_ERR_INVALID_PARAM;
    }
    /* the receive queue is what the window stands for: never more than it */
    if (config->fc_wnd_size == UCS_ULUNITS_AUTO) {
        checked.fc_wnd_size = checked.rx_queue_len;
    } else if (config->fc_wnd_size > checked.rx_queue_len) {
        checked.fc_wnd_size = checked.rx_queue_len;
        warn_clamped(dev_name, "FC_WND_SIZE",
                     (config->fc_wnd_size == UCS_ULUNITS_INF) ? "inf" :
                     std::to_string(config->fc_wnd_size).c_str(),
                     std::to_string(checked.fc_wnd_size).c_str(),
                     "a window beyond the receive queue overflows it");
    }

    if (config->tx_cq_moderation == 0) {
        report(UCS_LOG_LEVEL_ERROR, dev_name,
               "UCX_RC_TX_CQ_MODERATION=0: a completion is asked for once "
               "in at least 1 WQE");
        return UCS_ERR_INVALID_PARAM;
    }

    checked.timeout = check_timeout(dev_name, config->timeout);
    *checked_p      = checked;
    return UCS_OK;
}

ucs_status_t uct_rc_iface_check_max_bcopy(const char *dev_name,
                                          size_t max_bcopy,
                                          size_t min_seg_size)
{
    const char *value = getenv("UCX_IB_MAX_BCOPY");
    const char *var   = "UCX_IB_MAX_BCOPY";

    if ((max_bcopy > min_seg_size) && (max_bcopy <= UCT_RC_IFACE_MAX_SEG_SIZE)) {
        return UCS_OK;
    }

    if (value == nullptr) {
        value = getenv("UCX_MAX_BCOPY");
        var   = "UCX_MAX_BCOPY";
    }
    report(UCS_LOG_LEVEL_ERROR, dev_name,
           "%s=%s: a bcopy segment holds more than its %zu-byte header and "
           "at most %lu bytes (larger messages go zcopy)", var,
           (value != nullptr) ? value : std::to_string(max_bcopy).c_str(),
           min_seg_size, UCT_RC_IFACE_MAX_SEG_SIZE);
    return UCS_ERR_INVALID_PARAM;
}
