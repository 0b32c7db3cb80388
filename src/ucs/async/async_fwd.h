/*
 * The asynchronous event context and its public API, as UCX declares them:
 * a program that includes only <uct/api/uct.h> can create the context
 * uct_worker_create() takes. ucs_async_mode_t is in <ucs/config/types.h>.
 * Blocking sections and the mode names are in <ucs/async/async.h>.
 */
#ifndef UCS_ASYNC_ASYNC_FWD_H_
#define UCS_ASYNC_ASYNC_FWD_H_

#include <ucs/config/types.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/event_set.h>
#include <ucs/time/time.h>
#include <ucs/type/status.h>

BEGIN_C_DECLS

typedef struct ucs_async_context ucs_async_context_t;

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

END_C_DECLS

#endif
