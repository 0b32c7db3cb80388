/*
 * A loadable module for the loader tests, built twice: libgtestfw_good.so
 * initializes, libgtestfw_failinit.so refuses to. Each counts the calls of
 * its init, so that a test can tell "initialized once" from "again".
 */
#include <ucs/type/status.h>

static int module_init_calls = 0;

extern "C" ucs_status_t ucs_module_global_init(void)
{
    ++module_init_calls;
#ifdef GTEST_MODULE_FAIL_INIT
    return UCS_ERR_UNSUPPORTED;
#else
    return UCS_OK;
#endif
}

extern "C" int gtest_module_init_calls(void)
{
    return module_init_calls;
}
