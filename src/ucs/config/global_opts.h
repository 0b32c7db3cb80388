/*
 * Process-wide knobs of libucs, read from the environment when it loads.
 */
#ifndef UCS_CONFIG_GLOBAL_OPTS_H_
#define UCS_CONFIG_GLOBAL_OPTS_H_

#include <ucs/debug/log_def.h>
#include <ucs/config/parser.h>

BEGIN_C_DECLS

typedef struct ucs_global_opts {
    ucs_log_level_t log_level;   /* UCX_LOG_LEVEL */
    char            *module_dir; /* UCX_MODULE_DIR, "" = <libucs dir>/ucx */
    int             warn_unused_env_vars; /* UCX_WARN_UNUSED_ENV_VARS */
} ucs_global_opts_t;

extern ucs_global_opts_t        ucs_global_opts;
extern ucs_config_field_t       ucs_global_opts_table[];

END_C_DECLS

#endif
