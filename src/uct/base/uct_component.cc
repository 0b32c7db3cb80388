/*
 * The component registry: components link themselves in from constructors
 * (of libuct's users and of the "uct" modules), transports link into their
 * component. The lists are intrusive, so registering never allocates and
 * works before any other static object of the process is constructed.
 */
#include <uct/base/uct_component.h>
#include <uct/base/uct_guard.h>

#include <ucs/debug/log_def.h>
#include <ucs/sys/module.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

namespace {

/* Constant-initialised, so usable from any constructor */
std::mutex      registry_lock;
uct_component_t *registry_head = nullptr;

bool component_is_complete(const uct_component_t *component)
{
    return (component->name[0] != '\0') &&
           (component->query_md_resources != nullptr) &&
           (component->md_open != nullptr) &&
           (component->rkey_unpack != nullptr) &&
           (component->rkey_release != nullptr);
}

bool tl_is_complete(const uct_tl_t *tl)
{
    return (tl->name[0] != '\0') && (tl->query_devices != nullptr) &&
           (tl->iface_open != nullptr);
}

void register_config(const ucs_config_table_entry_t *entry)
{
    if (entry->table == nullptr) {
        return;
    }

    uct::void_guard("uct config registration", [entry]() {
        ucs_config_register_table(entry);
    });
}

void unregister_config(const ucs_config_table_entry_t *entry)
{
    if (entry->table == nullptr) {
        return;
    }

    uct::void_guard("uct config unregistration", [entry]() {
        ucs_config_unregister_table(entry);
    });
}

/* Unlink @a item from the list at @a head_p, whose links are @a next. */
template <typename T>
bool list_remove(T **head_p, T *item)
{
    for (T **link = head_p; *link != nullptr; link = &(*link)->next) {
        if (*link == item) {
            *link      = item->next;
            item->next = nullptr;
            return true;
        }
    }
    return false;
}

template <typename T>
bool list_append(T **head_p, T *item)
{
    T **link = head_p;

    for (; *link != nullptr; link = &(*link)->next) {
        if (*link == item) {
            return false; /* already there */
        }
    }

    item->next = nullptr;
    *link      = item;
    return true;
}

} // namespace


const char *uct_device_type_names[] = {
    "network",
    "intra-node",
    "accelerator",
    "loopback",
    nullptr
};


void uct_component_register(uct_component_t *component)
{
    if (!component_is_complete(component)) {
        ucs_error("component '%.*s' not registered: it has no name or an "
                  "empty operation slot", UCT_COMPONENT_NAME_MAX,
                  component->name);
        return;
    }

    {
        std::lock_guard<std::mutex> guard(registry_lock);
        if (!list_append(&registry_head, component)) {
            return;
        }
    }

    register_config(&component->md_config);
    ucs_debug("registered component %s", component->name);
}

void uct_component_unregister(uct_component_t *component)
{
    {
        std::lock_guard<std::mutex> guard(registry_lock);
        if (!list_remove(&registry_head, component)) {
            return;
        }
    }

    unregister_config(&component->md_config);
}

void uct_tl_register(uct_component_t *component, uct_tl_t *tl)
{
    if (!tl_is_complete(tl)) {
        ucs_error("transport '%.*s' of component %s not registered: it has "
                  "no name or an empty operation slot", UCT_TL_NAME_MAX,
                  tl->name, component->name);
        return;
    }

    {
        std::lock_guard<std::mutex> guard(registry_lock);
        if (!list_append(&component->tl_list, tl)) {
            return;
        }
    }

    register_config(&tl->config);
}

void uct_tl_unregister(uct_component_t *component, uct_tl_t *tl)
{
    {
        std::lock_guard<std::mutex> guard(registry_lock);
        if (!list_remove(&component->tl_list, tl)) {
            return;
        }
    }

    unregister_config(&tl->config);
}

uct_tl_t *uct_component_find_tl(uct_component_t *component, const char *tl_name)
{
    std::lock_guard<std::mutex> guard(registry_lock);

    for (uct_tl_t *tl = component->tl_list; tl != nullptr; tl = tl->next) {
        if (strncmp(tl->name, tl_name, UCT_TL_NAME_MAX) == 0) {
            return tl;
        }
    }
    return nullptr;
}

std::vector<uct_tl_t*> uct_component_tl_list(uct_component_t *component)
{
    std::vector<uct_tl_t*>      tls;
    std::lock_guard<std::mutex> guard(registry_lock);

    for (uct_tl_t *tl = component->tl_list; tl != nullptr; tl = tl->next) {
        tls.push_back(tl);
    }
    return tls;
}


ucs_status_t uct_query_components(uct_component_h **components_p,
                                  unsigned *num_components_p)
{
    return uct::status_guard(__func__, [&]() {
        std::vector<uct_component_h> list;
        uct_component_h              *array;

        if ((components_p == nullptr) || (num_components_p == nullptr)) {
            ucs_error("uct_query_components: NULL output argument");
            return UCS_ERR_INVALID_PARAM;
        }

        /* Modules register their components from their constructors; this
         * loads them once (per module directory), later calls return at
         * once. Must not run under registry_lock. */
        ucs_modules_load("uct");

        {
            std::lock_guard<std::mutex> guard(registry_lock);
            for (uct_component_t *c = registry_head; c != nullptr; c = c->next) {
                list.push_back(c);
            }
        }

        /* At least one entry, so that an empty list is not a NULL pointer */
        array = static_cast<uct_component_h*>(
                malloc(sizeof(*array) * (list.empty() ? 1 : list.size())));
        if (array == nullptr) {
            ucs_error("uct_query_components: cannot allocate %zu entries",
                      list.size());
            return UCS_ERR_NO_MEMORY;
        }

        std::copy(list.begin(), list.end(), array);
        *components_p     = array;
        *num_components_p = static_cast<unsigned>(list.size());
        return UCS_OK;
    });
}

void uct_release_component_list(uct_component_h *components)
{
    free(components);
}

ucs_status_t uct_component_query(uct_component_h component,
                                 uct_component_attr_t *component_attr)
{
    return uct::status_guard(__func__, [&]() {
        const uint64_t         resource_fields =
                UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT |
                UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
        uct_md_resource_desc_t *resources      = nullptr;
        unsigned               num_resources   = 0;
        ucs_status_t           status;

        if ((component == nullptr) || (component_attr == nullptr)) {
            ucs_error("uct_component_query: NULL argument");
            return UCS_ERR_INVALID_PARAM;
        }

        if (component_attr->field_mask & resource_fields) {
            status = component->query_md_resources(component, &resources,
                                                   &num_resources);
            if (status != UCS_OK) {
                return status;
            }
        }

        if (component_attr->field_mask & UCT_COMPONENT_ATTR_FIELD_NAME) {
            snprintf(component_attr->name, sizeof(component_attr->name), "%s",
                     component->name);
        }

        if (component_attr->field_mask &
            UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT) {
            component_attr->md_resource_count = num_resources;
        }

        if ((component_attr->field_mask &
             UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES) && (num_resources > 0)) {
            memcpy(component_attr->md_resources, resources,
                   sizeof(*resources) * num_resources);
        }

        if (component_attr->field_mask & UCT_COMPONENT_ATTR_FIELD_FLAGS) {
            component_attr->flags = component->flags;
        }

        free(resources);
        return UCS_OK;
    });
}


ucs_status_t uct_component_query_single_md_resource(
        uct_component_t *component, uct_md_resource_desc_t **resources_p,
        unsigned *num_resources_p)
{
    auto *resource = static_cast<uct_md_resource_desc_t*>(
            calloc(1, sizeof(uct_md_resource_desc_t)));

    if (resource == nullptr) {
        ucs_error("component %s: cannot allocate its md resource",
                  component->name);
        return UCS_ERR_NO_MEMORY;
    }

    snprintf(resource->md_name, sizeof(resource->md_name), "%s",
             component->name);
    *resources_p     = resource;
    *num_resources_p = 1;
    return UCS_OK;
}

ucs_status_t uct_component_rkey_unpack_unsupported(uct_component_t*,
                                                   const void*, uct_rkey_t*,
                                                   void**)
{
    return UCS_ERR_UNSUPPORTED;
}

ucs_status_t uct_component_rkey_release_nop(uct_component_t*, uct_rkey_t,
                                            void*)
{
    return UCS_OK;
}
