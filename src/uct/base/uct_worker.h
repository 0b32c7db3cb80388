/*
 * Worker: the progress engine. It owns a list of progress callbacks (an
 * interface registers one through uct_base_iface_progress_enable()) and
 * calls each of them on every uct_worker_progress().
 */
#ifndef UCT_BASE_WORKER_H_
#define UCT_BASE_WORKER_H_

#include <uct/api/uct.h>

#include <atomic>
#include <mutex>
#include <vector>

/**
 * The callback list. Adding and removing are thread safe and allowed from
 * inside a callback; a callback removed during a dispatch is not called
 * after its removal.
 *
 * A dispatch takes no lock: it walks an immutable snapshot of the list, and
 * each callback's node says whether it was removed. Adding and removing
 * publish a new snapshot under the lock; the old ones, and the removed
 * nodes, are freed once no dispatch is walking any. A queue of a worker of
 * one thread (UCS_THREAD_MODE_SINGLE) is dispatched by that thread only,
 * so that thread frees them, when it enters a dispatch that is not nested
 * in another: its dispatch does no atomic read-modify-write. A queue of a
 * shared worker counts the dispatches walking (m_walkers), and the last one
 * out, or the next add or remove, frees them.
 *
 * The common case, a single-thread queue of one callback (an interface's
 * progress) with nothing to free, is one load and a tail call: m_solo names
 * that callback; an add or a remove clears it, and the next dispatch that
 * frees what they retired sets it again.
 */
class uct_progress_queue {
public:
    explicit uct_progress_queue(bool single_thread = false);
    ~uct_progress_queue();
    uct_progress_queue(const uct_progress_queue&)            = delete;
    uct_progress_queue &operator=(const uct_progress_queue&) = delete;

    /** Add a callback and return its id. May throw std::bad_alloc. */
    uct_worker_cb_id_t add(ucs_callback_t func, void *arg, unsigned flags);

    /** Remove a callback; false if @a id names none. */
    bool remove(uct_worker_cb_id_t id);

    /** Call every callback once; the sum of what they returned. */
    unsigned dispatch() noexcept;

    /** How many callbacks are registered. */
    size_t size() const;

private:
    /* node::state: 0 for a callback a dispatch just calls */
    static constexpr uint8_t REMOVED = 1;
    static constexpr uint8_t ONESHOT = 2;

    struct node {
        ucs_callback_t       func;
        void                 *arg;
        uct_worker_cb_id_t   id;
        std::atomic<uint8_t> state;
    };

    typedef std::vector<node*> snapshot; /* ends with a NULL sentinel */

    void remove_oneshot(node *n) noexcept;
    unsigned call_flagged(node *n) noexcept;
    void unlink_locked(node *gone);
    void publish_locked(snapshot *next);
    void reclaim_locked();
    void free_retired_locked();
    unsigned dispatch_walk() noexcept;
    inline unsigned walk(const snapshot &current);

    mutable std::mutex     m_lock;
    std::atomic<snapshot*> m_current;
    std::atomic<unsigned>  m_walkers{0};  /* dispatches walking a snapshot */
    std::atomic<bool>      m_retiring{false};
    std::vector<snapshot*> m_retired;     /* no longer current */
    std::vector<node*>     m_removed;     /* out of the current snapshot */
    uct_worker_cb_id_t     m_next_id = 0;
    const bool             m_single;      /* one thread dispatches */
    unsigned               m_depth = 0;   /* m_single: dispatches running */
    std::atomic<node*>     m_solo{nullptr}; /* m_single: called alone */
};


struct uct_worker {
    ucs_async_context_t *async;       /**< may be NULL */
    ucs_thread_mode_t   thread_mode;
    uct_progress_queue  progress_q;

    uct_worker(ucs_async_context_t *a, ucs_thread_mode_t mode) :
        async(a), thread_mode(mode),
        progress_q(mode == UCS_THREAD_MODE_SINGLE)
    {
    }
};

#endif
