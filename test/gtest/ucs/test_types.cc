/*
 * Small public types of libucs: status pointers, CPU sets, memory types.
 */
#include <common/test.h>

#include <ucs/memory/memory_type.h>
#include <ucs/type/cpu_set.h>
#include <ucs/type/status.h>

#include <cstring>

class test_types : public ucs::test_base {
};

TEST_F(test_types, status_pointers)
{
    int              object;
    ucs_status_ptr_t ptr = &object;
    ucs_status_ptr_t err = UCS_STATUS_PTR(UCS_ERR_NO_MEMORY);
    ucs_status_ptr_t ok  = UCS_STATUS_PTR(UCS_OK);

    EXPECT_TRUE(UCS_PTR_IS_PTR(ptr));
    EXPECT_FALSE(UCS_PTR_IS_ERR(ptr));
    EXPECT_EQ(UCS_INPROGRESS, UCS_PTR_STATUS(ptr));

    EXPECT_FALSE(UCS_PTR_IS_PTR(err));
    EXPECT_TRUE(UCS_PTR_IS_ERR(err));
    EXPECT_EQ(UCS_ERR_NO_MEMORY, UCS_PTR_STATUS(err));

    EXPECT_EQ(nullptr, ok);
    EXPECT_FALSE(UCS_PTR_IS_PTR(ok));
    EXPECT_FALSE(UCS_PTR_IS_ERR(ok));
    EXPECT_EQ(UCS_OK, UCS_PTR_STATUS(ok));

    for (int s = UCS_ERR_NO_MESSAGE; s > UCS_ERR_LAST; --s) {
        ucs_status_ptr_t p = UCS_STATUS_PTR(static_cast<ucs_status_t>(s));
        EXPECT_TRUE(UCS_PTR_IS_ERR(p)) << s;
        EXPECT_EQ(s, UCS_PTR_STATUS(p));
    }
}

TEST_F(test_types, cpu_set_macros)
{
    ucs_cpu_set_t set;

    memset(&set, 0xff, sizeof(set));
    UCS_CPU_ZERO(&set);
    for (unsigned cpu = 0; cpu < UCS_CPU_SETSIZE; ++cpu) {
        ASSERT_FALSE(UCS_CPU_ISSET(cpu, &set)) << cpu;
    }

    UCS_CPU_SET(0, &set);
    UCS_CPU_SET(65, &set);
    UCS_CPU_SET(UCS_CPU_SETSIZE - 1, &set);
    UCS_CPU_SET(UCS_CPU_SETSIZE, &set); /* beyond the set: ignored */
    EXPECT_TRUE(UCS_CPU_ISSET(0, &set));
    EXPECT_TRUE(UCS_CPU_ISSET(65, &set));
    EXPECT_TRUE(UCS_CPU_ISSET(UCS_CPU_SETSIZE - 1, &set));
    EXPECT_FALSE(UCS_CPU_ISSET(64, &set));
    EXPECT_FALSE(UCS_CPU_ISSET(UCS_CPU_SETSIZE, &set));

    UCS_CPU_CLR(65, &set);
    EXPECT_FALSE(UCS_CPU_ISSET(65, &set));
    EXPECT_TRUE(UCS_CPU_ISSET(0, &set));
}

TEST_F(test_types, memory_type_names)
{
    EXPECT_STREQ("host", ucs_memory_type_names[UCS_MEMORY_TYPE_HOST]);
    EXPECT_STREQ("cuda", ucs_memory_type_names[UCS_MEMORY_TYPE_CUDA]);
    EXPECT_STREQ("rdma", ucs_memory_type_names[UCS_MEMORY_TYPE_RDMA]);
    EXPECT_STREQ("unknown", ucs_memory_type_names[UCS_MEMORY_TYPE_UNKNOWN]);
    for (int t = 0; t <= UCS_MEMORY_TYPE_LAST; ++t) {
        EXPECT_NE(nullptr, ucs_memory_type_names[t]) << t;
    }
}
