#include <common/test.h>

#include <ucs/config/global_opts.h>
#include <ucs/sys/lib_info.h>
#include <ucs/sys/module.h>

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <string>
#include <unistd.h>

/*
 * The loader is tested with modules of a private framework, "gtestfw",
 * built next to the test binary (GTEST_MODULE_DIR) plus files the test puts
 * in a temporary directory.
 */
class test_module : public ucs::test_base {
protected:
    void init() override
    {
        char tmpl[] = "/tmp/ucs_gtest_modules.XXXXXX";

        ASSERT_NE(nullptr, mkdtemp(tmpl)) << "mkdtemp: " << strerror(errno);
        m_dir = tmpl;
        m_saved_level = ucs_log_get_level();
    }

    void cleanup() override
    {
        ucs_log_set_level(m_saved_level);
        if (m_changed_dir) {
            set_module_dir(m_saved_dir.c_str());
        }
        for (const std::string &file : m_files) {
            unlink(file.c_str());
        }
        rmdir(m_dir.c_str());
    }

    void use_module_dir(const std::string &dir)
    {
        char current[4096];

        if (!m_changed_dir) {
            m_saved_dir   = (ucs_global_opts.module_dir == nullptr) ? "" :
                            ucs_global_opts.module_dir;
            m_changed_dir = true;
        }
        set_module_dir(dir.c_str());
        if (!dir.empty()) {
            ASSERT_EQ(UCS_OK, ucs_module_dir(current, sizeof(current)));
            ASSERT_EQ(dir, current);
        }
    }

    void add_file(const std::string &name, const std::string &content)
    {
        std::string path = m_dir + "/" + name;
        FILE        *f   = fopen(path.c_str(), "w");

        ASSERT_NE(nullptr, f) << path << ": " << strerror(errno);
        fputs(content.c_str(), f);
        fclose(f);
        m_files.push_back(path);
    }

    /* A copy is a new object to the dynamic linker, unlike a link */
    void add_copy(const std::string &name, const std::string &source)
    {
        std::string   path = m_dir + "/" + name;
        std::ifstream in(source, std::ios::binary);
        std::ofstream out(path, std::ios::binary);

        ASSERT_TRUE(in.is_open()) << source << ": " << strerror(errno);
        ASSERT_TRUE(out.is_open()) << path << ": " << strerror(errno);
        m_files.push_back(path);
        out << in.rdbuf();
        out.close();
        ASSERT_TRUE(out.good()) << path << ": write failed";
    }

    void add_link(const std::string &name, const std::string &target)
    {
        std::string path = m_dir + "/" + name;

        ASSERT_EQ(0, symlink(target.c_str(), path.c_str()))
                << path << ": " << strerror(errno);
        m_files.push_back(path);
    }

    std::string m_dir;

private:
    static void set_module_dir(const char *dir)
    {
        ASSERT_EQ(UCS_OK, ucs_config_parser_set_value(&ucs_global_opts,
                                                      ucs_global_opts_table,
                                                      "MODULE_DIR", dir));
    }

    std::vector<std::string> m_files;
    bool                     m_changed_dir = false;
    std::string              m_saved_dir;
    ucs_log_level_t          m_saved_level;
};

TEST_F(test_module, default_dir_is_next_to_libucs)
{
    std::string lib = ucs_sys_get_lib_path();
    char        dir[4096];

    use_module_dir("");
    ASSERT_EQ(UCS_OK, ucs_module_dir(dir, sizeof(dir)));
    EXPECT_EQ(lib.substr(0, lib.rfind('/')) + "/ucx", dir);
}

TEST_F(test_module, loads_good_skips_bad_quietly)
{
    /* A loaded module stays loaded (RTLD_NODELETE: its constructors have
     * registered things), so this process can load a given module once.
     * Each run of the test in the process (--gtest_repeat) therefore loads
     * a framework of its own, from a copy of the good module: an object
     * whose init has never run. */
    static unsigned   run  = 0;
    const std::string fw   = "gtestfw" + std::to_string(++run);
    const std::string good = m_dir + "/lib" + fw + "_good.so";

    add_copy("lib" + fw + "_good.so",
             std::string(GTEST_MODULE_DIR) + "/libgtestfw_good.so");
    add_link("lib" + fw + "_failinit.so",
             std::string(GTEST_MODULE_DIR) + "/libgtestfw_failinit.so");
    add_file("lib" + fw + "_broken.so", "this is not an ELF file\n");
    add_file("libotherfw_ignored.so", "not ours\n");
    use_module_dir(m_dir);

    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_DEBUG);
    ucs_log_set_level(UCS_LOG_LEVEL_DEBUG);

    EXPECT_EQ(1u, ucs_modules_load(fw.c_str()));
    EXPECT_EQ(0u, ucs_modules_load(fw.c_str())) << "a second call is a no-op";

    EXPECT_TRUE(ucs_module_is_loaded(fw.c_str(), "good"));
    EXPECT_FALSE(ucs_module_is_loaded(fw.c_str(), "broken"));
    EXPECT_FALSE(ucs_module_is_loaded(fw.c_str(), "failinit"));
    EXPECT_FALSE(ucs_module_is_loaded("otherfw", "ignored"));

    EXPECT_EQ(0u, capture.count(UCS_LOG_LEVEL_ERROR)) << capture.dump();
    EXPECT_EQ(0u, capture.count(UCS_LOG_LEVEL_WARN)) << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_DEBUG,
                                "lib" + fw + "_broken.so not loaded: "))
            << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_DEBUG,
                                "lib" + fw + "_failinit.so not loaded: "
                                "initialization failed")) << capture.dump();

    /* The module's init ran, once for both calls: ask the module itself */
    void *handle = dlopen(good.c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(nullptr, handle);
    auto init_calls = reinterpret_cast<int (*)()>(
            dlsym(handle, "gtest_module_init_calls"));
    ASSERT_NE(nullptr, init_calls);
    EXPECT_EQ(1, init_calls());
    dlclose(handle);

    EXPECT_EQ(nullptr, dlerror()) << "a dlerror() string was left pending";
}

TEST_F(test_module, missing_module_leaves_no_dlerror_pending)
{
    use_module_dir(m_dir);
    ucs_log_set_level(UCS_LOG_LEVEL_DEBUG);
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_DEBUG);

    EXPECT_EQ(UCS_ERR_NO_ELEM, ucs_module_load("gtestfw", "missing"));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_DEBUG,
                                "libgtestfw_missing.so not loaded: ")) << capture.dump();
    EXPECT_EQ(0u, capture.count(UCS_LOG_LEVEL_WARN)) << capture.dump();

    /* The LeakSanitizer leg proves nothing is left allocated at exit; this
     * proves it directly: no error message is pending after the loader. */
    const char *lib_path = ucs_sys_get_lib_path();
    ASSERT_NE(nullptr, lib_path);
    EXPECT_NE(std::string::npos, std::string(lib_path).find("libucs"));
    EXPECT_EQ(nullptr, dlerror());
}

TEST_F(test_module, chosen_missing_directory_is_one_warning_naming_it)
{
    const std::string dir = m_dir + "/does-not-exist";

    use_module_dir(dir);
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

    EXPECT_EQ(0u, ucs_modules_load("gtestfw_nodir"));
    EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, "UCX_MODULE_DIR=" + dir +
                                ": cannot open it: No such file or "
                                "directory; no gtestfw_nodir modules loaded"))
            << capture.dump();
}

TEST_F(test_module, each_directory_is_scanned_once_per_framework)
{
    use_module_dir(m_dir + "/first-missing");
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

    EXPECT_EQ(0u, ucs_modules_load("gtestfw_rescan"));
    EXPECT_EQ(0u, ucs_modules_load("gtestfw_rescan"));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, "first-missing: cannot "
                                "open it")) << capture.dump();

    /* A directory named since the last call is scanned by the next one */
    use_module_dir(m_dir + "/second-missing");
    EXPECT_EQ(0u, ucs_modules_load("gtestfw_rescan"));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN, "second-missing: cannot "
                                "open it")) << capture.dump();
    EXPECT_EQ(2u, capture.count(UCS_LOG_LEVEL_WARN, "no gtestfw_rescan "
                                "modules")) << capture.dump();
}
