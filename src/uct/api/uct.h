/*
 * UCT: the transport API. This header provides the resource, memory-domain,
 * interface, worker, endpoint-connection and data-transfer parts of UCX's
 * uct.h with the same type names, field-mask bits, flag values and function
 * signatures. UCX implements the operations as inline functions; here they
 * are exported functions with the same names and semantics.
 *
 * Object model:
 *   component (a transport family, e.g. "ib")
 *     -> memory domains (uct_md_h: registration, remote keys)
 *        -> transport resources: a transport on a device ("rc_mlx5/mlx5_0:1")
 *           -> interface (uct_iface_h), progressed by a worker (uct_worker_h)
 *              -> endpoints (uct_ep_h), connected by exchanging addresses.
 *
 * Option structures start with a field_mask; only the fields whose bit is set
 * are read (or, for attributes, written).
 */
#ifndef UCT_H_
#define UCT_H_

#include <uct/api/uct_def.h>
#include <ucs/async/async_fwd.h>
#include <ucs/datastruct/callbackq.h>
#include <ucs/datastruct/linear_func.h>
#include <ucs/memory/memory_type.h>
#include <ucs/stats/stats_fwd.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/topo/base/topo.h>
#include <ucs/time/time.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/status.h>
#include <ucs/type/thread_mode.h>

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

BEGIN_C_DECLS


/* ------------------------------------------------------------------------ *
 * Components and resources
 * ------------------------------------------------------------------------ */

/** A memory domain a component can open. */
typedef struct uct_md_resource_desc {
    char md_name[UCT_MD_NAME_MAX]; /**< pass to uct_md_open() */
} uct_md_resource_desc_t;


/** Fields of uct_component_attr_t. */
enum uct_component_attr_field {
    UCT_COMPONENT_ATTR_FIELD_NAME              = UCS_BIT(0),
    UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT = UCS_BIT(1),
    UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES      = UCS_BIT(2),
    UCT_COMPONENT_ATTR_FIELD_FLAGS             = UCS_BIT(3)
};


/** Attributes of a component, filled by uct_component_query(). */
typedef struct uct_component_attr {
    uint64_t               field_mask;  /**< uct_component_attr_field bits */
    char                   name[UCT_COMPONENT_NAME_MAX];
    unsigned               md_resource_count;
    /**
     * Caller-allocated array of md_resource_count entries, filled when
     * UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES is set. Query the count first.
     */
    uct_md_resource_desc_t *md_resources;
    uint64_t               flags;       /**< UCT_COMPONENT_FLAG_xx */
} uct_component_attr_t;


/** Component capabilities (uct_component_attr_t::flags). */
enum {
    UCT_COMPONENT_FLAG_CM       = UCS_BIT(0), /**< provides uct_cm_h */
    UCT_COMPONENT_FLAG_RKEY_PTR = UCS_BIT(1)  /**< remote keys map locally */
};


/** What kind of device a transport resource runs on. */
typedef enum {
    UCT_DEVICE_TYPE_NET,  /**< network device */
    UCT_DEVICE_TYPE_SHM,  /**< shared memory */
    UCT_DEVICE_TYPE_ACC,  /**< accelerator */
    UCT_DEVICE_TYPE_SELF, /**< loop-back in the process */
    UCT_DEVICE_TYPE_LAST
} uct_device_type_t;

/** Names of uct_device_type_t values, indexed by value. */
extern const char *uct_device_type_names[];


/** A transport on a device, as listed by uct_md_query_tl_resources(). */
typedef struct uct_tl_resource_desc {
    char              tl_name[UCT_TL_NAME_MAX];      /**< e.g. "rc_mlx5" */
    char              dev_name[UCT_DEVICE_NAME_MAX]; /**< e.g. "mlx5_0:1" */
    uct_device_type_t dev_type;
    ucs_sys_device_t  sys_device; /**< or UCS_SYS_DEVICE_ID_UNKNOWN */
} uct_tl_resource_desc_t;

#define UCT_TL_RESOURCE_DESC_FMT            "%s/%s"
#define UCT_TL_RESOURCE_DESC_ARG(_resource) (_resource)->tl_name, \
                                            (_resource)->dev_name


/* ------------------------------------------------------------------------ *
 * Interface capabilities (uct_iface_attr_t::cap.flags)
 * ------------------------------------------------------------------------ */

/* Active messages */
#define UCT_IFACE_FLAG_AM_SHORT               UCS_BIT(0)
#define UCT_IFACE_FLAG_AM_BCOPY               UCS_BIT(1)
#define UCT_IFACE_FLAG_AM_ZCOPY               UCS_BIT(2)
#define UCT_IFACE_FLAG_PENDING                UCS_BIT(3)
/* Put */
#define UCT_IFACE_FLAG_PUT_SHORT              UCS_BIT(4)
#define UCT_IFACE_FLAG_PUT_BCOPY              UCS_BIT(5)
#define UCT_IFACE_FLAG_PUT_ZCOPY              UCS_BIT(6)
#define UCT_IFACE_FLAG_PUT_BATCH              UCS_BIT(7)
/* Get */
#define UCT_IFACE_FLAG_GET_SHORT              UCS_BIT(8)
#define UCT_IFACE_FLAG_GET_BCOPY              UCS_BIT(9)
#define UCT_IFACE_FLAG_GET_ZCOPY              UCS_BIT(10)
/* Atomics: consistent with the CPU, or only among the device's atomics */
#define UCT_IFACE_FLAG_ATOMIC_CPU             UCS_BIT(30)
#define UCT_IFACE_FLAG_ATOMIC_DEVICE          UCS_BIT(31)
/* Errors the interface detects and reports */
#define UCT_IFACE_FLAG_ERRHANDLE_SHORT_BUF    UCS_BIT(32)
#define UCT_IFACE_FLAG_ERRHANDLE_BCOPY_BUF    UCS_BIT(33)
#define UCT_IFACE_FLAG_ERRHANDLE_ZCOPY_BUF    UCS_BIT(34)
#define UCT_IFACE_FLAG_ERRHANDLE_AM_ID        UCS_BIT(35)
#define UCT_IFACE_FLAG_ERRHANDLE_REMOTE_MEM   UCS_BIT(36)
#define UCT_IFACE_FLAG_ERRHANDLE_BCOPY_LEN    UCS_BIT(37)
#define UCT_IFACE_FLAG_ERRHANDLE_PEER_FAILURE UCS_BIT(38)
#define UCT_IFACE_FLAG_EP_CHECK               UCS_BIT(39)
/* How endpoints connect */
#define UCT_IFACE_FLAG_CONNECT_TO_IFACE       UCS_BIT(40)
#define UCT_IFACE_FLAG_CONNECT_TO_EP          UCS_BIT(41)
#define UCT_IFACE_FLAG_CONNECT_TO_SOCKADDR    UCS_BIT(42)
/* Active messages may arrive more than once */
#define UCT_IFACE_FLAG_AM_DUP                 UCS_BIT(43)
/* Where callbacks run: only from progress, or from any thread */
#define UCT_IFACE_FLAG_CB_SYNC                UCS_BIT(44)
#define UCT_IFACE_FLAG_CB_ASYNC               UCS_BIT(45)
/* Endpoints detect a dead peer without outstanding operations */
#define UCT_IFACE_FLAG_EP_KEEPALIVE           UCS_BIT(46)
/* Hardware tag matching */
#define UCT_IFACE_FLAG_TAG_EAGER_SHORT        UCS_BIT(50)
#define UCT_IFACE_FLAG_TAG_EAGER_BCOPY        UCS_BIT(51)
#define UCT_IFACE_FLAG_TAG_EAGER_ZCOPY        UCS_BIT(52)
#define UCT_IFACE_FLAG_TAG_RNDV_ZCOPY         UCS_BIT(53)
/* Reaches other hosts */
#define UCT_IFACE_FLAG_INTER_NODE             UCS_BIT(54)

/* Event capabilities (uct_iface_attr_t::cap.event_flags) */
#define UCT_IFACE_FLAG_EVENT_SEND_COMP        UCS_BIT(0)
#define UCT_IFACE_FLAG_EVENT_RECV             UCS_BIT(1)
#define UCT_IFACE_FLAG_EVENT_RECV_SIG         UCS_BIT(2)
#define UCT_IFACE_FLAG_EVENT_FD               UCS_BIT(3)
#define UCT_IFACE_FLAG_EVENT_ASYNC_CB         UCS_BIT(4)


/** Atomic operations; bit UCT_ATOMIC_OP_x of the atomic op_flags. */
typedef enum uct_atomic_op {
    UCT_ATOMIC_OP_ADD,
    UCT_ATOMIC_OP_AND,
    UCT_ATOMIC_OP_OR,
    UCT_ATOMIC_OP_XOR,
    UCT_ATOMIC_OP_SWAP,
    UCT_ATOMIC_OP_CSWAP,
    UCT_ATOMIC_OP_LAST
} uct_atomic_op_t;


/** What uct_iface_progress_enable()/disable() turn on or off. */
enum uct_progress_types {
    UCT_PROGRESS_SEND        = UCS_BIT(0),
    UCT_PROGRESS_RECV        = UCS_BIT(1),
    UCT_PROGRESS_THREAD_SAFE = UCS_BIT(7)
};


/** Where a callback may be invoked from. */
enum uct_cb_flags {
    UCT_CB_FLAG_RESERVED = UCS_BIT(1),
    UCT_CB_FLAG_ASYNC    = UCS_BIT(2)  /**< from any thread */
};


/** Flags of uct_ep_flush() and uct_iface_flush(). */
enum uct_flush_flags {
    UCT_FLUSH_FLAG_LOCAL  = 0,          /**< local completion of everything */
    UCT_FLUSH_FLAG_CANCEL = UCS_BIT(0), /**< cancel what is outstanding */
    UCT_FLUSH_FLAG_REMOTE = UCS_BIT(1)  /**< remote completion */
};

/** Events of uct_iface_event_arm(). */
enum uct_iface_event_types {
    UCT_EVENT_SEND_COMP = UCS_BIT(0),
    UCT_EVENT_RECV      = UCS_BIT(1),
    UCT_EVENT_RECV_SIG  = UCS_BIT(2)
};

/** Flags of uct_ep_am_bcopy()/zcopy(). */
enum uct_msg_flags {
    UCT_SEND_FLAG_SIGNALED   = UCS_BIT(0), /**< wakes an armed receiver */
    UCT_SEND_FLAG_PEER_CHECK = UCS_BIT(1)
};

/** How uct_iface_open() selects what to open. */
enum uct_iface_open_mode {
    UCT_IFACE_OPEN_MODE_DEVICE          = UCS_BIT(0), /**< a device */
    UCT_IFACE_OPEN_MODE_SOCKADDR_SERVER = UCS_BIT(1), /**< not provided */
    UCT_IFACE_OPEN_MODE_SOCKADDR_CLIENT = UCS_BIT(2)  /**< not provided */
};


/** Fields of uct_iface_params_t. */
enum uct_iface_params_field {
    UCT_IFACE_PARAM_FIELD_CPU_MASK           = UCS_BIT(0),
    UCT_IFACE_PARAM_FIELD_OPEN_MODE          = UCS_BIT(1),
    UCT_IFACE_PARAM_FIELD_DEVICE             = UCS_BIT(2),
    UCT_IFACE_PARAM_FIELD_SOCKADDR           = UCS_BIT(3),
    UCT_IFACE_PARAM_FIELD_STATS_ROOT         = UCS_BIT(4),
    UCT_IFACE_PARAM_FIELD_RX_HEADROOM        = UCS_BIT(5),
    UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG    = UCS_BIT(6),
    UCT_IFACE_PARAM_FIELD_ERR_HANDLER        = UCS_BIT(7),
    UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS  = UCS_BIT(8),
    UCT_IFACE_PARAM_FIELD_HW_TM_EAGER_ARG    = UCS_BIT(9),
    UCT_IFACE_PARAM_FIELD_HW_TM_EAGER_CB     = UCS_BIT(10),
    UCT_IFACE_PARAM_FIELD_HW_TM_RNDV_ARG     = UCS_BIT(11),
    UCT_IFACE_PARAM_FIELD_HW_TM_RNDV_CB      = UCS_BIT(12),
    UCT_IFACE_PARAM_FIELD_ASYNC_EVENT_ARG    = UCS_BIT(13),
    UCT_IFACE_PARAM_FIELD_ASYNC_EVENT_CB     = UCS_BIT(14),
    UCT_IFACE_PARAM_FIELD_KEEPALIVE_INTERVAL = UCS_BIT(15),
    UCT_IFACE_PARAM_FIELD_AM_ALIGNMENT       = UCS_BIT(16),
    UCT_IFACE_PARAM_FIELD_AM_ALIGN_OFFSET    = UCS_BIT(17),
    UCT_IFACE_PARAM_FIELD_FEATURES           = UCS_BIT(18)
};


/** Features requested in uct_iface_params_t::features. */
enum uct_iface_feature {
    UCT_IFACE_FEATURE_AM           = UCS_BIT(0),
    UCT_IFACE_FEATURE_PUT          = UCS_BIT(1),
    UCT_IFACE_FEATURE_GET          = UCS_BIT(2),
    UCT_IFACE_FEATURE_AMO32        = UCS_BIT(3),
    UCT_IFACE_FEATURE_AMO64        = UCS_BIT(4),
    UCT_IFACE_FEATURE_TAG          = UCS_BIT(5),
    UCT_IFACE_FEATURE_FLUSH_REMOTE = UCS_BIT(6),
    UCT_IFACE_FEATURE_LAST         = UCS_BIT(7)
};


/** Fields of uct_ep_params_t. */
enum uct_ep_params_field {
    UCT_EP_PARAM_FIELD_IFACE                      = UCS_BIT(0),
    UCT_EP_PARAM_FIELD_USER_DATA                  = UCS_BIT(1),
    UCT_EP_PARAM_FIELD_DEV_ADDR                   = UCS_BIT(2),
    UCT_EP_PARAM_FIELD_IFACE_ADDR                 = UCS_BIT(3),
    UCT_EP_PARAM_FIELD_SOCKADDR                   = UCS_BIT(4),
    UCT_EP_PARAM_FIELD_SOCKADDR_CB_FLAGS          = UCS_BIT(5),
    UCT_EP_PARAM_FIELD_SOCKADDR_PACK_CB           = UCS_BIT(6),
    UCT_EP_PARAM_FIELD_CM                         = UCS_BIT(7),
    UCT_EP_PARAM_FIELD_CONN_REQUEST               = UCS_BIT(8),
    UCT_EP_PARAM_FIELD_SOCKADDR_CONNECT_CB_CLIENT = UCS_BIT(9),
    UCT_EP_PARAM_FIELD_SOCKADDR_NOTIFY_CB_SERVER  = UCS_BIT(10),
    UCT_EP_PARAM_FIELD_SOCKADDR_DISCONNECT_CB     = UCS_BIT(11),
    UCT_EP_PARAM_FIELD_PATH_INDEX                 = UCS_BIT(12),
    UCT_EP_PARAM_FIELD_CM_RESOLVE_CB              = UCS_BIT(13),
    UCT_EP_PARAM_FIELD_PRIV_DATA                  = UCS_BIT(14),
    UCT_EP_PARAM_FIELD_PRIV_DATA_LENGTH           = UCS_BIT(15),
    UCT_EP_PARAM_FIELD_LOCAL_SOCKADDR             = UCS_BIT(16),
    UCT_EP_PARAM_FIELD_DEV_ADDR_LENGTH            = UCS_BIT(17),
    UCT_EP_PARAM_FIELD_IFACE_ADDR_LENGTH          = UCS_BIT(18)
};


/** Bandwidth shared by the processes of a node: dedicated + shared / ppn. */
typedef struct uct_ppn_bandwidth {
    double dedicated; /**< bytes/second */
    double shared;    /**< bytes/second */
} uct_ppn_bandwidth_t;


/** Capabilities, limits and cost model of an interface. */
struct uct_iface_attr {
    struct {
        struct {
            size_t max_short;
            size_t max_bcopy;
            size_t min_zcopy;
            size_t max_zcopy;
            size_t opt_zcopy_align;
            size_t align_mtu;
            size_t max_iov;
        } put;                         /**< limits of put operations */

        struct {
            size_t max_short;
            size_t max_bcopy;
            size_t min_zcopy;
            size_t max_zcopy;
            size_t opt_zcopy_align;
            size_t align_mtu;
            size_t max_iov;
        } get;                         /**< limits of get operations */

        struct {
            size_t max_short;          /**< header included */
            size_t max_bcopy;          /**< header included */
            size_t min_zcopy;
            size_t max_zcopy;
            size_t opt_zcopy_align;
            size_t align_mtu;
            size_t max_hdr;
            size_t max_iov;
        } am;                          /**< limits of active messages */

        struct {
            struct {
                size_t min_recv;
                size_t max_zcopy;
                size_t max_iov;
                size_t max_outstanding;
            } recv;

            struct {
                size_t max_short;
                size_t max_bcopy;
                size_t max_zcopy;
                size_t max_iov;
            } eager;

            struct {
                size_t max_zcopy;
                size_t max_hdr;
                size_t max_iov;
            } rndv;
        } tag;                         /**< limits of hardware tag matching */

        struct {
            uint64_t op_flags;         /**< UCS_BIT(UCT_ATOMIC_OP_x), post */
            uint64_t fop_flags;        /**< UCS_BIT(UCT_ATOMIC_OP_x), fetch */
        } atomic32, atomic64;

        uint64_t flags;                /**< UCT_IFACE_FLAG_xx */
        uint64_t event_flags;          /**< UCT_IFACE_FLAG_EVENT_xx */
    } cap;

    size_t                  device_addr_len; /**< uct_iface_get_device_address() */
    size_t                  iface_addr_len;  /**< uct_iface_get_address() */
    size_t                  ep_addr_len;     /**< uct_ep_get_address() */
    size_t                  max_conn_priv;   /**< sockaddr private data */
    struct sockaddr_storage listen_sockaddr;
    double                  overhead;        /**< per message, seconds */
    uct_ppn_bandwidth_t     bandwidth;
    ucs_linear_func_t       latency;         /**< seconds, f(number of eps) */
    uint8_t                 priority;        /**< higher is preferred */
    size_t                  max_num_eps;
    unsigned                dev_num_paths;   /**< paths worth spreading eps on */
};


/** Parameters of uct_iface_open(). */
struct uct_iface_params {
    uint64_t      field_mask;   /**< uct_iface_params_field bits */
    ucs_cpu_set_t cpu_mask;     /**< CPUs to place resources near */
    uint64_t      open_mode;    /**< one uct_iface_open_mode bit (required) */

    union {
        /** With UCT_IFACE_OPEN_MODE_DEVICE: which transport on which device. */
        struct {
            const char *tl_name;
            const char *dev_name;
        } device;

        /** Sockaddr server mode (not provided by this library). */
        struct {
            ucs_sock_addr_t                      listen_sockaddr;
            void                                 *conn_request_arg;
            uct_sockaddr_conn_request_callback_t conn_request_cb;
            uint32_t                             cb_flags;
        } sockaddr;
    } mode;

    ucs_stats_node_t         *stats_root;        /**< may be NULL */
    size_t                   rx_headroom;        /**< bytes before received data */
    void                     *err_handler_arg;
    uct_error_handler_t      err_handler;        /**< endpoint failures */
    uint32_t                 err_handler_flags;  /**< uct_cb_flags */
    void                     *eager_arg;
    uct_tag_unexp_eager_cb_t eager_cb;
    void                     *rndv_arg;
    uct_tag_unexp_rndv_cb_t  rndv_cb;
    void                     *async_event_arg;
    uct_async_event_cb_t     async_event_cb;
    ucs_time_t               keepalive_interval;
    size_t                   am_alignment;
    size_t                   am_align_offset;
    uint64_t                 features;           /**< uct_iface_feature bits */
};


/** Parameters of uct_ep_create(). */
struct uct_ep_params {
    uint64_t                                field_mask; /**< uct_ep_params_field */
    uct_iface_h                             iface;      /**< required here */
    void                                    *user_data;
    const uct_device_addr_t                 *dev_addr;  /**< with iface_addr */
    const uct_iface_addr_t                  *iface_addr;
    const ucs_sock_addr_t                   *sockaddr;
    uint32_t                                sockaddr_cb_flags;
    uct_cm_ep_priv_data_pack_callback_t     sockaddr_pack_cb;
    uct_cm_h                                cm;
    uct_conn_request_h                      conn_request;
    uct_cm_ep_client_connect_callback_t     sockaddr_cb_client;
    uct_cm_ep_server_conn_notify_callback_t sockaddr_cb_server;
    uct_ep_disconnect_cb_t                  disconnect_cb;
    unsigned                                path_index; /**< < dev_num_paths */
    uct_cm_ep_resolve_callback_t            cm_resolve_cb;
    const void                              *private_data;
    size_t                                  private_data_length;
    const ucs_sock_addr_t                   *local_sockaddr;
    size_t                                  dev_addr_length;
    size_t                                  iface_addr_length;
};


/* ------------------------------------------------------------------------ *
 * Memory domains
 * ------------------------------------------------------------------------ */

/** Memory domain capabilities (uct_md_attr_t::cap.flags). */
enum {
    UCT_MD_FLAG_ALLOC         = UCS_BIT(0),  /**< allocates memory */
    UCT_MD_FLAG_REG           = UCS_BIT(1),  /**< registers memory */
    UCT_MD_FLAG_NEED_MEMH     = UCS_BIT(2),  /**< zero-copy needs a memh */
    UCT_MD_FLAG_NEED_RKEY     = UCS_BIT(3),  /**< remote access needs an rkey */
    UCT_MD_FLAG_ADVISE        = UCS_BIT(4),
    UCT_MD_FLAG_FIXED         = UCS_BIT(5),
    UCT_MD_FLAG_RKEY_PTR      = UCS_BIT(6),
    UCT_MD_FLAG_SOCKADDR      = UCS_BIT(7),
    UCT_MD_FLAG_INVALIDATE    = UCS_BIT(8),
    UCT_MD_FLAG_EXPORTED_MKEY = UCS_BIT(9),
    UCT_MD_FLAG_REG_DMABUF    = UCS_BIT(10),
    UCT_MD_FLAG_LAST          = UCS_BIT(11)  /**< further flags are in v2 */
};


/** Flags of uct_md_mem_reg(): behaviour and access rights. */
enum uct_md_mem_flags {
    UCT_MD_MEM_FLAG_NONBLOCK        = UCS_BIT(0),
    UCT_MD_MEM_FLAG_FIXED           = UCS_BIT(1),
    UCT_MD_MEM_FLAG_LOCK            = UCS_BIT(2),
    UCT_MD_MEM_FLAG_HIDE_ERRORS     = UCS_BIT(3), /**< failures log at debug */

    UCT_MD_MEM_ACCESS_REMOTE_PUT    = UCS_BIT(5),
    UCT_MD_MEM_ACCESS_REMOTE_GET    = UCS_BIT(6),
    UCT_MD_MEM_ACCESS_REMOTE_ATOMIC = UCS_BIT(7),
    UCT_MD_MEM_ACCESS_LOCAL_READ    = UCS_BIT(8),
    UCT_MD_MEM_ACCESS_LOCAL_WRITE   = UCS_BIT(9),
    UCT_MD_MEM_SYMMETRIC_RKEY       = UCS_BIT(10),
    UCT_MD_MEM_GVA                  = UCS_BIT(11),

    UCT_MD_MEM_ACCESS_ALL           = (UCT_MD_MEM_ACCESS_REMOTE_PUT |
                                       UCT_MD_MEM_ACCESS_REMOTE_GET |
                                       UCT_MD_MEM_ACCESS_REMOTE_ATOMIC |
                                       UCT_MD_MEM_ACCESS_LOCAL_READ |
                                       UCT_MD_MEM_ACCESS_LOCAL_WRITE),

    UCT_MD_MEM_ACCESS_RMA           = (UCT_MD_MEM_ACCESS_REMOTE_PUT |
                                       UCT_MD_MEM_ACCESS_REMOTE_GET |
                                       UCT_MD_MEM_ACCESS_LOCAL_READ |
                                       UCT_MD_MEM_ACCESS_LOCAL_WRITE)
};


/** Memory domain attributes, filled by uct_md_query(). */
struct uct_md_attr {
    struct {
        uint64_t max_alloc;        /**< largest allocation */
        size_t   max_reg;          /**< largest registration */
        uint64_t flags;            /**< UCT_MD_FLAG_xx */
        uint64_t reg_mem_types;    /**< UCS_BIT(ucs_memory_type_t) masks */
        uint64_t detect_mem_types;
        uint64_t alloc_mem_types;
        uint64_t access_mem_types;
    } cap;

    ucs_linear_func_t reg_cost;    /**< seconds, f(length) */
    char              component_name[UCT_COMPONENT_NAME_MAX];
    size_t            rkey_packed_size; /**< buffer size for uct_md_mkey_pack() */
    ucs_cpu_set_t     local_cpus;
};


/** An unpacked remote key. */
typedef struct uct_rkey_bundle {
    uct_rkey_t rkey;   /**< pass to remote memory operations */
    void       *handle; /**< used by uct_rkey_release() */
    void       *type;   /**< the component that unpacked it */
} uct_rkey_bundle_t;


/* ------------------------------------------------------------------------ *
 * Functions
 * ------------------------------------------------------------------------ */

/**
 * List the components: those linked into the process and those of the "uct"
 * modules, loaded by the first call.
 *
 * @param [out] components_p      Array to release with
 *                                uct_release_component_list().
 * @param [out] num_components_p  Number of entries.
 */
ucs_status_t uct_query_components(uct_component_h **components_p,
                                  unsigned *num_components_p);

void uct_release_component_list(uct_component_h *components);

/** Fill the fields of @a component_attr selected by its field_mask. */
ucs_status_t uct_component_query(uct_component_h component,
                                 uct_component_attr_t *component_attr);


/**
 * Read a component's memory domain configuration from the environment.
 *
 * @param [in]  env_prefix  NULL or "" to read UCX_<knob>; otherwise knobs are
 *                          read as <env_prefix>_UCX_<knob>.
 * @param [in]  filename    Ignored (no configuration files).
 * @param [out] config_p    Release with uct_config_release().
 */
ucs_status_t uct_md_config_read(uct_component_h component,
                                const char *env_prefix, const char *filename,
                                uct_md_config_t **config_p);

/** Read a transport's interface configuration; see uct_md_config_read(). */
ucs_status_t uct_md_iface_config_read(uct_md_h md, const char *tl_name,
                                      const char *env_prefix,
                                      const char *filename,
                                      uct_iface_config_t **config_p);

/** Release a configuration returned by uct_md_config_read() or
 *  uct_md_iface_config_read(). */
void uct_config_release(void *config);

/**
 * Set one knob of a configuration by its name without prefixes
 * (e.g. "GID_INDEX"). UCS_ERR_NO_ELEM if the configuration has no such knob.
 */
ucs_status_t uct_config_modify(void *config, const char *name,
                               const char *value);

/** Print the value of one knob into @a value (at most @a max bytes). */
ucs_status_t uct_config_get(void *config, const char *name, char *value,
                            size_t max);


/** Open memory domain @a md_name of @a component with @a config. */
ucs_status_t uct_md_open(uct_component_h component, const char *md_name,
                         const uct_md_config_t *config, uct_md_h *md_p);

void uct_md_close(uct_md_h md);

ucs_status_t uct_md_query(uct_md_h md, uct_md_attr_t *md_attr);

/**
 * List the transports and devices this memory domain can open interfaces on.
 * Release the array with uct_release_tl_resource_list().
 */
ucs_status_t uct_md_query_tl_resources(uct_md_h md,
                                       uct_tl_resource_desc_t **resources_p,
                                       unsigned *num_resources_p);

void uct_release_tl_resource_list(uct_tl_resource_desc_t *resources);

/**
 * Register @a length (> 0) bytes at @a address.
 * @param [in] flags  uct_md_mem_flags: access rights and behaviour.
 */
ucs_status_t uct_md_mem_reg(uct_md_h md, void *address, size_t length,
                            unsigned flags, uct_mem_h *memh_p);

ucs_status_t uct_md_mem_dereg(uct_md_h md, uct_mem_h memh);

/** Pack the remote key of @a memh into uct_md_attr_t::rkey_packed_size bytes. */
ucs_status_t uct_md_mkey_pack(uct_md_h md, uct_mem_h memh, void *rkey_buffer);

/** Unpack a remote key packed by a memory domain of @a component. */
ucs_status_t uct_rkey_unpack(uct_component_h component,
                             const void *rkey_buffer,
                             uct_rkey_bundle_t *rkey_ob);

ucs_status_t uct_rkey_release(uct_component_h component,
                              const uct_rkey_bundle_t *rkey_ob);


/**
 * Create a progress engine.
 * @param [in] async  May be NULL (no asynchronous events).
 */
ucs_status_t uct_worker_create(ucs_async_context_t *async,
                               ucs_thread_mode_t thread_mode,
                               uct_worker_h *worker_p);

/** Destroy a worker; close its interfaces first. */
void uct_worker_destroy(uct_worker_h worker);

/**
 * Call every progress callback of the worker once.
 * @return the total work the callbacks reported (0: nothing happened).
 */
unsigned uct_worker_progress(uct_worker_h worker);

/**
 * Add @a func to the worker's progress, unless *@a id_p already names a
 * callback; then *@a id_p names the new one. Thread safe.
 * @param [in] flags  ucs_callbackq_flags.
 */
void uct_worker_progress_register_safe(uct_worker_h worker, ucs_callback_t func,
                                       void *arg, unsigned flags,
                                       uct_worker_cb_id_t *id_p);

/** Remove the callback *@a id_p names, if any, and reset *@a id_p to
 *  UCS_CALLBACKQ_ID_NULL. Thread safe. */
void uct_worker_progress_unregister_safe(uct_worker_h worker,
                                         uct_worker_cb_id_t *id_p);


/**
 * Open an interface of a transport on a device (open_mode
 * UCT_IFACE_OPEN_MODE_DEVICE with the device field).
 *
 * @param [in] config  From uct_md_iface_config_read() for the same transport.
 */
ucs_status_t uct_iface_open(uct_md_h md, uct_worker_h worker,
                            const uct_iface_params_t *params,
                            const uct_iface_config_t *config,
                            uct_iface_h *iface_p);

/** Close an interface; destroy its endpoints first. */
void uct_iface_close(uct_iface_h iface);

ucs_status_t uct_iface_query(uct_iface_h iface, uct_iface_attr_t *iface_attr);

/** Write the device address: uct_iface_attr_t::device_addr_len bytes. */
ucs_status_t uct_iface_get_device_address(uct_iface_h iface,
                                          uct_device_addr_t *addr);

/** Write the interface address: uct_iface_attr_t::iface_addr_len bytes. */
ucs_status_t uct_iface_get_address(uct_iface_h iface, uct_iface_addr_t *addr);

/**
 * Whether a peer with these addresses can be reached from @a iface, as far
 * as local information tells (no traffic is sent).
 * @return nonzero if reachable.
 */
int uct_iface_is_reachable(const uct_iface_h iface,
                           const uct_device_addr_t *dev_addr,
                           const uct_iface_addr_t *iface_addr);

/** Let the worker progress this interface (uct_progress_types). */
void uct_iface_progress_enable(uct_iface_h iface, unsigned flags);

void uct_iface_progress_disable(uct_iface_h iface, unsigned flags);

/** Progress the interface once; @return the work done. */
unsigned uct_iface_progress(uct_iface_h iface);


/**
 * Create an endpoint on params->iface: unconnected when no address is given
 * (then connect it with uct_ep_connect_to_ep()), or connected to a remote
 * interface with dev_addr + iface_addr.
 */
ucs_status_t uct_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p);

void uct_ep_destroy(uct_ep_h ep);

/** Write the endpoint address: uct_iface_attr_t::ep_addr_len bytes. */
ucs_status_t uct_ep_get_address(uct_ep_h ep, uct_ep_addr_t *addr);

/** Connect @a ep to the remote endpoint with these addresses
 *  (UCT_IFACE_FLAG_CONNECT_TO_EP). */
ucs_status_t uct_ep_connect_to_ep(uct_ep_h ep, const uct_device_addr_t *dev_addr,
                                  const uct_ep_addr_t *ep_addr);


/* ------------------------------------------------------------------------ *
 * Active messages, remote memory access, atomics, ordering
 *
 * An operation returns UCS_OK when it completed locally (short and bcopy
 * buffers may be reused at once), UCS_INPROGRESS when @a comp will be
 * completed later (zcopy, get, fetching atomics), or UCS_ERR_NO_RESOURCE
 * when it could not start now: retry later, or queue a request with
 * uct_ep_pending_add(). An endpoint that failed returns its failure.
 * ------------------------------------------------------------------------ */

/**
 * Call @a cb for active messages with @a id (< UCT_AM_ID_MAX) arriving on
 * @a iface; NULL restores the default, which drops them with a warning.
 * @param [in] flags  uct_cb_flags: UCT_CB_FLAG_ASYNC where the callback may
 *                    run in any thread, else only from progress (the
 *                    interface must have UCT_IFACE_FLAG_CB_SYNC).
 */
ucs_status_t uct_iface_set_am_handler(uct_iface_h iface, uint8_t id,
                                      uct_am_callback_t cb, void *arg,
                                      uint32_t flags);

/** Release a descriptor an active message callback kept (UCS_INPROGRESS). */
void uct_iface_release_desc(void *desc);

ucs_status_t uct_ep_am_short(uct_ep_h ep, uint8_t id, uint64_t header,
                             const void *payload, unsigned length);

/** An active message gathered from @a iovcnt elements, sent as short. */
ucs_status_t uct_ep_am_short_iov(uct_ep_h ep, uint8_t id, const uct_iov_t *iov,
                                 size_t iovcnt);

/** @return the packed length, or a negative status. */
ssize_t uct_ep_am_bcopy(uct_ep_h ep, uint8_t id, uct_pack_callback_t pack_cb,
                        void *arg, unsigned flags);

ucs_status_t uct_ep_am_zcopy(uct_ep_h ep, uint8_t id, const void *header,
                             unsigned header_length, const uct_iov_t *iov,
                             size_t iovcnt, unsigned flags,
                             uct_completion_t *comp);

ucs_status_t uct_ep_put_short(uct_ep_h ep, const void *buffer, unsigned length,
                              uint64_t remote_addr, uct_rkey_t rkey);

/** @return the packed length, or a negative status. */
ssize_t uct_ep_put_bcopy(uct_ep_h ep, uct_pack_callback_t pack_cb, void *arg,
                         uint64_t remote_addr, uct_rkey_t rkey);

ucs_status_t uct_ep_put_zcopy(uct_ep_h ep, const uct_iov_t *iov, size_t iovcnt,
                              uint64_t remote_addr, uct_rkey_t rkey,
                              uct_completion_t *comp);

ucs_status_t uct_ep_get_short(uct_ep_h ep, void *buffer, unsigned length,
                              uint64_t remote_addr, uct_rkey_t rkey);

ucs_status_t uct_ep_get_bcopy(uct_ep_h ep, uct_unpack_callback_t unpack_cb,
                              void *arg, size_t length, uint64_t remote_addr,
                              uct_rkey_t rkey, uct_completion_t *comp);

ucs_status_t uct_ep_get_zcopy(uct_ep_h ep, const uct_iov_t *iov, size_t iovcnt,
                              uint64_t remote_addr, uct_rkey_t rkey,
                              uct_completion_t *comp);

ucs_status_t uct_ep_atomic_cswap64(uct_ep_h ep, uint64_t compare, uint64_t swap,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uint64_t *result, uct_completion_t *comp);

ucs_status_t uct_ep_atomic_cswap32(uct_ep_h ep, uint32_t compare, uint32_t swap,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uint32_t *result, uct_completion_t *comp);

ucs_status_t uct_ep_atomic32_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                  uint32_t value, uint64_t remote_addr,
                                  uct_rkey_t rkey);

ucs_status_t uct_ep_atomic64_post(uct_ep_h ep, uct_atomic_op_t opcode,
                                  uint64_t value, uint64_t remote_addr,
                                  uct_rkey_t rkey);

ucs_status_t uct_ep_atomic32_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                   uint32_t value, uint32_t *result,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp);

ucs_status_t uct_ep_atomic64_fetch(uct_ep_h ep, uct_atomic_op_t opcode,
                                   uint64_t value, uint64_t *result,
                                   uint64_t remote_addr, uct_rkey_t rkey,
                                   uct_completion_t *comp);

/**
 * Queue @a req to be called when the endpoint has resources again.
 * UCS_ERR_BUSY if it has resources now (send instead).
 */
ucs_status_t uct_ep_pending_add(uct_ep_h ep, uct_pending_req_t *req,
                                unsigned flags);

/** Remove every queued request, calling @a cb (may be NULL) for each. */
void uct_ep_pending_purge(uct_ep_h ep, uct_pending_purge_callback_t cb,
                          void *arg);

/**
 * Complete everything posted on @a ep so far: UCS_OK if that is already
 * so, UCS_INPROGRESS if @a comp will be completed, UCS_ERR_NO_RESOURCE.
 * UCT_FLUSH_FLAG_CANCEL completes outstanding operations with
 * UCS_ERR_CANCELED instead.
 */
ucs_status_t uct_ep_flush(uct_ep_h ep, unsigned flags, uct_completion_t *comp);

/** Order operations posted after this call after those posted before. */
ucs_status_t uct_ep_fence(uct_ep_h ep, unsigned flags);

/** Whether the peer of @a ep is alive; a dead one fails the endpoint. */
ucs_status_t uct_ep_check(const uct_ep_h ep, unsigned flags,
                          uct_completion_t *comp);

/** uct_ep_flush() of every endpoint of @a iface. */
ucs_status_t uct_iface_flush(uct_iface_h iface, unsigned flags,
                             uct_completion_t *comp);

/** uct_ep_fence() of every endpoint of @a iface. */
ucs_status_t uct_iface_fence(uct_iface_h iface, unsigned flags);

/** A file descriptor that becomes readable when an armed event happens
 *  (UCT_IFACE_FLAG_EVENT_FD). */
ucs_status_t uct_iface_event_fd_get(uct_iface_h iface, int *fd_p);

/**
 * Arm the events (uct_iface_event_types) to be signalled on the event fd.
 * UCS_ERR_BUSY if such events are already there: progress first.
 */
ucs_status_t uct_iface_event_arm(uct_iface_h iface, unsigned events);

/** Keep the first error of a completion's operations. */
static inline void uct_completion_update_status(uct_completion_t *comp,
                                                ucs_status_t status)
{
    if ((status != UCS_OK) && (comp->status == UCS_OK)) {
        comp->status = status;
    }
}

END_C_DECLS

#endif
