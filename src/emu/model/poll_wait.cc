/*
 * Polls of CQ rings that wait in a minor fault for the engine
 * (model/poll_wait.h).
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

/* A ring whose poll waited its limit without a CQE is left alone for
 * this many limits */
constexpr unsigned SKIP_WAITS = 200;

constexpr uint32_t CI_MASK = 0xffffff; /* a CQ's 24-bit consumer index */

uint8_t *page_of(uint8_t *addr)
{
    return reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(addr) &
                                      ~uintptr_t(HW_PAGE_SIZE - 1));
}

#if defined(SYS_userfaultfd) && defined(UFFD_FEATURE_MINOR_SHMEM) && \
    defined(UFFDIO_CONTINUE)
#  define POLL_WAIT_SUPPORTED 1
#  ifndef UFFD_USER_MODE_ONLY
#    define UFFD_USER_MODE_ONLY 1
#  endif
#endif

} // namespace

poll_waiter::~poll_waiter()
{
    if (m_counters.taken > 0) {
        uct_ib_emu_debug("poll wait: %lu pages taken, %lu polls waited, "
                         "%lu ended by a CQE, %lu at their limit",
                         m_counters.taken, m_counters.faults,
                         m_counters.written, m_counters.expired);
    }
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
    if (m_closed) {
        return false;
    }

    m_closed = true; /* tried once */
#ifdef POLL_WAIT_SUPPORTED
    if (running_on_valgrind()) {
        return false;
    }

    int fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK |
                                                       UFFD_USER_MODE_ONLY));
    if (fd < 0) {
        uct_ib_emu_debug("poll wait: userfaultfd() failed: %m");
        return false;
    }

    struct uffdio_api api = {};
    api.api               = UFFD_API;
    api.features          = UFFD_FEATURE_MINOR_SHMEM;
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        uct_ib_emu_debug("poll wait: UFFDIO_API (minor faults of shared "
                         "memory) failed: %m");
        close(fd);
        return false;
    }

    m_fd     = fd;
    m_closed = false;
    return true;
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

bool poll_waiter::take(cq *c, clock::time_point now)
{
    const size_t slot = size_t(c->exec.pi & (c->cqe_cnt - 1)) * c->cqe_size;
    uint8_t *page     = page_of(c->buf.user() + slot);

    (void)now;
    if (madvise(page, HW_PAGE_SIZE, MADV_DONTNEED) != 0) {
        uct_ib_emu_debug("%s: cq 0x%x: madvise(DONTNEED) of its ring "
                         "failed: %m", c->ctx->dev->name.c_str(), c->cqn);
        c->polled_in_memory = false;
        return false;
    }

    m_taken.push_back(taken{c, page, false, {}});
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

void poll_waiter::take_drained(emu_state &s, clock::time_point now)
{
    if (!open()) {
        return;
    }

    for (const auto &dev : s.devices) {
        for (const auto &entry : dev->cqs) {
            cq *c = entry.second;
            const uint32_t *dbrec = static_cast<const uint32_t*>(
                    c->dbrec.get());

            if (!c->polled_in_memory || c->exec.in_error ||
                (now < c->ring_skip_until) ||
                ((dma_load_be32(&dbrec[UCT_MLX5_CQ_DBR_SET_CI]) ^
                  c->exec.pi) & CI_MASK) ||
                std::any_of(m_taken.begin(), m_taken.end(),
                            [c](const taken &t) { return t.c == c; })) {
                continue;
            }

            if (watch(c)) {
                (void)take(c, now);
            }
        }
    }
}

void poll_waiter::read_faults(clock::time_point now)
{
#ifdef POLL_WAIT_SUPPORTED
    struct uffd_msg msg;

    while ((m_fd >= 0) && (read(m_fd, &msg, sizeof(msg)) == sizeof(msg))) {
        if (msg.event != UFFD_EVENT_PAGEFAULT) {
            continue;
        }

        uint8_t *page = page_of(reinterpret_cast<uint8_t*>(
                                 msg.arg.pagefault.address));
        auto it = std::find_if(m_taken.begin(), m_taken.end(),
                               [page](const taken &t) {
                                   return t.page == page;
                               });
        if (it == m_taken.end()) {
            /* not taken (given back before the fault was read, or a page
             * of the ring the kernel unmapped on its own): mapped now */
            map_now(page);
        } else if (!it->waiting) {
            it->waiting = true;
            it->since   = now;
            ++m_counters.faults;
        }
    }
#else
    (void)now;
#endif
}

void poll_waiter::written(cq *c)
{
    auto end = std::remove_if(m_taken.begin(), m_taken.end(),
                              [this, c](const taken &t) {
        if ((t.c != c) && !t.waiting) {
            return false;
        }
        give_back(t);
        if (t.waiting) {
            ++m_counters.written;
        }
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
        t.c->ring_skip_until = now + SKIP_WAITS * m_max_wait;
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
