/*
 * ucx_info: what this build is and how it is configured.
 */
#include <ucs/config/parser.h>
#include <ucs/debug/log_def.h>
#include <ucs/sys/lib_info.h>
#include <ucs/sys/module.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace {

void usage(FILE *stream)
{
    fprintf(stream,
            "Usage: ucx_info [options]\n"
            "  -v    print version and build configuration\n"
            "  -c    print every configuration knob with its value and doc\n"
            "  -h    print this help\n");
}

void print_version()
{
    char dir[4096];

    printf("# Library version: %s\n", PACKAGE_VERSION);
    printf("# Library path: %s\n", ucs_sys_get_lib_path() ?: "unknown");
    if (ucs_module_dir(dir, sizeof(dir)) == UCS_OK) {
        printf("# Module directory: %s\n", dir);
    }
    printf("# Configured with: %s\n", UCX_CONFIGURE_ARGS);
    printf("# Build flags: %s\n", UCX_BUILD_FLAGS);
#ifdef UCS_ENABLE_ASSERT
    printf("# Assertions: enabled\n");
#else
    printf("# Assertions: disabled\n");
#endif
#ifdef UCS_ENABLE_ASAN
    printf("# AddressSanitizer: enabled\n");
#endif
}

} // namespace

int main(int argc, char **argv)
{
    bool version = false;
    bool config  = false;
    int  c;

    while ((c = getopt(argc, argv, "vch")) != -1) {
        switch (c) {
        case 'v':
            version = true;
            break;
        case 'c':
            config = true;
            break;
        case 'h':
            usage(stdout);
            return EXIT_SUCCESS;
        default:
            usage(stderr);
            return EXIT_FAILURE;
        }
    }

    if (!version && !config) {
        usage(stderr);
        return EXIT_FAILURE;
    }

    ucs_modules_load("uct");
    ucs_config_parser_warn_unused_env_vars(UCS_DEFAULT_ENV_PREFIX);

    if (version) {
        print_version();
    }
    if (config) {
        ucs_config_parser_print_all_opts(stdout, UCS_DEFAULT_ENV_PREFIX);
    }
    return EXIT_SUCCESS;
}
