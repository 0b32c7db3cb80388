#include <common/test.h>

#include <ucs/config/global_opts.h>
#include <ucs/config/parser.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

struct sub_opts {
    unsigned count;
    char     *name;
};

struct test_opts {
    int                      flag;
    unsigned                 num;
    unsigned long            lu;
    double                   dbl;
    int                      color;
    double                   timeout;
    size_t                   mem;
    char                     *str;
    ucs_config_names_array_t devs;
    sub_opts                 sub;
};

const char *color_names[] = {"red", "green", "blue", nullptr};

ucs_config_field_t sub_table[] = {
    {"COUNT", "4",   "How many.", offsetof(sub_opts, count), UCS_CONFIG_TYPE_UINT},
    {"NAME",  "sub", "Its name.", offsetof(sub_opts, name),  UCS_CONFIG_TYPE_STRING},
    UCS_CONFIG_EMPTY_FIELD
};

ucs_config_field_t test_table[] = {
    {"FLAG",    "n",     "A flag.",       offsetof(test_opts, flag),    UCS_CONFIG_TYPE_BOOL},
    {"NUM",     "10",    "A number.\nSecond doc line.",
                                          offsetof(test_opts, num),     UCS_CONFIG_TYPE_UINT},
    {"LU",      "auto",  "Auto or count.", offsetof(test_opts, lu),     UCS_CONFIG_TYPE_ULUNITS},
    {"DBL",     "1.5",   "A ratio.",      offsetof(test_opts, dbl),     UCS_CONFIG_TYPE_DOUBLE},
    {"COLOR",   "green", "A color.",      offsetof(test_opts, color),   UCS_CONFIG_TYPE_ENUM(color_names)},
    {"TIMEOUT", "2s",    "A time.",       offsetof(test_opts, timeout), UCS_CONFIG_TYPE_TIME},
    {"MEM",     "4k",    "A size.",       offsetof(test_opts, mem),     UCS_CONFIG_TYPE_MEMUNITS},
    {"STR",     "hello", "A string.",     offsetof(test_opts, str),     UCS_CONFIG_TYPE_STRING},
    {"DEVS",    "",      "Devices.",      offsetof(test_opts, devs),    UCS_CONFIG_TYPE_STRING_ARRAY},
    {"SUB_",    "",      "Sub-table.",    offsetof(test_opts, sub),     UCS_CONFIG_TYPE_TABLE(sub_table)},
    UCS_CONFIG_EMPTY_FIELD
};

/* A registered table for the lifetime of the object: a failed assertion
 * must not leave the registry pointing at a table that has gone out of
 * scope, where every later listing of all tables would read it */
class scoped_table_registration {
public:
    explicit scoped_table_registration(const ucs_config_table_entry_t *entry) :
        m_entry(entry)
    {
        ucs_config_register_table(m_entry);
    }

    ~scoped_table_registration()
    {
        ucs_config_unregister_table(m_entry);
    }

    scoped_table_registration(const scoped_table_registration&) = delete;
    scoped_table_registration &
    operator=(const scoped_table_registration&) = delete;

private:
    const ucs_config_table_entry_t *m_entry;
};

} // namespace

class test_config : public ucs::test_base {
protected:
    void cleanup() override
    {
        if (m_filled) {
            ucs_config_parser_release_opts(&m_opts, test_table);
        }
    }

    void fill()
    {
        cleanup();
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&m_opts, test_table,
                                                      "UCX_", "GTEST_"));
        m_filled = true;
    }

    void expect_defaults() const
    {
        EXPECT_EQ(0, m_opts.flag);
        EXPECT_EQ(10u, m_opts.num);
        EXPECT_EQ(UCS_ULUNITS_AUTO, m_opts.lu);
        EXPECT_DOUBLE_EQ(1.5, m_opts.dbl);
        EXPECT_EQ(1, m_opts.color);
        EXPECT_DOUBLE_EQ(2.0, m_opts.timeout);
        EXPECT_EQ(4096u, m_opts.mem);
        EXPECT_STREQ("hello", m_opts.str);
        EXPECT_EQ(0u, m_opts.devs.count);
        EXPECT_EQ(4u, m_opts.sub.count);
        EXPECT_STREQ("sub", m_opts.sub.name);
    }

    test_opts m_opts   = {};
    bool      m_filled = false;
};

TEST_F(test_config, defaults)
{
    fill();
    expect_defaults();
}

TEST_F(test_config, every_type_from_env)
{
    ucs::scoped_setenv e1("UCX_GTEST_FLAG", "yes");
    ucs::scoped_setenv e2("UCX_GTEST_NUM", "0x10");
    ucs::scoped_setenv e3("UCX_GTEST_LU", "123");
    ucs::scoped_setenv e4("UCX_GTEST_DBL", "2.25");
    ucs::scoped_setenv e5("UCX_GTEST_COLOR", "BLUE");
    ucs::scoped_setenv e6("UCX_GTEST_TIMEOUT", "150ms");
    ucs::scoped_setenv e7("UCX_GTEST_MEM", "2MB");
    ucs::scoped_setenv e8("UCX_GTEST_STR", "world");
    ucs::scoped_setenv e9("UCX_GTEST_DEVS", "mlx5_0:1,mlx5_1:1");
    ucs::scoped_setenv e10("UCX_GTEST_SUB_COUNT", "9"); /* not a name: ignored */
    ucs::scoped_setenv e11("UCX_SUB_COUNT", "7");
    ucs::scoped_setenv e12("UCX_SUB_NAME", "inner");

    fill();
    EXPECT_EQ(1, m_opts.flag);
    EXPECT_EQ(16u, m_opts.num);
    EXPECT_EQ(123ul, m_opts.lu);
    EXPECT_DOUBLE_EQ(2.25, m_opts.dbl);
    EXPECT_EQ(2, m_opts.color);
    EXPECT_DOUBLE_EQ(0.15, m_opts.timeout);
    EXPECT_EQ(2u << 20, m_opts.mem);
    EXPECT_STREQ("world", m_opts.str);
    ASSERT_EQ(2u, m_opts.devs.count);
    EXPECT_STREQ("mlx5_0:1", m_opts.devs.names[0]);
    EXPECT_STREQ("mlx5_1:1", m_opts.devs.names[1]);
    EXPECT_EQ(7u, m_opts.sub.count);
    EXPECT_STREQ("inner", m_opts.sub.name);
}

TEST_F(test_config, value_syntax)
{
    struct good {
        const char *var;
        const char *value;
        std::function<void(const test_opts&)> check;
    };
    const good cases[] = {
        {"UCX_GTEST_FLAG",    "off",  [](const test_opts &o) { EXPECT_EQ(0, o.flag); }},
        {"UCX_GTEST_FLAG",    "1",    [](const test_opts &o) { EXPECT_EQ(1, o.flag); }},
        {"UCX_GTEST_NUM",     "0",    [](const test_opts &o) { EXPECT_EQ(0u, o.num); }},
        {"UCX_GTEST_NUM",     "4294967295",
                                      [](const test_opts &o) { EXPECT_EQ(4294967295u, o.num); }},
        {"UCX_GTEST_LU",      "inf",  [](const test_opts &o) { EXPECT_EQ(UCS_ULUNITS_INF, o.lu); }},
        {"UCX_GTEST_LU",      "AUTO", [](const test_opts &o) { EXPECT_EQ(UCS_ULUNITS_AUTO, o.lu); }},
        {"UCX_GTEST_TIMEOUT", "3",    [](const test_opts &o) { EXPECT_DOUBLE_EQ(3.0, o.timeout); }},
        {"UCX_GTEST_TIMEOUT", "20us", [](const test_opts &o) { EXPECT_DOUBLE_EQ(20e-6, o.timeout); }},
        {"UCX_GTEST_TIMEOUT", "7ns",  [](const test_opts &o) { EXPECT_DOUBLE_EQ(7e-9, o.timeout); }},
        {"UCX_GTEST_TIMEOUT", "0.5s", [](const test_opts &o) { EXPECT_DOUBLE_EQ(0.5, o.timeout); }},
        {"UCX_GTEST_TIMEOUT", "inf",  [](const test_opts &o) { EXPECT_TRUE(std::isinf(o.timeout)); }},
        {"UCX_GTEST_MEM",     "1g",   [](const test_opts &o) { EXPECT_EQ(1ul << 30, o.mem); }},
        {"UCX_GTEST_MEM",     "512",  [](const test_opts &o) { EXPECT_EQ(512u, o.mem); }},
        {"UCX_GTEST_MEM",     "64b",  [](const test_opts &o) { EXPECT_EQ(64u, o.mem); }},
        {"UCX_GTEST_MEM",     "auto", [](const test_opts &o) { EXPECT_EQ(UCS_MEMUNITS_AUTO, o.mem); }},
        {"UCX_GTEST_MEM",     "inf",  [](const test_opts &o) { EXPECT_EQ(UCS_MEMUNITS_INF, o.mem); }},
        {"UCX_GTEST_COLOR",   "red",  [](const test_opts &o) { EXPECT_EQ(0, o.color); }},
    };

    for (const good &c : cases) {
        SCOPED_TRACE(std::string(c.var) + "=" + c.value);
        ucs::scoped_setenv env(c.var, c.value);
        fill();
        c.check(m_opts);
    }
}

TEST_F(test_config, bad_values_keep_defaults_and_name_the_variable)
{
    const std::pair<const char*, const char*> cases[] = {
        {"UCX_GTEST_FLAG",    "maybe"},
        {"UCX_GTEST_NUM",     "-1"},
        {"UCX_GTEST_NUM",     "12abc"},
        {"UCX_GTEST_NUM",     "4294967296"},
        {"UCX_GTEST_NUM",     ""},
        {"UCX_GTEST_LU",      "autox"},
        {"UCX_GTEST_DBL",     "x1"},
        {"UCX_GTEST_COLOR",   "purple"},
        {"UCX_GTEST_TIMEOUT", "5 parsecs"},
        {"UCX_GTEST_TIMEOUT", "-1s"},
        {"UCX_GTEST_MEM",     "4q"},
        {"UCX_GTEST_MEM",     "99999999999999999999"},
        {"UCX_GTEST_MEM",     "17179869184g"},
        {"UCX_GTEST_DEVS",    "mlx5_0:1,,mlx5_1:1"},
        {"UCX_SUB_COUNT",     "many"},
    };

    for (const auto &c : cases) {
        SCOPED_TRACE(std::string(c.first) + "=" + c.second);
        ucs::scoped_setenv      env(c.first, c.second);
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);

        fill();
        expect_defaults();
        ASSERT_EQ(1u, capture.lines().size()) << capture.dump();
        EXPECT_NE(std::string::npos,
                  capture.lines()[0].message.find(
                          std::string("invalid value of ") + c.first + ": '" +
                          c.second + "' (expected ")) << capture.dump();
    }
}

TEST_F(test_config, bad_value_is_reported_once_per_process)
{
    ucs::scoped_setenv      env("UCX_GTEST_NUM", "many");
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);

    /* as every interface of a device reads its table again */
    for (int i = 0; i < 16; ++i) {
        fill();
        expect_defaults();
    }
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "invalid value of UCX_GTEST_NUM: 'many'"))
            << capture.dump();

    {
        ucs::scoped_setenv other("UCX_GTEST_NUM", "several");
        fill();
    }
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "invalid value of UCX_GTEST_NUM: 'several'"))
            << capture.dump();

    ucs_config_parser_forget_reported_values();
    fill();
    EXPECT_EQ(2u, capture.count(UCS_LOG_LEVEL_ERROR,
                                "invalid value of UCX_GTEST_NUM: 'many'"))
            << capture.dump();
}

TEST_F(test_config, most_specific_prefix_wins)
{
    ucs::scoped_setenv generic("UCX_NUM", "5");
    fill();
    EXPECT_EQ(5u, m_opts.num);

    ucs::scoped_setenv specific("UCX_GTEST_NUM", "6");
    fill();
    EXPECT_EQ(6u, m_opts.num);

    /* nested: table prefix, then the embedded table's, then none */
    ucs::scoped_setenv nested_generic("UCX_COUNT", "1");
    fill();
    EXPECT_EQ(1u, m_opts.sub.count);

    ucs::scoped_setenv nested_sub("UCX_SUB_COUNT", "2");
    fill();
    EXPECT_EQ(2u, m_opts.sub.count);

    ucs::scoped_setenv nested_top("UCX_GTEST_COUNT", "3");
    fill();
    EXPECT_EQ(3u, m_opts.sub.count);
}

TEST_F(test_config, set_get_clone)
{
    test_opts copy = {};
    char      value[64];

    fill();
    EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&m_opts, test_table, "NUM", "33"));
    EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&m_opts, test_table, "SUB_COUNT", "9"));
    EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&m_opts, test_table, "NAME", "renamed"));
    EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&m_opts, test_table, "DEVS", "a,b,c"));
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              ucs_config_parser_set_value(&m_opts, test_table, "NOPE", "1"));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              ucs_config_parser_set_value(&m_opts, test_table, "NUM", "bad"));
    EXPECT_EQ(33u, m_opts.num);
    EXPECT_EQ(9u, m_opts.sub.count);

    ASSERT_EQ(UCS_OK, ucs_config_parser_get_value(&m_opts, test_table,
                                                  "TIMEOUT", value, sizeof(value)));
    EXPECT_STREQ("2s", value);
    ASSERT_EQ(UCS_OK, ucs_config_parser_get_value(&m_opts, test_table,
                                                  "MEM", value, sizeof(value)));
    EXPECT_STREQ("4K", value);
    ASSERT_EQ(UCS_OK, ucs_config_parser_get_value(&m_opts, test_table,
                                                  "DEVS", value, sizeof(value)));
    EXPECT_STREQ("a,b,c", value);

    ASSERT_EQ(UCS_OK, ucs_config_parser_clone_opts(&m_opts, &copy, test_table));
    EXPECT_EQ(UCS_OK, ucs_config_parser_set_value(&m_opts, test_table, "NAME", "changed"));
    EXPECT_STREQ("renamed", copy.sub.name);
    EXPECT_NE(m_opts.sub.name, copy.sub.name);
    ASSERT_EQ(3u, copy.devs.count);
    EXPECT_STREQ("c", copy.devs.names[2]);
    ucs_config_parser_release_opts(&copy, test_table);
}

TEST_F(test_config, print_lists_doc_syntax_and_value)
{
    char   *buf  = nullptr;
    size_t size  = 0;
    FILE   *file = open_memstream(&buf, &size);

    ucs::scoped_setenv env("UCX_GTEST_COLOR", "blue");
    fill();
    ucs_config_parser_print_opts(file, "gtest options", &m_opts, test_table,
                                 "UCX_", "GTEST_");
    fclose(file);
    std::string out(buf, size);
    free(buf);

    EXPECT_NE(std::string::npos, out.find("# gtest options")) << out;
    EXPECT_NE(std::string::npos, out.find("# A number.\n# Second doc line.\n")) << out;
    EXPECT_NE(std::string::npos, out.find("# syntax:    unsigned integer")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTEST_NUM=10\n")) << out;
    EXPECT_NE(std::string::npos, out.find("# syntax:    [red|green|blue]")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTEST_COLOR=blue\n")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTEST_TIMEOUT=2s\n")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_SUB_COUNT=4\n")) << out;
}

TEST_F(test_config, registered_tables_are_listed_and_checked)
{
    const ucs_config_table_entry_t entry = {"gtest table", "GTEST_",
                                            test_table, sizeof(test_opts)};
    scoped_table_registration      registration(&entry);
    char                           *buf  = nullptr;
    size_t                         size  = 0;
    FILE                           *file;

    file = open_memstream(&buf, &size);
    ucs_config_parser_print_all_opts(file, "UCX_");
    fclose(file);
    std::string out(buf, size);
    free(buf);

    EXPECT_NE(std::string::npos, out.find("# gtest table")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_GTEST_MEM=4K\n")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_LOG_LEVEL=")) << out;
    EXPECT_NE(std::string::npos, out.find("UCX_MODULE_DIR=")) << out;

    /* A private prefix keeps the check independent of the real environment.
     * The parser warns about a variable once per process, by contract, so
     * each run of this test in the process (--gtest_repeat) has a prefix of
     * its own instead of one an earlier run was already warned about. */
    static unsigned   run  = 0;
    const std::string env  = "GTESTENV" + std::to_string(++run) + "_";
    const std::string typo = env + "GTEST_NUMM";

    {
        ucs::scoped_setenv      known((env + "GTEST_NUM").c_str(), "1");
        ucs::scoped_setenv      known_generic((env + "COUNT").c_str(), "1");
        ucs::scoped_setenv      unknown(typo.c_str(), "1");
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_WARN);

        EXPECT_EQ(1u, ucs_config_parser_warn_unused_env_vars(env.c_str()));
        EXPECT_EQ(0u, ucs_config_parser_warn_unused_env_vars(env.c_str()));
        ASSERT_EQ(1u, capture.count(UCS_LOG_LEVEL_WARN,
                                    "unused environment variable: " + typo +
                                    " ")) << capture.dump();
        EXPECT_EQ(1u, capture.lines().size()) << capture.dump();
    }
}

TEST_F(test_config, global_log_level_knob)
{
    ucs_global_opts_t opts = {};

    {
        ucs::scoped_setenv env("UCX_LOG_LEVEL", "debug");
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, ucs_global_opts_table,
                                                      "UCX_", ""));
        EXPECT_EQ(UCS_LOG_LEVEL_DEBUG, opts.log_level);
        ucs_config_parser_release_opts(&opts, ucs_global_opts_table);
    }
    {
        ucs::scoped_setenv      env("UCX_LOG_LEVEL", "loud");
        ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);
        ASSERT_EQ(UCS_OK, ucs_config_parser_fill_opts(&opts, ucs_global_opts_table,
                                                      "UCX_", ""));
        EXPECT_EQ(UCS_LOG_LEVEL_WARN, opts.log_level);
        EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_ERROR,
                                    "invalid value of UCX_LOG_LEVEL: 'loud' "
                                    "(expected [fatal|error|warn|diag|info|"
                                    "debug|trace])")) << capture.dump();
        ucs_config_parser_release_opts(&opts, ucs_global_opts_table);
    }
}
