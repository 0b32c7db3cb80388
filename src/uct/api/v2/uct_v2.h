/*
 * UCT API v2: calls that take an extensible parameter structure (field_mask
 * first) where the v1 call had fixed arguments. Names, bits and signatures
 * are those of UCX's uct_v2.h, for the subset this library provides.
 */
#ifndef UCT_V2_H_
#define UCT_V2_H_

#include <uct/api/uct.h>
#include <ucs/sys/compiler_def.h>

#include <stddef.h>
#include <stdint.h>

BEGIN_C_DECLS

/** Fields of uct_iface_is_reachable_params_t. */
typedef enum {
    UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR        = UCS_BIT(0),
    UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR         = UCS_BIT(1),
    UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING        = UCS_BIT(2),
    UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH = UCS_BIT(3),
    UCT_IFACE_IS_REACHABLE_FIELD_SCOPE              = UCS_BIT(4)
} uct_iface_is_reachable_field_mask_t;


/** How far a reachability check looks. */
typedef enum {
    UCT_IFACE_REACHABILITY_SCOPE_DEVICE,  /**< the same device only */
    UCT_IFACE_REACHABILITY_SCOPE_NETWORK  /**< anything on the network (default) */
} uct_iface_reachability_scope_t;


/** Parameters of uct_iface_is_reachable_v2(). */
typedef struct uct_iface_is_reachable_params {
    uint64_t                       field_mask;  /**< ..._FIELD_xx bits */
    /** Remote device address; omit it if device_addr_len is 0. */
    const uct_device_addr_t        *device_addr;
    /** Remote interface address; omit it if iface_addr_len is 0. */
    const uct_iface_addr_t         *iface_addr;
    /**
     * Optional buffer that receives, when the result is 0, a line saying
     * why the peer is not reachable. Requires info_string_length.
     */
    char                           *info_string;
    size_t                         info_string_length;
    uct_iface_reachability_scope_t scope;
} uct_iface_is_reachable_params_t;


/** Fields of uct_ep_connect_to_ep_params_t. */
typedef enum {
    UCT_EP_CONNECT_TO_EP_PARAM_FIELD_DEVICE_ADDR_LENGTH = UCS_BIT(0),
    UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH     = UCS_BIT(1)
} uct_ep_connect_to_ep_param_field_t;


/** Parameters of uct_ep_connect_to_ep_v2(). */
typedef struct uct_ep_connect_to_ep_params {
    uint64_t field_mask;          /**< uct_ep_connect_to_ep_param_field_t */
    /** Length of the remote device address; unset means the transport's
     *  minimal length. */
    size_t   device_addr_length;
    /** Length of the remote endpoint address; likewise. */
    size_t   ep_addr_length;
} uct_ep_connect_to_ep_params_t;


/**
 * Whether a remote address is reachable from @a iface (local check only).
 * @return nonzero if reachable; 0 if not or if @a params are invalid.
 */
int uct_iface_is_reachable_v2(uct_iface_h iface,
                              const uct_iface_is_reachable_params_t *params);

/**
 * Connect @a ep to a remote endpoint (UCT_IFACE_FLAG_CONNECT_TO_EP).
 *
 * @param [in] device_addr  Remote device address.
 * @param [in] ep_addr      Remote endpoint address.
 * @param [in] params       Address lengths, see
 *                          uct_ep_connect_to_ep_params_t; must not be NULL.
 */
ucs_status_t
uct_ep_connect_to_ep_v2(uct_ep_h ep, const uct_device_addr_t *device_addr,
                        const uct_ep_addr_t *ep_addr,
                        const uct_ep_connect_to_ep_params_t *params);

END_C_DECLS

#endif
