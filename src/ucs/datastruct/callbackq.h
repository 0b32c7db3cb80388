/*
 * Progress callbacks: the type of a function a worker calls on every
 * progress, its identifier and its flags.
 */
#ifndef UCS_DATASTRUCT_CALLBACKQ_H_
#define UCS_DATASTRUCT_CALLBACKQ_H_

#include <ucs/sys/compiler_def.h>

BEGIN_C_DECLS

/** "No callback": the initial value of an identifier. */
#define UCS_CALLBACKQ_ID_NULL (-1)

/**
 * A progress callback.
 * @return how much work it did (0 when there was nothing to do).
 */
typedef unsigned (*ucs_callback_t)(void *arg);

enum ucs_callbackq_flags {
    UCS_CALLBACKQ_FLAG_FAST    = UCS_BIT(0), /**< called on the fast path */
    UCS_CALLBACKQ_FLAG_ONESHOT = UCS_BIT(1)  /**< removed after one call */
};

END_C_DECLS

#endif
