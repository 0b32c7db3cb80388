/*
 * The engine's drive: one pass visits every QP of every device (requester,
 * then the flush of a QP in ERR). It runs
 *  - on a thread, started when a device context is opened and joined when
 *    the last one is closed (or the mode changes); idle, it polls for a
 *    short while, then sleeps with exponential backoff up to IDLE_SLEEP_MAX,
 *    so it costs next to nothing without work;
 *  - or, in step mode, only when a test calls uct_ib_emu_engine_step/run.
 *
 * The clock: nanoseconds of emulated time. On the thread it follows the
 * real clock times the scale (UCX_IB_EMU_CLOCK_SCALE, or the test API); in
 * step mode it moves only by uct_ib_emu_clock_advance, so timer tests are
 * deterministic.
 *
 * Lock order: the engine's lifecycle lock, then emu_state::lock.
 */
#include <emu/engine/engine.h>
#include <emu/fabric/member.h>

#include <ucs/config/parser.h>

#include <poll.h>

#include <atomic>
#include <chrono>
#include <thread>


namespace uct_ib_emu {

namespace {

using steady = std::chrono::steady_clock;

constexpr unsigned RUN_MAX_PASSES = 1u << 20;
constexpr auto     IDLE_SLEEP_MAX = std::chrono::microseconds(1000);
/* Passes without work before sleeping: a few hundred microseconds of
 * polling, so a user that posts right after a completion is served without
 * a sleep's latency (yielding instead would give the core away for a time
 * slice on a loaded machine) */
constexpr unsigned IDLE_SPINS     = 2048;

inline void cpu_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

struct engine_config {
    double                 clock_scale;
    int                    poll_wait; /* uct_ib_emu_poll_wait_t */
    double                 poll_wait_max; /* seconds */
};

/* No poll waits for the engine longer than this, whatever it is told */
constexpr double POLL_WAIT_LIMIT = 1.0;

constexpr engine_config ENGINE_DEFAULTS = {1.0, UCT_IB_EMU_POLL_WAIT_AUTO,
                                           2e-3};

const char *poll_wait_names[] = {
    [UCT_IB_EMU_POLL_WAIT_AUTO]   = "auto",
    [UCT_IB_EMU_POLL_WAIT_NEVER]  = "never",
    [UCT_IB_EMU_POLL_WAIT_ALWAYS] = "always",
    nullptr
};

ucs_config_field_t engine_config_table[] = {
    {"IB_EMU_CLOCK_SCALE", "1",
     "How much faster than real time the emulated device's clock runs (its\n"
     "ack and RNR timers), when its engine runs on its own thread.",
     offsetof(engine_config, clock_scale), UCS_CONFIG_TYPE_DOUBLE},

    {"IB_EMU_POLL_WAIT", "auto",
     "When a program's polls of CQ rings in memory wait for the engine in a\n"
     "page fault instead of spinning: auto - once a spinning program starves\n"
     "the engine on a loaded machine, never, or always.",
     offsetof(engine_config, poll_wait), UCS_CONFIG_TYPE_ENUM(poll_wait_names)},

    {"IB_EMU_POLL_WAIT_MAX", "2ms",
     "How long a poll that waits for the engine in a page fault waits at most\n"
     "without a CQE (it may wait for something else); a CQ whose polls waited\n"
     "so long three times in a row is left alone for 50 times as long.",
     offsetof(engine_config, poll_wait_max), UCS_CONFIG_TYPE_TIME},

    UCS_CONFIG_EMPTY_FIELD
};

/* One turn of the idle spin. On a fabric the peers' threads (the other
 * hosts' programs and engines) often share the cores with this one, and
 * each answer needs them to run: give the core away instead of holding it
 * for a time slice */
void spin_once(const emu_state &s)
{
    if (s.fabric != nullptr) {
        std::this_thread::yield();
    } else {
        cpu_relax();
    }
}

/* Idle yields that lose more than LOST_MAX of a YIELD_WINDOW mean a
 * program on this core polls in a tight loop without ever entering the
 * model (UCX's rc_mlx5 through the drop-in front-end polls its CQ in
 * memory): such a yield gives it a whole time slice. The engine naps
 * instead, for NAP_HOLD: a thread woken by its timer preempts the spinning
 * one, since it asks for a short slice. Yielding still serves a program
 * that yields too (our own tools) best, and a busy machine costs a slow
 * yield now and then */
constexpr auto     SLOW_YIELD   = std::chrono::microseconds(200);
constexpr auto     YIELD_WINDOW = std::chrono::milliseconds(20);
constexpr auto     LOST_MAX     = std::chrono::milliseconds(4);
constexpr auto     NAP          = std::chrono::microseconds(10);
constexpr auto     NAP_HOLD    = std::chrono::seconds(1);

/* Account an idle yield that took @a took, starting at @a now: nap from
 * now on if the yields of the current window lost too much */
void yield_lost(steady::duration took, steady::time_point now,
                steady::time_point *window_start, steady::duration *lost,
                steady::time_point *nap_until)
{
    if (now - *window_start > YIELD_WINDOW) {
        *window_start = now;
        *lost         = steady::duration(0);
    }
    if (took > SLOW_YIELD) {
        *lost += took;
    }
    if (*lost > LOST_MAX) {
        *nap_until = now + NAP_HOLD;
        *lost      = steady::duration(0);
    }
}

/* Sleep for a while, or until a packet from another host arrives or a
 * poll of a ring faults (@a poll_fd, model/poll_wait.h, or -1); whether
 * one did */
bool idle_wait(emu_state &s, std::chrono::microseconds sleep, int poll_fd)
{
    struct pollfd pfd[2];
    struct timespec ts;
    nfds_t count = 0;

    if (s.fabric != nullptr) {
        pfd[count].fd      = s.fabric->net().fd();
        pfd[count].events  = POLLIN;
        pfd[count].revents = 0;
        ++count;
    }
    if (poll_fd >= 0) {
        pfd[count].fd      = poll_fd;
        pfd[count].events  = POLLIN;
        pfd[count].revents = 0;
        ++count;
    }
    if (count == 0) {
        std::this_thread::sleep_for(sleep);
        return false;
    }

    ts.tv_sec  = 0;
    ts.tv_nsec = sleep.count() * 1000;
    if (ppoll(pfd, count, &ts, nullptr) <= 0) {
        return false;
    }
    if ((s.fabric != nullptr) && (pfd[0].revents != 0)) {
        s.fabric->net().readable();
    }
    return (poll_fd >= 0) && (pfd[count - 1].revents != 0);
}

/* While the engine is starved, the polls of receiving rings wait for it; the
 * faults of those that do are read, and waits that lasted are ended. The
 * descriptor to wait on, or -1; whether a poll waits (the engine then
 * sleeps no longer than a nap: the core is free, and what the poll waits
 * for may be a doorbell of another thread). */
int poll_wait_update(emu_state &s, steady::time_point now, bool starved,
                     bool *took, bool *waiting)
{
    guard g(s.lock);

    if (starved) {
        s.poll_wait.take_next(s, now);
        *took = true;
    } else if (*took) {
        s.poll_wait.give_back_all();
        *took = false;
    }
    s.poll_wait.read_faults(now);
    s.poll_wait.expire(now);
    *waiting = s.poll_wait.waiting();
    return s.poll_wait.fd();
}

/* The engine thread and its mode */
class engine_ctl {
public:
    ~engine_ctl()
    {
        std::lock_guard<std::mutex> g(m_life);
        stop_locked();
    }

    std::mutex &life()
    {
        return m_life;
    }

    /* m_life held */
    bool running() const
    {
        return m_thread.joinable();
    }

    void start_locked()
    {
        if (m_thread.joinable()) {
            return;
        }

        m_stop.store(false, std::memory_order_relaxed);
        m_thread = std::thread([this] { loop(); });
    }

    void stop_locked()
    {
        if (!m_thread.joinable()) {
            return;
        }

        m_stop.store(true, std::memory_order_release);
        m_thread.join();
    }

private:
    void loop()
    {
        emu_state &s  = state();
        unsigned idle = 0;
        auto sleep    = std::chrono::microseconds(1);
        /* valgrind runs one thread at a time: a spinning engine only keeps
         * the library from running, so it goes to sleep at once there */
        const unsigned spins = running_on_valgrind() ? 0 : IDLE_SPINS;
        steady::time_point nap_until, before;
        steady::time_point window_start;
        steady::duration lost{0}; /* in slow yields since window_start */
        bool did, starved;
        bool took    = false; /* pages of rings taken while starved */
        bool waiting;         /* a poll waits in a fault */
        bool faulted = false; /* a poll faulted: read it */
        uct_ib_emu_poll_wait_t mode;
        int poll_fd;

        engine_thread_tune();
        while (!m_stop.load(std::memory_order_acquire)) {
            {
                guard g(s.lock);
                did     = engine_pass_locked(s);
                poll_fd = s.poll_wait.fd();
            }

            if (did) {
                idle  = 0;
                sleep = std::chrono::microseconds(1);
                continue;
            }

            before  = steady::now();
            mode    = s.poll_wait.mode();
            starved = (mode == UCT_IB_EMU_POLL_WAIT_ALWAYS) ||
                      ((mode == UCT_IB_EMU_POLL_WAIT_AUTO) &&
                       (before < nap_until));
            waiting = false;
            if (starved || took || faulted) {
                poll_fd = poll_wait_update(s, before, starved, &took,
                                           &waiting);
                faulted = false;
            }
            if (waiting) {
                faulted = idle_wait(s, NAP, poll_fd);
            } else if (++idle >= spins) {
                faulted = idle_wait(s, sleep, poll_fd);
                sleep   = std::min(sleep * 2, IDLE_SLEEP_MAX);
            } else if (before < nap_until) {
                faulted = idle_wait(s, NAP, poll_fd);
            } else {
                spin_once(s);
                yield_lost(steady::now() - before, before, &window_start,
                           &lost, &nap_until);
            }
        }

        guard g(s.lock);
        s.poll_wait.give_back_all();
    }

    std::mutex        m_life;
    std::thread       m_thread;
    std::atomic<bool> m_stop{false};
};

engine_ctl &ctl()
{
    static engine_ctl c;
    return c;
}

engine_config default_config()
{
    engine_config config = ENGINE_DEFAULTS;

    if (ucs_config_parser_fill_opts(&config, engine_config_table,
                                    UCS_DEFAULT_ENV_PREFIX, "") != UCS_OK) {
        return ENGINE_DEFAULTS;
    }
    if (!(config.clock_scale > 0)) {
        config.clock_scale = ENGINE_DEFAULTS.clock_scale;
    }
    if (!(config.poll_wait_max > 0)) {
        config.poll_wait_max = ENGINE_DEFAULTS.poll_wait_max;
    }
    config.poll_wait_max = std::min(config.poll_wait_max, POLL_WAIT_LIMIT);
    return config;
}

std::chrono::microseconds to_usec(double seconds)
{
    return std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

/* Move the clock with the real time (the thread) */
void clock_follow(emu_state &s)
{
    steady::time_point real = steady::now();
    auto elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           real - s.clock.last_real).count();

    s.clock.last_real = real;
    if (elapsed > 0) {
        s.clock.now += static_cast<uint64_t>(elapsed * s.clock.scale);
    }
}

} // namespace

UCS_CONFIG_REGISTER_TABLE(engine_config_table, "emulated device engine", "",
                          engine_config)


uint64_t engine_now(emu_state &s)
{
    /* read the real clock at most once a pass, and only when a timer is
     * armed or checked */
    if (!s.clock.step_mode && !s.clock.fresh) {
        clock_follow(s);
        s.clock.fresh = true;
    }
    return s.clock.now;
}

bool engine_pass_locked(emu_state &s)
{
    bool did = false;

    s.clock.fresh = false;
    if (s.fabric != nullptr) {
        s.fabric->sync_locked(s);
        did |= engine_receive_locked(s);
    }

    for (const auto &dev : s.devices) {
        doorbell_check(s, dev.get());
        for (const auto &entry : dev->qps) {
            qp *q = entry.second;

            did |= requester_progress(s, q);
            if ((s.fabric != nullptr) && !q->rq_x.reads.empty()) {
                did |= remote_reads_progress(s, q);
            }
            for (const auto &stream : q->dc_streams) {
                if ((s.fabric != nullptr) &&
                    !stream.second->rq_x.reads.empty()) {
                    did |= remote_reads_progress(s, stream.second.get());
                }
            }
            if (q->state == UCT_MLX5_QP_STATE_ERR) {
                did |= recv_flush(s, q);
            }
        }
        for (const auto &entry : dev->cqs) {
            /* an arm written after the CQEs it covers */
            cq_event_check(s, entry.second, false);
        }
    }

    if (s.cm_tick != nullptr) {
        did |= s.cm_tick(s);
    }

    if (s.fabric != nullptr) {
        did |= engine_flush_locked(s);
        s.fabric->publish_locked(s, did);
    }

    return did;
}

void engine_context_opened()
{
    emu_state &s = state();
    std::lock_guard<std::mutex> life(ctl().life());
    bool step_mode;

    {
        guard g(s.lock);
        step_mode = s.clock.step_mode;
        if (!step_mode && !ctl().running()) {
            s.clock.last_real = steady::now();
        }
    }

    if (!step_mode) {
        ctl().start_locked();
    }
}

void engine_context_closed()
{
    emu_state &s = state();
    std::lock_guard<std::mutex> life(ctl().life());
    bool idle;

    {
        guard g(s.lock);
        idle = s.contexts.empty();
    }

    if (idle) {
        ctl().stop_locked();
    }
}

void engine_clock_reset_locked(emu_state &s)
{
    const engine_config config = default_config();

    s.clock.scale = config.clock_scale;
    s.poll_wait.set_mode(static_cast<uct_ib_emu_poll_wait_t>(
            config.poll_wait));
    s.poll_wait.set_max_wait(to_usec(config.poll_wait_max));
}

} // namespace uct_ib_emu


using namespace uct_ib_emu;

ucs_status_t uct_ib_emu_engine_set_step_mode(bool step_mode)
{
    emu_state &s = state();
    std::lock_guard<std::mutex> life(ctl().life());
    bool contexts;

    if (step_mode) {
        ctl().stop_locked();
    }

    {
        guard g(s.lock);
        s.clock.step_mode = step_mode;
        s.clock.last_real = steady::now();
        contexts          = !s.contexts.empty();
    }

    if (!step_mode && contexts) {
        ctl().start_locked();
    }
    return UCS_OK;
}

void uct_ib_emu_engine_set_poll_wait(uct_ib_emu_poll_wait_t mode,
                                     uint64_t max_wait_us)
{
    emu_state &s = state();
    guard g(s.lock);

    s.poll_wait.set_mode(mode);
    s.poll_wait.set_max_wait(to_usec(std::min(max_wait_us * 1e-6,
                                              POLL_WAIT_LIMIT)));
}

bool uct_ib_emu_engine_step()
{
    emu_state &s = state();
    guard g(s.lock);

    return engine_pass_locked(s);
}

unsigned uct_ib_emu_engine_run()
{
    emu_state &s = state();
    guard g(s.lock);
    unsigned passes;

    for (passes = 0; passes < RUN_MAX_PASSES; ++passes) {
        if (!engine_pass_locked(s)) {
            return passes;
        }
    }

    ucs_error("emu: the engine is still busy after %u passes", passes);
    return passes;
}

void uct_ib_emu_clock_advance(uint64_t ns)
{
    emu_state &s = state();
    guard g(s.lock);

    s.clock.now += ns;
}

uint64_t uct_ib_emu_clock_now()
{
    emu_state &s = state();
    guard g(s.lock);

    return s.clock.now;
}

ucs_status_t uct_ib_emu_clock_set_scale(double scale)
{
    emu_state &s = state();
    guard g(s.lock);

    if (!(scale > 0)) {
        return UCS_ERR_INVALID_PARAM;
    }

    s.clock.scale = scale;
    return UCS_OK;
}
