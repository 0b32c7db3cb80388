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
} uct_iface_ops_t;


/** Base of every interface. */
struct uct_iface {
    const uct_iface_ops_t *ops;
};

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
    } config;                              /**< from uct_iface_config */

    unsigned            progress_flags;    /**< UCT_PROGRESS_SEND/RECV enabled */
    uct_worker_cb_id_t  progress_id;       /**< worker callback, or ID_NULL */
} uct_base_iface_t;

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

#endif
