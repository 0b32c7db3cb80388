#include <common/test.h>

#include <ucs/type/status.h>

#include <cstring>

class test_status : public ucs::test_base {
};

TEST_F(test_status, values_match_ucx)
{
    EXPECT_EQ(0,    UCS_OK);
    EXPECT_EQ(1,    UCS_INPROGRESS);
    EXPECT_EQ(-3,   UCS_ERR_IO_ERROR);
    EXPECT_EQ(-4,   UCS_ERR_NO_MEMORY);
    EXPECT_EQ(-5,   UCS_ERR_INVALID_PARAM);
    EXPECT_EQ(-6,   UCS_ERR_UNREACHABLE);
    EXPECT_EQ(-12,  UCS_ERR_NO_ELEM);
    EXPECT_EQ(-14,  UCS_ERR_NO_DEVICE);
    EXPECT_EQ(-15,  UCS_ERR_BUSY);
    EXPECT_EQ(-20,  UCS_ERR_TIMED_OUT);
    EXPECT_EQ(-22,  UCS_ERR_UNSUPPORTED);
    EXPECT_EQ(-25,  UCS_ERR_CONNECTION_RESET);
    EXPECT_EQ(-80,  UCS_ERR_ENDPOINT_TIMEOUT);
    EXPECT_EQ(-100, UCS_ERR_LAST);
}

TEST_F(test_status, every_code_has_a_distinct_string)
{
    const char *unknown = ucs_status_string(static_cast<ucs_status_t>(-99));

    EXPECT_STREQ("unknown error", unknown);
    EXPECT_STREQ("success", ucs_status_string(UCS_OK));
    EXPECT_STREQ("operation timed out", ucs_status_string(UCS_ERR_TIMED_OUT));

    for (int code = UCS_ERR_CONNECTION_RESET; code <= UCS_INPROGRESS; ++code) {
        const char *str = ucs_status_string(static_cast<ucs_status_t>(code));

        ASSERT_NE(nullptr, str);
        EXPECT_STRNE(unknown, str) << "status " << code;
        for (int other = code + 1; other <= UCS_INPROGRESS; ++other) {
            EXPECT_STRNE(str, ucs_status_string(static_cast<ucs_status_t>(other)))
                    << "statuses " << code << " and " << other;
        }
    }
}

TEST_F(test_status, link_and_endpoint_ranges)
{
    EXPECT_STREQ("link failure",
                 ucs_status_string(static_cast<ucs_status_t>(-45)));
    EXPECT_STREQ("endpoint failure",
                 ucs_status_string(static_cast<ucs_status_t>(-65)));
    EXPECT_STREQ("endpoint timeout", ucs_status_string(UCS_ERR_ENDPOINT_TIMEOUT));
    EXPECT_TRUE(UCS_IS_LINK_ERROR(-40));
    EXPECT_FALSE(UCS_IS_LINK_ERROR(-60));
    EXPECT_TRUE(UCS_IS_ENDPOINT_ERROR(-89));
    EXPECT_FALSE(UCS_IS_ENDPOINT_ERROR(-90));
}
