/*
 * uct_devices: the memory domains of one UCT component ("ib" unless another
 * is named on the command line) and the transports each one offers, with
 * their devices, through the public UCT API only: a tiny "ucx_info -d".
 *
 * Build it against an installed tree:
 *   cc -std=c11 -Wall -Werror -pedantic uct_devices.c -o uct_devices \
 *      $(pkg-config --cflags --libs ucx-ib)
 * and run it on the emulated mlx5 device (without UCX_IB_GLUE: the devices
 * rdma-core finds):
 *   UCX_IB_GLUE=emulated ./uct_devices
 *
 * Exit status: 0 if it found at least one transport, 1 if it found none,
 * 2 if a call failed.
 */
#include <uct/api/uct.h>
#include <ucs/type/status.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    EXIT_FOUND     = 0,
    EXIT_NOT_FOUND = 1,
    EXIT_FAILED    = 2
};

static const char *device_type_name(uct_device_type_t type)
{
    return (type < UCT_DEVICE_TYPE_LAST) ? uct_device_type_names[type] :
                                           "unknown";
}

/* Print the transports of memory domain @a md_name; add their number to
 * @a count_p. */
static ucs_status_t list_transports(uct_component_h component,
                                    const char *md_name, unsigned *count_p)
{
    uct_md_config_t        *config;
    uct_md_h               md;
    uct_tl_resource_desc_t *resources;
    unsigned               num_resources, i;
    ucs_status_t           status;

    status = uct_md_config_read(component, NULL, NULL, &config);
    if (status != UCS_OK) {
        fprintf(stderr, "memory domain %s: cannot read its configuration: %s\n",
                md_name, ucs_status_string(status));
        return status;
    }

    status = uct_md_open(component, md_name, config, &md);
    uct_config_release(config);
    if (status != UCS_OK) {
        fprintf(stderr, "memory domain %s: cannot open it: %s\n", md_name,
                ucs_status_string(status));
        return status;
    }

    status = uct_md_query_tl_resources(md, &resources, &num_resources);
    if (status != UCS_OK) {
        fprintf(stderr, "memory domain %s: cannot list its transports: %s\n",
                md_name, ucs_status_string(status));
        uct_md_close(md);
        return status;
    }

    printf("memory domain %s: %u transport%s\n", md_name, num_resources,
           (num_resources == 1) ? "" : "s");
    for (i = 0; i < num_resources; ++i) {
        printf("    %-12s %-16s %s\n", resources[i].tl_name,
               resources[i].dev_name, device_type_name(resources[i].dev_type));
    }
    *count_p += num_resources;

    uct_release_tl_resource_list(resources);
    uct_md_close(md);
    return UCS_OK;
}

/* List the memory domains of @a component and their transports */
static int list_component(uct_component_h component, const char *name)
{
    uct_component_attr_t attr;
    unsigned             num_transports = 0, i;
    ucs_status_t         status;
    int                  result = EXIT_FOUND;

    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    status          = uct_component_query(component, &attr);
    if (status != UCS_OK) {
        fprintf(stderr, "component %s: cannot query it: %s\n", name,
                ucs_status_string(status));
        return EXIT_FAILED;
    }

    printf("component %s: %u memory domain%s\n", name, attr.md_resource_count,
           (attr.md_resource_count == 1) ? "" : "s");
    if (attr.md_resource_count == 0) {
        fprintf(stderr, "component %s: no memory domain found\n", name);
        return EXIT_NOT_FOUND;
    }

    attr.field_mask   = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = calloc(attr.md_resource_count,
                               sizeof(*attr.md_resources));
    if (attr.md_resources == NULL) {
        fprintf(stderr, "component %s: out of memory\n", name);
        return EXIT_FAILED;
    }

    status = uct_component_query(component, &attr);
    if (status != UCS_OK) {
        fprintf(stderr, "component %s: cannot list its memory domains: %s\n",
                name, ucs_status_string(status));
        result = EXIT_FAILED;
    }

    for (i = 0; (result == EXIT_FOUND) && (i < attr.md_resource_count); ++i) {
        if (list_transports(component, attr.md_resources[i].md_name,
                            &num_transports) != UCS_OK) {
            result = EXIT_FAILED;
        }
    }
    free(attr.md_resources);

    if (result != EXIT_FOUND) {
        return result;
    }

    printf("component %s: %u transport%s in all\n", name, num_transports,
           (num_transports == 1) ? "" : "s");
    if (num_transports == 0) {
        fprintf(stderr, "component %s: no transport found\n", name);
        return EXIT_NOT_FOUND;
    }
    return EXIT_FOUND;
}

int main(int argc, char **argv)
{
    const char           *wanted = (argc > 1) ? argv[1] : "ib";
    uct_component_h      *components;
    uct_component_attr_t attr;
    unsigned             num_components, i;
    ucs_status_t         status;
    int                  result = -1;

    if (argc > 2) {
        fprintf(stderr, "usage: %s [component]   (default: ib)\n", argv[0]);
        return EXIT_FAILED;
    }

    status = uct_query_components(&components, &num_components);
    if (status != UCS_OK) {
        fprintf(stderr, "cannot list the UCT components: %s\n",
                ucs_status_string(status));
        return EXIT_FAILED;
    }

    for (i = 0; (result < 0) && (i < num_components); ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        status          = uct_component_query(components[i], &attr);
        if (status != UCS_OK) {
            fprintf(stderr, "cannot query a UCT component: %s\n",
                    ucs_status_string(status));
            result = EXIT_FAILED;
        } else if (!strcmp(attr.name, wanted)) {
            result = list_component(components[i], wanted);
        }
    }
    uct_release_component_list(components);

    if (result < 0) {
        fprintf(stderr, "no UCT component %s (%u components loaded; is its "
                "module in the module directory?)\n", wanted, num_components);
        result = EXIT_NOT_FOUND;
    }
    return result;
}
