/*
 * The data path of rc_mlx5 and rc_verbs through the UCT API, on the
 * emulated NIC (its engine executes the WQEs): active messages, RMA, flush,
 * fence, pending requests, kept descriptors and endpoint failure, over
 * InfiniBand, RoCEv1 and RoCEv2.
 */
#include "uct/ib/rc/rc_api_test.h"

#include <uct/ib/mlx5/rc/rc_mlx5_iface.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

using namespace ib_test;

namespace {

const char *const rc_transports[] = {"rc_mlx5", "rc_verbs"};

/* Messages an active message handler received, and what it returns */
struct am_receiver {
    std::vector<std::string> messages;
    ucs_status_t             result = UCS_OK;
    std::vector<void*>       kept;  /* descriptors kept with UCS_INPROGRESS */
    size_t                   headroom = 0;

    static ucs_status_t cb(void *arg, void *data, size_t length, unsigned flags)
    {
        auto *rx = static_cast<am_receiver*>(arg);

        EXPECT_TRUE(flags & UCT_CB_PARAM_FLAG_DESC);
        rx->messages.emplace_back(static_cast<const char*>(data), length);
        if (rx->result == UCS_INPROGRESS) {
            rx->kept.push_back(static_cast<char*>(data) - rx->headroom);
        }
        return rx->result;
    }
};

struct pattern_arg {
    const std::string *data;
};

size_t pack_pattern(void *dest, void *arg)
{
    const std::string &s = *static_cast<pattern_arg*>(arg)->data;

    memcpy(dest, s.data(), s.size());
    return s.size();
}

void unpack_into(void *arg, const void *data, size_t length)
{
    static_cast<std::string*>(arg)->assign(static_cast<const char*>(data),
                                           length);
}

std::string pattern(size_t length, unsigned seed)
{
    std::string s(length, '\0');

    for (size_t i = 0; i < length; ++i) {
        s[i] = static_cast<char>((i * 31 + seed * 7) & 0xff);
    }
    return s;
}

struct counted_completion : uct_completion_t {
    int calls = 0;

    counted_completion()
    {
        func   = [](uct_completion_t *self) {
            ++static_cast<counted_completion*>(self)->calls;
        };
        count  = 1;
        status = UCS_OK;
    }
};

} // namespace

class test_rc_data : public rc_api_test {
protected:
    void init() override
    {
        rc_api_test::init();
        m_err_handler     = err_handler;
        m_err_handler_arg = this;
    }

    void cleanup() override
    {
        for (auto &r : m_regs) {
            EXPECT_EQ(UCS_OK, uct_rkey_release(ib_component(), &r.rkey));
            EXPECT_EQ(UCS_OK, uct_md_mem_dereg(r.md, r.memh));
        }
        m_regs.clear();
        rc_api_test::cleanup();
    }

    /* a pair of connected endpoints of @a tl, A on a() and B on b() */
    void connect_ab(const char *tl, const knobs_t &knobs = {})
    {
        m_ia = open_iface(tl, a(), knobs);
        m_ib = open_iface(tl, b(), knobs);
        ASSERT_TRUE(m_ia && m_ib);
        m_ea = create_ep(m_ia);
        m_eb = create_ep(m_ib);
        ep_address aa = address(m_ia, m_ea), ab = address(m_ib, m_eb);
        ASSERT_EQ(UCS_OK, connect(m_ea, ab));
        ASSERT_EQ(UCS_OK, connect(m_eb, aa));
    }

    void progress()
    {
        uct_iface_progress(m_ia);
        uct_iface_progress(m_ib);
    }

    /* Retry @a op while it finds no resources, progressing meanwhile */
    ucs_status_t retry(const std::function<ucs_status_t()> &op)
    {
        ucs_status_t status;

        wait_for([&] {
            status = op();
            return status != UCS_ERR_NO_RESOURCE;
        }, 10.0, [] { return std::string("send resources"); },
        [this] { progress(); });
        return status;
    }

    void wait_progress(const std::function<bool()> &done,
                       const std::string &what, double timeout = 10.0)
    {
        wait_for(done, timeout, [&what] { return what; },
                 [this] { progress(); });
    }

    /* Registered memory on @a p's md, with its unpacked rkey */
    struct region {
        uct_md_h          md;
        uct_mem_h         memh;
        uct_rkey_bundle_t rkey;
    };

    region reg(const peer &p, void *buf, size_t length)
    {
        region           r = {md(p), nullptr, {}};
        std::vector<char> packed(16);

        EXPECT_EQ(UCS_OK, uct_md_mem_reg(r.md, buf, length,
                                         UCT_MD_MEM_ACCESS_ALL, &r.memh));
        EXPECT_EQ(UCS_OK, uct_md_mkey_pack(r.md, r.memh, packed.data()));
        EXPECT_EQ(UCS_OK, uct_rkey_unpack(ib_component(), packed.data(),
                                          &r.rkey));
        m_regs.push_back(r);
        return r;
    }

    static ucs_status_t err_handler(void *arg, uct_ep_h ep, ucs_status_t status)
    {
        auto *self = static_cast<test_rc_data*>(arg);

        self->m_failures.push_back({ep, status});
        return UCS_OK;
    }

    /* The one line that reports the failure of @a ep (of transport @a tl)
     * with @a status: device:port, both QPs, the peer's address, the CQE's
     * syndrome (rc_mlx5 sees the mlx5 one) and the status; at @a level */
    void expect_failure_line(const ucs::scoped_log_capture &capture,
                             const char *tl, uct_ep_h ep, uint8_t syndrome,
                             ucs_status_t status,
                             ucs_log_level_t level = UCS_LOG_LEVEL_WARN)
    {
        const std::vector<ucs::log_line> lines = capture.lines();
        char                             qps[64], synd[32];

        snprintf(qps, sizeof(qps), "qp 0x%x to peer qp 0x%x",
                 uct_rc_ep_qpn(ep),
                 uct_rc_ep_qpn((ep == m_ea) ? m_eb : m_ea));
        snprintf(synd, sizeof(synd), "syndrome 0x%x", syndrome);
        ASSERT_EQ(1u, lines.size()) << "one line per failed endpoint:\n"
                                    << capture.dump();
        const std::string &line = lines[0].message;
        EXPECT_EQ(level, lines[0].level) << line;
        EXPECT_EQ(0u, line.find(std::string(a().dev) + ":1: ")) << line;
        EXPECT_NE(std::string::npos, line.find(qps)) << line;
        EXPECT_NE(std::string::npos,
                  line.find(roce() ? " gid " : " lid ")) << line;
        if (std::string(tl) == "rc_mlx5") {
            EXPECT_NE(std::string::npos, line.find(synd)) << line;
        }
        EXPECT_NE(std::string::npos, line.find(ucs_status_string(status)))
                << line;
    }

    uct_iface_h                                 m_ia = nullptr, m_ib = nullptr;
    uct_ep_h                                    m_ea = nullptr, m_eb = nullptr;
    std::vector<region>                         m_regs;
    std::vector<std::pair<uct_ep_h, ucs_status_t>> m_failures;
};


TEST_P(test_rc_data, capabilities)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        uct_iface_attr_t attr = query(open_iface(tl, a()));
        const uint64_t   want = UCT_IFACE_FLAG_AM_SHORT | UCT_IFACE_FLAG_AM_BCOPY |
                                UCT_IFACE_FLAG_AM_ZCOPY | UCT_IFACE_FLAG_PUT_SHORT |
                                UCT_IFACE_FLAG_PUT_BCOPY | UCT_IFACE_FLAG_PUT_ZCOPY |
                                UCT_IFACE_FLAG_GET_BCOPY | UCT_IFACE_FLAG_GET_ZCOPY |
                                UCT_IFACE_FLAG_PENDING | UCT_IFACE_FLAG_CB_SYNC |
                                UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE;

        EXPECT_EQ(want, attr.cap.flags & want);
        EXPECT_EQ(127u, attr.cap.am.max_short); /* MAX_SHORT 128, 1 header */
        EXPECT_EQ(128u, attr.cap.put.max_short);
        EXPECT_EQ(8191u, attr.cap.am.max_bcopy);
        EXPECT_EQ(8192u, attr.cap.put.max_bcopy);
        EXPECT_EQ(8192u, attr.cap.get.max_bcopy);
        EXPECT_EQ(4u, attr.cap.am.max_iov);
    }
}

TEST_P(test_rc_data, am_short_both_ways)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver   rx_a, rx_b;
        const uint64_t header  = 0x1122334455667788ull;
        const char     hello[] = "hello";

        connect_ab(tl);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ia, 1, am_receiver::cb,
                                                   &rx_a, 0));
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 5, am_receiver::cb,
                                                   &rx_b, 0));

        EXPECT_EQ(UCS_OK, uct_ep_am_short(m_ea, 5, header, hello, 5));
        EXPECT_EQ(UCS_OK, uct_ep_am_short(m_eb, 1, 7, nullptr, 0));
        wait_progress([&] { return (rx_b.messages.size() == 1) &&
                                   (rx_a.messages.size() == 1); },
                      "one message each way");

        std::string expected(reinterpret_cast<const char*>(&header), 8);
        EXPECT_EQ(expected + "hello", rx_b.messages.at(0));
        EXPECT_EQ(8u, rx_a.messages.at(0).size());
    }
}

/* rc_mlx5 rings as a NIC needs it (docs/architecture.md, section 5): the
 * doorbell record, a store fence, the WQE whole to a BlueFlame register
 * when it is one basic block and its first 8 bytes otherwise, the halves
 * in turn; the emulated device checks what it sees of every ring */
TEST_P(test_rc_data, doorbells_as_a_nic_needs_them)
{
    am_receiver       rx;
    uct_iface_attr_t  attr;
    constexpr unsigned rounds = 40;

    connect_ab("rc_mlx5");
    ASSERT_EQ(UCS_OK, uct_iface_query(m_ia, &attr));
    ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb, &rx,
                                               0));
    const std::string small(8, 's');
    const std::string large(std::min<size_t>(attr.cap.am.max_short - 8, 300),
                            'l');
    uct_ib_emu_counters_reset();

    for (unsigned i = 0; i < rounds; ++i) {
        const std::string &payload = (i % 4 == 3) ? large : small;

        ASSERT_EQ(UCS_OK, retry([&] {
            return uct_ep_am_short(m_ea, 0, i, payload.data(),
                                   payload.size());
        }));
        wait_progress([&] { return rx.messages.size() == i + 1; },
                      "the message");
    }

    const uct_ib_emu_counters_t c = uct_ib_emu_counters();
    EXPECT_EQ(0u, c.doorbell_error_count());
    /* one ring at a time: the device sees most of them, whole */
    EXPECT_GE(c.doorbells_seen, rounds / 2);
    EXPECT_GE(c.bf_copies_checked, rounds / 4);
}

TEST_P(test_rc_data, am_sizes_and_integrity)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;

        connect_ab(tl);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 2, am_receiver::cb,
                                                   &rx, 0));
        const uct_iface_attr_t attr = query(m_ia);
        std::vector<std::string> sent;

        /* short: 8-byte header only, and the largest */
        const std::string max_short = pattern(attr.cap.am.max_short - 8, 1);
        EXPECT_EQ(UCS_OK, uct_ep_am_short(m_ea, 2, 0, nullptr, 0));
        EXPECT_EQ(UCS_OK, uct_ep_am_short(m_ea, 2, 0, max_short.data(),
                                          max_short.size()));
        for (size_t length : {size_t(0), size_t(1), size_t(256),
                              size_t(attr.cap.am.max_bcopy)}) {
            std::string data = pattern(length, length);
            pattern_arg arg  = {&data};

            EXPECT_EQ(ssize_t(length), retry([&] {
                ssize_t r = uct_ep_am_bcopy(m_ea, 2, pack_pattern, &arg, 0);
                return (r < 0) ? static_cast<ucs_status_t>(r) : UCS_OK;
            }) == UCS_OK ? ssize_t(length) : -1);
            sent.push_back(data);
        }
        wait_progress([&] { return rx.messages.size() == 6; }, "6 messages");
        ASSERT_EQ(6u, rx.messages.size());
        EXPECT_EQ(std::string(8, '\0') + max_short, rx.messages[1]);
        for (size_t i = 0; i < sent.size(); ++i) {
            EXPECT_EQ(sent[i], rx.messages[2 + i]) << "bcopy " << i;
        }

        /* too long: refused locally */
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_am_short(m_ea, 2, 0, max_short.data(),
                                  max_short.size() + 1));
        EXPECT_EQ(UCS_ERR_INVALID_PARAM,
                  uct_ep_am_short(m_ea, UCT_AM_ID_MAX, 0, nullptr, 0));
        EXPECT_EQ(2u, capture.lines().size()) << capture.dump();
    }
}

TEST_P(test_rc_data, am_zcopy_with_header)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver        rx;
        std::string        data = pattern(3000, 9);
        const char         hdr[] = "HDR!";
        counted_completion comp;

        connect_ab(tl);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 3, am_receiver::cb,
                                                   &rx, 0));
        region    r   = reg(a(), &data[0], data.size());
        uct_iov_t iov[2] = {{&data[0], 1000, r.memh, 0, 1},
                            {&data[1000], 2000, r.memh, 0, 1}};

        EXPECT_EQ(UCS_INPROGRESS, uct_ep_am_zcopy(m_ea, 3, hdr, 4, iov, 2, 0,
                                                  &comp));
        wait_progress([&] { return (comp.calls == 1) && !rx.messages.empty(); },
                      "the zcopy message and its completion");
        EXPECT_EQ(UCS_OK, comp.status);
        EXPECT_EQ(std::string("HDR!") + data, rx.messages.at(0));
    }
}

TEST_P(test_rc_data, put_and_get)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        std::vector<char>  target(16384, 0);
        std::string        local = pattern(8192, 3);
        std::string        fetched;
        counted_completion put_comp, get_comp, flush_comp;

        connect_ab(tl);
        region rt = reg(b(), target.data(), target.size());
        region rl = reg(a(), &local[0], local.size());
        auto   raddr = reinterpret_cast<uintptr_t>(target.data());

        /* short at 0, bcopy at 1000, zcopy at 8192 */
        EXPECT_EQ(UCS_OK, uct_ep_put_short(m_ea, local.data(), 100, raddr,
                                           rt.rkey.rkey));
        std::string bcopy = pattern(5000, 4);
        pattern_arg arg   = {&bcopy};
        EXPECT_EQ(5000, uct_ep_put_bcopy(m_ea, pack_pattern, &arg, raddr + 1000,
                                         rt.rkey.rkey));
        uct_iov_t iov = {&local[0], 8192, rl.memh, 0, 1};
        EXPECT_EQ(UCS_INPROGRESS, uct_ep_put_zcopy(m_ea, &iov, 1, raddr + 8192,
                                                   rt.rkey.rkey, &put_comp));
        ucs_status_t flush = uct_ep_flush(m_ea, 0, &flush_comp);
        ASSERT_TRUE((flush == UCS_OK) || (flush == UCS_INPROGRESS));
        wait_progress([&] {
            return (put_comp.calls == 1) &&
                   ((flush == UCS_OK) || (flush_comp.calls == 1));
        }, "the puts and the flush");

        EXPECT_EQ(0, memcmp(target.data(), local.data(), 100));
        EXPECT_EQ(0, memcmp(target.data() + 1000, bcopy.data(), 5000));
        EXPECT_EQ(0, memcmp(target.data() + 8192, local.data(), 8192));
        EXPECT_EQ(0, target[100]) << "nothing past the short put";

        /* read it back both ways */
        EXPECT_EQ(UCS_INPROGRESS,
                  uct_ep_get_bcopy(m_ea, unpack_into, &fetched, 5000,
                                   raddr + 1000, rt.rkey.rkey, &get_comp));
        std::vector<char> zbuf(4096);
        region            rz   = reg(a(), zbuf.data(), zbuf.size());
        counted_completion zcomp;
        uct_iov_t          ziov = {zbuf.data(), zbuf.size(), rz.memh, 0, 1};
        EXPECT_EQ(UCS_INPROGRESS, uct_ep_get_zcopy(m_ea, &ziov, 1, raddr + 8192,
                                                   rt.rkey.rkey, &zcomp));
        wait_progress([&] { return (get_comp.calls == 1) && (zcomp.calls == 1); },
                      "both gets");
        EXPECT_EQ(bcopy, fetched);
        EXPECT_EQ(0, memcmp(zbuf.data(), local.data(), zbuf.size()));
    }
}

TEST_P(test_rc_data, kept_descriptor_is_released_later)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;

        m_rx_headroom = 24;
        connect_ab(tl);
        rx.result   = UCS_INPROGRESS;
        rx.headroom = 24;
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 4, am_receiver::cb,
                                                   &rx, 0));
        /* more than the receive queue holds: descriptors come back to it */
        for (int i = 0; i < 600; ++i) {
            ASSERT_EQ(UCS_OK, retry([&] {
                return uct_ep_am_short(m_ea, 4, i, nullptr, 0);
            })) << i;
            if (rx.kept.size() > 100) {
                memset(rx.kept.front(), 0xab, 24); /* the headroom is ours */
                uct_iface_release_desc(rx.kept.front());
                rx.kept.erase(rx.kept.begin());
            }
        }
        wait_progress([&] { return rx.messages.size() == 600; },
                      "600 messages");
        for (int i = 0; i < 600; ++i) {
            uint64_t header;
            memcpy(&header, rx.messages[i].data(), 8);
            ASSERT_EQ(uint64_t(i), header) << "in order";
        }
        for (void *desc : rx.kept) {
            uct_iface_release_desc(desc);
        }
        m_rx_headroom = 0;
    }
}

/* Completions are asked for once in TX_CQ_MODERATION WQEs; endpoints that
 * went idle with WQEs that asked for none never hold so much of the send CQ
 * credits that a busy endpoint stalls (nine idle ones with seven each would
 * hold 63 of 64), and a flush makes their WQEs complete */
TEST_P(test_rc_data, idle_endpoints_do_not_starve_a_busy_one)
{
    constexpr unsigned idle_eps = 9, idle_sends = 7, busy_sends = 300;
    const knobs_t knobs = {{"TX_QUEUE_LEN", "64"}, {"TX_CQ_MODERATION", "8"},
                           {"FC_ENABLE", "n"}};

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;
        std::vector<uct_ep_h> eas, ebs;

        m_ia = open_iface(tl, a(), knobs);
        m_ib = open_iface(tl, b(), knobs);
        ASSERT_TRUE(m_ia && m_ib);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));
        for (unsigned i = 0; i <= idle_eps; ++i) {
            eas.push_back(create_ep(m_ia));
            ebs.push_back(create_ep(m_ib));
            ep_address aa = address(m_ia, eas[i]), ab = address(m_ib, ebs[i]);
            ASSERT_EQ(UCS_OK, connect(eas[i], ab));
            ASSERT_EQ(UCS_OK, connect(ebs[i], aa));
        }

        for (unsigned i = 1; i <= idle_eps; ++i) {
            for (unsigned k = 0; k < idle_sends; ++k) {
                ASSERT_EQ(UCS_OK, retry([&] {
                    return uct_ep_am_short(eas[i], 0, k, nullptr, 0);
                }));
            }
        }
        for (unsigned k = 0; k < busy_sends; ++k) {
            ASSERT_EQ(UCS_OK, retry([&] {
                return uct_ep_am_short(eas[0], 0, k, nullptr, 0);
            })) << "send " << k;
        }

        wait_progress([&] {
            return uct_iface_flush(m_ia, 0, nullptr) == UCS_OK;
        }, "the interface's flush");
        wait_progress([&] {
            return rx.messages.size() == idle_eps * idle_sends + busy_sends;
        }, "every message");
        for (uct_ep_h ep : eas) {
            EXPECT_EQ(UCS_OK, uct_ep_flush(ep, 0, nullptr));
        }
    }
}

/* Two senders share the receiver's SRQ with messages of several packets,
 * on a receive queue they go around several times: every message arrives
 * whole and in order per sender, and the SRQ keeps its receives */
TEST_P(test_rc_data, two_senders_share_the_srq)
{
    constexpr int count = 100; /* each: three times the receive queue */

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;

        connect_ab(tl, {{"RX_QUEUE_LEN", "32"}, {"FC_WND_SIZE", "8"}});
        uct_iface_h ia2 = open_iface(tl, a(), {{"RX_QUEUE_LEN", "32"},
                                               {"FC_WND_SIZE", "8"}});
        uct_ep_h    ea2 = create_ep(ia2), eb2 = create_ep(m_ib);
        ep_address  a2 = address(ia2, ea2), b2 = address(m_ib, eb2);
        ASSERT_EQ(UCS_OK, connect(ea2, b2));
        ASSERT_EQ(UCS_OK, connect(eb2, a2));
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));

        const size_t size = query(m_ia).cap.am.max_bcopy;
        int          sent[2] = {0, 0};
        wait_for([&] {
            for (int s = 0; s < 2; ++s) {
                const std::string data = pattern(size, 2 * sent[s] + s);
                pattern_arg       arg  = {&data};

                if ((sent[s] < count) &&
                    (uct_ep_am_bcopy(s ? ea2 : m_ea, 0, pack_pattern, &arg,
                                     0) >= 0)) {
                    ++sent[s];
                }
            }
            uct_iface_progress(m_ia);
            uct_iface_progress(ia2);
            uct_iface_progress(m_ib);
            return rx.messages.size() == 2 * count;
        }, 30.0, [&] {
            return std::to_string(rx.messages.size()) + " of " +
                   std::to_string(2 * count) + " messages";
        });

        std::vector<int> next = {0, 0};
        for (const std::string &m : rx.messages) {
            ASSERT_EQ(size, m.size());
            /* which sender: the seed is in the first byte's pattern */
            const int s = (m == pattern(size, 2 * next[0])) ? 0 : 1;
            ASSERT_EQ(pattern(size, 2 * next[s] + s), m)
                    << "in order per sender, intact";
            ++next[s];
        }
    }
}

TEST_P(test_rc_data, stream_both_ways_no_loss_no_duplicate)
{
    constexpr int count = 10000;

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx_a, rx_b;
        int         sent_a = 0, sent_b = 0;

        connect_ab(tl);
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ia, 0, am_receiver::cb,
                                                   &rx_a, 0));
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx_b, 0));
        wait_progress([&] {
            while ((sent_a < count) &&
                   (uct_ep_am_short(m_ea, 0, sent_a, nullptr, 0) == UCS_OK)) {
                ++sent_a;
            }
            while ((sent_b < count) &&
                   (uct_ep_am_short(m_eb, 0, sent_b, nullptr, 0) == UCS_OK)) {
                ++sent_b;
            }
            return (rx_a.messages.size() == count) &&
                   (rx_b.messages.size() == count);
        }, "10000 messages each way", 60.0);

        for (auto *rx : {&rx_a, &rx_b}) {
            ASSERT_EQ(size_t(count), rx->messages.size());
            for (int i = 0; i < count; ++i) {
                uint64_t header;
                memcpy(&header, rx->messages[i].data(), 8);
                ASSERT_EQ(uint64_t(i), header);
            }
        }
    }
}

TEST_P(test_rc_data, pending_is_dispatched_when_resources_return)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        struct req : uct_pending_req_t {
            uct_ep_h ep;
            int      done = 0;
        } r;
        am_receiver rx;
        int         sent = 0;

        connect_ab(tl, {{"TX_QUEUE_LEN", "16"}});
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));
        EXPECT_EQ(UCS_ERR_BUSY, uct_ep_pending_add(m_ea, &r, 0))
                << "resources are there: send instead";

        while (uct_ep_am_short(m_ea, 0, sent, nullptr, 0) == UCS_OK) {
            ++sent;
            ASSERT_LT(sent, 1000) << "never out of resources";
        }
        r.ep   = m_ea;
        r.func = [](uct_pending_req_t *self) {
            auto *me = static_cast<req*>(self);
            ++me->done;
            return uct_ep_am_short(me->ep, 0, 12345, nullptr, 0);
        };
        ASSERT_EQ(UCS_OK, uct_ep_pending_add(m_ea, &r, 0));
        wait_progress([&] { return rx.messages.size() == size_t(sent + 1); },
                      "the queued send");
        EXPECT_EQ(1, r.done);
        uint64_t last;
        memcpy(&last, rx.messages.back().data(), 8);
        EXPECT_EQ(12345u, last);
    }
}

TEST_P(test_rc_data, bad_rkey_fails_the_endpoint_once)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        std::vector<char>  target(64);
        counted_completion comp;
        const char         data[8] = {1};

        m_failures.clear();
        connect_ab(tl);
        region rt = reg(b(), target.data(), target.size());
        auto   raddr = reinterpret_cast<uintptr_t>(target.data());

        ucs::scoped_log_capture capture;
        EXPECT_EQ(UCS_OK, uct_ep_put_short(m_ea, data, 8, raddr,
                                           rt.rkey.rkey ^ 0x5500));
        wait_progress([&] { return !m_failures.empty(); },
                      "the remote access error");
        ASSERT_EQ(1u, m_failures.size());
        EXPECT_EQ(m_ea, m_failures[0].first);
        EXPECT_EQ(UCS_ERR_CONNECTION_RESET, m_failures[0].second);
        EXPECT_EQ(UCS_ERR_CONNECTION_RESET,
                  uct_ep_put_short(m_ea, data, 8, raddr, rt.rkey.rkey))
                << "a failed endpoint refuses new operations";
        for (int i = 0; i < 20; ++i) {
            progress();
        }
        EXPECT_EQ(1u, m_failures.size()) << "reported once";
        expect_failure_line(capture, tl, m_ea,
                            MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
                            UCS_ERR_CONNECTION_RESET);
    }
}

/* The failure line's level: UCX_FAILURE when an error handler takes the
 * failure, an error when nothing does */
TEST_P(test_rc_data, failure_line_level)
{
    for (const char *tl : rc_transports) {
        for (bool handler : {true, false}) {
            SCOPED_TRACE(std::string(tl) + (handler ? " with" : " without") +
                         " an error handler");
            std::vector<char> target(64);
            const char        data[8] = {1};

            m_failures.clear();
            m_err_handler = handler ? err_handler : nullptr;
            connect_ab(tl, {{"FAILURE", "diag"}});
            region rt    = reg(b(), target.data(), target.size());
            auto   raddr = reinterpret_cast<uintptr_t>(target.data());

            ucs::scoped_log_capture capture(UCS_LOG_LEVEL_DIAG);
            {
                ucs::scoped_log_level level(UCS_LOG_LEVEL_DIAG);
                EXPECT_EQ(UCS_OK, uct_ep_put_short(m_ea, data, 8, raddr,
                                                   rt.rkey.rkey ^ 0x5500));
                wait_progress([&] {
                    return uct_ep_put_short(m_ea, data, 8, raddr,
                                            rt.rkey.rkey) ==
                           UCS_ERR_CONNECTION_RESET;
                }, "the remote access error");
            }
            EXPECT_EQ(handler ? 1u : 0u, m_failures.size());
            expect_failure_line(capture, tl, m_ea,
                                MLX5_CQE_SYNDROME_REMOTE_ACCESS_ERR,
                                UCS_ERR_CONNECTION_RESET,
                                handler ? UCS_LOG_LEVEL_DIAG :
                                          UCS_LOG_LEVEL_ERROR);
        }
    }
}

TEST_P(test_rc_data, peer_mac_moved_under_a_live_connection)
{
    const uct_ib_emu_mac_t moved = {0x02, 0x11, 0x22, 0x33, 0x44, 0x66};

    if (!roce()) {
        UCS_TEST_SKIP_R("InfiniBand routes by LID: there is no MAC to move");
    }
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1e4)); /* retries in ms */

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;

        m_failures.clear();
        connect_ab(tl, {{"TIMEOUT", "10ms"}, {"RETRY_COUNT", "3"}});
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));
        EXPECT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 1, nullptr, 0));
        wait_progress([&] { return rx.messages.size() == 1; }, "before");

        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, moved));
        {
            ucs::scoped_log_capture capture;
            EXPECT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 2, nullptr, 0));
            wait_progress([&] { return !m_failures.empty(); },
                          "the failure of the live endpoint");
            ASSERT_EQ(1u, m_failures.size());
            EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_failures[0].second);
            expect_failure_line(capture, tl, m_ea,
                                MLX5_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR,
                                UCS_ERR_ENDPOINT_TIMEOUT);
        }

        /* a new endpoint made after the move reaches the peer */
        uct_ep_h   ea2 = create_ep(m_ia), eb2 = create_ep(m_ib);
        ep_address a2 = address(m_ia, ea2), b2 = address(m_ib, eb2);
        ASSERT_EQ(UCS_OK, connect(ea2, b2));
        ASSERT_EQ(UCS_OK, connect(eb2, a2));
        if (std::string(tl) == "rc_mlx5") {
            EXPECT_EQ(moved, qp_info(qpns(a2).at(0)).primary.rmac);
        }
        EXPECT_EQ(UCS_OK, uct_ep_am_short(ea2, 0, 3, nullptr, 0));
        wait_progress([&] { return rx.messages.size() == 2; }, "after");
        ASSERT_EQ(UCS_OK, uct_ib_emu_port_set_mac(b().dev, 1, b().mac));
    }
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1));
}

/* Every atomic either transport advertises, on host-order remote memory */
TEST_P(test_rc_data, atomics_as_advertised)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        uint64_t           w64 = 0, r64 = 0;
        uint32_t           w32 = 0, r32 = 0;

        connect_ab(tl);
        const uct_iface_attr_t attr = query(m_ia);
        region r_64 = reg(b(), &w64, sizeof(w64));
        region r_32 = reg(b(), &w32, sizeof(w32));
        auto   a64  = reinterpret_cast<uintptr_t>(&w64);
        auto   a32  = reinterpret_cast<uintptr_t>(&w32);

        auto done = [&](ucs_status_t status, counted_completion &comp) {
            if (status == UCS_INPROGRESS) {
                wait_progress([&] { return comp.calls == 1; }, "the atomic");
                return comp.status;
            }
            return status;
        };
        /* the value after @a op with @a v on @a old, as UCT defines it */
        auto expect = [](uct_atomic_op_t op, uint64_t old, uint64_t v) {
            switch (op) {
            case UCT_ATOMIC_OP_ADD:  return old + v;
            case UCT_ATOMIC_OP_AND:  return old & v;
            case UCT_ATOMIC_OP_OR:   return old | v;
            case UCT_ATOMIC_OP_XOR:  return old ^ v;
            default:                 return v; /* swap */
            }
        };

        for (unsigned op = 0; op < UCT_ATOMIC_OP_CSWAP; ++op) {
            const auto     aop = static_cast<uct_atomic_op_t>(op);
            const uint64_t v   = 0xf0f0f0f00000ffffull + op;

            SCOPED_TRACE(op);
            if (attr.cap.atomic64.fop_flags & UCS_BIT(op)) {
                counted_completion comp;
                w64 = 0x123456789abcdef0ull;
                ASSERT_EQ(UCS_OK, done(uct_ep_atomic64_fetch(m_ea, aop, v, &r64,
                                                             a64, r_64.rkey.rkey,
                                                             &comp), comp));
                EXPECT_EQ(0x123456789abcdef0ull, r64);
                EXPECT_EQ(expect(aop, 0x123456789abcdef0ull, v), w64);
            }
            if (attr.cap.atomic64.op_flags & UCS_BIT(op)) {
                w64 = 7;
                ASSERT_EQ(UCS_OK, uct_ep_atomic64_post(m_ea, aop, v, a64,
                                                       r_64.rkey.rkey));
                counted_completion flush;
                ASSERT_EQ(UCS_OK, done(uct_ep_flush(m_ea, 0, &flush), flush));
                EXPECT_EQ(expect(aop, 7, v), w64);
            }
            if (attr.cap.atomic32.fop_flags & UCS_BIT(op)) {
                counted_completion comp;
                w32 = 0x9abcdef0;
                ASSERT_EQ(UCS_OK, done(uct_ep_atomic32_fetch(
                        m_ea, aop, uint32_t(v), &r32, a32, r_32.rkey.rkey,
                        &comp), comp));
                EXPECT_EQ(0x9abcdef0u, r32);
                EXPECT_EQ(uint32_t(expect(aop, 0x9abcdef0u, uint32_t(v))), w32);
            }
            if (attr.cap.atomic32.op_flags & UCS_BIT(op)) {
                w32 = 7;
                ASSERT_EQ(UCS_OK, uct_ep_atomic32_post(m_ea, aop, uint32_t(v),
                                                       a32, r_32.rkey.rkey));
                counted_completion flush;
                ASSERT_EQ(UCS_OK, done(uct_ep_flush(m_ea, 0, &flush), flush));
                EXPECT_EQ(uint32_t(expect(aop, 7, uint32_t(v))), w32);
            }
        }

        /* compare-and-swap: no match, then a match */
        counted_completion c1, c2;
        w64 = 50;
        ASSERT_EQ(UCS_OK, done(uct_ep_atomic_cswap64(m_ea, 49, 60, a64,
                                                     r_64.rkey.rkey, &r64, &c1),
                               c1));
        EXPECT_EQ(50u, r64);
        EXPECT_EQ(50u, w64);
        ASSERT_EQ(UCS_OK, done(uct_ep_atomic_cswap64(m_ea, 50, 60, a64,
                                                     r_64.rkey.rkey, &r64, &c2),
                               c2));
        EXPECT_EQ(50u, r64);
        EXPECT_EQ(60u, w64);
        if (attr.cap.atomic32.fop_flags & UCS_BIT(UCT_ATOMIC_OP_CSWAP)) {
            counted_completion c3;
            w32 = 5;
            ASSERT_EQ(UCS_OK, done(uct_ep_atomic_cswap32(m_ea, 5, 9, a32,
                                                         r_32.rkey.rkey, &r32,
                                                         &c3), c3));
            EXPECT_EQ(5u, r32);
            EXPECT_EQ(9u, w32);
        } else {
            EXPECT_EQ(UCS_ERR_UNSUPPORTED,
                      uct_ep_atomic_cswap32(m_ea, 5, 9, a32, r_32.rkey.rkey,
                                            &r32, nullptr));
        }
    }
}

/* The peer's QP is gone: its requests go unanswered and the endpoint fails
 * in bounded time, once */
TEST_P(test_rc_data, peer_qp_destroyed)
{
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1e4));
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        m_failures.clear();
        connect_ab(tl, {{"TIMEOUT", "10ms"}, {"RETRY_COUNT", "2"}});

        const uint32_t          dest_qpn = uct_rc_ep_qpn(m_eb);
        ucs::scoped_log_capture capture;
        destroy_ep(m_eb);
        EXPECT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, 1, nullptr, 0));
        wait_progress([&] { return !m_failures.empty(); },
                      "the failure of the endpoint to a destroyed QP");
        ASSERT_EQ(1u, m_failures.size());
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_failures[0].second);
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT,
                  uct_ep_am_short(m_ea, 0, 2, nullptr, 0));
        ASSERT_EQ(1u, capture.lines().size()) << capture.dump();
        char peer[32];
        snprintf(peer, sizeof(peer), "to peer qp 0x%x", dest_qpn);
        EXPECT_NE(std::string::npos,
                  capture.lines()[0].message.find(peer)) << capture.dump();
    }
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1));
}

/* A sender whose receiver does not progress stops at its window with
 * UCS_ERR_NO_RESOURCE, never with RNR NAKs, and goes on once granted */
TEST_P(test_rc_data, flow_control_window)
{
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;
        int         sent = 0;

        connect_ab(tl, {{"FC_WND_SIZE", "64"}});
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));
        uct_ib_emu_counters_reset();
        for (int i = 0; i < 1000; ++i) {
            uct_iface_progress(m_ia); /* completions, but B stays idle */
            if (uct_ep_am_short(m_ea, 0, sent, nullptr, 0) == UCS_OK) {
                ++sent;
            }
        }
        EXPECT_EQ(64, sent) << "the window, no more";
        EXPECT_EQ(0u, uct_ib_emu_counters().rnr_naks);

        wait_progress([&] {
            if (uct_ep_am_short(m_ea, 0, sent, nullptr, 0) == UCS_OK) {
                ++sent;
            }
            return rx.messages.size() >= 200;
        }, "200 messages once the receiver progresses");
        EXPECT_EQ(0u, uct_ib_emu_counters().rnr_naks);
    }
}

/* A window of one message asks for its grant with that message: each send
 * waits for the last one's grant, none is lost, and the window never
 * holds more than one */
TEST_P(test_rc_data, flow_control_window_of_one)
{
    constexpr int count = 50;

    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;
        int         sent = 0;

        connect_ab(tl, {{"FC_WND_SIZE", "1"}});
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));
        ASSERT_EQ(UCS_OK, uct_ep_am_short(m_ea, 0, sent++, nullptr, 0));
        EXPECT_EQ(UCS_ERR_NO_RESOURCE, uct_ep_am_short(m_ea, 0, sent, nullptr,
                                                       0))
                << "the window holds one message";
        wait_progress([&] {
            if ((sent < count) &&
                (uct_ep_am_short(m_ea, 0, sent, nullptr, 0) == UCS_OK)) {
                ++sent;
            }
            return rx.messages.size() == count;
        }, "every message, one grant each");
        for (int i = 0; i < count; ++i) {
            uint64_t header;
            memcpy(&header, rx.messages[i].data(), 8);
            ASSERT_EQ(uint64_t(i), header);
        }
    }
}

/* Without flow control a receiver out of buffers answers RNR NAKs: the
 * sender retries (7: forever) and everything arrives in order; with no RNR
 * retry the endpoint fails */
TEST_P(test_rc_data, rnr_storm_without_flow_control)
{
    constexpr int count = 32; /* twice the receive queue */

    if (ucs::test_time_multiplier() >= 20) {
        /* every RNR NAK is a timer of the engine thread, and valgrind runs
         * one thread at a time: minutes here, milliseconds elsewhere; the
         * plain, ASan and TSan legs run it */
        UCS_TEST_SKIP_R("RNR retries on the engine's timers under valgrind");
    }
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1e4));
    for (const char *tl : rc_transports) {
        SCOPED_TRACE(tl);
        am_receiver rx;

        connect_ab(tl, {{"FC_ENABLE", "n"}, {"RX_QUEUE_LEN", "16"}});
        ASSERT_EQ(UCS_OK, uct_iface_set_am_handler(m_ib, 0, am_receiver::cb,
                                                   &rx, 0));
        uct_ib_emu_counters_reset();
        for (int i = 0; i < count; ++i) {
            ASSERT_EQ(UCS_OK, retry([&] {
                uct_iface_progress(m_ia);
                return uct_ep_am_short(m_ea, 0, i, nullptr, 0);
            }));
        }
        wait_for([] { return uct_ib_emu_counters().rnr_naks > 0; }, 10.0,
                 [] { return std::string("an RNR NAK"); },
                 [this] { uct_iface_progress(m_ia); });
        wait_progress([&] { return rx.messages.size() == count; }, "all messages");
        for (int i = 0; i < count; ++i) {
            uint64_t header;
            memcpy(&header, rx.messages[i].data(), 8);
            ASSERT_EQ(uint64_t(i), header);
        }

        m_failures.clear();
        ucs::scoped_log_capture capture;
        connect_ab(tl, {{"FC_ENABLE", "n"}, {"RX_QUEUE_LEN", "16"},
                        {"RNR_RETRY_COUNT", "0"}});
        for (int i = 0; i < count; ++i) {
            if (uct_ep_am_short(m_ea, 0, i, nullptr, 0) != UCS_OK) {
                uct_iface_progress(m_ia);
            }
        }
        wait_for([&] { return !m_failures.empty(); }, 10.0,
                 [] { return std::string("RNR retry exceeded"); },
                 [this] { uct_iface_progress(m_ia); });
        ASSERT_FALSE(m_failures.empty());
        EXPECT_EQ(UCS_ERR_ENDPOINT_TIMEOUT, m_failures[0].second);
        expect_failure_line(capture, tl, m_ea,
                            MLX5_CQE_SYNDROME_RNR_RETRY_EXC_ERR,
                            UCS_ERR_ENDPOINT_TIMEOUT);
    }
    ASSERT_EQ(UCS_OK, uct_ib_emu_clock_set_scale(1));
}

UCT_IB_INSTANTIATE_LINK_TEST(test_rc_data);
