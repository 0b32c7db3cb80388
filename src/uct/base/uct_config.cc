/*
 * Configuration bundles (see uct_config.h), the common memory domain and
 * interface knobs, and the public uct_*config* calls.
 */
#include <uct/base/uct_config.h>
#include <uct/base/uct_guard.h>
#include <uct/base/uct_iface.h>
#include <uct/base/uct_md.h>

#include <ucs/debug/log_def.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

/* "uctc" */
constexpr uint32_t bundle_magic = 0x75637463;

/* Precedes the options struct; its size keeps the options max-aligned */
struct alignas(std::max_align_t) config_bundle {
    uint32_t                 magic;
    const ucs_config_field_t *table;
};

void *bundle_data(config_bundle *bundle)
{
    return reinterpret_cast<char*>(bundle) + sizeof(config_bundle);
}

/* The bundle of a user's config pointer, or NULL (logged) if it is none. */
config_bundle *bundle_of(void *config, const char *func_name)
{
    config_bundle *bundle;

    if (config == nullptr) {
        ucs_error("%s: NULL configuration", func_name);
        return nullptr;
    }

    bundle = reinterpret_cast<config_bundle*>(static_cast<char*>(config) -
                                              sizeof(config_bundle));
    if (bundle->magic != bundle_magic) {
        ucs_error("%s: %p is not a configuration returned by a uct config "
                  "read function", func_name, config);
        return nullptr;
    }

    return bundle;
}

} // namespace


ucs_config_field_t uct_md_config_table[] = {
    UCS_CONFIG_EMPTY_FIELD
};

ucs_config_field_t uct_iface_config_table[] = {
    {"MAX_SHORT", "128",
     "Largest message, header included, sent inline with the work request\n"
     "(short operations). A transport may lower it to what its device allows.",
     offsetof(uct_iface_config_t, max_short), UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_BCOPY", "8192",
     "Largest message sent by copying it into a pre-registered buffer\n"
     "(bcopy operations).",
     offsetof(uct_iface_config_t, max_bcopy), UCS_CONFIG_TYPE_MEMUNITS},

    {"MAX_NUM_EPS", "inf",
     "Most endpoints an interface reports it can hold, or inf for no limit.",
     offsetof(uct_iface_config_t, max_num_eps), UCS_CONFIG_TYPE_ULUNITS},

    {"FAILURE", "warn",
     "Log level of the line that reports a failed endpoint (a peer gone, its\n"
     "address moved, a remote access error) when the interface has an error\n"
     "handler; without one the line is always an error.",
     offsetof(uct_iface_config_t, failure),
     UCS_CONFIG_TYPE_ENUM(ucs_log_level_names)},

    UCS_CONFIG_EMPTY_FIELD
};


ucs_status_t uct_config_read(const ucs_config_table_entry_t *entry,
                             const char *env_prefix, void **config_p)
{
    std::string   full_prefix = UCS_DEFAULT_ENV_PREFIX;
    config_bundle *bundle;
    ucs_status_t  status;

    if ((env_prefix != nullptr) && (env_prefix[0] != '\0')) {
        full_prefix = std::string(env_prefix) + "_" + UCS_DEFAULT_ENV_PREFIX;
    }

    bundle = static_cast<config_bundle*>(
            calloc(1, sizeof(config_bundle) + entry->size));
    if (bundle == nullptr) {
        ucs_error("cannot allocate the %s configuration (%zu bytes)",
                  entry->name, entry->size);
        return UCS_ERR_NO_MEMORY;
    }

    status = ucs_config_parser_fill_opts(bundle_data(bundle), entry->table,
                                         full_prefix.c_str(), entry->prefix);
    if (status != UCS_OK) {
        free(bundle);
        return status;
    }

    bundle->magic = bundle_magic;
    bundle->table = entry->table;
    *config_p     = bundle_data(bundle);
    return UCS_OK;
}

ucs_status_t uct_md_config_read(uct_component_h component,
                                const char *env_prefix, const char *,
                                uct_md_config_t **config_p)
{
    return uct::status_guard(__func__, [&]() {
        void         *config;
        ucs_status_t status;

        if ((component == nullptr) || (config_p == nullptr)) {
            ucs_error("uct_md_config_read: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        if (component->md_config.table == nullptr) {
            ucs_error("component %s has no memory domain configuration",
                      component->name);
            return UCS_ERR_INVALID_PARAM;
        }

        status = uct_config_read(&component->md_config, env_prefix, &config);
        if (status != UCS_OK) {
            return status;
        }

        *config_p = static_cast<uct_md_config_t*>(config);
        return UCS_OK;
    });
}

ucs_status_t uct_md_iface_config_read(uct_md_h md, const char *tl_name,
                                      const char *env_prefix, const char *,
                                      uct_iface_config_t **config_p)
{
    return uct::status_guard(__func__, [&]() {
        uct_tl_t     *tl;
        void         *config;
        ucs_status_t status;

        if ((md == nullptr) || (config_p == nullptr)) {
            ucs_error("uct_md_iface_config_read: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        if (tl_name == nullptr) {
            /* Only sockaddr memory domains accept that, and none exists */
            ucs_error("uct_md_iface_config_read: no transport name given");
            return UCS_ERR_INVALID_PARAM;
        }

        tl = uct_component_find_tl(md->component, tl_name);
        if (tl == nullptr) {
            ucs_error("component %s has no transport '%s'",
                      md->component->name, tl_name);
            return UCS_ERR_NO_DEVICE;
        }

        if (tl->config.table == nullptr) {
            ucs_error("transport %s has no interface configuration", tl->name);
            return UCS_ERR_INVALID_PARAM;
        }

        status = uct_config_read(&tl->config, env_prefix, &config);
        if (status != UCS_OK) {
            return status;
        }

        *config_p = static_cast<uct_iface_config_t*>(config);
        return UCS_OK;
    });
}

void uct_config_release(void *config)
{
    config_bundle *bundle;

    if (config == nullptr) {
        return;
    }

    bundle = bundle_of(config, __func__);
    if (bundle == nullptr) {
        return;
    }

    ucs_config_parser_release_opts(config, bundle->table);
    bundle->magic = 0;
    free(bundle);
}

ucs_status_t uct_config_modify(void *config, const char *name,
                               const char *value)
{
    return uct::status_guard(__func__, [&]() {
        config_bundle *bundle = bundle_of(config, "uct_config_modify");
        ucs_status_t  status;

        if (bundle == nullptr) {
            return UCS_ERR_INVALID_PARAM;
        }

        if ((name == nullptr) || (value == nullptr)) {
            ucs_error("uct_config_modify: NULL knob name or value");
            return UCS_ERR_INVALID_PARAM;
        }

        status = ucs_config_parser_set_value(config, bundle->table, name,
                                             value);
        if (status == UCS_ERR_INVALID_PARAM) {
            ucs_error("invalid value '%s' for configuration knob %s", value,
                      name);
        }

        /* UCS_ERR_NO_ELEM is not logged: callers try knobs on several
         * configurations and expect it where a knob does not belong */
        return status;
    });
}

ucs_status_t uct_config_get(void *config, const char *name, char *value,
                            size_t max)
{
    return uct::status_guard(__func__, [&]() {
        config_bundle *bundle = bundle_of(config, "uct_config_get");

        if (bundle == nullptr) {
            return UCS_ERR_INVALID_PARAM;
        }

        if ((name == nullptr) || (value == nullptr)) {
            ucs_error("uct_config_get: NULL knob name or value buffer");
            return UCS_ERR_INVALID_PARAM;
        }

        return ucs_config_parser_get_value(config, bundle->table, name, value,
                                           max);
    });
}
