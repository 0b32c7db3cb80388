/*
 * The public headers compile as strict C11 and link against the libraries:
 * built by "make check"; a C user sees exactly this.
 */
#include <ucs/async/async.h>
#include <ucs/config/parser.h>
#include <ucs/config/types.h>
#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>
#include <ucs/memory/memory_type.h>
#include <ucs/sys/compiler_def.h>
#include <ucs/sys/module.h>
#include <ucs/sys/event_set.h>
#include <ucs/time/time.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/status.h>
#include <uct/api/uct.h>
#include <uct/api/uct_def.h>
#include <uct/api/v2/uct_v2.h>

#include <stdio.h>

/* Print each component with its memory domains, as a UCT user would */
static ucs_status_t list_components(void)
{
    uct_component_h      *components;
    unsigned             num_components, i;
    uct_component_attr_t attr;
    ucs_status_t         status;

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; i < num_components; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME |
                          UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
        status          = uct_component_query(components[i], &attr);
        if (status != UCS_OK) {
            break;
        }
        printf("component %s: %u memory domains\n", attr.name,
               attr.md_resource_count);
    }

    uct_release_component_list(components);
    return status;
}

static void comp_done(uct_completion_t *self)
{
    printf("completed: %s\n", ucs_status_string(self->status));
}

/* The data path types and calls of a UCT program */
static void data_path_api(void)
{
    uct_completion_t  comp = {comp_done, 1, UCS_OK};
    uct_iov_t         iov  = {NULL, 0, UCT_MEM_HANDLE_NULL, 0, 1};
    uct_pending_req_t req;
    ucs_async_context_t *async;
    ucs_cpu_set_t     cpus;
    ucs_status_ptr_t  ptr = UCS_STATUS_PTR(UCS_ERR_CANCELED);
    ucs_status_t      (*am_short)(uct_ep_h, uint8_t, uint64_t, const void*,
                                  unsigned)         = uct_ep_am_short;
    ssize_t           (*am_bcopy)(uct_ep_h, uint8_t, uct_pack_callback_t,
                                  void*, unsigned)  = uct_ep_am_bcopy;
    ucs_status_t      (*flush)(uct_ep_h, unsigned, uct_completion_t*) =
                                                      uct_ep_flush;

    req.func = NULL;
    uct_completion_update_status(&comp, UCS_ERR_CANCELED);
    comp.func(&comp);
    UCS_CPU_ZERO(&cpus);
    UCS_CPU_SET(1, &cpus);
    ucs_assert_always(UCS_CPU_ISSET(1, &cpus) && UCS_PTR_IS_ERR(ptr));
    ucs_assert_always(ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                               &async) == UCS_OK);
    ucs_async_context_destroy(async);
    printf("data path: %s %zu %d %d %d %d\n",
           ucs_memory_type_names[UCS_MEMORY_TYPE_HOST], iov.length,
           (int)UCT_AM_ID_MAX, UCT_CB_PARAM_FLAG_DESC, req.func == NULL,
           (am_short != NULL) && (am_bcopy != NULL) && (flush != NULL) &&
           (UCT_FLUSH_FLAG_CANCEL != 0) && (UCT_IFACE_FLAG_CB_SYNC != 0));
}

int main(void)
{
    ucs_time_t                      start = ucs_get_time();
    uct_iface_is_reachable_params_t reachable_params = {0};
    uct_ep_connect_to_ep_params_t   connect_params   = {0};
    uct_worker_h                    worker;
    int          (*is_reachable)(uct_iface_h,
                                 const uct_iface_is_reachable_params_t*);
    ucs_status_t (*connect_v2)(uct_ep_h, const uct_device_addr_t*,
                            const uct_ep_addr_t*,
                            const uct_ep_connect_to_ep_params_t*);

    ucs_assert_always(ucs_status_string(UCS_ERR_NO_MEMORY) != NULL);
    printf("%s, %d\n", ucs_status_string(UCS_OK), ucs_get_time() >= start);

    ucs_assert_always(list_components() == UCS_OK);
    data_path_api();

    ucs_assert_always(uct_worker_create(NULL, UCS_THREAD_MODE_SINGLE,
                                        &worker) == UCS_OK);
    printf("progress: %u\n", uct_worker_progress(worker));
    uct_worker_destroy(worker);

    /* The v2 structures and calls are there for C too */
    reachable_params.field_mask = UCT_IFACE_IS_REACHABLE_FIELD_DEVICE_ADDR;
    connect_params.field_mask   = UCT_EP_CONNECT_TO_EP_PARAM_FIELD_EP_ADDR_LENGTH;
    is_reachable                = uct_iface_is_reachable_v2;
    connect_v2                  = uct_ep_connect_to_ep_v2;
    printf("v2: %d %d\n", (is_reachable != NULL) && (connect_v2 != NULL),
           (int)(reachable_params.field_mask + connect_params.field_mask));
    return 0;
}
