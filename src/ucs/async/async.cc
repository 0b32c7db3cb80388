/*
 * Asynchronous events (see async.h). One registry holds every handler by
 * id; one progress thread, running while thread-mode contexts exist, waits
 * on their file descriptors with epoll and on the nearest timer, and calls
 * callbacks under their context's lock. It never waits for that lock: a
 * context that is blocked gets the event queued as missed instead, which
 * its owner's check_miss (or the thread, once the context is free)
 * dispatches.
 */
#include <ucs/async/async.h>

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

const char *ucs_async_mode_names[] = {
    "signal",
    "thread_spinlock",
    "thread_mutex",
    "poll",
    nullptr
};

namespace {

constexpr int        timer_id_min       = 1000000;
constexpr ucs_time_t ns_per_ms          = 1000000; /* ucs_time_t is in ns */
constexpr ucs_time_t max_thread_sleep   = 100 * ns_per_ms; /* re-check */
constexpr ucs_time_t missed_retry_sleep = ns_per_ms;

bool is_thread_mode(ucs_async_mode_t mode)
{
    return (mode == UCS_ASYNC_MODE_THREAD_SPINLOCK) ||
           (mode == UCS_ASYNC_MODE_THREAD_MUTEX);
}

/* The context lock: recursive, a spinlock or a mutex as the mode says.
 * try_lock() is what the progress thread uses: it never waits for it. */
class context_lock {
public:
    explicit context_lock(bool spin) : m_spin(spin)
    {
    }

    bool try_lock()
    {
        if (!m_spin) {
            return m_mutex.try_lock();
        }

        const std::thread::id self = std::this_thread::get_id();
        std::thread::id       none;

        if (m_owner.load(std::memory_order_relaxed) == self) {
            ++m_count;
            return true;
        }
        if (m_owner.compare_exchange_strong(none, self,
                                            std::memory_order_acquire)) {
            m_count = 1;
            return true;
        }
        return false;
    }

    void lock()
    {
        if (!m_spin) {
            m_mutex.lock();
            return;
        }
        while (!try_lock()) {
            sched_yield(); /* the holder runs a callback or a critical section */
        }
    }

    void unlock()
    {
        if (!m_spin) {
            m_mutex.unlock();
        } else if (--m_count == 0) {
            m_owner.store(std::thread::id(), std::memory_order_release);
        }
    }

private:
    const bool                   m_spin;
    std::recursive_mutex         m_mutex;
    std::atomic<std::thread::id> m_owner{std::thread::id()};
    unsigned                     m_count = 0; /* written by the owner only */
};

struct handler {
    int                   id;
    bool                  timer;
    ucs_async_mode_t      mode;
    ucs_event_set_types_t events;
    ucs_async_event_cb_t  cb;
    void                  *arg;
    ucs_async_context_t   *async;
    ucs_time_t            interval   = 0;
    ucs_time_t            expiration = 0;
    unsigned              running    = 0; /* callbacks under way */
    bool                  missed     = false; /* queued on its context */
    std::thread::id       runner;         /* of the last one started */
};

struct missed_event {
    int                   id;
    ucs_event_set_types_t events;
};

} // namespace

struct ucs_async_context {
    ucs_async_mode_t         mode;
    context_lock             lock;
    std::deque<missed_event> missed; /* guarded by the registry lock */
    /* missed.size(), readable without the lock: progress checks it often */
    std::atomic<unsigned>    num_missed{0};

    explicit ucs_async_context(ucs_async_mode_t m) :
        mode(m), lock(m != UCS_ASYNC_MODE_THREAD_MUTEX)
    {
    }
};

namespace {

uint32_t to_epoll(ucs_event_set_types_t events)
{
    uint32_t ev = EPOLLERR | EPOLLHUP;

    if (events & UCS_EVENT_SET_EVREAD) {
        ev |= EPOLLIN;
    }
    if (events & UCS_EVENT_SET_EVWRITE) {
        ev |= EPOLLOUT;
    }
    if (events & UCS_EVENT_SET_EDGE_TRIGGERED) {
        ev |= EPOLLET;
    }
    return ev;
}

ucs_event_set_types_t from_epoll(uint32_t events)
{
    return static_cast<ucs_event_set_types_t>(
            ((events & EPOLLIN) ? UCS_EVENT_SET_EVREAD : 0) |
            ((events & EPOLLOUT) ? UCS_EVENT_SET_EVWRITE : 0) |
            ((events & (EPOLLERR | EPOLLHUP)) ? UCS_EVENT_SET_EVERR : 0));
}

int timeout_ms(ucs_time_t t)
{
    return static_cast<int>((t + ns_per_ms - 1) / ns_per_ms);
}

class registry {
public:
    static registry &get()
    {
        static registry r;
        return r;
    }

    ~registry()
    {
        std::unique_lock<std::mutex> g(m_lock);
        stop_thread(g); /* a context the program never destroyed */
    }

    ucs_status_t context_created(ucs_async_context_t *async)
    {
        std::unique_lock<std::mutex> g(m_lock);

        if (is_thread_mode(async->mode) && (m_thread_contexts++ == 0)) {
            ucs_status_t status = start_thread();
            if (status != UCS_OK) {
                --m_thread_contexts;
                return status;
            }
        }
        return UCS_OK;
    }

    void context_destroyed(ucs_async_context_t *async)
    {
        std::vector<int> ids;
        {
            std::unique_lock<std::mutex> g(m_lock);
            for (const auto &entry : m_handlers) {
                if (entry.second->async == async) {
                    ids.push_back(entry.first);
                }
            }
        }

        if (!ids.empty()) {
            ucs_warn("destroying async context %p with %zu handlers still "
                     "registered; removing them", static_cast<void*>(async),
                     ids.size());
        }
        for (int id : ids) {
            (void)remove(id, true);
        }

        std::unique_lock<std::mutex> g(m_lock);
        if (is_thread_mode(async->mode) && (--m_thread_contexts == 0)) {
            stop_thread(g);
        }
    }

    ucs_status_t add(std::shared_ptr<handler> h)
    {
        std::unique_lock<std::mutex> g(m_lock);

        if (h->timer) {
            h->id = m_next_timer_id++;
        } else if (m_handlers.count(h->id) != 0) {
            ucs_error("async: fd %d already has an event handler", h->id);
            return UCS_ERR_ALREADY_EXISTS;
        }

        if (is_thread_mode(h->mode) && !h->timer) {
            struct epoll_event ev = {};

            ev.events  = to_epoll(h->events);
            ev.data.fd = h->id;
            if (epoll_ctl(m_epfd, EPOLL_CTL_ADD, h->id, &ev) != 0) {
                ucs_error("async: epoll_ctl(ADD, fd %d) failed: %m", h->id);
                return (errno == EBADF) ? UCS_ERR_INVALID_PARAM :
                                          UCS_ERR_IO_ERROR;
            }
        }

        m_handlers[h->id] = h;
        wake();
        return UCS_OK;
    }

    ucs_status_t modify(int fd, ucs_event_set_types_t events)
    {
        std::unique_lock<std::mutex> g(m_lock);
        auto it = m_handlers.find(fd);

        if ((it == m_handlers.end()) || it->second->timer) {
            return UCS_ERR_NO_ELEM;
        }

        it->second->events = events;
        if (is_thread_mode(it->second->mode)) {
            struct epoll_event ev = {};

            ev.events  = to_epoll(events);
            ev.data.fd = fd;
            if (epoll_ctl(m_epfd, EPOLL_CTL_MOD, fd, &ev) != 0) {
                ucs_error("async: epoll_ctl(MOD, fd %d) failed: %m", fd);
                return UCS_ERR_IO_ERROR;
            }
        }
        return UCS_OK;
    }

    ucs_status_t remove(int id, bool sync)
    {
        std::unique_lock<std::mutex> g(m_lock);
        auto it = m_handlers.find(id);

        if (it == m_handlers.end()) {
            return UCS_ERR_NO_ELEM;
        }

        std::shared_ptr<handler> h = it->second;
        m_handlers.erase(it);
        if (is_thread_mode(h->mode) && !h->timer &&
            (epoll_ctl(m_epfd, EPOLL_CTL_DEL, id, nullptr) != 0) &&
            (errno != EBADF)) {
            ucs_warn("async: epoll_ctl(DEL, fd %d) failed: %m", id);
        }
        if (h->async != nullptr) {
            auto &missed = h->async->missed;
            missed.erase(std::remove_if(missed.begin(), missed.end(),
                                        [id](const missed_event &m) {
                                            return m.id == id;
                                        }),
                         missed.end());
            h->async->num_missed.store(missed.size(), std::memory_order_release);
        }

        /* A callback removing its own handler must not wait for itself */
        if (sync) {
            m_cv.wait(g, [&h] {
                return (h->running == 0) ||
                       ((h->running == 1) &&
                        (h->runner == std::this_thread::get_id()));
            });
        }
        return UCS_OK;
    }

    /* Dispatch POLL handlers, expired timers and misses of @a async (NULL:
     * of every context), in the caller's thread */
    void poll(ucs_async_context_t *async)
    {
        std::vector<std::pair<std::shared_ptr<handler>, ucs_event_set_types_t>> due;
        std::vector<struct pollfd> fds;
        std::vector<std::shared_ptr<handler>> polled;
        const ucs_time_t now = ucs_get_time();

        {
            std::unique_lock<std::mutex> g(m_lock);
            for (const auto &entry : m_handlers) {
                const auto &h = entry.second;
                if (((async != nullptr) && (h->async != async)) ||
                    (h->mode != UCS_ASYNC_MODE_POLL) || h->missed) {
                    continue; /* a missed one goes with the misses below */
                }
                if (h->timer) {
                    if (now >= h->expiration) {
                        h->expiration = now + h->interval;
                        due.emplace_back(h, static_cast<ucs_event_set_types_t>(0));
                    }
                } else {
                    fds.push_back({h->id, static_cast<short>(
                                   ((h->events & UCS_EVENT_SET_EVREAD) ? POLLIN : 0) |
                                   ((h->events & UCS_EVENT_SET_EVWRITE) ? POLLOUT : 0)),
                                   0});
                    polled.push_back(h);
                }
            }
        }

        if (!fds.empty() && (::poll(fds.data(), fds.size(), 0) > 0)) {
            for (size_t i = 0; i < fds.size(); ++i) {
                if (fds[i].revents != 0) {
                    due.emplace_back(polled[i], static_cast<ucs_event_set_types_t>(
                            ((fds[i].revents & POLLIN) ? UCS_EVENT_SET_EVREAD : 0) |
                            ((fds[i].revents & POLLOUT) ? UCS_EVENT_SET_EVWRITE : 0) |
                            ((fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) ?
                             UCS_EVENT_SET_EVERR : 0)));
                }
            }
        }

        for (const auto &d : due) {
            dispatch(d.first->id, d.second, false);
        }

        if (async != nullptr) {
            check_miss(async);
        } else {
            check_all_misses(false);
        }
    }

    void check_miss(ucs_async_context_t *async)
    {
        for (;;) {
            missed_event m;

            if (async->num_missed.load(std::memory_order_acquire) == 0) {
                return; /* the common case, without the registry lock */
            }
            {
                std::unique_lock<std::mutex> g(m_lock);
                if (async->missed.empty()) {
                    return;
                }
                m = async->missed.front();
                async->missed.pop_front();
                async->num_missed.store(async->missed.size(),
                                        std::memory_order_release);
            }
            dispatch(m.id, m.events, true, true);
        }
    }

private:
    registry()
    {
        m_epfd   = epoll_create1(EPOLL_CLOEXEC);
        m_wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if ((m_epfd < 0) || (m_wakefd < 0)) {
            ucs_error("async: epoll_create1/eventfd failed: %m");
            return;
        }

        struct epoll_event ev = {};
        ev.events  = EPOLLIN;
        ev.data.fd = m_wakefd;
        if (epoll_ctl(m_epfd, EPOLL_CTL_ADD, m_wakefd, &ev) != 0) {
            ucs_error("async: epoll_ctl(ADD, wake fd) failed: %m");
        }
    }

    ucs_status_t start_thread()
    {
        if ((m_epfd < 0) || (m_wakefd < 0)) {
            return UCS_ERR_IO_ERROR;
        }

        m_stop = false;
        try {
            m_thread = std::thread(&registry::thread_main, this);
        } catch (const std::system_error &e) {
            ucs_error("async: cannot start the progress thread: %s", e.what());
            return UCS_ERR_IO_ERROR;
        }
        return UCS_OK;
    }

    void stop_thread(std::unique_lock<std::mutex> &g)
    {
        if (!m_thread.joinable()) {
            return;
        }

        m_stop = true;
        wake();
        g.unlock();
        if (m_thread.get_id() == std::this_thread::get_id()) {
            m_thread.detach(); /* destroyed from its own callback */
        } else {
            m_thread.join();
        }
        g.lock();
    }

    void wake()
    {
        const uint64_t one = 1;

        if (write(m_wakefd, &one, sizeof(one)) < 0) {
            /* the counter is full: the thread will wake up anyway */
        }
    }

    /* Watch the fd of a thread-mode handler for its events, or for
     * nothing while a missed event of it waits (a level-triggered fd would
     * wake the thread again and again) */
    void arm(const handler &h, bool armed)
    {
        struct epoll_event ev = {};

        if (h.timer || !is_thread_mode(h.mode)) {
            return;
        }

        ev.events  = armed ? to_epoll(h.events) : 0;
        ev.data.fd = h.id;
        if (epoll_ctl(m_epfd, EPOLL_CTL_MOD, h.id, &ev) != 0) {
            ucs_warn("async: epoll_ctl(MOD, fd %d) failed: %m", h.id);
        }
    }

    /* Call the handler @a id now if its context is free, else queue the
     * event as missed (once per handler); @a from_miss dispatches a missed
     * event, and from the owner's check_miss waits for the context lock. */
    void dispatch(int id, ucs_event_set_types_t events, bool from_miss,
                  bool wait_for_lock = false)
    {
        std::shared_ptr<handler> h;
        {
            std::unique_lock<std::mutex> g(m_lock);
            auto it = m_handlers.find(id);
            if (it == m_handlers.end()) {
                return; /* removed meanwhile */
            }
            h = it->second;
            ++h->running;
            h->runner = std::this_thread::get_id();
        }

        ucs_async_context_t *async = h->async;
        bool                 locked = true;

        if (async != nullptr) {
            if (wait_for_lock) {
                async->lock.lock();
            } else {
                locked = async->lock.try_lock();
            }
        }

        if (locked) {
            h->cb(id, events, h->arg);
            if (async != nullptr) {
                async->lock.unlock();
            }
        }

        std::unique_lock<std::mutex> g(m_lock);
        const bool registered = (m_handlers.count(id) != 0);
        if (!locked && registered && (from_miss || !h->missed)) {
            async->missed.push_back({id, events});
            async->num_missed.store(async->missed.size(),
                                    std::memory_order_release);
            if (!h->missed) {
                h->missed = true;
                arm(*h, false);
            }
        } else if (locked && from_miss && h->missed) {
            h->missed = false;
            if (registered) {
                arm(*h, true);
            }
        }
        --h->running;
        m_cv.notify_all();
    }

    /* Retry the misses of contexts that are free now */
    void check_all_misses(bool thread_contexts_only)
    {
        std::vector<missed_event> retry;
        {
            std::unique_lock<std::mutex> g(m_lock);
            for (const auto &entry : m_handlers) {
                ucs_async_context_t *async = entry.second->async;
                if ((async == nullptr) || async->missed.empty() ||
                    (thread_contexts_only && !is_thread_mode(async->mode))) {
                    continue;
                }
                retry.insert(retry.end(), async->missed.begin(),
                             async->missed.end());
                async->missed.clear();
                async->num_missed.store(0, std::memory_order_release);
            }
        }

        for (const missed_event &m : retry) {
            dispatch(m.id, m.events, true);
        }
    }

    /* Thread-mode timers that expired; the time until the next one */
    ucs_time_t expired_timers(std::vector<int> *ids)
    {
        std::unique_lock<std::mutex> g(m_lock);
        const ucs_time_t now  = ucs_get_time();
        ucs_time_t       next = max_thread_sleep;
        bool             missed = false;

        for (const auto &entry : m_handlers) {
            const auto &h = entry.second;
            if ((h->async != nullptr) && !h->async->missed.empty()) {
                missed = true;
            }
            if (!h->timer || !is_thread_mode(h->mode)) {
                continue;
            }
            if (now >= h->expiration) {
                h->expiration = now + h->interval;
                ids->push_back(h->id);
            }
            next = std::min(next, h->expiration - now);
        }
        return missed ? std::min(next, missed_retry_sleep) : next;
    }

    void thread_main()
    {
        struct epoll_event events[16];

        for (;;) {
            std::vector<int> timers;
            ucs_time_t       sleep = expired_timers(&timers);

            for (int id : timers) {
                dispatch(id, static_cast<ucs_event_set_types_t>(0), false);
            }
            check_all_misses(true);

            {
                std::unique_lock<std::mutex> g(m_lock);
                if (m_stop) {
                    return;
                }
            }

            int n = epoll_wait(m_epfd, events, ucs_static_array_size(events),
                               timeout_ms(sleep));
            if ((n < 0) && (errno != EINTR)) {
                ucs_error("async: epoll_wait failed: %m");
                n = 0;
            }
            for (int i = 0; i < n; ++i) {
                if (events[i].data.fd == m_wakefd) {
                    uint64_t count;
                    if (read(m_wakefd, &count, sizeof(count)) < 0) {
                        /* drained already */
                    }
                    continue;
                }
                dispatch(events[i].data.fd, from_epoll(events[i].events), false);
            }
        }
    }

    std::mutex                              m_lock;
    std::condition_variable                 m_cv;
    std::map<int, std::shared_ptr<handler>> m_handlers;
    int                                     m_next_timer_id   = timer_id_min;
    unsigned                                m_thread_contexts = 0;
    int                                     m_epfd            = -1;
    int                                     m_wakefd          = -1;
    bool                                    m_stop            = false;
    std::thread                             m_thread;
};

ucs_status_t check_mode(ucs_async_mode_t mode, const ucs_async_context_t *async)
{
    if ((mode != UCS_ASYNC_MODE_POLL) && !is_thread_mode(mode)) {
        ucs_error("async: handler mode %d is not supported", mode);
        return (mode == UCS_ASYNC_MODE_SIGNAL) ? UCS_ERR_UNSUPPORTED :
                                                 UCS_ERR_INVALID_PARAM;
    }
    if ((async != nullptr) && is_thread_mode(mode) &&
        !is_thread_mode(async->mode)) {
        ucs_error("async: a %s handler on a %s context",
                  ucs_async_mode_names[mode], ucs_async_mode_names[async->mode]);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((async == nullptr) && (mode == UCS_ASYNC_MODE_POLL)) {
        ucs_error("async: a poll handler needs a context to be polled");
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

std::shared_ptr<handler> new_handler(ucs_async_mode_t mode,
                                     ucs_async_event_cb_t cb, void *arg,
                                     ucs_async_context_t *async)
{
    try {
        auto h   = std::make_shared<handler>();
        h->mode  = mode;
        h->cb    = cb;
        h->arg   = arg;
        h->async = async;
        return h;
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}

} // namespace

ucs_status_t ucs_async_context_create(ucs_async_mode_t mode,
                                      ucs_async_context_t **async_p)
{
    ucs_async_context_t *async;
    ucs_status_t        status;

    if (mode == UCS_ASYNC_MODE_SIGNAL) {
        ucs_error("async: signal mode is not supported; use a thread or "
                  "poll mode");
        return UCS_ERR_UNSUPPORTED;
    } else if ((mode != UCS_ASYNC_MODE_POLL) && !is_thread_mode(mode)) {
        ucs_error("async: invalid mode %d", mode);
        return UCS_ERR_INVALID_PARAM;
    }

    async = new (std::nothrow) ucs_async_context(mode);
    if (async == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }

    status = registry::get().context_created(async);
    if (status != UCS_OK) {
        delete async;
        return status;
    }

    *async_p = async;
    return UCS_OK;
}

void ucs_async_context_destroy(ucs_async_context_t *async)
{
    if (async == nullptr) {
        return;
    }

    registry::get().context_destroyed(async);
    delete async;
}

ucs_status_t ucs_async_set_event_handler(ucs_async_mode_t mode, int event_fd,
                                         ucs_event_set_types_t events,
                                         ucs_async_event_cb_t cb, void *arg,
                                         ucs_async_context_t *async)
{
    ucs_status_t status = check_mode(mode, async);

    if (status != UCS_OK) {
        return status;
    } else if ((event_fd < 0) || (cb == nullptr)) {
        ucs_error("async: invalid event handler (fd %d, callback %p)", event_fd,
                  reinterpret_cast<void*>(cb));
        return UCS_ERR_INVALID_PARAM;
    }

    auto h = new_handler(mode, cb, arg, async);
    if (h == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    h->id     = event_fd;
    h->timer  = false;
    h->events = events;
    return registry::get().add(h);
}

ucs_status_t ucs_async_modify_handler(int fd, ucs_event_set_types_t events)
{
    return registry::get().modify(fd, events);
}

ucs_status_t ucs_async_add_timer(ucs_async_mode_t mode, ucs_time_t interval,
                                 ucs_async_event_cb_t cb, void *arg,
                                 ucs_async_context_t *async, int *timer_id_p)
{
    ucs_status_t status = check_mode(mode, async);

    if (status != UCS_OK) {
        return status;
    } else if ((interval == 0) || (cb == nullptr)) {
        ucs_error("async: invalid timer (interval %" PRIu64 ", callback %p)",
                  static_cast<uint64_t>(interval), reinterpret_cast<void*>(cb));
        return UCS_ERR_INVALID_PARAM;
    }

    auto h = new_handler(mode, cb, arg, async);
    if (h == nullptr) {
        return UCS_ERR_NO_MEMORY;
    }
    h->timer      = true;
    h->events     = static_cast<ucs_event_set_types_t>(0);
    h->interval   = interval;
    h->expiration = ucs_get_time() + interval;

    status = registry::get().add(h);
    if (status == UCS_OK) {
        *timer_id_p = h->id;
    }
    return status;
}

ucs_status_t ucs_async_remove_handler(int id, int sync)
{
    return registry::get().remove(id, sync != 0);
}

void ucs_async_poll(ucs_async_context_t *async)
{
    registry::get().poll(async);
}

void ucs_async_check_miss(ucs_async_context_t *async)
{
    registry::get().check_miss(async);
}

void ucs_async_block(ucs_async_context_t *async)
{
    async->lock.lock();
}

void ucs_async_unblock(ucs_async_context_t *async)
{
    async->lock.unlock();
}
