/*
 * A program that polls a CQ ring in memory (UCX's mlx5 transports on the
 * drop-in front-end) spins on a core the engine thread needs for writing
 * its next CQE: on a loaded machine a round trip then takes a time slice.
 * Once the engine sees itself starved, it takes the user's view of the
 * page that a drained ring's next CQE goes to away from the program
 * (MADV_DONTNEED on the ring's shared-memory mapping, model/dma.h). The
 * program's next poll faults there, and the fault waits (userfaultfd in
 * minor-fault mode: the page is still there, only unmapped) while the
 * engine has the core, until a CQE is written (to any ring: the program
 * may poll another one next) or its limit passes; then the page is mapped
 * back (UFFDIO_CONTINUE) and the read completes.
 *
 * Unprivileged (UFFD_USER_MODE_ONLY, Linux 5.14 or later for shared
 * memory); where userfaultfd is refused, or under valgrind, nothing is
 * taken and the program spins as before.
 */
#ifndef UCT_IB_EMU_MODEL_POLL_WAIT_H_
#define UCT_IB_EMU_MODEL_POLL_WAIT_H_

#include <emu/api/emu.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <vector>


namespace uct_ib_emu {

struct cq;
struct emu_state;

struct poll_wait_counters {
    uint64_t taken   = 0; /* pages taken away */
    uint64_t faults  = 0; /* polls that faulted on a taken page */
    uint64_t written = 0; /* waits a CQE ended */
    uint64_t expired = 0; /* waits that lasted their limit */
};

class poll_waiter {
public:
    using clock = std::chrono::steady_clock;

    poll_waiter() = default;
    ~poll_waiter(); /* every waiting poll goes on */
    poll_waiter(const poll_waiter&)            = delete;
    poll_waiter &operator=(const poll_waiter&) = delete;

    /* When polls wait: the engine thread reads it without the lock */
    uct_ib_emu_poll_wait_t mode() const
    {
        return m_mode.load(std::memory_order_relaxed);
    }

    void set_mode(uct_ib_emu_poll_wait_t mode)
    {
        m_mode.store(mode, std::memory_order_relaxed);
    }

    /* How long a poll waits for a CQE at most: it may wait for something
     * else (another transport's message, a timer), and a ring whose wait
     * ended so is left alone for a while */
    void set_max_wait(std::chrono::microseconds max_wait)
    {
        m_max_wait = max_wait;
    }

    /* Whether a page is taken: cqe_write's question, on its fast path */
    bool active() const
    {
        return !m_taken.empty();
    }

    /* Whether a poll waits now */
    bool waiting() const
    {
        for (const taken &t : m_taken) {
            if (t.waiting) {
                return true;
            }
        }
        return false;
    }

    /* The descriptor that is readable when a poll faults (a page of a
     * ring it watches, taken or not), or -1 */
    int fd() const
    {
        return m_fd;
    }

    /* Take, from every ring of @a s that receives and that its program
     * polls in memory, the page of the next CQE. Without the faults' exact
     * addresses only a drained ring (its consumer index is the device's
     * producer index); with them, a poll that faults on a CQE before the
     * next one does not wait. */
    void take_next(emu_state &s, clock::time_point now);

    /* The polls that fault since the last call */
    void read_faults(clock::time_point now);

    /* A CQE was written to @a c: its page back, and every waiting poll's */
    void written(cq *c);

    /* The pages of polls that waited their limit back; a ring whose wait
     * ended so is not taken for a while */
    void expire(clock::time_point now);

    /* Every page back (the engine is not starved anymore, or stops) */
    void give_back_all();

    /* Before @a c's ring is unmapped or replaced */
    void forget(cq *c);

    const poll_wait_counters &counters() const
    {
        return m_counters;
    }

    void counters_reset()
    {
        m_counters = poll_wait_counters();
    }

private:
    struct taken {
        cq                *c;
        uint8_t           *page;    /* of the user's view */
        bool              waiting;  /* a poll faulted there */
        clock::time_point since;    /* of the fault */
        uint64_t          cqes;     /* CQEs written before it was taken */
    };

    bool open();
    bool watch(cq *c);
    bool take(cq *c);
    bool reads_next_cqe(const taken &t, uint8_t *addr,
                        clock::time_point now);
    bool map_now(uint8_t *page);
    void give_back(const taken &t);

    std::atomic<uct_ib_emu_poll_wait_t> m_mode{UCT_IB_EMU_POLL_WAIT_AUTO};
    std::chrono::microseconds m_max_wait{2000};
    int                m_fd     = -1;
    bool               m_refused = false; /* userfaultfd refused */
    bool               m_exact  = false; /* faults give their address */
    std::vector<taken> m_taken;
    poll_wait_counters m_counters;
    uint64_t           m_cqes = 0; /* CQEs written while a page is taken */
};

} // namespace uct_ib_emu

#endif
