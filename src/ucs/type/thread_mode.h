/*
 * How many threads may use an object (a worker and what hangs off it).
 */
#ifndef UCS_TYPE_THREAD_MODE_H_
#define UCS_TYPE_THREAD_MODE_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/** Thread access mode, in increasing order of what the caller may do. */
typedef enum {
    UCS_THREAD_MODE_SINGLE,     /**< one thread, always the same one */
    UCS_THREAD_MODE_SERIALIZED, /**< several threads, never at once */
    UCS_THREAD_MODE_MULTI,      /**< several threads at the same time */
    UCS_THREAD_MODE_LAST
} ucs_thread_mode_t;

END_C_DECLS

#endif
