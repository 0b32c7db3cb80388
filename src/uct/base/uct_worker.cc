/*
 * Workers and their progress callbacks.
 */
#include <uct/base/uct_worker.h>
#include <uct/base/uct_guard.h>

#include <ucs/debug/log_def.h>

#include <climits>
#include <exception>
#include <memory>
#include <new>

uct_progress_queue::uct_progress_queue(bool single_thread) :
    m_current(new snapshot{nullptr}), m_single(single_thread)
{
}

uct_progress_queue::~uct_progress_queue()
{
    snapshot *current = m_current.load();

    for (node *n : *current) {
        delete n; /* the sentinel too: deleting NULL does nothing */
    }
    delete current;
    free_retired_locked(); /* no dispatch can be running */
}

uct_worker_cb_id_t uct_progress_queue::add(ucs_callback_t func, void *arg,
                                           unsigned flags)
{
    std::lock_guard<std::mutex> guard(m_lock);
    std::unique_ptr<snapshot> next(new snapshot(*m_current.load()));
    uct_worker_cb_id_t id = m_next_id;
    std::unique_ptr<node> n(new node{func, arg, id,
                                     {(flags & UCS_CALLBACKQ_FLAG_ONESHOT) ?
                                      ONESHOT : uint8_t(0)}});

    next->back() = n.get();
    next->push_back(nullptr);
    m_retired.reserve(m_retired.size() + 1);
    n.release();
    publish_locked(next.release());
    m_next_id = (m_next_id == INT_MAX) ? 0 : (m_next_id + 1);
    return id;
}

bool uct_progress_queue::remove(uct_worker_cb_id_t id)
{
    std::lock_guard<std::mutex> guard(m_lock);

    for (node *n : *m_current.load()) {
        if ((n == nullptr) || (n->id != id)) {
            continue;
        }
        /* no dispatch calls it alone once it is marked */
        m_solo.store(nullptr);
        if (n->state.fetch_or(REMOVED) & REMOVED) {
            return false; /* a oneshot callback a dispatch took */
        }
        unlink_locked(n);
        return true;
    }
    return false;
}

/* A oneshot callback, marked removed by the dispatch that called it */
void uct_progress_queue::remove_oneshot(node *n) noexcept
{
    try {
        std::lock_guard<std::mutex> guard(m_lock);

        unlink_locked(n);
    } catch (const std::exception &e) {
        /* marked removed: it stays in the list, never called again */
        ucs_error("progress callback %p: cannot unlink it: %s",
                  reinterpret_cast<void*>(n->func), e.what());
    }
}

/* Out of the list; a dispatch may still hold the node: it is freed with
 * the snapshots */
void uct_progress_queue::unlink_locked(node *gone)
{
    const snapshot *current = m_current.load();
    std::unique_ptr<snapshot> next(new snapshot());

    next->reserve(current->size());
    for (node *n : *current) {
        if (n != gone) {
            next->push_back(n); /* the sentinel included */
        }
    }
    m_removed.push_back(gone);
    m_retired.reserve(m_retired.size() + 1);
    publish_locked(next.release());
}

void uct_progress_queue::publish_locked(snapshot *next)
{
    m_solo.store(nullptr);
    m_retired.push_back(m_current.exchange(next));
    m_retiring.store(true);
    if (!m_single) {
        reclaim_locked();
    }
}

/*
 * A shared queue's dispatch counts itself in m_walkers before it loads
 * m_current: seeing no walker after the exchange of m_current, nobody can
 * hold an old one (every access is sequentially consistent)
 */
void uct_progress_queue::reclaim_locked()
{
    if (m_walkers.load() == 0) {
        free_retired_locked();
    }
}

void uct_progress_queue::free_retired_locked()
{
    for (snapshot *old : m_retired) {
        delete old;
    }
    for (node *n : m_removed) {
        delete n;
    }
    m_retired.clear();
    m_removed.clear();
    m_retiring.store(false, std::memory_order_relaxed);
}

/* A node whose state is not 0: removed (not called), or a oneshot callback,
 * called by the dispatch that marks it removed first */
__attribute__((noinline)) unsigned
uct_progress_queue::call_flagged(node *n) noexcept
{
    unsigned count;

    if (n->state.fetch_or(REMOVED) & REMOVED) {
        return 0; /* removed, or another dispatch took it */
    }
    count = n->func(n->arg);
    remove_oneshot(n);
    return count;
}

__attribute__((always_inline)) inline unsigned
uct_progress_queue::walk(const snapshot &current)
{
    unsigned count = 0;
    node *n;

    for (node *const *p = current.data(); (n = *p) != nullptr; ++p) {
        if (ucs_likely(n->state.load(std::memory_order_acquire) == 0)) {
            count += n->func(n->arg);
        } else {
            count += call_flagged(n);
        }
    }
    return count;
}

/* Every dispatch but a solo callback's: a single-thread queue frees what an
 * add or a remove retired when none of its own dispatches is walking, and
 * then names its callback if it is one alone; a shared queue counts its
 * walkers */
__attribute__((noinline)) unsigned uct_progress_queue::dispatch_walk() noexcept
{
    unsigned count;

    if (ucs_likely(m_single)) {
        if (m_retiring.load(std::memory_order_relaxed) && (m_depth == 0)) {
            std::lock_guard<std::mutex> guard(m_lock);
            const snapshot &current = *m_current.load();

            free_retired_locked();
            if ((current.size() == 2) &&
                (current[0]->state.load() == 0)) { /* plain, not removed */
                m_solo.store(current[0]);
            }
        }
        ++m_depth;
        count = walk(*m_current.load(std::memory_order_acquire));
        --m_depth;
        return count;
    }

    m_walkers.fetch_add(1);
    count = walk(*m_current.load());
    if ((m_walkers.fetch_sub(1) == 1) && m_retiring.load()) {
        std::lock_guard<std::mutex> guard(m_lock);
        reclaim_locked();
    }
    return count;
}

/* Inline in uct_worker_progress(): a solo callback is a tail call */
__attribute__((always_inline)) inline unsigned
uct_progress_queue::dispatch() noexcept
{
    node *solo = m_solo.load(std::memory_order_acquire);

    if (ucs_likely(solo != nullptr)) {
        return solo->func(solo->arg);
    }
    return dispatch_walk();
}

size_t uct_progress_queue::size() const
{
    std::lock_guard<std::mutex> guard(m_lock);

    return m_current.load()->size() - 1; /* the sentinel */
}


ucs_status_t uct_worker_create(ucs_async_context_t *async,
                               ucs_thread_mode_t thread_mode,
                               uct_worker_h *worker_p)
{
    return uct::status_guard(__func__, [&]() {
        uct_worker_h worker;

        if (worker_p == nullptr) {
            ucs_error("uct_worker_create: NULL output argument");
            return UCS_ERR_INVALID_PARAM;
        }

        if ((thread_mode < UCS_THREAD_MODE_SINGLE) ||
            (thread_mode >= UCS_THREAD_MODE_LAST)) {
            ucs_error("uct_worker_create: invalid thread mode %d",
                      (int)thread_mode);
            return UCS_ERR_INVALID_PARAM;
        }

        worker    = new uct_worker(async, thread_mode);
        *worker_p = worker;
        return UCS_OK;
    });
}

void uct_worker_destroy(uct_worker_h worker)
{
    size_t remaining;

    if (worker == nullptr) {
        return;
    }

    remaining = worker->progress_q.size();
    if (remaining > 0) {
        ucs_warn("worker %p destroyed with %zu progress callbacks still "
                 "registered (an interface was not closed?)", worker,
                 remaining);
    }

    delete worker;
}

unsigned uct_worker_progress(uct_worker_h worker)
{
    return worker->progress_q.dispatch(); /* never throws */
}

void uct_worker_progress_register_safe(uct_worker_h worker, ucs_callback_t func,
                                       void *arg, unsigned flags,
                                       uct_worker_cb_id_t *id_p)
{
    uct::void_guard(__func__, [&]() {
        if ((worker == nullptr) || (func == nullptr) || (id_p == nullptr)) {
            ucs_error("uct_worker_progress_register_safe: NULL argument");
            return;
        }

        if (*id_p == UCS_CALLBACKQ_ID_NULL) {
            *id_p = worker->progress_q.add(func, arg, flags);
        }
    });
}

void uct_worker_progress_unregister_safe(uct_worker_h worker,
                                         uct_worker_cb_id_t *id_p)
{
    uct::void_guard(__func__, [&]() {
        if ((worker == nullptr) || (id_p == nullptr) ||
            (*id_p == UCS_CALLBACKQ_ID_NULL)) {
            return;
        }

        if (!worker->progress_q.remove(*id_p)) {
            /* e.g. a one-shot callback, gone after its call */
            ucs_debug("worker %p: no progress callback with id %d", worker,
                      *id_p);
        }
        *id_p = UCS_CALLBACKQ_ID_NULL;
    });
}
