/*
 * Asynchronous events: file descriptors and timers whose callbacks run
 * outside the caller's progress loop.
 *
 * A context is created in one of these modes:
 *  - THREAD_SPINLOCK, THREAD_MUTEX: a progress thread owned by the library
 *    watches the context's handlers and calls their callbacks under the
 *    context's lock (a spinlock or a mutex, as the mode says);
 *  - POLL: nothing runs by itself; ucs_async_poll() dispatches what is due.
 * SIGNAL mode is not provided: creating such a context fails with
 * UCS_ERR_UNSUPPORTED.
 *
 * UCS_ASYNC_BLOCK()/UCS_ASYNC_UNBLOCK() keep callbacks of a context out of
 * a critical section. An event that finds its context blocked is not lost:
 * it is kept as "missed" and dispatched by ucs_async_check_miss() (called
 * by the worker's progress) or by the progress thread once unblocked.
 */
#ifndef UCS_ASYNC_ASYNC_H_
#define UCS_ASYNC_ASYNC_H_

#include <ucs/async/async_fwd.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/event_set.h>
#include <ucs/time/time.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

typedef enum {
    UCS_ASYNC_MODE_SIGNAL,
    UCS_ASYNC_MODE_THREAD,
    UCS_ASYNC_MODE_THREAD_SPINLOCK = UCS_ASYNC_MODE_THREAD,
    UCS_ASYNC_MODE_THREAD_MUTEX,
    UCS_ASYNC_MODE_POLL,
    UCS_ASYNC_MODE_LAST
} ucs_async_mode_t;

/** Names of the modes, by value ("signal", "thread_spinlock", ...) */
extern const char *ucs_async_mode_names[];

/**
 * A handler's callback: @a id is the file descriptor or the timer id, @a
 * events what happened (UCS_EVENT_SET_*; 0 for a timer).
 */
typedef void (*ucs_async_event_cb_t)(int id, ucs_event_set_types_t events,
                                     void *arg);

/** Create a context in @a mode (see above). */
ucs_status_t ucs_async_context_create(ucs_async_mode_t mode,
                                      ucs_async_context_t **async_p);

/**
 * Destroy @a async. Handlers still registered on it are removed (with a
 * warning) and waited for if one is running.
 */
void ucs_async_context_destroy(ucs_async_context_t *async);

/**
 * Call @a cb when @a event_fd has one of @a events, in @a mode (the
 * context's mode, or POLL for a handler only ucs_async_poll() watches).
 * The handler's id is the file descriptor. UCS_ERR_ALREADY_EXISTS if the fd
 * has a handler, UCS_ERR_INVALID_PARAM for a bad fd or mode.
 */
ucs_status_t ucs_async_set_event_handler(ucs_async_mode_t mode, int event_fd,
                                         ucs_event_set_types_t events,
                                         ucs_async_event_cb_t cb, void *arg,
                                         ucs_async_context_t *async);

/** Change the events a file descriptor handler waits for. */
ucs_status_t ucs_async_modify_handler(int fd, ucs_event_set_types_t events);

/**
 * Call @a cb every @a interval (a ucs_time_t, > 0) from now on; the timer's
 * id goes to @a timer_id_p.
 */
ucs_status_t ucs_async_add_timer(ucs_async_mode_t mode, ucs_time_t interval,
                                 ucs_async_event_cb_t cb, void *arg,
                                 ucs_async_context_t *async, int *timer_id_p);

/**
 * Remove the handler @a id (a file descriptor or a timer id). With @a sync,
 * wait until its callback is not running any more (unless called from that
 * callback). UCS_ERR_NO_ELEM for an unknown id.
 */
ucs_status_t ucs_async_remove_handler(int id, int sync);

/**
 * Dispatch what is due on @a async now: events of its POLL handlers, its
 * expired timers, and missed events. NULL polls every context.
 */
void ucs_async_poll(ucs_async_context_t *async);

/** Dispatch the events that found @a async blocked. */
void ucs_async_check_miss(ucs_async_context_t *async);

/** Keep callbacks of @a async out until the matching unblock (recursive). */
void ucs_async_block(ucs_async_context_t *async);
void ucs_async_unblock(ucs_async_context_t *async);

#define UCS_ASYNC_BLOCK(_async)   ucs_async_block(_async)
#define UCS_ASYNC_UNBLOCK(_async) ucs_async_unblock(_async)

END_C_DECLS

#endif
