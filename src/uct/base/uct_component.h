/*
 * Components and transports: how a transport family plugs into the core.
 *
 * A component is a statically initialised uct_component_t that registers
 * itself when its library (or module) loads:
 *
 *     uct_component_t uct_xxx_component = {
 *         .name               = "xxx",
 *         .query_md_resources = uct_xxx_query_md_resources,
 *         .md_open            = uct_xxx_md_open,
 *         .rkey_unpack        = uct_xxx_rkey_unpack,
 *         .rkey_release       = uct_xxx_rkey_release,
 *         .md_config          = {"XXX memory domain", "XXX_",
 *                                uct_xxx_md_config_table,
 *                                sizeof(uct_xxx_md_config_t)},
 *         .flags              = 0
 *     };
 *     UCT_COMPONENT_REGISTER(&uct_xxx_component)
 *
 * and each of its transports is a uct_tl_t attached to it:
 *
 *     uct_tl_t uct_yyy_tl = {
 *         .name          = "yyy",
 *         .query_devices = uct_yyy_query_devices,
 *         .iface_open    = uct_yyy_iface_open,
 *         .config        = {"YYY transport", "YYY_", uct_yyy_iface_config_table,
 *                           sizeof(uct_yyy_iface_config_t)}
 *     };
 *     UCT_TL_REGISTER(&uct_yyy_tl, &uct_xxx_component)
 *
 * Both macros also register the configuration table, so "ucx_info -c" lists
 * its knobs. No operation slot may be NULL: use the stubs below (or in
 * uct_md.h / uct_iface.h) for what a transport does not support.
 *
 * Arrays a component or transport returns (md resources, devices) are
 * allocated with malloc() and released by the core with free().
 */
#ifndef UCT_BASE_COMPONENT_H_
#define UCT_BASE_COMPONENT_H_

#include <uct/api/uct.h>
#include <ucs/config/parser.h>

#include <vector>

typedef struct uct_component uct_component_t;
typedef struct uct_tl        uct_tl_t;


/** List the memory domains of a component (malloc'ed array). */
typedef ucs_status_t (*uct_component_query_md_resources_func_t)(
        uct_component_t *component, uct_md_resource_desc_t **resources_p,
        unsigned *num_resources_p);

/**
 * Open memory domain @a md_name (one of those the component lists) with
 * @a config, a filled instance of the component's md_config table. The core
 * sets md->component afterwards.
 */
typedef ucs_status_t (*uct_component_md_open_func_t)(
        uct_component_t *component, const char *md_name,
        const uct_md_config_t *config, uct_md_h *md_p);

/** Unpack a remote key: *rkey_p goes to the user, *handle_p to release. */
typedef ucs_status_t (*uct_component_rkey_unpack_func_t)(
        uct_component_t *component, const void *rkey_buffer,
        uct_rkey_t *rkey_p, void **handle_p);

typedef ucs_status_t (*uct_component_rkey_release_func_t)(
        uct_component_t *component, uct_rkey_t rkey, void *handle);


/** A transport family: its memory domains, remote keys and transports. */
struct uct_component {
    char                                    name[UCT_COMPONENT_NAME_MAX];
    uct_component_query_md_resources_func_t query_md_resources;
    uct_component_md_open_func_t            md_open;
    uct_component_rkey_unpack_func_t        rkey_unpack;
    uct_component_rkey_release_func_t       rkey_release;
    ucs_config_table_entry_t                md_config;  /**< uct_md_config_read() */
    uint64_t                                flags;      /**< UCT_COMPONENT_FLAG_xx */

    /* Owned by the core: leave zero in the initialiser */
    uct_tl_t                                *tl_list;   /**< UCT_TL_REGISTER */
    uct_component_t                         *next;      /**< registry link */
};


/** A device a transport can open an interface on. */
typedef struct uct_tl_device_resource {
    char              name[UCT_DEVICE_NAME_MAX];
    uct_device_type_t type;
    ucs_sys_device_t  sys_device;
} uct_tl_device_resource_t;

/**
 * List the devices of the transport that @a md can use (malloc'ed array).
 * UCS_ERR_NO_DEVICE, or zero devices, if there are none.
 */
typedef ucs_status_t (*uct_tl_query_devices_func_t)(
        uct_md_h md, uct_tl_device_resource_t **tl_devices_p,
        unsigned *num_tl_devices_p);

/**
 * Open an interface. The core has checked the parameters (open mode, tl and
 * a device this transport listed) before the call; @a config is a filled
 * instance of the transport's config table.
 */
typedef ucs_status_t (*uct_tl_iface_open_func_t)(
        uct_md_h md, uct_worker_h worker, const uct_iface_params_t *params,
        const uct_iface_config_t *config, uct_iface_h *iface_p);

/** A transport of a component. */
struct uct_tl {
    char                        name[UCT_TL_NAME_MAX];
    uct_tl_query_devices_func_t query_devices;
    uct_tl_iface_open_func_t    iface_open;
    ucs_config_table_entry_t    config;  /**< uct_md_iface_config_read() */

    /* Owned by the core: leave zero in the initialiser */
    uct_tl_t                    *next;
};


/**
 * Add a component to the registry. A component with an empty name or a NULL
 * operation is refused with an error. Normally called through
 * UCT_COMPONENT_REGISTER.
 */
void uct_component_register(uct_component_t *component);

void uct_component_unregister(uct_component_t *component);

/** Attach a transport to a component (UCT_TL_REGISTER). */
void uct_tl_register(uct_component_t *component, uct_tl_t *tl);

void uct_tl_unregister(uct_component_t *component, uct_tl_t *tl);

/** The transport @a tl_name of @a component, or NULL. */
uct_tl_t *uct_component_find_tl(uct_component_t *component,
                                const char *tl_name);

/** The transports of @a component, in registration order (may throw
 *  std::bad_alloc). */
std::vector<uct_tl_t*> uct_component_tl_list(uct_component_t *component);


/* Stubs for component slots */

/** One memory domain, named like the component. */
ucs_status_t uct_component_query_single_md_resource(
        uct_component_t *component, uct_md_resource_desc_t **resources_p,
        unsigned *num_resources_p);

/** Remote keys are not supported: UCS_ERR_UNSUPPORTED. */
ucs_status_t uct_component_rkey_unpack_unsupported(
        uct_component_t *component, const void *rkey_buffer,
        uct_rkey_t *rkey_p, void **handle_p);

/** Nothing to release. */
ucs_status_t uct_component_rkey_release_nop(uct_component_t *component,
                                            uct_rkey_t rkey, void *handle);


#define UCT_PP_JOIN_(_a, _b) _a##_b
#define UCT_PP_JOIN(_a, _b)  UCT_PP_JOIN_(_a, _b)

/** Register a component when its library loads, unregister at unload. */
#define UCT_COMPONENT_REGISTER(_component) \
    static void __attribute__((constructor)) \
    UCT_PP_JOIN(uct_component_ctor_, __LINE__)(void) \
    { \
        uct_component_register(_component); \
    } \
    static void __attribute__((destructor)) \
    UCT_PP_JOIN(uct_component_dtor_, __LINE__)(void) \
    { \
        uct_component_unregister(_component); \
    }

/** Attach a transport to a component when its library loads. */
#define UCT_TL_REGISTER(_tl, _component) \
    static void __attribute__((constructor)) \
    UCT_PP_JOIN(uct_tl_ctor_, __LINE__)(void) \
    { \
        uct_tl_register(_component, _tl); \
    } \
    static void __attribute__((destructor)) \
    UCT_PP_JOIN(uct_tl_dtor_, __LINE__)(void) \
    { \
        uct_tl_unregister(_component, _tl); \
    }

#endif
