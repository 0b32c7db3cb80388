/*
 * Public endpoint calls: argument checks, then dispatch through the
 * operation table of the endpoint's interface. uct_ep_connect_to_ep() is
 * uct_ep_connect_to_ep_v2() with no optional field.
 */
#include <uct/base/uct_iface.h>
#include <uct/base/uct_guard.h>

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>

ucs_status_t uct_ep_create(const uct_ep_params_t *params, uct_ep_h *ep_p)
{
    return uct::status_guard(__func__, [&]() {
        const uint64_t cm_fields = UCT_EP_PARAM_FIELD_CM |
                                   UCT_EP_PARAM_FIELD_SOCKADDR |
                                   UCT_EP_PARAM_FIELD_CONN_REQUEST |
                                   UCT_EP_PARAM_FIELD_LOCAL_SOCKADDR;
        uct_ep_h       ep;
        ucs_status_t   status;

        if ((params == nullptr) || (ep_p == nullptr)) {
            ucs_error("uct_ep_create: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        if (params->field_mask & cm_fields) {
            ucs_debug("uct_ep_create: client-server endpoints are not "
                      "supported (field_mask 0x%lx)",
                      (unsigned long)params->field_mask);
            return UCS_ERR_UNSUPPORTED;
        }

        if (!(params->field_mask & UCT_EP_PARAM_FIELD_IFACE) ||
            (params->iface == nullptr)) {
            ucs_error("uct_ep_create: an interface is required (field_mask "
                      "0x%lx lacks UCT_EP_PARAM_FIELD_IFACE)",
                      (unsigned long)params->field_mask);
            return UCS_ERR_INVALID_PARAM;
        }

        status = params->iface->ops->ep_create(params, &ep);
        if (status != UCS_OK) {
            return status;
        }

        ucs_assertv(ep->iface == params->iface, "ep %p iface %p expected %p",
                    ep, ep->iface, params->iface);
        *ep_p = ep;
        return UCS_OK;
    });
}

void uct_ep_destroy(uct_ep_h ep)
{
    if (ep == nullptr) {
        return;
    }

    uct::void_guard(__func__, [ep]() { ep->iface->ops->ep_destroy(ep); });
}

ucs_status_t uct_ep_get_address(uct_ep_h ep, uct_ep_addr_t *addr)
{
    return uct::status_guard(__func__, [&]() {
        if ((ep == nullptr) || (addr == nullptr)) {
            ucs_error("uct_ep_get_address: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return ep->iface->ops->ep_get_address(ep, addr);
    });
}

ucs_status_t
uct_ep_connect_to_ep_v2(uct_ep_h ep, const uct_device_addr_t *device_addr,
                        const uct_ep_addr_t *ep_addr,
                        const uct_ep_connect_to_ep_params_t *params)
{
    return uct::status_guard(__func__, [&]() {
        if ((ep == nullptr) || (ep_addr == nullptr) || (params == nullptr)) {
            ucs_error("uct_ep_connect_to_ep_v2: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return ep->iface->ops->ep_connect_to_ep_v2(ep, device_addr, ep_addr,
                                                   params);
    });
}

ucs_status_t uct_ep_connect_to_ep(uct_ep_h ep, const uct_device_addr_t *dev_addr,
                                  const uct_ep_addr_t *ep_addr)
{
    const uct_ep_connect_to_ep_params_t params = {};

    return uct_ep_connect_to_ep_v2(ep, dev_addr, ep_addr, &params);
}
