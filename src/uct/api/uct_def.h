/*
 * UCT basic definitions: name lengths, handle types and callback types.
 * The names, sizes and signatures are those of UCX's uct_def.h, so code
 * written against UCX's transport API compiles against this one.
 */
#ifndef UCT_DEF_H_
#define UCT_DEF_H_

#include <ucs/sys/compiler_def.h>
#include <ucs/sys/sock_addr.h>
#include <ucs/type/status.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

BEGIN_C_DECLS

/* Sizes of the fixed name buffers, terminating '\0' included */
#define UCT_COMPONENT_NAME_MAX     16
#define UCT_TL_NAME_MAX            10
#define UCT_MD_NAME_MAX            16
#define UCT_DEVICE_NAME_MAX        32

#define UCT_MEM_HANDLE_NULL        NULL
#define UCT_INVALID_RKEY           ((uintptr_t)(-1))

/* Active message ids: 0 .. UCT_AM_ID_MAX - 1 */
#define UCT_AM_ID_BITS             5
#define UCT_AM_ID_MAX              UCS_BIT(UCT_AM_ID_BITS)

/* Bytes a transport may use inside a pending request */
#define UCT_PENDING_REQ_PRIV_LEN   40


/**
 * @defgroup UCT_HANDLES UCT object and address handles
 * @{
 */
typedef struct uct_component         *uct_component_h; /**< transport family */
typedef struct uct_md                *uct_md_h;        /**< memory domain */
typedef struct uct_iface             *uct_iface_h;     /**< interface */
typedef struct uct_ep                *uct_ep_h;        /**< endpoint */
typedef struct uct_worker            *uct_worker_h;    /**< progress engine */
typedef struct uct_md                uct_md_t;
typedef struct uct_md_ops            uct_md_ops_t;
typedef struct uct_md_config         uct_md_config_t;
typedef struct uct_iface_config      uct_iface_config_t;
typedef struct uct_cm_config         uct_cm_config_t;
typedef struct uct_iface_attr        uct_iface_attr_t;
typedef struct uct_iface_params      uct_iface_params_t;
typedef struct uct_md_attr           uct_md_attr_t;
typedef struct uct_ep_params         uct_ep_params_t;
typedef struct uct_completion        uct_completion_t;
typedef struct uct_pending_req       uct_pending_req_t;
typedef struct uct_iov               uct_iov_t;
typedef struct uct_cm                uct_cm_t;
typedef uct_cm_t                     *uct_cm_h;
typedef void                         *uct_mem_h;       /**< registered memory */
typedef uintptr_t                    uct_rkey_t;       /**< unpacked remote key */
typedef uint64_t                     uct_tag_t;
typedef int                          uct_worker_cb_id_t;
typedef void                         *uct_conn_request_h;

/* Addresses are opaque byte strings whose length the interface reports */
typedef struct uct_device_addr       uct_device_addr_t;
typedef struct uct_iface_addr        uct_iface_addr_t;
typedef struct uct_ep_addr           uct_ep_addr_t;

/* Arguments of the client-server callbacks (that part is not provided) */
typedef struct uct_cm_ep_priv_data_pack_args   uct_cm_ep_priv_data_pack_args_t;
typedef struct uct_cm_ep_resolve_args          uct_cm_ep_resolve_args_t;
typedef struct uct_cm_ep_client_connect_args   uct_cm_ep_client_connect_args_t;
typedef struct uct_cm_ep_server_conn_notify_args
                                               uct_cm_ep_server_conn_notify_args_t;
/** @} */


/**
 * Called by a transport when an endpoint fails.
 * @return UCS_OK if the failure was handled, the failure status otherwise.
 */
typedef ucs_status_t (*uct_error_handler_t)(void *arg, uct_ep_h ep,
                                            ucs_status_t status);

/** Incoming connection request on a sockaddr server interface. */
typedef void (*uct_sockaddr_conn_request_callback_t)(
        uct_iface_h iface, void *arg, uct_conn_request_h conn_request,
        const void *conn_priv_data, size_t length);

/** Unexpected eager message of hardware tag matching. */
typedef ucs_status_t (*uct_tag_unexp_eager_cb_t)(void *arg, void *data,
                                                 size_t length, unsigned flags,
                                                 uct_tag_t stag, uint64_t imm,
                                                 void **context);

/** Unexpected rendezvous request of hardware tag matching. */
typedef ucs_status_t (*uct_tag_unexp_rndv_cb_t)(void *arg, unsigned flags,
                                                uint64_t stag,
                                                const void *header,
                                                unsigned header_length,
                                                uint64_t remote_addr,
                                                size_t length,
                                                const void *rkey_buf);

/** Flags of a received active message or unexpected tag (uct_am_callback_t). */
enum uct_cb_param_flags {
    /** @a data is a descriptor the callback may keep: returning
     *  UCS_INPROGRESS keeps it until uct_iface_release_desc() */
    UCT_CB_PARAM_FLAG_DESC  = UCS_BIT(0),
    UCT_CB_PARAM_FLAG_FIRST = UCS_BIT(1), /**< first fragment */
    UCT_CB_PARAM_FLAG_MORE  = UCS_BIT(2)  /**< more fragments follow */
};

/**
 * A received active message: @a data, @a length bytes (the header the
 * sender gave first). UCS_OK: done with @a data; UCS_INPROGRESS (only with
 * UCT_CB_PARAM_FLAG_DESC): @a data stays valid until uct_iface_release_desc().
 */
typedef ucs_status_t (*uct_am_callback_t)(void *arg, void *data, size_t length,
                                          unsigned flags);

/** Fill @a dest (at most the transport's bcopy limit); @return the length. */
typedef size_t (*uct_pack_callback_t)(void *dest, void *arg);

/** Take @a length bytes of fetched data. */
typedef void (*uct_unpack_callback_t)(void *arg, const void *data,
                                      size_t length);

/** A completion's count reached 0. */
typedef void (*uct_completion_callback_t)(uct_completion_t *self);

/** Try a queued request again: UCS_OK (done, removed), UCS_INPROGRESS
 *  (started, removed), or UCS_ERR_NO_RESOURCE (stays first in the queue). */
typedef ucs_status_t (*uct_pending_callback_t)(uct_pending_req_t *self);

/** A queued request removed by uct_ep_pending_purge(). */
typedef void (*uct_pending_purge_callback_t)(uct_pending_req_t *self,
                                             void *arg);

/**
 * Completion of one or more operations: each operation that returned
 * UCS_INPROGRESS decrements @a count when it completes; at 0 @a func is
 * called. @a status keeps the first error.
 */
struct uct_completion {
    uct_completion_callback_t func;
    int                       count;
    ucs_status_t              status;
};

/** A request queued by uct_ep_pending_add(), in the caller's memory. */
struct uct_pending_req {
    uct_pending_callback_t func;
    char                   priv[UCT_PENDING_REQ_PRIV_LEN];
};

/**
 * One element of a scatter/gather list: @a count blocks of @a length bytes
 * at @a buffer, @a stride bytes apart (0 or 1 block: contiguous), registered
 * as @a memh (UCT_MEM_HANDLE_NULL where the transport does not need it).
 */
struct uct_iov {
    void      *buffer;
    size_t    length;
    uct_mem_h memh;
    size_t    stride;
    unsigned  count;
};

/** Asynchronous event notification of an interface. */
typedef void (*uct_async_event_cb_t)(void *arg, unsigned flags);

/** Client-server: fill the private data sent to the peer. */
typedef ssize_t (*uct_cm_ep_priv_data_pack_callback_t)(
        void *arg, const uct_cm_ep_priv_data_pack_args_t *pack_args,
        void *priv_data);

/** Client-server: the remote address was resolved to a local device. */
typedef ucs_status_t (*uct_cm_ep_resolve_callback_t)(
        void *user_data, const uct_cm_ep_resolve_args_t *resolve_args);

/** Client-server: the server answered the connection request. */
typedef void (*uct_cm_ep_client_connect_callback_t)(
        uct_ep_h ep, void *arg,
        const uct_cm_ep_client_connect_args_t *connect_args);

/** Client-server: the client confirmed the connection. */
typedef void (*uct_cm_ep_server_conn_notify_callback_t)(
        uct_ep_h ep, void *arg,
        const uct_cm_ep_server_conn_notify_args_t *connect_args);

/** Client-server: the peer disconnected. */
typedef void (*uct_ep_disconnect_cb_t)(uct_ep_h ep, void *arg);

END_C_DECLS

#endif
