/*
 * A loadable module for the loader tests, built twice: libgtestfw_good.so
 * initializes, libgtestfw_failinit.so refuses to.
 */
#include <ucs/type/status.h>

static int module_initialized = 0;

extern "C" ucs_status_t ucs_module_global_init(void)
{
#ifdef GTEST_MODULE_FAIL_INIT
    return UCS_ERR_UNSUPPORTED;
#else
    module_initialized = 1;
    return UCS_OK;
#endif
}

extern "C" int gtest_module_initialized(void)
{
    return module_initialized;
}
