#include <common/test.h>

#include <ucs/sys/lib_info.h>
#include <ucs/type/status.h>

#include <dlfcn.h>
#include <string>

class test_lib_info : public ucs::test_base {
};

TEST_F(test_lib_info, describes_libucs)
{
    Dl_info info;

    ASSERT_EQ(UCS_OK, ucs_sys_get_lib_info(&info));
    std::string path = ucs_sys_get_lib_path();

    EXPECT_EQ(path, info.dli_fname);
    EXPECT_EQ('/', path[0]) << path;
    /* loaded by its SONAME, never UCX's libucs.so.0 */
    EXPECT_NE(std::string::npos,
              path.find("/libucs-" UCX_SONAME_TAG ".so.")) << path;

    unsigned long base = ucs_sys_get_lib_base_addr();
    EXPECT_EQ(reinterpret_cast<unsigned long>(info.dli_fbase), base);
    EXPECT_NE(0ul, base);
    EXPECT_LT(base, reinterpret_cast<unsigned long>(&ucs_status_string));
}

TEST_F(test_lib_info, does_not_touch_a_pending_dlerror)
{
    /* A failed dlopen leaves an error pending; the lib-info calls must
     * neither consume nor format it (formatting is what allocates). */
    ASSERT_EQ(nullptr, dlopen("/nonexistent/libnothing.so", RTLD_NOW));

    EXPECT_NE(nullptr, ucs_sys_get_lib_path());
    EXPECT_NE(0ul, ucs_sys_get_lib_base_addr());

    const char *msg = dlerror();
    ASSERT_NE(nullptr, msg) << "the lib-info calls consumed the pending error";
    EXPECT_NE(std::string::npos, std::string(msg).find("libnothing.so"));
    EXPECT_EQ(nullptr, dlerror()) << "second dlerror() releases glibc's copy";
}
