/*
 * Workers and their progress callbacks.
 */
#include <uct/base/uct_worker.h>
#include <uct/base/uct_guard.h>

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <climits>
#include <new>

uct_worker_cb_id_t uct_progress_queue::add(ucs_callback_t func, void *arg,
                                           unsigned flags)
{
    std::lock_guard<std::mutex> guard(m_lock);
    uct_worker_cb_id_t          id = m_next_id;

    m_elems.push_back({func, arg, flags, id, false});
    m_next_id = (m_next_id == INT_MAX) ? 0 : (m_next_id + 1);
    return id;
}

bool uct_progress_queue::remove(uct_worker_cb_id_t id)
{
    std::lock_guard<std::mutex> guard(m_lock);

    for (elem &e : m_elems) {
        if ((e.id != id) || e.removed) {
            continue;
        }

        e.removed = true;
        ++m_num_removed;
        if (m_dispatch_depth == 0) {
            purge_locked();
        }
        return true;
    }
    return false;
}

unsigned uct_progress_queue::dispatch()
{
    unsigned count = 0;
    elem     current;

    {
        std::lock_guard<std::mutex> guard(m_lock);
        ++m_dispatch_depth;
    }

    /* The lock is not held while a callback runs: it may add or remove
     * callbacks, or progress the worker again */
    for (size_t i = 0; ; ++i) {
        {
            std::lock_guard<std::mutex> guard(m_lock);
            if (i >= m_elems.size()) {
                --m_dispatch_depth;
                if ((m_dispatch_depth == 0) && (m_num_removed > 0)) {
                    purge_locked();
                }
                break;
            }

            if (m_elems[i].removed) {
                continue;
            }

            current = m_elems[i];
            if (current.flags & UCS_CALLBACKQ_FLAG_ONESHOT) {
                m_elems[i].removed = true;
                ++m_num_removed;
            }
        }

        count += current.func(current.arg);
    }

    return count;
}

size_t uct_progress_queue::size() const
{
    std::lock_guard<std::mutex> guard(m_lock);

    return m_elems.size() - m_num_removed;
}

void uct_progress_queue::purge_locked()
{
    m_elems.erase(std::remove_if(m_elems.begin(), m_elems.end(),
                                 [](const elem &e) { return e.removed; }),
                  m_elems.end());
    m_num_removed = 0;
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

        worker              = new uct_worker();
        worker->async       = async;
        worker->thread_mode = thread_mode;
        *worker_p           = worker;
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
    return uct::value_guard(__func__, 0u, [worker]() {
        return worker->progress_q.dispatch();
    });
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
