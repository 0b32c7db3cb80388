/*
 * Public memory domain calls: argument checks, then dispatch to the
 * component or to the memory domain's operation table.
 */
#include <uct/base/uct_md.h>
#include <uct/base/uct_guard.h>

#include <ucs/debug/log_def.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

bool md_ops_are_complete(const uct_md_ops_t *ops)
{
    return (ops != nullptr) && (ops->close != nullptr) &&
           (ops->query != nullptr) && (ops->mem_reg != nullptr) &&
           (ops->mem_dereg != nullptr) && (ops->mkey_pack != nullptr);
}

/* Whether @a component lists a memory domain called @a md_name. */
[[nodiscard]] ucs_status_t
component_has_md(uct_component_t *component, const char *md_name, bool *found_p)
{
    uct_md_resource_desc_t *resources;
    unsigned               num_resources;
    ucs_status_t           status;

    status = component->query_md_resources(component, &resources,
                                           &num_resources);
    if (status != UCS_OK) {
        return status;
    }

    *found_p = false;
    for (unsigned i = 0; i < num_resources; ++i) {
        if (strncmp(resources[i].md_name, md_name, UCT_MD_NAME_MAX) == 0) {
            *found_p = true;
            break;
        }
    }

    free(resources);
    return UCS_OK;
}

/* Append the resources of one transport; a transport that fails to list its
 * devices contributes none (it said why). */
void add_tl_resources(uct_md_h md, uct_tl_t *tl,
                      std::vector<uct_tl_resource_desc_t> *resources)
{
    uct_tl_device_resource_t *devices     = nullptr;
    unsigned                 num_devices  = 0;
    ucs_status_t             status;

    status = tl->query_devices(md, &devices, &num_devices);
    if (status != UCS_OK) {
        ucs_debug("transport %s of component %s: no devices: %s", tl->name,
                  md->component->name, ucs_status_string(status));
        return;
    }

    for (unsigned i = 0; i < num_devices; ++i) {
        uct_tl_resource_desc_t resource = {};

        snprintf(resource.tl_name, sizeof(resource.tl_name), "%s", tl->name);
        snprintf(resource.dev_name, sizeof(resource.dev_name), "%s",
                 devices[i].name);
        resource.dev_type   = devices[i].type;
        resource.sys_device = devices[i].sys_device;
        try {
            resources->push_back(resource);
        } catch (...) {
            free(devices);
            throw;
        }
    }

    free(devices);
}

} // namespace


ucs_status_t uct_md_open(uct_component_h component, const char *md_name,
                         const uct_md_config_t *config, uct_md_h *md_p)
{
    return uct::status_guard(__func__, [&]() {
        uct_md_h     md;
        bool         found;
        ucs_status_t status;

        if ((component == nullptr) || (md_name == nullptr) ||
            (config == nullptr) || (md_p == nullptr)) {
            ucs_error("uct_md_open: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        status = component_has_md(component, md_name, &found);
        if (status != UCS_OK) {
            return status;
        }

        if (!found) {
            ucs_error("component %s has no memory domain '%s'",
                      component->name, md_name);
            return UCS_ERR_NO_DEVICE;
        }

        status = component->md_open(component, md_name, config, &md);
        if (status != UCS_OK) {
            return status;
        }

        if (!md_ops_are_complete(md->ops)) {
            ucs_error("component %s: memory domain %s has an empty operation "
                      "slot", component->name, md_name);
            if ((md->ops != nullptr) && (md->ops->close != nullptr)) {
                md->ops->close(md);
            }
            return UCS_ERR_INVALID_PARAM;
        }

        md->component = component;
        *md_p         = md;
        return UCS_OK;
    });
}

void uct_md_close(uct_md_h md)
{
    if (md == nullptr) {
        return;
    }

    uct::void_guard(__func__, [md]() { md->ops->close(md); });
}

ucs_status_t uct_md_query(uct_md_h md, uct_md_attr_t *md_attr)
{
    return uct::status_guard(__func__, [&]() {
        uct_md_attr_t attr = {};
        ucs_status_t  status;

        if ((md == nullptr) || (md_attr == nullptr)) {
            ucs_error("uct_md_query: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        status = md->ops->query(md, &attr);
        if (status != UCS_OK) {
            return status;
        }

        snprintf(attr.component_name, sizeof(attr.component_name), "%s",
                 md->component->name);
        *md_attr = attr;
        return UCS_OK;
    });
}

ucs_status_t uct_md_query_tl_resources(uct_md_h md,
                                       uct_tl_resource_desc_t **resources_p,
                                       unsigned *num_resources_p)
{
    return uct::status_guard(__func__, [&]() {
        std::vector<uct_tl_resource_desc_t> resources;
        uct_tl_resource_desc_t              *array;

        if ((md == nullptr) || (resources_p == nullptr) ||
            (num_resources_p == nullptr)) {
            ucs_error("uct_md_query_tl_resources: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        for (uct_tl_t *tl : uct_component_tl_list(md->component)) {
            add_tl_resources(md, tl, &resources);
        }

        array = static_cast<uct_tl_resource_desc_t*>(
                malloc(sizeof(*array) *
                       (resources.empty() ? 1 : resources.size())));
        if (array == nullptr) {
            ucs_error("cannot allocate %zu transport resources",
                      resources.size());
            return UCS_ERR_NO_MEMORY;
        }

        std::copy(resources.begin(), resources.end(), array);
        *resources_p     = array;
        *num_resources_p = static_cast<unsigned>(resources.size());
        return UCS_OK;
    });
}

void uct_release_tl_resource_list(uct_tl_resource_desc_t *resources)
{
    free(resources);
}

ucs_status_t uct_md_mem_reg(uct_md_h md, void *address, size_t length,
                            unsigned flags, uct_mem_h *memh_p)
{
    return uct::status_guard(__func__, [&]() {
        uct_mem_h    memh;
        ucs_status_t status;

        if ((md == nullptr) || (memh_p == nullptr)) {
            ucs_error("uct_md_mem_reg: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        if ((address == nullptr) || (length == 0)) {
            ucs_log(uct_md_reg_log_level(flags),
                    "uct_md_mem_reg(address %p length %zu) on %s: invalid "
                    "region", address, length, md->component->name);
            return UCS_ERR_INVALID_PARAM;
        }

        status = md->ops->mem_reg(md, address, length, flags, &memh);
        if (status != UCS_OK) {
            return status;
        }

        *memh_p = memh;
        return UCS_OK;
    });
}

ucs_status_t uct_md_mem_dereg(uct_md_h md, uct_mem_h memh)
{
    return uct::status_guard(__func__, [&]() {
        if ((md == nullptr) || (memh == UCT_MEM_HANDLE_NULL)) {
            ucs_error("uct_md_mem_dereg: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return md->ops->mem_dereg(md, memh);
    });
}

ucs_status_t uct_md_mkey_pack(uct_md_h md, uct_mem_h memh, void *rkey_buffer)
{
    return uct::status_guard(__func__, [&]() {
        if ((md == nullptr) || (memh == UCT_MEM_HANDLE_NULL) ||
            (rkey_buffer == nullptr)) {
            ucs_error("uct_md_mkey_pack: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return md->ops->mkey_pack(md, memh, rkey_buffer);
    });
}

ucs_status_t uct_rkey_unpack(uct_component_h component,
                             const void *rkey_buffer,
                             uct_rkey_bundle_t *rkey_ob)
{
    return uct::status_guard(__func__, [&]() {
        uct_rkey_t   rkey;
        void         *handle;
        ucs_status_t status;

        if ((component == nullptr) || (rkey_buffer == nullptr) ||
            (rkey_ob == nullptr)) {
            ucs_error("uct_rkey_unpack: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        status = component->rkey_unpack(component, rkey_buffer, &rkey,
                                         &handle);
        if (status != UCS_OK) {
            return status;
        }

        rkey_ob->rkey   = rkey;
        rkey_ob->handle = handle;
        rkey_ob->type   = component;
        return UCS_OK;
    });
}

ucs_status_t uct_rkey_release(uct_component_h component,
                              const uct_rkey_bundle_t *rkey_ob)
{
    return uct::status_guard(__func__, [&]() {
        if ((component == nullptr) || (rkey_ob == nullptr)) {
            ucs_error("uct_rkey_release: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        return component->rkey_release(component, rkey_ob->rkey,
                                       rkey_ob->handle);
    });
}


ucs_status_t uct_md_mem_reg_unsupported(uct_md_h, void*, size_t, unsigned,
                                        uct_mem_h*)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_md_mem_dereg_unsupported(uct_md_h, uct_mem_h)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_md_mkey_pack_unsupported(uct_md_h, uct_mem_h, void*)
{
    return UCS_ERR_UNSUPPORTED;
}
