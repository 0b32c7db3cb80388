/*
 * The kinds of events a file descriptor handler waits for.
 */
#ifndef UCS_SYS_EVENT_SET_H_
#define UCS_SYS_EVENT_SET_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

typedef enum {
    UCS_EVENT_SET_EVREAD         = UCS_BIT(0), /**< readable */
    UCS_EVENT_SET_EVWRITE        = UCS_BIT(1), /**< writable */
    UCS_EVENT_SET_EVERR          = UCS_BIT(2), /**< error or hang-up */
    UCS_EVENT_SET_EDGE_TRIGGERED = UCS_BIT(3)  /**< report changes only */
} ucs_event_set_types_t;

END_C_DECLS

#endif
