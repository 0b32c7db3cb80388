/*
 * Public interface calls (argument checks, then dispatch through the
 * interface's operation table), the base interface and the helpers and stubs
 * transports use in their tables.
 */
#include <uct/base/uct_iface.h>
#include <uct/base/uct_guard.h>
#include <uct/base/uct_md.h>

#include <ucs/debug/log_def.h>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

bool iface_ops_are_complete(const uct_iface_ops_t *ops)
{
    return (ops != nullptr) &&
           (ops->ep_create != nullptr) &&
           (ops->ep_destroy != nullptr) &&
           (ops->ep_get_address != nullptr) &&
           (ops->ep_connect_to_ep_v2 != nullptr) &&
           (ops->iface_close != nullptr) &&
           (ops->iface_query != nullptr) &&
           (ops->iface_get_device_address != nullptr) &&
           (ops->iface_get_address != nullptr) &&
           (ops->iface_is_reachable_v2 != nullptr) &&
           (ops->iface_progress_enable != nullptr) &&
           (ops->iface_progress_disable != nullptr) &&
           (ops->iface_progress != nullptr) &&
           (ops->ep_am_short != nullptr) &&
           (ops->ep_am_short_iov != nullptr) &&
           (ops->ep_am_bcopy != nullptr) &&
           (ops->ep_am_zcopy != nullptr) &&
           (ops->ep_put_short != nullptr) &&
           (ops->ep_put_bcopy != nullptr) &&
           (ops->ep_put_zcopy != nullptr) &&
           (ops->ep_get_short != nullptr) &&
           (ops->ep_get_bcopy != nullptr) &&
           (ops->ep_get_zcopy != nullptr) &&
           (ops->ep_atomic_cswap64 != nullptr) &&
           (ops->ep_atomic_cswap32 != nullptr) &&
           (ops->ep_atomic32_post != nullptr) &&
           (ops->ep_atomic64_post != nullptr) &&
           (ops->ep_atomic32_fetch != nullptr) &&
           (ops->ep_atomic64_fetch != nullptr) &&
           (ops->ep_pending_add != nullptr) &&
           (ops->ep_pending_purge != nullptr) &&
           (ops->ep_flush != nullptr) &&
           (ops->ep_fence != nullptr) &&
           (ops->ep_check != nullptr) &&
           (ops->iface_flush != nullptr) &&
           (ops->iface_fence != nullptr) &&
           (ops->iface_event_fd_get != nullptr) &&
           (ops->iface_event_arm != nullptr);
}

/* The handler of an id nobody set: the message is dropped, loudly */
ucs_status_t am_stub_handler(void *arg, void*, size_t length, unsigned)
{
    const auto id = static_cast<unsigned>(reinterpret_cast<uintptr_t>(arg));

    ucs_warn("active message id %u (%zu bytes) dropped: no handler is set",
             id, length);
    return UCS_OK;
}

void set_am_stub(uct_base_iface_t *iface, uint8_t id)
{
    iface->am[id].cb    = am_stub_handler;
    iface->am[id].arg   = reinterpret_cast<void*>(static_cast<uintptr_t>(id));
    iface->am[id].flags = UCT_CB_FLAG_ASYNC;
}

/* The open mode and device of @a params, or UCS_ERR_INVALID_PARAM (logged). */
[[nodiscard]] ucs_status_t check_open_params(const uct_iface_params_t *params)
{
    const uint64_t sockaddr_modes = UCT_IFACE_OPEN_MODE_SOCKADDR_SERVER |
                                    UCT_IFACE_OPEN_MODE_SOCKADDR_CLIENT;

    if (!(params->field_mask & UCT_IFACE_PARAM_FIELD_OPEN_MODE)) {
        ucs_error("uct_iface_open: open_mode is required (field_mask 0x%lx "
                  "lacks UCT_IFACE_PARAM_FIELD_OPEN_MODE)",
                  (unsigned long)params->field_mask);
        return UCS_ERR_INVALID_PARAM;
    }

    if (params->open_mode & sockaddr_modes) {
        ucs_debug("uct_iface_open: sockaddr interfaces are not supported "
                  "(open_mode 0x%lx)", (unsigned long)params->open_mode);
        return UCS_ERR_UNSUPPORTED;
    }

    if (params->open_mode != UCT_IFACE_OPEN_MODE_DEVICE) {
        ucs_error("uct_iface_open: invalid open_mode 0x%lx",
                  (unsigned long)params->open_mode);
        return UCS_ERR_INVALID_PARAM;
    }

    if (!(params->field_mask & UCT_IFACE_PARAM_FIELD_DEVICE) ||
        (params->mode.device.tl_name == nullptr) ||
        (params->mode.device.dev_name == nullptr)) {
        ucs_error("uct_iface_open: device mode needs mode.device.tl_name and "
                  "dev_name (UCT_IFACE_PARAM_FIELD_DEVICE)");
        return UCS_ERR_INVALID_PARAM;
    }

    return UCS_OK;
}

/* UCS_ERR_NO_DEVICE (logged) unless @a tl lists @a dev_name on @a md. */
[[nodiscard]] ucs_status_t
check_tl_device(uct_md_h md, uct_tl_t *tl, const char *dev_name)
{
    uct_tl_device_resource_t *devices    = nullptr;
    unsigned                 num_devices = 0;
    bool                     found       = false;
    ucs_status_t             status;

    status = tl->query_devices(md, &devices, &num_devices);
    if (status == UCS_ERR_NO_MEMORY) {
        return status;
    }

    for (unsigned i = 0; (status == UCS_OK) && (i < num_devices); ++i) {
        if (strncmp(devices[i].name, dev_name, UCT_DEVICE_NAME_MAX) == 0) {
            found = true;
            break;
        }
    }
    free(devices);

    if (!found) {
        ucs_error("transport %s has no device '%s' on component %s", tl->name,
                  dev_name, md->component->name);
        return UCS_ERR_NO_DEVICE;
    }

    return UCS_OK;
}

unsigned base_iface_progress_cb(void *arg)
{
    auto *iface = static_cast<uct_base_iface_t*>(arg);

    return iface->ops->iface_progress(iface);
}

} // namespace


ucs_status_t uct_iface_open(uct_md_h md, uct_worker_h worker,
                            const uct_iface_params_t *params,
                            const uct_iface_config_t *config,
                            uct_iface_h *iface_p)
{
    return uct::status_guard(__func__, [&]() {
        uct_iface_h  iface;
        uct_tl_t     *tl;
        ucs_status_t status;

        if ((md == nullptr) || (worker == nullptr) || (params == nullptr) ||
            (config == nullptr) || (iface_p == nullptr)) {
            ucs_error("uct_iface_open: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        status = check_open_params(params);
        if (status != UCS_OK) {
            return status;
        }

        tl = uct_component_find_tl(md->component, params->mode.device.tl_name);
        if (tl == nullptr) {
            ucs_error("component %s has no transport '%s'",
                      md->component->name, params->mode.device.tl_name);
            return UCS_ERR_NO_DEVICE;
        }

        status = check_tl_device(md, tl, params->mode.device.dev_name);
        if (status != UCS_OK) {
            return status;
        }

        status = tl->iface_open(md, worker, params, config, &iface);
        if (status != UCS_OK) {
            return status;
        }

        if (!iface_ops_are_complete(iface->ops)) {
            ucs_error("transport %s: interface on %s has an empty operation "
                      "slot", tl->name, params->mode.device.dev_name);
            if ((iface->ops != nullptr) && (iface->ops->iface_close != nullptr)) {
                iface->ops->iface_close(iface);
            }
            return UCS_ERR_INVALID_PARAM;
        }

        ucs_debug("opened interface %p of %s/%s", iface, tl->name,
                  params->mode.device.dev_name);
        *iface_p = iface;
        return UCS_OK;
    });
}

void uct_iface_close(uct_iface_h iface)
{
    if (iface == nullptr) {
        return;
    }

    uct::void_guard(__func__, [iface]() { iface->ops->iface_close(iface); });
}

ucs_status_t uct_iface_query(uct_iface_h iface, uct_iface_attr_t *iface_attr)
{
    return uct::status_guard(__func__, [&]() {
        uct_iface_attr_t attr = {};
        ucs_status_t     status;

        if ((iface == nullptr) || (iface_attr == nullptr)) {
            ucs_error("uct_iface_query: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        status = iface->ops->iface_query(iface, &attr);
        if (status != UCS_OK) {
            return status;
        }

        *iface_attr = attr;
        return UCS_OK;
    });
}

ucs_status_t uct_iface_get_device_address(uct_iface_h iface,
                                          uct_device_addr_t *addr)
{
    return uct::status_guard(__func__, [&]() {
        if ((iface == nullptr) || (addr == nullptr)) {
            ucs_error("uct_iface_get_device_address: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return iface->ops->iface_get_device_address(iface, addr);
    });
}

ucs_status_t uct_iface_get_address(uct_iface_h iface, uct_iface_addr_t *addr)
{
    return uct::status_guard(__func__, [&]() {
        if ((iface == nullptr) || (addr == nullptr)) {
            ucs_error("uct_iface_get_address: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return iface->ops->iface_get_address(iface, addr);
    });
}

int uct_iface_is_reachable_v2(uct_iface_h iface,
                              const uct_iface_is_reachable_params_t *params)
{
    return uct::value_guard(__func__, 0, [&]() {
        const uint64_t info_fields = UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING |
                                     UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING_LENGTH;

        if ((iface == nullptr) || (params == nullptr)) {
            ucs_error("uct_iface_is_reachable_v2: NULL argument");
            return 0;
        }

        if ((params->field_mask & info_fields) &&
            ((params->field_mask & info_fields) != info_fields)) {
            ucs_error("uct_iface_is_reachable_v2: info_string and "
                      "info_string_length go together (field_mask 0x%lx)",
                      (unsigned long)params->field_mask);
            return 0;
        }

        if ((params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_SCOPE) &&
            (params->scope != UCT_IFACE_REACHABILITY_SCOPE_DEVICE) &&
            (params->scope != UCT_IFACE_REACHABILITY_SCOPE_NETWORK)) {
            ucs_error("uct_iface_is_reachable_v2: invalid scope %d",
                      (int)params->scope);
            return 0;
        }

        if ((params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING) &&
            (params->info_string != nullptr) &&
            (params->info_string_length > 0)) {
            params->info_string[0] = '\0';
        }

        return iface->ops->iface_is_reachable_v2(iface, params);
    });
}

int uct_iface_is_reachable(const uct_iface_h iface,
                           const uct_device_addr_t *dev_addr,
                           const uct_iface_addr_t *iface_addr)
{
    uct_iface_is_reachable_params_t params = {};

    if (dev_addr != nullptr) {
        params.field_mask |= UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR;
        params.device_addr = dev_addr;
    }

    if (iface_addr != nullptr) {
        params.field_mask |= UCT_IFACE_IS_REACHABLE_FIELD_IFACE_ADDR;
        params.iface_addr  = iface_addr;
    }

    return uct_iface_is_reachable_v2(iface, &params);
}

void uct_iface_progress_enable(uct_iface_h iface, unsigned flags)
{
    uct::void_guard(__func__, [&]() {
        iface->ops->iface_progress_enable(iface, flags);
    });
}

void uct_iface_progress_disable(uct_iface_h iface, unsigned flags)
{
    uct::void_guard(__func__, [&]() {
        iface->ops->iface_progress_disable(iface, flags);
    });
}

unsigned uct_iface_progress(uct_iface_h iface)
{
    return uct::value_guard(__func__, 0u, [&]() {
        return iface->ops->iface_progress(iface);
    });
}


ucs_status_t uct_base_iface_init(uct_base_iface_t *iface,
                                 const uct_iface_ops_t *ops, uct_md_h md,
                                 uct_worker_h worker,
                                 const uct_iface_params_t *params,
                                 const uct_iface_config_t *config)
{
    const uint64_t mask = params->field_mask;

    iface->ops               = ops;
    iface->md                = md;
    iface->worker            = worker;
    iface->err_handler       = (mask & UCT_IFACE_PARAM_FIELD_ERR_HANDLER) ?
                               params->err_handler : nullptr;
    iface->err_handler_arg   = (mask & UCT_IFACE_PARAM_FIELD_ERR_HANDLER_ARG) ?
                               params->err_handler_arg : nullptr;
    iface->err_handler_flags = (mask & UCT_IFACE_PARAM_FIELD_ERR_HANDLER_FLAGS) ?
                               params->err_handler_flags : 0;
    iface->rx_headroom       = (mask & UCT_IFACE_PARAM_FIELD_RX_HEADROOM) ?
                               params->rx_headroom : 0;
    iface->config.max_short   = config->max_short;
    iface->config.max_bcopy   = config->max_bcopy;
    iface->config.max_num_eps = config->max_num_eps;
    iface->config.failure_level = static_cast<ucs_log_level_t>(config->failure);
    iface->progress_flags    = 0;
    iface->progress_id       = UCS_CALLBACKQ_ID_NULL;
    iface->progress_cb       = base_iface_progress_cb;
    for (unsigned id = 0; id < UCT_AM_ID_MAX; ++id) {
        set_am_stub(iface, id);
    }
    return UCS_OK;
}

ucs_status_t uct_iface_set_am_handler(uct_iface_h tl_iface, uint8_t id,
                                      uct_am_callback_t cb, void *arg,
                                      uint32_t flags)
{
    return uct::status_guard(__func__, [&]() {
        auto             *iface = static_cast<uct_base_iface_t*>(tl_iface);
        uct_iface_attr_t attr   = {};
        ucs_status_t     status;

        if (tl_iface == nullptr) {
            ucs_error("uct_iface_set_am_handler: NULL interface");
            return UCS_ERR_INVALID_PARAM;
        }
        if (id >= UCT_AM_ID_MAX) {
            ucs_error("uct_iface_set_am_handler: active message id %u out of "
                      "range (0..%u)", id, unsigned(UCT_AM_ID_MAX - 1));
            return UCS_ERR_INVALID_PARAM;
        }

        if (cb == nullptr) {
            set_am_stub(iface, id);
            return UCS_OK;
        }

        status = tl_iface->ops->iface_query(tl_iface, &attr);
        if (status != UCS_OK) {
            return status;
        }
        if (!(flags & UCT_CB_FLAG_ASYNC) &&
            !(attr.cap.flags & UCT_IFACE_FLAG_CB_SYNC)) {
            ucs_error("uct_iface_set_am_handler: the interface does not call "
                      "back from progress only (no UCT_IFACE_FLAG_CB_SYNC); "
                      "the handler of id %u must accept UCT_CB_FLAG_ASYNC", id);
            return UCS_ERR_UNSUPPORTED;
        }

        iface->am[id].cb    = cb;
        iface->am[id].arg   = arg;
        iface->am[id].flags = flags;
        return UCS_OK;
    });
}

void uct_iface_release_desc(void *desc)
{
    uct_recv_desc_t *release = uct_recv_desc_of(desc);

    release->cb(release, desc);
}

void uct_base_iface_cleanup(uct_base_iface_t *iface)
{
    uct_worker_progress_unregister_safe(iface->worker, &iface->progress_id);
    iface->progress_flags = 0;
}

void uct_base_iface_query(const uct_base_iface_t *iface,
                          uct_iface_attr_t *iface_attr)
{
    iface_attr->max_num_eps   = (iface->config.max_num_eps == UCS_ULUNITS_INF) ?
                                SIZE_MAX : iface->config.max_num_eps;
    iface_attr->dev_num_paths = 1;
}

void uct_base_iface_progress_enable(uct_iface_h tl_iface, unsigned flags)
{
    auto *iface = static_cast<uct_base_iface_t*>(tl_iface);

    flags &= UCT_PROGRESS_SEND | UCT_PROGRESS_RECV;
    if (flags == 0) {
        return;
    }

    if (iface->progress_flags == 0) {
        uct_worker_progress_register_safe(iface->worker, iface->progress_cb,
                                          iface, UCS_CALLBACKQ_FLAG_FAST,
                                          &iface->progress_id);
    }
    iface->progress_flags |= flags;
}

void uct_base_iface_progress_disable(uct_iface_h tl_iface, unsigned flags)
{
    auto *iface = static_cast<uct_base_iface_t*>(tl_iface);

    iface->progress_flags &= ~flags;
    if (!(iface->progress_flags & (UCT_PROGRESS_SEND | UCT_PROGRESS_RECV))) {
        iface->progress_flags = 0;
        uct_worker_progress_unregister_safe(iface->worker, &iface->progress_id);
    }
}


int uct_iface_is_reachable_params_valid(
        const uct_iface_is_reachable_params_t *params, uint64_t required_mask)
{
    uint64_t missing = required_mask & ~params->field_mask;

    if (missing != 0) {
        ucs_error("reachability check: missing parameters (field_mask 0x%lx, "
                  "missing 0x%lx)", (unsigned long)params->field_mask,
                  (unsigned long)missing);
        return 0;
    }

    return 1;
}

uct_iface_reachability_scope_t
uct_iface_is_reachable_params_scope(const uct_iface_is_reachable_params_t *params)
{
    return (params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_SCOPE) ?
           params->scope : UCT_IFACE_REACHABILITY_SCOPE_NETWORK;
}

void uct_iface_fill_info_str_buf(const uct_iface_is_reachable_params_t *params,
                                 const char *fmt, ...)
{
    va_list ap;

    if (!(params->field_mask & UCT_IFACE_IS_REACHABLE_FIELD_INFO_STRING) ||
        (params->info_string == nullptr) ||
        (params->info_string_length == 0)) {
        return;
    }

    va_start(ap, fmt);
    vsnprintf(params->info_string, params->info_string_length, fmt, ap);
    va_end(ap);
}


ucs_status_t uct_iface_get_device_address_empty(uct_iface_h, uct_device_addr_t*)
{
    return UCS_OK;
}

ucs_status_t uct_iface_get_address_empty(uct_iface_h, uct_iface_addr_t*)
{
    return UCS_OK;
}

ucs_status_t uct_ep_create_unsupported(const uct_ep_params_t*, uct_ep_h*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_get_address_unsupported(uct_ep_h, uct_ep_addr_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_ep_connect_to_ep_v2_unsupported(
        uct_ep_h, const uct_device_addr_t*, const uct_ep_addr_t*,
        const uct_ep_connect_to_ep_params_t*)
{
    return UCS_ERR_UNSUPPORTED;
}

unsigned uct_iface_progress_nop(uct_iface_h)
{
    return 0;
}
