#include <ucs/config/global_opts.h>

#include <cstddef>

ucs_global_opts_t ucs_global_opts;

ucs_config_field_t ucs_global_opts_table[] = {
    {"LOG_LEVEL", "warn",
     "Logging level: fatal, error, warn, diag, info, debug or trace.\n"
     "Lines at debug and trace carry a timestamp and file:line.",
     offsetof(ucs_global_opts_t, log_level),
     UCS_CONFIG_TYPE_ENUM(ucs_log_level_names)},

    {"MODULE_DIR", "",
     "Directory to load transport modules (libuct_*.so) from. Empty means\n"
     "the \"ucx\" directory next to libucs.",
     offsetof(ucs_global_opts_t, module_dir), UCS_CONFIG_TYPE_STRING},

    {"WARN_UNUSED_ENV_VARS", "y",
     "Whether the tools (ucx_info, ucx_perftest) warn about each UCX_\n"
     "environment variable that no loaded component reads.",
     offsetof(ucs_global_opts_t, warn_unused_env_vars), UCS_CONFIG_TYPE_BOOL},

    UCS_CONFIG_EMPTY_FIELD
};

UCS_CONFIG_REGISTER_TABLE(ucs_global_opts_table, "UCS global options", "",
                          ucs_global_opts_t)

static void __attribute__((constructor(200))) ucs_global_opts_init(void)
{
    if (ucs_config_parser_fill_opts(&ucs_global_opts, ucs_global_opts_table,
                                    UCS_DEFAULT_ENV_PREFIX, "") == UCS_OK) {
        ucs_log_set_level(ucs_global_opts.log_level);
    }
}

static void __attribute__((destructor(200))) ucs_global_opts_cleanup(void)
{
    ucs_config_parser_release_opts(&ucs_global_opts, ucs_global_opts_table);
}
