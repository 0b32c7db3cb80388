/*
 * Where libucs itself is loaded from.
 */
#ifndef UCS_SYS_LIB_INFO_H_
#define UCS_SYS_LIB_INFO_H_

#include <ucs/type/status.h>

#ifndef _GNU_SOURCE
#  define _GNU_SOURCE
#endif
#include <dlfcn.h>

BEGIN_C_DECLS

/** dladdr() information about libucs; UCS_ERR_NO_ELEM if unavailable. */
ucs_status_t ucs_sys_get_lib_info(Dl_info *info);

/** Full path of libucs, or NULL if unknown. */
const char *ucs_sys_get_lib_path(void);

/** Load address of libucs, or 0 if unknown. */
unsigned long ucs_sys_get_lib_base_addr(void);

END_C_DECLS

#endif
