/*
 * Interface and endpoint base: the objects a transport's iface_open and
 * ep_create return, and the operation table the public uct_iface_* and
 * uct_ep_* calls dispatch through.
 *
 * A transport's interface derives from uct_base_iface (which derives from
 * uct_iface), its endpoints from uct_ep, and the interface points at one
 * const operation table in which no slot is NULL:
 *
 *     static const uct_iface_ops_t uct_yyy_iface_ops = {
 *         .ep_create                = uct_yyy_ep_create,
 *         .ep_destroy               = uct_yyy_ep_destroy,
 *         .ep_get_address           = uct_yyy_ep_get_address,
 *         .ep_connect_to_ep_v2      = uct_yyy_ep_connect_to_ep_v2,
 *         .iface_close              = uct_yyy_iface_close,
 *         .iface_query              = uct_yyy_iface_query,
 *         .iface_get_device_address = uct_yyy_iface_get_device_address,
 *         .iface_get_address        = uct_iface_get_address_empty,
 *         .iface_is_reachable_v2    = uct_yyy_iface_is_reachable_v2,
 *         .iface_progress_enable    = uct_base_iface_progress_enable,
 *         .iface_progress_disable   = uct_base_iface_progress_disable,
 *         .iface_progress           = uct_yyy_iface_progress
 *     };
 *
 * iface_open allocates the interface, calls uct_base_iface_init() first and
 * uct_base_iface_cleanup() in iface_close. The v1 calls
 * (uct_iface_is_reachable, uct_ep_connect_to_ep) are implemented by the core
 * on top of the v2 operations, so a transport implements only those.
 *
 * What the core checks before an operation runs: non-NULL handles and
 * parameter structures, the field_mask bits the API requires, and for
 * uct_iface_open the open mode, transport and device names. It zeroes
 * uct_iface_attr_t before iface_query and empties a reachability info string
 * before iface_is_reachable_v2.
 */
#ifndef UCT_BASE_IFACE_H_
#define UCT_BASE_IFACE_H_

#include <uct/base/uct_component.h>

#include <uct/api/uct.h>
#include <uct/api/v2/uct_v2.h>
#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

/* Endpoint operations */
typedef ucs_status_t (*uct_ep_create_func_t)(const uct_ep_params_t *params,
                                             uct_ep_h *ep_p);
typedef void         (*uct_ep_destroy_func_t)(uct_ep_h ep);
typedef ucs_status_t (*uct_ep_get_address_func_t)(uct_ep_h ep,
                                                  uct_ep_addr_t *addr);
typedef ucs_status_t (*uct_ep_connect_to_ep_v2_func_t)(
        uct_ep_h ep, const uct_device_addr_t *device_addr,
        const uct_ep_addr_t *ep_addr,
        const uct_ep_connect_to_ep_params_t *params);

/* Interface operations */
typedef void         (*uct_iface_close_func_t)(uct_iface_h iface);
typedef ucs_status_t (*uct_iface_query_func_t)(uct_iface_h iface,
                                               uct_iface_attr_t *iface_attr);
typedef ucs_status_t (*uct_iface_get_device_address_func_t)(
        uct_iface_h iface, uct_device_addr_t *addr);
typedef ucs_status_t (*uct_iface_get_address_func_t)(uct_iface_h iface,
                                                     uct_iface_addr_t *addr);
typedef int          (*uct_iface_is_reachable_v2_func_t)(
        uct_iface_h iface, const uct_iface_is_reachable_params_t *params);
typedef void         (*uct_iface_progress_enable_func_t)(uct_iface_h iface,
                                                         unsigned flags);
typedef void         (*uct_iface_progress_disable_func_t)(uct_iface_h iface,
                                                          unsigned flags);
typedef unsigned     (*uct_iface_progress_func_t)(uct_iface_h iface);

/* Data path operations, in the order of uct_iface_ops_t */
typedef ucs_status_t (*uct_ep_am_short_func_t)(uct_ep_h ep, uint8_t id,
        uint64_t header, const void *payload, unsigned length);
typedef ucs_status_t (*uct_ep_am_short_iov_func_t)(uct_ep_h ep, uint8_t id,
        const uct_iov_t *iov, size_t iovcnt);
typedef ssize_t (*uct_ep_am_bcopy_func_t)(uct_ep_h ep, uint8_t id,
        uct_pack_callback_t pack_cb, void *arg, unsigned flags);
typedef ucs_status_t (*uct_ep_am_zcopy_func_t)(uct_ep_h ep, uint8_t id,
        const void *header, unsigned header_length, const uct_iov_t *iov,
        size_t iovcnt, unsigned flags, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_put_short_func_t)(uct_ep_h ep, const void *buffer,
        unsigned length, uint64_t remote_addr, uct_rkey_t rkey);
typedef ssize_t (*uct_ep_put_bcopy_func_t)(uct_ep_h ep,
        uct_pack_callback_t pack_cb, void *arg, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_put_zcopy_func_t)(uct_ep_h ep,
        const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr,
        uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_get_short_func_t)(uct_ep_h ep, void *buffer,
        unsigned length, uint64_t remote_addr, uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_get_bcopy_func_t)(uct_ep_h ep,
        uct_unpack_callback_t unpack_cb, void *arg, size_t length,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_get_zcopy_func_t)(uct_ep_h ep,
        const uct_iov_t *iov, size_t iovcnt, uint64_t remote_addr,
        uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic_cswap64_func_t)(uct_ep_h ep,
        uint64_t compare, uint64_t swap, uint64_t remote_addr, uct_rkey_t rkey,
        uint64_t *result, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic_cswap32_func_t)(uct_ep_h ep,
        uint32_t compare, uint32_t swap, uint64_t remote_addr, uct_rkey_t rkey,
        uint32_t *result, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic32_post_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint32_t value, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_atomic64_post_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint64_t value, uint64_t remote_addr,
        uct_rkey_t rkey);
typedef ucs_status_t (*uct_ep_atomic32_fetch_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint32_t value, uint32_t *result,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_atomic64_fetch_func_t)(uct_ep_h ep,
        uct_atomic_op_t opcode, uint64_t value, uint64_t *result,
        uint64_t remote_addr, uct_rkey_t rkey, uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_pending_add_func_t)(uct_ep_h ep,
        uct_pending_req_t *req, unsigned flags);
typedef void (*uct_ep_pending_purge_func_t)(uct_ep_h ep,
        uct_pending_purge_callback_t cb, void *arg);
typedef ucs_status_t (*uct_ep_flush_func_t)(uct_ep_h ep, unsigned flags,
        uct_completion_t *comp);
typedef ucs_status_t (*uct_ep_fence_func_t)(uct_ep_h ep, unsigned flags);
typedef ucs_status_t (*uct_ep_check_func_t)(uct_ep_h ep, unsigned flags,
        uct_completion_t *comp);
typedef ucs_status_t (*uct_iface_flush_func_t)(uct_iface_h iface,
        unsigned flags, uct_completion_t *comp);
typedef ucs_status_t (*uct_iface_fence_func_t)(uct_iface_h iface,
        unsigned flags);
typedef ucs_status_t (*uct_iface_event_fd_get_func_t)(uct_iface_h iface,
        int *fd_p);
typedef ucs_status_t (*uct_iface_event_arm_func_t)(uct_iface_h iface,
        unsigned events);

typedef struct uct_iface_ops {
    uct_ep_create_func_t                ep_create;
    uct_ep_destroy_func_t               ep_destroy;
    uct_ep_get_address_func_t           ep_get_address;
    uct_ep_connect_to_ep_v2_func_t      ep_connect_to_ep_v2;
    uct_iface_close_func_t              iface_close;
    uct_iface_query_func_t              iface_query;
    uct_iface_get_device_address_func_t iface_get_device_address;
    uct_iface_get_address_func_t        iface_get_address;
    uct_iface_is_reachable_v2_func_t    iface_is_reachable_v2;
    uct_iface_progress_enable_func_t    iface_progress_enable;
    uct_iface_progress_disable_func_t   iface_progress_disable;
    uct_iface_progress_func_t           iface_progress;

    /* Data path: the public calls are a direct call of these (no checks,
     * no lock), so a transport validates what it must itself */
    uct_ep_am_short_func_t                 ep_am_short;
    uct_ep_am_short_iov_func_t             ep_am_short_iov;
    uct_ep_am_bcopy_func_t                 ep_am_bcopy;
    uct_ep_am_zcopy_func_t                 ep_am_zcopy;
    uct_ep_put_short_func_t                ep_put_short;
    uct_ep_put_bcopy_func_t                ep_put_bcopy;
    uct_ep_put_zcopy_func_t                ep_put_zcopy;
    uct_ep_get_short_func_t                ep_get_short;
    uct_ep_get_bcopy_func_t                ep_get_bcopy;
    uct_ep_get_zcopy_func_t                ep_get_zcopy;
    uct_ep_atomic_cswap64_func_t           ep_atomic_cswap64;
    uct_ep_atomic_cswap32_func_t           ep_atomic_cswap32;
    uct_ep_atomic32_post_func_t            ep_atomic32_post;
    uct_ep_atomic64_post_func_t            ep_atomic64_post;
    uct_ep_atomic32_fetch_func_t           ep_atomic32_fetch;
    uct_ep_atomic64_fetch_func_t           ep_atomic64_fetch;
    uct_ep_pending_add_func_t              ep_pending_add;
    uct_ep_pending_purge_func_t            ep_pending_purge;
    uct_ep_flush_func_t                    ep_flush;
    uct_ep_fence_func_t                    ep_fence;
    uct_ep_check_func_t                    ep_check;
    uct_iface_flush_func_t                 iface_flush;
    uct_iface_fence_func_t                 iface_fence;
    uct_iface_event_fd_get_func_t          iface_event_fd_get;
    uct_iface_event_arm_func_t             iface_event_arm;
} uct_iface_ops_t;

/*
 * The data path slots of a transport that moves no data, as the tail of
 * its designated initialiser (after .iface_progress):
 *     .iface_progress = ..., UCT_IFACE_OPS_NO_DATA_PATH
 */
#define UCT_IFACE_OPS_NO_DATA_PATH \
    .ep_am_short = uct_ep_am_short_unsupported, \
    .ep_am_short_iov = uct_ep_am_short_iov_unsupported, \
    .ep_am_bcopy = uct_ep_am_bcopy_unsupported, \
    .ep_am_zcopy = uct_ep_am_zcopy_unsupported, \
    .ep_put_short = uct_ep_put_short_unsupported, \
    .ep_put_bcopy = uct_ep_put_bcopy_unsupported, \
    .ep_put_zcopy = uct_ep_put_zcopy_unsupported, \
    .ep_get_short = uct_ep_get_short_unsupported, \
    .ep_get_bcopy = uct_ep_get_bcopy_unsupported, \
    .ep_get_zcopy = uct_ep_get_zcopy_unsupported, \
    .ep_atomic_cswap64 = uct_ep_atomic_cswap64_unsupported, \
    .ep_atomic_cswap32 = uct_ep_atomic_cswap32_unsupported, \
    .ep_atomic32_post = uct_ep_atomic32_post_unsupported, \
    .ep_atomic64_post = uct_ep_atomic64_post_unsupported, \
    .ep_atomic32_fetch = uct_ep_atomic32_fetch_unsupported, \
    .ep_atomic64_fetch = uct_ep_atomic64_fetch_unsupported, \
    .ep_pending_add = uct_ep_pending_add_unsupported, \
    .ep_pending_purge = uct_ep_pending_purge_unsupported, \
    .ep_flush = uct_ep_flush_unsupported, \
    .ep_fence = uct_ep_fence_unsupported, \
    .ep_check = uct_ep_check_unsupported, \
    .iface_flush = uct_iface_flush_unsupported, \
    .iface_fence = uct_iface_fence_unsupported, \
    .iface_event_fd_get = uct_iface_event_fd_get_unsupported, \
    .iface_event_arm = uct_iface_event_arm_unsupported



/** Base of every interface. */
struct uct_iface {
    const uct_iface_ops_t *ops;
};

/*
 * Receive descriptors (UCT_CB_PARAM_FLAG_DESC): the pointer an active
 * message callback gets is preceded by a pointer to the uct_recv_desc_t
 * whose cb releases it:
 *
 *     [ uct_recv_desc_t* | desc (rx_headroom bytes, then the data) ]
 */
typedef struct uct_recv_desc uct_recv_desc_t;
typedef void (*uct_desc_release_callback_t)(uct_recv_desc_t *self, void *desc);

struct uct_recv_desc {
    uct_desc_release_callback_t cb;
};

static inline uct_recv_desc_t *&uct_recv_desc_of(void *desc)
{
    return *(static_cast<uct_recv_desc_t**>(desc) - 1);
}

/* One active message id's handler */
typedef struct uct_am_handler {
    uct_am_callback_t cb;
    void              *arg;
    uint32_t          flags;
} uct_am_handler_t;

/** Base of every endpoint; the transport sets iface in ep_create. */
struct uct_ep {
    uct_iface_h iface;
};

typedef struct uct_ep uct_ep_t;


/**
 * Base of every interface configuration. A transport's configuration embeds
 * it as its first member "super" and its table starts with
 *   {"", "", NULL, offsetof(uct_yyy_iface_config_t, super),
 *    UCS_CONFIG_TYPE_TABLE(uct_iface_config_table)}
 */
struct uct_iface_config {
    size_t        max_short;   /**< MAX_SHORT */
    size_t        max_bcopy;   /**< MAX_BCOPY */
    unsigned long max_num_eps; /**< MAX_NUM_EPS, UCS_ULUNITS_INF = no limit */
    int           failure;     /**< FAILURE: a ucs_log_level_t */
};

extern ucs_config_field_t uct_iface_config_table[];


/** What every interface keeps: where it lives and what the user asked. */
typedef struct uct_base_iface : uct_iface {
    uct_md_h            md;
    uct_worker_h        worker;
    uct_error_handler_t err_handler;       /**< NULL if not given */
    void                *err_handler_arg;
    uint32_t            err_handler_flags;
    size_t              rx_headroom;

    struct {
        size_t          max_short;
        size_t          max_bcopy;
        unsigned long   max_num_eps;
        ucs_log_level_t failure_level; /**< of a failure the error handler
                                            gets; without one: error */
    } config;                              /**< from uct_iface_config */

    unsigned            progress_flags;    /**< UCT_PROGRESS_SEND/RECV enabled */
    uct_worker_cb_id_t  progress_id;       /**< worker callback, or ID_NULL */
    ucs_callback_t      progress_cb;       /**< what the worker calls, with the
                                                interface: one that calls
                                                ops->iface_progress, unless
                                                the transport sets its own */
    uct_am_handler_t    am[UCT_AM_ID_MAX]; /**< by id; a stub that warns */
} uct_base_iface_t;

/** Deliver an active message to the handler of @a id (< UCT_AM_ID_MAX). */
static inline ucs_status_t
uct_iface_invoke_am(uct_base_iface_t *iface, uint8_t id, void *data,
                    size_t length, unsigned flags)
{
    return iface->am[id].cb(iface->am[id].arg, data, length, flags);
}

/** Complete one operation of @a comp (if any) with @a status. */
static inline void uct_invoke_completion(uct_completion_t *comp,
                                         ucs_status_t status)
{
    uct_completion_update_status(comp, status);
    if (--comp->count == 0) {
        comp->func(comp);
    }
}

/**
 * Initialise the base part of an interface: @a ops, owners, the optional
 * parameters (error handler, rx headroom) and the common configuration.
 */
[[nodiscard]] ucs_status_t
uct_base_iface_init(uct_base_iface_t *iface, const uct_iface_ops_t *ops,
                    uct_md_h md, uct_worker_h worker,
                    const uct_iface_params_t *params,
                    const uct_iface_config_t *config);

/** Undo uct_base_iface_init(): removes the progress callback if any. */
void uct_base_iface_cleanup(uct_base_iface_t *iface);

/** Fill what the base knows: max_num_eps, dev_num_paths = 1. */
void uct_base_iface_query(const uct_base_iface_t *iface,
                          uct_iface_attr_t *iface_attr);

/**
 * Default progress control: the worker calls ops->iface_progress while SEND
 * or RECV progress is enabled.
 */
void uct_base_iface_progress_enable(uct_iface_h tl_iface, unsigned flags);

void uct_base_iface_progress_disable(uct_iface_h tl_iface, unsigned flags);


/**
 * For transports' iface_is_reachable_v2: whether @a params has all bits of
 * @a required_mask; logs an error naming the missing bits if not.
 */
int uct_iface_is_reachable_params_valid(
        const uct_iface_is_reachable_params_t *params, uint64_t required_mask);

/** The requested scope, UCT_IFACE_REACHABILITY_SCOPE_NETWORK if not set. */
uct_iface_reachability_scope_t
uct_iface_is_reachable_params_scope(const uct_iface_is_reachable_params_t *params);

/** Write the reason a peer is unreachable into params->info_string, if the
 *  caller gave one. */
void uct_iface_fill_info_str_buf(const uct_iface_is_reachable_params_t *params,
                                 const char *fmt, ...) UCS_F_PRINTF(2, 3);


/* Stubs for interface slots */

/** No address of that kind (its length is 0): UCS_OK, nothing written. */
ucs_status_t uct_iface_get_device_address_empty(uct_iface_h iface,
                                                uct_device_addr_t *addr);

ucs_status_t uct_iface_get_address_empty(uct_iface_h iface,
                                         uct_iface_addr_t *addr);

/** UCS_ERR_UNSUPPORTED */
ucs_status_t uct_ep_create_unsupported(const uct_ep_params_t *params,
                                       uct_ep_h *ep_p);

ucs_status_t uct_ep_get_address_unsupported(uct_ep_h ep, uct_ep_addr_t *addr);

ucs_status_t uct_ep_connect_to_ep_v2_unsupported(
        uct_ep_h ep, const uct_device_addr_t *device_addr,
        const uct_ep_addr_t *ep_addr,
        const uct_ep_connect_to_ep_params_t *params);

/** Nothing to progress: 0. */
unsigned uct_iface_progress_nop(uct_iface_h iface);

/* Stubs for the data path slots: UCS_ERR_UNSUPPORTED (purge: nothing) */
ucs_status_t uct_ep_am_short_unsupported(uct_ep_h, uint8_t, uint64_t,
        const void*, unsigned);

ucs_status_t uct_ep_am_short_iov_unsupported(uct_ep_h, uint8_t,
        const uct_iov_t*, size_t);

ssize_t uct_ep_am_bcopy_unsupported(uct_ep_h, uint8_t, uct_pack_callback_t,
        void*, unsigned);

ucs_status_t uct_ep_am_zcopy_unsupported(uct_ep_h, uint8_t, const void*,
        unsigned, const uct_iov_t*, size_t, unsigned, uct_completion_t*);

ucs_status_t uct_ep_put_short_unsupported(uct_ep_h, const void*, unsigned,
        uint64_t, uct_rkey_t);

ssize_t uct_ep_put_bcopy_unsupported(uct_ep_h, uct_pack_callback_t, void*,
        uint64_t, uct_rkey_t);

ucs_status_t uct_ep_put_zcopy_unsupported(uct_ep_h, const uct_iov_t*, size_t,
        uint64_t, uct_rkey_t, uct_completion_t*);

ucs_status_t uct_ep_get_short_unsupported(uct_ep_h, void*, unsigned, uint64_t,
        uct_rkey_t);

ucs_status_t uct_ep_get_bcopy_unsupported(uct_ep_h, uct_unpack_callback_t,
        void*, size_t, uint64_t, uct_rkey_t, uct_completion_t*);

ucs_status_t uct_ep_get_zcopy_unsupported(uct_ep_h, const uct_iov_t*, size_t,
        uint64_t, uct_rkey_t, uct_completion_t*);

ucs_status_t uct_ep_atomic_cswap64_unsupported(uct_ep_h, uint64_t, uint64_t,
        uint64_t, uct_rkey_t, uint64_t*, uct_completion_t*);

ucs_status_t uct_ep_atomic_cswap32_unsupported(uct_ep_h, uint32_t, uint32_t,
        uint64_t, uct_rkey_t, uint32_t*, uct_completion_t*);

ucs_status_t uct_ep_atomic32_post_unsupported(uct_ep_h, uct_atomic_op_t,
        uint32_t, uint64_t, uct_rkey_t);

ucs_status_t uct_ep_atomic64_post_unsupported(uct_ep_h, uct_atomic_op_t,
        uint64_t, uint64_t, uct_rkey_t);

ucs_status_t uct_ep_atomic32_fetch_unsupported(uct_ep_h, uct_atomic_op_t,
        uint32_t, uint32_t*, uint64_t, uct_rkey_t, uct_completion_t*);

ucs_status_t uct_ep_atomic64_fetch_unsupported(uct_ep_h, uct_atomic_op_t,
        uint64_t, uint64_t*, uint64_t, uct_rkey_t, uct_completion_t*);

ucs_status_t uct_ep_pending_add_unsupported(uct_ep_h, uct_pending_req_t*,
        unsigned);

void uct_ep_pending_purge_unsupported(uct_ep_h, uct_pending_purge_callback_t,
        void*);

ucs_status_t uct_ep_flush_unsupported(uct_ep_h, unsigned, uct_completion_t*);

ucs_status_t uct_ep_fence_unsupported(uct_ep_h, unsigned);

ucs_status_t uct_ep_check_unsupported(uct_ep_h, unsigned, uct_completion_t*);

ucs_status_t uct_iface_flush_unsupported(uct_iface_h, unsigned,
        uct_completion_t*);

ucs_status_t uct_iface_fence_unsupported(uct_iface_h, unsigned);

ucs_status_t uct_iface_event_fd_get_unsupported(uct_iface_h, int*);

ucs_status_t uct_iface_event_arm_unsupported(uct_iface_h, unsigned);


#endif
