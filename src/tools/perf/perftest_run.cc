/*
 * The test loops; see perftest_run.h.
 *
 * Buffer layout (each side): [0, size) is what the peer writes into (put)
 * or reads from (get) and, for the atomics, the 64-bit word at 0; the
 * message source (or get destination) follows at an aligned offset.
 */
#include "perftest_run.h"
#include "perftest_channel.h"
#include "perftest_report.h"
#include "perftest_uct.h"
#include "bench_probe.h"

#include <sched.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <sstream>

namespace perftest {

namespace {

using clock = std::chrono::steady_clock;

constexpr auto CHECK_PERIOD     = std::chrono::milliseconds(10);

/* Progress calls of a wait between two looks at the clock */
constexpr unsigned CLOCK_EVERY  = 32;

/*
 * On the emulated device the NIC is the emulator's thread in each process,
 * on the same cores as the two busy-polling programs (4 threads for 2 cores
 * here): a wait that found nothing this many times in a row yields the CPU
 * so the NICs get to run. Hardware NICs need no such courtesy.
 */
constexpr unsigned YIELD_AFTER  = 16;
constexpr auto HEARTBEAT_PERIOD = std::chrono::seconds(1);

size_t aligned(size_t size)
{
    return (size + 63) & ~size_t(63);
}

/* Message size of a test: the atomics are 8 bytes whatever -s says */
size_t msg_size(const test_info &test, const test_params &params)
{
    return ((test.kind == test_kind::add_lat) ||
            (test.kind == test_kind::add_bw)) ? sizeof(uint64_t) :
           params.size;
}

/*
 * What keeps every wait bounded: the endpoint's failure, the control
 * connection (closed: the peer is gone; lines: its heartbeats and the end),
 * and a stall limit on progress. The client sends heartbeats, so a server
 * that only waits knows the client still runs.
 */
class watch {
public:
    watch(const run_setup &setup, bool client) :
        m_setup(setup), m_client(client), m_alive(clock::now()),
        m_next_check(m_alive), m_next_heartbeat(m_alive + HEARTBEAT_PERIOD)
    {
    }

    /* Something moved forward */
    void alive(clock::time_point now)
    {
        m_alive = now;
    }

    [[nodiscard]] ucs_status_t check(clock::time_point now)
    {
        if (m_setup.uct->ep_error != UCS_OK) {
            return m_setup.uct->ep_error; /* the handler said so */
        }
        if (now < m_next_check) {
            return UCS_OK;
        }
        m_next_check = now + CHECK_PERIOD;

        ucs_status_t status;
        std::string  line;
        bool         got;
        do {
            status = m_setup.ch->poll_line(&line, &got);
            if (status != UCS_OK) {
                return status;
            }
            if (got && !m_client) {
                m_alive = now; /* the client's loop runs */
                if (line != "HB") {
                    m_lines.push_back(line);
                }
            }
        } while (got);

        if (m_client && (now >= m_next_heartbeat)) {
            m_next_heartbeat = now + HEARTBEAT_PERIOD;
            status           = m_setup.ch->send_line("HB");
            if (status != UCS_OK) {
                return status;
            }
        }
        if (now - m_alive > std::chrono::seconds(m_setup.timeout_s)) {
            error("no progress for %u s (%s/%s, peer %s): the peer is gone "
                  "or the fabric drops everything", m_setup.timeout_s,
                  m_setup.uct->tl.c_str(), m_setup.uct->dev.c_str(),
                  m_setup.ch->peer().c_str());
            return UCS_ERR_TIMED_OUT;
        }
        return UCS_OK;
    }

    /* A line (not a heartbeat) the peer sent, if one came */
    bool take_line(std::string *line)
    {
        if (m_lines.empty()) {
            return false;
        }
        *line = m_lines.front();
        m_lines.erase(m_lines.begin());
        return true;
    }

private:
    const run_setup          &m_setup;
    bool                     m_client;
    clock::time_point        m_alive, m_next_check, m_next_heartbeat;
    std::vector<std::string> m_lines;
};

/*
 * The instruction probe (callgrind): the first half of the measured
 * iterations counts the calls that post, the second half the progress
 * calls; only the library's objects count.
 */
class probe {
public:
    enum class mode { off, posts, progress };

    explicit probe(const std::string &dump_dir) : m_dir(dump_dir) {}

    bool enabled() const
    {
        return bench::instr::enabled();
    }

    void begin(mode m)
    {
        if (enabled()) {
            m_mode = m;
            bench::instr::phase_begin();
        }
    }

    /* End the phase open now: the library's instructions in it */
    bool end(const char *name, double *instructions)
    {
        bench::instr::dump_costs costs;
        std::string              why_not;

        m_mode = mode::off;
        if (!enabled() ||
            !bench::instr::phase_end(name, m_dir, &costs, &why_not)) {
            if (enabled()) {
                error("instructions not counted: %s", why_not.c_str());
            }
            return false;
        }
        *instructions = 0;
        for (const auto &object : costs.by_object) {
            if (!bench::instr::is_probe_object(object.first) &&
                (object.first.find("libucx_mlx5_emu") == std::string::npos)) {
                *instructions += double(object.second);
            }
        }
        return true;
    }

    template <typename F>
    auto post(F op) -> decltype(op())
    {
        if (m_mode != mode::posts) {
            return op();
        }
        bench::instr::region_enter();
        auto ret = op();
        bench::instr::region_leave();
        return ret;
    }

    unsigned progress(uct_side *s)
    {
        if (m_mode != mode::progress) {
            return s->progress();
        }
        ++progress_calls;
        bench::instr::region_enter();
        unsigned ret = s->progress();
        bench::instr::region_leave();
        return ret;
    }

    uint64_t progress_calls = 0;

private:
    std::string m_dir;
    mode        m_mode = mode::off;
};

size_t pack_buf(void *dest, void *arg)
{
    auto *s = static_cast<std::pair<const uint8_t*, size_t>*>(arg);

    memcpy(dest, s->first, s->second);
    return s->second;
}

void unpack_buf(void *arg, const void *data, size_t length)
{
    memcpy(arg, data, length);
}

/* One side's loops */
class runner {
public:
    runner(const run_setup &setup, bool client) :
        m_setup(setup), m_s(*setup.uct), m_watch(setup, client),
        m_probe(setup.dump_dir), m_size(msg_size(*setup.test, setup.params)),
        m_total(setup.params.warmup + setup.params.iterations),
        m_local(m_s.buf), m_src(m_s.buf + aligned(m_size)),
        m_pack(m_src, m_size), m_yield(m_s.emulated())
    {
        m_comp.func   = [](uct_completion_t*) {};
        m_comp.count  = INT_MAX;
        m_comp.status = UCS_OK;
    }

    ucs_status_t client();
    ucs_status_t server();

private:
    /* progress once, then the watch */
    ucs_status_t idle()
    {
        if (m_probe.progress(&m_s) != 0) {
            m_empty = 0;
        } else if ((++m_empty % YIELD_AFTER == 0) && m_yield) {
            sched_yield();
        }
        if ((++m_idle_calls % CLOCK_EVERY) != 0) {
            /* the clock costs as much as a progress call: not every time */
            return (m_s.ep_error == UCS_OK) ? UCS_OK : m_s.ep_error;
        }
        return m_watch.check(clock::now());
    }

    /* Until @a done() holds */
    template <typename F>
    ucs_status_t wait(F done)
    {
        ucs_status_t status = UCS_OK;

        // bounded: idle() fails once the watch's timeout passes
        while (!done() && ((status = idle()) == UCS_OK)) {
        }
        return status;
    }

    /* Post with @a op, progressing while the transport has no resources;
     * an operation left in progress counts on m_comp */
    template <typename F>
    ucs_status_t post(F op)
    {
        ucs_status_t status;

        while ((status = m_probe.post(op)) == UCS_ERR_NO_RESOURCE) {
            if ((status = idle()) != UCS_OK) {
                return status;
            }
        }
        if (status == UCS_INPROGRESS) {
            ++m_inprogress;
            return UCS_OK;
        }
        if (status != UCS_OK) {
            error("%s on %s/%s failed: %s", op_name(), m_s.tl.c_str(),
                  m_s.dev.c_str(), ucs_status_string(status));
        }
        return status;
    }

    /* Every operation left in progress completed */
    ucs_status_t wait_completions()
    {
        ucs_status_t status = wait([this] {
            return uint64_t(INT_MAX - m_comp.count) >= m_inprogress;
        });

        if ((status == UCS_OK) && (m_comp.status != UCS_OK)) {
            error("%s on %s/%s completed with %s", op_name(), m_s.tl.c_str(),
                  m_s.dev.c_str(), ucs_status_string(m_comp.status));
            status = m_comp.status;
        }
        return status;
    }

    const char *op_name() const;
    ucs_status_t send_am();
    ucs_status_t put(uint8_t sn);
    ucs_status_t get();
    ucs_status_t fetch_add(uint64_t expected);
    ucs_status_t add();

    uint8_t remote_sn_seen() const
    {
        return __atomic_load_n(&m_local[m_size - 1], __ATOMIC_ACQUIRE);
    }

    ucs_status_t client_iteration(uint64_t i);
    ucs_status_t finish_client();
    void print_instructions(double posts, double progress) const;

    const run_setup                  &m_setup;
    uct_side                         &m_s;
    watch                            m_watch;
    probe                            m_probe;
    size_t                           m_size;
    uint64_t                         m_total;
    uint8_t                          *m_local, *m_src;
    std::pair<const uint8_t*, size_t> m_pack;
    uct_completion_t                 m_comp;
    uint64_t                         m_inprogress = 0;
    bool                             m_yield;
    unsigned                         m_empty      = 0;
    unsigned                         m_idle_calls = 0;
};

const char *runner::op_name() const
{
    const auto &cap = m_s.attr.cap;

    switch (m_setup.test->kind) {
    case test_kind::am_lat:
    case test_kind::am_bw:
        return (m_size <= cap.am.max_short) ? "uct_ep_am_short" :
                                              "uct_ep_am_bcopy";
    case test_kind::put_lat:
    case test_kind::put_bw:
        return (m_size <= cap.put.max_short) ? "uct_ep_put_short" :
               (m_size <= cap.put.max_bcopy) ? "uct_ep_put_bcopy" :
                                               "uct_ep_put_zcopy";
    case test_kind::get_bw:
        return (m_size <= cap.get.max_bcopy) ? "uct_ep_get_bcopy" :
                                               "uct_ep_get_zcopy";
    case test_kind::add_lat:
        return "uct_ep_atomic64_fetch";
    case test_kind::add_bw:
        return "uct_ep_atomic64_post";
    }
    return "?";
}

ucs_status_t runner::send_am()
{
    if (m_size <= m_s.attr.cap.am.max_short) {
        uint64_t header;

        memcpy(&header, m_src, sizeof(header));
        return post([&] {
            return uct_ep_am_short(m_s.ep, AM_ID, header, m_src + 8,
                                   unsigned(m_size - 8));
        });
    }
    return post([&] {
        ssize_t n = uct_ep_am_bcopy(m_s.ep, AM_ID, pack_buf, &m_pack, 0);
        return (n < 0) ? ucs_status_t(n) : UCS_OK;
    });
}

ucs_status_t runner::put(uint8_t sn)
{
    const auto &cap = m_s.attr.cap.put;

    m_src[m_size - 1] = sn;
    if (m_size <= cap.max_short) {
        return post([&] {
            return uct_ep_put_short(m_s.ep, m_src, unsigned(m_size),
                                    m_s.remote_addr, m_s.rkey.rkey);
        });
    } else if (m_size <= cap.max_bcopy) {
        return post([&] {
            ssize_t n = uct_ep_put_bcopy(m_s.ep, pack_buf, &m_pack,
                                         m_s.remote_addr, m_s.rkey.rkey);
            return (n < 0) ? ucs_status_t(n) : UCS_OK;
        });
    }
    uct_iov_t iov = {m_src, m_size, m_s.memh, 0, 1};
    return post([&] {
        return uct_ep_put_zcopy(m_s.ep, &iov, 1, m_s.remote_addr,
                                m_s.rkey.rkey, &m_comp);
    });
}

ucs_status_t runner::get()
{
    if (m_size <= m_s.attr.cap.get.max_bcopy) {
        return post([&] {
            return uct_ep_get_bcopy(m_s.ep, unpack_buf, m_src, m_size,
                                    m_s.remote_addr, m_s.rkey.rkey, &m_comp);
        });
    }
    uct_iov_t iov = {m_src, m_size, m_s.memh, 0, 1};
    return post([&] {
        return uct_ep_get_zcopy(m_s.ep, &iov, 1, m_s.remote_addr,
                                m_s.rkey.rkey, &m_comp);
    });
}

ucs_status_t runner::fetch_add(uint64_t expected)
{
    uint64_t     result = ~0ull;
    ucs_status_t status;

    status = post([&] {
        return uct_ep_atomic64_fetch(m_s.ep, UCT_ATOMIC_OP_ADD, 1, &result,
                                     m_s.remote_addr, m_s.rkey.rkey, &m_comp);
    });
    if (status == UCS_OK) {
        status = wait_completions();
    }
    if ((status == UCS_OK) && (result != expected)) {
        error("fetch-add returned %llu, expected %llu",
              (unsigned long long)result, (unsigned long long)expected);
        status = UCS_ERR_IO_ERROR;
    }
    return status;
}

ucs_status_t runner::add()
{
    return post([&] {
        return uct_ep_atomic64_post(m_s.ep, UCT_ATOMIC_OP_ADD, 1,
                                    m_s.remote_addr, m_s.rkey.rkey);
    });
}

/* Iteration @a i of the client: one operation (and its answer) */
ucs_status_t runner::client_iteration(uint64_t i)
{
    ucs_status_t status;

    switch (m_setup.test->kind) {
    case test_kind::am_lat:
        status = send_am();
        return (status != UCS_OK) ? status :
               wait([&] { return m_s.am_received > i; });
    case test_kind::put_lat: {
        const uint8_t sn = uint8_t(i + 1);
        status = put(sn);
        return (status != UCS_OK) ? status :
               wait([&] { return remote_sn_seen() == sn; });
    }
    case test_kind::am_bw:
        return send_am();
    case test_kind::put_bw:
        return put(uint8_t(i + 1));
    case test_kind::get_bw:
        return get();
    case test_kind::add_lat:
        return fetch_add(i);
    case test_kind::add_bw:
        return add();
    }
    return UCS_ERR_INVALID_PARAM;
}

/* What a stream left in flight (ping-pongs have nothing) */
ucs_status_t runner::finish_client()
{
    ucs_status_t status = wait_completions();

    if (status == UCS_OK) {
        status = m_s.flush(m_setup.timeout_s);
    }
    return status;
}

void runner::print_instructions(double posts, double progress) const
{
    const uint64_t n      = m_setup.params.iterations;
    const uint64_t first  = n / 2, second = n - first;

    printf("\nlibrary instructions per operation (callgrind; the library's "
           "objects, not the emulator, not ucx_perftest)\n");
    printf("  %-40s %12.1f\n", op_name(), posts / double(first));
    printf("  %-40s %12.1f   (%.1f calls per operation)\n",
           "uct_worker_progress", progress / double(second),
           double(m_probe.progress_calls) / double(second));
    printf("  %-40s %12.1f\n", "total", posts / double(first) +
           progress / double(second));
    fflush(stdout);
}

ucs_status_t runner::client()
{
    const uint64_t warmup = m_setup.params.warmup;
    const uint64_t half   = warmup + m_setup.params.iterations / 2;
    const bool     counting = m_probe.enabled() &&
                              (m_setup.params.iterations >= 2);
    reporter       rep(m_size, m_setup.test->pingpong ? 2.0 : 1.0,
                       !m_setup.final_only);
    double         posts = 0, progress = 0;
    ucs_status_t   status = UCS_OK;

    rep.print_header();
    for (uint64_t i = 0; (i < m_total) && (status == UCS_OK); ++i) {
        if (i == warmup) {
            /* the warmup's operations complete before the measurement */
            if (!m_setup.test->pingpong &&
                ((status = finish_client()) != UCS_OK)) {
                break;
            }
            if (counting) {
                m_probe.begin(probe::mode::posts);
            }
            rep.start(clock::now());
        } else if (counting && (i == half)) {
            if (!m_probe.end("posts", &posts)) {
                return UCS_ERR_IO_ERROR;
            }
            m_probe.begin(probe::mode::progress);
        }

        status = client_iteration(i);
        if ((status == UCS_OK) && (i >= warmup)) {
            const auto now = clock::now();
            rep.iteration(now);
            m_watch.alive(now);
        } else if (status == UCS_OK) {
            m_watch.alive(clock::now());
        }
    }
    if (status == UCS_OK) {
        status = finish_client();
    }
    if (status != UCS_OK) {
        return status;
    }
    rep.finish(clock::now());
    if (counting) {
        if (!m_probe.end("progress", &progress)) {
            return UCS_ERR_IO_ERROR;
        }
        print_instructions(posts, progress);
    }

    /* The end: the server says what it saw */
    std::string line;
    status = m_setup.ch->send_line("DONE");
    if (status == UCS_OK) {
        status = m_setup.ch->recv_line(&line, m_setup.timeout_s,
                                       [this] { m_s.progress(); });
    }
    if (status != UCS_OK) {
        return status;
    }

    std::istringstream words(line);
    std::string        tag;
    uint64_t           received = 0, word = 0;
    if (!(words >> tag >> received >> word) || (tag != "BYE")) {
        error("expected the server's BYE, got '%.60s'", line.c_str());
        return UCS_ERR_INVALID_PARAM;
    }
    if (m_setup.test->am && (received != m_total)) {
        error("the server received %llu of %llu active messages",
              (unsigned long long)received, (unsigned long long)m_total);
        return UCS_ERR_IO_ERROR;
    }
    if (((m_setup.test->kind == test_kind::add_lat) ||
         (m_setup.test->kind == test_kind::add_bw)) && (word != m_total)) {
        error("the server's counter is %llu after %llu atomic adds",
              (unsigned long long)word, (unsigned long long)m_total);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

ucs_status_t runner::server()
{
    ucs_status_t status = UCS_OK;
    std::string  line;

    switch (m_setup.test->kind) {
    case test_kind::am_lat:
        for (uint64_t i = 0; (i < m_total) && (status == UCS_OK); ++i) {
            status = wait([&] { return m_s.am_received > i; });
            if (status == UCS_OK) {
                m_watch.alive(clock::now());
                status = send_am();
            }
        }
        break;
    case test_kind::put_lat:
        for (uint64_t i = 0; (i < m_total) && (status == UCS_OK); ++i) {
            const uint8_t sn = uint8_t(i + 1);
            status = wait([&] { return remote_sn_seen() == sn; });
            if (status == UCS_OK) {
                m_watch.alive(clock::now());
                status = put(sn);
            }
        }
        break;
    case test_kind::am_bw: {
        uint64_t seen = 0;
        status = wait([&] {
            if (m_s.am_received != seen) {
                seen = m_s.am_received;
                m_watch.alive(clock::now());
            }
            return seen >= m_total;
        });
        break;
    }
    default:
        break; /* the client works on this side's memory alone */
    }

    /* wait for the client's DONE: every operation reached this side */
    bool done = false;
    // bounded: idle() fails once the watch's timeout passes
    while ((status == UCS_OK) && !done) {
        status = idle();
        while ((status == UCS_OK) && m_watch.take_line(&line)) {
            if (line != "DONE") {
                error("expected DONE from the client, got '%.60s'",
                      line.c_str());
                return UCS_ERR_INVALID_PARAM;
            }
            done = true;
        }
    }
    if (status == UCS_OK) {
        status = m_s.flush(m_setup.timeout_s);
    }
    if (status != UCS_OK) {
        return status;
    }

    uint64_t word;
    memcpy(&word, m_local, sizeof(word));
    return m_setup.ch->send_line("BYE " + std::to_string(m_s.am_received) +
                                 " " + std::to_string(word));
}

} // namespace

size_t buffer_size(const test_info &test, const test_params &params)
{
    return 2 * aligned(msg_size(test, params));
}

ucs_status_t check_capabilities(const run_setup &setup)
{
    const uct_iface_attr_t &attr = setup.uct->attr;
    const size_t           size  = msg_size(*setup.test, setup.params);
    const char             *tl   = setup.uct->tl.c_str();
    const char             *dev  = setup.uct->dev.c_str();

    switch (setup.test->kind) {
    case test_kind::am_lat:
    case test_kind::am_bw:
        if (size < 8) {
            error("-s %zu: an active message test needs at least 8 bytes "
                  "(its header)", size);
            return UCS_ERR_INVALID_PARAM;
        }
        if ((size > attr.cap.am.max_short) && (size > attr.cap.am.max_bcopy)) {
            error("-s %zu: larger than the largest active message of %s on "
                  "%s (%zu bytes)", size, tl, dev, attr.cap.am.max_bcopy);
            return UCS_ERR_UNSUPPORTED;
        }
        break;
    case test_kind::put_lat:
    case test_kind::put_bw:
        if (size > attr.cap.put.max_zcopy) {
            error("-s %zu: larger than the largest put of %s on %s (%zu "
                  "bytes)", size, tl, dev, attr.cap.put.max_zcopy);
            return UCS_ERR_UNSUPPORTED;
        }
        break;
    case test_kind::get_bw:
        if (size > std::max(attr.cap.get.max_zcopy, attr.cap.get.max_bcopy)) {
            error("-s %zu: larger than the largest get of %s on %s (%zu "
                  "bytes)", size, tl, dev, attr.cap.get.max_zcopy);
            return UCS_ERR_UNSUPPORTED;
        }
        break;
    case test_kind::add_lat:
        if (!(attr.cap.atomic64.fop_flags & UCS_BIT(UCT_ATOMIC_OP_ADD))) {
            error("%s on %s has no 64-bit fetch-and-add", tl, dev);
            return UCS_ERR_UNSUPPORTED;
        }
        break;
    case test_kind::add_bw:
        if (!(attr.cap.atomic64.op_flags & UCS_BIT(UCT_ATOMIC_OP_ADD))) {
            error("%s on %s has no 64-bit atomic add", tl, dev);
            return UCS_ERR_UNSUPPORTED;
        }
        break;
    }
    return UCS_OK;
}

ucs_status_t run_client(const run_setup &setup)
{
    return runner(setup, true).client();
}

ucs_status_t run_server(const run_setup &setup)
{
    return runner(setup, false).server();
}

} // namespace perftest
