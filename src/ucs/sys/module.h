/*
 * Loadable modules: lib<framework>_<name>.so files in the module directory,
 * e.g. libuct_ib.so in <libdir>/ucx. A module may export
 * "ucs_status_t ucs_module_global_init(void)", called once after loading.
 * A module that fails to load is a debug message, never an error: a missing
 * driver library must not break the others.
 */
#ifndef UCS_SYS_MODULE_H_
#define UCS_SYS_MODULE_H_

#include <ucs/type/status.h>

BEGIN_C_DECLS

#define UCS_MODULE_INIT_SYMBOL "ucs_module_global_init"

/** The directory modules are loaded from: UCX_MODULE_DIR, or "ucx" next to
 *  libucs. Written to @a buf; UCS_ERR_NO_ELEM if libucs cannot be located. */
ucs_status_t ucs_module_dir(char *buf, size_t max);

/**
 * Load every lib<framework>_*.so of the module directory. Idempotent: a
 * module already loaded (from any directory) is not loaded or initialized
 * again, and a directory already scanned for @a framework is not scanned
 * again, so a repeated call is a no-op; a directory that UCX_MODULE_DIR
 * names since the last call is scanned on the next one.
 * Returns the number of modules loaded by this call.
 */
unsigned ucs_modules_load(const char *framework);

/**
 * The pending dlerror() message (or "unknown error") in @a buf, then release
 * glibc's copy of it with a second dlerror(), so nothing stays allocated.
 */
void ucs_dlerror_take(char *buf, size_t max);

/** Load lib<framework>_<name>.so; UCS_ERR_NO_ELEM if it cannot be loaded. */
ucs_status_t ucs_module_load(const char *framework, const char *name);

/** Whether lib<framework>_<name>.so was loaded by this loader. */
int ucs_module_is_loaded(const char *framework, const char *name);

END_C_DECLS

#endif
