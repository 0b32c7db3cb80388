/*
 * Polls of CQ rings that wait in a minor fault for the engine
 * (model/poll_wait.h).
 *
 * Each message's first argument is a string: the ASan build of the drop-in
 * cannot open the model with RTLD_DEEPBIND, so its log calls reach the
 * program's UCX 1.13.1, whose dispatch takes one argument more and reads
 * the first one as the format.
 */
#include <emu/model/model.h>

#include <uct/ib/mlx5/dv/wqe_ext.h>

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>


namespace uct_ib_emu {

namespace {

/* A ring whose polls waited their limit EXPIRED_MAX times in a row, no CQE
 * ending a wait in between, is left alone for SKIP_WAITS limits: its
 * program waits for something else */
constexpr unsigned EXPIRED_MAX = 3;
constexpr unsigned SKIP_WAITS  = 50;

/* A poll that faulted on a CQE written before the one to come: the time
 * its program gets to consume it before its ring is taken again */
constexpr auto EARLY_BACKOFF = std::chrono::microseconds(20);

constexpr uint32_t CI_MASK = 0xffffff; /* a CQ's 24-bit consumer index */

uint8_t *page_of(uint8_t *addr)
{
    return reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(addr) &
                                      ~uintptr_t(HW_PAGE_SIZE - 1));
}

#if defined(SYS_userfaultfd) && defined(UFFD_FEATURE_MINOR_SHMEM) && \
    defined(UFFDIO_CONTINUE) && defined(UFFD_FEATURE_EXACT_ADDRESS)
#  define POLL_WAIT_SUPPORTED 1
#  ifndef UFFD_USER_MODE_ONLY
#    define UFFD_USER_MODE_ONLY 1
#  endif
#endif

} // namespace

poll_waiter::~poll_waiter()
{
    give_back_all();
    if (m_fd >= 0) {
        close(m_fd); /* wakes whatever still waits, unregistered */
    }
}

bool poll_waiter::open()
{
    if (m_fd >= 0) {
        return true;
    }
    if (m_refused) {
        return false;
    }

    m_refused = true; /* unless one of the tries below succeeds */
#ifdef POLL_WAIT_SUPPORTED
    if (running_on_valgrind()) {
        return false;
    }

    /* with the exact address of a fault, the slot the poll reads (a
     * feature of Linux 6.2); without it, only drained rings are taken */
    for (bool exact : {true, false}) {
        int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC |
                                          O_NONBLOCK | UFFD_USER_MODE_ONLY));
        if (fd < 0) {
            uct_ib_emu_debug("%s: userfaultfd() failed: %m", "poll wait");
            return false;
        }

        struct uffdio_api api = {};
        api.api               = UFFD_API;
        api.features          = UFFD_FEATURE_MINOR_SHMEM |
                                (exact ? UFFD_FEATURE_EXACT_ADDRESS : 0);
        if (ioctl(fd, UFFDIO_API, &api) == 0) {
            m_fd     = fd;
            m_exact  = exact;
            m_refused = false;
            return true;
        }
        uct_ib_emu_debug("%s: UFFDIO_API (minor faults of shared memory%s) "
                         "failed: %m", "poll wait",
                         exact ? ", exact addresses" : "");
        close(fd);
    }
    return false;
#else
    return false;
#endif
}

bool poll_waiter::watch(cq *c)
{
#ifdef POLL_WAIT_SUPPORTED
    struct uffdio_register reg = {};

    if (c->ring_watched) {
        return true;
    }

    reg.range.start = reinterpret_cast<uintptr_t>(c->buf.user());
    reg.range.len   = c->buf.mapped();
    reg.mode        = UFFDIO_REGISTER_MODE_MINOR;
    if (!c->buf.two_views() || (ioctl(m_fd, UFFDIO_REGISTER, &reg) != 0) ||
        !(reg.ioctls & (1ull << _UFFDIO_CONTINUE))) {
        uct_ib_emu_debug("%s: cq 0x%x: its ring cannot wait for the engine "
                         "(%m)", c->ctx->dev->name.c_str(), c->cqn);
        c->polled_in_memory = false; /* not again */
        return false;
    }

    c->ring_watched = true;
    return true;
#else
    (void)c;
    return false;
#endif
}

bool poll_waiter::take(cq *c)
{
    const size_t slot = size_t(c->exec.pi & (c->cqe_cnt - 1)) * c->cqe_size;
    uint8_t *page     = page_of(c->buf.user() + slot);

    if (madvise(page, HW_PAGE_SIZE, MADV_DONTNEED) != 0) {
        uct_ib_emu_debug("%s: cq 0x%x: madvise(DONTNEED) of its ring "
                         "failed: %m", c->ctx->dev->name.c_str(), c->cqn);
        c->polled_in_memory = false;
        return false;
    }

    m_taken.push_back(taken{c, page, false, {}, m_cqes});
    ++m_counters.taken;
    return true;
}

bool poll_waiter::map_now(uint8_t *page)
{
#ifdef POLL_WAIT_SUPPORTED
    struct uffdio_continue cont = {};

    cont.range.start = reinterpret_cast<uintptr_t>(page);
    cont.range.len   = HW_PAGE_SIZE;
    if (ioctl(m_fd, UFFDIO_CONTINUE, &cont) == 0) {
        return true; /* and the faults there woken */
    }
    if (errno == EEXIST) {
        /* mapped before: a fault that raced with it is woken */
        (void)ioctl(m_fd, UFFDIO_WAKE, &cont.range);
        return true;
    }
    return false;
#else
    (void)page;
    return true;
#endif
}

void poll_waiter::give_back(const taken &t)
{
#ifdef POLL_WAIT_SUPPORTED
    if (!map_now(t.page)) {
        /* the kernel resolves the ring's faults from now on */
        struct uffdio_range all = {};

        uct_ib_emu_debug("%s: cq 0x%x: UFFDIO_CONTINUE failed: %m",
                         t.c->ctx->dev->name.c_str(), t.c->cqn);
        all.start = reinterpret_cast<uintptr_t>(t.c->buf.user());
        all.len   = t.c->buf.mapped();
        (void)ioctl(m_fd, UFFDIO_UNREGISTER, &all);
        t.c->ring_watched     = false;
        t.c->polled_in_memory = false;
    }
#else
    (void)t;
#endif
}

void poll_waiter::take_next(emu_state &s, clock::time_point now)
{
    if (!open()) {
        return;
    }

    for (const auto &dev : s.devices) {
        for (const auto &entry : dev->cqs) {
            cq *c = entry.second;
            const uint32_t *dbrec = static_cast<const uint32_t*>(
                    c->dbrec.get());

            /* a ring of sends only: its program may poll it for credits
             * before it sends what the answer needs */
            if (!c->polled_in_memory || !c->receives || c->exec.in_error ||
                (now < c->ring_skip_until) ||
                (!m_exact &&
                 ((dma_load_be32(&dbrec[UCT_MLX5_CQ_DBR_SET_CI]) ^
                   c->exec.pi) & CI_MASK)) ||
                std::any_of(m_taken.begin(), m_taken.end(),
                            [c](const taken &t) { return t.c == c; })) {
                continue;
            }

            if (watch(c)) {
                (void)take(c);
            }
        }
    }
}

void poll_waiter::read_faults(clock::time_point now)
{
#ifdef POLL_WAIT_SUPPORTED
    struct uffd_msg msg;

    // bounded: the descriptor does not block; the faults queued, one per
    // faulting thread and page
    while ((m_fd >= 0) && (read(m_fd, &msg, sizeof(msg)) == sizeof(msg))) {
        if (msg.event != UFFD_EVENT_PAGEFAULT) {
            continue;
        }

        uint8_t *addr = reinterpret_cast<uint8_t*>(msg.arg.pagefault.address);
        uint8_t *page = page_of(addr);
        auto it = std::find_if(m_taken.begin(), m_taken.end(),
                               [page](const taken &t) {
                                   return t.page == page;
                               });
        if (it == m_taken.end()) {
            /* not taken (given back before the fault was read, or a page
             * of the ring the kernel unmapped on its own): mapped now */
            map_now(page);
        } else if (!it->waiting) {
            ++m_counters.faults;
            if (reads_next_cqe(*it, addr, now)) {
                it->waiting = true;
                it->since   = now;
                continue;
            }
            give_back(*it);
            m_taken.erase(it);
        }
    }
#else
    (void)now;
#endif
}

bool poll_waiter::reads_next_cqe(const taken &t, uint8_t *addr,
                                 clock::time_point now)
{
    cq *c = t.c;

    if (t.cqes != m_cqes) {
        return false; /* a CQE came since, perhaps one not read yet */
    }

    if (m_exact) {
        const uint32_t slot = static_cast<uint32_t>(
                (addr - c->buf.user()) / c->cqe_size);

        if (slot != (c->exec.pi & (c->cqe_cnt - 1))) {
            /* a CQE the program has not consumed yet: taken again once
             * it had the time to */
            c->ring_skip_until = now + EARLY_BACKOFF;
            return false;
        }
    }
    return true;
}

void poll_waiter::written(cq *c)
{
    /* the program may wait on another ring already, its fault not read
     * yet: once this CQE is there, nothing would end that wait before its
     * limit */
    read_faults(clock::now());
    ++m_cqes;

    auto end = std::remove_if(m_taken.begin(), m_taken.end(),
                              [this, c](const taken &t) {
        if ((t.c != c) && !t.waiting) {
            return false;
        }
        give_back(t);
        if (t.waiting) {
            ++m_counters.written;
        }
        t.c->ring_expired = 0;
        return true;
    });

    m_taken.erase(end, m_taken.end());
}

void poll_waiter::expire(clock::time_point now)
{
    auto end = std::remove_if(m_taken.begin(), m_taken.end(),
                              [this, now](const taken &t) {
        if (!t.waiting || (now - t.since < m_max_wait)) {
            return false;
        }
        give_back(t);
        if (++t.c->ring_expired >= EXPIRED_MAX) {
            t.c->ring_skip_until = now + SKIP_WAITS * m_max_wait;
            t.c->ring_expired    = 0;
        }
        ++m_counters.expired;
        return true;
    });

    m_taken.erase(end, m_taken.end());
}

void poll_waiter::give_back_all()
{
    for (const taken &t : m_taken) {
        give_back(t);
    }
    m_taken.clear();
}

void poll_waiter::forget(cq *c)
{
    auto end = std::remove_if(m_taken.begin(), m_taken.end(),
                              [this, c](const taken &t) {
        if (t.c != c) {
            return false;
        }
        give_back(t);
        return true;
    });

    m_taken.erase(end, m_taken.end());
    c->ring_watched = false; /* its ring goes; a new one is not */
}

} // namespace uct_ib_emu
