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

BEGIN_C_DECLS

/** Names of the modes, by value ("signal", "thread_spinlock", ...) */
extern const char *ucs_async_mode_names[];

/** Dispatch the events that found @a async blocked. */
void ucs_async_check_miss(ucs_async_context_t *async);

/** Keep callbacks of @a async out until the matching unblock (recursive). */
void ucs_async_block(ucs_async_context_t *async);
void ucs_async_unblock(ucs_async_context_t *async);

#define UCS_ASYNC_BLOCK(_async)   ucs_async_block(_async)
#define UCS_ASYNC_UNBLOCK(_async) ucs_async_unblock(_async)

END_C_DECLS

#endif
