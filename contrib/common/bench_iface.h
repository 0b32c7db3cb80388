/*
 * What the contrib programs that run on both libraries (compare-ucx's
 * benchmarks, scatter-check) set up the same way, with the public API only
 * (so they build against UCX 1.13.1 and against this tree): an interface
 * on a device with its own async context, worker and memory domain, and
 * its device address; and the clock their bounded waits read.
 */
#ifndef CONTRIB_BENCH_IFACE_H
#define CONTRIB_BENCH_IFACE_H

#include <uct/api/uct.h>
#include <ucs/type/status.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Seconds on the monotonic clock: waits are bounded in time, not in polls,
 * since a loaded machine may not run the emulated NIC for a while */
static inline double bench_now_sec(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct {
    ucs_async_context_t *async;
    uct_worker_h        worker;
    uct_md_h            md;
    uct_iface_h         iface;
    uct_iface_attr_t    attr;
    uct_device_addr_t   *dev_addr;
} bench_iface_t;

static uct_component_h bench_find_ib_component(void)
{
    uct_component_h *components, found = NULL;
    uct_component_attr_t attr;
    unsigned num, i;

    if (uct_query_components(&components, &num) != UCS_OK) {
        return NULL;
    }
    for (i = 0; i < num; ++i) {
        memset(&attr, 0, sizeof(attr));
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if ((uct_component_query(components[i], &attr) == UCS_OK) &&
            !strcmp(attr.name, "ib")) {
            found = components[i];
        }
    }
    uct_release_component_list(components);
    return found;
}

/* Open @a tl on @a dev ("mlx5_0:1") with progress enabled: NULL, or what
 * failed with its status in *status_p (bench_iface_close then releases
 * what was made) */
static inline const char *bench_iface_open(bench_iface_t *bi,
                                    uct_component_h component,
                                    const char *dev, const char *tl,
                                    ucs_status_t *status_p)
{
    uct_md_config_t *md_config;
    uct_iface_config_t *config;
    uct_iface_params_t params;
    char md_name[64];
    ucs_status_t status;

    memset(bi, 0, sizeof(*bi));
    status = ucs_async_context_create(UCS_ASYNC_MODE_THREAD_SPINLOCK,
                                      &bi->async);
    if (status == UCS_OK) {
        status = uct_worker_create(bi->async, UCS_THREAD_MODE_SINGLE,
                                   &bi->worker);
    }
    if ((*status_p = status) != UCS_OK) {
        return "creating a worker";
    }

    snprintf(md_name, sizeof(md_name), "%.*s", (int)strcspn(dev, ":"), dev);
    status = uct_md_config_read(component, NULL, NULL, &md_config);
    if (status == UCS_OK) {
        status = uct_md_open(component, md_name, md_config, &bi->md);
        uct_config_release(md_config);
    }
    if ((*status_p = status) != UCS_OK) {
        return "opening the memory domain";
    }

    status = uct_md_iface_config_read(bi->md, tl, NULL, NULL, &config);
    if ((*status_p = status) != UCS_OK) {
        return "reading the transport's configuration";
    }
    memset(&params, 0, sizeof(params));
    params.field_mask           = UCT_IFACE_PARAM_FIELD_OPEN_MODE |
                                  UCT_IFACE_PARAM_FIELD_DEVICE;
    params.open_mode            = UCT_IFACE_OPEN_MODE_DEVICE;
    params.mode.device.tl_name  = tl;
    params.mode.device.dev_name = dev;
    status = uct_iface_open(bi->md, bi->worker, &params, config, &bi->iface);
    uct_config_release(config);
    if ((*status_p = status) != UCS_OK) {
        return "opening the interface";
    }
    uct_iface_progress_enable(bi->iface, UCT_PROGRESS_SEND | UCT_PROGRESS_RECV);

    status = uct_iface_query(bi->iface, &bi->attr);
    if ((*status_p = status) != UCS_OK) {
        return "querying the interface";
    }
    bi->dev_addr = malloc(bi->attr.device_addr_len);
    if (bi->dev_addr == NULL) {
        *status_p = UCS_ERR_NO_MEMORY;
        return "the device address";
    }
    *status_p = uct_iface_get_device_address(bi->iface, bi->dev_addr);
    return (*status_p == UCS_OK) ? NULL : "the device address";
}

static inline void bench_iface_close(bench_iface_t *bi)
{
    free(bi->dev_addr);
    if (bi->iface != NULL) {
        uct_iface_close(bi->iface);
    }
    if (bi->md != NULL) {
        uct_md_close(bi->md);
    }
    if (bi->worker != NULL) {
        uct_worker_destroy(bi->worker);
    }
    if (bi->async != NULL) {
        ucs_async_context_destroy(bi->async);
    }
    memset(bi, 0, sizeof(*bi));
}

#endif
