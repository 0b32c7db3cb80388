/*
 * Worker: the progress engine. It owns a list of progress callbacks (an
 * interface registers one through uct_base_iface_progress_enable()) and
 * calls each of them on every uct_worker_progress().
 */
#ifndef UCT_BASE_WORKER_H_
#define UCT_BASE_WORKER_H_

#include <uct/api/uct.h>

#include <mutex>
#include <vector>

/**
 * The callback list. Adding and removing are thread safe and allowed from
 * inside a callback; a callback removed during a dispatch is not called
 * after its removal.
 */
class uct_progress_queue {
public:
    uct_progress_queue()                                      = default;
    uct_progress_queue(const uct_progress_queue&)            = delete;
    uct_progress_queue &operator=(const uct_progress_queue&) = delete;

    /** Add a callback and return its id. May throw std::bad_alloc. */
    uct_worker_cb_id_t add(ucs_callback_t func, void *arg, unsigned flags);

    /** Remove a callback; false if @a id names none. */
    bool remove(uct_worker_cb_id_t id);

    /** Call every callback once; the sum of what they returned. */
    unsigned dispatch();

    /** How many callbacks are registered. */
    size_t size() const;

private:
    struct elem {
        ucs_callback_t     func;
        void               *arg;
        unsigned           flags;
        uct_worker_cb_id_t id;
        bool               removed;
    };

    void purge_locked();

    mutable std::mutex  m_lock;
    std::vector<elem>   m_elems;
    uct_worker_cb_id_t  m_next_id        = 0;
    unsigned            m_dispatch_depth = 0; /* > 0: mark, do not erase */
    size_t              m_num_removed    = 0; /* marked, not yet erased */
};


struct uct_worker {
    ucs_async_context_t *async;       /**< may be NULL */
    ucs_thread_mode_t   thread_mode;
    uct_progress_queue  progress_q;
};

#endif
