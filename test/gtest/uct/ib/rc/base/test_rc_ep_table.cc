/*
 * The table of endpoints by QP number (rc_ep_table.h): every endpoint
 * inserted is found, an erased one is not, and erasing from the middle of
 * a run of colliding QP numbers keeps the rest of the run reachable.
 */
#include <uct/ib/rc/base/rc_ep_table.h>

#include <common/test.h>

#include <map>

namespace {

uct_rc_ep *fake_ep(uint32_t qpn)
{
    return reinterpret_cast<uct_rc_ep*>(uintptr_t(0x1000) + 16 * qpn);
}

} // namespace

class test_rc_ep_table : public ucs::test_base {
};

TEST_F(test_rc_ep_table, empty_finds_nothing)
{
    uct_rc_ep_table table;

    EXPECT_EQ(nullptr, table.find(0x123));
    EXPECT_EQ(0u, table.size());
    table.erase(0x123); /* not there: nothing happens */
}

TEST_F(test_rc_ep_table, colliding_runs_survive_erase_and_growth)
{
    uct_rc_ep_table                table;
    std::map<uint32_t, uct_rc_ep*> expected;

    /* multiples of 64 collide in every table up to 64 slots, and the
     * sequential ones fill the slots the runs spill into */
    for (uint32_t i = 1; i <= 40; ++i) {
        for (uint32_t qpn : {i * 64, 0x400 + i}) {
            ASSERT_EQ(UCS_OK, table.insert(qpn, fake_ep(qpn)));
            expected[qpn] = fake_ep(qpn);
        }
    }
    EXPECT_EQ(expected.size(), table.size());

    /* every third one goes, from the middle of the runs */
    for (auto it = expected.begin(); it != expected.end();) {
        if ((it->first % 3) == 0) {
            table.erase(it->first);
            EXPECT_EQ(nullptr, table.find(it->first)) << it->first;
            it = expected.erase(it);
        } else {
            ++it;
        }
    }

    for (const auto &e : expected) {
        EXPECT_EQ(e.second, table.find(e.first)) << e.first;
    }
    EXPECT_EQ(expected.size(), table.size());

    size_t visited = 0;
    table.for_each([&](uct_rc_ep *ep) {
        ++visited;
        EXPECT_NE(nullptr, ep);
    });
    EXPECT_EQ(expected.size(), visited);
}
