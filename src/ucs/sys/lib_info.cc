/*
 * dladdr() reports failure by its return value alone, so dlerror() is never
 * called here: on glibc dlerror() turns a pending error from an unrelated,
 * earlier dlopen() into a heap string that lives until the next dlerror() or
 * thread exit, which LeakSanitizer reports as ours.
 */
#include <ucs/sys/lib_info.h>

ucs_status_t ucs_sys_get_lib_info(Dl_info *info)
{
    if (dladdr(reinterpret_cast<void*>(&ucs_sys_get_lib_info), info) == 0) {
        return UCS_ERR_NO_ELEM;
    }
    return UCS_OK;
}

const char *ucs_sys_get_lib_path(void)
{
    Dl_info info;

    return (ucs_sys_get_lib_info(&info) == UCS_OK) ? info.dli_fname : nullptr;
}

unsigned long ucs_sys_get_lib_base_addr(void)
{
    Dl_info info;

    return (ucs_sys_get_lib_info(&info) == UCS_OK) ?
           reinterpret_cast<unsigned long>(info.dli_fbase) : 0;
}
