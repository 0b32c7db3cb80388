/*
 * Linked with ucx::uct and ucx::ucs only: calls into both libraries, checks
 * that libucs loads transport modules from the directory the CMake package
 * names (UCX_MODULE_DIR), and that the "ib" component was found there.
 * Exit status 0 if so.
 */
#include <ucs/sys/module.h>
#include <ucs/type/status.h>
#include <uct/api/uct.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    uct_component_h      *components;
    uct_component_attr_t attr;
    unsigned             num_components, i;
    char                 dir[4096];
    int                  have_ib = 0;

    if (ucs_module_dir(dir, sizeof(dir)) != UCS_OK) {
        fprintf(stderr, "libucs cannot locate its module directory\n");
        return 1;
    }
    printf("module directory: %s\n", dir);
    if (strcmp(dir, UCX_TEST_MODULE_DIR) != 0) {
        fprintf(stderr, "the CMake package says %s\n", UCX_TEST_MODULE_DIR);
        return 1;
    }

    if (uct_query_components(&components, &num_components) != UCS_OK) {
        fprintf(stderr, "uct_query_components failed\n");
        return 1;
    }
    for (i = 0; i < num_components; ++i) {
        attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME;
        if (uct_component_query(components[i], &attr) == UCS_OK) {
            printf("component: %s\n", attr.name);
            have_ib = have_ib || !strcmp(attr.name, "ib");
        }
    }
    uct_release_component_list(components);

    printf("status: %s\n", ucs_status_string(have_ib ? UCS_OK :
                                                       UCS_ERR_NO_ELEM));
    return have_ib ? 0 : 1;
}
