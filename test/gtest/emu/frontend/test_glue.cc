/*
 * The glue table: installation checks, selection by UCX_IB_GLUE, the counted
 * device open/close, and the check that no rdma-core function is called
 * outside the glue and the emulator.
 */
#include "emu/emu_test.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace emu_test;


class test_emu_glue : public ucs::test_base {
protected:
    void init() override
    {
        ASSERT_EQ(UCS_OK, uct_ib_emu_reset());
        ASSERT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));
        save_env();
    }

    void cleanup() override
    {
        restore_env();
        EXPECT_EQ(0u, uct_ib_glue_open_device_count());
        EXPECT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));
    }

    void save_env()
    {
        const char *value = getenv(UCT_IB_GLUE_ENV);

        m_had_env = (value != nullptr);
        m_env     = m_had_env ? value : "";
    }

    void restore_env()
    {
        if (m_had_env) {
            setenv(UCT_IB_GLUE_ENV, m_env.c_str(), 1);
        } else {
            unsetenv(UCT_IB_GLUE_ENV);
        }
    }

    /* Run a shell command; its exit code and its output */
    static int run(const std::string &cmd, std::string *output)
    {
        char buf[512];
        FILE *pipe = popen((cmd + " 2>&1").c_str(), "r");
        int status;

        output->clear();
        if (pipe == nullptr) {
            ADD_FAILURE() << "popen(" << cmd << ") failed";
            return -1;
        }
        while (fgets(buf, sizeof(buf), pipe) != nullptr) {
            *output += buf;
        }
        status = pclose(pipe);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }

    bool        m_had_env = false;
    std::string m_env;
};

TEST_F(test_emu_glue, tables)
{
    EXPECT_EQ(&uct_ib_glue_rdma_core_ops, uct_ib_glue);
    EXPECT_STREQ("rdma-core", uct_ib_glue_rdma_core_ops.name);
    EXPECT_EQ(0, uct_ib_glue_rdma_core_ops.emulated);
    EXPECT_STREQ("emulated", uct_ib_emu_glue_ops.name);
    EXPECT_EQ(1, uct_ib_emu_glue_ops.emulated);
    EXPECT_EQ(unsigned(UCT_IB_GLUE_VERSION), uct_ib_emu_glue_ops.version);

#define TEST_GLUE_SLOT_SET(_name, _conv, _ret, _args) \
    EXPECT_NE(nullptr, uct_ib_glue_rdma_core_ops._name) << #_name; \
    EXPECT_NE(nullptr, uct_ib_emu_glue_ops._name) << #_name;

    UCT_IB_GLUE_FOREACH_OP(TEST_GLUE_SLOT_SET)
#undef TEST_GLUE_SLOT_SET

    EXPECT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_emu_glue_ops));
    EXPECT_EQ(&uct_ib_emu_glue_ops, uct_ib_glue);
}

TEST_F(test_emu_glue, install_refuses_an_empty_slot)
{
    unsigned slots = 0;

#define TEST_GLUE_EMPTY_SLOT(_name, _conv, _ret, _args) \
    { \
        uct_ib_glue_ops_t ops = uct_ib_emu_glue_ops; \
        log_capture log; \
        \
        ops._name = nullptr; \
        EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_glue_install(&ops)) << #_name; \
        EXPECT_EQ(1u, log.count("has no '" #_name "' operation")) \
                << log.dump(); \
        EXPECT_EQ(&uct_ib_glue_rdma_core_ops, uct_ib_glue); \
        ++slots; \
    }

    UCT_IB_GLUE_FOREACH_OP(TEST_GLUE_EMPTY_SLOT)
#undef TEST_GLUE_EMPTY_SLOT

    EXPECT_EQ(unsigned(UCT_IB_GLUE_OP_LAST), slots);
}

TEST_F(test_emu_glue, install_refuses_a_bad_table)
{
    uct_ib_glue_ops_t ops = uct_ib_emu_glue_ops;
    log_capture log;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_glue_install(nullptr));

    ops.version = UCT_IB_GLUE_VERSION + 1;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_glue_install(&ops));
    EXPECT_EQ(1u, log.count("has version")) << log.dump();

    ops      = uct_ib_emu_glue_ops;
    ops.name = nullptr;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_glue_install(&ops));
    EXPECT_EQ(&uct_ib_glue_rdma_core_ops, uct_ib_glue);
}

TEST_F(test_emu_glue, install_refused_while_a_device_is_open)
{
    struct ibv_context *ctx  = nullptr;
    struct ibv_device **list;
    int devx, num;
    log_capture log;

    ASSERT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_emu_glue_ops));
    list = uct_ib_glue->get_device_list(&num);
    ASSERT_NE(nullptr, list);
    ASSERT_GT(num, 0);
    ASSERT_EQ(UCS_OK, uct_ib_glue_open_device(list[0], 1, &ctx, &devx));
    uct_ib_glue->free_device_list(list);
    EXPECT_EQ(1u, uct_ib_glue_open_device_count());

    EXPECT_EQ(UCS_ERR_BUSY, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));
    EXPECT_EQ(1u, log.count("cannot install glue table 'rdma-core'"))
            << log.dump();
    EXPECT_EQ(&uct_ib_emu_glue_ops, uct_ib_glue);
    EXPECT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_emu_glue_ops))
            << "the table in use may be installed again";

    EXPECT_EQ(UCS_OK, uct_ib_glue_close_device(ctx));
    EXPECT_EQ(0u, uct_ib_glue_open_device_count());
    EXPECT_EQ(UCS_OK, uct_ib_glue_install(&uct_ib_glue_rdma_core_ops));
}

TEST_F(test_emu_glue, selection_by_environment)
{
    log_capture log;

    unsetenv(UCT_IB_GLUE_ENV);
    EXPECT_EQ(UCS_OK, uct_ib_glue_init_from_env());
    EXPECT_EQ(&uct_ib_glue_rdma_core_ops, uct_ib_glue) << "never automatic";

    setenv(UCT_IB_GLUE_ENV, "emulated", 1);
    ASSERT_EQ(UCS_OK, uct_ib_glue_init_from_env()) << log.dump();
    EXPECT_EQ(1, uct_ib_glue->emulated);
    /* The executable may hold a copy-relocated twin of the table: compare
     * what the table points to, not where it lives */
    EXPECT_EQ(uct_ib_emu_glue_ops.create_ah, uct_ib_glue->create_ah)
            << "the library loaded is the one the test links";

    setenv(UCT_IB_GLUE_ENV, "", 1);
    EXPECT_EQ(UCS_OK, uct_ib_glue_init_from_env());
    EXPECT_EQ(uct_ib_emu_glue_ops.create_ah, uct_ib_glue->create_ah)
            << "empty leaves it as is";

    setenv(UCT_IB_GLUE_ENV, "rdma-core", 1);
    EXPECT_EQ(UCS_OK, uct_ib_glue_init_from_env());
    EXPECT_EQ(&uct_ib_glue_rdma_core_ops, uct_ib_glue);

    setenv(UCT_IB_GLUE_ENV, "emulator", 1);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, uct_ib_glue_init_from_env());
    EXPECT_EQ(1u, log.count("invalid value 'emulator' of UCX_IB_GLUE"))
            << log.dump();
    EXPECT_EQ(&uct_ib_glue_rdma_core_ops, uct_ib_glue);
}

TEST_F(test_emu_glue, rdma_core_call_check)
{
#ifndef UCX_TOP_SRCDIR
    GTEST_SKIP() << "UCX_TOP_SRCDIR is not defined by the build";
#else
    const std::string top    = UCX_TOP_SRCDIR;
    const std::string script = top + "/buildlib/check-rdma-core-calls.sh";
    char tmpl[]              = "/tmp/emu-check-XXXXXX";
    std::string output, tmp, planted;

    /* the tree as it is */
    ASSERT_EQ(0, run(script + " " + top, &output)) << output;
    EXPECT_NE(std::string::npos, output.find("OK")) << output;

    /* a copy of the tree with two direct calls, among decoys */
    ASSERT_NE(nullptr, mkdtemp(tmpl));
    tmp     = tmpl;
    planted = tmp + "/src/uct/ib/base/planted_violation.cc";
    ASSERT_EQ(0, run("mkdir -p " + tmp + "/src/uct/ib/base && cp -r " + top +
                     "/src " + tmp + "/", &output)) << output;
    {
        std::ofstream f(planted);
        f << "/* ibv_create_ah(pd, attr) in a comment */\n"
          << "static const char *s = \"mlx5dv_init_obj() failed\";\n"
          << "void f(struct ibv_pd *pd, struct ibv_ah_attr *attr)\n"
          << "{\n"
          << "    uct_ib_glue->mlx5dv_init_obj(0, 0);\n"
          << "    puts(ibv_wc_status_str(IBV_WC_SUCCESS));\n"
          << "    ibv_create_ah(pd, attr);\n"
          << "}\n";
    }

    EXPECT_EQ(1, run(script + " " + tmp, &output)) << output;
    EXPECT_NE(std::string::npos,
              output.find("planted_violation.cc:7: ibv_create_ah()"))
            << output;
    EXPECT_NE(std::string::npos,
              output.find("planted_violation.cc:6: ibv_wc_status_str()"))
            << "no exception for rdma-core's string helpers: " << output;
    EXPECT_EQ(std::string::npos, output.find("mlx5dv_init_obj")) << output;
    EXPECT_NE(std::string::npos, output.find("FAILED: 2 rdma-core call(s)"))
            << output;

    /* the glue and the emulator may call rdma-core */
    ASSERT_EQ(0, run("mv " + planted + " " + tmp + "/src/uct/ib/glue/",
                     &output));
    EXPECT_EQ(0, run(script + " " + tmp, &output)) << output;

    run("rm -rf " + tmp, &output);
#endif
}
