/*
 * The asynchronous event context, as an opaque type: this library does not
 * provide one yet, so every API taking it accepts NULL.
 */
#ifndef UCS_ASYNC_ASYNC_FWD_H_
#define UCS_ASYNC_ASYNC_FWD_H_

typedef struct ucs_async_context ucs_async_context_t;

#endif
