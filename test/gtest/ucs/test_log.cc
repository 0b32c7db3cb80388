#include <common/test.h>

#include <ucs/debug/assert.h>
#include <ucs/debug/log_def.h>

#include <gtest/gtest-spi.h>

#include <cerrno>
#include <cstring>

class test_log : public ucs::test_base {
protected:
    void init() override
    {
        m_saved_level = ucs_log_get_level();
    }

    void cleanup() override
    {
        ucs_log_set_level(m_saved_level);
    }

private:
    ucs_log_level_t m_saved_level;
};

TEST_F(test_log, errno_text_and_errno_preserved)
{
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);

    errno = EHOSTUNREACH;
    ucs_error("create_ah(mlx5_0:1) failed: %m");
    EXPECT_EQ(EHOSTUNREACH, errno);

    ASSERT_EQ(1u, capture.lines().size());
    EXPECT_EQ(std::string("create_ah(mlx5_0:1) failed: ") +
              strerror(EHOSTUNREACH), capture.lines()[0].message);
}

TEST_F(test_log, percent_m_escapes)
{
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_ERROR);

    errno = ENOMEM;
    ucs_error("literal %%m, value %d, errno %m, percent in arg %s", 7, "50%");
    ASSERT_EQ(1u, capture.lines().size());
    EXPECT_EQ(std::string("literal %m, value 7, errno ") + strerror(ENOMEM) +
              ", percent in arg 50%", capture.lines()[0].message);
}

TEST_F(test_log, level_filters_lines)
{
    ucs::scoped_log_capture capture(UCS_LOG_LEVEL_TRACE);

    ucs_log_set_level(UCS_LOG_LEVEL_INFO);
    ucs_info("shown");
    ucs_debug("hidden");
    ucs_trace("hidden");
    EXPECT_EQ(1u, capture.lines().size());

    ucs_log_set_level(UCS_LOG_LEVEL_TRACE);
    ucs_debug("now shown");
    ucs_trace("now shown");
    EXPECT_EQ(3u, capture.lines().size());
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_DEBUG, "now shown"));
    EXPECT_EQ(1u, capture.count(UCS_LOG_LEVEL_TRACE, "now shown"));
}

TEST_F(test_log, capture_takes_its_levels_only)
{
    ucs::scoped_log_capture outer(UCS_LOG_LEVEL_INFO);
    {
        ucs::scoped_log_capture inner(UCS_LOG_LEVEL_ERROR);

        ucs_log_set_level(UCS_LOG_LEVEL_INFO);
        ucs_error("to inner");
        ucs_warn("to outer");
        ucs_info("to outer");
        EXPECT_EQ(1u, inner.lines().size());
    }
    ucs_error("to outer after inner ended");
    EXPECT_EQ(3u, outer.lines().size()) << outer.dump();
}

TEST_F(test_log, file_and_line_at_debug_level)
{
    std::string out;

    ucs_log_set_level(UCS_LOG_LEVEL_INFO);
    testing::internal::CaptureStderr();
    ucs_info("plain line");
    out = testing::internal::GetCapturedStderr();
    EXPECT_NE(std::string::npos, out.find("UCX info plain line")) << out;
    EXPECT_EQ(std::string::npos, out.find("test_log.cc:")) << out;

    ucs_log_set_level(UCS_LOG_LEVEL_DEBUG);
    testing::internal::CaptureStderr();
    ucs_info("detailed line"); const int line = __LINE__;
    out = testing::internal::GetCapturedStderr();
    EXPECT_NE(std::string::npos,
              out.find("test_log.cc:" + std::to_string(line) +
                       " UCX info detailed line")) << out;
}

TEST_F(test_log, unexpected_warning_fails_the_test)
{
    struct inner_test : ucs::test_base {
        void TestBody() override {}
        using ucs::test_base::SetUp;
        using ucs::test_base::TearDown;
    } inner;
    ucs::scoped_log_capture outer(UCS_LOG_LEVEL_WARN);

    inner.SetUp();
    ucs_warn("nobody expected this");
    EXPECT_NONFATAL_FAILURE(inner.TearDown(),
                            "unexpected warn: nobody expected this");
}

TEST_F(test_log, wait_for_reports_what_is_pending)
{
    EXPECT_NONFATAL_FAILURE(
            wait_for([] { return false; }, 0.01,
                     [] { return std::string("2 completions of qp 0x12"); }),
            "waiting for: 2 completions of qp 0x12");
}

TEST_F(test_log, level_names)
{
    EXPECT_STREQ("fatal", ucs_log_level_name(UCS_LOG_LEVEL_FATAL));
    EXPECT_STREQ("warn", ucs_log_level_name(UCS_LOG_LEVEL_WARN));
    EXPECT_STREQ("trace", ucs_log_level_name(UCS_LOG_LEVEL_TRACE));
    EXPECT_STREQ("print", ucs_log_level_name(UCS_LOG_LEVEL_PRINT));
}

using test_log_death = test_log;

TEST_F(test_log_death, fatal_names_the_reason)
{
    EXPECT_DEATH(ucs_fatal("cannot continue: qp 0x%x", 0x2a),
                 "fatal: cannot continue: qp 0x2a");
}

TEST_F(test_log_death, assert_always_names_the_expression)
{
    int two = 2;

    EXPECT_DEATH(ucs_assert_always(two == 3), "assertion failure: two == 3");
    EXPECT_DEATH(ucs_assertv_always(two == 3, "two is %d", two),
                 "assertion failure: two == 3: two is 2");
}

TEST_F(test_log, assert_is_checked_only_in_debug_builds)
{
    int evaluated = 0;

    ucs_assert(++evaluated > 0);
#ifdef UCS_ENABLE_ASSERT
    EXPECT_EQ(1, evaluated);
#else
    EXPECT_EQ(0, evaluated);
#endif
}
