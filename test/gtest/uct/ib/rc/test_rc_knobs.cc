/*
 * The RC and IB knobs through the UCT API: a value the QP context or the
 * device cannot honour is clamped with one warning or refused when the
 * interface opens, never silently masked into a QP. Checked in the QP
 * context the emulated firmware decoded.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <uct/ib/mlx5/rc/rc_mlx5_common.h>
#include <ucs/config/parser.h>

#include <cmath>
#include <string>

using namespace ib_test;

namespace {

const char *const rc_transports[] = {"rc_mlx5", "rc_verbs"};

} // namespace

class test_rc_knobs : public rc_api_test {
protected:
    /* Open @a tl on both peers with @a knobs on the first, connect them,
     * and return the first QP's context */
    uct_ib_emu_qp_info_t connected_qp(const char *tl, const knobs_t &knobs)
    {
        uct_iface_h ia = open_iface(tl, a(), knobs);
        uct_iface_h ib = open_iface(tl, b());

        return qp_info(connect_pair(ia, ib).first);
    }

    /* The interface refuses @a knobs with one error naming @a variable */
    void expect_refused(const char *tl, const knobs_t &knobs,
                        const std::string &variable)
    {
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        uct_iface_h             iface = nullptr;

        /* as in a process of its own: a knob's report is made once */
        ucs_config_parser_forget_reported_values();
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, try_open_iface(tl, a(), knobs, &iface));
        EXPECT_EQ(nullptr, iface);
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, variable))
                << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, port_name(a())))
                << capture.dump();
    }

    /* A topology whose devices allow only 2^log WQEs per queue */
    void limit_queue_size(unsigned log)
    {
        uct_ib_emu_topology_t topo = link_topology();

        for (auto &dev : topo.devices) {
            dev.log_max_qp_sz = log;
        }
        set_topology(topo);
    }
};

TEST_P(test_rc_knobs, queue_length_above_the_device_is_clamped_once)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        ucs_config_parser_forget_reported_values(); /* a process per tl */
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        uct_ib_emu_qp_info_t    info = connected_qp(tl, {{"TX_QUEUE_LEN", "65536"},
                                                         {"RX_QUEUE_LEN", "40000"}});

        /* a DevX send takes up to 2 basic blocks of the 2^15 the QP may
         * have; receives go to an SRQ of at most 2^15 - 1 WQEs */
        const std::string tx_used = info.devx ? "16384" : "32768";

        EXPECT_EQ(2u, capture.lines().size()) << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                    "UCX_RC_TX_QUEUE_LEN=65536 cannot be "
                                    "honoured (above the device's queue size "
                                    "limit); using " + tx_used))
                << capture.dump();
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                    "UCX_RC_RX_QUEUE_LEN=40000 cannot be "
                                    "honoured (above the device's queue size "
                                    "limit); using 16384")) << capture.dump();
        if (info.devx) {
            EXPECT_EQ(15u, info.log_sq_size) << "4-bit field, never masked";
        }
    }
}

TEST_P(test_rc_knobs, queue_length_follows_the_device_caps)
{
    limit_queue_size(10);
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        ucs_config_parser_forget_reported_values(); /* a process per tl */
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        uct_ib_emu_qp_info_t    info = connected_qp(tl, {{"TX_QUEUE_LEN", "1025"}});

        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, info.devx ?
                                    "using 512" : "using 1024"))
                << capture.dump();
        if (info.devx) {
            EXPECT_EQ(10u, info.log_sq_size);
        }
    }
}

TEST_P(test_rc_knobs, zero_lengths_and_depths_are_refused)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        expect_refused(tl, {{"TX_QUEUE_LEN", "0"}}, "UCX_RC_TX_QUEUE_LEN=0");
        expect_refused(tl, {{"RX_QUEUE_LEN", "0"}}, "UCX_RC_RX_QUEUE_LEN=0");
        expect_refused(tl, {{"MAX_RD_ATOMIC", "0"}}, "UCX_RC_MAX_RD_ATOMIC=0");
        expect_refused(tl, {{"TX_CQ_MODERATION", "0"}},
                       "UCX_RC_TX_CQ_MODERATION=0");
    }
}

TEST_P(test_rc_knobs, a_knob_is_reported_once_per_process)
{
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    uct_iface_h             iface;

    /* every interface of every device reads its knobs again */
    for (const char *tl : rc_transports) {
        for (int i = 0; i < 3; ++i) {
            EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                      try_open_iface(tl, a(), {{"TX_QUEUE_LEN", "0"}}, &iface));
            open_iface(tl, b(), {{"RX_QUEUE_LEN", "40000"}});
        }
    }
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "UCX_RC_TX_QUEUE_LEN=0"))
            << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, "UCX_RC_RX_QUEUE_LEN=40000"))
            << capture.dump();
}

TEST_P(test_rc_knobs, flow_control_window_follows_the_receive_queue)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        ucs_config_parser_forget_reported_values(); /* a process per tl */
        {
            /* auto: the receive queue, and nothing to say */
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
            open_iface(tl, a(), {{"RX_QUEUE_LEN", "128"}});
            EXPECT_EQ(0u, capture.lines().size()) << capture.dump();
        }
        {
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
            open_iface(tl, a(), {{"RX_QUEUE_LEN", "128"},
                                 {"FC_WND_SIZE", "100000"}});
            EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                        "UCX_RC_FC_WND_SIZE=100000 cannot be "
                                        "honoured (a window beyond the "
                                        "receive queue overflows it); using "
                                        "128")) << capture.dump();
        }
        {
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
            open_iface(tl, a(), {{"FC_WND_SIZE", "16"}});
            EXPECT_EQ(0u, capture.lines().size()) << capture.dump();
        }
        expect_refused(tl, {{"FC_WND_SIZE", "0"}}, "UCX_RC_FC_WND_SIZE=0");
    }
}

TEST_P(test_rc_knobs, bcopy_segment_out_of_range_is_refused_by_name)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        ucs::scoped_setenv zero("UCX_IB_MAX_BCOPY", "0");
        expect_refused(tl, {}, "UCX_IB_MAX_BCOPY=0: a bcopy segment holds");
    }
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        ucs::scoped_setenv huge("UCX_IB_MAX_BCOPY", "1tb");
        expect_refused(tl, {}, "UCX_IB_MAX_BCOPY=1tb: a bcopy segment holds");
    }

    ucs::scoped_setenv      fine("UCX_IB_MAX_BCOPY", "64k");
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
    uct_iface_attr_t        attr;
    ASSERT_EQ(UCS_OK, uct_iface_query(open_iface("rc_mlx5", a()), &attr));
    EXPECT_EQ(65536u, attr.cap.put.max_bcopy);
    EXPECT_EQ(0u, capture.lines().size()) << capture.dump();
}

TEST_P(test_rc_knobs, retry_counts_above_seven_are_refused)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        expect_refused(tl, {{"RETRY_COUNT", "8"}},
                       "UCX_RC_RETRY_COUNT=8 is out of range (0..7)");
        expect_refused(tl, {{"RNR_RETRY_COUNT", "100"}},
                       "UCX_RC_RNR_RETRY_COUNT=100 is out of range (0..7)");
    }

    uct_ib_emu_qp_info_t info = connected_qp("rc_mlx5", {{"RETRY_COUNT", "7"},
                                                         {"RNR_RETRY_COUNT", "3"}});
    EXPECT_EQ(7u, info.retry_count);
    EXPECT_EQ(3u, info.rnr_retry);
}

/* QP context semantics: 0 never times out, 1 is 8.192 us, 31 the longest */
TEST_P(test_rc_knobs, ack_timeout_encoding)
{
    const struct {
        const char *value;
        unsigned   exponent;
        bool       clamped;
    } cases[] = {
        {"inf",      0,  false},  /* never time out */
        {"0",        1,  true},   /* 0 would read as infinite */
        {"1us",      1,  true},
        {"4.096us",  1,  true},
        {"8.192us",  1,  false},  /* the smallest finite timeout */
        {"8.2us",    2,  false},
        {"1s",       18, false},  /* 4.096 us * 2^18 = 1.07 s */
        {"8796s",    31, false},  /* 4.096 us * 2^31 = 8796.09 s */
        {"10000s",   31, true}
    };

    for (const char *tl : rc_transports) {
        ucs_config_parser_forget_reported_values(); /* a process per tl */
        for (const auto &c : cases) {
            SCOPED_TRACE(std::string(tl) + " TIMEOUT=" + c.value);
            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
            uct_ib_emu_qp_info_t    info = connected_qp(tl, {{"TIMEOUT", c.value}});

            EXPECT_EQ(c.exponent, info.ack_timeout);
            EXPECT_EQ(c.clamped ? 1u : 0u,
                      capture.count(UCS_LOG_LEVEL_WARN, "UCX_RC_TIMEOUT="))
                    << capture.dump();
        }
    }
}

TEST_P(test_rc_knobs, path_knobs_out_of_range_are_refused)
{
    const unsigned max_sl = roce() ? 7 : 15;

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        const std::string bad_sl = std::to_string(max_sl + 1);

        expect_refused(tl, {{"SL", bad_sl}}, "UCX_IB_SL=" + bad_sl +
                       " is out of range (0.." + std::to_string(max_sl));
        if (roce()) {
            expect_refused(tl, {{"SL", "9"}},
                           "UCX_IB_SL=9 is out of range (0..7 on RoCE");
        }
        expect_refused(tl, {{"TRAFFIC_CLASS", "1000"}},
                       "UCX_IB_TRAFFIC_CLASS=1000 is out of range (0..255)");
        expect_refused(tl, {{"HOP_LIMIT", "300"}},
                       "UCX_IB_HOP_LIMIT=300 is out of range (0..255)");
    }
}

TEST_P(test_rc_knobs, path_knobs_at_their_limits_are_programmed)
{
    const unsigned max_sl = roce() ? 7 : 15;
    uct_ib_emu_qp_info_t info = connected_qp(
            "rc_mlx5", {{"SL", std::to_string(max_sl)}, {"TRAFFIC_CLASS", "255"},
                        {"HOP_LIMIT", "255"}});

    if (roce()) {
        EXPECT_EQ(max_sl, info.primary.eth_prio);
        EXPECT_EQ(255u, info.primary.hop_limit);
        if (GetParam() == link_layer::roce_v2) {
            EXPECT_EQ(255u >> 2, info.primary.dscp);
        }
    } else {
        EXPECT_EQ(max_sl, info.primary.sl);
    }
}

TEST_P(test_rc_knobs, remote_atomics_set_the_atomic_mode)
{
    uct_ib_emu_qp_info_t info = connected_qp("rc_mlx5", {});

    EXPECT_EQ(1u, info.rae);
    EXPECT_EQ(3u, info.atomic_mode) << "atomics up to 8 bytes (extended)";
}

TEST_P(test_rc_knobs, without_lag_path_index_sets_no_port_affinity)
{
    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());

    EXPECT_EQ(1u, query(ia).dev_num_paths);
    EXPECT_EQ(0u, qp_info(connect_pair(ia, ib, 1).first).lag_tx_port_affinity);
}

TEST_P(test_rc_knobs, path_index_selects_the_lag_port)
{
    uct_ib_emu_topology_t topo = link_topology();

    if (!roce()) {
        UCS_TEST_SKIP_R("LAG bonds Ethernet ports: InfiniBand has no LAG");
    }

    for (auto &dev : topo.devices) {
        dev.num_lag_ports = 2;
    }
    set_topology(topo);

    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());
    EXPECT_EQ(2u, query(ia).dev_num_paths);
    for (unsigned path = 0; path < 4; ++path) {
        SCOPED_TRACE(path);
        EXPECT_EQ(path % 2 + 1,
                  qp_info(connect_pair(ia, ib, path).first).lag_tx_port_affinity);
    }
}

/* What the firmware's status means to the caller: the one mapping */
TEST_P(test_rc_knobs, firmware_status_becomes_the_matching_ucs_status)
{
    const struct {
        uint8_t      fw_status;
        ucs_status_t status;
    } cases[] = {
        {0x01, UCS_ERR_IO_ERROR},       /* internal error */
        {0x02, UCS_ERR_UNSUPPORTED},    /* bad opcode */
        {0x03, UCS_ERR_INVALID_PARAM},  /* bad parameter */
        {0x06, UCS_ERR_BUSY},           /* resource busy */
        {0x08, UCS_ERR_NO_RESOURCE},    /* exceeded limit */
        {0x09, UCS_ERR_INVALID_PARAM},  /* bad resource state */
        {0x0f, UCS_ERR_NO_RESOURCE},    /* no resources */
        {0x10, UCS_ERR_INVALID_PARAM}   /* bad QP state */
    };
    uct_iface_h ia = open_iface("rc_mlx5", a());
    uct_iface_h ib = open_iface("rc_mlx5", b());

    for (const auto &c : cases) {
        SCOPED_TRACE(c.fw_status);
        uct_ep_h   ea = create_ep(ia), eb = create_ep(ib);
        ep_address ab = address(ib, eb);

        ASSERT_EQ(UCS_OK, uct_ib_emu_fail_cmd(op_init2rtr, 1, c.fw_status,
                                              0x77));
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);
        EXPECT_EQ(c.status, connect(ea, ab));
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR, "syndrome 0x77"))
                << capture.dump();
    }
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_knobs);


/* The encoders on their own, for callers that bypass the interface */
class test_rc_timer_encoding : public ucs::test_base {
};

TEST_F(test_rc_timer_encoding, ack_timeout_zero_is_never_produced_for_finite)
{
    EXPECT_EQ(0u, uct_rc_ack_timeout_exp(INFINITY));
    EXPECT_EQ(1u, uct_rc_ack_timeout_exp(0));
    EXPECT_EQ(1u, uct_rc_ack_timeout_exp(1e-6));
    EXPECT_EQ(1u, uct_rc_ack_timeout_exp(8.192e-6));
    EXPECT_EQ(2u, uct_rc_ack_timeout_exp(8.2e-6));
    EXPECT_EQ(18u, uct_rc_ack_timeout_exp(1.0));
    EXPECT_EQ(31u, uct_rc_ack_timeout_exp(1e6));
}

TEST_F(test_rc_timer_encoding, rnr_timer_codes)
{
    EXPECT_EQ(1u, uct_rc_rnr_timer_code(0));        /* 0.01 ms */
    EXPECT_EQ(1u, uct_rc_rnr_timer_code(10e-6));
    EXPECT_EQ(2u, uct_rc_rnr_timer_code(11e-6));    /* 0.02 ms */
    EXPECT_EQ(14u, uct_rc_rnr_timer_code(1e-3));    /* 1.28 ms */
    EXPECT_EQ(0u, uct_rc_rnr_timer_code(0.6));      /* 655.36 ms */
    EXPECT_EQ(0u, uct_rc_rnr_timer_code(10));
}
